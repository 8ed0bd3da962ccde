//! CCID 3 (RFC 4342): TFRC's rate control (`tfrc`) on DCCP packets, both halves.
//!
//! **Sender.** Data leaves at TFRC's allowed rate: one packet every t_ipi = s/X (RFC 5348 §4.6)
//! while the queue holds data; a packet written after a pause goes at once if its time has come
//! (no credit is saved up). Each data packet carries the window counter CCVal, which advances by
//! one per quarter of the RTT estimate and by at most 5 between packets (RFC 4342 §8.1, ns-2
//! `max_wc_inc_` 5), and the RTT estimate (RFC 5348 §3.2.1). A feedback packet gives an RTT
//! sample (Timestamp Echo − Elapsed Time), X_recv and p to `TfrcSender::on_feedback`; the
//! nofeedback timer is `TfrcSender`'s.
//!
//! **Receiver.** Every data packet goes to the loss history (loss events by CCVal, RFC 4342
//! §10.2, as ns-2) and to the receive-rate estimate. Feedback (RFC 4342 §10.3, ns-2's rule)
//! is sent for the first data packet, when a new loss event raises p, and when a data packet
//! arrives whose CCVal is at least 4 (one RTT) past that of the last feedback; with no data
//! arriving there is nothing to report and no feedback (RFC 5348 §6.2).
//!
//! `s`, the segment size in the equation and the rate floors, is a setting apart from the real
//! packet size (X_recv counts real bytes): ns-2.35's module uses its nominal `s_s_` = 500 B
//! whatever the application sends, which with 160-byte voice packets pins the sender at one
//! packet per RTT (see docs/dccp.md).

use super::tfrc::equation::{first_loss_interval, TcpEquation};
use super::tfrc::loss_history::{
    Arrival, LossHistory, LossHistoryConfig, ReceiveRate, XRecvWindow, CCVAL_MODULUS, CCVAL_PER_RTT,
};
use super::tfrc::sender::{Feedback, SenderConfig, TfrcSender, TfrcVariant};
use super::wire::{self, Backward, DccpType};
use fatpipe_core::SimTime;
use fatpipe_net::Packet;

/// Largest CCVal step between consecutive data packets (RFC 4342 §8.1; ns-2 `max_wc_inc_`).
pub const MAX_CCVAL_STEP: u64 = 5;

/// CCID 3 sender state.
#[derive(Clone, Debug)]
pub struct Ccid3Sender {
    pub tfrc: TfrcSender,
    s: u32,
    /// Earliest time the next data packet may leave.
    next_send: SimTime,
    ccval: u8,
    /// When CCVal last advanced.
    ccval_at: SimTime,
}

impl Ccid3Sender {
    pub fn new(variant: TfrcVariant, s: u32) -> Self {
        let cfg = match variant {
            TfrcVariant::Rfc3448 => SenderConfig {
                s,
                ..SenderConfig::ns2()
            },
            TfrcVariant::Rfc5348 => SenderConfig::new(TfrcVariant::Rfc5348, s),
        };
        Ccid3Sender {
            tfrc: TfrcSender::new(cfg),
            s,
            next_send: SimTime::ZERO,
            ccval: 0,
            ccval_at: SimTime::ZERO,
        }
    }

    pub fn on_open(&mut self, now: SimTime, rtt: SimTime) {
        self.tfrc.set_handshake_rtt(now, rtt);
        self.ccval_at = now;
    }

    /// Whether a data packet may leave at `now`.
    pub fn can_send(&self, now: SimTime) -> bool {
        now >= self.next_send
    }

    /// When the next packet may leave (for the send timer).
    pub fn next_send(&self) -> SimTime {
        self.next_send
    }

    /// A data packet leaves: returns (CCVal, RTT estimate in ns) to put on it.
    pub fn on_send(&mut self, now: SimTime) -> (u8, u64) {
        let rtt = self.tfrc.rtt();
        if let Some(r) = rtt {
            let quarter = (r.as_nanos() / CCVAL_PER_RTT as u64).max(1);
            let steps = now.saturating_sub(self.ccval_at).as_nanos() / quarter;
            if steps > 0 {
                let step = steps.min(MAX_CCVAL_STEP);
                self.ccval = ((self.ccval as u64 + step) % CCVAL_MODULUS as u64) as u8;
                self.ccval_at = now;
            }
        }
        self.tfrc.on_packet_sent(now);
        let ipi = self.tfrc.inter_packet_interval(self.s);
        self.next_send = now.max(self.next_send) + ipi;
        (self.ccval, rtt.map_or(0, |r| r.as_nanos()))
    }

    /// Before a packet written after a pause: no credit for the time nothing was sent.
    pub fn before_send(&mut self, now: SimTime) {
        if self.next_send < now {
            self.next_send = now;
        }
    }

    pub fn on_feedback(&mut self, now: SimTime, rtt_sample: SimTime, x_recv: f64, p: f64) {
        self.tfrc
            .on_feedback(now, Feedback::new(rtt_sample.max(SimTime(1)), x_recv, p));
        // A higher rate may let the next packet go sooner.
        let ipi = self.tfrc.inter_packet_interval(self.s);
        self.next_send = self.next_send.min(now + ipi);
    }

    pub fn next_nofeedback(&self) -> Option<SimTime> {
        self.tfrc.next_nofeedback_deadline()
    }

    pub fn on_nofeedback_timer(&mut self, now: SimTime) {
        self.tfrc.on_nofeedback_timer(now);
    }
}

/// CCID 3 receiver state.
#[derive(Clone, Debug)]
pub struct Ccid3Receiver {
    losses: LossHistory,
    rate: ReceiveRate,
    equation: TcpEquation,
    s: f64,
    /// Greatest sequence number received, its send stamp, arrival time and CCVal.
    gsr: Option<(u64, u64, SimTime)>,
    last_feedback_ccval: Option<u8>,
    feedback_bytes: u32,
    ack_seq: u64,
    pub feedbacks_sent: u64,
}

impl Ccid3Receiver {
    pub fn new(variant: TfrcVariant, s: u32, feedback_bytes: u32) -> Self {
        let (cfg, window) = match variant {
            TfrcVariant::Rfc3448 => (LossHistoryConfig::ns2(), XRecvWindow::SinceLastFeedback),
            TfrcVariant::Rfc5348 => (LossHistoryConfig::default(), XRecvWindow::LastRtt),
        };
        Ccid3Receiver {
            losses: LossHistory::new(cfg),
            rate: ReceiveRate::new(window),
            equation: TcpEquation::default(),
            s: s as f64,
            gsr: None,
            last_feedback_ccval: None,
            feedback_bytes,
            ack_seq: 0,
            feedbacks_sent: 0,
        }
    }

    /// The loss event rate the receiver reports.
    pub fn loss_event_rate(&self) -> f64 {
        self.losses.loss_event_rate()
    }

    /// A data packet arrived. Returns whether it was new.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        now: SimTime,
        p: &Packet,
        ccval: u8,
        rtt_ns: u64,
        flow: u32,
        peer: u32,
        out: &mut Vec<Packet>,
    ) -> bool {
        if self.losses.highest_seq().is_some_and(|h| p.seq == h) {
            return false;
        }
        let rtt = SimTime(rtt_ns.max(1));
        let x_now = self.rate.x_recv(now, rtt);
        let (eq, s) = (self.equation, self.s);
        let outcome =
            self.losses
                .on_packet(Arrival::new(p.seq, now).with_ccval(ccval), rtt, || {
                    first_loss_interval(&eq, s, rtt.as_secs_f64(), x_now.max(s))
                });
        if outcome.ignored {
            return false;
        }
        self.rate.on_data(now, p.len, rtt);
        if self.gsr.is_none_or(|(g, _, _)| p.seq > g) {
            self.gsr = Some((p.seq, p.ts, now));
        }
        let due = match self.last_feedback_ccval {
            None => true,
            Some(last) => (ccval + CCVAL_MODULUS - last) % CCVAL_MODULUS >= CCVAL_PER_RTT,
        };
        if due || outcome.new_loss_events > 0 {
            self.send_feedback(now, ccval, rtt, flow, peer, out);
        }
        true
    }

    fn send_feedback(
        &mut self,
        now: SimTime,
        ccval: u8,
        rtt: SimTime,
        flow: u32,
        peer: u32,
        out: &mut Vec<Packet>,
    ) {
        let Some((gsr, echo, arrived)) = self.gsr else {
            return;
        };
        let x_recv = self.rate.x_recv(now, rtt);
        let p = self.losses.loss_event_rate();
        let elapsed_us =
            (now.saturating_sub(arrived).as_nanos() / 1000).min(u32::MAX as u64) as u32;
        let b = Backward {
            kind: DccpType::Ack,
            ack_seq: self.ack_seq,
            payload: [x_recv.to_bits(), p.to_bits()],
        };
        out.push(wire::backward_packet(
            flow,
            peer,
            gsr,
            echo,
            elapsed_us,
            self.feedback_bytes,
            b,
        ));
        self.rate.on_feedback_sent(now);
        self.ack_seq += 1;
        self.feedbacks_sent += 1;
        self.last_feedback_ccval = Some(ccval);
    }
}

/// X_recv and p of a feedback packet.
pub fn feedback_of(b: &Backward) -> (f64, f64) {
    (f64::from_bits(b.payload[0]), f64::from_bits(b.payload[1]))
}
