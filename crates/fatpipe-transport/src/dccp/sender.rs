//! The DCCP sender (RFC 4340): connection set-up, the bounded sender queue, sequence numbers,
//! and the congestion control (CCID 2 or 3) that decides when the head of the queue may go.
//!
//! DCCP never retransmits data. What the application writes while the queue is full is
//! discarded and counted in `stats.app_discards` (RFC 4340 leaves the policy to the
//! implementation; ns-2's module drops new data when its `sb_size_` packets are queued), apart
//! from the network's drops.
//!
//! Set-up (RFC 4340 §8.1): the sender sends a Request; data may flow once the Response arrives,
//! which also gives the first RTT sample (as ns-2's agent does; the handshake's third packet,
//! the client's Ack, carries nothing the congestion controls need and is not simulated). A lost
//! Request is sent again after the retransmission timeout, backed off.

use super::ccid2::{self, Ccid2Sender};
use super::ccid3::{self, Ccid3Sender};
use super::config::{Ccid, DccpConfig};
use super::wire::{self, DccpType, Forward};
use crate::tcp::rtt::{RtoEstimator, RttEstimator};
use fatpipe_core::SimTime;
use fatpipe_net::Packet;
use std::collections::VecDeque;

/// Counters of one sender.
#[derive(Clone, Debug, Default)]
pub struct DccpSenderStats {
    /// Data packets sent, and their payload and wire bytes.
    pub data_packets_sent: u64,
    pub payload_bytes_sent: u64,
    pub wire_bytes_sent: u64,
    /// Application packets offered, and those discarded because the queue was full.
    pub app_packets: u64,
    pub app_discards: u64,
    pub timeouts: u64,
}

enum Control {
    Two(Ccid2Sender),
    Three(Box<Ccid3Sender>),
}

pub struct DccpSender {
    pub flow: u32,
    pub peer: u32,
    cfg: DccpConfig,
    /// Set up: the Response has arrived.
    open: bool,
    started: bool,
    /// Payload sizes waiting, oldest first.
    queue: VecDeque<u32>,
    /// A bulk sender's queue is never empty: every packet carries this payload.
    greedy: Option<u32>,
    next_seq: u64,
    control: Control,
    pub rtt: RttEstimator,
    /// Retransmission timer (CCID 2 and the Request).
    rto_at: Option<SimTime>,
    pub stats: DccpSenderStats,
}

impl DccpSender {
    pub fn new(flow: u32, peer: u32, cfg: DccpConfig) -> Self {
        let control = match cfg.ccid {
            Ccid::Two => Control::Two(Ccid2Sender::new(
                cfg.initial_cwnd,
                cfg.initial_ssthresh,
                cfg.ack_ratio,
            )),
            Ccid::Three => Control::Three(Box::new(Ccid3Sender::new(cfg.tfrc, cfg.tfrc_segment))),
        };
        let rtt = RttEstimator::new(
            RtoEstimator::Rfc6298,
            cfg.min_rto,
            cfg.max_rto,
            cfg.initial_rto,
        );
        DccpSender {
            flow,
            peer,
            cfg,
            open: false,
            started: false,
            queue: VecDeque::new(),
            greedy: None,
            next_seq: 0,
            control,
            rtt,
            rto_at: None,
            stats: DccpSenderStats::default(),
        }
    }

    /// Make the sender a bulk source whose queue always holds packets of `payload` bytes.
    pub fn greedy(mut self, payload: u32) -> Self {
        self.greedy = Some(payload);
        self
    }

    pub fn config(&self) -> &DccpConfig {
        &self.cfg
    }

    /// CCID 2's window and slow-start threshold in packets, for samples (CCID 3: 0, 0).
    pub fn window(&self) -> (u32, u32) {
        match &self.control {
            Control::Two(c) => (c.cwnd, c.ssthresh),
            Control::Three(_) => (0, 0),
        }
    }

    pub fn congestion_events(&self) -> u64 {
        match &self.control {
            Control::Two(c) => c.congestion_events,
            Control::Three(c) => c.tfrc.nofeedback_expiries(),
        }
    }

    /// Open the connection: send the Request.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.started = true;
        self.send_request(now, out);
    }

    fn send_request(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let f = Forward {
            kind: DccpType::Request,
            ccval: 0,
            ack_ratio: 0,
            rtt_ns: 0,
        };
        out.push(wire::forward_packet(
            self.flow,
            self.peer,
            0,
            now.as_nanos(),
            0,
            self.cfg.handshake_bytes,
            f,
        ));
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// The application hands over a packet of `payload` bytes. Returns false if the queue was
    /// full and it was discarded.
    pub fn write(&mut self, payload: u32, now: SimTime, out: &mut Vec<Packet>) -> bool {
        self.stats.app_packets += 1;
        if self.queue.len() >= self.cfg.queue_packets as usize {
            self.stats.app_discards += 1;
            return false;
        }
        self.queue.push_back(payload);
        self.transmit(now, out);
        true
    }

    fn has_data(&self) -> bool {
        self.greedy.is_some() || !self.queue.is_empty()
    }

    fn transmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !self.open {
            return;
        }
        let has_data = self.has_data();
        let rto = self.rtt.rto();
        match &mut self.control {
            Control::Two(c) => {
                if c.can_send() && has_data && self.cfg.restart_after_idle {
                    c.before_send(now, rto);
                }
            }
            Control::Three(c) => c.before_send(now),
        }
        loop {
            let ok = match &self.control {
                Control::Two(c) => c.can_send(),
                Control::Three(c) => c.can_send(now),
            };
            if !ok || !self.has_data() {
                break;
            }
            self.send_data(now, out);
        }
        let idle = !self.has_data();
        if let (Control::Two(c), true) = (&mut self.control, idle) {
            c.note_idle(now);
        }
    }

    fn send_data(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let payload = match self.greedy {
            Some(p) => p,
            None => self.queue.pop_front().expect("has data"),
        };
        self.next_seq += 1;
        let seq = self.next_seq;
        let (ccval, ack_ratio, rtt_ns) = match &mut self.control {
            Control::Two(c) => {
                c.on_send(seq);
                (0, c.ack_ratio, 0)
            }
            Control::Three(c) => {
                let (ccval, rtt) = c.on_send(now);
                (ccval, 0, rtt)
            }
        };
        let wire_bytes = payload + self.cfg.header_bytes;
        let f = Forward {
            kind: DccpType::Data,
            ccval,
            ack_ratio,
            rtt_ns,
        };
        out.push(wire::forward_packet(
            self.flow,
            self.peer,
            seq,
            now.as_nanos(),
            payload,
            wire_bytes,
            f,
        ));
        self.stats.data_packets_sent += 1;
        self.stats.payload_bytes_sent += payload as u64;
        self.stats.wire_bytes_sent += wire_bytes as u64;
        if self.rto_at.is_none() && matches!(self.control, Control::Two(_)) {
            self.rto_at = Some(now + self.rtt.rto());
        }
    }

    /// A packet from the receiver arrived.
    pub fn on_packet(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        let b = wire::backward(p);
        // Timestamp Echo minus Elapsed Time: one RTT sample per receiver packet (RFC 4340 §13).
        let elapsed = SimTime::from_micros(p.len as u64);
        let rtt = now.saturating_sub(SimTime(p.ts)).saturating_sub(elapsed);
        match b.kind {
            DccpType::Response => {
                if self.open {
                    return;
                }
                self.open = true;
                self.rto_at = None;
                self.rtt.sample(rtt.max(SimTime(1)), 0, 0);
                if let Control::Three(c) = &mut self.control {
                    c.on_open(now, rtt.max(SimTime(1)));
                }
                self.transmit(now, out);
            }
            DccpType::Ack if matches!(self.control, Control::Three(_)) => {
                if !self.open {
                    return;
                }
                let (x_recv, p_loss) = ccid3::feedback_of(&b);
                self.rtt.sample(rtt.max(SimTime(1)), 0, 0);
                if let Control::Three(c) = &mut self.control {
                    c.on_feedback(now, rtt, x_recv, p_loss);
                }
                self.transmit(now, out);
            }
            DccpType::Ack => {
                if !self.open {
                    return;
                }
                let highest = self.next_seq;
                let newly = match &mut self.control {
                    Control::Two(c) => c.on_ack(p.seq, ccid2::vector_of(&b), b.ack_seq, highest),
                    Control::Three(_) => unreachable!("handled above"),
                };
                if newly > 0 {
                    self.rtt.sample(rtt.max(SimTime(1)), 0, 0);
                    self.rto_at = self.outstanding().then(|| now + self.rtt.rto());
                } else if !self.outstanding() {
                    self.rto_at = None;
                }
                self.transmit(now, out);
            }
            DccpType::Request | DccpType::Data => {}
        }
    }

    fn outstanding(&self) -> bool {
        match &self.control {
            Control::Two(c) => c.outstanding(),
            Control::Three(_) => false,
        }
    }

    /// The Request's retransmission timer, CCID 2's RTO, or CCID 3's send and nofeedback
    /// timers.
    pub fn next_timer(&self) -> Option<SimTime> {
        match &self.control {
            Control::Three(c) if self.open => {
                let send = self.has_data().then(|| c.next_send());
                match (send, c.next_nofeedback()) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                }
            }
            _ => self.rto_at,
        }
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.open {
            if let Control::Three(c) = &mut self.control {
                if c.next_nofeedback().is_some_and(|t| t <= now) {
                    c.on_nofeedback_timer(now);
                }
                self.transmit(now, out);
                return;
            }
        }
        let Some(at) = self.rto_at else { return };
        if at > now {
            return;
        }
        self.rto_at = None;
        self.rtt.back_off();
        if !self.open {
            if self.started {
                self.send_request(now, out);
            }
            return;
        }
        if self.outstanding() {
            self.stats.timeouts += 1;
            if let Control::Two(c) = &mut self.control {
                c.on_timeout();
            }
            self.transmit(now, out);
        }
    }
}
