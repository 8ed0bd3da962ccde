//! Planning speed: loading and elaborating a graph of many hosts around one router. The
//! `bad_input` tests hold planning to linear work (allocations and bytes); this is where its time
//! is measured, on 2 000 and 20 000 hosts.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

#[path = "../tests/common/star.rs"]
mod star_graph;
use star_graph::star;

fn planning(c: &mut Criterion) {
    let mut g = c.benchmark_group("planning_star");
    g.sample_size(10);
    for hosts in [2_000usize, 20_000] {
        let text = star(hosts);
        g.throughput(Throughput::Elements(hosts as u64));
        g.bench_with_input(BenchmarkId::from_parameter(hosts), &text, |b, text| {
            b.iter(|| {
                let sc = fatpipe_scenario::load_str(text, &[]).unwrap();
                fatpipe_scenario::elaborate(&sc, None).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, planning);
criterion_main!(benches);
