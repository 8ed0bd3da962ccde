//! H-TCP: AIMD whose increase grows with the time since the last congestion event.
//!
//! Spec:    D. J. Leith, R. N. Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//!          Proc. PFLDnet 2004, Argonne; D. J. Leith, R. N. Shorten, Y. Lee, "H-TCP: A framework
//!          for congestion control in high-speed and long-distance networks", Hamilton Institute
//!          technical report, 2005. Per ACK cwnd += α/cwnd, on loss cwnd ← β·cwnd, with
//!          α(Δ) = 1 for Δ ≤ Δ_L and 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)² for Δ > Δ_L, Δ the time
//!          since the last congestion event; α is scaled by 2(1 − β) so the mean throughput does
//!          not depend on β; adaptive backoff β = RTT_min/RTT_max within [0.5, 0.8]; RTT scaling
//!          α ← α·RTT_min/RTT_ref; and the bandwidth switch: β = 0.5 when the throughput reached
//!          before the backoff moved by more than 20 % from the previous epoch's.
//! Mirrors: Linux net/ipv4/tcp_htcp.c (v6.x; the same algorithm as the 2.6.2x module of ns-2.35
//!          TCP-Linux, where RTT samples reached `measure_rtt` through the older hook
//!          signatures), with its module defaults use_rtt_scaling = 1 and
//!          use_bandwidth_switch = 1: `htcp_alpha_update`, `htcp_beta_update`, `measure_rtt`,
//!          `measure_achieved_throughput` (pkts_acked), `htcp_cwnd_undo`, `htcp_state`.
//!          Written from reading those sources, not copied.
//! Constants (all Linux tcp_htcp.c, which takes them from the papers):
//!   - Δ_L = 1 s (`diff > HZ`; paper Δ_L = 1 s); the 10 and the ((Δ−Δ_L)/2)² of α(Δ) (paper).
//!   - α scale 2(1 − β) (`2 * factor * ((1 << 7) - beta)`; paper's α ← 2(1 − β)α).
//!   - ALPHA_BASE = 1.0, BETA_MIN = 0.5 (64/128), BETA_MAX = 0.8 (102/128), all in 1/128 units as
//!     in Linux (paper: β ∈ [0.5, 0.8]). `beta_min`/`beta_max` are parameters with these
//!     defaults, truncated to 1/128 like Linux's 102.
//!   - RTT_ref = 100 ms and the clamp of RTT_min/RTT_ref to [0.5, 10] (`(HZ << 3) / (10 * minRTT)`
//!     clamped to [1 << 2, 10 << 3]); the paper's RTT scaling uses the same 100 ms reference.
//!   - adaptive β only when RTT_min > 10 ms and after one congestion event (`modeswitch`);
//!     RTT_max grows by at most 20 ms per sample and only in Open; after every backoff it fades
//!     to RTT_min + 0.95 (RTT_max − RTT_min) (Linux; not in the paper).
//!   - bandwidth switch: β = BETA_MIN unless 0.8 ≤ maxB/old_maxB ≤ 1.2 (`between(5 maxB,
//!     4 old_maxB, 6 old_maxB)`; paper: "more than 20 %"); throughput sampled once per window
//!     (packetcount ≥ cwnd − α and at least RTT_min since the last sample), smoothed
//!     Bi ← (3 Bi + cur)/4, reset to the sample during the first 3 RTT_min after a backoff.
//! Time: Linux counts in jiffies (HZ = 1000 in ns-2 TCP-Linux); this file counts in µs with the
//! same integer formulas (HZ = 10⁶), so results differ from Linux's by rounding only.
//! Paper vs Linux: Linux implements the paper's α(Δ) with an integer factor (the increase per RTT
//! steps at whole packets) and adds the RTT_max filtering above; these are not material
//! differences, so there is one parameter set (no `variant`).
//! Sender: the sender calls `ssthresh` before `set_state(Recovery)`, as Linux does, so the α
//! in force at the backoff uses the ended epoch's Δ; it never calls `undo_cwnd` (no
//! spurious-loss undo), so the undo path is tested directly.
//! Connection start: Linux sets `last_cong` at init, i.e. when the connection opens; here init
//! runs when the scenario is built, so the first `TxStart` sets it again.

use super::{slow_start, AckSample, CaEvent, CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "H-TCP (Leith & Shorten 2004): increase α(Δ) grows with time since last loss, β = RTTmin/RTTmax";
pub const CITATION: &str =
    "Leith & Shorten, H-TCP: TCP for high-speed and long-distance networks, \
PFLDnet 2004; Leith, Shorten & Lee, H-TCP: A framework for congestion control in high-speed and \
long-distance networks, Hamilton Institute TR 2005; Linux net/ipv4/tcp_htcp.c; ns-2 TCP-Linux htcp";
pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "use_rtt_scaling",
        default: "true",
        unit: "",
        doc: "scale α by RTT_min/100 ms, clamped to [0.5, 10] (Linux module parameter, default 1)",
    },
    super::ParamDoc {
        name: "use_bandwidth_switch",
        default: "true",
        unit: "",
        doc: "back off by β = beta_min when the throughput changed by more than 20 % since the \
              previous congestion epoch (Linux module parameter, default 1)",
    },
    super::ParamDoc {
        name: "beta_min",
        default: "0.5",
        unit: "1",
        doc: "lower bound of the adaptive backoff factor β (Linux BETA_MIN; paper 0.5), \
              truncated to 1/128",
    },
    super::ParamDoc {
        name: "beta_max",
        default: "0.8",
        unit: "1",
        doc: "upper bound of the adaptive backoff factor β (Linux BETA_MAX = 102/128; paper 0.8), \
              truncated to 1/128",
    },
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
    pub beta_min: f64,
    pub beta_max: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            use_rtt_scaling: true,
            use_bandwidth_switch: true,
            beta_min: 0.5,
            beta_max: 0.8,
        }
    }
}

/// Ticks per second of the internal clock (Linux's HZ; here microseconds).
const HZ: u64 = 1_000_000;
/// α = 1.0 in 1/128 units (Linux ALPHA_BASE).
const ALPHA_BASE: u64 = 1 << 7;

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    super::check(
        p.beta_min > 0.0 && p.beta_min < 1.0,
        "beta_min",
        p.beta_min,
        "in (0, 1)",
    )?;
    super::check(
        p.beta_max >= p.beta_min && p.beta_max < 1.0,
        "beta_max",
        p.beta_max,
        "in [beta_min, 1)",
    )?;
    Ok(Box::new(Htcp::new(&p)))
}

#[derive(Debug)]
pub struct Htcp {
    use_rtt_scaling: bool,
    use_bandwidth_switch: bool,
    beta_min: u64,
    beta_max: u64,
    /// Increase per RTT, 1/128 packets.
    alpha: u64,
    /// Backoff factor, 1/128.
    beta: u64,
    /// Adaptive β allowed (one congestion event seen since the last switch).
    modeswitch: bool,
    /// Packets the last ACK covered (counted into snd_cwnd_cnt by the next cong_avoid).
    pkts_acked: u32,
    packetcount: u64,
    /// Minimum and maximum RTT, µs (0 = none yet).
    min_rtt: u64,
    max_rtt: u64,
    /// Time of the last congestion event, µs.
    last_cong: u64,
    undo_last_cong: Option<u64>,
    undo_max_rtt: u64,
    undo_old_maxb: u64,
    /// Throughput estimates, packets/s.
    minb: u64,
    maxb: u64,
    old_maxb: u64,
    bi: u64,
    lasttime: u64,
    started: bool,
}

fn us(t: fatpipe_core::SimTime) -> u64 {
    t.as_nanos() / 1000
}

impl Htcp {
    pub fn new(p: &Params) -> Self {
        let beta_min = (p.beta_min * 128.0) as u64;
        Htcp {
            use_rtt_scaling: p.use_rtt_scaling,
            use_bandwidth_switch: p.use_bandwidth_switch,
            beta_min,
            beta_max: (p.beta_max * 128.0) as u64,
            alpha: ALPHA_BASE,
            beta: beta_min,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: None,
            undo_max_rtt: 0,
            undo_old_maxb: 0,
            minb: 0,
            maxb: 0,
            old_maxb: 0,
            bi: 0,
            lasttime: 0,
            started: false,
        }
    }

    /// Increase per RTT in packets (α after the 2(1 − β) and RTT scaling).
    pub fn alpha_pkts(&self) -> f64 {
        self.alpha as f64 / 128.0
    }

    /// Current backoff factor β.
    pub fn beta(&self) -> f64 {
        self.beta as f64 / 128.0
    }

    fn cong_time(&self, now: u64) -> u64 {
        now.saturating_sub(self.last_cong)
    }

    /// A congestion event starts: remember what undo would restore, restart Δ.
    fn reset(&mut self, now: u64) {
        self.undo_last_cong = Some(self.last_cong);
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_maxb = self.old_maxb;
        self.last_cong = now;
    }

    fn measure_rtt(&mut self, rtt: u64, state: CaState) {
        if self.min_rtt == 0 || rtt < self.min_rtt {
            self.min_rtt = rtt;
        }
        if state == CaState::Open {
            self.max_rtt = self.max_rtt.max(self.min_rtt);
            // Only a moderate rise counts: a jump of more than 20 ms is taken for an outlier.
            if rtt > self.max_rtt && rtt <= self.max_rtt + 20 * HZ / 1000 {
                self.max_rtt = rtt;
            }
        }
    }

    fn beta_update(&mut self) {
        if self.use_bandwidth_switch {
            let (maxb, old) = (self.maxb, self.old_maxb);
            self.old_maxb = maxb;
            // Throughput moved by more than 20 %: not a steady state, back off as Reno would.
            if !(4 * old <= 5 * maxb && 5 * maxb <= 6 * old) {
                self.beta = self.beta_min;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && self.min_rtt > 10 * HZ / 1000 && self.max_rtt > 0 {
            self.beta = ((self.min_rtt << 7) / self.max_rtt).clamp(self.beta_min, self.beta_max);
        } else {
            self.beta = self.beta_min;
            self.modeswitch = true;
        }
    }

    fn alpha_update(&mut self, now: u64) {
        let mut factor: u64 = 1;
        let diff = self.cong_time(now);
        if diff > HZ {
            let d = diff - HZ;
            factor = 1 + (10 * d + (d / 2) * (d / 2) / HZ) / HZ;
        }
        if self.use_rtt_scaling && self.min_rtt > 0 {
            // RTT_ref / RTT_min in 1/8 units, clamped to [0.5, 10].
            let scale = ((HZ << 3) / (10 * self.min_rtt)).clamp(1 << 2, 10 << 3);
            factor = ((factor << 3) / scale).max(1);
        }
        self.alpha = 2 * factor * (128u64.saturating_sub(self.beta));
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    fn param_update(&mut self, now: u64) {
        self.beta_update();
        self.alpha_update(now);
        // Slowly forget the largest RTT, in case the path changed.
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + (self.max_rtt - self.min_rtt) * 95 / 100;
        }
    }
}

impl CongestionOps for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.last_cong = us(tp.now);
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if ev == CaEvent::TxStart && !self.started {
            self.started = true;
            self.last_cong = us(tp.now);
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.param_update(us(tp.now));
        (((tp.snd_cwnd as u64) * self.beta) >> 7).max(2) as u32
    }

    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        if let Some(lc) = self.undo_last_cong.take() {
            self.last_cong = lc;
            self.max_rtt = self.undo_max_rtt;
            self.old_maxb = self.undo_old_maxb;
        }
        super::reno_undo_cwnd(tp)
    }

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        match new {
            CaState::Open => {
                if self.undo_last_cong.take().is_some() {
                    self.last_cong = us(tp.now);
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(us(tp.now)),
            CaState::Disorder => {}
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, s: &AckSample) {
        let now = us(tp.now);
        if tp.ca_state == CaState::Open {
            self.pkts_acked = s.pkts_acked;
        }
        if let Some(rtt) = s.rtt {
            self.measure_rtt(us(rtt).max(1), tp.ca_state);
        }
        if !self.use_bandwidth_switch {
            return;
        }
        if !matches!(tp.ca_state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += s.pkts_acked as u64;
        let alpha_pkts = (self.alpha >> 7).max(1);
        if self.packetcount >= (tp.snd_cwnd as u64).saturating_sub(alpha_pkts)
            && self.min_rtt > 0
            && now.saturating_sub(self.lasttime) >= self.min_rtt
        {
            let elapsed = (now - self.lasttime).max(1);
            let cur = self.packetcount * HZ / elapsed;
            if self.cong_time(now) / self.min_rtt <= 3 {
                // Just after a backoff: start the estimates afresh.
                self.minb = cur;
                self.maxb = cur;
                self.bi = cur;
            } else {
                self.bi = (3 * self.bi + cur) / 4;
                self.maxb = self.maxb.max(self.bi);
                self.minb = self.minb.min(self.maxb);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            slow_start(tp, acked);
            return;
        }
        // cwnd += α/cwnd per packet: one segment once snd_cwnd_cnt·α reaches cwnd.
        if (tp.snd_cwnd_cnt as u64 * self.alpha) >> 7 >= tp.snd_cwnd as u64 {
            if tp.snd_cwnd < tp.snd_cwnd_clamp {
                tp.snd_cwnd += 1;
            }
            tp.snd_cwnd_cnt = 0;
            self.alpha_update(us(tp.now));
        } else {
            tp.snd_cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;
    use fatpipe_core::SimTime;

    fn htcp(rtt_scaling: bool, bw_switch: bool) -> Htcp {
        Htcp::new(&Params {
            use_rtt_scaling: rtt_scaling,
            use_bandwidth_switch: bw_switch,
            ..Params::default()
        })
    }

    /// The paper's α(Δ), Δ in seconds, Δ_L = 1 s.
    fn alpha_paper(delta: f64) -> f64 {
        if delta <= 1.0 {
            1.0
        } else {
            let d = delta - 1.0;
            1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
        }
    }

    /// α after Δ seconds since the last congestion event, with β fixed.
    fn alpha_after(h: &mut Htcp, delta_s: f64) -> f64 {
        h.last_cong = 0;
        h.alpha_update((delta_s * 1e6) as u64);
        h.alpha_pkts()
    }

    #[test]
    fn alpha_follows_the_paper_formula_scaled_by_two_one_minus_beta() {
        let mut h = htcp(false, false);
        // β = 0.5: 2(1 − β) = 1. At Δ where α(Δ) is an integer, Linux's integer factor is exact.
        h.beta = 64;
        for (delta, expect) in [
            (0.5, 1.0),
            (1.0, 1.0),
            (3.0, 22.0),
            (5.0, 45.0),
            (11.0, 126.0),
        ] {
            assert_eq!(alpha_paper(delta), expect);
            assert_eq!(alpha_after(&mut h, delta), expect, "Δ = {delta}");
        }
        // Elsewhere the factor is the formula truncated to a whole packet.
        for delta in [1.05, 1.5, 2.3, 7.77, 20.0] {
            let got = alpha_after(&mut h, delta);
            assert_eq!(got, alpha_paper(delta).floor(), "Δ = {delta}");
        }
        // β = 0.8: α is scaled by 2(1 − 0.8) = 0.4 (0.40625 with β = 102/128).
        h.beta = 102;
        let got = alpha_after(&mut h, 3.0);
        assert!(
            (got - 22.0 * 2.0 * (1.0 - 102.0 / 128.0)).abs() < 1e-9,
            "{got}"
        );
        assert!((got - 22.0 * 0.4).abs() < 0.15);
    }

    #[test]
    fn rtt_scaling_multiplies_alpha_by_min_rtt_over_100ms_clamped() {
        let mut h = htcp(true, false);
        h.beta = 64;
        // α(3 s) = 22 packets per RTT at RTT_ref = 100 ms.
        for (rtt_ms, expect) in [
            (100, 22.0),
            (200, 44.0), // ×2
            (50, 11.0),  // ×0.5
            (400, 44.0), // ×4 clamped to ×2 (ratio 1/8 ≥ 0.5 lower clamp of RTT_ref/RTT_min)
            (5, 2.0),    // ×0.05 clamped to ×0.1: 22·8/80 = 2.2 → 2
        ] {
            h.min_rtt = rtt_ms * 1000;
            assert_eq!(alpha_after(&mut h, 3.0), expect, "RTT_min {rtt_ms} ms");
        }
        // Never below one packet's worth of factor.
        h.min_rtt = 1000;
        assert_eq!(alpha_after(&mut h, 0.2), 1.0);
    }

    #[test]
    fn beta_is_min_over_max_rtt_clamped_after_the_first_event() {
        let mut h = htcp(false, false);
        let mut tp = state(1000, 10);
        tp.now = SimTime::from_secs(10);
        h.min_rtt = 60_000;
        h.max_rtt = 100_000;
        // First congestion event: β = 0.5 (modeswitch), ssthresh = 500.
        assert_eq!(h.ssthresh(&tp), 500);
        assert_eq!(h.beta, 64);
        // Second: β = 60/100 = 0.6 → floor(0.6·128) = 76; ssthresh = 1000·76/128 = 593.
        h.max_rtt = 100_000;
        assert_eq!(h.ssthresh(&tp), 593);
        assert_eq!(h.beta, 76);
        // Ratio 0.95 clamps to 0.8 (102/128): 1000·102/128 = 796.
        h.max_rtt = 63_158; // 60/63.158 = 0.95
        assert_eq!(h.ssthresh(&tp), 796);
        // Ratio 0.3 clamps to 0.5.
        h.max_rtt = 200_000;
        assert_eq!(h.ssthresh(&tp), 500);
        // The backoff fades max RTT towards min RTT: 60 + 0.95·140 = 193 ms.
        assert_eq!(h.max_rtt, 193_000);
        // At most 10 ms of RTT_min: no adaptive β.
        h.min_rtt = 9_000;
        h.max_rtt = 10_000;
        h.ssthresh(&tp);
        assert_eq!(h.beta, 64);
    }

    #[test]
    fn bandwidth_switch_forces_half_when_throughput_moves_over_20_percent() {
        let mut h = htcp(false, true);
        let tp = state(1000, 10);
        h.min_rtt = 80_000;
        h.max_rtt = 100_000;
        h.modeswitch = true;
        // Steady throughput (+10 %): adaptive β = 0.8 → 102.
        h.old_maxb = 1000;
        h.maxb = 1100;
        h.ssthresh(&tp);
        assert_eq!(h.beta, 102);
        // +25 %: β = 0.5 and adaptive mode off for one epoch.
        h.old_maxb = 1000;
        h.maxb = 1250;
        h.max_rtt = 100_000;
        h.ssthresh(&tp);
        assert_eq!(h.beta, 64);
        assert!(!h.modeswitch);
        assert_eq!(h.old_maxb, 1250);
        // −25 % likewise.
        h.modeswitch = true;
        h.maxb = 900;
        h.old_maxb = 1200;
        h.ssthresh(&tp);
        assert_eq!(h.beta, 64);
    }

    #[test]
    fn throughput_is_measured_once_per_window_in_packets_per_second() {
        let mut h = htcp(false, true);
        let mut tp = state(100, 10);
        h.min_rtt = 100_000;
        h.last_cong = 0;
        h.lasttime = 1_000_000;
        // 100 packets acked over 200 ms, Δ = 1.2 s = 12 RTT_min (> 3): Bi smoothed from 0.
        let mut t = 1_000_000;
        for _ in 0..100 {
            t += 2_000;
            tp.now = SimTime::from_micros(t);
            h.pkts_acked(
                &mut tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt: None,
                    in_flight: 100,
                },
            );
        }
        // cwnd − α = 99 packets reached at t = 1.198 s: 99 pkts / 0.198 s = 500 pkt/s;
        // Bi = (3·0 + 500)/4 = 125.
        assert_eq!(h.bi, 125);
        assert_eq!(h.maxb, 125);
        assert_eq!(h.packetcount, 1);
    }

    #[test]
    fn growth_per_rtt_is_alpha() {
        let mut h = htcp(false, false);
        h.beta = 64;
        let mut tp = state(100, 50);
        tp.now = SimTime::from_secs(3); // Δ = 3 s → α = 22
        h.alpha_update(us(tp.now));
        assert_eq!(h.alpha_pkts(), 22.0);
        // One ACK per packet for one window of 100 ACKs. cwnd += α/cwnd per ACK would give
        // 100·22/cwnd ≈ 20 segments. Linux's counter (check, then count) needs ceil(w/22) + 1
        // ACKs per increment: 6 ACKs while w ≤ 110 (11 increments, 66 ACKs), then 7 ACKs while
        // w ≤ 132 (the 34 ACKs left give 4 more): +15.
        let start = tp.snd_cwnd;
        for _ in 0..start {
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, start + 15);
        // The same window at Δ ≤ 1 s (α = 1) adds one segment per ceil(w) + 1 ACKs: none yet
        // after 100 ACKs at w = 100 (the 101st applies it), like Reno's one per RTT.
        let mut tp = state(100, 50);
        tp.now = SimTime::from_millis(500);
        h.alpha_update(us(tp.now));
        for _ in 0..101 {
            h.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 101);
    }

    #[test]
    fn recovery_restarts_delta_and_undo_restores_it() {
        let mut h = htcp(false, false);
        let mut tp = state(100, 50);
        tp.now = SimTime::from_secs(4);
        h.last_cong = 1_000_000;
        h.max_rtt = 150_000;
        h.set_state(&mut tp, CaState::Recovery);
        assert_eq!(h.last_cong, 4_000_000);
        tp.now = SimTime::from_secs(5);
        h.undo_cwnd(&tp);
        assert_eq!(h.last_cong, 1_000_000);
        assert_eq!(h.max_rtt, 150_000);
        // A real loss: Open after recovery restarts Δ at the end of recovery.
        h.set_state(&mut tp, CaState::Loss);
        tp.now = SimTime::from_secs(6);
        h.set_state(&mut tp, CaState::Open);
        assert_eq!(h.last_cong, 6_000_000);
    }

    #[test]
    fn rejects_bad_betas() {
        let mut t = toml::Table::new();
        t.insert("beta_min".into(), toml::Value::Float(0.0));
        assert!(build(&t).unwrap_err().contains("beta_min"));
        let mut t = toml::Table::new();
        t.insert("beta_max".into(), toml::Value::Float(0.4));
        assert!(build(&t).unwrap_err().contains("beta_max"));
        let mut t = toml::Table::new();
        t.insert("beta_max".into(), toml::Value::Float(1.0));
        assert!(build(&t).is_err());
    }
}
