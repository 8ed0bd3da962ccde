//! Per-ACK cost of every registered congestion control, driven through the hooks as the sender
//! calls them: a window of about 1000 segments, an RTT sample on every ACK (100 ms plus a queueing
//! component that rises and falls), `cong_avoid` (or `cong_control` for rate-based algorithms) per
//! ACK, and a loss (ssthresh, Recovery, back to Open) every 20 000 ACKs. The figure is time per
//! ACK; compare algorithms with each other and with `reno`, not across machines.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fatpipe_core::SimTime;
use fatpipe_transport::cc::{self, AckSample, CaState, RateSample, TcpState};

const ACKS: u64 = 100_000;

fn drive(name: &str) -> u32 {
    let mut cc = cc::by_name(name, &toml::Table::new()).expect("registered");
    let mut tp = TcpState::new(1460, 1000, 800);
    cc.init(&mut tp);
    let mut now = SimTime::ZERO;
    for i in 0..ACKS {
        now = now + SimTime::from_micros(100);
        tp.now = now;
        tp.snd_una += 1;
        tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64;
        tp.delivered += 1;
        let queueing = (i % 2000) as u64 * 10_000; // 0..20 ms sawtooth of queueing delay
        let rtt = SimTime(100_000_000 + queueing);
        tp.srtt = Some(rtt);
        tp.min_rtt = Some(SimTime::from_millis(100));
        tp.packets_in_flight = tp.snd_cwnd;
        let sample = AckSample {
            pkts_acked: 1,
            rtt: Some(rtt),
            in_flight: tp.snd_cwnd,
        };
        cc.pkts_acked(&mut tp, &sample);
        if cc.has_cong_control() {
            let rs = RateSample {
                delivered: tp.snd_cwnd,
                interval: rtt,
                rtt: Some(rtt),
                ..RateSample::default()
            };
            cc.cong_control(&mut tp, &rs);
        } else {
            cc.cong_avoid(&mut tp, 1);
        }
        if i % 20_000 == 19_999 {
            tp.prior_cwnd = tp.snd_cwnd;
            cc.set_state(&mut tp, CaState::Recovery);
            tp.ca_state = CaState::Recovery;
            tp.snd_ssthresh = cc.ssthresh(&tp).max(2);
            tp.snd_cwnd = tp.snd_ssthresh;
            cc.set_state(&mut tp, CaState::Open);
            tp.ca_state = CaState::Open;
        }
        tp.snd_cwnd = tp.snd_cwnd.clamp(2, 100_000);
    }
    tp.snd_cwnd
}

fn per_ack(c: &mut Criterion) {
    let mut g = c.benchmark_group("cc_per_ack");
    g.throughput(Throughput::Elements(ACKS));
    g.sample_size(20);
    for info in cc::REGISTRY {
        // Aliases build the same algorithm under another name: bench each algorithm once.
        let built = cc::by_name(info.name, &toml::Table::new()).expect("registered");
        if built.name() != info.name {
            continue;
        }
        g.bench_function(info.name, |b| b.iter(|| drive(info.name)));
    }
    g.finish();
}

criterion_group!(benches, per_ack);
criterion_main!(benches);
