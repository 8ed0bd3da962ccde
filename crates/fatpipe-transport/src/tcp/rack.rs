//! RACK-TLP loss detection (RFC 8985): the per-connection RACK state and its constants.
//!
//! Spec:    Y. Cheng, N. Cardwell, N. Dukkipati, P. Jha, "The RACK-TLP Loss Detection Algorithm
//!          for TCP", RFC 8985 (2021), §6 (RACK) and §7 (TLP).
//! Mirrors: Linux net/ipv4/tcp_recovery.c (`tcp_rack_reo_wnd`, `tcp_rack_detect_loss`,
//!          `tcp_rack_mark_lost`, `tcp_rack_advance`, `tcp_rack_reo_timeout`), tcp_output.c
//!          (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`) and tcp_input.c
//!          (`tcp_process_tlp_ack`, `tcp_time_to_recover`, `tcp_identify_packet_loss`).
//!          tcp_recovery.c read in v6.17-rc (the Kingxukai/linux mirror, commit 0291023e, the
//!          tree `rate.rs` was read in); the tcp_output.c / tcp_input.c functions read in their
//!          current form (microsecond timeouts, `TCP_TIMEOUT_MIN_US` and `tcp_rto_min_us`, from
//!          the late-2023 change) and compared with the 4.x versions in torvalds/linux. Written
//!          from reading them, not copied.
//!
//! The pieces live where their data is: the scoreboard keeps each outstanding segment's latest
//! transmission time, offers every newly delivered segment to [`Rack`] and runs the time-based
//! loss scan (`Scoreboard::rack_detect_loss`); the sender decides when to scan, computes the
//! reordering window, and owns the reordering and probe timers (they share the RTO's slot, as
//! Linux's `icsk_pending` does, so `next_timer` stays one deadline).
//!
//! Differences from Linux, all documented choices:
//! - No DSACK (fatpipe's receiver does not send it), so the reordering window never grows past
//!   min_rtt/4 (`reo_wnd_steps` stays 1, `tcp_rack_update_reo_wnd` has nothing to act on) and a
//!   TLP retransmission that was not needed is recognised only by a pure duplicate ACK.
//! - `tp->reordering` stays at `dupthresh` (Linux raises it when it measures reordering; with
//!   RACK that only matters before reordering is first seen, because afterwards the window is
//!   min_rtt/4 whatever the SACK count).
//! - min_rtt is the all-time minimum (Linux: a windowed minimum over `tcp_min_rtt_wlen` = 300 s,
//!   longer than the simulations this targets).
//! - The RACK RTT is the RTT of the most recently sent segment this ACK delivered (RFC 8985 §6.2
//!   step 2 processes them in send order); Linux keeps the RTT of the last one it processes.
//! - In the Loss state (after an RTO) RACK marks lost retransmissions, which are sent again, but
//!   the connection stays in Loss (Linux may switch to Recovery there).

use fatpipe_core::SimTime;

/// Linux `TCP_TIMEOUT_MIN_US` (include/net/tcp.h, 2 ms): added to the reordering timer
/// (`tcp_rack_mark_lost`) so that it fires after the last segment's deadline, and to the probe
/// timeout when more than one segment is out (`tcp_schedule_loss_probe`; RFC 8985 §7.2 leaves
/// the margin to the implementation).
pub const TIMEOUT_MIN: SimTime = SimTime::from_millis(2);

/// Linux `tcp_rearm_rto` re-arms the RTO no earlier than 1 us from now after a probe or
/// reordering timer (`max_t(int, delta_us, 1)`).
pub const REARM_MIN: SimTime = SimTime::from_micros(1);

/// RFC 8985 §6.2 RACK_sent_after: (t1, s1) was sent after (t2, s2); ties in time (segments sent
/// at the same instant) are broken by the higher sequence (Linux `tcp_skb_sent_after`).
#[inline]
pub fn sent_after(t1: SimTime, s1: u64, t2: SimTime, s2: u64) -> bool {
    t1 > t2 || (t1 == t2 && s1 > s2)
}

/// RACK's connection state (RFC 8985 §6.1; Linux `tp->rack`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Rack {
    /// RACK.xmit_ts: latest transmission time of the most recently sent delivered segment.
    pub xmit_ts: SimTime,
    /// RACK.end_seq as a segment number (the segment itself, for the tie-break).
    pub seg: u64,
    /// RACK.rtt: the RTT measured from it.
    pub rtt: SimTime,
    /// A segment has been delivered since the last loss scan (Linux `rack.advanced`: scanning
    /// without news cannot mark anything).
    pub advanced: bool,
    /// Some segment has ever been delivered (before that nothing can be marked).
    pub valid: bool,
}

/// What the scoreboard needs to judge the segments one ACK delivers.
#[derive(Clone, Copy, Debug, Default)]
pub struct RackAck {
    pub now: SimTime,
    /// min_rtt before this ACK (SimTime::MAX without a sample).
    pub min_rtt: SimTime,
    /// The ACK's timestamp echo (RFC 7323 TSecr; the sender stamps `time + 1` ns).
    pub echo: u64,
    /// Highest SACKed segment + 1 before this ACK (Linux `prior_fack`), for reordering.
    pub prior_high: u64,
    /// The most recently sent acceptable segment delivered by this ACK: (xmit time, segment).
    pub pick: Option<(SimTime, u64)>,
    /// Set by the SACK path when it had to start the ACK before the cumulative part.
    pub begun: bool,
}

impl RackAck {
    /// Offer a newly delivered segment sent at `t`. A segment that was ever retransmitted is
    /// ambiguous (which transmission arrived?) and is used only if its RTT is at least min_rtt
    /// (Linux `tcp_rack_advance`; RFC 8985 §6.2 step 2): a shorter one means the original,
    /// not the retransmission, was delivered.
    #[inline]
    pub fn offer(&mut self, seg: u64, t: SimTime, ever_retransmitted: bool) {
        if ever_retransmitted && self.now.saturating_sub(t) < self.min_rtt {
            return;
        }
        let newer = match self.pick {
            None => true,
            Some((pt, ps)) => sent_after(t, seg, pt, ps),
        };
        if newer {
            self.pick = Some((t, seg));
        }
    }
}

impl Rack {
    /// RFC 8985 §6.2 step 2 with this ACK's pick: RACK.rtt is its RTT, and RACK.xmit_ts /
    /// end_seq move to it if it was sent after the current ones.
    #[inline]
    pub fn update(&mut self, now: SimTime, pick: Option<(SimTime, u64)>) {
        let Some((t, seg)) = pick else {
            return;
        };
        self.rtt = now.saturating_sub(t);
        self.advanced = true;
        if !self.valid || sent_after(t, seg, self.xmit_ts, self.seg) {
            self.xmit_ts = t;
            self.seg = seg;
            self.valid = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sent_after_breaks_ties_by_sequence() {
        let t = SimTime::from_millis(5);
        assert!(sent_after(t, 3, t, 2));
        assert!(!sent_after(t, 2, t, 2));
        assert!(sent_after(t + SimTime(1), 0, t, 9));
    }

    #[test]
    fn ambiguous_retransmissions_below_min_rtt_are_ignored() {
        let now = SimTime::from_millis(100);
        let mut a = RackAck {
            now,
            min_rtt: SimTime::from_millis(40),
            ..Default::default()
        };
        // Retransmitted 10 ms ago: the original must have been delivered; ignored.
        a.offer(7, now - SimTime::from_millis(10), true);
        assert_eq!(a.pick, None);
        // An original sent 60 ms ago counts, and a retransmission sent 45 ms ago is newer.
        a.offer(3, now - SimTime::from_millis(60), false);
        a.offer(2, now - SimTime::from_millis(45), true);
        assert_eq!(a.pick, Some((now - SimTime::from_millis(45), 2)));
        let mut r = Rack::default();
        r.update(now, a.pick);
        assert_eq!(
            (r.rtt, r.seg, r.advanced),
            (SimTime::from_millis(45), 2, true)
        );
        // An older delivery later sets the RTT but not xmit_ts (RFC 8985 §6.2 step 2).
        r.update(now, Some((now - SimTime::from_millis(70), 1)));
        assert_eq!((r.rtt, r.seg), (SimTime::from_millis(70), 2));
    }
}
