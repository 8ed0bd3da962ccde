//! Active queue management in scenario files: the AQM fields of a `queue = { kind = ..., ... }`
//! table, checked per discipline, resolved against the link's rate into explicit plan values, and
//! built into the engine's queue objects.
//!
//! RED defaults when a field is left out follow Adaptive RED's automatic settings (S. Floyd,
//! R. Gummadi, S. Shenker, "Adaptive RED", 2001, §5): with C the link's rate in packets of
//! `mean_packet` bytes per second and a target queueing delay of 5 ms, min_th = max(5, 0.005·C/2)
//! (max_th / 3 when only max_th is given), max_th = 3·min_th, w_q = 1 − exp(−1/C); max_p = 0.1
//! (ns-2's `linterm_` 10); gentle on; ns-2's `wait_` spacing.

use crate::error::ScenarioError;
use crate::schema::QueueSpec;
use fatpipe_core::units::SizeSpec;
use fatpipe_core::{Rate, RngStream};
use fatpipe_net::queue::droptail::{DropTail, Limit};
use fatpipe_net::queue::red::{AdaptiveParams, Red, RedParams};
use fatpipe_net::Queue;
use serde::Serialize;

/// Target queueing delay of RED's automatic thresholds (Adaptive RED §5: 5 ms).
const RED_TARGET_DELAY_S: f64 = 0.005;
/// Smallest automatic min_th (Adaptive RED §5, ns-2 `thresh_` 0 → 5 packets).
const RED_MIN_TH_FLOOR: f64 = 5.0;
/// Default max_p (ns-2 `linterm_` 10; Floyd & Jacobson suggest 0.02–0.1, Floyd's 1997 notes 0.1).
const RED_DEFAULT_MAX_P: f64 = 0.1;
/// Default mean packet for RED's byte mode and idle correction when the scenario gives none.
const RED_DEFAULT_MEAN_PACKET: u32 = 1500;

/// The AQM part of a plan queue, with every value explicit.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanAqm {
    Red(PlanRed),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanRed {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    /// "packets" or "bytes".
    pub mode: String,
    pub mean_packet_bytes: u32,
    pub wait: bool,
    pub ecn: bool,
    pub adaptive: bool,
}

/// What a scenario asked of an AQM, before the link's rate fills the gaps.
#[derive(Clone, Debug, PartialEq)]
pub enum AqmRequest {
    Red {
        min_th: Option<f64>,
        max_th: Option<f64>,
        max_p: Option<f64>,
        w_q: Option<f64>,
        gentle: bool,
        bytes: bool,
        mean_packet_bytes: u32,
        wait: bool,
        ecn: bool,
        adaptive: bool,
    },
}

/// The kinds a queue table may name.
pub const QUEUE_KINDS: &str = "\"droptail\", \"red\"";

/// Fields each kind accepts (besides `kind` and `limit`), for the "does not take" error.
fn fields_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "red" => &[
            "min_th",
            "max_th",
            "max_p",
            "w_q",
            "gentle",
            "mode",
            "mean_packet",
            "wait",
            "ecn",
            "adaptive",
        ],
        _ => &[],
    }
}

/// The AQM fields present in `spec`, by name.
fn given_fields(spec: &QueueSpec) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut add = |present: bool, name: &'static str| {
        if present {
            v.push(name)
        }
    };
    add(spec.min_th.is_some(), "min_th");
    add(spec.max_th.is_some(), "max_th");
    add(spec.max_p.is_some(), "max_p");
    add(spec.w_q.is_some(), "w_q");
    add(spec.gentle.is_some(), "gentle");
    add(spec.mode.is_some(), "mode");
    add(spec.mean_packet.is_some(), "mean_packet");
    add(spec.wait.is_some(), "wait");
    add(spec.ecn.is_some(), "ecn");
    add(spec.adaptive.is_some(), "adaptive");
    v
}

/// Check the AQM fields of `spec` (at `path`) and return what they ask for.
pub fn aqm_request(spec: &QueueSpec, path: &str) -> Result<Option<AqmRequest>, ScenarioError> {
    let kind = spec.kind.as_str();
    if !matches!(kind, "droptail" | "red") {
        return Err(ScenarioError::invalid(
            format!("{path}.kind"),
            format!("unknown queue kind {kind:?}; allowed: {QUEUE_KINDS}"),
        ));
    }
    let allowed = fields_of(kind);
    if let Some(f) = given_fields(spec)
        .into_iter()
        .find(|f| !allowed.contains(f))
    {
        return Err(ScenarioError::invalid(
            format!("{path}.{f}"),
            format!("a {kind:?} queue does not take `{f}`; remove it or choose a queue kind that uses it"),
        ));
    }
    match kind {
        "red" => red_request(spec, path).map(Some),
        _ => Ok(None),
    }
}

fn red_request(spec: &QueueSpec, path: &str) -> Result<AqmRequest, ScenarioError> {
    let bytes = match spec.mode.as_deref() {
        None | Some("packets") => false,
        Some("bytes") => true,
        Some(m) => {
            return Err(ScenarioError::invalid(
                format!("{path}.mode"),
                format!("unknown RED mode {m:?}; allowed: \"packets\", \"bytes\""),
            ))
        }
    };
    let mean_packet_bytes = match &spec.mean_packet {
        None => RED_DEFAULT_MEAN_PACKET,
        Some(s) => match s.value {
            SizeSpec::Bytes(b) if b > 0 && b <= u32::MAX as u64 => b as u32,
            _ => {
                return Err(ScenarioError::invalid(
                    format!("{path}.mean_packet"),
                    "give the mean packet size in bytes, e.g. \"1500B\"",
                ))
            }
        },
    };
    let r = AqmRequest::Red {
        min_th: spec.min_th,
        max_th: spec.max_th,
        max_p: spec.max_p,
        w_q: spec.w_q,
        gentle: spec.gentle.unwrap_or(true),
        bytes,
        mean_packet_bytes,
        wait: spec.wait.unwrap_or(true),
        ecn: spec.ecn.unwrap_or(false),
        adaptive: spec.adaptive.unwrap_or(false),
    };
    // Check what can be checked before the rate is known (the rest after resolution).
    let PlanAqm::Red(probe) = resolve(&r, Rate(1_000_000_000));
    red_params(&probe, Limit::Packets(1))
        .validate()
        .map_err(|(field, why)| {
            ScenarioError::invalid(format!("{path}.{field}"), format!("RED {field} {why}"))
        })?;
    Ok(r)
}

/// Fill a request's gaps from the link's rate.
pub fn resolve(r: &AqmRequest, rate: Rate) -> PlanAqm {
    match *r {
        AqmRequest::Red {
            min_th,
            max_th,
            max_p,
            w_q,
            gentle,
            bytes,
            mean_packet_bytes,
            wait,
            ecn,
            adaptive,
        } => {
            let c = rate.bps() as f64 / (8.0 * mean_packet_bytes as f64);
            // Only max_th given: min_th = max_th / 3 (the automatic ratio read the other way), so
            // the pair stays ordered at any link rate.
            let min_th = min_th.unwrap_or_else(|| match max_th {
                Some(m) => m / 3.0,
                None => (RED_TARGET_DELAY_S * c / 2.0).max(RED_MIN_TH_FLOOR),
            });
            PlanAqm::Red(PlanRed {
                min_th,
                max_th: max_th.unwrap_or(3.0 * min_th),
                max_p: max_p.unwrap_or(RED_DEFAULT_MAX_P),
                w_q: w_q.unwrap_or_else(|| 1.0 - (-1.0 / c.max(1.0)).exp()),
                gentle,
                mode: if bytes { "bytes" } else { "packets" }.into(),
                mean_packet_bytes,
                wait,
                ecn,
                adaptive,
            })
        }
    }
}

fn red_params(r: &PlanRed, limit: Limit) -> RedParams {
    RedParams {
        limit,
        min_th: r.min_th,
        max_th: r.max_th,
        max_p: r.max_p,
        w_q: r.w_q,
        gentle: r.gentle,
        bytes: r.mode == "bytes",
        mean_pktsize: r.mean_packet_bytes,
        wait: r.wait,
        ecn: r.ecn,
        adaptive: r.adaptive.then(AdaptiveParams::default),
    }
}

/// The engine's queue for a plan link. `seed` and `link` name the AQM's random stream
/// (`queue/<link>/<kind>`), independent of every other random choice.
pub fn build_queue(
    aqm: Option<&PlanAqm>,
    limit: Limit,
    rate: Rate,
    seed: u64,
    link: &str,
) -> Box<dyn Queue> {
    match aqm {
        None => Box::new(DropTail::new(limit)),
        Some(PlanAqm::Red(r)) => Box::new(Red::new(
            red_params(r, limit),
            rate.bps(),
            RngStream::new(seed, &format!("queue/{link}/red")),
        )),
    }
}
