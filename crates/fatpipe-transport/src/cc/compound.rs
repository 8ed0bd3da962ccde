//! Compound TCP (CTCP).
//!
//! Spec:    K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach for High-speed and
//!          Long Distance Networks", IEEE INFOCOM 2006 (MSR-TR-2005-86); M. Sridharan, K. Tan,
//!          D. Bansal, D. Thaler, draft-sridharan-tcpm-ctcp-02 (2008). The sending window is
//!          win = cwnd + dwnd: cwnd is Reno's loss-based window (+1/win per ACK), dwnd a
//!          delay-based one updated once per RTT from Vegas' diff = win·(1 − baseRTT/RTT), the
//!          packets this flow keeps queued: diff < γ → dwnd += (α·win^k − 1)⁺ (together with
//!          Reno's +1, win grows by α·win^k per RTT, HighSpeed-like); diff ≥ γ → dwnd −= ζ·diff;
//!          loss → win·(1 − β) with dwnd = (win·(1 − β) − cwnd/2)⁺.
//! Mirrors: ns-2.35 TCP-Linux `compound` (tcp/linux/src/tcp_compound.c, the Linux 2.6-era port by
//!          A. Castellani and S. Hemminger built on tcp_vegas.c), as read.
//!
//! Parameter sets (`variant`):
//! - `"draft"` (default): the paper and draft. The delay component acts only in congestion
//!   avoidance (slow start is Reno's, dwnd = 0) and only while win >= `low_window`; on a loss
//!   ssthresh = win·(1 − β), Reno's part halves and dwnd takes the rest.
//! - `"ns2"`: the port ns-2.35 runs (what the 2010 DCCP/CTCP study used, seed 001 §2.5). Reno's
//!   part grows per ACK, not per segment acknowledged: by one while it is at or below ssthresh,
//!   else by one per snd_cwnd ACKs (the sender's `snd_cwnd_cnt`). The
//!   per-RTT dwnd update runs in slow start too, the window in the increase is the segments sent
//!   in the last RTT (old_wnd), α·old_wnd^0.75 is taken in integers (a fourth root of w³, shifted
//!   right by 3) and dwnd grows by it minus one when above one; ssthresh is Reno's (win/2,
//!   `tcp_reno_ssthresh`), and when the sender cuts the window the Reno part absorbs the cut
//!   while dwnd is kept if it still fits (reset to 0 with cwnd = win otherwise); no low window.
//!
//! Both: the Vegas round machinery (an RTT ends when the ACK passes the snd_nxt recorded at its
//! start; the RTT used is the minimum sample of that round, baseRTT the minimum of all; no
//! decision unless the round had more than 2 samples). In `"draft"` Reno's part grows by one
//! segment per win ACKed segments in congestion avoidance and by one per ACKed segment in slow
//! start (below ssthresh).
//! Entering Loss (RTO) clears dwnd and the round.
//!
//! Constants and their sources:
//! - α = 1/8, β = 1/2, k = 0.75, γ = 30 packets: Tan et al. 2006 §4 and the draft; the port's
//!   TCP_COMPOUND_ALPHA 3 (a right shift: 1/8), TCP_COMPOUND_GAMMA 30, and its comment that k is
//!   0.75 "for computational reasons" (a fourth root of w³).
//! - ζ = 1: the port uses TCP_COMPOUND_BETA 1 as the factor of diff in the decrease (the paper's
//!   ζ; the paper's β is the loss decrease).
//! - low_window = 41 packets (draft): the seed note's reading of draft-sridharan-tcpm-ctcp-02,
//!   not verified against the draft's text here; it only applies to `"draft"` and `0` disables it.
//! - The port's V_PARAM_SHIFT 1 fixed point (diff in half packets) is reproduced by rounding diff
//!   down to half packets in `"ns2"`.

use super::{CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "Compound TCP (Tan et al. 2006): Reno window plus a delay-based window that backs off at γ";
pub const CITATION: &str = "K. Tan, J. Song, Q. Zhang, M. Sridharan, A Compound TCP Approach for \
     High-speed and Long Distance Networks, IEEE INFOCOM 2006; draft-sridharan-tcpm-ctcp-02; \
     ns-2.35 TCP-Linux compound (Castellani/Hemminger port)";

pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"draft\"",
        unit: "",
        doc: "\"draft\": Tan et al. 2006 / draft-sridharan-tcpm-ctcp-02; \"ns2\": the ns-2.35 \
              TCP-Linux compound port",
    },
    super::ParamDoc {
        name: "alpha",
        default: "0.125",
        unit: "1",
        doc: "α of the increase α·win^k per RTT (paper 1/8)",
    },
    super::ParamDoc {
        name: "beta",
        default: "0.5",
        unit: "1",
        doc: "multiplicative decrease of win on a loss (paper 1/2)",
    },
    super::ParamDoc {
        name: "k",
        default: "0.75",
        unit: "1",
        doc: "exponent of the increase (paper 0.75; 0.8 would match HighSpeed)",
    },
    super::ParamDoc {
        name: "gamma",
        default: "30.0",
        unit: "packets",
        doc: "γ: queued packets above which dwnd backs off (paper 30)",
    },
    super::ParamDoc {
        name: "zeta",
        default: "1.0",
        unit: "1",
        doc: "ζ: dwnd decreases by ζ·diff per RTT once diff >= γ (paper and port 1)",
    },
    super::ParamDoc {
        name: "low_window",
        default: "41",
        unit: "packets",
        doc: "draft only: the delay component acts from this window up (0 = always)",
    },
];

/// Typed parameters; unset fields take the variant's values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub variant: Option<String>,
    pub alpha: Option<f64>,
    pub beta: Option<f64>,
    pub k: Option<f64>,
    pub gamma: Option<f64>,
    pub zeta: Option<f64>,
    pub low_window: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Draft,
    Ns2,
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub variant: Variant,
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub gamma: f64,
    pub zeta: f64,
    pub low_window: u32,
}

impl Config {
    pub fn of(variant: Variant) -> Self {
        Config {
            variant,
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            gamma: 30.0,
            zeta: 1.0,
            low_window: if variant == Variant::Draft { 41 } else { 0 },
        }
    }
}

#[derive(Debug)]
pub struct Compound {
    cfg: Config,
    /// Reno's loss-based window (`cwnd` of the paper), segments.
    reno: u32,
    /// Delay-based window, segments.
    dwnd: u32,
    /// ACKed segments towards Reno's next +1.
    ack_cnt: u32,
    beg_snd_una: u64,
    beg_snd_nxt: u64,
    cnt_rtt: u32,
    min_rtt_ns: u64,
    base_rtt_ns: u64,
}

impl Compound {
    pub fn new(cfg: Config) -> Self {
        Compound {
            cfg,
            reno: 0,
            dwnd: 0,
            ack_cnt: 0,
            beg_snd_una: 0,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_ns: u64::MAX,
            base_rtt_ns: u64::MAX,
        }
    }

    /// The delay-based window (tests, monitors).
    pub fn dwnd(&self) -> u32 {
        self.dwnd
    }

    /// Reno's part of the window (tests).
    pub fn reno(&self) -> u32 {
        self.reno
    }

    /// The per-RTT increase of dwnd for a window of `w` segments: (α·w^k − 1)⁺.
    pub fn increase(&self, w: u64) -> u32 {
        match self.cfg.variant {
            // The port: qroot(w³) >> 3 in integers, then minus one when above one.
            Variant::Ns2 if self.cfg.alpha == 0.125 && self.cfg.k == 0.75 => {
                let x = ((w as f64).powi(3).powf(0.25).floor() as u64) >> 3;
                if x > 1 {
                    (x - 1) as u32
                } else {
                    0
                }
            }
            _ => (self.cfg.alpha * (w as f64).powf(self.cfg.k) - 1.0).max(0.0) as u32,
        }
    }

    /// dwnd after a round with `old_wnd` segments sent and Vegas' `diff` (packets queued).
    pub fn next_dwnd(&self, old_wnd: u64, diff: f64) -> u32 {
        let diff = if self.cfg.variant == Variant::Ns2 {
            (diff * 2.0).floor() / 2.0 // V_PARAM_SHIFT 1: half packets
        } else {
            diff
        };
        if diff < self.cfg.gamma {
            self.dwnd.saturating_add(self.increase(old_wnd))
        } else {
            (self.dwnd as f64 - self.cfg.zeta * diff).max(0.0) as u32
        }
    }

    /// Follow a window the sender changed (a cut at recovery, an undo): ns-2 port rule.
    fn resync(&mut self, cwnd: u32) {
        let win = self.reno.saturating_add(self.dwnd);
        if win > cwnd {
            if self.reno > cwnd || self.dwnd > cwnd {
                self.reno = cwnd;
                self.dwnd = 0;
            } else {
                self.reno = cwnd - self.dwnd;
            }
        } else if win < cwnd {
            self.reno = cwnd - self.dwnd;
        }
    }

    fn end_round(&mut self, tp: &TcpState) {
        let old_wnd = self.beg_snd_nxt.saturating_sub(self.beg_snd_una);
        self.beg_snd_una = self.beg_snd_nxt;
        self.beg_snd_nxt = tp.snd_nxt;
        let allowed = match self.cfg.variant {
            Variant::Ns2 => true,
            Variant::Draft => !tp.in_slow_start() && tp.snd_cwnd >= self.cfg.low_window,
        };
        if allowed && self.cnt_rtt > 2 && self.min_rtt_ns != u64::MAX && old_wnd > 0 {
            let diff = old_wnd as f64 * (1.0 - self.base_rtt_ns as f64 / self.min_rtt_ns as f64);
            self.dwnd = self.next_dwnd(old_wnd, diff);
        }
        self.cnt_rtt = 0;
        self.min_rtt_ns = u64::MAX;
    }
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    let variant = match p.variant.as_deref().unwrap_or("draft") {
        "draft" => Variant::Draft,
        "ns2" => Variant::Ns2,
        other => return Err(format!("variant = {other:?}: must be \"draft\" or \"ns2\"")),
    };
    let mut c = Config::of(variant);
    if let Some(v) = p.alpha {
        super::check(v > 0.0 && v.is_finite(), "alpha", v, "> 0")?;
        c.alpha = v;
    }
    if let Some(v) = p.beta {
        super::check(v > 0.0 && v < 1.0, "beta", v, "in (0, 1)")?;
        c.beta = v;
    }
    if let Some(v) = p.k {
        super::check(v > 0.0 && v <= 1.0, "k", v, "in (0, 1]")?;
        c.k = v;
    }
    if let Some(v) = p.gamma {
        super::check(v > 0.0 && v.is_finite(), "gamma", v, "> 0 packets")?;
        c.gamma = v;
    }
    if let Some(v) = p.zeta {
        super::check(v > 0.0 && v.is_finite(), "zeta", v, "> 0")?;
        c.zeta = v;
    }
    if let Some(v) = p.low_window {
        super::check(
            variant == Variant::Draft || v == 0,
            "low_window",
            v,
            "0 with variant \"ns2\" (the port has none)",
        )?;
        c.low_window = v;
    }
    Ok(Box::new(Compound::new(c)))
}

impl CongestionOps for Compound {
    /// ns-2.35's module has `.min_cwnd = tcp_reno_min_cwnd` (ns-2's recovery rule only).
    fn min_cwnd(&self, tp: &TcpState) -> Option<u32> {
        super::reno_min_cwnd(tp)
    }

    fn name(&self) -> &'static str {
        "compound"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.reno = tp.snd_cwnd;
        self.dwnd = 0;
        self.ack_cnt = 0;
        self.beg_snd_una = tp.snd_una;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_ns = u64::MAX;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.resync(tp.snd_cwnd);
        match self.cfg.variant {
            Variant::Ns2 => super::reno_ssthresh(tp),
            Variant::Draft => {
                let win = tp.snd_cwnd as f64;
                let target = ((win * (1.0 - self.cfg.beta)) as u32).max(2);
                self.reno = (self.reno / 2).max(1).min(target);
                self.dwnd = target - self.reno;
                target
            }
        }
    }

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.dwnd = 0;
            self.reno = tp.snd_cwnd;
            self.beg_snd_una = tp.snd_una;
            self.beg_snd_nxt = tp.snd_nxt;
            self.cnt_rtt = 0;
            self.min_rtt_ns = u64::MAX;
        }
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, sample: &super::AckSample) {
        if let Some(r) = sample.rtt {
            let r = r.as_nanos().max(1);
            self.base_rtt_ns = self.base_rtt_ns.min(r);
            self.min_rtt_ns = self.min_rtt_ns.min(r);
            self.cnt_rtt += 1;
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        self.resync(tp.snd_cwnd);
        if !tp.is_cwnd_limited {
            return;
        }
        match self.cfg.variant {
            // The port (tcp_compound.c `tcp_compound_cong_avoid`) counts calls, that is ACKs,
            // not segments: Reno's part grows by one per ACK while it is at or below ssthresh,
            // and otherwise by one per snd_cwnd ACKs counted in the sender's `snd_cwnd_cnt`
            // (which the agent clears on entering Recovery or Loss). After a loss a cumulative
            // ACK covering many segments thus adds one, not all of them.
            Variant::Ns2 => {
                let mut inc = false;
                if self.reno <= tp.snd_ssthresh {
                    inc = true;
                } else if tp.snd_cwnd_cnt < tp.snd_cwnd {
                    tp.snd_cwnd_cnt += 1;
                }
                if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                    inc = true;
                    tp.snd_cwnd_cnt = 0;
                }
                if inc && tp.snd_cwnd < tp.snd_cwnd_clamp {
                    self.reno += 1;
                }
            }
            Variant::Draft => {
                if self.reno < tp.snd_ssthresh {
                    self.reno = self.reno.saturating_add(acked);
                } else {
                    // One segment per win ACKed segments (counted against the total window).
                    self.ack_cnt += acked;
                    let w = tp.snd_cwnd.max(1);
                    if self.ack_cnt >= w {
                        self.reno += self.ack_cnt / w;
                        self.ack_cnt %= w;
                    }
                }
            }
        }
        if tp.snd_una > self.beg_snd_nxt {
            self.end_round(tp);
        }
        tp.snd_cwnd = self
            .reno
            .saturating_add(self.dwnd)
            .clamp(1, tp.snd_cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;
    use crate::cc::AckSample;
    use fatpipe_core::SimTime;

    fn ctcp(variant: Variant) -> Compound {
        Compound::new(Config::of(variant))
    }

    #[test]
    fn increase_is_alpha_win_to_the_k_minus_one() {
        let c = ctcp(Variant::Draft);
        // 0.125·1000^0.75 = 0.125·177.83 = 22.23 → 21 after the −1 (whole segments).
        assert_eq!(c.increase(1000), 21);
        // 0.125·10000^0.75 = 125 → 124.
        assert_eq!(c.increase(10_000), 124);
        // Small windows: α·w^k ≤ 1 gives nothing (w ≤ 16: 0.125·8 = 1).
        assert_eq!(c.increase(16), 0);
        // The port's integer form: fourth root of 1000³ = 177 (floor), >> 3 = 22, minus 1 = 21.
        assert_eq!(ctcp(Variant::Ns2).increase(1000), 21);
        // 100³ = 10⁶, fourth root ⌊31.6⌋ = 31, >> 3 = 3, minus one = 2.
        assert_eq!(ctcp(Variant::Ns2).increase(100), 2);
    }

    #[test]
    fn dwnd_backs_off_by_zeta_diff_above_gamma() {
        let mut c = ctcp(Variant::Draft);
        c.dwnd = 100;
        // diff 29 < γ: grows by the increase of the window.
        assert_eq!(c.next_dwnd(1000, 29.0), 121);
        // diff 40 ≥ γ: 100 − 1·40 = 60.
        assert_eq!(c.next_dwnd(1000, 40.0), 60);
        // Never below zero.
        assert_eq!(c.next_dwnd(1000, 400.0), 0);
        // ns2 rounds diff down to half packets: 29.9 → 29.5 < 30 still grows.
        let mut n = ctcp(Variant::Ns2);
        n.dwnd = 100;
        assert_eq!(n.next_dwnd(1000, 29.9), 121);
    }

    #[test]
    fn loss_halves_win_and_dwnd_takes_what_reno_leaves() {
        // draft: win = 600 (reno 200 + dwnd 400) → win·(1 − β) = 300; reno 100, dwnd 200
        // (= 300 − 200/2, the paper's (win(1 − β) − cwnd/2)⁺).
        let mut c = ctcp(Variant::Draft);
        let mut tp = state(600, 100);
        c.reno = 200;
        c.dwnd = 400;
        assert_eq!(c.ssthresh(&tp), 300);
        assert_eq!((c.reno(), c.dwnd()), (100, 200));
        // ns2: Reno's ssthresh; when the sender sets cwnd = 300, dwnd (400) no longer fits:
        // the port puts everything in Reno's part (and, at ssthresh, `vegas->cwnd <=
        // snd_ssthresh`, this ACK adds one).
        let mut n = ctcp(Variant::Ns2);
        n.reno = 200;
        n.dwnd = 400;
        assert_eq!(n.ssthresh(&tp), 300);
        tp.snd_cwnd = 300;
        tp.snd_ssthresh = 300;
        n.cong_avoid(&mut tp, 1);
        assert_eq!((n.reno(), n.dwnd()), (301, 0));
        // … and when it fits, dwnd is kept and Reno's part absorbs the cut.
        n.reno = 100;
        n.dwnd = 100;
        tp.snd_cwnd = 150;
        tp.snd_ssthresh = 40; // congestion avoidance: one ACK adds nothing yet
        n.cong_avoid(&mut tp, 1);
        assert_eq!((n.reno(), n.dwnd()), (50, 100));
    }

    #[test]
    fn one_round_below_gamma_grows_win_by_alpha_win_to_the_k() {
        // Congestion avoidance at win 1000, no queueing (RTT = baseRTT): after one round of 1000
        // ACKs win = 1000 + 1 (Reno) + 21 (dwnd).
        let mut c = ctcp(Variant::Draft);
        let mut tp = state(1000, 500);
        c.init(&mut tp);
        tp.snd_nxt = 1000;
        c.beg_snd_una = 0;
        c.beg_snd_nxt = 1000;
        for i in 1..=1001u64 {
            tp.now = SimTime::from_micros(100 * i);
            tp.snd_una = i;
            c.pkts_acked(
                &mut tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt: Some(SimTime::from_millis(100)),
                    in_flight: 1000,
                },
            );
            c.cong_avoid(&mut tp, 1);
            tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64;
        }
        assert_eq!(c.dwnd(), 21);
        assert_eq!(tp.snd_cwnd, 1000 + 1 + 21);
    }

    #[test]
    fn ns2_reno_part_grows_per_ack_not_per_segment_acknowledged() {
        // After a loss a cumulative ACK covers many segments. The port adds one segment per ACK
        // in slow start (reno <= ssthresh) and counts ACKs, not segments, towards the +1 of
        // congestion avoidance; the draft counts segments.
        let mut tp = state(2, 5);
        let mut n = ctcp(Variant::Ns2);
        n.init(&mut tp);
        n.cong_avoid(&mut tp, 10);
        assert_eq!((n.reno(), tp.snd_cwnd), (3, 3));
        let mut tp = state(2, 5);
        let mut d = ctcp(Variant::Draft);
        d.init(&mut tp);
        d.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd, 12);
        // Congestion avoidance at cwnd 10: ten ACKs of 5 segments each add one segment (ns2);
        // the draft adds one per 10 segments, five.
        let mut tp = state(10, 4);
        let mut n = ctcp(Variant::Ns2);
        n.init(&mut tp);
        for _ in 0..10 {
            n.cong_avoid(&mut tp, 5);
        }
        assert_eq!(tp.snd_cwnd, 11);
        let mut tp = state(10, 4);
        let mut d = ctcp(Variant::Draft);
        d.init(&mut tp);
        for _ in 0..10 {
            d.cong_avoid(&mut tp, 5);
        }
        assert!(tp.snd_cwnd >= 14, "{}", tp.snd_cwnd);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let t = |s: &str| toml::from_str::<toml::Table>(s).unwrap();
        for bad in [
            "beta = 1.0",
            "beta = 0.0",
            "alpha = 0.0",
            "k = 1.5",
            "gamma = 0.0",
            "zeta = -1.0",
            "variant = \"x\"",
            "variant = \"ns2\"\nlow_window = 41",
        ] {
            assert!(build(&t(bad)).is_err(), "{bad}");
        }
    }
}
