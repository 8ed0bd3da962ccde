//! Per-flow TCP configuration (already validated and in base units).

use fatpipe_core::SimTime;

pub use super::rtt::RtoEstimator;

/// Loss-recovery algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// SACK-based loss recovery, RFC 6675 (receiver sends SACK blocks, RFC 2018).
    Sack,
    /// NewReno fast recovery without SACK, RFC 6582 (partial ACKs retransmit the next hole).
    NewReno,
}

/// How much an ACK may grow cwnd (a documented choice where Linux and RFC 5681 differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndGrowth {
    /// By the number of segments the ACK newly covers (Linux since 3.x `tcp_slow_start` /
    /// `tcp_cong_avoid_ai`; RFC 3465 byte counting without the L limit). Default.
    Segments,
    /// At most one segment per ACK in slow start and 1/cwnd per ACK in congestion avoidance
    /// (RFC 5681 §3.1 Eq. 2 and 3; ns-2's `Agent/TCP` family).
    PerAck,
}

/// What a retransmission timeout does to ssthresh (a documented choice, see `on_rto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoSsthresh {
    /// Reduce once per loss episode: a timeout during a recovery that already reduced ssthresh
    /// keeps it (Linux `tcp_enter_loss`). Default.
    OncePerEpisode,
    /// Every first timeout reduces ssthresh from the current cwnd, even during a fast recovery
    /// that already halved it (ns-2 `Agent/TCP::timeout`); back-to-back timeouts of the same
    /// segment keep it (RFC 5681 §3.1).
    HalveAgain,
    /// Every timeout asks the algorithm for ssthresh from the current cwnd, repeated timeouts of
    /// the same segment included, so a second timeout leaves ssthresh at its floor (2): ns-2.35
    /// `LinuxTcpAgent::enter_loss` (`tcp-linux.cc`), where Linux's once-per-episode condition is
    /// commented out.
    EveryTimeout,
}

/// Which ACKs give the retransmission timer's estimator an RTT sample (a documented choice where
/// the RFCs and Linux differ from ns-2's TCP-Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSamples {
    /// Only ACKs that acknowledge new data (advance snd_una): RFC 7323 §4.2's RTTM rule, Linux's
    /// `FLAG_ACKED` condition in `tcp_ack_update_rtt`. Default.
    NewData,
    /// Every ACK that carries a timestamp echo, duplicate ACKs included: ns-2.35's
    /// `LinuxTcpAgent::time_processing` (tcp-linux.cc) calls `rtt_update(now - ts_echo)` for
    /// each ACK it accepts. A duplicate ACK echoes TS.Recent, the timestamp of the last segment
    /// before the hole (RFC 7323 §4.3), so during a loss episode the samples grow with the time
    /// since the hole, and SRTT and the variance, hence the RTO, with them.
    EveryAck,
}

impl RttSamples {
    pub const NAMES: &'static str = "\"new-data\", \"every-ack\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "new-data" => Some(Self::NewData),
            "every-ack" => Some(Self::EveryAck),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NewData => "new-data",
            Self::EveryAck => "every-ack",
        }
    }
}

/// What the Loss state (after a retransmission timeout) does with losses that SACK information
/// reveals (a documented choice where Linux and ns-2's TCP-Linux differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossState {
    /// Loss lasts until everything outstanding at the timeout is acknowledged; segments SACK
    /// shows lost are resent within the window, without a further reduction, and a lost
    /// retransmission waits for the next timeout (Linux 2.6.22 `tcp_fastretrans_alert`, case
    /// `TCP_CA_Loss`; its lost-retransmission check runs in Recovery only). Default.
    Linux,
    /// ns-2.35's `Agent/TCP/Linux`: its scoreboard marks a retransmission lost again once a
    /// segment sent after it is SACKed (scoreboard1.cc `UpdateScoreBoard`: `GetSndNxt() <=
    /// fack_`), in every state, and `tcp_fastretrans_alert` (tcp-linux.cc) lets Loss through to
    /// its loss branch: any newly lost segment starts a Recovery from the current window
    /// (ssthresh from the algorithm, cwnd to its `min_cwnd`, a new recovery point).
    Ns2,
}

impl LossState {
    pub const NAMES: &'static str = "\"linux\", \"ns2\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "linux" => Some(Self::Linux),
            "ns2" => Some(Self::Ns2),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Linux => "linux",
            Self::Ns2 => "ns2",
        }
    }
}

impl CwndGrowth {
    pub const NAMES: &'static str = "\"segments\", \"per-ack\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "segments" => Some(Self::Segments),
            "per-ack" => Some(Self::PerAck),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Segments => "segments",
            Self::PerAck => "per-ack",
        }
    }
}

impl RtoSsthresh {
    pub const NAMES: &'static str = "\"once-per-episode\", \"halve-again\", \"every-timeout\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "once-per-episode" => Some(Self::OncePerEpisode),
            "halve-again" => Some(Self::HalveAgain),
            "every-timeout" => Some(Self::EveryTimeout),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OncePerEpisode => "once-per-episode",
            Self::HalveAgain => "halve-again",
            Self::EveryTimeout => "every-timeout",
        }
    }
}

/// Which ACKs restart the retransmission timer (a documented choice where Linux and ns-2's
/// TCP-Linux differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoRestart {
    /// ACKs that advance snd_una (RFC 6298 §5.3; Linux `tcp_rearm_rto` from
    /// `tcp_clean_rtx_queue`) and retransmissions of the first unacknowledged segment. Default.
    Advance,
    /// Every ACK while data is outstanding, duplicate and SACK-only ACKs included, and every ACK
    /// clears the backoff: ns-2.35's `Agent/TCP/Linux` (`time_processing` re-arms the timer on
    /// each ACK; `ts_resetRTO_ true` resets `t_backoff_`). A recovery that keeps receiving SACKs
    /// then never times out.
    EveryAck,
}

impl RtoRestart {
    pub const NAMES: &'static str = "\"advance\", \"every-ack\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "advance" => Some(Self::Advance),
            "every-ack" => Some(Self::EveryAck),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Advance => "advance",
            Self::EveryAck => "every-ack",
        }
    }
}

/// How cwnd comes down during fast recovery (a documented choice where Linux, the RFCs and ns-2
/// differ). They differ in what may be sent while it lasts, which decides whether a small window
/// keeps its ACK clock or times out, and (rate halving) in the window recovery ends with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndReduction {
    /// Proportional Rate Reduction, RFC 6937 with the slow-start reduction bound (PRR-SSRB), as
    /// Linux since 3.2 (`tcp_init_cwnd_reduction` / `tcp_cwnd_reduction`): while the pipe is above
    /// ssthresh, sending is spread over the recovery in proportion ssthresh/prior_cwnd of what is
    /// delivered; below it, the pipe grows back towards ssthresh at most one segment faster than
    /// deliveries. Default.
    Prr,
    /// ns-2.35 `Agent/TCP/Linux` (the TCP-Linux module) without `overhead_`. On entering
    /// recovery cwnd = the module's `min_cwnd` where ns-2's module has one (ssthresh/2 for the
    /// Reno family, Compound, HighSpeed, Scalable, Illinois, Vegas: a quarter of the window), else
    /// ssthresh (BIC, CUBIC, H-TCP), plus a second bound `next_pkts_in_flight_` that starts at the
    /// old cwnd and lets one segment go for every two that leave the network until the pipe
    /// reaches cwnd (rate halving, `send_much`). On leaving Recovery or Loss a cwnd below
    /// ssthresh becomes min(ssthresh, pipe + 3) (`tcp_moderate_cwnd`). Not modelled: with
    /// `overhead_` on, ns-2's delayed-send timer restores the bound after each send, so it stops
    /// halving (docs/validation.md).
    RateHalving,
    /// cwnd = ssthresh on entering recovery, nothing sent until the pipe falls below it (RFC 6675
    /// §5 with RFC 5681's reduction; fatpipe before PRR).
    AtOnce,
}

impl CwndReduction {
    pub const NAMES: &'static str = "\"prr\", \"rate-halving\", \"at-once\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "prr" => Some(Self::Prr),
            "rate-halving" => Some(Self::RateHalving),
            "at-once" => Some(Self::AtOnce),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prr => "prr",
            Self::RateHalving => "rate-halving",
            Self::AtOnce => "at-once",
        }
    }
}

#[derive(Clone, Debug)]
pub struct TcpConfig {
    /// Maximum segment size (payload bytes per segment).
    pub mss: u32,
    /// Header bytes added to each segment on the wire (IP + TCP = 40 by default).
    pub header_bytes: u32,
    /// Initial congestion window in segments (RFC 6928 allows 10; ns-2 uses 2).
    pub initial_window: u32,
    /// Initial slow-start threshold in segments (u32::MAX = "arbitrarily high", RFC 5681).
    pub initial_ssthresh: u32,
    pub recovery: Recovery,
    /// Duplicate-ACK / SACK threshold (RFC 5681 and RFC 6675 DupThresh = 3).
    pub dupthresh: u32,
    /// Lower bound on the RTO (RFC 6298 says 1 s; Linux and ns-2 TCP-Linux use 200 ms).
    pub min_rto: SimTime,
    /// Upper bound on the RTO (RFC 6298 §2.5: at least 60 s; Linux TCP_RTO_MAX 120 s).
    pub max_rto: SimTime,
    /// How the RTO is computed from RTT samples (Linux's estimator or RFC 6298's).
    pub rto_estimator: RtoEstimator,
    /// Which ACKs restart the retransmission timer.
    pub rto_restart: RtoRestart,
    /// Lost-retransmission detection with SACK (Linux 2.6–4.x `tcp_mark_lost_retrans`; RACK
    /// in later kernels detects the same losses): a retransmission is deemed lost once segments
    /// sent after it are SACKed, and sent again instead of waiting for the RTO. Default on.
    /// With `rack` on, RACK's time rule takes this over (Linux 4.x removed
    /// `tcp_mark_lost_retrans` when RACK arrived), so this switch only acts with `rack` off.
    pub lost_retransmit: bool,
    /// RACK time-based loss detection (RFC 8985 §6; Linux `net.ipv4.tcp_recovery = 1`, the
    /// default since 4.4, sole SACK loss detection since 4.18): a segment is lost once a segment
    /// sent after it has been delivered and RACK.rtt + reo_wnd has passed since it was sent;
    /// replaces RFC 6675's DupThresh rules. SACK recovery only (ignored with NewReno). Default on.
    pub rack: bool,
    /// Tail loss probe (RFC 8985 §7; Linux `net.ipv4.tcp_early_retrans = 3`, the default): in
    /// the Open state, if nothing is acknowledged for a probe timeout (about 2·SRTT) send one
    /// segment (new data, else the last one again) to draw an ACK instead of waiting for the
    /// RTO. SACK recovery only (ignored with NewReno). Default on.
    pub tlp: bool,
    /// Upper bound of a random delay before sending (ns-2 `overhead_`): when the window opens,
    /// the sender waits U(0, send_jitter) and then sends everything the window allows, in order
    /// (ns-2 `send_much` forced by the delayed-send timer). Zero (default) sends at once. Breaks
    /// the phase effects of deterministic simulators (Floyd & Jacobson 1992).
    pub send_jitter: SimTime,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: SimTime,
    /// Receiver delays ACKs (every second full segment or after `delack_timeout`).
    pub delayed_ack: bool,
    /// Delayed-ACK timer (RFC 1122 allows up to 500 ms; Linux minimum 40 ms).
    pub delack_timeout: SimTime,
    /// Receiver window in bytes (the sender never has more than this outstanding).
    pub rwnd_bytes: u64,
    /// Pace transmissions (Linux fq-style: rate = factor · cwnd · mss / srtt).
    pub pacing: bool,
    /// Maximum SACK blocks per ACK (RFC 2018: 3 when timestamps are used).
    pub max_sack_blocks: u8,
    /// How much one ACK may grow cwnd.
    pub cwnd_growth: CwndGrowth,
    /// ssthresh on a timeout during a loss episode.
    pub rto_ssthresh: RtoSsthresh,
    /// Which ACKs give the RTO estimator an RTT sample.
    pub rtt_samples: RttSamples,
    /// What the Loss state does with losses SACK reveals.
    pub loss_state: LossState,
    /// How cwnd comes down during fast recovery.
    pub cwnd_reduction: CwndReduction,
    /// Restart the window of a sender that was idle for an RTO (RFC 2861; Linux
    /// `tcp_slow_start_after_idle`, on by default). Only an application-limited (streaming)
    /// sender can be idle: bulk and file transfers never are.
    pub restart_after_idle: bool,
    /// How the window restarts after idle.
    pub idle_restart: IdleRestart,
    /// Explicit Congestion Notification (RFC 3168): new data is sent ECT, and an ACK with ECE
    /// reduces the window as a loss would, at most once per window of data (off by default, as
    /// Linux's `tcp_ecn` = 2 does not ask for it).
    pub ecn: bool,
}

/// The rule a window restart after idle follows (a documented choice where RFC 2861/Linux and
/// ns-2 differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleRestart {
    /// RFC 2861 §3 as Linux `tcp_cwnd_restart`: ssthresh keeps 3/4 of cwnd, cwnd halves per RTO
    /// idle, not below min(initial window, cwnd); the algorithm hears `CA_EVENT_CWND_RESTART`.
    Rfc2861,
    /// ns-2.35 `Agent/TCP` with `slow_start_restart_` (tcp.cc `timeout()`: the retransmission
    /// timer expiring with nothing outstanding does `slowdown(CLOSE_CWND_INIT)`): cwnd back to the
    /// initial window, ssthresh unchanged, the algorithm not told.
    InitialWindow,
}

impl IdleRestart {
    pub const NAMES: &'static str = "\"rfc2861\", \"ns2\"";
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "rfc2861" => Some(Self::Rfc2861),
            "ns2" => Some(Self::InitialWindow),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Rfc2861 => "rfc2861",
            Self::InitialWindow => "ns2",
        }
    }
}

impl TcpConfig {
    pub fn wire_size(&self, payload: u32) -> u32 {
        payload + self.header_bytes
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            header_bytes: 40,
            initial_window: 10,
            initial_ssthresh: u32::MAX,
            recovery: Recovery::Sack,
            dupthresh: 3,
            min_rto: SimTime::from_millis(200),
            max_rto: SimTime::from_secs(120),
            rto_estimator: RtoEstimator::Linux,
            rto_restart: RtoRestart::Advance,
            send_jitter: SimTime::ZERO,
            lost_retransmit: true,
            rack: true,
            tlp: true,
            initial_rto: SimTime::from_secs(1),
            delayed_ack: false,
            delack_timeout: SimTime::from_millis(40),
            rwnd_bytes: u64::MAX / 2,
            pacing: false,
            max_sack_blocks: 3,
            cwnd_growth: CwndGrowth::Segments,
            rto_ssthresh: RtoSsthresh::OncePerEpisode,
            rtt_samples: RttSamples::NewData,
            loss_state: LossState::Linux,
            cwnd_reduction: CwndReduction::Prr,
            restart_after_idle: true,
            idle_restart: IdleRestart::Rfc2861,
            ecn: false,
        }
    }
}
