//! TFRC sender: the allowed sending rate X and the nofeedback timer.
//!
//! Spec: RFC 5348 §4 (TFRC, 2008), and RFC 3448 §4 (TFRC, 2003, which RFC 5348 obsoletes) as the
//! variant ns-2.35 implements ([`TfrcVariant`]). RFC 4342 (CCID 3) uses these rules unchanged; the
//! packet side (CCVal, options, R_sample from the acknowledged packet's send time minus the
//! Elapsed Time, t_ipi scheduling with delta = min(t_ipi/2, t_gran/2), §4.6) is the caller's.
//!
//! Pure logic: the caller reports feedback ([`TfrcSender::on_feedback`]), data packets sent
//! ([`TfrcSender::on_packet_sent`]) and the nofeedback timer's expiry
//! ([`TfrcSender::on_nofeedback_timer`], at [`TfrcSender::next_nofeedback_deadline`]), and reads
//! the rate back ([`TfrcSender::allowed_rate`], [`TfrcSender::inter_packet_interval`]). Rates are
//! bytes/s; s is the segment size the equation and the rate floors use.
//!
//! # Rules common to both variants
//! - Before any feedback X = s bytes/s, one packet per second (§4.2); the nofeedback timer runs
//!   [`INITIAL_NOFEEDBACK`] = 2 s (§4.2), armed here when the first data packet is sent (ns-2.35
//!   does the same; the RFC arms it at "sender initialisation").
//! - RTT: R = R_sample on the first feedback, then R = q·R + (1 − q)·R_sample, q = [`Q`] = 0.9
//!   (§4.3 step 2).
//! - Loss (p > 0): X = max(min(X_calc, limit), s/t_mbi), t_mbi = [`T_MBI`] = 64 s (§4.3 step 4),
//!   X_calc from the throughput equation with the smoothed R.
//! - No loss yet (p = 0): slow start, X = max(min(2X, limit), floor) at most once per R (the
//!   "time last doubled" tld).
//! - Nofeedback timer: after feedback it expires max(4R, 2s/X) later (§4.3 steps 3 and 6); before
//!   the first feedback max(2 s, 2s/X) (ns-2.35's rule; the RFCs leave R undefined then).
//! - Oscillation prevention (§4.5, optional): X_inst = X·R_sqmean/sqrt(R_sample), R_sqmean an
//!   EWMA (q2 = [`Q2`] = 0.9) of sqrt(R_sample), X_inst ≥ s/t_mbi. ns-2.35 has it on
//!   (s_use_osc_prev_ = 1) and applies it only while p > 0
//!   ([`OscillationPrevention::WhenLossy`]).
//!
//! # RFC 3448 ([`TfrcVariant::Rfc3448`], ns-2.35 `Agent/DCCP/TFRC`)
//! - limit = 2·X_recv, the receive rate of the latest feedback; slow-start floor s/R (one packet
//!   per RTT); the first feedback therefore sets X = max(min(2s, 2·X_recv), s/R).
//! - Nofeedback expiry (§4.4): before any feedback X = max(X/2, s/t_mbi). After feedback the cut
//!   goes through the cached X_recv: X_recv = max(X_recv/2, s/(2·t_mbi)) if p = 0 or
//!   X_calc > 2·X_recv, else X_recv = X_calc/4; then X is recomputed (so with p = 0 the slow-start
//!   formula, floor s/R, runs). **Idle rule:** "If the sender has been idle since this nofeedback
//!   timer was set and X_recv is less than four packets per round-trip time, then X_recv should
//!   not be halved" — an idle sender's X_recv stops at 2–4 packets/RTT, X at 4–8.
//! - No data-limited handling: X_recv is whatever the receiver measured. After a silence the
//!   receiver's X_recv is tiny (RFC 4342 §8.3 measures since the last feedback, i.e. across the
//!   silence), so the first feedback of a new talk spurt sets X = max(min(2X, 2·X_recv), s/R) =
//!   s/R: **the sender restarts every talk spurt at one packet per RTT** and slow-starts from
//!   there.
//!
//! # RFC 5348 ([`TfrcVariant::Rfc5348`])
//! - limit = recv_limit from X_recv_set, the receive rates of the last two RTTs (initially the
//!   single value ∞): normally 2·max(X_recv_set) after adding X_recv and dropping entries older
//!   than 2R. If the whole interval the feedback covers was **data-limited** (the caller says so,
//!   [`Feedback::data_limited`], per RFC 5348 §8.2), the set is instead collapsed to its maximum
//!   (old values kept): recv_limit = 2·max, or, if the feedback reports a new loss event or a
//!   larger p, the entries are halved, X_recv taken as 0.85·X_recv and recv_limit = max.
//! - Slow-start floor initial_rate = W_init/R, W_init = min(4s, max(2s, 4380 B)) (RFC 3390;
//!   [`W_INIT_BYTES`]); the first feedback (tld unset) thus gives X ≥ W_init/R. With an RTT from
//!   the handshake the sender may start at W_init/R at once ([`TfrcSender::set_handshake_rtt`]).
//! - Nofeedback expiry (§4.4), recover_rate = W_init/R:
//!   - no RTT and no feedback yet: X = max(X/2, s/t_mbi) unless idle since the timer was set;
//!   - **idle since the timer was set and (p > 0 and X_recv < recover_rate, or p = 0 and X <
//!     2·recover_rate): no change** — an idle sender keeps at least W_init/R (2–4 packets/RTT);
//!   - p = 0: X = max(X/2, s/t_mbi);
//!   - p > 0: Update_Limits(X_recv if X_calc > 2·X_recv else X_calc/2): X_recv_set becomes the
//!     single value limit/2 (limit ≥ s/t_mbi) and X is recomputed with recv_limit = limit.
//! - After a silence the first feedback again reports a small X_recv, but the slow-start floor is
//!   W_init/R, not s/R, and a data-limited feedback keeps the pre-silence maximum of X_recv_set.
//!
//! # Why the variant decides CCID 3 with on/off voice
//! A VoIP source is idle for seconds at a time. Under RFC 3448 (ns-2.35) each talk spurt restarts
//! at s/R and doubles once per RTT, so throughput during a spurt scales like 1/R. Under RFC 5348
//! it restarts at W_init/R (≥ 2 packets per RTT, 4 for small s), or keeps its rate when the
//! caller flags the silent interval as data-limited. ns-2.35 adds one more twist (see
//! docs/dccp.md): its equation and t_ipi use `s_s_` = 500 bytes however small the packets are,
//! while X_recv counts real bytes, so with 160-byte packets 2·X_recv < s/R for ever and the sender
//! stays at exactly one packet per RTT.
//!
//! Constants: [`T_MBI`] 64 s, [`Q`] 0.9, [`INITIAL_NOFEEDBACK`] 2 s, [`RTO_RTTS`] 4, [`W_INIT_BYTES`]
//! 4380 (RFC 5348 §4.2, RFC 3390), [`RECV_SET_AGE_RTTS`] 2 and [`DATA_LIMITED_LOSS_FACTOR`] 0.85
//! (RFC 5348 §4.3), [`IDLE_PACKETS_PER_RTT`] 4 (RFC 3448 §4.4), [`Q2`] 0.9 (RFC 5348 §4.5).

use super::equation::TcpEquation;
use fatpipe_core::SimTime;

/// t_mbi, the maximum back-off interval: the rate never falls below one packet per 64 s
/// (RFC 5348 §4.3, RFC 3448 §4.3).
pub const T_MBI: SimTime = SimTime::from_secs(64);
/// q, the RTT EWMA weight (RFC 5348 §4.3 step 2: "q = 0.9").
pub const Q: f64 = 0.9;
/// q2, the weight of the sqrt(R_sample) EWMA for oscillation prevention (RFC 5348 §4.5).
pub const Q2: f64 = 0.9;
/// The nofeedback timer before any feedback (RFC 5348 §4.2, RFC 3448 §4.2: 2 seconds).
pub const INITIAL_NOFEEDBACK: SimTime = SimTime::from_secs(2);
/// The nofeedback timeout in RTTs: max(4R, 2s/X) (RFC 5348 §4.3 step 3).
pub const RTO_RTTS: f64 = 4.0;
/// W_init's byte bound: W_init = min(4s, max(2s, 4380)) (RFC 5348 §4.2, from RFC 3390).
pub const W_INIT_BYTES: f64 = 4380.0;
/// X_recv_set keeps the receive rates of the last two RTTs (RFC 5348 §4.3 "Update X_recv_set").
pub const RECV_SET_AGE_RTTS: f64 = 2.0;
/// A data-limited interval that reports a new loss event counts X_recv as 0.85·X_recv
/// (RFC 5348 §4.3 step 4).
pub const DATA_LIMITED_LOSS_FACTOR: f64 = 0.85;
/// RFC 3448 §4.4: an idle sender's X_recv is not halved below four packets per RTT.
pub const IDLE_PACKETS_PER_RTT: f64 = 4.0;

/// Which TFRC specification the sender follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TfrcVariant {
    /// RFC 3448 (2003): 2·X_recv limit, s/R slow-start floor, X_recv-halving nofeedback rule
    /// with the four-packets-per-RTT idle exception. ns-2.35 `Agent/DCCP/TFRC`.
    Rfc3448,
    /// RFC 5348 (2008): X_recv_set, data-limited rules, W_init/R floor and recover_rate.
    Rfc5348,
}

/// RFC 5348 §4.5 oscillation prevention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OscillationPrevention {
    Off,
    /// Whenever an RTT sample exists (the RFC's reading).
    Always,
    /// Only while p > 0 (ns-2.35 `tfrc_updateX`: slow start sets X_inst = X).
    WhenLossy,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SenderConfig {
    pub variant: TfrcVariant,
    /// s, segment size in bytes for the equation, the initial rate and the rate floors.
    pub s: u32,
    pub equation: TcpEquation,
    pub t_mbi: SimTime,
    pub q: f64,
    pub q2: f64,
    pub initial_nofeedback: SimTime,
    /// A floor on the nofeedback interval (0 in both RFCs and ns-2.35; Linux CCID 3 uses 1 s:
    /// `tx_t_rto = max(4R, USEC_PER_SEC)`).
    pub min_nofeedback: SimTime,
    pub oscillation_prevention: OscillationPrevention,
}

impl SenderConfig {
    /// The RFC's defaults for `variant` with segment size `s`; oscillation prevention off.
    pub fn new(variant: TfrcVariant, s: u32) -> Self {
        Self {
            variant,
            s,
            equation: TcpEquation::default(),
            t_mbi: T_MBI,
            q: Q,
            q2: Q2,
            initial_nofeedback: INITIAL_NOFEEDBACK,
            min_nofeedback: SimTime::ZERO,
            oscillation_prevention: OscillationPrevention::Off,
        }
    }

    /// ns-2.35 `Agent/DCCP/TFRC` defaults: RFC 3448 rules, s_s_ = 500, s_t_mbi_ = 64,
    /// s_initial_rto_ = 2, s_rtt_q_ = s_rtt_q2_ = 0.9, s_use_osc_prev_ = 1 (p > 0 only).
    /// (`s_initial_x_` = 500 B/s is s bytes/s, as here.)
    pub fn ns2() -> Self {
        Self {
            oscillation_prevention: OscillationPrevention::WhenLossy,
            ..Self::new(TfrcVariant::Rfc3448, 500)
        }
    }
}

/// One feedback report as the sender processes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Feedback {
    /// R_sample = (t_now − t_recvdata) − t_delay (RFC 5348 §4.3 step 1), computed by the caller.
    pub rtt_sample: SimTime,
    /// X_recv reported by the receiver, bytes/s.
    pub x_recv: f64,
    /// Loss event rate reported (0 = none yet).
    pub p: f64,
    /// RFC 5348 §4.3/§8.2: the whole interval this feedback covers was data-limited. Ignored by
    /// RFC 3448.
    pub data_limited: bool,
}

impl Feedback {
    pub fn new(rtt_sample: SimTime, x_recv: f64, p: f64) -> Self {
        Self {
            rtt_sample,
            x_recv,
            p,
            data_limited: false,
        }
    }
}

/// What a nofeedback expiry did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoFeedbackOutcome {
    /// The timer had not expired (or was not armed): nothing done.
    NotDue,
    /// The rate (or its X_recv limit) was cut.
    Reduced,
    /// The idle rule kept the rate.
    KeptIdle,
}

/// One X_recv_set entry; `at` is None only for the initial ∞ before the sender starts.
#[derive(Clone, Copy, Debug)]
struct RecvEntry {
    at: Option<SimTime>,
    rate: f64,
}

#[derive(Clone, Debug)]
pub struct TfrcSender {
    cfg: SenderConfig,
    /// X, the allowed rate (bytes/s).
    x: f64,
    /// X_inst after oscillation prevention (= X when off).
    x_inst: f64,
    /// Smoothed R (s).
    r: Option<f64>,
    r_sample: f64,
    r_sqmean: f64,
    p: f64,
    /// RFC 3448: the cached X_recv.
    x_recv: f64,
    /// RFC 5348: X_recv_set.
    recv_set: Vec<RecvEntry>,
    /// Time last doubled in slow start (None = −1, never).
    tld: Option<SimTime>,
    deadline: Option<SimTime>,
    /// No data packet sent since the nofeedback timer was (re)set.
    idle: bool,
    started: bool,
    feedbacks: u64,
    expiries: u64,
}

fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

/// RTT samples below this (1 µs) are taken as 1 µs, so s/R stays finite.
const MIN_RTT_S: f64 = 1e-6;

impl TfrcSender {
    pub fn new(cfg: SenderConfig) -> Self {
        assert!(cfg.s > 0, "TFRC segment size must be positive");
        let s = cfg.s as f64;
        Self {
            cfg,
            // RFC 5348 §4.2 / RFC 3448 §4.2: one packet per second.
            x: s,
            x_inst: s,
            r: None,
            r_sample: 0.0,
            r_sqmean: 0.0,
            p: 0.0,
            x_recv: 0.0,
            recv_set: vec![RecvEntry {
                at: None,
                rate: f64::INFINITY,
            }],
            tld: None,
            deadline: None,
            idle: false,
            started: false,
            feedbacks: 0,
            expiries: 0,
        }
    }

    pub fn config(&self) -> &SenderConfig {
        &self.cfg
    }
    fn s(&self) -> f64 {
        self.cfg.s as f64
    }
    fn min_rate(&self) -> f64 {
        self.s() / secs(self.cfg.t_mbi)
    }
    /// W_init = min(4s, max(2s, 4380)) bytes (RFC 5348 §4.2).
    pub fn w_init(&self) -> f64 {
        let s = self.s();
        (4.0 * s).min((2.0 * s).max(W_INIT_BYTES))
    }
    /// initial_rate = recover_rate = W_init/R (RFC 5348 §4.2, §4.4); None without an RTT.
    pub fn recover_rate(&self) -> Option<f64> {
        self.r.map(|r| self.w_init() / r)
    }

    /// A data packet was sent: the sender is not idle; the first one starts the sender (arms the
    /// initial nofeedback timer and time-stamps X_recv_set's initial ∞).
    pub fn on_packet_sent(&mut self, now: SimTime) {
        if !self.started {
            self.start(now);
            if self.deadline.is_none() && self.feedbacks == 0 {
                self.deadline = Some(now + self.cfg.initial_nofeedback);
            }
        }
        self.idle = false;
    }

    fn start(&mut self, now: SimTime) {
        self.started = true;
        for e in &mut self.recv_set {
            e.at.get_or_insert(now);
        }
    }

    /// RFC 5348 §4.2: an RTT measured during connection setup lets the sender start at
    /// W_init/R instead of one packet per second. RFC 3448 has no such rule (ignored there), and
    /// after the first feedback this does nothing.
    pub fn set_handshake_rtt(&mut self, now: SimTime, rtt: SimTime) {
        if self.cfg.variant != TfrcVariant::Rfc5348 || self.feedbacks > 0 {
            return;
        }
        let r = secs(rtt).max(MIN_RTT_S);
        self.r = Some(r);
        self.r_sample = r;
        self.r_sqmean = r.sqrt();
        self.x = self.w_init() / r;
        self.tld = Some(now);
        self.refresh_inst();
    }

    /// Process a feedback packet (RFC 5348 §4.3 / RFC 3448 §4.3).
    pub fn on_feedback(&mut self, now: SimTime, fb: Feedback) {
        if !self.started {
            self.start(now);
        }
        let sample = secs(fb.rtt_sample).max(MIN_RTT_S);
        // Step 2: R = R_sample on the first feedback, then an EWMA.
        let r = match self.r {
            Some(r) if self.feedbacks > 0 => self.cfg.q * r + (1.0 - self.cfg.q) * sample,
            _ => sample,
        };
        self.r = Some(r);
        self.r_sqmean = if self.feedbacks == 0 {
            sample.sqrt()
        } else {
            self.cfg.q2 * self.r_sqmean + (1.0 - self.cfg.q2) * sample.sqrt()
        };
        self.r_sample = sample;
        let p_prev = self.p;
        self.p = fb.p.clamp(0.0, 1.0);
        let x_recv = fb.x_recv.max(0.0);
        let timeout = match self.cfg.variant {
            TfrcVariant::Rfc3448 => {
                self.x_recv = x_recv;
                self.update_x_3448(now);
                // RFC 3448 §4.3 step 6: max(4R, 2s/X) with the new X.
                self.timeout(r)
            }
            TfrcVariant::Rfc5348 => {
                // Step 3: RTO = max(4R, 2s/X) with X before this update; step 6 uses it.
                let rto = self.timeout(r);
                let recv_limit = if fb.data_limited {
                    if self.p > p_prev {
                        for e in &mut self.recv_set {
                            e.rate /= 2.0;
                        }
                        self.maximize_recv_set(now, DATA_LIMITED_LOSS_FACTOR * x_recv);
                        self.recv_set_max()
                    } else {
                        self.maximize_recv_set(now, x_recv);
                        2.0 * self.recv_set_max()
                    }
                } else {
                    self.update_recv_set(now, x_recv, r);
                    2.0 * self.recv_set_max()
                };
                self.update_x_5348(now, recv_limit);
                rto
            }
        };
        self.feedbacks += 1;
        self.deadline = Some(now + timeout);
        self.idle = true;
        self.refresh_inst();
    }

    /// max(4R, 2s/X, min_nofeedback) as a duration.
    fn timeout(&self, r: f64) -> SimTime {
        let t = (RTO_RTTS * r).max(2.0 * self.s() / self.x);
        SimTime::from_secs_f64(t).max(self.cfg.min_nofeedback)
    }

    /// "t_now − tld ≥ R", compared in whole nanoseconds so that feedback exactly one R apart
    /// is not lost to floating-point noise in the EWMA.
    fn slow_start_due(&self, now: SimTime, r: f64) -> bool {
        self.tld
            .is_none_or(|t| now.saturating_sub(t) >= SimTime::from_secs_f64(r))
    }

    /// RFC 3448 §4.3 step 4.
    fn update_x_3448(&mut self, now: SimTime) {
        let r = self.r.expect("R is set before X is updated");
        let s = self.s();
        if self.p > 0.0 {
            let x_calc = self.cfg.equation.rate(s, r, self.p);
            self.x = x_calc.min(2.0 * self.x_recv).max(self.min_rate());
        } else if self.slow_start_due(now, r) {
            self.x = (2.0 * self.x).min(2.0 * self.x_recv).max(s / r);
            self.tld = Some(now);
        }
    }

    /// RFC 5348 §4.3 step 4, second half.
    fn update_x_5348(&mut self, now: SimTime, recv_limit: f64) {
        let r = self.r.expect("R is set before X is updated");
        if self.p > 0.0 {
            let x_bps = self.cfg.equation.rate(self.s(), r, self.p);
            self.x = x_bps.min(recv_limit).max(self.min_rate());
        } else if self.slow_start_due(now, r) {
            let initial_rate = self.w_init() / r;
            self.x = (2.0 * self.x).min(recv_limit).max(initial_rate);
            self.tld = Some(now);
        }
    }

    /// "Update X_recv_set": add X_recv, delete entries older than two RTTs.
    fn update_recv_set(&mut self, now: SimTime, x_recv: f64, r: f64) {
        self.recv_set.push(RecvEntry {
            at: Some(now),
            rate: x_recv,
        });
        let max_age = SimTime::from_secs_f64(RECV_SET_AGE_RTTS * r);
        self.recv_set
            .retain(|e| e.at.is_none_or(|t| now.saturating_sub(t) <= max_age));
    }

    /// "Maximize X_recv_set": keep only the largest of the set and X_recv (∞ dropped), stamped now.
    fn maximize_recv_set(&mut self, now: SimTime, x_recv: f64) {
        let m = self
            .recv_set
            .iter()
            .map(|e| e.rate)
            .filter(|r| r.is_finite())
            .fold(x_recv, f64::max);
        self.recv_set = vec![RecvEntry {
            at: Some(now),
            rate: m,
        }];
    }

    fn recv_set_max(&self) -> f64 {
        self.recv_set.iter().map(|e| e.rate).fold(0.0, f64::max)
    }

    /// "Update_Limits(timer_limit)" (RFC 5348 §4.4).
    fn update_limits(&mut self, now: SimTime, timer_limit: f64) {
        let limit = timer_limit.max(self.min_rate());
        self.recv_set = vec![RecvEntry {
            at: Some(now),
            rate: limit / 2.0,
        }];
        self.update_x_5348(now, limit);
    }

    /// The nofeedback timer fired at `now`: call at [`Self::next_nofeedback_deadline`]; an
    /// earlier call (or one before the timer is armed) does nothing and returns `NotDue`.
    pub fn on_nofeedback_timer(&mut self, now: SimTime) -> NoFeedbackOutcome {
        if self.deadline.is_none_or(|d| now < d) {
            return NoFeedbackOutcome::NotDue;
        }
        let s = self.s();
        let min_rate = self.min_rate();
        let outcome = match self.cfg.variant {
            TfrcVariant::Rfc3448 => {
                if self.feedbacks == 0 {
                    // "If the nofeedback timer expires when the sender does not yet have an RTT
                    // sample, and has not yet received any feedback ... the sending rate [is]
                    // cut in half directly."
                    self.x = (self.x / 2.0).max(min_rate);
                    NoFeedbackOutcome::Reduced
                } else {
                    let r = self.r.expect("feedback sets R");
                    if self.idle && self.x_recv < IDLE_PACKETS_PER_RTT * s / r {
                        NoFeedbackOutcome::KeptIdle
                    } else {
                        let x_calc = self.cfg.equation.rate(s, r, self.p);
                        if self.p <= 0.0 || x_calc > 2.0 * self.x_recv {
                            self.x_recv = (self.x_recv / 2.0).max(s / (2.0 * secs(self.cfg.t_mbi)));
                        } else {
                            self.x_recv = x_calc / 4.0;
                        }
                        self.update_x_3448(now);
                        NoFeedbackOutcome::Reduced
                    }
                }
            }
            TfrcVariant::Rfc5348 => match self.r {
                None => {
                    if self.idle {
                        // recover_rate is undefined without R; an idle sender keeps its rate.
                        NoFeedbackOutcome::KeptIdle
                    } else {
                        self.x = (self.x / 2.0).max(min_rate);
                        NoFeedbackOutcome::Reduced
                    }
                }
                Some(r) => {
                    let recover = self.w_init() / r;
                    let x_recv = self.recv_set_max();
                    let idle_keeps = if self.p > 0.0 {
                        x_recv < recover
                    } else {
                        self.x < 2.0 * recover
                    };
                    if self.idle && idle_keeps {
                        NoFeedbackOutcome::KeptIdle
                    } else if self.p <= 0.0 {
                        self.x = (self.x / 2.0).max(min_rate);
                        NoFeedbackOutcome::Reduced
                    } else {
                        let x_bps = self.cfg.equation.rate(s, r, self.p);
                        if x_bps > 2.0 * x_recv {
                            self.update_limits(now, x_recv);
                        } else {
                            self.update_limits(now, x_bps / 2.0);
                        }
                        NoFeedbackOutcome::Reduced
                    }
                }
            },
        };
        let t = match self.r {
            Some(r) if self.feedbacks > 0 || self.cfg.variant == TfrcVariant::Rfc5348 => {
                self.timeout(r)
            }
            _ => SimTime::from_secs_f64(2.0 * s / self.x)
                .max(self.cfg.initial_nofeedback)
                .max(self.cfg.min_nofeedback),
        };
        self.deadline = Some(now + t);
        self.idle = true;
        self.expiries += 1;
        self.refresh_inst();
        outcome
    }

    fn refresh_inst(&mut self) {
        let on = match self.cfg.oscillation_prevention {
            OscillationPrevention::Off => false,
            OscillationPrevention::Always => true,
            OscillationPrevention::WhenLossy => self.p > 0.0,
        };
        self.x_inst = if on && self.r_sample > 0.0 && self.r_sqmean > 0.0 {
            (self.x * self.r_sqmean / self.r_sample.sqrt()).max(self.min_rate())
        } else {
            self.x
        };
    }

    /// When the nofeedback timer expires (None before the first data packet).
    pub fn next_nofeedback_deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    /// The rate to send at, bytes/s: X_inst with oscillation prevention, else X.
    pub fn allowed_rate(&self) -> f64 {
        self.x_inst
    }
    /// X itself (before oscillation prevention).
    pub fn x(&self) -> f64 {
        self.x
    }
    /// t_ipi = s/X_inst for a packet of `s` bytes (RFC 5348 §4.6). ns-2.35 passes its nominal
    /// s_s_ here whatever the real packet size.
    pub fn inter_packet_interval(&self, s: u32) -> SimTime {
        SimTime::from_secs_f64(s as f64 / self.x_inst)
    }
    /// The smoothed RTT R.
    pub fn rtt(&self) -> Option<SimTime> {
        self.r.map(SimTime::from_secs_f64)
    }
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }
    /// X_calc from the equation (None while p = 0 or without R).
    pub fn x_calc(&self) -> Option<f64> {
        let r = self.r?;
        (self.p > 0.0).then(|| self.cfg.equation.rate(self.s(), r, self.p))
    }
    /// The receive rate that limits X: RFC 3448's cached X_recv, or max(X_recv_set) for
    /// RFC 5348 (∞ while the initial value is in the set).
    pub fn x_recv(&self) -> f64 {
        match self.cfg.variant {
            TfrcVariant::Rfc3448 => self.x_recv,
            TfrcVariant::Rfc5348 => self.recv_set_max(),
        }
    }
    /// No data sent since the nofeedback timer was last set.
    pub fn is_idle(&self) -> bool {
        self.idle
    }
    pub fn feedback_count(&self) -> u64 {
        self.feedbacks
    }
    pub fn nofeedback_expiries(&self) -> u64 {
        self.expiries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> SimTime {
        SimTime::from_millis(t)
    }
    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }
    fn sender(v: TfrcVariant, s: u32) -> TfrcSender {
        TfrcSender::new(SenderConfig::new(v, s))
    }

    #[test]
    fn initial_rate_and_first_feedback() {
        for v in [TfrcVariant::Rfc3448, TfrcVariant::Rfc5348] {
            let mut t = sender(v, 1000);
            // One packet per second before feedback; no timer until data is sent.
            assert_eq!(t.allowed_rate(), 1000.0);
            assert_eq!(t.next_nofeedback_deadline(), None);
            t.on_packet_sent(ms(0));
            assert_eq!(t.next_nofeedback_deadline(), Some(ms(2000)));
            t.on_feedback(ms(100), Feedback::new(ms(100), 1000.0, 0.0));
            match v {
                // X = max(min(2·1000, 2·1000), 1000/0.1) = 10000 B/s: one packet per RTT.
                TfrcVariant::Rfc3448 => assert!(close(t.x(), 10_000.0)),
                // W_init = min(4000, max(2000, 4380)) = 4000; X = max(min(2000, ∞), 4000/0.1).
                TfrcVariant::Rfc5348 => assert!(close(t.x(), 40_000.0)),
            }
            assert_eq!(t.rtt(), Some(ms(100)));
        }
        // RFC 5348 handshake RTT: W_init/R at once (160-byte packets: W_init = 640).
        let mut t = sender(TfrcVariant::Rfc5348, 160);
        t.set_handshake_rtt(ms(0), ms(100));
        assert!(close(t.x(), 6400.0));
        let mut t = sender(TfrcVariant::Rfc3448, 160);
        t.set_handshake_rtt(ms(0), ms(100));
        assert!(close(t.x(), 160.0));
    }

    #[test]
    fn nofeedback_deadlines() {
        let mut t = sender(TfrcVariant::Rfc3448, 1000);
        t.on_packet_sent(ms(0));
        // Early call: not due.
        assert_eq!(t.on_nofeedback_timer(ms(1999)), NoFeedbackOutcome::NotDue);
        // First expiry without feedback: X 1000 → 500, next in max(2 s, 2·1000/500 = 4 s).
        assert_eq!(t.on_nofeedback_timer(ms(2000)), NoFeedbackOutcome::Reduced);
        assert!(close(t.x(), 500.0));
        assert_eq!(t.next_nofeedback_deadline(), Some(ms(6000)));
        // After feedback (R = 50 ms, X = s/R = 20000): max(4·0.05, 2·1000/20000) = 0.2 s.
        t.on_feedback(ms(6100), Feedback::new(ms(50), 0.0, 0.0));
        assert!(close(t.x(), 20_000.0));
        assert_eq!(t.next_nofeedback_deadline(), Some(ms(6300)));
        // RFC 5348 step 3 uses X before the update: first feedback, X = 1000 → 2·1000/1000 = 2 s.
        let mut t = sender(TfrcVariant::Rfc5348, 1000);
        t.on_packet_sent(ms(0));
        t.on_feedback(ms(100), Feedback::new(ms(100), 0.0, 0.0));
        assert_eq!(t.next_nofeedback_deadline(), Some(ms(2100)));
    }

    /// Slow start with a receiver that receives whatever is sent: feedback every R/2.
    fn slow_start(v: TfrcVariant) -> Vec<f64> {
        let mut t = sender(v, 1000);
        t.on_packet_sent(ms(0));
        let mut xs = vec![];
        for k in 1..=8u64 {
            let now = ms(50 * k);
            let x_recv = t.x();
            t.on_packet_sent(now);
            t.on_feedback(now, Feedback::new(ms(100), x_recv, 0.0));
            xs.push(t.x());
        }
        xs
    }

    #[test]
    fn slow_start_doubles_once_per_rtt() {
        // RFC 3448: 50 ms: first feedback, X = max(min(2000, 2000), 10000) = 10000 (tld = 50);
        // 100 ms: 50 ms < R, unchanged; 150 ms: 20000; 250: 40000; 350: 80000.
        let x = slow_start(TfrcVariant::Rfc3448);
        let want = [10e3, 10e3, 20e3, 20e3, 40e3, 40e3, 80e3, 80e3];
        assert!(x.iter().zip(want).all(|(a, b)| close(*a, b)), "{x:?}");
        // RFC 5348: first feedback X = W_init/R = 40000, then ×2 per RTT.
        let x = slow_start(TfrcVariant::Rfc5348);
        let want = [40e3, 40e3, 80e3, 80e3, 160e3, 160e3, 320e3, 320e3];
        assert!(x.iter().zip(want).all(|(a, b)| close(*a, b)), "{x:?}");
    }

    #[test]
    fn slow_start_limited_by_receive_rate() {
        for v in [TfrcVariant::Rfc3448, TfrcVariant::Rfc5348] {
            let mut t = sender(v, 1000);
            t.on_packet_sent(ms(0));
            for k in 1..=10u64 {
                t.on_packet_sent(ms(200 * k));
                t.on_feedback(ms(200 * k), Feedback::new(ms(100), 30_000.0, 0.0));
            }
            // min(2X, 2·X_recv) = 60000 (above both floors, 10000 and 40000).
            assert!(close(t.x(), 60_000.0), "{v:?} {}", t.x());
        }
    }

    #[test]
    fn converges_to_equation_rate() {
        let eq = TcpEquation::default();
        for v in [TfrcVariant::Rfc3448, TfrcVariant::Rfc5348] {
            let mut t = sender(v, 1460);
            t.on_packet_sent(ms(0));
            // Samples around 80 ms settle R at 80 ms; X = X_calc(1460, 0.08, 0.01).
            for k in 1..=200u64 {
                t.on_packet_sent(ms(80 * k));
                t.on_feedback(ms(80 * k), Feedback::new(ms(80), 1e9, 0.01));
            }
            let want = eq.rate(1460.0, 0.08, 0.01);
            assert!((t.x() - want).abs() < 1e-6 * want, "{v:?}");
            assert_eq!(
                t.x_calc().map(|x| (x - want).abs() < 1e-6 * want),
                Some(true)
            );
            // A 2·X_recv below X_calc binds instead (RFC 5348 only once the higher reports are
            // more than 2R old and have left X_recv_set).
            for k in 201..=203u64 {
                t.on_feedback(ms(80 * k), Feedback::new(ms(80), want / 4.0, 0.01));
            }
            assert!(close(t.x(), want / 2.0), "{v:?}");
        }
    }

    /// Lossy steady state (p = 0.01, R = 100 ms, s = 1000) then no feedback; `busy` says whether
    /// the sender keeps sending between expiries. Returns X after each expiry.
    fn starve(v: TfrcVariant, busy: bool, p: f64, expiries: usize) -> (TfrcSender, Vec<f64>) {
        let mut t = sender(v, 1000);
        t.on_packet_sent(ms(0));
        for k in 1..=20u64 {
            t.on_packet_sent(ms(100 * k));
            t.on_feedback(ms(100 * k), Feedback::new(ms(100), 1e9, p));
        }
        let mut xs = vec![];
        for _ in 0..expiries {
            let d = t.next_nofeedback_deadline().unwrap();
            if busy {
                t.on_packet_sent(d.saturating_sub(ms(1)));
            }
            t.on_nofeedback_timer(d);
            xs.push(t.x());
        }
        (t, xs)
    }

    #[test]
    fn nofeedback_halves_down_to_one_packet_per_t_mbi() {
        let floor = 1000.0 / 64.0;
        for v in [TfrcVariant::Rfc3448, TfrcVariant::Rfc5348] {
            let (mut t, xs) = starve(v, true, 0.01, 40);
            let x0 = TcpEquation::default().rate(1000.0, 0.1, 0.01);
            // Each expiry halves X until s/t_mbi, then it stays there.
            let mut prev = x0;
            for &x in &xs {
                if prev / 2.0 > floor {
                    assert!(close(x, prev / 2.0), "{v:?}: {prev} → {x}");
                } else {
                    assert!(close(x, floor), "{v:?}: {prev} → {x}");
                }
                prev = x;
            }
            assert!(close(t.x(), floor));
            // At the floor the timer runs 2s/X = 128 s.
            let d = t.next_nofeedback_deadline().unwrap();
            t.on_packet_sent(d.saturating_sub(ms(1)));
            t.on_nofeedback_timer(d);
            assert_eq!(
                t.next_nofeedback_deadline(),
                Some(d + SimTime::from_secs(128))
            );
        }
        // With p = 0 as well (no X_calc yet): RFC 3448 halves X_recv and re-runs slow start
        // (floor s/R = 10000, X_recv keeps halving beneath it); RFC 5348 halves X to s/t_mbi.
        let (t, _) = starve(TfrcVariant::Rfc3448, true, 0.0, 40);
        assert!(close(t.x(), 10_000.0));
        assert!(close(t.x_recv(), 1000.0 / 128.0));
        let (t, _) = starve(TfrcVariant::Rfc5348, true, 0.0, 40);
        assert!(close(t.x(), floor));
    }

    #[test]
    fn idle_sender_keeps_a_floor_in_both_variants() {
        // s = 1000, R = 100 ms. An idle sender stops being cut:
        // RFC 3448 once X_recv < 4s/R = 40000 (then X = 2·X_recv);
        // RFC 5348 once X < 2·recover_rate = 2·W_init/R = 2·40000 (p = 0) or X_recv < W_init/R.
        let (t, xs) = starve(TfrcVariant::Rfc3448, false, 0.0, 30);
        assert!(
            t.x_recv() < 40_000.0 && t.x_recv() >= 20_000.0,
            "{}",
            t.x_recv()
        );
        assert!(close(t.x(), 2.0 * t.x_recv()));
        assert!(close(*xs.last().unwrap(), xs[xs.len() - 2]));
        let (t, _) = starve(TfrcVariant::Rfc5348, false, 0.0, 30);
        assert!(t.x() < 80_000.0 && t.x() >= 40_000.0, "{}", t.x());
        // Lossy (p = 0.01, X_calc ≈ 109 kB/s):
        let (t, _) = starve(TfrcVariant::Rfc3448, false, 0.01, 30);
        assert!(t.x_recv() < 40_000.0 && t.x_recv() >= 20_000.0);
        let (t, _) = starve(TfrcVariant::Rfc5348, false, 0.01, 30);
        assert!(
            t.x_recv() < 40_000.0 && t.x_recv() >= 20_000.0,
            "{}",
            t.x_recv()
        );
        // The expiry reports the idle rule.
        let (mut t, _) = starve(TfrcVariant::Rfc5348, false, 0.0, 30);
        let d = t.next_nofeedback_deadline().unwrap();
        assert_eq!(t.on_nofeedback_timer(d), NoFeedbackOutcome::KeptIdle);
    }

    /// An on/off (voice-like) sender: 160-byte packets, R = 100 ms; it talks at 50 packets/s
    /// (8000 B/s) with feedback every RTT, falls silent 1.6 s (the nofeedback timer fires), then
    /// the first feedback of the next spurt reports the receive rate since the last feedback:
    /// 2 packets over ~1.7 s. Returns (X before silence, X after the silence's expiries, X after
    /// the first feedback of the new spurt).
    fn voice_restart(v: TfrcVariant, data_limited: bool) -> (f64, f64, f64) {
        let mut t = sender(v, 160);
        let rtt = ms(100);
        t.on_packet_sent(ms(0));
        let mut now = ms(0);
        for _ in 0..10 {
            now += rtt;
            t.on_packet_sent(now);
            t.on_feedback(now, Feedback::new(rtt, 8000.0, 0.0));
        }
        let before = t.x();
        let silence_end = now + ms(1600);
        while let Some(d) = t.next_nofeedback_deadline().filter(|&d| d <= silence_end) {
            t.on_nofeedback_timer(d);
        }
        let during = t.x();
        t.on_packet_sent(silence_end);
        let mut fb = Feedback::new(rtt, 320.0 / 1.7, 0.0);
        fb.data_limited = data_limited;
        t.on_feedback(silence_end + rtt, fb);
        (before, during, t.x())
    }

    #[test]
    fn idle_restart_differs_between_variants() {
        // Before the silence both have X = 2·X_recv = 16000 B/s (slow start capped by the
        // 8000 B/s the source offers): 10 packets per RTT.
        // RFC 3448: idle and X_recv = 8000 ≥ 4s/R = 6400, so the first expiry (400 ms) halves
        // X_recv to 4000 and X to 8000; from then on X_recv < 6400, idle: kept. The new spurt's
        // feedback then gives X = max(min(2·8000, 2·188), s/R = 1600) = 1600 B/s:
        // one packet per RTT.
        let (before, during, after) = voice_restart(TfrcVariant::Rfc3448, false);
        assert!(close(before, 16_000.0));
        assert!(close(during, 8000.0));
        assert!(close(after, 1600.0));
        // RFC 5348: recover_rate = W_init/R = min(640, max(320, 4380))/0.1 = 6400. Idle with
        // X = 16000 ≥ 2·6400: the first expiry halves X to 8000 < 12800, then kept. The new
        // spurt's feedback: X_recv_set holds only the new 188 B/s (older entries are > 2R old),
        // X = max(min(16000, 376), 6400) = 6400 B/s: four packets per RTT.
        let (before, during, after) = voice_restart(TfrcVariant::Rfc5348, false);
        assert!(close(before, 16_000.0));
        assert!(close(during, 8000.0));
        assert!(close(after, 6400.0));
        // RFC 5348 with the silence reported as data-limited: Maximize X_recv_set keeps the
        // pre-silence 8000, recv_limit = 16000, X = max(min(2·8000, 16000), 6400) = 16000.
        let (_, _, after) = voice_restart(TfrcVariant::Rfc5348, true);
        assert!(close(after, 16_000.0));
        // RFC 3448 ignores the data-limited flag.
        let (_, _, after) = voice_restart(TfrcVariant::Rfc3448, true);
        assert!(close(after, 1600.0));
    }

    #[test]
    fn data_limited_loss_halves_the_receive_set() {
        // RFC 5348 §4.3: a data-limited interval that reports a new loss event: entries halved,
        // X_recv·0.85, recv_limit = max (not 2·max).
        let mut t = sender(TfrcVariant::Rfc5348, 1000);
        t.on_packet_sent(ms(0));
        for k in 1..=5u64 {
            t.on_packet_sent(ms(100 * k));
            t.on_feedback(ms(100 * k), Feedback::new(ms(100), 50_000.0, 0.0));
        }
        let mut fb = Feedback::new(ms(100), 50_000.0, 0.001);
        fb.data_limited = true;
        t.on_feedback(ms(600), fb);
        // Set after halving: {25000, 25000}; 0.85·50000 = 42500 is the largest: recv_limit =
        // 42500 < X_calc(p = 0.001) ≈ 387 kB/s.
        assert!(close(t.x_recv(), 42_500.0));
        assert!(close(t.x(), 42_500.0));
    }

    #[test]
    fn oscillation_prevention_scales_by_rtt_ratio() {
        let mut cfg = SenderConfig::new(TfrcVariant::Rfc5348, 1000);
        cfg.oscillation_prevention = OscillationPrevention::Always;
        let mut t = TfrcSender::new(cfg);
        t.on_packet_sent(ms(0));
        t.on_feedback(ms(100), Feedback::new(ms(100), 1e9, 0.01));
        assert!(close(t.allowed_rate(), t.x()));
        // A 400 ms sample: R_sqmean = 0.9·sqrt(0.1) + 0.1·sqrt(0.4) = 0.34785;
        // X_inst = X·0.34785/sqrt(0.4) = 0.55 X.
        t.on_feedback(ms(200), Feedback::new(ms(400), 1e9, 0.01));
        let ratio = t.allowed_rate() / t.x();
        let want = (0.9 * 0.1f64.sqrt() + 0.1 * 0.4f64.sqrt()) / 0.4f64.sqrt();
        assert!(close(ratio, want), "{ratio} vs {want}");
        assert_eq!(t.inter_packet_interval(1000), {
            SimTime::from_secs_f64(1000.0 / t.allowed_rate())
        });
        // ns-2 style: not in slow start.
        let mut t = TfrcSender::new(SenderConfig::ns2());
        t.on_packet_sent(ms(0));
        t.on_feedback(ms(100), Feedback::new(ms(100), 1e9, 0.0));
        t.on_feedback(ms(300), Feedback::new(ms(400), 1e9, 0.0));
        assert!(close(t.allowed_rate(), t.x()));
    }

    #[test]
    fn ns2_one_packet_per_rtt_with_small_packets() {
        // ns-2.35 defaults (s_s_ = 500) carrying 160-byte packets: the receiver measures real
        // bytes, one 160-byte packet per RTT, X_recv = 160/R. Slow start gives
        // X = max(min(2X, 2·160/R), 500/R) = 500/R, and t_ipi = s_s_/X = R: one packet per RTT,
        // for ever (ns-2.35 trace: s_x_ ≈ 4900 B/s at R = 0.102 s).
        let mut t = TfrcSender::new(SenderConfig::ns2());
        let r = 0.102;
        t.on_packet_sent(ms(0));
        for k in 1..=50u64 {
            let now = SimTime::from_secs_f64(r * k as f64);
            t.on_packet_sent(now);
            t.on_feedback(
                now,
                Feedback::new(SimTime::from_secs_f64(r), 160.0 / r, 0.0),
            );
            assert!((t.x() - 500.0 / r).abs() < 1e-6, "{}", t.x());
        }
        assert_eq!(t.inter_packet_interval(500), SimTime::from_secs_f64(r));
    }
}
