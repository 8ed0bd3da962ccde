//! Delivery-rate estimation for rate-based congestion control (BBR).
//!
//! Spec:    Y. Cheng, N. Cardwell, S. Hassas Yeganeh, V. Jacobson, "Delivery Rate Estimation",
//!          draft-cheng-iccrg-delivery-rate-estimation-02 (2022).
//! Mirrors: Linux net/ipv4/tcp_rate.c (v6.17-rc, read in the Kingxukai/linux mirror, commit
//!          9b44fff6): `tcp_rate_skb_sent`, `tcp_rate_skb_delivered`, `tcp_rate_gen`,
//!          `tcp_rate_check_app_limited`. Written from reading it, not copied.
//!
//! Each transmission snapshots the connection's delivery state in the segment ([`TxRecord`]):
//! how much had been delivered (`delivered`), when the last delivery happened
//! (`delivered_time`) and when the segment that started the current send phase went out
//! (`first_tx_time`). When an ACK (S)ACKs segments, the most recently sent of them (ties: the
//! highest segment) gives the sample: delivered = segments delivered since its snapshot;
//! interval = max(send phase, ACK phase), where the send phase is its send time minus its
//! `first_tx_time` and the ACK phase is now minus its `delivered_time`. Taking the longer phase
//! keeps ACK compression from inflating the rate (draft §3.3; Linux comment). A sample whose
//! interval is shorter than the minimum RTT is invalid (Linux: it can only come from a spurious
//! retransmission being (S)ACKed).
//!
//! Application-limited marking (draft §3.4): when the sender has no new data although the window
//! would allow more and no lost segment waits for retransmission, the connection is marked
//! app-limited until everything now in flight is delivered (`app_limited = delivered + pipe`);
//! segments sent meanwhile carry the mark, and so do the samples they give.
//!
//! Differences from Linux, all documented choices:
//! - Times are simulation nanoseconds, not microseconds; a send at time 0 is a valid snapshot
//!   (Linux uses a zero timestamp to mean "none").
//! - `rs.rtt` is the RTT of the segment that gave the sample when it was not retransmitted (Linux
//!   passes `ca_rtt_us`, the RTT of the last newly cumulatively ACKed segment, or of a SACKed
//!   one; both are the newest delivered segment in the usual case).
//! - SACK reneging does not occur in the simulator, so there is no `is_sack_reneg` case.
//! - The application-limited check runs whenever the sender runs out of new data (Linux runs it
//!   when the application writes; a simulated application has all its data from the start).

use crate::cc::{RateSample, TcpState};
use fatpipe_core::SimTime;

/// `TcpState::app_limited` at connection start (Linux initialises `tp->app_limited` to ~0U,
/// which the first ACK clears): the first flight is app-limited.
pub const APP_LIMITED_AT_START: u64 = u64::MAX;

/// Delivery state snapshotted in a segment when it is (re)transmitted (Linux
/// `TCP_SKB_CB(skb)->tx` and the skb timestamp).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxRecord {
    /// Time of this (re)transmission (`tcp_skb_timestamp_us`).
    pub tx_time: SimTime,
    /// Start of the send phase this segment belongs to (`tx.first_tx_mstamp`).
    pub first_tx_time: SimTime,
    /// Time of the last delivery before it was sent (`tx.delivered_mstamp`).
    pub delivered_time: SimTime,
    /// Segments delivered before it was sent (`tx.delivered`).
    pub delivered: u64,
    /// Sent while the connection was application-limited (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// This transmission is a retransmission (`TCPCB_RETRANS`).
    pub is_retrans: bool,
}

/// The segment that will give this ACK's sample: the most recently sent of those delivered, ties
/// broken by the higher segment number (Linux `tcp_skb_sent_after`). Called once per newly
/// (S)ACKed segment (`tcp_rate_skb_delivered`).
#[inline]
pub fn pick_newer(pick: &mut Option<(u64, TxRecord)>, seg: u64, rec: TxRecord) {
    let newer = match pick {
        None => true,
        Some((s, r)) => rec.tx_time > r.tx_time || (rec.tx_time == r.tx_time && seg > *s),
    };
    if newer {
        *pick = Some((seg, rec));
    }
}

/// Connection-wide delivery-rate state (Linux `tp->first_tx_mstamp`, `tp->delivered_mstamp`; the
/// delivered count and the app-limited mark live in [`TcpState`] so the algorithm can read and,
/// in PROBE_RTT, set them).
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    first_tx_time: SimTime,
    delivered_time: SimTime,
}

impl RateEstimator {
    pub fn new() -> Self {
        Self::default()
    }

    /// `tcp_rate_skb_sent`: snapshot for a segment sent now; `packets_out` is the number of
    /// segments outstanding before it (Linux `packets_out`, not the pipe: loss marks must not
    /// shorten the interval).
    #[inline]
    pub fn on_send(&mut self, tp: &TcpState, packets_out: u32, is_retrans: bool) -> TxRecord {
        if packets_out == 0 {
            // Nothing in flight: the next ACK measures exactly the delivery of what is sent now.
            self.first_tx_time = tp.now;
            self.delivered_time = tp.now;
        }
        TxRecord {
            tx_time: tp.now,
            first_tx_time: self.first_tx_time,
            delivered_time: self.delivered_time,
            delivered: tp.delivered,
            is_app_limited: tp.app_limited != 0,
            is_retrans,
        }
    }

    /// `tcp_rate_gen`: the rate sample of an ACK that newly delivered `acked_sacked` segments
    /// (already counted in `tp.delivered`) and marked `losses` lost, from the segment `pick`
    /// chosen by [`pick_newer`]. `prior_in_flight` is the pipe before the ACK.
    pub fn generate(
        &mut self,
        tp: &mut TcpState,
        pick: Option<(u64, TxRecord)>,
        acked_sacked: u32,
        losses: u32,
        prior_in_flight: u32,
    ) -> RateSample {
        // The app-limited bubble is over once everything that was in flight has been delivered.
        if tp.app_limited != 0
            && (tp.app_limited == APP_LIMITED_AT_START || tp.delivered > tp.app_limited)
        {
            tp.app_limited = 0;
        }
        if acked_sacked > 0 {
            self.delivered_time = tp.now;
        }
        let mut rs = RateSample {
            acked_sacked,
            losses,
            prior_in_flight,
            ..RateSample::default()
        };
        // No segment with a snapshot was delivered (a pure duplicate ACK): no sample.
        let Some((_, rec)) = pick else {
            return rs;
        };
        // The send phase of the next sample starts where this one's ended.
        self.first_tx_time = rec.tx_time;
        rs.prior_delivered = rec.delivered;
        rs.is_app_limited = rec.is_app_limited;
        rs.is_retrans = rec.is_retrans;
        rs.delivered = (tp.delivered - rec.delivered) as u32;
        if !rec.is_retrans {
            rs.rtt = Some(tp.now - rec.tx_time);
        }
        let send_phase = rec.tx_time - rec.first_tx_time;
        let ack_phase = tp.now - rec.delivered_time;
        let interval = send_phase.max(ack_phase);
        // Shorter than an RTT: only a spurious retransmission's ACK can do that; invalid.
        if interval < tp.min_rtt.unwrap_or(SimTime::ZERO) {
            return rs;
        }
        rs.interval = interval;
        rs
    }

    /// `tcp_rate_check_app_limited`, called when the sender has no new data to send: if the
    /// window is not what limits it and no lost segment awaits retransmission, mark the
    /// connection app-limited until what is now in flight has been delivered.
    #[inline]
    pub fn check_app_limited(tp: &mut TcpState, pipe: u32, lost_out: u32, retrans_out: u32) {
        if pipe < tp.snd_cwnd && lost_out <= retrans_out {
            tp.app_limited = (tp.delivered + pipe as u64).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::TcpState;

    /// A bottleneck of one segment per `gap`, path RTT `rtt` (without queueing), window `cwnd`:
    /// the sender keeps `cwnd` segments out, each ACK releases one. Returns the samples.
    fn steady_flow(cwnd: u64, gap: SimTime, rtt: SimTime, acks: usize) -> Vec<RateSample> {
        let mut tp = TcpState::new(1460, cwnd as u32, u32::MAX);
        tp.app_limited = 0;
        tp.min_rtt = Some(rtt);
        let mut est = RateEstimator::new();
        // Send times of the outstanding segments, and their records.
        let mut out: std::collections::VecDeque<TxRecord> = Default::default();
        // Initial window sent back to back at t = 0; it leaves the bottleneck one per gap.
        for i in 0..cwnd {
            out.push_back(est.on_send(&tp, i as u32, false));
        }
        let mut samples = Vec::new();
        // ACK k arrives at the time its segment left the bottleneck plus the rest of the RTT. With
        // cwnd ≥ BDP the bottleneck never idles, so ACKs come one per gap from rtt + gap on.
        for k in 0..acks {
            tp.now = rtt + SimTime(gap.as_nanos() * (k as u64 + 1));
            let rec = out.pop_front().unwrap();
            tp.delivered += 1;
            let mut pick = None;
            pick_newer(&mut pick, k as u64, rec);
            samples.push(est.generate(&mut tp, pick, 1, 0, out.len() as u32 + 1));
            // The ACK releases one new segment.
            out.push_back(est.on_send(&tp, out.len() as u32, false));
        }
        samples
    }

    #[test]
    fn steady_flow_measures_the_bottleneck_rate() {
        // 1 ms per segment (12 Mb/s of 1500-byte packets), 40 ms RTT: BDP = 40 segments. A window
        // of 60 keeps the bottleneck busy; after the first round every sample must read exactly
        // one segment per ms: the ACK phase spans the delivery of `delivered` segments.
        let gap = SimTime::from_millis(1);
        let rtt = SimTime::from_millis(40);
        let s = steady_flow(60, gap, rtt, 400);
        for (k, rs) in s.iter().enumerate().skip(120) {
            assert!(rs.interval > SimTime::ZERO, "ack {k}: invalid sample");
            let rate = rs.delivered as f64 / rs.interval.as_secs_f64();
            // Exact: integer nanoseconds, delivered segments each one gap apart.
            assert!(
                (rate - 1000.0).abs() < 1e-6,
                "ack {k}: {} segments in {:?} = {rate} /s",
                rs.delivered,
                rs.interval
            );
            assert_eq!(rs.delivered, 60, "a sample spans one window");
            assert!(!rs.is_app_limited);
            assert_eq!(
                rs.rtt,
                Some(SimTime::from_millis(60)),
                "40 ms + 20 ms queue"
            );
        }
    }

    #[test]
    fn first_window_is_measured_from_its_own_start() {
        // 10 segments sent at t = 0 (nothing in flight before), first ACK after rtt + gap: the
        // send phase is 0, the ACK phase rtt + gap since the snapshot at t = 0.
        let gap = SimTime::from_millis(1);
        let rtt = SimTime::from_millis(40);
        let s = steady_flow(10, gap, rtt, 1);
        assert_eq!(s[0].delivered, 1);
        assert_eq!(s[0].interval, SimTime::from_millis(41));
        assert_eq!(s[0].prior_delivered, 0);
    }

    #[test]
    fn send_phase_longer_than_ack_phase_bounds_the_rate() {
        // ACK compression: four segments sent 10 ms apart, all ACKed at once 50 ms after the
        // first one went out. ACK phase from the delivery snapshot of the last one (t = 0, nothing
        // delivered before) is 50 ms; send phase 30 ms; rate = 4 segments / 50 ms.
        let mut tp = TcpState::new(1460, 10, u32::MAX);
        tp.app_limited = 0;
        let mut est = RateEstimator::new();
        let mut recs = Vec::new();
        for i in 0..4u32 {
            tp.now = SimTime::from_millis(10 * i as u64);
            recs.push(est.on_send(&tp, i, false));
        }
        tp.now = SimTime::from_millis(50);
        tp.delivered = 4;
        let mut pick = None;
        for (i, r) in recs.iter().enumerate() {
            pick_newer(&mut pick, i as u64, *r);
        }
        assert_eq!(
            pick.unwrap().0,
            3,
            "the most recently sent segment gives the sample"
        );
        let rs = est.generate(&mut tp, pick, 4, 0, 4);
        assert_eq!(rs.delivered, 4);
        assert_eq!(rs.interval, SimTime::from_millis(50));
        assert_eq!(rs.rtt, Some(SimTime::from_millis(20)));
        // ACK compression: x sent at 100 ms with nothing in flight, y at 130 ms; x ACKed at
        // 140 ms; z sent at 145 ms (its snapshot: delivered 5, last delivery at 140 ms, send
        // phase started at x's send time, 100 ms); y and z ACKed together at 150 ms. ACK phase
        // 150 − 140 = 10 ms, send phase 145 − 100 = 45 ms: the longer, 45 ms, bounds the rate at
        // 2 segments / 45 ms instead of the impossible 2 / 10 ms.
        tp.now = SimTime::from_millis(100);
        let x = est.on_send(&tp, 0, false);
        tp.now = SimTime::from_millis(130);
        let y = est.on_send(&tp, 1, false);
        tp.now = SimTime::from_millis(140);
        tp.delivered = 5;
        est.generate(&mut tp, Some((4, x)), 1, 0, 2);
        tp.now = SimTime::from_millis(145);
        let z = est.on_send(&tp, 1, false);
        assert_eq!(z.first_tx_time, SimTime::from_millis(100));
        assert_eq!(z.delivered_time, SimTime::from_millis(140));
        tp.now = SimTime::from_millis(150);
        tp.delivered = 7;
        let mut pick = None;
        pick_newer(&mut pick, 5, y);
        pick_newer(&mut pick, 6, z);
        let rs = est.generate(&mut tp, pick, 2, 0, 2);
        assert_eq!(rs.delivered, 2);
        assert_eq!(rs.interval, SimTime::from_millis(45));
    }

    #[test]
    fn a_sample_shorter_than_min_rtt_is_invalid() {
        let mut tp = TcpState::new(1460, 10, u32::MAX);
        tp.min_rtt = Some(SimTime::from_millis(40));
        let mut est = RateEstimator::new();
        let r = est.on_send(&tp, 0, true);
        tp.now = SimTime::from_millis(5);
        tp.delivered = 1;
        let rs = est.generate(&mut tp, Some((0, r)), 1, 0, 1);
        assert_eq!(rs.interval, SimTime::ZERO, "5 ms < min RTT 40 ms");
        assert_eq!(rs.rtt, None, "a retransmission gives no RTT");
        assert!(rs.is_retrans);
        // No delivered segment at all: no sample.
        let rs = est.generate(&mut tp, None, 0, 0, 0);
        assert_eq!((rs.delivered, rs.interval), (0, SimTime::ZERO));
    }

    #[test]
    fn app_limited_marks_samples_until_the_bubble_is_delivered() {
        let mut tp = TcpState::new(1460, 10, u32::MAX);
        assert_eq!(tp.app_limited, APP_LIMITED_AT_START);
        let mut est = RateEstimator::new();
        // The initial flight is app-limited (Linux ~0U), cleared by the first ACK.
        let r0 = est.on_send(&tp, 0, false);
        assert!(r0.is_app_limited);
        tp.now = SimTime::from_millis(40);
        tp.delivered = 1;
        let rs = est.generate(&mut tp, Some((0, r0)), 1, 0, 1);
        assert!(rs.is_app_limited);
        assert_eq!(tp.app_limited, 0);
        // 100 delivered, 3 in flight with cwnd 10, no data left: app-limited until delivered
        // passes 103.
        tp.delivered = 100;
        RateEstimator::check_app_limited(&mut tp, 3, 0, 0);
        assert_eq!(tp.app_limited, 103);
        let r1 = est.on_send(&tp, 3, false);
        assert!(r1.is_app_limited);
        // Window-limited (pipe = cwnd) or a loss waiting: not app-limited.
        let mut tp2 = tp.clone();
        tp2.app_limited = 0;
        RateEstimator::check_app_limited(&mut tp2, 10, 0, 0);
        RateEstimator::check_app_limited(&mut tp2, 3, 1, 0);
        assert_eq!(tp2.app_limited, 0);
        // Delivered reaches 103: still marked; 104: cleared.
        tp.delivered = 103;
        tp.now = SimTime::from_millis(80);
        let rs = est.generate(&mut tp, Some((103, r1)), 1, 0, 3);
        assert!(rs.is_app_limited);
        assert_eq!(tp.app_limited, 103);
        tp.delivered = 104;
        est.generate(&mut tp, None, 1, 0, 2);
        assert_eq!(tp.app_limited, 0);
        let r2 = est.on_send(&tp, 2, false);
        assert!(!r2.is_app_limited);
        // Nothing in flight and delivered 0 would give a zero mark, which means "not limited":
        // Linux stores 1 instead.
        let mut tp3 = TcpState::new(1460, 10, u32::MAX);
        tp3.delivered = 0;
        RateEstimator::check_app_limited(&mut tp3, 0, 0, 0);
        assert_eq!(tp3.app_limited, 1);
    }
}
