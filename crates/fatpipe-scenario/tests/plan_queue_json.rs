//! A plan queue read back from its JSON form (`links[i].queue` as `fatpipe plan` prints it), as
//! the userspace link emulator does: every discipline round-trips to the same plan values and a
//! queue of the same kind; bad input is named by field.

use fatpipe_core::Rate;
use fatpipe_scenario::plan::PlanQueue;
use fatpipe_scenario::{elaborate, load_str};

const BASE: &str = r#"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "droptail", limit = "200pkt" } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
kind = "bulk"
pairs = "all"
"#;

fn bottleneck_queue_json(queue: &str) -> serde_json::Value {
    let sets = vec![format!("topology.bottleneck.queue={queue}")];
    let plan = elaborate(&load_str(BASE, &sets).unwrap(), None).unwrap();
    let json = serde_json::to_value(&plan).unwrap();
    json["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "r0->r1")
        .unwrap()["queue"]
        .clone()
}

#[test]
fn every_discipline_round_trips_through_json() {
    for (queue, kind) in [
        (r#"{kind="droptail", limit="200pkt"}"#, "droptail"),
        (r#"{kind="droptail", limit="300000B"}"#, "droptail"),
        (r#"{kind="red", limit="200pkt", ecn=true}"#, "red"),
        (r#"{kind="red", limit="200pkt", mode="bytes"}"#, "red"),
        (r#"{kind="codel", limit="200pkt"}"#, "codel"),
        (r#"{kind="fq_codel", limit="200pkt", flows=64}"#, "fq_codel"),
        (
            r#"{kind="pie", limit="200pkt", estimator="dq_rate"}"#,
            "pie",
        ),
        (r#"{kind="h2", limit="200pkt", q0=100.0, p0=0.01}"#, "h2"),
        (r#"{kind="pi", limit="200pkt", q_ref=50}"#, "pi"),
    ] {
        let v = bottleneck_queue_json(queue);
        let q = PlanQueue::from_json(&v, "q").unwrap_or_else(|e| panic!("{queue}: {e}"));
        assert_eq!(serde_json::to_value(&q).unwrap(), v, "{queue}");
        let built = q.build(Rate(10_000_000), 1, "r0->r1");
        assert_eq!(built.kind(), kind, "{queue}");
    }
}

#[test]
fn bad_plan_queues_are_named_by_field() {
    let err = |v: serde_json::Value| PlanQueue::from_json(&v, "links[0].ab.queue").unwrap_err();
    let e = err(serde_json::json!({"kind": "droptail", "limit_packets": 0, "limit_bytes": null}));
    assert_eq!(e.path, "links[0].ab.queue.limit_packets");
    let e = err(serde_json::json!({"kind": "fifo", "limit_packets": 5, "limit_bytes": null}));
    assert_eq!(e.path, "links[0].ab.queue.kind");
    let e = err(serde_json::json!({"kind": "codel", "limit_packets": 5, "limit_bytes": null}));
    assert_eq!(e.path, "links[0].ab.queue.aqm");
    let mut v = bottleneck_queue_json(r#"{kind="codel", limit="200pkt"}"#);
    v["aqm"]["target_ns"] = serde_json::json!(0);
    let e = err(v.clone());
    assert_eq!(e.path, "links[0].ab.queue.aqm");
    assert!(e.message.contains("target"), "{e}");
    v["aqm"]["target_ns"] = serde_json::json!("5ms");
    let e = err(v.clone());
    assert_eq!(e.path, "links[0].ab.queue.aqm.target_ns", "{e}");
    v["aqm"]["target_ns"] = serde_json::json!(5_000_000);
    v["aqm"]["bogus"] = serde_json::json!(1);
    let e = err(v);
    assert!(e.message.contains("bogus"), "{e}");
    let mut v = bottleneck_queue_json(r#"{kind="pie", limit="200pkt"}"#);
    v["kind"] = serde_json::json!("red");
    let e = err(v);
    assert!(e.path.starts_with("links[0].ab.queue.aqm"), "{e}");
}
