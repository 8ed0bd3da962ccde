//! Random link loss (`loss`, `loss_reverse`): the rate it asks for, before the queue, the
//! same with and without the engine's shortcuts, TCP's response to it, and bad input.

use crate::common;

use common::{assert_shortcuts_identical, err_path, run};

const CBR: &str = r#"
duration = "20s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "100Mbps", delay = "10ms", loss = 0.01 }
[[flows]]
kind = "cbr"
rate = "50Mbps"
packet = "1000B"
"#;

#[test]
fn a_lossy_link_drops_its_share_before_the_queue() {
    let r = run(CBR, &[], 1);
    let q = r.queues.iter().find(|q| q.link == "r0->r1").unwrap();
    let offered = r.flows[0].data_packets_sent as f64;
    let p = q.drops_random as f64 / offered;
    // 125 000 datagrams at p = 0.01: binomial standard deviation sqrt(p (1 - p) / n) = 2.8e-4;
    // 4 standard deviations: 1.1e-3.
    assert!((p - 0.01).abs() < 1.1e-3, "{p} of {offered}");
    // Half the link's rate: nothing queues, so every drop is a random one.
    assert_eq!(q.drops_tail, 0);
    assert_eq!(q.dropped_bytes, q.drops_random * 1000);
    // The reverse direction asked for nothing.
    let back = r.queues.iter().find(|q| q.link == "r1->r0").unwrap();
    assert_eq!(back.drops_random, 0);
    // The flow sees the same drops.
    assert_eq!(r.flows[0].packets_dropped, q.drops_random);
}

#[test]
fn loss_draws_are_the_links_own_stream() {
    let a = run(CBR, &[], 1);
    let b = run(CBR, &[], 1);
    let c = run(CBR, &[], 2);
    let d = |r: &fatpipe_sim::results::SimResults| {
        r.queues
            .iter()
            .find(|q| q.link == "r0->r1")
            .unwrap()
            .drops_random
    };
    assert_eq!(d(&a), d(&b));
    assert_ne!(d(&a), d(&c));
}

const RENO: &str = r#"
duration = "300s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "1Gbps", delay = "23ms", loss = 0.001, queue = { limit = "5000pkt" } }
[tcp]
cc = "reno"
rack = false
tlp = false
[[flows]]
"#;

/// Reno over a path with uniform random loss and no congestion: Mathis, Semke, Mahdavi & Ott
/// (CCR 1997) give goodput ~ C MSS / (RTT sqrt(p)) with C = sqrt(3/2) = 1.22 for periodic loss;
/// random loss, SACK recovery and no delayed ACKs put C near 1.3 (Padhye et al. 1998 give the
/// range). Measured over seeds 1-5: C = 1.24-1.32, mean 1.28. The mean must lie in [1.0, 1.6],
/// which a wrong loss rate (a factor 2 in p is a factor 1.41 in C) or a link that also lost ACKs
/// would leave.
#[test]
fn reno_follows_the_square_root_law_over_random_loss() {
    let mut cs = Vec::new();
    for seed in 1..=5 {
        let r = run(RENO, &[], seed);
        let f = &r.flows[0];
        let rtt = 2.0 * (0.001 + 0.023 + 0.001);
        let mathis = 1460.0 * 8.0 / (rtt * 0.001f64.sqrt());
        cs.push(f.goodput_bps / mathis);
    }
    let mean = cs.iter().sum::<f64>() / cs.len() as f64;
    assert!((1.0..=1.6).contains(&mean), "C = {mean} ({cs:?})");
}

#[test]
fn lossy_links_are_identical_with_and_without_shortcuts() {
    assert_shortcuts_identical(CBR, &["duration=3s"], 3);
    assert_shortcuts_identical(RENO, &["duration=5s"], 3);
}

#[test]
fn bad_loss_is_named() {
    for (set, path) in [
        ("topology.bottleneck.loss=1.0", "topology.bottleneck.loss"),
        ("topology.bottleneck.loss=-0.1", "topology.bottleneck.loss"),
        (
            "topology.bottleneck.loss_reverse=2",
            "topology.bottleneck.loss_reverse",
        ),
    ] {
        assert_eq!(err_path(CBR, &[set]), path, "{set}");
    }
}
