//! Elaboration: a validated [`Scenario`] plus a seed becomes a [`Plan`] — explicit nodes, directed
//! links, flows with their drawn start times and resolved TCP settings — and a plan builds a
//! [`Simulation`]. Peers (ns-2, ns-3) run the same plan (docs/plan-and-results.md).

use crate::aqm_spec::{
    aqm_request, build_queue, check_plan_aqm, resolve as resolve_aqm, AqmRequest, PlanAqm,
    QUEUE_KINDS,
};
use crate::background::{self, Site};
use crate::error::{ErrorKind, ScenarioError};
use crate::schema::{
    Dumbbell, FlowGroup, Graph, LinkSpec, OneOrMany, PairSelect, QueueSpec, Scenario, TcpSpec,
    Topology, WebSpec,
};
use crate::units::{Duration, SizeStr};
use fatpipe_core::units::SizeSpec;
use fatpipe_core::{Rate, RngStream, SimTime};
use fatpipe_net::folded_routes::FoldedRoutes;
use fatpipe_net::queue::droptail::Limit;
use fatpipe_net::{Network, NodeKind, Queue};
use fatpipe_sim::{AppSpec, FlowSpec, Limits, RelayHop, RelaySpec, SimError, Simulation};
use fatpipe_traffic::{Application, PoissonFiles, PoissonPages, Schedule};
use fatpipe_transport::cc;
use fatpipe_transport::tcp::{
    CwndGrowth, CwndReduction, IdleRestart, LossState, Recovery, RtoEstimator, RtoRestart,
    RtoSsthresh, RttSamples, TcpConfig,
};
use serde::{Deserialize, Serialize};

/// Wire size used to convert between packets and bytes in defaults (1460 + 40).
const DEFAULT_PACKET: u64 = 1500;
/// Largest receive window: SACK blocks are carried as 32-bit offsets (fatpipe-net `SackBlocks`).
/// (TCP's own limit with window scaling is 1 GiB, RFC 7323 §2.3.)
const MAX_RWND: u64 = u32::MAX as u64;
/// Default queues hold at least this many packets.
const MIN_DEFAULT_QUEUE_PKTS: u64 = 100;
/// Largest packet on the wire, headers included: an IPv4 datagram's total length (RFC 791).
const MAX_WIRE_PACKET: u64 = 65_535;
/// Shortest retransmission timeout a scenario may set. A zero RTO re-arms at the instant it
/// fires, so the clock never advances (a livelock); anything at nanosecond scale does nearly as
/// badly. 1 us is finer than any RTO in use (data-centre studies go down to 200 us).
const MIN_RTO_SETTING: SimTime = SimTime::from_micros(1);

#[derive(Clone, Debug, Serialize)]
pub struct PlanNode {
    pub name: String,
    pub kind: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanQueue {
    pub kind: String,
    pub limit_packets: Option<u64>,
    pub limit_bytes: Option<u64>,
    /// The AQM's parameters, every one explicit (resolved against the link's rate). Read back
    /// by [`PlanQueue::from_json`], which names a bad field inside it.
    #[serde(default, skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub aqm: Option<PlanAqm>,
    /// What the scenario asked, before the rate of each link fills the gaps.
    #[serde(skip)]
    pub request: Option<AqmRequest>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanLink {
    pub name: String,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: PlanQueue,
    /// Random loss probability before the queue (listed only when not 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub loss: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanFlow {
    pub id: u32,
    pub src: String,
    pub dst: String,
    pub kind: String,
    /// "main" or "background".
    pub role: String,
    /// CBR: wire rate and datagram size on the wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packet_bytes: Option<u32>,
    /// Web: offered load and model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub web: Option<PlanWeb>,
    /// File arrivals: offered load, arrival rate and size law.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<PlanFiles>,
    /// Voice: the on/off source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub voip: Option<crate::message_spec::PlanVoip>,
    /// The transport when it is not the kind's usual one (DCCP anywhere, TCP under voice,
    /// UDP under voice); absent for TCP bulk/file/web and UDP CBR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dccp: Option<crate::message_spec::PlanDccp>,
    /// Relay: the depots and every segment with its own settings (the flow's own TCP fields
    /// are its first segment's, `cc` names every segment's algorithm, `path_rtt_ns` is the sum
    /// of the segments' and `path_bottleneck_bps` their slowest link).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay: Option<Box<PlanRelay>>,
    /// RFC 2861 window restart after idle (listed only when off).
    #[serde(skip_serializing_if = "is_true")]
    pub restart_after_idle: bool,
    /// The restart rule (listed only when not "rfc2861").
    #[serde(skip_serializing_if = "is_rfc2861")]
    pub idle_restart: String,
    /// RFC 3168 ECN (listed only when on).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
    /// Which ACKs give the RTO estimator a sample (listed only when not "new-data").
    #[serde(skip_serializing_if = "is_new_data")]
    pub rtt_samples: String,
    /// The Loss state's rule (listed only when not "linux").
    #[serde(skip_serializing_if = "is_linux")]
    pub loss_state: String,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub size_bytes: Option<u64>,
    pub cc: String,
    pub cc_params: serde_json::Value,
    pub recovery: String,
    pub mss: u32,
    pub header_bytes: u32,
    pub initial_window: u32,
    pub initial_ssthresh: Option<u32>,
    pub delayed_ack: bool,
    pub delack_timeout_ns: u64,
    pub min_rto_ns: u64,
    pub initial_rto_ns: u64,
    pub max_rto_ns: u64,
    pub rwnd_bytes: u64,
    pub pacing: bool,
    pub dupthresh: u32,
    pub cwnd_growth: String,
    pub rto_ssthresh: String,
    pub rto_estimator: String,
    pub send_jitter_ns: u64,
    pub lost_retransmit: bool,
    pub rack: bool,
    pub tlp: bool,
    pub rto_restart: String,
    pub cwnd_reduction: String,
    /// Round-trip propagation delay of the flow's path (no queueing, no serialisation).
    pub path_rtt_ns: u64,
    /// Slowest link on the forward path.
    pub path_bottleneck_bps: u64,
    /// Probability that a data packet is lost at random on the forward path (the links' `loss`
    /// combined, 1 - prod(1 - loss)); listed only when not 0. The TCP-logistics model
    /// (`fatpipe.models.logistics`) reads it.
    #[serde(skip_serializing_if = "is_zero")]
    pub path_loss: f64,
    /// Index of the flow group in the scenario (for error messages and grouping in reports).
    pub group: usize,
    #[serde(skip)]
    cc_table: toml::Table,
}

/// A relay chain in the plan: the depots in the order data crosses them, each one's buffer
/// (bytes), and one plan flow per segment (its `src`, `dst`, TCP settings, path and window),
/// from the source.
#[derive(Clone, Debug, Serialize)]
pub struct PlanRelay {
    pub depots: Vec<String>,
    pub depot_buffer_bytes: Vec<u64>,
    pub segments: Vec<PlanFlow>,
}

/// The background mix as asked (its flows are in `flows` with role "background").
#[derive(Clone, Debug, Serialize)]
pub struct PlanBackground {
    pub load: f64,
    pub cbr: f64,
    pub ftp: f64,
    pub web: f64,
}

/// A web source in the plan: its offered load, the page rate that gives it, and the model.
#[derive(Clone, Debug, Serialize)]
pub struct PlanWeb {
    pub load_bps: u64,
    pub page_rate_per_s: f64,
    pub mean_page_bytes: f64,
    pub model: WebSpec,
}

/// A file-arrival source in the plan: its offered load (wire), the arrival rate that gives it,
/// the mean file size and the size law as written.
#[derive(Clone, Debug, Serialize)]
pub struct PlanFiles {
    pub load_bps: u64,
    pub rate_per_s: f64,
    pub mean_file_bytes: f64,
    pub sizes: crate::schema::FileSizesSpec,
}

/// UDP/IPv4 header bytes of a datagram (8 + 20).
const UDP_HEADER: u32 = 28;

#[derive(Clone, Debug, Serialize)]
pub struct PlanMonitor {
    pub interval_ns: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanLimits {
    pub max_events: u64,
    pub max_packets: u64,
}

/// The elaborated scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub name: String,
    pub seed: u64,
    pub duration_ns: u64,
    pub nodes: Vec<PlanNode>,
    pub links: Vec<PlanLink>,
    pub flows: Vec<PlanFlow>,
    pub monitor: PlanMonitor,
    pub limits: PlanLimits,
    pub bottleneck: Option<String>,
    /// The background mix, when the scenario asked for one.
    pub background: Option<PlanBackground>,
    /// Non-fatal findings (e.g. a receiver window that limits a flow).
    pub warnings: Vec<String>,
    /// Host settings for the testbed back-end (`[testbed]`); absent when the scenario has none,
    /// so plans (and run keys) of scenarios without it are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub testbed: Option<crate::testbed_spec::PlanTestbed>,
}

pub(crate) fn queue_from_spec(spec: &QueueSpec, path: &str) -> Result<PlanQueue, ScenarioError> {
    let request = aqm_request(spec, path)?;
    let (p, b) = match spec.limit.value {
        SizeSpec::Packets(n) => (Some(n), None),
        SizeSpec::Bytes(n) => (None, Some(n)),
    };
    if p == Some(0) || b == Some(0) {
        return Err(ScenarioError::invalid(
            format!("{path}.limit"),
            "a queue of size 0 drops every packet that finds the link busy; give at least 1 packet (e.g. \"100pkt\")",
        ));
    }
    Ok(PlanQueue {
        kind: spec.kind.clone(),
        limit_packets: p,
        limit_bytes: b,
        aqm: None,
        request,
    })
}

impl PlanQueue {
    /// A plan queue read back from its JSON form (`links[i].queue` as `fatpipe plan` prints it),
    /// checked as the scenario's queues are; errors name the field under `path`. Other programs
    /// that model a plan link (the userspace link emulator) build their queues from this.
    pub fn from_json(v: &serde_json::Value, path: &str) -> Result<PlanQueue, ScenarioError> {
        // The aqm object is read apart, by its kind, so a bad value is named down to its field
        // (serde loses the path inside an internally tagged enum).
        let mut outer = v.clone();
        let aqm_json = outer.as_object_mut().and_then(|o| o.remove("aqm"));
        let mut q: PlanQueue = from_json_at(&outer, path)?;
        q.aqm = match aqm_json {
            None | Some(serde_json::Value::Null) => None,
            Some(a) => Some(plan_aqm_from_json(&a, &format!("{path}.aqm"))?),
        };
        if !matches!(
            q.kind.as_str(),
            "droptail" | "red" | "codel" | "pie" | "fq_codel" | "h2" | "pi"
        ) {
            return Err(ScenarioError::invalid(
                format!("{path}.kind"),
                format!("unknown queue kind {:?}; allowed: {QUEUE_KINDS}", q.kind),
            ));
        }
        match (q.limit_packets, q.limit_bytes) {
            (Some(0), _) | (_, Some(0)) => {
                return Err(ScenarioError::invalid(
                    format!("{path}.limit_packets"),
                    "a queue limit must be positive",
                ))
            }
            (Some(_), Some(_)) | (None, None) => {
                return Err(ScenarioError::invalid(
                    format!("{path}.limit_packets"),
                    "give exactly one of limit_packets and limit_bytes (the other null)",
                ))
            }
            _ => {}
        }
        match (&q.aqm, q.kind.as_str()) {
            (None, "droptail") => {}
            (Some(_), "droptail") => {
                return Err(ScenarioError::invalid(
                    format!("{path}.aqm"),
                    "a \"droptail\" queue takes no aqm object",
                ))
            }
            (None, k) => {
                return Err(ScenarioError::invalid(
                    format!("{path}.aqm"),
                    format!("a {k:?} queue needs its aqm object with every value explicit, as `fatpipe plan` prints it"),
                ))
            }
            (Some(a), k) => {
                let ak = serde_json::to_value(a)
                    .ok()
                    .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(String::from))
                    .unwrap_or_default();
                if ak != k {
                    return Err(ScenarioError::invalid(
                        format!("{path}.aqm.kind"),
                        format!("the aqm kind {ak:?} differs from the queue kind {k:?}"),
                    ));
                }
                check_plan_aqm(a).map_err(|(field, why)| {
                    ScenarioError::invalid(format!("{path}.aqm"), format!("{field} {why}"))
                })?;
            }
        }
        Ok(q)
    }

    /// The queue's limit (packets unless only bytes are given).
    pub fn limit(&self) -> Limit {
        match (self.limit_packets, self.limit_bytes) {
            (Some(p), _) => Limit::Packets(p),
            (None, Some(b)) => Limit::Bytes(b),
            (None, None) => Limit::Packets(MIN_DEFAULT_QUEUE_PKTS),
        }
    }

    /// The engine's queue for this plan queue on a link of `rate` named `link` (which, with
    /// `seed`, names the AQM's random stream `queue/<link>/<kind>`).
    pub fn build(&self, rate: Rate, seed: u64, link: &str) -> Box<dyn Queue> {
        build_queue(self.aqm.as_ref(), self.limit(), rate, seed, link)
    }

    /// A DropTail queue with this queue's limit.
    pub(crate) fn droptail_copy(&self) -> PlanQueue {
        PlanQueue {
            kind: "droptail".into(),
            aqm: None,
            request: None,
            ..self.clone()
        }
    }
}

/// Deserialise `v`, naming a bad field under `path`.
fn from_json_at<T: serde::de::DeserializeOwned>(
    v: &serde_json::Value,
    path: &str,
) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let inner = e.path().to_string();
        let at = if inner == "." || inner.is_empty() {
            path.to_string()
        } else {
            format!("{path}.{inner}")
        };
        ScenarioError::invalid(at, e.into_inner().to_string())
    })
}

/// A plan AQM object (`{"kind": "codel", ...}`), read by its kind.
fn plan_aqm_from_json(v: &serde_json::Value, path: &str) -> Result<PlanAqm, ScenarioError> {
    use crate::aqm_spec::{PlanCodel, PlanFqCodel, PlanH2, PlanPi, PlanPie, PlanRed};
    let mut body = v.clone();
    let kind = body
        .as_object_mut()
        .and_then(|o| o.remove("kind"))
        .and_then(|k| k.as_str().map(String::from))
        .ok_or_else(|| {
            ScenarioError::invalid(
                format!("{path}.kind"),
                format!("an aqm object needs its kind; allowed: {QUEUE_KINDS} (not droptail)"),
            )
        })?;
    Ok(match kind.as_str() {
        "red" => PlanAqm::Red(from_json_at::<PlanRed>(&body, path)?),
        "codel" => PlanAqm::Codel(from_json_at::<PlanCodel>(&body, path)?),
        "fq_codel" => PlanAqm::FqCodel(from_json_at::<PlanFqCodel>(&body, path)?),
        "pie" => PlanAqm::Pie(from_json_at::<PlanPie>(&body, path)?),
        "h2" => PlanAqm::H2(from_json_at::<PlanH2>(&body, path)?),
        "pi" => PlanAqm::Pi(from_json_at::<PlanPi>(&body, path)?),
        k => {
            return Err(ScenarioError::invalid(
                format!("{path}.kind"),
                format!("unknown aqm kind {k:?}; allowed: {QUEUE_KINDS} (not droptail)"),
            ))
        }
    })
}

pub(crate) fn default_queue(rate: Rate, rtt: SimTime) -> PlanQueue {
    let bdp_pkts =
        (rate.bps() as f64 * rtt.as_secs_f64() / 8.0 / DEFAULT_PACKET as f64).ceil() as u64;
    PlanQueue {
        kind: "droptail".into(),
        limit_packets: Some(bdp_pkts.max(MIN_DEFAULT_QUEUE_PKTS)),
        limit_bytes: None,
        aqm: None,
        request: None,
    }
}

fn check_link(spec: &LinkSpec, path: &str) -> Result<(), ScenarioError> {
    if spec.rate.value.bps() == 0 {
        return Err(ScenarioError::invalid(
            format!("{path}.rate"),
            "a link needs a positive rate, e.g. \"100Mbps\"",
        ));
    }
    Ok(())
}

pub(crate) struct Builder {
    pub(crate) nodes: Vec<PlanNode>,
    pub(crate) links: Vec<PlanLink>,
}

impl Builder {
    pub(crate) fn node(&mut self, name: String, kind: &str) {
        self.nodes.push(PlanNode {
            name,
            kind: kind.into(),
        });
    }
    /// A full-duplex link: a -> b, then b -> a.
    pub(crate) fn duplex(&mut self, a: &str, b: &str, rate: Rate, delay: SimTime, q: &PlanQueue) {
        self.simplex(a, b, rate, delay, q);
        self.simplex(b, a, rate, delay, q);
    }
    /// A full-duplex link whose directions have their own propagation delays (`delay_reverse`).
    pub(crate) fn duplex_asym(
        &mut self,
        a: &str,
        b: &str,
        rate: Rate,
        (forward, reverse): (SimTime, SimTime),
        q: &PlanQueue,
    ) {
        self.simplex(a, b, rate, forward, q);
        self.simplex(b, a, rate, reverse, q);
    }
    /// One direction of a link. A builder that adds the two directions apart (to order the
    /// links for routing's tie-break, as the ring does) must add both.
    pub(crate) fn simplex(&mut self, f: &str, t: &str, rate: Rate, delay: SimTime, q: &PlanQueue) {
        let mut q = q.clone();
        if let Some(r) = &q.request {
            q.aqm = Some(resolve_aqm(r, rate));
        }
        self.links.push(PlanLink {
            name: format!("{f}->{t}"),
            from: f.into(),
            to: t.into(),
            rate_bps: rate.bps(),
            delay_ns: delay.as_nanos(),
            queue: q,
            loss: 0.0,
        });
    }
    /// Random loss on the link a -> b (and b -> a), checked to lie in [0, 1); `path` names the
    /// scenario field for errors.
    pub(crate) fn set_loss(
        &mut self,
        a: &str,
        b: &str,
        loss: Option<f64>,
        loss_reverse: Option<f64>,
        path: &str,
    ) -> Result<(), ScenarioError> {
        for (f, t, p, field) in [(a, b, loss, "loss"), (b, a, loss_reverse, "loss_reverse")] {
            let Some(p) = p else { continue };
            if !(0.0..1.0).contains(&p) {
                return Err(ScenarioError::invalid(
                    format!("{path}.{field}"),
                    format!("a loss probability lies in [0, 1) (got {p})"),
                ));
            }
            let name = format!("{f}->{t}");
            if let Some(l) = self.links.iter_mut().rev().find(|l| l.name == name) {
                l.loss = p;
            }
        }
        Ok(())
    }
}

type DumbbellParts = (Builder, Vec<(String, String)>, Vec<Site>);

/// The dumbbell; with `with_bg`, background hosts `bgl` (on r0) and `bgr` (on r1) are added
/// after everything else (so the other nodes and links keep their indices), on access links.
fn build_dumbbell(d: &Dumbbell, seed: u64, with_bg: bool) -> Result<DumbbellParts, ScenarioError> {
    if d.pairs == 0 {
        return Err(ScenarioError::invalid(
            "topology.pairs",
            "a dumbbell needs at least 1 pair",
        ));
    }
    check_link(&d.bottleneck, "topology.bottleneck")?;
    let extra: Vec<SimTime> = match &d.extra_delay {
        None => vec![SimTime::ZERO; d.pairs as usize],
        Some(OneOrMany::One(x)) => vec![x.value; d.pairs as usize],
        Some(OneOrMany::Many(v)) => {
            if v.len() != d.pairs as usize {
                return Err(ScenarioError::invalid(
                    "topology.extra_delay",
                    format!(
                        "has {} values but there are {} pairs; give one value or one per pair",
                        v.len(),
                        d.pairs
                    ),
                ));
            }
            v.iter().map(|x| x.value).collect()
        }
    };
    // Per-pair random delay perturbation, each from the pair's own stream.
    let spread = d.delay_spread.as_ref().map_or(SimTime::ZERO, |x| x.value);
    let extra: Vec<SimTime> = extra
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if spread == SimTime::ZERO {
                return *e;
            }
            let mut rng = RngStream::new(seed, &format!("pair/{i}/delay"));
            *e + SimTime(rng.below(spread.as_nanos()))
        })
        .collect();
    let access_default = LinkSpec {
        rate: crate::units::RateStr {
            text: format!("{}bps", d.bottleneck.rate.value.bps() * 10),
            value: Rate(d.bottleneck.rate.value.bps() * 10),
        },
        delay: Duration::new("1ms"),
        queue: None,
        loss: None,
        loss_reverse: None,
        delay_reverse: None,
    };
    let access = d.access.clone().unwrap_or(access_default);
    check_link(&access, "topology.access")?;
    let min_extra = extra.iter().min().copied().unwrap_or(SimTime::ZERO);
    let (acc_f, acc_r) = access.delays();
    let (bn_f, bn_r) = d.bottleneck.delays();
    // Both directions of both access links and of the bottleneck, plus the smallest extra delay
    // (which the access link s<i> -- r0 carries each way).
    let rtt = SimTime(
        2 * (acc_f.as_nanos() + acc_r.as_nanos())
            + bn_f.as_nanos()
            + bn_r.as_nanos()
            + 2 * min_extra.as_nanos(),
    );
    let bq = match &d.bottleneck.queue {
        Some(q) => queue_from_spec(q, "topology.bottleneck.queue")?,
        None => default_queue(d.bottleneck.rate.value, rtt),
    };
    let aq = match &access.queue {
        Some(q) => queue_from_spec(q, "topology.access.queue")?,
        // Access links copy the bottleneck's buffer, not its AQM: a DropTail of the same size.
        None => bq.droptail_copy(),
    };
    let mut b = Builder {
        nodes: Vec::new(),
        links: Vec::new(),
    };
    let n = d.pairs as usize;
    for i in 0..n {
        b.node(format!("s{i}"), "host");
    }
    b.node("r0".into(), "router");
    b.node("r1".into(), "router");
    for i in 0..n {
        b.node(format!("d{i}"), "host");
    }
    for (i, e) in extra.iter().enumerate() {
        b.duplex_asym(
            &format!("s{i}"),
            "r0",
            access.rate.value,
            (acc_f + *e, acc_r + *e),
            &aq,
        );
    }
    b.duplex_asym("r0", "r1", d.bottleneck.rate.value, (bn_f, bn_r), &bq);
    for i in 0..n {
        b.duplex_asym(
            "r1",
            &format!("d{i}"),
            access.rate.value,
            (acc_f, acc_r),
            &aq,
        );
    }
    b.set_loss(
        "r0",
        "r1",
        d.bottleneck.loss,
        d.bottleneck.loss_reverse,
        "topology.bottleneck",
    )?;
    for i in 0..n {
        b.set_loss(
            &format!("s{i}"),
            "r0",
            access.loss,
            access.loss_reverse,
            "topology.access",
        )?;
    }
    let pairs = (0..n).map(|i| (format!("s{i}"), format!("d{i}"))).collect();
    let mut sites = Vec::new();
    if with_bg {
        b.node("bgl".into(), "host");
        b.node("bgr".into(), "host");
        b.duplex_asym("bgl", "r0", access.rate.value, (acc_f, acc_r), &aq);
        b.duplex_asym("r1", "bgr", access.rate.value, (acc_f, acc_r), &aq);
        sites.push(Site {
            left: "bgl".into(),
            right: "bgr".into(),
            rate_bps: d.bottleneck.rate.value.bps(),
        });
    }
    Ok((b, pairs, sites))
}

fn build_graph(g: &Graph) -> Result<Builder, ScenarioError> {
    let mut b = Builder {
        nodes: Vec::new(),
        links: Vec::new(),
    };
    // Names seen so far: the checks below stay linear in the size of the graph.
    let mut names: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let kind = n.kind.clone().unwrap_or_else(|| "host".into());
        if kind != "host" && kind != "router" {
            return Err(ScenarioError::invalid(
                format!("topology.nodes.{i}.kind"),
                format!("unknown node kind {kind:?}; allowed: \"host\", \"router\""),
            ));
        }
        if !names.insert(n.name.as_str()) {
            return Err(ScenarioError::invalid(
                format!("topology.nodes.{i}.name"),
                format!("duplicate node name {:?}", n.name),
            ));
        }
        b.node(n.name.clone(), &kind);
    }
    for (i, l) in g.links.iter().enumerate() {
        let path = format!("topology.links.{i}");
        for (k, end) in l.between.iter().enumerate() {
            if !names.contains(end.as_str()) {
                return Err(ScenarioError::invalid(
                    format!("{path}.between.{k}"),
                    format!("no node named {end:?}"),
                ));
            }
        }
        if l.between[0] == l.between[1] {
            return Err(ScenarioError::invalid(
                format!("{path}.between"),
                "a link needs two different nodes",
            ));
        }
        let spec = LinkSpec {
            rate: l.rate.clone(),
            delay: l.delay.clone(),
            queue: l.queue.clone(),
            loss: l.loss,
            loss_reverse: l.loss_reverse,
            delay_reverse: l.delay_reverse.clone(),
        };
        check_link(&spec, &path)?;
        let q = match &l.queue {
            Some(q) => queue_from_spec(q, &format!("{path}.queue"))?,
            None => default_queue(l.rate.value, SimTime::from_millis(100)),
        };
        b.duplex_asym(
            &l.between[0],
            &l.between[1],
            l.rate.value,
            spec.delays(),
            &q,
        );
        b.set_loss(&l.between[0], &l.between[1], l.loss, l.loss_reverse, &path)?;
    }
    if let Some(bn) = &g.bottleneck {
        if !b.links.iter().any(|l| &l.name == bn) {
            return Err(ScenarioError::invalid(
                "topology.bottleneck",
                format!("no link named {bn:?}; write it as \"a->b\""),
            ));
        }
    }
    Ok(b)
}

/// TCP settings with every default applied, layered built-in <- scenario <- group.
struct ResolvedTcp {
    cfg: TcpConfig,
    cc: String,
    cc_params: toml::Table,
    rwnd: Option<u64>,
    initial_ssthresh: Option<u32>,
}

fn resolve_tcp(layers: &[(&TcpSpec, String)]) -> Result<ResolvedTcp, ScenarioError> {
    let mut cfg = TcpConfig::default();
    let mut cc_name = "reno".to_string();
    let mut cc_path = "tcp.cc".to_string();
    // Where the parameters in force came from, for error messages (an algorithm's defaults
    // when no layer gave any after the one that chose it).
    let mut params_path = "tcp.cc_params".to_string();
    let mut params = toml::Table::new();
    let mut rwnd = None;
    let mut iss = None;
    // Where RACK / TLP were last set true explicitly (they need SACK; checked at the end).
    let mut rack_set: Option<String> = None;
    let mut tlp_set: Option<String> = None;
    let mut recovery_path = "tcp.recovery".to_string();
    // Where the header and min_rto in force were set, for checks made across fields at the end.
    let mut header_path = "tcp.header".to_string();
    let mut min_rto_path = "tcp.min_rto".to_string();
    for (spec, base) in layers {
        let p = |f: &str| {
            if base.is_empty() {
                f.to_string()
            } else {
                format!("{base}.{f}")
            }
        };
        if let Some(c) = &spec.cc {
            cc_name = c.clone();
            cc_path = p("cc");
            params_path = p("cc_params");
            params = toml::Table::new();
        }
        if let Some(t) = &spec.cc_params {
            params = t.clone();
            params_path = p("cc_params");
        }
        if let Some(r) = &spec.recovery {
            recovery_path = p("recovery");
            cfg.recovery = match r.as_str() {
                "sack" => Recovery::Sack,
                "newreno" => Recovery::NewReno,
                _ => {
                    return Err(ScenarioError::invalid(
                        p("recovery"),
                        format!("unknown recovery {r:?}; allowed: \"sack\", \"newreno\""),
                    ))
                }
            };
        }
        if let Some(m) = &spec.mss {
            let v = size_bytes_only(m, &p("mss"))?;
            if v == 0 || v > 65_000 {
                return Err(ScenarioError::invalid(
                    p("mss"),
                    "must be between 1B and 65000B",
                ));
            }
            cfg.mss = v as u32;
        }
        if let Some(h) = &spec.header {
            let v = size_bytes_only(h, &p("header"))?;
            if v > MAX_WIRE_PACKET {
                return Err(ScenarioError::invalid(
                    p("header"),
                    format!("{v} B: a packet, headers included, is at most {MAX_WIRE_PACKET} B"),
                ));
            }
            header_path = p("header");
            cfg.header_bytes = v as u32;
        }
        if let Some(w) = spec.initial_window {
            if w == 0 {
                return Err(ScenarioError::invalid(
                    p("initial_window"),
                    "must be at least 1 segment",
                ));
            }
            cfg.initial_window = w;
        }
        if let Some(s) = spec.initial_ssthresh {
            if s < 2 {
                return Err(ScenarioError::invalid(
                    p("initial_ssthresh"),
                    "must be at least 2 segments",
                ));
            }
            iss = Some(s);
            cfg.initial_ssthresh = s;
        }
        if let Some(d) = spec.delayed_ack {
            cfg.delayed_ack = d;
        }
        if let Some(d) = &spec.delack_timeout {
            cfg.delack_timeout = d.value;
        }
        if let Some(d) = &spec.min_rto {
            cfg.min_rto = rto_setting(d, &p("min_rto"))?;
            min_rto_path = p("min_rto");
        }
        if let Some(d) = &spec.initial_rto {
            cfg.initial_rto = rto_setting(d, &p("initial_rto"))?;
        }
        if let Some(d) = &spec.max_rto {
            cfg.max_rto = rto_setting(d, &p("max_rto"))?;
        }
        if let Some(r) = &spec.rwnd {
            if r == "auto" {
                rwnd = None;
            } else {
                let s: SizeStr = serde::Deserialize::deserialize(toml::Value::String(r.clone()))
                    .map_err(|e: toml::de::Error| {
                        ScenarioError::invalid(p("rwnd"), format!("\"auto\" or {}", e.message()))
                    })?;
                let b = s.bytes((cfg.mss) as u64);
                if b < cfg.mss as u64 {
                    return Err(ScenarioError::invalid(
                        p("rwnd"),
                        "must hold at least one segment",
                    ));
                }
                rwnd = Some(b);
            }
        }
        if let Some(x) = spec.restart_after_idle {
            cfg.restart_after_idle = x;
        }
        if let Some(x) = spec.ecn {
            cfg.ecn = x;
        }
        if let Some(x) = &spec.idle_restart {
            cfg.idle_restart = choice(
                x,
                IdleRestart::parse,
                IdleRestart::NAMES,
                &p("idle_restart"),
            )?;
        }
        if let Some(x) = spec.pacing {
            cfg.pacing = x;
        }
        if let Some(d) = spec.dupthresh {
            if d == 0 {
                return Err(ScenarioError::invalid(p("dupthresh"), "must be at least 1"));
            }
            cfg.dupthresh = d;
        }
        if let Some(g) = &spec.cwnd_growth {
            cfg.cwnd_growth = choice(g, CwndGrowth::parse, CwndGrowth::NAMES, &p("cwnd_growth"))?;
        }
        if let Some(r) = &spec.rto_estimator {
            cfg.rto_estimator = choice(
                r,
                RtoEstimator::parse,
                RtoEstimator::NAMES,
                &p("rto_estimator"),
            )?;
        }
        if let Some(j) = &spec.send_jitter {
            cfg.send_jitter = j.value;
        }
        if let Some(x) = spec.lost_retransmit {
            cfg.lost_retransmit = x;
        }
        if let Some(x) = spec.rack {
            cfg.rack = x;
            rack_set = x.then(|| p("rack"));
        }
        if let Some(x) = spec.tlp {
            cfg.tlp = x;
            tlp_set = x.then(|| p("tlp"));
        }
        if let Some(r) = &spec.rto_restart {
            cfg.rto_restart = choice(r, RtoRestart::parse, RtoRestart::NAMES, &p("rto_restart"))?;
        }
        if let Some(r) = &spec.cwnd_reduction {
            cfg.cwnd_reduction = choice(
                r,
                CwndReduction::parse,
                CwndReduction::NAMES,
                &p("cwnd_reduction"),
            )?;
        }
        if let Some(r) = &spec.rto_ssthresh {
            cfg.rto_ssthresh = choice(
                r,
                RtoSsthresh::parse,
                RtoSsthresh::NAMES,
                &p("rto_ssthresh"),
            )?;
        }
        if let Some(r) = &spec.rtt_samples {
            cfg.rtt_samples = choice(r, RttSamples::parse, RttSamples::NAMES, &p("rtt_samples"))?;
        }
        if let Some(r) = &spec.loss_state {
            cfg.loss_state = choice(r, LossState::parse, LossState::NAMES, &p("loss_state"))?;
        }
    }
    // RACK-TLP works on SACK information (RFC 8985 §2; Linux enables neither for a peer without
    // SACK). The defaults (on) quietly resolve to off with NewReno; asking for them is an error.
    if cfg.recovery == Recovery::NewReno {
        for (set, name) in [(&rack_set, "RACK"), (&tlp_set, "TLP")] {
            if let Some(path) = set {
                return Err(ScenarioError::invalid(
                    path.clone(),
                    format!(
                        "{name} (RFC 8985) needs SACK, but {recovery_path} = \"newreno\"; use \
                         recovery = \"sack\" or leave {name} off (it is off with NewReno)"
                    ),
                ));
            }
        }
        cfg.rack = false;
        cfg.tlp = false;
    }
    if cfg.min_rto > cfg.max_rto {
        return Err(ScenarioError::invalid(
            min_rto_path,
            "must not exceed tcp.max_rto",
        ));
    }
    if cfg.mss as u64 + cfg.header_bytes as u64 > MAX_WIRE_PACKET {
        return Err(ScenarioError::invalid(
            header_path,
            format!(
                "mss {} B + header {} B: a packet, headers included, is at most {MAX_WIRE_PACKET} B",
                cfg.mss, cfg.header_bytes
            ),
        ));
    }
    cc::by_name(&cc_name, &params).map_err(|e| {
        // An unknown name is reported where the name was given, bad parameters where they were
        // given; both exit with status 2.
        let path = match e {
            cc::CcError::UnknownAlgorithm { .. } => cc_path,
            cc::CcError::BadParams { .. } => params_path,
        };
        ScenarioError::invalid(path, e.to_string()).with_kind(ErrorKind::UnknownAlgorithm)
    })?;
    Ok(ResolvedTcp {
        cfg,
        cc: cc_name,
        cc_params: params,
        rwnd,
        initial_ssthresh: iss,
    })
}

/// An RTO setting (min, initial, max), at least [`MIN_RTO_SETTING`].
fn rto_setting(d: &Duration, path: &str) -> Result<SimTime, ScenarioError> {
    if d.value < MIN_RTO_SETTING {
        return Err(ScenarioError::invalid(
            path,
            format!(
                "{:?} is too short: a retransmission timer must be at least 1us (0 would fire \
                 again at the same instant forever)",
                d.text
            ),
        ));
    }
    Ok(d.value)
}

/// A named choice (`parse` returns None for unknown names); the error lists the allowed ones.
fn choice<T>(
    value: &str,
    parse: fn(&str) -> Option<T>,
    names: &str,
    path: &str,
) -> Result<T, ScenarioError> {
    parse(value).ok_or_else(|| {
        ScenarioError::invalid(path, format!("unknown value {value:?}; allowed: {names}"))
    })
}

fn is_true(b: &bool) -> bool {
    *b
}

fn is_rfc2861(s: &str) -> bool {
    s == "rfc2861"
}

fn is_new_data(s: &str) -> bool {
    s == "new-data"
}

fn is_linux(s: &str) -> bool {
    s == "linux"
}

pub(crate) fn size_bytes_only(s: &SizeStr, path: &str) -> Result<u64, ScenarioError> {
    match s.value {
        SizeSpec::Bytes(b) => Ok(b),
        SizeSpec::Packets(_) => Err(ScenarioError::invalid(
            path,
            "give this size in bytes (e.g. \"1460B\"), not packets",
        )),
    }
}

fn toml_to_json(t: &toml::Table) -> serde_json::Value {
    serde_json::to_value(t).unwrap_or(serde_json::Value::Null)
}

/// The engine's network for a plan's nodes and links; `seed` seeds the AQMs' random streams.
pub(crate) fn network_of(nodes: &[PlanNode], links: &[PlanLink], seed: u64) -> Network {
    let mut net = Network::new();
    for n in nodes {
        net.add_node(
            n.name.clone(),
            if n.kind == "router" {
                NodeKind::Router
            } else {
                NodeKind::Host
            },
        );
    }
    for l in links {
        let from = net.node_by_name(&l.from).expect("validated");
        let to = net.node_by_name(&l.to).expect("validated");
        let q: Box<dyn Queue> = l.queue.build(Rate(l.rate_bps), seed, &l.name);
        let id = net.add_link(from, to, Rate(l.rate_bps), SimTime(l.delay_ns), q);
        if l.loss > 0.0 {
            net.links[id as usize].set_loss(
                l.loss,
                RngStream::new(seed, &format!("link/{}/loss", l.name)),
            );
        }
    }
    net
}

/// Elaborate a scenario into a plan for `seed` (None = the scenario's seed, else 1).
/// The application fields of a flow group (CBR rate and packet, web load and model), checked.
struct AppFields {
    rate_bps: Option<u64>,
    packet_bytes: Option<u32>,
    web: Option<PlanWeb>,
    files: Option<PlanFiles>,
}

fn app_fields(
    g: &FlowGroup,
    gp: &str,
    kind: &str,
    tcp: &ResolvedTcp,
) -> Result<AppFields, ScenarioError> {
    let misplaced = |field: &str, owner: &str| {
        ScenarioError::invalid(
            format!("{gp}.{field}"),
            format!("only {owner} flows take `{field}`"),
        )
    };
    let mut out = AppFields {
        rate_bps: None,
        packet_bytes: None,
        web: None,
        files: None,
    };
    if kind != "cbr" {
        if g.rate.is_some() {
            return Err(misplaced("rate", "cbr"));
        }
        if g.packet.is_some() {
            return Err(misplaced("packet", "cbr"));
        }
    }
    if kind != "web" && kind != "files" && g.load.is_some() {
        return Err(misplaced("load", "web and files"));
    }
    if kind != "web" && g.web.is_some() {
        return Err(misplaced("web", "web"));
    }
    if kind != "files" && g.sizes.is_some() {
        return Err(misplaced("sizes", "files"));
    }
    // Web pages and files offer a load counted on the wire, like a CBR rate: payload plus one
    // header per full segment (partial last segments make it slightly more; ACKs go the other
    // way).
    let wire = (tcp.cfg.mss + tcp.cfg.header_bytes) as f64 / tcp.cfg.mss as f64;
    let load_bps = || -> Result<u64, ScenarioError> {
        let load = g.load.as_ref().ok_or_else(|| {
            ScenarioError::invalid(
                format!("{gp}.load"),
                format!("a {kind} flow needs an offered load, e.g. \"20Mbps\""),
            )
        })?;
        match load.value.bps() {
            0 => Err(ScenarioError::invalid(
                format!("{gp}.load"),
                "must be positive",
            )),
            b => Ok(b),
        }
    };
    match kind {
        "cbr" => {
            let rate = g.rate.as_ref().ok_or_else(|| {
                ScenarioError::invalid(
                    format!("{gp}.rate"),
                    "a cbr flow needs a rate, e.g. \"10Mbps\"",
                )
            })?;
            if rate.value.bps() == 0 {
                return Err(ScenarioError::invalid(
                    format!("{gp}.rate"),
                    "must be positive",
                ));
            }
            let packet = g.packet.as_ref().map_or(1500, |p| p.bytes(1500));
            if packet <= UDP_HEADER as u64 || packet > 65_535 {
                return Err(ScenarioError::invalid(
                    format!("{gp}.packet"),
                    format!("{packet} B: a datagram is more than its {UDP_HEADER}-byte headers and at most 65535 B"),
                ));
            }
            out.rate_bps = Some(rate.value.bps());
            out.packet_bytes = Some(packet as u32);
        }
        "web" => {
            let load = load_bps()?;
            let spec = g.web.clone().unwrap_or_default();
            let model =
                crate::web_spec::model(&spec).map_err(|e| e.within_path(&format!("{gp}.web")))?;
            let mean = model.mean_page_bytes().expect("validated");
            out.web = Some(PlanWeb {
                load_bps: load,
                page_rate_per_s: load as f64 / (8.0 * mean * wire),
                mean_page_bytes: mean,
                model: spec,
            });
        }
        "files" => {
            let load = load_bps()?;
            let spec = g.sizes.clone().unwrap_or_default();
            let sizes = crate::files_spec::sizes(Some(&spec), &format!("{gp}.sizes"))?;
            let mean = sizes.mean();
            out.files = Some(PlanFiles {
                load_bps: load,
                rate_per_s: load as f64 / (8.0 * mean * wire),
                mean_file_bytes: mean,
                sizes: spec,
            });
        }
        _ => {}
    }
    Ok(out)
}

/// Set every TCP field of plan flow `f` from `tcp` (relay segments; the other flows write the
/// same fields in their literal).
fn apply_tcp(f: &mut PlanFlow, tcp: &ResolvedTcp) {
    let c = &tcp.cfg;
    f.restart_after_idle = c.restart_after_idle;
    f.idle_restart = c.idle_restart.as_str().into();
    f.ecn = c.ecn;
    f.rtt_samples = c.rtt_samples.as_str().into();
    f.loss_state = c.loss_state.as_str().into();
    f.cc = tcp.cc.clone();
    f.cc_params = toml_to_json(&tcp.cc_params);
    f.recovery = match c.recovery {
        Recovery::Sack => "sack".into(),
        Recovery::NewReno => "newreno".into(),
    };
    f.mss = c.mss;
    f.header_bytes = c.header_bytes;
    f.initial_window = c.initial_window;
    f.initial_ssthresh = tcp.initial_ssthresh;
    f.delayed_ack = c.delayed_ack;
    f.delack_timeout_ns = c.delack_timeout.as_nanos();
    f.min_rto_ns = c.min_rto.as_nanos();
    f.initial_rto_ns = c.initial_rto.as_nanos();
    f.max_rto_ns = c.max_rto.as_nanos();
    f.pacing = c.pacing;
    f.dupthresh = c.dupthresh;
    f.cwnd_growth = c.cwnd_growth.as_str().into();
    f.rto_ssthresh = c.rto_ssthresh.as_str().into();
    f.rto_estimator = c.rto_estimator.as_str().into();
    f.send_jitter_ns = c.send_jitter.as_nanos();
    f.lost_retransmit = c.lost_retransmit;
    f.rack = c.rack;
    f.tlp = c.tlp;
    f.rto_restart = c.rto_restart.as_str().into();
    f.cwnd_reduction = c.cwnd_reduction.as_str().into();
    f.cc_table = tcp.cc_params.clone();
}

/// Random loss along a forward path: the links' losses combined (1 - prod(1 - loss)).
fn path_loss(links: &[PlanLink], path: &[u32]) -> f64 {
    1.0 - path
        .iter()
        .map(|&l| 1.0 - links[l as usize].loss)
        .product::<f64>()
}

/// What planning needs to know about the network (for relay segments' paths).
struct NetView<'a> {
    net: &'a Network,
    routes: &'a FoldedRoutes,
    links: &'a [PlanLink],
}

impl NetView<'_> {
    /// The round-trip propagation delay, slowest forward link, forward buffer bytes (with
    /// packets of `wire` bytes) and forward random loss of the path between two nodes; None
    /// without a route.
    fn path(&self, src: &str, dst: &str, wire: u64) -> Option<(u64, u64, u64, f64)> {
        let s = self.net.node_by_name(src)?;
        let d = self.net.node_by_name(dst)?;
        let fwd = self.routes.path(self.net, s, d)?;
        let rev = self.routes.path(self.net, d, s)?;
        let delay = fwd
            .iter()
            .chain(rev.iter())
            .map(|&l| self.net.links[l as usize].delay.as_nanos())
            .sum();
        let bn = fwd
            .iter()
            .map(|&l| self.net.links[l as usize].rate.bps())
            .min()
            .unwrap_or(0);
        let buffers = fwd
            .iter()
            .map(|&l| {
                let q = &self.links[l as usize].queue;
                q.limit_bytes.unwrap_or(q.limit_packets.unwrap_or(0) * wire)
            })
            .sum();
        Some((delay, bn, buffers, path_loss(self.links, &fwd)))
    }
}

/// A relay's depots and the resolved TCP of each of its segments.
type RelayHops = (Vec<String>, Vec<ResolvedTcp>);

/// Relay group `g`'s depots and per-segment TCP, checked; `tcp_layers` are the layers every
/// segment starts from (`[tcp]`, the group's `tcp`).
fn relay_hops(
    g: &FlowGroup,
    gp: &str,
    kind: &str,
    view: &NetView,
    tcp_layers: &[(&TcpSpec, String)],
) -> Result<Option<RelayHops>, ScenarioError> {
    if kind != "relay" {
        for (field, given) in [
            ("depots", g.depots.is_some()),
            ("depot_buffer", g.depot_buffer.is_some()),
            ("segments", g.segments.is_some()),
        ] {
            if given {
                return Err(ScenarioError::invalid(
                    format!("{gp}.{field}"),
                    format!("only relay flows take `{field}`; use kind = \"relay\""),
                ));
            }
        }
        return Ok(None);
    }
    let depots = g.depots.clone().unwrap_or_default();
    if depots.is_empty() {
        return Err(ScenarioError::invalid(
            format!("{gp}.depots"),
            "a relay needs at least one depot, e.g. depots = [\"d1\"] (without depots, use kind = \"file\" or \"bulk\")",
        ));
    }
    for (k, d) in depots.iter().enumerate() {
        if view.net.node_by_name(d).is_none() {
            return Err(ScenarioError::invalid(
                format!("{gp}.depots.{k}"),
                format!("no node named {d:?}"),
            ));
        }
        let again = depots[..k].contains(d)
            || g.src.as_deref() == Some(d.as_str())
            || g.dst.as_deref() == Some(d.as_str());
        if again {
            return Err(ScenarioError::invalid(
                format!("{gp}.depots.{k}"),
                format!("{d:?} appears twice in the chain (src, depots, dst must all differ)"),
            ));
        }
    }
    let n = depots.len() + 1;
    if let Some(segs) = &g.segments {
        if segs.len() != n {
            return Err(ScenarioError::invalid(
                format!("{gp}.segments"),
                format!(
                    "has {} tables but the chain has {n} segments ({} depots + 1); give one per segment, {{}} for none",
                    segs.len(),
                    depots.len()
                ),
            ));
        }
    }
    let mut tcps = Vec::with_capacity(n);
    for i in 0..n {
        let mut layers: Vec<(&TcpSpec, String)> = tcp_layers.to_vec();
        if let Some(segs) = &g.segments {
            layers.push((&segs[i], format!("{gp}.segments.{i}")));
        }
        tcps.push(resolve_tcp(&layers)?);
    }
    Ok(Some((depots, tcps)))
}

/// The plan flow of a relay from `src` to `dst` (a copy of `base`, the flow as the group
/// describes it) with one plan flow per segment.
#[allow(clippy::too_many_arguments)]
fn relay_flow(
    base: PlanFlow,
    g: &FlowGroup,
    gp: &str,
    depots: &[String],
    tcps: &[ResolvedTcp],
    view: &NetView,
    warnings: &mut Vec<String>,
) -> Result<PlanFlow, ScenarioError> {
    let mut chain = vec![base.src.clone()];
    chain.extend(depots.iter().cloned());
    chain.push(base.dst.clone());
    // The flow's endpoints are known only here when they come from `pairs`.
    for (k, d) in depots.iter().enumerate() {
        if *d == base.src || *d == base.dst {
            return Err(ScenarioError::invalid(
                format!("{gp}.depots.{k}"),
                format!("{d:?} is an end of the relay (src, depots, dst must all differ)"),
            ));
        }
    }
    let mut segments = Vec::with_capacity(tcps.len());
    for (i, tcp) in tcps.iter().enumerate() {
        let (src, dst) = (&chain[i], &chain[i + 1]);
        let wire = (tcp.cfg.mss + tcp.cfg.header_bytes) as u64;
        let Some((delay, bn, buffers, loss)) = view.path(src, dst, wire) else {
            return Err(ScenarioError::invalid(
                gp.to_string(),
                format!("no route between {src:?} and {dst:?} (relay segment {i}); add links that connect them"),
            )
            .with_kind(ErrorKind::Unroutable));
        };
        let bdp = (bn as f64 * delay as f64 * 1e-9 / 8.0).ceil() as u64;
        let rwnd = match tcp.rwnd {
            Some(r) => {
                if r < bdp && base.role == "main" {
                    let cap = r as f64 * 8.0 / (delay as f64 * 1e-9) / 1e6;
                    warnings.push(format!(
                        "flow {} segment {i} ({src}->{dst}): rwnd {r} B is below the segment's bandwidth-delay product {bdp} B; its goodput is limited to about {cap:.1} Mb/s",
                        base.id
                    ));
                }
                r
            }
            None => (2 * bdp + buffers).clamp(64 * 1024, MAX_RWND),
        };
        let mut seg = base.clone();
        seg.src = src.clone();
        seg.dst = dst.clone();
        seg.kind = "segment".into();
        apply_tcp(&mut seg, tcp);
        seg.rwnd_bytes = rwnd;
        seg.path_rtt_ns = delay;
        seg.path_bottleneck_bps = bn;
        seg.path_loss = loss;
        segments.push(seg);
    }
    // Each depot's buffer: given, or the larger receive window of its two segments.
    let mut buffers = Vec::with_capacity(depots.len());
    for j in 0..depots.len() {
        let (up, down) = (&segments[j], &segments[j + 1]);
        let least = 2 * up.mss.max(down.mss) as u64;
        let b = match g.depot_buffer.as_deref() {
            None | Some("auto") => up.rwnd_bytes.max(down.rwnd_bytes),
            Some(text) => {
                let s: SizeStr = serde::Deserialize::deserialize(toml::Value::String(text.into()))
                    .map_err(|e: toml::de::Error| {
                        ScenarioError::invalid(
                            format!("{gp}.depot_buffer"),
                            format!("\"auto\" or {}", e.message()),
                        )
                    })?;
                let b = s.bytes(down.mss as u64);
                if b < least {
                    return Err(ScenarioError::invalid(
                        format!("{gp}.depot_buffer"),
                        format!(
                            "{b} B: a depot buffer holds at least two segments ({least} B here); a smaller one could never pass a whole segment on"
                        ),
                    ));
                }
                b
            }
        };
        buffers.push(b);
    }
    let mut f = base;
    let first = &segments[0];
    apply_tcp(&mut f, &tcps[0]);
    f.rwnd_bytes = first.rwnd_bytes;
    f.cc = segments
        .iter()
        .map(|s| s.cc.as_str())
        .collect::<Vec<_>>()
        .join("/");
    f.path_rtt_ns = segments.iter().map(|s| s.path_rtt_ns).sum();
    f.path_bottleneck_bps = segments
        .iter()
        .map(|s| s.path_bottleneck_bps)
        .min()
        .unwrap_or(0);
    f.path_loss = 1.0 - segments.iter().map(|s| 1.0 - s.path_loss).product::<f64>();
    f.relay = Some(Box::new(PlanRelay {
        depots: depots.to_vec(),
        depot_buffer_bytes: buffers,
        segments,
    }));
    Ok(f)
}

pub fn elaborate(sc: &Scenario, seed: Option<u64>) -> Result<Plan, ScenarioError> {
    let seed = seed.or(sc.seed).unwrap_or(1);
    let duration = sc.duration.value;
    if duration == SimTime::ZERO {
        return Err(ScenarioError::invalid(
            "duration",
            "must be positive, e.g. \"60s\"",
        ));
    }
    let interval = sc
        .monitor
        .interval
        .as_ref()
        .map_or(SimTime::from_millis(100), |d| d.value);
    if interval == SimTime::ZERO {
        return Err(ScenarioError::invalid(
            "monitor.interval",
            "must be positive, e.g. \"100ms\"",
        ));
    }
    // Before anything is built: a scenario too large for its limits fails here, in
    // milliseconds, not by exhausting memory or time while building.
    crate::budget::check(sc, interval.as_nanos())?;
    // `[dccp]` is checked even when no flow uses DCCP, so a typo never waits for its first use.
    if sc.dccp.is_some() {
        crate::message_spec::dccp(sc.dccp.as_ref(), None, "flows")?;
    }
    let with_bg = sc.background.is_some();
    let (builder, pairs, bottleneck, sites) = match &sc.topology {
        Topology::Dumbbell(d) => {
            let (b, p, sites) = build_dumbbell(d, seed, with_bg)?;
            (b, Some(p), Some("r0->r1".to_string()), sites)
        }
        Topology::Graph(g) => (build_graph(g)?, None, g.bottleneck.clone(), Vec::new()),
        Topology::ParkingLot(p) => {
            let t = crate::parking_lot::build(p, seed)?;
            let sites = t
                .bg_sites
                .iter()
                .map(|b| Site {
                    left: b.left.clone(),
                    right: b.right.clone(),
                    rate_bps: b.rate_bps,
                })
                .collect();
            (t.builder, Some(t.pairs), Some(t.bottleneck), sites)
        }
        Topology::Ring(r) => {
            let t = crate::ring::build(r)?;
            (t.builder, Some(t.pairs), Some(t.bottleneck), Vec::new())
        }
    };
    if with_bg && sites.is_empty() {
        return Err(ScenarioError::invalid(
            "background",
            "this topology has no background sites; use a dumbbell or a parking lot, or write the background flows as [[flows]] with role = \"background\"",
        ));
    }
    let net = network_of(&builder.nodes, &builder.links, 0);
    let routes = FoldedRoutes::compute(&net);

    let default_group;
    let groups: &[FlowGroup] = if sc.flows.is_empty() {
        if pairs.is_none() {
            return Err(ScenarioError::invalid(
                "flows",
                "a graph scenario needs at least one [[flows]] with src and dst",
            ));
        }
        default_group = vec![FlowGroup::default()];
        &default_group
    } else {
        &sc.flows
    };
    // Background groups follow the user's, so the user's flows keep their ids.
    let bg_groups = match &sc.background {
        None => Vec::new(),
        Some(bg) => {
            let base_tcp = resolve_tcp(&[(&sc.tcp, "tcp".into())])?;
            let mss = base_tcp.cfg.mss as u64;
            let wire = (base_tcp.cfg.mss + base_tcp.cfg.header_bytes) as u64;
            let ack = base_tcp.cfg.header_bytes as u64;
            let rtt = |a: &str, b: &str| -> u64 {
                let (x, y) = (net.node_by_name(a), net.node_by_name(b));
                let (Some(x), Some(y)) = (x, y) else { return 0 };
                let hop = |l: &u32, bytes: u64| {
                    let link = &net.links[*l as usize];
                    link.delay.as_nanos() + bytes * 8 * 1_000_000_000 / link.rate.bps().max(1)
                };
                let fwd: u64 = routes
                    .path(&net, x, y)
                    .map_or(0, |p| p.iter().map(|l| hop(l, wire)).sum());
                let rev: u64 = routes
                    .path(&net, y, x)
                    .map_or(0, |p| p.iter().map(|l| hop(l, ack)).sum());
                fwd + rev
            };
            background::expand(bg, &sites, &rtt, mss, wire)?
        }
    };
    let n_user = groups.len();
    let groups: Vec<&FlowGroup> = groups.iter().chain(bg_groups.iter()).collect();

    let mut flows = Vec::new();
    let mut warnings = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        let gp = if gi < n_user {
            format!("flows.{gi}")
        } else {
            "background".to_string()
        };
        let role = g.role.clone().unwrap_or_else(|| "main".into());
        if role != "main" && role != "background" {
            return Err(ScenarioError::invalid(
                format!("{gp}.role"),
                format!("unknown role {role:?}; allowed: \"main\", \"background\""),
            ));
        }
        let mut layers: Vec<(&TcpSpec, String)> = vec![(&sc.tcp, "tcp".into())];
        if let Some(t) = &g.tcp {
            layers.push((t, format!("{gp}.tcp")));
        }
        let tcp = resolve_tcp(&layers)?;
        let kind = g.kind.clone().unwrap_or_else(|| "bulk".into());
        let app = app_fields(g, &gp, &kind, &tcp)?;
        let view = NetView {
            net: &net,
            routes: &routes,
            links: &builder.links,
        };
        let relay = relay_hops(g, &gp, &kind, &view, &layers)?;
        let transport = crate::message_spec::transport(&kind, g.transport.as_deref(), &gp)?;
        let voip = if kind == "voip" {
            Some(crate::message_spec::voip(g.voip.as_ref(), &gp)?)
        } else if g.voip.is_some() {
            return Err(ScenarioError::invalid(
                format!("{gp}.voip"),
                "only voip flows take `voip`",
            ));
        } else {
            None
        };
        let dccp = if transport == "dccp" {
            Some(crate::message_spec::dccp(
                sc.dccp.as_ref(),
                g.dccp.as_ref(),
                &gp,
            )?)
        } else if g.dccp.is_some() {
            return Err(ScenarioError::invalid(
                format!("{gp}.dccp"),
                "only flows with transport = \"dccp\" take `dccp`",
            ));
        } else {
            None
        };
        // Voice over TCP sends each voice packet as one segment (ns-2 `packetSize_`).
        let mut tcp = tcp;
        if let (Some(v), "tcp") = (&voip, transport) {
            tcp.cfg.mss = v.packet_bytes;
        }
        let usual = matches!(
            (kind.as_str(), transport),
            ("bulk" | "file" | "web" | "files" | "relay", "tcp") | ("cbr", "udp")
        );
        let plan_transport = (!usual).then(|| transport.to_string());
        let size = match (kind.as_str(), &g.size) {
            ("cbr" | "web" | "files" | "voip", None) => None,
            ("cbr" | "web" | "files" | "voip", Some(_)) => {
                return Err(ScenarioError::invalid(
                    format!("{gp}.size"),
                    format!("{kind} flows have no size; use kind = \"file\" for a finite transfer"),
                ))
            }
            ("bulk", None) => None,
            ("bulk", Some(_)) => {
                return Err(ScenarioError::invalid(
                    format!("{gp}.size"),
                    "bulk flows are infinite; use kind = \"file\" for a finite transfer",
                ))
            }
            ("relay", None) => None,
            ("file" | "relay", Some(s)) => {
                let b = s.bytes(tcp.cfg.mss as u64);
                if b == 0 {
                    return Err(ScenarioError::invalid(
                        format!("{gp}.size"),
                        "must be positive",
                    ));
                }
                Some(b)
            }
            ("file", None) => {
                return Err(ScenarioError::invalid(
                    format!("{gp}.size"),
                    "a file flow needs a size, e.g. \"10MB\"",
                ))
            }
            (k, _) => {
                return Err(ScenarioError::invalid(
                    format!("{gp}.kind"),
                    format!(
                        "unknown flow kind {k:?}; allowed: \"bulk\", \"file\", \"cbr\", \"web\", \"files\", \"voip\", \"relay\""
                    ),
                ))
            }
        };
        let endpoints: Vec<(String, String)> = match &pairs {
            Some(p) if g.src.is_none() && g.dst.is_none() => match &g.pairs {
                None => p.clone(),
                Some(PairSelect::All(s)) if s == "all" => p.clone(),
                Some(PairSelect::All(s)) => {
                    return Err(ScenarioError::invalid(
                        format!("{gp}.pairs"),
                        format!("{s:?}: write \"all\" or a list of pair indices"),
                    ))
                }
                Some(PairSelect::List(v)) => {
                    let mut out = Vec::new();
                    for &i in v {
                        let e = p.get(i as usize).ok_or_else(|| {
                            ScenarioError::invalid(
                                format!("{gp}.pairs"),
                                format!("pair {i} does not exist (pairs are 0..{})", p.len()),
                            )
                        })?;
                        out.push(e.clone());
                    }
                    out
                }
            },
            p => {
                if g.pairs.is_some() {
                    return Err(ScenarioError::invalid(
                        format!("{gp}.pairs"),
                        if p.is_some() {
                            "choose flows with `pairs` or with src and dst, not both"
                        } else {
                            "`pairs` is for dumbbells; give src and dst"
                        },
                    ));
                }
                let src = g.src.clone().ok_or_else(|| {
                    ScenarioError::invalid(format!("{gp}.src"), "missing: name the sending node")
                })?;
                let dst = g.dst.clone().ok_or_else(|| {
                    ScenarioError::invalid(format!("{gp}.dst"), "missing: name the receiving node")
                })?;
                for (f, n) in [("src", &src), ("dst", &dst)] {
                    if net.node_by_name(n).is_none() {
                        return Err(ScenarioError::invalid(
                            format!("{gp}.{f}"),
                            format!("no node named {n:?}"),
                        ));
                    }
                }
                if src == dst {
                    return Err(ScenarioError::invalid(
                        format!("{gp}.dst"),
                        "must differ from src",
                    ));
                }
                vec![(src, dst)]
            }
        };
        let count = g.count.unwrap_or(1);
        if count == 0 {
            return Err(ScenarioError::invalid(
                format!("{gp}.count"),
                "must be at least 1",
            ));
        }
        let start = g.start.as_ref().map_or(SimTime::ZERO, |d| d.value);
        let spread = g.start_spread.as_ref().map_or(SimTime::ZERO, |d| d.value);
        let stop = g.stop.as_ref().map(|d| d.value);
        if let Some(s) = stop {
            if s <= start {
                return Err(ScenarioError::invalid(
                    format!("{gp}.stop"),
                    "must be after start",
                ));
            }
        }
        for (src, dst) in endpoints {
            for _ in 0..count {
                let id = flows.len() as u32;
                let mut rng = RngStream::new(seed, &format!("flow/{id}/start"));
                let offset = if spread > SimTime::ZERO {
                    rng.below(spread.as_nanos())
                } else {
                    0
                };
                let s = net.node_by_name(&src).unwrap();
                let d = net.node_by_name(&dst).unwrap();
                // A relay's segments have their own paths (its flow is finished below).
                let direct = match &relay {
                    None => (routes.path(&net, s, d), routes.path(&net, d, s)),
                    Some(_) => (Some(Vec::new()), Some(Vec::new())),
                };
                let (Some(fwd), Some(rev)) = direct else {
                    return Err(ScenarioError::invalid(
                        gp.clone(),
                        format!(
                            "no route between {src:?} and {dst:?}; add links that connect them"
                        ),
                    )
                    .with_kind(ErrorKind::Unroutable));
                };
                let delay: u64 = fwd
                    .iter()
                    .chain(rev.iter())
                    .map(|&l| net.links[l as usize].delay.as_nanos())
                    .sum();
                let bn = fwd
                    .iter()
                    .map(|&l| net.links[l as usize].rate.bps())
                    .min()
                    .unwrap_or(0);
                let wire = (tcp.cfg.mss + tcp.cfg.header_bytes) as u64;
                let buffers: u64 = fwd
                    .iter()
                    .map(|&l| {
                        let q = &builder.links[l as usize].queue;
                        q.limit_bytes.unwrap_or(q.limit_packets.unwrap_or(0) * wire)
                    })
                    .sum();
                let bdp = (bn as f64 * delay as f64 * 1e-9 / 8.0).ceil() as u64;
                let rwnd = match tcp.rwnd {
                    Some(r) => {
                        if r < bdp && role == "main" {
                            let cap = r as f64 * 8.0 / (delay as f64 * 1e-9) / 1e6;
                            warnings.push(format!(
                                "flow {id} ({src}->{dst}): rwnd {r} B is below the path's bandwidth-delay product {bdp} B; goodput is limited to about {cap:.1} Mb/s"
                            ));
                        }
                        r
                    }
                    None => (2 * bdp + buffers).clamp(64 * 1024, MAX_RWND),
                };
                let flow = PlanFlow {
                    id,
                    src: src.clone(),
                    dst: dst.clone(),
                    kind: kind.clone(),
                    role: role.clone(),
                    rate_bps: app.rate_bps,
                    packet_bytes: app.packet_bytes,
                    web: app.web.clone(),
                    files: app.files.clone(),
                    voip: voip.clone(),
                    transport: plan_transport.clone(),
                    dccp: dccp.clone(),
                    relay: None,
                    restart_after_idle: tcp.cfg.restart_after_idle,
                    idle_restart: tcp.cfg.idle_restart.as_str().into(),
                    ecn: tcp.cfg.ecn,
                    rtt_samples: tcp.cfg.rtt_samples.as_str().into(),
                    loss_state: tcp.cfg.loss_state.as_str().into(),
                    start_ns: start.as_nanos() + offset,
                    stop_ns: stop.map(|s| s.as_nanos()),
                    size_bytes: size,
                    // A datagram flow has no congestion control; a DCCP flow's is its CCID.
                    cc: match (transport, &dccp) {
                        ("udp", _) => "udp".into(),
                        (_, Some(d)) => format!("ccid{}", d.ccid),
                        _ => tcp.cc.clone(),
                    },
                    cc_params: toml_to_json(&tcp.cc_params),
                    recovery: match tcp.cfg.recovery {
                        Recovery::Sack => "sack".into(),
                        Recovery::NewReno => "newreno".into(),
                    },
                    mss: tcp.cfg.mss,
                    header_bytes: tcp.cfg.header_bytes,
                    initial_window: tcp.cfg.initial_window,
                    initial_ssthresh: tcp.initial_ssthresh,
                    delayed_ack: tcp.cfg.delayed_ack,
                    delack_timeout_ns: tcp.cfg.delack_timeout.as_nanos(),
                    min_rto_ns: tcp.cfg.min_rto.as_nanos(),
                    initial_rto_ns: tcp.cfg.initial_rto.as_nanos(),
                    max_rto_ns: tcp.cfg.max_rto.as_nanos(),
                    rwnd_bytes: rwnd,
                    pacing: tcp.cfg.pacing,
                    dupthresh: tcp.cfg.dupthresh,
                    cwnd_growth: tcp.cfg.cwnd_growth.as_str().into(),
                    rto_ssthresh: tcp.cfg.rto_ssthresh.as_str().into(),
                    rto_estimator: tcp.cfg.rto_estimator.as_str().into(),
                    send_jitter_ns: tcp.cfg.send_jitter.as_nanos(),
                    lost_retransmit: tcp.cfg.lost_retransmit,
                    rack: tcp.cfg.rack,
                    tlp: tcp.cfg.tlp,
                    rto_restart: tcp.cfg.rto_restart.as_str().into(),
                    cwnd_reduction: tcp.cfg.cwnd_reduction.as_str().into(),
                    path_rtt_ns: delay,
                    path_bottleneck_bps: bn,
                    path_loss: path_loss(&builder.links, &fwd),
                    group: gi,
                    cc_table: tcp.cc_params.clone(),
                };
                flows.push(match &relay {
                    None => flow,
                    Some((depots, tcps)) => {
                        relay_flow(flow, g, &gp, depots, tcps, &view, &mut warnings)?
                    }
                });
            }
        }
    }
    let defaults = Limits::default();
    let node_names: Vec<&str> = builder.nodes.iter().map(|n| n.name.as_str()).collect();
    let testbed = sc
        .testbed
        .as_ref()
        .map(|t| t.resolve(&node_names))
        .transpose()?;
    Ok(Plan {
        name: sc.name.clone().unwrap_or_else(|| "scenario".into()),
        seed,
        duration_ns: duration.as_nanos(),
        nodes: builder.nodes,
        links: builder.links,
        flows,
        monitor: PlanMonitor {
            interval_ns: interval.as_nanos(),
        },
        limits: PlanLimits {
            max_events: sc.limits.max_events.unwrap_or(defaults.max_events),
            max_packets: sc.limits.max_packets.unwrap_or(defaults.max_packets),
        },
        bottleneck,
        background: sc.background.as_ref().map(|b| {
            let m = b.mix.clone().unwrap_or(background::DEFAULT_MIX);
            PlanBackground {
                load: b.load,
                cbr: m.cbr,
                ftp: m.ftp,
                web: m.web,
            }
        }),
        warnings,
        testbed,
    })
}

impl PlanFlow {
    /// The transport's settings for this flow (or relay segment).
    pub fn tcp_config(&self) -> TcpConfig {
        let f = self;
        TcpConfig {
            mss: f.mss,
            header_bytes: f.header_bytes,
            initial_window: f.initial_window,
            initial_ssthresh: f.initial_ssthresh.unwrap_or(u32::MAX),
            recovery: if f.recovery == "newreno" {
                Recovery::NewReno
            } else {
                Recovery::Sack
            },
            dupthresh: f.dupthresh,
            min_rto: SimTime(f.min_rto_ns),
            max_rto: SimTime(f.max_rto_ns),
            initial_rto: SimTime(f.initial_rto_ns),
            delayed_ack: f.delayed_ack,
            delack_timeout: SimTime(f.delack_timeout_ns),
            rwnd_bytes: f.rwnd_bytes,
            pacing: f.pacing,
            max_sack_blocks: 3,
            cwnd_growth: CwndGrowth::parse(&f.cwnd_growth).expect("validated"),
            rto_ssthresh: RtoSsthresh::parse(&f.rto_ssthresh).expect("validated"),
            rto_estimator: RtoEstimator::parse(&f.rto_estimator).expect("validated"),
            send_jitter: SimTime(f.send_jitter_ns),
            lost_retransmit: f.lost_retransmit,
            rack: f.rack,
            tlp: f.tlp,
            rto_restart: RtoRestart::parse(&f.rto_restart).expect("validated"),
            cwnd_reduction: CwndReduction::parse(&f.cwnd_reduction).expect("validated"),
            restart_after_idle: f.restart_after_idle,
            idle_restart: IdleRestart::parse(&f.idle_restart).expect("validated"),
            ecn: f.ecn,
            rtt_samples: RttSamples::parse(&f.rtt_samples).expect("validated"),
            loss_state: LossState::parse(&f.loss_state).expect("validated"),
        }
    }
}

impl Plan {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("plan serialises")
    }

    /// Build the simulation this plan describes.
    pub fn build(&self) -> Result<Simulation, SimError> {
        let net = network_of(&self.nodes, &self.links, self.seed);
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let cfg = f.tcp_config();
                FlowSpec {
                    src: net.node_by_name(&f.src).expect("validated"),
                    dst: net.node_by_name(&f.dst).expect("validated"),
                    app: match f.kind.as_str() {
                        _ if f.kind == "voip" || f.transport.is_some() => {
                            let transport = f.transport.as_deref().unwrap_or("udp");
                            let dccp_header = f.dccp.as_ref().map_or(0, |d| d.header_bytes);
                            let header = match transport {
                                "dccp" => dccp_header,
                                _ => crate::message_spec::UDP_MESSAGE_HEADER,
                            };
                            AppSpec::Message {
                                source: crate::message_spec::source(
                                    &f.kind,
                                    f.voip.as_ref(),
                                    f.rate_bps.zip(f.packet_bytes),
                                    |wire| wire.saturating_sub(header).max(1),
                                    self.seed,
                                    f.id,
                                ),
                                transport: crate::message_spec::transport_spec(
                                    transport,
                                    f.dccp.as_ref(),
                                ),
                                cc: (transport == "tcp").then(|| {
                                    cc::by_name(&f.cc, &f.cc_table)
                                        .expect("validated at elaboration")
                                }),
                            }
                        }
                        "cbr" => AppSpec::Cbr {
                            rate_bps: f.rate_bps.expect("validated"),
                            packet_bytes: f.packet_bytes.expect("validated"),
                            header_bytes: UDP_HEADER,
                        },
                        "web" => {
                            let w = f.web.as_ref().expect("validated");
                            let model = crate::web_spec::model(&w.model).expect("validated");
                            let generator = model.generator().expect("validated");
                            let (name, table) = (f.cc.clone(), f.cc_table.clone());
                            AppSpec::Web {
                                pages: Box::new(PoissonPages::new(
                                    generator,
                                    w.page_rate_per_s,
                                    self.seed,
                                    &f.id.to_string(),
                                )),
                                new_cc: Box::new(move || {
                                    cc::by_name(&name, &table).expect("validated at elaboration")
                                }),
                            }
                        }
                        "files" => {
                            let fl = f.files.as_ref().expect("validated");
                            let sizes =
                                crate::files_spec::sizes(Some(&fl.sizes), "").expect("validated");
                            let (name, table) = (f.cc.clone(), f.cc_table.clone());
                            AppSpec::Web {
                                pages: Box::new(PoissonFiles::new(
                                    sizes,
                                    fl.rate_per_s,
                                    self.seed,
                                    &f.id.to_string(),
                                )),
                                new_cc: Box::new(move || {
                                    cc::by_name(&name, &table).expect("validated at elaboration")
                                }),
                            }
                        }
                        "relay" => {
                            let r = f.relay.as_ref().expect("validated");
                            AppSpec::Relay(RelaySpec {
                                hops: r
                                    .segments
                                    .iter()
                                    .map(|s| RelayHop {
                                        src: net.node_by_name(&s.src).expect("validated"),
                                        dst: net.node_by_name(&s.dst).expect("validated"),
                                        tcp: s.tcp_config(),
                                        cc: Some(
                                            cc::by_name(&s.cc, &s.cc_table)
                                                .expect("validated at elaboration"),
                                        ),
                                        cc_name: s.cc.clone(),
                                    })
                                    .collect(),
                                buffers: r.depot_buffer_bytes.clone(),
                                total: f.size_bytes,
                            })
                        }
                        _ => AppSpec::Tcp {
                            app: match f.size_bytes {
                                Some(b) => Application::File { bytes: b },
                                None => Application::Bulk,
                            },
                            cc: Some(
                                cc::by_name(&f.cc, &f.cc_table).expect("validated at elaboration"),
                            ),
                        },
                    },
                    schedule: Schedule {
                        start: SimTime(f.start_ns),
                        stop: f.stop_ns.map(SimTime),
                    },
                    tcp: cfg,
                    cc_name: f.cc.clone(),
                    seed: self.seed,
                    role: f.role.clone(),
                }
            })
            .collect();
        let limits = Limits {
            max_events: self.limits.max_events,
            max_packets: self.limits.max_packets,
        };
        Simulation::new(
            net,
            flows,
            SimTime(self.duration_ns),
            SimTime(self.monitor.interval_ns),
            limits,
        )
    }
}
