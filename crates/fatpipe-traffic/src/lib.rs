//! Applications that drive transport connections.
//!
//! Each application is a small description the simulator turns into a transport flow. The start
//! time is already drawn (random start offsets come from the flow's own RNG stream at planning
//! time, see fatpipe-scenario), so the same plan runs identically in fatpipe and in peers.
//!
//! Planned (other issues): CBR over UDP, exponential on/off (VoIP, ITU-T P.59 as in seed 001),
//! web sessions (lognormal/Pareto sizes as in seed 003), each owning its RNG stream.

use fatpipe_core::SimTime;

pub mod pages;
pub use pages::{Page, PageSource};

/// What the application asks of its transport connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Application {
    /// FTP-like: always has data to send, from `start` until `stop` (or the end of the run).
    Bulk,
    /// A finite transfer of `bytes` payload bytes, starting at `start`.
    File { bytes: u64 },
}

impl Application {
    /// Total payload bytes, or None for an infinite source.
    pub fn total_bytes(&self) -> Option<u64> {
        match self {
            Application::Bulk => None,
            Application::File { bytes } => Some(*bytes),
        }
    }
    pub fn name(&self) -> &'static str {
        match self {
            Application::Bulk => "bulk",
            Application::File { .. } => "file",
        }
    }
}

/// When an application runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub start: SimTime,
    /// Stop offering new data at this time (None = run to the end).
    pub stop: Option<SimTime>,
}
