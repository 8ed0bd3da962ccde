//! The packet store every held-packet discipline shares: a FIFO with packet and byte counts.

use crate::packet::Packet;
use fatpipe_core::SimTime;
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

/// A FIFO that remembers when each packet arrived (CoDel's sojourn time, PIE's timestamp delay):
/// each entry is the packet and its enqueue time, so the packet itself stays 64 bytes.
#[derive(Default)]
pub struct TimedFifo {
    q: VecDeque<(Packet, SimTime)>,
    bytes: u64,
}

impl TimedFifo {
    #[inline]
    pub fn push(&mut self, p: Packet, now: SimTime) {
        self.bytes += p.size as u64;
        self.q.push_back((p, now));
    }
    /// The head packet and its enqueue time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Packet, SimTime)> {
        let e = self.q.pop_front()?;
        self.bytes -= e.0.size as u64;
        Some(e)
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
