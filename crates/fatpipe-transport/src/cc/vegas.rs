//! TCP Vegas: keep between α and β packets queued in the network, found from the RTT.
//!
//! Spec:    L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//!          Internet", IEEE JSAC 13(8):1465–1480, October 1995. BaseRTT = the smallest RTT
//!          measured; Expected = WindowSize/BaseRTT; Actual = WindowSize/RTT;
//!          Diff = (Expected − Actual)·BaseRTT, in packets (the extra packets queued); once per RTT
//!          cwnd += 1 if Diff < α, cwnd −= 1 if Diff > β, unchanged in between; slow start grows
//!          exponentially only every other RTT (the window is held in between so that Expected
//!          and Actual can be compared) and ends when Diff > γ. Losses are handled as in Reno.
//! Mirrors: Linux net/ipv4/tcp_vegas.c (v6.x): `tcp_vegas_pkts_acked` (baseRTT = minimum RTT
//!          ever, minRTT = minimum within the current RTT, RTT + 1 µs so none is zero),
//!          `tcp_vegas_cong_avoid` (one decision per RTT, when the ACK passes `beg_snd_nxt`, the
//!          snd_nxt recorded at the previous decision; Reno's rule when the RTT had at most 2
//!          samples), `vegas_enable`/`vegas_disable` (`tcp_vegas_state`: Vegas only in Open),
//!          `tcp_vegas_cwnd_event` (restart on TX_START), Reno's ssthresh and undo. Written from
//!          reading it, not copied. Round boundaries use the sender's snd_una/snd_nxt in
//!          segments (Linux: bytes; `after(ack, beg_snd_nxt)` ⇔ snd_una > beg_snd_nxt here).
//! Constants:
//!   - alpha = 2, beta = 4, gamma = 1 packets (Linux module parameters; the paper's experiments
//!     use α = 1, β = 3 and α = 2, β = 4, and γ = 1). Parameters, checked alpha ≥ 0,
//!     beta ≥ alpha, gamma ≥ 0.
//!   - at most 2 RTT samples in a round → Reno's rule for that round (Linux: with 2 samples the
//!     ACKs are probably delayed ones).
//!   - on leaving slow start cwnd = min(cwnd, cwnd·BaseRTT/RTT + 1) and ssthresh ≤ cwnd (Linux:
//!     match the measured rate; the paper only says Vegas switches to linear mode, so both
//!     variants do this); cwnd ≥ 2 after each decision (Linux).
//!   - ssthresh after a decision: max(ssthresh, ¾ cwnd) (Linux `tcp_current_ssthresh`, Vegas
//!     deciding only in Open).
//! Variants (`variant`), where the paper and Linux differ:
//!   - "linux" (default): Diff = cwnd·(RTT − BaseRTT)/BaseRTT, integer, as the current kernel
//!     (v6.x) computes it (the extra packets expressed at the base rate); slow start grows on
//!     every ACK (Linux: it increases every RTT in slow start, like Reno).
//!   - "paper": Diff = cwnd·(RTT − BaseRTT)/RTT = (Expected − Actual)·BaseRTT with Actual =
//!     cwnd/RTT. Older kernels (the 2.6.1x version with the `rtt_sample` hook, of the ns-2
//!     TCP-Linux era) computed this form too, in fixed point and with the window sent during the
//!     previous RTT in place of cwnd. Slow start grows only every other RTT and the slow-start
//!     exit test is made after the RTTs in which the window was held.
//!   - "ns2": Linux 2.6.22's tcp_vegas.c, the module ns-2.35 TCP-Linux carries (read in the
//!     ns-2.35 tree's 2.6.22 port): the decision judges the previous round, not cwnd: Diff =
//!     old_wnd − old_wnd·BaseRTT/RTT in fixed point with one fractional bit (α, β, γ scaled by
//!     2 as its module parameters are), old_wnd = the segments sent during the previous round
//!     (beg_snd_nxt − beg_snd_una); congestion avoidance steers cwnd by one towards the cwnd
//!     saved at the previous decision ± 1 (`beg_snd_cwnd`), so a run of "increase" decisions
//!     raises cwnd only every other round; slow start (cwnd ≤ ssthresh) grows by one per ACK
//!     and ends with ssthresh = 2 and cwnd = min(cwnd, target + 1) once Diff > γ; no
//!     `tcp_current_ssthresh` update.
//!   The two Diffs differ by the factor RTT/BaseRTT: negligible with a few packets queued on a
//!   long path, large when the queueing delay is comparable to the base RTT.
//! Not modelled: the paper's new retransmission mechanism (fine-grained timeout check on the
//! first duplicate ACKs); Linux does not implement it either.

use super::{reno_cong_avoid, slow_start, AckSample, CaEvent, CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "TCP Vegas (Brakmo & Peterson 1995): hold alpha..beta packets queued, judged from RTT vs base RTT";
pub const CITATION: &str = "Brakmo & Peterson, TCP Vegas: End to End Congestion Avoidance on a \
Global Internet, IEEE JSAC 13(8), 1995; Linux net/ipv4/tcp_vegas.c; ns-2 TCP-Linux vegas";
pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"linux\"",
        unit: "",
        doc: "\"linux\": Diff = cwnd(RTT − BaseRTT)/BaseRTT, slow start every RTT (Linux \
              tcp_vegas.c); \"paper\": Diff = cwnd(RTT − BaseRTT)/RTT, slow start doubling every \
              other RTT (Brakmo & Peterson 1995); \"ns2\": Linux 2.6.22 as ns-2.35 TCP-Linux \
              carries it (Diff of the previous round's window, cwnd steered towards the previous \
              decision's cwnd ± 1)",
    },
    super::ParamDoc {
        name: "alpha",
        default: "2",
        unit: "segments",
        doc: "below this many extra packets in the network cwnd grows by one per RTT (Linux \
              module parameter alpha)",
    },
    super::ParamDoc {
        name: "beta",
        default: "4",
        unit: "segments",
        doc: "above this many extra packets in the network cwnd shrinks by one per RTT (Linux \
              module parameter beta); at least alpha",
    },
    super::ParamDoc {
        name: "gamma",
        default: "1",
        unit: "segments",
        doc: "slow start ends when the extra packets exceed this (Linux module parameter gamma)",
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Linux,
    Paper,
    Ns2,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub variant: Variant,
    pub alpha: i64,
    pub beta: i64,
    pub gamma: i64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            variant: Variant::Linux,
            alpha: 2,
            beta: 4,
            gamma: 1,
        }
    }
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    super::check(p.alpha >= 0, "alpha", p.alpha, "at least 0")?;
    super::check(p.beta >= p.alpha, "beta", p.beta, "at least alpha")?;
    super::check(p.gamma >= 0, "gamma", p.gamma, "at least 0")?;
    Ok(Box::new(Vegas::new(&p)))
}

/// "No sample yet" for the RTT minima (Linux 0x7fffffff).
const NO_RTT: u64 = 0x7fff_ffff;

#[derive(Debug)]
pub struct Vegas {
    variant: Variant,
    alpha: u64,
    beta: u64,
    gamma: u64,
    /// snd_nxt (segments) when the current round began; the decision is due past it.
    beg_snd_nxt: u64,
    doing_vegas_now: bool,
    /// RTT samples in the current round and their minimum, µs.
    cnt_rtt: u32,
    min_rtt: u64,
    /// Smallest RTT ever, µs.
    base_rtt: u64,
    /// "paper" slow start: whether the current round may grow the window.
    ss_grow: bool,
    /// "ns2" (Linux 2.6.22): snd_una when the previous round began and cwnd at the previous
    /// decision.
    beg_snd_una: u64,
    beg_snd_cwnd: u32,
}

impl Vegas {
    pub fn new(p: &Params) -> Self {
        Vegas {
            variant: p.variant,
            alpha: p.alpha as u64,
            beta: p.beta as u64,
            gamma: p.gamma as u64,
            beg_snd_nxt: 0,
            doing_vegas_now: true,
            cnt_rtt: 0,
            min_rtt: NO_RTT,
            base_rtt: NO_RTT,
            ss_grow: true,
            beg_snd_una: 0,
            beg_snd_cwnd: 0,
        }
    }

    fn enable(&mut self, tp: &TcpState) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = tp.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }

    fn restart(&mut self, tp: &TcpState) {
        self.base_rtt = NO_RTT;
        self.ss_grow = true;
        self.enable(tp);
    }

    /// Extra packets in the network (Diff) for window `cwnd` and round RTT `rtt` (µs), integer.
    pub fn diff(&self, cwnd: u32, rtt: u64) -> u64 {
        let queued = cwnd as u64 * rtt.saturating_sub(self.base_rtt);
        match self.variant {
            Variant::Linux => queued / self.base_rtt.max(1),
            Variant::Paper | Variant::Ns2 => queued / rtt.max(1),
        }
    }

    /// Linux 2.6.22's round end (the "ns2" variant; see the file header). `prev_beg_snd_nxt` is
    /// the round boundary just passed.
    fn round_2622(&mut self, tp: &mut TcpState, prev_beg_snd_nxt: u64) {
        const SHIFT: u32 = 1; // V_PARAM_SHIFT: α, β, γ and Diff carry one fractional bit
        let old_wnd = prev_beg_snd_nxt.saturating_sub(self.beg_snd_una);
        let old_snd_cwnd = self.beg_snd_cwnd;
        self.beg_snd_una = prev_beg_snd_nxt;
        self.beg_snd_cwnd = tp.snd_cwnd;
        if self.cnt_rtt <= 2 {
            reno_cong_avoid(tp, 1);
            return;
        }
        let rtt = self.min_rtt.max(1);
        let target = ((old_wnd * self.base_rtt) << SHIFT) / rtt;
        let diff = (old_wnd << SHIFT).saturating_sub(target);
        if tp.snd_cwnd <= tp.snd_ssthresh {
            if diff > self.gamma << SHIFT {
                tp.snd_ssthresh = 2;
                let t = ((target >> SHIFT) + 1).min(u32::MAX as u64) as u32;
                tp.snd_cwnd = tp.snd_cwnd.min(t);
            }
            tp.snd_cwnd = tp.snd_cwnd.saturating_add(1); // 2.6.22 tcp_slow_start: +1 per call
        } else {
            let next = if diff > self.beta << SHIFT {
                old_snd_cwnd.saturating_sub(1)
            } else if diff < self.alpha << SHIFT {
                old_snd_cwnd + 1
            } else {
                old_snd_cwnd
            };
            if next > tp.snd_cwnd {
                tp.snd_cwnd += 1;
            } else if next < tp.snd_cwnd {
                tp.snd_cwnd -= 1;
            }
        }
        tp.snd_cwnd = tp.snd_cwnd.clamp(2, tp.snd_cwnd_clamp.max(2));
    }

    /// The once-per-round decision with enough samples.
    fn decide(&mut self, tp: &mut TcpState, acked: u32) {
        let rtt = self.min_rtt;
        let diff = self.diff(tp.snd_cwnd, rtt);
        let paper = self.variant == Variant::Paper;
        if tp.in_slow_start() && paper && self.ss_grow {
            // The window grew during this round: no valid comparison; hold it next round.
            self.ss_grow = false;
        } else if diff > self.gamma && tp.in_slow_start() {
            // Queue building in slow start: continue at the rate actually achieved.
            let target = tp.snd_cwnd as u64 * self.base_rtt / rtt.max(1);
            tp.snd_cwnd = tp.snd_cwnd.min((target + 1).min(u32::MAX as u64) as u32);
            tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
        } else if tp.in_slow_start() {
            if paper {
                self.ss_grow = true;
            }
            slow_start(tp, acked);
        } else if diff > self.beta {
            tp.snd_cwnd -= 1;
            tp.snd_ssthresh = tp.snd_ssthresh.min(tp.snd_cwnd);
        } else if diff < self.alpha {
            tp.snd_cwnd += 1;
        }
        tp.snd_cwnd = tp.snd_cwnd.clamp(2, tp.snd_cwnd_clamp.max(2));
        // Linux tcp_current_ssthresh outside a window reduction.
        let three_quarters = (tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2);
        tp.snd_ssthresh = tp.snd_ssthresh.max(three_quarters);
    }
}

impl CongestionOps for Vegas {
    /// ns-2.35's module has `.min_cwnd = tcp_reno_min_cwnd` (ns-2's recovery rule only).
    fn min_cwnd(&self, tp: &TcpState) -> Option<u32> {
        super::reno_min_cwnd(tp)
    }

    fn name(&self) -> &'static str {
        "vegas"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.restart(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        super::reno_ssthresh(tp)
    }

    fn pkts_acked(&mut self, _tp: &mut TcpState, s: &AckSample) {
        let Some(rtt) = s.rtt else { return };
        let vrtt = rtt.as_nanos() / 1000 + 1;
        self.base_rtt = self.base_rtt.min(vrtt);
        self.min_rtt = self.min_rtt.min(vrtt);
        self.cnt_rtt += 1;
    }

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        if new == CaState::Open {
            self.enable(tp);
        } else {
            self.doing_vegas_now = false;
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if matches!(ev, CaEvent::TxStart | CaEvent::CwndRestart) {
            self.restart(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !self.doing_vegas_now {
            reno_cong_avoid(tp, acked);
            return;
        }
        if self.variant == Variant::Ns2 {
            if tp.snd_una > self.beg_snd_nxt {
                let prev = self.beg_snd_nxt;
                self.beg_snd_nxt = tp.snd_nxt;
                self.round_2622(tp, prev);
                self.cnt_rtt = 0;
                self.min_rtt = NO_RTT;
            } else if tp.snd_cwnd <= tp.snd_ssthresh {
                tp.snd_cwnd = tp.snd_cwnd.saturating_add(1).min(tp.snd_cwnd_clamp.max(2));
            }
            return;
        }
        if tp.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = tp.snd_nxt;
            if self.cnt_rtt <= 2 {
                reno_cong_avoid(tp, acked);
            } else {
                self.decide(tp, acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt = NO_RTT;
        } else if tp.in_slow_start() && (self.variant == Variant::Linux || self.ss_grow) {
            slow_start(tp, acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;
    use fatpipe_core::SimTime;

    fn vegas(variant: Variant) -> Vegas {
        Vegas::new(&Params {
            variant,
            ..Params::default()
        })
    }

    /// One ACK of one segment with RTT `rtt_us`, followed by sending up to the window (the
    /// sender updates snd_nxt after cong_avoid). Returns whether a round ended on it.
    fn ack(v: &mut Vegas, tp: &mut TcpState, rtt_us: u64) -> bool {
        v.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt: Some(SimTime::from_micros(rtt_us)),
                in_flight: tp.snd_cwnd,
            },
        );
        tp.snd_una += 1;
        let before = v.beg_snd_nxt;
        v.cong_avoid(tp, 1);
        tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64;
        v.beg_snd_nxt != before
    }

    /// A connection in congestion avoidance with cwnd `cwnd`, base RTT sampled as `base_us`
    /// (stored as base_us + 1, Linux's never-zero RTT), and a round just begun.
    fn in_ca(variant: Variant, cwnd: u32, base_us: u64) -> (Vegas, TcpState) {
        let mut v = vegas(variant);
        let mut tp = state(cwnd, 2);
        tp.snd_nxt = cwnd as u64;
        v.init(&mut tp);
        v.base_rtt = base_us + 1;
        (v, tp)
    }

    /// Run one full round of ACKs at RTT `rtt_us` ending with the round's decision.
    fn round(v: &mut Vegas, tp: &mut TcpState, rtt_us: u64) {
        while !ack(v, tp, rtt_us) {}
    }

    #[test]
    fn ns2_variant_steers_towards_the_previous_decisions_cwnd() {
        // Linux 2.6.22 (ns-2.35 TCP-Linux): with no queueing (Diff = 0 < α) every decision wants
        // the previous decision's cwnd + 1, which cwnd already has every other round: +1 per
        // two rounds, where the current kernel adds one per round.
        let (mut v, mut tp) = in_ca(Variant::Ns2, 20, 100_000);
        round(&mut v, &mut tp, 100_000); // first decision: no previous one yet
        let start = tp.snd_cwnd;
        for _ in 0..6 {
            round(&mut v, &mut tp, 100_000);
        }
        assert_eq!(tp.snd_cwnd, start + 3);
        let (mut v, mut tp) = in_ca(Variant::Linux, 20, 100_000);
        for _ in 0..6 {
            round(&mut v, &mut tp, 100_000);
        }
        assert_eq!(tp.snd_cwnd, 26);
        // Queueing above β (Diff in half packets: old_wnd·2 − old_wnd·2·base/rtt; 20 packets at
        // rtt = 1.5·base → 40 − 26 = 14 > 8): steered down, again one per two rounds.
        let (mut v, mut tp) = in_ca(Variant::Ns2, 20, 100_000);
        round(&mut v, &mut tp, 150_000);
        let start = tp.snd_cwnd;
        for _ in 0..4 {
            round(&mut v, &mut tp, 150_000);
        }
        assert_eq!(tp.snd_cwnd, start - 2);
    }

    #[test]
    fn diff_is_the_extra_packets_queued() {
        // 20 packets, BaseRTT 100 ms (+1 µs), RTT 126 ms (+1 µs):
        // paper: 20·26/126 = 4.13 → 4; Linux: 20·26/100 = 5.2 → 5.
        let (v, _) = in_ca(Variant::Paper, 20, 100_000);
        assert_eq!(v.diff(20, 126_001), 4);
        let (v, _) = in_ca(Variant::Linux, 20, 100_000);
        assert_eq!(v.diff(20, 126_001), 5);
        // No queueing: Diff = 0.
        assert_eq!(v.diff(20, 100_001), 0);
        // Exactly the paper's (Expected − Actual)·BaseRTT in the paper variant.
        let (v, _) = in_ca(Variant::Paper, 500, 50_000);
        let (w, base, rtt): (f64, f64, f64) = (500.0, 50_001.0, 80_001.0);
        let expected = (w / base - w / rtt) * base;
        assert_eq!(v.diff(500, 80_001), expected.floor() as u64);
    }

    #[test]
    fn one_segment_per_rtt_towards_alpha_beta() {
        for (rtt, variant, change) in [
            // Linux: Diff 20·1/100 = 0 < α: +1.
            (101_000, Variant::Linux, 1i64),
            // Linux: 20·15/100 = 3 ∈ [2, 4]: hold.
            (115_000, Variant::Linux, 0),
            // Linux: 20·26/100 = 5 > β: −1.
            (126_000, Variant::Linux, -1),
            // Paper: 20·26/126 = 4 ≤ β: hold where Linux shrinks.
            (126_000, Variant::Paper, 0),
            // Paper: 20·40/140 = 5 > β: −1.
            (140_000, Variant::Paper, -1),
            // Paper: 20·5/105 = 0 < α: +1.
            (105_000, Variant::Paper, 1),
        ] {
            let (mut v, mut tp) = in_ca(variant, 20, 100_000);
            round(&mut v, &mut tp, rtt);
            assert_eq!(
                tp.snd_cwnd as i64,
                20 + change,
                "{variant:?} at RTT {rtt} µs"
            );
            // Nothing changes within the next round until its last ACK.
            // The next decision comes with the ACK of the first segment sent after this one:
            // 19 ACKs later here (20 segments were outstanding when it was taken).
            let w = tp.snd_cwnd;
            for _ in 0..19 {
                assert!(!ack(&mut v, &mut tp, rtt));
                assert_eq!(tp.snd_cwnd, w);
            }
        }
    }

    #[test]
    fn too_few_samples_fall_back_to_reno() {
        let (mut v, mut tp) = in_ca(Variant::Linux, 20, 100_000);
        // Round of 20 segments but only 2 RTT samples (e.g. stretch ACKs): Reno's additive
        // increase for that one ACK (counter +1), no Vegas decision even though Diff is large.
        v.cnt_rtt = 2;
        v.min_rtt = 200_000;
        tp.snd_una = 21;
        v.cong_avoid(&mut tp, 1);
        assert_eq!(tp.snd_cwnd, 20);
        assert_eq!(tp.snd_cwnd_cnt, 1);
        assert_eq!(v.cnt_rtt, 0);
    }

    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma_at_the_achieved_rate() {
        let mut v = vegas(Variant::Linux);
        let mut tp = state(40, u32::MAX);
        tp.snd_nxt = 40;
        v.init(&mut tp);
        v.base_rtt = 100_001;
        v.cnt_rtt = 10;
        v.min_rtt = 110_001;
        tp.snd_una = 41;
        v.cong_avoid(&mut tp, 1);
        // Diff = 40·10/100 = 4 > γ = 1: cwnd = floor(40·100.001/110.001) + 1 = 36 + 1 = 37.
        assert_eq!(tp.snd_cwnd, 37);
        assert_eq!(tp.snd_ssthresh, 37);
        assert!(!tp.in_slow_start());
    }

    #[test]
    fn linux_slow_start_doubles_every_rtt_paper_every_other() {
        let mut log = vec![];
        for variant in [Variant::Linux, Variant::Paper] {
            let mut v = vegas(variant);
            let mut tp = state(4, u32::MAX);
            v.init(&mut tp); // beg_snd_nxt = 0: the first ACK closes an empty round
            tp.snd_nxt = 4;
            ack(&mut v, &mut tp, 100_000); // Reno rule (1 sample): 4 → 5
            let mut w = vec![tp.snd_cwnd];
            for _ in 0..6 {
                round(&mut v, &mut tp, 100_000);
                w.push(tp.snd_cwnd);
            }
            log.push(w);
        }
        // In this ACK-clocked model a round (from one decision to the ACK of the first segment
        // sent after it) is one ACK shorter than the window, and every ACK in slow start adds one
        // segment, so a round takes the window from w to 2w − 1: doubling per RTT.
        let linux = &log[0];
        for r in 1..linux.len() {
            assert_eq!(linux[r], 2 * linux[r - 1] - 1, "linux {linux:?}");
        }
        // Paper: a growth round doubles the window; the next round holds it (only its closing
        // ACK, which opens the next growth round, adds one): 8 → 8+1 → 16 → 16+1 → 32 ...,
        // doubling every other RTT.
        let paper = &log[1];
        assert_eq!(paper[1], 8, "{paper:?}");
        for k in [1, 3] {
            assert_eq!(paper[k + 1], paper[k] + 1, "hold round: {paper:?}");
            assert_eq!(paper[k + 2], 2 * paper[k], "growth round: {paper:?}");
        }
    }

    #[test]
    fn vegas_only_in_open_and_restarts_after_recovery() {
        let (mut v, mut tp) = in_ca(Variant::Linux, 20, 100_000);
        v.set_state(&mut tp, CaState::Recovery);
        assert!(!v.doing_vegas_now);
        // Outside Open: Reno (one segment per window of ACKs).
        for _ in 0..20 {
            tp.snd_una += 1;
            v.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
        tp.snd_nxt = 500;
        v.set_state(&mut tp, CaState::Open);
        assert!(v.doing_vegas_now);
        assert_eq!(v.beg_snd_nxt, 500);
        assert_eq!(v.base_rtt, 100_001, "base RTT is kept across recovery");
        v.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(v.base_rtt, NO_RTT);
        assert_eq!(v.ssthresh(&state(21, 10)), 10);
    }

    #[test]
    fn parameters_are_range_checked() {
        let mut t = toml::Table::new();
        t.insert("alpha".into(), toml::Value::Integer(-1));
        assert!(build(&t).unwrap_err().contains("alpha"));
        let mut t = toml::Table::new();
        t.insert("beta".into(), toml::Value::Integer(1));
        assert!(build(&t).unwrap_err().contains("beta"));
        let mut t = toml::Table::new();
        t.insert("gamma".into(), toml::Value::Integer(-2));
        assert!(build(&t).unwrap_err().contains("gamma"));
        let mut t = toml::Table::new();
        t.insert("variant".into(), toml::Value::String("arizona".into()));
        assert!(build(&t).is_err());
        t.insert("variant".into(), toml::Value::String("paper".into()));
        assert!(build(&t).is_ok());
    }
}
