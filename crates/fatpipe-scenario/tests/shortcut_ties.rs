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

/// Known difference (not yet fixed): with unequal access delays, two senders' packets can reach
/// the left router at the same nanosecond, and the event queue orders same-instant events by
/// when they were scheduled. The shortcuts schedule those arrivals at other moments than
/// event-by-event processing does, so a tie can resolve the other way and a drop land on the
/// other flow. The fix is an order of same-instant arrivals that does not depend on scheduling
/// (a canonical tie-break, which changes digests once). When it lands, this test fails: make it
/// a plain case of the tests above.
#[test]
#[should_panic(expected = "shortcuts changed the results")]
fn known_difference_same_instant_arrivals_with_unequal_access_delays() {
    check(&["topology.extra_delay=[\"0ms\", \"3ms\", \"0ms\", \"7ms\"]"]);
}
