//! TCP Libra.
//!
//! Spec:    G. Marfia, C. E. Palazzi, G. Pau, M. Gerla, M. Y. Sanadidi, M. Roccetti, "TCP Libra:
//!          Exploring RTT-Fairness for TCP", UCLA CSD TR-050037 (2005), and its SIGMETRICS 2006
//!          poster / Networking 2007 versions, as transcribed in seed 000 §3.6:
//!              per ACK:  w ← w + α·T²/(w·(T + T0))
//!              on loss:  w ← w − T1·w/(2·(T + T0))
//!              α = k1·c·exp(−k2·(T − Tmin)/(Tmax − Tmin))
//!          T the measured RTT, Tmin/Tmax the smallest and largest RTT seen, c the bottleneck
//!          capacity. Per unit time the window grows by α·T/(T + T0), so the *rate* w/T grows by
//!          α/(T + T0) — nearly independent of T when T ≪ T0 — and a loss removes the fraction
//!          T1/(2(T + T0)), again nearly independent of T: that is Libra's RTT fairness. The
//!          exponential factor shrinks the increase as the queue (T − Tmin) fills.
//! Mirrors: no implementation was available here (the authors' ns-2 code is not public in the
//!          sources this project can reach); this file follows the equations above.
//!
//! Constants — the seed and the accessible sources give none of k1, k2, T0, T1 or the capacity
//! estimator, so each is reconstructed from the design equations and is a parameter:
//! - T0 = 1 s: the fairness argument needs T ≪ T0 for every RTT of interest (here up to a few
//!   hundred ms); 1 s makes the rate increase vary by only (1 + 0.2)/(1 + 0.04) = 15 % between a
//!   40 ms and a 200 ms flow, where Reno's varies 25-fold.
//! - T1 = T0 = 1 s: the decrease is then T0/(2(T + T0)) ≈ 1/2 for small T: the "AIMD-like
//!   (α, 0.5)" of the study's Table 2.1.
//! - k1 = 0.05 per second: chosen so that a flow alone regains half the capacity after a halving
//!   in about 10 s whatever the capacity (dx/dt = α/(T + T0) ≈ k1·c/T0 with c in packets per
//!   second: c/2 in 1/(2·k1) = 10 s). The 2009 study reports Libra as the least scalable
//!   protocol and remarks that tuning k1 and k2 could improve it, which fits a conservative k1.
//! - k2 = 2: the increase falls to e^−2 ≈ 14 % of its empty-queue value when the RTT reaches the
//!   largest seen (a full buffer), the "stability control" of the design.
//! - c: `capacity` in bits/s when given; otherwise a packet-pair estimate, as the paper's
//!   estimation component: back-to-back segments leave the bottleneck one transmission time
//!   apart and their ACKs keep that spacing, so the smallest gap between two ACKs that each
//!   acknowledge one segment is one packet time at the bottleneck, and c = 1/gap packets/s. It
//!   is the link's capacity, not the flow's share, so competing flows agree on it (a per-flow
//!   delivery-rate estimate made the long-RTT flow's α several times smaller and Libra less fair
//!   than Reno). ACK compression on the reverse path would inflate it.
//! - Random pacing, Libra's burst control, is the tcp-level option `tcp.send_jitter` (or
//!   `tcp.pacing`): not part of this module.

use super::{CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "TCP Libra (Marfia et al. 2005): RTT-fair AIMD, increase alpha*T^2/(T+T0) per RTT";
pub const CITATION: &str = "G. Marfia, C. Palazzi, G. Pau, M. Gerla, M. Y. Sanadidi, M. Roccetti, \
     TCP Libra: Exploring RTT-Fairness for TCP, UCLA CSD TR-050037 (2005); constants \
     reconstructed (see cc/libra.rs)";

pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "k1",
        default: "0.05",
        unit: "1/s",
        doc: "scalability gain: alpha = k1·c·exp(...) (reconstructed: half the capacity \
              regained in ~10 s)",
    },
    super::ParamDoc {
        name: "k2",
        default: "2.0",
        unit: "1",
        doc: "stability gain: the increase falls to exp(-k2) at the largest RTT seen",
    },
    super::ParamDoc {
        name: "t0",
        default: "1.0",
        unit: "s",
        doc: "T0 of the increase and decrease (RTT fairness needs T << T0)",
    },
    super::ParamDoc {
        name: "t1",
        default: "1.0",
        unit: "s",
        doc: "T1 of the decrease w·T1/(2(T + T0)) (T1 = T0: about 1/2)",
    },
    super::ParamDoc {
        name: "capacity",
        default: "\"estimate\"",
        unit: "bit/s",
        doc: "bottleneck capacity c in bit/s, or \"estimate\": packet pair (smallest gap \
              between single-segment ACKs)",
    },
];

/// Typed parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub k1: Option<f64>,
    pub k2: Option<f64>,
    pub t0: Option<f64>,
    pub t1: Option<f64>,
    pub capacity: Option<Capacity>,
}

/// `capacity`: a rate in bit/s or the word "estimate".
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Capacity {
    Bps(f64),
    Word(String),
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub k1: f64,
    pub k2: f64,
    pub t0: f64,
    pub t1: f64,
    /// bits/s; 0 = estimate (the parameter itself must be > 0 or "estimate").
    pub capacity_bps: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            k1: 0.05,
            k2: 2.0,
            t0: 1.0,
            t1: 1.0,
            capacity_bps: 0.0,
        }
    }
}

#[derive(Debug)]
pub struct Libra {
    cfg: Config,
    w: f64,
    t_min: f64,
    t_max: f64,
    /// The latest RTT sample, s.
    t: f64,
    /// Estimated capacity, packets/s.
    c_est: f64,
    /// Smallest gap between two ACKs of one segment each, s.
    min_gap_s: f64,
    last_ack_s: f64,
}

impl Libra {
    pub fn new(cfg: Config) -> Self {
        Libra {
            cfg,
            w: 0.0,
            t_min: f64::INFINITY,
            t_max: 0.0,
            t: 0.0,
            c_est: 0.0,
            min_gap_s: f64::INFINITY,
            last_ack_s: f64::NAN,
        }
    }

    /// Capacity in packets per second of `mss` bytes.
    fn capacity_pps(&self, mss: u32) -> f64 {
        if self.cfg.capacity_bps > 0.0 {
            self.cfg.capacity_bps / (8.0 * mss as f64)
        } else {
            self.c_est
        }
    }

    /// α = k1·c·exp(−k2·(T − Tmin)/(Tmax − Tmin)), packets/s.
    pub fn alpha(&self, c_pps: f64, t: f64) -> f64 {
        let span = self.t_max - self.t_min;
        let share = if span > 1e-6 {
            ((t - self.t_min) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.cfg.k1 * c_pps * (-self.cfg.k2 * share).exp()
    }

    /// Window increase per ACKed segment at window `w`, RTT `t`: α·T²/(w·(T + T0)).
    pub fn increase(&self, alpha: f64, w: f64, t: f64) -> f64 {
        alpha * t * t / (w.max(1.0) * (t + self.cfg.t0))
    }

    /// Window after a loss: w − T1·w/(2(T + T0)).
    pub fn after_loss(&self, w: f64, t: f64) -> f64 {
        (w - self.cfg.t1 * w / (2.0 * (t + self.cfg.t0))).max(2.0)
    }
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    let mut c = Config::default();
    if let Some(v) = p.k1 {
        super::check(v > 0.0 && v.is_finite(), "k1", v, "> 0")?;
        c.k1 = v;
    }
    if let Some(v) = p.k2 {
        super::check(v >= 0.0 && v.is_finite(), "k2", v, ">= 0")?;
        c.k2 = v;
    }
    if let Some(v) = p.t0 {
        super::check(v > 0.0 && v.is_finite(), "t0", v, "> 0 s")?;
        c.t0 = v;
    }
    if let Some(v) = p.t1 {
        super::check(v >= 0.0 && v.is_finite(), "t1", v, ">= 0 s")?;
        c.t1 = v;
    }
    match p.capacity {
        None => {}
        Some(Capacity::Word(w)) => super::check(
            w == "estimate",
            "capacity",
            format!("{w:?}"),
            "a rate in bit/s or \"estimate\"",
        )?,
        Some(Capacity::Bps(v)) => {
            super::check(
                v > 0.0 && v.is_finite(),
                "capacity",
                v,
                "> 0 bit/s (or \"estimate\")",
            )?;
            c.capacity_bps = v;
        }
    }
    Ok(Box::new(Libra::new(c)))
}

impl CongestionOps for Libra {
    fn name(&self) -> &'static str {
        "libra"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.w = tp.snd_cwnd as f64;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let t = if self.t > 0.0 { self.t } else { 0.0 };
        (self.after_loss(tp.snd_cwnd as f64, t) as u32).max(2)
    }

    fn set_state(&mut self, _tp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.t_max = self.t_min; // the queue history is stale after a timeout
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &super::AckSample) {
        if let Some(r) = sample.rtt {
            let r = r.as_secs_f64();
            self.t = r;
            self.t_min = self.t_min.min(r);
            self.t_max = self.t_max.max(r);
        }
        let now = tp.now.as_secs_f64();
        if sample.pkts_acked == 1 {
            let gap = now - self.last_ack_s; // NaN before the first ACK
            if gap > 0.0 && gap < self.min_gap_s {
                self.min_gap_s = gap;
                self.c_est = 1.0 / gap;
            }
            self.last_ack_s = now;
        } else {
            self.last_ack_s = f64::NAN; // a pair must be two single-segment ACKs in a row
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if (self.w as u32) != tp.snd_cwnd {
            self.w = tp.snd_cwnd as f64; // the sender cut or restored the window
        }
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            let left = super::slow_start(tp, acked);
            self.w = tp.snd_cwnd as f64;
            if left == 0 {
                return;
            }
        }
        if self.t <= 0.0 {
            return;
        }
        let alpha = self.alpha(self.capacity_pps(tp.mss), self.t);
        for _ in 0..acked {
            self.w += self.increase(alpha, self.w, self.t);
        }
        tp.snd_cwnd = (self.w as u32).clamp(2, tp.snd_cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libra() -> Libra {
        Libra::new(Config::default())
    }

    #[test]
    fn increase_and_decrease_by_hand() {
        let l = libra();
        // α = 1000 pkt/s, w = 100, T = 0.1 s, T0 = 1: 1000·0.01/(100·1.1) = 0.0909 per ACK,
        // i.e. 9.09 segments per RTT of 100 ACKs.
        assert!((l.increase(1000.0, 100.0, 0.1) - 0.090909).abs() < 1e-6);
        // Loss at w = 1000, T = 0.1: 1000 − 1·1000/(2·1.1) = 545.45.
        assert!((l.after_loss(1000.0, 0.1) - 545.4545).abs() < 1e-3);
        // T ≪ T0: close to halving; T = T0: a quarter.
        assert!((l.after_loss(1000.0, 0.0) - 500.0).abs() < 1e-9);
        assert!((l.after_loss(1000.0, 1.0) - 750.0).abs() < 1e-9);
    }

    #[test]
    fn alpha_has_the_exponential_queue_penalty() {
        let mut l = libra();
        l.t_min = 0.1;
        l.t_max = 0.2;
        // Empty queue: k1·c = 0.05·10000 = 500; full (T = Tmax): 500·e^−2 = 67.67; halfway e^−1.
        assert!((l.alpha(10_000.0, 0.1) - 500.0).abs() < 1e-9);
        assert!((l.alpha(10_000.0, 0.2) - 500.0 * (-2.0f64).exp()).abs() < 1e-9);
        assert!((l.alpha(10_000.0, 0.15) - 500.0 * (-1.0f64).exp()).abs() < 1e-9);
    }

    #[test]
    fn rate_increase_barely_depends_on_rtt() {
        // The rate x = w/T grows per second by (per-RTT window increase / T) / T
        // = α·T²/(T + T0)/T² = α/(T + T0): a 40 ms and a 160 ms flow differ by
        // (1.16/1.04) = 1.115, where Reno's 1/T² differs 16-fold.
        let l = libra();
        let rate_gain = |t: f64| {
            let w = 1000.0;
            let per_rtt = l.increase(1000.0, w, t) * w; // segments per RTT
            per_rtt / t / t
        };
        let ratio = rate_gain(0.04) / rate_gain(0.16);
        assert!((ratio - 1.16 / 1.04).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn packet_pair_estimates_the_bottleneck_not_the_share() {
        // Single-segment ACKs 0.12 ms apart (one 1500-byte packet at 100 Mb/s) with larger gaps
        // between bursts (other flows' packets in between): c = 1/0.12 ms = 8333 packets/s.
        // A two-segment ACK breaks a pair.
        let mut l = libra();
        let mut tp = crate::cc::tests::state(10, 5);
        let ack = |l: &mut Libra, tp: &mut TcpState, us: u64, n: u32| {
            tp.now = fatpipe_core::SimTime::from_micros(us);
            l.pkts_acked(
                tp,
                &crate::cc::AckSample {
                    pkts_acked: n,
                    rtt: None,
                    in_flight: 10,
                },
            );
        };
        ack(&mut l, &mut tp, 1000, 1);
        ack(&mut l, &mut tp, 1050, 2); // 50 us, but a delayed ACK: not a pair
        ack(&mut l, &mut tp, 1600, 1);
        ack(&mut l, &mut tp, 1720, 1); // 120 us
        ack(&mut l, &mut tp, 2500, 1);
        assert!(
            (l.capacity_pps(1460) - 1.0 / 120e-6).abs() < 1e-6,
            "{}",
            l.capacity_pps(1460)
        );
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let t = |s: &str| toml::from_str::<toml::Table>(s).unwrap();
        for bad in [
            "capacity = 0.0",
            "capacity = 0",
            "capacity = -1.0",
            "capacity = inf",
            "capacity = \"guess\"",
            "t0 = 0.0",
            "t1 = -1.0",
            "k1 = 0.0",
            "k2 = -1.0",
        ] {
            assert!(build(&t(bad)).is_err(), "{bad}");
        }
        assert!(build(&t("capacity = 1e9")).is_ok());
        assert!(build(&t("capacity = 1000000000")).is_ok());
        assert!(build(&t("capacity = \"estimate\"")).is_ok());
    }
}
