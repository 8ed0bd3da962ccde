//! fatpipe-sim: one simulation = one value that owns its network, flows, clock and measurements
//! (no global state; many can run in one process, ARCHITECTURE.md contract 3).
//!
//! Event types (see [`Ev`]): link transmission done, link arrival (head of a propagation pipe),
//! sender timer, receiver timer, flow start/stop, and the periodic monitor sample. A data packet
//! crossing an idle hop costs one event; a backlogged hop two.

pub mod monitor;
pub mod results;
pub mod simulation;

pub use results::{EngineStats, FlowRow, LinkRow, QueueRow, SegmentRow, SimResults};
pub use simulation::{
    AppSpec, CcFactory, FlowSpec, Limits, MessageSource, MessageTransportSpec, RelayHop, RelaySpec,
    SimError, Simulation,
};
