//! The ring topology (`kind = "ring"`): R routers in a ring `r1 - r2 - ... - rR - r1`, each with a
//! LAN of senders and receivers on their own host links, and every sender talking to its peer in
//! the opposite LAN, R/2 ring links away.
//!
//! ```text
//!   r1s<j>, r1d<j> -- r1 ======== r2 -- r2s<j>, r2d<j>        (R = 4)
//!                     ||          ||
//!   r4s<j>, r4d<j> -- r4 ======== r3 -- r3s<j>, r3d<j>
//! ```
//!
//! Seed 001 (Doria, Salgueiro & Spohn, "Avaliação de Desempenho do DCCP, CTCP e CUBIC, Usando
//! Tráfegos VoIP", ~2010, §4.1 and Figure 1): 4 routers, 12 senders and 12 receivers per LAN on
//! 10 Mb/s, 1 ms host links, 1 Mb/s ring links of 25, 50 or 100 ms one way with 300-packet
//! DropTail queues; sender E_i sends to D_i in the opposite LAN.
//!
//! A flow to the opposite LAN has two equal-cost paths. fatpipe's routing (fatpipe-net
//! `routing.rs`) is static, by hop count, and at each node takes the outgoing link added first
//! among equally short ones; the builder chooses the path of each router's traffic to the
//! opposite LAN (`tie_break`) by the order in which it adds the directed ring links.
//! docs/ring.md has the geometry, the names, the pair numbering and what ns-2 does.

use crate::error::ScenarioError;
use crate::plan::{queue_from_spec, Builder, PlanQueue};
use crate::schema::QueueSpec;
use crate::units::{Duration, RateStr};
use fatpipe_core::{Rate, SimTime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Seed 001's values, the defaults.
pub(crate) const DEFAULT_ROUTERS: u32 = 4;
pub(crate) const DEFAULT_SENDERS: u32 = 12;
pub(crate) const DEFAULT_RECEIVERS: u32 = 12;
const DEFAULT_RING_RATE: &str = "1Mbps";
const DEFAULT_RING_QUEUE_PKTS: u64 = 300;
const DEFAULT_LAN_RATE: &str = "10Mbps";
const DEFAULT_LAN_DELAY: &str = "1ms";

/// R routers in a ring `r1 - r2 - ... - rR - r1`; router k has a LAN of senders `r<k>s<j>` and
/// receivers `r<k>d<j>`, each on its own host link. Pair i is sender j = i mod senders of router
/// k = i / senders + 1, sending to receiver j mod receivers of the opposite router k + R/2.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Ring {
    /// Number of routers R, even (every LAN sends to the opposite one) and at least 4.
    /// Default 4 (seed 001).
    #[serde(default)]
    #[schemars(range(min = 4))]
    pub routers: Option<u32>,
    /// Senders per LAN, `r<k>s0` ... (default 12). There are R x senders pairs.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub senders: Option<u32>,
    /// Receivers per LAN, `r<k>d0` ... (default 12). Sender j's peer is receiver j mod receivers
    /// of the opposite LAN, so with fewer receivers than senders some receivers serve several.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub receivers: Option<u32>,
    /// The router-to-router links (required: their one-way delay has no default).
    #[serde(default)]
    pub ring: Option<RingLinks>,
    /// The host links, one duplex link per host to its router. Default 10 Mb/s, 1 ms, and the
    /// ring links' queue.
    #[serde(default)]
    pub lan: Option<LanLinks>,
    /// Which of the two equal-cost paths to the opposite LAN each router takes (its data and
    /// the ACKs it sends back alike): "clockwise" (r<k> -> r<k+1> -> ...),
    /// "counterclockwise" (r<k> -> r<k-1> -> ...), or "ns2" (default): the paths ns-2's static
    /// routing picks when the routers are created in the order r1, r2, ..., rR (every router
    /// clockwise except r<R/2> and r<R/2+1>; with R = 4, r1 and r4 clockwise, r2 and r3
    /// counterclockwise). See docs/ring.md.
    #[serde(default)]
    pub tie_break: Option<TieBreak>,
}

/// Rate, one-way delay and queue of the ring links; link k (k = 1..R) joins r<k> and r<k+1>, and
/// link R closes the ring, joining rR and r1.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RingLinks {
    /// Rate of every ring link, each direction. Default "1Mbps" (seed 001).
    #[serde(default)]
    pub rate: Option<RateStr>,
    /// One-way delay of every ring link, e.g. "25ms" (seed 001: 25, 50 or 100 ms). Give this or
    /// `delays`.
    #[serde(default)]
    pub delay: Option<Duration>,
    /// One-way delay of each ring link: exactly R values, value k for link k (r<k> -- r<k+1>,
    /// the last one rR -- r1). Give this or `delay`.
    #[serde(default)]
    pub delays: Option<Vec<Duration>>,
    /// Output queue of each direction of every ring link. Default DropTail of 300 packets (seed
    /// 001).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

/// The host links: every sender and receiver has its own duplex link to its LAN's router.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LanLinks {
    /// Default "10Mbps" (seed 001).
    #[serde(default)]
    pub rate: Option<RateStr>,
    /// One-way delay. Default "1ms" (seed 001).
    #[serde(default)]
    pub delay: Option<Duration>,
    /// Output queue of each direction. Default: the ring links' queue (the dumbbell's rule for
    /// access links; seed 001 does not give one, ns-2's default would be 50 packets).
    #[serde(default)]
    pub queue: Option<QueueSpec>,
}

/// How a router's traffic to the opposite LAN goes round the ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TieBreak {
    /// Every router sends clockwise, r<k> -> r<k+1>.
    Clockwise,
    /// Every router sends counterclockwise, r<k> -> r<k-1>.
    Counterclockwise,
    /// ns-2.35's static routing with routers created in the order r1..rR: clockwise, except
    /// r<R/2> and r<R/2+1>, which send counterclockwise.
    #[default]
    Ns2,
}

/// The direction a router sends its traffic to the opposite LAN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// r<k> -> r<k+1>
    Clockwise,
    /// r<k> -> r<k-1>
    Counterclockwise,
}

impl TieBreak {
    /// The direction of each router r1..rR (index 0 is r1) towards the opposite LAN.
    ///
    /// "ns2": ns-2.35's `RouteLogic::compute_routes` (routing/route.cc) runs, per source, a
    /// Dijkstra that settles equally distant nodes in increasing node id and keeps the first
    /// path found (strict `<`). The opposite router is reached first through whichever of its
    /// two ring neighbours has the lower id, and with routers created r1..rR that is the
    /// clockwise neighbour, except when the opposite router is r1 (neighbours rR and r2: r2
    /// wins) or rR (neighbours r<R-1> and r1: r1 wins) — that is, for the sources r<R/2+1> and
    /// r<R/2>. Checked by running ns-2.35 for R = 4, 6, 8, 10 (docs/ring.md).
    pub fn directions(self, routers: usize) -> Vec<Direction> {
        (0..routers)
            .map(|k| match self {
                TieBreak::Clockwise => Direction::Clockwise,
                TieBreak::Counterclockwise => Direction::Counterclockwise,
                TieBreak::Ns2 => {
                    let opposite = (k + routers / 2) % routers;
                    if opposite == 0 || opposite == routers - 1 {
                        Direction::Counterclockwise
                    } else {
                        Direction::Clockwise
                    }
                }
            })
            .collect()
    }
}

/// A built ring: nodes and links, the pairs (for `[[flows]] pairs = ...`) and the link the
/// summary reports.
pub(crate) struct RingNet {
    pub builder: Builder,
    pub pairs: Vec<(String, String)>,
    /// Router r1's first link towards the opposite LAN (one of the busiest).
    pub bottleneck: String,
}

/// Everything the builder needs, validated.
struct Geometry {
    routers: usize,
    senders: usize,
    receivers: usize,
    ring_rate: Rate,
    /// Per ring link k = 0..R (r<k+1> -- r<k+2>).
    delays: Vec<SimTime>,
    ring_queue: PlanQueue,
    lan_rate: Rate,
    lan_delay: SimTime,
    lan_queue: PlanQueue,
    tie_break: TieBreak,
}

/// Router name: r1..rR for index 0..R-1.
fn router(k: usize) -> String {
    format!("r{}", k + 1)
}

impl Ring {
    fn geometry(&self) -> Result<Geometry, ScenarioError> {
        let r = self.routers.unwrap_or(DEFAULT_ROUTERS);
        if r < 4 || r % 2 == 1 {
            return Err(ScenarioError::invalid(
                "topology.routers",
                format!(
                    "a ring needs an even number of routers, at least 4 (got {r}), so that every LAN has an opposite LAN to send to"
                ),
            ));
        }
        let senders = self.senders.unwrap_or(DEFAULT_SENDERS);
        if senders == 0 {
            return Err(ScenarioError::invalid(
                "topology.senders",
                "every LAN needs at least 1 sender (pairs are the senders)",
            ));
        }
        let receivers = self.receivers.unwrap_or(DEFAULT_RECEIVERS);
        if receivers == 0 {
            return Err(ScenarioError::invalid(
                "topology.receivers",
                "every LAN needs at least 1 receiver, for the senders of the opposite LAN",
            ));
        }
        let ring = self.ring.clone().ok_or_else(|| {
            ScenarioError::invalid(
                "topology.ring",
                "missing: give the ring links' one-way delay, e.g. ring = { delay = \"25ms\" } (seed 001: 25, 50 or 100 ms), or `delays` with one value per link",
            )
        })?;
        let ring_rate = ring
            .rate
            .as_ref()
            .map_or_else(|| RateStr::new(DEFAULT_RING_RATE).value, |x| x.value);
        if ring_rate.bps() == 0 {
            return Err(ScenarioError::invalid(
                "topology.ring.rate",
                "a link needs a positive rate, e.g. \"1Mbps\"",
            ));
        }
        let n = r as usize;
        let delays = match (&ring.delay, &ring.delays) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::invalid(
                    "topology.ring.delays",
                    "give `delay` (one value for every ring link) or `delays` (one per link), not both",
                ))
            }
            (None, None) => {
                return Err(ScenarioError::invalid(
                    "topology.ring.delay",
                    "missing: give the ring links' one-way delay, e.g. \"25ms\" (seed 001: 25, 50 or 100 ms), or `delays` with one value per link",
                ))
            }
            (Some(d), None) => vec![d.value; n],
            (None, Some(v)) if v.len() == n => v.iter().map(|d| d.value).collect(),
            (None, Some(v)) => {
                return Err(ScenarioError::invalid(
                    "topology.ring.delays",
                    format!(
                        "has {} values but a ring of {n} routers has {n} links (link k joins r<k> and r<k+1>; link {n} closes the ring, r{n} -- r1); give one value per link, or one `delay` for all",
                        v.len()
                    ),
                ))
            }
        };
        let ring_queue = match &ring.queue {
            Some(q) => queue_from_spec(q, "topology.ring.queue")?,
            None => PlanQueue {
                kind: "droptail".into(),
                limit_packets: Some(DEFAULT_RING_QUEUE_PKTS),
                limit_bytes: None,
                aqm: None,
                request: None,
            },
        };
        let lan = self.lan.clone().unwrap_or_default();
        let lan_rate = lan
            .rate
            .as_ref()
            .map_or_else(|| RateStr::new(DEFAULT_LAN_RATE).value, |x| x.value);
        if lan_rate.bps() == 0 {
            return Err(ScenarioError::invalid(
                "topology.lan.rate",
                "a link needs a positive rate, e.g. \"10Mbps\"",
            ));
        }
        let lan_delay = lan
            .delay
            .as_ref()
            .map_or_else(|| Duration::new(DEFAULT_LAN_DELAY).value, |x| x.value);
        let lan_queue = match &lan.queue {
            Some(q) => queue_from_spec(q, "topology.lan.queue")?,
            None => ring_queue.droptail_copy(),
        };
        Ok(Geometry {
            routers: n,
            senders: senders as usize,
            receivers: receivers as usize,
            ring_rate,
            delays,
            ring_queue,
            lan_rate,
            lan_delay,
            lan_queue,
            tie_break: self.tie_break.unwrap_or_default(),
        })
    }

    /// Every check the builder makes, so a bad ring fails when the file is loaded.
    pub(crate) fn validate(&self) -> Result<(), ScenarioError> {
        self.geometry().map(|_| ())
    }
}

/// Deserialize the `[topology]` table of a ring (without `kind`). Errors are "sub.path:
/// message" so the schema's topology dispatcher keeps the field path. Its geometry is checked
/// by [`crate::load_str`] once the scenario's size has been checked against its limits (the
/// checks expand per-item lists, which a count such as 2^31 would make exhaust memory).
pub(crate) fn from_value<E: serde::de::Error>(v: toml::Value) -> Result<Ring, E> {
    serde_path_to_error::deserialize(v).map_err(crate::schema::path_err)
}

/// Build the ring.
///
/// Node order: r1..rR, then LAN by LAN (r1's first) its senders r<k>s0.. and receivers
/// r<k>d0... Link order: the 2R directed ring links first — every router's link towards its
/// chosen direction (r1's first), then every router's other ring link — then the host links
/// LAN by LAN (sender -> router and back, router -> receiver and back). Routing takes the
/// outgoing link added first among equally short ones, so each router's traffic to the
/// opposite LAN (the only destinations with two shortest paths) goes the way `tie_break` says.
pub(crate) fn build(ring: &Ring) -> Result<RingNet, ScenarioError> {
    let g = ring.geometry()?;
    let n = g.routers;
    let mut b = Builder {
        nodes: Vec::new(),
        links: Vec::new(),
    };
    for k in 0..n {
        b.node(router(k), "router");
    }
    for k in 0..n {
        for j in 0..g.senders {
            b.node(format!("r{}s{j}", k + 1), "host");
        }
        for j in 0..g.receivers {
            b.node(format!("r{}d{j}", k + 1), "host");
        }
    }
    // Ring link k joins router k and k+1 (indices mod R): router k's clockwise link is link k,
    // its counterclockwise one link k-1.
    let dirs = g.tie_break.directions(n);
    let out_link = |k: usize, d: Direction| -> (usize, usize, SimTime) {
        match d {
            Direction::Clockwise => (k, (k + 1) % n, g.delays[k]),
            Direction::Counterclockwise => (k, (k + n - 1) % n, g.delays[(k + n - 1) % n]),
        }
    };
    let other = |d: Direction| match d {
        Direction::Clockwise => Direction::Counterclockwise,
        Direction::Counterclockwise => Direction::Clockwise,
    };
    for pass in 0..2 {
        for (k, &d) in dirs.iter().enumerate() {
            let d = if pass == 0 { d } else { other(d) };
            let (from, to, delay) = out_link(k, d);
            b.simplex(
                &router(from),
                &router(to),
                g.ring_rate,
                delay,
                &g.ring_queue,
            );
        }
    }
    for k in 0..n {
        let r = router(k);
        for j in 0..g.senders {
            let h = format!("r{}s{j}", k + 1);
            b.duplex(&h, &r, g.lan_rate, g.lan_delay, &g.lan_queue);
        }
        for j in 0..g.receivers {
            let h = format!("r{}d{j}", k + 1);
            b.duplex(&r, &h, g.lan_rate, g.lan_delay, &g.lan_queue);
        }
    }
    let mut pairs = Vec::with_capacity(n * g.senders);
    for k in 0..n {
        let opposite = (k + n / 2) % n;
        for j in 0..g.senders {
            pairs.push((
                format!("r{}s{j}", k + 1),
                format!("r{}d{}", opposite + 1, j % g.receivers),
            ));
        }
    }
    let (from, to, _) = out_link(0, dirs[0]);
    Ok(RingNet {
        builder: b,
        pairs,
        bottleneck: format!("{}->{}", router(from), router(to)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_str;
    use crate::plan::network_of;
    use crate::schema::Topology;
    use fatpipe_net::routing::RoutingTable;

    /// Seed 001's ring, 2 senders and 2 receivers per LAN.
    const RING4: &str = r#"
duration = "1s"
[topology]
kind = "ring"
senders = 2
receivers = 2
ring = { delay = "25ms" }
"#;

    fn built(sets: &[&str]) -> RingNet {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let sc = load_str(RING4, &sets).unwrap();
        let Topology::Ring(r) = &sc.topology else {
            panic!("not a ring")
        };
        build(r).unwrap()
    }

    /// The links (by name) of the route from `src` to `dst`, as fatpipe routes it.
    fn path(net: &RingNet, src: &str, dst: &str) -> Vec<String> {
        let network = network_of(&net.builder.nodes, &net.builder.links, 0);
        let routes = RoutingTable::compute(&network);
        let s = network.node_by_name(src).unwrap();
        let d = network.node_by_name(dst).unwrap();
        routes
            .path(&network, s, d)
            .unwrap()
            .iter()
            .map(|&l| net.builder.links[l as usize].name.clone())
            .collect()
    }

    /// The ring part of the path of pair 2k's flow (sender 0 of LAN k) and of its ACKs.
    fn ring_paths(net: &RingNet, lan: usize) -> (Vec<String>, Vec<String>) {
        let (s, d) = &net.pairs[2 * lan];
        let ring = |p: Vec<String>| -> Vec<String> {
            p.into_iter()
                .filter(|l| {
                    let (a, b) = l.split_once("->").unwrap();
                    a.len() == 2 && b.len() == 2
                })
                .collect()
        };
        (ring(path(net, s, d)), ring(path(net, d, s)))
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn clockwise_paths_from_each_lan() {
        let net = built(&["topology.tie_break=\"clockwise\""]);
        // Full path of LAN 1's flow: host link, two ring links, host link.
        let (s, d) = &net.pairs[0];
        assert_eq!(
            path(&net, s, d),
            names(&["r1s0->r1", "r1->r2", "r2->r3", "r3->r3d0"])
        );
        let expect = [
            (["r1->r2", "r2->r3"], ["r3->r4", "r4->r1"]),
            (["r2->r3", "r3->r4"], ["r4->r1", "r1->r2"]),
            (["r3->r4", "r4->r1"], ["r1->r2", "r2->r3"]),
            (["r4->r1", "r1->r2"], ["r2->r3", "r3->r4"]),
        ];
        for (lan, (data, ack)) in expect.iter().enumerate() {
            assert_eq!(
                ring_paths(&net, lan),
                (names(data), names(ack)),
                "LAN {lan}"
            );
        }
        assert_eq!(net.bottleneck, "r1->r2");
    }

    #[test]
    fn counterclockwise_paths_from_each_lan() {
        let net = built(&["topology.tie_break=\"counterclockwise\""]);
        let expect = [
            (["r1->r4", "r4->r3"], ["r3->r2", "r2->r1"]),
            (["r2->r1", "r1->r4"], ["r4->r3", "r3->r2"]),
            (["r3->r2", "r2->r1"], ["r1->r4", "r4->r3"]),
            (["r4->r3", "r3->r2"], ["r2->r1", "r1->r4"]),
        ];
        for (lan, (data, ack)) in expect.iter().enumerate() {
            assert_eq!(
                ring_paths(&net, lan),
                (names(data), names(ack)),
                "LAN {lan}"
            );
        }
        assert_eq!(net.bottleneck, "r1->r4");
    }

    #[test]
    fn ns2_paths_from_each_lan() {
        // The default. r1 and r4 clockwise, r2 and r3 counterclockwise: what ns-2.35 picks for
        // this ring built r1, r2, r3, r4 (docs/ring.md). The link r3 -- r4 carries nothing.
        for sets in [&[][..], &["topology.tie_break=\"ns2\""][..]] {
            let net = built(sets);
            let expect = [
                (["r1->r2", "r2->r3"], ["r3->r2", "r2->r1"]),
                (["r2->r1", "r1->r4"], ["r4->r1", "r1->r2"]),
                (["r3->r2", "r2->r1"], ["r1->r2", "r2->r3"]),
                (["r4->r1", "r1->r2"], ["r2->r1", "r1->r4"]),
            ];
            for (lan, (data, ack)) in expect.iter().enumerate() {
                assert_eq!(
                    ring_paths(&net, lan),
                    (names(data), names(ack)),
                    "LAN {lan}"
                );
            }
            assert_eq!(net.bottleneck, "r1->r2");
        }
    }

    #[test]
    fn ns2_directions_for_larger_rings() {
        // As ns-2.35 printed them for rings built r1..rR (docs/ring.md).
        use Direction::{Clockwise as C, Counterclockwise as A};
        assert_eq!(TieBreak::Ns2.directions(4), [C, A, A, C]);
        assert_eq!(TieBreak::Ns2.directions(6), [C, C, A, A, C, C]);
        assert_eq!(TieBreak::Ns2.directions(8), [C, C, C, A, A, C, C, C]);
        assert_eq!(TieBreak::Ns2.directions(10), [C, C, C, C, A, A, C, C, C, C]);
        // And the builder follows them on a 6-ring: r3 goes r3 -> r2 -> r1 -> r6.
        let net = built(&["topology.routers=6", "topology.senders=1"]);
        let (s, d) = &net.pairs[2];
        assert_eq!((s.as_str(), d.as_str()), ("r3s0", "r6d0"));
        assert_eq!(
            path(&net, s, d),
            names(&["r3s0->r3", "r3->r2", "r2->r1", "r1->r6", "r6->r6d0"])
        );
        let (s, d) = &net.pairs[1];
        assert_eq!(
            path(&net, s, d),
            names(&["r2s0->r2", "r2->r3", "r3->r4", "r4->r5", "r5->r5d0"])
        );
    }

    #[test]
    fn routing_ties_are_only_towards_the_opposite_lan() {
        // Between neighbouring LANs there is one shortest path whatever the tie-break.
        for tb in ["clockwise", "counterclockwise", "ns2"] {
            let set = format!("topology.tie_break=\"{tb}\"");
            let net = built(&[&set]);
            assert_eq!(
                path(&net, "r1s0", "r2d1"),
                names(&["r1s0->r1", "r1->r2", "r2->r2d1"])
            );
            assert_eq!(
                path(&net, "r1s1", "r4d0"),
                names(&["r1s1->r1", "r1->r4", "r4->r4d0"])
            );
            assert_eq!(path(&net, "r1s0", "r1d0"), names(&["r1s0->r1", "r1->r1d0"]));
        }
    }

    #[test]
    fn unknown_tie_break_lists_the_choices() {
        let e: ScenarioError =
            load_str(RING4, &["topology.tie_break=\"shortest\"".to_string()]).unwrap_err();
        assert_eq!(e.path, "topology.tie_break", "{e}");
        for name in ["clockwise", "counterclockwise", "ns2"] {
            assert!(e.message.contains(name), "{e}");
        }
    }
}
