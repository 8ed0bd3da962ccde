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
