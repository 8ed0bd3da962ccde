//! What a run returns: per-flow, per-queue and per-link tables, time series and engine counters.

use crate::monitor::{FlowSeries, QueueSeries, SegmentSeries};

#[derive(Clone, Debug)]
pub struct FlowRow {
    pub flow_id: u32,
    pub src: String,
    pub dst: String,
    pub cc: String,
    /// Application: "bulk", "file", "cbr", "web", "files", "voip" or "relay".
    pub kind: String,
    /// The flow's role in the study ("main", "background"), from the scenario.
    pub role: String,
    pub start_s: f64,
    pub end_s: f64,
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    pub goodput_bps: f64,
    pub throughput_bps: f64,
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub rtt_min_s: f64,
    pub rtt_mean_s: f64,
    pub rtt_max_s: f64,
    /// Time the last byte of a finite transfer reached the receiver (NaN otherwise).
    pub completion_s: f64,
    pub rwnd_limited: bool,
    /// Finished transfers: 1 for a completed file, the objects completed by a web source.
    pub objects: u64,
    /// Mean time from an object's start to its last byte's delivery (files and web objects).
    pub transfer_time_mean_s: f64,
    /// Web and file-arrival sources: payload bytes of every object that arrived (offered), 0
    /// otherwise.
    pub bytes_offered: u64,
    /// Web and file-arrival sources: means over finished objects, each connection weighing the
    /// same (goodput = bytes / transfer time, throughput = payload bytes sent / lifetime, the
    /// time-averaged cwnd in packets, the connection's mean RTT, timeouts); NaN otherwise.
    pub conn_goodput_mean_bps: f64,
    pub conn_throughput_mean_bps: f64,
    pub conn_cwnd_mean_pkts: f64,
    pub conn_rtt_mean_s: f64,
    pub conn_timeouts_mean: f64,
    /// Datagram flows: mean one-way delay and RFC 3550 interarrival jitter (NaN otherwise).
    pub delay_mean_s: f64,
    pub jitter_s: f64,
    /// Application packets handed to the transport (message applications: voice, CBR over
    /// DCCP or TCP; 0 otherwise).
    pub app_packets: u64,
    /// Of those, discarded by a full DCCP sender queue (never sent).
    pub app_discards: u64,
    /// Data packets that reached the receiver (duplicates not counted).
    pub packets_delivered: u64,
    /// Data packets of this flow dropped by queues in the network.
    pub packets_dropped: u64,
    /// CCID 3: the loss event rate p its receiver reports at the end (NaN otherwise).
    pub loss_event_rate: f64,
}

/// One segment (TCP connection) of a relay chain.
#[derive(Clone, Debug)]
pub struct SegmentRow {
    /// The relay's plan flow.
    pub flow_id: u32,
    /// Index from the source (0 = source -> first depot).
    pub segment: u32,
    pub src: String,
    pub dst: String,
    pub cc: String,
    pub bytes_sent: u64,
    pub bytes_delivered: u64,
    /// Delivered payload over the relay's start to this segment's completion (or stop, or end).
    pub goodput_bps: f64,
    pub throughput_bps: f64,
    pub data_packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub packets_dropped: u64,
    pub rtt_min_s: f64,
    pub rtt_mean_s: f64,
    pub rtt_max_s: f64,
    /// Time the segment's receiver had the last byte (finite transfers; NaN otherwise).
    pub completion_s: f64,
    /// The sender was stopped by the receiver's window at least once (a full depot upstream of
    /// a slower segment, or the static window).
    pub rwnd_limited: bool,
    /// Zero-window probes the sender's persist timer sent.
    pub window_probes: u64,
    /// The depot at the receiving end ("" for the last segment, whose receiver is the sink),
    /// its buffer, the most it held and its time-averaged occupancy (bytes).
    pub depot: String,
    pub buffer_bytes: u64,
    pub buffer_max_bytes: u64,
    pub buffer_mean_bytes: f64,
}

#[derive(Clone, Debug)]
pub struct QueueRow {
    pub link: String,
    pub kind: String,
    pub enqueued: u64,
    pub dequeued: u64,
    pub drops_tail: u64,
    pub drops_aqm_early: u64,
    pub drops_aqm_forced: u64,
    /// Packets the link lost at random (its `loss`), before the queue.
    pub drops_random: u64,
    /// ECN marks (CE) an AQM set instead of early / control-law drops.
    pub marks_aqm_early: u64,
    pub marks_aqm_forced: u64,
    pub dropped_bytes: u64,
    pub max_len_pkts: u64,
    pub mean_len_pkts: f64,
}

#[derive(Clone, Debug)]
pub struct LinkRow {
    pub link: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_s: f64,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub utilisation: f64,
}

#[derive(Clone, Debug, Default)]
pub struct EngineStats {
    pub events: u64,
    /// Data packets delivered to receivers.
    pub packets_delivered: u64,
    pub sim_s: f64,
    pub max_event_queue: u64,
    pub max_packets_in_network: u64,
}

#[derive(Clone, Debug, Default)]
pub struct SimResults {
    pub flows: Vec<FlowRow>,
    pub queues: Vec<QueueRow>,
    pub links: Vec<LinkRow>,
    pub flow_series: FlowSeries,
    pub queue_series: QueueSeries,
    /// Relay chains: one row per segment, and their samples (empty without relays).
    pub segments: Vec<SegmentRow>,
    pub segment_series: SegmentSeries,
    /// Names of links, indexed by the `link` column of `queue_series`.
    pub link_names: Vec<String>,
    pub engine: EngineStats,
}
