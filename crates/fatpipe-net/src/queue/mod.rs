//! Output queues: one trait for every discipline, with typed drop reasons so tail drops and AQM
//! drops can be told apart in every report (ARCHITECTURE.md contract 5).

pub mod codel;
pub mod droptail;
pub mod fifo;
pub mod fq_codel;
pub mod h2;
pub mod pi;
pub mod pie;
pub mod red;
pub mod sampled;
pub mod sampler;

pub use codel::{CoDel, CoDelParams};
pub use droptail::DropTail;
pub use fq_codel::{FqCoDel, FqCoDelParams};
pub use h2::{H2Params, H2};
pub use pi::{Pi, PiParams};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};

use crate::packet::Packet;
use fatpipe_core::SimTime;

/// Why a queue dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The buffer was full (DropTail, or an AQM's hard limit).
    TailDrop,
    /// An AQM dropped early by probability (RED's "unforced" drop; PIE, PI and H2, whose drops
    /// are all random with the law's probability).
    AqmEarly,
    /// An AQM dropped because its control law forced it (RED above max_th; CoDel and FQ-CoDel,
    /// whose drops are scheduled by the control law, not drawn).
    AqmForced,
    /// The link lost it at random (its `loss` probability, before the queue: netem's semantics;
    /// counted with the link's queue).
    Random,
}

impl DropReason {
    pub const ALL: [DropReason; 4] = [
        DropReason::TailDrop,
        DropReason::AqmEarly,
        DropReason::AqmForced,
        DropReason::Random,
    ];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            DropReason::TailDrop => "tail",
            DropReason::AqmEarly => "aqm_early",
            DropReason::AqmForced => "aqm_forced",
            DropReason::Random => "random",
        }
    }
}

/// Counters every queue keeps.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub enqueued: u64,
    pub dequeued: u64,
    pub drops: [u64; 4],
    /// ECN marks (CE set instead of a drop), by the reason the drop would have had.
    pub marks: [u64; 4],
    pub dropped_bytes: u64,
    pub max_len_packets: u64,
    /// Packets that were accepted and later discarded from inside the queue (CoDel's head drops
    /// at dequeue, FQ-CoDel's drops from its fattest queue); also counted in `drops`. Packets
    /// held = enqueued − dequeued − dropped_queued.
    pub dropped_queued: u64,
}

impl QueueStats {
    pub fn record_drop(&mut self, p: &Packet, why: DropReason) {
        self.drops[why.index()] += 1;
        self.dropped_bytes += p.size as u64;
    }
    /// A packet already in the queue was discarded (see `dropped_queued`).
    pub fn record_queued_drop(&mut self, p: &Packet, why: DropReason) {
        self.record_drop(p, why);
        self.dropped_queued += 1;
    }
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
    pub fn record_mark(&mut self, why: DropReason) {
        self.marks[why.index()] += 1;
    }
    pub fn total_marks(&self) -> u64 {
        self.marks.iter().sum()
    }
}

/// What an AQM's control law holds now, for time series (NaN where a discipline has no such
/// quantity).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AqmState {
    /// The queue the law acts on, in packets (RED's EWMA; byte-mode RED divides by its mean
    /// packet size; the PI and H2 controllers' last sample of the instantaneous queue).
    pub avg_pkts: f64,
    /// The drop or mark probability the law applies now (RED's p_b before the count spacing,
    /// PIE's p, the H2 and PI controllers' output).
    pub prob: f64,
}

/// A queueing discipline at a link's output.
///
/// `enqueue` returns the packet with its drop reason when it refuses it. Disciplines that drop at
/// dequeue time (CoDel) record those drops in their own stats and return the next packet they let
/// through; they, and disciplines that drop a packet other than the arrival at enqueue time
/// (FQ-CoDel's fattest queue), hand the discarded packets out through `pop_dropped`, which the
/// link's owner calls after every enqueue and dequeue, so the packets are charged to their flows.
///
/// Disciplines with time-driven state (PIE's update every T_update, the PI and H2 controllers'
/// sampling) have no timer: at each enqueue or dequeue at `now` they first run every update due
/// at or before `now`, with the queue as it stood over that time (it changes only at enqueue and
/// dequeue, so this is exact), and `aqm_state(now)` reports the state those updates reach.
pub trait Queue: Send {
    /// Discipline name as used in scenario files (`"droptail"`).
    fn kind(&self) -> &'static str;
    fn enqueue(&mut self, p: Packet, now: SimTime) -> Result<(), (Packet, DropReason)>;
    fn dequeue(&mut self, now: SimTime) -> Option<Packet>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
    fn stats(&self) -> &QueueStats;
    /// If this discipline is a plain FIFO with tail drop at this limit, the link computes it
    /// without holding packets or scheduling dequeue events (see `link.rs`).
    fn fifo_tail_drop_limit(&self) -> Option<droptail::Limit> {
        None
    }
    /// The link's transmitter goes idle at `at` with this queue empty (ns-2's `deque()` finding
    /// nothing): RED's idle-time correction counts from here.
    fn idle_from(&mut self, _at: SimTime) {}
    /// The control law's state at `now` (at or after the last enqueue or dequeue), for AQMs.
    fn aqm_state(&self, _now: SimTime) -> Option<AqmState> {
        None
    }
    /// A packet discarded from inside the queue since the last call (see the trait's doc).
    fn pop_dropped(&mut self) -> Option<Packet> {
        None
    }
}
