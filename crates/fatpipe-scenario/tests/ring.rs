//! Ring runs and plans (`kind = "ring"`, src/ring.rs; seed 001's four-router ring, docs/ring.md):
//! the plan's shape, the pairs, where each tie-break sends the traffic, bad input, and short
//! runs through the engine.

use fatpipe_scenario::{elaborate, load_str, ErrorKind, Plan, ScenarioError};

const MS: u64 = 1_000_000;

/// Seed 001's ring at its defaults (4 routers, 12 + 12 hosts per LAN, 1 Mb/s, 300 packets).
const SEED: &str = r#"
duration = "1s"
[topology]
kind = "ring"
ring = { delay = "25ms" }
"#;

fn plan(text: &str, sets: &[&str]) -> Plan {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    elaborate(&load_str(text, &sets).unwrap(), None).unwrap()
}

/// The error of loading (and elaborating) `text` with `sets`; loading alone must fail, so bad
/// rings are caught when the file is read.
fn load_err(text: &str, sets: &[&str]) -> ScenarioError {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match load_str(text, &sets) {
        Ok(_) => panic!("expected an error at load time for {sets:?}"),
        Err(e) => e,
    }
}

fn link<'a>(p: &'a Plan, name: &str) -> &'a fatpipe_scenario::plan::PlanLink {
    p.links
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no link {name}"))
}

#[test]
fn seed_ring_nodes_links_rates_delays_and_queues() {
    let p = plan(SEED, &[]);
    // 4 routers + 4 x (12 + 12) hosts = 100 nodes, as in the seed.
    assert_eq!(p.nodes.len(), 100);
    let routers: Vec<&str> = p
        .nodes
        .iter()
        .filter(|n| n.kind == "router")
        .map(|n| n.name.as_str())
        .collect();
    assert_eq!(routers, ["r1", "r2", "r3", "r4"]);
    // Routers first (ns-2 numbers nodes in creation order; see docs/ring.md), then each LAN.
    let names: Vec<&str> = p.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(&names[..6], ["r1", "r2", "r3", "r4", "r1s0", "r1s1"]);
    assert_eq!(names[4 + 12], "r1d0");
    assert_eq!(names[4 + 24], "r2s0");
    assert_eq!(names[99], "r4d11");
    // 4 duplex ring links + 96 duplex host links, two directed links each.
    assert_eq!(p.links.len(), 2 * (4 + 96));
    let ring: Vec<&str> = p.links[..8].iter().map(|l| l.name.as_str()).collect();
    // Default tie-break "ns2": each router's chosen direction first (r1, r4 clockwise; r2, r3
    // counterclockwise), then the other direction.
    assert_eq!(
        ring,
        ["r1->r2", "r2->r1", "r3->r2", "r4->r1", "r1->r4", "r2->r3", "r3->r4", "r4->r3"]
    );
    for l in &p.links[..8] {
        assert_eq!(l.rate_bps, 1_000_000, "{}", l.name);
        assert_eq!(l.delay_ns, 25 * MS, "{}", l.name);
        assert_eq!(l.queue.kind, "droptail");
        assert_eq!(l.queue.limit_packets, Some(300), "{}", l.name);
        assert_eq!(l.queue.limit_bytes, None);
    }
    for l in &p.links[8..] {
        assert_eq!(l.rate_bps, 10_000_000, "{}", l.name);
        assert_eq!(l.delay_ns, MS, "{}", l.name);
        // Host links take the ring links' queue unless given one (the dumbbell's rule).
        assert_eq!(l.queue.limit_packets, Some(300), "{}", l.name);
    }
    assert_eq!(link(&p, "r1s0->r1").to, "r1");
    assert_eq!(link(&p, "r3->r3d11").from, "r3");
    assert_eq!(p.bottleneck.as_deref(), Some("r1->r2"));
}

#[test]
fn pairs_go_to_the_opposite_lan_in_the_seeds_numbering() {
    // Without [[flows]]: one bulk flow per pair, pair i = sender E_(i+1) of the seed.
    let p = plan(SEED, &[]);
    assert_eq!(p.flows.len(), 48);
    let ends: Vec<(&str, &str)> = p
        .flows
        .iter()
        .map(|f| (f.src.as_str(), f.dst.as_str()))
        .collect();
    // E1..E12 at R1 -> D1..D12 at R3; E13..E24 (R2) -> R4; E25..E36 (R3) -> R1; E37..E48 -> R2.
    assert_eq!(ends[0], ("r1s0", "r3d0"));
    assert_eq!(ends[11], ("r1s11", "r3d11"));
    assert_eq!(ends[12], ("r2s0", "r4d0"));
    assert_eq!(ends[24], ("r3s0", "r1d0"));
    assert_eq!(ends[36], ("r4s0", "r2d0"));
    assert_eq!(ends[47], ("r4s11", "r2d11"));
    // Every flow crosses two ring links each way: RTT = 2 x (1 + 25 + 25 + 1) ms.
    assert!(p.flows.iter().all(|f| f.path_rtt_ns == 104 * MS));
    assert!(p.flows.iter().all(|f| f.path_bottleneck_bps == 1_000_000));

    // A study splits the senders between two protocols by pair lists.
    let p = plan(
        SEED,
        &[
            "flows=[{pairs=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23], tcp={cc=\"cubic\"}}, {pairs=[24, 36, 47], tcp={cc=\"reno\"}}]",
        ],
    );
    assert_eq!(p.flows.len(), 27);
    assert!(p.flows[..24].iter().all(|f| f.cc == "cubic"));
    assert_eq!(
        (
            p.flows[24].src.as_str(),
            p.flows[24].dst.as_str(),
            p.flows[24].cc.as_str()
        ),
        ("r3s0", "r1d0", "reno")
    );
    assert_eq!(p.flows[26].src, "r4s11");

    // Fewer receivers than senders: sender j's peer is receiver j mod receivers.
    let p = plan(
        SEED,
        &[
            "topology.senders=3",
            "topology.receivers=2",
            "topology.routers=6",
        ],
    );
    let ends: Vec<(&str, &str)> = p
        .flows
        .iter()
        .map(|f| (f.src.as_str(), f.dst.as_str()))
        .collect();
    assert_eq!(ends.len(), 18);
    assert_eq!(
        &ends[..3],
        [("r1s0", "r4d0"), ("r1s1", "r4d1"), ("r1s2", "r4d0")]
    );
    assert_eq!(ends[17], ("r6s2", "r3d0"));
    assert_eq!(p.nodes.len(), 6 + 6 * 5);
}

#[test]
fn per_link_delays_rates_and_queues() {
    // Link k joins r<k> and r<k+1>; link 4 closes the ring (r4 -- r1).
    let p = plan(
        SEED,
        &[
            "topology.ring={delays=[\"10ms\", \"20ms\", \"30ms\", \"40ms\"], rate=\"2Mbps\", queue={limit=\"100pkt\"}}",
            "topology.lan={rate=\"100Mbps\", delay=\"2ms\", queue={limit=\"64KB\"}}",
            "topology.senders=1",
            "topology.receivers=1",
        ],
    );
    for (a, b, d) in [
        ("r1", "r2", 10),
        ("r2", "r3", 20),
        ("r3", "r4", 30),
        ("r4", "r1", 40),
    ] {
        assert_eq!(link(&p, &format!("{a}->{b}")).delay_ns, d * MS);
        assert_eq!(link(&p, &format!("{b}->{a}")).delay_ns, d * MS);
        assert_eq!(link(&p, &format!("{a}->{b}")).rate_bps, 2_000_000);
        assert_eq!(
            link(&p, &format!("{b}->{a}")).queue.limit_packets,
            Some(100)
        );
    }
    let h = link(&p, "r2->r2d0");
    assert_eq!(
        (
            h.rate_bps,
            h.delay_ns,
            h.queue.limit_bytes,
            h.queue.limit_packets
        ),
        (100_000_000, 2 * MS, Some(64_000), None)
    );
    // With unequal delays the RTT shows which way each flow and its ACKs go (routing counts
    // hops, not delay). ns2: r1 clockwise (r1->r2->r3, 30 ms), r3 counterclockwise back
    // (r3->r2->r1, 30 ms); r2 counterclockwise (r2->r1->r4, 50 ms), r4 clockwise back (r4->r1->r2,
    // 50 ms); host links 4 x 2 ms.
    let rtt: Vec<u64> = p.flows.iter().map(|f| f.path_rtt_ns / MS).collect();
    assert_eq!(rtt, [68, 108, 68, 108]);
    let p2 = plan(
        SEED,
        &[
            "topology.ring={delays=[\"10ms\", \"20ms\", \"30ms\", \"40ms\"]}",
            "topology.senders=1",
            "topology.receivers=1",
            "topology.tie_break=\"clockwise\"",
        ],
    );
    // Clockwise: every flow's data and ACKs go all the way round: 100 ms of ring + 4 ms.
    assert!(p2.flows.iter().all(|f| f.path_rtt_ns == 104 * MS));
}

/// Names of the directed ring links a run sent packets on.
fn busy_ring_links(text: &str, sets: &[&str]) -> (Vec<String>, fatpipe_sim::SimResults) {
    let p = plan(text, sets);
    let mut sim = p.build().unwrap();
    sim.run().unwrap();
    let r = sim.results().clone();
    let mut busy: Vec<String> = r
        .links
        .iter()
        .filter(|l| {
            let (a, b) = l.link.split_once("->").unwrap();
            a.len() == 2 && b.len() == 2 && l.tx_packets > 0
        })
        .map(|l| l.link.clone())
        .collect();
    busy.sort();
    (busy, r)
}

/// A small ring (2 + 2 hosts per LAN, 10 ms ring links) loaded by bulk Reno flows for 20 s.
const RUN: &str = r#"
duration = "20s"
[topology]
kind = "ring"
senders = 2
receivers = 2
ring = { delay = "10ms", queue = { limit = "50pkt" } }
[tcp]
cc = "reno"
send_jitter = "0.1ms"
[[flows]]
pairs = "all"
start_spread = "1s"
"#;

#[test]
fn each_tie_break_loads_the_links_it_says() {
    let util = |r: &fatpipe_sim::SimResults, l: &str| {
        r.links.iter().find(|x| x.link == l).unwrap().utilisation
    };
    // Clockwise: data and ACKs all go clockwise; the counterclockwise links carry nothing.
    let (busy, r) = busy_ring_links(RUN, &["topology.tie_break=\"clockwise\""]);
    assert_eq!(busy, ["r1->r2", "r2->r3", "r3->r4", "r4->r1"]);
    for l in &busy {
        assert!(util(&r, l) > 0.7, "{l}: {}", util(&r, l));
    }
    let (busy, _) = busy_ring_links(RUN, &["topology.tie_break=\"counterclockwise\""]);
    assert_eq!(busy, ["r1->r4", "r2->r1", "r3->r2", "r4->r3"]);
    // ns2: r1 -- r2 carries 2 x senders flows each way, r3 -- r4 nothing.
    let (busy, r) = busy_ring_links(RUN, &[]);
    assert_eq!(
        busy,
        ["r1->r2", "r1->r4", "r2->r1", "r2->r3", "r3->r2", "r4->r1"]
    );
    let shared = util(&r, "r1->r2").min(util(&r, "r2->r1"));
    assert!(shared > 0.8, "{shared}");
    // The links only one LAN's flows use carry less (those flows are limited on the shared one).
    for l in ["r1->r4", "r2->r3", "r3->r2", "r4->r1"] {
        assert!(util(&r, l) < shared, "{l}: {} vs {shared}", util(&r, l));
    }
    // Every flow delivers.
    let gp: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps / 1e3).collect();
    assert!(gp.iter().all(|&g| g > 50.0), "{gp:.0?}");
    let total: f64 = gp.iter().sum();
    // Four flows on r1 -> r2 and four on r2 -> r1, each link 1 Mb/s (less headers and ACKs).
    assert!(total > 1400.0 && total < 2000.0, "{gp:.0?}");
}

/// The example scenario shipped in scenarios/ elaborates and runs.
#[test]
fn example_scenario_runs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/ring.toml");
    let text = std::fs::read_to_string(path).unwrap();
    // Long enough for every flow to start (start_spread 5 s).
    let sc = load_str(&text, &["duration=\"8s\"".to_string()]).unwrap();
    let plan = elaborate(&sc, None).unwrap();
    assert_eq!(plan.flows.len(), 48);
    assert_eq!(plan.nodes.len(), 100);
    let mut sim = plan.build().unwrap();
    sim.run().unwrap();
    assert!(sim.results().flows.iter().all(|f| f.bytes_delivered > 0));
}

#[test]
fn bad_inputs_are_rejected_at_load_time_naming_the_field() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["topology.routers=3"], "topology.routers", "even number"),
        (&["topology.routers=5"], "topology.routers", "got 5"),
        (&["topology.routers=2"], "topology.routers", "at least 4"),
        (&["topology.routers=0"], "topology.routers", "at least 4"),
        (
            &["topology.senders=0"],
            "topology.senders",
            "at least 1 sender",
        ),
        (
            &["topology.receivers=0"],
            "topology.receivers",
            "at least 1 receiver",
        ),
        // A ring with a missing link.
        (
            &["topology.ring={delays=[\"25ms\", \"25ms\", \"25ms\"]}"],
            "topology.ring.delays",
            "has 3 values but a ring of 4 routers has 4 links",
        ),
        (
            &["topology.ring={delays=[\"25ms\", \"25ms\", \"25ms\", \"25ms\", \"1ms\"]}"],
            "topology.ring.delays",
            "5 values",
        ),
        (
            &["topology.ring={delay=\"25ms\", delays=[\"25ms\", \"25ms\", \"25ms\", \"25ms\"]}"],
            "topology.ring.delays",
            "not both",
        ),
        (
            &["topology.ring={rate=\"1Mbps\"}"],
            "topology.ring.delay",
            "missing",
        ),
        (
            &["topology.ring.rate=\"0Mbps\""],
            "topology.ring.rate",
            "positive rate",
        ),
        (
            &["topology.ring.queue={limit=\"0pkt\"}"],
            "topology.ring.queue.limit",
            "queue of size 0",
        ),
        (
            &["topology.ring.queue={kind=\"sfq\", limit=\"10pkt\"}"],
            "topology.ring.queue.kind",
            "droptail",
        ),
        (
            &["topology.lan={rate=\"0bps\"}"],
            "topology.lan.rate",
            "positive rate",
        ),
        (
            &["topology.lan={queue={limit=\"0pkt\"}}"],
            "topology.lan.queue.limit",
            "queue of size 0",
        ),
        (
            &["topology.ring.delay=25"],
            "topology.ring.delay",
            "has no unit",
        ),
        (
            &["topology.tie_break=\"lowest\""],
            "topology.tie_break",
            "counterclockwise",
        ),
        (&["topology.bogus=1"], "topology", "unknown field `bogus`"),
        (
            &["topology.ring.bogus=1"],
            "topology.ring",
            "unknown field `bogus`",
        ),
    ];
    for (sets, path, needle) in cases {
        let e = load_err(SEED, sets);
        assert_eq!(e.kind, ErrorKind::Invalid, "{sets:?}: {e}");
        assert!(e.path.starts_with(path), "{sets:?}: {e}");
        assert!(e.message.contains(needle), "{sets:?}: {e}");
    }
    // No ring table at all.
    let e = load_err(
        "duration = \"1s\"\n[topology]\nkind = \"ring\"\nsenders = 2\n",
        &[],
    );
    assert_eq!(e.path, "topology.ring", "{e}");
    assert!(e.message.contains("25ms"), "{e}");
    // Flow selection by pair index, as on a dumbbell.
    let sets = ["flows=[{pairs=[48]}]".to_string()];
    let e = elaborate(&load_str(SEED, &sets).unwrap(), None).unwrap_err();
    assert_eq!(e.path, "flows.0.pairs", "{e}");
    assert!(e.message.contains("pairs are 0..48"), "{e}");
    // No background sites on a ring (yet).
    let sets = ["background={load=0.2}".to_string()];
    let e = elaborate(&load_str(SEED, &sets).unwrap(), None).unwrap_err();
    assert_eq!(e.path, "background", "{e}");
}
