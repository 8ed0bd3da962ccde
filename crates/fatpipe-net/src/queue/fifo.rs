//! The packet store every held-packet discipline shares: a FIFO with packet and byte counts.

use crate::packet::Packet;
use std::collections::VecDeque;

#[derive(Default)]
pub struct PacketFifo {
    q: VecDeque<Packet>,
    bytes: u64,
}

impl PacketFifo {
    pub fn with_capacity(n: usize) -> Self {
        PacketFifo {
            q: VecDeque::with_capacity(n),
            bytes: 0,
        }
    }
    #[inline]
    pub fn push(&mut self, p: Packet) {
        self.bytes += p.size as u64;
        self.q.push_back(p);
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size as u64;
        Some(p)
    }
    #[inline]
    pub fn front(&self) -> Option<&Packet> {
        self.q.front()
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}
