//! PIE, Proportional Integral controller Enhanced (R. Pan, P. Natarajan, F. Baker, G. White,
//! "Proportional Integral Controller Enhanced (PIE): A Lightweight Control Scheme to Address the
//! Bufferbloat Problem", RFC 8033, February 2017), written from the RFC's text and its
//! pseudocode (Appendix A, basic; Appendix B, with the optional elements).
//!
//! - Random drop at enqueue (§4.1) with probability drop_prob, except that the "safeguard" lets
//!   every packet in while qdelay_old < QDELAY_REF/2 and drop_prob < 20 %, or while the queue
//!   holds at most 2 mean packets (2 · `mean_pktsize` bytes); and nothing is dropped while the
//!   burst allowance is positive (§4.4).
//! - Every T_UPDATE (§4.2): p = α·(qdelay − QDELAY_REF) + β·(qdelay − qdelay_old), delays in
//!   seconds, α and β in 1/s; auto-tuning: p is divided by 2048, 512, 128, 32, 8, 2 when
//!   drop_prob < 10⁻⁶, 10⁻⁵, 10⁻⁴, 10⁻³, 10⁻², 10⁻¹ (the table of §4.2 / Appendix A), unchanged
//!   above; with the cap drop adjustment (§5.5, on by default) an increase is capped at 2 % once
//!   drop_prob ≥ 10 %; drop_prob += p; drop_prob × 0.98 when qdelay and qdelay_old are both 0
//!   (§4.2's exponential decay); drop_prob clipped to [0, 1]; qdelay_old ← qdelay;
//!   burst_allowance ← max(0, burst_allowance − T_UPDATE).
//! - Burst tolerance (§4.4): at an arrival, if drop_prob = 0 and qdelay and qdelay_old are both
//!   below QDELAY_REF/2, burst_allowance ← MAX_BURST.
//! - Queue delay (§4.3): `Timestamp` (default) is Appendix A's choice: qdelay is the sojourn time
//!   of the last packet dequeued (Linux's default since it gained the option). `DqRate` is the
//!   departure-rate estimate of §5.2 / Appendix B: a measurement cycle starts at a dequeue that
//!   leaves at least DQ_THRESHOLD bytes queued and ends once DQ_THRESHOLD bytes have departed;
//!   avg_dq_time ← dq_time (first cycle) or dq_time·w + avg_dq_time·(1 − w), w = DQ_THRESHOLD/2¹⁶;
//!   qdelay = queue bytes · avg_dq_time / DQ_THRESHOLD at each update (0 until a first cycle ends).
//! - ECN (§5.1): a packet chosen for an early drop that is ECT is marked CE and enqueued instead,
//!   while drop_prob < mark_ecnth (10 %); above it, it is dropped.
//! - Derandomisation (§5.4, optional, off by default): accu_prob accumulates drop_prob at each
//!   arrival that passes the safeguard (reset when drop_prob is 0); no drop while accu_prob <
//!   0.85, a drop for sure once it reaches 8.5, the random test between; reset after each drop or
//!   mark (and at a tail drop, as Appendix B does).
//! - The hard limit is a tail drop of the arrival.
//! - Not modelled: the active/inactive switch of §5.3 (PIE is always on), byte-size scaling of p.
//!
//! The update has no timer: it runs lazily and exactly at each enqueue and dequeue (see
//! [`super::sampler`]); update k is at k · T_UPDATE.
//!
//! Constants (RFC 8033, §4 and Appendix B): QDELAY_REF = 15 ms, T_UPDATE = 15 ms, α = 0.125,
//! β = 1.25, MAX_BURST = 150 ms, mark_ecnth = 0.1, DQ_THRESHOLD = 2¹⁴ bytes (Appendix B; weight
//! 2¹⁴/2¹⁶ = 0.25), the safeguard's QDELAY_REF/2, 20 % and 2 packets (§4.1), the tuning table
//! (§4.2), the 2 % cap at 10 % (§5.5), the decay 0.98 (§4.2), the derandomisation bounds 0.85 and
//! 8.5 (§5.4). MEAN_PKTSIZE is not given a value by the RFC: 1500 bytes here.
//! Random drops count as [`DropReason::AqmEarly`].

use super::droptail::Limit;
use super::fifo::TimedFifo;
use super::sampler::Sampler;
use super::{AqmState, DropReason, Queue, QueueStats};
use crate::packet::{Flags, Packet};
use fatpipe_core::rng::RngStream;
use fatpipe_core::SimTime;

/// How PIE estimates the queueing delay (RFC 8033 §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayEstimator {
    /// The sojourn time of the last dequeued packet (Appendix A).
    Timestamp,
    /// Queue bytes over the departure rate measured in DQ_THRESHOLD-byte cycles (§5.2, App. B).
    DqRate,
}

/// PIE's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub limit: Limit,
    /// QDELAY_REF, the target queueing delay (15 ms).
    pub target: SimTime,
    /// T_UPDATE, the period of the probability update (15 ms).
    pub t_update: SimTime,
    /// α, 1/s (0.125).
    pub alpha: f64,
    /// β, 1/s (1.25).
    pub beta: f64,
    /// MAX_BURST (150 ms).
    pub max_burst: SimTime,
    /// Mark ECT packets instead of dropping them while drop_prob < mark_ecnth (§5.1).
    pub ecn: bool,
    pub mark_ecnth: f64,
    /// Derandomised drops (§5.4).
    pub derandomize: bool,
    /// Cap drop adjustment (§5.5).
    pub cap_drop: bool,
    pub estimator: DelayEstimator,
    /// DQ_THRESHOLD, bytes (2¹⁴).
    pub dq_threshold: u64,
    /// MEAN_PKTSIZE of the safeguard, bytes.
    pub mean_pktsize: u32,
}

impl PieParams {
    /// RFC 8033's defaults (timestamp delay, cap drop adjustment on, no ECN, no
    /// derandomisation, 1500-byte mean packet).
    pub fn rfc8033(limit: Limit) -> Self {
        PieParams {
            limit,
            target: SimTime::from_millis(15),
            t_update: SimTime::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: SimTime::from_millis(150),
            ecn: false,
            mark_ecnth: 0.1,
            derandomize: false,
            cap_drop: true,
            estimator: DelayEstimator::Timestamp,
            dq_threshold: 1 << 14,
            mean_pktsize: 1500,
        }
    }

    /// Check the parameters; the error names the scenario field and says why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if self.target == SimTime::ZERO {
            return Err(("target", "must be a positive delay (RFC 8033: 15ms)".into()));
        }
        if self.t_update == SimTime::ZERO {
            return Err((
                "t_update",
                "must be a positive period (RFC 8033: 15ms)".into(),
            ));
        }
        if !(self.alpha >= 0.0 && self.alpha.is_finite()) {
            return Err((
                "alpha",
                format!(
                    "must be a finite number >= 0 (RFC 8033: 0.125), got {}",
                    self.alpha
                ),
            ));
        }
        if !(self.beta >= 0.0 && self.beta.is_finite()) {
            return Err((
                "beta",
                format!(
                    "must be a finite number >= 0 (RFC 8033: 1.25), got {}",
                    self.beta
                ),
            ));
        }
        if !(self.mark_ecnth >= 0.0 && self.mark_ecnth <= 1.0) {
            return Err((
                "mark_ecnth",
                format!("must be in [0, 1] (RFC 8033: 0.1), got {}", self.mark_ecnth),
            ));
        }
        if self.dq_threshold == 0 {
            return Err(("dq_threshold", "must be a positive size in bytes".into()));
        }
        if self.mean_pktsize == 0 {
            return Err(("mean_packet", "must be a positive size in bytes".into()));
        }
        Ok(())
    }
}

/// PIE's control state (everything the periodic update touches), copied to answer `aqm_state`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Law {
    sampler: Sampler,
    drop_prob: f64,
    /// The current delay estimate, seconds (timestamp: the last sojourn; dq_rate: the last
    /// update's).
    qdelay: f64,
    qdelay_old: f64,
    /// Nanoseconds left.
    burst_allowance: u64,
    /// Departure-rate estimate: seconds per DQ_THRESHOLD bytes (0: none yet).
    avg_dq_time: f64,
}

impl Law {
    /// The update of §4.2 at one T_UPDATE tick; `bytes` is the queue over the past period.
    fn update(&mut self, p: &PieParams, bytes: u64) {
        if p.estimator == DelayEstimator::DqRate {
            self.qdelay = if self.avg_dq_time > 0.0 {
                bytes as f64 * self.avg_dq_time / p.dq_threshold as f64
            } else {
                0.0
            };
        }
        let target = p.target.as_secs_f64();
        let mut dp = p.alpha * (self.qdelay - target) + p.beta * (self.qdelay - self.qdelay_old);
        // Auto-tuning of α and β by the size of drop_prob (§4.2).
        let scale = if self.drop_prob < 1e-6 {
            2048.0
        } else if self.drop_prob < 1e-5 {
            512.0
        } else if self.drop_prob < 1e-4 {
            128.0
        } else if self.drop_prob < 1e-3 {
            32.0
        } else if self.drop_prob < 1e-2 {
            8.0
        } else if self.drop_prob < 1e-1 {
            2.0
        } else {
            1.0
        };
        dp /= scale;
        if p.cap_drop && self.drop_prob >= 0.1 && dp > 0.02 {
            dp = 0.02;
        }
        self.drop_prob += dp;
        if self.qdelay == 0.0 && self.qdelay_old == 0.0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.qdelay_old = self.qdelay;
        self.burst_allowance = self.burst_allowance.saturating_sub(p.t_update.as_nanos());
    }

    fn run_until(&mut self, p: &PieParams, now: SimTime, bytes: u64) {
        let mut s = self.sampler;
        s.run_until(now, |_| self.update(p, bytes));
        self.sampler = s;
    }
}

/// Departure-rate measurement (Appendix B).
#[derive(Clone, Copy, Debug, Default)]
struct DqMeasure {
    in_measurement: bool,
    start: SimTime,
    count: u64,
}

pub struct Pie {
    p: PieParams,
    q: TimedFifo,
    law: Law,
    dq: DqMeasure,
    accu_prob: f64,
    stats: QueueStats,
    rng: RngStream,
}

impl Pie {
    pub fn new(p: PieParams, rng: RngStream) -> Self {
        Pie {
            law: Law {
                sampler: Sampler::every(p.t_update),
                drop_prob: 0.0,
                qdelay: 0.0,
                qdelay_old: 0.0,
                burst_allowance: 0,
                avg_dq_time: 0.0,
            },
            p,
            q: TimedFifo::default(),
            dq: DqMeasure::default(),
            accu_prob: 0.0,
            stats: QueueStats::default(),
            rng,
        }
    }

    /// The drop probability after the updates due by the last enqueue or dequeue.
    pub fn drop_prob(&self) -> f64 {
        self.law.drop_prob
    }

    /// `drop_early()` of Appendix B (the safeguard, derandomisation, the random test).
    fn drop_early(&mut self) -> bool {
        let half = self.p.target.as_secs_f64() / 2.0;
        if (self.law.qdelay_old < half && self.law.drop_prob < 0.2)
            || self.q.bytes() <= 2 * self.p.mean_pktsize as u64
        {
            return false;
        }
        if self.p.derandomize {
            if self.law.drop_prob == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.law.drop_prob;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        self.rng.uniform() < self.law.drop_prob
    }
}

impl Queue for Pie {
    fn kind(&self) -> &'static str {
        "pie"
    }

    fn enqueue(&mut self, mut p: Packet, now: SimTime) -> Result<(), (Packet, DropReason)> {
        self.law.run_until(&self.p, now, self.q.bytes());
        let full = match self.p.limit {
            Limit::Packets(n) => self.q.len() as u64 >= n,
            Limit::Bytes(b) => self.q.bytes() + p.size as u64 > b,
        };
        if full {
            self.accu_prob = 0.0;
            self.stats.record_drop(&p, DropReason::TailDrop);
            return Err((p, DropReason::TailDrop));
        }
        let half = self.p.target.as_secs_f64() / 2.0;
        if self.law.drop_prob == 0.0 && self.law.qdelay < half && self.law.qdelay_old < half {
            self.law.burst_allowance = self.p.max_burst.as_nanos();
        }
        if self.law.burst_allowance == 0 && self.drop_early() {
            self.accu_prob = 0.0;
            if self.p.ecn && self.law.drop_prob < self.p.mark_ecnth && p.flags.markable() {
                p.flags.set(Flags::CE);
                self.stats.record_mark(DropReason::AqmEarly);
            } else {
                self.stats.record_drop(&p, DropReason::AqmEarly);
                return Err((p, DropReason::AqmEarly));
            }
        }
        self.q.push(p, now);
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64);
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
        self.law.run_until(&self.p, now, self.q.bytes());
        let (p, stamp) = self.q.pop()?;
        match self.p.estimator {
            DelayEstimator::Timestamp => self.law.qdelay = (now - stamp).as_secs_f64(),
            DelayEstimator::DqRate => {
                let th = self.p.dq_threshold;
                if self.dq.in_measurement {
                    self.dq.count += p.size as u64;
                    if self.dq.count >= th {
                        let dq_time = (now - self.dq.start).as_secs_f64();
                        self.law.avg_dq_time = if self.law.avg_dq_time == 0.0 {
                            dq_time
                        } else {
                            let w = th as f64 / 65536.0;
                            dq_time * w + self.law.avg_dq_time * (1.0 - w)
                        };
                        self.dq.in_measurement = false;
                    }
                }
                if self.q.bytes() >= th && !self.dq.in_measurement {
                    self.dq = DqMeasure {
                        in_measurement: true,
                        start: now,
                        count: 0,
                    };
                }
            }
        }
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
        let mut law = self.law;
        law.run_until(&self.p, now, self.q.bytes());
        Some(AqmState {
            avg_pkts: f64::NAN,
            prob: law.drop_prob,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::codel::tests::pkt;

    fn pie(p: PieParams) -> Pie {
        Pie::new(p, RngStream::new(1, "test/pie"))
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn the_update_follows_section_4_2_with_hand_computed_values() {
        let p = PieParams::rfc8033(Limit::Packets(1000));
        let mut law = pie(p).law;
        // drop_prob 0 (< 1e-6, scale 1/2048), qdelay 40 ms, qdelay_old 0:
        // p = 0.125·(0.040 − 0.015) + 1.25·(0.040 − 0) = 0.003125 + 0.05 = 0.053125;
        // /2048 = 2.5940e-5.
        law.qdelay = 0.040;
        law.update(&p, 0);
        assert!(
            (law.drop_prob - 0.053125 / 2048.0).abs() < 1e-15,
            "{}",
            law.drop_prob
        );
        assert_eq!(law.qdelay_old, 0.040);
        // drop_prob 2.594e-5 (< 1e-4, scale 1/128), qdelay 40 ms again: p = 0.003125/128.
        let before = law.drop_prob;
        law.update(&p, 0);
        assert!((law.drop_prob - (before + 0.003125 / 128.0)).abs() < 1e-15);
        // drop_prob 0.05 (< 0.1, scale 1/2), qdelay 10 ms, qdelay_old 20 ms:
        // p = 0.125·(−0.005) + 1.25·(−0.010) = −0.013125; /2 → drop_prob 0.05 − 0.0065625.
        law.drop_prob = 0.05;
        law.qdelay = 0.010;
        law.qdelay_old = 0.020;
        law.update(&p, 0);
        assert!(
            (law.drop_prob - 0.0434375).abs() < 1e-12,
            "{}",
            law.drop_prob
        );
        // drop_prob 0.2 (no scaling), qdelay 100 ms from 15 ms: p = 0.010625 + 0.10625 =
        // 0.116875, capped at 0.02 (§5.5) → 0.22; without the cap → 0.316875.
        law.drop_prob = 0.2;
        law.qdelay = 0.100;
        law.qdelay_old = 0.015;
        let mut no_cap = law;
        law.update(&p, 0);
        assert!((law.drop_prob - 0.22).abs() < 1e-12);
        no_cap.update(
            &PieParams {
                cap_drop: false,
                ..p
            },
            0,
        );
        assert!((no_cap.drop_prob - 0.316875).abs() < 1e-12);
        // Idle (qdelay and qdelay_old 0): p = 0.125·(−0.015)/2 = −0.0009375 then × 0.98:
        // (0.05 − 0.0009375)·0.98 = 0.04808125.
        law.drop_prob = 0.05;
        law.qdelay = 0.0;
        law.qdelay_old = 0.0;
        law.update(&p, 0);
        assert!((law.drop_prob - 0.04808125).abs() < 1e-12);
        // Bounded below by 0.
        law.drop_prob = 0.0;
        law.update(&p, 0);
        assert_eq!(law.drop_prob, 0.0);
        // The burst allowance loses T_UPDATE per update, down to 0.
        law.burst_allowance = 20_000_000;
        law.update(&p, 0);
        assert_eq!(law.burst_allowance, 5_000_000);
        law.update(&p, 0);
        assert_eq!(law.burst_allowance, 0);
    }

    #[test]
    fn updates_run_lazily_every_t_update_with_the_delay_that_held() {
        // 30 packets arrive at 0; one leaves every 2 ms, so the packet leaving at t waited t.
        // Updates at 15, 30, 45 ms see the sojourn of the last departure before them: 14, 28,
        // 44 ms (timestamp estimator).
        let p = PieParams::rfc8033(Limit::Packets(1000));
        let mut q = pie(p);
        for _ in 0..30 {
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        let mut expect = pie(p).law;
        for t in (0..=46).step_by(2) {
            q.dequeue(ms(t));
        }
        for d in [14, 28, 44] {
            expect.qdelay = ms(d).as_secs_f64();
            expect.update(&p, 0);
        }
        assert_eq!(q.drop_prob(), expect.drop_prob);
        assert!(q.drop_prob() > 0.0);
        assert!((q.law.qdelay_old - 0.044).abs() < 1e-15);
        // aqm_state at 60 ms includes the update at 60 ms (qdelay still 46 ms) without changing
        // the queue's own state.
        let mut at60 = expect;
        at60.qdelay = ms(46).as_secs_f64();
        at60.update(&p, 0);
        let st = q.aqm_state(ms(60)).unwrap();
        assert_eq!(st.prob, at60.drop_prob);
        assert_ne!(st.prob, expect.drop_prob);
        assert_eq!(q.drop_prob(), expect.drop_prob);
    }

    #[test]
    fn dq_rate_estimate_measures_departures_of_dq_threshold_bytes() {
        // 1000-byte packets leave every 1 ms (1 MB/s). DQ_THRESHOLD 16384 bytes: a cycle starts at
        // the first dequeue leaving >= 16384 bytes and ends after 17 packets (17000 >= 16384),
        // 17 ms later: avg_dq_time = 0.017 s per 16384 bytes; qdelay = bytes·0.017/16384.
        let p = PieParams {
            estimator: DelayEstimator::DqRate,
            ..PieParams::rfc8033(Limit::Packets(1000))
        };
        let mut q = pie(p);
        for _ in 0..100 {
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        // Dequeue at 0 starts the cycle (99000 bytes left); dequeues at 1..=17 ms count 17000.
        for t in 0..=17 {
            q.dequeue(SimTime::from_millis(t));
        }
        assert!((q.law.avg_dq_time - 0.017).abs() < 1e-12);
        // A second cycle (started at 17 ms, 16 packets … 17 at 34 ms) averages with w = 0.25.
        for t in 18..=34 {
            q.dequeue(SimTime::from_millis(t));
        }
        assert!((q.law.avg_dq_time - 0.017).abs() < 1e-12);
        // The update at 45 ms (after the dequeue at 34 ms, 65 packets = 65000 bytes queued):
        // qdelay = 65000 · 0.017 / 16384.
        q.enqueue(pkt(0, 1000, false), ms(45)).ok();
        assert!((q.law.qdelay - 65000.0 * 0.017 / 16384.0).abs() < 1e-12);
    }

    #[test]
    fn safeguard_burst_allowance_and_ecn_threshold() {
        let p = PieParams {
            ecn: true,
            ..PieParams::rfc8033(Limit::Packets(10_000))
        };
        let mut q = pie(p);
        // Burst allowance: the first arrival (drop_prob 0, delays 0) sets it to 150 ms; with
        // drop_prob forced to 1 nothing is dropped until it is used up.
        q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        assert_eq!(q.law.burst_allowance, 150_000_000);
        q.law.drop_prob = 1.0;
        q.law.qdelay_old = 1.0;
        q.law.qdelay = 1.0;
        for i in 0..10 {
            q.enqueue(pkt(0, 1000, false), SimTime::from_micros(i))
                .unwrap();
        }
        q.law.burst_allowance = 0;
        // Safeguard: while at most 2 mean packets (3000 bytes) are queued nothing is dropped;
        // the fifth 1000-byte arrival finds 4000 bytes and, with drop_prob 1, is dropped.
        let mut small = pie(p);
        small.law.drop_prob = 1.0;
        small.law.qdelay_old = 1.0;
        small.law.qdelay = 1.0;
        for _ in 0..4 {
            small.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        assert!(small.enqueue(pkt(0, 1000, false), SimTime::ZERO).is_err());
        // qdelay_old below QDELAY_REF/2 with drop_prob < 20 %: nothing is dropped either.
        small.law.drop_prob = 0.19;
        small.law.qdelay_old = 0.007;
        for _ in 0..100 {
            small.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        // drop_prob 1 ≥ mark_ecnth: ECT packets are dropped too.
        assert_eq!(
            q.enqueue(pkt(0, 1000, true), SimTime::ZERO).unwrap_err().1,
            DropReason::AqmEarly
        );
        // drop_prob 0.05 < 0.1 with a high delay: ECT packets are marked, non-ECT dropped.
        q.law.drop_prob = 0.05;
        let (mut marks, mut drops) = (0, 0);
        for i in 0..2000 {
            let ect = i % 2 == 0;
            match q.enqueue(pkt(0, 1000, ect), SimTime::ZERO) {
                Ok(()) => {}
                Err((_, why)) => {
                    assert!(!ect);
                    assert_eq!(why, DropReason::AqmEarly);
                    drops += 1;
                }
            }
            marks = q.stats().marks[DropReason::AqmEarly.index()];
        }
        // About 5 % of each half.
        assert!((20..=80).contains(&marks), "{marks}");
        assert!((20..=80).contains(&drops), "{drops}");
    }

    #[test]
    fn derandomisation_spaces_drops_by_accumulated_probability() {
        // drop_prob 0.5: accu 0.5 (< 0.85, pass), 1.0 (random), ... and 8.5 would force a drop;
        // with drop_prob 0.1 the first 8 arrivals always pass (accu 0.1..0.8).
        let p = PieParams {
            derandomize: true,
            ..PieParams::rfc8033(Limit::Packets(10_000))
        };
        let mut q = pie(p);
        q.law.burst_allowance = 0;
        for _ in 0..5 {
            q.q.push(pkt(0, 1000, false), SimTime::ZERO);
        }
        q.law.drop_prob = 0.1;
        q.law.qdelay_old = 1.0;
        q.law.qdelay = 1.0;
        let outcomes: Vec<bool> = (0..8).map(|_| q.drop_early()).collect();
        assert_eq!(outcomes, vec![false; 8]);
        assert!((q.accu_prob - 0.8).abs() < 1e-12);
        // Forced once accu reaches 8.5 (drop_prob 1 from 7.9: 8.9 ≥ 8.5).
        q.accu_prob = 7.9;
        q.law.drop_prob = 1.0;
        assert!(q.drop_early());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = PieParams::rfc8033(Limit::Packets(10));
        assert!(ok.validate().is_ok());
        for (bad, field) in [
            (
                PieParams {
                    target: SimTime::ZERO,
                    ..ok
                },
                "target",
            ),
            (
                PieParams {
                    t_update: SimTime::ZERO,
                    ..ok
                },
                "t_update",
            ),
            (PieParams { alpha: -1.0, ..ok }, "alpha"),
            (
                PieParams {
                    beta: f64::NAN,
                    ..ok
                },
                "beta",
            ),
            (
                PieParams {
                    mark_ecnth: 1.5,
                    ..ok
                },
                "mark_ecnth",
            ),
        ] {
            assert_eq!(bad.validate().unwrap_err().0, field);
        }
    }
}
