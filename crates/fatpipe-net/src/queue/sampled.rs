//! The queue discipline the sampled controllers share (HSTCP-H2 in `h2.rs`, PI in `pi.rs`): a
//! FIFO whose drop/mark probability comes from a control law sampled on the instantaneous queue
//! every 1/`sample_hz` seconds.
//!
//! - Each arrival: if the queue is full (waiting packets ≥ limit, or bytes over a byte limit) it
//!   is tail-dropped; otherwise it is dropped with the law's probability p (`u < p`, so p = 0
//!   never drops), or, with `ecn`, an ECT arrival is marked CE and enqueued instead (ns-2
//!   `setbit_`). Drops count as [`DropReason::AqmEarly`] (ns-2's `DTYPE_UNFORCED`).
//! - The sampling has no timer: before each enqueue and dequeue the law runs every sample due
//!   since the last one, on the queue length that held meanwhile (the queue changes only at
//!   enqueue and dequeue, so this is exact; see [`super::sampler`]). `aqm_state(now)` runs the
//!   pending samples on a copy of the law.

use super::droptail::Limit;
use super::fifo::PacketFifo;
use super::sampler::Sampler;
use super::{AqmState, DropReason, Queue, QueueStats};
use crate::packet::{Flags, Packet};
use fatpipe_core::rng::RngStream;
use fatpipe_core::SimTime;

/// A discrete control law sampled on the queue length.
pub trait ControlLaw: Copy + Send {
    /// The discipline's name in scenario files.
    const KIND: &'static str;
    /// One sample of the instantaneous queue `q`, packets.
    fn update(&mut self, q: f64);
    /// The drop/mark probability the law applies now.
    fn prob(&self) -> f64;
    /// The queue the last sample saw, packets.
    fn last_q(&self) -> f64;
}

pub struct Sampled<L: ControlLaw> {
    pub(crate) law: L,
    sampler: Sampler,
    limit: Limit,
    ecn: bool,
    pub(crate) q: PacketFifo,
    stats: QueueStats,
    rng: RngStream,
}

impl<L: ControlLaw> Sampled<L> {
    pub(crate) fn with_law(
        law: L,
        sample_hz: f64,
        limit: Limit,
        ecn: bool,
        rng: RngStream,
    ) -> Self {
        Sampled {
            law,
            sampler: Sampler::at_hz(sample_hz),
            limit,
            ecn,
            q: PacketFifo::with_capacity(1024),
            stats: QueueStats::default(),
            rng,
        }
    }

    /// The probability after the samples due by the last enqueue or dequeue.
    pub fn prob(&self) -> f64 {
        self.law.prob()
    }

    /// Run the samples due by `now` on the current queue length.
    pub(crate) fn catch_up(&mut self, now: SimTime) {
        let q = self.q.len() as f64;
        let law = &mut self.law;
        self.sampler.run_until(now, |_| law.update(q));
    }
}

impl<L: ControlLaw> Queue for Sampled<L> {
    fn kind(&self) -> &'static str {
        L::KIND
    }

    fn enqueue(&mut self, mut p: Packet, now: SimTime) -> Result<(), (Packet, DropReason)> {
        self.catch_up(now);
        let full = match self.limit {
            Limit::Packets(n) => self.q.len() as u64 >= n,
            Limit::Bytes(b) => self.q.bytes() + p.size as u64 > b,
        };
        if full {
            self.stats.record_drop(&p, DropReason::TailDrop);
            return Err((p, DropReason::TailDrop));
        }
        let prob = self.law.prob();
        if prob > 0.0 && self.rng.uniform() < prob {
            if self.ecn && p.flags.markable() {
                p.flags.set(Flags::CE);
                self.stats.record_mark(DropReason::AqmEarly);
            } else {
                self.stats.record_drop(&p, DropReason::AqmEarly);
                return Err((p, DropReason::AqmEarly));
            }
        }
        self.q.push(p);
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64);
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
        self.catch_up(now);
        let p = self.q.pop()?;
        self.stats.dequeued += 1;
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn stats(&self) -> &QueueStats {
        &self.stats
    }
    fn aqm_state(&self, now: SimTime) -> Option<AqmState> {
        let (mut law, mut sampler) = (self.law, self.sampler);
        let q = self.q.len() as f64;
        sampler.run_until(now, |_| law.update(q));
        Some(AqmState {
            avg_pkts: law.last_q(),
            prob: law.prob(),
        })
    }
}
