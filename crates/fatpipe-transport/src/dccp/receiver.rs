//! The DCCP receiver: answers the Request, delivers data to the application (DCCP is
//! unreliable: every packet that arrives is delivered at once, in arrival order; a duplicate is
//! not) and runs its CCID's half: CCID 2's Ack Vector acknowledgements or CCID 3's TFRC
//! feedback.

use super::ccid2::Ccid2Receiver;
use super::ccid3::Ccid3Receiver;
use super::config::{Ccid, DccpConfig};
use super::wire::{self, Backward, DccpType};
use crate::udp::DatagramStats;
use fatpipe_core::SimTime;
use fatpipe_net::Packet;

enum Half {
    Two(Ccid2Receiver),
    Three(Box<Ccid3Receiver>),
}

pub struct DccpReceiver {
    pub flow: u32,
    /// Node of the sender.
    pub peer: u32,
    handshake_bytes: u32,
    half: Half,
    /// What was delivered: packets, bytes, one-way delay, jitter.
    pub delivered: DatagramStats,
    /// Data packets that arrived twice (never delivered twice).
    pub duplicates: u64,
}

impl DccpReceiver {
    pub fn new(flow: u32, peer: u32, cfg: &DccpConfig) -> Self {
        let half = match cfg.ccid {
            Ccid::Two => Half::Two(Ccid2Receiver::new(cfg.ack_delay, cfg.ack_bytes)),
            Ccid::Three => Half::Three(Box::new(Ccid3Receiver::new(
                cfg.tfrc,
                cfg.tfrc_segment,
                cfg.feedback_bytes,
            ))),
        };
        DccpReceiver {
            flow,
            peer,
            handshake_bytes: cfg.handshake_bytes,
            half,
            delivered: DatagramStats::default(),
            duplicates: 0,
        }
    }

    pub fn on_packet(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        let f = wire::forward(p);
        match f.kind {
            DccpType::Request => {
                // Response: echo the Request's timestamp (Elapsed Time 0, answered at once).
                let b = Backward {
                    kind: DccpType::Response,
                    ack_seq: 0,
                    payload: [0, 0],
                };
                out.push(wire::backward_packet(
                    self.flow,
                    self.peer,
                    p.seq,
                    p.ts,
                    0,
                    self.handshake_bytes,
                    b,
                ));
            }
            DccpType::Data => {
                let new = match &mut self.half {
                    Half::Two(h) => {
                        h.on_data(now, p.seq, p.ts, f.ack_ratio, self.flow, self.peer, out)
                    }
                    Half::Three(h) => {
                        h.on_data(now, p, f.ccval, f.rtt_ns, self.flow, self.peer, out)
                    }
                };
                if new {
                    self.delivered.on_datagram(now, p);
                } else {
                    self.duplicates += 1;
                }
            }
            DccpType::Response | DccpType::Ack => {}
        }
    }

    /// CCID 3: the loss event rate the receiver reports (NaN for CCID 2).
    pub fn loss_event_rate(&self) -> f64 {
        match &self.half {
            Half::Two(_) => f64::NAN,
            Half::Three(h) => h.loss_event_rate(),
        }
    }

    pub fn next_timer(&self) -> Option<SimTime> {
        match &self.half {
            Half::Two(h) => h.next_timer(),
            Half::Three(_) => None,
        }
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Half::Two(h) = &mut self.half {
            h.on_timer(now, self.flow, self.peer, out);
        }
    }
}
