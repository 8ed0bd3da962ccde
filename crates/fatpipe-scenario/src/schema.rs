//! The scenario file schema. Every struct denies unknown fields; unit-bearing fields are strings
//! with units (see [`crate::units`]). Defaults are documented on each field and in
//! `docs/scenarios.md`.

use crate::error::ScenarioError;
use crate::units::{Duration, RateStr, SizeStr};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A scenario: a topology, TCP defaults, flows, measurement and limits.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name, used in reports.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    /// Simulated time to run, e.g. "60s".
    pub duration: Duration,
    /// Default seed when none is given on the command line or to `run` (default 1).
    #[serde(default)]
    pub seed: Option<u64>,
    pub topology: Topology,
    /// TCP settings applied to every flow unless a flow group overrides them.
    #[serde(default)]
    pub tcp: TcpSpec,
    /// DCCP settings for every flow with `transport = "dccp"` unless a group overrides them.
    #[serde(default)]
    pub dccp: Option<crate::message_spec::DccpSpec>,
    /// Flow groups. A dumbbell with no `[[flows]]` gets one bulk flow per pair starting at 0.
    #[serde(default)]
    pub flows: Vec<FlowGroup>,
    /// Background traffic (CBR, FTP and web) across each bottleneck in both directions, sized as
    /// a fraction of its capacity (seed 000's 20/50/80 %, after Ha et al. 2007).
    #[serde(default)]
    pub background: Option<BackgroundSpec>,
    #[serde(default)]
    pub monitor: MonitorSpec,
    #[serde(default)]
    pub limits: LimitsSpec,
    /// Host settings for the testbed back-end (real Linux TCP in network namespaces,
    /// docs/testbed.md); the simulator models none of them.
    #[serde(default)]
    pub testbed: Option<crate::testbed_spec::TestbedSpec>,
}

/// The network. `kind` selects the builder.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Topology {
    Dumbbell(Dumbbell),
    Graph(Graph),
    ParkingLot(crate::parking_lot::ParkingLot),
    Ring(crate::ring::Ring),
}

impl<'de> Deserialize<'de> for Topology {
    // Dispatch on `kind` by hand so errors inside keep their field path (serde's internally tagged
    // enums buffer their content and lose it).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut t = toml::Table::deserialize(d)?;
        let kind = t.remove("kind").ok_or_else(|| {
            D::Error::custom(
                "missing field `kind` (\"dumbbell\", \"graph\", \"parkinglot\" or \"ring\")",
            )
        })?;
        let v = toml::Value::Table(t);
        match kind.as_str() {
            Some("dumbbell") => serde_path_to_error::deserialize(v)
                .map(Topology::Dumbbell)
                .map_err(path_err),
            Some("graph") => serde_path_to_error::deserialize(v)
                .map(Topology::Graph)
                .map_err(path_err),
            Some("parkinglot") => crate::parking_lot::from_value(v).map(Topology::ParkingLot),
            Some("ring") => crate::ring::from_value(v).map(Topology::Ring),
            _ => Err(D::Error::custom(format!(
                "kind: unknown topology {kind}; allowed: \"dumbbell\", \"graph\", \"parkinglot\", \"ring\""
            ))),
        }
    }
}

pub(crate) fn path_err<E: serde::de::Error>(e: serde_path_to_error::Error<toml::de::Error>) -> E {
    E::custom(format!(
        "{}: {}",
        dotted(&e.path().to_string()),
        e.inner().message()
    ))
}

/// serde's `flows[0].size` as the dotted path used everywhere else (`flows.0.size`, what
/// `--set` takes).
fn dotted(path: &str) -> String {
    path.replace('[', ".").replace(']', "")
}

/// N sender/receiver pairs sharing one bottleneck:
/// `s<i> -- r0 ==bottleneck== r1 -- d<i>`, i = 0..pairs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// Number of sender/receiver pairs.
    pub pairs: u32,
    /// The shared link r0 -> r1 (and back).
    pub bottleneck: LinkSpec,
    /// Access links s<i> -- r0 and r1 -- d<i>. Default: 10x the bottleneck rate, 1 ms, and the
    /// bottleneck's queue.
    #[serde(default)]
    pub access: Option<LinkSpec>,
    /// Extra one-way delay on sender i's access link, so RTTs can differ: one value for every
    /// pair, or a list with one value per pair. Default "0ms".
    #[serde(default)]
    pub extra_delay: Option<OneOrMany>,
    /// Small random one-way delay added to each sender's access link, uniform in
    /// [0, delay_spread) from the pair's own random stream (`pair/<i>/delay`), against phase
    /// effects (Floyd & Jacobson 1991; seed 000 perturbs link delays). Default "0ms".
    #[serde(default)]
    pub delay_spread: Option<Duration>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(Duration),
    Many(Vec<Duration>),
}

/// A full-duplex link's rate, one-way propagation delay and the queue at each end.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate: RateStr,
    pub delay: Duration,
    /// Output queue (each direction gets its own). Default: DropTail sized to one bandwidth-delay
    /// product of the path (dumbbell) or of the link at a 100 ms RTT (graph), at least 100 packets.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Random loss probability per packet in [0, 1), before the queue (netem's loss), in the
    /// link's forward direction (the dumbbell's r0 -> r1 and s<i> -> r0; default 0).
    #[serde(default)]
    pub loss: Option<f64>,
    /// The same for the reverse direction (ACKs on a dumbbell; default 0).
    #[serde(default)]
    pub loss_reverse: Option<f64>,
    /// One-way propagation delay of the reverse direction (the dumbbell's r1 -> r0, r0 -> s<i>
    /// and d<i> -> r1), when it differs from `delay` (default: `delay`). A delay added on one
    /// side only, as netem on a sender's egress, is `delay = "<added>"`, `delay_reverse = "0ms"`.
    #[serde(default)]
    pub delay_reverse: Option<Duration>,
}

impl LinkSpec {
    /// One-way propagation delays (forward, reverse): `delay_reverse` defaults to `delay`.
    pub fn delays(&self) -> (fatpipe_core::SimTime, fatpipe_core::SimTime) {
        let f = self.delay.value;
        (f, self.delay_reverse.as_ref().map_or(f, |d| d.value))
    }
}

/// An output queue.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// Discipline: "droptail", "red", "codel", "pie", "fq_codel", "h2" or "pi" (docs/aqm.md).
    #[serde(default = "droptail")]
    pub kind: String,
    /// Capacity, in packets ("2500pkt", counted as waiting packets like ns-2) or bytes ("3MB").
    pub limit: SizeStr,
    /// RED: lower threshold of the average queue, packets (default: 5 ms of the link, at least 5).
    #[serde(default)]
    pub min_th: Option<f64>,
    /// RED: upper threshold, packets (default 3 · min_th).
    #[serde(default)]
    pub max_th: Option<f64>,
    /// RED: early-drop probability at max_th, in (0, 1] (default 0.1).
    #[serde(default)]
    pub max_p: Option<f64>,
    /// RED: EWMA weight of the average queue, in (0, 1) (default 1 − exp(−1/C), C the link's
    /// rate in packets per second).
    #[serde(default)]
    pub w_q: Option<f64>,
    /// RED: gentle mode, p from max_p to 1 between max_th and 2·max_th (default true).
    #[serde(default)]
    pub gentle: Option<bool>,
    /// RED: "packets" (default) or "bytes" (average in bytes, drop probability scaled by size).
    #[serde(default)]
    pub mode: Option<String>,
    /// RED: mean packet size for byte mode and the idle-time correction (default "1500B").
    #[serde(default)]
    pub mean_packet: Option<SizeStr>,
    /// RED: ns-2's `wait_` spacing between drops (default true).
    #[serde(default)]
    pub wait: Option<bool>,
    /// Every AQM: mark ECN-capable packets (CE) instead of dropping them (default false).
    #[serde(default)]
    pub ecn: Option<bool>,
    /// RED: Adaptive RED, max_p adapted every 0.5 s (Floyd, Gummadi, Shenker 2001; default false).
    #[serde(default)]
    pub adaptive: Option<bool>,
    /// CoDel, FQ-CoDel: target sojourn time (default "5ms", RFC 8289); PIE: QDELAY_REF (default
    /// "15ms", RFC 8033).
    #[serde(default)]
    pub target: Option<Duration>,
    /// CoDel, FQ-CoDel: interval (default "100ms", RFC 8289).
    #[serde(default)]
    pub interval: Option<Duration>,
    /// CoDel, FQ-CoDel: MAXPACKET, the backlog below which nothing is dropped (default "1500B").
    #[serde(default)]
    pub mtu: Option<SizeStr>,
    /// FQ-CoDel: number of flow queues (default 1024, RFC 8290).
    #[serde(default)]
    pub flows: Option<u32>,
    /// FQ-CoDel: DRR quantum (default "1514B", RFC 8290).
    #[serde(default)]
    pub quantum: Option<SizeStr>,
    /// PIE: period of the probability update (default "15ms", RFC 8033).
    #[serde(default)]
    pub t_update: Option<Duration>,
    /// PIE: α, 1/s (default 0.125).
    #[serde(default)]
    pub alpha: Option<f64>,
    /// PIE: β, 1/s (default 1.25).
    #[serde(default)]
    pub beta: Option<f64>,
    /// PIE: burst allowance (default "150ms").
    #[serde(default)]
    pub max_burst: Option<Duration>,
    /// PIE: ECN marking only while the probability is below this (default 0.1).
    #[serde(default)]
    pub mark_ecnth: Option<f64>,
    /// PIE: derandomised drops, RFC 8033 §5.4 (default false).
    #[serde(default)]
    pub derandomize: Option<bool>,
    /// PIE: cap drop adjustment, RFC 8033 §5.5 (default true).
    #[serde(default)]
    pub cap_drop: Option<bool>,
    /// PIE: queue delay from "timestamp" (default) or "dq_rate" (departure-rate estimate).
    #[serde(default)]
    pub estimator: Option<String>,
    /// PIE: DQ_THRESHOLD of the departure-rate estimate (default "16384B").
    #[serde(default)]
    pub dq_threshold: Option<SizeStr>,
    /// H2, PI: sampling rate of the controller, Hz (H2 default 8333, PI default 160).
    #[serde(default)]
    pub sample_hz: Option<f64>,
    /// H2: equilibrium queue of the design, packets (required).
    #[serde(default)]
    pub q0: Option<f64>,
    /// H2: equilibrium probability of the design (required); PI: starting probability (default 0).
    #[serde(default)]
    pub p0: Option<f64>,
    /// PI: reference queue, packets (default 50, ns-2).
    #[serde(default)]
    pub q_ref: Option<f64>,
    /// H2, PI: coefficient a (H2 default 7.361e-10, the paper's; PI default 1.822e-5, ns-2's).
    #[serde(default)]
    pub a: Option<f64>,
    /// H2, PI: coefficient b (H2 default 3.06e-13; PI default 1.816e-5).
    #[serde(default)]
    pub b: Option<f64>,
    /// H2: coefficient c (default 7.358e-10).
    #[serde(default)]
    pub c: Option<f64>,
    /// H2: coefficient d (default 0.08609).
    #[serde(default)]
    pub d: Option<f64>,
    /// H2: coefficient e (default 0.9131).
    #[serde(default)]
    pub e: Option<f64>,
    /// H2, PI: a design request (flows, q0, rtt, ...) that the Python front end expands into the
    /// coefficients with `fatpipe.models`; the core rejects it unexpanded (docs/aqm.md).
    #[serde(default)]
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub design: Option<toml::Table>,
}

fn droptail() -> String {
    "droptail".into()
}

/// Any graph: named nodes and full-duplex links.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<GraphLink>,
    /// Directed link whose utilisation the summary reports, as "a->b". Default: the busiest.
    #[serde(default)]
    pub bottleneck: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    /// "host" (end system) or "router". Default "host".
    #[serde(default)]
    pub kind: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    /// The two node names.
    pub between: [String; 2],
    pub rate: RateStr,
    pub delay: Duration,
    #[serde(default)]
    pub queue: Option<QueueSpec>,
    /// Random loss probability in [0, 1) from the first node to the second (default 0).
    #[serde(default)]
    pub loss: Option<f64>,
    /// Random loss probability from the second node to the first (default 0).
    #[serde(default)]
    pub loss_reverse: Option<f64>,
    /// One-way propagation delay from the second node to the first (default: `delay`).
    #[serde(default)]
    pub delay_reverse: Option<Duration>,
}

/// TCP settings. Every field is optional; unset fields take the defaults below.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Congestion control by name (default "reno"); see `fatpipe cc list`.
    pub cc: Option<String>,
    /// Typed parameters of the congestion control (unknown keys are errors).
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub cc_params: Option<toml::Table>,
    /// Loss recovery: "sack" (RFC 6675, default) or "newreno" (RFC 6582).
    pub recovery: Option<String>,
    /// Maximum segment size, payload bytes (default "1460B").
    pub mss: Option<SizeStr>,
    /// Header bytes per packet (default "40B": IPv4 + TCP).
    pub header: Option<SizeStr>,
    /// Initial window in segments (default 10, RFC 6928; ns-2 uses 2).
    pub initial_window: Option<u32>,
    /// Initial ssthresh in segments (default: unlimited).
    pub initial_ssthresh: Option<u32>,
    /// Delayed ACKs at the receiver (default false).
    pub delayed_ack: Option<bool>,
    /// Delayed-ACK timeout (default "40ms", Linux's minimum).
    pub delack_timeout: Option<Duration>,
    /// Minimum RTO (default "200ms" as Linux; RFC 6298 says 1 s).
    pub min_rto: Option<Duration>,
    /// RTO before the first RTT sample (default "1s", RFC 6298).
    pub initial_rto: Option<Duration>,
    /// Maximum RTO (default "120s", Linux TCP_RTO_MAX; RFC 6298 §2.5 asks for at least 60 s).
    pub max_rto: Option<Duration>,
    /// RTO estimator: "linux" (default; SRTT + max(4·mdev over the last RTT, min_rto), as Linux),
    /// "rfc6298" (max(min_rto, SRTT + 4·RTTVAR), as ns-2's Agent/TCP) or "ns2-linux" (RFC 6298's
    /// with a falling RTT raising RTTVAR by 1/32 of the excess: ns-2.35's Agent/TCP/Linux).
    pub rto_estimator: Option<String>,
    /// Random delay before each send, uniform in [0, send_jitter), keeping the sender's packets in
    /// order (ns-2's `overhead_`); breaks the phase effects of deterministic simulation. Default
    /// "0s" (off); "0.1ms" is a common choice.
    pub send_jitter: Option<Duration>,
    /// Lost-retransmission detection with SACK (default true, as Linux): a retransmission is sent
    /// again once segments sent after it are SACKed, instead of waiting for the RTO.
    pub lost_retransmit: Option<bool>,
    /// RACK time-based loss detection (RFC 8985 §6; default true, as Linux's
    /// net.ipv4.tcp_recovery = 1): a segment is lost once a segment sent after it was delivered
    /// and RACK.rtt + a reordering window (0, or min_rtt/4 once reordering is seen) has passed;
    /// replaces the DupThresh rules. SACK recovery only: with recovery = "newreno" it is off,
    /// and setting it true there is an error.
    pub rack: Option<bool>,
    /// Tail loss probe (RFC 8985 §7; default true, as Linux's net.ipv4.tcp_early_retrans = 3):
    /// after about 2·SRTT without an ACK in the Open state, send one segment (new data, else
    /// the last one again) to draw an ACK instead of waiting for the RTO. SACK recovery only:
    /// with recovery = "newreno" it is off, and setting it true there is an error.
    pub tlp: Option<bool>,
    /// Which ACKs restart the retransmission timer: "advance" (default; ACKs that advance
    /// snd_una, as Linux and RFC 6298) or "every-ack" (duplicate and SACK-only ACKs too, and each
    /// clears the backoff, as ns-2.35's Agent/TCP/Linux).
    pub rto_restart: Option<String>,
    /// How cwnd comes down during fast recovery: "prr" (default; RFC 6937 Proportional Rate
    /// Reduction, as Linux since 3.2), "rate-halving" (ns-2.35's Agent/TCP/Linux: cwnd = ssthresh
    /// at once, one segment sent per two delivered until the pipe reaches it) or "at-once"
    /// (cwnd = ssthresh, nothing sent until the pipe is below it; RFC 6675 with RFC 5681).
    pub cwnd_reduction: Option<String>,
    /// Receiver window: "auto" (default: 2 x the path's bandwidth-delay product plus its buffers,
    /// so it never limits) or a size such as "64KiB". A size below the BDP draws a warning.
    pub rwnd: Option<String>,
    /// Pace transmissions (default false).
    pub pacing: Option<bool>,
    /// Duplicate-ACK threshold (default 3).
    pub dupthresh: Option<u32>,
    /// How much one ACK may grow cwnd: "segments" (default; Linux: by the segments it covers) or
    /// "per-ack" (RFC 5681 §3.1 and ns-2's Agent/TCP: at most one segment per ACK).
    pub cwnd_growth: Option<String>,
    /// ssthresh on a timeout: "once-per-episode" (default; Linux keeps the ssthresh a fast
    /// recovery already reduced) or "halve-again" (ns-2's Agent/TCP halves the current cwnd).
    pub rto_ssthresh: Option<String>,
    /// Which ACKs give the retransmission timer an RTT sample: "new-data" (default; ACKs that
    /// advance snd_una, RFC 7323 section 4.2 and Linux) or "every-ack" (duplicate ACKs too,
    /// whose echo is from before the hole: ns-2.35's Agent/TCP/Linux).
    pub rtt_samples: Option<String>,
    /// What the Loss state after a timeout does with losses SACK reveals: "linux" (default;
    /// resend them, no further reduction, lost retransmissions wait for the next timeout) or
    /// "ns2" (ns-2.35's Agent/TCP/Linux: a retransmission is lost once data sent after it is
    /// SACKed, and any new loss starts a Recovery from the current window).
    pub loss_state: Option<String>,
    /// Restart the window after an idle RTO (RFC 2861; Linux `tcp_slow_start_after_idle`,
    /// default true). Only application-limited senders (voice over TCP) are ever idle.
    pub restart_after_idle: Option<bool>,
    /// How the window restarts: "rfc2861" (default; halves per idle RTO, ssthresh keeps 3/4, as
    /// Linux) or "ns2" (back to the initial window, ssthresh kept: ns-2's slow_start_restart_).
    pub idle_restart: Option<String>,
    /// Explicit Congestion Notification (RFC 3168): send ECT and halve the window on ECN-Echo,
    /// once per window (default false). Needs an AQM queue with `ecn = true` to matter.
    pub ecn: Option<bool>,
}

/// A group of flows with the same application and settings.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// "bulk" (FTP-like, infinite; default), "file" (finite, needs `size`), "cbr" (at `rate`,
    /// packets of `packet` on the wire), "web" (pages offered at `load`, each object a TCP
    /// transfer from src to dst; see docs/traffic-models.md), "files" (file transfers of
    /// `sizes` arriving as a Poisson process offering `load`, each a TCP connection), "voip"
    /// (exponential on/off voice, `[flows.voip]`) or "relay" (a transfer of `size`, or bulk
    /// without one, through `depots`, one TCP connection per segment).
    #[serde(default)]
    pub kind: Option<String>,
    /// The flows' role in a study: "main" (default) or "background"; reported in results so
    /// metrics can tell them apart.
    #[serde(default)]
    pub role: Option<String>,
    /// CBR: wire rate (headers included), e.g. "10Mbps".
    #[serde(default)]
    pub rate: Option<RateStr>,
    /// CBR: datagram size on the wire (default "1500B").
    #[serde(default)]
    pub packet: Option<SizeStr>,
    /// Web and files: offered load on the wire (mean bytes x arrival rate), e.g. "20Mbps".
    #[serde(default)]
    pub load: Option<RateStr>,
    /// Files: the size law (default: exponential, mean 512 KiB; docs/traffic-models.md).
    #[serde(default)]
    pub sizes: Option<FileSizesSpec>,
    /// Web: model parameters (defaults: SURGE, see docs/traffic-models.md).
    #[serde(default)]
    pub web: Option<WebSpec>,
    /// Voice: the on/off source (defaults: seed 001's ITU-T P.59 values; docs/traffic-models.md).
    #[serde(default)]
    pub voip: Option<crate::message_spec::VoipSpec>,
    /// Transport: "tcp" (default for bulk, file, web), "udp" (default for cbr and voip) or
    /// "dccp" (bulk, cbr, voip; settings in `[dccp]` / `[flows.dccp]`, see docs/dccp.md).
    #[serde(default)]
    pub transport: Option<String>,
    /// DCCP overrides for this group (same fields as `[dccp]`).
    #[serde(default)]
    pub dccp: Option<crate::message_spec::DccpSpec>,
    /// Dumbbell, parking lot, ring: which pairs carry this group, "all" (default) or a list of
    /// pair indices.
    #[serde(default)]
    pub pairs: Option<PairSelect>,
    /// Graph: sender node name.
    #[serde(default)]
    pub src: Option<String>,
    /// Graph: receiver node name.
    #[serde(default)]
    pub dst: Option<String>,
    /// Flows per selected pair / src-dst (default 1).
    #[serde(default)]
    pub count: Option<u32>,
    /// Start time (default "0s").
    #[serde(default)]
    pub start: Option<Duration>,
    /// Each flow starts at `start` plus a uniform random offset in [0, start_spread) drawn from
    /// the flow's own random stream (default "0s").
    #[serde(default)]
    pub start_spread: Option<Duration>,
    /// Stop offering new data at this time (bulk flows; default: run to the end).
    #[serde(default)]
    pub stop: Option<Duration>,
    /// Transfer size of a "file" flow, e.g. "10MB".
    #[serde(default)]
    pub size: Option<SizeStr>,
    /// TCP overrides for this group (same fields as `[tcp]`).
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    /// Relay: the depots the transfer crosses, in the order the data crosses them (from src to
    /// dst); every segment between consecutive nodes is its own TCP connection
    /// (docs/relay-simulation.md).
    #[serde(default)]
    pub depots: Option<Vec<String>>,
    /// Relay: each depot's buffer, "auto" (default: the larger of its two segments' receive
    /// windows, `rwnd`) or a size of at least two segments, e.g. "4MB".
    #[serde(default)]
    pub depot_buffer: Option<String>,
    /// Relay: TCP overrides per segment, from src (depots + 1 tables, `{}` for none), over
    /// `[tcp]` and the group's `tcp`, e.g. a high-speed congestion control between depots.
    #[serde(default)]
    pub segments: Option<Vec<TcpSpec>>,
}

/// File sizes of a "files" flow: `law = "exponential"` (with `mean`) or `law = "body-tail"`
/// (a lognormal body of probability `body_prob` with `body_mean` and shape `body_sigma`, else a
/// Pareto tail with `tail_mean` and shape `tail_alpha`; each part's mean holds after truncation
/// at `max`). Defaults: seed 003 (FTP: exponential 512 KiB; WEB: body 0.88, 7247 B and 10558 B)
/// with SURGE's shapes (sigma 1.318, alpha 1.1) and a 10 MB cap.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSizesSpec {
    pub law: Option<String>,
    pub mean: Option<SizeStr>,
    pub body_prob: Option<f64>,
    pub body_mean: Option<SizeStr>,
    pub body_sigma: Option<f64>,
    pub tail_mean: Option<SizeStr>,
    pub tail_alpha: Option<f64>,
    pub max: Option<SizeStr>,
}

/// Web workload parameters; unset fields keep SURGE's values (Barford & Crovella 1998).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSpec {
    /// Base-object size: lognormal body (ln-space mu, sigma) below `base_cutoff`, Pareto tail
    /// (`base_tail_alpha`) above it; `base_body_prob` the body's probability (default: the
    /// lognormal's own mass below the cut-off).
    pub base_mu: Option<f64>,
    pub base_sigma: Option<f64>,
    pub base_cutoff: Option<SizeStr>,
    pub base_tail_alpha: Option<f64>,
    pub base_body_prob: Option<f64>,
    /// Embedded objects per page: floor of a Pareto(alpha, k), at most `max_embedded`.
    pub embedded_alpha: Option<f64>,
    pub embedded_k: Option<f64>,
    pub max_embedded: Option<u32>,
    /// Embedded-object size: lognormal (ln-space mu, sigma).
    pub embedded_mu: Option<f64>,
    pub embedded_sigma: Option<f64>,
    /// Cap on any object (default "10MB"), which gives the heavy tail a finite variance.
    pub max_object: Option<SizeStr>,
}

/// Background traffic: on each bottleneck, in each direction, `load` x capacity offered as
/// `mix.cbr` UDP CBR, `mix.ftp` long-lived TCP and `mix.web` web pages (seed 000 after Ha et
/// al. 2007: 20/24/56 %). Hosts are added beside each bottleneck (dumbbell: `bgl`, `bgr`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSpec {
    /// Fraction of each bottleneck's capacity, per direction, in [0, 1).
    pub load: f64,
    /// Shares of the load (must sum to 1); default cbr 0.20, ftp 0.24, web 0.56.
    #[serde(default)]
    pub mix: Option<MixSpec>,
    /// Long-lived TCP flows per direction per bottleneck (default 2). Each is window-limited
    /// (receiver window = its share x the path's base RTT) so the part offers its share.
    #[serde(default)]
    pub ftp_flows: Option<u32>,
    /// Web sources per direction per bottleneck (default 2), each offering an equal part.
    #[serde(default)]
    pub web_sources: Option<u32>,
    /// CBR datagram size on the wire (default "1500B").
    #[serde(default)]
    pub cbr_packet: Option<SizeStr>,
    /// Background flows start uniformly in [0, start_spread) (default "1s").
    #[serde(default)]
    pub start_spread: Option<Duration>,
    /// TCP settings of the background's FTP and web flows (layered over `[tcp]`).
    #[serde(default)]
    pub tcp: Option<TcpSpec>,
    #[serde(default)]
    pub web: Option<WebSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    pub cbr: f64,
    pub ftp: f64,
    pub web: f64,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum PairSelect {
    /// "all"
    All(String),
    List(Vec<u32>),
}

/// What to record over time.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorSpec {
    /// Sampling interval of cwnd, goodput and queue lengths (default "100ms").
    pub interval: Option<Duration>,
}

/// Bounds that turn a runaway run into an error.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// Maximum events processed (default 2e10).
    pub max_events: Option<u64>,
    /// Maximum packets inside the network at once (default 5e7, about 5 GB).
    pub max_packets: Option<u64>,
    /// Memory the run may need, estimated before anything is built from the nodes, links,
    /// flows, the routing table and the monitor's samples (default "8GB"); a run above it is
    /// refused with what dominates the estimate.
    pub max_memory: Option<SizeStr>,
}

/// The schema as published (`fatpipe schema`): same fields as [`Scenario`].
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ScenarioSchema {
    name: Option<String>,
    description: Option<String>,
    duration: Duration,
    seed: Option<u64>,
    topology: Topology,
    tcp: Option<TcpSpec>,
    dccp: Option<crate::message_spec::DccpSpec>,
    flows: Option<Vec<FlowGroup>>,
    background: Option<BackgroundSpec>,
    monitor: Option<MonitorSpec>,
    limits: Option<LimitsSpec>,
    testbed: Option<crate::testbed_spec::TestbedSpec>,
}

impl Topology {
    /// The checks a topology's builder makes, so that a bad one fails when the file is loaded.
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        match self {
            Topology::ParkingLot(p) => p.validate(),
            Topology::Ring(r) => r.validate(),
            Topology::Dumbbell(_) | Topology::Graph(_) => Ok(()),
        }
    }
}

impl Scenario {
    /// Deserialize with field paths in errors.
    pub fn from_value(v: toml::Value) -> Result<Self, ScenarioError> {
        serde_path_to_error::deserialize::<_, Scenario>(v).map_err(|e| {
            let path = dotted(&e.path().to_string());
            let inner = e.inner().message().to_string();
            // Errors from the topology dispatcher carry their own sub-path ("bottleneck.rate: ...").
            let (path, msg) = split_nested(&path, &inner);
            ScenarioError::invalid(path, msg)
        })
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

fn split_nested(path: &str, msg: &str) -> (String, String) {
    if path == "topology" {
        if let Some((sub, rest)) = msg.split_once(": ") {
            if !sub.contains(' ') && sub != "." {
                return (format!("topology.{sub}"), rest.to_string());
            }
        }
    }
    let path = if path == "." {
        String::new()
    } else {
        path.to_string()
    };
    (path, msg.to_string())
}
