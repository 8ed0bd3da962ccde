//! Merge-ahead links: a computed-FIFO link fed by several links (so not cut-through) that can
//! still take a packet ahead of the clock when no packet can reach it earlier. The case it
//! serves is the ACK side of a dumbbell: the receivers' ACKs meet at the far router's link back.
//!
//! Such a link `M` qualifies when every feeder (on the flows' paths) leaves a host whose
//! receivers run in advance ([`super::advance_receivers`]), each reached by a cut-through link
//! fed by one and the same computed-FIFO link `U` (the bottleneck). Everything those hosts send
//! then answers a packet that crossed `U`: a packet that has not crossed `U` yet starts there
//! no earlier than `max(now, U's transmitter busy-until)` (FIFO), takes at least the
//! transmission time of the smallest packet that crosses `U`, and then the propagation delays
//! of `U`, of the host's link in and of its link to `M`. So every packet not yet handed to a
//! feeder reaches `M` no earlier than
//!
//! `bound = max(now, U.busy_until) + lead`, `lead` = that transmission time + the smallest sum
//! of those delays over the feeders.
//!
//! A packet leaving a feeder towards `M` at arrival time `a` is offered to `M` at once when
//! `a < bound`, `a` is within the run and no feeder holds a packet in its pipe (those were kept
//! for their arrival events and may arrive earlier): every later offer to `M` then comes at a
//! later time, so `M` sees the offers of the event-driven run in the same order, at the same
//! times. Otherwise the packet takes its arrival event as before.

use fatpipe_core::SimTime;
use fatpipe_net::routing::RoutingTable;
use fatpipe_net::{Network, NodeId, NodeKind};

/// No link.
pub(super) const NONE: u32 = u32::MAX;

/// A transport path's endpoints and the smallest packet (wire bytes) it carries out and back.
pub(super) type PathSizes = ((NodeId, NodeId), (u32, u32));

/// What a link needs to take packets ahead of the clock as a merge (`up == NONE`: it does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct MergeAhead {
    /// The link every packet reaching this one has crossed (`U` above).
    pub up: u32,
    /// Least time from the start of a transmission on `up` to the arrival here.
    pub lead: SimTime,
    /// Packets in the feeders' pipes, waiting for their arrival events.
    pub waiting: u32,
}

impl MergeAhead {
    const OFF: MergeAhead = MergeAhead {
        up: NONE,
        lead: SimTime::ZERO,
        waiting: 0,
    };
}

/// Per link: its merge-ahead data, and the merge link it feeds (NONE if none).
pub(super) struct Merges {
    pub merge: Vec<MergeAhead>,
    pub feeds: Vec<u32>,
}

impl Merges {
    /// No merge-ahead link (the shortcuts are off).
    pub fn clear(&mut self) {
        self.merge.iter_mut().for_each(|m| *m = MergeAhead::OFF);
        self.feeds.iter_mut().for_each(|f| *f = NONE);
    }

    pub fn count(&self) -> usize {
        self.merge.iter().filter(|m| m.up != NONE).count()
    }
}

/// What the flows' paths say about links and nodes, shared by the merge analyses (this file and
/// `data_merge.rs`).
pub(super) struct PathFacts {
    /// Per link: the links feeding it on some path, and the smallest packet (wire bytes) it
    /// carries.
    pub feeders: Vec<Vec<u32>>,
    pub min_size: Vec<u32>,
    /// Per node: the last link of a path ending there (NONE: none), and whether it is a path's
    /// endpoint.
    pub in_link: Vec<u32>,
    pub endpoint: Vec<bool>,
    /// Per flow: its data path and its ACK path (empty where there is no route).
    pub paths: Vec<(Vec<u32>, Vec<u32>)>,
}

impl PathFacts {
    /// `flows` are the transport paths' endpoints with the smallest packet each sends from
    /// source to destination and back (wire bytes).
    pub fn new(net: &Network, routes: &RoutingTable, flows: &[PathSizes]) -> Self {
        let n_links = net.links.len();
        let mut facts = PathFacts {
            feeders: vec![Vec::new(); n_links],
            min_size: vec![u32::MAX; n_links],
            in_link: vec![NONE; net.nodes.len()],
            endpoint: vec![false; net.nodes.len()],
            paths: Vec::with_capacity(flows.len()),
        };
        for &((a, b), (fwd_min, back_min)) in flows {
            facts.endpoint[a as usize] = true;
            facts.endpoint[b as usize] = true;
            let mut both = [Vec::new(), Vec::new()];
            for (k, (src, dst, size)) in [(a, b, fwd_min), (b, a, back_min)].into_iter().enumerate()
            {
                let Some(path) = routes.path(net, src, dst) else {
                    continue;
                };
                for &l in &path {
                    facts.min_size[l as usize] = facts.min_size[l as usize].min(size);
                }
                for w in path.windows(2) {
                    if !facts.feeders[w[1] as usize].contains(&w[0]) {
                        facts.feeders[w[1] as usize].push(w[0]);
                    }
                }
                if let Some(&last) = path.last() {
                    facts.in_link[dst as usize] = last;
                }
                both[k] = path;
            }
            let [data, acks] = both;
            facts.paths.push((data, acks));
        }
        facts
    }
}

/// Find the merge-ahead links. `cut_through` and `advance_rx` are the other shortcuts' analyses.
pub(super) fn merge_links(
    net: &Network,
    facts: &PathFacts,
    cut_through: &[bool],
    advance_rx: &[bool],
) -> Merges {
    let n_links = net.links.len();
    let (feeders, min_size, in_link, endpoint) = (
        &facts.feeders,
        &facts.min_size,
        &facts.in_link,
        &facts.endpoint,
    );
    // The one link feeding the cut-through link into host `h`, if `h`'s receivers run in
    // advance, with the delays from `U`'s far end to the merge through `h`'s link `f`.
    let upstream = |f: u32| -> Option<(u32, SimTime)> {
        let h = net.links[f as usize].from as usize;
        let into = in_link[h];
        if !advance_rx[h] || into == NONE || !cut_through[into as usize] {
            return None;
        }
        match feeders[into as usize][..] {
            [u] => Some((
                u,
                net.links[into as usize].delay + net.links[f as usize].delay,
            )),
            _ => None,
        }
    };
    let mut merges = Merges {
        merge: vec![MergeAhead::OFF; n_links],
        feeds: vec![NONE; n_links],
    };
    for (m, link) in net.links.iter().enumerate() {
        let x = link.from as usize;
        if cut_through[m]
            || !link.is_computed()
            || net.nodes[x].kind != NodeKind::Router
            || endpoint[x]
            || feeders[m].len() < 2
            // A feeder's pipe is counted for one merge only (all its packets, wherever they
            // go next, which over-counts safely): a second merge it feeds is not one.
            || feeders[m].iter().any(|&f| merges.feeds[f as usize] != NONE)
        {
            continue;
        }
        let ups: Option<Vec<(u32, SimTime)>> = feeders[m].iter().map(|&f| upstream(f)).collect();
        let Some(ups) = ups else { continue };
        let up = ups[0].0;
        let u = &net.links[up as usize];
        if ups.iter().any(|&(v, _)| v != up) || !u.is_computed() || min_size[up as usize] == 0 {
            continue;
        }
        let delays = ups.iter().map(|&(_, d)| d).min().expect("two feeders");
        merges.merge[m] = MergeAhead {
            up,
            lead: u.rate.tx_time(min_size[up as usize] as u64) + u.delay + delays,
            waiting: 0,
        };
        for &f in &feeders[m] {
            merges.feeds[f as usize] = m as u32;
        }
    }
    merges
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use fatpipe_core::Rate;
    use fatpipe_net::queue::droptail::Limit;
    use fatpipe_net::queue::DropTail;

    pub(in crate::simulation) fn link(net: &Network, from: NodeId, to: NodeId) -> usize {
        net.links
            .iter()
            .position(|l| l.from == from && l.to == to)
            .expect("a link")
    }

    /// A dumbbell of `n` pairs: routers `l` and `r` joined by 1 Gb/s, 100 ms links, each
    /// sender `s{i}` on `l` and receiver `d{i}` on `r` by 10 Gb/s, 1 ms links.
    pub(in crate::simulation) fn dumbbell(
        n: usize,
    ) -> (Network, Vec<(NodeId, NodeId)>, NodeId, NodeId) {
        let mut net = Network::new();
        let q = || Box::new(DropTail::new(Limit::Packets(100)));
        let (l, r) = (
            net.add_node("l", NodeKind::Router),
            net.add_node("r", NodeKind::Router),
        );
        net.add_duplex(
            l,
            r,
            Rate(1_000_000_000),
            SimTime::from_millis(100),
            q(),
            q(),
        );
        let mut pairs = Vec::new();
        for i in 0..n {
            let s = net.add_node(format!("s{i}"), NodeKind::Host);
            let d = net.add_node(format!("d{i}"), NodeKind::Host);
            net.add_duplex(
                s,
                l,
                Rate(10_000_000_000),
                SimTime::from_millis(1),
                q(),
                q(),
            );
            net.add_duplex(
                r,
                d,
                Rate(10_000_000_000),
                SimTime::from_millis(1),
                q(),
                q(),
            );
            pairs.push((s, d));
        }
        (net, pairs, l, r)
    }

    /// Two pairs across a dumbbell: the far router's link back is a merge of the receivers'
    /// links, led by the bottleneck; the bottleneck (fed by the senders) is not.
    #[test]
    fn the_ack_side_of_a_dumbbell_merges_ahead_of_the_bottleneck() {
        let (net, pairs, l, r) = dumbbell(2);
        let routes = RoutingTable::compute(&net);
        let cut = super::super::cut_through_links(&net, &routes, &pairs);
        let adv = super::super::advance_receivers(&net, &routes, &pairs, &[false, false]);
        let paths: Vec<_> = pairs.iter().map(|&p| (p, (1500, 40))).collect();
        let m = merge_links(&net, &PathFacts::new(&net, &routes, &paths), &cut, &adv);
        let (back, bottleneck) = (link(&net, r, l), link(&net, l, r));
        assert_eq!(m.count(), 1);
        assert_eq!(m.merge[back].up, bottleneck as u32);
        // 1500 B at 1 Gb/s, the bottleneck's 100 ms, then 1 ms in and 1 ms out at a receiver.
        assert_eq!(
            m.merge[back].lead,
            SimTime(12_000) + SimTime::from_millis(102)
        );
        for &(_, d) in &pairs {
            assert_eq!(m.feeds[link(&net, d, r)], back as u32);
        }
        assert_eq!(m.merge[bottleneck].up, NONE);
        // One byte may cross the bottleneck (a finite transfer's last segment): the lead is
        // then all but the propagation delays.
        let small: Vec<_> = pairs.iter().map(|&p| (p, (41, 40))).collect();
        let m = merge_links(&net, &PathFacts::new(&net, &routes, &small), &cut, &adv);
        assert_eq!(m.merge[back].lead, SimTime(328) + SimTime::from_millis(102));
    }
}
