//! Message applications: a source of application packets (voice on/off, CBR, or a bulk backlog)
//! carried by the transport the flow names — UDP, DCCP or TCP. The source knows nothing about
//! the transport (seed 001 runs the same voice source over DCCP CCID 2/3 and TCP), and the event
//! loop knows nothing about either: it hands this module the application's tick, DCCP packets
//! and DCCP timer expiries.
//!
//! - UDP: one datagram per application packet (payload + 28 bytes of IPv4/UDP headers).
//! - DCCP: the packet goes to the sender's queue (`DccpSender::write`; a full queue discards it).
//!   DCCP endpoints keep one `AppTimer` event for both halves (lazy cancellation, as TCP's).
//! - TCP: one segment per application packet on a streaming connection whose MSS the plan set
//!   to the packet size (ns-2 `packetSize_`); the connection is an ordinary `Flow`, and the
//!   engine reports each data packet's arrival here for the one-way delay statistics.
//!
//! Statistics per flow: packets sent by the transport (TCP retransmissions included), dropped
//! in the network (counted where the queue drops them), delivered, discarded by a full DCCP
//! queue; one-way delay and RFC 3550 jitter of what arrived.

use super::{App, Ev, Simulation};
use crate::results::FlowRow;
use fatpipe_core::SimTime;
use fatpipe_net::{Packet, PacketKind};
use fatpipe_traffic::ExpOnOff;
use fatpipe_transport::dccp::{DccpReceiver, DccpSender};
use fatpipe_transport::udp::{DatagramStats, UdpSender};

/// What produces the application's packets.
pub enum MessageSource {
    /// Exponential on/off voice (ns-2 EXPOO semantics).
    Voip(ExpOnOff),
    /// Constant bit rate: `packet_bytes` of payload every `interval`.
    Cbr {
        interval: SimTime,
        packet_bytes: u32,
    },
    /// Always backlogged with packets of `packet_bytes` payload (DCCP only).
    Bulk { packet_bytes: u32 },
}

impl MessageSource {
    fn payload(&self) -> u32 {
        match self {
            MessageSource::Voip(v) => v.params().packet_bytes,
            MessageSource::Cbr { packet_bytes, .. } | MessageSource::Bulk { packet_bytes } => {
                *packet_bytes
            }
        }
    }
}

/// The transport a message application uses, as the plan describes it.
pub enum MessageTransportSpec {
    Udp {
        header_bytes: u32,
    },
    Dccp(fatpipe_transport::dccp::DccpConfig),
    /// TCP with this congestion control (the engine builds a streaming connection).
    Tcp,
}

pub(super) enum MessageTransport {
    Udp {
        tx: UdpSender,
        rx: DatagramStats,
        header: u32,
    },
    Dccp {
        tx: Box<DccpSender>,
        rx: Box<DccpReceiver>,
        timer_at: SimTime,
    },
    Tcp {
        conn: u32,
        arrivals: DatagramStats,
    },
}

pub(super) struct MessageApp {
    pub source: MessageSource,
    pub transport: MessageTransport,
    started: bool,
    /// Application packets generated so far.
    pub generated: u64,
}

impl MessageApp {
    pub(super) fn new(source: MessageSource, transport: MessageTransport) -> Self {
        MessageApp {
            source,
            transport,
            started: false,
            generated: 0,
        }
    }

    /// Window, slow-start threshold (packets) and smoothed RTT for the flow samples: TCP's, or
    /// CCID 2's window (CCID 3 and UDP have none: 0).
    pub(super) fn window_sample(&self, flows: &[super::Flow]) -> (u32, u32, f64) {
        match &self.transport {
            MessageTransport::Tcp { conn, .. } => {
                let s = &flows[*conn as usize].sender;
                let srtt = s.rtt.srtt().map_or(f64::NAN, |x| x.as_secs_f64());
                (s.tp.snd_cwnd, s.tp.snd_ssthresh, srtt)
            }
            MessageTransport::Dccp { tx, .. } => {
                let srtt = tx.rtt.srtt().map_or(f64::NAN, |x| x.as_secs_f64());
                let (cwnd, ssthresh) = tx.window();
                (cwnd, ssthresh, srtt)
            }
            MessageTransport::Udp { .. } => (0, 0, f64::NAN),
        }
    }

    /// The TCP connection carrying this application, if any.
    pub(super) fn tcp_conn(&self) -> Option<u32> {
        match self.transport {
            MessageTransport::Tcp { conn, .. } => Some(conn),
            _ => None,
        }
    }
}

impl Simulation {
    /// The tick of message application `a`: start the transport on the first, then hand over
    /// one application packet per tick and schedule the next.
    pub(super) fn message_tick(&mut self, a: u32, now: SimTime) {
        let (src, start) = {
            let e = &self.apps[a as usize];
            (e.src, e.schedule.start)
        };
        let App::Message(m) = &mut self.apps[a as usize].app else {
            unreachable!("message tick of a message app")
        };
        let first = !m.started;
        if first {
            m.started = true;
            if let MessageTransport::Dccp { tx, .. } = &mut m.transport {
                tx.start(now, &mut self.out);
            }
        }
        // Voice: the first packet comes one gap after the start (ns-2 schedules
        // `next_interval` before sending); CBR sends at the start; bulk has no ticks.
        let send_now = match &m.source {
            MessageSource::Voip(_) => !first,
            MessageSource::Cbr { .. } => true,
            MessageSource::Bulk { .. } => false,
        };
        if send_now {
            m.generated += 1;
            let payload = m.source.payload();
            match &mut m.transport {
                MessageTransport::Udp { tx, header, .. } => {
                    tx.send(payload + *header, now, &mut self.out)
                }
                MessageTransport::Dccp { tx, .. } => {
                    tx.write(payload, now, &mut self.out);
                }
                MessageTransport::Tcp { conn, .. } => {
                    let c = *conn;
                    self.flows[c as usize]
                        .sender
                        .write_segments(1, now, &mut self.out);
                    self.after_sender(c, now);
                }
            }
        }
        let App::Message(m) = &mut self.apps[a as usize].app else {
            unreachable!()
        };
        let next = match &mut m.source {
            MessageSource::Voip(v) => Some(now + v.next_gap()),
            MessageSource::Cbr { interval, .. } => {
                // From the start, not accumulated: no drift.
                Some(start + SimTime(interval.as_nanos() * m.generated))
            }
            MessageSource::Bulk { .. } => None,
        };
        self.flush_out(src, now);
        self.arm_app_timer(a, now);
        let stop = self.apps[a as usize].schedule.stop;
        if let Some(t) = next {
            if t < self.end && stop.is_none_or(|s| t < s) {
                self.events.schedule(t, Ev::AppTick(a));
            }
        }
    }

    /// A UDP or DCCP packet of message application `a` reached its endpoint.
    pub(super) fn message_packet(&mut self, p: Packet, now: SimTime) {
        let a = p.flow;
        let (src, dst) = (self.apps[a as usize].src, self.apps[a as usize].dst);
        let App::Message(m) = &mut self.apps[a as usize].app else {
            unreachable!("datagram-transport packet of a message app")
        };
        match (&mut m.transport, p.kind) {
            (MessageTransport::Udp { rx, .. }, PacketKind::Datagram) => {
                self.packets_delivered += 1;
                rx.on_datagram(now, &p);
            }
            (MessageTransport::Dccp { rx, .. }, PacketKind::Dccp) => {
                if p.len > 0 {
                    self.packets_delivered += 1;
                }
                rx.on_packet(now, &p, &mut self.out);
                self.flush_out(dst, now);
            }
            (MessageTransport::Dccp { tx, .. }, PacketKind::DccpAck) => {
                tx.on_packet(now, &p, &mut self.out);
                self.flush_out(src, now);
            }
            _ => unreachable!("packet kind matches the app's transport"),
        }
        self.arm_app_timer(a, now);
    }

    /// Schedule an `AppTimer` for a DCCP application if its endpoints' next deadline is earlier
    /// than the pending one.
    fn arm_app_timer(&mut self, a: u32, now: SimTime) {
        let App::Message(m) = &mut self.apps[a as usize].app else {
            return;
        };
        if let MessageTransport::Dccp { tx, rx, timer_at } = &mut m.transport {
            let t = match (tx.next_timer(), rx.next_timer()) {
                (Some(x), Some(y)) => x.min(y),
                (x, y) => match x.or(y) {
                    Some(t) => t,
                    None => return,
                },
            };
            if t < *timer_at {
                *timer_at = t.max(now);
                self.events.schedule(t.max(now), Ev::AppTimer(a));
            }
        }
    }

    /// A DCCP application's timer event.
    pub(super) fn message_timer(&mut self, a: u32, now: SimTime) {
        let (src, dst) = (self.apps[a as usize].src, self.apps[a as usize].dst);
        let App::Message(m) = &mut self.apps[a as usize].app else {
            return;
        };
        let MessageTransport::Dccp { tx, timer_at, .. } = &mut m.transport else {
            return;
        };
        if *timer_at != now {
            return; // stale: a later event was armed for an earlier deadline
        }
        *timer_at = SimTime::MAX;
        tx.on_timer(now, &mut self.out);
        self.flush_out(src, now);
        let App::Message(m) = &mut self.apps[a as usize].app else {
            unreachable!()
        };
        if let MessageTransport::Dccp { rx, .. } = &mut m.transport {
            rx.on_timer(now, &mut self.out);
        }
        self.flush_out(dst, now);
        self.arm_app_timer(a, now);
    }

    /// A data segment of a TCP connection that carries a message application arrived (for the
    /// one-way delay statistics; TCP's `ts` is the send time + 1 ns).
    #[cold]
    pub(super) fn message_tcp_arrival(&mut self, a: u32, p: &Packet, now: SimTime) {
        if let App::Message(m) = &mut self.apps[a as usize].app {
            if let MessageTransport::Tcp { arrivals, .. } = &mut m.transport {
                let mut q = *p;
                q.ts = p.ts.saturating_sub(1);
                arrivals.on_datagram(now, &q);
            }
        }
    }

    /// Fill the result row of message application `a`.
    pub(super) fn message_row(
        &self,
        m: &MessageApp,
        row: &mut FlowRow,
        per_s: &dyn Fn(u64) -> f64,
    ) {
        match &m.transport {
            MessageTransport::Udp { tx, rx, .. } => {
                row.bytes_sent = tx.bytes_sent;
                row.bytes_delivered = rx.payload_bytes;
                row.data_packets_sent = tx.packets_sent;
                row.packets_delivered = rx.packets;
                row.delay_mean_s = rx.delay_s().0;
                row.jitter_s = rx.jitter_s();
            }
            MessageTransport::Dccp { tx, rx, .. } => {
                let d = &rx.delivered;
                row.bytes_sent = tx.stats.payload_bytes_sent;
                row.bytes_delivered = d.payload_bytes;
                row.data_packets_sent = tx.stats.data_packets_sent;
                row.packets_delivered = d.packets;
                row.app_discards = tx.stats.app_discards;
                row.loss_event_rate = rx.loss_event_rate();
                row.timeouts = tx.stats.timeouts;
                row.fast_recoveries = tx.congestion_events();
                row.delay_mean_s = d.delay_s().0;
                row.jitter_s = d.jitter_s();
                let r = &tx.rtt;
                row.rtt_min_s = r.min_rtt.map_or(f64::NAN, |x| x.as_secs_f64());
                row.rtt_max_s = r.max_rtt.map_or(f64::NAN, |x| x.as_secs_f64());
                if r.samples > 0 {
                    row.rtt_mean_s = r.sum_rtt_ns / r.samples as f64 * 1e-9;
                }
            }
            MessageTransport::Tcp { conn, arrivals } => {
                let f = &self.flows[*conn as usize];
                let s = &f.sender;
                row.bytes_sent = s.stats.payload_bytes_sent;
                row.bytes_delivered = f.receiver.bytes_delivered();
                row.data_packets_sent = s.stats.data_packets_sent;
                row.packets_delivered = f.receiver.bytes_delivered() / s.config().mss.max(1) as u64;
                row.retransmits = s.stats.retransmits;
                row.timeouts = s.stats.timeouts;
                row.fast_recoveries = s.stats.fast_recoveries;
                row.delay_mean_s = arrivals.delay_s().0;
                row.jitter_s = arrivals.jitter_s();
                let r = &s.rtt;
                row.rtt_min_s = r.min_rtt.map_or(f64::NAN, |x| x.as_secs_f64());
                row.rtt_max_s = r.max_rtt.map_or(f64::NAN, |x| x.as_secs_f64());
                if r.samples > 0 {
                    row.rtt_mean_s = r.sum_rtt_ns / r.samples as f64 * 1e-9;
                }
            }
        }
        row.goodput_bps = per_s(row.bytes_delivered);
        row.throughput_bps = per_s(row.bytes_sent);
        row.app_packets = m.generated;
    }
}
