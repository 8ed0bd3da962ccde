//! FAST TCP.
//!
//! Spec:    C. Jin, D. X. Wei, S. H. Low, "FAST TCP: Motivation, Architecture, Algorithms,
//!          Performance", IEEE INFOCOM 2004; D. X. Wei, C. Jin, S. H. Low, S. Hegde, "FAST TCP:
//!          Motivation, Architecture, Algorithms, Performance", IEEE/ACM ToN 14(6), 2006.
//!          Delay-based: periodically
//!              w ← min{ 2w, (1 − γ)·w + γ·(baseRTT/avgRTT · w + α) },
//!          baseRTT the minimum RTT seen, avgRTT an exponentially weighted average of the RTT
//!          samples. Its fixed point w = w·baseRTT/avgRTT + α is a backlog of exactly α packets
//!          per flow in the path's queues (proportional fairness, Vegas-like).
//! Mirrors: the seed's description of the public ns-2 module `Agent/TCP/Fast` (T. Cui and L.
//!          Andrew, University of Melbourne, v1.1.3, 2007; seed 000 §3.3): `alpha_`, `gamma_` 0.5,
//!          updates every other RTT, multiplicative increase (slow start) while the queueing delay
//!          is small, target window floored at 2, increases paced. The module's source was not
//!          available here; its behaviour is taken from that description.
//!
//! Parameter sets (`variant`):
//! - `"paper"` (default): the update once per RTT.
//! - `"ns2"`: the update every other RTT (the module's default `fast_update_cwnd_interval_`).
//!
//! Both: the change a round decides is spread over the next round's ACKs (cwnd moves by
//! (target − cwnd)/cwnd per ACKed segment), as FAST's burst control and the module's paced
//! increases do; slow start (one segment per ACKed segment) lasts until the flow's own backlog
//! w·(1 − baseRTT/avgRTT) reaches α (the module's `mi_threshold_` expressed in packets) or a loss;
//! a loss halves the window as Reno (the paper: FAST "reacts to loss" like Reno), and a timeout
//! restarts the estimators.
//!
//! Constants and their sources:
//! - γ = 0.5: INFOCOM 2004 §5 and the ns-2 module's `gamma_` default (seed 000 §3.3).
//! - avgRTT weight η = min(3/w, 1/4) per sample: ToN 2006 §III-C, as remembered (the paper could
//!   not be retrieved here); a parameter `avg_weight` fixes it to a constant instead.
//! - α = 200 packets: the value of the Caltech/SLAC experiments of INFOCOM 2004 §5, as remembered
//!   (not verified here; the 2009 study's ns-2 runs used the module's default, which the seed
//!   does not give). For small bandwidth-delay products set a smaller α: the equilibrium queue
//!   is α packets per flow.
//! - Window floor 2 segments: the ns-2 module (seed 000 §3.3).

use super::{CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "FAST TCP (Jin, Wei, Low 2004): delay-based, keeps alpha packets queued per flow";
pub const CITATION: &str = "C. Jin, D. X. Wei, S. H. Low, FAST TCP: Motivation, Architecture, \
     Algorithms, Performance, IEEE INFOCOM 2004 (and IEEE/ACM ToN 2006); ns-2 Agent/TCP/Fast \
     (Cui & Andrew, v1.1.3) as described in seed 000";

pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"paper\"",
        unit: "",
        doc: "\"paper\": update every RTT; \"ns2\": every other RTT (the ns-2 module's default)",
    },
    super::ParamDoc {
        name: "alpha",
        default: "200.0",
        unit: "packets",
        doc: "packets each flow keeps queued at equilibrium (INFOCOM 2004 experiments: 200)",
    },
    super::ParamDoc {
        name: "gamma",
        default: "0.5",
        unit: "1",
        doc: "γ, the smoothing of the window update (paper and ns-2 module 0.5)",
    },
    super::ParamDoc {
        name: "update_interval",
        default: "1",
        unit: "RTTs",
        doc: "RTTs between window updates (paper 1, ns2 2)",
    },
    super::ParamDoc {
        name: "avg_weight",
        default: "0.0",
        unit: "1",
        doc: "weight of a new RTT sample in avgRTT; 0 = min(3/w, 1/4) (ToN 2006)",
    },
];

/// Typed parameters; unset fields take the variant's values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub variant: Option<String>,
    pub alpha: Option<f64>,
    pub gamma: Option<f64>,
    pub update_interval: Option<u32>,
    pub avg_weight: Option<f64>,
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub alpha: f64,
    pub gamma: f64,
    pub update_interval: u32,
    /// 0 = min(3/w, 1/4).
    pub avg_weight: f64,
}

#[derive(Debug)]
pub struct Fast {
    cfg: Config,
    base_rtt_s: f64,
    avg_rtt_s: f64,
    /// The window as a real number (the per-ACK steps are fractions of a segment).
    w: f64,
    /// Where the current round's ACKs move the window.
    target: f64,
    round_end: u64,
    rounds: u32,
}

impl Fast {
    pub fn new(cfg: Config) -> Self {
        Fast {
            cfg,
            base_rtt_s: f64::INFINITY,
            avg_rtt_s: 0.0,
            w: 0.0,
            target: 0.0,
            round_end: 0,
            rounds: 0,
        }
    }

    /// The FAST update for window `w` (INFOCOM 2004 Eq. 2).
    pub fn update(&self, w: f64) -> f64 {
        let ratio = if self.avg_rtt_s > 0.0 && self.base_rtt_s.is_finite() {
            self.base_rtt_s / self.avg_rtt_s
        } else {
            1.0
        };
        let g = self.cfg.gamma;
        (2.0 * w)
            .min((1.0 - g) * w + g * (ratio * w + self.cfg.alpha))
            .max(2.0)
    }

    /// The flow's own backlog estimate w·(1 − baseRTT/avgRTT), packets.
    pub fn backlog(&self, w: f64) -> f64 {
        if self.avg_rtt_s > 0.0 && self.base_rtt_s.is_finite() {
            w * (1.0 - self.base_rtt_s / self.avg_rtt_s)
        } else {
            0.0
        }
    }

    fn weight(&self, w: f64) -> f64 {
        if self.cfg.avg_weight > 0.0 {
            self.cfg.avg_weight
        } else {
            (3.0 / w.max(1.0)).min(0.25)
        }
    }
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    let mut c = match p.variant.as_deref().unwrap_or("paper") {
        "paper" => Config {
            alpha: 200.0,
            gamma: 0.5,
            update_interval: 1,
            avg_weight: 0.0,
        },
        "ns2" => Config {
            alpha: 200.0,
            gamma: 0.5,
            update_interval: 2,
            avg_weight: 0.0,
        },
        other => return Err(format!("variant = {other:?}: must be \"paper\" or \"ns2\"")),
    };
    if let Some(v) = p.alpha {
        super::check(v > 0.0 && v.is_finite(), "alpha", v, "> 0 packets")?;
        c.alpha = v;
    }
    if let Some(v) = p.gamma {
        super::check(v > 0.0 && v <= 1.0, "gamma", v, "in (0, 1]")?;
        c.gamma = v;
    }
    if let Some(v) = p.update_interval {
        super::check(v >= 1, "update_interval", v, ">= 1 RTT")?;
        c.update_interval = v;
    }
    if let Some(v) = p.avg_weight {
        super::check(
            (0.0..=1.0).contains(&v),
            "avg_weight",
            v,
            "in [0, 1] (0 = min(3/w, 1/4))",
        )?;
        c.avg_weight = v;
    }
    Ok(Box::new(Fast::new(c)))
}

impl CongestionOps for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.w = tp.snd_cwnd as f64;
        self.target = self.w;
        self.round_end = tp.snd_nxt;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        super::reno_ssthresh(tp)
    }

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            // A timeout: the estimators restart from the next samples (the path may have changed).
            self.avg_rtt_s = 0.0;
            self.rounds = 0;
            self.round_end = tp.snd_nxt;
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &super::AckSample) {
        if let Some(r) = sample.rtt {
            let r = r.as_secs_f64();
            self.base_rtt_s = self.base_rtt_s.min(r);
            let eta = self.weight(tp.snd_cwnd as f64);
            self.avg_rtt_s = if self.avg_rtt_s == 0.0 {
                r
            } else {
                (1.0 - eta) * self.avg_rtt_s + eta * r
            };
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        // Follow a window the sender changed (a loss halved it, a timeout set it to 1).
        if (self.w.round() as u32) != tp.snd_cwnd {
            self.w = tp.snd_cwnd as f64;
            self.target = self.w;
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            if self.backlog(self.w) >= self.cfg.alpha {
                tp.snd_ssthresh = tp.snd_cwnd; // enough queued: hand over to the FAST update
            } else {
                self.w += acked as f64;
                self.target = self.w;
                tp.snd_cwnd = (self.w as u32).min(tp.snd_cwnd_clamp);
                return;
            }
        }
        if tp.snd_una > self.round_end {
            self.round_end = tp.snd_nxt;
            self.rounds += 1;
            if self.rounds >= self.cfg.update_interval {
                self.rounds = 0;
                self.target = self.update(self.w);
            }
        }
        // Spread the step over one round of ACKs.
        let step = (self.target - self.w) * acked as f64 / self.w.max(1.0);
        self.w = if step >= 0.0 {
            (self.w + step).min(self.target)
        } else {
            (self.w + step).max(self.target)
        }
        .max(2.0);
        tp.snd_cwnd = (self.w.round() as u32).clamp(2, tp.snd_cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(alpha: f64) -> Fast {
        Fast::new(Config {
            alpha,
            gamma: 0.5,
            update_interval: 1,
            avg_weight: 0.0,
        })
    }

    #[test]
    fn one_update_step_is_the_papers_equation() {
        // baseRTT 100 ms, avgRTT 125 ms, w 1000, α 200, γ 0.5:
        // 0.5·1000 + 0.5·(0.8·1000 + 200) = 500 + 500 = 1000 (the fixed point: backlog 200).
        let mut f = fast(200.0);
        f.base_rtt_s = 0.100;
        f.avg_rtt_s = 0.125;
        assert!((f.update(1000.0) - 1000.0).abs() < 1e-9);
        assert!((f.backlog(1000.0) - 200.0).abs() < 1e-9);
        // Less queued than α: w grows; 0.5·800 + 0.5·(0.8·800 + 200) = 400 + 420 = 820.
        assert!((f.update(800.0) - 820.0).abs() < 1e-9);
        // More queued: shrinks; 0.5·1500 + 0.5·(0.8·1500 + 200) = 750 + 700 = 1450.
        assert!((f.update(1500.0) - 1450.0).abs() < 1e-9);
    }

    #[test]
    fn growth_is_capped_at_doubling_and_floored_at_two() {
        // No queueing (ratio 1): w + γα per RTT, but at most 2w: w = 10, α = 200 → 20, not 110.
        let mut f = fast(200.0);
        f.base_rtt_s = 0.1;
        f.avg_rtt_s = 0.1;
        assert_eq!(f.update(10.0), 20.0);
        assert_eq!(f.update(1000.0), 1100.0);
        // Huge queueing with a small α: never below 2 (the ns-2 module's floor).
        let mut f = fast(0.5);
        f.base_rtt_s = 0.1;
        f.avg_rtt_s = 100.0;
        assert_eq!(f.update(2.0), 2.0);
    }

    #[test]
    fn equilibrium_window_is_alpha_over_one_minus_ratio() {
        // Iterating the update converges to w* = α/(1 − baseRTT/RTT): 200/(1 − 0.8) = 1000 (the
        // error shrinks by (1 − γ) + γ·0.8 = 0.9 per update).
        let mut f = fast(200.0);
        f.base_rtt_s = 0.100;
        f.avg_rtt_s = 0.125;
        let mut w = 300.0;
        for _ in 0..300 {
            w = f.update(w);
        }
        assert!((w - 1000.0).abs() < 1e-3, "{w}");
    }

    #[test]
    fn avg_rtt_weight_is_min_three_over_w_and_a_quarter() {
        let f = fast(200.0);
        assert_eq!(f.weight(6.0), 0.25);
        assert_eq!(f.weight(12.0), 0.25);
        assert!((f.weight(300.0) - 0.01).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let t = |s: &str| toml::from_str::<toml::Table>(s).unwrap();
        for bad in [
            "alpha = 0.0",
            "alpha = -5.0",
            "gamma = 0.0",
            "gamma = 1.5",
            "update_interval = 0",
            "avg_weight = 2.0",
            "variant = \"x\"",
        ] {
            assert!(build(&t(bad)).is_err(), "{bad}");
        }
    }
}
