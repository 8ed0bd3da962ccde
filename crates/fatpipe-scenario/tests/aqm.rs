//! Active queue management through the whole engine (docs/aqm.md): each discipline's plan values,
//! its results with the engine's shortcuts on and off (identical), what it does to a congested
//! bottleneck, and bad input named by field.

use crate::common;

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

// ---- CoDel, PIE, FQ-CoDel, H2, PI ---------------------------------------------------------------

const CODEL: &str = r#"topology.bottleneck.queue={kind="codel", limit="200pkt"}"#;
const FQ_CODEL: &str = r#"topology.bottleneck.queue={kind="fq_codel", limit="200pkt"}"#;
const PIE: &str = r#"topology.bottleneck.queue={kind="pie", limit="200pkt"}"#;
/// Hollot's PI designed by `fatpipe.models.design_pi` for DUMBBELL's operating point: 8 Reno
/// flows, C = 10 Mb/s / 1500 B = 833.3 packets/s, round-trip propagation 44 ms, q_ref = 25
/// packets (p0 = 0.0337 is the fluid model's equilibrium; crossover 3.8 rad/s, phase margin 61°).
const PI: &str = r#"topology.bottleneck.queue={kind="pi", limit="200pkt", sample_hz=160, q_ref=25, p0=0.0337, a=0.00114017, b=0.00111545}"#;
/// Algorithm 1 with a second-order controller of positive DC gain around q0 = 25: the PI above
/// followed by a low-pass pole at z = 0.5, C(z) = 0.5·(a − b z⁻¹)/((1 − z⁻¹)(1 − 0.5 z⁻¹)),
/// i.e. a = 0.5·0.00114017, b = −0.5·0.00111545, c = 0, d = 1.5, e = −0.5: a hand-made controller
/// with integral action, so the test checks the queue discipline, not a design (the H2 synthesis
/// of `fatpipe.models` has no integrator and settles below q0 at this small-window point; see
/// docs/aqm.md).
const H2: &str = r#"topology.bottleneck.queue={kind="h2", limit="200pkt", sample_hz=160, q0=25, p0=0.0337, a=0.000570085, b=-0.000557725, c=0, d=1.5, e=-0.5}"#;

fn aqm_plan(set: &str) -> serde_json::Value {
    let plan = elaborate(&load_str(DUMBBELL, &[set.to_string()]).unwrap(), None).unwrap();
    let json = serde_json::to_value(&plan).unwrap();
    json["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == "r0->r1")
        .unwrap()["queue"]["aqm"]
        .clone()
}

#[test]
fn codel_pie_fq_codel_h2_pi_plan_values_are_explicit() {
    // RFC defaults: CoDel 5 ms / 100 ms / 1500 B (RFC 8289), FQ-CoDel 1024 flows, quantum 1514 B
    // (RFC 8290), PIE 15 ms, 15 ms, 0.125, 1.25, 150 ms, 10 %, 16384 B (RFC 8033).
    let c = aqm_plan(CODEL);
    assert_eq!(c["kind"], "codel");
    assert_eq!(c["target_ns"], 5_000_000);
    assert_eq!(c["interval_ns"], 100_000_000);
    assert_eq!(c["mtu_bytes"], 1500);
    assert_eq!(c["ecn"], false);
    let f = aqm_plan(FQ_CODEL);
    assert_eq!(f["kind"], "fq_codel");
    assert_eq!(f["flows"], 1024);
    assert_eq!(f["quantum_bytes"], 1514);
    assert_eq!(f["target_ns"], 5_000_000);
    let p = aqm_plan(PIE);
    assert_eq!(p["kind"], "pie");
    assert_eq!(p["target_ns"], 15_000_000);
    assert_eq!(p["t_update_ns"], 15_000_000);
    assert_eq!(p["alpha"], 0.125);
    assert_eq!(p["beta"], 1.25);
    assert_eq!(p["max_burst_ns"], 150_000_000);
    assert_eq!(p["mark_ecnth"], 0.1);
    assert_eq!(p["cap_drop"], true);
    assert_eq!(p["derandomize"], false);
    assert_eq!(p["estimator"], "timestamp");
    assert_eq!(p["dq_threshold_bytes"], 16384);
    // Given values pass through.
    let p = aqm_plan(
        r#"topology.bottleneck.queue={kind="pie", limit="200pkt", target="20ms", alpha=0.25, estimator="dq_rate", derandomize=true, ecn=true}"#,
    );
    assert_eq!(p["target_ns"], 20_000_000);
    assert_eq!(p["alpha"], 0.25);
    assert_eq!(p["estimator"], "dq_rate");
    assert_eq!(p["ecn"], true);
    // H2: the paper's coefficients and 8333 Hz unless given; q0 and p0 as given.
    let h = aqm_plan(r#"topology.bottleneck.queue={kind="h2", limit="200pkt", q0=100, p0=0.001}"#);
    assert_eq!(h["kind"], "h2");
    assert_eq!(h["sample_hz"], 8333.0);
    assert_eq!(h["q0"], 100.0);
    assert_eq!(h["p0"], 0.001);
    for (k, v) in [
        ("a", 7.361e-10),
        ("b", 3.06e-13),
        ("c", 7.358e-10),
        ("d", 0.08609),
        ("e", 0.9131),
    ] {
        assert_eq!(h[k], v, "{k}");
    }
    assert_eq!(aqm_plan(H2)["d"], 1.5);
    // PI: ns-2's a, b, q_ref, p0 at Hollot's 160 Hz.
    let p = aqm_plan(r#"topology.bottleneck.queue={kind="pi", limit="200pkt"}"#);
    assert_eq!(p["kind"], "pi");
    assert_eq!(p["sample_hz"], 160.0);
    assert_eq!(p["q_ref"], 50.0);
    assert_eq!(p["p0"], 0.0);
    assert_eq!(p["a"], 1.822e-5);
    assert_eq!(p["b"], 1.816e-5);
    assert_eq!(aqm_plan(PI)["q_ref"], 25.0);
}

/// Mean of the bottleneck's queue samples over the second half of the run, packets.
fn late_mean_queue(r: &fatpipe_sim::results::SimResults) -> f64 {
    let s = &r.queue_series;
    let b = r.link_names.iter().position(|n| n == "r0->r1").unwrap() as u32;
    let v: Vec<f64> = (0..s.t_s.len())
        .filter(|&i| s.link[i] == b && s.t_s[i] >= 10.0)
        .map(|i| s.len_pkts[i] as f64)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

fn utilisation(r: &fatpipe_sim::results::SimResults) -> f64 {
    r.links
        .iter()
        .find(|l| l.link == "r0->r1")
        .unwrap()
        .utilisation
}

#[test]
fn each_aqm_keeps_the_queue_near_its_target_where_droptail_fills_the_buffer() {
    // A packet of 1500 bytes takes 1.2 ms at 10 Mb/s: queue delay (ms) = 1.2 × packets.
    let dt = run(DUMBBELL, &[], 1);
    let dt_q = late_mean_queue(&dt);
    assert!(dt_q > 100.0, "droptail {dt_q}");
    let ms = |q: f64| 1.2 * q;
    // CoDel and FQ-CoDel control the minimum sojourn time over an interval to their 5 ms
    // target, so the mean delay sits above it: eight Reno flows with ~6-packet windows need a
    // drop rate of a few per cent (~25 drops/s), which CoDel reaches only with count ≈ 6–9, i.e.
    // after a queue has stood above target for several intervals. Measured (seed 1, second half):
    // CoDel 13.5 packets (16 ms), FQ-CoDel 10.4 (12.5 ms), against DropTail's ~150 (180 ms). The
    // bound, 25 ms, is five targets and a seventh of DropTail's delay. Nearly every drop is
    // CoDel's; FQ-CoDel's few tail drops come from the slow-start overshoot of the first second.
    for set in [CODEL, FQ_CODEL] {
        let r = run(DUMBBELL, &[set], 1);
        let q = bottleneck(&r);
        let d = ms(late_mean_queue(&r));
        assert!(d > 2.0 && d < 25.0, "{set}: mean delay {d} ms");
        assert!(
            q.drops_aqm_forced > 0 && q.drops_tail * 10 < q.drops_aqm_forced,
            "{q:?}"
        );
        assert!(utilisation(&r) > 0.95, "{set}: {}", utilisation(&r));
    }
    // PIE regulates the mean delay itself to its 15 ms target (measured: 12.6 packets, 15.1 ms);
    // its drops are random (AqmEarly). Its tail drops are the first second's: the burst
    // allowance (150 ms) lets slow start fill the buffer.
    let r = run(DUMBBELL, &[PIE], 1);
    let d = ms(late_mean_queue(&r));
    assert!(d > 10.0 && d < 20.0, "pie: mean delay {d} ms");
    let q = bottleneck(&r);
    assert!(
        q.drops_aqm_early > 0 && q.drops_tail < q.drops_aqm_early / 4,
        "{q:?}"
    );
    assert!(utilisation(&r) > 0.95, "pie: {}", utilisation(&r));
    // PI (integral action) and the H2 recursion hold the mean queue at q_ref = q0 = 25 packets.
    for set in [PI, H2] {
        let r = run(DUMBBELL, &[set], 1);
        let q = late_mean_queue(&r);
        assert!((q - 25.0).abs() < 6.0, "{set}: mean queue {q}");
        assert_eq!(bottleneck(&r).drops_tail, 0);
        assert!(utilisation(&r) > 0.9, "{set}: {}", utilisation(&r));
        // The series carry the controller's probability (around p0) and its last sample.
        let s = &r.queue_series;
        let b = r.link_names.iter().position(|n| n == "r0->r1").unwrap() as u32;
        let probs: Vec<f64> = (0..s.t_s.len())
            .filter(|&i| s.link[i] == b && s.t_s[i] >= 10.0)
            .map(|i| s.prob[i])
            .collect();
        let mean_p = probs.iter().sum::<f64>() / probs.len() as f64;
        assert!(mean_p > 0.005 && mean_p < 0.1, "{set}: mean p {mean_p}");
    }
}

#[test]
fn every_aqm_gives_identical_results_with_the_engines_shortcuts_on_and_off() {
    for (i, set) in [CODEL, FQ_CODEL, PIE, PI, H2].into_iter().enumerate() {
        assert_shortcuts_identical(DUMBBELL, &[set], 5 + i as u64);
        // With ECN: the same queue marking ECT packets, TCP reacting to ECE.
        let ecn = set.replacen("limit=\"200pkt\"", "limit=\"200pkt\", ecn=true", 1);
        assert_shortcuts_identical(DUMBBELL, &[ecn.as_str(), "tcp.ecn=true"], 11 + i as u64);
    }
    // PIE's optional parts.
    let pie = r#"topology.bottleneck.queue={kind="pie", limit="200pkt", estimator="dq_rate", derandomize=true, cap_drop=false}"#;
    assert_shortcuts_identical(DUMBBELL, &[pie], 17);
}

#[test]
fn ecn_aqms_mark_instead_of_dropping() {
    for set in [CODEL, FQ_CODEL, PIE, PI, H2] {
        let ecn = set.replacen("limit=\"200pkt\"", "limit=\"200pkt\", ecn=true", 1);
        let r = run(DUMBBELL, &[ecn.as_str(), "tcp.ecn=true"], 2);
        let q = bottleneck(&r);
        let marks = q.marks_aqm_early + q.marks_aqm_forced;
        let drops = q.drops_aqm_early + q.drops_aqm_forced;
        assert!(marks > 0, "{set}: {q:?}");
        // The flows' new data are ECT, so nearly every signal is a mark; the drops left hit
        // retransmissions, which are never ECT (RFC 3168 §6.1.5) — and PIE drops while its
        // probability is above mark_ecnth (10 %, RFC 8033 §5.1), as after the slow-start
        // overshoot of the first second.
        if set == PIE {
            assert!(drops < marks, "{set}: {q:?}");
        } else {
            assert!(drops * 10 <= marks, "{set}: {q:?}");
        }
    }
}

#[test]
fn bad_aqm_parameters_are_named_by_field() {
    let q = |kind: &str, fields: &str| {
        format!("topology.bottleneck.queue={{kind=\"{kind}\", limit=\"200pkt\", {fields}}}")
    };
    let p = |f: &str| format!("topology.bottleneck.queue.{f}");
    let cases = [
        (q("codel", "target=\"0ms\""), p("target")),
        (q("codel", "interval=\"0s\""), p("interval")),
        (q("codel", "mtu=\"3pkt\""), p("mtu")),
        (q("fq_codel", "interval=\"0ms\""), p("interval")),
        (q("fq_codel", "flows=0"), p("flows")),
        (q("fq_codel", "quantum=\"0B\""), p("quantum")),
        (q("pie", "target=\"0ms\""), p("target")),
        (q("pie", "t_update=\"0ms\""), p("t_update")),
        (q("pie", "alpha=-1"), p("alpha")),
        (q("pie", "mark_ecnth=1.5"), p("mark_ecnth")),
        (q("pie", "estimator=\"guess\""), p("estimator")),
        (q("h2", "p0=0.01"), p("q0")),
        (q("h2", "q0=100"), p("p0")),
        (q("h2", "q0=100, p0=0.01, sample_hz=0"), p("sample_hz")),
        (q("h2", "q0=100, p0=0.01, sample_hz=-8333"), p("sample_hz")),
        (q("h2", "q0=100, p0=2"), p("p0")),
        (q("pi", "sample_hz=0"), p("sample_hz")),
        (q("pi", "p0=-0.5"), p("p0")),
        // Unknown fields per kind.
        (q("codel", "max_p=0.1"), p("max_p")),
        (q("codel", "alpha=0.1"), p("alpha")),
        (q("fq_codel", "sample_hz=100"), p("sample_hz")),
        (q("pie", "interval=\"100ms\""), p("interval")),
        (q("pie", "flows=4"), p("flows")),
        (q("h2", "q0=1, p0=0.1, q_ref=5"), p("q_ref")),
        (q("pi", "c=0.1"), p("c")),
        (q("pi", "q0=5"), p("q0")),
        (q("red", "target=\"5ms\""), p("target")),
        (q("droptail", "ecn=true"), p("ecn")),
        (q("codel", "design={flows=10}"), p("design")),
    ];
    for (set, path) in &cases {
        assert_eq!(&err_path(DUMBBELL, &[set.as_str()]), path, "{set}");
    }
}

#[test]
fn an_unexpanded_design_table_is_rejected_with_the_reason() {
    let set = r#"topology.bottleneck.queue={kind="h2", limit="200pkt", design={flows=10, q0=100}}"#;
    let e = load_str(DUMBBELL, &[set.to_string()])
        .and_then(|sc| elaborate(&sc, None).map(|_| ()))
        .unwrap_err();
    assert_eq!(e.path, "topology.bottleneck.queue.design");
    assert!(
        e.message.contains("expanded by the Python front end")
            && e.message.contains("a..e, q0, p0"),
        "{}",
        e.message
    );
    let set = r#"topology.bottleneck.queue={kind="pi", limit="200pkt", design={flows=10, q0=100}}"#;
    assert_eq!(
        err_path(DUMBBELL, &[set]),
        "topology.bottleneck.queue.design"
    );
}
