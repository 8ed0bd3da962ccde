//! FAST's signature: at equilibrium each flow keeps α packets queued in the bottleneck
//! (w = w·baseRTT/RTT + α), the link stays full and nothing is dropped; flows with the same RTT
//! share equally, together keeping N·α queued.
//!
//! Dumbbell, 100 Mb/s, 18 ms bottleneck + 2 × 1 ms access each way (RTT ≈ 40 ms, BDP ≈ 333
//! packets), a 2000-packet buffer (deep: no loss), α = 30 packets, 20 s; the queue is read from
//! the bottleneck's queue series over the last 10 s. Tolerances: the queue within ±20 % of N·α
//! (the update moves the window by γ·(α − backlog) per RTT and the per-ACK spreading lets it
//! overshoot by a fraction of a packet per ACK; measured 29.9 and 60.2), Jain > 0.99
//! (same RTT, same α: the equilibrium is exactly equal shares).

use fatpipe_scenario::{elaborate, load_str};

fn run(pairs: u32) -> (f64, u64, Vec<f64>, f64) {
    let text = format!(
        r#"
duration = "20s"
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.bottleneck]
rate = "100Mbps"
delay = "18ms"
queue = {{ kind = "droptail", limit = "2000pkt" }}
[tcp]
cc = "fast"
cc_params = {{ alpha = 30.0 }}
[[flows]]
start_spread = "0.2s"
[monitor]
interval = "10ms"
"#
    );
    let sc = load_str(&text, &[]).unwrap();
    let mut sim = elaborate(&sc, Some(1)).unwrap().build().unwrap();
    sim.run().unwrap();
    let r = sim.results();
    let drops_late: u64 = r.queues.iter().map(|q| q.drops_tail).sum();
    let qs = &r.queue_series;
    let bott = r.link_names.iter().position(|n| n == "r0->r1").unwrap() as u32;
    let q: Vec<f64> = (0..qs.t_s.len())
        .filter(|&i| qs.link[i] == bott && qs.t_s[i] >= 10.0)
        .map(|i| qs.len_pkts[i] as f64)
        .collect();
    let mean_q = q.iter().sum::<f64>() / q.len() as f64;
    let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let util = r
        .links
        .iter()
        .find(|l| l.link == "r0->r1")
        .unwrap()
        .utilisation;
    (mean_q, drops_late, goodputs, util)
}

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn fast_keeps_alpha_packets_queued_per_flow() {
    for pairs in [1u32, 2] {
        let (q, drops, gp, util) = run(pairs);
        let want = 30.0 * pairs as f64;
        eprintln!("{pairs} flow(s): queue {q:.1} (want {want}), drops {drops}, util {util:.3}, jain {:.4}", jain(&gp));
        assert!(
            (q - want).abs() <= 0.2 * want,
            "{pairs}: queue {q} vs {want}"
        );
        assert!(util > 0.95, "{pairs}: utilisation {util}");
        if pairs > 1 {
            assert!(jain(&gp) > 0.99, "jain {}", jain(&gp));
        }
        assert_eq!(drops, 0, "{pairs}: drops");
    }
}
