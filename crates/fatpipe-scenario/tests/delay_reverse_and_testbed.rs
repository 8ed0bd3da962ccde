//! `delay_reverse` (a link's directions with their own propagation delays, as netem's delay on one
//! side) and the `[testbed]` table (host settings of the testbed back-end): what the plan
//! carries, what a flow sees, and bad input named by field.

use crate::common;

use common::{err_path, run};
use fatpipe_scenario::{elaborate, load_str};

const ONE_WAY: &str = r#"
duration = "5s"
[topology]
kind = "graph"
nodes = [{ name = "snd" }, { name = "rcv" }]
links = [{ between = ["snd", "rcv"], rate = "100Mbps", delay = "40ms", delay_reverse = "0ms" }]
[[flows]]
src = "snd"
dst = "rcv"
"#;

fn plan(text: &str, sets: &[&str]) -> fatpipe_scenario::Plan {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    elaborate(&load_str(text, &sets).unwrap(), Some(1)).unwrap()
}

#[test]
fn each_direction_gets_its_own_delay() {
    let p = plan(ONE_WAY, &[]);
    let d = |name: &str| p.links.iter().find(|l| l.name == name).unwrap().delay_ns;
    assert_eq!(d("snd->rcv"), 40_000_000);
    assert_eq!(d("rcv->snd"), 0);
    // The path's RTT is the sum of both directions, not twice the forward delay.
    assert_eq!(p.flows[0].path_rtt_ns, 40_000_000);
    // Without delay_reverse both directions keep `delay` (plans unchanged).
    let sym = plan(ONE_WAY, &["topology.links.0.delay_reverse=\"40ms\""]);
    assert_eq!(sym.flows[0].path_rtt_ns, 80_000_000);
}

#[test]
fn a_flow_sees_the_sum_of_the_two_delays() {
    // One small flow, no queueing: its smallest RTT sample is the propagation RTT plus the
    // serialisation of a data packet (1500 B at 100 Mb/s = 120 us) and of an ACK (40 B: 3.2 us).
    let r = run(ONE_WAY, &["topology.links.0.delay_reverse=\"10ms\""], 1);
    let min = r.flows[0].rtt_min_s;
    assert!((min - 0.050_1232).abs() < 2e-6, "{min}");
}

#[test]
fn a_dumbbell_reverse_delay_applies_to_every_reverse_direction() {
    let text = r#"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "20ms", delay_reverse = "5ms" }
access = { rate = "100Mbps", delay = "2ms", delay_reverse = "1ms" }
"#;
    let p = plan(text, &[]);
    let d = |name: &str| p.links.iter().find(|l| l.name == name).unwrap().delay_ns / 1_000_000;
    assert_eq!((d("r0->r1"), d("r1->r0")), (20, 5));
    assert_eq!((d("s1->r0"), d("r0->s1")), (2, 1));
    assert_eq!((d("r1->d0"), d("d0->r1")), (2, 1));
    // 2 + 20 + 2 forward, 1 + 5 + 1 back.
    assert!(p.flows.iter().all(|f| f.path_rtt_ns == 31_000_000));
}

#[test]
fn the_testbed_table_reaches_the_plan_in_bytes() {
    let p = plan(
        ONE_WAY,
        &[
            "testbed={no_metrics_save = true, sack = true, rmem = [\"4096B\", \"3125000B\", \"26MB\"], sndbuf = \"162500B\", txqueuelen = 1000}",
        ],
    );
    let t = p.testbed.expect("testbed in the plan");
    assert_eq!(t.tuning.no_metrics_save, Some(true));
    assert_eq!(t.tuning.rmem, Some([4096, 3_125_000, 26_000_000]));
    assert_eq!(t.sndbuf, Some(162_500));
    assert_eq!(t.rcvbuf, None);
    assert_eq!(t.tuning.txqueuelen, Some(1000));
    // A scenario without the table has none in its plan (and its JSON has no key: run keys of
    // existing scenarios do not change).
    let q = plan(ONE_WAY, &[]);
    assert!(q.testbed.is_none());
    assert!(!q.to_json().contains("testbed"));
}

#[test]
fn bad_delay_reverse_and_testbed_fields_are_named() {
    for (set, path) in [
        (
            "topology.links.0.delay_reverse=5",
            "topology.links.0.delay_reverse",
        ),
        (
            "topology.links.0.delay_reverse=\"-1ms\"",
            "topology.links.0.delay_reverse",
        ),
        ("testbed.sack=1", "testbed.sack"),
        ("testbed.nagle=true", "testbed.nagle"),
        ("testbed.sndbuf=\"10pkt\"", "testbed.sndbuf"),
        ("testbed.rcvbuf=\"0B\"", "testbed.rcvbuf"),
        ("testbed.rcvbuf=\"2GB\"", "testbed.rcvbuf"),
        (
            "testbed.rmem=[\"4096B\", \"100B\", \"1MB\"]",
            "testbed.rmem",
        ),
        ("testbed.wmem=[\"4096B\", \"1MB\"]", "testbed.wmem"),
        (
            "testbed.wmem=[\"1pkt\", \"2pkt\", \"3pkt\"]",
            "testbed.wmem.0",
        ),
        ("testbed.txqueuelen=-1", "testbed.txqueuelen"),
        ("testbed.close=\"abort\"", "testbed.close"),
    ] {
        assert_eq!(err_path(ONE_WAY, &[set]), path, "{set}");
    }
    let text = ONE_WAY.replace(
        "delay_reverse = \"0ms\"",
        "delay_reverse = \"0ms\", delay_back = \"1ms\"",
    );
    assert_eq!(err_path(&text, &[]), "topology.links.0.delay_back");
    let db = r#"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "20ms", delay_reverse = "fast" }
"#;
    assert_eq!(err_path(db, &[]), "topology.bottleneck.delay_reverse");
}
