//! Applications that drive transport connections.
//!
//! Each application is a small description the simulator turns into a transport flow. The start
//! time is already drawn (random start offsets come from the flow's own RNG stream at planning
//! time, see fatpipe-scenario), so the same plan runs identically in fatpipe and in peers.
//!
//! Traffic models (engine-free, deterministic given their RNG stream; the simulator turns them
//! into packets and connections):
//! - [`dist`]: distributions with closed-form means (lognormal, Pareto, bounded Pareto, Weibull,
//!   exponential, SURGE's lognormal/Pareto hybrid, a Pareto-distributed count);
//! - [`web`]: web pages after SURGE (Barford & Crovella, SIGMETRICS 1998), offered open-loop;
//! - [`cbr`]: constant-bit-rate send times in integer nanoseconds;
//! - [`files`]: file transfers arriving as a Poisson process (seed 003's FTP and WEB sizes);
//! - [`voip`]: exponential on/off voice (ns-2's EXPOO semantics; ITU-T P.59 as in seed 001).
//!
//! See docs/traffic-models.md for every parameter, its default and its source.

pub mod cbr;
pub mod dist;
pub mod files;
pub mod voip;
pub mod web;

pub use cbr::Cbr;
pub use dist::{
    BoundedPareto, Exponential, Hybrid, LogNormal, ParamError, Pareto, ParetoCount, Weibull,
};
pub use files::{FileSizes, PoissonFiles};
pub use voip::{ExpOnOff, OnOffParams};
pub use web::{page_rate_for_load, EmbeddedFetch, Page, PageArrivals, WebGenerator, WebModel};

use fatpipe_core::SimTime;

pub mod pages;
pub use pages::{PageSource, PoissonPages};

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
