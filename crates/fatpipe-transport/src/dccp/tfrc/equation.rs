//! The TCP throughput equation TFRC uses, and its inverse.
//!
//! Spec: RFC 5348 §3.1 (unchanged from RFC 3448 §3.1), from Padhye, Firoiu, Towsley, Kurose,
//! "Modeling TCP Throughput", SIGCOMM 1998:
//!
//! ```text
//!                                 s
//!   X = ----------------------------------------------------------------
//!       R·sqrt(2·b·p/3) + t_RTO·(3·sqrt(3·b·p/8))·p·(1 + 32·p²)
//! ```
//!
//! X is the transmit rate in bytes/s, s the segment size in bytes, R the round-trip time in
//! seconds, p the loss event rate (0 < p ≤ 1), b the number of packets acknowledged by one TCP
//! acknowledgement and t_RTO the TCP retransmission timeout in seconds.
//!
//! Constants (both are parameters of [`TcpEquation`], defaulting to the RFC's values):
//! - b = 1 ([`B`]): RFC 5348 §3.1 "b ... SHOULD be set to 1" (RFC 3448 recommended 1 too; a
//!   delayed-ACK TCP would be b = 2, but TFRC is meant to match a TCP that does not delay).
//! - t_RTO = 4·R ([`T_RTO_RTTS`]): RFC 5348 §3.1 "Implementations SHOULD set t_RTO = 4*R". The
//!   seed study's Equation 1 (seed 001 §2.4) is this same equation with b = 1, t_RTO = 4·RTT, and so
//!   is ns-2.35 `DCCPTFRCAgent::tfrc_calcX` (dccp/dccp_tfrc.cc).
//!
//! The inverse — the p at which the equation gives a target rate — is what a TFRC receiver needs to
//! synthesise its first loss interval from the receive rate (RFC 5348 §6.3.1: "the receiver ...
//! calculates the loss interval that would be required to produce the data rate X_recv"). X(p) is
//! strictly decreasing in p (both terms of the denominator grow with p), so a bisection finds the
//! unique root. ns-2.35 (`tfrc_calcP`) bisects linearly in p and stops within p_tol_ = 5 % of the
//! target rate; this one bisects in ln p to full double precision, so its answer is the exact root
//! and the 5 % slack, where it matters, is the caller's choice.

/// b, packets acknowledged per TCP ACK (RFC 5348 §3.1).
pub const B: f64 = 1.0;
/// t_RTO in units of R (RFC 5348 §3.1: t_RTO = 4·R).
pub const T_RTO_RTTS: f64 = 4.0;

/// The throughput equation with its two free constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpEquation {
    /// b, packets acknowledged by one acknowledgement.
    pub b: f64,
    /// t_RTO as a multiple of R.
    pub t_rto_rtts: f64,
}

impl Default for TcpEquation {
    fn default() -> Self {
        Self {
            b: B,
            t_rto_rtts: T_RTO_RTTS,
        }
    }
}

impl TcpEquation {
    /// X in bytes/s for segment size `s` (bytes), round-trip time `r` (s) and loss event rate `p`.
    /// p ≤ 0 means "no loss" and gives +∞ (the caller's other limits then bind).
    pub fn rate(&self, s: f64, r: f64, p: f64) -> f64 {
        throughput(s, r, p, self.b, self.t_rto_rtts * r)
    }

    /// The loss event rate p in (0, 1] at which [`rate`](Self::rate) equals `x` (bytes/s).
    ///
    /// Returns 1 when even p = 1 allows at least `x` (x at or below X(1), including x ≤ 0): a loss
    /// event rate cannot exceed one per packet. Otherwise the root, to about 1e-12 relative.
    pub fn loss_event_rate_for(&self, s: f64, r: f64, x: f64) -> f64 {
        if x.is_nan() || x <= self.rate(s, r, 1.0) {
            return 1.0;
        }
        if x.is_infinite() {
            return 0.0;
        }
        // Bracket: hi = 1 gives X(hi) < x; walk lo down until X(lo) > x. For small p the first
        // term dominates, X ≈ s/(R·sqrt(2bp/3)), so the root is near 1.5·(s/(R·x))²/b and a few
        // steps of ×1e-4 always reach below it (down to the smallest normal double).
        let mut hi = 1.0_f64;
        let mut lo = 1e-4_f64;
        while self.rate(s, r, lo) <= x {
            hi = lo;
            lo *= 1e-4;
            if lo < f64::MIN_POSITIVE {
                return f64::MIN_POSITIVE;
            }
        }
        // Geometric bisection: p spans many decades, so halve ln p's interval, not p's.
        for _ in 0..200 {
            if hi / lo - 1.0 < 1e-13 {
                break;
            }
            let mid = (lo * hi).sqrt();
            if self.rate(s, r, mid) > x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo * hi).sqrt()
    }
}

/// The equation with all of its arguments: X (bytes/s) for segment size `s` (bytes), RTT `r` (s),
/// loss event rate `p`, packets per ACK `b` and retransmission timeout `t_rto` (s). p ≤ 0 → +∞.
pub fn throughput(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let denom = r * (2.0 * b * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// RFC 5348 §6.3.1: the synthetic first loss interval (in packets) — 1/p for the p at which the
/// equation gives the receive rate `x_recv` (bytes/s) with segment size `s` and RTT `r` (s).
///
/// ns-2.35 (`tfrc_recv_calcFirstLI`) uses ceil(1/p) of its 5 %-tolerance p; callers mirroring it
/// can round up the result.
pub fn first_loss_interval(eq: &TcpEquation, s: f64, r: f64, x_recv: f64) -> f64 {
    1.0 / eq.loss_event_rate_for(s, r, x_recv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn hand_computed_values() {
        let eq = TcpEquation::default();
        // s = 1000 B, R = 0.1 s, p = 0.01, b = 1, t_RTO = 0.4 s:
        //   R·sqrt(2p/3)           = 0.1 · sqrt(0.0066667) = 0.1 · 0.0816497 = 0.00816497
        //   3·sqrt(3p/8)           = 3 · sqrt(0.00375)     = 3 · 0.0612372 = 0.1837117
        //   ·p·(1 + 32p²)          = 0.1837117 · 0.01 · 1.0032           = 0.00184300
        //   ·t_RTO                 = 0.00184300 · 0.4                    = 0.00073720
        //   denominator            = 0.00816497 + 0.00073720             = 0.00890217
        //   X = 1000 / 0.00890217  = 112332 B/s
        assert!(close(eq.rate(1000.0, 0.1, 0.01), 112_332.2, 1e-5));
        // s = 1460 B, R = 0.2 s, p = 0.1, t_RTO = 0.8 s:
        //   R·sqrt(2p/3)  = 0.2 · sqrt(0.0666667) = 0.2 · 0.2581989 = 0.0516398
        //   3·sqrt(3p/8)  = 3 · sqrt(0.0375) = 3 · 0.1936492 = 0.5809475
        //   ·p·(1+32p²)   = 0.5809475 · 0.1 · 1.32 = 0.0766851;  ·0.8 = 0.0613481
        //   X = 1460 / (0.0516398 + 0.0613481) = 1460 / 0.1129879 = 12921.7 B/s
        assert!(close(eq.rate(1460.0, 0.2, 0.1), 12_921.7, 1e-5));
        // p = 1, s = 1000, R = 0.1, t_RTO = 0.4:
        //   0.1·sqrt(2/3) = 0.0816497; 0.4 · 3·sqrt(3/8) · 1 · 33 = 0.4 · 1.8371173 · 33 = 24.2499
        //   X = 1000 / 24.3315 = 41.099 B/s
        assert!(close(eq.rate(1000.0, 0.1, 1.0), 41.0988, 1e-5));
        // No loss: unbounded.
        assert!(eq.rate(1000.0, 0.1, 0.0).is_infinite());
    }

    #[test]
    fn parameters_are_used() {
        // b = 2 and t_RTO = 1 s (absolute) at s = 1000, R = 0.1, p = 0.01:
        //   0.1·sqrt(4·0.01/3) = 0.1 · 0.1154701 = 0.0115470
        //   1 · 3·sqrt(6·0.01/8) · 0.01 · 1.0032 = 3 · 0.0866025 · 0.010032 = 0.0026064
        //   X = 1000 / 0.0141534 = 70654 B/s
        assert!(close(
            throughput(1000.0, 0.1, 0.01, 2.0, 1.0),
            70_654.0,
            1e-4
        ));
        let eq = TcpEquation {
            b: 2.0,
            t_rto_rtts: 10.0,
        };
        assert!(close(
            eq.rate(1000.0, 0.1, 0.01),
            throughput(1000.0, 0.1, 0.01, 2.0, 1.0),
            1e-12
        ));
    }

    #[test]
    fn monotone_in_p_and_r() {
        let eq = TcpEquation::default();
        let mut prev = f64::INFINITY;
        let mut p = 1e-7;
        while p <= 1.0 {
            let x = eq.rate(500.0, 0.05, p);
            assert!(x < prev, "X not decreasing at p = {p}");
            prev = x;
            p *= 1.1;
        }
        assert!(eq.rate(500.0, 0.2, 0.01) < eq.rate(500.0, 0.1, 0.01));
        // Linear in s.
        assert!(close(
            eq.rate(1000.0, 0.1, 0.01),
            2.0 * eq.rate(500.0, 0.1, 0.01),
            1e-12
        ));
    }

    #[test]
    fn inverse_round_trip() {
        let eq = TcpEquation::default();
        for &p in &[1e-8, 1e-6, 1e-4, 0.003, 0.01, 0.05, 0.2, 0.5, 0.99] {
            for &(s, r) in &[(160.0, 0.104), (500.0, 0.404), (1460.0, 0.02)] {
                let x = eq.rate(s, r, p);
                let back = eq.loss_event_rate_for(s, r, x);
                assert!(close(back, p, 1e-9), "p {p} s {s} r {r}: got {back}");
            }
        }
        // Rates at or below X(1) saturate at p = 1.
        assert_eq!(eq.loss_event_rate_for(1000.0, 0.1, 41.0), 1.0);
        assert_eq!(eq.loss_event_rate_for(1000.0, 0.1, 0.0), 1.0);
    }

    #[test]
    fn first_interval_from_receive_rate() {
        // A 160-byte, 100 ms flow received at 10 packets/RTT (16000 B/s): the first interval is the
        // 1/p at which the equation allows exactly that, and feeding it back reproduces the rate.
        let eq = TcpEquation::default();
        let i1 = first_loss_interval(&eq, 160.0, 0.1, 16_000.0);
        assert!(close(eq.rate(160.0, 0.1, 1.0 / i1), 16_000.0, 1e-9));
        // The first term alone gives p ≈ 1.5·(s/(R·X))² = 1.5·(0.1)² = 0.015, i.e. I ≈ 67; the
        // timeout term makes the true p smaller (a longer interval).
        assert!(i1 > 66.6 && i1 < 120.0, "{i1}");
    }
}
