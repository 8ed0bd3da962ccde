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
