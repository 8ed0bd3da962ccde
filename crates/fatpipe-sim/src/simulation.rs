//! The event loop that connects links, routing and TCP endpoints.

use crate::monitor::{FlowSeries, QueueSeries, SegmentSeries};
use crate::results::{EngineStats, FlowRow, LinkRow, QueueRow, SimResults};
use fatpipe_core::{EventQueue, SimTime, TieRank};
use fatpipe_net::link::{LinkWake, Offer};
use fatpipe_net::routing::{RoutingTable, NO_ROUTE};
use fatpipe_net::{DropReason, Flags, Network, NodeId, NodeKind, Packet, PacketKind};
use fatpipe_traffic::Schedule;
use fatpipe_transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use thiserror::Error;

mod apps;
mod data_merge;
mod merge;
mod messages;
mod min_tree;
mod relay;
use apps::{App, AppEntry, NO_APP};
pub use apps::{AppSpec, CcFactory};
use data_merge::{data_merges, DataMerges, DATA};
use merge::{merge_links, Merges, PathFacts};
pub use messages::{MessageSource, MessageTransportSpec};
pub use relay::{RelayHop, RelaySpec};

/// Errors a run can end with. All are caused by the input (a scenario too large for its limits,
/// or a flow with no route); none leaves partial results behind.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    #[error("the run exceeded its event limit ({limit} events) at t = {at_s:.3} s; raise limits.max_events or shorten the run")]
    EventLimit { limit: u64, at_s: f64 },
    #[error("more than {limit} packets were in the network at t = {at_s:.3} s (memory bound); raise limits.max_packets or reduce buffers/windows")]
    PacketLimit { limit: u64, at_s: f64 },
    #[error("flow {flow} from {src} to {dst} has no route; connect the nodes or fix the flow's endpoints")]
    Unroutable { flow: u32, src: String, dst: String },
    #[error("the run was cancelled at t = {at_s:.3} s")]
    Cancelled { at_s: f64 },
}

/// Bounds that turn a runaway run into a clear error instead of exhausting the machine.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_events: u64,
    pub max_packets: u64,
}

impl Default for Limits {
    fn default() -> Self {
        // 20 G events is hours of work; 50 M packets is ~5 GB of packet state.
        Limits {
            max_events: 20_000_000_000,
            max_packets: 50_000_000,
        }
    }
}

/// A plan flow to create: an application and the transport settings it uses.
pub struct FlowSpec {
    pub src: NodeId,
    pub dst: NodeId,
    pub app: AppSpec,
    pub schedule: Schedule,
    pub tcp: TcpConfig,
    /// The congestion control's name as reported ("udp" for datagram apps).
    pub cc_name: String,
    /// Scenario seed (the sender draws its send jitter from it).
    pub seed: u64,
    /// What the flow is for in the study ("main", "background"); reported, never interpreted.
    pub role: String,
}

/// The buffers endpoints write their packets to: `Now` for endpoints run by an event, the other
/// two for receivers and senders run in advance (kept apart, as one may run inside the other).
#[derive(Clone, Copy, Debug)]
enum OutBuf {
    Now,
    Receivers,
    Senders,
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    TxDone(u32),
    Arrive(u32),
    SenderTimer(u32),
    ReceiverTimer(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// An application's own timer (a CBR datagram, a web page arrival); the id is the plan flow.
    AppTick(u32),
    /// A DCCP application's endpoint timer (either half); the id is the plan flow.
    AppTimer(u32),
}

/// The order of events at one instant, which must not depend on when they were scheduled: the
/// shortcuts schedule at other moments than event-by-event processing (an in-advance sender
/// puts a packet in its access link's pipe earlier), and ties are real (links whose rates are
/// exact multiples, or equal access paths, bring two packets to a router at the same
/// nanosecond, and which one a full queue drops is decided here). First timers, starts, stops
/// and transmission ends (rank 0, in scheduling order); then arrivals, in link order; last the
/// applications' ticks, so that a relay's tick, scheduled for the instant at which data
/// reached its depot, moves the data after every packet of that instant (`relay.rs`).
impl TieRank for Ev {
    #[inline(always)]
    fn tie_rank(&self) -> u32 {
        match *self {
            Ev::Arrive(l) => l + 1,
            Ev::AppTick(_) => u32::MAX,
            _ => 0,
        }
    }
}

struct Flow {
    src: NodeId,
    dst: NodeId,
    schedule: Schedule,
    sender: TcpSender,
    receiver: TcpReceiver,
    /// Time of the pending timer event of each side (MAX = none): lazy timer cancellation.
    sender_timer_at: SimTime,
    receiver_timer_at: SimTime,
    delivered_at_last_sample: u64,
    /// For receivers processed in advance (see [`advance_receivers`]): deliveries by time.
    advance: Option<AdvanceLog>,
    /// The web app this connection carries objects for (NO_APP for a plan's own TCP flow), the
    /// slot's incarnation (packets of earlier ones are discarded), whether its object is still
    /// being transferred, and the page's embedded objects to start when it is acknowledged.
    owner: u32,
    epoch: u16,
    active: bool,
    page_rest: Vec<u64>,
    /// Data packets of this connection dropped in the network.
    data_drops: u64,
    /// The sender shares an in-advance host with other senders (see `Simulation::tx_quiet`).
    shares_host: bool,
    /// Its host's `tx_quiet` is kept exact (a shared host, or the sender host of a data-side
    /// merge, `data_merge.rs`): recomputed after a timer event fires or a sender starts.
    tracks_quiet: bool,
}

impl Flow {
    /// A connection with no timer pending, nothing sampled, owned by `owner` (a message or web
    /// application, or NO_APP for a plan's own TCP flow), in incarnation `epoch`.
    fn new(
        src: NodeId,
        dst: NodeId,
        schedule: Schedule,
        sender: TcpSender,
        receiver: TcpReceiver,
        owner: u32,
        epoch: u16,
    ) -> Self {
        Flow {
            src,
            dst,
            schedule,
            sender,
            receiver,
            sender_timer_at: SimTime::MAX,
            receiver_timer_at: SimTime::MAX,
            delivered_at_last_sample: 0,
            advance: None,
            owner,
            epoch,
            active: true,
            page_rest: Vec::new(),
            data_drops: 0,
            shares_host: false,
            tracks_quiet: false,
        }
    }
}

/// What samples of a receiver processed in advance must see: the counters (bytes delivered in
/// order, data packets received) as of each sample time, not including data that arrives later
/// but was already handed over. Deliveries come in time order, so when the first one after a
/// sample time arrives, the counters just before it are those as of that sample: they are kept
/// until the sample reads them. A sample that no delivery has passed yet reads the receiver's
/// own counters, as does the end of the run (nothing is handed over past the end). A delivery
/// at exactly a sample time counts after that sample, as in the event-driven run, where a sample
/// runs before every event of its instant (see [`Simulation::run_chunk`]).
struct AdvanceLog {
    /// Time between samples, and the next sample time without a snapshot.
    interval: SimTime,
    next: SimTime,
    /// (sample time, counters as of that time), oldest first.
    snapshots: std::collections::VecDeque<(SimTime, (u64, u64))>,
}

impl AdvanceLog {
    fn new(interval: SimTime) -> Self {
        AdvanceLog {
            interval,
            next: interval,
            snapshots: Default::default(),
        }
    }

    /// A delivery at `at` is about to change the counters from `before`.
    #[inline]
    fn record(&mut self, at: SimTime, before: (u64, u64)) {
        while at >= self.next {
            self.snapshots.push_back((self.next, before));
            self.next += self.interval;
        }
    }

    /// The counters as of the sample at time `t`, given the receiver's `current` ones.
    fn sample(&mut self, t: SimTime, current: (u64, u64)) -> (u64, u64) {
        if let Some(&(ts, counters)) = self.snapshots.front() {
            debug_assert_eq!(ts, t, "samples come at the times the log expects");
            self.snapshots.pop_front();
            return counters;
        }
        debug_assert_eq!(self.next, t, "samples come at the times the log expects");
        self.next = t + self.interval;
        current
    }
}

pub struct Simulation {
    net: Network,
    routes: RoutingTable,
    /// Links a packet can be offered to in advance (cut-through, see [`cut_through_links`]).
    cut_through: Vec<bool>,
    /// Links fed by several links that take packets in advance when none can come earlier
    /// (see `merge.rs`).
    merges: Merges,
    /// Bottlenecks taking data ahead of the clock, and their ACK lines (see `data_merge.rs`).
    data: DataMerges,
    /// ACKs a line handed on since `run_chunk` last looked: they count as events for a chunk's
    /// budget, so callers that run in chunks (progress, cancellation) get control back as
    /// often as before.
    chunk_work: u64,
    /// Hosts whose receivers are processed in advance (see [`advance_receivers`]).
    advance_rx: Vec<bool>,
    /// ACKs produced by receivers processed in advance (kept apart from `out`, which may be
    /// being drained when a delivery happens).
    adv_out: Vec<Packet>,
    /// Hosts whose sender may take ACKs in advance (see [`advance_senders`]).
    advance_tx: Vec<bool>,
    /// Per in-advance sender host with several senders: the earliest time one of them can send
    /// on its own, the first pending timer event or, for a sender not started yet, its start. An
    /// ACK may go early only before it ([`Self::sender_free_until`]); a host with one sender
    /// needs only that sender's own `sender_timer_at`.
    tx_quiet: Vec<SimTime>,
    /// Per in-advance sender host, its connections: `tx_conns[tx_conns_at[x]..tx_conns_at[x + 1]]`.
    tx_conns_at: Vec<u32>,
    tx_conns: Vec<u32>,
    /// Data produced by senders processed in advance.
    adv_tx_out: Vec<Packet>,
    /// True while an in-advance sender runs: no second one nests inside it (a chain of
    /// cut-through hops between two in-advance hosts would otherwise recurse without events).
    in_advance_tx: bool,
    /// Senders take ACKs by their fast path where it applies (see `TcpSender::on_ack`); off
    /// with the other shortcuts, so the tests compare the two paths too.
    fast_acks: bool,
    /// Per node: inside `flush_out` for it. Its links then still take offers at the current time,
    /// so an ACK must not run its sender ahead of the clock (that would offer packets out of
    /// time order on the same link).
    flushing: Vec<bool>,
    /// Transport connections, indexed by `Packet::flow`: the plan's TCP flows first, then web
    /// objects' slots as they are created.
    flows: Vec<Flow>,
    /// The plan's flows (applications), indexed by plan flow id.
    apps: Vec<AppEntry>,
    /// Some app is a web source (its connections need the object and incarnation checks).
    has_web: bool,
    /// Some TCP connection carries a message application (voice over TCP).
    has_message_tcp: bool,
    /// Some app is a relay chain (its depots act on their connections' data and ACKs).
    has_relay: bool,
    events: EventQueue<Ev>,
    end: SimTime,
    sample_interval: SimTime,
    /// Time of the next monitor sample (MAX when none is left within the run), and the latest
    /// time an event may have to be popped before it: samples are not events (see `run_chunk`).
    next_sample: SimTime,
    pop_limit: SimTime,
    limits: Limits,
    out: Vec<Packet>,
    packets_in_network: u64,
    packets_delivered: u64,
    max_event_queue: u64,
    max_packets_in_network: u64,
    flow_series: FlowSeries,
    queue_series: QueueSeries,
    segment_series: SegmentSeries,
    queue_len_sum: Vec<f64>,
    samples_taken: u64,
    last_sample: SimTime,
    finished: bool,
}

impl Simulation {
    /// Build a simulation over `net` (routes are computed here) running until `end`.
    pub fn new(
        net: Network,
        flows: Vec<FlowSpec>,
        end: SimTime,
        sample_interval: SimTime,
        limits: Limits,
    ) -> Result<Self, SimError> {
        let routes = RoutingTable::compute(&net);
        let mut events = EventQueue::new();
        let mut fl = Vec::with_capacity(flows.len());
        let mut apps = Vec::with_capacity(flows.len());
        // Endpoints of every transport path, for the shortcut analyses, with the properties
        // that disqualify hosts: web clients and servers host many connections created on the
        // fly (treated as having delayed-ACK timers and pacing, which rules them out).
        let mut pairs: Vec<(NodeId, NodeId)> = Vec::with_capacity(flows.len());
        let mut delack: Vec<bool> = Vec::with_capacity(flows.len());
        let mut pacing: Vec<bool> = Vec::with_capacity(flows.len());
        // Whether the pair is a plain TCP flow (not a relay, message, CBR or web application,
        // whose applications send from their hosts on their own events): only such flows may
        // share an in-advance sender host (see `advance_senders`).
        let mut plain_tcp: Vec<bool> = Vec::with_capacity(flows.len());
        // The smallest packet (wire bytes) each path carries out and back, for `merge_links`
        // (1 byte where it is not known).
        let mut smallest: Vec<(u32, u32)> = Vec::with_capacity(flows.len());
        for (i, f) in flows.into_iter().enumerate() {
            let id = i as u32;
            let ends: Vec<(NodeId, NodeId)> = match &f.app {
                AppSpec::Relay(r) => r.hops.iter().map(|h| (h.src, h.dst)).collect(),
                _ => vec![(f.src, f.dst)],
            };
            for (a, b) in ends {
                if routes.hops(a, b).is_none() || routes.hops(b, a).is_none() {
                    return Err(SimError::Unroutable {
                        flow: id,
                        src: net.nodes[a as usize].name.clone(),
                        dst: net.nodes[b as usize].name.clone(),
                    });
                }
            }
            let kind = f.app.kind();
            if let AppSpec::Relay(spec) = f.app {
                let r = relay::build(
                    id,
                    spec,
                    f.schedule,
                    f.seed,
                    end,
                    &mut fl,
                    &mut events,
                    (&mut pairs, &mut delack, &mut pacing),
                );
                apps.push(AppEntry {
                    src: f.src,
                    dst: f.dst,
                    cc_name: f.cc_name,
                    role: f.role,
                    kind,
                    schedule: f.schedule,
                    app: App::Relay(Box::new(r)),
                    delivered_at_last_sample: 0,
                    drops: 0,
                });
                smallest.resize(pairs.len(), (1, 1));
                plain_tcp.resize(pairs.len(), false);
                continue;
            }
            pairs.push((f.src, f.dst));
            plain_tcp.push(matches!(f.app, AppSpec::Tcp { .. }));
            smallest.push(match &f.app {
                // Bulk data is all full segments; a finite transfer may end with one byte.
                AppSpec::Tcp { app, .. } if app.total_bytes().is_none() => {
                    (f.tcp.wire_size(f.tcp.mss), f.tcp.header_bytes)
                }
                AppSpec::Tcp { .. } => (f.tcp.wire_size(1), f.tcp.header_bytes),
                _ => (1, 1),
            });
            let mut app = f.app;
            let conn = match &mut app {
                AppSpec::Tcp { app, cc } => {
                    let cc = cc.take().expect("a TCP app brings its congestion control");
                    let conn = fl.len() as u32;
                    let total = app.total_bytes();
                    let receiver = TcpReceiver::new(conn, f.src, &f.tcp, total);
                    let sender =
                        TcpSender::new(conn, f.dst, f.tcp.clone(), cc, total).with_seed(f.seed, id);
                    delack.push(receiver.delayed_ack());
                    pacing.push(sender.config().pacing);
                    if f.schedule.start < end {
                        events.schedule(f.schedule.start, Ev::FlowStart(conn));
                    }
                    if let Some(stop) = f.schedule.stop {
                        if stop < end {
                            events.schedule(stop, Ev::FlowStop(conn));
                        }
                    }
                    fl.push(Flow::new(
                        f.src, f.dst, f.schedule, sender, receiver, NO_APP, 0,
                    ));
                    Some(conn)
                }
                AppSpec::Message {
                    transport: MessageTransportSpec::Tcp,
                    cc,
                    ..
                } => {
                    // A streaming connection the application writes to; its endpoints are kept
                    // off the in-advance shortcuts (their arrivals feed the delay statistics).
                    let cc = cc
                        .take()
                        .expect("a message app over TCP brings its congestion control");
                    let conn = fl.len() as u32;
                    let receiver = TcpReceiver::new(conn, f.src, &f.tcp, None);
                    let sender = TcpSender::new(conn, f.dst, f.tcp.clone(), cc, None)
                        .with_seed(f.seed, id)
                        .streaming();
                    delack.push(true);
                    pacing.push(true);
                    if f.schedule.start < end {
                        events.schedule(f.schedule.start, Ev::FlowStart(conn));
                    }
                    fl.push(Flow::new(f.src, f.dst, f.schedule, sender, receiver, id, 0));
                    Some(conn)
                }
                AppSpec::Message { .. } => {
                    // DCCP endpoints have timers on both sides; UDP is delivered by events.
                    delack.push(true);
                    pacing.push(true);
                    None
                }
                AppSpec::Cbr { .. } => {
                    delack.push(false);
                    pacing.push(false);
                    None
                }
                AppSpec::Web { .. } => {
                    delack.push(true);
                    pacing.push(true);
                    None
                }
                AppSpec::Relay(_) => unreachable!("built above"),
            };
            let ticks = conn.is_none() || matches!(app, AppSpec::Message { .. });
            if ticks && f.schedule.start < end {
                events.schedule(f.schedule.start, Ev::AppTick(id));
            }
            let app = AppEntry::new(app, conn, id, f.src, f.dst, &f.tcp, f.seed);
            apps.push(AppEntry {
                src: f.src,
                dst: f.dst,
                cc_name: f.cc_name,
                role: f.role,
                kind,
                schedule: f.schedule,
                app,
                delivered_at_last_sample: 0,
                drops: 0,
            });
        }
        let sample_interval = if sample_interval == SimTime::ZERO {
            end.max(SimTime(1))
        } else {
            sample_interval
        };
        let next_sample = if sample_interval <= end {
            sample_interval
        } else {
            SimTime::MAX
        };
        let n_links = net.links.len();
        let n_nodes = net.nodes.len();
        let mut cut_through = cut_through_links(&net, &routes, &pairs);
        let advance_rx = advance_receivers(&net, &routes, &pairs, &delack);
        let advance_tx = advance_senders(&net, &routes, &pairs, &pacing, &plain_tcp);
        let (tx_conns_at, tx_conns) = senders_by_host(&fl, &advance_tx);
        let paths: Vec<_> = pairs.iter().copied().zip(smallest).collect();
        let facts = PathFacts::new(&net, &routes, &paths);
        let mut merges = merge_links(&net, &facts, &cut_through, &advance_rx);
        let mut plain_host = vec![true; n_nodes];
        for (&(src, _), &plain) in pairs.iter().zip(&plain_tcp) {
            plain_host[src as usize] &= plain;
        }
        let data = data_merges(
            &net,
            &facts,
            &plain_host,
            &advance_rx,
            &advance_tx,
            &mut cut_through,
            &mut merges,
        );
        for f in fl.iter_mut() {
            let x = f.src as usize;
            f.shares_host = tx_conns_at[x + 1] - tx_conns_at[x] > 1;
            f.tracks_quiet = f.shares_host || data.slot[x].0 != merge::NONE;
        }
        for f in fl.iter_mut() {
            if advance_rx[f.dst as usize] {
                f.advance = Some(AdvanceLog::new(sample_interval));
            }
        }
        let mut sim = Simulation {
            net,
            routes,
            cut_through,
            merges,
            data,
            chunk_work: 0,
            advance_rx,
            adv_out: Vec::with_capacity(8),
            advance_tx,
            tx_quiet: vec![SimTime::MAX; n_nodes],
            tx_conns_at,
            tx_conns,
            adv_tx_out: Vec::with_capacity(8),
            in_advance_tx: false,
            fast_acks: true,
            flushing: vec![false; n_nodes],
            flows: fl,
            has_web: apps.iter().any(|a| matches!(a.app, App::Web(_))),
            has_message_tcp: apps
                .iter()
                .any(|a| matches!(&a.app, App::Message(m) if m.tcp_conn().is_some())),
            has_relay: apps.iter().any(|a| matches!(a.app, App::Relay(_))),
            apps,
            events,
            end,
            sample_interval,
            next_sample,
            pop_limit: pop_limit(next_sample, end),
            limits,
            out: Vec::with_capacity(64),
            packets_in_network: 0,
            packets_delivered: 0,
            max_event_queue: 0,
            max_packets_in_network: 0,
            flow_series: FlowSeries::default(),
            queue_series: QueueSeries::default(),
            segment_series: SegmentSeries::default(),
            queue_len_sum: vec![0.0; n_links],
            samples_taken: 0,
            last_sample: SimTime::ZERO,
            finished: false,
        };
        // Shared in-advance hosts and data merges' sender hosts start from their senders' starts.
        for x in 0..n_nodes {
            if sim.tx_conns_at[x + 1] - sim.tx_conns_at[x] > 1 || sim.data.slot[x].0 != merge::NONE
            {
                sim.refresh_tx_quiet(x as NodeId);
            }
        }
        Ok(sim)
    }

    pub fn now(&self) -> SimTime {
        self.events.now()
    }

    /// Turn off cut-through hops, in-advance receivers and senders, and the senders' ACK fast
    /// path (call before running). Results must not change — the shortcuts only save work —
    /// which the tests check with this switch.
    pub fn disable_shortcuts(&mut self) {
        self.cut_through.iter_mut().for_each(|c| *c = false);
        self.merges.clear();
        self.data = DataMerges::none(self.net.links.len(), self.net.nodes.len());
        self.advance_rx.iter_mut().for_each(|a| *a = false);
        self.advance_tx.iter_mut().for_each(|a| *a = false);
        self.fast_acks = false;
        for f in &mut self.flows {
            f.advance = None;
            f.sender.general_acks_only();
        }
    }

    /// Number of links taking packets in advance (cut-through and merges) and of hosts with
    /// in-advance receivers and senders.
    pub fn shortcut_counts(&self) -> (usize, usize) {
        (
            self.cut_through.iter().filter(|c| **c).count() + self.merges.count(),
            self.advance_rx.iter().filter(|a| **a).count()
                + self.advance_tx.iter().filter(|a| **a).count(),
        )
    }
    pub fn end(&self) -> SimTime {
        self.end
    }
    /// Transport connections created so far (the plan's TCP flows plus web objects' slots, which
    /// are reused: this is the most objects ever in flight at once, not the objects finished).
    pub fn connections(&self) -> usize {
        self.flows.len()
    }
    pub fn network(&self) -> &Network {
        &self.net
    }
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Run to the end.
    pub fn run(&mut self) -> Result<(), SimError> {
        while !self.run_chunk(u64::MAX)? {}
        Ok(())
    }

    /// Process at most `max_events` events; returns true when the run has reached its end time.
    /// Callers use this to report progress and to check for cancellation between chunks.
    ///
    /// A monitor sample is not an event: the loop pops the events strictly before the next
    /// sample time, then takes the sample, so a sample runs before every event of its instant.
    /// As an event, its place among the events of its instant was the order in which they were
    /// scheduled, and the shortcuts schedule arrivals earlier than event-by-event processing
    /// does (a merge by up to about a round-trip time), so an ACK arriving exactly at a sample
    /// instant could be sampled before or after depending on the shortcuts.
    pub fn run_chunk(&mut self, max_events: u64) -> Result<bool, SimError> {
        let mut n = 0u64;
        while n < max_events {
            let Some((now, ev)) = self.events.pop_until(self.pop_limit) else {
                if self.next_sample == SimTime::MAX {
                    self.finished = true;
                    return Ok(true);
                }
                self.take_sample();
                continue;
            };
            n += 1;
            if n & 1023 == 0 {
                self.max_event_queue = self.max_event_queue.max(self.events.len() as u64);
            }
            self.dispatch(now, ev);
            n += std::mem::take(&mut self.chunk_work);
            if self.events.events_processed() > self.limits.max_events {
                return Err(SimError::EventLimit {
                    limit: self.limits.max_events,
                    at_s: now.as_secs_f64(),
                });
            }
            if self.packets_in_network > self.limits.max_packets {
                return Err(SimError::PacketLimit {
                    limit: self.limits.max_packets,
                    at_s: now.as_secs_f64(),
                });
            }
        }
        let ql = self.events.len() as u64;
        self.max_event_queue = self.max_event_queue.max(ql);
        Ok(false)
    }

    #[inline]
    fn dispatch(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::TxDone(l) => self.tx_done(l, now),
            Ev::Arrive(l) => {
                let link = &mut self.net.links[l as usize];
                let Some((p, next)) = link.arrival_at(now) else {
                    return; // stale: its packet was taken in advance (see `drain_acks_in_advance`)
                };
                let node = link.to;
                self.uncount_pipe_entry(l);
                if let Some(t) = next {
                    self.events.schedule(t, Ev::Arrive(l));
                }
                self.refresh_pipe_host(l);
                let i = self.data.line_of[l as usize];
                if i != merge::NONE {
                    self.data.list[i as usize].line_head = next.unwrap_or(SimTime::MAX);
                }
                self.at_node(node, p, now);
                if next.is_some() {
                    if self.advance_tx[node as usize] {
                        self.drain_acks_in_advance(l, node, now);
                    } else if self.data.line_of[l as usize] != merge::NONE {
                        self.drain_line(l, now);
                    }
                }
            }
            Ev::SenderTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.sender_timer_at != now {
                    return; // superseded
                }
                flow.sender_timer_at = SimTime::MAX;
                let (src, tracked) = (flow.src, flow.tracks_quiet);
                flow.sender.on_timer(now, &mut self.out);
                self.after_sender(f, now);
                if tracked {
                    self.refresh_tx_quiet(src);
                }
            }
            Ev::ReceiverTimer(f) => {
                let flow = &mut self.flows[f as usize];
                if flow.receiver_timer_at != now {
                    return;
                }
                flow.receiver_timer_at = SimTime::MAX;
                flow.receiver.on_timer(now, &mut self.out);
                self.after_receiver(f, now);
            }
            Ev::FlowStart(f) => {
                self.flows[f as usize].sender.start(now, &mut self.out);
                self.after_sender(f, now);
                let flow = &self.flows[f as usize];
                if flow.tracks_quiet {
                    self.refresh_tx_quiet(flow.src);
                }
            }
            Ev::FlowStop(f) => self.flows[f as usize].sender.stop(),
            Ev::AppTick(a) => self.app_tick(a, now),
            Ev::AppTimer(a) => self.message_timer(a, now),
        }
    }

    /// No event is left before the next sample time: move the clock there, sample, and let the
    /// loop pop up to the following one.
    #[cold]
    #[inline(never)]
    fn take_sample(&mut self) {
        let t = self.next_sample;
        self.events.advance_to(t);
        self.sample(t);
        self.next_sample = match t.0.checked_add(self.sample_interval.0) {
            Some(next) if SimTime(next) <= self.end => SimTime(next),
            _ => SimTime::MAX,
        };
        self.pop_limit = pop_limit(self.next_sample, self.end);
    }

    #[inline]
    fn apply_wake(&mut self, l: u32, wake: LinkWake) {
        if let Some(t) = wake.tx_done {
            self.events.schedule(t, Ev::TxDone(l));
        }
    }

    /// Put a packet on the next link from `node` towards its destination.
    #[inline]
    fn forward(&mut self, node: NodeId, p: &Packet, now: SimTime) {
        let l = self.routes.next_link(node, p.dst);
        debug_assert_ne!(l, NO_ROUTE, "routability is checked when flows are created");
        self.offer(l, p, now, now);
    }

    /// An evented link's transmitter finished: start its next packet. Also run ahead of its
    /// event by an arrival at the same instant (`Offer::TxDue`; the event then finds nothing to
    /// do).
    fn tx_done(&mut self, l: u32, now: SimTime) {
        let mut wake = LinkWake::default();
        let departed = self.net.links[l as usize].on_tx_done(now, &mut wake);
        self.apply_wake(l, wake);
        self.count_queue_drops(l);
        if let Some((p, arrive)) = departed {
            self.place_then_offer(l, &p, now, arrive);
        }
    }

    /// Offer `p` to link `l`, where it arrives at time `at` (>= now), and on to every next hop
    /// that takes it at once (cut-through and merge-ahead links): a loop rather than a
    /// recursion through `place`, so a chain of hops pays for one call.
    #[inline]
    fn offer(&mut self, mut l: u32, p: &Packet, now: SimTime, mut at: SimTime) {
        loop {
            let arrive = match self.net.links[l as usize].offer(p, now, at) {
                Offer::Departs(arrive) => arrive,
                other => return self.offer_not_departed(l, p, now, at, other),
            };
            match self.place(l, p, now, arrive) {
                Some(next) => {
                    l = next;
                    at = arrive;
                }
                None => return,
            }
        }
    }

    /// `place`, then offer `p` to the next hop it names, if any.
    #[inline]
    fn place_then_offer(&mut self, l: u32, p: &Packet, now: SimTime, arrive: SimTime) {
        if let Some(next) = self.place(l, p, now, arrive) {
            self.offer(next, p, now, arrive);
        }
    }

    /// The outcomes of an offer other than a plain departure: AQM marks, drops, evented queues.
    #[inline(never)]
    fn offer_not_departed(&mut self, l: u32, p: &Packet, now: SimTime, at: SimTime, o: Offer) {
        match o {
            Offer::Departs(arrive) => self.place_then_offer(l, p, now, arrive),
            Offer::DepartsMarked(arrive) => self.place_marked(l, p, now, arrive),
            Offer::TxDue => self.offer_after_tx_done(l, p, now, at),
            Offer::Dropped(_why) => {
                let _: DropReason = _why;
                self.packets_in_network -= 1;
                self.count_drop(p);
                self.count_queue_drops(l);
            }
            Offer::Queued => self.count_queue_drops(l),
            Offer::QueuedWake(t) => {
                self.count_queue_drops(l);
                self.events.schedule(t, Ev::TxDone(l))
            }
        }
    }

    /// Packets an evented queue discarded from inside (CoDel's head drops at dequeue, FQ-CoDel's
    /// drops from its fattest queue): they leave the network and are charged to their flows.
    #[inline]
    fn count_queue_drops(&mut self, l: u32) {
        while let Some(d) = self.net.links[l as usize].pop_dropped() {
            self.packets_in_network -= 1;
            self.count_drop(&d);
        }
    }

    /// `Offer::TxDue`: finish the due transmission on `l`, then offer `p` again.
    #[cold]
    #[inline(never)]
    fn offer_after_tx_done(&mut self, l: u32, p: &Packet, now: SimTime, at: SimTime) {
        self.tx_done(l, now);
        self.offer(l, p, now, at);
    }

    /// `p` left link `l` with CE set by its AQM.
    #[cold]
    #[inline(never)]
    fn place_marked(&mut self, l: u32, p: &Packet, now: SimTime, arrive: SimTime) {
        let mut q = *p;
        q.flags.set(Flags::CE);
        self.place_then_offer(l, &q, now, arrive)
    }

    /// A queue dropped `p`: charge data packets to their flow.
    #[cold]
    fn count_drop(&mut self, p: &Packet) {
        match p.kind {
            PacketKind::Data => self.flows[p.flow as usize].data_drops += 1,
            PacketKind::Datagram | PacketKind::Dccp => self.apps[p.flow as usize].drops += 1,
            PacketKind::Ack | PacketKind::DccpAck => {}
        }
    }

    /// `p` left link `l` and reaches its far end at `arrive`. If the next hop is a cut-through
    /// link (or a merge that may take it now), return that link: the caller offers it there right
    /// away (no event). Otherwise hand it to an in-advance endpoint or put it in `l`'s pipe.
    #[inline(always)]
    fn place(&mut self, l: u32, p: &Packet, now: SimTime, arrive: SimTime) -> Option<u32> {
        let x = self.net.links[l as usize].to;
        // Nothing is processed ahead of the clock past the end of the run, so end-of-run counters
        // are exactly those of event-by-event processing.
        if arrive > self.end {
            self.pipe_packet(l, p, arrive);
            return None;
        }
        // Datagrams reach their endpoint by an arrival event: the in-advance paths are for TCP
        // endpoints only (`ack_can_go_early` takes ACKs only).
        if x == p.dst && self.advance_rx[x as usize] && p.kind == PacketKind::Data {
            self.deliver_in_advance(x, p, now, arrive);
            return None;
        }
        if x == p.dst && self.advance_tx[x as usize] && self.ack_can_go_early(l, p, now, arrive) {
            self.ack_in_advance(x, p, now, arrive);
            return None;
        }
        if x != p.dst {
            let next = self.routes.next_link(x, p.dst);
            if self.cut_through[next as usize] || self.merge_free(next, l, now, arrive) {
                return Some(next);
            }
        }
        self.pipe_packet(l, p, arrive);
        None
    }

    /// Put `p` in link `l`'s pipe, arriving at its far end at `arrive`, with an arrival event if
    /// it is the pipe's head.
    #[inline(always)]
    fn pipe_packet(&mut self, l: u32, p: &Packet, arrive: SimTime) {
        if self.net.links[l as usize].push_in_flight(arrive, *p) {
            self.events.schedule(arrive, Ev::Arrive(l));
            self.refresh_pipe_host(l);
            let i = self.data.line_of[l as usize];
            if i != merge::NONE {
                self.data.list[i as usize].line_head = arrive;
            }
        }
        let m = self.merges.feeds[l as usize];
        if m != merge::NONE {
            self.merges.merge[m as usize].waiting += 1;
        }
    }

    /// A packet left link `l`'s pipe: uncount it from the merge that counts that pipe, if any.
    #[inline(always)]
    fn uncount_pipe_entry(&mut self, l: u32) {
        let m = self.merges.feeds[l as usize];
        if m != merge::NONE {
            self.merges.merge[m as usize].waiting -= 1;
        }
    }

    /// Whether link `m` is a merge that may take a packet arriving at `at` (within the run)
    /// now: no pipe it counts holds a packet and no packet can reach it earlier (see `merge.rs`
    /// and, for a data-side merge, `data_merge.rs`).
    #[inline(always)]
    fn merge_free(&self, m: u32, from: u32, now: SimTime, at: SimTime) -> bool {
        let mg = &self.merges.merge[m as usize];
        if mg.up == merge::NONE || mg.waiting != 0 {
            return false;
        }
        if mg.up & DATA == 0 {
            at < now.max(self.net.links[mg.up as usize].busy_until()) + mg.lead
        } else {
            self.data_merge_free(mg.up & !DATA, from, at)
        }
    }

    /// `merge_free` of data merge `i` for a packet from its sender host's link `from`: no ACK
    /// waits for the line's merge, and `at` comes before anything else can reach the bottleneck:
    /// a packet in a sender host's pipe out (its own included: it would go first), the answer
    /// to the next ACK in the line, and what another sender host can send by its own timers and
    /// starts or on the ACKs waiting in its link in (see `data_merge.rs`).
    #[inline(always)]
    fn data_merge_free(&self, i: u32, from: u32, at: SimTime) -> bool {
        let d = &self.data.list[i as usize];
        if self.merges.merge[d.line as usize].waiting != 0 {
            return false;
        }
        if at >= d.line_bound() {
            return false;
        }
        // The least over all hosts decides at once when it is later; else the others' least.
        at < d.floor || {
            let k = self.data.pipe_of[from as usize].1 as usize;
            at < d.out_min && at < d.own.min_except(k)
        }
    }

    /// The head of link `l`'s pipe changed: if `l` is a data merge's sender host's link in or
    /// link out, recompute that host in the merge.
    #[inline(always)]
    fn refresh_pipe_host(&mut self, l: u32) {
        let (i, k) = self.data.pipe_of[l as usize];
        if i != merge::NONE {
            self.refresh_sender_host(i, k);
        }
    }

    /// Host `x`'s `tx_quiet` changed: if it is a data merge's sender host, recompute it there.
    #[inline(always)]
    fn refresh_quiet_host(&mut self, x: usize) {
        let (i, k) = self.data.slot[x];
        if i != merge::NONE {
            self.refresh_sender_host(i, k);
        }
    }

    /// Recompute sender host `k` of data merge `i` in the merge's trees: after its `tx_quiet`
    /// or the head of its link in's or link out's pipe changed.
    #[inline(never)]
    fn refresh_sender_host(&mut self, i: u32, k: u32) {
        let d = &mut self.data.list[i as usize];
        let host = d.hosts[k as usize];
        let head = |l: u32| {
            self.net.links[l as usize]
                .pipe_head()
                .map_or(SimTime::MAX, |e| e.0)
        };
        let own = self.tx_quiet[host.node as usize].min(head(host.into));
        d.own
            .set(k as usize, SimTime(own.0.saturating_add(host.leg.0)));
        d.out_heads.set(k as usize, head(host.out));
        d.out_min = d.out_heads.min();
        d.floor = d.out_min.min(d.own.min());
    }

    /// Hand data to a receiver that is processed in advance, at its true arrival time `at`, and
    /// send its ACKs from `at` too.
    #[inline]
    fn deliver_in_advance(&mut self, node: NodeId, p: &Packet, now: SimTime, at: SimTime) {
        debug_assert_eq!(p.kind, PacketKind::Data);
        self.packets_in_network -= 1;
        let flow = &mut self.flows[p.flow as usize];
        let log = flow.advance.as_mut().expect("advance receiver has a log");
        log.record(at, flow.receiver.delivery_counters());
        flow.receiver.on_data(at, p, &mut self.adv_out);
        self.emit_buf(OutBuf::Receivers, node, now, at);
    }

    /// Whether an ACK may be handed to its sender at its arrival time `at`, ahead of the clock:
    /// nothing else may happen to that sender before `at` — no earlier ACK still in the pipe, no
    /// timer, no stop, no sample that reads its window — and `at` is within the run.
    #[inline]
    fn ack_can_go_early(&self, l: u32, p: &Packet, now: SimTime, at: SimTime) -> bool {
        self.net.links[l as usize].in_flight_packets() == 0 && self.sender_free_until(p, now, at)
    }

    /// Whether nothing but ACK `p` (arriving at `at`) can touch its sender before `at`: no timer,
    /// no stop, no sample that reads its window, no enclosing in-advance sender or flush, no
    /// other sender of its host sending first (`tx_quiet`), and `at` is within the run.
    /// (Earlier ACKs on the same link are the caller's to check.)
    #[inline(always)]
    fn sender_free_until(&self, p: &Packet, now: SimTime, at: SimTime) -> bool {
        if p.kind != PacketKind::Ack {
            return false; // data, or a datagram (whose `flow` is not a connection)
        }
        let flow = &self.flows[p.flow as usize];
        !self.in_advance_tx
            && !self.flushing[flow.src as usize]
            && at <= self.end
            && self.next_sample > at
            && flow.sender_timer_at > at
            && (!flow.shares_host || self.tx_quiet[flow.src as usize] > at)
            && flow.sender.next_timer().is_none_or(|t| t > at)
            // A stop at `now` itself may not have run yet (another event of the instant may come
            // first), so it blocks too: only a stop already past lets the ACK through.
            && flow.schedule.stop.is_none_or(|s| s < now || s > at)
            && self.host_senders_quiet_until(flow.src, at)
    }

    /// Debug builds check `tx_quiet` against the host's senders themselves: each has started or
    /// starts after `at`, and has no pending timer event or deadline by `at`.
    #[inline(always)]
    fn host_senders_quiet_until(&self, x: NodeId, at: SimTime) -> bool {
        if cfg!(debug_assertions) {
            let quiet = self.host_senders(x).iter().all(|&g| {
                let f = &self.flows[g as usize];
                (f.sender.is_started() || f.schedule.start > at)
                    && f.sender_timer_at > at
                    && f.sender.next_timer().is_none_or(|t| t > at)
            });
            assert!(quiet, "tx_quiet of host {x} is out of date");
        }
        true
    }

    /// The connections sent from in-advance sender host `x`.
    fn host_senders(&self, x: NodeId) -> &[u32] {
        &self.tx_conns
            [self.tx_conns_at[x as usize] as usize..self.tx_conns_at[x as usize + 1] as usize]
    }

    /// Recompute shared in-advance host `x`'s `tx_quiet` from its senders: at the start, and
    /// after one of them lost its pending timer event or started (the times that only move
    /// earlier are noted as they are set, in [`Self::arm_sender_timer`]). A host's link takes packets in time order, so an ACK
    /// handed to one sender early, which sends from its arrival time, must not be followed by
    /// another sender of the host sending earlier, from a timer or its start; ACKs themselves
    /// come in through the host's one link in order, and a stop sends nothing.
    #[cold]
    #[inline(never)]
    fn refresh_tx_quiet(&mut self, x: NodeId) {
        let q = self
            .host_senders(x)
            .iter()
            .map(|&g| {
                let f = &self.flows[g as usize];
                if f.sender.is_started() {
                    f.sender_timer_at
                } else {
                    f.schedule.start
                }
            })
            .min()
            .unwrap_or(SimTime::MAX);
        self.tx_quiet[x as usize] = q;
        self.refresh_quiet_host(x as usize);
    }

    /// Hand an ACK to its sender at its true arrival time `at` and send what it releases from `at`.
    #[inline]
    fn ack_in_advance(&mut self, node: NodeId, p: &Packet, now: SimTime, at: SimTime) {
        self.packets_in_network -= 1;
        self.in_advance_tx = true;
        let f = p.flow;
        self.flows[f as usize]
            .sender
            .on_ack(at, p, &mut self.adv_tx_out);
        self.emit_buf(OutBuf::Senders, node, now, at);
        self.in_advance_tx = false;
        self.arm_sender_timer(f, now);
    }

    /// After the head of link `l`'s pipe reached in-advance host `node`: hand it the ACKs queued
    /// behind the head ahead of the clock as well, in order, as long as each may go early. They
    /// were put in the pipe only because an earlier ACK was there (which is then true of every
    /// later ACK: without this, a flow whose ACKs are closer together than the link delay would
    /// stay on events for good). If the head's pipe entry is taken, its pending arrival event
    /// becomes stale (ignored when it fires) and the new head, if any, gets its own.
    fn drain_acks_in_advance(&mut self, l: u32, node: NodeId, now: SimTime) {
        let mut taken = false;
        while let Some(&(at, p)) = self.net.links[l as usize].pipe_head() {
            if p.dst != node || p.kind != PacketKind::Ack || !self.sender_free_until(&p, now, at) {
                break;
            }
            self.net.links[l as usize].on_arrive();
            self.uncount_pipe_entry(l);
            taken = true;
            self.ack_in_advance(node, &p, now, at);
        }
        if taken {
            if let Some(&(t, _)) = self.net.links[l as usize].pipe_head() {
                self.events.schedule(t, Ev::Arrive(l));
            }
            self.refresh_pipe_host(l);
        }
    }

    /// After the head of ACK line `l` (`data_merge.rs`) arrived by its event: hand on the ACKs
    /// queued behind it ahead of the clock, in order, each from the line's far end at its
    /// arrival time, and release the data waiting in the sender hosts' pipes out as soon as
    /// nothing can overtake it. It stops at the end of the run, before an ACK could reach its
    /// host at the next sample, when ACKs wait for the line's own merge, and when what an ACK
    /// releases would reach the bottleneck after what a sender host may send on its own (a
    /// timer, a start, an ACK kept for its event), and after `LINE_DRAIN_MAX` ACKs (a drain can
    /// otherwise run a whole sample interval, or a run without samples, in one event). If any
    /// ACK is taken, the pending event of the head becomes stale and the new head gets its own.
    #[inline(never)]
    fn drain_line(&mut self, l: u32, now: SimTime) {
        let i = self.data.line_of[l as usize] as usize;
        let x = self.net.links[l as usize].to;
        let mut taken = 0u64;
        while taken < LINE_DRAIN_MAX {
            if self.data.list[i].out_min <= self.end {
                self.release_data(i as u32, now);
            }
            let d = &self.data.list[i];
            let h = d.line_head;
            if h > self.end
                || h.0 + d.ack_lead.0 >= self.next_sample.0
                || self.merges.merge[l as usize].waiting != 0
            {
                break;
            }
            if d.line_bound() >= d.floor {
                // What the ACK releases would wait for a sender host's own timer: run that
                // timer ahead of the clock if nothing can come before it, else stop.
                if self.timer_in_advance(i, h, now) {
                    continue;
                }
                break;
            }
            let (p, next) = self.net.links[l as usize].on_arrive();
            self.data.list[i].line_head = next.unwrap_or(SimTime::MAX);
            taken += 1;
            self.emit_one(x, &p, now, h);
        }
        self.chunk_work += taken;
        if taken > 0 {
            let h = self.data.list[i].line_head;
            if h != SimTime::MAX {
                self.events.schedule(h, Ev::Arrive(l));
            }
        }
    }

    /// Run ahead of the clock the timer event that holds data merge `i`'s floor: the sender
    /// host whose own time is the least, when that time `t` is one of its senders' pending timer
    /// events (not a start, not an ACK waiting in its link in) and nothing can touch the host
    /// before `t`: the line's ACKs (head `h`) reach it no earlier, its link in holds none
    /// earlier, no other of its senders has an event at `t` (same-instant events keep their
    /// scheduling order), no stop comes by `t`, and `t` is before the next sample and within
    /// the run. Exactly the event's work, sent from `t`; the event itself becomes stale.
    /// Without this, every stale retransmission timer (they stay queued when ACKs move the
    /// deadline) would hold the line for a return time. Returns whether it ran one.
    #[inline(never)]
    fn timer_in_advance(&mut self, i: usize, h: SimTime, now: SimTime) -> bool {
        let d = &self.data.list[i];
        if d.own.min() != d.floor {
            return false;
        }
        let host = d.hosts[d.own.argmin()];
        let x = host.node;
        let t = self.tx_quiet[x as usize];
        let ack_lead = d.ack_lead;
        let in_head = self.net.links[host.into as usize]
            .pipe_head()
            .map_or(SimTime::MAX, |e| e.0);
        if t > self.end || t >= self.next_sample || t > in_head || h + ack_lead < t {
            return false;
        }
        let mut due = None;
        for &g in self.host_senders(x) {
            let f = &self.flows[g as usize];
            let at_t = if f.sender.is_started() {
                f.sender_timer_at == t
            } else {
                f.schedule.start == t
            };
            if at_t {
                if due.is_some() || !f.sender.is_started() {
                    return false;
                }
                due = Some(g);
            }
        }
        let Some(g) = due else { return false };
        let flow = &mut self.flows[g as usize];
        if flow.schedule.stop.is_some_and(|s| s >= now && s <= t) {
            return false;
        }
        flow.sender_timer_at = SimTime::MAX;
        self.in_advance_tx = true;
        flow.sender.on_timer(t, &mut self.adv_tx_out);
        self.emit_buf(OutBuf::Senders, x, now, t);
        self.in_advance_tx = false;
        self.arm_sender_timer(g, now);
        self.refresh_tx_quiet(x);
        true
    }

    /// Offer data merge `i`'s bottleneck the heads of its sender hosts' pipes out, earliest
    /// first, ahead of the clock, while nothing else can reach it first (`data_merge_free`'s
    /// bounds, strictly).
    #[inline(never)]
    fn release_data(&mut self, i: u32, now: SimTime) {
        loop {
            let d = &self.data.list[i as usize];
            let t = d.out_heads.min();
            if t > self.end || self.merges.merge[d.line as usize].waiting != 0 {
                return;
            }
            let k = d.out_heads.argmin();
            let line = d.line_bound();
            if t >= line.min(d.own.min_except(k)).min(d.out_heads.min_except(k)) {
                return;
            }
            let (out, b) = (d.hosts[k].out, d.link);
            let (p, next) = self.net.links[out as usize].on_arrive();
            if let Some(t) = next {
                self.events.schedule(t, Ev::Arrive(out));
            }
            self.refresh_sender_host(i, k as u32);
            self.offer(b, &p, now, t);
        }
    }

    /// Packet `p` reached `node` at `now`: forward it (inlined into the event loop, the common
    /// case) or hand it to its endpoint.
    #[inline(always)]
    fn at_node(&mut self, node: NodeId, p: Packet, now: SimTime) {
        if node != p.dst {
            self.forward(node, &p, now);
        } else {
            self.at_endpoint(p, now);
        }
    }

    #[inline(never)]
    fn at_endpoint(&mut self, p: Packet, now: SimTime) {
        self.packets_in_network -= 1;
        let f = p.flow;
        if p.kind.is_datagram_transport() {
            if let App::Cbr(c) = &mut self.apps[f as usize].app {
                self.packets_delivered += 1;
                c.rx.on_datagram(now, &p);
            } else {
                self.message_packet(p, now);
            }
            return;
        }
        let flow = &mut self.flows[f as usize];
        if self.has_web && p.epoch != flow.epoch {
            return; // from an earlier connection on this (web object) slot
        }
        match p.kind {
            PacketKind::Datagram | PacketKind::Dccp | PacketKind::DccpAck => {
                unreachable!("handled above")
            }
            PacketKind::Data => {
                self.packets_delivered += 1;
                if self.has_message_tcp && flow.owner != NO_APP {
                    let owner = flow.owner;
                    self.message_tcp_arrival(owner, &p, now);
                }
                let flow = &mut self.flows[f as usize];
                flow.receiver.on_data(now, &p, &mut self.out);
                self.after_receiver(f, now);
                if self.has_relay {
                    self.relay_after_data(f, p.len == 0, now);
                }
            }
            PacketKind::Ack => {
                flow.sender.on_ack(now, &p, &mut self.out);
                self.after_sender(f, now);
                if self.has_relay {
                    self.relay_after_ack(f, now);
                }
            }
        }
    }

    /// Send what a sender produced and (re)arm its timer.
    #[inline]
    fn after_sender(&mut self, f: u32, now: SimTime) {
        let src = self.flows[f as usize].src;
        self.flush_out(src, now);
        self.arm_sender_timer(f, now);
        if self.has_web {
            let flow = &self.flows[f as usize];
            if flow.owner != NO_APP
                && flow.active
                && flow.sender.is_done()
                && matches!(self.apps[flow.owner as usize].app, App::Web(_))
            {
                self.object_done(f, now);
            }
        }
    }

    /// Schedule a timer event for flow `f`'s sender if its deadline is earlier than the pending
    /// one (later deadlines are picked up when the pending event fires: lazy cancellation).
    /// An earlier pending event also lowers its host's `tx_quiet` (later ones wait for the
    /// refresh after a timer event fires).
    #[inline(always)]
    fn arm_sender_timer(&mut self, f: u32, now: SimTime) {
        let flow = &mut self.flows[f as usize];
        if let Some(t) = flow.sender.next_timer() {
            if t < flow.sender_timer_at {
                let t = t.max(now);
                flow.sender_timer_at = t;
                let x = flow.src as usize;
                let q = &mut self.tx_quiet[x];
                *q = (*q).min(t);
                self.refresh_quiet_host(x);
                self.events.schedule(t, Ev::SenderTimer(f));
            }
        }
    }

    #[inline]
    fn after_receiver(&mut self, f: u32, now: SimTime) {
        let dst = self.flows[f as usize].dst;
        self.flush_out(dst, now);
        let flow = &mut self.flows[f as usize];
        if let Some(t) = flow.receiver.next_timer() {
            if t < flow.receiver_timer_at {
                flow.receiver_timer_at = t.max(now);
                self.events.schedule(t.max(now), Ev::ReceiverTimer(f));
            }
        }
    }

    #[inline]
    fn flush_out(&mut self, node: NodeId, now: SimTime) {
        if self.out.is_empty() {
            return;
        }
        let was = std::mem::replace(&mut self.flushing[node as usize], true);
        self.emit_buf(OutBuf::Now, node, now, now);
        self.flushing[node as usize] = was;
    }

    #[inline(always)]
    fn buf(&mut self, which: OutBuf) -> &mut Vec<Packet> {
        match which {
            OutBuf::Now => &mut self.out,
            OutBuf::Receivers => &mut self.adv_out,
            OutBuf::Senders => &mut self.adv_tx_out,
        }
    }

    /// Put what an endpoint at `node` just wrote to buffer `which` into the network, leaving at
    /// `at`. The buffer is emptied before any packet is offered, because offering may run other
    /// endpoints that write to the same buffer. One or two packets (the usual case) are popped
    /// into locals, which is cheaper than moving the buffer out and draining it.
    #[inline(always)]
    fn emit_buf(&mut self, which: OutBuf, node: NodeId, now: SimTime, at: SimTime) {
        let buf = self.buf(which);
        match buf.len() {
            0 => {}
            1 => {
                let a = buf.pop().expect("one packet");
                self.count_emitted(1);
                self.emit_one(node, &a, now, at);
            }
            2 => {
                let b = buf.pop().expect("two packets");
                let a = buf.pop().expect("two packets");
                self.count_emitted(2);
                self.emit_one(node, &a, now, at);
                self.emit_one(node, &b, now, at);
            }
            _ => {
                let mut out = std::mem::take(self.buf(which));
                self.emit(node, &mut out, now, at);
                *self.buf(which) = out;
            }
        }
    }

    #[inline]
    fn count_emitted(&mut self, n: u64) {
        self.packets_in_network += n;
        self.max_packets_in_network = self.max_packets_in_network.max(self.packets_in_network);
    }

    #[inline]
    fn emit_one(&mut self, node: NodeId, p: &Packet, now: SimTime, at: SimTime) {
        let l = self.routes.next_link(node, p.dst);
        debug_assert_ne!(l, NO_ROUTE, "routability is checked when flows are created");
        self.offer(l, p, now, at);
    }

    /// Put the packets an endpoint at `node` produced into the network, leaving at `at`.
    #[inline]
    fn emit(&mut self, node: NodeId, out: &mut Vec<Packet>, now: SimTime, at: SimTime) {
        self.count_emitted(out.len() as u64);
        for p in out.drain(..) {
            self.emit_one(node, &p, now, at);
        }
    }

    /// Once per monitor interval: kept out of the event loop's body (inlined, it cost the loop
    /// registers on every event; callgrind, reference dumbbell).
    #[cold]
    #[inline(never)]
    fn sample(&mut self, now: SimTime) {
        let t = now.as_secs_f64();
        let dt = (now - self.last_sample).as_secs_f64();
        for a in 0..self.apps.len() {
            let delivered = self.app_delivered(a, now);
            let (cwnd, ssthresh, srtt) = match &self.apps[a].app {
                App::Tcp { conn } => {
                    let s = &self.flows[*conn as usize].sender;
                    let srtt = s.rtt.srtt().map_or(f64::NAN, |x| x.as_secs_f64());
                    (s.tp.snd_cwnd, s.tp.snd_ssthresh, srtt)
                }
                App::Message(m) => m.window_sample(&self.flows),
                _ => (0, 0, f64::NAN),
            };
            if matches!(self.apps[a].app, App::Relay(_)) {
                self.sample_relay(a, t, dt, delivered);
            }
            let last = match &self.apps[a].app {
                App::Tcp { conn } => &mut self.flows[*conn as usize].delivered_at_last_sample,
                _ => &mut self.apps[a].delivered_at_last_sample,
            };
            let gp = if dt > 0.0 {
                (delivered - *last) as f64 * 8.0 / dt
            } else {
                0.0
            };
            *last = delivered;
            let fs = &mut self.flow_series;
            fs.t_s.push(t);
            fs.flow_id.push(a as u32);
            fs.cwnd_pkts.push(cwnd);
            fs.ssthresh_pkts.push(ssthresh);
            fs.srtt_s.push(srtt);
            fs.bytes_delivered.push(delivered);
            fs.goodput_bps.push(gp);
        }
        for (i, l) in self.net.links.iter().enumerate() {
            let qs = &mut self.queue_series;
            qs.t_s.push(t);
            qs.link.push(i as u32);
            let (len, bytes) = l.queue_len(now);
            qs.len_pkts.push(len as u32);
            qs.len_bytes.push(bytes);
            let aqm = l.aqm_state(now);
            qs.avg_pkts.push(aqm.map_or(f64::NAN, |a| a.avg_pkts));
            qs.prob.push(aqm.map_or(f64::NAN, |a| a.prob));
            self.queue_len_sum[i] += len as f64;
        }
        self.samples_taken += 1;
        self.last_sample = now;
    }

    /// Packets currently inside the network (queued, being serialised or propagating).
    pub fn packets_in_network(&self) -> u64 {
        self.packets_in_network
    }

    /// Check the conservation invariant: every packet sent is delivered, dropped or still inside.
    pub fn check_conservation(&self) -> Result<(), String> {
        let queued: u64 = self.net.links.iter().map(|l| l.held_packets() as u64).sum();
        let flying: u64 = self
            .net
            .links
            .iter()
            .map(|l| l.in_flight_packets() as u64)
            .sum();
        // Packets being serialised are already in `in_flight` (they are pushed at transmit start).
        if queued + flying != self.packets_in_network {
            return Err(format!(
                "conservation violated: {} queued + {} propagating != {} counted in the network",
                queued, flying, self.packets_in_network
            ));
        }
        for l in &self.net.links {
            let st = l.queue_stats(self.now());
            if st.enqueued != st.dequeued + st.dropped_queued + l.queue_len(self.now()).0 as u64 {
                return Err(format!("queue {} lost track of packets", l.name));
            }
        }
        Ok(())
    }

    /// Collect the result tables (call after the run).
    pub fn results(&self) -> SimResults {
        let end = self.now().max(self.end);
        // Queue counters as of the end of a finished run, not as of its last event: which events
        // a run has depends on the shortcuts (a merge-ahead link, for one, leaves the ACKs' own
        // arrivals without events), its state at the end does not.
        let stats_at = if self.finished { self.end } else { self.now() };
        let dur = self.end.as_secs_f64();
        let names = |n: NodeId| self.net.nodes[n as usize].name.clone();
        let flows = (0..self.apps.len())
            .map(|a| self.flow_row(a, end))
            .collect();
        let queues = self
            .net
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let st = l.queue_stats(stats_at);
                QueueRow {
                    link: l.name.to_string(),
                    kind: l.queue_kind().to_string(),
                    enqueued: st.enqueued,
                    dequeued: st.dequeued,
                    drops_tail: st.drops[DropReason::TailDrop.index()],
                    drops_aqm_early: st.drops[DropReason::AqmEarly.index()],
                    drops_aqm_forced: st.drops[DropReason::AqmForced.index()],
                    drops_random: st.drops[DropReason::Random.index()],
                    marks_aqm_early: st.marks[DropReason::AqmEarly.index()],
                    marks_aqm_forced: st.marks[DropReason::AqmForced.index()],
                    dropped_bytes: st.dropped_bytes,
                    max_len_pkts: st.max_len_packets,
                    mean_len_pkts: if self.samples_taken > 0 {
                        self.queue_len_sum[i] / self.samples_taken as f64
                    } else {
                        f64::NAN
                    },
                }
            })
            .collect();
        let links = self
            .net
            .links
            .iter()
            .map(|l| LinkRow {
                link: l.name.to_string(),
                from: names(l.from),
                to: names(l.to),
                rate_bps: l.rate.bps(),
                delay_s: l.delay.as_secs_f64(),
                tx_bytes: l.tx_bytes,
                tx_packets: l.tx_packets,
                utilisation: if dur > 0.0 {
                    l.bytes_serialised_by(self.end) * 8.0 / (l.rate.bps() as f64 * dur)
                } else {
                    0.0
                },
            })
            .collect();
        SimResults {
            flows,
            queues,
            links,
            flow_series: self.flow_series.clone(),
            queue_series: self.queue_series.clone(),
            segments: (0..self.apps.len())
                .flat_map(|a| self.segment_rows(a, end))
                .collect(),
            segment_series: self.segment_series.clone(),
            link_names: self.net.links.iter().map(|l| l.name.to_string()).collect(),
            engine: EngineStats {
                events: self.events.events_processed(),
                packets_delivered: self.packets_delivered
                    + self
                        .flows
                        .iter()
                        .filter(|f| f.advance.is_some())
                        .map(|f| f.receiver.data_packets_received)
                        .sum::<u64>(),
                sim_s: self
                    .now()
                    .min(self.end)
                    .as_secs_f64()
                    .max(if self.finished { dur } else { 0.0 }),
                max_event_queue: self.max_event_queue,
                max_packets_in_network: self.max_packets_in_network,
            },
        }
    }

    /// The result row of plan flow `a`.
    fn flow_row(&self, a: usize, end: SimTime) -> FlowRow {
        let e = &self.apps[a];
        let names = |n: NodeId| self.net.nodes[n as usize].name.clone();
        let start = e.schedule.start.as_secs_f64();
        let stop = e.schedule.stop.map(|s| s.min(end));
        let conn = match &e.app {
            App::Tcp { conn } => Some(&self.flows[*conn as usize]),
            App::Relay(r) => Some(&self.flows[*r.conns.last().expect("a chain") as usize]),
            _ => None,
        };
        // Nothing is handed to a receiver in advance past the end, so its counters are those at
        // the end.
        let completion = conn
            .and_then(|f| f.receiver.completed_at)
            .filter(|&c| c <= self.end);
        let end_s = completion
            .or(stop)
            .unwrap_or(self.end)
            .as_secs_f64()
            .max(start);
        let active = (end_s - start).max(0.0);
        let per_s = |b: u64| {
            if active > 0.0 {
                b as f64 * 8.0 / active
            } else {
                0.0
            }
        };
        let mut row = FlowRow {
            flow_id: a as u32,
            src: names(e.src),
            dst: names(e.dst),
            cc: e.cc_name.clone(),
            kind: e.kind.to_string(),
            role: e.role.clone(),
            start_s: start,
            end_s,
            bytes_sent: 0,
            bytes_delivered: 0,
            goodput_bps: 0.0,
            throughput_bps: 0.0,
            data_packets_sent: 0,
            retransmits: 0,
            timeouts: 0,
            fast_recoveries: 0,
            rtt_min_s: f64::NAN,
            rtt_mean_s: f64::NAN,
            rtt_max_s: f64::NAN,
            completion_s: completion.map_or(f64::NAN, |c| c.as_secs_f64()),
            rwnd_limited: false,
            objects: 0,
            transfer_time_mean_s: f64::NAN,
            bytes_offered: 0,
            conn_goodput_mean_bps: f64::NAN,
            conn_throughput_mean_bps: f64::NAN,
            conn_cwnd_mean_pkts: f64::NAN,
            conn_rtt_mean_s: f64::NAN,
            conn_timeouts_mean: f64::NAN,
            delay_mean_s: f64::NAN,
            jitter_s: f64::NAN,
            app_packets: 0,
            app_discards: 0,
            packets_delivered: 0,
            packets_dropped: e.drops,
            loss_event_rate: f64::NAN,
        };
        match &e.app {
            App::Tcp { .. } => {
                let f = conn.expect("TCP app");
                let s = &f.sender;
                let rtt = &s.rtt;
                let delivered = f.receiver.bytes_delivered();
                row.bytes_sent = s.stats.payload_bytes_sent;
                row.bytes_delivered = delivered;
                row.goodput_bps = per_s(delivered);
                row.throughput_bps = per_s(s.stats.payload_bytes_sent);
                row.data_packets_sent = s.stats.data_packets_sent;
                row.retransmits = s.stats.retransmits;
                row.timeouts = s.stats.timeouts;
                row.fast_recoveries = s.stats.fast_recoveries;
                row.rtt_min_s = rtt.min_rtt.map_or(f64::NAN, |x| x.as_secs_f64());
                row.rtt_mean_s = if rtt.samples > 0 {
                    rtt.sum_rtt_ns / rtt.samples as f64 * 1e-9
                } else {
                    f64::NAN
                };
                row.rtt_max_s = rtt.max_rtt.map_or(f64::NAN, |x| x.as_secs_f64());
                row.rwnd_limited = s.stats.rwnd_limited;
                row.packets_dropped = f.data_drops;
                row.packets_delivered =
                    f.receiver.bytes_delivered().div_ceil(s.config().mss as u64);
                if let Some(c) = completion {
                    row.objects = 1;
                    row.transfer_time_mean_s = (c - f.schedule.start).as_secs_f64();
                }
            }
            App::Cbr(c) => {
                // Rates of a datagram source count wire bytes (its rate is a wire rate).
                row.bytes_sent = c.tx.bytes_sent;
                row.bytes_delivered = c.rx.payload_bytes;
                row.goodput_bps = per_s(c.rx.payload_bytes);
                row.throughput_bps = per_s(c.tx.bytes_sent);
                row.data_packets_sent = c.tx.packets_sent;
                row.packets_delivered = c.rx.packets;
                row.delay_mean_s = c.rx.delay_s().0;
                row.jitter_s = c.rx.jitter_s();
            }
            App::Web(w) => {
                let mut t = w.done.clone();
                let mut delivered = t.bytes_delivered;
                for &c in &w.slots {
                    let f = &self.flows[c as usize];
                    if f.active {
                        delivered += f.receiver.bytes_delivered();
                        t.bytes_sent += f.sender.stats.payload_bytes_sent;
                        t.data_packets_sent += f.sender.stats.data_packets_sent;
                        t.retransmits += f.sender.stats.retransmits;
                        t.timeouts += f.sender.stats.timeouts;
                        t.fast_recoveries += f.sender.stats.fast_recoveries;
                    }
                }
                row.bytes_sent = t.bytes_sent;
                row.bytes_delivered = delivered;
                row.goodput_bps = per_s(delivered);
                row.throughput_bps = per_s(t.bytes_sent);
                row.data_packets_sent = t.data_packets_sent;
                row.retransmits = t.retransmits;
                row.timeouts = t.timeouts;
                row.fast_recoveries = t.fast_recoveries;
                row.objects = t.objects;
                row.bytes_offered = w.bytes_offered;
                row.packets_dropped = t.drops
                    + w.slots
                        .iter()
                        .map(|&c| &self.flows[c as usize])
                        .filter(|f| f.active)
                        .map(|f| f.data_drops)
                        .sum::<u64>();
                if t.objects > 0 {
                    let n = t.objects as f64;
                    row.transfer_time_mean_s = t.transfer_time_sum_s / n;
                    row.conn_goodput_mean_bps = t.conn_goodput_sum_bps / n;
                    row.conn_throughput_mean_bps = t.conn_throughput_sum_bps / n;
                    row.conn_cwnd_mean_pkts = t.conn_cwnd_sum_pkts / n;
                    row.conn_timeouts_mean = w.done.timeouts as f64 / n;
                }
                if t.conn_rtt_n > 0 {
                    row.conn_rtt_mean_s = t.conn_rtt_sum_s / t.conn_rtt_n as f64;
                }
                if t.rtt_samples > 0 {
                    row.rtt_min_s = t.rtt_min_s;
                    row.rtt_max_s = t.rtt_max_s;
                    row.rtt_mean_s = t.rtt_sum_s / t.rtt_samples as f64;
                }
            }
            App::Message(m) => {
                if let Some(c) = m.tcp_conn() {
                    row.packets_dropped = self.flows[c as usize].data_drops;
                }
                self.message_row(m, &mut row, &per_s);
            }
            App::Relay(r) => {
                // End to end: what the sink got, over the transfer; what the source sent; loss
                // counters summed over the segments (their own rows are the segments table).
                let sink = conn.expect("a chain");
                let first = &self.flows[r.conns[0] as usize].sender;
                let delivered = sink.receiver.bytes_delivered();
                row.bytes_sent = first.stats.payload_bytes_sent;
                row.bytes_delivered = delivered;
                row.goodput_bps = per_s(delivered);
                row.throughput_bps = per_s(first.stats.payload_bytes_sent);
                row.data_packets_sent = first.stats.data_packets_sent;
                for &c in &r.conns {
                    let f = &self.flows[c as usize];
                    row.retransmits += f.sender.stats.retransmits;
                    row.timeouts += f.sender.stats.timeouts;
                    row.fast_recoveries += f.sender.stats.fast_recoveries;
                    row.packets_dropped += f.data_drops;
                    row.rwnd_limited |= f.sender.stats.rwnd_limited;
                }
                row.packets_delivered = delivered.div_ceil(sink.sender.config().mss as u64);
                if let Some(c) = completion {
                    row.objects = 1;
                    row.transfer_time_mean_s = (c - e.schedule.start).as_secs_f64();
                }
            }
        }
        row
    }

    /// Check every sender's invariants (tests).
    pub fn check_flow_invariants(&self) -> Result<(), String> {
        for f in &self.flows {
            f.sender.check_invariants()?;
        }
        Ok(())
    }
}

/// The most ACKs one drain of a line hands on (`Simulation::drain_line`): a stop is always
/// exact (the line's head event takes over), and this keeps one event's work bounded.
const LINE_DRAIN_MAX: u64 = 4096;

/// The latest time an event is popped before the sample at `next_sample` (MAX: none left) is
/// taken: the instant before it, or the end of the run.
fn pop_limit(next_sample: SimTime, end: SimTime) -> SimTime {
    if next_sample <= end {
        SimTime(next_sample.0 - 1)
    } else {
        end
    }
}

/// Links that can take packets in advance ("cut-through"): a computed-FIFO link leaving a router
/// that is no flow's endpoint, fed by exactly one upstream link on the paths the flows' data and
/// ACKs actually take. Every packet such a link will ever carry comes from that one feeder, in the
/// feeder's FIFO order, so offering it when it leaves the feeder (with its future arrival time)
/// gives exactly the result of an arrival event, one event cheaper. Typical cases: the far-side
/// access links of a dumbbell (data to receivers, ACKs back to senders).
pub fn cut_through_links(
    net: &Network,
    routes: &RoutingTable,
    flows: &[(NodeId, NodeId)],
) -> Vec<bool> {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let mut feeder = vec![NONE; net.links.len()];
    let mut endpoint = vec![false; net.nodes.len()];
    for &(a, b) in flows {
        endpoint[a as usize] = true;
        endpoint[b as usize] = true;
        for (src, dst) in [(a, b), (b, a)] {
            let Some(path) = routes.path(net, src, dst) else {
                continue;
            };
            for w in path.windows(2) {
                let (up, down) = (w[0], w[1] as usize);
                feeder[down] = match feeder[down] {
                    NONE => up,
                    f if f == up => f,
                    _ => MANY,
                };
            }
            // A path's first link is fed by its source host (never cut-through).
            feeder[path[0] as usize] = MANY;
        }
    }
    net.links
        .iter()
        .enumerate()
        .map(|(id, link)| {
            let x = link.from as usize;
            net.nodes[x].kind == NodeKind::Router
                && !endpoint[x]
                && link.is_computed()
                && feeder[id] != NONE
                && feeder[id] != MANY
        })
        .collect()
}

/// Hosts whose receivers can be processed "in advance", when data leaves the last congested link
/// rather than at an arrival event: a host that sends no flow's data, whose receivers use no timer
/// (no delayed ACKs), reached by exactly one link on the flows' paths, and whose outgoing links are
/// computed FIFOs. Everything such a host sees arrives through that one link in FIFO order, and
/// without timers its receivers' behaviour is a function of that sequence alone, so handling each
/// segment at its true arrival time (ahead of the clock) and sending the ACK from that time gives
/// exactly the event-driven result. Measurements read the receiver's delivery log by time, so
/// samples and totals never include data that has not arrived yet.
pub fn advance_receivers(
    net: &Network,
    routes: &RoutingTable,
    flows: &[(NodeId, NodeId)],
    delayed_ack: &[bool],
) -> Vec<bool> {
    let n = net.nodes.len();
    let mut ok = vec![false; n];
    let mut is_src = vec![false; n];
    let mut in_link: Vec<Option<u32>> = vec![None; n];
    let mut many_in = vec![false; n];
    for (i, &(src, dst)) in flows.iter().enumerate() {
        is_src[src as usize] = true;
        ok[dst as usize] = true;
        if delayed_ack[i] {
            many_in[dst as usize] = true; // disqualify: the receiver has a timer
        }
        note_last_link(net, routes, src, dst, &mut in_link, &mut many_in);
    }
    (0..n)
        .map(|x| ok[x] && !is_src[x] && !many_in[x] && single_fed_host(net, &in_link, x))
        .collect()
}

/// Record the last link of the path `from` -> `to` as `to`'s way in; a second, different one
/// disqualifies `to` (`bad`), since packets could then reach it out of order with the clock.
fn note_last_link(
    net: &Network,
    routes: &RoutingTable,
    from: NodeId,
    to: NodeId,
    in_link: &mut [Option<u32>],
    bad: &mut [bool],
) {
    if let Some(path) = routes.path(net, from, to) {
        let last = *path.last().expect("src != dst");
        match in_link[to as usize] {
            None => in_link[to as usize] = Some(last),
            Some(l) if l == last => {}
            Some(_) => bad[to as usize] = true,
        }
    }
}

/// A host reached by exactly one link whose own outgoing links are all computed FIFOs: the
/// shared condition for serving it ahead of the clock.
fn single_fed_host(net: &Network, in_link: &[Option<u32>], x: usize) -> bool {
    in_link[x].is_some()
        && net.nodes[x].kind == NodeKind::Host
        && net.nodes[x]
            .out_links
            .iter()
            .all(|&l| net.links[l as usize].is_computed())
}

/// Hosts whose senders can take ACKs "in advance", when an ACK leaves the last congested link on
/// its way back: a host that is the source of one flow, or of several plain TCP flows
/// (`plain_tcp`: no application sending on its own events), and the destination of none,
/// reached by one link on the ACK paths, with computed-FIFO outgoing links and no pacing (a
/// pacing timer would interleave with ACKs). All ACKs reach such a host through its one link in
/// time order. Whether a given ACK may go early is decided per ACK
/// ([`Simulation::ack_can_go_early`]): only when nothing else can touch the host's senders first.
pub fn advance_senders(
    net: &Network,
    routes: &RoutingTable,
    flows: &[(NodeId, NodeId)],
    pacing: &[bool],
    plain_tcp: &[bool],
) -> Vec<bool> {
    let n = net.nodes.len();
    let mut sources = vec![0u32; n];
    let mut all_plain = vec![true; n];
    let mut is_dst = vec![false; n];
    let mut bad = vec![false; n];
    let mut in_link: Vec<Option<u32>> = vec![None; n];
    for (i, &(src, dst)) in flows.iter().enumerate() {
        sources[src as usize] += 1;
        all_plain[src as usize] &= plain_tcp[i];
        is_dst[dst as usize] = true;
        if pacing[i] {
            bad[src as usize] = true;
        }
        note_last_link(net, routes, dst, src, &mut in_link, &mut bad);
    }
    (0..n)
        .map(|x| {
            (sources[x] == 1 || sources[x] > 1 && all_plain[x])
                && !is_dst[x]
                && !bad[x]
                && single_fed_host(net, &in_link, x)
        })
        .collect()
}

/// The connections of each in-advance sender host, as (offsets by node, connection ids).
fn senders_by_host(flows: &[Flow], advance_tx: &[bool]) -> (Vec<u32>, Vec<u32>) {
    let mut count = vec![0u32; advance_tx.len() + 1];
    for f in flows.iter().filter(|f| advance_tx[f.src as usize]) {
        count[f.src as usize + 1] += 1;
    }
    for x in 0..advance_tx.len() {
        count[x + 1] += count[x];
    }
    let mut next = count.clone();
    let mut conns = vec![0u32; count[advance_tx.len()] as usize];
    for (id, f) in flows.iter().enumerate() {
        if advance_tx[f.src as usize] {
            conns[next[f.src as usize] as usize] = id as u32;
            next[f.src as usize] += 1;
        }
    }
    (count, conns)
}
