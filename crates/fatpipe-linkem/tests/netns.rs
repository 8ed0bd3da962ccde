//! The emulator between real namespaces (root only): sender ns ── veth ── [emulator ns] ── veth
//! ── receiver ns, at 100 Mb/s and 20 ms each way.
//!
//! Without root or namespaces the test prints why and returns; under CI (CI=true, where the
//! runs are root) that is a failure instead, so it never passes there without running.
//!
//! Tolerances, and why:
//! - rate within 2 % (the issue's target): the model's schedule is exact; what remains is the
//!   jitter of real departures, which averages out over a few thousand frames (measured
//!   < 0.1 %, docs/link-emulator.md).
//! - no unexplained loss: every datagram the receiver misses is a modelled drop or a counted
//!   overflow (equality, not a tolerance).
//! - one-way delay minus the model (delay + serialisation of the frame) never negative (a frame
//!   cannot beat the model), median below 0.2 ms (the target), 99th percentile below 2 ms: the
//!   host is shared with other jobs, and the test must not fail on their scheduling noise.
//! - TCP (cubic) over 1 BDP of DropTail: goodput above 80 Mb/s of the 95.6 Mb/s a 1448-byte
//!   MSS leaves of 100 Mb/s of 1514-byte frames (measured 95.6 Mb/s); the flow also proves that
//!   offloaded checksums are completed (the veths keep checksum offload on).
//! - starving the emulator (SIGSTOP for 0.5 s with a 256 KB socket buffer) loses frames in the
//!   kernel; they must show up as overflow.rx_drops, apart from the modelled drops.
//! - 1 Gb/s saturated at 50 ms (the issue's target, with two CPUs or more): rate within 2 %, the
//!   emulator's departure error below 0.1 ms at the median (coalescing adds at most 50 µs;
//!   measured 7-24 µs), and the emulator below 0.9 of a core over the traffic (measured
//!   0.70-0.78 with start-up included; 0.9 leaves a twentieth below the throttle's 0.95). The step exists to catch the kernel's real-time throttle, which suspends a
//!   SCHED_FIFO loop that takes more than 0.95 of its core for up to 50 ms each second (p99 of
//!   11-38 ms when the loop woke for every frame, at 0.89 of a core; docs/link-emulator.md):
//!   the CPU share is its cause, checked directly. The tail (p99) is printed, not bounded: on
//!   a 2-core VM it follows the host's own stalls (idle CPUs losing up to 16 ms at once), and
//!   measured 0.1-2.7 ms with the emulator well below the throttle.

use fatpipe_linkem::testbed::{
    droptail_dir, probe_result, udp_run, unavailable, Bins, Testbed, RECEIVER_ADDR,
};
use serde_json::{json, Value};
use std::time::Duration;

const RATE: u64 = 100_000_000;
const DELAY_NS: u64 = 20_000_000;

fn bins() -> Bins {
    Bins {
        emulator: env!("CARGO_BIN_EXE_fatpipe-linkem").into(),
        probe: env!("CARGO_BIN_EXE_linkem-probe").into(),
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn check_no_unexplained_loss(sent: &Value, recv: &Value, dir: &Value) {
    let missing = u(&recv["missing"]) + (u(&sent["sent"]) - 1 - u(&recv["max_seq"]));
    let explained = u(&dir["drops"]["total"]) + u(&dir["overflow"]["total"]);
    assert_eq!(
        missing, explained,
        "datagrams missing at the receiver vs modelled drops + overflow: {recv} {dir}"
    );
}

#[test]
fn emulates_rate_delay_tcp_and_reports_overflow() {
    if let Some(why) = unavailable() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI runs as root but the namespace test cannot run: {why}");
        }
        eprintln!("SKIPPED emulates_rate_delay_tcp_and_reports_overflow: {why}");
        return;
    }
    let bins = bins();
    let mut tb = Testbed::new("t").expect("testbed");
    let q = || droptail_dir(RATE, DELAY_NS, 200);

    // 1. Overload: 110 Mb/s offered to 100 Mb/s for 3 s.
    let emu = tb.start_emulator(&bins, q(), q(), None).expect("emulator");
    let (s, r) = udp_run(&tb, &bins, 110_000_000, 1472, 3000, 500, 200, || {}).unwrap();
    let st = emu.stop().unwrap();
    let ab = &st["links"][0]["ab"];
    eprintln!("overload: sender {s}\nreceiver {r}\nemulator {ab}");
    let recv_rate = f(&r["rate_bps"]);
    assert!(
        (recv_rate / RATE as f64 - 1.0).abs() < 0.02,
        "received {recv_rate} b/s for {RATE}"
    );
    assert!(f(&ab["rate_error"]).abs() < 0.02, "{ab}");
    assert!(
        u(&ab["drops"]["tail"]) > 0,
        "an overloaded DropTail queue drops: {ab}"
    );
    check_no_unexplained_loss(&s, &r, ab);
    assert_eq!(u(&ab["frames_in"]), u(&s["sent"]));

    // 2. Delay at 10 % load (no queue): one-way delay against the model.
    let emu = tb.start_emulator(&bins, q(), q(), None).expect("emulator");
    let (s, r) = udp_run(&tb, &bins, 10_000_000, 1472, 2000, 0, 200, || {}).unwrap();
    let st = emu.stop().unwrap();
    let ab = &st["links"][0]["ab"];
    eprintln!("delay: receiver {r}\nemulator {ab}");
    let model = DELAY_NS as f64 + (1472.0 + 42.0) * 8e9 / RATE as f64;
    let owd = &r["owd_ns"];
    let (min, p50, p99) = (
        f(&owd["min"]) - model,
        f(&owd["p50"]) - model,
        f(&owd["p99"]) - model,
    );
    assert!(min >= 0.0, "a frame beat the model by {} ns", -min);
    assert!(p50 < 200_000.0, "median added delay {p50} ns");
    assert!(p99 < 2_000_000.0, "99th percentile added delay {p99} ns");
    assert!(f(&ab["delay_error_ns"]["mean"]) < 200_000.0, "{ab}");
    check_no_unexplained_loss(&s, &r, ab);
    assert_eq!(u(&ab["drops"]["total"]), 0);

    // 3. One cubic flow, 1 BDP (40 ms RTT: 330 frames) of DropTail, 4 s.
    let bdp = droptail_dir(RATE, DELAY_NS, 330);
    let emu = tb
        .start_emulator(&bins, bdp.clone(), bdp, None)
        .expect("emulator");
    let port = format!("{RECEIVER_ADDR}:5202");
    let recv = tb
        .probe(
            &bins,
            &tb.receiver_ns,
            &[
                "tcp-recv".into(),
                port.clone(),
                "5000".into(),
                "1000".into(),
            ],
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(150));
    let send = tb
        .probe(
            &bins,
            &tb.sender_ns,
            &["tcp-send".into(), port, "4000".into(), "cubic".into()],
        )
        .unwrap();
    let s = probe_result(send).unwrap();
    let r = probe_result(recv).unwrap();
    let st = emu.stop().unwrap();
    eprintln!("tcp: sender {s}\nreceiver {r}\nemulator {}", st["links"][0]);
    assert!(s.get("error").is_none(), "{s}");
    let goodput = f(&r["goodput_bps"]);
    assert!(goodput > 80e6, "cubic goodput {goodput} b/s over 100 Mb/s");
    assert_eq!(u(&st["overflow_total"]), 0, "{st}");

    // 4. Starved: SIGSTOP for 0.5 s with a small socket buffer: overflow counted apart.
    let emu = tb
        .start_emulator(&bins, q(), q(), Some(json!({"rx_buffer_bytes": 262144})))
        .expect("emulator");
    let (s, r) = udp_run(&tb, &bins, 50_000_000, 1472, 2500, 0, 200, || {
        std::thread::sleep(Duration::from_millis(800));
        emu.pause();
        std::thread::sleep(Duration::from_millis(500));
        emu.resume();
    })
    .unwrap();
    let st = emu.stop().unwrap();
    let ab = &st["links"][0]["ab"];
    eprintln!("starved: sender {s}\nreceiver {r}\nemulator {ab}");
    let rx_drops = u(&ab["overflow"]["rx_drops"]);
    // 0.5 s at 50 Mb/s is ~2060 frames; a 256 KB buffer holds ~110 of them.
    assert!(rx_drops > 1000, "{ab}");
    assert_eq!(u(&st["overflow_total"]), rx_drops);
    check_no_unexplained_loss(&s, &r, ab);

    // 5. 1 Gb/s saturated (105 % offered) at 50 ms, one BDP of DropTail, 3 s.
    if fatpipe_linkem::testbed::placement().is_none() {
        eprintln!(
            "SKIPPED 1 Gb/s step: one CPU (the sender, the emulator and the receiver share it)"
        );
        return;
    }
    // The probes under SCHED_FIFO below the emulator's 20, as in the measurements: at ordinary
    // priority on a busy 2-core host the sender cannot offer 1 Gb/s.
    tb.probe_rt = Some("10".into());
    let (gig, d50) = (1_000_000_000u64, 50_000_000u64);
    let big = || droptail_dir(gig, d50, 8300);
    let emu = tb
        .start_emulator(&bins, big(), big(), None)
        .expect("emulator");
    let (s, r) = udp_run(&tb, &bins, gig * 105 / 100, 1472, 3000, 600, 200, || {}).unwrap();
    let st = emu.stop().unwrap();
    let ab = &st["links"][0]["ab"];
    eprintln!("1 Gb/s: sender {s}\nreceiver {r}\nemulator {ab}");
    // The emulator's own rate (backlogged departures) whatever the sender managed; the
    // receiver's when the sender (ordinary priority, on a shared machine) did offer the rate.
    assert!(f(&ab["rate_error"]).abs() < 0.02, "{ab}");
    let offered = u(&s["sent"]) as f64 * 1514.0 * 8.0 / 3.0;
    if offered > gig as f64 {
        let recv_rate = f(&r["rate_bps"]);
        assert!(
            (recv_rate / gig as f64 - 1.0).abs() < 0.02,
            "received {recv_rate} b/s for {gig}"
        );
    } else {
        eprintln!("1 Gb/s step: the sender offered only {offered} b/s; receiver rate not checked");
    }
    let (p50, p99) = (
        f(&ab["delay_error_ns"]["p50"]),
        f(&ab["delay_error_ns"]["p99"]),
    );
    // The emulator's CPU over the traffic: what brings on the real-time throttle (950 ms of
    // every second) is the loop's share of its core, so that share is checked directly.
    let cpu_share = f(&st["cpu_s"]) / f(&ab["busy_s"]);
    eprintln!("1 Gb/s step: departure error p50 {p50} ns, p99 {p99} ns, emulator CPU {cpu_share:.2} of a core");
    assert!(
        p50 < 100_000.0,
        "departure error p50 {p50} ns at 1 Gb/s: {ab}"
    );
    assert!(
        cpu_share < 0.9,
        "the emulator used {cpu_share:.2} of a core at 1 Gb/s, near the real-time throttle: {st}"
    );
    check_no_unexplained_loss(&s, &r, ab);
}

#[test]
fn exits_when_its_parent_dies() {
    if let Some(why) = unavailable() {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("CI runs as root but the namespace test cannot run: {why}");
        }
        eprintln!("SKIPPED exits_when_its_parent_dies: {why}");
        return;
    }
    let bins = bins();
    let tb = Testbed::new("p").expect("testbed");
    let stats = std::env::temp_dir().join(format!("{}-pdeath.json", tb.emu_ns));
    let cfg_path = std::env::temp_dir().join(format!("{}-pdeath-config.json", tb.emu_ns));
    let q = droptail_dir(RATE, DELAY_NS, 100);
    std::fs::write(&cfg_path, tb.config(q.clone(), q, stats.to_str().unwrap())).unwrap();
    // A shell starts the emulator in the background and waits; killing the shell (-9) must
    // take the emulator with it.
    let mut sh = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} {} > /dev/null & echo $!; wait",
            bins.emulator.display(),
            cfg_path.display()
        ))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(sh.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let pid: i32 = line.trim().parse().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signalling processes we started.
    assert_eq!(unsafe { libc::kill(pid, 0) }, 0, "emulator running");
    sh.kill().unwrap();
    sh.wait().unwrap();
    // Gone = no such process, or a zombie: once the shell is dead the emulator is reparented to
    // the machine's init, which may reap it late on a loaded host (a zombie answers kill(pid, 0)).
    // A liveness bound, not a timing claim: 10 s.
    let exited = |pid: i32| {
        // SAFETY: probing a pid we started.
        let no_such = unsafe { libc::kill(pid, 0) } != 0;
        no_such
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
                st.rsplit_once(')').is_some_and(|(_, rest)| {
                    matches!(rest.trim_start().chars().next(), Some('Z' | 'X'))
                })
            })
    };
    let mut gone = false;
    for _ in 0..500 {
        std::thread::sleep(Duration::from_millis(20));
        if exited(pid) {
            gone = true;
            break;
        }
    }
    let _ = std::fs::remove_file(&cfg_path);
    assert!(gone, "the emulator outlived its parent");
    let st: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_file(&stats);
    assert_eq!(st["links"][0]["name"], "s->r");
}
