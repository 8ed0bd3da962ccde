//! Scalable TCP (STCP).
//!
//! Spec:    T. Kelly, "Scalable TCP: Improving Performance in Highspeed Wide Area Networks",
//!          ACM SIGCOMM Computer Communication Review 33(2):83-91, April 2003. MIMD: per ACK
//!          cwnd += a, on a congestion event cwnd -= ⌈b·cwnd⌉, with a = 0.01 and b = 0.125, and
//!          traditional TCP (Reno AIMD) while cwnd <= the legacy window lwnd = 16. The time to
//!          recover from a loss is log(1/(1−b))/log(1+a) RTTs (≈ 13.4) whatever the rate.
//! Mirrors: Linux net/ipv4/tcp_scalable.c (J. Heffner) as carried by ns-2.35 TCP-Linux
//!          (tcp/linux/src/tcp_scalable.c, "from linux-2.6.22.6").
//!
//! Two parameter sets (`variant`):
//! - `"linux"` (default): per ACK in congestion avoidance a counter counts ACKs; when it exceeds
//!   min(cwnd, ai_cnt) cwnd grows by one and the counter restarts, so one segment per
//!   min(cwnd, ai_cnt) + 1 ACKs (2.6.22 tests `>`; kernels from 2.6.26 use `tcp_cong_avoid_ai`,
//!   one per min(cwnd, ai_cnt) ACKs). ai_cnt = 50, "50 instead of 100 to account for delayed ack"
//!   (Linux comment): a = 1/51 per ACK without delayed ACKs. On loss
//!   ssthresh = max(cwnd − ⌊cwnd/8⌋, 2) (`cwnd - (cwnd >> 3)`). Linux has no explicit legacy
//!   window: below ai_cnt = 50 segments the min() makes the increase Reno's (one per cwnd ACKs),
//!   but the decrease stays 1/8 at every window, and ns-2.35's module is the same code.
//! - `"paper"`: a = 0.01 (one segment per ai_cnt = 100 ACKs) above lwnd = 16, Reno at or below it
//!   (one segment per cwnd ACKs, halve on loss); decrease ⌈b·cwnd⌉ above lwnd.
//!
//! Constants and their sources:
//! - a = 0.01, b = 0.125, lwnd = 16: Kelly 2003 (algorithm and legacy-window discussion).
//! - ai_cnt = 50, MD shift 3 (b = 1/8): Linux `TCP_SCALABLE_AI_CNT`, `TCP_SCALABLE_MD_SCALE`
//!   (2.6.22; a 2021 kernel patch, "properly handle stretch ACKs", set ai_cnt to 100 when the
//!   module started counting acked segments).
//!
//! Choices:
//! - Growth counts ACKs, not segments, in congestion avoidance (both sources say "per ACK"; Linux
//!   counts ACKs until the 2021 patch); slow start uses the shared helper.
//! - Slow start is `cwnd < ssthresh` (the project's `in_slow_start`); 2.6.22 used `<=`.
//! - The paper variant's legacy test is `cwnd <= lwnd` for both increase and decrease.
//!
//! Michel 2009 (seed 000, §3.7) used an ns-2.29 STCP of unstated origin with a = 0.01, b = 0.125
//! (Kelly's values): `variant = "paper"`, not the default.

use super::{cong_avoid_ai, slow_start, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str = "Scalable TCP (Kelly 2003): MIMD, +1/ai_cnt per ACK, -1/8 on loss";
pub const CITATION: &str = "T. Kelly, Scalable TCP: Improving Performance in Highspeed Wide Area \
     Networks, ACM CCR 33(2), 2003; Linux net/ipv4/tcp_scalable.c (2.6.22.6, ns-2.35 TCP-Linux \
     scalable)";

pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"linux\"",
        unit: "",
        doc: "\"linux\": Linux 2.6.22 tcp_scalable.c (ns-2.35 TCP-Linux); \"paper\": Kelly 2003 \
              (a = 0.01, legacy window 16)",
    },
    super::ParamDoc {
        name: "ai_cnt",
        default: "50",
        unit: "ACKs",
        doc: "ACKs per one-segment increase above the legacy window, a = 1/ai_cnt \
              (linux 50, paper 100)",
    },
    super::ParamDoc {
        name: "b",
        default: "0.125",
        unit: "1",
        doc: "fraction of cwnd removed on a loss (Kelly b; Linux cwnd >> 3)",
    },
    super::ParamDoc {
        name: "low_window",
        default: "0",
        unit: "segments",
        doc: "legacy window lwnd: Reno AIMD at or below it (paper 16; linux 0 = none)",
    },
];

/// Typed parameters; unset fields take the variant's values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub variant: Option<String>,
    pub ai_cnt: Option<u32>,
    pub b: Option<f64>,
    pub low_window: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Variant {
    Linux,
    Paper,
}

#[derive(Debug)]
pub struct Scalable {
    variant: Variant,
    ai_cnt: u32,
    b: f64,
    low_window: u32,
}

impl Scalable {
    pub fn new(variant: Variant) -> Self {
        match variant {
            Variant::Linux => Scalable {
                variant,
                ai_cnt: 50,
                b: 0.125,
                low_window: 0,
            },
            Variant::Paper => Scalable {
                variant,
                ai_cnt: 100,
                b: 0.125,
                low_window: 16,
            },
        }
    }
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    let variant = match p.variant.as_deref().unwrap_or("linux") {
        "linux" => Variant::Linux,
        "paper" => Variant::Paper,
        other => {
            return Err(format!(
                "variant = {other:?}: must be \"linux\" or \"paper\""
            ))
        }
    };
    let mut s = Scalable::new(variant);
    if let Some(v) = p.ai_cnt {
        super::check(v >= 1, "ai_cnt", v, ">= 1 ACK")?;
        s.ai_cnt = v;
    }
    if let Some(v) = p.b {
        super::check(v > 0.0 && v < 1.0, "b", v, "in (0, 1)")?;
        s.b = v;
    }
    if let Some(v) = p.low_window {
        s.low_window = v;
    }
    Ok(Box::new(s))
}

impl CongestionOps for Scalable {
    /// ns-2.35's module has `.min_cwnd = tcp_reno_min_cwnd` (ns-2's recovery rule only).
    fn min_cwnd(&self, tp: &TcpState) -> Option<u32> {
        super::reno_min_cwnd(tp)
    }

    fn name(&self) -> &'static str {
        "scalable"
    }
    /// No `.pkts_acked` (Linux's module has none).
    fn has_pkts_acked(&self) -> bool {
        false
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let w = tp.snd_cwnd;
        if w <= self.low_window {
            return (w / 2).max(2);
        }
        let cut = match self.variant {
            // Linux: cwnd >> 3 for b = 1/8, i.e. rounded down.
            Variant::Linux => (w as f64 * self.b).floor(),
            // Kelly: ⌈b·cwnd⌉.
            Variant::Paper => (w as f64 * self.b).ceil(),
        } as u32;
        w.saturating_sub(cut).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited || acked == 0 {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
            return;
        }
        if tp.snd_cwnd <= self.low_window {
            let w = tp.snd_cwnd;
            cong_avoid_ai(tp, w, 1);
            return;
        }
        match self.variant {
            Variant::Linux => {
                // 2.6.22: count this ACK, grow once the count exceeds min(cwnd, ai_cnt).
                tp.snd_cwnd_cnt += 1;
                if tp.snd_cwnd_cnt > tp.snd_cwnd.min(self.ai_cnt) {
                    if tp.snd_cwnd < tp.snd_cwnd_clamp {
                        tp.snd_cwnd += 1;
                    }
                    tp.snd_cwnd_cnt = 0;
                }
            }
            Variant::Paper => cong_avoid_ai(tp, self.ai_cnt, 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;

    fn acks_to_grow(s: &mut Scalable, tp: &mut TcpState) -> u32 {
        let w = tp.snd_cwnd;
        let mut n = 0;
        while tp.snd_cwnd == w {
            s.cong_avoid(tp, 1);
            n += 1;
            assert!(n < 10_000);
        }
        n
    }

    #[test]
    fn linux_increase_counts_min_cwnd_ai_cnt_plus_one_acks() {
        let mut s = Scalable::new(Variant::Linux);
        let mut tp = state(200, 100);
        assert_eq!(acks_to_grow(&mut s, &mut tp), 51); // count must exceed 50
        assert_eq!(tp.snd_cwnd, 201);
        let mut tp = state(30, 10);
        assert_eq!(acks_to_grow(&mut s, &mut tp), 31); // Reno-like below 50
                                                       // One ACK counts once whatever it covers.
        let mut tp = state(200, 100);
        s.cong_avoid(&mut tp, 40);
        assert_eq!(tp.snd_cwnd_cnt, 1);
    }

    #[test]
    fn linux_decrease_is_an_eighth_rounded_down_at_every_window() {
        let mut s = Scalable::new(Variant::Linux);
        assert_eq!(s.ssthresh(&state(200, 1)), 175);
        assert_eq!(s.ssthresh(&state(201, 1)), 176); // 201 - 25
        assert_eq!(s.ssthresh(&state(10, 1)), 9); // 10 - 1: no legacy halving
        assert_eq!(s.ssthresh(&state(2, 1)), 2);
    }

    #[test]
    fn paper_increase_and_decrease() {
        let mut s = Scalable::new(Variant::Paper);
        let mut tp = state(200, 100);
        assert_eq!(acks_to_grow(&mut s, &mut tp), 100); // a = 0.01 per ACK
        let mut tp = state(16, 10);
        assert_eq!(acks_to_grow(&mut s, &mut tp), 16); // legacy: Reno
        let mut tp = state(17, 10);
        assert_eq!(acks_to_grow(&mut s, &mut tp), 100);
        assert_eq!(s.ssthresh(&state(200, 1)), 175);
        assert_eq!(s.ssthresh(&state(201, 1)), 175); // 201 - ceil(25.125)
        assert_eq!(s.ssthresh(&state(16, 1)), 8); // legacy: halve
    }

    #[test]
    fn paper_recovery_time_is_log_ratio_rtts() {
        // One RTT = one window of ACKs. After a loss at W = 1000 the window is 875; it grows by
        // ~1% per RTT, so it regains 1000 after log(1000/875)/log(1.01) = 13.42 RTTs, i.e. in
        // the 14th (integer windows add < 1 RTT).
        for w0 in [1000u32, 8000] {
            let mut s = Scalable::new(Variant::Paper);
            let mut tp = state(w0, 1);
            tp.snd_cwnd = s.ssthresh(&tp);
            tp.snd_ssthresh = tp.snd_cwnd;
            let mut rtts = 0;
            while tp.snd_cwnd < w0 {
                let n = tp.snd_cwnd;
                for _ in 0..n {
                    s.cong_avoid(&mut tp, 1);
                }
                rtts += 1;
            }
            let expect = (1.0f64 / 0.875).ln() / 1.01f64.ln();
            assert!(
                (rtts as f64 - expect).abs() <= 1.0,
                "W = {w0}: {rtts} RTTs, expected {expect:.2}"
            );
        }
    }

    #[test]
    fn parameters_override_and_are_checked() {
        let t = |s: &str| -> toml::Table { toml::from_str(s).unwrap() };
        assert!(build(&t("variant = \"paper\"\nai_cnt = 50")).is_ok());
        assert!(build(&t("b = 1.0")).unwrap_err().contains("b = 1"));
        assert!(build(&t("ai_cnt = 0")).unwrap_err().contains("ai_cnt"));
        assert!(build(&t("variant = \"kelly\"")).is_err());
        // low_window given to the linux set: Reno below it.
        let mut s = Scalable::new(Variant::Linux);
        s.low_window = 16;
        assert_eq!(s.ssthresh(&state(16, 1)), 8);
    }
}
