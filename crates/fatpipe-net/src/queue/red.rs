//! Random Early Detection with ns-2.35's semantics (`queue/red.cc`, `Queue/RED`), and Adaptive RED.
//!
//! Sources: S. Floyd and V. Jacobson, "Random Early Detection Gateways for Congestion Avoidance",
//! IEEE/ACM ToN 1(4), 1993 (the EWMA average, the linear p_b between min_th and max_th, the
//! count-based spacing p_a = p_b / (1 − count·p_b)); S. Floyd, "Recommendation on using the
//! 'gentle_' variant of RED", 2000 (p from max_p to 1 as the average goes from max_th to
//! 2·max_th); S. Floyd, R. Gummadi and S. Shenker, "Adaptive RED: An Algorithm for Increasing the
//! Robustness of RED's Active Queue Management", 2001 (max_p adapted by AIMD every `interval` to
//! keep the average in the middle of [min_th, max_th]); RFC 3168 §5 and §7 (mark ECT packets
//! with CE instead of an early drop). Behaviour read from ns-2.35's `red.cc` (written anew here):
//!
//! - On every arrival the average is updated with the instantaneous queue (excluding the arriving
//!   packet): avg ← (1 − w_q)·avg + w_q·q. If the queue was idle, the update counts as m + 1
//!   arrivals, m = ⌊ptc · idle time⌋ with ptc the link's rate in mean-size packets per second, so
//!   avg ← (1 − w_q)^(m+1)·avg + w_q·q (Floyd & Jacobson §4, ns-2 `estimator`).
//! - If avg ≥ min_th and more than one packet is queued: a forced drop if avg ≥ max_th (≥ 2·max_th
//!   when gentle); else, on the first arrival above min_th count restarts at 1 and nothing is
//!   dropped (`old`); else an early drop or mark with probability p_a. Below min_th (or with at
//!   most one packet queued) nothing is dropped and the "above min_th" memory is cleared.
//! - p_b = max_p·(avg − min_th)/(max_th − min_th); gentle: p_b = (1 − max_p)/max_th·avg +
//!   2·max_p − 1 for avg ≥ max_th; capped at 1. With `wait` (ns-2's default) the spacing is
//!   uniform between drops: p_a = 0 while count·p_b < 1, p_b/(2 − count·p_b) while < 2, else 1;
//!   without it p_a = p_b/(1 − count·p_b) (1 once count·p_b ≥ 1). Byte mode scales p_a by
//!   size/mean_pktsize and counts `count` in mean-size packets.
//! - count counts arrivals since the last early drop or mark; a forced drop resets it too (ns-2
//!   without `ns1_compat_`).
//! - The hard limit (`qlen ≥ limit`, before the arrival joins) is a forced drop of the arrival.
//!   In byte mode a limit in packets means packets of mean size, as ns-2's `qlim_·mean_pktsize`.
//! - Early drops take the arriving packet; with `ecn` an ECT arrival is marked CE and enqueued
//!   instead. Forced drops are always drops.
//! - Not modelled: ns-2's `use_mark_p_` (DCTCP's marking threshold; the peer switches it off),
//!   `cautious_`, Feng's adaptive variant, drop-front and random-victim choices.

use super::droptail::Limit;
use super::fifo::PacketFifo;
use super::{AqmState, DropReason, Queue, QueueStats};
use crate::packet::{Flags, Packet};
use fatpipe_core::rng::RngStream;
use fatpipe_core::SimTime;

/// Adaptive RED's parameters (Floyd, Gummadi & Shenker 2001, Fig. 2; ns-2 `Queue/RED` defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveParams {
    /// Additive increase of max_p, capped at max_p/4 (paper: min(0.01, max_p/4)).
    pub alpha: f64,
    /// Multiplicative decrease of max_p (paper: 0.9).
    pub beta: f64,
    /// Seconds between adaptations (paper: 0.5 s).
    pub interval_s: f64,
    /// Bounds of max_p (paper: [0.01, 0.5]).
    pub bottom: f64,
    pub top: f64,
}

impl Default for AdaptiveParams {
    fn default() -> Self {
        AdaptiveParams {
            alpha: 0.01,
            beta: 0.9,
            interval_s: 0.5,
            bottom: 0.01,
            top: 0.5,
        }
    }
}

/// RED's configuration. Thresholds are in packets (of `mean_pktsize` bytes in byte mode).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub limit: Limit,
    pub min_th: f64,
    pub max_th: f64,
    /// The maximum early-drop probability (ns-2: 1 / `linterm_`), initial value with Adaptive RED.
    pub max_p: f64,
    /// EWMA weight of the average queue.
    pub w_q: f64,
    pub gentle: bool,
    /// Byte mode (ns-2 `bytes_` and `queue_in_bytes_` together): the average in bytes, p scaled
    /// by packet size.
    pub bytes: bool,
    /// Mean packet size in bytes: byte-mode scale and the idle correction's packet time.
    pub mean_pktsize: u32,
    /// Uniform spacing between drops (ns-2 `wait_`, default true).
    pub wait: bool,
    /// Mark ECT packets with CE instead of early drops (ns-2 `setbit_`).
    pub ecn: bool,
    pub adaptive: Option<AdaptiveParams>,
}

impl RedParams {
    /// Check the parameters; the error names the field and the fix.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(self.min_th >= 0.0 && self.min_th.is_finite()) {
            return Err((
                "min_th",
                format!("must be a number of packets >= 0, got {}", self.min_th),
            ));
        }
        if !(self.max_th > self.min_th && self.max_th.is_finite()) {
            return Err((
                "max_th",
                format!("must exceed min_th ({}), got {}", self.min_th, self.max_th),
            ));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(("max_p", format!("must be in (0, 1], got {}", self.max_p)));
        }
        if !(self.w_q > 0.0 && self.w_q < 1.0) {
            return Err((
                "w_q",
                format!(
                    "must be in (0, 1), got {} (Floyd & Jacobson suggest 0.002)",
                    self.w_q
                ),
            ));
        }
        if self.mean_pktsize == 0 {
            return Err(("mean_packet", "must be a positive size in bytes".into()));
        }
        if let Some(a) = &self.adaptive {
            if !(a.beta > 0.0 && a.beta < 1.0) {
                return Err((
                    "adaptive.beta",
                    format!("must be in (0, 1), got {}", a.beta),
                ));
            }
            if !(a.alpha > 0.0
                && a.interval_s > 0.0
                && a.bottom > 0.0
                && a.top <= 1.0
                && a.bottom < a.top)
            {
                return Err((
                    "adaptive",
                    "needs alpha > 0, interval > 0 and 0 < bottom < top <= 1".into(),
                ));
            }
        }
        Ok(())
    }
}

pub struct Red {
    p: RedParams,
    /// Link rate in mean-size packets per second (ns-2 `ptc`).
    ptc: f64,
    q: PacketFifo,
    stats: QueueStats,
    rng: RngStream,
    /// Thresholds in the average's unit (bytes in byte mode).
    th_min: f64,
    th_max: f64,
    avg: f64,
    cur_max_p: f64,
    /// p_b at the last arrival that computed one (ns-2 `prob1_`).
    prob1: f64,
    count: u64,
    count_bytes: u64,
    /// The previous arrival found avg ≥ min_th (ns-2 `old`).
    old: bool,
    /// The transmitter goes or went idle at this time with the queue empty (None: busy).
    idle_since: Option<SimTime>,
    /// Adaptive RED: time of the last max_p change.
    last_set: SimTime,
}

impl Red {
    /// `link_bps` is the rate of the link the queue feeds (the idle correction's packet time).
    pub fn new(p: RedParams, link_bps: u64, rng: RngStream) -> Self {
        let scale = if p.bytes { p.mean_pktsize as f64 } else { 1.0 };
        let ptc = link_bps as f64 / (8.0 * p.mean_pktsize as f64);
        Red {
            th_min: p.min_th * scale,
            th_max: p.max_th * scale,
            cur_max_p: p.max_p,
            p,
            ptc,
            q: PacketFifo::with_capacity(1024),
            stats: QueueStats::default(),
            rng,
            avg: 0.0,
            prob1: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle_since: Some(SimTime::ZERO),
            last_set: SimTime::ZERO,
        }
    }

    /// The current average (in the queue's unit: packets, or bytes in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The current max_p (changes only with Adaptive RED).
    pub fn max_p(&self) -> f64 {
        self.cur_max_p
    }

    fn qlen(&self) -> f64 {
        if self.p.bytes {
            self.q.bytes() as f64
        } else {
            self.q.len() as f64
        }
    }

    /// ns-2 `estimator`: `arrivals` EWMA steps, the last with sample `q`; Adaptive RED's max_p
    /// update (`updateMaxP`) runs at most once per interval.
    fn estimate(&mut self, q: f64, arrivals: u64, now: SimTime) {
        let keep = 1.0 - self.p.w_q;
        // (1 − w)^(m) for the m idle "arrivals" before this one.
        let idle_decay = if arrivals > 1 {
            keep.powf((arrivals - 1) as f64)
        } else {
            1.0
        };
        self.avg = self.avg * idle_decay * keep + self.p.w_q * q;
        if let Some(a) = self.p.adaptive {
            if now.as_secs_f64() > self.last_set.as_secs_f64() + a.interval_s {
                self.adapt_max_p(a, now);
            }
        }
    }

    fn adapt_max_p(&mut self, a: AdaptiveParams, now: SimTime) {
        let part = 0.4 * (self.th_max - self.th_min);
        if self.avg < self.th_min + part && self.cur_max_p > a.bottom {
            self.cur_max_p *= a.beta;
            self.last_set = now;
        } else if self.avg > self.th_max - part && a.top > self.cur_max_p {
            self.cur_max_p += a.alpha.min(0.25 * self.cur_max_p);
            self.last_set = now;
        }
    }

    /// p_b for the current average (ns-2 `calculate_p_new`).
    fn p_b(&self) -> f64 {
        let p = if self.avg >= self.th_max {
            if self.p.gentle {
                (1.0 - self.cur_max_p) / self.th_max * self.avg + 2.0 * self.cur_max_p - 1.0
            } else {
                1.0
            }
        } else {
            self.cur_max_p * (self.avg - self.th_min) / (self.th_max - self.th_min)
        };
        p.min(1.0)
    }

    /// p_a from p_b with the count spacing (ns-2 `modify_p`).
    fn p_a(&self, p_b: f64, size: u32) -> f64 {
        let count = if self.p.bytes {
            (self.count_bytes / self.p.mean_pktsize as u64) as f64
        } else {
            self.count as f64
        };
        let cp = count * p_b;
        let mut p = if self.p.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        if self.p.bytes && p < 1.0 {
            p = p * size as f64 / self.p.mean_pktsize as f64;
        }
        p.min(1.0)
    }

    fn over_limit(&self, p: &Packet) -> bool {
        match (self.p.limit, self.p.bytes) {
            (Limit::Packets(n), false) => self.q.len() as u64 >= n,
            (Limit::Packets(n), true) => self.q.bytes() >= n * self.p.mean_pktsize as u64,
            (Limit::Bytes(b), _) => self.q.bytes() + p.size as u64 > b,
        }
    }
}

impl Queue for Red {
    fn kind(&self) -> &'static str {
        "red"
    }

    fn enqueue(&mut self, mut p: Packet, now: SimTime) -> Result<(), (Packet, DropReason)> {
        // Idle correction: the queue pretends m mean-size packets arrived while it was idle.
        let mut arrivals = 1u64;
        if let Some(since) = self.idle_since.take() {
            if now > since {
                arrivals += (self.ptc * (now - since).as_secs_f64()) as u64;
            }
        }
        let qlen = self.qlen();
        self.estimate(qlen, arrivals, now);
        self.count += 1;
        self.count_bytes += p.size as u64;

        // ns-2 decides the early action first, then the hard limit (which wins); a packet the
        // limit drops is not counted as marked.
        let full = self.over_limit(&p);
        let mut drop = None;
        if self.avg >= self.th_min && qlen > 1.0 {
            let forced_at = if self.p.gentle {
                2.0 * self.th_max
            } else {
                self.th_max
            };
            if self.avg >= forced_at {
                drop = Some(DropReason::AqmForced);
            } else if !self.old {
                // The average just crossed min_th (or the queue refilled above it): restart
                // the spacing without dropping.
                self.count = 1;
                self.count_bytes = p.size as u64;
                self.old = true;
            } else {
                self.prob1 = self.p_b();
                let p_a = self.p_a(self.prob1, p.size);
                if self.rng.uniform() <= p_a {
                    self.count = 0;
                    self.count_bytes = 0;
                    if self.p.ecn && p.flags.markable() {
                        if !full {
                            p.flags.set(Flags::CE);
                            self.stats.record_mark(DropReason::AqmEarly);
                        }
                    } else {
                        drop = Some(DropReason::AqmEarly);
                    }
                }
            }
        } else {
            self.old = false;
        }
        if full {
            drop = Some(DropReason::TailDrop);
        }
        if let Some(why) = drop {
            if why != DropReason::AqmEarly {
                self.count = 0;
                self.count_bytes = 0;
            }
            self.stats.record_drop(&p, why);
            return Err((p, why));
        }
        self.q.push(p);
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64);
        Ok(())
    }

    fn dequeue(&mut self, _now: SimTime) -> Option<Packet> {
        let p = self.q.pop()?;
        self.stats.dequeued += 1;
        Some(p)
    }

    fn idle_from(&mut self, at: SimTime) {
        debug_assert!(self.q.is_empty());
        self.idle_since = Some(at);
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
    fn aqm_state(&self, _now: SimTime) -> Option<AqmState> {
        let unit = if self.p.bytes {
            self.p.mean_pktsize as f64
        } else {
            1.0
        };
        Some(AqmState {
            avg_pkts: self.avg / unit,
            prob: self.p_b().max(0.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data packet of `size` bytes (the queue tests' builder, flow 0).
    fn pkt(size: u32, ect: bool) -> Packet {
        crate::queue::codel::tests::pkt(0, size, ect)
    }

    fn params() -> RedParams {
        RedParams {
            limit: Limit::Packets(100),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            w_q: 0.002,
            gentle: true,
            bytes: false,
            mean_pktsize: 1000,
            wait: true,
            ecn: false,
            adaptive: None,
        }
    }

    fn red(p: RedParams) -> Red {
        Red::new(p, 8_000_000, RngStream::new(1, "test/red"))
    }

    #[test]
    fn p_b_is_linear_then_gentle() {
        let mut r = red(params());
        // Floyd & Jacobson: p_b = max_p (avg − min_th)/(max_th − min_th).
        r.avg = 10.0;
        assert!((r.p_b() - 0.05).abs() < 1e-12);
        r.avg = 5.0;
        assert!(r.p_b().abs() < 1e-12);
        // Gentle: max_p at max_th, 1 at 2·max_th, linear between: avg 20 → 0.1 + 0.9·5/15 = 0.4.
        r.avg = 15.0;
        assert!((r.p_b() - 0.1).abs() < 1e-12);
        r.avg = 20.0;
        assert!((r.p_b() - 0.4).abs() < 1e-12);
        r.avg = 30.0;
        assert!((r.p_b() - 1.0).abs() < 1e-12);
        // Not gentle: 1 from max_th up.
        let mut r = red(RedParams {
            gentle: false,
            ..params()
        });
        r.avg = 15.0;
        assert_eq!(r.p_b(), 1.0);
    }

    #[test]
    fn count_spacing_with_and_without_wait() {
        let mut r = red(RedParams {
            wait: false,
            ..params()
        });
        // p_a = p_b / (1 − count·p_b): p_b 0.05, count 10 → 0.1; count 19 → 1.0 (0.05/0.05).
        r.count = 10;
        assert!((r.p_a(0.05, 1000) - 0.1).abs() < 1e-12);
        r.count = 19;
        assert!((r.p_a(0.05, 1000) - 1.0).abs() < 1e-9);
        r.count = 20;
        assert_eq!(r.p_a(0.05, 1000), 1.0);
        // wait (ns-2's default): nothing while count·p_b < 1, then p_b/(2 − count·p_b).
        let mut r = red(params());
        r.count = 10;
        assert_eq!(r.p_a(0.05, 1000), 0.0);
        r.count = 30;
        assert!((r.p_a(0.05, 1000) - 0.1).abs() < 1e-12); // 0.05 / (2 − 1.5)
        r.count = 40;
        assert_eq!(r.p_a(0.05, 1000), 1.0);
        // Byte mode: count in mean-size packets, p scaled by size/mean.
        let mut r = red(RedParams {
            wait: false,
            bytes: true,
            ..params()
        });
        r.count_bytes = 10_000;
        assert!((r.p_a(0.05, 500) - 0.05).abs() < 1e-12); // 0.1 · 500/1000
    }

    #[test]
    fn ewma_and_idle_correction() {
        let mut r = red(params());
        // Busy queue: avg ← (1 − w) avg + w q at each arrival.
        r.idle_since = None;
        r.avg = 10.0;
        r.estimate(20.0, 1, SimTime::ZERO);
        assert!((r.avg - (0.998 * 10.0 + 0.002 * 20.0)).abs() < 1e-12);
        // Idle for 0.1 s on a 8 Mb/s link with 1000-byte packets: ptc = 1000/s, m = 100.
        let mut r = red(params());
        r.avg = 10.0;
        r.idle_from(SimTime::from_millis(100));
        r.enqueue(pkt(1000, false), SimTime::from_millis(200))
            .unwrap();
        let expect = 10.0 * 0.998f64.powi(101);
        assert!((r.avg - expect).abs() < 1e-9, "{} vs {expect}", r.avg);
    }

    #[test]
    fn first_crossing_restarts_the_count_then_drops_space_out() {
        let mut r = red(RedParams {
            w_q: 0.5,
            ..params()
        });
        r.idle_since = None;
        let mut drops = 0;
        let mut marks_or_drops_at = Vec::new();
        // Hold the queue near 10 packets: avg converges to 10, p_b 0.05, and with `wait` the
        // drops come between count 20 and 40 arrivals apart.
        for i in 0..4000 {
            if r.len_packets() < 10 {
                let _ = r.enqueue(pkt(1000, false), SimTime::from_micros(i));
                continue;
            }
            match r.enqueue(pkt(1000, false), SimTime::from_micros(i)) {
                Ok(()) => {
                    r.dequeue(SimTime::from_micros(i));
                }
                Err((_, why)) => {
                    assert_eq!(why, DropReason::AqmEarly);
                    drops += 1;
                    marks_or_drops_at.push(i);
                }
            }
        }
        assert!(drops > 50, "{drops}");
        let gaps: Vec<i64> = marks_or_drops_at
            .windows(2)
            .map(|w| (w[1] - w[0]) as i64)
            .collect();
        assert!(gaps.iter().all(|&g| (20..=41).contains(&g)), "{gaps:?}");
    }

    #[test]
    fn ecn_marks_ect_packets_instead_of_early_drops_but_not_forced_ones() {
        let mut r = red(RedParams {
            ecn: true,
            w_q: 0.5,
            wait: false,
            ..params()
        });
        r.idle_since = None;
        for i in 0..12 {
            r.enqueue(pkt(1000, true), SimTime::from_micros(i)).unwrap();
        }
        // avg ~12: early region. Every outcome for an ECT packet is accept (maybe marked).
        let mut marked = 0;
        for i in 12..200 {
            let p = pkt(1000, true);
            r.enqueue(p, SimTime::from_micros(i)).unwrap();
            let out = r.dequeue(SimTime::from_micros(i)).unwrap();
            marked += out.flags.has(Flags::CE) as u32;
        }
        // The packets still queued (some from the first 12) carry the rest of the marks.
        while let Some(out) = r.dequeue(SimTime::from_micros(200)) {
            marked += out.flags.has(Flags::CE) as u32;
        }
        assert!(marked > 0);
        assert_eq!(r.stats().total_drops(), 0);
        assert_eq!(r.stats().total_marks() as u32, marked);
        for i in 0..12 {
            r.enqueue(pkt(1000, true), SimTime::from_micros(200 + i))
                .unwrap();
        }
        // A non-ECT packet in the same state is dropped.
        let mut dropped = 0;
        for i in 200..400 {
            if r.enqueue(pkt(1000, false), SimTime::from_micros(i))
                .is_err()
            {
                dropped += 1;
            } else {
                r.dequeue(SimTime::from_micros(i));
            }
        }
        assert!(dropped > 0);
        // Above 2·max_th (gentle) drops are forced, ECT or not.
        r.avg = 100.0; // stays above 2·max_th = 30 after this arrival's EWMA step (w_q 0.5)
        for i in 0..5 {
            r.q.push(pkt(1000, true));
            let _ = i;
        }
        let e = r
            .enqueue(pkt(1000, true), SimTime::from_micros(500))
            .unwrap_err();
        assert_eq!(e.1, DropReason::AqmForced);
    }

    #[test]
    fn hard_limit_is_a_tail_drop_and_byte_mode_counts_mean_packets() {
        let mut r = red(RedParams {
            limit: Limit::Packets(3),
            min_th: 50.0,
            max_th: 60.0,
            ..params()
        });
        for i in 0..3 {
            r.enqueue(pkt(1000, false), SimTime::from_micros(i))
                .unwrap();
        }
        assert_eq!(
            r.enqueue(pkt(1000, false), SimTime::from_micros(4))
                .unwrap_err()
                .1,
            DropReason::TailDrop
        );
        // Byte mode: a limit of 3 packets is 3 × 1000 bytes; four 700-byte packets fit, five
        // do not (2800 < 3000, then 3500 ≥ 3000).
        let mut r = red(RedParams {
            limit: Limit::Packets(3),
            min_th: 50.0,
            max_th: 60.0,
            bytes: true,
            ..params()
        });
        for i in 0..5 {
            r.enqueue(pkt(700, false), SimTime::from_micros(i)).unwrap();
        }
        assert!(r.enqueue(pkt(700, false), SimTime::from_micros(6)).is_err());
    }

    #[test]
    fn adaptive_red_moves_max_p_towards_the_target_band() {
        let a = AdaptiveParams::default();
        let mut r = red(RedParams {
            adaptive: Some(a),
            ..params()
        });
        // Average high (above max_th − 0.4·(max_th − min_th) = 11): max_p grows by
        // min(alpha, max_p/4) = 0.01 per interval.
        r.avg = 14.0;
        r.idle_since = None;
        r.estimate(14.0, 1, SimTime::from_millis(600));
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        // Not again within the interval.
        r.estimate(14.0, 1, SimTime::from_millis(900));
        assert!((r.max_p() - 0.11).abs() < 1e-12);
        // Average low (below 9): max_p × 0.9.
        r.avg = 6.0;
        r.estimate(6.0, 1, SimTime::from_millis(1200));
        assert!((r.max_p() - 0.099).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        assert_eq!(
            RedParams {
                min_th: 15.0,
                ..params()
            }
            .validate()
            .unwrap_err()
            .0,
            "max_th"
        );
        assert_eq!(
            RedParams {
                max_p: 0.0,
                ..params()
            }
            .validate()
            .unwrap_err()
            .0,
            "max_p"
        );
        assert_eq!(
            RedParams {
                max_p: 1.5,
                ..params()
            }
            .validate()
            .unwrap_err()
            .0,
            "max_p"
        );
        assert_eq!(
            RedParams {
                w_q: 1.0,
                ..params()
            }
            .validate()
            .unwrap_err()
            .0,
            "w_q"
        );
        assert_eq!(
            RedParams {
                w_q: 0.0,
                ..params()
            }
            .validate()
            .unwrap_err()
            .0,
            "w_q"
        );
        assert!(params().validate().is_ok());
    }
}
