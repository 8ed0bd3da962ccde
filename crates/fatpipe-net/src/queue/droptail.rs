//! DropTail (FIFO with a hard limit), counted in packets or in bytes.
//!
//! Same semantics as ns-2's `Queue/DropTail`: the limit counts packets waiting in the queue, not
//! the one being serialised; an arriving packet that does not fit is dropped.

use super::{DropReason, Queue, QueueStats};
use crate::packet::Packet;
use fatpipe_core::SimTime;
use std::collections::VecDeque;

/// The limit of a DropTail queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

pub struct DropTail {
    limit: Limit,
    q: VecDeque<Packet>,
    bytes: u64,
    stats: QueueStats,
}

impl DropTail {
    pub fn new(limit: Limit) -> Self {
        let cap = match limit {
            Limit::Packets(n) => (n as usize).min(1 << 16),
            Limit::Bytes(_) => 1024,
        };
        DropTail {
            limit,
            q: VecDeque::with_capacity(cap),
            bytes: 0,
            stats: QueueStats::default(),
        }
    }
}

impl Queue for DropTail {
    fn kind(&self) -> &'static str {
        "droptail"
    }

    #[inline]
    fn enqueue(&mut self, p: Packet, _now: SimTime) -> Result<(), (Packet, DropReason)> {
        let fits = match self.limit {
            Limit::Packets(n) => (self.q.len() as u64) < n,
            Limit::Bytes(b) => self.bytes + p.size as u64 <= b,
        };
        if !fits {
            self.stats.record_drop(&p, DropReason::TailDrop);
            return Err((p, DropReason::TailDrop));
        }
        self.bytes += p.size as u64;
        self.q.push_back(p);
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64);
        Ok(())
    }

    #[inline]
    fn dequeue(&mut self, _now: SimTime) -> Option<Packet> {
        let p = self.q.pop_front()?;
        self.bytes -= p.size as u64;
        self.stats.dequeued += 1;
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> &QueueStats {
        &self.stats
    }
    fn fifo_tail_drop_limit(&self) -> Option<Limit> {
        Some(self.limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Flags, PacketKind, SackBlocks};

    fn pkt(size: u32) -> Packet {
        Packet {
            flow: 0,
            dst: 0,
            size,
            kind: PacketKind::Data,
            seq: 0,
            len: size,
            ts: 0,
            sack: SackBlocks::default(),
            flags: Flags::default(),
            epoch: 0,
        }
    }

    #[test]
    fn packet_limit_never_exceeded() {
        let mut q = DropTail::new(Limit::Packets(3));
        let results: Vec<bool> = (0..5)
            .map(|_| q.enqueue(pkt(100), SimTime::ZERO).is_ok())
            .collect();
        assert_eq!(results, vec![true, true, true, false, false]);
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.stats().drops[DropReason::TailDrop.index()], 2);
        assert!(q.dequeue(SimTime::ZERO).is_some());
        assert!(q.enqueue(pkt(100), SimTime::ZERO).is_ok());
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut q = DropTail::new(Limit::Bytes(250));
        assert!(q.enqueue(pkt(100), SimTime::ZERO).is_ok());
        assert!(q.enqueue(pkt(100), SimTime::ZERO).is_ok());
        assert!(q.enqueue(pkt(100), SimTime::ZERO).is_err());
        assert!(q.enqueue(pkt(50), SimTime::ZERO).is_ok());
        assert_eq!(q.len_bytes(), 250);
    }
}
