//! Event-queue throughput in a simulator-like pattern: a few hundred pending events, each pop
//! followed by one push a short (packet-time) or long (propagation delay) distance ahead.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fatpipe_core::{EventQueue, RngStream, SimTime};

fn hold_model(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    const OPS: u64 = 100_000;
    g.throughput(Throughput::Elements(OPS));
    g.bench_function("hold_300_pending", |b| {
        b.iter_batched(
            || {
                let mut q = EventQueue::new();
                let mut rng = RngStream::new(1, "bench");
                for i in 0..300u64 {
                    q.schedule(SimTime(rng.below(100_000_000)), i);
                }
                (q, rng)
            },
            |(mut q, mut rng)| {
                for _ in 0..OPS {
                    let (t, e) = q.pop().unwrap();
                    let delta = if rng.below(2) == 0 {
                        12_000
                    } else {
                        100_000_000 + rng.below(1_000_000)
                    };
                    q.schedule(t + SimTime(delta), e);
                }
                q
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, hold_model);
criterion_main!(benches);
