//! BBR v1: pace at the estimated bottleneck bandwidth, cap inflight at a small multiple of the
//! estimated bandwidth-delay product.
//!
//! Spec:    N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh, V. Jacobson, "BBR:
//!          Congestion-Based Congestion Control", ACM Queue 14(5), September–October 2016. The
//!          path model is BtlBw = windowed max of delivery-rate samples and RTprop = windowed min
//!          of RTT samples; pacing_rate = pacing_gain·BtlBw, cwnd = cwnd_gain·BtlBw·RTprop. States
//!          STARTUP (gain 2/ln 2 until the bandwidth stops growing), DRAIN (the inverse gain until
//!          inflight ≤ BDP), PROBE_BW (an eight-phase pacing-gain cycle 5/4, 3/4, 1×6, each phase
//!          one RTprop long) and PROBE_RTT (inflight 4 packets for 200 ms when RTprop was not
//!          refreshed for 10 s).
//! Mirrors: Linux net/ipv4/tcp_bbr.c (v6.17-rc, read in the Kingxukai/linux mirror, commit
//!          0291023e): `bbr_main` = `bbr_update_model` (`bbr_update_bw`,
//!          `bbr_update_ack_aggregation`, `bbr_update_cycle_phase`, `bbr_check_full_bw_reached`,
//!          `bbr_check_drain`, `bbr_update_min_rtt`, `bbr_update_gains`), `bbr_set_pacing_rate`,
//!          `bbr_set_cwnd` with `bbr_set_cwnd_to_recover_or_restore`; `bbr_lt_bw_sampling`
//!          (policer detection); `bbr_ssthresh` (save cwnd), `bbr_set_state`, `bbr_cwnd_event`,
//!          `bbr_undo_cwnd`; the windowed max filter of lib/win_minmax.c (Kathleen Nichols'
//!          three-sample algorithm). Written from reading them, not copied. The delivery-rate
//!          samples come from the sender's estimator (tcp/rate.rs, Linux tcp_rate.c).
//! Units and arithmetic as Linux: bandwidth in packets per µs scaled by 2^24 (BW_SCALE), gains
//! in 1/256 (BBR_SCALE), RTTs and intervals in µs (simulation nanoseconds truncated), BDP
//! rounded up. Time stamps (min_rtt_stamp, probe_rtt_done_stamp) are simulation time, not
//! jiffies.
//! Constants (tcp_bbr.c unless stated; the paper's value where it gives one):
//!   - high_gain = 256·2885/1000 + 1 = 739/256 ≈ 2.887 (2/ln 2 = 2.885, the smallest gain that
//!     doubles the sending rate each round, paper §"Startup"); STARTUP pacing and cwnd gain.
//!   - drain_gain = 256·1000/2885 = 88/256 ≈ 0.344 (ln 2/2 ≈ 0.347, paper); DRAIN pacing gain,
//!     cwnd gain stays high_gain.
//!   - cwnd_gain = 2 in PROBE_BW (paper: "cwnd_gain of 2"; tolerates delayed/stretched ACKs).
//!   - PROBE_BW pacing gains 5/4, 3/4, 1, 1, 1, 1, 1, 1 (paper Fig. 4 and text; CYCLE_LEN 8); the
//!     starting phase is random among the seven that are not 3/4 (bbr_cycle_rand = 7).
//!   - BtlBw filter window: 10 packet-timed rounds (bbr_bw_rtts = CYCLE_LEN + 2; paper: "6–10
//!     RTTs").
//!   - RTprop filter window: 10 s (bbr_min_rtt_win_sec; paper: "tens of seconds", 10 s in its
//!     pseudocode).
//!   - PROBE_RTT: cwnd 4 packets (bbr_cwnd_min_target, also the cwnd floor) for at least 200 ms
//!     and one round (bbr_probe_rtt_mode_ms; paper: 200 ms).
//!   - Full bandwidth: 3 rounds (bbr_full_bw_cnt) without 25 % growth (bbr_full_bw_thresh 5/4;
//!     paper: "three attempts ... less than 25%").
//!   - pacing margin 1 % (bbr_pacing_margin_percent, Linux since 4.20; not in the paper).
//!   - Long-term (policer) sampling, Linux only: intervals of 4..16 rounds
//!     (bbr_lt_intvl_min_rtts = 4), lossy when lost/delivered ≥ 50/256 ≈ 20 %
//!     (bbr_lt_loss_thresh), two intervals consistent when their rates differ by ≤ 1/8
//!     (bbr_lt_bw_ratio) or ≤ 4 kbit/s (bbr_lt_bw_diff); lt_bw then used for 48 rounds
//!     (bbr_lt_bw_max_rtts).
//!   - ACK aggregation, Linux only (since 5.1): extra_acked gain 1, window 5 rounds
//!     (bbr_extra_acked_win_rtts), capped at 100 ms of bw (bbr_extra_acked_max_us), epoch reset
//!     beyond 2^20 packets.
//!   - Quantization budget, Linux only: cwnd += 3·tso_segs_goal, rounded up to even, +2 in the
//!     5/4 phase. tso_segs_goal = min(pacing_rate / 2^10 (sk_pacing_shift 10), 65536 − 1 − 320
//!     bytes (GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER; 320 is MAX_TCP_HEADER on x86-64 with
//!     the usual config, an assumption)) / mss, at least 1 below 1.2 Mb/s (bbr_min_tso_rate),
//!     else 2, at most 127. Linux computes it whether or not the device does TSO.
//!   - TCP_INIT_CWND = 10: cwnd cap before any RTT sample, and cwnd grows freely until 10
//!     packets are delivered.
//!
//! Variants (`variant`), where the paper and Linux differ:
//!   - "linux" (default): everything above.
//!   - "paper": no pacing margin, no long-term sampling, no ACK-aggregation allowance, no
//!     quantization budget (cwnd target = gain·BDP with the 4-packet floor), as the paper's
//!     pseudocode. Loss recovery (packet conservation for one round, then restore) is Linux's in
//!     both; the paper leaves it out.
//!
//! Explicit `long_term_bw`, `ack_aggregation`, `pacing_margin_percent` override the set.
//!
//! Simulator differences (documented choices): the "earliest departure time" correction of
//! `bbr_packets_in_net_at_edt` is not modelled (the sender's pacing holds at most one packet
//! back, so inflight at EDT = inflight now, plus tso_segs_goal when probing as Linux adds);
//! `rs.is_ack_delayed` is not known, so an expired RTprop takes any RTT sample; the sender
//! raises `CaEvent::TxStart` only when a flow starts (nothing is in flight and the first flight
//! is app-limited, as in Linux at connection start); `tp->delivered_mstamp` is the time of the
//! last ACK that delivered data (Linux also moves it when sending after idle); the random start
//! phase of PROBE_BW draws from a SplitMix64 stream seeded with the time BBR first enters
//! PROBE_BW (deterministic, and different for flows that started at different times).

use super::{CaEvent, CaState, CongestionOps, RateSample, TcpState};
use fatpipe_core::SimTime;
use serde::Deserialize;

pub const SUMMARY: &str = "BBR v1 (Cardwell et al. 2016): pace at the max delivery rate, cwnd = \
2 BDP from the min RTT; STARTUP/DRAIN/PROBE_BW/PROBE_RTT";
pub const CITATION: &str = "Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, BBR: \
Congestion-Based Congestion Control, ACM Queue 14(5), 2016; Linux net/ipv4/tcp_bbr.c and \
tcp_rate.c (v6.17-rc); draft-cheng-iccrg-delivery-rate-estimation";
pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"linux\"",
        unit: "",
        doc: "\"linux\": tcp_bbr.c with pacing margin, long-term (policer) sampling, ACK \
              aggregation and quantization budget; \"paper\": the ACM Queue 2016 model without \
              them",
    },
    super::ParamDoc {
        name: "long_term_bw",
        default: "true",
        unit: "",
        doc: "detect token-bucket policers and pace at the long-term rate (Linux \
              bbr_lt_bw_sampling); default from the variant (paper: false)",
    },
    super::ParamDoc {
        name: "ack_aggregation",
        default: "true",
        unit: "",
        doc: "add the recent excess of ACKed data to the cwnd target (Linux extra_acked); \
              default from the variant (paper: false)",
    },
    super::ParamDoc {
        name: "pacing_margin_percent",
        default: "1",
        unit: "%",
        doc: "pace this much below the estimated rate (Linux bbr_pacing_margin_percent); \
              default from the variant (paper: 0); 0..=50",
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Linux,
    Paper,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    #[serde(default = "default_variant")]
    pub variant: Variant,
    pub long_term_bw: Option<bool>,
    pub ack_aggregation: Option<bool>,
    pub pacing_margin_percent: Option<u32>,
}

fn default_variant() -> Variant {
    Variant::Linux
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    if let Some(m) = p.pacing_margin_percent {
        super::check(m <= 50, "pacing_margin_percent", m, "between 0 and 50")?;
    }
    Ok(Box::new(Bbr::new(&Settings::from(&p))))
}

/// Resolved parameters.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub long_term_bw: bool,
    pub ack_aggregation: bool,
    pub quantization_budget: bool,
    pub pacing_margin_percent: u64,
}

impl From<&Params> for Settings {
    fn from(p: &Params) -> Self {
        let linux = p.variant == Variant::Linux;
        Settings {
            long_term_bw: p.long_term_bw.unwrap_or(linux),
            ack_aggregation: p.ack_aggregation.unwrap_or(linux),
            quantization_budget: linux,
            pacing_margin_percent: p.pacing_margin_percent.unwrap_or(linux as u32) as u64,
        }
    }
}

// ---- Constants (see the header for sources) ---------------------------------------------------

const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u64 = 1 << BBR_SCALE;
const CYCLE_LEN: usize = 8;
const BW_RTTS: u32 = CYCLE_LEN as u32 + 2;
const MIN_RTT_WIN: SimTime = SimTime::from_secs(10);
const PROBE_RTT_MODE: SimTime = SimTime::from_millis(200);
const MIN_TSO_RATE_BPS: u64 = 1_200_000;
pub const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
pub const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
pub const CWND_GAIN: u64 = BBR_UNIT * 2;
pub const PACING_GAIN: [u64; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
const CYCLE_RAND: u64 = 7;
pub const CWND_MIN_TARGET: u32 = 4;
const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
const FULL_BW_CNT: u32 = 3;
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8; // bytes/s
const LT_BW_MAX_RTTS: u32 = 48;
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_ACKED_RESET: u32 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;
const TCP_INIT_CWND: u32 = 10;
const GSO_MAX_BYTES: u64 = 65536 - 1 - 320;
const PACING_SHIFT: u32 = 10;
const NO_RTT: u32 = u32::MAX;

/// BBR's modes (Linux `enum bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Windowed running maximum over the last `win` units of time (lib/win_minmax.c: the best, second
/// best and third best samples of disjoint sub-windows, Kathleen Nichols' algorithm).
#[derive(Clone, Copy, Debug, Default)]
pub struct MaxFilter {
    s: [(u32, u64); 3],
}

impl MaxFilter {
    pub fn get(&self) -> u64 {
        self.s[0].1
    }

    pub fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [(t, v); 3];
        v
    }

    /// Add sample `v` at time `t` (rounds here) and return the windowed max.
    pub fn update(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let new = (t, v);
        // A new maximum, or nothing left in the window: it is the best of everything.
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].1 {
            self.s[2] = new;
        }
        // Age the sub-window estimates.
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            // The best has expired: promote the others, maybe twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if t.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = new;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window passed without a second choice: take this one.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window passed without a third choice.
            self.s[2] = new;
        }
        self.s[0].1
    }
}

#[derive(Debug)]
pub struct Bbr {
    set: Settings,
    pub mode: Mode,
    /// Windowed min RTT, µs (`min_rtt_us`), and when it was last set.
    pub min_rtt_us: u32,
    min_rtt_stamp: SimTime,
    probe_rtt_done_stamp: Option<SimTime>,
    /// Max recent delivery rate, packets/µs << 24.
    pub bw: MaxFilter,
    /// Packet-timed rounds so far, and the `delivered` that ends the current one.
    pub rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: SimTime,
    prev_ca_state: CaState,
    packet_conservation: bool,
    pub round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    pub lt_use_bw: bool,
    pub lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pub pacing_gain: u64,
    pub cwnd_gain: u64,
    pub full_bw_reached: bool,
    full_bw_cnt: u32,
    pub cycle_idx: usize,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u64,
    ack_epoch_mstamp: SimTime,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// Time of the last delivery (Linux `tp->delivered_mstamp`).
    delivered_mstamp: SimTime,
    /// SplitMix64 state for the PROBE_BW start phase (0 = not seeded yet).
    rng: u64,
}

impl Bbr {
    pub fn new(set: &Settings) -> Self {
        Bbr {
            set: *set,
            mode: Mode::Startup,
            min_rtt_us: NO_RTT,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_done_stamp: None,
            bw: MaxFilter::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: SimTime::ZERO,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: SimTime::ZERO,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            delivered_mstamp: SimTime::ZERO,
            rng: 0,
        }
    }

    /// Windowed max bandwidth, packets/µs << 24 (`bbr_max_bw`).
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// The bandwidth estimate used: the long-term rate when policed, else the max filter.
    pub fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_rate_bytes_per_sec`: bytes/s of `rate` (packets/µs << 24) with `gain`, less the margin.
    fn rate_bytes_per_sec(&self, mss: u32, rate: u64, gain: u64) -> u64 {
        let r = (rate as u128 * mss as u128 * gain as u128) >> BBR_SCALE;
        let r = r * (1_000_000 / 100 * (100 - self.set.pacing_margin_percent)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// Pacing rate in bits/s of payload for bandwidth `bw` and `gain` (`bbr_bw_to_pacing_rate`).
    pub fn pacing_rate_bps(&self, mss: u32, bw: u64, gain: u64) -> u64 {
        self.rate_bytes_per_sec(mss, bw, gain) * 8
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain · cwnd / (srtt, or 1 ms without a sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        let rtt_us = match tp.srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                (s.as_nanos() / 1000).max(1)
            }
            None => 1000,
        };
        let bw = tp.snd_cwnd as u64 * BW_UNIT / rtt_us;
        tp.pacing_rate_bps = self.pacing_rate_bps(tp.mss, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u64, gain: u64) {
        let rate = self.pacing_rate_bps(tp.mss, bw, gain);
        if !self.has_seen_rtt && tp.srtt.is_some() {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > tp.pacing_rate_bps {
            tp.pacing_rate_bps = rate;
        }
    }

    /// `bbr_tso_segs_goal` (see the header).
    fn tso_segs_goal(&self, tp: &TcpState) -> u32 {
        let bytes_per_sec = tp.pacing_rate_bps / 8;
        let bytes = (bytes_per_sec >> PACING_SHIFT).min(GSO_MAX_BYTES);
        let min_segs = if bytes_per_sec < MIN_TSO_RATE_BPS / 8 {
            1
        } else {
            2
        };
        ((bytes / tp.mss as u64) as u32).max(min_segs).min(0x7f)
    }

    /// `bbr_save_cwnd`: remember the last good cwnd before recovery or PROBE_RTT cut it.
    fn save_cwnd(&mut self, tp: &TcpState) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = tp.snd_cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// `bbr_bdp`: ceil(bw · min_rtt · gain), packets; TCP_INIT_CWND before any RTT sample.
    pub fn bdp(&self, bw: u64, gain: u64) -> u32 {
        if self.min_rtt_us == NO_RTT {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128)) as u32
    }

    /// `bbr_quantization_budget` (Linux variant only).
    fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        if !self.set.quantization_budget {
            return cwnd;
        }
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(tp);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: BDP at `gain` plus the quantization budget.
    pub fn inflight(&self, tp: &TcpState, bw: u64, gain: u64) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt` without the EDT correction (see the header).
    fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        if self.pacing_gain > BBR_UNIT && self.set.quantization_budget {
            inflight_now + self.tso_segs_goal(tp)
        } else {
            inflight_now
        }
    }

    fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.set.ack_aggregation || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw() * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr = (EXTRA_ACKED_GAIN * self.extra_acked() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: deduct losses; packet conservation in the first
    /// round of recovery; restore the saved cwnd when recovery or a timeout ends. Returns the
    /// new cwnd and whether packet conservation decides it.
    fn recover_or_restore(&mut self, tp: &TcpState, rs: &RateSample, acked: u32) -> (u32, bool) {
        let state = tp.ca_state;
        let prev = self.prev_ca_state;
        let mut cwnd = tp.snd_cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            // First round of recovery: send one packet per packet delivered.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered; // start a round now
            cwnd = tp.packets_in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(tp.packets_in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: grow towards the target by the delivered packets (slow start), or snap
    /// down to it once the pipe was full; 4 packets in PROBE_RTT.
    fn set_cwnd(&mut self, tp: &mut TcpState, rs: &RateSample, acked: u32, bw: u64, gain: u64) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(tp, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tp.delivered < TCP_INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &TcpState, rs: &RateSample) -> bool {
        let elapsed = self.delivered_mstamp.saturating_sub(self.cycle_mstamp);
        let is_full_length = elapsed.as_nanos() / 1000 > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            // Probing: until inflight reaches gain·BDP, or a loss says it will not fit.
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        // Draining: until the queue is gone, at most one min RTT.
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = self.delivered_mstamp;
    }

    /// SplitMix64 draw in [0, n).
    fn random_below(&mut self, now: SimTime, n: u64) -> u64 {
        if self.rng == 0 {
            self.rng = now.as_nanos() | 1;
        }
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z as u128 * n as u128) >> 64) as u64
    }

    /// `bbr_reset_probe_bw_mode`: random start phase, never the 3/4 one.
    fn reset_probe_bw_mode(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(now, CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self, now: SimTime) {
        if !self.full_bw_reached {
            self.mode = Mode::Startup;
        } else {
            self.reset_probe_bw_mode(now);
        }
    }

    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpState) {
        self.lt_last_stamp_ms = self.delivered_mstamp.as_nanos() / 1_000_000;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    fn reset_lt_bw_sampling(&mut self, tp: &TcpState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: two consistent lossy intervals mean a policer.
    fn lt_bw_interval_done(&mut self, tp: &TcpState, bw: u64) {
        if self.lt_bw > 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt_bw
                || self.rate_bytes_per_sec(tp.mss, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`.
    fn lt_bw_sampling(&mut self, tp: &TcpState, rs: &RateSample) {
        if !self.set.long_term_bw {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp.now);
                }
            }
            return;
        }
        // Start at the first loss, once the policer's tokens are used up.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval at a loss (the tokens are exhausted).
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms =
            (self.delivered_mstamp.as_nanos() / 1_000_000).saturating_sub(self.lt_last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_bw_interval_done(tp, bw);
    }

    /// `bbr_update_bw`: round counting and the max filter.
    fn update_bw(&mut self, tp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        let interval_us = rs.interval.as_nanos() / 1000;
        if interval_us == 0 {
            return; // not a valid sample
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = rs.delivered as u64 * BW_UNIT / interval_us;
        // App-limited samples only if they do not lower the estimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        if !self.set.ack_aggregation || rs.acked_sacked == 0 || rs.interval.as_nanos() < 1000 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = self
            .delivered_mstamp
            .saturating_sub(self.ack_epoch_mstamp)
            .as_nanos()
            / 1000;
        let mut expected = (self.bw() * epoch_us / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = self.delivered_mstamp;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked - expected).min(tp.snd_cwnd);
        let i = self.extra_acked_win_idx;
        if extra > self.extra_acked[i] {
            self.extra_acked[i] = extra;
        }
    }

    fn update_cycle_phase(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_check_full_bw_reached`: 3 rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.max_bw() >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight)
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp.now);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        match self.probe_rtt_done_stamp {
            Some(t) if tp.now > t => {}
            _ => return,
        }
        self.min_rtt_stamp = tp.now;
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode(tp.now);
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let filter_expired = tp.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = rs.rtt {
            let rtt_us = (rtt.as_nanos() / 1000).min(NO_RTT as u64 - 1) as u32;
            if rtt_us < self.min_rtt_us || filter_expired {
                self.min_rtt_us = rtt_us;
                self.min_rtt_stamp = tp.now;
            }
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at 4 packets say nothing about the bandwidth.
            tp.app_limited = (tp.delivered + tp.packets_in_flight as u64).max(1);
            if self.probe_rtt_done_stamp.is_none() && tp.packets_in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(tp.now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (
                if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx]
                },
                CWND_GAIN,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }
}

impl CongestionOps for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn init(&mut self, tp: &mut TcpState) {
        tp.snd_ssthresh = u32::MAX; // TCP_INFINITE_SSTHRESH
        self.next_rtt_delivered = tp.delivered;
        self.min_rtt_us = tp.min_rtt.map_or(NO_RTT, |r| (r.as_nanos() / 1000) as u32);
        self.min_rtt_stamp = tp.now;
        self.bw.reset(0, 0);
        self.init_pacing_rate_from_rtt(tp);
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.ack_epoch_mstamp = tp.now;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    fn cong_avoid(&mut self, _tp: &mut TcpState, _acked: u32) {}

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true; // a timeout ends a round
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            self.lt_bw_sampling(tp, &rs);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = tp.now;
            self.ack_epoch_acked = 0;
            // Restarting from idle: no need to go faster than the estimate.
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) {
        if rs.acked_sacked > 0 {
            self.delivered_mstamp = tp.now;
        }
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::state;
    use super::*;

    fn bbr(variant: &str) -> Bbr {
        let mut t = toml::Table::new();
        t.insert("variant".into(), toml::Value::String(variant.into()));
        let p: Params = super::super::parse_params(&t).unwrap();
        Bbr::new(&Settings::from(&p))
    }

    /// Packets/µs << 24 of `pps` packets per second.
    fn bw_of(pps: u64) -> u64 {
        pps * BW_UNIT / 1_000_000
    }

    /// A valid, non-app-limited sample of `delivered` packets over `interval_us`.
    fn sample(delivered: u32, interval_us: u64, prior_delivered: u64, rtt_us: u64) -> RateSample {
        RateSample {
            delivered,
            interval: SimTime::from_micros(interval_us),
            rtt: Some(SimTime::from_micros(rtt_us)),
            prior_delivered,
            acked_sacked: 1,
            prior_in_flight: delivered,
            ..RateSample::default()
        }
    }

    #[test]
    fn gains_are_the_papers_in_linux_fixed_point() {
        // 2/ln 2 = 2.8854; Linux rounds 2885/1000 down and adds one unit: 739/256 = 2.8867.
        assert_eq!(HIGH_GAIN, 739);
        assert!((HIGH_GAIN as f64 / 256.0 - 2.0 / std::f64::consts::LN_2).abs() < 2.0 / 256.0);
        // ln 2 / 2 = 0.3466; 256·1000/2885 = 88.7 → 88 (0.34375).
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
        // The cycle's mean gain is 1: it probes and drains the same amount.
        assert_eq!(PACING_GAIN.iter().sum::<u64>(), 8 * 256);
    }

    #[test]
    fn bdp_and_pacing_rate_formulas() {
        let mut b = bbr("paper");
        b.min_rtt_us = 40_000;
        // 8333 packets/s × 40 ms = 333.3 packets; ×2 = 666.6 → rounded up to 667.
        let bw = bw_of(8333);
        assert_eq!(b.bdp(bw, BBR_UNIT), 334, "ceil(333.32)");
        assert_eq!(b.bdp(bw, CWND_GAIN), 667, "ceil(666.64)");
        // No RTT sample: TCP_INIT_CWND.
        let b0 = bbr("paper");
        assert_eq!(b0.bdp(bw, CWND_GAIN), 10);
        // Pacing rate: 8333 pkt/s × 1460 B × 8 = 97.33 Mb/s at gain 1; the paper variant has no
        // margin, Linux paces 1 % lower. Fixed point loses < 1e-5.
        let exact = 8333.0 * 1460.0 * 8.0;
        let r = b.pacing_rate_bps(1460, bw, BBR_UNIT) as f64;
        assert!((r / exact - 1.0).abs() < 1e-5, "{r} vs {exact}");
        let l = bbr("linux");
        let r = l.pacing_rate_bps(1460, bw, PACING_GAIN[0]) as f64;
        assert!((r / (exact * 1.25 * 0.99) - 1.0).abs() < 1e-5, "{r}");
    }

    #[test]
    fn max_filter_keeps_the_best_of_the_last_window() {
        let mut f = MaxFilter::default();
        f.reset(0, 0);
        assert_eq!(f.update(10, 1, 100), 100);
        // Lower samples do not lower the max while it is in the window.
        for t in 2..=11 {
            assert_eq!(f.update(10, t, 50 + t as u64), 100, "round {t}");
        }
        // Round 12: the 100 of round 1 is 11 rounds old (> 10): the best remaining sub-window
        // choice takes over; it must be one of the later samples and at most their max (61).
        let m = f.update(10, 12, 40);
        assert!((52..=61).contains(&m), "{m}");
        // A new higher sample resets everything.
        assert_eq!(f.update(10, 13, 500), 500);
        // Nothing for more than a window: the next sample is the max, whatever its value.
        assert_eq!(f.update(10, 30, 7), 7);
    }

    #[test]
    fn full_bandwidth_after_three_rounds_below_25_percent_growth() {
        let mut b = bbr("linux");
        let mut tp = state(10, u32::MAX);
        b.init(&mut tp);
        tp.app_limited = 0;
        // Each round delivers 100 packets at a rate rising by `growth` per round.
        let mut delivered = 0u64;
        let mut round = |b: &mut Bbr, tp: &mut TcpState, pps: u64| {
            let prior = delivered;
            delivered += 100;
            tp.delivered = delivered;
            tp.now += SimTime::from_millis(40);
            // interval = 100 packets at pps.
            let rs = sample(100, 100 * 1_000_000 / pps, prior, 40_000);
            b.cong_control(tp, &rs);
        };
        // Doubling rounds: never full.
        for k in 0..6 {
            round(&mut b, &mut tp, 1000 << k);
            assert!(!b.full_bw_reached, "round {k}");
            assert_eq!(b.mode, Mode::Startup);
        }
        // Growth is measured against `full_bw`, the last rate that grew 25 %: 20 % above it
        // twice counts two rounds; 30 % above it restarts the count; then three rounds at that
        // rate fill the pipe.
        let base = 1000u64 << 5;
        round(&mut b, &mut tp, base * 6 / 5);
        round(&mut b, &mut tp, base * 6 / 5);
        assert_eq!(b.full_bw_cnt, 2);
        round(&mut b, &mut tp, base * 13 / 10);
        assert_eq!(b.full_bw_cnt, 0, "1.3x is significant growth");
        round(&mut b, &mut tp, base * 13 / 10);
        round(&mut b, &mut tp, base * 14 / 10);
        assert!(!b.full_bw_reached, "only two rounds without 25 % growth");
        round(&mut b, &mut tp, base * 15 / 10);
        assert!(
            b.full_bw_reached,
            "third round without 25 % growth (1.5/1.3 = 1.15)"
        );
        // Full pipe: DRAIN at 1/high_gain (or already PROBE_BW if inflight is small).
        assert!(matches!(b.mode, Mode::Drain | Mode::ProbeBw));
    }

    #[test]
    fn drain_then_probe_bw_cycles_through_the_eight_gains() {
        let mut b = bbr("paper");
        let mut tp = state(10, u32::MAX);
        b.init(&mut tp);
        b.full_bw_reached = true;
        b.min_rtt_us = 10_000;
        b.min_rtt_stamp = SimTime::ZERO;
        b.bw.reset(0, bw_of(10_000)); // BDP = 100 packets
        tp.packets_in_flight = 250;
        tp.app_limited = 0;
        tp.now = SimTime::from_millis(1);
        b.check_drain(&mut tp);
        assert_eq!(b.mode, Mode::Drain);
        assert_eq!(tp.snd_ssthresh, 100, "ssthresh = BDP on entering DRAIN");
        b.update_gains();
        assert_eq!((b.pacing_gain, b.cwnd_gain), (DRAIN_GAIN, HIGH_GAIN));
        // Inflight at the BDP: drained.
        tp.packets_in_flight = 100;
        b.check_drain(&mut tp);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_ne!(b.cycle_idx, 1, "never starts in the 3/4 phase");
        // Walk the cycle: each gain-1 phase lasts just over one min RTT of deliveries.
        b.update_gains();
        let mut seen = Vec::new();
        for _ in 0..16 {
            seen.push(b.cycle_idx);
            let gain = PACING_GAIN[b.cycle_idx];
            // Inflight that lets a probing phase end (≥ 1.25 BDP) and a draining one not.
            let rs = RateSample {
                prior_in_flight: if gain > BBR_UNIT { 125 } else { 110 },
                ..RateSample::default()
            };
            tp.now += SimTime::from_micros(10_001);
            b.delivered_mstamp = tp.now;
            b.update_cycle_phase(&tp, &rs);
            b.update_gains();
        }
        // Eight consecutive indices modulo 8, each once per cycle.
        for w in seen.windows(2) {
            assert_eq!(w[1], (w[0] + 1) % 8);
        }
        // A 3/4 phase ends early once inflight falls to the BDP.
        while b.cycle_idx != 1 {
            tp.now += SimTime::from_micros(10_001);
            b.delivered_mstamp = tp.now;
            b.update_cycle_phase(&tp, &RateSample::default());
        }
        b.update_gains();
        assert_eq!(b.pacing_gain, 192);
        let rs = RateSample {
            prior_in_flight: 100,
            ..RateSample::default()
        };
        tp.now += SimTime::from_micros(10);
        b.delivered_mstamp = tp.now;
        b.update_cycle_phase(&tp, &rs);
        assert_eq!(b.cycle_idx, 2, "drained before a full min RTT");
    }

    #[test]
    fn probe_rtt_after_10_s_without_a_lower_rtt_holds_4_packets_for_200_ms() {
        let mut b = bbr("linux");
        let mut tp = state(10, u32::MAX);
        b.init(&mut tp);
        tp.app_limited = 0;
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 2;
        b.min_rtt_us = 40_000;
        b.min_rtt_stamp = SimTime::ZERO;
        b.bw.reset(0, bw_of(10_000));
        tp.snd_cwnd = 900;
        tp.packets_in_flight = 800;
        let mut delivered = 1000u64;
        let mut ack = |b: &mut Bbr, tp: &mut TcpState, now_ms: u64, rtt_us: u64| {
            tp.now = SimTime::from_millis(now_ms);
            let prior = delivered;
            delivered += 4;
            tp.delivered = delivered;
            b.cong_control(tp, &sample(4, 40_000, prior, rtt_us));
        };
        // At 10 s the filter has not expired yet (strictly later than stamp + 10 s). With the
        // pipe full, cwnd snaps to the target: 2·BDP = 800 plus Linux's quantization budget.
        ack(&mut b, &mut tp, 10_000, 45_000);
        assert_eq!(b.mode, Mode::ProbeBw);
        let cwnd = tp.snd_cwnd;
        assert!((800..=830).contains(&cwnd), "{cwnd}");
        // Just after 10 s with only higher RTTs: PROBE_RTT, cwnd 4, the 45 ms RTT becomes the
        // new min (expired filter takes any sample).
        ack(&mut b, &mut tp, 10_001, 45_000);
        assert_eq!(b.mode, Mode::ProbeRtt);
        assert_eq!(tp.snd_cwnd, 4);
        assert_eq!(b.min_rtt_us, 45_000);
        assert_eq!(b.prior_cwnd, cwnd, "cwnd saved for the exit");
        assert_ne!(tp.app_limited, 0, "PROBE_RTT marks samples app-limited");
        // Inflight drops to 4: the 200 ms start now.
        tp.packets_in_flight = 4;
        ack(&mut b, &mut tp, 10_100, 40_000);
        assert_eq!(b.probe_rtt_done_stamp, Some(SimTime::from_millis(10_300)));
        // 150 ms later, a round has passed but not 200 ms: still probing.
        ack(&mut b, &mut tp, 10_250, 40_000);
        assert_eq!(b.mode, Mode::ProbeRtt);
        // Exactly 200 ms: not yet (Linux: strictly after the stamp).
        ack(&mut b, &mut tp, 10_300, 40_000);
        assert_eq!(b.mode, Mode::ProbeRtt);
        // After 200 ms and a round: back to PROBE_BW with the saved cwnd.
        ack(&mut b, &mut tp, 10_301, 40_000);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert!(tp.snd_cwnd >= cwnd, "cwnd restored: {}", tp.snd_cwnd);
        assert_eq!(b.min_rtt_stamp, SimTime::from_millis(10_301));
    }

    #[test]
    fn recovery_conserves_packets_then_restores_the_saved_cwnd() {
        let mut b = bbr("paper");
        let mut tp = state(10, u32::MAX);
        b.init(&mut tp);
        b.full_bw_reached = true;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = 3;
        b.min_rtt_us = 10_000;
        b.bw.reset(0, bw_of(10_000)); // BDP 100, target 200
        tp.snd_cwnd = 200;
        tp.delivered = 5000;
        // Entering recovery: the sender asks ssthresh (saves cwnd), then sets the state.
        assert_eq!(b.ssthresh(&tp), u32::MAX);
        tp.ca_state = CaState::Recovery;
        tp.packets_in_flight = 150;
        let mut rs = sample(100, 10_000, 4900, 10_000);
        rs.losses = 3;
        rs.acked_sacked = 2;
        b.cong_control(&mut tp, &rs);
        assert_eq!(tp.snd_cwnd, 152, "packet conservation: in flight + acked");
        // Recovery ends: the saved 200 comes back.
        tp.ca_state = CaState::Open;
        rs.losses = 0;
        rs.prior_delivered = 5100; // a new round
        b.cong_control(&mut tp, &rs);
        assert_eq!(tp.snd_cwnd, 200);
    }

    #[test]
    fn parameters_are_range_checked_and_variants_resolve() {
        let mut t = toml::Table::new();
        t.insert("pacing_margin_percent".into(), toml::Value::Integer(60));
        assert!(build(&t).unwrap_err().contains("pacing_margin_percent"));
        let p: Params = super::super::parse_params(&toml::Table::new()).unwrap();
        let s = Settings::from(&p);
        assert!(s.long_term_bw && s.ack_aggregation && s.quantization_budget);
        assert_eq!(s.pacing_margin_percent, 1);
        let mut t = toml::Table::new();
        t.insert("variant".into(), toml::Value::String("paper".into()));
        t.insert("long_term_bw".into(), toml::Value::Boolean(true));
        let p: Params = super::super::parse_params(&t).unwrap();
        let s = Settings::from(&p);
        assert!(s.long_term_bw && !s.ack_aggregation && !s.quantization_budget);
        assert_eq!(s.pacing_margin_percent, 0);
    }
}
