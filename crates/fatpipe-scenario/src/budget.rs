//! What a run will cost, estimated from the scenario's own numbers before anything is built,
//! and checked against `[limits]`.
//!
//! Building is where an oversized scenario used to fail, by exhausting memory or time: a
//! dumbbell of 2^32 - 1 pairs allocated 34 GB for its extra delays before any check, the
//! engine's routing table is quadratic in the nodes, and a 1 ns monitor interval stores a row
//! per flow and link every nanosecond. Here the nodes, links and flows are counted from the
//! topology's parameters and the flow groups (no list is expanded), the monitor's samples from
//! the duration, and the run is refused, naming the limit to raise and what to change, when
//! the estimate exceeds `limits.max_memory` or the samples alone exceed `limits.max_events`.
//!
//! The estimate is of resident memory, deliberately rough but on the high side; packets in
//! flight are not in it (`limits.max_packets` bounds them while the run goes).

use crate::error::ScenarioError;
use crate::schema::{FlowGroup, PairSelect, QueueSpec, Scenario, Topology};
use fatpipe_net::routing::RoutingTable;

/// Default of `limits.max_memory`: room for any run a workstation can hold, and a clear error,
/// rather than swapping or an abort, for one it cannot.
pub const DEFAULT_MAX_MEMORY: u64 = 8_000_000_000;

/// Per node: its name, kind and link lists in the plan and the engine.
const NODE_BYTES: u64 = 256;
/// Per directed link: the plan's link, the engine's link with its queue and pipe (measured on
/// dumbbells: about 8 KB resident per link with its share of a flow).
const LINK_BYTES: u64 = 8 * 1024;
/// Per flow: the plan's flow, the sender and receiver with their scoreboards, counters.
const FLOW_BYTES: u64 = 8 * 1024;
/// Per sampled row (one flow or one link at one sample time): 40 B in the core's columns,
/// about 240 B as Python objects when handed to the front end and 40 B again as Arrow.
const SERIES_ROW_BYTES: u64 = 320;

/// Ids of nodes, links and flows are 32-bit in the engine (with one value kept as a marker).
const MAX_IDS: u64 = u32::MAX as u64 - 1;

/// The counts and the estimate (exposed for tests and for `fatpipe plan`-side reporting).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    pub nodes: u64,
    /// Directed links (a full-duplex link is two).
    pub links: u64,
    pub flows: u64,
    /// Monitor samples over the run (each one event).
    pub samples: u64,
    /// Steps of the queues' periodic laws over the run (see [`aqm_steps`]).
    pub aqm_steps: u64,
    pub routing_bytes: u64,
    pub series_bytes: u64,
    pub memory_bytes: u64,
}

/// Count and estimate a scenario's run (nothing is checked here; see [`check`]).
pub fn estimate(sc: &Scenario, interval_ns: u64) -> Estimate {
    let with_bg = sc.background.is_some();
    // (nodes, duplex links, routers = nodes that are not stubs, pairs for `pairs = "all"`,
    // background sites)
    let (nodes, duplex, routers, pairs, sites) = match &sc.topology {
        Topology::Dumbbell(d) => {
            let p = d.pairs as u64;
            let bg = if with_bg { 2 } else { 0 };
            (2 * p + 2 + bg, 2 * p + 1 + bg, 2, p, 1)
        }
        Topology::ParkingLot(pl) => {
            let (p, k) = (pl.pairs as u64, pl.bottlenecks as u64);
            (2 * p + (k + 1) + 2 * k, 2 * p + k + 2 * k, k + 1, p, k)
        }
        Topology::Ring(r) => {
            let routers = r.routers.unwrap_or(crate::ring::DEFAULT_ROUTERS) as u64;
            let s = r.senders.unwrap_or(crate::ring::DEFAULT_SENDERS) as u64;
            let d = r.receivers.unwrap_or(crate::ring::DEFAULT_RECEIVERS) as u64;
            let n = routers * (1 + s + d);
            (n, n, routers, routers * s, 0)
        }
        Topology::Graph(g) => (
            g.nodes.len() as u64,
            g.links.len() as u64,
            non_stubs(g),
            0,
            0,
        ),
    };
    let links = 2 * duplex;
    let default_group = [FlowGroup::default()];
    let groups: &[FlowGroup] = if sc.flows.is_empty() {
        &default_group
    } else {
        &sc.flows
    };
    let mut flows = groups.iter().fold(0u64, |acc, g| {
        let endpoints = match (&g.src, &g.dst, &g.pairs) {
            (Some(_), _, _) | (_, Some(_), _) => 1,
            (_, _, Some(PairSelect::List(v))) => v.len() as u64,
            _ => pairs,
        };
        // A relay runs one connection per segment.
        let conns = g.depots.as_ref().map_or(1, |d| d.len() as u64 + 1);
        acc.saturating_add(
            endpoints
                .saturating_mul(g.count.unwrap_or(1) as u64)
                .saturating_mul(conns),
        )
    });
    if let Some(bg) = &sc.background {
        // Per site and direction: one CBR flow, the FTP flows and the web sources.
        let ftp = bg.ftp_flows.unwrap_or(crate::background::DEFAULT_FTP_FLOWS) as u64;
        let web = bg
            .web_sources
            .unwrap_or(crate::background::DEFAULT_WEB_SOURCES) as u64;
        flows = flows.saturating_add(sites * 2 * (1 + ftp + web));
    }
    let samples = sc.duration.value.as_nanos() / interval_ns.max(1);
    // The engine's table, and while it is filled the stub-folded one it comes from.
    let routing_bytes = RoutingTable::bytes_for(nodes)
        .saturating_add(routers.saturating_mul(nodes).saturating_mul(8));
    let series_bytes = samples
        .saturating_mul(flows.saturating_add(links))
        .saturating_mul(SERIES_ROW_BYTES);
    let memory_bytes = [
        nodes.saturating_mul(NODE_BYTES),
        links.saturating_mul(LINK_BYTES),
        flows.saturating_mul(FLOW_BYTES),
        routing_bytes,
        series_bytes,
    ]
    .iter()
    .fold(0u64, |a, &b| a.saturating_add(b));
    Estimate {
        nodes,
        links,
        flows,
        samples,
        aqm_steps: aqm_steps(sc),
        routing_bytes,
        series_bytes,
        memory_bytes,
    }
}

/// [`check`] with the monitor interval the scenario sets; one of zero is left to elaboration,
/// which says what to write.
pub fn check_scenario(sc: &Scenario) -> Result<(), ScenarioError> {
    let interval = sc
        .monitor
        .interval
        .as_ref()
        .map_or(100_000_000, |d| d.value.as_nanos());
    if interval == 0 {
        return Ok(());
    }
    check(sc, interval).map(|_| ())
}

/// Refuse a scenario whose run would exceed its limits (or the engine's 32-bit ids), before
/// anything is built. `interval_ns` is the monitor interval in force.
pub fn check(sc: &Scenario, interval_ns: u64) -> Result<Estimate, ScenarioError> {
    let e = estimate(sc, interval_ns);
    for (count, what, path) in [
        (e.nodes, "nodes", "topology"),
        (e.links, "directed links", "topology"),
        (e.flows, "flows", "flows"),
    ] {
        if count > MAX_IDS {
            return Err(ScenarioError::invalid(
                path,
                format!("{count} {what}: the engine numbers them with 32 bits, at most {MAX_IDS}"),
            ));
        }
    }
    let max_events = sc
        .limits
        .max_events
        .unwrap_or(fatpipe_sim::Limits::default().max_events);
    if e.aqm_steps > max_events {
        return Err(ScenarioError::invalid(
            "limits.max_events",
            format!(
                "the queues' periodic updates alone take {} steps (duration / t_update or x \
                 sample_hz, per link), above limits.max_events = {max_events}; give a longer \
                 t_update or a lower sample_hz, or raise limits.max_events",
                e.aqm_steps
            ),
        ));
    }
    if e.samples > max_events {
        return Err(ScenarioError::invalid(
            "limits.max_events",
            format!(
                "the monitor alone takes {} events (duration / monitor.interval), above \
                 limits.max_events = {max_events}; lengthen monitor.interval or raise \
                 limits.max_events",
                e.samples
            ),
        ));
    }
    let max_memory = match &sc.limits.max_memory {
        None => DEFAULT_MAX_MEMORY,
        Some(m) => crate::plan::size_bytes_only(m, "limits.max_memory")?,
    };
    if e.memory_bytes > max_memory {
        // Say what dominates, so the fix is the right one.
        let cause = if e.series_bytes >= e.routing_bytes {
            format!(
                "{} monitor samples x {} flows and links take {}; lengthen monitor.interval",
                e.samples,
                e.flows + e.links,
                human(e.series_bytes)
            )
        } else {
            format!(
                "the routing table of {} nodes takes {} (it is quadratic in the nodes); use \
                 fewer nodes",
                e.nodes,
                human(e.routing_bytes)
            )
        };
        return Err(ScenarioError::invalid(
            "limits.max_memory",
            format!(
                "this run needs about {} ({} nodes, {} links, {} flows): {cause}, or raise \
                 limits.max_memory (now {})",
                human(e.memory_bytes),
                e.nodes,
                e.links,
                e.flows,
                human(max_memory)
            ),
        ));
    }
    Ok(e)
}

/// Steps the queues' periodic laws take over the run: PIE's probability update every
/// `t_update`, H2's and PI's samples at `sample_hz`, on every link the queue is on. The engine
/// runs them lazily, catching up at the next packet without events, so they are work that
/// `limits.max_events` would not see; they are counted here like the monitor's samples. Only
/// values given count (the defaults take at most 8333 steps per simulated second).
fn aqm_steps(sc: &Scenario) -> u64 {
    let duration_s = sc.duration.value.as_secs_f64();
    let steps = |q: &Option<QueueSpec>, links: u64| -> f64 {
        let Some(q) = q else { return 0.0 };
        let per_s = match q.kind.as_str() {
            "pie" => q
                .t_update
                .as_ref()
                .map_or(0.0, |t| 1.0 / t.value.as_secs_f64()),
            "h2" | "pi" => q.sample_hz.unwrap_or(0.0),
            _ => 0.0,
        };
        // A zero or non-finite period is elaboration's to report.
        if per_s.is_finite() && per_s > 0.0 {
            per_s * duration_s * links as f64
        } else {
            0.0
        }
    };
    let total: f64 = match &sc.topology {
        Topology::Dumbbell(d) => {
            let p = d.pairs as u64;
            steps(&d.bottleneck.queue, 2)
                + d.access.as_ref().map_or(0.0, |a| steps(&a.queue, 4 * p))
        }
        Topology::ParkingLot(pl) => {
            let (p, k) = (pl.pairs as u64, pl.bottlenecks as u64);
            steps(&pl.bottleneck.queue, 2 * k)
                + pl.access
                    .as_ref()
                    .map_or(0.0, |a| steps(&a.queue, 4 * p + 4 * k))
        }
        Topology::Ring(r) => {
            let routers = r.routers.unwrap_or(crate::ring::DEFAULT_ROUTERS) as u64;
            let hosts = routers
                * (r.senders.unwrap_or(crate::ring::DEFAULT_SENDERS) as u64
                    + r.receivers.unwrap_or(crate::ring::DEFAULT_RECEIVERS) as u64);
            r.ring
                .as_ref()
                .map_or(0.0, |x| steps(&x.queue, 2 * routers))
                + r.lan.as_ref().map_or(0.0, |x| steps(&x.queue, 2 * hosts))
        }
        Topology::Graph(g) => g.links.iter().map(|l| steps(&l.queue, 2)).sum(),
    };
    // Saturates at u64::MAX for absurd inputs (an f64 to u64 cast clamps).
    total as u64
}

/// Nodes of a graph that keep a routing row: all but the stubs, whose links all join them to
/// one neighbour ([`fatpipe_net::folded_routes`]; links here are full duplex).
fn non_stubs(g: &crate::schema::Graph) -> u64 {
    use std::collections::HashMap;
    // name -> its single neighbour so far, or None once it has two.
    let mut neighbour: HashMap<&str, Option<&str>> = HashMap::new();
    for l in &g.links {
        let [a, b] = [l.between[0].as_str(), l.between[1].as_str()];
        for (x, y) in [(a, b), (b, a)] {
            neighbour
                .entry(x)
                .and_modify(|n| {
                    if *n != Some(y) {
                        *n = None
                    }
                })
                .or_insert(Some(y));
        }
    }
    let stub = |x: &str| neighbour.get(x).copied().flatten();
    let stubs = g
        .nodes
        .iter()
        .filter(|n| {
            let name = n.name.as_str();
            // Two nodes joined only to each other both keep their rows.
            stub(name).is_some_and(|p| p != name && stub(p) != Some(name))
        })
        .count() as u64;
    g.nodes.len() as u64 - stubs.min(g.nodes.len() as u64)
}

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match b {
        _ if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        _ if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        _ if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        _ => format!("{bytes} B"),
    }
}
