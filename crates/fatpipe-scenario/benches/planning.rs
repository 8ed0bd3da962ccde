//! Planning speed: loading and elaborating a graph of many hosts around one router. The
//! `bad_input` tests hold planning to linear work (allocations and bytes); this is where its time
//! is measured, on 2 000 and 20 000 hosts.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// A graph of `n` hosts around one router, one flow (as in tests/bad_input.rs).
fn star(n: usize) -> String {
    let mut s = String::from(
        "duration = \"1s\"\n[topology]\nkind = \"graph\"\nnodes = [{ name = \"r\", kind = \"router\" }",
    );
    for i in 0..n {
        s.push_str(&format!(", {{ name = \"h{i}\" }}"));
    }
    s.push_str("]\nlinks = [");
    for i in 0..n {
        s.push_str(&format!(
            "{}{{ between = [\"h{i}\", \"r\"], rate = \"1Gbps\", delay = \"1ms\" }}",
            if i > 0 { ", " } else { "" }
        ));
    }
    s.push_str("]\n[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\n");
    s
}

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
