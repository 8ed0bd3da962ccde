//! Signature behaviour of H-TCP (Leith & Shorten 2004): the increase per RTT grows with the time
//! Δ since the last congestion event, α(Δ) = 1 + 10(Δ − 1) + ((Δ − 1)/2)² for Δ > 1 s, so at a
//! large bandwidth-delay product it regains its window far faster than Reno's one segment per RTT.

use fatpipe_scenario::{elaborate, load_str};
use fatpipe_sim::SimResults;

/// 100 Mb/s, 100 ms RTT: BDP ≈ 835 packets of 1500 B, plus a 200-packet buffer.
const BUFFER: f64 = 200.0;

fn scenario(cc: &str) -> String {
    format!(
        r#"
name = "htcp-large-bdp"
duration = "40s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "100Mbps"
delay = "48ms"
queue = {{ kind = "droptail", limit = "200pkt" }}
[tcp]
cc = "{cc}"
[[flows]]
start_spread = "0s"
[monitor]
interval = "100ms"
"#
    )
}

fn run(cc: &str) -> SimResults {
    let sc = load_str(&scenario(cc), &[]).unwrap();
    let mut sim = elaborate(&sc, Some(1)).unwrap().build().unwrap();
    sim.run().unwrap();
    sim.results()
}

/// Sample indices where cwnd fell by more than 10 % from the previous sample (a backoff).
fn drops(cwnd: &[u32]) -> Vec<usize> {
    (1..cwnd.len())
        .filter(|&i| (cwnd[i] as f64) < 0.9 * cwnd[i - 1] as f64)
        .collect()
}

/// Seconds from the first backoff until cwnd reaches `target` again (None: not in this run).
fn regain_time(r: &SimResults, target: f64) -> Option<f64> {
    let f = &r.flow_series;
    let first = *drops(&f.cwnd_pkts).first()?;
    (first..f.t_s.len())
        .find(|&i| f.cwnd_pkts[i] as f64 >= target)
        .map(|i| f.t_s[i] - f.t_s[first])
}

#[test]
fn htcp_growth_accelerates_with_time_since_loss_and_beats_reno() {
    let htcp = run("htcp");
    let reno = run("reno");
    let rtt = htcp.flows[0].rtt_min_s;
    let bdp = 100e6 * rtt / (1500.0 * 8.0);
    // The window at which the buffer overflows is BDP + buffer; aim for 90 % of it.
    let target = 0.9 * (bdp + BUFFER);

    // Reno after the slow-start overshoot restarts from about half of BDP + buffer and adds one
    // segment per RTT: 0.4 (BDP + buffer) ≈ 410 segments take ≈ 41 s (> the 40 s run, hence
    // None). H-TCP with β = 0.5 at its first backoff needs Σ α(Δ) over its RTTs = 410, which the
    // paper's α(Δ) reaches at Δ ≈ 3.8 s; 8 s leaves room for the integer α steps and recovery.
    let t_htcp = regain_time(&htcp, target).expect("H-TCP regains its window");
    let t_reno = regain_time(&reno, target);
    assert!(t_htcp < 8.0, "H-TCP took {t_htcp} s");
    assert!(
        t_reno.map_or(true, |t| t > 30.0),
        "Reno regained in {t_reno:?} s: should need ≈ 41 s"
    );

    // Convex growth within each congestion epoch: the increase over Δ ∈ [2.5, 3.5] s against
    // Δ ∈ [0.5, 1.5] s. The paper's α is 1 for Δ ≤ 1 s and α(3 s) = 22, so the later second adds
    // about ten times the earlier one (α(1.5 s) = 6 and the ramp inside the first window give
    // roughly 22/2); requiring 5× keeps a margin for the integer factor and the 100 ms sampling.
    let f = &htcp.flow_series;
    let at = |t: f64| {
        let i = f.t_s.iter().position(|&s| s >= t - 1e-9).unwrap();
        f.cwnd_pkts[i] as f64
    };
    let d = drops(&f.cwnd_pkts);
    let mut epochs = 0;
    for (k, &i) in d.iter().enumerate() {
        let t0 = f.t_s[i];
        let end = d.get(k + 1).map_or(f64::INFINITY, |&j| f.t_s[j]);
        if t0 < 10.0 || t0 + 3.6 > end || t0 + 3.6 > 40.0 {
            continue; // skip the slow-start aftermath and epochs cut short
        }
        let early = at(t0 + 1.5) - at(t0 + 0.5);
        let late = at(t0 + 3.5) - at(t0 + 2.5);
        eprintln!("epoch at {t0:.1} s: early {early}, late {late}");
        assert!(
            late > 5.0 * early.max(1.0),
            "epoch at {t0:.1} s: growth {early} then {late} segments per second"
        );
        epochs += 1;
    }
    assert!(epochs >= 3, "only {epochs} complete epochs: {d:?}");
    // Reno's growth never accelerates: one segment per RTT, 10 per second, throughout.
    let fr = &reno.flow_series;
    let i = fr.t_s.iter().position(|&s| s >= 20.0).unwrap();
    let reno_rate = (fr.cwnd_pkts[i + 10] as f64 - fr.cwnd_pkts[i] as f64) / 1.0;
    assert!((8.0..=11.0).contains(&reno_rate), "Reno {reno_rate}/s");
    eprintln!("regain: H-TCP {t_htcp:.1} s, Reno {t_reno:?}; target {target:.0}");
}
