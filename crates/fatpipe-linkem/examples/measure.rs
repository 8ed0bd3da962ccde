//! Measure the emulator on a three-namespace bench (root): UDP rate and delay accuracy, or one
//! TCP flow. Prints one JSON line per run (docs/link-emulator.md has the numbers).
//!
//! ```text
//! cargo run --release -p fatpipe-linkem --example measure -- udp RATE_BPS DELAY_MS DURATION_MS [SEND_RATE_BPS] [PAYLOAD] [SPIN_NS] [RT_PRIORITY] [timerfd|epoll_pwait2]
//! cargo run --release -p fatpipe-linkem --example measure -- delay RATE_BPS DELAY_MS DURATION_MS PROBE_RATE_BPS
//! cargo run --release -p fatpipe-linkem --example measure -- tcp RATE_BPS DELAY_MS DURATION_MS CC [QUEUE_PKTS] [SPIN_NS]
//! ```
//! The binaries are taken from the same target directory (build them first).

use fatpipe_linkem::testbed::{droptail_dir, probe_result, udp_run, Bins, Testbed, RECEIVER_ADDR};
use serde_json::json;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n = |i: usize, d: u64| {
        a.get(i)
            .map(|s| s.parse::<u64>().expect("number"))
            .unwrap_or(d)
    };
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let bins = Bins {
        emulator: dir.join("fatpipe-linkem"),
        probe: dir.join("linkem-probe"),
    };
    let (rate, delay_ms, dur) = (n(1, 100_000_000), n(2, 50), n(3, 5000));
    let delay = delay_ms * 1_000_000;
    let tb = Testbed::new("m").expect("testbed");
    let wire_pkt = 1514u64;
    match a[0].as_str() {
        "udp" | "delay" => {
            let send_rate = n(4, rate * 105 / 100);
            let payload = n(5, 1472) as usize;
            let mut tuning = json!({});
            if let Some(s) = a.get(6) {
                tuning["spin_ns"] = json!(s.parse::<u64>().unwrap());
            }
            if let Some(b) = a.get(7) {
                tuning["realtime_priority"] = json!(b.parse::<u64>().unwrap());
            }
            if let Some(b) = a.get(8) {
                tuning["timer"] = json!(b);
            }
            // queue: one BDP, at least 100 packets
            let bdp = (rate as f64 * 2.0 * delay as f64 * 1e-9 / 8.0 / wire_pkt as f64) as u64;
            let limit = bdp.max(100);
            let emu = tb
                .start_emulator(
                    &bins,
                    droptail_dir(rate, delay, limit),
                    droptail_dir(rate, delay, limit),
                    Some(tuning),
                )
                .expect("emulator");
            let (s, r) = udp_run(
                &tb,
                &bins,
                send_rate,
                payload,
                dur,
                dur / 5,
                delay_ms * 2,
                || {},
            )
            .expect("run");
            let st = emu.stop().expect("stats");
            let ab = &st["links"][0]["ab"];
            let tx_ns = (payload as u64 + 42) * 8 * 1_000_000_000 / rate;
            let owd_min = r["owd_ns"]["min"].as_u64().unwrap_or(0) as f64;
            let owd_p50 = r["owd_ns"]["p50"].as_u64().unwrap_or(0) as f64;
            let owd_p99 = r["owd_ns"]["p99"].as_u64().unwrap_or(0) as f64;
            let model = (delay + tx_ns) as f64;
            println!(
                "{}",
                json!({
                    "mode": a[0], "rate_bps": rate, "delay_ms": delay_ms, "send_rate_bps": send_rate,
                    "payload": payload,
                    "recv_rate_bps": r["rate_bps"],
                    "recv_rate_error": r["rate_bps"].as_f64().map(|x| x / rate as f64 - 1.0),
                    "emu_achieved_rate_error": ab["rate_error"],
                    "owd_minus_model_us": {"min": (owd_min - model) / 1e3, "p50": (owd_p50 - model)/1e3, "p99": (owd_p99 - model)/1e3},
                    "emu_delay_error_ns": ab["delay_error_ns"],
                    "sent": s["sent"], "received": r["received"], "missing": r["missing"],
                    "drops": ab["drops"], "overflow": ab["overflow"],
                    "cpu_s": st["cpu_s"], "elapsed_s": st["elapsed_s"], "spins": st["spins"], "wakeups": st["wakeups"], "deaf_sleeps": st["deaf_sleeps"], "spun_s": st["spun_s"], "spins_refused": st["spins_refused"], "coalesced_sleeps": st["coalesced_sleeps"], "awake_s": st["awake_s"],
                })
            );
        }
        "tcp" => {
            let cc = a.get(4).cloned().unwrap_or("cubic".into());
            let bdp =
                (rate as f64 * 2.0 * delay as f64 * 1e-9 / 8.0 / wire_pkt as f64).ceil() as u64;
            let limit = n(5, bdp);
            let emu = tb
                .start_emulator(
                    &bins,
                    droptail_dir(rate, delay, limit),
                    droptail_dir(rate, delay, limit),
                    a.get(6)
                        .map(|s| json!({"spin_ns": s.parse::<u64>().expect("SPIN_NS")})),
                )
                .expect("emulator");
            let port = format!("{RECEIVER_ADDR}:5202");
            let warm = dur / 4;
            let recv = tb
                .probe(
                    &bins,
                    &tb.receiver_ns,
                    &[
                        "tcp-recv".into(),
                        port.clone(),
                        (dur + 2000).to_string(),
                        warm.to_string(),
                    ],
                )
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150));
            let send = tb
                .probe(
                    &bins,
                    &tb.sender_ns,
                    &["tcp-send".into(), port, dur.to_string(), cc.clone()],
                )
                .unwrap();
            let s = probe_result(send).unwrap();
            let r = probe_result(recv).unwrap();
            let st = emu.stop().unwrap();
            let ab = &st["links"][0]["ab"];
            let goodput = r["goodput_bps"].as_f64().unwrap_or(0.0);
            let mss = s["snd_mss"].as_f64().unwrap_or(1448.0);
            println!(
                "{}",
                json!({
                    "mode": "tcp", "cc": cc, "rate_bps": rate, "delay_ms": delay_ms, "queue_pkts": limit,
                    "goodput_bps": goodput,
                    "utilisation_wire": goodput * (mss + 66.0) / mss / rate as f64,
                    "sender": s, "drops": ab["drops"], "overflow": ab["overflow"],
                    "emu_achieved_rate_error": ab["rate_error"],
                    "emu_delay_error_ns": ab["delay_error_ns"], "cpu_s": st["cpu_s"],
                })
            );
        }
        m => panic!("unknown mode {m}"),
    }
}
