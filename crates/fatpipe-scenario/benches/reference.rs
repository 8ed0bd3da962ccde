//! The reference dumbbell (scenarios/reference-dumbbell.toml), shortened to 5 simulated seconds so
//! criterion can repeat it; throughput is reported in delivered data packets per second.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn reference(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/reference-dumbbell.toml"
    );
    let text = std::fs::read_to_string(path).expect("reference scenario");
    let sc = fatpipe_scenario::load_str(&text, &["duration=5s".to_string()]).unwrap();
    let plan = fatpipe_scenario::elaborate(&sc, None).unwrap();
    let delivered = {
        let mut sim = plan.build().unwrap();
        sim.run().unwrap();
        sim.results().engine.packets_delivered
    };
    let mut g = c.benchmark_group("reference_dumbbell");
    g.sample_size(10);
    g.throughput(Throughput::Elements(delivered));
    g.bench_function("5s_20_reno_flows_1Gbps", |b| {
        b.iter(|| {
            let mut sim = plan.build().unwrap();
            sim.run().unwrap();
            sim
        })
    });
    g.finish();
}

criterion_group!(benches, reference);
criterion_main!(benches);
