//! FQ-CoDel (T. Hoeiland-Joergensen, P. McKenney, D. Taht, J. Gettys, E. Dumazet, "The Flow Queue
//! CoDel Packet Scheduler and Active Queue Management Algorithm", RFC 8290, January 2018), written
//! from the RFC's text (§4 the scheduler, §5 its parameters).
//!
//! - Classification (§4.1): each packet is hashed into one of `flows` queues by its transport
//!   flow: the simulator's flow id, its destination (data and ACKs of one connection, or two
//!   flows with one id in opposite directions, stay apart) and whether it is a datagram (UDP and
//!   DCCP flows are numbered apart from TCP connections). The hash is SplitMix64's finaliser
//!   (Steele, Lea, Flood, OOPSLA 2014) of the key xor a salt drawn once from the link's random
//!   stream, as Linux salts its hash per queue: fixed for a seed, so runs are reproducible, and
//!   colliding pairs change with the seed. A bucket is ⌊h·N / 2⁶⁴⌋.
//! - Enqueue (§4.1): the packet is timestamped and appended to its queue; a queue in neither list
//!   joins the tail of the new-flows list with deficit = quantum.
//! - Overlimit (§4.1): when the arrival would take the total over `limit` (packets, or bytes),
//!   packets are dropped from the head of the queue with the largest byte backlog (the arrival
//!   counted in its queue; the lowest index wins a tie) until it fits, one at a time — Linux
//!   drops up to 64 at once ("batch drop") to amortise the search; single drops are the RFC's
//!   description and give the same queue in packets. If that head would be the arrival itself
//!   (its queue was empty), the arrival is refused instead. These drops count as
//!   [`DropReason::TailDrop`] (the hard limit).
//! - Dequeue (§4.2): serve the head of the new-flows list, else of the old-flows list. A queue
//!   whose deficit is ≤ 0 gets quantum more and moves to the tail of the old list. Otherwise
//!   CoDel dequeues from it (RFC 8289, per queue, [`super::codel`]): a packet is sent and its size
//!   taken from the deficit; if CoDel returns nothing (the queue is empty, or it dropped the
//!   rest), a queue from the new list moves to the tail of the old list (so a queue cannot stay
//!   "new" by emptying and refilling), one from the old list leaves the lists.
//! - Per-queue CoDel state; CoDel's MAXPACKET test ("at most one MTU left") counts the backlog of
//!   all queues, as Linux's `fq_codel` does (it passes the qdisc's total backlog to CoDel). CoDel
//!   drops count as [`DropReason::AqmForced`]; with `ecn`, CE marks of ECT packets replace them.
//!
//! Defaults and their sources (RFC 8290 §5.1, Linux's values): flows = 1024, quantum = 1514
//! bytes (an Ethernet MTU of 1500 plus the 14-byte link header), target 5 ms and interval 100 ms
//! (RFC 8289). ECN is off by default here (Linux turns it on): every discipline in this simulator
//! drops unless asked to mark. The packet limit (Linux: 10240) is the scenario's `limit`.

use super::codel::{law_check, CoDelVars, Law};
use super::droptail::Limit;
use super::fifo::TimedFifo;
use super::{DropReason, Queue, QueueStats};
use crate::packet::Packet;
use fatpipe_core::rng::RngStream;
use fatpipe_core::SimTime;
use std::collections::VecDeque;

/// FQ-CoDel's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCoDelParams {
    pub limit: Limit,
    /// Number of flow queues (hash buckets).
    pub flows: u32,
    /// DRR quantum, bytes.
    pub quantum: u32,
    pub target: SimTime,
    pub interval: SimTime,
    /// CoDel's MAXPACKET, bytes.
    pub mtu: u32,
    pub ecn: bool,
}

impl FqCoDelParams {
    /// RFC 8290's defaults (ECN off, see the module doc).
    pub fn rfc8290(limit: Limit) -> Self {
        FqCoDelParams {
            limit,
            flows: 1024,
            quantum: 1514,
            target: SimTime::from_millis(5),
            interval: SimTime::from_millis(100),
            mtu: 1500,
            ecn: false,
        }
    }

    /// Check the parameters; the error names the scenario field and says why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.flows == 0 || self.flows > 65536 {
            return Err((
                "flows",
                format!(
                    "must be a number of flow queues in 1..=65536 (RFC 8290: 1024), got {}",
                    self.flows
                ),
            ));
        }
        if self.quantum == 0 {
            return Err((
                "quantum",
                "must be a positive size in bytes (RFC 8290: 1514B)".into(),
            ));
        }
        law_check(self.target, self.interval, self.mtu)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Bucket {
    q: TimedFifo,
    vars: CoDelVars,
    deficit: i64,
    list: List,
}

pub struct FqCoDel {
    p: FqCoDelParams,
    law: Law,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    salt: u64,
    packets: usize,
    bytes: u64,
    stats: QueueStats,
    dropped: Vec<Packet>,
}

/// SplitMix64's output function (Steele, Lea, Flood 2014).
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl FqCoDel {
    /// `rng` is the link's queue stream; one draw salts the flow hash.
    pub fn new(p: FqCoDelParams, mut rng: RngStream) -> Self {
        let law = Law {
            target: p.target,
            interval: p.interval,
            mtu: p.mtu as u64,
            ecn: p.ecn,
        };
        FqCoDel {
            law,
            buckets: (0..p.flows)
                .map(|_| Bucket {
                    q: TimedFifo::default(),
                    vars: CoDelVars::default(),
                    deficit: 0,
                    list: List::None,
                })
                .collect(),
            p,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            salt: rng.next_u64(),
            packets: 0,
            bytes: 0,
            stats: QueueStats::default(),
            dropped: Vec::new(),
        }
    }

    /// The queue (bucket) a packet belongs to.
    pub fn bucket_of(&self, p: &Packet) -> usize {
        let key = p.flow as u64 | (p.dst as u64) << 32;
        let mut h = mix(key ^ self.salt);
        if p.kind.is_datagram_transport() {
            h = mix(h ^ 0x9E37_79B9_7F4A_7C15);
        }
        ((h as u128 * self.p.flows as u128) >> 64) as usize
    }

    /// Packets waiting in bucket `i`.
    pub fn bucket_len(&self, i: usize) -> usize {
        self.buckets[i].q.len()
    }

    fn over_limit(&self, size: u32) -> bool {
        match self.p.limit {
            Limit::Packets(n) => self.packets as u64 >= n,
            Limit::Bytes(b) => self.bytes + size as u64 > b,
        }
    }

    /// The bucket with the largest byte backlog, counting `extra` bytes in bucket `with`.
    fn fattest(&self, with: usize, extra: u64) -> usize {
        let mut best = (0u64, 0usize);
        for (i, b) in self.buckets.iter().enumerate() {
            let bytes = b.q.bytes() + if i == with { extra } else { 0 };
            if bytes > best.0 {
                best = (bytes, i);
            }
        }
        best.1
    }
}

impl Queue for FqCoDel {
    fn kind(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, p: Packet, now: SimTime) -> Result<(), (Packet, DropReason)> {
        let idx = self.bucket_of(&p);
        while self.over_limit(p.size) {
            let fat = self.fattest(idx, p.size as u64);
            if fat == idx && self.buckets[idx].q.is_empty() {
                // The arrival itself would be the head of the fattest queue.
                self.stats.record_drop(&p, DropReason::TailDrop);
                return Err((p, DropReason::TailDrop));
            }
            let (victim, _) = self.buckets[fat]
                .q
                .pop()
                .expect("the fattest queue holds packets");
            self.packets -= 1;
            self.bytes -= victim.size as u64;
            self.stats.record_queued_drop(&victim, DropReason::TailDrop);
            self.dropped.push(victim);
        }
        let quantum = self.p.quantum as i64;
        let b = &mut self.buckets[idx];
        b.q.push(p, now);
        if b.list == List::None {
            b.list = List::New;
            b.deficit = quantum;
            self.new_flows.push_back(idx as u32);
        }
        self.packets += 1;
        self.bytes += p.size as u64;
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.packets as u64);
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
        loop {
            let (idx, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i as usize, true),
                (None, Some(&i)) => (i as usize, false),
                (None, None) => return None,
            };
            let b = &mut self.buckets[idx];
            if b.deficit <= 0 {
                b.deficit += self.p.quantum as i64;
                b.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let (len0, bytes0) = (b.q.len(), b.q.bytes());
            let other = self.bytes - bytes0;
            let out = b.vars.dequeue(
                &self.law,
                &mut b.q,
                other,
                now,
                &mut self.stats,
                &mut self.dropped,
            );
            self.packets -= len0 - b.q.len();
            self.bytes -= bytes0 - b.q.bytes();
            match out {
                Some(p) => {
                    b.deficit -= p.size as i64;
                    self.stats.dequeued += 1;
                    return Some(p);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        self.old_flows.push_back(idx as u32);
                        b.list = List::Old;
                    } else {
                        self.old_flows.pop_front();
                        b.list = List::None;
                    }
                }
            }
        }
    }

    fn len_packets(&self) -> usize {
        self.packets
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> &QueueStats {
        &self.stats
    }
    fn pop_dropped(&mut self) -> Option<Packet> {
        self.dropped.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::codel::tests::pkt;

    fn fq(p: FqCoDelParams) -> FqCoDel {
        FqCoDel::new(p, RngStream::new(1, "test/fq_codel"))
    }

    fn params() -> FqCoDelParams {
        FqCoDelParams::rfc8290(Limit::Packets(10_000))
    }

    #[test]
    fn the_hash_is_stable_and_separates_flows_directions_and_datagrams() {
        let q = fq(params());
        let a = pkt(1, 1500, false);
        assert_eq!(q.bucket_of(&a), q.bucket_of(&a));
        // Flows 1 and 2 (seed 1's salt) land apart; so do flow 1's two directions and a
        // datagram flow numbered 1.
        let b = pkt(2, 1500, false);
        let a_back = Packet { dst: 7, ..a };
        let a_udp = Packet {
            kind: crate::packet::PacketKind::Datagram,
            ..a
        };
        let set: std::collections::BTreeSet<usize> = [&a, &b, &a_back, &a_udp]
            .iter()
            .map(|p| q.bucket_of(p))
            .collect();
        assert_eq!(set.len(), 4);
        // Buckets spread: 1000 flows over 1024 buckets fill about 1024·(1 − e^(−1000/1024)) ≈ 641.
        let used: std::collections::BTreeSet<usize> = (0..1000)
            .map(|f| q.bucket_of(&pkt(f, 100, false)))
            .collect();
        assert!((600..=680).contains(&used.len()), "{}", used.len());
    }

    #[test]
    fn drr_gives_a_heavy_and_a_light_flow_equal_bytes() {
        // Flow A: 1500-byte packets; flow B: 300-byte packets; both backlogged at t = 0, A
        // first; quantum 1514. Hand trace (RFC 8290 §4.2):
        // A (new, deficit 1514): A1 → 14, A2 → −1486; deficit ≤ 0: +1514 = 28, to old.
        // B (new, 1514): six packets 1514 → 14 → −286; +1514 = 1228, to old.
        // A (old, 28): A3 → −1472; +1514 = 42, to tail. B (1228): five packets → −272; +1514.
        // A (42): A4.
        let mut q = fq(params());
        let (a, b) = (pkt(1, 1500, false), pkt(2, 300, false));
        assert_ne!(q.bucket_of(&a), q.bucket_of(&b));
        for _ in 0..400 {
            q.enqueue(a, SimTime::ZERO).unwrap();
        }
        for _ in 0..2000 {
            q.enqueue(b, SimTime::ZERO).unwrap();
        }
        let order: String = (0..15)
            .map(|_| {
                if q.dequeue(SimTime::ZERO).unwrap().flow == 1 {
                    'A'
                } else {
                    'B'
                }
            })
            .collect();
        assert_eq!(order, "AABBBBBBABBBBBA");
        // Over many rounds both get the same bytes, within a quantum and a packet.
        let (mut ba, mut bb) = (0i64, 0i64);
        for _ in 0..1200 {
            let p = q.dequeue(SimTime::ZERO).unwrap();
            if p.flow == 1 {
                ba += p.size as i64;
            } else {
                bb += p.size as i64;
            }
        }
        assert!((ba - bb).abs() <= 1514 + 1500, "A {ba} B {bb}");
    }

    #[test]
    fn a_sparse_flow_goes_ahead_of_a_backlogged_one() {
        let mut q = fq(params());
        for _ in 0..50 {
            q.enqueue(pkt(1, 1500, false), SimTime::ZERO).unwrap();
        }
        for _ in 0..10 {
            assert_eq!(q.dequeue(SimTime::ZERO).unwrap().flow, 1);
        }
        // A packet of an idle flow joins the new-flows list and leaves next.
        q.enqueue(pkt(2, 100, false), SimTime::ZERO).unwrap();
        assert_eq!(q.dequeue(SimTime::ZERO).unwrap().flow, 2);
        assert_eq!(q.dequeue(SimTime::ZERO).unwrap().flow, 1);
        // Its queue, found empty, moved to the old list and then left it: a new packet of flow 2
        // is "new" again.
        q.dequeue(SimTime::ZERO);
        q.enqueue(pkt(2, 100, false), SimTime::ZERO).unwrap();
        assert_eq!(q.dequeue(SimTime::ZERO).unwrap().flow, 2);
    }

    #[test]
    fn overlimit_drops_the_head_of_the_fattest_queue() {
        let mut q = fq(FqCoDelParams::rfc8290(Limit::Packets(10)));
        for s in 0..8 {
            let mut p = pkt(1, 1500, false);
            p.seq = s;
            q.enqueue(p, SimTime::ZERO).unwrap();
        }
        q.enqueue(pkt(2, 300, false), SimTime::ZERO).unwrap();
        q.enqueue(pkt(2, 300, false), SimTime::ZERO).unwrap();
        // Full (10): a third packet of flow 2 makes flow 1 (12000 bytes) drop its head.
        q.enqueue(pkt(2, 300, false), SimTime::ZERO).unwrap();
        assert_eq!(q.len_packets(), 10);
        let v = q.pop_dropped().unwrap();
        assert_eq!((v.flow, v.seq), (1, 0));
        assert!(q.pop_dropped().is_none());
        assert_eq!(q.stats().drops[DropReason::TailDrop.index()], 1);
        assert_eq!(q.stats().dropped_queued, 1);
        // An arrival that would itself head the fattest queue is refused.
        let mut q = fq(FqCoDelParams::rfc8290(Limit::Packets(1)));
        q.enqueue(pkt(1, 300, false), SimTime::ZERO).unwrap();
        let e = q.enqueue(pkt(2, 1500, false), SimTime::ZERO).unwrap_err();
        assert_eq!((e.0.flow, e.1), (2, DropReason::TailDrop));
        assert_eq!(q.stats().dropped_queued, 0);
    }

    #[test]
    fn each_queue_runs_codel_on_its_own_standing_queue() {
        // One flow, 100 packets of 1000 bytes at t = 0, one dequeue every 10 ms: exactly the
        // schedule of plain CoDel (codel.rs: drops at 110, 210, 290, 340 ms ...).
        let mut q = fq(params());
        for _ in 0..100 {
            q.enqueue(pkt(1, 1000, false), SimTime::ZERO).unwrap();
        }
        let mut at = Vec::new();
        for t in (0..=400).step_by(10) {
            let before = q.stats().total_drops();
            q.dequeue(SimTime::from_millis(t));
            if q.stats().total_drops() > before {
                at.push(t);
            }
        }
        assert_eq!(at, vec![110, 210, 290, 340, 390]);
        assert_eq!(q.stats().drops[DropReason::AqmForced.index()], 5);
        assert_eq!(
            q.stats().enqueued,
            q.stats().dequeued + q.stats().dropped_queued + q.len_packets() as u64
        );
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = params();
        assert!(ok.validate().is_ok());
        assert_eq!(
            FqCoDelParams { flows: 0, ..ok }.validate().unwrap_err().0,
            "flows"
        );
        assert_eq!(
            FqCoDelParams { quantum: 0, ..ok }.validate().unwrap_err().0,
            "quantum"
        );
        assert_eq!(
            FqCoDelParams {
                interval: SimTime::ZERO,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "interval"
        );
    }
}
