//! The engine's shortcuts (cut-through hops, in-advance endpoints, merges) must not change any
//! result: each case here runs a small dumbbell with them on and off (`assert_shortcuts_identical`).
//! The cases put what can come between two ACKs or two data packets there: timeouts at a small
//! buffer, flows stopping together mid-run, send jitter, several senders per host, finite
//! transfers and frequent samples.

use crate::common::assert_shortcuts_identical;

const DUMBBELL: &str = r#"
duration = "4s"
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = { rate = "20Mbps", delay = "10ms", queue = { limit = "12pkt" } }
access = { rate = "200Mbps", delay = "1ms" }
[tcp]
initial_window = 2
[[flows]]
start = "0s"
start_spread = "1500ms"
[monitor]
interval = "7ms"
"#;

fn check(sets: &[&str]) {
    for seed in 1..=10 {
        assert_shortcuts_identical(DUMBBELL, sets, seed);
    }
}

#[test]
fn shortcuts_change_nothing_on_a_small_dumbbell() {
    check(&[]);
    check(&["tcp.rack=false", "tcp.tlp=false", "tcp.recovery=newreno"]);
    check(&["flows.0.count=2", "tcp.send_jitter=0.2ms"]);
    check(&[
        "flows.0.kind=file",
        "flows.0.size=60KB",
        "monitor.interval=1ms",
    ]);
    check(&["tcp.cc=cubic", "topology.bottleneck.queue.limit=3pkt"]);
    // Several flows of a host stopping at the same instant (see `sender_free_until`).
    check(&["flows.0.count=3", "flows.0.stop=3s"]);
}

/// Unequal access delays: two senders' packets can reach the left router at the same
/// nanosecond. The shortcuts schedule those arrivals at other moments than event-by-event
/// processing, so with same-instant events in scheduling order a tie could resolve the other
/// way and a drop land on the other flow (it did, before same-instant arrivals were ranked by
/// link: `TieRank for Ev` in fatpipe-sim).
#[test]
fn same_instant_arrivals_over_unequal_access_delays() {
    check(&["topology.extra_delay=[\"0ms\", \"3ms\", \"0ms\", \"7ms\"]"]);
    check(&[
        "topology.extra_delay=[\"0ms\", \"3ms\", \"0ms\", \"7ms\"]",
        "tcp.recovery=newreno",
        "topology.bottleneck.queue.limit=5pkt",
    ]);
    // Each pair's own random access delay.
    check(&["topology.delay_spread=\"5ms\""]);
}

/// Long drains: with samples a second apart, a data-side merge runs the dumbbell's ACK line and
/// its senders' timers ahead of the clock for up to a second at a time (`data_merge.rs`).
#[test]
fn long_ahead_of_clock_runs_change_nothing() {
    check(&["monitor.interval=1s"]);
    check(&[
        "monitor.interval=1s",
        "tcp.rack=false",
        "tcp.tlp=false",
        "tcp.recovery=newreno",
    ]);
    // Drops at the senders' own access links too.
    check(&["monitor.interval=1s", "topology.access.queue.limit=3pkt"]);
    check(&["monitor.interval=1s", "flows.0.count=3", "flows.0.stop=3s"]);
}

/// The data side of a dumbbell needs almost no events: the bottleneck takes data ahead of the
/// clock, and the ACKs reach their senders from the line (events per delivered packet: 0.03
/// here, against 1.05 before data-side merges and 2 with no shortcut).
#[test]
fn a_dumbbell_runs_almost_without_events() {
    let sets = ["monitor.interval=1s", "tcp.rack=false", "tcp.tlp=false"];
    let r = crate::common::run(DUMBBELL, &sets, 1);
    let per_packet = r.engine.events as f64 / r.engine.packets_delivered as f64;
    assert!(per_packet < 0.2, "{per_packet} events per delivered packet");
}
