//! Active queue management in scenario files: the AQM fields of a `queue = { kind = ..., ... }`
//! table, checked per discipline, resolved against the link's rate into explicit plan values, and
//! built into the engine's queue objects.
//!
//! RED defaults when a field is left out follow Adaptive RED's automatic settings (S. Floyd,
//! R. Gummadi, S. Shenker, "Adaptive RED", 2001, §5): with C the link's rate in packets of
//! `mean_packet` bytes per second and a target queueing delay of 5 ms, min_th = max(5, 0.005·C/2)
//! (max_th / 3 when only max_th is given), max_th = 3·min_th, w_q = 1 − exp(−1/C); max_p = 0.1
//! (ns-2's `linterm_` 10); gentle on; ns-2's `wait_` spacing.
//!
//! CoDel (RFC 8289), PIE (RFC 8033) and FQ-CoDel (RFC 8290) take their RFCs' defaults, which are
//! times and sizes valid at any rate (CoDel's MTU test covers slow links), so nothing is sized
//! from the link; each constant's source is in its discipline's file in `fatpipe-net`. The H2
//! controller (seed 003, Algorithm 1) defaults to the paper's coefficients at 8333 Hz and needs
//! its equilibrium q0, p0; the PI controller (Hollot et al. 2001) defaults to ns-2's a, b, q_ref at
//! Hollot's 160 Hz. Their fields are named as `fatpipe.models`' controller dicts, so a designed
//! dict drops into `queue = {...}`; a `design = {...}` table is expanded by the Python front end
//! and rejected here.

use crate::error::ScenarioError;
use crate::schema::QueueSpec;
use fatpipe_core::units::SizeSpec;
use fatpipe_core::SimTime;
use fatpipe_core::{Rate, RngStream};
use fatpipe_net::queue::droptail::{DropTail, Limit};
use fatpipe_net::queue::pie::DelayEstimator;
use fatpipe_net::queue::red::{AdaptiveParams, Red, RedParams};
use fatpipe_net::queue::{
    CoDel, CoDelParams, FqCoDel, FqCoDelParams, H2Params, Pi, PiParams, Pie, PieParams, H2,
};
use fatpipe_net::Queue;
use serde::{Deserialize, Serialize};

/// Target queueing delay of RED's automatic thresholds (Adaptive RED §5: 5 ms).
const RED_TARGET_DELAY_S: f64 = 0.005;
/// Smallest automatic min_th (Adaptive RED §5, ns-2 `thresh_` 0 → 5 packets).
const RED_MIN_TH_FLOOR: f64 = 5.0;
/// Default max_p (ns-2 `linterm_` 10; Floyd & Jacobson suggest 0.02–0.1, Floyd's 1997 notes 0.1).
const RED_DEFAULT_MAX_P: f64 = 0.1;
/// Default mean packet for RED's byte mode and idle correction when the scenario gives none.
const RED_DEFAULT_MEAN_PACKET: u32 = 1500;

/// The AQM part of a plan queue, with every value explicit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanAqm {
    Red(PlanRed),
    Codel(PlanCodel),
    Pie(PlanPie),
    FqCodel(PlanFqCodel),
    H2(PlanH2),
    Pi(PlanPi),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanCodel {
    pub target_ns: u64,
    pub interval_ns: u64,
    pub mtu_bytes: u32,
    pub ecn: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFqCodel {
    pub flows: u32,
    pub quantum_bytes: u32,
    pub target_ns: u64,
    pub interval_ns: u64,
    pub mtu_bytes: u32,
    pub ecn: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanPie {
    pub target_ns: u64,
    pub t_update_ns: u64,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst_ns: u64,
    pub ecn: bool,
    pub mark_ecnth: f64,
    pub derandomize: bool,
    pub cap_drop: bool,
    /// "timestamp" or "dq_rate".
    pub estimator: String,
    pub dq_threshold_bytes: u64,
    pub mean_packet_bytes: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanH2 {
    pub sample_hz: f64,
    pub q0: f64,
    pub p0: f64,
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub e: f64,
    pub ecn: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanPi {
    pub sample_hz: f64,
    pub q_ref: f64,
    pub p0: f64,
    pub a: f64,
    pub b: f64,
    pub ecn: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// A discipline whose values do not depend on the link (every one but RED).
    Fixed(PlanAqm),
}

/// The kinds a queue table may name.
pub const QUEUE_KINDS: &str =
    "\"droptail\", \"red\", \"codel\", \"pie\", \"fq_codel\", \"h2\", \"pi\"";

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
        "codel" => &["target", "interval", "mtu", "ecn"],
        "fq_codel" => &["target", "interval", "mtu", "ecn", "flows", "quantum"],
        "pie" => &[
            "target",
            "t_update",
            "alpha",
            "beta",
            "max_burst",
            "ecn",
            "mark_ecnth",
            "derandomize",
            "cap_drop",
            "estimator",
            "dq_threshold",
            "mean_packet",
        ],
        "h2" => &[
            "sample_hz",
            "q0",
            "p0",
            "a",
            "b",
            "c",
            "d",
            "e",
            "ecn",
            "design",
        ],
        "pi" => &["sample_hz", "q_ref", "p0", "a", "b", "ecn", "design"],
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
    add(spec.target.is_some(), "target");
    add(spec.interval.is_some(), "interval");
    add(spec.mtu.is_some(), "mtu");
    add(spec.flows.is_some(), "flows");
    add(spec.quantum.is_some(), "quantum");
    add(spec.t_update.is_some(), "t_update");
    add(spec.alpha.is_some(), "alpha");
    add(spec.beta.is_some(), "beta");
    add(spec.max_burst.is_some(), "max_burst");
    add(spec.mark_ecnth.is_some(), "mark_ecnth");
    add(spec.derandomize.is_some(), "derandomize");
    add(spec.cap_drop.is_some(), "cap_drop");
    add(spec.estimator.is_some(), "estimator");
    add(spec.dq_threshold.is_some(), "dq_threshold");
    add(spec.sample_hz.is_some(), "sample_hz");
    add(spec.q0.is_some(), "q0");
    add(spec.p0.is_some(), "p0");
    add(spec.q_ref.is_some(), "q_ref");
    add(spec.a.is_some(), "a");
    add(spec.b.is_some(), "b");
    add(spec.c.is_some(), "c");
    add(spec.d.is_some(), "d");
    add(spec.e.is_some(), "e");
    add(spec.design.is_some(), "design");
    v
}

/// Check the AQM fields of `spec` (at `path`) and return what they ask for.
pub fn aqm_request(spec: &QueueSpec, path: &str) -> Result<Option<AqmRequest>, ScenarioError> {
    let kind = spec.kind.as_str();
    if !matches!(
        kind,
        "droptail" | "red" | "codel" | "pie" | "fq_codel" | "h2" | "pi"
    ) {
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
    if spec.design.is_some() {
        return Err(ScenarioError::invalid(
            format!("{path}.design"),
            "design = {...} is expanded by the Python front end; give the coefficients a..e, q0, \
             p0 or run through fatpipe (see docs/aqm.md)",
        ));
    }
    let limit = Limit::Packets(1); // the limit plays no part in the checks below
    let fixed = match kind {
        "red" => return red_request(spec, path).map(Some),
        "codel" => {
            let p = CoDelParams {
                target: duration_or(&spec.target, SimTime::from_millis(5)),
                interval: duration_or(&spec.interval, SimTime::from_millis(100)),
                mtu: bytes_or(spec.mtu.as_ref(), path, "mtu", 1500)?,
                ecn: spec.ecn.unwrap_or(false),
                ..CoDelParams::rfc8289(limit)
            };
            p.validate().map_err(|e| named(path, "CoDel", e))?;
            PlanAqm::Codel(PlanCodel {
                target_ns: p.target.as_nanos(),
                interval_ns: p.interval.as_nanos(),
                mtu_bytes: p.mtu,
                ecn: p.ecn,
            })
        }
        "fq_codel" => {
            let d = FqCoDelParams::rfc8290(limit);
            let p = FqCoDelParams {
                flows: spec.flows.unwrap_or(d.flows),
                quantum: bytes_or(spec.quantum.as_ref(), path, "quantum", d.quantum)?,
                target: duration_or(&spec.target, d.target),
                interval: duration_or(&spec.interval, d.interval),
                mtu: bytes_or(spec.mtu.as_ref(), path, "mtu", d.mtu)?,
                ecn: spec.ecn.unwrap_or(false),
                ..d
            };
            p.validate().map_err(|e| named(path, "FQ-CoDel", e))?;
            PlanAqm::FqCodel(PlanFqCodel {
                flows: p.flows,
                quantum_bytes: p.quantum,
                target_ns: p.target.as_nanos(),
                interval_ns: p.interval.as_nanos(),
                mtu_bytes: p.mtu,
                ecn: p.ecn,
            })
        }
        "pie" => {
            let d = PieParams::rfc8033(limit);
            let estimator = match spec.estimator.as_deref() {
                None | Some("timestamp") => DelayEstimator::Timestamp,
                Some("dq_rate") => DelayEstimator::DqRate,
                Some(x) => {
                    return Err(ScenarioError::invalid(
                        format!("{path}.estimator"),
                        format!(
                            "unknown PIE delay estimator {x:?}; allowed: \"timestamp\", \"dq_rate\""
                        ),
                    ))
                }
            };
            let p = PieParams {
                target: duration_or(&spec.target, d.target),
                t_update: duration_or(&spec.t_update, d.t_update),
                alpha: spec.alpha.unwrap_or(d.alpha),
                beta: spec.beta.unwrap_or(d.beta),
                max_burst: duration_or(&spec.max_burst, d.max_burst),
                ecn: spec.ecn.unwrap_or(false),
                mark_ecnth: spec.mark_ecnth.unwrap_or(d.mark_ecnth),
                derandomize: spec.derandomize.unwrap_or(d.derandomize),
                cap_drop: spec.cap_drop.unwrap_or(d.cap_drop),
                estimator,
                dq_threshold: bytes_or(
                    spec.dq_threshold.as_ref(),
                    path,
                    "dq_threshold",
                    d.dq_threshold as u32,
                )? as u64,
                mean_pktsize: bytes_or(
                    spec.mean_packet.as_ref(),
                    path,
                    "mean_packet",
                    d.mean_pktsize,
                )?,
                ..d
            };
            p.validate().map_err(|e| named(path, "PIE", e))?;
            PlanAqm::Pie(PlanPie {
                target_ns: p.target.as_nanos(),
                t_update_ns: p.t_update.as_nanos(),
                alpha: p.alpha,
                beta: p.beta,
                max_burst_ns: p.max_burst.as_nanos(),
                ecn: p.ecn,
                mark_ecnth: p.mark_ecnth,
                derandomize: p.derandomize,
                cap_drop: p.cap_drop,
                estimator: match p.estimator {
                    DelayEstimator::Timestamp => "timestamp",
                    DelayEstimator::DqRate => "dq_rate",
                }
                .into(),
                dq_threshold_bytes: p.dq_threshold,
                mean_packet_bytes: p.mean_pktsize,
            })
        }
        "h2" => {
            let need = |v: Option<f64>, f: &str, what: &str| {
                v.ok_or_else(|| {
                    ScenarioError::invalid(
                        format!("{path}.{f}"),
                        format!(
                            "an \"h2\" queue needs {f}, {what} (the paper prints no value); give \
                             q0 and p0 with the coefficients, or a design = {{...}} table run \
                             through fatpipe's Python front end (docs/aqm.md)"
                        ),
                    )
                })
            };
            let q0 = need(spec.q0, "q0", "the design's equilibrium queue in packets")?;
            let p0 = need(spec.p0, "p0", "the design's equilibrium drop probability")?;
            let d = H2Params::paper(limit, q0, p0);
            let p = H2Params {
                sample_hz: spec.sample_hz.unwrap_or(d.sample_hz),
                a: spec.a.unwrap_or(d.a),
                b: spec.b.unwrap_or(d.b),
                c: spec.c.unwrap_or(d.c),
                d: spec.d.unwrap_or(d.d),
                e: spec.e.unwrap_or(d.e),
                ecn: spec.ecn.unwrap_or(false),
                ..d
            };
            p.validate().map_err(|e| named(path, "H2", e))?;
            PlanAqm::H2(PlanH2 {
                sample_hz: p.sample_hz,
                q0: p.q0,
                p0: p.p0,
                a: p.a,
                b: p.b,
                c: p.c,
                d: p.d,
                e: p.e,
                ecn: p.ecn,
            })
        }
        "pi" => {
            let d = PiParams::ns2(limit);
            let p = PiParams {
                sample_hz: spec.sample_hz.unwrap_or(d.sample_hz),
                q_ref: spec.q_ref.unwrap_or(d.q_ref),
                p0: spec.p0.unwrap_or(d.p0),
                a: spec.a.unwrap_or(d.a),
                b: spec.b.unwrap_or(d.b),
                ecn: spec.ecn.unwrap_or(false),
                ..d
            };
            p.validate().map_err(|e| named(path, "PI", e))?;
            PlanAqm::Pi(PlanPi {
                sample_hz: p.sample_hz,
                q_ref: p.q_ref,
                p0: p.p0,
                a: p.a,
                b: p.b,
                ecn: p.ecn,
            })
        }
        _ => return Ok(None),
    };
    Ok(Some(AqmRequest::Fixed(fixed)))
}

/// A discipline's (field, reason) as an error at `path.field`.
fn named(path: &str, kind: &str, (field, why): (&'static str, String)) -> ScenarioError {
    ScenarioError::invalid(format!("{path}.{field}"), format!("{kind} {field} {why}"))
}

fn duration_or(d: &Option<crate::units::Duration>, default: SimTime) -> SimTime {
    d.as_ref().map_or(default, |d| d.value)
}

/// A size field that must be given in bytes ("1500B").
fn bytes_or(
    s: Option<&crate::units::SizeStr>,
    path: &str,
    field: &str,
    default: u32,
) -> Result<u32, ScenarioError> {
    match s {
        None => Ok(default),
        Some(s) => match s.value {
            SizeSpec::Bytes(b) if b > 0 && b <= u32::MAX as u64 => Ok(b as u32),
            _ => Err(ScenarioError::invalid(
                format!("{path}.{field}"),
                format!("give {field} as a positive size in bytes, e.g. \"1500B\""),
            )),
        },
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
    let PlanAqm::Red(probe) = resolve(&r, Rate(1_000_000_000)) else {
        unreachable!("a RED request resolves to RED")
    };
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
        AqmRequest::Fixed(ref p) => p.clone(),
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

/// The engine's parameters for a plan AQM at `limit`, one value per discipline.
enum AqmParams {
    Red(RedParams),
    Codel(CoDelParams),
    FqCodel(FqCoDelParams),
    Pie(PieParams),
    H2(H2Params),
    Pi(PiParams),
}

fn aqm_params(aqm: &PlanAqm, limit: Limit) -> AqmParams {
    match aqm {
        PlanAqm::Red(r) => AqmParams::Red(red_params(r, limit)),
        PlanAqm::Codel(c) => AqmParams::Codel(CoDelParams {
            limit,
            target: SimTime(c.target_ns),
            interval: SimTime(c.interval_ns),
            mtu: c.mtu_bytes,
            ecn: c.ecn,
        }),
        PlanAqm::FqCodel(f) => AqmParams::FqCodel(FqCoDelParams {
            limit,
            flows: f.flows,
            quantum: f.quantum_bytes,
            target: SimTime(f.target_ns),
            interval: SimTime(f.interval_ns),
            mtu: f.mtu_bytes,
            ecn: f.ecn,
        }),
        PlanAqm::Pie(p) => AqmParams::Pie(PieParams {
            limit,
            target: SimTime(p.target_ns),
            t_update: SimTime(p.t_update_ns),
            alpha: p.alpha,
            beta: p.beta,
            max_burst: SimTime(p.max_burst_ns),
            ecn: p.ecn,
            mark_ecnth: p.mark_ecnth,
            derandomize: p.derandomize,
            cap_drop: p.cap_drop,
            estimator: if p.estimator == "dq_rate" {
                DelayEstimator::DqRate
            } else {
                DelayEstimator::Timestamp
            },
            dq_threshold: p.dq_threshold_bytes,
            mean_pktsize: p.mean_packet_bytes,
        }),
        PlanAqm::H2(h) => AqmParams::H2(H2Params {
            limit,
            sample_hz: h.sample_hz,
            q0: h.q0,
            p0: h.p0,
            a: h.a,
            b: h.b,
            c: h.c,
            d: h.d,
            e: h.e,
            ecn: h.ecn,
        }),
        PlanAqm::Pi(p) => AqmParams::Pi(PiParams {
            limit,
            sample_hz: p.sample_hz,
            q_ref: p.q_ref,
            p0: p.p0,
            a: p.a,
            b: p.b,
            ecn: p.ecn,
        }),
    }
}

/// Check explicit plan values (as a plan read back from JSON carries them) with each
/// discipline's own rules: the field and why, as the scenario checks report them.
pub fn check_plan_aqm(aqm: &PlanAqm) -> Result<(), (&'static str, String)> {
    if let PlanAqm::Pie(p) = aqm {
        if p.estimator != "timestamp" && p.estimator != "dq_rate" {
            return Err((
                "estimator",
                format!(
                    "{:?} is not a PIE delay estimator; allowed: \"timestamp\", \"dq_rate\"",
                    p.estimator
                ),
            ));
        }
    }
    if let PlanAqm::Red(r) = aqm {
        if r.mode != "packets" && r.mode != "bytes" {
            return Err((
                "mode",
                format!(
                    "{:?} is not a RED mode; allowed: \"packets\", \"bytes\"",
                    r.mode
                ),
            ));
        }
    }
    match aqm_params(aqm, Limit::Packets(1)) {
        AqmParams::Red(p) => p.validate(),
        AqmParams::Codel(p) => p.validate(),
        AqmParams::FqCodel(p) => p.validate(),
        AqmParams::Pie(p) => p.validate(),
        AqmParams::H2(p) => p.validate(),
        AqmParams::Pi(p) => p.validate(),
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
    let Some(aqm) = aqm else {
        return Box::new(DropTail::new(limit));
    };
    let rng = |kind: &str| RngStream::new(seed, &format!("queue/{link}/{kind}"));
    match aqm_params(aqm, limit) {
        AqmParams::Red(p) => Box::new(Red::new(p, rate.bps(), rng("red"))),
        AqmParams::Codel(p) => Box::new(CoDel::new(p)),
        AqmParams::FqCodel(p) => Box::new(FqCoDel::new(p, rng("fq_codel"))),
        AqmParams::Pie(p) => Box::new(Pie::new(p, rng("pie"))),
        AqmParams::H2(p) => Box::new(H2::new(p, rng("h2"))),
        AqmParams::Pi(p) => Box::new(Pi::new(p, rng("pi"))),
    }
}
