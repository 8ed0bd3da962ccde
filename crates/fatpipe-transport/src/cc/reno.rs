//! Reno / NewReno congestion avoidance.
//!
//! Spec:    RFC 5681 (TCP Congestion Control): slow start, congestion avoidance (one segment per
//!          RTT), ssthresh = max(FlightSize/2, 2·SMSS) (Eq. 4). NewReno (RFC 6582) changes loss
//!          *recovery*, not the window rules; recovery is chosen per flow (`recovery = "newreno"`
//!          or `"sack"`) in the TCP sender, so "newreno" here is the same window algorithm.
//! Mirrors: Linux net/ipv4/tcp_cong.c `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`,
//!          `tcp_reno_undo_cwnd` (ns-2 TCP-Linux `select_ca reno`).
//! Constants: multiplicative decrease 1/2 and minimum ssthresh 2 segments (RFC 5681 Eq. 4; Linux
//!          `max(cwnd >> 1, 2)`). No parameters.

use super::{reno_cong_avoid, reno_ssthresh, CongestionOps, TcpState};
use serde::Deserialize;

pub const SUMMARY: &str = "Reno AIMD (RFC 5681): +1 segment per RTT, halve on loss";
pub const SUMMARY_NEWRENO: &str =
    "alias of reno's window rules (RFC 5681); pair with recovery = \"newreno\" for RFC 6582";
pub const CITATION: &str = "RFC 5681; Linux net/ipv4/tcp_cong.c (tcp_reno_*); ns-2 TCP-Linux reno";
pub const PARAMS: &[super::ParamDoc] = &[];

/// Reno takes no parameters; the empty struct makes any given parameter an error.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

#[derive(Debug, Default)]
pub struct Reno;

pub fn build(params: &toml::Table) -> Result<Box<dyn CongestionOps>, String> {
    let _p: Params = super::parse_params(params)?;
    Ok(Box::new(Reno))
}

impl CongestionOps for Reno {
    /// ns-2.35's module has `.min_cwnd = tcp_reno_min_cwnd` (ns-2's recovery rule only).
    fn min_cwnd(&self, tp: &TcpState) -> Option<u32> {
        super::reno_min_cwnd(tp)
    }

    fn name(&self) -> &'static str {
        "reno"
    }
    /// No `.pkts_acked` (Linux's module has none).
    fn has_pkts_acked(&self) -> bool {
        false
    }
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32) {
        reno_cong_avoid(tp, acked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::tests::state;

    #[test]
    fn halves_on_loss_with_floor_of_two() {
        let mut r = Reno;
        assert_eq!(r.ssthresh(&state(100, 1000)), 50);
        assert_eq!(r.ssthresh(&state(3, 1000)), 2);
    }

    #[test]
    fn one_segment_per_rtt_in_congestion_avoidance() {
        // cwnd 20 above ssthresh: a full window of 20 ACKs adds exactly one segment.
        let mut r = Reno;
        let mut tp = state(20, 10);
        for _ in 0..20 {
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut r = Reno;
        let mut tp = state(10, u32::MAX);
        for _ in 0..10 {
            r.cong_avoid(&mut tp, 1);
        }
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn does_not_grow_when_not_cwnd_limited() {
        let mut r = Reno;
        let mut tp = state(10, u32::MAX);
        tp.is_cwnd_limited = false;
        r.cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd, 10);
    }
}
