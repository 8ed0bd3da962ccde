//! Active queue management through the whole engine (docs/aqm.md): each discipline's plan values,
//! its results with the engine's shortcuts on and off (identical), what it does to a congested
//! bottleneck, and bad input named by field.

mod common;

use common::{assert_shortcuts_identical, err_path, run};
use fatpipe_scenario::{elaborate, load_str};

/// Eight Reno flows through a 10 Mb/s, 20 ms bottleneck; access links at 100 Mb/s (their
/// queues never build, so the engine shortcuts them). Flows start over the first second.
const DUMBBELL: &str = r#"
duration = "20s"
[topology]
kind = "dumbbell"
pairs = 8
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "droptail", limit = "200pkt" } }
access = { rate = "100Mbps", delay = "1ms" }
[tcp]
cc = "reno"
[[flows]]
kind = "bulk"
pairs = "all"
start_spread = "1s"
[monitor]
interval = "50ms"
"#;

const RED: &str = r#"topology.bottleneck.queue={kind="red", limit="200pkt", min_th=15, max_th=45, max_p=0.1, w_q=0.002}"#;

fn bottleneck(r: &fatpipe_sim::results::SimResults) -> &fatpipe_sim::results::QueueRow {
    r.queues.iter().find(|q| q.link == "r0->r1").unwrap()
}

#[test]
fn red_plan_values_are_explicit_and_access_links_keep_droptail() {
    let sets = vec![RED.to_string()];
    let plan = elaborate(&load_str(DUMBBELL, &sets).unwrap(), None).unwrap();
    let json = serde_json::to_value(&plan).unwrap();
    let links = json["links"].as_array().unwrap();
    let b = links.iter().find(|l| l["name"] == "r0->r1").unwrap();
    assert_eq!(b["queue"]["kind"], "red");
    assert_eq!(b["queue"]["aqm"]["min_th"], 15.0);
    assert_eq!(b["queue"]["aqm"]["gentle"], true);
    let a = links.iter().find(|l| l["name"] == "s0->r0").unwrap();
    assert_eq!(a["queue"]["kind"], "droptail");
    assert!(a["queue"].get("aqm").is_none());
    // Only max_th given: min_th = max_th / 3, whatever the rate.
    let sets =
        vec![r#"topology.bottleneck.queue={kind="red", limit="200pkt", max_th=3}"#.to_string()];
    let plan = elaborate(&load_str(DUMBBELL, &sets).unwrap(), None).unwrap();
    let json = serde_json::to_value(&plan).unwrap();
    let b = &json["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "r0->r1")
        .unwrap()["queue"]["aqm"];
    assert_eq!(b["min_th"], 1.0);
    // Defaults from the link's rate (Adaptive RED §5): 10 Mb/s of 1500-byte packets is 833 pkt/s;
    // min_th = max(5, 0.005·833/2) = 5, max_th = 15, w_q = 1 − exp(−1/833).
    let sets = vec![r#"topology.bottleneck.queue={kind="red", limit="200pkt"}"#.to_string()];
    let plan = elaborate(&load_str(DUMBBELL, &sets).unwrap(), None).unwrap();
    let json = serde_json::to_value(&plan).unwrap();
    let b = &json["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "r0->r1")
        .unwrap()["queue"]["aqm"];
    assert_eq!(b["min_th"], 5.0);
    assert_eq!(b["max_th"], 15.0);
    let w = b["w_q"].as_f64().unwrap();
    assert!(
        (w - (1.0 - (-1.0f64 / (10e6 / 12000.0)).exp())).abs() < 1e-12,
        "{w}"
    );
}

#[test]
fn red_keeps_the_average_queue_between_its_thresholds_where_droptail_fills_the_buffer() {
    let dt = run(DUMBBELL, &[], 1);
    let red = run(DUMBBELL, &[RED], 1);
    let (qd, qr) = (bottleneck(&dt), bottleneck(&red));
    // DropTail: eight Reno flows keep the 200-packet buffer mostly full.
    assert!(
        qd.mean_len_pkts > 100.0,
        "droptail mean queue {}",
        qd.mean_len_pkts
    );
    assert_eq!(qd.drops_aqm_early, 0);
    // RED: early drops do the work, the mean queue sits between min_th and max_th (15..45 with
    // the EWMA lagging the instantaneous queue), and the buffer never overflows.
    assert!(qr.drops_aqm_early > 0);
    assert!(
        qr.mean_len_pkts > 10.0 && qr.mean_len_pkts < 50.0,
        "red mean queue {}",
        qr.mean_len_pkts
    );
    assert!(qr.drops_tail < qr.drops_aqm_early / 10, "{qr:?}");
    // The series carry the average and p_b; p_b stays within [0, max_p] below max_th.
    let s = &red.queue_series;
    let b = red.link_names.iter().position(|n| n == "r0->r1").unwrap() as u32;
    let avgs: Vec<f64> = (0..s.t_s.len())
        .filter(|&i| s.link[i] == b)
        .map(|i| s.avg_pkts[i])
        .collect();
    let late = &avgs[avgs.len() / 2..];
    let mean_avg = late.iter().sum::<f64>() / late.len() as f64;
    assert!((15.0..45.0).contains(&mean_avg), "{mean_avg}");
    assert!((0..s.t_s.len())
        .filter(|&i| s.link[i] == b)
        .all(|i| s.prob[i] >= 0.0 && s.prob[i] <= 1.0));
    // Utilisation stays high (RED trades a little throughput for the short queue).
    let util = red
        .links
        .iter()
        .find(|l| l.link == "r0->r1")
        .unwrap()
        .utilisation;
    assert!(util > 0.9, "{util}");
}

#[test]
fn red_results_are_identical_with_the_engines_shortcuts_on_and_off() {
    assert_shortcuts_identical(DUMBBELL, &[RED], 3);
    let ecn = r#"topology.bottleneck.queue={kind="red", limit="200pkt", min_th=15, max_th=45, ecn=true, adaptive=true, mode="bytes"}"#;
    assert_shortcuts_identical(DUMBBELL, &[ecn, "tcp.ecn=true"], 4);
}

#[test]
fn bad_aqm_input_is_named() {
    let q = |fields: &str| {
        format!("topology.bottleneck.queue={{kind=\"red\", limit=\"200pkt\", {fields}}}")
    };
    let cases = [
        (
            q("min_th=30, max_th=30"),
            "topology.bottleneck.queue.max_th",
        ),
        (
            q("min_th=40, max_th=30"),
            "topology.bottleneck.queue.max_th",
        ),
        (q("max_p=0"), "topology.bottleneck.queue.max_p"),
        (q("max_p=1.5"), "topology.bottleneck.queue.max_p"),
        (q("w_q=1"), "topology.bottleneck.queue.w_q"),
        (q("w_q=-0.1"), "topology.bottleneck.queue.w_q"),
        (q("mode=\"words\""), "topology.bottleneck.queue.mode"),
        (
            q("mean_packet=\"10pkt\""),
            "topology.bottleneck.queue.mean_packet",
        ),
        (
            r#"topology.bottleneck.queue={kind="droptail", limit="200pkt", max_p=0.1}"#.to_string(),
            "topology.bottleneck.queue.max_p",
        ),
        (
            r#"topology.bottleneck.queue={kind="sfq", limit="200pkt"}"#.to_string(),
            "topology.bottleneck.queue.kind",
        ),
    ];
    for (set, path) in cases {
        assert_eq!(err_path(DUMBBELL, &[set.as_str()]), path, "{set}");
    }
}
