//! fatpipe-net: packets, full-duplex point-to-point links, per-interface output queues and static
//! routing over any graph.
//!
//! A link direction ([`Link`]) is "serialise at rate" followed by "propagate for delay" (htsim's
//! Queue + Pipe). Packets in propagation sit in a per-link FIFO and only the head has an event in
//! the engine's queue, so the event queue stays small whatever the bandwidth-delay product.

pub mod folded_routes;
pub mod link;
pub mod network;
pub mod packet;
pub mod queue;
pub mod routing;

pub use link::{Link, LinkId};
pub use network::{Network, NodeId, NodeKind};
pub use packet::{Flags, Packet, PacketKind, SackBlocks};
pub use queue::{DropReason, Queue, QueueStats};
