//! One direction of an emulated link, as the simulator models it (`fatpipe-net`'s `Link`): an
//! output queue (any `Queue` discipline) in front of a transmitter that serialises one frame at
//! a time at `rate` (a frame starts when the previous one has finished), then propagation for
//! `delay`; random loss with probability `loss` before the queue (as netem's). Time is injected
//! (`SimTime`, nanoseconds of CLOCK_MONOTONIC in the emulator), so this file has no I/O and the
//! tests drive it directly.
//!
//! Events run in exact model time whatever the wall clock does: an arrival at `t` first runs
//! every transmission completion due at or before `t` (completion first at equal times, as in the
//! simulator), and the queue sees `enqueue(t)` / `dequeue(done)` at the modelled instants. The
//! emulator may call [`LinkModel::advance`] late (completions are processed lazily, when the
//! loop next wakes): a completion at `T` only has to be processed before real time `T + delay`,
//! when the frame it starts could first be due, which [`LinkModel::next_deadline`] reports. With
//! tens of milliseconds of delay the loop thus wakes for departures only, not for every
//! completion.

use fatpipe_core::{Rate, RngStream, SimTime};
use fatpipe_net::packet::Flags;
use fatpipe_net::queue::{DropReason, QueueStats};
use fatpipe_net::{Packet, Queue};
use std::collections::VecDeque;

/// The modelled parameters of one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirParams {
    pub rate: Rate,
    pub delay: SimTime,
    /// Probability of losing each frame, independently, before the queue.
    pub loss: f64,
}

/// A frame in propagation: when it is due out of the emulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    /// Scheduled departure: end of serialisation + delay.
    pub due: SimTime,
    /// The frame's slot (the packet's `seq`).
    pub slot: u32,
    pub size: u32,
    /// Serialisation started the instant the previous frame's ended (the transmitter was
    /// backlogged): such departures measure the achieved rate.
    pub back_to_back: bool,
    /// The queue marked the packet CE (the frame must be rewritten).
    pub ce: bool,
}

/// What became of an arriving frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Queued,
    /// Random loss.
    Lost,
    /// Refused by the queue.
    Dropped(DropReason),
}

pub struct LinkModel {
    p: DirParams,
    queue: Box<dyn Queue>,
    loss_rng: RngStream,
    /// Model time processed so far.
    clock: SimTime,
    /// End of the current transmission (the next completion event), if any.
    busy_until: Option<SimTime>,
    pipe: VecDeque<Departure>,
    pub frames_in: u64,
    pub bytes_in: u64,
    pub lost: u64,
    pub lost_bytes: u64,
}

impl LinkModel {
    pub fn new(p: DirParams, queue: Box<dyn Queue>, loss_rng: RngStream) -> Self {
        LinkModel {
            p,
            queue,
            loss_rng,
            clock: SimTime::ZERO,
            busy_until: None,
            pipe: VecDeque::with_capacity(1024),
            frames_in: 0,
            bytes_in: 0,
            lost: 0,
            lost_bytes: 0,
        }
    }

    pub fn params(&self) -> &DirParams {
        &self.p
    }

    pub fn queue_stats(&self) -> &QueueStats {
        self.queue.stats()
    }

    pub fn clock(&self) -> SimTime {
        self.clock
    }

    /// Frames held: waiting in the queue, being serialised or propagating.
    pub fn in_flight(&self) -> usize {
        self.queue.len_packets() + self.pipe.len()
    }

    /// A frame arrives at `t` (clamped to the model clock: a frame seen after the model moved on
    /// arrives "now"). `pkt.seq` is its slot; slots of frames the model discards (this one or
    /// others the queue drops) are pushed to `freed`.
    pub fn arrive(&mut self, t: SimTime, pkt: Packet, freed: &mut Vec<u32>) -> Fate {
        let t = t.max(self.clock);
        self.advance(t, freed);
        self.frames_in += 1;
        self.bytes_in += pkt.size as u64;
        if self.p.loss > 0.0 && self.loss_rng.uniform() < self.p.loss {
            self.lost += 1;
            self.lost_bytes += pkt.size as u64;
            freed.push(pkt.seq as u32);
            return Fate::Lost;
        }
        let fate = match self.queue.enqueue(pkt, t) {
            Ok(()) => Fate::Queued,
            Err((p, why)) => {
                freed.push(p.seq as u32);
                Fate::Dropped(why)
            }
        };
        self.collect_dropped(freed);
        if self.busy_until.is_none() {
            self.start_tx(t, false, freed);
        }
        fate
    }

    fn collect_dropped(&mut self, freed: &mut Vec<u32>) {
        while let Some(p) = self.queue.pop_dropped() {
            freed.push(p.seq as u32);
        }
    }

    /// The transmitter is free at `t`: serialise the next packet the queue gives.
    fn start_tx(&mut self, t: SimTime, back_to_back: bool, freed: &mut Vec<u32>) {
        match self.queue.dequeue(t) {
            Some(p) => {
                let end = t + self.p.rate.tx_time(p.size as u64);
                self.pipe.push_back(Departure {
                    due: end + self.p.delay,
                    slot: p.seq as u32,
                    size: p.size,
                    back_to_back,
                    ce: p.flags.has(Flags::CE),
                });
                self.busy_until = Some(end);
            }
            None => {
                self.busy_until = None;
                if back_to_back {
                    self.queue.idle_from(t);
                }
            }
        }
        self.collect_dropped(freed);
    }

    /// Run every transmission completion due at or before `now`, at its own time.
    pub fn advance(&mut self, now: SimTime, freed: &mut Vec<u32>) {
        while let Some(done) = self.busy_until {
            if done > now {
                break;
            }
            self.clock = self.clock.max(done);
            self.start_tx(done, true, freed);
        }
        self.clock = self.clock.max(now);
    }

    /// Hand over the departures due at or before `now` (after `advance(now)`).
    pub fn pop_due(&mut self, now: SimTime, out: &mut Vec<Departure>) {
        while let Some(d) = self.pipe.front() {
            if d.due > now {
                break;
            }
            out.push(self.pipe.pop_front().expect("front"));
        }
    }

    /// The latest real time at which the loop must call `advance` and `pop_due` again: the
    /// next departure, or the next completion that starts a waiting frame plus the delay (the
    /// earliest that frame can be due).
    pub fn next_deadline(&self) -> Option<SimTime> {
        let pipe = self.pipe.front().map(|d| d.due);
        let tx = match self.busy_until {
            Some(b) if !self.queue.is_empty() => Some(b + self.p.delay),
            _ => None,
        };
        match (pipe, tx) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fatpipe_net::packet::{PacketKind, SackBlocks};
    use fatpipe_net::queue::droptail::{DropTail, Limit};
    use fatpipe_net::queue::{CoDel, CoDelParams};

    fn pkt(slot: u32, size: u32, ect: bool) -> Packet {
        Packet {
            flow: 1,
            dst: 0,
            seq: slot as u64,
            ts: 0,
            size,
            len: size,
            sack: SackBlocks::default(),
            kind: PacketKind::Data,
            flags: Flags::new(if ect { Flags::ECT } else { 0 }),
            epoch: 0,
        }
    }

    fn droptail(rate: u64, delay_ms: u64, limit: u64, loss: f64) -> LinkModel {
        LinkModel::new(
            DirParams {
                rate: Rate(rate),
                delay: SimTime::from_millis(delay_ms),
                loss,
            },
            Box::new(DropTail::new(Limit::Packets(limit))),
            RngStream::new(1, "test/loss"),
        )
    }

    fn drain(m: &mut LinkModel, until: SimTime) -> Vec<Departure> {
        let mut freed = Vec::new();
        m.advance(until, &mut freed);
        let mut out = Vec::new();
        m.pop_due(until, &mut out);
        out
    }

    #[test]
    fn an_idle_link_delivers_after_serialisation_plus_delay() {
        // 1514 bytes at 100 Mb/s: 121.12 us, rounded up to 121 120 ns.
        let mut m = droptail(100_000_000, 20, 100, 0.0);
        let mut freed = Vec::new();
        let t = SimTime::from_millis(3);
        assert_eq!(m.arrive(t, pkt(7, 1514, false), &mut freed), Fate::Queued);
        assert_eq!(
            m.next_deadline(),
            Some(t + SimTime(121_120) + SimTime::from_millis(20))
        );
        assert!(drain(&mut m, SimTime::from_millis(23)).is_empty());
        let d = drain(&mut m, SimTime::from_secs(1));
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].due, SimTime(3_000_000 + 121_120 + 20_000_000));
        assert_eq!((d[0].slot, d[0].size, d[0].back_to_back), (7, 1514, false));
    }

    #[test]
    fn a_burst_leaves_back_to_back_at_the_rate_and_the_queue_limit_holds() {
        // 10 frames of 1250 bytes at once into 10 Mb/s (1 ms each) with a 3-packet queue: one is
        // serialised at once, 3 wait, 6 are tail-dropped.
        let mut m = droptail(10_000_000, 50, 3, 0.0);
        let mut freed = Vec::new();
        let fates: Vec<Fate> = (0..10)
            .map(|i| m.arrive(SimTime::ZERO, pkt(i, 1250, false), &mut freed))
            .collect();
        assert_eq!(fates.iter().filter(|f| **f == Fate::Queued).count(), 4);
        assert_eq!(m.queue_stats().drops[DropReason::TailDrop.index()], 6);
        assert_eq!(freed, vec![4, 5, 6, 7, 8, 9]);
        let d = drain(&mut m, SimTime::from_secs(1));
        let dues: Vec<u64> = d.iter().map(|d| d.due.as_nanos() / 1_000_000).collect();
        assert_eq!(dues, vec![51, 52, 53, 54]);
        let b2b: Vec<bool> = d.iter().map(|d| d.back_to_back).collect();
        assert_eq!(b2b, vec![false, true, true, true]);
        assert_eq!(m.in_flight(), 0);
    }

    #[test]
    fn lazy_advancing_gives_the_exact_schedule() {
        // The same arrivals, with the loop waking at the exact instants or at random late
        // instants (within the delay slack): the same departures.
        let arrivals: Vec<(SimTime, u32)> = {
            let mut r = RngStream::new(5, "arrivals");
            let mut t = 0u64;
            (0..2000)
                .map(|_| {
                    t += r.below(200_000);
                    (SimTime(t), 64 + r.below(1450) as u32)
                })
                .collect()
        };
        let run = |wake_rng: Option<u64>| {
            let mut m = droptail(50_000_000, 10, 20, 0.0);
            let mut r = wake_rng.map(|s| RngStream::new(s, "wakes"));
            let mut freed = Vec::new();
            let mut out = Vec::new();
            for (i, &(t, size)) in arrivals.iter().enumerate() {
                if let Some(r) = r.as_mut() {
                    // a wake-up somewhere before this arrival, never after a due deadline
                    let w = SimTime(t.as_nanos().saturating_sub(r.below(5_000_000)));
                    let w = w.min(m.next_deadline().unwrap_or(w)).max(m.clock());
                    m.advance(w, &mut freed);
                    m.pop_due(w, &mut out);
                }
                m.arrive(t, pkt(i as u32, size, false), &mut freed);
            }
            m.advance(SimTime::from_secs(100), &mut freed);
            m.pop_due(SimTime::from_secs(100), &mut out);
            (out, freed)
        };
        let exact = run(None);
        assert!(
            exact.1.len() > 10 && exact.0.len() > 1000,
            "some drops, many departures"
        );
        for seed in 1..4 {
            assert_eq!(run(Some(seed)), exact);
        }
    }

    #[test]
    fn a_late_arrival_is_clamped_to_the_model_clock() {
        let mut m = droptail(10_000_000, 1, 10, 0.0);
        let mut freed = Vec::new();
        m.advance(SimTime::from_millis(5), &mut freed);
        m.arrive(SimTime::from_millis(4), pkt(0, 1250, false), &mut freed);
        let d = drain(&mut m, SimTime::from_secs(1));
        assert_eq!(d[0].due, SimTime::from_millis(5 + 1 + 1));
    }

    #[test]
    fn random_loss_has_its_probability_and_repeats_with_the_seed() {
        let run = |seed: u64| {
            let mut m = LinkModel::new(
                DirParams {
                    rate: Rate(1_000_000_000_000),
                    delay: SimTime::ZERO,
                    loss: 0.01,
                },
                Box::new(DropTail::new(Limit::Packets(10))),
                RngStream::new(seed, "linkem/x/ab/loss"),
            );
            let mut freed = Vec::new();
            let fates: Vec<bool> = (0..100_000u32)
                .map(|i| {
                    m.arrive(SimTime(i as u64 * 1000), pkt(i, 100, false), &mut freed) == Fate::Lost
                })
                .collect();
            assert_eq!(m.lost as usize, fates.iter().filter(|l| **l).count());
            fates
        };
        let a = run(1);
        let lost = a.iter().filter(|l| **l).count() as f64;
        // Binomial(1e5, 0.01): sd = 31.5; 4 sd either side.
        assert!((lost - 1000.0).abs() < 126.0, "{lost}");
        assert_eq!(run(1), a);
        assert_ne!(run(2), a);
    }

    #[test]
    fn an_aqm_marks_ect_frames_through_the_model() {
        // CoDel with ECN on a 10 Mb/s link offered 20 Mb/s of ECT frames: marks, and CE
        // reaches the departures.
        let mut m = LinkModel::new(
            DirParams {
                rate: Rate(10_000_000),
                delay: SimTime::from_millis(10),
                loss: 0.0,
            },
            Box::new(CoDel::new(CoDelParams {
                ecn: true,
                ..CoDelParams::rfc8289(Limit::Packets(1000))
            })),
            RngStream::new(1, "l"),
        );
        let mut freed = Vec::new();
        let mut out = Vec::new();
        for i in 0..4000u32 {
            let t = SimTime(i as u64 * 500_000); // 1250 B every 0.5 ms = 20 Mb/s
            m.arrive(t, pkt(i, 1250, true), &mut freed);
            m.pop_due(t, &mut out);
        }
        m.advance(SimTime::from_secs(100), &mut freed);
        m.pop_due(SimTime::from_secs(100), &mut out);
        let marks: u64 = m.queue_stats().marks.iter().sum();
        assert!(marks > 10, "{marks}");
        assert_eq!(out.iter().filter(|d| d.ce).count() as u64, marks);
    }
}
