//! Print every result table of a run (flows, queues, links, relay segments in full precision, plus
//! a hash of the time series), leaving out the engine counters that may legitimately change
//! (events, wall time). Two builds give the same behaviour exactly when their outputs are equal,
//! so this is the check for optimisations that must not change results:
//! `cargo run --release -p fatpipe-scenario --example results_digest -- scenarios/reference-dumbbell.toml [key=value ...] > before.txt`
//!
//! Named fidelity changes alter results on purpose and break this comparison across them; give
//! the old behaviour's keys to compare a build from before the change with one after it. RACK-TLP
//! (RFC 8985) on by default: pass `tcp.rack=false tcp.tlp=false` for a scenario that does not set
//! them (the reference scenario does, for ns-2; its digest is unchanged).
use std::hash::{DefaultHasher, Hash, Hasher};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text = std::fs::read_to_string(&args[0]).expect("read scenario");
    let sc = fatpipe_scenario::load_str(&text, &args[1..]).unwrap_or_else(|e| panic!("{e}"));
    let plan = fatpipe_scenario::elaborate(&sc, None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = plan.build().expect("build");
    sim.run().expect("run");
    let r = sim.results();
    println!("delivered {}", r.engine.packets_delivered);
    for f in &r.flows {
        println!("{f:?}");
    }
    for q in &r.queues {
        println!("{q:?}");
    }
    for l in &r.links {
        println!("{l:?}");
    }
    for s in &r.segments {
        println!("{s:?}");
    }
    // `DefaultHasher::new()` uses fixed keys, so the hash is the same in every process.
    let mut h = DefaultHasher::new();
    format!(
        "{:?}{:?}{:?}",
        r.flow_series, r.queue_series, r.segment_series
    )
    .hash(&mut h);
    println!("series hash {:016x}", h.finish());
}
