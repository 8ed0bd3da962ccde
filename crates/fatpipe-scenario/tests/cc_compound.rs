//! Compound TCP's signature: on an empty long path the window climbs as α·win^k per RTT (far
//! faster than Reno), and once a queue builds the delay window backs off so that the flow keeps
//! about γ packets queued while its Reno part creeps up.
//!
//! One flow over a ~100 ms-RTT dumbbell (48 ms bottleneck + 2 × 1 ms access, each way), 100 Mb/s
//! (BDP ≈ 833 packets), a deep drop-tail buffer (1666 packets, so no loss in the run), slow start
//! ended at 100 packets (tcp.initial_ssthresh) so both algorithms start congestion avoidance from
//! the same window, 30 s.
//!
//! Expected: dw/dRTT = α·w^0.75 from w = 100 gives w^0.25 growing by α/4 = 0.031 per RTT, so the
//! window reaches the BDP (833^0.25 = 5.37 from 3.16) after ~71 RTTs ≈ 7 s; Reno needs ~730 RTTs.
//! At 12 s CTCP's goodput is the link's (≥ 90 Mb/s asserted) and Reno's is ~(100 + 120)/833 of it
//! (≤ 40 Mb/s asserted). Afterwards dwnd holds diff near γ = 30: the queueing delay over 15–30 s,
//! converted to packets at the link rate, is asserted within [15, 60] (γ ± a round's worth of
//! growth and the decrease's overshoot: dwnd moves by up to α·w^k ≈ 20 packets per RTT); Reno's
//! queue stays 0 until its window passes the BDP.

use fatpipe_scenario::{elaborate, load_str};

struct Run {
    goodput_at_12s_bps: f64,
    mean_queue_15_30: f64,
}

fn run(cc: &str, params: &str) -> Run {
    let text = format!(
        r#"
duration = "30s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "100Mbps"
delay = "48ms"
queue = {{ kind = "droptail", limit = "1666pkt" }}
[tcp]
cc = "{cc}"
cc_params = {{ {params} }}
initial_ssthresh = 100
[[flows]]
start_spread = "0s"
[monitor]
interval = "100ms"
"#
    );
    let sc = load_str(&text, &[]).unwrap();
    let mut sim = elaborate(&sc, Some(1)).unwrap().build().unwrap();
    sim.run().unwrap();
    let r = sim.results();
    assert_eq!(
        r.queues.iter().map(|q| q.drops_tail).sum::<u64>(),
        0,
        "{cc}: drops"
    );
    let fs = &r.flow_series;
    let at = |t: f64| fs.t_s.iter().position(|&x| x >= t - 1e-9).unwrap();
    let i12 = at(12.0);
    let goodput_at_12s_bps = fs.goodput_bps[i12];
    let base = fs
        .srtt_s
        .iter()
        .copied()
        .filter(|&s| s > 0.0)
        .fold(f64::MAX, f64::min);
    let pkt_s = 1500.0 * 8.0 / 100e6;
    let q: Vec<f64> = (at(15.0)..fs.t_s.len())
        .map(|i| (fs.srtt_s[i] - base) / pkt_s)
        .collect();
    Run {
        goodput_at_12s_bps,
        mean_queue_15_30: q.iter().sum::<f64>() / q.len() as f64,
    }
}

#[test]
fn compound_climbs_fast_then_keeps_about_gamma_queued() {
    for params in ["", "variant = \"ns2\""] {
        let c = run("compound", params);
        eprintln!(
            "compound {params}: goodput at 12 s {:.1} Mb/s, queue 15-30 s {:.1} pkts",
            c.goodput_at_12s_bps / 1e6,
            c.mean_queue_15_30
        );
        assert!(
            c.goodput_at_12s_bps >= 90e6,
            "{params}: {}",
            c.goodput_at_12s_bps
        );
        assert!(
            (15.0..=60.0).contains(&c.mean_queue_15_30),
            "{params}: queue {}",
            c.mean_queue_15_30
        );
    }
    let r = run("reno", "");
    eprintln!(
        "reno: goodput at 12 s {:.1} Mb/s, queue 15-30 s {:.1} pkts",
        r.goodput_at_12s_bps / 1e6,
        r.mean_queue_15_30
    );
    assert!(
        r.goodput_at_12s_bps <= 40e6,
        "reno {}",
        r.goodput_at_12s_bps
    );
}
