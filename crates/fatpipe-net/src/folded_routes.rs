//! Routes in memory linear in the hosts: the engine's routing (hop count, lowest link id on
//! ties; [`crate::routing`]) with its stub nodes folded away.
//!
//! A table over all pairs is quadratic in the number of nodes, which is what planning a
//! dumbbell of 10^5 pairs cannot afford (320 GB), and computing it with a search per
//! destination is quadratic in time too, although most nodes of the topologies in use are
//! hosts hanging off one router. Such a *stub*, all of whose links join it to one neighbour
//! (its parent), needs no row: it reaches everything by its first link, and every node reaches
//! it through its parent (distance to the stub = distance to the parent + 1, so the parent's
//! next hop is the next hop towards the stub too). Rows are kept for the other nodes only, so
//! the table is (non-stub nodes) x (all nodes) and takes one search per non-stub node; the
//! answers are exactly the engine table's (a test compares them on random graphs).
//!
//! Planning asks for a path per flow, not a hop per packet, and uses this table directly; the
//! extra branch of a stub lookup would cost the engine about 3 % of its instructions per
//! packet (measured), so the engine expands it into its one-load table ([`Self::expand`]).

use crate::link::LinkId;
use crate::network::{Network, NodeId};
use crate::routing::NO_ROUTE;
use std::collections::VecDeque;

/// Next hops and hop counts between every pair of nodes, stored per non-stub node.
#[derive(Clone, Debug)]
pub struct FoldedRoutes {
    n: usize,
    /// Per node: its row in `next` and `dist`, or `None` for a stub.
    row: Vec<Option<u32>>,
    /// Per stub node: its parent and its lowest-id outgoing link (unused for other nodes).
    stub_parent: Vec<NodeId>,
    stub_link: Vec<LinkId>,
    /// `next[row * n + dst]` is the link the row's node uses towards `dst`, or [`NO_ROUTE`];
    /// `dist` the hop count, or `u32::MAX`.
    next: Vec<LinkId>,
    dist: Vec<u32>,
}

/// Per node, the single neighbour all of its links (both directions) join it to, when there
/// is exactly one and links go both ways: such nodes are stubs, unless their neighbour is one
/// too (two nodes joined only to each other keep their rows).
pub fn stub_parents(net: &Network) -> Vec<Option<NodeId>> {
    const NONE: u32 = u32::MAX;
    const MANY: u32 = u32::MAX - 1;
    let n = net.nodes.len();
    let mut out_to = vec![NONE; n];
    let mut in_from = vec![NONE; n];
    let note = |slot: &mut u32, other: NodeId| {
        *slot = match *slot {
            NONE => other,
            x if x == other => x,
            _ => MANY,
        }
    };
    for l in &net.links {
        note(&mut out_to[l.from as usize], l.to);
        note(&mut in_from[l.to as usize], l.from);
    }
    let candidate: Vec<Option<NodeId>> = (0..n)
        .map(|u| {
            let p = out_to[u];
            (p != NONE && p != MANY && p == in_from[u] && p as usize != u).then_some(p)
        })
        .collect();
    (0..n)
        .map(|u| candidate[u].filter(|&p| candidate[p as usize].is_none()))
        .collect()
}

impl FoldedRoutes {
    pub fn compute(net: &Network) -> Self {
        let n = net.nodes.len();
        let parents = stub_parents(net);
        let mut row = vec![None; n];
        let mut stub_parent = vec![0; n];
        let mut stub_link = vec![NO_ROUTE; n];
        let mut cores = Vec::new();
        for u in 0..n {
            match parents[u] {
                None => {
                    row[u] = Some(cores.len() as u32);
                    cores.push(u);
                }
                Some(p) => {
                    stub_parent[u] = p;
                    stub_link[u] = *net.nodes[u]
                        .out_links
                        .iter()
                        .min()
                        .expect("a stub has links");
                }
            }
        }
        let mut next = vec![NO_ROUTE; cores.len() * n];
        let mut dist_rows = vec![u32::MAX; cores.len() * n];
        let mut in_links: Vec<Vec<LinkId>> = vec![Vec::new(); n];
        for (id, l) in net.links.iter().enumerate() {
            in_links[l.to as usize].push(id as LinkId);
        }
        // Columns of the non-stub destinations: one search each over the reversed graph.
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for &dst in &cores {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(v) = queue.pop_front() {
                for &lid in &in_links[v] {
                    let u = net.links[lid as usize].from as usize;
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        queue.push_back(u);
                    }
                }
            }
            for (r, &u) in cores.iter().enumerate() {
                let at = r * n + dst;
                if u == dst {
                    dist_rows[at] = 0;
                } else if dist[u] != u32::MAX {
                    // Lowest-id outgoing link whose far end is one hop closer.
                    next[at] = net.nodes[u]
                        .out_links
                        .iter()
                        .copied()
                        .filter(|&lid| {
                            let to = net.links[lid as usize].to as usize;
                            dist[to] != u32::MAX && dist[to] + 1 == dist[u]
                        })
                        .min()
                        .unwrap_or(NO_ROUTE);
                    dist_rows[at] = dist[u];
                }
            }
        }
        // Each stub's parent's lowest-id link to it, in one pass over the links: looking through
        // the parent's links per stub is quadratic for a router with many hosts.
        let mut link_from_parent = vec![NO_ROUTE; n];
        for (id, l) in net.links.iter().enumerate() {
            let h = l.to as usize;
            if parents[h] == Some(l.from) && (id as LinkId) < link_from_parent[h] {
                link_from_parent[h] = id as LinkId;
            }
        }
        // Columns of the stub destinations: the parent's column one hop further, except at the
        // parent itself, which takes its lowest-id link to the stub.
        for (h, parent) in parents.iter().enumerate() {
            let Some(p) = *parent else { continue };
            let p = p as usize;
            for (r, &u) in cores.iter().enumerate() {
                let (at, via) = (r * n + h, r * n + p);
                if u == p {
                    debug_assert_ne!(link_from_parent[h], NO_ROUTE, "a stub's parent links to it");
                    next[at] = link_from_parent[h];
                    dist_rows[at] = 1;
                } else if dist_rows[via] != u32::MAX {
                    next[at] = next[via];
                    dist_rows[at] = dist_rows[via] + 1;
                }
            }
        }
        FoldedRoutes {
            n,
            row,
            stub_parent,
            stub_link,
            next,
            dist: dist_rows,
        }
    }

    /// The full `n x n` next-hop and hop-count tables (row = from, column = to): a non-stub
    /// row copied, a stub's row its parent's with the stub's own link.
    pub fn expand(&self) -> (Vec<LinkId>, Vec<u32>) {
        let n = self.n;
        let mut next = vec![NO_ROUTE; n * n];
        let mut dist = vec![u32::MAX; n * n];
        for u in 0..n {
            let (next_u, dist_u) = (&mut next[u * n..(u + 1) * n], &mut dist[u * n..(u + 1) * n]);
            if let Some(r) = self.row[u] {
                let r = r as usize;
                next_u.copy_from_slice(&self.next[r * n..(r + 1) * n]);
                dist_u.copy_from_slice(&self.dist[r * n..(r + 1) * n]);
                continue;
            }
            let p = self.stub_parent[u] as usize;
            let r = self.row[p].expect("a stub's parent has a row") as usize;
            let (next_p, dist_p) = (
                &self.next[r * n..(r + 1) * n],
                &self.dist[r * n..(r + 1) * n],
            );
            let link = self.stub_link[u];
            for d in 0..n {
                if d == p || next_p[d] != NO_ROUTE {
                    next_u[d] = link;
                    dist_u[d] = dist_p[d] + 1;
                }
            }
            next_u[u] = NO_ROUTE;
            dist_u[u] = 0;
        }
        (next, dist)
    }

    /// Rows kept (the nodes that are not stubs): the table holds `rows x nodes` entries.
    pub fn rows(&self) -> usize {
        self.dist.len() / self.n.max(1)
    }

    /// The link `node` uses towards `dst`, or [`NO_ROUTE`].
    pub fn next_link(&self, node: NodeId, dst: NodeId) -> LinkId {
        if let Some(r) = self.row[node as usize] {
            return self.next[r as usize * self.n + dst as usize];
        }
        // A stub reaches its parent, and whatever its parent reaches, by its first link.
        let p = self.stub_parent[node as usize];
        let reaches = dst == p || self.next_link(p, dst) != NO_ROUTE;
        if dst != node && reaches {
            self.stub_link[node as usize]
        } else {
            NO_ROUTE
        }
    }

    /// Hop count from `src` to `dst`, if reachable.
    pub fn hops(&self, src: NodeId, dst: NodeId) -> Option<u32> {
        let d = match self.row[src as usize] {
            Some(r) => self.dist[r as usize * self.n + dst as usize],
            None if src == dst => 0,
            None => {
                let p = self.stub_parent[src as usize];
                self.hops(p, dst).map_or(u32::MAX, |h| h + 1)
            }
        };
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
mod tests {
    use super::*;
    use crate::network::NodeKind;
    use crate::queue::droptail::Limit;
    use crate::queue::DropTail;
    use crate::routing::RoutingTable;
    use fatpipe_core::{Rate, SimTime};

    fn q() -> Box<DropTail> {
        Box::new(DropTail::new(Limit::Packets(10)))
    }

    #[test]
    fn folding_stubs_answers_exactly_as_the_full_search() {
        // Random graphs: many nodes with one or two links (sometimes parallel, sometimes one
        // way), isolated nodes, and pairs joined only to each other.
        let mut rng = fatpipe_core::RngStream::new(7, "folded-routes-test");
        let mut stubs = 0;
        for case in 0..300 {
            let mut net = Network::new();
            let n = 2 + rng.below(14) as u32;
            for i in 0..n {
                net.add_node(format!("n{i}"), NodeKind::Router);
            }
            for _ in 0..rng.below(3 * n as u64) {
                let a = rng.below(n as u64) as u32;
                let b = rng.below(n as u64) as u32;
                if a == b {
                    continue;
                }
                if rng.below(5) == 0 {
                    net.add_link(a, b, Rate(1_000_000), SimTime(1), q());
                } else {
                    net.add_duplex(a, b, Rate(1_000_000), SimTime(1), q(), q());
                }
            }
            let (next, dist) = crate::routing::tests::reference_table(&net);
            let engine = RoutingTable::compute(&net);
            let folded = FoldedRoutes::compute(&net);
            assert_eq!(
                folded.expand(),
                (next.clone(), dist.clone()),
                "case {case}: expanded"
            );
            stubs += n as usize - folded.rows();
            for u in 0..n {
                for d in 0..n {
                    let at = format!("case {case}: {u} -> {d}");
                    let i = (u * n + d) as usize;
                    let hops = (dist[i] != u32::MAX).then_some(dist[i]);
                    assert_eq!(folded.hops(u, d), hops, "{at}");
                    assert_eq!(engine.hops(u, d), hops, "{at}");
                    assert_eq!(folded.next_link(u, d), next[i], "{at}");
                    assert_eq!(engine.next_link(u, d), next[i], "{at}");
                    assert_eq!(folded.path(&net, u, d), engine.path(&net, u, d), "{at}");
                }
            }
        }
        assert!(stubs > 300, "the cases exercise stubs ({stubs})");
    }

    #[test]
    fn a_dumbbell_keeps_rows_for_its_routers_only() {
        let mut net = Network::new();
        let r0 = net.add_node("r0", NodeKind::Router);
        let r1 = net.add_node("r1", NodeKind::Router);
        net.add_duplex(r0, r1, Rate(1_000_000), SimTime(1), q(), q());
        for i in 0..1000 {
            let s = net.add_node(format!("s{i}"), NodeKind::Host);
            let d = net.add_node(format!("d{i}"), NodeKind::Host);
            net.add_duplex(s, r0, Rate(1_000_000), SimTime(1), q(), q());
            net.add_duplex(r1, d, Rate(1_000_000), SimTime(1), q(), q());
        }
        let routes = FoldedRoutes::compute(&net);
        assert_eq!(routes.rows(), 2);
        let (s, d) = (
            net.node_by_name("s7").unwrap(),
            net.node_by_name("d7").unwrap(),
        );
        assert_eq!(routes.path(&net, s, d).unwrap().len(), 3);
        assert_eq!(routes.hops(d, s), Some(3));
    }
}
