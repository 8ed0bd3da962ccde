//! TCP-Illinois: loss decides the direction, queueing delay the pace.
//!
//! Spec:    S. Liu, T. Başar, R. Srikant, "TCP-Illinois: a loss and delay-based congestion control
//!          algorithm for high-speed networks", Proc. VALUETOOLS 2006; extended in Performance
//!          Evaluation 65(6-7), 2008. Per ACK W += α/W, per loss W ← W − βW, with α = f₁(d_a)
//!          and β = f₂(d_a) functions of the average queueing delay d_a:
//!          α = α_max if d_a ≤ d₁, else κ₁/(κ₂ + d_a), continuous with α(d_m) = α_min;
//!          β = β_min if d_a ≤ d₂, β_max if d_a ≥ d₃, linear κ₃ + κ₄ d_a in between;
//!          d₁ = 0.01 d_m, d₂ = 0.1 d_m, d₃ = 0.8 d_m, d_m the maximum queueing delay.
//! Mirrors: Linux net/ipv4/tcp_illinois.c (S. Hemminger and S. Liu, 2007, "implemented from
//!          description in paper and ns-2 simulation"; unchanged in substance from 2.6.22, the
//!          ns-2.35 TCP-Linux `illinois` module, to v6.x): `tcp_illinois_acked` (per-ACK RTT sum,
//!          count, base and max RTT), `update_params` once per RTT (when the ACK passes the
//!          snd_nxt recorded at the previous update), `alpha`, `beta`, `tcp_illinois_state`,
//!          `tcp_illinois_cong_avoid`, `tcp_illinois_ssthresh`. Written from reading it, not
//!          copied.
//! Constants (Linux tcp_illinois.c; the paper's values where it gives them):
//!   - α_max = 10, α_min = 0.3, β_min = 1/8, β_max = 1/2 (paper §IV and Linux ALPHA_MAX,
//!     ALPHA_MIN, BETA_MIN, BETA_MAX). Fixed point as in Linux: α in 1/128 (so α_min = 38/128,
//!     Linux's `(3*ALPHA_SCALE)/10`), β in 1/64.
//!   - d₁ = d_m/100, d₂ = d_m/10, d₃ = 8 d_m/10 (paper; Linux `dm / 100`, `dm / 10`,
//!     `(8 * dm) / 10`).
//!   - win_thresh = 15 segments: below it α = 1, β = 1/2 (Reno) (Linux module parameter).
//!   - theta = 5: after the delay has been above d₁, α returns to α_max only after θ consecutive
//!     RTTs with d_a ≤ d₁ (Linux module parameter; the paper's rule against one lucky RTT).
//!   - RTT samples capped at u32::MAX/α_max µs ≈ 3.3 s (Linux RTT_MAX, against overflow).
//!   - start with α = α_max, β = β_max; after a timeout α = 1, β = β_max (Linux init and
//!     `tcp_illinois_state`).
//! Paper vs Linux: Linux takes d_m as the largest single RTT sample minus the base RTT (never
//! aged), the paper as the largest average queueing delay; and Linux's d_a averages the samples of
//! one RTT. This is the only difference, and a small one for the curves' shape, so there is one
//! parameter set; every constant above is a parameter.

use super::{slow_start, AckSample, CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "TCP-Illinois (Liu, Başar & Srikant 2006): AIMD with α, β set by the average queueing delay";
pub const CITATION: &str = "Liu, Başar & Srikant, TCP-Illinois: a loss and delay-based congestion \
control algorithm for high-speed networks, VALUETOOLS 2006 / Performance Evaluation 65, 2008; \
Linux net/ipv4/tcp_illinois.c; ns-2 TCP-Linux illinois";
pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "alpha_min",
        default: "0.3",
        unit: "segments/RTT",
        doc: "increase per RTT at the maximum queueing delay (Linux ALPHA_MIN, paper α_min); \
              truncated to 1/128",
    },
    super::ParamDoc {
        name: "alpha_max",
        default: "10.0",
        unit: "segments/RTT",
        doc: "increase per RTT while the queueing delay stays below d_m/100 (Linux ALPHA_MAX, \
              paper α_max)",
    },
    super::ParamDoc {
        name: "beta_min",
        default: "0.125",
        unit: "1",
        doc: "window fraction removed on loss at low delay (Linux BETA_MIN, paper β_min); \
              truncated to 1/64",
    },
    super::ParamDoc {
        name: "beta_max",
        default: "0.5",
        unit: "1",
        doc: "window fraction removed on loss at high delay and for small windows (Linux \
              BETA_MAX, paper β_max); truncated to 1/64",
    },
    super::ParamDoc {
        name: "win_thresh",
        default: "15",
        unit: "segments",
        doc: "below this window Illinois behaves as Reno (α = 1, β = 1/2) (Linux module \
              parameter win_thresh)",
    },
    super::ParamDoc {
        name: "theta",
        default: "5",
        unit: "RTTs",
        doc: "low-delay RTTs needed before α returns to alpha_max (Linux module parameter theta)",
    },
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub alpha_min: f64,
    pub alpha_max: f64,
    pub beta_min: f64,
    pub beta_max: f64,
    pub win_thresh: u32,
    pub theta: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            alpha_min: 0.3,
            alpha_max: 10.0,
            beta_min: 0.125,
            beta_max: 0.5,
            win_thresh: 15,
            theta: 5,
        }
    }
}

const ALPHA_SHIFT: u32 = 7;
const ALPHA_BASE: u64 = 1 << ALPHA_SHIFT;
const BETA_SHIFT: u32 = 6;

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    super::check(
        p.alpha_min >= 1.0 / 128.0,
        "alpha_min",
        p.alpha_min,
        "at least 1/128 (alpha is kept in 1/128 segments)",
    )?;
    super::check(
        p.alpha_max > p.alpha_min && p.alpha_max <= 1000.0,
        "alpha_max",
        p.alpha_max,
        "greater than alpha_min and at most 1000",
    )?;
    super::check(
        p.beta_min >= 0.0 && p.beta_min < 1.0,
        "beta_min",
        p.beta_min,
        "in [0, 1)",
    )?;
    super::check(
        p.beta_max >= p.beta_min && p.beta_max < 1.0,
        "beta_max",
        p.beta_max,
        "in [beta_min, 1)",
    )?;
    Ok(Box::new(Illinois::new(&p)))
}

#[derive(Debug)]
pub struct Illinois {
    alpha_min: u64,
    alpha_max: u64,
    beta_min: u64,
    beta_max: u64,
    win_thresh: u32,
    theta: u32,
    /// Sum and count of the RTT samples (µs) of the current RTT.
    sum_rtt: u64,
    cnt_rtt: u32,
    /// Smallest and largest RTT sample ever, µs.
    base_rtt: u64,
    max_rtt: u64,
    /// snd_nxt when the current RTT began (segments): the next update is due past it.
    end_seq: u64,
    /// Additive increase, 1/128 segments per RTT.
    alpha: u64,
    /// Multiplicative decrease, 1/64.
    beta: u64,
    /// Segments covered by the last ACK (counted by the next cong_avoid).
    acked: u32,
    rtt_above: bool,
    rtt_low: u32,
}

impl Illinois {
    pub fn new(p: &Params) -> Self {
        let beta_max = (p.beta_max * (1 << BETA_SHIFT) as f64) as u64;
        let alpha_max = (p.alpha_max * ALPHA_BASE as f64) as u64;
        Illinois {
            alpha_min: (p.alpha_min * ALPHA_BASE as f64) as u64,
            alpha_max,
            beta_min: (p.beta_min * (1 << BETA_SHIFT) as f64) as u64,
            beta_max,
            win_thresh: p.win_thresh,
            theta: p.theta,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: alpha_max,
            beta: beta_max,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// Current α in segments per RTT.
    pub fn alpha_pkts(&self) -> f64 {
        self.alpha as f64 / ALPHA_BASE as f64
    }

    /// Current β (fraction of the window removed on loss).
    pub fn beta(&self) -> f64 {
        self.beta as f64 / (1 << BETA_SHIFT) as f64
    }

    fn rtt_cap(&self) -> u64 {
        u32::MAX as u64 / self.alpha_max.max(1)
    }

    fn rtt_reset(&mut self, tp: &TcpState) {
        self.end_seq = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// α for average queueing delay `da` and maximum `dm` (µs), in 1/128; updates the θ count.
    fn alpha_for(&mut self, da: u64, dm: u64) -> u64 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return self.alpha_max;
            }
            // Delay came back down: wait θ such RTTs before the full increase again.
            self.rtt_low += 1;
            if self.rtt_low < self.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return self.alpha_max;
        }
        self.rtt_above = true;
        // κ₁/(κ₂ + d_a) rewritten with the origin at d₁:
        // α = (d_m − d₁) α_max / ((d_m − d₁) + (d_a − d₁)(α_max − α_min)/α_min).
        let dm = dm - d1;
        let da = da - d1;
        (dm * self.alpha_max)
            / (dm + da * (self.alpha_max - self.alpha_min) / self.alpha_min.max(1)).max(1)
    }

    /// β for average queueing delay `da` and maximum `dm` (µs), in 1/64.
    fn beta_for(&self, da: u64, dm: u64) -> u64 {
        let d2 = dm / 10;
        if da <= d2 {
            return self.beta_min;
        }
        let d3 = 8 * dm / 10;
        if da >= d3 || d3 <= d2 {
            return self.beta_max;
        }
        // κ₃ + κ₄ d_a, the line through (d₂, β_min) and (d₃, β_max).
        let (bmin, bmax) = (self.beta_min as i128, self.beta_max as i128);
        let (d2, d3, da) = (d2 as i128, d3 as i128, da as i128);
        ((bmin * d3 - bmax * d2 + (bmax - bmin) * da) / (d3 - d2)) as u64
    }

    fn update_params(&mut self, tp: &TcpState) {
        if tp.snd_cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = self.beta_max;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt.saturating_sub(self.base_rtt);
            let da = (self.sum_rtt / self.cnt_rtt as u64).saturating_sub(self.base_rtt);
            self.alpha = self.alpha_for(da, dm);
            self.beta = self.beta_for(da, dm);
        }
        self.rtt_reset(tp);
    }
}

impl CongestionOps for Illinois {
    /// ns-2.35's module has `.min_cwnd = tcp_reno_min_cwnd` (ns-2's recovery rule only).
    fn min_cwnd(&self, tp: &TcpState) -> Option<u32> {
        super::reno_min_cwnd(tp)
    }

    fn name(&self) -> &'static str {
        "illinois"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.alpha = self.alpha_max;
        self.beta = self.beta_max;
        self.base_rtt = 0x7fff_ffff;
        self.max_rtt = 0;
        self.acked = 0;
        self.rtt_low = 0;
        self.rtt_above = false;
        self.rtt_reset(tp);
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, s: &AckSample) {
        self.acked = s.pkts_acked;
        let Some(rtt) = s.rtt else { return };
        let rtt = (rtt.as_nanos() / 1000).min(self.rtt_cap());
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += rtt;
    }

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = self.beta_max;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        // Linux after(ack, end_seq): the ACK covers the first segment sent after the last update.
        if tp.snd_una > self.end_seq {
            self.update_params(tp);
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
            return;
        }
        tp.snd_cwnd_cnt += self.acked;
        self.acked = 1;
        // W += α/W per segment: apply whole segments once the counter is worth one.
        let delta = (tp.snd_cwnd_cnt as u64 * self.alpha) >> ALPHA_SHIFT;
        if delta >= tp.snd_cwnd as u64 {
            let inc = (delta / tp.snd_cwnd as u64) as u32;
            tp.snd_cwnd = tp.snd_cwnd.saturating_add(inc).min(tp.snd_cwnd_clamp);
            tp.snd_cwnd_cnt = 0;
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cut = (tp.snd_cwnd as u64 * self.beta) >> BETA_SHIFT;
        (tp.snd_cwnd as u64 - cut).max(2) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;
    use fatpipe_core::SimTime;

    fn illinois() -> Illinois {
        Illinois::new(&Params::default())
    }

    /// The paper's α = f₁(d_a) from κ₁, κ₂ (α_min = 0.3, α_max = 10, d₁ = d_m/100).
    fn alpha_paper(da: f64, dm: f64) -> f64 {
        let (amin, amax, d1) = (0.3, 10.0, dm / 100.0);
        if da <= d1 {
            return amax;
        }
        let k1 = (dm - d1) * amin * amax / (amax - amin);
        let k2 = (dm - d1) * amin / (amax - amin) - d1;
        k1 / (k2 + da)
    }

    /// The paper's β = f₂(d_a) from κ₃, κ₄ (β_min = 1/8, β_max = 1/2, d₂ = 0.1 d_m, d₃ = 0.8 d_m).
    fn beta_paper(da: f64, dm: f64) -> f64 {
        let (bmin, bmax, d2, d3) = (0.125, 0.5, 0.1 * dm, 0.8 * dm);
        if da <= d2 {
            bmin
        } else if da >= d3 {
            bmax
        } else {
            let k3 = (bmin * d3 - bmax * d2) / (d3 - d2);
            let k4 = (bmax - bmin) / (d3 - d2);
            k3 + k4 * da
        }
    }

    #[test]
    fn alpha_curve_matches_the_paper() {
        let dm = 100_000u64; // 100 ms of maximum queueing delay
        for da_ms in [0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 80.0, 100.0] {
            let mut c = illinois();
            let da = (da_ms * 1000.0) as u64;
            let got = c.alpha_for(da, dm) as f64 / 128.0;
            let want = alpha_paper(da as f64, dm as f64);
            // Linux keeps α_min as 38/128 = 0.297 (not 0.3) and truncates α to 1/128: 1 % of
            // the value plus one step.
            assert!(
                (got - want).abs() <= 0.01 * want + 1.0 / 128.0,
                "d_a = {da_ms} ms: {got} vs {want}"
            );
        }
        // The end points: α_max at d₁, α_min at d_m.
        let mut c = illinois();
        assert_eq!(c.alpha_for(1_000, dm), 1280);
        assert_eq!(c.alpha_for(dm, dm), 38);
        // Monotone decreasing in between.
        let mut c = illinois();
        let a: Vec<u64> = (1..=100).map(|ms| c.alpha_for(ms * 1000, dm)).collect();
        assert!(a.windows(2).all(|w| w[1] <= w[0]));
    }

    #[test]
    fn beta_curve_matches_the_paper() {
        let c = illinois();
        let dm = 100_000u64;
        for da_ms in [0.0, 5.0, 10.0, 20.0, 45.0, 60.0, 79.0, 80.0, 100.0] {
            let da = (da_ms * 1000.0) as u64;
            let got = c.beta_for(da, dm) as f64 / 64.0;
            let want = beta_paper(da as f64, dm as f64);
            assert!(
                (got - want).abs() <= 1.0 / 64.0,
                "d_a = {da_ms} ms: {got} vs {want}"
            );
        }
        // Midway between d₂ and d₃ β is midway between 1/8 and 1/2: 5/16 = 20/64 exactly.
        assert_eq!(c.beta_for(45_000, dm), 20);
        assert_eq!(c.beta_for(10_000, dm), 8);
        assert_eq!(c.beta_for(80_000, dm), 32);
    }

    #[test]
    fn alpha_returns_to_max_only_after_theta_low_delay_rtts() {
        let mut c = illinois();
        let dm = 100_000;
        c.alpha = c.alpha_for(50_000, dm);
        let high = c.alpha;
        assert!(high < 1280);
        for _ in 0..4 {
            c.alpha = c.alpha_for(0, dm);
            assert_eq!(c.alpha, high);
        }
        c.alpha = c.alpha_for(0, dm);
        assert_eq!(c.alpha, 1280);
    }

    fn ack(c: &mut Illinois, tp: &mut TcpState, rtt_ms: u64) {
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt: Some(SimTime::from_millis(rtt_ms)),
                in_flight: tp.snd_cwnd,
            },
        );
        tp.snd_una += 1;
        c.cong_avoid(tp, 1);
    }

    #[test]
    fn parameters_follow_the_average_delay_once_per_rtt() {
        let mut c = illinois();
        let mut tp = state(100, 50);
        tp.snd_nxt = 100;
        c.init(&mut tp);
        // First RTT: base 100 ms, one sample at 200 ms sets d_m = 100 ms.
        ack(&mut c, &mut tp, 100);
        ack(&mut c, &mut tp, 200);
        tp.snd_una = 100;
        tp.snd_nxt = 200;
        ack(&mut c, &mut tp, 100); // passes end_seq = 100: update from 3 samples
                                   // Mean of (100, 200, 100) = 133.3 ms → d_a = 33.3 ms of d_m = 100 ms.
        let da = 33_333.0;
        let want_a = alpha_paper(da, 100_000.0);
        assert!((c.alpha_pkts() - want_a).abs() < 0.01 * want_a + 1.0 / 128.0);
        let want_b = beta_paper(da, 100_000.0);
        assert!((c.beta() - want_b).abs() <= 1.0 / 64.0, "{}", c.beta());
        assert_eq!(c.end_seq, 200);
        // Next RTT without queueing delay: α stays (θ rule), β back to β_min.
        for _ in 0..20 {
            ack(&mut c, &mut tp, 100);
        }
        tp.snd_una = 200;
        tp.snd_nxt = 300;
        ack(&mut c, &mut tp, 100);
        assert!((c.alpha_pkts() - want_a).abs() < 0.01 * want_a + 1.0 / 128.0);
        assert_eq!(c.beta(), 0.125);
    }

    #[test]
    fn small_windows_behave_like_reno() {
        let mut c = illinois();
        let mut tp = state(14, 10);
        c.max_rtt = 200_000;
        c.base_rtt = 100_000;
        c.cnt_rtt = 1;
        c.sum_rtt = 100_000;
        c.update_params(&tp);
        assert_eq!(c.alpha, 128);
        assert_eq!(c.beta, 32);
        assert_eq!(c.ssthresh(&tp), 7);
        tp.snd_cwnd = 15;
        c.cnt_rtt = 1;
        c.sum_rtt = 100_000;
        c.update_params(&tp);
        assert_eq!(c.alpha, 1280);
        assert_eq!(c.beta, 8);
    }

    #[test]
    fn window_grows_by_alpha_per_rtt_and_shrinks_by_beta() {
        let mut c = illinois();
        c.alpha = 1280; // 10 segments per RTT
        c.end_seq = u64::MAX; // no parameter update in this test
        let mut tp = state(100, 50);
        // 100 ACKs: ten ACKs for the first segment (cwnd 100), then 11 each while the window is
        // 101..110 (11·10 ≥ w): 10 + 8·11 = 98 ACKs give +9 (cwnd += α/cwnd would give ≈ 9.5).
        for _ in 0..100 {
            c.acked = 1;
            c.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 109);
        // β = 1/8: 109 − floor(109·8/64) = 109 − 13 = 96.
        c.beta = 8;
        assert_eq!(c.ssthresh(&tp), 96);
        c.beta = 32;
        assert_eq!(c.ssthresh(&tp), 55);
    }

    #[test]
    fn timeout_resets_to_reno_values() {
        let mut c = illinois();
        let mut tp = state(100, 50);
        c.alpha = 300;
        c.beta = 10;
        c.rtt_above = true;
        tp.snd_nxt = 77;
        c.set_state(&mut tp, CaState::Loss);
        assert_eq!(
            (c.alpha, c.beta, c.rtt_above, c.end_seq),
            (128, 32, false, 77)
        );
    }

    #[test]
    fn rejects_bad_parameters() {
        for (k, v) in [
            ("alpha_min", 0.0),
            ("alpha_max", 0.2),
            ("beta_min", -0.1),
            ("beta_max", 0.1),
            ("beta_max", 1.0),
        ] {
            let mut t = toml::Table::new();
            t.insert(k.into(), toml::Value::Float(v));
            assert!(build(&t).unwrap_err().contains(k), "{k} = {v}");
        }
    }
}
