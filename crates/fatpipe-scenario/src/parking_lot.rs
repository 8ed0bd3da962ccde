//! The parking-lot topology (`kind = "parkinglot"`): K bottleneck links in a row, main pairs
//! that cross all of them, and one cross-traffic host pair per bottleneck that crosses only it.
//!
//! ```text
//!          x0l       x0r,x1l     x1r,x2l      x2r          (cross hosts, one pair per bottleneck)
//!           |          |  |        |  |        |
//!   s<i> -- r0 ====== r1 ======== r2 ======== r3 -- d<i>   (K = 3 bottlenecks r_k -> r_k+1)
//! ```
//!
//! Geometry after the multi-bottleneck parking lot of TCP Libra (G. Marfia, C. E. Palazzi,
//! G. Pau, M. Gerla, M. Y. Sanadidi, M. Roccetti, "TCP Libra: Exploring RTT-Fairness for TCP",
//! UCLA CSD TR-050037, 2005; "TCP Libra: balancing flows over heterogeneous propagation
//! scenarios", SIGMETRICS 2006), which the 2009 dissertation (seed 000, §4.2) reuses: main flows
//! half at 90 ms and half at 180 ms RTT, cross traffic at 30 ms. The number of links, their
//! delays and the routing are not in the sources we could reach; the reconstruction and its
//! reasons are in docs/parking-lot.md.
//!
//! Access-link delays are not given by the user but computed, so that every path has exactly the
//! base RTT asked for (`main_rtt`, `cross_rtt`): the study specifies RTTs, not link delays.

use crate::error::ScenarioError;
use crate::plan::{default_queue, queue_from_spec, Builder, PlanQueue};
use crate::schema::{OneOrMany, QueueSpec};
use crate::units::{Duration, RateStr};
use fatpipe_core::{Rate, SimTime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// K bottlenecks in a row, `s<i> -- r0 == r1 == ... == rK -- d<i>`, with a cross-traffic host
/// pair `x<k>l -- r<k> == r<k+1> -- x<k>r` on each bottleneck k.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLot {
    /// Number of bottleneck links r0->r1, ..., r(K-1)->rK (at least 2; one is a dumbbell).
    #[schemars(range(min = 2))]
    pub bottlenecks: u32,
    /// Number of main sender/receiver pairs s<i> -> d<i>; their flows cross every bottleneck.
    #[schemars(range(min = 1))]
    pub pairs: u32,
    /// The bottleneck links (each direction has its own queue).
    pub bottleneck: ParkingLotLinks,
    /// Access links (s<i>, d<i> and the cross hosts). Their delays are computed from the RTTs.
    /// Default: 10x the fastest bottleneck's rate, and the queue of the bottleneck they attach
    /// to.
    #[serde(default)]
    pub access: Option<ParkingLotAccess>,
    /// Base (propagation) RTT of the main paths, assigned to pairs round-robin: pair i gets
    /// value i mod len. Default ["90ms", "180ms"] (the 2009 study: half of each).
    #[serde(default)]
    pub main_rtt: Option<OneOrMany>,
    /// Base RTT of the cross-traffic path of each bottleneck: one value, or one per bottleneck.
    /// Default "30ms" (the 2009 study's background traffic).
    #[serde(default)]
    pub cross_rtt: Option<OneOrMany>,
    /// Small random one-way delay added to each main sender's access link, uniform in
    /// [0, delay_spread) from the pair's own random stream (`pair/<i>/delay`, as the dumbbell's),
    /// against phase effects: a main path's base RTT then exceeds its `main_rtt` by up to twice
    /// that draw (the sender's access link is crossed both ways). Default "0ms".
    #[serde(default)]
    pub delay_spread: Option<crate::units::Duration>,
}

/// Rate, one-way delay and queue of the bottleneck links.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotLinks {
    /// One rate for every bottleneck, or a list with one per bottleneck.
    pub rate: RateOneOrMany,
    /// One-way propagation delay: one value, or a list with one per bottleneck.
    pub delay: OneOrMany,
    /// Output queue of every bottleneck. Default: DropTail of one bandwidth-delay product of the
    /// link's rate at the shortest main RTT, at least 100 packets (the dumbbell's rule).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RateOneOrMany {
    One(RateStr),
    Many(Vec<RateStr>),
}

/// Access links of a parking lot: no delay, since the builder computes it from the RTTs.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLotAccess {
    /// Default: 10x the fastest bottleneck's rate.
    #[serde(default)]
    pub rate: Option<RateStr>,
    /// Default: the queue of the bottleneck the access link attaches to.
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

/// Where background traffic can be attached to load one bottleneck: a host on each side of it,
/// reached from the bottleneck's routers by one access link each, so traffic between `left` and
/// `right` crosses exactly that bottleneck (in both directions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BgSite {
    pub left: String,
    pub right: String,
    /// The directed link left -> right, "r<k>->r<k+1>".
    pub bottleneck: String,
    /// That link's rate, so a background load can be given as a share of it.
    pub rate_bps: u64,
}

/// A built parking lot: nodes and links, the main pairs (for `[[flows]] pairs = ...`), one
/// background site per bottleneck, and the link the summary reports.
pub(crate) struct ParkingLotNet {
    pub builder: Builder,
    pub pairs: Vec<(String, String)>,
    #[allow(dead_code)] // for the background-traffic builder
    pub bg_sites: Vec<BgSite>,
    /// The first bottleneck's forward direction, "r0->r1".
    pub bottleneck: String,
}

/// Everything the builder needs, validated.
struct Geometry {
    rates: Vec<Rate>,
    delays: Vec<SimTime>,
    /// Per main pair.
    main_rtt: Vec<SimTime>,
    /// Per bottleneck.
    cross_rtt: Vec<SimTime>,
    access_rate: Rate,
    /// Per bottleneck.
    queues: Vec<PlanQueue>,
    access_queue: Option<PlanQueue>,
}

/// `value` expanded to one entry per item (`count` of them), or an error naming `path`.
fn per_item<T: Clone>(
    one: Option<&T>,
    many: Option<&[T]>,
    count: usize,
    path: &str,
    what: &str,
) -> Result<Vec<T>, ScenarioError> {
    match (one, many) {
        (Some(x), _) => Ok(vec![x.clone(); count]),
        (None, Some(v)) if v.len() == count => Ok(v.to_vec()),
        (None, Some(v)) => Err(ScenarioError::invalid(
            path,
            format!(
                "has {} values but there are {count} {what}; give one value or one per {}",
                v.len(),
                what.trim_end_matches('s')
            ),
        )),
        (None, None) => unreachable!("one of the two is given"),
    }
}

fn durations(x: &OneOrMany) -> (Option<&Duration>, Option<&[Duration]>) {
    match x {
        OneOrMany::One(d) => (Some(d), None),
        OneOrMany::Many(v) => (None, Some(v)),
    }
}

/// Path of element `i` of a field that may be one value or a list.
fn elem_path(field: &str, x: &OneOrMany, i: usize) -> String {
    match x {
        OneOrMany::One(_) => field.to_string(),
        OneOrMany::Many(_) => format!("{field}.{i}"),
    }
}

fn ms(t: SimTime) -> String {
    format!("{}ms", t.as_nanos() as f64 / 1e6)
}

impl ParkingLot {
    fn geometry(&self) -> Result<Geometry, ScenarioError> {
        if self.bottlenecks < 2 {
            return Err(ScenarioError::invalid(
                "topology.bottlenecks",
                format!(
                    "a parking lot needs at least 2 bottleneck links (got {}); for one, use kind = \"dumbbell\"",
                    self.bottlenecks
                ),
            ));
        }
        if self.pairs == 0 {
            return Err(ScenarioError::invalid(
                "topology.pairs",
                "a parking lot needs at least 1 main pair",
            ));
        }
        let k = self.bottlenecks as usize;
        let rates: Vec<Rate> = match &self.bottleneck.rate {
            RateOneOrMany::One(r) => vec![r.value; k],
            RateOneOrMany::Many(v) => {
                per_item(None, Some(v), k, "topology.bottleneck.rate", "bottlenecks")?
                    .iter()
                    .map(|r| r.value)
                    .collect()
            }
        };
        if let Some(i) = rates.iter().position(|r| r.bps() == 0) {
            let path = match &self.bottleneck.rate {
                RateOneOrMany::One(_) => "topology.bottleneck.rate".to_string(),
                RateOneOrMany::Many(_) => format!("topology.bottleneck.rate.{i}"),
            };
            return Err(ScenarioError::invalid(
                path,
                "a link needs a positive rate, e.g. \"100Mbps\"",
            ));
        }
        let (one, many) = durations(&self.bottleneck.delay);
        let delays: Vec<SimTime> =
            per_item(one, many, k, "topology.bottleneck.delay", "bottlenecks")?
                .iter()
                .map(|d| d.value)
                .collect();
        let total_delay: SimTime = delays.iter().fold(SimTime::ZERO, |a, &d| a + d);

        // Main RTTs: round-robin over pairs, so with the default half get 90 ms, half 180 ms.
        let main_spec = self.main_rtt.clone().unwrap_or_else(|| {
            OneOrMany::Many(vec![Duration::new("90ms"), Duration::new("180ms")])
        });
        let (one, many) = durations(&main_spec);
        let choices: Vec<SimTime> = match (one, many) {
            (Some(d), _) => vec![d.value],
            (None, Some(v)) if !v.is_empty() => v.iter().map(|d| d.value).collect(),
            _ => {
                return Err(ScenarioError::invalid(
                    "topology.main_rtt",
                    "give at least one RTT, e.g. [\"90ms\", \"180ms\"]",
                ))
            }
        };
        for (j, &rtt) in choices.iter().enumerate() {
            let path = elem_path("topology.main_rtt", &main_spec, j);
            check_rtt(rtt, &path)?;
            // A main path crosses every bottleneck both ways; access links make up the rest.
            if SimTime(rtt.as_nanos() / 2) < total_delay {
                return Err(ScenarioError::invalid(
                    path,
                    format!(
                        "{} is shorter than the main path's round trip over the bottlenecks alone (2 x {} = {}); give at least that, or shorter bottleneck delays",
                        ms(rtt),
                        ms(total_delay),
                        ms(SimTime(2 * total_delay.as_nanos()))
                    ),
                ));
            }
        }
        let main_rtt: Vec<SimTime> = (0..self.pairs as usize)
            .map(|i| choices[i % choices.len()])
            .collect();

        let cross_spec = self
            .cross_rtt
            .clone()
            .unwrap_or_else(|| OneOrMany::One(Duration::new("30ms")));
        let (one, many) = durations(&cross_spec);
        let cross_rtt: Vec<SimTime> = per_item(one, many, k, "topology.cross_rtt", "bottlenecks")?
            .iter()
            .map(|d| d.value)
            .collect();
        for (i, (&rtt, &d)) in cross_rtt.iter().zip(&delays).enumerate() {
            let path = elem_path("topology.cross_rtt", &cross_spec, i);
            check_rtt(rtt, &path)?;
            if SimTime(rtt.as_nanos() / 2) < d {
                return Err(ScenarioError::invalid(
                    path,
                    format!(
                        "{} is shorter than the round trip over bottleneck {i} alone (2 x {} = {}); give at least that, or a shorter bottleneck delay",
                        ms(rtt),
                        ms(d),
                        ms(SimTime(2 * d.as_nanos()))
                    ),
                ));
            }
        }

        let access = self.access.clone().unwrap_or_default();
        let access_rate = match &access.rate {
            Some(r) => r.value,
            None => Rate(rates.iter().map(|r| r.bps()).max().unwrap_or(0) * 10),
        };
        if access_rate.bps() == 0 {
            return Err(ScenarioError::invalid(
                "topology.access.rate",
                "a link needs a positive rate, e.g. \"1Gbps\"",
            ));
        }
        let shortest = *main_rtt.iter().min().expect("at least one pair");
        let queues = match &self.bottleneck.queue {
            Some(q) => vec![queue_from_spec(q, "topology.bottleneck.queue")?; k],
            None => rates.iter().map(|&r| default_queue(r, shortest)).collect(),
        };
        let access_queue = match &access.queue {
            Some(q) => Some(queue_from_spec(q, "topology.access.queue")?),
            None => None,
        };
        Ok(Geometry {
            rates,
            delays,
            main_rtt,
            cross_rtt,
            access_rate,
            queues,
            access_queue,
        })
    }

    /// Every check the builder makes, so a bad parking lot fails when the file is loaded.
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        self.geometry().map(|_| ())
    }
}

/// Links are full duplex with one delay, so a round trip must split into two equal halves.
fn check_rtt(rtt: SimTime, path: &str) -> Result<(), ScenarioError> {
    if rtt.as_nanos() % 2 == 1 {
        return Err(ScenarioError::invalid(
            path,
            "an odd number of nanoseconds cannot be split into two equal one-way delays",
        ));
    }
    Ok(())
}

/// Deserialize the `[topology]` table of a parking lot (without `kind`). Errors are "sub.path:
/// message" so the schema's topology dispatcher keeps the field path. Its geometry is checked
/// by [`crate::load_str`] once the scenario's size has been checked against its limits (the
/// checks expand per-item lists, which a count such as 2^31 would make exhaust memory).
pub(crate) fn from_value<E: serde::de::Error>(v: toml::Value) -> Result<ParkingLot, E> {
    serde_path_to_error::deserialize(v).map_err(crate::schema::path_err)
}

/// Split a one-way delay budget over the two access links of a path (the first gets the odd
/// nanosecond), so that the path's round trip is exact.
fn split(budget: SimTime) -> (SimTime, SimTime) {
    let half = budget.as_nanos() / 2;
    (SimTime(budget.as_nanos() - half), SimTime(half))
}

/// Build the parking lot. Node order: s<i>, r0..rK, d<i>, then x<k>l, x<k>r per bottleneck;
/// link order: sender access, bottlenecks, receiver access, cross access. The graph is a tree,
/// so every route is the only one.
pub(crate) fn build(p: &ParkingLot, seed: u64) -> Result<ParkingLotNet, ScenarioError> {
    let g = p.geometry()?;
    let k = p.bottlenecks as usize;
    let n = p.pairs as usize;
    let total_delay: SimTime = g.delays.iter().fold(SimTime::ZERO, |a, &d| a + d);
    // An access link takes the buffer of the bottleneck it attaches to (DropTail of that size,
    // not its AQM), unless one is given.
    let aq = |i: usize| {
        g.access_queue
            .clone()
            .unwrap_or_else(|| g.queues[i].droptail_copy())
    };
    let mut b = Builder {
        nodes: Vec::new(),
        links: Vec::new(),
    };
    for i in 0..n {
        b.node(format!("s{i}"), "host");
    }
    for r in 0..=k {
        b.node(format!("r{r}"), "router");
    }
    for i in 0..n {
        b.node(format!("d{i}"), "host");
    }
    for i in 0..k {
        b.node(format!("x{i}l"), "host");
        b.node(format!("x{i}r"), "host");
    }
    let main_access: Vec<(SimTime, SimTime)> = g
        .main_rtt
        .iter()
        .map(|&rtt| split(SimTime(rtt.as_nanos() / 2 - total_delay.as_nanos())))
        .collect();
    let spread = p.delay_spread.as_ref().map_or(SimTime::ZERO, |d| d.value);
    for (i, (sd, _)) in main_access.iter().enumerate() {
        let jitter = if spread > SimTime::ZERO {
            let mut rng = fatpipe_core::RngStream::new(seed, &format!("pair/{i}/delay"));
            SimTime(rng.below(spread.as_nanos()))
        } else {
            SimTime::ZERO
        };
        b.duplex(&format!("s{i}"), "r0", g.access_rate, *sd + jitter, &aq(0));
    }
    for i in 0..k {
        b.duplex(
            &format!("r{i}"),
            &format!("r{}", i + 1),
            g.rates[i],
            g.delays[i],
            &g.queues[i],
        );
    }
    for (i, (_, dd)) in main_access.iter().enumerate() {
        b.duplex(
            &format!("r{k}"),
            &format!("d{i}"),
            g.access_rate,
            *dd,
            &aq(k - 1),
        );
    }
    let mut bg_sites = Vec::with_capacity(k);
    for i in 0..k {
        let (ld, rd) = split(SimTime(
            g.cross_rtt[i].as_nanos() / 2 - g.delays[i].as_nanos(),
        ));
        let (left, right) = (format!("x{i}l"), format!("x{i}r"));
        b.duplex(&left, &format!("r{i}"), g.access_rate, ld, &aq(i));
        b.duplex(&format!("r{}", i + 1), &right, g.access_rate, rd, &aq(i));
        bg_sites.push(BgSite {
            left,
            right,
            bottleneck: format!("r{i}->r{}", i + 1),
            rate_bps: g.rates[i].bps(),
        });
    }
    Ok(ParkingLotNet {
        builder: b,
        pairs: (0..n).map(|i| (format!("s{i}"), format!("d{i}"))).collect(),
        bg_sites,
        bottleneck: "r0->r1".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Topology;
    use crate::{elaborate, load_str, Plan};

    const MS: u64 = 1_000_000;

    /// K = 2, 3 main pairs, one cross flow per bottleneck (so the plan has their paths too).
    const K2: &str = r#"
duration = "1s"
[topology]
kind = "parkinglot"
bottlenecks = 2
pairs = 3
[topology.bottleneck]
rate = "100Mbps"
delay = "15ms"
[[flows]]
pairs = "all"
[[flows]]
src = "x0l"
dst = "x0r"
[[flows]]
src = "x1r"
dst = "x1l"
"#;

    /// K = 4 with per-bottleneck rates and delays and per-bottleneck cross RTTs.
    const K4: &str = r#"
duration = "1s"
[topology]
kind = "parkinglot"
bottlenecks = 4
pairs = 4
main_rtt = ["90ms", "180ms"]
cross_rtt = ["30ms", "30ms", "40ms", "30ms"]
[topology.bottleneck]
rate = ["100Mbps", "50Mbps", "100Mbps", "200Mbps"]
delay = ["5ms", "10ms", "5ms", "10ms"]
queue = { kind = "droptail", limit = "2500pkt" }
[topology.access]
rate = "10Gbps"
"#;

    fn plan(text: &str, sets: &[&str]) -> Plan {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        elaborate(&load_str(text, &sets).unwrap(), None).unwrap()
    }

    fn delay(p: &Plan, link: &str) -> u64 {
        p.links
            .iter()
            .find(|l| l.name == link)
            .unwrap_or_else(|| panic!("no link {link}"))
            .delay_ns
    }

    fn err(text: &str, sets: &[&str]) -> ScenarioError {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match load_str(text, &sets).and_then(|sc| elaborate(&sc, None).map(|_| ())) {
            Ok(()) => panic!("expected an error for {sets:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn k2_nodes_links_and_delays() {
        let p = plan(K2, &[]);
        // 3 senders, r0..r2, 3 receivers, 2 cross pairs.
        let names: Vec<&str> = p.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            ["s0", "s1", "s2", "r0", "r1", "r2", "d0", "d1", "d2", "x0l", "x0r", "x1l", "x1r"]
        );
        assert_eq!(p.nodes.iter().filter(|n| n.kind == "router").count(), 3);
        // Duplex links: 3 + 2 + 3 main, 2 x 2 cross; two directed links each.
        assert_eq!(p.links.len(), 2 * (3 + 2 + 3 + 4));
        assert_eq!(p.bottleneck.as_deref(), Some("r0->r1"));
        for l in ["r0->r1", "r1->r0", "r1->r2", "r2->r1"] {
            assert_eq!(delay(&p, l), 15 * MS);
        }
        // Main 90 ms: 45 ms one way = 30 ms of bottlenecks + 15 ms of access, split evenly.
        assert_eq!(delay(&p, "s0->r0"), 7_500_000);
        assert_eq!(delay(&p, "r2->d0"), 7_500_000);
        // Main 180 ms (pair 1, round-robin): 90 - 30 = 60 ms of access.
        assert_eq!(delay(&p, "s1->r0"), 30 * MS);
        assert_eq!(delay(&p, "d1->r2"), 30 * MS);
        assert_eq!(delay(&p, "s2->r0"), 7_500_000);
        // Cross 30 ms over a 15 ms bottleneck: nothing left for the access links.
        assert_eq!(delay(&p, "x0l->r0"), 0);
        assert_eq!(delay(&p, "r1->x0r"), 0);
        // Default queue: the dumbbell's rule, one BDP of 100 Mb/s at the shortest main RTT
        // (90 ms; 750 packets up to rounding); access links take their bottleneck's queue;
        // default access rate 10x.
        let bdp = default_queue(Rate(100_000_000), SimTime::from_millis(90)).limit_packets;
        assert!(matches!(bdp, Some(750..=751)), "{bdp:?}");
        let l = p.links.iter().find(|l| l.name == "r0->r1").unwrap();
        assert_eq!(l.queue.limit_packets, bdp);
        let a = p.links.iter().find(|l| l.name == "s1->r0").unwrap();
        assert_eq!(a.queue.limit_packets, bdp);
        assert_eq!(a.rate_bps, 1_000_000_000);
    }

    #[test]
    fn k4_nodes_links_and_delays() {
        let p = plan(K4, &["flows=[{pairs=\"all\"}]"]);
        assert_eq!(p.nodes.len(), 4 + 5 + 4 + 8);
        assert_eq!(p.links.len(), 2 * (4 + 4 + 4 + 8));
        let rates: Vec<u64> = (0..4)
            .map(|i| {
                let name = format!("r{i}->r{}", i + 1);
                p.links.iter().find(|l| l.name == name).unwrap().rate_bps
            })
            .collect();
        assert_eq!(rates, [100_000_000, 50_000_000, 100_000_000, 200_000_000]);
        assert_eq!(delay(&p, "r1->r2"), 10 * MS);
        assert_eq!(delay(&p, "r3->r4"), 10 * MS);
        // Main: 45 - 30 = 15 ms and 90 - 30 = 60 ms of access, halved.
        assert_eq!(delay(&p, "s0->r0"), 7_500_000);
        assert_eq!(delay(&p, "r4->d0"), 7_500_000);
        assert_eq!(delay(&p, "s3->r0"), 30 * MS);
        // Cross on bottleneck 1 (10 ms, 30 ms RTT): 5 ms of access; on 2 (5 ms, 40 ms): 15 ms.
        assert_eq!(delay(&p, "x1l->r1") + delay(&p, "r2->x1r"), 5 * MS);
        assert_eq!(delay(&p, "x2l->r2") + delay(&p, "r3->x2r"), 15 * MS);
        assert!(p.links.iter().all(|l| l.queue.limit_packets == Some(2500)));
        assert_eq!(
            p.links
                .iter()
                .find(|l| l.name == "x3l->r3")
                .unwrap()
                .rate_bps,
            10_000_000_000
        );
    }

    #[test]
    fn path_rtts_are_exactly_the_requested_ones() {
        let p = plan(K2, &[]);
        let rtt: Vec<u64> = p.flows.iter().map(|f| f.path_rtt_ns).collect();
        // Main pairs 0, 1, 2 round-robin over 90/180 ms, then the two cross flows.
        assert_eq!(rtt, [90 * MS, 180 * MS, 90 * MS, 30 * MS, 30 * MS]);

        // K = 4 with an odd split (7 ms bottlenecks; 45 - 28 = 17 ms of access), every main
        // flow and a cross flow on every bottleneck.
        let mut sets = vec![
            "topology.bottleneck.delay=\"7ms\"".to_string(),
            "topology.main_rtt=[\"90ms\", \"180ms\", \"100ms\"]".to_string(),
            "topology.cross_rtt=\"30ms\"".to_string(),
            "topology.pairs=6".to_string(),
        ];
        let mut flows = vec!["{pairs=\"all\"}".to_string()];
        for k in 0..4 {
            flows.push(format!("{{src=\"x{k}l\", dst=\"x{k}r\"}}"));
        }
        sets.push(format!("flows=[{}]", flows.join(", ")));
        let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
        let p = plan(K4, &sets);
        let rtt: Vec<u64> = p.flows.iter().map(|f| f.path_rtt_ns).collect();
        assert_eq!(
            rtt,
            [90, 180, 100, 90, 180, 100, 30, 30, 30, 30].map(|x| x * MS)
        );
        // The odd millisecond of a 17 ms budget: 8.5 ms each side.
        assert_eq!(delay(&p, "s0->r0"), 8_500_000);
        // Main flows cross every bottleneck; each cross flow exactly its own: check by the
        // bottleneck rate the plan reports (bottleneck 1 is the 50 Mb/s one).
        assert!(p.flows[..6]
            .iter()
            .all(|f| f.path_bottleneck_bps == 50_000_000));
        assert_eq!(p.flows[7].path_bottleneck_bps, 50_000_000);
        assert_eq!(p.flows[9].path_bottleneck_bps, 200_000_000);
    }

    #[test]
    fn bg_sites_are_the_cross_pairs_of_each_bottleneck() {
        let sc = load_str(K4, &[]).unwrap();
        let Topology::ParkingLot(pl) = &sc.topology else {
            panic!("not a parking lot")
        };
        let net = build(pl, 1).unwrap();
        assert_eq!(net.bg_sites.len(), 4);
        for (k, s) in net.bg_sites.iter().enumerate() {
            assert_eq!(
                *s,
                BgSite {
                    left: format!("x{k}l"),
                    right: format!("x{k}r"),
                    bottleneck: format!("r{k}->r{}", k + 1),
                    rate_bps: [100_000_000, 50_000_000, 100_000_000, 200_000_000][k],
                }
            );
            // The site's hosts hang off the two ends of its bottleneck, one link each.
            let links = &net.builder.links;
            assert!(links.iter().any(|l| l.name == format!("{}->r{k}", s.left)));
            assert!(links
                .iter()
                .any(|l| l.name == format!("r{}->{}", k + 1, s.right)));
            assert!(links.iter().any(|l| l.name == s.bottleneck));
        }
        assert_eq!(net.pairs[3], ("s3".to_string(), "d3".to_string()));
    }

    #[test]
    fn bad_inputs_are_rejected_naming_the_field() {
        // Caught when the file is loaded, not only when it is elaborated.
        let e = load_str(K2, &["topology.bottlenecks=1".to_string()]).unwrap_err();
        assert_eq!(e.path, "topology.bottlenecks", "{e}");
        assert!(e.message.contains("at least 2"), "{e}");

        let e = err(K2, &["topology.pairs=0"]);
        assert_eq!(e.path, "topology.pairs", "{e}");

        // 3 x 15 ms of bottlenecks need a main RTT of at least 90 ms.
        let e = err(
            K2,
            &["topology.bottlenecks=3", "topology.main_rtt=\"80ms\""],
        );
        assert_eq!(e.path, "topology.main_rtt", "{e}");
        assert!(e.message.contains("90ms"), "{e}");
        let e = err(K2, &["topology.main_rtt=[\"90ms\", \"50ms\"]"]);
        assert_eq!(e.path, "topology.main_rtt.1", "{e}");
        let e = err(K2, &["topology.main_rtt=[]"]);
        assert_eq!(e.path, "topology.main_rtt", "{e}");
        let e = err(K2, &["topology.cross_rtt=\"20ms\""]);
        assert_eq!(e.path, "topology.cross_rtt", "{e}");
        let e = err(K2, &["topology.main_rtt=\"90000001ns\""]);
        assert_eq!(e.path, "topology.main_rtt", "{e}");
        assert!(e.message.contains("odd"), "{e}");

        // Lists of the wrong length.
        let e = err(
            K2,
            &["topology.bottleneck.delay=[\"1ms\", \"2ms\", \"3ms\"]"],
        );
        assert_eq!(e.path, "topology.bottleneck.delay", "{e}");
        assert!(
            e.message.contains("3 values but there are 2 bottlenecks"),
            "{e}"
        );
        let e = err(K2, &["topology.bottleneck.rate=[\"1Mbps\"]"]);
        assert_eq!(e.path, "topology.bottleneck.rate", "{e}");
        let e = err(K2, &["topology.cross_rtt=[\"30ms\"]"]);
        assert_eq!(e.path, "topology.cross_rtt", "{e}");
        let e = err(K2, &["topology.bottleneck.rate=[\"1Mbps\", \"0Mbps\"]"]);
        assert_eq!(e.path, "topology.bottleneck.rate.1", "{e}");

        // Access links have no delay to set; queues are checked like the dumbbell's.
        let e = err(K2, &["topology.access.delay=\"1ms\""]);
        assert_eq!(e.path, "topology.access.delay", "{e}");
        let e = err(K2, &["topology.bottleneck.queue={limit=\"0pkt\"}"]);
        assert_eq!(e.path, "topology.bottleneck.queue.limit", "{e}");
        let e = err(K2, &["topology.bogus=1"]);
        assert!(e.message.contains("unknown field `bogus`"), "{e}");

        // Flows: unknown hosts, and pairs together with src/dst.
        let e = err(K2, &["flows.1.src=\"x9l\""]);
        assert_eq!(e.path, "flows.1.src", "{e}");
        let e = err(K2, &["flows.1.pairs=[0]"]);
        assert_eq!(e.path, "flows.1.pairs", "{e}");
        let e = err(K2, &["flows.0.pairs=[3]"]);
        assert_eq!(e.path, "flows.0.pairs", "{e}");
    }

    #[test]
    fn default_flows_are_one_per_main_pair() {
        let p = plan(K2, &["flows=[]"]);
        let ends: Vec<(&str, &str)> = p
            .flows
            .iter()
            .map(|f| (f.src.as_str(), f.dst.as_str()))
            .collect();
        assert_eq!(ends, [("s0", "d0"), ("s1", "d1"), ("s2", "d2")]);
    }
}
