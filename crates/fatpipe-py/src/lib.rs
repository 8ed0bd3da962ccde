//! `fatpipe._core`: the compiled module behind the Python package.
//!
//! Thin by design (polars style): Python normalises arguments, calls one function here, and gets
//! columnar results back (dicts of lists that Python turns into Arrow tables). Runs release the
//! GIL, report progress to a callback between chunks and honour Ctrl-C. Every Rust error maps to a
//! small exception hierarchy; no panic crosses into Python.

use fatpipe_scenario::{elaborate, ErrorKind, ScenarioError as CoreScenarioError};
use fatpipe_sim::{SimError, SimResults};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::time::{Duration, Instant};

/// mimalloc instead of the C library's malloc for everything the core allocates (inside the
/// Python process). Measured on the reference dumbbell, the first run in a fresh process (what
/// `fatpipe run` pays), 10 alternating pairs: 1.109 s against 1.146 s with glibc's malloc
/// (-3.2 %, faster in every pair); results identical (the allocator places memory, it decides
/// nothing).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

create_exception!(
    _core,
    FatpipeError,
    PyException,
    "Base class of every fatpipe error."
);
create_exception!(
    _core,
    ScenarioError,
    FatpipeError,
    "A scenario is malformed or inconsistent; `.path` names the field."
);
create_exception!(
    _core,
    UnknownAlgorithmError,
    ScenarioError,
    "A congestion control name or parameter that does not exist."
);
create_exception!(
    _core,
    UnroutableError,
    ScenarioError,
    "A flow whose endpoints are not connected."
);
create_exception!(
    _core,
    SimulationError,
    FatpipeError,
    "A run stopped by a limit (events, packets)."
);

fn scenario_err(py: Python<'_>, e: CoreScenarioError) -> PyErr {
    let msg = e.to_string();
    let err = match e.kind {
        ErrorKind::UnknownAlgorithm => UnknownAlgorithmError::new_err(msg),
        ErrorKind::Unroutable => UnroutableError::new_err(msg),
        _ => ScenarioError::new_err(msg),
    };
    let v = err.value(py);
    let _ = v.setattr("path", e.path.clone());
    let _ = v.setattr("line", e.line);
    err
}

fn sim_err(py: Python<'_>, e: SimError) -> PyErr {
    match e {
        SimError::Unroutable { .. } => {
            let err = UnroutableError::new_err(e.to_string());
            let _ = err.value(py).setattr("path", "flows");
            err
        }
        _ => SimulationError::new_err(e.to_string()),
    }
}

fn load(py: Python<'_>, text: &str, sets: Vec<String>) -> PyResult<fatpipe_scenario::Scenario> {
    fatpipe_scenario::load_str(text, &sets).map_err(|e| scenario_err(py, e))
}

/// Validate scenario text with overrides; returns the normalised TOML.
#[pyfunction]
#[pyo3(signature = (text, sets = Vec::new()))]
fn validate(py: Python<'_>, text: &str, sets: Vec<String>) -> PyResult<String> {
    let sc = load(py, text, sets)?;
    elaborate(&sc, None).map_err(|e| scenario_err(py, e))?;
    Ok(sc.to_toml())
}

/// Parse scenario text with overrides without elaborating it; returns the TOML with the
/// overrides applied (the Python front end expands `design` tables from it, see
/// `fatpipe/aqm_design.py`).
#[pyfunction]
#[pyo3(signature = (text, sets = Vec::new()))]
fn normalize(py: Python<'_>, text: &str, sets: Vec<String>) -> PyResult<String> {
    Ok(load(py, text, sets)?.to_toml())
}

/// Elaborate into the run plan (JSON text), see docs/plan-and-results.md.
#[pyfunction]
#[pyo3(signature = (text, sets = Vec::new(), seed = None))]
fn plan(py: Python<'_>, text: &str, sets: Vec<String>, seed: Option<u64>) -> PyResult<String> {
    let sc = load(py, text, sets)?;
    Ok(elaborate(&sc, seed)
        .map_err(|e| scenario_err(py, e))?
        .to_json())
}

/// Convert a JSON object (a scenario built in Python) to TOML text.
#[pyfunction]
fn json_to_toml(py: Python<'_>, json: &str) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| scenario_err(py, CoreScenarioError::parse(e.to_string(), None)))?;
    let t: toml::Value = serde_json::from_value(v).map_err(|e| {
        scenario_err(
            py,
            CoreScenarioError::parse(format!("not representable as TOML: {e}"), None),
        )
    })?;
    toml::to_string(&t).map_err(|e| {
        scenario_err(
            py,
            CoreScenarioError::parse(format!("not representable as TOML: {e}"), None),
        )
    })
}

/// The JSON Schema of scenario files.
#[pyfunction]
fn schema() -> String {
    fatpipe_scenario::json_schema()
}

/// A registered congestion control: (name, summary, citation, parameters), each parameter
/// (name, default as a TOML literal, unit, description).
type CcEntry = (
    String,
    String,
    String,
    Vec<(String, String, String, String)>,
);

/// Registered congestion controls, in registry order.
#[pyfunction]
fn cc_algorithms() -> Vec<CcEntry> {
    fatpipe_transport::cc::REGISTRY
        .iter()
        .map(|c| {
            let params = c
                .params
                .iter()
                .map(|p| {
                    (
                        p.name.to_string(),
                        p.default.to_string(),
                        p.unit.to_string(),
                        p.doc.to_string(),
                    )
                })
                .collect();
            (
                c.name.to_string(),
                c.summary.to_string(),
                c.citation.to_string(),
                params,
            )
        })
        .collect()
}

/// Run a scenario. `progress(sim_now_s, sim_end_s)` is called about 5 times per wall-second.
#[pyfunction]
#[pyo3(signature = (text, sets = Vec::new(), seed = None, progress = None))]
fn run(
    py: Python<'_>,
    text: &str,
    sets: Vec<String>,
    seed: Option<u64>,
    progress: Option<PyObject>,
) -> PyResult<PyObject> {
    let sc = load(py, text, sets)?;
    let plan = elaborate(&sc, seed).map_err(|e| scenario_err(py, e))?;
    let mut sim = plan.build().map_err(|e| sim_err(py, e))?;
    let t0 = Instant::now();
    loop {
        let done = py
            .allow_threads(|| {
                let start = Instant::now();
                loop {
                    if sim.run_chunk(100_000)? {
                        return Ok(true);
                    }
                    if start.elapsed() > Duration::from_millis(200) {
                        return Ok(false);
                    }
                }
            })
            .map_err(|e: SimError| sim_err(py, e))?;
        py.check_signals()?;
        if let Some(cb) = &progress {
            cb.call1(
                py,
                (
                    sim.now().as_secs_f64().min(sim.end().as_secs_f64()),
                    sim.end().as_secs_f64(),
                ),
            )?;
        }
        if done {
            break;
        }
    }
    let wall = t0.elapsed().as_secs_f64();
    let res = sim.results();
    let d = results_to_py(py, &res)?;
    let engine = d.get_item("engine")?.expect("engine");
    engine.set_item("wall_s", wall)?;
    d.set_item("plan", plan.to_json())?;
    d.set_item("warnings", plan.warnings.clone())?;
    Ok(d.into_any().unbind())
}

fn results_to_py<'py>(py: Python<'py>, r: &SimResults) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    macro_rules! table {
        ($rows:expr, $($col:ident),+) => {{
            let t = PyDict::new(py);
            $( t.set_item(stringify!($col), PyList::new(py, $rows.iter().map(|x| x.$col.clone()))?)?; )+
            t
        }};
    }
    d.set_item(
        "flows",
        table!(
            r.flows,
            flow_id,
            src,
            dst,
            cc,
            kind,
            role,
            start_s,
            end_s,
            bytes_sent,
            bytes_delivered,
            goodput_bps,
            throughput_bps,
            data_packets_sent,
            retransmits,
            timeouts,
            fast_recoveries,
            rtt_min_s,
            rtt_mean_s,
            rtt_max_s,
            completion_s,
            rwnd_limited,
            objects,
            transfer_time_mean_s,
            bytes_offered,
            conn_goodput_mean_bps,
            conn_throughput_mean_bps,
            conn_cwnd_mean_pkts,
            conn_rtt_mean_s,
            conn_timeouts_mean,
            delay_mean_s,
            jitter_s,
            app_packets,
            app_discards,
            packets_delivered,
            packets_dropped,
            loss_event_rate
        ),
    )?;
    d.set_item(
        "queues",
        table!(
            r.queues,
            link,
            kind,
            enqueued,
            dequeued,
            drops_tail,
            drops_aqm_early,
            drops_aqm_forced,
            drops_random,
            marks_aqm_early,
            marks_aqm_forced,
            dropped_bytes,
            max_len_pkts,
            mean_len_pkts
        ),
    )?;
    d.set_item(
        "links",
        table!(
            r.links,
            link,
            from,
            to,
            rate_bps,
            delay_s,
            tx_bytes,
            tx_packets,
            utilisation
        ),
    )?;
    let fs = &r.flow_series;
    let t = PyDict::new(py);
    t.set_item("t_s", &fs.t_s)?;
    t.set_item("flow_id", &fs.flow_id)?;
    t.set_item("cwnd_pkts", &fs.cwnd_pkts)?;
    t.set_item("ssthresh_pkts", &fs.ssthresh_pkts)?;
    t.set_item("srtt_s", &fs.srtt_s)?;
    t.set_item("bytes_delivered", &fs.bytes_delivered)?;
    t.set_item("goodput_bps", &fs.goodput_bps)?;
    d.set_item("flow_series", t)?;
    let qs = &r.queue_series;
    let t = PyDict::new(py);
    t.set_item("t_s", &qs.t_s)?;
    t.set_item(
        "link",
        PyList::new(
            py,
            qs.link.iter().map(|&i| r.link_names[i as usize].clone()),
        )?,
    )?;
    t.set_item("len_pkts", &qs.len_pkts)?;
    t.set_item("len_bytes", &qs.len_bytes)?;
    t.set_item("avg_pkts", &qs.avg_pkts)?;
    t.set_item("prob", &qs.prob)?;
    d.set_item("queue_series", t)?;
    d.set_item(
        "segments",
        table!(
            r.segments,
            flow_id,
            segment,
            src,
            dst,
            cc,
            bytes_sent,
            bytes_delivered,
            goodput_bps,
            throughput_bps,
            data_packets_sent,
            retransmits,
            timeouts,
            fast_recoveries,
            packets_dropped,
            rtt_min_s,
            rtt_mean_s,
            rtt_max_s,
            completion_s,
            rwnd_limited,
            window_probes,
            depot,
            buffer_bytes,
            buffer_max_bytes,
            buffer_mean_bytes
        ),
    )?;
    let ss = &r.segment_series;
    let t = PyDict::new(py);
    t.set_item("t_s", &ss.t_s)?;
    t.set_item("flow_id", &ss.flow_id)?;
    t.set_item("segment", &ss.segment)?;
    t.set_item("cwnd_pkts", &ss.cwnd_pkts)?;
    t.set_item("ssthresh_pkts", &ss.ssthresh_pkts)?;
    t.set_item("srtt_s", &ss.srtt_s)?;
    t.set_item("bytes_delivered", &ss.bytes_delivered)?;
    t.set_item("goodput_bps", &ss.goodput_bps)?;
    t.set_item("buffer_bytes", &ss.buffer_bytes)?;
    t.set_item("unread_bytes", &ss.unread_bytes)?;
    d.set_item("segment_series", t)?;
    let e = PyDict::new(py);
    e.set_item("events", r.engine.events)?;
    e.set_item("packets_delivered", r.engine.packets_delivered)?;
    e.set_item("sim_s", r.engine.sim_s)?;
    e.set_item("max_event_queue", r.engine.max_event_queue)?;
    e.set_item("max_packets_in_network", r.engine.max_packets_in_network)?;
    d.set_item("engine", e)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // How the extension was built: "pgo" from `make build-pgo` (tools/pgo_build.sh sets it for
    // its final build), else "release". Benchmarks report it, since speed depends on it.
    m.add("BUILD", option_env!("FATPIPE_BUILD").unwrap_or("release"))?;
    m.add("FatpipeError", py.get_type::<FatpipeError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add(
        "UnknownAlgorithmError",
        py.get_type::<UnknownAlgorithmError>(),
    )?;
    m.add("UnroutableError", py.get_type::<UnroutableError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalize, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(json_to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(cc_algorithms, m)?)?;
    Ok(())
}
