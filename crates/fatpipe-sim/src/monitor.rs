//! Sampled time series, stored column by column (no per-sample objects).

/// Per-flow samples: one row per (sample time, flow).
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub t_s: Vec<f64>,
    pub flow_id: Vec<u32>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub srtt_s: Vec<f64>,
    pub bytes_delivered: Vec<u64>,
    pub goodput_bps: Vec<f64>,
}

/// Per-queue samples: one row per (sample time, link).
#[derive(Clone, Debug, Default)]
pub struct QueueSeries {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    pub len_pkts: Vec<u32>,
    pub len_bytes: Vec<u64>,
    /// The AQM's average queue (packets) and drop/mark probability; NaN for DropTail.
    pub avg_pkts: Vec<f64>,
    pub prob: Vec<f64>,
}

/// Per-segment samples of relay chains: one row per (sample time, relay, segment).
#[derive(Clone, Debug, Default)]
pub struct SegmentSeries {
    pub t_s: Vec<f64>,
    /// The relay's plan flow.
    pub flow_id: Vec<u32>,
    /// Segment index from the source (0 = source -> first depot).
    pub segment: Vec<u32>,
    pub cwnd_pkts: Vec<u32>,
    pub ssthresh_pkts: Vec<u32>,
    pub srtt_s: Vec<f64>,
    /// Payload delivered in order by the segment's receiver, and its rate over the interval.
    pub bytes_delivered: Vec<u64>,
    pub goodput_bps: Vec<f64>,
    /// Bytes held by the depot at the segment's receiving end (read, not yet acknowledged
    /// downstream); 0 for the last segment.
    pub buffer_bytes: Vec<u64>,
    /// Bytes the segment's receiver holds that its depot has not read (its window is closing).
    pub unread_bytes: Vec<u64>,
}
