//! Parking-lot runs (`kind = "parkinglot"`, src/parking_lot.rs; geometry after TCP Libra's
//! parking lot, Marfia et al., UCLA CSD TR-050037, 2005, reconstructed in docs/parking-lot.md):
//! the main flows at two RTTs both get traffic, the shorter RTT more (Reno), and cross traffic
//! loads every bottleneck in both directions.

use fatpipe_scenario::{elaborate, load_str};

/// Two 20 Mb/s bottlenecks of 10 ms; main pairs at 90 and 180 ms; one bulk cross flow each way
/// on each bottleneck (30 ms).
const RUN: &str = r#"
duration = "30s"
[topology]
kind = "parkinglot"
bottlenecks = 2
pairs = 4
main_rtt = ["90ms", "180ms"]
cross_rtt = "30ms"
[topology.bottleneck]
rate = "20Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = "150pkt" }
[tcp]
cc = "reno"
send_jitter = "0.1ms"
[[flows]]
pairs = "all"
start_spread = "1s"
[[flows]]
src = "x0l"
dst = "x0r"
start_spread = "1s"
[[flows]]
src = "x0r"
dst = "x0l"
start_spread = "1s"
[[flows]]
src = "x1l"
dst = "x1r"
start_spread = "1s"
[[flows]]
src = "x1r"
dst = "x1l"
start_spread = "1s"
"#;

#[test]
fn main_flows_share_and_cross_traffic_loads_every_bottleneck() {
    let sc = load_str(RUN, &[]).unwrap();
    let plan = elaborate(&sc, None).unwrap();
    let mut sim = plan.build().unwrap();
    sim.run().unwrap();
    let r = sim.results();
    let gp = |src: &str| {
        r.flows
            .iter()
            .filter(|f| f.src == src)
            .map(|f| f.goodput_bps / 1e6)
            .sum::<f64>()
    };
    let util = |l: &str| r.links.iter().find(|x| x.link == l).unwrap().utilisation;
    let main: Vec<f64> = (0..4).map(|i| gp(&format!("s{i}"))).collect();
    let cross = |k: usize, fwd: bool| {
        let (a, b) = (format!("x{k}l"), format!("x{k}r"));
        let (src, dst) = if fwd { (a, b) } else { (b, a) };
        r.flows
            .iter()
            .find(|f| f.src == src && f.dst == dst)
            .unwrap()
            .goodput_bps
            / 1e6
    };
    let summary = format!(
        "main {main:.2?}, cross {:.2?}, utilisation {:.3?}",
        [
            cross(0, true),
            cross(0, false),
            cross(1, true),
            cross(1, false)
        ],
        ["r0->r1", "r1->r0", "r1->r2", "r2->r1"].map(util)
    );
    // Every main flow gets traffic across both bottlenecks ...
    assert!(main.iter().all(|&g| g > 0.5), "{summary}");
    // ... and Reno's RTT bias shows: the 90 ms pairs (0, 2) get more than the 180 ms ones.
    let (short, long) = (main[0] + main[2], main[1] + main[3]);
    assert!(
        short > 1.2 * long,
        "90 ms {short:.2} vs 180 ms {long:.2}: {summary}"
    );
    // Cross traffic crosses only its own bottleneck, in both directions, and loads it: each
    // direction of each bottleneck carries data, not only ACKs.
    for k in 0..2 {
        assert!(cross(k, true) > 2.0 && cross(k, false) > 2.0, "{summary}");
    }
    for l in ["r0->r1", "r1->r0", "r1->r2", "r2->r1"] {
        assert!(util(l) > 0.7, "{l}: {summary}");
    }
    // What crosses a bottleneck forward (every main flow + its forward cross flow) fits in it.
    let total: f64 = main.iter().sum();
    for k in 0..2 {
        assert!(total + cross(k, true) <= 20.0, "bottleneck {k}: {summary}");
    }
}

/// The example scenario shipped in scenarios/ elaborates and runs.
#[test]
fn example_scenario_runs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/parking-lot.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let sc = load_str(&text, &["duration=\"3s\"".to_string()]).unwrap();
    let plan = elaborate(&sc, None).unwrap();
    assert_eq!(plan.flows.len(), 10 + 6);
    assert_eq!(plan.bottleneck.as_deref(), Some("r0->r1"));
    let mut sim = plan.build().unwrap();
    sim.run().unwrap();
    assert!(sim.results().flows.iter().all(|f| f.bytes_delivered > 0));
}
