//! Per-flow TCP configuration (already validated and in base units).

use fatpipe_core::SimTime;

/// Loss-recovery algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// SACK-based loss recovery, RFC 6675 (receiver sends SACK blocks, RFC 2018).
    Sack,
    /// NewReno fast recovery without SACK, RFC 6582 (partial ACKs retransmit the next hole).
    NewReno,
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
    /// Upper bound on the RTO (RFC 6298 §2.5: at least 60 s).
    pub max_rto: SimTime,
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
            max_rto: SimTime::from_secs(60),
            initial_rto: SimTime::from_secs(1),
            delayed_ack: false,
            delack_timeout: SimTime::from_millis(40),
            rwnd_bytes: u64::MAX / 2,
            pacing: false,
            max_sack_blocks: 3,
        }
    }
}
