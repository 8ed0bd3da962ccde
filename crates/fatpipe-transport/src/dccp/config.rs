//! DCCP settings of one connection, with their sources.

pub use super::tfrc::sender::TfrcVariant;
use fatpipe_core::SimTime;

/// Congestion Control ID (RFC 4340 §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ccid {
    /// CCID 2, TCP-like (RFC 4341).
    Two,
    /// CCID 3, TCP-Friendly Rate Control (RFC 4342 with RFC 3448 / RFC 5348).
    Three,
}

impl Ccid {
    pub fn from_number(n: i64) -> Option<Ccid> {
        match n {
            2 => Some(Ccid::Two),
            3 => Some(Ccid::Three),
            _ => None,
        }
    }
    pub fn number(self) -> u8 {
        match self {
            Ccid::Two => 2,
            Ccid::Three => 3,
        }
    }
    /// Name used in result tables ("ccid2", "ccid3").
    pub fn name(self) -> &'static str {
        match self {
            Ccid::Two => "ccid2",
            Ccid::Three => "ccid3",
        }
    }
}

/// One DCCP connection's settings. Defaults follow ns-2.35's `Agent/DCCP` (Mattsson's module,
/// printed by `ns` itself: `puts [Agent/DCCP/TCPlike set initial_cwnd_]` etc.) where the RFCs
/// leave a choice, so the study of seed 001 (ns-2.34) and the ns-2 peer see the same protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct DccpConfig {
    pub ccid: Ccid,
    /// Sender queue in packets (ns-2 `sb_size_` 1000). Application data that finds it full is
    /// discarded and counted as such (RFC 4340 §... leaves the policy to the implementation).
    pub queue_packets: u32,
    /// Header bytes of a data packet on the wire: IPv4 20 + DCCP generic header 12 (ns-2.35).
    pub header_bytes: u32,
    /// Wire size of a CCID 2 acknowledgement and of a CCID 3 feedback packet (ns-2.35: 40, 52).
    pub ack_bytes: u32,
    pub feedback_bytes: u32,
    /// Wire size of Request and Response packets (ns-2.35: 88).
    pub handshake_bytes: u32,
    /// CCID 2: initial window and slow-start threshold, packets (ns-2: 3 and 65535).
    pub initial_cwnd: u32,
    pub initial_ssthresh: u32,
    /// CCID 2: initial Ack Ratio (RFC 4341 §6.1.2 and ns-2: 2).
    pub ack_ratio: u32,
    /// CCID 2: decay the window after an idle or data-limited period as RFC 4341 §5.1 asks
    /// (RFC 2861: halve per RTO idle, not below the initial window). ns-2.35's
    /// `Agent/DCCP/TCPlike` never does (its window grows while data-limited and survives any
    /// silence); `false` runs that rule.
    pub restart_after_idle: bool,
    /// CCID 2 receiver: longest wait before acknowledging fewer than Ack Ratio packets (ns-2
    /// `dack_delay_` 0.2 s).
    pub ack_delay: SimTime,
    /// Retransmission-timer bounds for CCID 2 and the handshake (ns-2: initial 3 s, minimum
    /// 1 s; RFC 4341 §5 defers to RFC 2988, whose values these are).
    pub initial_rto: SimTime,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    /// CCID 3: the TFRC rules (ns-2.35's module follows RFC 3448).
    pub tfrc: TfrcVariant,
    /// CCID 3: s, the segment size TFRC's equation and rate floors use (ns-2.35 `s_s_` 500 B,
    /// whatever the application sends; RFC 5348 §4.1 means the mean packet size).
    pub tfrc_segment: u32,
}

impl DccpConfig {
    pub fn new(ccid: Ccid) -> Self {
        DccpConfig {
            ccid,
            queue_packets: 1000,
            header_bytes: 32,
            ack_bytes: 40,
            feedback_bytes: 52,
            handshake_bytes: 88,
            initial_cwnd: 3,
            initial_ssthresh: 65535,
            ack_ratio: 2,
            restart_after_idle: true,
            ack_delay: SimTime::from_millis(200),
            initial_rto: SimTime::from_secs(3),
            min_rto: SimTime::from_secs(1),
            max_rto: SimTime::from_secs(64),
            tfrc: TfrcVariant::Rfc3448,
            tfrc_segment: 500,
        }
    }
}
