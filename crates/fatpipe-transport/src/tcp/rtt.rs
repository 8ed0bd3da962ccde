//! Retransmission timer estimator: Linux's (default) or RFC 6298's ([`RtoEstimator`]).
//!
//! Both keep SRTT with gain 1/8 and a mean deviation with gain 1/4, back off by doubling on each
//! expiry (RFC 6298 §5.5) up to `max_rto`, and collapse the backoff on a new sample (§5.7, as
//! Linux does). They differ in where the minimum applies, which decides how often a recovery that
//! lasts longer than one RTT is cut short by a timeout:
//!
//! - **RFC 6298** (§2.2–2.4): RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)). With a standing queue
//!   and a sample on every ACK, RTTVAR falls to almost nothing and the RTO sits barely above SRTT
//!   (for any RTT above min_rto).
//! - **Linux** (net/ipv4/tcp_input.c `tcp_rtt_estimator`, tcp_timer/`tcp_set_rto`, unchanged in
//!   substance from 2.6.x — the kernels ns-2.35's TCP-Linux was taken from — to 6.x):
//!   RTO = SRTT + rttvar, where rttvar is the largest 4·mdev seen during the last round trip but
//!   never below `min_rto` (`tcp_rto_min`, 200 ms): the minimum is added to SRTT, not compared with
//!   the sum. Per sample: mdev (kept as 4·mdev, `mdev_us`) moves by a quarter of the error, but by
//!   only 1/32 when the RTT is falling (`m >>= 3` after the 1/4 step; Linux's Eifel-like damping);
//!   a new maximum of 4·mdev raises rttvar at once; once per round trip (snd_una passes the snd_nxt
//!   recorded at the last reset, `rtt_seq`) rttvar decays a quarter of the way down to that round's
//!   maximum and the maximum restarts from `min_rto`. The first sample sets SRTT = R and
//!   4·mdev = 2R, so the first RTO is 3R (Linux comment "make sure rto = 3*rtt"), floored as above.
//!
//! Units: integer nanoseconds (Linux uses microseconds with SRTT scaled by 8; the arithmetic here is
//! the same with a finer clock, so no rounding step of Linux's is reproduced or needed).
//!
//! Cost: a sample is taken on almost every ACK, so the conversions between the float SRTT and
//! integer nanoseconds are written out ([`round_to_i64`], [`to_u64`], [`to_f64`]): they give
//! exactly what `f64::round` and the `as` casts give, without the library call for `round` and
//! the multi-instruction unsigned conversions of x86-64 (reference dumbbell, callgrind: the
//! RTT/RTO work was 88 instructions per delivered packet). SRTT in whole nanoseconds is kept
//! beside the float (`srtt_whole`), so each sample converts it once for both the RTO and
//! `srtt()`.

use fatpipe_core::SimTime;

/// Which RTO estimator a flow uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoEstimator {
    /// Linux `tcp_rtt_estimator` + `tcp_set_rto` (also ns-2.35 TCP-Linux). Default.
    Linux,
    /// RFC 6298 with min_rto applied to the whole RTO.
    Rfc6298,
    /// ns-2.35's `LinuxTcpAgent::rtt_update` (tcp-linux.cc): RFC 6298's SRTT, RTTVAR and RTO
    /// (min_rto on the whole RTO, as `rtt_timeout`), except that a sample below SRTT by more
    /// than RTTVAR raises RTTVAR by only 1/32 of the excess (Linux's damping of a falling RTT,
    /// `delta >>= 3` after the 1/4 gain), where `TcpAgent::rtt_update` and RFC 6298 take 1/4.
    Ns2Linux,
}

impl RtoEstimator {
    pub const NAMES: &'static str = "\"linux\", \"rfc6298\", \"ns2-linux\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "linux" => Some(Self::Linux),
            "rfc6298" => Some(Self::Rfc6298),
            "ns2-linux" => Some(Self::Ns2Linux),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::Rfc6298 => "rfc6298",
            Self::Ns2Linux => "ns2-linux",
        }
    }
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    kind: RtoEstimator,
    /// SRTT, ns.
    srtt_ns: f64,
    /// `srtt_ns` truncated to whole ns (as `srtt_ns as u64`), updated with it.
    srtt_whole: SimTime,
    /// RFC 6298: RTTVAR, ns.
    rttvar_ns: f64,
    /// Linux: 4·mdev (`mdev_us`), its maximum over the current round trip (`mdev_max_us`), the
    /// variance term of the RTO (`rttvar_us`) and the round's end marker (`rtt_seq`), ns/segments.
    mdev4_ns: i64,
    mdev4_max_ns: i64,
    rttvar4_ns: i64,
    rtt_seq: u64,
    has_sample: bool,
    min_rto: SimTime,
    max_rto: SimTime,
    initial_rto: SimTime,
    backoff: u32,
    /// The current RTO, recomputed when a sample or a backoff changes it (it is read on every
    /// ACK).
    rto: SimTime,
    pub min_rtt: Option<SimTime>,
    pub max_rtt: Option<SimTime>,
    pub samples: u64,
    pub sum_rtt_ns: f64,
}

impl RttEstimator {
    pub fn new(
        kind: RtoEstimator,
        min_rto: SimTime,
        max_rto: SimTime,
        initial_rto: SimTime,
    ) -> Self {
        let mut e = RttEstimator {
            kind,
            srtt_ns: 0.0,
            srtt_whole: SimTime::ZERO,
            rttvar_ns: 0.0,
            mdev4_ns: 0,
            mdev4_max_ns: 0,
            rttvar4_ns: 0,
            rtt_seq: 0,
            has_sample: false,
            min_rto,
            max_rto,
            initial_rto,
            backoff: 0,
            rto: initial_rto,
            min_rtt: None,
            max_rtt: None,
            samples: 0,
            sum_rtt_ns: 0.0,
        };
        e.rto = e.compute_rto();
        e
    }

    /// Feed one RTT measurement taken when the cumulative ACK reached `snd_una` with `snd_nxt`
    /// the next new segment (both in segments; Linux needs them to find round-trip boundaries).
    /// A new sample also clears the backoff (RFC 6298 §5.7 allows it; Linux does it).
    // Always inlined into TCP's ACK path (one call per ACK); other callers (DCCP) made the
    // compiler keep an out-of-line copy there otherwise, +1.8 % instructions per packet.
    #[inline(always)]
    pub fn sample(&mut self, rtt: SimTime, snd_una: u64, snd_nxt: u64) {
        match self.kind {
            RtoEstimator::Rfc6298 => self.sample_rfc6298(rtt, false),
            RtoEstimator::Ns2Linux => self.sample_rfc6298(rtt, true),
            RtoEstimator::Linux => self.sample_linux(rtt, snd_una, snd_nxt),
        }
        self.srtt_whole = SimTime(to_u64(self.srtt_ns));
        self.backoff = 0;
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.max_rtt = Some(self.max_rtt.map_or(rtt, |m| m.max(rtt)));
        self.samples += 1;
        self.sum_rtt_ns += to_f64(rtt.as_nanos());
        self.has_sample = true;
        // `compute_rto` with the backoff just cleared (a factor of 1).
        self.rto = self.base_rto().min(self.max_rto);
    }

    /// RFC 6298 §2.2–2.3 (alpha = 1/8, beta = 1/4); `damped`: ns-2.35 TCP-Linux's falling-RTT
    /// rule ([`RtoEstimator::Ns2Linux`]).
    #[inline]
    fn sample_rfc6298(&mut self, rtt: SimTime, damped: bool) {
        let r = to_f64(rtt.as_nanos());
        if !self.has_sample {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
        } else {
            let excess = (self.srtt_ns - r) - self.rttvar_ns;
            if damped && r < self.srtt_ns && excess > 0.0 {
                // tcp-linux.cc: delta = |delta| − rttvar; if positive, delta >>= 3; then
                // 4·rttvar += delta.
                self.rttvar_ns += excess / 32.0;
            } else {
                self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
            }
            self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
        }
    }

    /// Linux `tcp_rtt_estimator` (see the module comment).
    #[inline]
    fn sample_linux(&mut self, rtt: SimTime, snd_una: u64, snd_nxt: u64) {
        let m = (rtt.as_nanos() as i64).max(1);
        let floor = self.min_rto.as_nanos() as i64;
        if !self.has_sample {
            self.srtt_ns = m as f64;
            self.mdev4_ns = 2 * m;
            self.rttvar4_ns = self.mdev4_ns.max(floor);
            self.mdev4_max_ns = self.rttvar4_ns;
            self.rtt_seq = snd_nxt;
            return;
        }
        let err = m as f64 - self.srtt_ns;
        self.srtt_ns += err / 8.0;
        // Error in whole ns for the deviation, as Linux keeps it in integer units.
        let err = round_to_i64(err);
        let d = if err < 0 {
            let step = -err - (self.mdev4_ns >> 2);
            // Falling RTT: a gain of 1/32 instead of 1/4 for an increase of mdev.
            if step > 0 {
                step >> 3
            } else {
                step
            }
        } else {
            err - (self.mdev4_ns >> 2)
        };
        self.mdev4_ns += d;
        if self.mdev4_ns > self.mdev4_max_ns {
            self.mdev4_max_ns = self.mdev4_ns;
            if self.mdev4_max_ns > self.rttvar4_ns {
                self.rttvar4_ns = self.mdev4_max_ns;
            }
        }
        if snd_una > self.rtt_seq {
            if self.mdev4_max_ns < self.rttvar4_ns {
                self.rttvar4_ns -= (self.rttvar4_ns - self.mdev4_max_ns) >> 2;
            }
            self.rtt_seq = snd_nxt;
            self.mdev4_max_ns = floor;
        }
    }

    #[inline]
    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then_some(self.srtt_whole)
    }

    pub fn kind(&self) -> RtoEstimator {
        self.kind
    }

    /// The current RTO including exponential backoff.
    #[inline]
    pub fn rto(&self) -> SimTime {
        self.rto
    }

    /// The RTO before backoff and the `max_rto` bound.
    #[inline]
    fn base_rto(&self) -> SimTime {
        if !self.has_sample {
            self.initial_rto
        } else {
            match self.kind {
                RtoEstimator::Rfc6298 | RtoEstimator::Ns2Linux => {
                    let v = self.srtt_ns + (4.0 * self.rttvar_ns).max(1.0);
                    SimTime(to_u64(v)).max(self.min_rto)
                }
                RtoEstimator::Linux => SimTime(self.srtt_whole.as_nanos() + self.rttvar4_ns as u64),
            }
        }
    }

    fn compute_rto(&self) -> SimTime {
        let backed = self
            .base_rto()
            .as_nanos()
            .saturating_mul(1u64 << self.backoff.min(30));
        SimTime(backed).min(self.max_rto)
    }

    /// Forget the backoff without a new sample (ns-2 `ts_resetRTO_`: any timestamped ACK).
    pub fn clear_backoff(&mut self) {
        if self.backoff != 0 {
            self.backoff = 0;
            self.rto = self.compute_rto();
        }
    }

    /// Double the RTO after an expiry (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(30);
        self.rto = self.compute_rto();
    }
}

/// 2^63, the first float that does not fit an i64.
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// `x.round() as i64` (halves away from zero, saturating, NaN -> 0) without the library call.
/// For |x| < 2^63, `x - trunc(x)` is exact, so comparing it with ±0.5 decides as `round` does;
/// outside, the truncation has saturated and the saturating step keeps it there.
#[inline(always)]
fn round_to_i64(x: f64) -> i64 {
    let t = x as i64;
    let frac = x - t as f64;
    if frac >= 0.5 {
        t.saturating_add(1)
    } else if frac <= -0.5 {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// `x as u64` (saturating, negative and NaN -> 0) by the one-instruction signed conversion
/// where it gives the same.
#[inline(always)]
fn to_u64(x: f64) -> u64 {
    if x < TWO_POW_63 {
        (x as i64).max(0) as u64
    } else {
        x as u64
    }
}

/// `n as f64` by the one-instruction signed conversion where it gives the same.
#[inline(always)]
fn to_f64(n: u64) -> f64 {
    if n < 1 << 63 {
        n as i64 as f64
    } else {
        n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_equal_the_library_ones() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            -4503599627370495.5,
            4503599627370497.0,
            9007199254740993.0,
            TWO_POW_63,
            -TWO_POW_63,
            TWO_POW_63 * 2.0,
            -TWO_POW_63 * 2.0,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            123_456_789.75,
            -98_765.25,
        ];
        // A deterministic spread of magnitudes and fractions.
        let mut v: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..100_000 {
            v ^= v << 13;
            v ^= v >> 7;
            v ^= v << 17;
            let mant = (v >> 11) as f64 / (1u64 << 53) as f64;
            let exp = (v & 0x7f) as i32 - 20;
            let sign = if v & 0x80 != 0 { -1.0 } else { 1.0 };
            xs.push(sign * mant * 2f64.powi(exp));
        }
        for &x in &xs {
            assert_eq!(round_to_i64(x), x.round() as i64, "round {x:e}");
            assert_eq!(to_u64(x), x as u64, "to_u64 {x:e}");
        }
        for n in [
            0u64,
            1,
            (1 << 53) + 1,
            (1 << 63) - 1,
            1 << 63,
            u64::MAX,
            12_345,
        ] {
            assert_eq!(to_f64(n).to_bits(), (n as f64).to_bits(), "to_f64 {n}");
        }
        for &x in &xs {
            let n = x.abs() as u64;
            assert_eq!(to_f64(n).to_bits(), (n as f64).to_bits(), "to_f64 {n}");
        }
    }

    fn est(kind: RtoEstimator) -> RttEstimator {
        RttEstimator::new(
            kind,
            SimTime::from_millis(200),
            SimTime::from_secs(120),
            SimTime::from_secs(1),
        )
    }

    #[test]
    fn rfc6298_first_sample_and_update() {
        let mut e = est(RtoEstimator::Rfc6298);
        assert_eq!(e.rto(), SimTime::from_secs(1));
        // First sample R = 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        e.sample(SimTime::from_millis(100), 1, 10);
        assert_eq!(e.rto(), SimTime::from_millis(300));
        // Second R = 100 ms: RTTVAR = 0.75*50 + 0.25*0 = 37.5, SRTT = 100, RTO = 250 ms.
        e.sample(SimTime::from_millis(100), 2, 10);
        assert_eq!(e.rto(), SimTime::from_millis(250));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_millis(500));
    }

    #[test]
    fn ns2_linux_damps_a_falling_rtt_and_is_rfc6298_otherwise() {
        // R = 100 ms then 20 ms: SRTT 100, RTTVAR 50; |delta| = 80 ms exceeds RTTVAR by 30 ms.
        // RFC 6298: RTTVAR = 0.75·50 + 0.25·80 = 57.5 ms; ns-2's TCP-Linux: 50 + 30/32 =
        // 50.9375 ms. SRTT = 90 ms in both.
        let mut r = est(RtoEstimator::Rfc6298);
        let mut n = est(RtoEstimator::Ns2Linux);
        for e in [&mut r, &mut n] {
            e.sample(SimTime::from_millis(100), 1, 10);
            e.sample(SimTime::from_millis(20), 2, 10);
        }
        assert_eq!(r.rto(), SimTime::from_millis(90 + 230));
        assert_eq!(n.rto(), SimTime::from_micros(90_000 + 203_750));
        // A rising RTT and a fall within RTTVAR are RFC 6298's in both.
        for e in [&mut r, &mut n] {
            e.sample(SimTime::from_millis(200), 3, 10);
        }
        let (rv, nv) = (r.rttvar_ns, n.rttvar_ns);
        assert!((rv - (0.75 * 57.5e6 + 0.25 * 110e6)).abs() < 1.0, "{rv}");
        assert!((nv - (0.75 * 50.9375e6 + 0.25 * 110e6)).abs() < 1.0, "{nv}");
    }

    #[test]
    fn rfc6298_min_rto_applies_to_the_whole_rto() {
        let mut e = est(RtoEstimator::Rfc6298);
        e.sample(SimTime::from_millis(10), 1, 10);
        assert_eq!(e.rto(), SimTime::from_millis(200));
        // A steady 300 ms RTT: RTTVAR decays towards 0 and the RTO towards SRTT itself.
        for i in 0..200 {
            e.sample(SimTime::from_millis(300), 2 + i, 300);
        }
        assert!(e.rto() < SimTime::from_millis(301), "{:?}", e.rto());
    }

    #[test]
    fn linux_first_sample_gives_three_rtt_floored_by_min_rto_added_to_srtt() {
        // R = 100 ms: 4·mdev = 200 ms, rttvar = max(200, 200) → RTO = 300 ms ("3*rtt").
        let mut e = est(RtoEstimator::Linux);
        e.sample(SimTime::from_millis(100), 1, 10);
        assert_eq!(e.rto(), SimTime::from_millis(300));
        // R = 10 ms: 4·mdev = 20 ms < 200 ms → RTO = 10 + 200 ms (floor added, not max'ed).
        let mut e = est(RtoEstimator::Linux);
        e.sample(SimTime::from_millis(10), 1, 10);
        assert_eq!(e.rto(), SimTime::from_millis(210));
    }

    #[test]
    fn linux_steady_rtt_keeps_min_rto_above_srtt() {
        // A steady 300 ms RTT, sampled on every ACK over many rounds: mdev decays, and rttvar
        // decays a quarter of the way per round down to the per-round maximum, which restarts at
        // min_rto. So the RTO converges to SRTT + 200 ms, not to SRTT as RFC 6298's does.
        let mut e = est(RtoEstimator::Linux);
        let (mut una, mut nxt) = (0u64, 100u64);
        for _round in 0..60 {
            for _ in 0..100 {
                una += 1;
                e.sample(SimTime::from_millis(300), una, nxt);
            }
            nxt += 100;
        }
        let rto = e.rto().as_nanos() as f64 / 1e6;
        assert!(
            (rto - 500.0).abs() < 1.0,
            "rto {rto} ms, expected 300 + 200"
        );
    }

    #[test]
    fn linux_variance_rises_at_once_and_decays_per_round() {
        // Hand arithmetic, ns. Sample 1: R = 100 ms → srtt 100, mdev4 200, rttvar4 = max(200,
        // 200) = 200 ms, rtt_seq = 10.
        let mut e = est(RtoEstimator::Linux);
        e.sample(SimTime::from_millis(100), 1, 10);
        // Sample 2 (same round, una 2 <= rtt_seq 10): R = 180 ms. err = +80 ms → srtt = 110 ms;
        // d = 80 − 200/4 = 30 ms → mdev4 = 230 ms > mdev4_max 200 → rttvar4 = 230 ms.
        e.sample(SimTime::from_millis(180), 2, 10);
        assert_eq!(e.rto(), SimTime::from_millis(110 + 230));
        // Sample 3 ends the round (una 11 > 10): R = 110 ms, err = 0 → d = −57.5 ms
        // → mdev4 = 172.5 ms; max stays 230 = rttvar4, so no decay yet; then mdev4_max resets to
        // 200 ms and rtt_seq = 20.
        e.sample(SimTime::from_millis(110), 11, 20);
        assert_eq!(e.rto(), SimTime::from_millis(110 + 230));
        // Sample 4 ends the next round (una 21 > 20): R = 110 ms → d = −43.125 ms → mdev4 =
        // 129.375 ms; max 200 < rttvar4 230 → rttvar4 −= (230 − 200)/4 = 7.5 → 222.5 ms.
        e.sample(SimTime::from_millis(110), 21, 30);
        assert_eq!(e.rto(), SimTime(110_000_000 + 222_500_000));
    }

    #[test]
    fn linux_falling_rtt_changes_mdev_slowly() {
        // After R = 100 ms (mdev4 = 200 ms), R = 20 ms: err = −80 ms; |err| − mdev4/4 = 30 ms > 0,
        // damped to 30/8 = 3.75 ms → mdev4 = 203.75 ms (RFC 6298 would take 0.25·80 = 20 ms).
        let mut e = est(RtoEstimator::Linux);
        e.sample(SimTime::from_millis(100), 1, 10);
        e.sample(SimTime::from_millis(20), 2, 10);
        assert_eq!(e.mdev4_ns, 203_750_000);
        assert_eq!(e.rttvar4_ns, 203_750_000);
        assert_eq!(e.rto(), SimTime(90_000_000 + 203_750_000));
    }

    #[test]
    fn backoff_doubles_and_caps_at_max_rto() {
        for kind in [RtoEstimator::Linux, RtoEstimator::Rfc6298] {
            let mut e = est(kind);
            e.sample(SimTime::from_millis(100), 1, 10);
            let base = e.rto();
            e.back_off();
            assert_eq!(e.rto(), SimTime(base.as_nanos() * 2));
            for _ in 0..20 {
                e.back_off();
            }
            assert_eq!(e.rto(), SimTime::from_secs(120));
            e.sample(SimTime::from_millis(100), 2, 10);
            assert!(
                e.rto() < SimTime::from_secs(1),
                "a sample collapses the backoff"
            );
        }
    }
}
