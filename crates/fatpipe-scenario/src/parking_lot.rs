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
    pub bottlenecks: u32,
    /// Number of main sender/receiver pairs s<i> -> d<i>; their flows cross every bottleneck.
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

/// Deserialize the `[topology]` table of a parking lot (without `kind`) and validate it. Errors
/// are "sub.path: message" so the schema's topology dispatcher keeps the field path.
pub(crate) fn from_value<E: serde::de::Error>(v: toml::Value) -> Result<ParkingLot, E> {
    let p: ParkingLot = serde_path_to_error::deserialize(v)
        .map_err(|e| E::custom(format!("{}: {}", e.path(), e.inner().message())))?;
    p.validate().map_err(|e| {
        E::custom(format!(
            "{}: {}",
            e.path.trim_start_matches("topology."),
            e.message
        ))
    })?;
    Ok(p)
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
pub(crate) fn build(p: &ParkingLot) -> Result<ParkingLotNet, ScenarioError> {
    let g = p.geometry()?;
    let k = p.bottlenecks as usize;
    let n = p.pairs as usize;
    let total_delay: SimTime = g.delays.iter().fold(SimTime::ZERO, |a, &d| a + d);
    // An access link takes the queue of the bottleneck it attaches to, unless one is given.
    let aq = |i: usize| {
        g.access_queue
            .clone()
            .unwrap_or_else(|| g.queues[i].clone())
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
    for (i, (sd, _)) in main_access.iter().enumerate() {
        b.duplex(&format!("s{i}"), "r0", g.access_rate, *sd, &aq(0));
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
        });
    }
    Ok(ParkingLotNet {
        builder: b,
        pairs: (0..n).map(|i| (format!("s{i}"), format!("d{i}"))).collect(),
        bg_sites,
        bottleneck: "r0->r1".into(),
    })
}
