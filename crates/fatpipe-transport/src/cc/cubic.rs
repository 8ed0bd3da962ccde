//! CUBIC.
//!
//! Spec:    S. Ha, I. Rhee, L. Xu, "CUBIC: A New TCP-Friendly High-Speed TCP Variant", ACM SIGOPS
//!          OSR 42(5), 2008 (first as Rhee & Xu, PFLDnet 2005); RFC 9438 (CUBIC for Fast and
//!          Long-Distance Networks, 2023); RFC 9406 (HyStart++, 2023). After a reduction the
//!          window follows W(t) = C·(t − K)³ + W_max with K = ∛((W_max − cwnd_epoch)/C), t the
//!          time since the epoch began: concave up to W_max, a plateau there, convex beyond it.
//!          A Reno-friendly estimate takes over where standard TCP would be faster.
//! Mirrors: Linux net/ipv4/tcp_cubic.c. Two generations, both as read in their sources:
//!          6.x (HyStart from 2.6.29 with the 5.8 rework; `cnt` from segments acked; one update
//!          per jiffy) and 2.6.22.6, "CUBIC v2.1", the file ns-2.35 TCP-Linux carries
//!          (tcp/linux/src/tcp_cubic.c: no HyStart, max_increment clamp, delayed-ACK ratio).
//!
//! The window machinery is Linux's in every variant: per ACK the module keeps `cnt`, the ACKs per
//! one-segment increase, from the target W(t + delay_min) (RFC 9438 §4.2 uses t + RTT the same
//! way): cnt = cwnd/(target − cwnd), or 100·cwnd at or above the target; the Reno-friendly estimate
//! grows by one segment per cwnd·beta_scale/8 ACKs (beta_scale = 8(1 + β)/(3(1 − β)), i.e.
//! α_cubic = 3(1 − β)/(1 + β) per RTT as RFC 9438 §4.3) and caps cnt when it is ahead; cnt >= 2
//! (growth at most 1.5× per RTT, RFC 9438 §4.2's target ≤ 1.5·cwnd). Times are kept in Linux's
//! BICTCP_HZ units of 1/1024 s; the cube is evaluated in integers as Linux does, K with f64
//! `cbrt` (Linux's table-plus-Newton root is within 0.2 % of it).
//!
//! Parameter sets (`variant`):
//! - `"linux"` (default): Linux 6.x. β = 717/1024, C = bic_scale·10/1024 = 410/1024, fast
//!   convergence, TCP friendliness, HyStart (ACK train: an ACK within 2 ms of the previous one
//!   more than delay_min/2 after the round began — the halving applies without pacing; delay:
//!   the minimum of the round's first 8 samples above delay_min + clamp(delay_min/8, 4, 16 ms))
//!   from cwnd 16; first epoch cnt ≤ 20 (5 % per RTT); undo as Reno; delay samples in the first
//!   second of an epoch ignored; entering Loss resets the state (W_max too).
//! - `"paper2008"`: Linux 2.6.22.6 CUBIC v2.1 (ns-2.35 TCP-Linux `cubic`), the generation of the
//!   2008 paper. β = 819/1024, C = 410/1024, max_increment 16 (cnt ≥ cwnd/(10·16·delay_min[s])
//!   in the convex region: at most 16 segments per 100 ms of delay), cnt = 50 before the first
//!   loss, cnt divided by the delayed-ACK ratio (EWMA ×16, initial 2, fed in Open; see bic.rs),
//!   one ACK counted per call, undo to max(cwnd, W_max), no HyStart.
//! - `"rfc9438"`: RFC 9438. β_cubic 0.7, C 0.4, fast convergence (§4.7), Reno-friendly region
//!   (§4.3) and HyStart++ (RFC 9406) for slow start instead of HyStart.
//!
//! Constants and their sources:
//! - BICTCP_BETA_SCALE 1024, BICTCP_HZ 10, bic_scale 41, beta 717 (6.x) / 819 (2.6.22),
//!   max_increment 16 (2.6.22; removed later), hystart_low_window 16, hystart_ack_delta 2 ms,
//!   HYSTART_MIN_SAMPLES 8, HYSTART_DELAY_MIN/MAX 4/16 ms, HZ/32 recompute interval, cnt cap 20
//!   (6.x) or 50 (2.6.22) before the first loss: tcp_cubic.c of the respective version.
//! - C = 0.4, β_cubic = 0.7, α_cubic = 3(1 − β)/(1 + β): RFC 9438 §4.1–4.3, §5.
//! - HyStart++: MIN_RTT_THRESH 4 ms, MAX_RTT_THRESH 16 ms, MIN_RTT_DIVISOR 8, N_RTT_SAMPLE 8,
//!   CSS_GROWTH_DIVISOR 4, CSS_ROUNDS 5: RFC 9406 §4.3. The L (burst) limit of §4.2 is not
//!   applied (fatpipe's slow start is the shared Linux helper); HyStart++ runs in the initial
//!   slow start only (§4.3: after a loss ssthresh is known).
//!
//! Choices:
//! - Jiffies are 1 ms (HZ = 1000), so "one update per jiffy" compares millisecond ticks.
//! - `CA_EVENT_TX_START` (the epoch shift after an idle period) is not modelled: fatpipe's
//!   applications are not idle between sends.
//! - The seed study (Michel 2009, seed 000 §3.2) used an NCSU ns-2 CUBIC patch with "original
//!   defaults" (its public scripts show beta_ 0.8, scale 0.4, max_increment 16): that is
//!   `variant = "paper2008"`. Its text's β = 0.2 as the decrease fraction is the same window
//!   factor 0.8.

use super::{cong_avoid_ai, slow_start, CaState, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str =
    "CUBIC (Ha, Rhee, Xu 2008; RFC 9438): cubic window growth in real time, plateau at W_max";
pub const CITATION: &str = "S. Ha, I. Rhee, L. Xu, CUBIC: A New TCP-Friendly High-Speed TCP \
     Variant, ACM SIGOPS OSR 2008; RFC 9438 (2023) with HyStart++ RFC 9406; Linux \
     net/ipv4/tcp_cubic.c (6.x, and 2.6.22.6 CUBIC v2.1 as in ns-2.35 TCP-Linux cubic)";

pub const PARAMS: &[super::ParamDoc] = &[
    super::ParamDoc {
        name: "variant",
        default: "\"linux\"",
        unit: "",
        doc: "\"linux\": Linux 6.x tcp_cubic.c with HyStart; \"paper2008\": Linux 2.6.22.6 CUBIC \
              v2.1 as ns-2.35 TCP-Linux carries it (beta 819/1024, no HyStart); \"rfc9438\": RFC \
              9438 with HyStart++ (RFC 9406)",
    },
    super::ParamDoc {
        name: "beta",
        default: "0.7001953125",
        unit: "1",
        doc: "window factor on loss (linux 717/1024, paper2008 819/1024, rfc9438 0.7)",
    },
    super::ParamDoc {
        name: "c",
        default: "0.400390625",
        unit: "segments/s^3",
        doc: "C, the cubic scaling constant (Linux bic_scale 41 → 410/1024; RFC 9438 0.4)",
    },
    super::ParamDoc {
        name: "fast_convergence",
        default: "true",
        unit: "",
        doc: "a loss below the previous W_max sets W_max to cwnd·(1 + beta)/2",
    },
    super::ParamDoc {
        name: "tcp_friendliness",
        default: "true",
        unit: "",
        doc: "grow at least as fast as standard TCP would (RFC 9438 §4.3 Reno-friendly region)",
    },
    super::ParamDoc {
        name: "hystart",
        default: "\"linux\"",
        unit: "",
        doc: "slow-start exit: \"off\", \"linux\" (HyStart, ACK train + delay) or \"hystart++\" \
              (RFC 9406); linux's default is \"linux\", paper2008 \"off\", rfc9438 \"hystart++\"",
    },
    super::ParamDoc {
        name: "hystart_low_window",
        default: "16",
        unit: "segments",
        doc: "HyStart (linux) runs only from this window up",
    },
    super::ParamDoc {
        name: "max_increment",
        default: "0",
        unit: "segments",
        doc: "largest increase per 100 ms of minimum RTT in the convex region (paper2008 16; 0 = \
              no limit, as Linux 6.x and RFC 9438)",
    },
];

/// Typed parameters; unset fields take the variant's values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub variant: Option<String>,
    pub beta: Option<f64>,
    pub c: Option<f64>,
    pub fast_convergence: Option<bool>,
    pub tcp_friendliness: Option<bool>,
    pub hystart: Option<String>,
    pub hystart_low_window: Option<u32>,
    pub max_increment: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Linux,
    Paper2008,
    Rfc9438,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartExit {
    Off,
    /// Linux HyStart (Ha & Rhee 2011, the tcp_cubic.c rules).
    HyStart,
    /// RFC 9406.
    HyStartPlusPlus,
}

#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub variant: Variant,
    pub beta: f64,
    pub c: f64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub exit: SlowStartExit,
    pub hystart_low_window: u32,
    pub max_increment: u32,
}

impl Config {
    pub fn of(variant: Variant) -> Self {
        let linux_c = 410.0 / 1024.0; // bic_scale 41, ×10 in cube_rtt_scale, over 1024
        match variant {
            Variant::Linux => Config {
                variant,
                beta: 717.0 / 1024.0,
                c: linux_c,
                fast_convergence: true,
                tcp_friendliness: true,
                exit: SlowStartExit::HyStart,
                hystart_low_window: 16,
                max_increment: 0,
            },
            Variant::Paper2008 => Config {
                variant,
                beta: 819.0 / 1024.0,
                c: linux_c,
                fast_convergence: true,
                tcp_friendliness: true,
                exit: SlowStartExit::Off,
                hystart_low_window: 16,
                max_increment: 16,
            },
            Variant::Rfc9438 => Config {
                variant,
                beta: 0.7,
                c: 0.4,
                fast_convergence: true,
                tcp_friendliness: true,
                exit: SlowStartExit::HyStartPlusPlus,
                hystart_low_window: 16,
                max_increment: 0,
            },
        }
    }
}

/// Linux BICTCP_HZ: times in 1/2^10 s.
const BICTCP_HZ: u32 = 10;
/// Linux ACK_RATIO_SHIFT (2.6.22): the packets-per-ACK ratio kept ×16.
const ACK_RATIO_SHIFT: u32 = 4;
const NS_PER_S: u64 = 1_000_000_000;
/// Linux recomputes cnt at most every HZ/32 jiffies while cwnd is unchanged (HZ = 1000).
const RECOMPUTE_NS: u64 = 1_000_000_000 / 32;
const JIFFY_NS: u64 = 1_000_000;
/// HyStart: ACKs closer than this form a train (hystart_ack_delta_us 2000).
const HYSTART_ACK_DELTA_NS: u64 = 2_000_000;
/// HyStart / HyStart++ samples per round before the delay test (HYSTART_MIN_SAMPLES,
/// N_RTT_SAMPLE).
const MIN_SAMPLES: u32 = 8;
/// HyStart HYSTART_DELAY_MIN/MAX and RFC 9406 MIN/MAX_RTT_THRESH.
const DELAY_THRESH_MIN_NS: u64 = 4_000_000;
const DELAY_THRESH_MAX_NS: u64 = 16_000_000;
/// RFC 9406 CSS_GROWTH_DIVISOR and CSS_ROUNDS.
const CSS_GROWTH_DIVISOR: u32 = 4;
const CSS_ROUNDS: u32 = 5;

/// HyStart++ phase (RFC 9406 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hspp {
    SlowStart,
    Css { rounds: u32, baseline_ns: u64 },
    Done,
}

#[derive(Debug)]
pub struct Cubic {
    cfg: Config,
    beta_1024: u64,
    /// C·1024 (Linux cube_rtt_scale).
    c_1024: u64,
    /// 8(1024 + β)/(3(1024 − β)) in Linux's integer arithmetic.
    beta_scale: u32,
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time_ns: u64,
    origin: u32,
    /// K in 1/1024 s.
    k: u64,
    delay_min_ns: u64,
    epoch_start_ns: Option<u64>,
    ack_cnt: u32,
    tcp_cwnd: u32,
    delayed_ack: u32,
    // HyStart
    found: bool,
    round_start_ns: u64,
    last_ack_ns: u64,
    end_seq: u64,
    curr_rtt_ns: u64,
    sample_cnt: u32,
    // HyStart++
    hspp: Hspp,
    last_round_min_ns: u64,
    css_credit: u32,
}

impl Cubic {
    pub fn new(cfg: Config) -> Self {
        let beta_1024 = (cfg.beta * 1024.0).round() as u64;
        let beta_scale = (8 * (1024 + beta_1024) / 3 / (1024 - beta_1024)) as u32;
        Cubic {
            cfg,
            beta_1024,
            c_1024: ((cfg.c * 1024.0).round() as u64).max(1),
            beta_scale,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time_ns: 0,
            origin: 0,
            k: 0,
            delay_min_ns: 0,
            epoch_start_ns: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            found: false,
            round_start_ns: 0,
            last_ack_ns: 0,
            end_seq: 0,
            curr_rtt_ns: u64::MAX,
            sample_cnt: 0,
            hspp: Hspp::SlowStart,
            last_round_min_ns: u64::MAX,
            css_credit: 0,
        }
    }

    /// W_max (tests).
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// K in seconds (tests).
    pub fn k_secs(&self) -> f64 {
        self.k as f64 / (1u64 << BICTCP_HZ) as f64
    }

    /// ACKs per one-segment increase (tests).
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// Linux bictcp_reset (6.x zeroes the window state and `found`; 2.6.22 also the ACK ratio).
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time_ns = 0;
        self.origin = 0;
        self.k = 0;
        self.delay_min_ns = 0;
        self.epoch_start_ns = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
        if self.cfg.variant == Variant::Paper2008 {
            self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        }
    }

    fn hystart_reset(&mut self, tp: &TcpState) {
        self.round_start_ns = tp.now.as_nanos();
        self.last_ack_ns = self.round_start_ns;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt_ns = u64::MAX;
        self.sample_cnt = 0;
    }

    /// The cubic target at t = now + delay_min (Linux bictcp_update; RFC 9438 §4.2).
    fn update(&mut self, cwnd: u32, acked: u32, now_ns: u64) {
        let paper = self.cfg.variant == Variant::Paper2008;
        self.ack_cnt += if paper { 1 } else { acked };
        if self.last_cwnd == cwnd && now_ns.saturating_sub(self.last_time_ns) <= RECOMPUTE_NS {
            return;
        }
        // 6.x: cnt is recomputed at most once per jiffy; the friendliness check still runs.
        let same_jiffy = !paper
            && self.epoch_start_ns.is_some()
            && now_ns / JIFFY_NS == self.last_time_ns / JIFFY_NS;
        if !same_jiffy {
            self.last_cwnd = cwnd;
            self.last_time_ns = now_ns;
            let epoch = match self.epoch_start_ns {
                Some(e) => e,
                None => {
                    self.epoch_start_ns = Some(now_ns);
                    self.ack_cnt = if paper { 1 } else { acked };
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin = cwnd;
                    } else {
                        self.k = k_units(self.last_max_cwnd - cwnd, self.c_1024);
                        self.origin = self.last_max_cwnd;
                    }
                    now_ns
                }
            };
            let t = ((now_ns - epoch + self.delay_min_ns) as u128) << BICTCP_HZ;
            let t = (t / NS_PER_S as u128) as u64;
            let offs = t.abs_diff(self.k) as u128;
            let delta = ((self.c_1024 as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.k {
                (self.origin as u64).saturating_sub(delta)
            } else {
                self.origin as u64 + delta
            };
            let cwnd64 = cwnd as u64;
            self.cnt = if target > cwnd64 {
                (cwnd64 / (target - cwnd64)).min(u32::MAX as u64) as u32
            } else {
                100u32.saturating_mul(cwnd)
            };
            if paper {
                if self.cfg.max_increment > 0 && self.delay_min_ns > 0 && t >= self.k {
                    // max increment = S_max per 0.1 s of delay: cnt >= cwnd/(10·S_max·d[s]).
                    let min_cnt = (cwnd64 * NS_PER_S
                        / (10 * self.cfg.max_increment as u64 * self.delay_min_ns))
                        as u32;
                    self.cnt = self.cnt.max(min_cnt);
                }
                if self.loss_cwnd == 0 {
                    self.cnt = 50; // "could be aggressive in slow start"
                }
            } else if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20; // at least 5 % per RTT before any loss
            }
        }
        if self.cfg.tcp_friendliness {
            let delta = ((cwnd as u64 * self.beta_scale as u64) >> 3).max(1) as u32;
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        if paper {
            self.cnt = ((self.cnt as u64) << ACK_RATIO_SHIFT)
                .checked_div(self.delayed_ack as u64)
                .unwrap_or(self.cnt as u64)
                .max(1) as u32;
        } else {
            self.cnt = self.cnt.max(2);
        }
    }

    /// Linux hystart_update (6.x).
    fn hystart_update(&mut self, tp: &mut TcpState, delay_ns: u64) {
        if tp.snd_una > self.end_seq {
            self.hystart_reset(tp);
        }
        let now = tp.now.as_nanos();
        if now.saturating_sub(self.last_ack_ns) <= HYSTART_ACK_DELTA_NS {
            self.last_ack_ns = now;
            // Without pacing the train must exceed delay_min/2 (pacing spreads it over an RTT).
            let threshold = self.delay_min_ns >> 1;
            if now - self.round_start_ns > threshold {
                self.found = true;
                tp.snd_ssthresh = tp.snd_cwnd;
            }
        }
        self.curr_rtt_ns = self.curr_rtt_ns.min(delay_ns);
        if self.sample_cnt < MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = (self.delay_min_ns >> 3).clamp(DELAY_THRESH_MIN_NS, DELAY_THRESH_MAX_NS);
            if self.curr_rtt_ns > self.delay_min_ns + thresh {
                self.found = true;
                tp.snd_ssthresh = tp.snd_cwnd;
            }
        }
    }

    /// RFC 9406 §4.2: per-ACK RTT bookkeeping and the round-end decisions.
    fn hspp_sample(&mut self, tp: &mut TcpState, rtt_ns: Option<u64>) {
        if self.hspp == Hspp::Done {
            return;
        }
        if tp.snd_una > self.end_seq {
            // A round ended.
            let cur = self.curr_rtt_ns;
            if let Hspp::Css {
                rounds,
                baseline_ns,
            } = self.hspp
            {
                if cur < baseline_ns {
                    self.hspp = Hspp::SlowStart; // spurious exit: back to slow start
                } else if rounds + 1 >= CSS_ROUNDS {
                    self.hspp = Hspp::Done;
                    tp.snd_ssthresh = tp.snd_cwnd;
                    return;
                } else {
                    self.hspp = Hspp::Css {
                        rounds: rounds + 1,
                        baseline_ns,
                    };
                }
            }
            self.last_round_min_ns = cur;
            self.end_seq = tp.snd_nxt;
            self.curr_rtt_ns = u64::MAX;
            self.sample_cnt = 0;
        }
        let Some(rtt) = rtt_ns else { return };
        self.curr_rtt_ns = self.curr_rtt_ns.min(rtt);
        self.sample_cnt += 1;
        if self.hspp == Hspp::SlowStart
            && self.sample_cnt >= MIN_SAMPLES
            && self.curr_rtt_ns != u64::MAX
            && self.last_round_min_ns != u64::MAX
        {
            let thresh =
                (self.last_round_min_ns / 8).clamp(DELAY_THRESH_MIN_NS, DELAY_THRESH_MAX_NS);
            if self.curr_rtt_ns >= self.last_round_min_ns + thresh {
                self.hspp = Hspp::Css {
                    rounds: 0,
                    baseline_ns: self.curr_rtt_ns,
                };
            }
        }
    }
}

/// K = ∛((W_max − cwnd)/C) in 1/1024 s (Linux: cubic_root(cube_factor·(W_max − cwnd)) with
/// cube_factor = 2^40/(C·1024)).
fn k_units(gap: u32, c_1024: u64) -> u64 {
    let x = (gap as f64) * (1u64 << (3 * BICTCP_HZ + 10)) as f64 / c_1024 as f64;
    x.cbrt().round() as u64
}

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let p: Params = super::parse_params(params)?;
    let variant = match p.variant.as_deref().unwrap_or("linux") {
        "linux" => Variant::Linux,
        "paper2008" => Variant::Paper2008,
        "rfc9438" => Variant::Rfc9438,
        other => {
            return Err(format!(
                "variant = {other:?}: must be \"linux\", \"paper2008\" or \"rfc9438\""
            ))
        }
    };
    let mut c = Config::of(variant);
    if let Some(v) = p.beta {
        super::check(v > 0.0 && v < 1.0, "beta", v, "in (0, 1)")?;
        super::check(
            (v * 1024.0).round() < 1024.0 && (v * 1024.0).round() >= 1.0,
            "beta",
            v,
            "representable in 1/1024 below 1",
        )?;
        c.beta = v;
    }
    if let Some(v) = p.c {
        super::check(v.is_finite() && v > 0.0, "c", v, "> 0")?;
        super::check(
            v * 1024.0 >= 0.5,
            "c",
            v,
            ">= 1/2048 (it is kept in 1/1024)",
        )?;
        c.c = v;
    }
    if let Some(v) = p.fast_convergence {
        c.fast_convergence = v;
    }
    if let Some(v) = p.tcp_friendliness {
        c.tcp_friendliness = v;
    }
    if let Some(v) = p.hystart.as_deref() {
        c.exit = match v {
            "off" => SlowStartExit::Off,
            "linux" => SlowStartExit::HyStart,
            "hystart++" => SlowStartExit::HyStartPlusPlus,
            other => {
                return Err(format!(
                    "hystart = {other:?}: must be \"off\", \"linux\" or \"hystart++\""
                ))
            }
        };
    }
    if let Some(v) = p.hystart_low_window {
        super::check(v >= 2, "hystart_low_window", v, ">= 2 segments")?;
        c.hystart_low_window = v;
    }
    if let Some(v) = p.max_increment {
        super::check(
            v == 0 || variant == Variant::Paper2008,
            "max_increment",
            v,
            "0 unless variant = \"paper2008\" (only CUBIC v2.1 has the clamp)",
        )?;
        c.max_increment = v;
    }
    Ok(Box::new(Cubic::new(c)))
}

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.reset();
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
        self.hystart_reset(tp);
        self.hspp = Hspp::SlowStart;
        self.last_round_min_ns = u64::MAX;
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let w = tp.snd_cwnd;
        self.epoch_start_ns = None;
        self.last_max_cwnd = if w < self.last_max_cwnd && self.cfg.fast_convergence {
            ((w as u64 * (1024 + self.beta_1024)) / 2048) as u32
        } else {
            w
        };
        self.loss_cwnd = w;
        if self.hspp != Hspp::Done {
            self.hspp = Hspp::Done; // HyStart++ covers the initial slow start only
        }
        ((w as u64 * self.beta_1024 / 1024) as u32).max(2)
    }

    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        if self.cfg.variant == Variant::Paper2008 {
            tp.snd_cwnd.max(self.last_max_cwnd)
        } else {
            super::reno_undo_cwnd(tp)
        }
    }

    fn set_state(&mut self, tp: &mut TcpState, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &super::AckSample) {
        if self.cfg.variant == Variant::Paper2008
            && sample.pkts_acked > 0
            && tp.ca_state == CaState::Open
        {
            // Packets per ACK: ratio += (sample − ratio)/16, ×16 and truncated (2.6.22).
            self.delayed_ack = self
                .delayed_ack
                .wrapping_add(sample.pkts_acked)
                .wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
        let rtt_ns = sample.rtt.map(|r| r.as_nanos().max(1));
        if self.cfg.exit == SlowStartExit::HyStartPlusPlus && tp.in_slow_start() {
            self.hspp_sample(tp, rtt_ns);
        }
        let Some(delay) = rtt_ns else { return };
        let now = tp.now.as_nanos();
        // Discard delay samples right after a reduction (within a second of the epoch's start).
        if self
            .epoch_start_ns
            .is_some_and(|e| now.saturating_sub(e) < NS_PER_S)
        {
            return;
        }
        if self.delay_min_ns == 0 || self.delay_min_ns > delay {
            self.delay_min_ns = delay;
        }
        if self.cfg.exit == SlowStartExit::HyStart
            && !self.found
            && tp.in_slow_start()
            && tp.snd_cwnd >= self.cfg.hystart_low_window
        {
            self.hystart_update(tp, delay);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        if !tp.is_cwnd_limited || acked == 0 {
            return;
        }
        let mut acked = acked;
        if tp.in_slow_start() {
            if let Hspp::Css { .. } = self.hspp {
                if self.cfg.exit == SlowStartExit::HyStartPlusPlus {
                    // Conservative slow start: a quarter of slow start's growth (RFC 9406 §4.2).
                    self.css_credit += acked;
                    let add = self.css_credit / CSS_GROWTH_DIVISOR;
                    self.css_credit -= add * CSS_GROWTH_DIVISOR;
                    tp.snd_cwnd = (tp.snd_cwnd + add).min(tp.snd_cwnd_clamp);
                    return;
                }
            }
            acked = slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp.snd_cwnd, acked, tp.now.as_nanos());
        if self.cfg.variant == Variant::Paper2008 {
            // 2.6.22: one ACK per call; one segment once cnt ACKs have been counted.
            if tp.snd_cwnd_cnt >= self.cnt {
                tp.snd_cwnd = (tp.snd_cwnd + 1).min(tp.snd_cwnd_clamp);
                tp.snd_cwnd_cnt = 0;
            } else {
                tp.snd_cwnd_cnt += 1;
            }
        } else {
            cong_avoid_ai(tp, self.cnt, acked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;
    use crate::cc::AckSample;
    use fatpipe_core::SimTime;

    fn cubic(variant: Variant) -> Cubic {
        let mut c = Cubic::new(Config::of(variant));
        let mut tp = state(10, u32::MAX);
        c.init(&mut tp);
        c
    }

    fn ack(tp: &mut TcpState, c: &mut Cubic, rtt_ms: u64) {
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt: Some(SimTime::from_millis(rtt_ms)),
                in_flight: tp.snd_cwnd,
            },
        );
        c.cong_avoid(tp, 1);
    }

    #[test]
    fn k_matches_the_rfc_formula() {
        // RFC 9438 Eq. 2: K = cbrt((W_max − cwnd_epoch)/C). W_max 100, β 0.7, C 0.4:
        // cwnd_epoch = 70, K = cbrt(30/0.4) = cbrt(75) = 4.2172 s.
        let k = k_units(30, (0.4f64 * 1024.0).round() as u64) as f64 / 1024.0;
        assert!(
            (k - 75f64.cbrt()).abs() < 1.0 / 1024.0 + 75f64.cbrt() * 0.001,
            "{k}"
        );
        // Linux's C = 410/1024: W_max 1000, cut to 717 (gap 283): K = cbrt(283·1024/410) = 8.906 s.
        let k = k_units(283, 410) as f64 / 1024.0;
        assert!((k - 8.9064).abs() < 0.002, "{k}");
    }

    #[test]
    fn ssthresh_and_fast_convergence_per_variant() {
        for (v, factor) in [
            (Variant::Linux, 717u64),
            (Variant::Paper2008, 819),
            (Variant::Rfc9438, 717), // round(0.7·1024) = 717
        ] {
            let mut c = cubic(v);
            let tp = state(1000, 500);
            assert_eq!(c.ssthresh(&tp) as u64, 1000 * factor / 1024, "{v:?}");
            assert_eq!(c.w_max(), 1000);
            // A loss below the previous W_max: W_max = w·(1 + β)/2.
            let tp = state(800, 500);
            c.ssthresh(&tp);
            assert_eq!(c.w_max() as u64, 800 * (1024 + factor) / 2048, "{v:?}");
        }
    }

    #[test]
    fn window_follows_the_cubic_curve_and_plateaus_at_w_max() {
        // Linux variant, 100 ms RTT, W_max 1000 cut to 717: the target at t is
        // 1000 − 0.4004·(K − t − 0.1)³; the window must track it within a few segments at the
        // quarter, half and end of the epoch, and then stay within 1 % of W_max for a while.
        let mut c = cubic(Variant::Linux);
        let mut tp = state(1000, u32::MAX);
        tp.snd_cwnd = 1000;
        c.ssthresh(&tp);
        tp.snd_cwnd = 717;
        tp.snd_ssthresh = 717;
        let rtt = 100u64;
        // Establish delay_min (samples in the epoch's first second are discarded: none yet).
        ack(&mut tp, &mut c, rtt);
        let k = c.k_secs();
        assert!((k - 8.906).abs() < 0.01, "K {k}");
        let start = tp.now;
        let at = |secs: f64, tp: &mut TcpState, c: &mut Cubic| {
            let until = start + SimTime::from_secs_f64(secs);
            while tp.now < until {
                // one RTT of ACKs, spread evenly
                let n = tp.snd_cwnd as u64;
                for _ in 0..n {
                    tp.now = tp.now + SimTime(rtt * 1_000_000 / n);
                    ack(tp, c, rtt);
                }
            }
            tp.snd_cwnd as f64
        };
        let target = |t: f64| 1000.0 - 0.400390625 * (k - t - 0.1).powi(3);
        for t in [2.0, 4.5, 7.0] {
            let w = at(t, &mut tp, &mut c);
            assert!(
                (w - target(t)).abs() <= 0.02 * target(t),
                "t={t}: {w} vs {}",
                target(t)
            );
        }
        let w = at(k, &mut tp, &mut c);
        assert!((w - 1000.0).abs() <= 10.0, "at K: {w}");
        let w = at(k + 1.0, &mut tp, &mut c);
        assert!((w - 1000.0).abs() <= 10.0, "plateau one second past K: {w}");
        let w = at(k + 5.0, &mut tp, &mut c);
        assert!(w > 1040.0, "convex probing five seconds past K: {w}");
    }

    #[test]
    fn reno_friendly_region_takes_over_for_small_windows_and_short_rtts() {
        // W_max 40 on a 1 ms path: the cubic curve needs K = cbrt(12·1024/410) = 3.1 s to
        // come back, while Reno (α_cubic ≈ 0.53 per RTT) gains hundreds of segments meanwhile.
        let mut c = cubic(Variant::Linux);
        let mut tp = state(40, u32::MAX);
        c.ssthresh(&tp);
        tp.snd_cwnd = 28;
        tp.snd_ssthresh = 28;
        // 1000 RTTs of 1 ms, one ACK per segment.
        for _ in 0..1000 {
            let n = tp.snd_cwnd;
            for _ in 0..n {
                tp.now = tp.now + SimTime(1_000_000 / n as u64);
                ack(&mut tp, &mut c, 1);
            }
        }
        // Reno-friendly: ~0.53 segments per RTT over 1000 RTTs → ≥ 28 + 400 (allowing for
        // integer steps); the cubic curve alone would be near W_max + C·(1 − 3.1)³ ≈ 40.
        assert!(tp.snd_cwnd > 400, "{}", tp.snd_cwnd);
        let mut c = Cubic::new(Config {
            tcp_friendliness: false,
            ..Config::of(Variant::Linux)
        });
        let mut tp2 = state(40, u32::MAX);
        c.init(&mut tp2);
        c.ssthresh(&tp2);
        tp2.snd_cwnd = 28;
        tp2.snd_ssthresh = 28;
        for _ in 0..1000 {
            let n = tp2.snd_cwnd;
            for _ in 0..n {
                tp2.now = tp2.now + SimTime(1_000_000 / n as u64);
                ack(&mut tp2, &mut c, 1);
            }
        }
        assert!(tp2.snd_cwnd < 100, "without friendliness: {}", tp2.snd_cwnd);
    }

    #[test]
    fn first_epoch_growth_is_capped_per_variant() {
        // Before any loss: linux cnt ≤ 20 (≥ 5 % per RTT); paper2008 cnt = 50 scaled by the ACK
        // ratio (31/16 at one packet per ACK after the EWMA settles).
        let mut c = cubic(Variant::Linux);
        let mut tp = state(100, 50);
        tp.now = SimTime::from_secs(2);
        ack(&mut tp, &mut c, 50);
        assert!(c.cnt() <= 20 && c.cnt() >= 2, "{}", c.cnt());
        let mut c = cubic(Variant::Paper2008);
        let mut tp = state(100, 50);
        for i in 0..200 {
            tp.now = SimTime::from_millis(2000 + 40 * i);
            ack(&mut tp, &mut c, 50);
        }
        assert_eq!(c.cnt(), (50 << 4) / 31, "cnt 50 divided by the ratio 31/16");
    }

    #[test]
    fn hystart_leaves_slow_start_on_a_delay_increase() {
        let mut c = cubic(Variant::Linux);
        let mut tp = state(20, u32::MAX);
        tp.now = SimTime::from_millis(0);
        // Round 1: RTT 50 ms, ACKs 5 ms apart (no train).
        let mut seq = 0;
        for i in 0..20 {
            tp.now = SimTime::from_millis(5 * i);
            seq += 1;
            tp.snd_una = seq;
            tp.snd_nxt = seq + tp.snd_cwnd as u64;
            ack(&mut tp, &mut c, 50);
        }
        assert!(tp.in_slow_start());
        // Next round: RTT rose to 70 ms (> 50 + clamp(50/8, 4, 16) = 56.25 ms).
        for i in 0..12 {
            tp.now = SimTime::from_millis(100 + 5 * i);
            seq += 1;
            tp.snd_una = seq;
            tp.snd_nxt = seq + tp.snd_cwnd as u64;
            ack(&mut tp, &mut c, 70);
            if !tp.in_slow_start() {
                break;
            }
        }
        assert!(
            !tp.in_slow_start(),
            "cwnd {} ssthresh {}",
            tp.snd_cwnd,
            tp.snd_ssthresh
        );
        assert_eq!(tp.snd_ssthresh, tp.snd_cwnd);
    }

    #[test]
    fn hystart_plus_plus_enters_css_then_leaves_slow_start_after_five_rounds() {
        let mut c = cubic(Variant::Rfc9438);
        let mut tp = state(20, u32::MAX);
        let mut seq = 0u64;
        let mut round = |tp: &mut TcpState, c: &mut Cubic, rtt: u64, t0: u64| {
            let n = tp.snd_cwnd;
            tp.snd_nxt = seq + n as u64;
            for i in 0..n as u64 {
                tp.now = SimTime::from_millis(t0 + i);
                seq += 1;
                tp.snd_una = seq;
                ack(tp, c, rtt);
            }
        };
        round(&mut tp, &mut c, 50, 0);
        round(&mut tp, &mut c, 50, 100);
        assert!(matches!(c.hspp, Hspp::SlowStart));
        let before = tp.snd_cwnd;
        round(&mut tp, &mut c, 60, 200); // +10 ms ≥ clamp(50/8, 4, 16) = 6.25 ms
        assert!(matches!(c.hspp, Hspp::Css { .. }), "{:?}", c.hspp);
        // In CSS the window grows by a quarter of slow start's rate.
        let w0 = tp.snd_cwnd;
        round(&mut tp, &mut c, 60, 300);
        let grew = tp.snd_cwnd - w0;
        assert!(
            grew <= w0 / 4 + 1 && grew > 0,
            "CSS growth {grew} of {w0} (before {before})"
        );
        for r in 0..6 {
            if !tp.in_slow_start() {
                break;
            }
            round(&mut tp, &mut c, 60, 400 + 100 * r);
        }
        assert!(!tp.in_slow_start(), "left slow start after CSS_ROUNDS");
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let t = |s: &str| toml::from_str::<toml::Table>(s).unwrap();
        for bad in [
            "beta = 1.0",
            "beta = 0.0",
            "c = 0.0",
            "c = -1.0",
            "variant = \"x\"",
            "hystart = \"maybe\"",
            "max_increment = 16",
            "hystart_low_window = 1",
        ] {
            assert!(build(&t(bad)).is_err(), "{bad}");
        }
        assert!(build(&t("variant = \"paper2008\"\nmax_increment = 32")).is_ok());
    }
}
