//! The network graph: nodes and directed links (a full-duplex link is two of them).

use crate::link::{Link, LinkId};
use crate::queue::Queue;
use fatpipe_core::{Rate, SimTime};
use std::collections::HashMap;

pub type NodeId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end system: transport endpoints live here.
    Host,
    /// A router: forwards by its routing table.
    Router,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// Outgoing links, in the order they were added.
    pub out_links: Vec<LinkId>,
}

#[derive(Default)]
pub struct Network {
    pub nodes: Vec<Node>,
    pub links: Vec<Link>,
    /// Node ids by name (the first node of a name), so looking names up while building a large
    /// network costs O(1) each rather than a scan of every node.
    by_name: HashMap<String, NodeId>,
}

impl Network {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_node(&mut self, name: impl Into<String>, kind: NodeKind) -> NodeId {
        let name = name.into();
        let id = self.nodes.len() as NodeId;
        self.by_name.entry(name.clone()).or_insert(id);
        self.nodes.push(Node {
            name,
            kind,
            out_links: Vec::new(),
        });
        id
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    /// Add one direction `from -> to`.
    pub fn add_link(
        &mut self,
        from: NodeId,
        to: NodeId,
        rate: Rate,
        delay: SimTime,
        queue: Box<dyn Queue>,
    ) -> LinkId {
        let name = format!(
            "{}->{}",
            self.nodes[from as usize].name, self.nodes[to as usize].name
        );
        self.links
            .push(Link::new(name, from, to, rate, delay, queue));
        let id = (self.links.len() - 1) as LinkId;
        self.nodes[from as usize].out_links.push(id);
        id
    }

    /// Add a full-duplex link as two directions with their own queues; returns (a->b, b->a).
    pub fn add_duplex(
        &mut self,
        a: NodeId,
        b: NodeId,
        rate: Rate,
        delay: SimTime,
        q_ab: Box<dyn Queue>,
        q_ba: Box<dyn Queue>,
    ) -> (LinkId, LinkId) {
        (
            self.add_link(a, b, rate, delay, q_ab),
            self.add_link(b, a, rate, delay, q_ba),
        )
    }
}
