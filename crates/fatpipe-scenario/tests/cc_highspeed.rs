//! HighSpeed TCP's signature: the relative decrease b(w) shrinks as the window grows.
//!
//! One flow over a 98 ms-RTT dumbbell (48 ms bottleneck + 2 × 1 ms access, each way) with a
//! drop-tail buffer of half a bandwidth-delay product, at 20 Mb/s (loss window ≈ 250 segments)
//! and 400 Mb/s (≈ 5000 segments). Each loss episode is read from `flow_series` (10 ms samples):
//! the window just before the cut and the new ssthresh.

use fatpipe_scenario::{elaborate, load_str};

/// Loss episodes after `after_s`: (cwnd before, ssthresh after), timeouts excluded.
fn cuts(rate: &str, queue: u32, dur: &str, params: &str, after_s: f64) -> Vec<(f64, f64)> {
    let text = format!(
        r#"
duration = "{dur}"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "{rate}"
delay = "48ms"
queue = {{ kind = "droptail", limit = "{queue}pkt" }}
[tcp]
# One step per congestion event in the sampled cwnd (cwnd = ssthresh on entering recovery):
# the cut detection below reads the series; PRR, the default, would spread a cut over the
# recovery's round trip without changing ssthresh or the growth law under test.
cwnd_reduction = "at-once"
cc = "highspeed"
cc_params = {{ {params} }}
[[flows]]
start_spread = "0s"
[monitor]
interval = "10ms"
"#
    );
    let sc = load_str(&text, &[]).unwrap();
    let mut sim = elaborate(&sc, Some(1)).unwrap().build().unwrap();
    sim.run().unwrap();
    let fs = &sim.results().flow_series;
    (1..fs.t_s.len())
        .filter(|&i| fs.t_s[i] > after_s && fs.cwnd_pkts[i] < fs.cwnd_pkts[i - 1])
        .filter(|&i| fs.cwnd_pkts[i] > 1)
        .map(|i| (fs.cwnd_pkts[i - 1] as f64, fs.ssthresh_pkts[i] as f64))
        .collect()
}

/// RFC 3649 b(w) with its defaults, written out independently of the library.
fn b_rfc(w: f64) -> f64 {
    0.5 + (0.1 - 0.5) * (w / 38.0).ln() / (83000.0f64 / 38.0).ln()
}

#[test]
fn relative_decrease_shrinks_as_the_window_grows() {
    // Linux's table holds b constant between rows: within one row step of the formula (the
    // step is 0.023 at w ~ 250, 0.005 at w ~ 5000) plus its 1/256 truncation, so 0.03. The
    // formula variant is exact up to the floor of the new window (< 1/w) and the growth during
    // the last 10 ms sample (< 0.1%): 0.005.
    for (variant, tol) in [("linux", 0.03), ("rfc3649", 0.005)] {
        let params = format!("variant = \"{variant}\"");
        let mut mean_b = vec![];
        // Skip slow start and its first cuts (5 s); 40 s gives >= 2 episodes at 400 Mb/s,
        // whose cycle is ~9 s.
        for (rate, queue, w_lo, w_hi) in [
            ("20Mbps", 83u32, 200.0, 320.0),
            ("400Mbps", 1667, 4000.0, 6000.0),
        ] {
            let ep = cuts(rate, queue, "40s", &params, 5.0);
            assert!(ep.len() >= 2, "{variant} {rate}: {ep:?}");
            let mut sum = 0.0;
            for &(w, ss) in &ep {
                assert!(w > w_lo && w < w_hi, "{variant} {rate}: loss window {w}");
                let b = 1.0 - ss / w;
                assert!(
                    (b - b_rfc(w)).abs() <= tol,
                    "{variant} {rate}: cut {w} -> {ss}, b = {b:.4}, RFC b(w) = {:.4}",
                    b_rfc(w)
                );
                sum += b;
            }
            mean_b.push(sum / ep.len() as f64);
        }
        // The signature: ~0.38 at 250 segments against ~0.24 at 5000 (Reno would cut 0.5 at both).
        assert!(
            mean_b[0] > 0.35 && mean_b[1] < 0.27 && mean_b[0] - mean_b[1] > 0.1,
            "{variant}: b at the small and large window {mean_b:?}"
        );
    }
}
