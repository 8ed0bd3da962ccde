//! Traffic beyond bulk TCP: CBR over UDP, web pages, the background mix — exact rates, offered
//! load calibration, bounded memory with many finished objects, shortcuts and bad input.

use crate::common;

use common::{assert_shortcuts_identical, err_path, run_sim};
use fatpipe_scenario::{elaborate, load_str};
use fatpipe_sim::results::SimResults;

fn run(text: &str, sets: &[&str], seed: u64) -> (SimResults, usize) {
    let sim = run_sim(text, sets, seed);
    (sim.results(), sim.connections())
}

const CBR: &str = r#"
duration = "10s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "20ms" }
[[flows]]
kind = "cbr"
rate = "1Mbps"
packet = "1000B"
start = "1s"
"#;

#[test]
fn cbr_sends_at_exactly_its_rate_and_reports_one_way_delay() {
    let (r, _) = run(CBR, &[], 1);
    let f = &r.flows[0];
    assert_eq!((f.kind.as_str(), f.role.as_str()), ("cbr", "main"));
    // 9 s at 1 Mb/s of 1000-byte datagrams: one every 8 ms from t = 1 s, the last at 9.992 s.
    assert_eq!(f.data_packets_sent, 1125);
    assert_eq!(f.bytes_sent, 1_125_000);
    assert!((f.throughput_bps - 1e6).abs() < 1.0, "{}", f.throughput_bps);
    // Uncongested: one-way delay = 1 ms + 20 ms + 1 ms propagation plus serialisation of 1000 B
    // at 100 Mb/s, 10 Mb/s and 100 Mb/s (0.08 + 0.8 + 0.08 ms); no jitter.
    assert!(
        (f.delay_mean_s - 22.96e-3).abs() < 1e-9,
        "{}",
        f.delay_mean_s
    );
    assert!(f.jitter_s.abs() < 1e-12);
    // Datagram k leaves at 1 + 0.008 k s and arrives 22.96 ms later: k = 0..=1122 arrive by
    // 10 s, the last two are still in the network (payload = 1000 - 28 B each).
    assert_eq!(f.bytes_delivered, 1123 * 972);
}

const WEB: &str = r#"
duration = "30s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "1Gbps", delay = "10ms", queue = { limit = "2500pkt" } }
[[flows]]
kind = "web"
load = "150Mbps"
count = 4
"#;

/// Finished web objects must cost neither memory nor event-loop time: connection slots are
/// reused, so their number is the most objects in flight at once.
#[test]
fn a_hundred_thousand_web_objects_keep_memory_to_what_is_in_flight() {
    let (r, connections) = run(WEB, &[], 3);
    let objects: u64 = r.flows.iter().map(|f| f.objects).sum();
    assert!(objects >= 100_000, "{objects} objects");
    // At 60 % load with ~23 ms transfers, a few tens of objects are in flight at once; 2 000
    // slots would mean slots are not being reused.
    assert!(
        connections < 2_000,
        "{connections} connections for {objects} objects"
    );
    let per_pkt = r.engine.events as f64 / r.engine.packets_delivered as f64;
    assert!(per_pkt < 4.0, "{per_pkt} events per delivered packet");
    for f in &r.flows {
        assert!(f.transfer_time_mean_s > 0.02 && f.transfer_time_mean_s < 0.1);
    }
}

const BG: &str = r#"
duration = "120s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "100Mbps", delay = "25ms", queue = { limit = "2500pkt" } }
[[flows]]
start = "1000s"
[background]
load = 0.5
"#;

/// Wire bytes a background flow offered per second: CBR counts its datagrams; TCP parts their
/// payload plus one 40-byte header per 1460 bytes.
fn offered_bps(f: &fatpipe_sim::results::FlowRow) -> f64 {
    match f.kind.as_str() {
        "cbr" => f.throughput_bps,
        _ => f.goodput_bps * 1500.0 / 1460.0 * (f.end_s - f.start_s) / 120.0,
    }
}

/// Each part of the mix offers its share of 50 % of 100 Mb/s in each direction, within 5 %.
/// Each part is run alone (a part's offered load is defined on an otherwise quiet path: the
/// window-limited FTP flows back off under congestion, as TCP should). Web sizes are heavy
/// tailed (per-run spread about 3 % at this load and length), so web is judged on the mean of
/// five seeds and both directions.
#[test]
fn background_parts_offer_their_share_within_5_percent() {
    for (part, mix) in [
        (
            "cbr",
            [
                "background.mix.cbr=1",
                "background.mix.ftp=0",
                "background.mix.web=0",
            ],
        ),
        (
            "bulk",
            [
                "background.mix.cbr=0",
                "background.mix.ftp=1",
                "background.mix.web=0",
            ],
        ),
        (
            "web",
            [
                "background.mix.cbr=0",
                "background.mix.ftp=0",
                "background.mix.web=1",
            ],
        ),
    ] {
        let seeds: &[u64] = if part == "web" {
            &[1, 2, 3, 4, 5]
        } else {
            &[1]
        };
        let mut total = 0.0;
        for &seed in seeds {
            let (r, _) = run(BG, &mix, seed);
            for dir in [("bgl", "bgr"), ("bgr", "bgl")] {
                let sum: f64 = r
                    .flows
                    .iter()
                    .filter(|f| f.role == "background" && (f.src.as_str(), f.dst.as_str()) == dir)
                    .inspect(|f| assert_eq!(f.kind, part))
                    .map(offered_bps)
                    .sum();
                total += sum;
            }
        }
        let mean = total / (2 * seeds.len()) as f64;
        let want = 50e6;
        assert!(
            (mean - want).abs() / want < 0.05,
            "{part}: offered {:.2} Mb/s per direction, asked {:.2}",
            mean / 1e6,
            want / 1e6
        );
    }
}

#[test]
fn shortcuts_do_not_change_results_with_background_traffic() {
    assert_shortcuts_identical(
        BG,
        &["duration=20s", "flows.0.start=0s", "topology.pairs=2"],
        7,
    );
}

#[test]
fn bad_traffic_input_names_the_field() {
    for (sets, path) in [
        (&["background.load=1.0"][..], "background.load"),
        (&["background.load=-0.1"][..], "background.load"),
        (
            &[
                "background.mix.cbr=0.3",
                "background.mix.ftp=0.3",
                "background.mix.web=0.3",
            ][..],
            "background.mix",
        ),
        (
            &["background.web.base_sigma=0"][..],
            "background.web.base_sigma",
        ),
        (
            &["background.web.embedded_k=-1"][..],
            "background.web.embedded_k",
        ),
        (
            &["background.web.max_object=0B"][..],
            "background.web.max_object",
        ),
    ] {
        assert_eq!(err_path(BG, sets), path, "{sets:?}");
    }
    assert_eq!(err_path(CBR, &["flows.0.kind=web"]), "flows.0.rate");
    assert_eq!(err_path(CBR, &["flows.0.packet=20B"]), "flows.0.packet");
    assert_eq!(err_path(WEB, &["flows.0.load=0bps"]), "flows.0.load");
    assert_eq!(
        err_path(WEB, &["flows.0.web.embedded_sigma=0"]),
        "flows.0.web.embedded_sigma"
    );
    assert_eq!(err_path(WEB, &["flows.0.role=foreground"]), "flows.0.role");
}

/// A parking lot's background loads every bottleneck in both directions, from its cross hosts.
#[test]
fn background_on_a_parking_lot_loads_each_bottleneck_both_ways() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/parking-lot.toml"
    ))
    .unwrap();
    let text = format!("{text}\n[background]\nload = 0.3\n");
    let (r, _) = run(&text, &[], 1);
    for k in 0..3 {
        for (a, b) in [
            (format!("x{k}l"), format!("x{k}r")),
            (format!("x{k}r"), format!("x{k}l")),
        ] {
            let kinds: Vec<&str> = r
                .flows
                .iter()
                .filter(|f| f.role == "background" && f.src == a && f.dst == b)
                .map(|f| f.kind.as_str())
                .collect();
            assert!(
                kinds.contains(&"cbr") && kinds.contains(&"bulk") && kinds.contains(&"web"),
                "{a}->{b}: {kinds:?}"
            );
        }
    }
}

/// Per-pair random delay perturbations (dumbbell and parking lot): each sender's access link gets
/// its own draw in [0, delay_spread), the same for the same seed, different across pairs.
#[test]
fn delay_spread_perturbs_each_pair_within_bounds() {
    let pl = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/parking-lot.toml"
    ))
    .unwrap();
    for (text, set) in [
        (CBR.to_string(), "topology.pairs=6"),
        (pl, "topology.pairs=6"),
    ] {
        let delays = |spread: &str, seed: u64| -> Vec<u64> {
            let sets = vec![
                set.to_string(),
                format!("topology.delay_spread=\"{spread}\""),
            ];
            let plan = elaborate(&load_str(&text, &sets).unwrap(), Some(seed)).unwrap();
            (0..6)
                .map(|i| {
                    let name = format!("s{i}->r0");
                    plan.links.iter().find(|l| l.name == name).unwrap().delay_ns
                })
                .collect()
        };
        let base = delays("0ms", 1);
        let a = delays("2ms", 1);
        assert_eq!(a, delays("2ms", 1), "deterministic");
        assert_ne!(a, delays("2ms", 2), "seeded");
        let extra: Vec<u64> = a.iter().zip(&base).map(|(x, b)| x - b).collect();
        assert!(extra.iter().all(|&e| e < 2_000_000), "{extra:?}");
        assert!(
            extra.windows(2).any(|w| w[0] != w[1]),
            "pairs differ: {extra:?}"
        );
    }
}
