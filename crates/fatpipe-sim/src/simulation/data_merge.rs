//! Data-side merges: the bottleneck of a dumbbell taking data ahead of the clock, and the ACK
//! line that feeds its senders in time order.
//!
//! A merge-ahead link `M` (`merge.rs`) carries the ACKs back from a bottleneck `B`. When the
//! senders of every packet crossing `B` sit on hosts whose only triggers to send are ACKs
//! coming through `M` and their own timers and starts, a data packet reaching `B` at time `a`
//! can be offered to `B` at once when nothing else can reach `B` at or before `a`. What could:
//!
//! - the head of a sender host's pipe out (a packet kept for its arrival event; the packet's
//!   own host's too: it goes first);
//! - another sender host's own time: its earliest timer event or start, or an ACK kept in its
//!   link in for its event, plus its leg out (smallest data packet's transmission and the
//!   delay). The packet's own host is left out: what it sends later queues behind this packet;
//! - an ACK still in one of `M`'s feeders' pipes (counted by `M`): blocks;
//! - the next ACK in `M`'s own pipe, which reaches `M`'s far end at `h`: its sender can answer
//!   no earlier than `h` plus its host's link in (smallest ACK's transmission and the delay),
//!   and that answer reaches `B` no earlier than its leg out later;
//! - an ACK not yet sent: for data that has crossed `B` there is none (its receivers run in
//!   advance, reached by cut-through links, so their ACKs were sent when the data left `B`);
//!   data that has not crossed `B` yet is the packet at hand, or sent later.
//!
//! So the packet is offered when `a` is strictly below all of these (`h + gap + tx_lead` for
//! the line, `gap` being the least return lead less the least leg out `tx_lead`; the hosts'
//! own times and pipe heads from two tournament trees, `min_tree.rs`). The senders' hosts take
//! their ACKs from `M`'s pipe, the *line*, rather than by cut-through from `M` (which would run
//! a sender inside another's send): once the line's head has arrived by its event, the ACKs
//! behind it are handed on ahead of the clock, in order; data kept in pipes out is released as
//! soon as nothing can overtake it; and a sender's timer event that would hold the line runs
//! ahead of the clock when nothing can touch its host first (`Simulation::drain_line`,
//! `release_data`, `timer_in_advance`). A data packet and its ACK then cost almost no event on a
//! dumbbell; what cannot be done ahead of the clock is done by events, as before.
//!
//! The analysis accepts only the exact shape whose reasoning is above: every flow crossing `B`
//! or `M` goes host -> `B`'s feeder, `B`, a cut-through link into a receiver host that runs in
//! advance, and back over that host's link to `M`, `M`, a link that `M` alone feeds into the
//! sender host (a dumbbell).

use super::merge::{MergeAhead, Merges, PathFacts, NONE};
use super::min_tree::MinTree;
use fatpipe_core::SimTime;
use fatpipe_net::{Network, NodeKind};

/// `MergeAhead::up` of a data-side merge: this flag and the index of its [`DataMerge`].
pub(super) const DATA: u32 = 1 << 31;

/// A sender host of a data-side merge.
#[derive(Clone, Copy, Debug)]
pub(super) struct SenderHost {
    pub node: u32,
    /// Its link out (a feeder of the bottleneck) and its link in (fed by the line alone).
    pub out: u32,
    pub into: u32,
    /// Least time from its sending to the arrival at the bottleneck: the smallest data
    /// packet's transmission on `out` plus `out`'s delay.
    pub leg: SimTime,
}

/// One data-side merge.
#[derive(Clone, Debug)]
pub(super) struct DataMerge {
    /// The bottleneck (the link taking data ahead of the clock).
    pub link: u32,
    /// The merge-ahead link whose pipe is the ACK line.
    pub line: u32,
    /// The least return lead (an ACK at the line's far end to its answer at the bottleneck)
    /// less the least `leg` (which is `tx_lead`, also `MergeAhead::lead`).
    pub gap: SimTime,
    pub tx_lead: SimTime,
    /// The least time from an ACK's arrival at the line's far end to its sender host.
    pub ack_lead: SimTime,
    pub hosts: Vec<SenderHost>,
    /// Per sender host: the earliest its next packet can reach the bottleneck by its own
    /// timers and starts (`tx_quiet`) or the ACKs waiting in its link in, plus its `leg`.
    pub own: MinTree,
    /// Per sender host: the arrival time of the head of its link out's pipe (MAX: empty).
    pub out_heads: MinTree,
    /// Kept beside the trees, as they are read for every data packet: the arrival time of the
    /// line's head (MAX: empty), the least of `out_heads`, and the least of both trees.
    pub line_head: SimTime,
    pub out_min: SimTime,
    pub floor: SimTime,
}

impl DataMerge {
    /// The earliest time the answer to the line's next ACK can reach the bottleneck (MAX when
    /// the line is empty): its arrival at the line's far end plus the least return lead.
    #[inline(always)]
    pub fn line_bound(&self) -> SimTime {
        SimTime(self.line_head.0.saturating_add(self.gap.0 + self.tx_lead.0))
    }
}

/// The data-side merges, and per link and node what refers to them.
pub(super) struct DataMerges {
    pub list: Vec<DataMerge>,
    /// Per link: the data merge whose line this link is (NONE: none).
    pub line_of: Vec<u32>,
    /// Per link: (data merge, sender host) whose link out or in this is (NONE: none).
    pub pipe_of: Vec<(u32, u32)>,
    /// Per node: (data merge, sender host) of a sender host (NONE: none).
    pub slot: Vec<(u32, u32)>,
}

impl DataMerges {
    pub fn none(n_links: usize, n_nodes: usize) -> Self {
        DataMerges {
            list: Vec::new(),
            line_of: vec![NONE; n_links],
            pipe_of: vec![(NONE, NONE); n_links],
            slot: vec![(NONE, NONE); n_nodes],
        }
    }
}

/// Find the data-side merges and register them in `merges` (a `MergeAhead` with `up = DATA |
/// index` on the bottleneck). Their hosts' links in stop being cut-through (their ACKs wait in
/// the line). `plain_host`: nodes whose
/// every flow is a plain TCP flow (no application sending on its own events).
pub(super) fn data_merges(
    net: &Network,
    facts: &PathFacts,
    plain_host: &[bool],
    advance_rx: &[bool],
    advance_tx: &[bool],
    cut_through: &mut [bool],
    merges: &mut Merges,
) -> DataMerges {
    let mut out = DataMerges::none(net.links.len(), net.nodes.len());
    let feeders = &facts.feeders;
    let tx_lead_of = |l: u32| {
        let link = &net.links[l as usize];
        link.rate.tx_time(facts.min_size[l as usize] as u64) + link.delay
    };
    for m in 0..net.links.len() {
        let up = merges.merge[m].up;
        if up == NONE || up & DATA != 0 {
            continue;
        }
        let b = up as usize;
        if cut_through[b]
            || merges.merge[b].up != NONE
            || feeders[b].len() < 2
            || facts.min_size[b] == 0
        {
            continue;
        }
        // Each feeder leaves a qualifying sender host reached by a link that `m` alone feeds.
        let hosts: Option<Vec<(u32, u32)>> = feeders[b]
            .iter()
            .map(|&f| {
                let h = net.links[f as usize].from as usize;
                let into = facts.in_link[h];
                let ok = net.nodes[h].kind == NodeKind::Host
                    && advance_tx[h]
                    && plain_host[h]
                    && !advance_rx[h]
                    && into != NONE
                    && cut_through[into as usize]
                    && feeders[into as usize] == [m as u32]
                    && merges.feeds[f as usize] == NONE
                    && out.pipe_of[f as usize].0 == NONE
                    && out.pipe_of[into as usize].0 == NONE
                    && out.slot[h].0 == NONE
                    && facts.min_size[f as usize] > 0
                    && facts.min_size[into as usize] > 0;
                ok.then_some((f, into))
            })
            .collect();
        let Some(hosts) = hosts else { continue };
        // One leaf per host: two feeders from one host are not this shape.
        let mut seen: Vec<u32> = hosts
            .iter()
            .map(|&(f, _)| net.links[f as usize].from)
            .collect();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != hosts.len() {
            continue;
        }
        // `m` feeds nothing but those links in (the line hands ACKs on ahead of the clock).
        let ins: Vec<u32> = hosts.iter().map(|&(_, i)| i).collect();
        let fed_by_m = (0..net.links.len()).filter(|&l| feeders[l].contains(&(m as u32)));
        if fed_by_m.clone().any(|l| !ins.contains(&(l as u32))) {
            continue;
        }
        // Every flow touching any of these links has the dumbbell's shape.
        let feeds_b = &feeders[b];
        let shaped = |data: &[u32], acks: &[u32]| match (data, acks) {
            ([f, bb, c], [g, mm, i]) => {
                feeds_b.contains(f)
                    && *bb as usize == b
                    && *mm as usize == m
                    && cut_through[*c as usize]
                    && feeders[*c as usize] == [b as u32]
                    && advance_rx[net.links[*c as usize].to as usize]
                    && net.links[*g as usize].from == net.links[*c as usize].to
                    && net.links[*i as usize].to == net.links[*f as usize].from
            }
            _ => false,
        };
        let touches = |path: &[u32]| {
            path.iter().any(|&l| {
                l as usize == b || l as usize == m || feeds_b.contains(&l) || ins.contains(&l)
            })
        };
        if facts
            .paths
            .iter()
            .any(|(d, a)| (touches(d) || touches(a)) && !shaped(d, a))
        {
            continue;
        }
        let tx_lead = hosts.iter().map(|&(f, _)| tx_lead_of(f)).min();
        let ret_lead = hosts
            .iter()
            .map(|&(f, i)| tx_lead_of(i) + tx_lead_of(f))
            .min();
        let (Some(tx_lead), Some(ret_lead)) = (tx_lead, ret_lead) else {
            continue;
        };
        let idx = out.list.len() as u32;
        merges.merge[b] = MergeAhead {
            up: DATA | idx,
            lead: tx_lead,
            waiting: 0,
        };
        let mut senders = Vec::with_capacity(hosts.len());
        for (k, &(f, i)) in hosts.iter().enumerate() {
            let node = net.links[f as usize].from;
            cut_through[i as usize] = false;
            out.slot[node as usize] = (idx, k as u32);
            out.pipe_of[f as usize] = (idx, k as u32);
            out.pipe_of[i as usize] = (idx, k as u32);
            senders.push(SenderHost {
                node,
                out: f,
                into: i,
                leg: tx_lead_of(f),
            });
        }
        out.line_of[m] = idx;
        out.list.push(DataMerge {
            link: b as u32,
            line: m as u32,
            gap: ret_lead - tx_lead,
            tx_lead,
            ack_lead: hosts
                .iter()
                .map(|&(_, i)| tx_lead_of(i))
                .min()
                .expect("two hosts"),
            hosts: senders,
            own: MinTree::new(hosts.len()),
            out_heads: MinTree::new(hosts.len()),
            line_head: SimTime::MAX,
            out_min: SimTime::MAX,
            floor: SimTime::MAX,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::merge::merge_links;
    use super::super::merge::tests::{dumbbell, link};
    use super::*;
    use fatpipe_net::routing::RoutingTable;

    /// The merges of a dumbbell of `n` pairs whose flows are plain TCP where `plain`.
    fn analyse(n: usize, plain: bool) -> (Network, Vec<(u32, u32)>, Merges, DataMerges, Vec<bool>) {
        let (net, pairs, _, _) = dumbbell(n);
        let routes = RoutingTable::compute(&net);
        let mut cut = super::super::cut_through_links(&net, &routes, &pairs);
        let adv_rx = super::super::advance_receivers(&net, &routes, &pairs, &vec![false; n]);
        let adv_tx =
            super::super::advance_senders(&net, &routes, &pairs, &vec![false; n], &vec![plain; n]);
        let paths: Vec<_> = pairs.iter().map(|&p| (p, (1500, 40))).collect();
        let facts = PathFacts::new(&net, &routes, &paths);
        let mut merges = merge_links(&net, &facts, &cut, &adv_rx);
        let plain_host = vec![plain; net.nodes.len()];
        let data = data_merges(
            &net,
            &facts,
            &plain_host,
            &adv_rx,
            &adv_tx,
            &mut cut,
            &mut merges,
        );
        (net, pairs, merges, data, cut)
    }

    /// The bottleneck of a dumbbell takes data ahead of the clock, its line is the far
    /// router's link back, and the senders' links in stop being cut-through.
    #[test]
    fn the_bottleneck_of_a_dumbbell_is_a_data_merge() {
        let (net, pairs, merges, data, cut) = analyse(3, true);
        let lr = net.nodes.iter().position(|n| n.name == "l").unwrap() as u32;
        let rr = net.nodes.iter().position(|n| n.name == "r").unwrap() as u32;
        let (bottleneck, back) = (link(&net, lr, rr), link(&net, rr, lr));
        assert_eq!(data.list.len(), 1);
        let d = &data.list[0];
        assert_eq!((d.link as usize, d.line as usize), (bottleneck, back));
        assert_eq!(merges.merge[bottleneck].up, DATA);
        assert_eq!(data.line_of[back], 0);
        // A sender's leg: 1500 B at 10 Gb/s and 1 ms; an ACK's: 40 B at 10 Gb/s and 1 ms.
        assert_eq!(d.tx_lead, SimTime(1_200) + SimTime::from_millis(1));
        assert_eq!(d.ack_lead, SimTime(32) + SimTime::from_millis(1));
        assert_eq!(d.gap, d.ack_lead);
        for &(s, _) in &pairs {
            let into = link(&net, lr, s);
            assert!(!cut[into], "a sender's link in takes ACKs from the line");
            assert_eq!(data.pipe_of[into].0, 0);
            assert_eq!(data.pipe_of[link(&net, s, lr)].0, 0);
            assert_ne!(data.slot[s as usize].0, NONE);
        }
    }

    /// Senders that also run an application sending on its own events (here: not plain TCP)
    /// keep their data on events.
    #[test]
    fn hosts_with_other_applications_do_not_merge() {
        let (_, _, _, data, _) = analyse(3, false);
        assert!(data.list.is_empty());
    }
}
