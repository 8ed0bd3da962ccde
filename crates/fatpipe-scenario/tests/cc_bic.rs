//! BIC's signature: after a loss the window climbs fast towards the previous maximum W_max,
//! flattens into a plateau there (binary search), then probes beyond it (max probing).
//!
//! One flow over a 98 ms-RTT dumbbell (48 ms bottleneck + 2 × 1 ms access, each way), 100 Mb/s,
//! drop-tail buffer of half a bandwidth-delay product (408 packets), 30 s, `flow_series` every
//! 10 ms. W_max is followed from the cuts seen in the series with the rule both sources state: a
//! cut at w sets W_max = w, or w·(1 + β)/2 if w is below the previous W_max (fast convergence);
//! a timeout clears it (Linux resets on entering Loss).

use fatpipe_scenario::{elaborate, load_str};

struct Cycle {
    w_max: f64,
    fast_rate: f64,
    near_time: f64,
    near_rate: f64,
    peak: f64,
}

fn cycles(params: &str, beta: f64) -> Vec<Cycle> {
    let text = format!(
        r#"
duration = "30s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "100Mbps"
delay = "48ms"
queue = {{ kind = "droptail", limit = "408pkt" }}
[tcp]
# One step per congestion event in the sampled cwnd (cwnd = ssthresh on entering recovery):
# the cut detection below reads the series; PRR, the default, would spread a cut over the
# recovery's round trip without changing ssthresh or the growth law under test.
cwnd_reduction = "at-once"
cc = "bic"
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
    let (t, c) = (&fs.t_s, &fs.cwnd_pkts);
    let cuts: Vec<usize> = (1..t.len()).filter(|&i| c[i] < c[i - 1]).collect();
    let mut w_max = 0.0f64;
    let mut out = vec![];
    for (k, &i) in cuts.iter().enumerate() {
        let w = c[i - 1] as f64;
        if c[i] <= 1 {
            w_max = 0.0; // timeout
            continue;
        }
        w_max = if w < w_max { w * (1.0 + beta) / 2.0 } else { w };
        let end = cuts.get(k + 1).copied().unwrap_or(t.len());
        if t[i] < 5.0 || end == t.len() {
            continue; // slow start and its aftermath; the unfinished last cycle
        }
        let w0 = c[i] as f64;
        let half = w0 + (w_max - w0) / 2.0;
        let Some(h) = (i..end).find(|&j| c[j] as f64 >= half) else {
            continue;
        };
        let near: Vec<usize> = (i..end)
            .filter(|&j| (c[j] as f64 - w_max).abs() <= 0.01 * w_max)
            .collect();
        let (first, last) = match (near.first(), near.last()) {
            (Some(&a), Some(&b)) if b > a => (a, b),
            _ => continue, // the next loss came before the window reached W_max
        };
        out.push(Cycle {
            w_max,
            fast_rate: (half - w0) / (t[h] - t[i]),
            near_time: near.len() as f64 * 0.01,
            near_rate: (c[last] as f64 - c[first] as f64) / (t[last] - t[first]),
            peak: (i..end).map(|j| c[j] as f64).fold(0.0, f64::max),
        });
    }
    out
}

#[test]
fn window_plateaus_at_the_previous_maximum() {
    for (params, beta) in [("", 819.0 / 1024.0), ("variant = \"paper\"", 0.875)] {
        let cy = cycles(params, beta);
        assert!(cy.len() >= 2, "{params}: {} cycles reach W_max", cy.len());
        for c in &cy {
            // Fast then flat: the first half of the way to W_max at >= 8 times the speed seen
            // within 1% of W_max (a linear AIMD climb keeps one speed throughout; here ~90-120
            // against 5-8 segments/s, the band's upper edge already catching the start of max
            // probing), and at least a second in that 2% band (at the first-half speed the
            // window would cross it in ~0.2 s).
            assert!(
                c.near_time >= 1.0 && c.near_rate <= c.fast_rate / 8.0,
                "{params}: W_max {:.0}: {:.1} s near it at {:.1} seg/s, first half at {:.1} seg/s",
                c.w_max,
                c.near_time,
                c.near_rate,
                c.fast_rate
            );
            // Then max probing takes the window well past the plateau (5%) before the next loss.
            assert!(
                c.peak > 1.05 * c.w_max,
                "{params}: W_max {:.0}, peak {:.0}",
                c.w_max,
                c.peak
            );
        }
    }
}
