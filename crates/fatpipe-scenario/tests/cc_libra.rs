//! TCP Libra's signature: RTT fairness. Two flows with RTTs of about 40 ms and 160 ms share a
//! bottleneck; Reno's throughput goes roughly as 1/RTT^a with a between 1 and 2 (the short flow
//! grows its window four times as often and by the same amount), while Libra's increase in rate
//! per second, α/(T + T0), and its decrease fraction, T1/(2(T + T0)), hardly depend on T when
//! T ≪ T0 (T0 = 1 s: the rate gains differ by 1.16/1.04 = 1.12).
//!
//! Dumbbell, 100 Mb/s, 18 ms bottleneck, access 1 ms plus 60 ms extra one way on the second pair
//! (RTTs ≈ 40 and 160 ms), a 250-packet drop-tail buffer (about 0.7 BDP at 40 ms), 120 s, both
//! flows start together, 0.05 ms send jitter against phase locking, seeds 1–5 (mean ratio).
//! Measured: Libra 0.91, Reno 10.2 (mean of the five seeds). Asserted: Libra's short/long goodput ratio below 2,
//! Reno's above 3, and Libra's at most half of Reno's.

use fatpipe_scenario::{elaborate, load_str};

fn ratio(cc: &str, seed: u64) -> f64 {
    let text = format!(
        r#"
duration = "120s"
[topology]
kind = "dumbbell"
pairs = 2
extra_delay = ["0ms", "60ms"]
[topology.bottleneck]
rate = "100Mbps"
delay = "18ms"
queue = {{ kind = "droptail", limit = "250pkt" }}
[tcp]
cc = "{cc}"
send_jitter = "0.05ms"
[[flows]]
start_spread = "0s"
"#
    );
    let sc = load_str(&text, &[]).unwrap();
    let mut sim = elaborate(&sc, Some(seed)).unwrap().build().unwrap();
    sim.run().unwrap();
    let f = &sim.results().flows;
    f[0].goodput_bps / f[1].goodput_bps
}

fn mean_ratio(cc: &str) -> f64 {
    (1..=5).map(|s| ratio(cc, s)).sum::<f64>() / 5.0
}

#[test]
fn libra_shares_across_rtts_far_more_evenly_than_reno() {
    let libra = mean_ratio("libra");
    let reno = mean_ratio("reno");
    eprintln!("short/long goodput ratio: libra {libra:.2}, reno {reno:.2}");
    assert!(libra < 2.0, "libra {libra:.2}");
    assert!(reno > 3.0, "reno {reno:.2}");
    assert!(libra <= 0.5 * reno, "libra {libra:.2} vs reno {reno:.2}");
}
