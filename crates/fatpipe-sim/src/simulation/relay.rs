//! Relay chains (seed 002, Augusto et al. 2008, "TCP logistics"): a transfer from a source to a
//! sink through depots, each segment its own TCP connection with its own congestion control and
//! settings. A depot couples its two connections as a pipeline, not store-and-forward: it reads
//! what arrived in order on the upstream connection into a bounded buffer and writes it to the
//! downstream sender at once.
//!
//! **The depot's buffer** holds what it has read from upstream and the downstream receiver has
//! not yet acknowledged (the downstream sender must keep it for retransmission, as a socket's
//! send buffer does): occupancy = bytes written downstream − bytes acknowledged downstream,
//! never more than `buffer`. When it is full the depot stops reading; the upstream receiver's
//! own buffer (its `rwnd_bytes`) then fills and its advertised window closes, so the upstream
//! sender stops: backpressure through TCP's flow control, never a drop (fatpipe-transport's
//! `flow_control`). A depot holds at most `buffer` + the upstream receive buffer.
//!
//! **Events.** A depot acts when data reaches its upstream receiver (read what fits) and when
//! an ACK reaches its downstream sender (the buffer drained: read more). Both hooks run behind
//! one `has_relay` flag at the endpoint and only note that the depot has work; the relay's
//! `AppTick`, scheduled for the same instant, then moves the data, after every packet that
//! reaches the depot at that instant (ticks rank after arrivals among same-instant events). A data segment and an ACK can reach a depot at the same
//! nanosecond by two links, and which of their arrival events comes first depends on when each
//! was scheduled, which the engine's shortcuts change (an in-advance sink schedules its ACK's
//! arrival earlier); reading in between would make the depot's reads, its window updates and
//! the downstream sender's cwnd-limited state depend on that order. Every arrival at an instant
//! is scheduled before the instant (links have positive serialisation), so the tick sees them
//! all, whatever their order. Depots are both a sender and a receiver, so the in-advance
//! shortcuts never serve them (the source and the sink may still use them: the source's sender
//! is an ordinary one whose window comes in its ACKs, the sink reads at once).
//!
//! Connections exist from the start (no handshake is simulated, as for every flow); the
//! downstream senders start with an empty buffer and send as data arrives, from their initial
//! window, restarting the window after an idle RTO as Linux does (RFC 2861).

use super::{App, Ev, Flow, Simulation};
use crate::monitor::SegmentSeries;
use crate::results::SegmentRow;
use fatpipe_core::{EventQueue, RngStream, SimTime};
use fatpipe_net::NodeId;
use fatpipe_traffic::Schedule;
use fatpipe_transport::cc::CongestionOps;
use fatpipe_transport::tcp::{TcpConfig, TcpReceiver, TcpSender};

/// One segment (TCP connection) of a relay chain, as the plan describes it.
pub struct RelayHop {
    pub src: NodeId,
    pub dst: NodeId,
    pub tcp: TcpConfig,
    /// The congestion control (an Option only so the engine can take it out).
    pub cc: Option<Box<dyn CongestionOps>>,
    pub cc_name: String,
}

/// A relay chain: its segments from the source, the buffer of each depot (one fewer than the
/// segments), and the transfer size (None: bulk).
pub struct RelaySpec {
    pub hops: Vec<RelayHop>,
    pub buffers: Vec<u64>,
    pub total: Option<u64>,
}

/// A depot at run time: the node, its buffer bound and what went through it.
pub(super) struct Depot {
    pub node: NodeId,
    pub buffer: u64,
    /// Bytes read from upstream (= written downstream).
    pub moved: u64,
    pub max_occupancy: u64,
    /// Occupancy integrated over time (byte-nanoseconds) up to `last_change`.
    area: u128,
    occupancy: u64,
    last_change: SimTime,
}

impl Depot {
    /// The occupancy becomes `occ` at `now`.
    fn note(&mut self, occ: u64, now: SimTime) {
        self.area +=
            self.occupancy as u128 * now.saturating_sub(self.last_change).as_nanos() as u128;
        self.last_change = self.last_change.max(now);
        self.occupancy = occ;
        self.max_occupancy = self.max_occupancy.max(occ);
    }

    /// Time-averaged occupancy from `start` to `end`, or to its last change if later (the
    /// last data is held until its ACK comes, after the sink has it), in bytes.
    fn mean_occupancy(&self, start: SimTime, end: SimTime) -> f64 {
        let end = end.max(self.last_change);
        let span = end.saturating_sub(start).as_nanos();
        if span == 0 {
            return f64::NAN;
        }
        let tail = self.occupancy as u128 * end.saturating_sub(self.last_change).as_nanos() as u128;
        (self.area + tail) as f64 / span as f64
    }
}

/// A relay chain at run time.
pub(super) struct RelayApp {
    /// Connection of each segment, from the source.
    pub conns: Vec<u32>,
    /// `depots[j]` joins segment j (upstream) to segment j + 1 (downstream).
    pub depots: Vec<Depot>,
    pub cc_names: Vec<String>,
    /// Bytes each segment's receiver had delivered at the previous sample.
    delivered_at_last_sample: Vec<u64>,
    /// Depots with work at this instant, and the instant of the pending tick (MAX: none).
    pending: Vec<bool>,
    tick_at: SimTime,
}

impl RelayApp {
    /// The segment connection `conn` carries.
    fn segment_of(&self, conn: u32) -> usize {
        self.conns
            .iter()
            .position(|&c| c == conn)
            .expect("a relay connection belongs to its chain")
    }
}

/// The connections of relay `id` (plan flow), appended to `flows`, with their start (and the
/// source's stop) events; `pairs`, `delack` and `pacing` get one entry per connection for the
/// shortcut analyses.
#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    id: u32,
    spec: RelaySpec,
    schedule: Schedule,
    seed: u64,
    end: SimTime,
    flows: &mut Vec<Flow>,
    events: &mut EventQueue<Ev>,
    shortcut_inputs: (&mut Vec<(NodeId, NodeId)>, &mut Vec<bool>, &mut Vec<bool>),
) -> RelayApp {
    let (pairs, delack, pacing) = shortcut_inputs;
    let n = spec.hops.len();
    let mut conns = Vec::with_capacity(n);
    let mut cc_names = Vec::with_capacity(n);
    for (i, mut hop) in spec.hops.into_iter().enumerate() {
        let conn = flows.len() as u32;
        let cc = hop
            .cc
            .take()
            .expect("a relay segment brings its congestion control");
        let jitter = RngStream::new(seed, &format!("flow/{id}/segment/{i}/send_jitter"));
        let mut sender = TcpSender::new(conn, hop.dst, hop.tcp.clone(), cc, spec.total)
            .with_jitter_stream(jitter);
        if i > 0 {
            // Fed by the depot upstream of it.
            sender = sender.supplied(spec.total);
        }
        let mut receiver = TcpReceiver::new(conn, hop.src, &hop.tcp, spec.total);
        if i + 1 < n {
            // Received by a depot, whose reading is bounded by its buffer.
            sender = sender.with_peer_window(hop.tcp.rwnd_bytes);
            receiver = receiver.with_receive_buffer(hop.tcp.rwnd_bytes, hop.tcp.mss);
        }
        pairs.push((hop.src, hop.dst));
        delack.push(receiver.delayed_ack());
        pacing.push(sender.config().pacing);
        if schedule.start < end {
            events.schedule(schedule.start, Ev::FlowStart(conn));
        }
        if i == 0 {
            if let Some(stop) = schedule.stop.filter(|&s| s < end) {
                events.schedule(stop, Ev::FlowStop(conn));
            }
        }
        flows.push(Flow::new(
            hop.src, hop.dst, schedule, sender, receiver, id, 0,
        ));
        conns.push(conn);
        cc_names.push(hop.cc_name);
    }
    let depots: Vec<Depot> = spec
        .buffers
        .iter()
        .enumerate()
        .map(|(j, &buffer)| Depot {
            node: flows[conns[j] as usize].dst,
            buffer,
            moved: 0,
            max_occupancy: 0,
            area: 0,
            occupancy: 0,
            last_change: schedule.start,
        })
        .collect();
    RelayApp {
        conns,
        pending: vec![false; depots.len()],
        depots,
        cc_names,
        delivered_at_last_sample: vec![0; n],
        tick_at: SimTime::MAX,
    }
}

impl Simulation {
    /// Data (or a zero-window probe) of connection `conn` reached its receiver: if a depot
    /// receives it, the depot reads what fits at this instant's tick.
    #[cold]
    #[inline(never)]
    pub(super) fn relay_after_data(&mut self, conn: u32, probe: bool, now: SimTime) {
        let a = self.flows[conn as usize].owner;
        let App::Relay(r) = &self.apps[a as usize].app else {
            return;
        };
        if probe {
            self.packets_delivered -= 1; // a probe is not data
        }
        let seg = r.segment_of(conn);
        if seg < r.depots.len() {
            self.relay_wake(a, seg, now);
        }
    }

    /// An ACK of connection `conn` reached its sender: if a depot sends it, the buffer may have
    /// drained, so the depot reads more at this instant's tick.
    #[cold]
    #[inline(never)]
    pub(super) fn relay_after_ack(&mut self, conn: u32, now: SimTime) {
        let a = self.flows[conn as usize].owner;
        let App::Relay(r) = &self.apps[a as usize].app else {
            return;
        };
        let seg = r.segment_of(conn);
        if seg > 0 {
            self.relay_wake(a, seg - 1, now);
        }
    }

    /// Depot `j` of relay `a` has work: make sure the relay's tick runs at `now`.
    fn relay_wake(&mut self, a: u32, j: usize, now: SimTime) {
        let App::Relay(r) = &mut self.apps[a as usize].app else {
            unreachable!("a relay's depot")
        };
        r.pending[j] = true;
        if r.tick_at != now {
            r.tick_at = now;
            self.events.schedule(now, Ev::AppTick(a));
        }
    }

    /// The relay's tick: every depot with work moves its data, in chain order.
    pub(super) fn relay_tick(&mut self, a: u32, now: SimTime) {
        let App::Relay(r) = &mut self.apps[a as usize].app else {
            unreachable!("a relay's tick")
        };
        r.tick_at = SimTime::MAX;
        let work: Vec<usize> = (0..r.pending.len()).filter(|&j| r.pending[j]).collect();
        r.pending.iter_mut().for_each(|p| *p = false);
        for j in work {
            self.relay_pump(a, j, now);
        }
    }

    /// Depot `j` of relay `a` moves what it can from its upstream receiver to its downstream
    /// sender: min(unread upstream, free buffer) bytes.
    fn relay_pump(&mut self, a: u32, j: usize, now: SimTime) {
        let App::Relay(r) = &self.apps[a as usize].app else {
            unreachable!("a relay's depot")
        };
        let (up, down) = (r.conns[j], r.conns[j + 1]);
        let buffer = r.depots[j].buffer;
        let held = self.occupancy(down);
        let want = buffer.saturating_sub(held);
        let mut moved = 0;
        if want > 0 && self.flows[up as usize].receiver.unread() > 0 {
            moved = self.flows[up as usize].receiver.read(want, &mut self.out);
            self.after_receiver(up, now); // a window update, if the read freed much
            self.flows[down as usize]
                .sender
                .write_bytes(moved, now, &mut self.out);
            self.after_sender(down, now);
        }
        let occ = self.occupancy(down);
        let App::Relay(r) = &mut self.apps[a as usize].app else {
            unreachable!()
        };
        let d = &mut r.depots[j];
        d.moved += moved;
        d.note(occ, now);
    }

    /// Bytes a depot holds for its downstream connection `down`: written, not yet acknowledged.
    fn occupancy(&self, down: u32) -> u64 {
        let s = &self.flows[down as usize].sender;
        s.written() - s.bytes_acked()
    }

    /// The relay's per-segment sample rows; `sink_delivered` is what the last segment's
    /// receiver had delivered as of this sample (read through its in-advance log if it has one).
    pub(super) fn sample_relay(&mut self, a: usize, t: f64, dt: f64, sink_delivered: u64) {
        let App::Relay(r) = &mut self.apps[a].app else {
            return;
        };
        let n = r.conns.len();
        let series: &mut SegmentSeries = &mut self.segment_series;
        for (i, &c) in r.conns.iter().enumerate() {
            let f = &self.flows[c as usize];
            let delivered = if i + 1 == n {
                sink_delivered
            } else {
                f.receiver.bytes_delivered()
            };
            let last = &mut r.delivered_at_last_sample[i];
            let gp = if dt > 0.0 {
                (delivered - *last) as f64 * 8.0 / dt
            } else {
                0.0
            };
            *last = delivered;
            let s = &f.sender;
            let buffer = if i + 1 < n {
                let down = &self.flows[r.conns[i + 1] as usize].sender;
                down.written() - down.bytes_acked()
            } else {
                0
            };
            series.t_s.push(t);
            series.flow_id.push(a as u32);
            series.segment.push(i as u32);
            series.cwnd_pkts.push(s.tp.snd_cwnd);
            series.ssthresh_pkts.push(s.tp.snd_ssthresh);
            series
                .srtt_s
                .push(s.rtt.srtt().map_or(f64::NAN, |x| x.as_secs_f64()));
            series.bytes_delivered.push(delivered);
            series.goodput_bps.push(gp);
            series.buffer_bytes.push(buffer);
            series.unread_bytes.push(f.receiver.unread());
        }
    }

    /// The result rows of relay `a`'s segments (`end`: the run's end).
    pub(super) fn segment_rows(&self, a: usize, end: SimTime) -> Vec<SegmentRow> {
        let e = &self.apps[a];
        let App::Relay(r) = &e.app else {
            return Vec::new();
        };
        let names = |n: NodeId| self.net.nodes[n as usize].name.clone();
        let start = e.schedule.start;
        // Depots hold data from the start until the sink has everything (or the stop, or the
        // end of the run): their mean occupancy is over that time.
        let sink = &self.flows[*r.conns.last().expect("a chain") as usize];
        let relay_end = sink
            .receiver
            .completed_at
            .or(e.schedule.stop)
            .unwrap_or(self.end)
            .min(self.end)
            .max(start);
        r.conns
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let f = &self.flows[c as usize];
                let s = &f.sender;
                let completion = f.receiver.completed_at.filter(|&t| t <= self.end);
                let stop = e.schedule.stop.map(|s| s.min(end));
                let seg_end = completion.or(stop).unwrap_or(self.end).max(start);
                let active = (seg_end - start).as_secs_f64();
                let per_s = |b: u64| {
                    if active > 0.0 {
                        b as f64 * 8.0 / active
                    } else {
                        0.0
                    }
                };
                let rtt = &s.rtt;
                let depot = r.depots.get(i);
                SegmentRow {
                    flow_id: a as u32,
                    segment: i as u32,
                    src: names(f.src),
                    dst: names(f.dst),
                    cc: r.cc_names[i].clone(),
                    bytes_sent: s.stats.payload_bytes_sent,
                    bytes_delivered: f.receiver.bytes_delivered(),
                    goodput_bps: per_s(f.receiver.bytes_delivered()),
                    throughput_bps: per_s(s.stats.payload_bytes_sent),
                    data_packets_sent: s.stats.data_packets_sent,
                    retransmits: s.stats.retransmits,
                    timeouts: s.stats.timeouts,
                    fast_recoveries: s.stats.fast_recoveries,
                    packets_dropped: f.data_drops,
                    rtt_min_s: rtt.min_rtt.map_or(f64::NAN, |x| x.as_secs_f64()),
                    rtt_mean_s: if rtt.samples > 0 {
                        rtt.sum_rtt_ns / rtt.samples as f64 * 1e-9
                    } else {
                        f64::NAN
                    },
                    rtt_max_s: rtt.max_rtt.map_or(f64::NAN, |x| x.as_secs_f64()),
                    completion_s: completion.map_or(f64::NAN, |t| t.as_secs_f64()),
                    rwnd_limited: s.stats.rwnd_limited,
                    window_probes: s.stats.window_probes,
                    depot: depot.map_or(String::new(), |d| names(d.node)),
                    buffer_bytes: depot.map_or(0, |d| d.buffer),
                    buffer_max_bytes: depot.map_or(0, |d| d.max_occupancy),
                    buffer_mean_bytes: depot
                        .map_or(f64::NAN, |d| d.mean_occupancy(start, relay_end)),
                }
            })
            .collect()
    }

    /// Every relay's invariants (tests): no depot holds more than its buffer, no receiver
    /// holds more than its receive buffer, and no byte is created or lost inside a depot
    /// (read upstream = written downstream = acknowledged downstream + held).
    pub fn check_relay_invariants(&self) -> Result<(), String> {
        for (a, e) in self.apps.iter().enumerate() {
            let App::Relay(r) = &e.app else { continue };
            for (j, d) in r.depots.iter().enumerate() {
                let up = &self.flows[r.conns[j] as usize];
                let down = &self.flows[r.conns[j + 1] as usize];
                let w = up
                    .receiver
                    .receive_window()
                    .ok_or_else(|| format!("relay {a}: depot {j}'s receiver has no buffer"))?;
                let held = down.sender.written() - down.sender.bytes_acked();
                if held > d.buffer || d.max_occupancy > d.buffer {
                    return Err(format!(
                        "relay {a}: depot {j} holds {held} B (max {}) over its buffer {}",
                        d.max_occupancy, d.buffer
                    ));
                }
                if up.receiver.unread() > w.buffer() {
                    return Err(format!(
                        "relay {a}: depot {j}'s receiver holds {} B unread over its buffer {}",
                        up.receiver.unread(),
                        w.buffer()
                    ));
                }
                if w.copied() != d.moved || down.sender.written() != d.moved {
                    return Err(format!(
                        "relay {a}: depot {j} read {} B, moved {} B, wrote {} B",
                        w.copied(),
                        d.moved,
                        down.sender.written()
                    ));
                }
                if down.receiver.bytes_delivered() > d.moved {
                    return Err(format!(
                        "relay {a}: segment {} delivered {} B, more than depot {j} wrote ({})",
                        j + 1,
                        down.receiver.bytes_delivered(),
                        d.moved
                    ));
                }
            }
        }
        Ok(())
    }
}
