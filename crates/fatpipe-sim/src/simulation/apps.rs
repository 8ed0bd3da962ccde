//! Applications in the engine: what each of the plan's flows asks of its transport, kept beside
//! the event loop rather than in it.
//!
//! A plan flow is one application: a TCP bulk or file transfer (one connection, as before), a
//! constant-bit-rate datagram source over UDP, a web source whose pages' objects are TCP
//! transfers on connections created as pages arrive, a message source (`messages`) or a relay
//! chain through depots (`relay`). The event loop only sees connections
//! (`Flow`, indexed by `Packet::flow`), datagram deliveries and one `AppTick` event per
//! application; everything about pages, objects and CBR timing lives here.
//!
//! **Web connections are pooled.** An object takes a free connection slot of its source, or a new
//! one when all are busy; when its last byte is acknowledged the slot is freed and its counters
//! are folded into the source's totals. Memory is therefore proportional to the objects in
//! flight, not to the objects finished, and finished objects cost the event loop nothing. A slot
//! that is reused gets a new incarnation (`Packet::epoch`): packets still in the network from
//! the previous connection (spurious retransmissions and their ACKs) are recognised at the
//! endpoint and discarded.

use super::messages::{MessageApp, MessageSource, MessageTransport, MessageTransportSpec};
use super::relay::{RelayApp, RelaySpec};
use super::{Ev, Flow, Simulation};
use fatpipe_core::{RngStream, SimTime};
use fatpipe_net::NodeId;
use fatpipe_traffic::{Application, PageSource, Schedule};
use fatpipe_transport::cc::CongestionOps;
use fatpipe_transport::dccp::{DccpReceiver, DccpSender};
use fatpipe_transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use fatpipe_transport::udp::{UdpReceiver, UdpSender};

/// Builds a fresh congestion-control instance for each web object.
pub type CcFactory = Box<dyn Fn() -> Box<dyn CongestionOps> + Send>;

/// Owner value of a connection that belongs to no web source.
pub(super) const NO_APP: u32 = u32::MAX;

/// What a plan flow runs.
pub enum AppSpec {
    /// Bulk (FTP-like) or a finite file over one TCP connection with congestion control `cc`
    /// (an Option only so the engine can take it out when it builds the sender).
    Tcp {
        app: Application,
        cc: Option<Box<dyn CongestionOps>>,
    },
    /// Constant bit rate over UDP: datagrams of `packet_bytes` on the wire (headers included),
    /// evenly spaced so the wire rate is `rate_bps`.
    Cbr {
        rate_bps: u64,
        packet_bytes: u32,
        header_bytes: u32,
    },
    /// Web pages arriving as an open-loop process (see `fatpipe_traffic::pages`); each object is a
    /// TCP transfer from `src` (the server) to `dst` (the client) with a fresh congestion control.
    Web {
        pages: Box<dyn PageSource>,
        new_cc: CcFactory,
    },
    /// Application packets from `source` (voice, CBR, bulk backlog) over UDP, DCCP or TCP
    /// (see `messages`); `cc` is TCP's congestion control when the transport is TCP.
    Message {
        source: MessageSource,
        transport: MessageTransportSpec,
        cc: Option<Box<dyn CongestionOps>>,
    },
    /// A transfer from `src` to `dst` through depots, one TCP connection per segment (see
    /// `relay`); the flow's `tcp` is unused (each segment has its own).
    Relay(RelaySpec),
}

impl AppSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            AppSpec::Tcp { app, .. } => app.name(),
            AppSpec::Cbr { .. } => "cbr",
            AppSpec::Web { pages, .. } => pages.kind(),
            AppSpec::Message { source, .. } => match source {
                MessageSource::Voip(_) => "voip",
                MessageSource::Cbr { .. } => "cbr",
                MessageSource::Bulk { .. } => "bulk",
            },
            AppSpec::Relay(_) => "relay",
        }
    }
}

/// One plan flow at run time.
pub(super) struct AppEntry {
    pub src: NodeId,
    pub dst: NodeId,
    pub cc_name: String,
    pub role: String,
    pub kind: &'static str,
    pub schedule: Schedule,
    pub app: App,
    /// Payload bytes delivered as of the previous sample (datagram and web apps; TCP apps keep
    /// theirs in the connection).
    pub delivered_at_last_sample: u64,
    /// Data packets of a datagram transport (UDP, DCCP) dropped in the network.
    pub drops: u64,
}

pub(super) enum App {
    Tcp { conn: u32 },
    Cbr(CbrApp),
    Web(Box<WebApp>),
    Message(Box<MessageApp>),
    Relay(Box<RelayApp>),
}

pub(super) struct CbrApp {
    pub rate_bps: u64,
    pub packet_bytes: u32,
    /// Datagrams sent so far (the next one's index).
    pub k: u64,
    pub tx: UdpSender,
    pub rx: UdpReceiver,
}

impl CbrApp {
    /// Send time of datagram `k`: computed from the start, not accumulated, so it never drifts.
    fn send_time(&self, start: SimTime, k: u64) -> SimTime {
        let ns = k as u128 * self.packet_bytes as u128 * 8 * 1_000_000_000 / self.rate_bps as u128;
        start + SimTime(ns as u64)
    }
}

pub(super) struct WebApp {
    pages: Box<dyn PageSource>,
    new_cc: CcFactory,
    tcp: TcpConfig,
    seed: u64,
    /// Every connection slot this source owns, and those free for the next object.
    pub slots: Vec<u32>,
    free: Vec<u32>,
    pub objects_started: u64,
    /// Bytes of every object that has arrived (the offered load, whatever the network does).
    pub bytes_offered: u64,
    pub done: WebTotals,
}

/// Counters of a web source's finished objects.
#[derive(Clone, Debug, Default)]
pub(super) struct WebTotals {
    pub objects: u64,
    pub bytes_delivered: u64,
    pub bytes_sent: u64,
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    /// Sum of object transfer times (request start to last byte delivered), seconds.
    pub transfer_time_sum_s: f64,
    pub rtt_min_s: f64,
    pub rtt_max_s: f64,
    pub rtt_sum_s: f64,
    pub rtt_samples: u64,
    pub drops: u64,
    /// Per-connection means are these sums over the finished objects divided by `objects`
    /// (seed 003's "per active connection" metrics, every connection weighing the same):
    /// goodput = object bytes / transfer time; throughput = payload bytes sent (retransmissions
    /// included) / lifetime (start to last ACK); the time-averaged cwnd over the lifetime; the
    /// connection's own mean RTT (over `conn_rtt_n` objects that had an RTT sample).
    pub conn_goodput_sum_bps: f64,
    pub conn_throughput_sum_bps: f64,
    pub conn_cwnd_sum_pkts: f64,
    pub conn_rtt_sum_s: f64,
    pub conn_rtt_n: u64,
}

impl WebTotals {
    fn add(&mut self, f: &Flow) {
        let s = &f.sender;
        self.objects += 1;
        self.bytes_delivered += f.receiver.bytes_delivered();
        self.bytes_sent += s.stats.payload_bytes_sent;
        self.data_packets_sent += s.stats.data_packets_sent;
        self.retransmits += s.stats.retransmits;
        self.timeouts += s.stats.timeouts;
        self.fast_recoveries += s.stats.fast_recoveries;
        let start = f.schedule.start;
        if let Some(c) = f.receiver.completed_at {
            let t = (c - start).as_secs_f64();
            self.transfer_time_sum_s += t;
            if t > 0.0 {
                self.conn_goodput_sum_bps += 8.0 * f.receiver.bytes_delivered() as f64 / t;
            }
        }
        if let Some(end) = s.stats.acked_all_at {
            let life = (end - start).as_secs_f64();
            if life > 0.0 {
                self.conn_throughput_sum_bps += 8.0 * s.stats.payload_bytes_sent as f64 / life;
            }
            self.conn_cwnd_sum_pkts += s.window_mean(end).unwrap_or(f64::NAN);
        }
        if s.rtt.samples > 0 {
            self.conn_rtt_sum_s += s.rtt.sum_rtt_ns * 1e-9 / s.rtt.samples as f64;
            self.conn_rtt_n += 1;
        }
        let r = &s.rtt;
        if let Some(m) = r.min_rtt {
            let m = m.as_secs_f64();
            self.rtt_min_s = if self.rtt_samples == 0 {
                m
            } else {
                self.rtt_min_s.min(m)
            };
        }
        if let Some(m) = r.max_rtt {
            self.rtt_max_s = self.rtt_max_s.max(m.as_secs_f64());
        }
        self.rtt_sum_s += r.sum_rtt_ns * 1e-9;
        self.rtt_samples += r.samples;
        self.drops += f.data_drops;
    }
}

impl AppEntry {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        spec_app: AppSpec,
        conn: Option<u32>,
        id: u32,
        src: NodeId,
        dst: NodeId,
        tcp: &TcpConfig,
        seed: u64,
    ) -> App {
        match spec_app {
            AppSpec::Tcp { .. } => App::Tcp {
                conn: conn.expect("a TCP app has its connection"),
            },
            AppSpec::Relay(_) => unreachable!("relays are built with their connections"),
            AppSpec::Cbr {
                rate_bps,
                packet_bytes,
                header_bytes,
            } => App::Cbr(CbrApp {
                rate_bps,
                packet_bytes,
                k: 0,
                tx: UdpSender::new(id, dst, header_bytes),
                rx: UdpReceiver::default(),
            }),
            AppSpec::Web { pages, new_cc } => App::Web(Box::new(WebApp {
                pages,
                new_cc,
                tcp: tcp.clone(),
                seed,
                slots: Vec::new(),
                free: Vec::new(),
                objects_started: 0,
                bytes_offered: 0,
                done: WebTotals::default(),
            })),
            AppSpec::Message {
                source, transport, ..
            } => {
                let transport = match transport {
                    MessageTransportSpec::Udp { header_bytes } => MessageTransport::Udp {
                        tx: UdpSender::new(id, dst, header_bytes),
                        rx: UdpReceiver::default(),
                        header: header_bytes,
                    },
                    MessageTransportSpec::Dccp(cfg) => {
                        let tx = DccpSender::new(id, dst, cfg.clone());
                        let tx = match source {
                            MessageSource::Bulk { packet_bytes } => tx.greedy(packet_bytes),
                            _ => tx,
                        };
                        MessageTransport::Dccp {
                            tx: Box::new(tx),
                            rx: Box::new(DccpReceiver::new(id, src, &cfg)),
                            timer_at: SimTime::MAX,
                        }
                    }
                    MessageTransportSpec::Tcp => MessageTransport::Tcp {
                        conn: conn.expect("a message app over TCP has its connection"),
                        arrivals: Default::default(),
                    },
                };
                App::Message(Box::new(MessageApp::new(source, transport)))
            }
        }
    }
}

impl Simulation {
    /// An application's timer: a CBR datagram is due, a web page arrives, or a relay's depots
    /// have data to move.
    #[inline(never)]
    pub(super) fn app_tick(&mut self, a: u32, now: SimTime) {
        let end = self.end;
        let entry = &mut self.apps[a as usize];
        if matches!(entry.app, App::Relay(_)) {
            // Depots keep relaying after the source stopped offering new data.
            return self.relay_tick(a, now);
        }
        let stop = entry.schedule.stop;
        if stop.is_some_and(|s| s <= now) {
            return;
        }
        if matches!(entry.app, App::Message(_)) {
            return self.message_tick(a, now);
        }
        let start = entry.schedule.start;
        let src = entry.src;
        let next = match &mut entry.app {
            App::Tcp { .. } => unreachable!("TCP apps have no ticks"),
            App::Relay(_) => unreachable!("handled above"),
            App::Message(_) => unreachable!("handled above"),
            App::Cbr(c) => {
                c.tx.send(c.packet_bytes, now, &mut self.out);
                c.k += 1;
                let next = c.send_time(start, c.k);
                self.flush_out(src, now);
                next
            }
            App::Web(w) => {
                let page = w.pages.next_page();
                let gap = w.pages.next_gap();
                w.bytes_offered += page.objects.iter().sum::<u64>();
                let mut objects = page.objects;
                let rest = objects.split_off(1.min(objects.len()));
                if let Some(&base) = objects.first() {
                    self.start_object(a, base, rest, now);
                }
                now + gap.max(SimTime(1))
            }
        };
        if next < end && stop.is_none_or(|s| next < s) {
            self.events.schedule(next, Ev::AppTick(a));
        }
    }

    /// Start one web object of `bytes` for app `a` on a free (or new) connection slot; `rest`
    /// are the page's embedded objects, started when this one is acknowledged in full.
    fn start_object(&mut self, a: u32, bytes: u64, rest: Vec<u64>, now: SimTime) {
        let (src, dst) = (self.apps[a as usize].src, self.apps[a as usize].dst);
        let App::Web(w) = &mut self.apps[a as usize].app else {
            unreachable!("objects belong to web apps")
        };
        let n = w.objects_started;
        w.objects_started += 1;
        let cc = (w.new_cc)();
        let tcp = w.tcp.clone();
        let seed = w.seed;
        let reuse = w.free.pop();
        let conn = reuse.unwrap_or(self.flows.len() as u32);
        if reuse.is_none() {
            w.slots.push(conn);
        }
        let epoch = reuse.map_or(0, |c| self.flows[c as usize].epoch.wrapping_add(1));
        let jitter = RngStream::new(seed, &format!("flow/{a}/object/{n}/send_jitter"));
        let sender = TcpSender::new(conn, dst, tcp.clone(), cc, Some(bytes))
            .with_jitter_stream(jitter)
            .with_epoch(epoch)
            .with_window_mean(now);
        let receiver = TcpReceiver::new(conn, src, &tcp, Some(bytes)).with_epoch(epoch);
        let schedule = Schedule {
            start: now,
            stop: None,
        };
        let mut flow = Flow::new(src, dst, schedule, sender, receiver, a, epoch);
        if !self.fast_acks {
            flow.sender.general_acks_only();
        }
        flow.page_rest = rest;
        match reuse {
            Some(c) => self.flows[c as usize] = flow,
            None => self.flows.push(flow),
        }
        self.flows[conn as usize].sender.start(now, &mut self.out);
        self.after_sender(conn, now);
    }

    /// Connection `conn` of a web app has had its last byte acknowledged: fold its counters into
    /// the app's totals, free the slot and start the page's embedded objects.
    #[cold]
    pub(super) fn object_done(&mut self, conn: u32, now: SimTime) {
        let flow = &mut self.flows[conn as usize];
        flow.active = false;
        let a = flow.owner;
        let rest = std::mem::take(&mut flow.page_rest);
        let App::Web(w) = &mut self.apps[a as usize].app else {
            unreachable!("owned connections belong to web apps")
        };
        w.done.add(&self.flows[conn as usize]);
        w.free.push(conn);
        for bytes in rest {
            self.start_object(a, bytes, Vec::new(), now);
        }
    }

    /// Payload bytes app `a` has delivered so far, for samples.
    pub(super) fn app_delivered(&mut self, a: usize, now: SimTime) -> u64 {
        match &self.apps[a].app {
            App::Tcp { conn } => {
                let flow = &mut self.flows[*conn as usize];
                match &mut flow.advance {
                    Some(log) => log.sample(now, flow.receiver.delivery_counters()).0,
                    None => flow.receiver.bytes_delivered(),
                }
            }
            App::Relay(r) => {
                let flow = &mut self.flows[*r.conns.last().expect("a chain") as usize];
                match &mut flow.advance {
                    Some(log) => log.sample(now, flow.receiver.delivery_counters()).0,
                    None => flow.receiver.bytes_delivered(),
                }
            }
            App::Cbr(c) => c.rx.payload_bytes,
            App::Message(m) => match &m.transport {
                MessageTransport::Udp { rx, .. } => rx.payload_bytes,
                MessageTransport::Dccp { rx, .. } => rx.delivered.payload_bytes,
                MessageTransport::Tcp { conn, .. } => {
                    self.flows[*conn as usize].receiver.bytes_delivered()
                }
            },
            App::Web(w) => {
                w.done.bytes_delivered
                    + w.slots
                        .iter()
                        .map(|&c| &self.flows[c as usize])
                        .filter(|f| f.active)
                        .map(|f| f.receiver.bytes_delivered())
                        .sum::<u64>()
            }
        }
    }
}
