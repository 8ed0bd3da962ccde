//! CCID 2, TCP-like congestion control (RFC 4341), both halves.
//!
//! **Sender** (RFC 4341 §5): a window `cwnd` in packets; a data packet may be sent while
//! `pipe < cwnd`, `pipe` being the packets sent and neither acknowledged nor declared lost. The
//! Ack Vector (RFC 4340 §11.4, see `wire`) says which packets arrived:
//! - slow start (cwnd < ssthresh): cwnd += 1 per acknowledged data packet, at most Ack Ratio per
//!   acknowledgement (§5: "the sender MAY increase cwnd by up to R");
//! - congestion avoidance: cwnd += 1 per window of acknowledged packets;
//! - a packet is lost when NUMDUPACK = 3 packets sent after it have been acknowledged (§5,
//!   after RFC 3517); the first loss of a window is a congestion event: ssthresh = cwnd/2,
//!   cwnd = ssthresh (at least 1), and further losses of packets sent before the event are part
//!   of it (one reduction per window);
//! - timeout (RFC 4341 §5 with RFC 2988/6298's estimator, ns-2's defaults: initial RTO 3 s,
//!   minimum 1 s): ssthresh = cwnd/2, cwnd = 1, every outstanding packet lost, RTO backed off;
//! - an idle or data-limited sender's window decays as RFC 2861 says (§5.1): for each RTO the
//!   sender sent nothing, cwnd halves, never below the initial window, ssthresh keeps 3/4 of
//!   the old cwnd;
//! - Ack Ratio R (§6.1.2): for each window in which acknowledgements were lost (a gap in their
//!   sequence numbers), R doubles; after cwnd/(R²−R) consecutive windows without, R drops by 1;
//!   always 1 ≤ R ≤ ⌈cwnd/2⌉. The sender tells the receiver R in its data packets.
//!
//! **Receiver**: acknowledges every R data packets, and after `ack_delay` (ns-2's
//! `dack_delay_` 0.2 s) when fewer are waiting, with the Ack Vector and an Elapsed Time.
//!
//! Initial window: RFC 4341 §5 takes RFC 3390's min(4, max(2, 4380/s)) packets; ns-2's
//! `Agent/DCCP/TCPlike` uses `initial_cwnd_ 3` (the configurable default here) and
//! `initial_ssthresh_ 65535`.

use super::wire::{self, Backward, DccpType};
use fatpipe_core::SimTime;
use fatpipe_net::Packet;
use std::collections::VecDeque;

/// RFC 4341 §5 / RFC 3517: packets acknowledged after a missing one before it counts as lost.
pub const NUMDUPACK: u32 = 3;
/// Width of the simulated Ack Vector (see `wire`).
pub const ACK_VECTOR_PACKETS: u64 = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    InFlight,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: u64,
    fate: Fate,
}

/// CCID 2 sender state.
#[derive(Clone, Debug)]
pub struct Ccid2Sender {
    pub cwnd: u32,
    pub ssthresh: u32,
    initial_cwnd: u32,
    /// Acknowledged packets counted towards the next +1 in congestion avoidance.
    ca_acked: u32,
    /// Packets sent and not yet acknowledged or lost, oldest first.
    sent: VecDeque<Sent>,
    pipe: u32,
    /// Highest sequence number sent when the last congestion event began (none yet).
    recovery_until: Option<u64>,
    /// Greatest sequence number any acknowledgement reported.
    high_acked: Option<u64>,
    pub ack_ratio: u32,
    /// Ack-ratio bookkeeping: last acknowledgement sequence number seen, whether one was lost
    /// in the current window, the window's end (a data sequence number) and clean windows.
    last_ack_seq: Option<u64>,
    ack_lost_in_window: bool,
    window_end: u64,
    clean_windows: u32,
    /// Time the sender last had nothing in flight and nothing to send (idle decay).
    idle_since: Option<SimTime>,
    pub congestion_events: u64,
}

impl Ccid2Sender {
    pub fn new(initial_cwnd: u32, initial_ssthresh: u32, ack_ratio: u32) -> Self {
        Ccid2Sender {
            cwnd: initial_cwnd.max(1),
            ssthresh: initial_ssthresh.max(2),
            initial_cwnd: initial_cwnd.max(1),
            ca_acked: 0,
            sent: VecDeque::new(),
            pipe: 0,
            recovery_until: None,
            high_acked: None,
            ack_ratio: ack_ratio.max(1),
            last_ack_seq: None,
            ack_lost_in_window: false,
            window_end: 0,
            clean_windows: 0,
            idle_since: None,
            congestion_events: 0,
        }
    }

    pub fn pipe(&self) -> u32 {
        self.pipe
    }

    pub fn can_send(&self) -> bool {
        self.pipe < self.cwnd
    }

    /// Whether packets are outstanding (the retransmission timer runs).
    pub fn outstanding(&self) -> bool {
        self.pipe > 0
    }

    /// Before sending after a pause: apply RFC 2861's decay for each RTO spent idle.
    pub fn before_send(&mut self, now: SimTime, rto: SimTime) {
        if let Some(since) = self.idle_since.take() {
            let idle = now.saturating_sub(since).as_nanos();
            let periods = idle / rto.as_nanos().max(1);
            if periods > 0 {
                self.ssthresh = self.ssthresh.max(self.cwnd * 3 / 4);
                let shift = periods.min(31) as u32;
                self.cwnd = (self.cwnd >> shift).max(self.initial_cwnd);
            }
        }
    }

    /// Data packet `seq` left.
    pub fn on_send(&mut self, seq: u64) {
        self.sent.push_back(Sent {
            seq,
            fate: Fate::InFlight,
        });
        self.pipe += 1;
        if self.window_end == 0 {
            self.window_end = seq + self.cwnd as u64;
        }
    }

    /// The sender has nothing left to send and nothing in flight.
    pub fn note_idle(&mut self, now: SimTime) {
        if self.pipe == 0 && self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// An acknowledgement arrived: `gsr` the greatest sequence number received, `vector` the
    /// Ack Vector bitmap below it, `ack_seq` the acknowledgement's own sequence number. Returns
    /// the number of data packets newly acknowledged (for RTT sampling the caller uses GSR).
    pub fn on_ack(&mut self, gsr: u64, vector: u128, ack_seq: u64, highest_sent: u64) -> u32 {
        // Lost acknowledgements (a gap in their sequence numbers) for the Ack Ratio.
        if let Some(last) = self.last_ack_seq {
            if ack_seq > last + 1 {
                self.ack_lost_in_window = true;
            }
            if ack_seq <= last {
                return 0; // reordered or duplicate acknowledgement: nothing new
            }
        }
        self.last_ack_seq = Some(ack_seq);
        self.high_acked = Some(self.high_acked.map_or(gsr, |h| h.max(gsr)));
        let received = |seq: u64| -> bool {
            seq == gsr
                || (seq < gsr
                    && gsr - 1 - seq < ACK_VECTOR_PACKETS
                    && vector >> (gsr - 1 - seq) & 1 == 1)
        };
        let mut newly = 0u32;
        for s in self.sent.iter_mut() {
            if s.seq > gsr {
                break;
            }
            if s.fate != Fate::Acked && received(s.seq) {
                if s.fate == Fate::InFlight {
                    self.pipe -= 1;
                }
                s.fate = Fate::Acked;
                newly += 1;
            }
        }
        self.grow(newly);
        self.detect_losses();
        self.trim();
        self.ack_ratio_window(gsr, highest_sent);
        newly
    }

    fn grow(&mut self, newly: u32) {
        if newly == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            self.cwnd += newly.min(self.ack_ratio);
        } else {
            self.ca_acked += newly;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += 1;
            }
        }
    }

    /// Declare lost every in-flight packet with NUMDUPACK acknowledged packets sent after it.
    fn detect_losses(&mut self) {
        let mut later_acked = 0u32;
        let mut event_at: Option<u64> = None;
        for s in self.sent.iter_mut().rev() {
            match s.fate {
                Fate::Acked => later_acked += 1,
                Fate::InFlight if later_acked >= NUMDUPACK => {
                    s.fate = Fate::Lost;
                    self.pipe -= 1;
                    if self.recovery_until.is_none_or(|r| s.seq > r) {
                        event_at = Some(s.seq);
                    }
                }
                _ => {}
            }
        }
        if event_at.is_some() {
            self.congestion_event();
        }
    }

    fn congestion_event(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(1);
        self.cwnd = self.ssthresh;
        self.ca_acked = 0;
        self.recovery_until = self.sent.back().map(|s| s.seq);
        self.congestion_events += 1;
        self.ack_ratio = self.ack_ratio.min(self.cwnd.div_ceil(2).max(1));
    }

    /// Forget resolved packets at the front.
    fn trim(&mut self) {
        while self.sent.front().is_some_and(|s| s.fate != Fate::InFlight) {
            self.sent.pop_front();
        }
    }

    /// RFC 4341 §6.1.2: once per window of data, adjust the Ack Ratio.
    fn ack_ratio_window(&mut self, gsr: u64, highest_sent: u64) {
        if gsr < self.window_end {
            return;
        }
        let r = self.ack_ratio;
        if self.ack_lost_in_window {
            self.ack_ratio = r * 2;
            self.clean_windows = 0;
        } else {
            self.clean_windows += 1;
            if r > 1
                && self.clean_windows as u64 * (r as u64 * r as u64 - r as u64) >= self.cwnd as u64
            {
                self.ack_ratio = r - 1;
                self.clean_windows = 0;
            }
        }
        self.ack_ratio = self.ack_ratio.min(self.cwnd.div_ceil(2)).max(1);
        self.ack_lost_in_window = false;
        self.window_end = highest_sent + self.cwnd as u64;
    }

    /// The retransmission timer expired with packets outstanding.
    pub fn on_timeout(&mut self) {
        self.ssthresh = (self.cwnd / 2).max(2);
        self.cwnd = 1;
        self.ca_acked = 0;
        for s in self.sent.iter_mut() {
            if s.fate == Fate::InFlight {
                s.fate = Fate::Lost;
            }
        }
        self.pipe = 0;
        self.recovery_until = self.sent.back().map(|s| s.seq);
        self.trim();
        self.ack_ratio = 1;
    }
}

/// CCID 2 receiver state: the Ack Vector and when to acknowledge.
#[derive(Clone, Debug)]
pub struct Ccid2Receiver {
    /// Greatest sequence number received, its send stamp and arrival time.
    gsr: Option<(u64, u64, SimTime)>,
    /// Bit i: GSR − 1 − i arrived.
    vector: u128,
    /// Data packets since the last acknowledgement, and when the first of them arrived.
    unacked: u32,
    first_unacked_at: Option<SimTime>,
    ack_delay: SimTime,
    ack_seq: u64,
    ack_bytes: u32,
    pub acks_sent: u64,
}

impl Ccid2Receiver {
    pub fn new(ack_delay: SimTime, ack_bytes: u32) -> Self {
        Ccid2Receiver {
            gsr: None,
            vector: 0,
            unacked: 0,
            first_unacked_at: None,
            ack_delay,
            ack_seq: 0,
            ack_bytes,
            acks_sent: 0,
        }
    }

    /// A data packet arrived; `ratio` is the Ack Ratio the sender asked for. Returns whether
    /// it was new (not a duplicate).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        now: SimTime,
        seq: u64,
        ts: u64,
        ratio: u32,
        flow: u32,
        peer: u32,
        out: &mut Vec<Packet>,
    ) -> bool {
        let new = match self.gsr {
            None => {
                self.gsr = Some((seq, ts, now));
                true
            }
            Some((g, _, _)) if seq > g => {
                let shift = seq - g;
                self.vector = if shift >= 128 {
                    0
                } else {
                    (self.vector << shift) | (1u128 << (shift - 1))
                };
                self.gsr = Some((seq, ts, now));
                true
            }
            Some((g, _, _)) if seq == g => false,
            Some((g, _, _)) => {
                let i = g - 1 - seq;
                if i >= 128 || self.vector >> i & 1 == 1 {
                    false
                } else {
                    self.vector |= 1u128 << i;
                    true
                }
            }
        };
        if !new {
            return false;
        }
        self.unacked += 1;
        self.first_unacked_at.get_or_insert(now);
        if self.unacked >= ratio.max(1) {
            self.send_ack(now, flow, peer, out);
        }
        true
    }

    fn send_ack(&mut self, now: SimTime, flow: u32, peer: u32, out: &mut Vec<Packet>) {
        let Some((gsr, echo, arrived)) = self.gsr else {
            return;
        };
        let elapsed_us =
            (now.saturating_sub(arrived).as_nanos() / 1000).min(u32::MAX as u64) as u32;
        let b = Backward {
            kind: DccpType::Ack,
            ack_seq: self.ack_seq,
            payload: [self.vector as u64, (self.vector >> 64) as u64],
        };
        out.push(wire::backward_packet(
            flow,
            peer,
            gsr,
            echo,
            elapsed_us,
            self.ack_bytes,
            b,
        ));
        self.ack_seq += 1;
        self.acks_sent += 1;
        self.unacked = 0;
        self.first_unacked_at = None;
    }

    pub fn next_timer(&self) -> Option<SimTime> {
        self.first_unacked_at.map(|t| t + self.ack_delay)
    }

    pub fn on_timer(&mut self, now: SimTime, flow: u32, peer: u32, out: &mut Vec<Packet>) {
        if self.next_timer().is_some_and(|t| t <= now) {
            self.send_ack(now, flow, peer, out);
        }
    }
}

/// The Ack Vector bitmap of a receiver-side packet.
pub fn vector_of(b: &Backward) -> u128 {
    b.payload[0] as u128 | (b.payload[1] as u128) << 64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(s: &mut Ccid2Sender, gsr: u64, received_below: &[u64], ack_seq: u64) -> u32 {
        let mut v = 0u128;
        for &r in received_below {
            v |= 1 << (gsr - 1 - r);
        }
        s.on_ack(gsr, v, ack_seq, gsr)
    }

    #[test]
    fn slow_start_then_halving_on_a_loss() {
        let mut s = Ccid2Sender::new(3, 65535, 2);
        for q in 1..=3 {
            s.on_send(q);
        }
        assert!(!s.can_send());
        assert_eq!(ack(&mut s, 2, &[1], 0), 2);
        assert_eq!(s.cwnd, 5, "slow start: +2 (Ack Ratio caps the step at 2)");
        // Packet 3 is lost; 4..=7 arrive.
        for q in 4..=7 {
            s.on_send(q);
        }
        assert_eq!(s.pipe(), 5);
        ack(&mut s, 5, &[4], 1);
        assert_eq!(
            s.congestion_events, 0,
            "only two packets after 3 are acknowledged"
        );
        ack(&mut s, 7, &[4, 5, 6], 2);
        assert_eq!(s.congestion_events, 1);
        assert_eq!((s.cwnd, s.ssthresh), (4, 4), "cwnd 9 after growth, halved");
        assert_eq!(s.pipe(), 0);
    }

    #[test]
    fn one_reduction_per_window() {
        let mut s = Ccid2Sender::new(10, 4, 1);
        for q in 1..=10 {
            s.on_send(q);
        }
        // 1 and 2 lost, 3..=10 arrive: one congestion event.
        ack(&mut s, 10, &[3, 4, 5, 6, 7, 8, 9], 0);
        assert_eq!(s.congestion_events, 1);
        assert_eq!(s.cwnd, 5);
    }

    #[test]
    fn congestion_avoidance_adds_one_per_window() {
        let mut s = Ccid2Sender::new(4, 4, 1);
        let mut q = 0;
        let mut a = 0;
        for _ in 0..4 {
            q += 1;
            s.on_send(q);
            ack(&mut s, q, &[], a);
            a += 1;
        }
        assert_eq!(s.cwnd, 5);
    }

    #[test]
    fn timeout_collapses_the_window() {
        let mut s = Ccid2Sender::new(8, 65535, 2);
        for q in 1..=8 {
            s.on_send(q);
        }
        s.on_timeout();
        assert_eq!((s.cwnd, s.ssthresh, s.pipe()), (1, 4, 0));
    }

    #[test]
    fn lost_acks_double_the_ack_ratio() {
        let mut s = Ccid2Sender::new(20, 4, 2);
        for q in 1..=40 {
            s.on_send(q);
        }
        let all: Vec<u64> = (1..20).collect();
        ack(&mut s, 20, &all, 0);
        let all: Vec<u64> = (1..40).collect();
        ack(&mut s, 40, &all, 5); // four acknowledgements lost in between
        assert_eq!(s.ack_ratio, 4);
    }

    #[test]
    fn receiver_acks_every_ratio_packets_with_the_vector() {
        let mut r = Ccid2Receiver::new(SimTime::from_millis(200), 40);
        let mut out = Vec::new();
        let t = SimTime::from_millis(1);
        assert!(r.on_data(t, 1, 10, 2, 0, 1, &mut out));
        assert!(out.is_empty());
        assert!(r.on_data(t, 3, 30, 2, 0, 1, &mut out)); // 2 missing
        assert_eq!(out.len(), 1);
        let b = wire::backward(&out[0]);
        assert_eq!(out[0].seq, 3);
        assert_eq!(out[0].ts, 30);
        assert_eq!(
            vector_of(&b),
            0b10,
            "bit 1 = packet 1 arrived, bit 0 = packet 2 did not"
        );
        assert!(!r.on_data(t, 3, 30, 2, 0, 1, &mut out), "duplicate");
        assert!(
            r.on_data(t, 2, 20, 2, 0, 1, &mut out),
            "late arrival fills the hole"
        );
        assert_eq!(r.next_timer(), Some(t + SimTime::from_millis(200)));
        r.on_timer(t + SimTime::from_millis(200), 0, 1, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(vector_of(&wire::backward(&out[1])), 0b11);
        assert_eq!(wire::backward(&out[1]).ack_seq, 1);
    }
}
