//! Run a scenario file and print engine counters (for profiling the core without Python):
//! `cargo run --release -p fatpipe-scenario --example run_file -- scenarios/reference-dumbbell.toml [key=value ...]`
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text = std::fs::read_to_string(&args[0]).expect("read scenario");
    let sc = fatpipe_scenario::load_str(&text, &args[1..]).unwrap_or_else(|e| panic!("{e}"));
    let plan = fatpipe_scenario::elaborate(&sc, None).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = plan.build().expect("build");
    let t0 = Instant::now();
    sim.run().expect("run");
    let wall = t0.elapsed().as_secs_f64();
    let r = sim.results();
    let gp: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    let drops: u64 = r.queues.iter().map(|q| q.drops_tail).sum();
    let timeouts: u64 = r.flows.iter().map(|f| f.timeouts).sum();
    println!(
        "events {} delivered {} wall {:.3}s pkts/s {:.0} events/pkt {:.2} agg goodput {:.1} Mb/s drops {} timeouts {} max_evq {}",
        r.engine.events,
        r.engine.packets_delivered,
        wall,
        r.engine.packets_delivered as f64 / wall,
        r.engine.events as f64 / r.engine.packets_delivered as f64,
        gp / 1e6,
        drops,
        timeouts,
        r.engine.max_event_queue
    );
}
