//! HighSpeed TCP (HSTCP).
//!
//! Spec:    S. Floyd, "HighSpeed TCP for Large Congestion Windows", RFC 3649 (Experimental),
//!          December 2003. Congestion avoidance becomes AIMD(a(w), b(w)): per ACK
//!          w += a(w)/w, on loss w -= b(w)·w, with Standard TCP (a = 1, b = 0.5) for
//!          w <= Low_Window. §5 defines the response function w = 0.12/p^0.835 through
//!          log-log linear interpolation between (Low_Window, Low_P) and (High_Window, High_P):
//!            b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)/(log High_Window − log Low_Window) + 0.5
//!            p(w) = exp(log Low_P + (log w − log Low_Window)/(log High_Window − log Low_Window)
//!                                   ·(log High_P − log Low_P))
//!            a(w) = w²·p(w)·2·b(w)/(2 − b(w))
//!          Appendix B tabulates w, a(w), b(w) from w = 38 up.
//! Mirrors: Linux net/ipv4/tcp_highspeed.c (J. Heffner) as carried by ns-2.35 TCP-Linux
//!          (tcp/linux/src/tcp_highspeed.c, "from linux-2.6.22.6"); the module has not changed in
//!          substance since (later kernels only pass `acked` to slow start).
//!
//! Two parameter sets (`variant`):
//! - `"linux"` (default): Linux's step table. Its rows are the w column of RFC 3649 Appendix B;
//!   between two rows the increase is the row's a (= row index + 1, one segment per RTT more per
//!   row) and the decrease is the row's b(w) in 1/256 units, truncated (b·256 floored, e.g.
//!   0.44 -> 112). The row index follows cwnd up and down, but only in congestion avoidance, so a
//!   loss straight out of slow start still halves (index 0). Per ACK in congestion avoidance
//!   `snd_cwnd_cnt += a`, one segment when it reaches cwnd: a/cwnd per ACK. init clamps
//!   `snd_cwnd_clamp` to 2^32/128 so that cwnd·md fits in 32 bits (Linux).
//! - `"rfc3649"`: a(w), b(w) evaluated from the formulas above at the current window (continuous,
//!   no table), with Low_Window, High_Window, High_P, High_Decrease as parameters.
//!
//! Constants and their sources:
//! - Low_Window = 38, High_Window = 83000, High_P = 1e-7, High_Decrease = 0.1: RFC 3649 §5 (also
//!   ns-2 `Agent/TCP` `low_window_`, `high_window_`, `high_p_`, `high_decrease_`).
//! - Low_P = 1.5/Low_Window² (= 1.0388e-3 at 38): Standard TCP's response function
//!   w = sqrt(1.5/p) at Low_Window, RFC 3649 §5; ns-2 computes it the same way.
//! - 0.12 and 0.835 of w = 0.12/p^0.835: RFC 3649 §5 (the interpolation reproduces them, see test).
//! - Linux table (72 rows, w from 38 to 89053, md from 128 to 24): Linux tcp_highspeed.c
//!   `hstcp_aimd_vals`, taken from RFC 3649 Appendix B.
//!
//! Choices where sources are silent or differ:
//! - Window growth counts ACKs, not segments, in congestion avoidance (one a(w)/w per ACK, as the
//!   RFC writes it and as Linux does in every version); slow start uses the shared helper
//!   (`acked` segments, limited by the sender's `cwnd_growth`).
//! - Slow start is `cwnd < ssthresh` (the project's `in_slow_start`, Linux >= 2.6.31); 2.6.22 used
//!   `<=`, which differs by one ACK after each recovery.
//! - `"rfc3649"` evaluates a(w), b(w) at min(w, High_Window): the RFC designs the function up to
//!   High_Window and the formulas would drive b(w) to zero near w = 5.7e5.
//! - Neither set implements ns-2's own HSTCP (`windowOption_ 8`) quirks nor Limited Slow Start
//!   (RFC 3742; ns-2 `max_ssthresh_ 0` disables it too).
//!
//! Michel 2009 (seed 000, §3.4) used ns-2.29's built-in HSTCP (`windowOption_ 8`, the RFC formulas
//! with the defaults above, halving outside congestion avoidance); the closest set here is
//! `variant = "rfc3649"`, not the default.
//!
//! The response-function pieces ([`Response::a`], [`Response::b`], [`Response::p`], their
//! derivatives [`Response::a_prime`], [`Response::b_prime`], and [`response_window`]) are public so that fluid models (e.g. the 2008 AQM study, seed 003) can
//! reuse them.

use super::{slow_start, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "HighSpeed TCP (RFC 3649): AIMD with a(w), b(w) growing more aggressive above 38 segments";
pub const CITATION: &str =
    "S. Floyd, HighSpeed TCP for Large Congestion Windows, RFC 3649, Dec 2003; \
     Linux net/ipv4/tcp_highspeed.c (2.6.22.6, ns-2.35 TCP-Linux highspeed)";

pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"linux\"",
        unit: "",
        doc: "\"linux\": Linux's step table of RFC 3649 Appendix B (ns-2.35 TCP-Linux); \
              \"rfc3649\": a(w), b(w) computed from the RFC 3649 formulas",
    },
    super::ParamDoc {
        name: "low_window",
        default: "38",
        unit: "segments",
        doc: "Low_Window: Standard TCP at or below it (RFC 3649 §5); only \"rfc3649\" may change it",
    },
    super::ParamDoc {
        name: "high_window",
        default: "83000",
        unit: "segments",
        doc: "High_Window: the window reached at High_P (RFC 3649 §5); only \"rfc3649\" may change it",
    },
    super::ParamDoc {
        name: "high_p",
        default: "1e-7",
        unit: "1",
        doc: "High_P: packet drop rate at High_Window (RFC 3649 §5); only \"rfc3649\" may change it",
    },
    super::ParamDoc {
        name: "high_decrease",
        default: "0.1",
        unit: "1",
        doc: "High_Decrease: b(High_Window) (RFC 3649 §5); only \"rfc3649\" may change it",
    },
];

/// Typed parameters; unset fields take the variant's values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub variant: Option<String>,
    pub low_window: Option<f64>,
    pub high_window: Option<f64>,
    pub high_p: Option<f64>,
    pub high_decrease: Option<f64>,
}

/// The RFC 3649 response function and its AIMD parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Response {
    /// Low_Window, segments.
    pub low_window: f64,
    /// High_Window, segments.
    pub high_window: f64,
    /// High_P, packet drop rate at High_Window.
    pub high_p: f64,
    /// High_Decrease, b(High_Window).
    pub high_decrease: f64,
}

impl Default for Response {
    fn default() -> Self {
        Self::RFC3649
    }
}

impl Response {
    /// RFC 3649 §5 values.
    pub const RFC3649: Response = Response {
        low_window: 38.0,
        high_window: 83000.0,
        high_p: 1e-7,
        high_decrease: 0.1,
    };

    /// Low_P = 1.5/Low_Window²: Standard TCP's drop rate at Low_Window.
    pub fn low_p(&self) -> f64 {
        1.5 / (self.low_window * self.low_window)
    }

    /// Position of `w` between Low_Window (0) and High_Window (1) on a log scale.
    fn position(&self, w: f64) -> f64 {
        (w.ln() - self.low_window.ln()) / (self.high_window.ln() - self.low_window.ln())
    }

    /// p(w): the drop rate at which HSTCP's average window is `w` (log-log interpolation; Standard
    /// TCP's 1.5/w² at or below Low_Window).
    pub fn p(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.5 / (w * w);
        }
        let (lp, hp) = (self.low_p().ln(), self.high_p.ln());
        (lp + self.position(w) * (hp - lp)).exp()
    }

    /// b(w): fraction of the window removed on a loss (0.5 at or below Low_Window).
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        (self.high_decrease - 0.5) * self.position(w) + 0.5
    }

    /// a(w): segments added per RTT in congestion avoidance (1 at or below Low_Window).
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        w * w * self.p(w) * 2.0 * b / (2.0 - b)
    }

    /// db/dw (0 at or below Low_Window), for linearised fluid models.
    pub fn b_prime(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.0;
        }
        (self.high_decrease - 0.5) / (w * (self.high_window.ln() - self.low_window.ln()))
    }

    /// da/dw (0 at or below Low_Window): a·[(2 + s)/w + 2b'/(b(2 − b))] with s the log-log slope
    /// of p(w) (≈ −1.2, so (2 + s) ≈ 0.8).
    pub fn a_prime(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.0;
        }
        let s =
            (self.high_p.ln() - self.low_p().ln()) / (self.high_window.ln() - self.low_window.ln());
        let b = self.b(w);
        self.a(w) * ((2.0 + s) / w + 2.0 * self.b_prime(w) / (b * (2.0 - b)))
    }
}

/// a(w) with the RFC 3649 defaults.
pub fn a(w: f64) -> f64 {
    Response::RFC3649.a(w)
}

/// b(w) with the RFC 3649 defaults.
pub fn b(w: f64) -> f64 {
    Response::RFC3649.b(w)
}

/// p(w) with the RFC 3649 defaults.
pub fn p(w: f64) -> f64 {
    Response::RFC3649.p(w)
}

/// The closed form of HSTCP's response function, w = 0.12/p^0.835 (RFC 3649 §5).
pub fn response_window(p: f64) -> f64 {
    0.12 / p.powf(0.835)
}

/// Linux `hstcp_aimd_vals`: (upper window of the row, b in 1/256). Row i applies to windows in
/// (w[i-1], w[i]] with a = i + 1. The w column is RFC 3649 Appendix B's.
pub const LINUX_AIMD: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    Linux,
    Rfc3649,
}

#[derive(Debug)]
pub struct HighSpeed {
    variant: Variant,
    resp: Response,
    /// Linux `ca->ai`: the current row of [`LINUX_AIMD`].
    ai: usize,
    /// rfc3649: fractional segments accumulated towards the next increment.
    frac: f64,
    /// rfc3649: cwnd after our last update (a change by the sender resets `frac`).
    last_cwnd: u32,
}

impl HighSpeed {
    pub fn new(variant: Variant, resp: Response) -> Self {
        HighSpeed {
            variant,
            resp,
            ai: 0,
            frac: 0.0,
            last_cwnd: 0,
        }
    }

    /// The Linux row index for the current state (tests).
    pub fn linux_row(&self) -> usize {
        self.ai
    }

    /// Move the row index so that w[ai-1] < cwnd <= w[ai] (or to the last row).
    fn update_row(&mut self, cwnd: u32) {
        while self.ai < LINUX_AIMD.len() - 1 && cwnd > LINUX_AIMD[self.ai].0 {
            self.ai += 1;
        }
        while self.ai > 0 && cwnd <= LINUX_AIMD[self.ai - 1].0 {
            self.ai -= 1;
        }
    }
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    let variant = match p.variant.as_deref().unwrap_or("linux") {
        "linux" => Variant::Linux,
        "rfc3649" => Variant::Rfc3649,
        other => {
            return Err(format!(
                "variant = {other:?}: must be \"linux\" or \"rfc3649\""
            ))
        }
    };
    let d = Response::RFC3649;
    let resp = Response {
        low_window: p.low_window.unwrap_or(d.low_window),
        high_window: p.high_window.unwrap_or(d.high_window),
        high_p: p.high_p.unwrap_or(d.high_p),
        high_decrease: p.high_decrease.unwrap_or(d.high_decrease),
    };
    if variant == Variant::Linux && resp != d {
        return Err(
            "low_window, high_window, high_p and high_decrease are fixed by the Linux \
                    table (RFC 3649 values); use variant = \"rfc3649\" to change them"
                .into(),
        );
    }
    super::check(
        resp.low_window >= 1.0,
        "low_window",
        resp.low_window,
        ">= 1 segment",
    )?;
    super::check(
        resp.high_window > resp.low_window,
        "high_window",
        resp.high_window,
        "> low_window",
    )?;
    super::check(
        resp.high_p > 0.0 && resp.high_p < resp.low_p(),
        "high_p",
        resp.high_p,
        "in (0, Low_P = 1.5/low_window^2)",
    )?;
    super::check(
        resp.high_decrease > 0.0 && resp.high_decrease <= 0.5,
        "high_decrease",
        resp.high_decrease,
        "in (0, 0.5]",
    )?;
    Ok(Box::new(HighSpeed::new(variant, resp)))
}

impl CongestionOps for HighSpeed {
    /// ns-2.35's module has `.min_cwnd = tcp_reno_min_cwnd` (ns-2's recovery rule only).
    fn min_cwnd(&self, tp: &TcpState) -> Option<u32> {
        super::reno_min_cwnd(tp)
    }

    fn name(&self) -> &'static str {
        "highspeed"
    }
    /// No `.pkts_acked` (Linux's module has none).
    fn has_pkts_acked(&self) -> bool {
        false
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.ai = 0;
        self.frac = 0.0;
        if self.variant == Variant::Linux {
            // Linux: keep cwnd * md (md < 2^7) within 32 bits.
            tp.snd_cwnd_clamp = tp.snd_cwnd_clamp.min(u32::MAX / 128);
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let w = tp.snd_cwnd;
        self.frac = 0.0;
        match self.variant {
            Variant::Linux => {
                let md = LINUX_AIMD[self.ai].1 as u64;
                let cut = (w as u64 * md) >> 8;
                (w - cut as u32).max(2)
            }
            Variant::Rfc3649 => {
                let wf = w as f64;
                let b = self.resp.b(wf.min(self.resp.high_window));
                ((wf * (1.0 - b)).floor() as u32).max(2)
            }
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited || acked == 0 {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
            return;
        }
        match self.variant {
            Variant::Linux => {
                self.update_row(tp.snd_cwnd);
                if tp.snd_cwnd < tp.snd_cwnd_clamp {
                    tp.snd_cwnd_cnt += self.ai as u32 + 1;
                    if tp.snd_cwnd_cnt >= tp.snd_cwnd {
                        tp.snd_cwnd_cnt -= tp.snd_cwnd;
                        tp.snd_cwnd += 1;
                    }
                }
            }
            Variant::Rfc3649 => {
                if tp.snd_cwnd < self.last_cwnd {
                    // The sender cut cwnd (recovery or timeout): start a fresh count.
                    self.frac = 0.0;
                }
                let w = tp.snd_cwnd as f64;
                self.frac += self.resp.a(w.min(self.resp.high_window)) / w;
                // (the epsilon absorbs float sums such as 30 × 1/30 = 0.99999…)
                if self.frac >= 1.0 - 1e-9 {
                    let n = (self.frac + 1e-9).floor();
                    self.frac = (self.frac - n).max(0.0);
                    tp.snd_cwnd = (tp.snd_cwnd + n as u32).min(tp.snd_cwnd_clamp);
                }
                self.last_cwnd = tp.snd_cwnd;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;

    /// RFC 3649 Appendix B rows (w, a(w), b(w)). The w column and b to two decimals are those
    /// Linux's `hstcp_aimd_vals` carries with its citation of Appendix B; a is the row number.
    fn rfc_rows() -> Vec<(f64, f64, f64)> {
        const B: [f64; 72] = [
            0.50, 0.44, 0.41, 0.38, 0.37, 0.35, 0.34, 0.33, 0.32, 0.31, 0.30, 0.29, 0.28, 0.28,
            0.27, 0.27, 0.26, 0.26, 0.25, 0.25, 0.24, 0.24, 0.23, 0.23, 0.22, 0.22, 0.22, 0.21,
            0.21, 0.21, 0.20, 0.20, 0.20, 0.19, 0.19, 0.19, 0.19, 0.18, 0.18, 0.18, 0.17, 0.17,
            0.17, 0.17, 0.16, 0.16, 0.16, 0.16, 0.15, 0.15, 0.15, 0.15, 0.14, 0.14, 0.14, 0.14,
            0.13, 0.13, 0.13, 0.13, 0.13, 0.12, 0.12, 0.12, 0.12, 0.11, 0.11, 0.11, 0.10, 0.10,
            0.10, 0.10,
        ];
        LINUX_AIMD
            .iter()
            .zip(B)
            .enumerate()
            .map(|(i, (&(w, _), b))| (w as f64, (i + 1) as f64, b))
            .collect()
    }

    #[test]
    fn formulas_match_hand_computed_values() {
        // Hand arithmetic from the RFC 3649 formulas (seed 000 §3.4 table, independently derived):
        // Low_P = 1.5/38^2 = 1.0388e-3; at w = 1000 the log position is ln(1000/38)/ln(83000/38)
        // = 3.2701/7.6889 = 0.42530, so b = 0.5 - 0.4*0.42530 = 0.32988, and
        // p = exp(ln 1.0388e-3 + 0.42530*(ln 1e-7 - ln 1.0388e-3)) = exp(-6.8697 - 3.9333)
        // = 2.034e-5, a = 1e6 * 2.034e-5 * 2*0.32988/1.67012 = 8.03.
        let r = Response::RFC3649;
        assert!((r.low_p() - 1.0388e-3).abs() < 1e-7);
        assert!((r.b(1000.0) - 0.32988).abs() < 1e-4, "{}", r.b(1000.0));
        assert!((r.p(1000.0) - 2.034e-5).abs() < 0.01e-5, "{}", r.p(1000.0));
        for (w, a_hand, b_hand) in [
            (38.0, 1.00, 0.50),
            (100.0, 1.88, 0.45),
            (1000.0, 8.03, 0.33),
            (10000.0, 29.9, 0.21),
            (83000.0, 72.5, 0.10),
        ] {
            assert!(
                (a(w) - a_hand).abs() <= 0.01 * a_hand,
                "a({w}) = {} vs {a_hand}",
                a(w)
            );
            assert!((b(w) - b_hand).abs() <= 0.005, "b({w}) = {}", b(w));
        }
        // The formulas join Standard TCP continuously at Low_Window.
        assert!((r.a(38.0001) - 1.0).abs() < 1e-3 && (r.b(38.0001) - 0.5).abs() < 1e-6);
        // b reaches High_Decrease and p reaches High_P at High_Window.
        assert!((b(83000.0) - 0.1).abs() < 1e-12 && (p(83000.0) / 1e-7 - 1.0).abs() < 1e-9);
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let r = Response::RFC3649;
        for w in [100.0, 1000.0, 10000.0, 60000.0] {
            let h = w * 1e-6;
            let da = (r.a(w + h) - r.a(w - h)) / (2.0 * h);
            let db = (r.b(w + h) - r.b(w - h)) / (2.0 * h);
            assert!((r.a_prime(w) / da - 1.0).abs() < 1e-5, "a'({w})");
            assert!((r.b_prime(w) / db - 1.0).abs() < 1e-5, "b'({w})");
        }
    }

    #[test]
    fn interpolation_is_the_closed_form_response_function() {
        // RFC 3649 §5: the interpolated p(w) is w = 0.12/p^0.835 (its constants are rounded, so
        // agreement within 3% over the designed range).
        for w in [50.0, 100.0, 1000.0, 10000.0, 83000.0] {
            let back = response_window(p(w));
            assert!((back / w - 1.0).abs() < 0.03, "w = {w}: {back}");
        }
    }

    #[test]
    fn computed_a_b_match_rfc_appendix_b() {
        // b(w): the RFC prints two decimals, so within half a unit of the last digit (+ float
        // slack). a(w): the RFC column is a whole number per row (the a used up to that row's w);
        // the formula at the row's w is a little above it (2.09 at w = 118, 72.74 at 84035): the
        // difference stays within 5% of a, never a whole step at the top rows.
        for (w, a_rfc, b_rfc) in rfc_rows() {
            let (ac, bc) = (a(w), b(w));
            assert!((bc - b_rfc).abs() <= 0.0051, "b({w}) = {bc} vs RFC {b_rfc}");
            assert!(
                (ac - a_rfc).abs() <= 0.05 * a_rfc,
                "a({w}) = {ac} vs RFC {a_rfc}"
            );
            assert!(ac >= a_rfc - 1e-9, "a({w}) = {ac} below the RFC's {a_rfc}");
        }
    }

    /// The Linux variant's increase and decrease at a window `w` in congestion avoidance.
    fn linux_at(w: u32) -> (u32, f64) {
        let mut hs = HighSpeed::new(Variant::Linux, Response::RFC3649);
        let mut tp = state(w, 2);
        hs.init(&mut tp);
        hs.cong_avoid(&mut tp, 1);
        let ai = hs.linux_row() as u32 + 1;
        let md = 1.0 - hs.ssthresh(&state(w, 2)) as f64 / w as f64;
        (ai, md)
    }

    #[test]
    fn linux_table_matches_the_rfc_within_its_steps() {
        // At each RFC row the Linux a is the RFC's a exactly and its b is the RFC's b truncated
        // to 1/256 (and rounded by the RFC to 0.01): within 1/256 + 0.005.
        let rows = rfc_rows();
        for &(w, a_rfc, b_rfc) in &rows {
            let (ai, md) = linux_at(w as u32);
            assert_eq!(ai as f64, a_rfc, "a at w = {w}");
            assert!((md - b_rfc).abs() <= 1.0 / 256.0 + 0.0051, "b at {w}: {md}");
        }
        // Between rows Linux holds a step: for w in (w_{k-1}, w_k] its a is k, while the formula
        // runs from a(w_{k-1}) to a(w_k); its b is b(w_k) truncated while the formula runs from
        // b(w_{k-1}) down to b(w_k). So Linux's a lies within [a(w) - 2, a(w) + 1] (one step, plus
        // the RFC table's own offset of up to 1.75 at the top, see above) and its b within
        // [b(w_k) - 1/256 - slack, b(w)] (the decrease is never larger than the formula's).
        // The window-dependent multiply also rounds the decrease down by < 1 segment: 1/w slack.
        let mut w = 39u32;
        while w <= 89053 {
            let (ai, md) = linux_at(w);
            let (ac, bc) = (a(w as f64), b(w as f64));
            assert!(
                ai as f64 >= ac - 2.0 && ai as f64 <= ac + 1.0,
                "w = {w}: Linux a {ai}, formula {ac}"
            );
            let k = LINUX_AIMD.iter().position(|r| w <= r.0).unwrap();
            let b_row = b(LINUX_AIMD[k].0 as f64);
            assert!(
                md <= bc + 1e-9 && md >= b_row - 1.0 / 256.0 - 1.0 / w as f64,
                "w = {w}: Linux b {md}, formula {bc}, row {b_row}"
            );
            w = w + w / 50 + 1;
        }
    }

    #[test]
    fn linux_increase_and_decrease_by_hand() {
        // cwnd 1000 lies in (851, 1058], row 7: a = 8, md = 83/256.
        let mut hs = HighSpeed::new(Variant::Linux, Response::RFC3649);
        let mut tp = state(1000, 500);
        hs.init(&mut tp);
        for _ in 0..124 {
            hs.cong_avoid(&mut tp, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1000, 992));
        hs.cong_avoid(&mut tp, 1); // 125 * 8 = 1000: one segment
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (1001, 0));
        assert_eq!(hs.linux_row(), 7);
        // 1001 - floor(1001 * 83 / 256) = 1001 - 324 = 677.
        assert_eq!(hs.ssthresh(&tp), 677);
        // One ACK counts once whatever it covers (Linux ignores `acked` here).
        let c = tp.snd_cwnd_cnt;
        hs.cong_avoid(&mut tp, 10);
        assert_eq!(tp.snd_cwnd_cnt, c + 8);
    }

    #[test]
    fn linux_row_follows_cwnd_down_and_is_frozen_in_slow_start() {
        let mut hs = HighSpeed::new(Variant::Linux, Response::RFC3649);
        let mut tp = state(5000, 100);
        hs.init(&mut tp);
        hs.cong_avoid(&mut tp, 1);
        assert_eq!(hs.linux_row(), 19); // (4596, 5036]
        tp.snd_cwnd = 200;
        hs.cong_avoid(&mut tp, 1);
        assert_eq!(hs.linux_row(), 2); // (118, 221]
                                       // Slow start does not move the row: a loss from slow start halves.
        let mut hs = HighSpeed::new(Variant::Linux, Response::RFC3649);
        let mut tp = state(3000, u32::MAX);
        hs.init(&mut tp);
        hs.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 3001);
        assert_eq!(hs.ssthresh(&tp), 3001 - 1500);
    }

    #[test]
    fn rfc_variant_uses_the_formulas() {
        let mut hs = HighSpeed::new(Variant::Rfc3649, Response::RFC3649);
        let mut tp = state(1000, 500);
        hs.init(&mut tp);
        // a(1000) = 8.03: 1000 ACKs add 8 segments (8.03 would need the window to stay at 1000).
        for _ in 0..1000 {
            hs.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 1008);
        // b(1000) = 0.32988: floor(1000 * 0.67012) = 670.
        tp.snd_cwnd = 1000;
        assert_eq!(hs.ssthresh(&tp), 670);
        // Standard TCP at or below Low_Window: halve, one segment per window of ACKs.
        let mut tp = state(30, 10);
        assert_eq!(hs.ssthresh(&tp), 15);
        for _ in 0..30 {
            hs.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 31);
    }

    #[test]
    fn parameters_are_checked() {
        let t = |s: &str| -> toml::Table { toml::from_str(s).unwrap() };
        assert!(build(&t("variant = \"rfc3649\"\nlow_window = 50")).is_ok());
        let e = build(&t("low_window = 50")).unwrap_err();
        assert!(e.contains("rfc3649"), "{e}");
        let e = build(&t("variant = \"rfc3649\"\nhigh_decrease = 0.7")).unwrap_err();
        assert!(e.contains("high_decrease"), "{e}");
        let e = build(&t("variant = \"rfc3649\"\nhigh_window = 10")).unwrap_err();
        assert!(e.contains("high_window"), "{e}");
        let e = build(&t("variant = \"paper\"")).unwrap_err();
        assert!(e.contains("variant"), "{e}");
    }
}
