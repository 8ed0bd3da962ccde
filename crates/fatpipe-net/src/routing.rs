//! Static shortest-path routing.
//!
//! Metric: hop count (as ns-2's default static routing). Tie-break, documented and deterministic:
//! among neighbours at equal distance from the destination, the outgoing link added first to the
//! network (lowest link id) wins. Tables are computed by one breadth-first search per destination
//! over the reversed graph, for the nodes that are not stubs ([`crate::folded_routes`]).
//!
//! This is the engine's table, read on every hop: `next[node * n + dst]`, one load. It is
//! quadratic in the number of nodes (a dumbbell of 10^4 pairs needs 3.2 GB), so a scenario's
//! estimate checks [`RoutingTable::bytes_for`] against `limits.max_memory` before one is built.
//! Planning, which needs only each flow's path, uses the linear [`crate::folded_routes`] table.

use crate::folded_routes::FoldedRoutes;
use crate::link::LinkId;
use crate::network::{Network, NodeId};

pub const NO_ROUTE: LinkId = LinkId::MAX;

/// `next[node * n + dst]` is the link `node` uses towards `dst`, or [`NO_ROUTE`].
#[derive(Clone, Debug)]
pub struct RoutingTable {
    n: usize,
    next: Vec<LinkId>,
    dist: Vec<u32>,
}

impl RoutingTable {
    /// Bytes the table takes for `nodes` nodes (next hop and hop count per ordered pair).
    pub fn bytes_for(nodes: u64) -> u64 {
        nodes.saturating_mul(nodes).saturating_mul(8)
    }

    /// The full table, expanded from the stub-folded one ([`FoldedRoutes`]): the searches
    /// are made for the non-stub nodes only, and a stub's row is its parent's with its own
    /// link, so the work beyond the searches is filling the n x n table itself.
    pub fn compute(net: &Network) -> Self {
        let (next, dist) = FoldedRoutes::compute(net).expand();
        RoutingTable {
            n: net.nodes.len(),
            next,
            dist,
        }
    }

    #[inline]
    pub fn next_link(&self, node: NodeId, dst: NodeId) -> LinkId {
        self.next[node as usize * self.n + dst as usize]
    }

    /// Hop count from `src` to `dst`, if reachable.
    pub fn hops(&self, src: NodeId, dst: NodeId) -> Option<u32> {
        let d = self.dist[src as usize * self.n + dst as usize];
        (d != u32::MAX).then_some(d)
    }

    /// The links on the path `src -> dst`, if reachable.
    pub fn path(&self, net: &Network, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        let mut path = Vec::new();
        let mut at = src;
        while at != dst {
            let l = self.next_link(at, dst);
            if l == NO_ROUTE || path.len() > self.n {
                return None;
            }
            path.push(l);
            at = net.links[l as usize].to;
        }
        Some(path)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::network::NodeKind;
    use crate::queue::droptail::Limit;
    use crate::queue::DropTail;
    use fatpipe_core::{Rate, SimTime};

    fn q() -> Box<DropTail> {
        Box::new(DropTail::new(Limit::Packets(10)))
    }

    #[test]
    fn ring_tie_break_takes_first_added_link_and_unreachable_is_none() {
        // Ring a-b-c-d-a: from a to c there are two 2-hop paths (via b and via d).
        let mut net = Network::new();
        let ids: Vec<_> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| net.add_node(*n, NodeKind::Router))
            .collect();
        for i in 0..4 {
            net.add_duplex(
                ids[i],
                ids[(i + 1) % 4],
                Rate(1_000_000),
                SimTime(1),
                q(),
                q(),
            );
        }
        let lonely = net.add_node("e", NodeKind::Host);
        let rt = RoutingTable::compute(&net);
        let p = rt.path(&net, ids[0], ids[2]).unwrap();
        assert_eq!(p.len(), 2);
        // a's first-added link goes to b.
        assert_eq!(net.links[p[0] as usize].to, ids[1]);
        assert!(rt.path(&net, ids[0], lonely).is_none());
        assert_eq!(rt.hops(ids[0], ids[3]), Some(1));
    }

    /// The table as first written: a search per destination over every node (the reference
    /// for the stub-folded computation).
    pub(crate) fn reference_table(net: &Network) -> (Vec<LinkId>, Vec<u32>) {
        let n = net.nodes.len();
        let mut next = vec![NO_ROUTE; n * n];
        let mut dist_all = vec![u32::MAX; n * n];
        for dst in 0..n {
            let mut dist = vec![u32::MAX; n];
            dist[dst] = 0;
            let mut queue = std::collections::VecDeque::from([dst]);
            while let Some(v) = queue.pop_front() {
                for l in &net.links {
                    if l.to as usize == v && dist[l.from as usize] == u32::MAX {
                        dist[l.from as usize] = dist[v] + 1;
                        queue.push_back(l.from as usize);
                    }
                }
            }
            for u in 0..n {
                dist_all[u * n + dst] = dist[u];
                if u == dst || dist[u] == u32::MAX {
                    continue;
                }
                next[u * n + dst] = net.nodes[u]
                    .out_links
                    .iter()
                    .copied()
                    .filter(|&lid| {
                        let to = net.links[lid as usize].to as usize;
                        dist[to] != u32::MAX && dist[to] + 1 == dist[u]
                    })
                    .min()
                    .unwrap_or(NO_ROUTE);
            }
        }
        (next, dist_all)
    }
}
