//! Relay chains (seed 002's depots, `kind = "relay"`): bytes conserved through every depot, the
//! depot buffer bound, backpressure through the receive window rather than drops, pipelining,
//! per-segment congestion control, determinism, the engine's shortcuts, and bad input. The gain
//! over a direct transfer against the paper's model is tested from Python
//! (tests/test_relay_model.py), with the model's own chain prediction.

use crate::common;

use common::err_path;
use fatpipe_scenario::{elaborate, load_str};
use fatpipe_sim::results::SimResults;
use fatpipe_sim::Simulation;

/// A line h0 -- d1 -- ... -- h<n>: link i from `rates[i]` with `delay` one way and `loss`
/// forward, a relay from h0 to h<n> through every inner node with `flow` extra lines.
fn line(rates: &[&str], delay: &str, loss: f64, flow: &str) -> String {
    let n = rates.len();
    let name = |i: usize| {
        if i == 0 || i == n {
            format!("h{i}")
        } else {
            format!("d{i}")
        }
    };
    let nodes: Vec<String> = (0..=n)
        .map(|i| format!("{{ name = \"{}\" }}", name(i)))
        .collect();
    let links: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "  {{ between = [\"{}\", \"{}\"], rate = \"{}\", delay = \"{delay}\", loss = {loss}, queue = {{ limit = \"1000pkt\" }} }}",
                name(i),
                name(i + 1),
                rates[i]
            )
        })
        .collect();
    let depots: Vec<String> = (1..n).map(|i| format!("\"{}\"", name(i))).collect();
    format!(
        r#"duration = "30s"
[topology]
kind = "graph"
nodes = [{}]
links = [
{}
]
[[flows]]
kind = "relay"
src = "h0"
dst = "h{n}"
depots = [{}]
{flow}
[monitor]
interval = "100ms"
"#,
        nodes.join(", "),
        links.join(",\n"),
        depots.join(", ")
    )
}

fn strings(sets: &[&str]) -> Vec<String> {
    sets.iter().map(|s| s.to_string()).collect()
}

/// Run with relay invariants and packet conservation checked every 1000 events.
fn run_checked(text: &str, sets: &[&str], seed: u64) -> (Simulation, SimResults) {
    let sc = load_str(text, &strings(sets)).unwrap();
    let mut sim = elaborate(&sc, Some(seed)).unwrap().build().unwrap();
    while !sim.run_chunk(1000).unwrap() {
        sim.check_relay_invariants().unwrap();
        sim.check_conservation().unwrap();
    }
    sim.check_relay_invariants().unwrap();
    let r = sim.results();
    (sim, r)
}

/// A slow middle segment (10 Mb/s between 100 Mb/s ones), a file that is no whole number of
/// segments and different MSS per segment, small depot buffers: everything arrives, every
/// depot passes on exactly what it read, and holds no more than its buffer.
#[test]
fn every_byte_goes_through_every_depot_and_no_depot_overflows() {
    let size = 3_000_001u64;
    let text = line(
        &["100Mbps", "10Mbps", "100Mbps"],
        "5ms",
        0.0,
        &format!(
            "size = \"{size}B\"\ndepot_buffer = \"40KB\"\nsegments = [{{ mss = \"1460B\" }}, {{ mss = \"1000B\" }}, {{ mss = \"536B\" }}]"
        ),
    );
    let (_, r) = run_checked(&text, &[], 1);
    let f = &r.flows[0];
    assert_eq!(f.kind, "relay");
    assert_eq!(f.bytes_delivered, size);
    assert!(f.completion_s.is_finite());
    assert_eq!(r.segments.len(), 3);
    for s in &r.segments {
        assert_eq!(s.bytes_delivered, size, "segment {}", s.segment);
        assert!(s.completion_s <= f.completion_s);
    }
    for s in &r.segments[..2] {
        assert_eq!(s.buffer_bytes, 40_000);
        assert!(s.buffer_max_bytes <= s.buffer_bytes, "{s:?}");
        assert!(s.buffer_max_bytes > 0);
    }
    // 3 MB over the 10 Mb/s segment takes at least 2.4 s; the relay is that segment's pace.
    let slow = 8.0 * size as f64 / 10e6;
    assert!(
        f.completion_s > slow && f.completion_s < 1.3 * slow,
        "{f:?}"
    );
    // The series samples every depot's occupancy within its bound.
    let s = &r.segment_series;
    assert!(s
        .buffer_bytes
        .iter()
        .zip(&s.segment)
        .all(|(&b, &k)| k < 2 && b <= 40_000 || k == 2 && b == 0));
}

/// The first segment is ten times faster than the second: its depot's buffer fills, the depot
/// stops reading, and the first segment's receive window closes. The first sender is held back
/// by the window (rwnd-limited, zero-window probes or updates), never by drops: its link's queue
/// never overflows, so it retransmits nothing.
#[test]
fn a_full_depot_closes_the_upstream_window_instead_of_dropping() {
    let text = line(
        &["100Mbps", "10Mbps"],
        "5ms",
        0.0,
        "depot_buffer = \"100KB\"\ntcp = { rwnd = \"60KB\" }",
    );
    let (sim, r) = run_checked(&text, &["duration=20s"], 1);
    let up = &r.segments[0];
    let down = &r.segments[1];
    assert!(up.rwnd_limited);
    assert_eq!(up.retransmits, 0, "{up:?}");
    assert_eq!(up.packets_dropped, 0);
    // The upstream segment runs at the downstream's pace (a tenth of its link), within 5 %.
    assert!(
        (up.goodput_bps / down.goodput_bps - 1.0).abs() < 0.05,
        "{} vs {}",
        up.goodput_bps,
        down.goodput_bps
    );
    // Memory at the depot is bounded by its buffer plus the receive buffer, whatever the
    // transfer: samples show the buffer full and the receiver holding unread data.
    let s = &r.segment_series;
    let held: Vec<(u64, u64)> = s
        .segment
        .iter()
        .enumerate()
        .filter(|(_, &k)| k == 0)
        .map(|(i, _)| (s.buffer_bytes[i], s.unread_bytes[i]))
        .collect();
    assert!(held.iter().all(|&(b, u)| b <= 100_000 && u <= 60_000));
    assert!(held.iter().any(|&(b, u)| b > 90_000 && u > 0), "{held:?}");
    assert!(sim.connections() == 2);
}

/// Pipeline, not store-and-forward: the sink has its first bytes within a few round trips, long
/// before the first depot has the whole file, and the last byte a little after it (the depots'
/// buffers drained at the segments' rate), not a whole transfer per depot later.
#[test]
fn depots_forward_as_data_arrives() {
    let text = line(
        &["100Mbps", "100Mbps", "100Mbps"],
        "5ms",
        0.0,
        "size = \"20MB\"",
    );
    let (_, r) = run_checked(&text, &[], 1);
    let first = r.segments[0].completion_s;
    let last = r.flows[0].completion_s;
    let s = &r.segment_series;
    let sink_at_first_sample = (0..s.t_s.len())
        .find(|&i| s.segment[i] == 2)
        .map(|i| (s.t_s[i], s.bytes_delivered[i]))
        .unwrap();
    assert!(
        sink_at_first_sample.0 < 0.15 && sink_at_first_sample.1 > 0,
        "{sink_at_first_sample:?}"
    );
    // 20 MB at 100 Mb/s is 1.6 s; store-and-forward would finish after 3 times that.
    assert!(
        first > 1.6 && last < 1.3 * first,
        "first depot {first} s, sink {last} s"
    );
}

#[test]
fn each_segment_runs_its_own_congestion_control() {
    let text = line(
        &["1Gbps", "1Gbps", "1Gbps"],
        "10ms",
        0.0,
        "size = \"5MB\"\nsegments = [{}, { cc = \"highspeed\" }, { cc = \"cubic\" }]",
    );
    let (_, r) = run_checked(&text, &[], 1);
    let ccs: Vec<&str> = r.segments.iter().map(|s| s.cc.as_str()).collect();
    assert_eq!(ccs, ["reno", "highspeed", "cubic"]);
    assert_eq!(r.flows[0].cc, "reno/highspeed/cubic");
    let sc = load_str(&text, &[]).unwrap();
    let plan = elaborate(&sc, Some(1)).unwrap();
    let relay = plan.flows[0].relay.as_ref().unwrap();
    assert_eq!(relay.segments[1].cc, "highspeed");
    assert_eq!(relay.segments[1].src, "d1");
    assert_eq!(relay.segments[1].dst, "d2");
    // Auto buffer: the larger receive window of the depot's two segments.
    assert_eq!(
        relay.depot_buffer_bytes[0],
        relay.segments[0]
            .rwnd_bytes
            .max(relay.segments[1].rwnd_bytes)
    );
    assert_eq!(
        plan.flows[0].path_rtt_ns,
        relay.segments.iter().map(|s| s.path_rtt_ns).sum::<u64>()
    );
}

fn digest(r: &SimResults) -> String {
    format!(
        "{:?}{:?}{:?}{:?}{:?}{:?}{}",
        r.flows,
        r.segments,
        r.queues,
        r.flow_series,
        r.segment_series,
        r.queue_series,
        r.engine.packets_delivered
    )
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let text = line(&["100Mbps", "100Mbps"], "10ms", 1e-3, "");
    let a = run_checked(&text, &["duration=10s"], 4).1;
    let b = run_checked(&text, &["duration=10s"], 4).1;
    let c = run_checked(&text, &["duration=10s"], 5).1;
    assert_eq!(digest(&a), digest(&b));
    assert_ne!(digest(&a), digest(&c));
}

/// `line` with loss only on link `k` (the others lossless).
fn lossy_link(rates: &[&str], k: usize, flow: &str) -> String {
    let mut text = line(rates, "10ms", 0.0, flow);
    let at = text.match_indices("loss = 0").nth(k).unwrap().0;
    text.replace_range(at..at + "loss = 0".len(), "loss = 0.001");
    text
}

/// The source and the sink are served ahead of the clock (in-advance sender and receiver)
/// when their links allow it, the depots never are; results are the same with every shortcut
/// off. A data segment and an ACK reach a depot at the same nanosecond in these runs (equal
/// delays), which once made results depend on the shortcuts (see `relay.rs`, "Events").
#[test]
fn relays_are_identical_with_and_without_shortcuts() {
    let two = ["100Mbps", "100Mbps"];
    for (text, sets, advance) in [
        (
            line(
                &["100Mbps", "10Mbps", "100Mbps"],
                "5ms",
                0.0,
                "size = \"4MB\"\ndepot_buffer = \"30KB\"",
            ),
            vec![],
            2,
        ),
        (line(&two, "10ms", 1e-3, ""), vec!["duration=8s"], 1),
        (lossy_link(&two, 0, ""), vec!["duration=8s"], 1),
        (lossy_link(&two, 1, ""), vec!["duration=8s"], 2),
        (
            lossy_link(
                &["100Mbps", "50Mbps", "100Mbps"],
                1,
                "segments = [{}, { cc = \"cubic\" }, {}]",
            ),
            vec!["duration=8s"],
            2,
        ),
        (
            line(&two, "10ms", 0.0, "tcp = { delayed_ack = true }"),
            vec!["duration=5s"],
            1,
        ),
    ] {
        let sc = load_str(&text, &strings(&sets)).unwrap();
        let plan = elaborate(&sc, Some(2)).unwrap();
        let go = |shortcuts: bool| {
            let mut sim = plan.build().unwrap();
            if shortcuts {
                let (_, adv) = sim.shortcut_counts();
                assert_eq!(adv, advance, "hosts served in advance");
            } else {
                sim.disable_shortcuts();
            }
            while !sim.run_chunk(1000).unwrap() {
                sim.check_conservation().unwrap();
                sim.check_relay_invariants().unwrap();
            }
            digest(&sim.results())
        };
        assert!(
            go(true) == go(false),
            "{text}\n{sets:?}: shortcuts changed the results"
        );
    }
}

#[test]
fn bad_relays_are_named() {
    let text = line(&["100Mbps", "100Mbps"], "5ms", 0.0, "");
    for (set, path) in [
        ("flows.0.depots=[]", "flows.0.depots"),
        ("flows.0.depots=[\"nowhere\"]", "flows.0.depots.0"),
        ("flows.0.depots=[\"h0\"]", "flows.0.depots.0"),
        ("flows.0.depots=[\"d1\", \"d1\"]", "flows.0.depots.1"),
        ("flows.0.depot_buffer=\"0B\"", "flows.0.depot_buffer"),
        ("flows.0.depot_buffer=\"1000B\"", "flows.0.depot_buffer"),
        ("flows.0.depot_buffer=\"lots\"", "flows.0.depot_buffer"),
        ("flows.0.segments=[{}]", "flows.0.segments"),
        (
            "flows.0.segments=[{}, { cc = \"nope\" }]",
            "flows.0.segments.1.cc",
        ),
        (
            "flows.0.segments=[{ mss = \"0B\" }, {}]",
            "flows.0.segments.0.mss",
        ),
        ("flows.0.transport=\"udp\"", "flows.0.transport"),
        ("flows.0.size=\"0B\"", "flows.0.size"),
        ("flows.0.kind=\"file\"", "flows.0.depots"),
    ] {
        assert_eq!(err_path(&text, &[set]), path, "{set}");
    }
    // A missing `depots` is an empty chain too.
    let no_depots = text.replace("depots = [\"d1\"]\n", "");
    assert_eq!(err_path(&no_depots, &[]), "flows.0.depots");
}

/// The plan lists every segment with its endpoints and settings, and `fatpipe schema` has the
/// new fields.
#[test]
fn the_plan_shows_every_segment_and_the_schema_the_fields() {
    let text = line(
        &["100Mbps", "100Mbps", "100Mbps"],
        "5ms",
        0.0,
        "size = \"1MB\"",
    );
    let sc = load_str(&text, &[]).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&elaborate(&sc, Some(1)).unwrap().to_json()).unwrap();
    let relay = &json["flows"][0]["relay"];
    assert_eq!(relay["depots"], serde_json::json!(["d1", "d2"]));
    let segs = relay["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 3);
    assert_eq!(segs[2]["src"], "d2");
    assert_eq!(segs[2]["dst"], "h3");
    assert!(segs[0]["rwnd_bytes"].as_u64().unwrap() > 0);
    assert_eq!(relay["depot_buffer_bytes"].as_array().unwrap().len(), 2);
    let schema = fatpipe_scenario::json_schema();
    for field in ["depots", "depot_buffer", "segments"] {
        assert!(schema.contains(&format!("\"{field}\"")), "{field}");
    }
}
