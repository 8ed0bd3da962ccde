//! fatpipe-core: the discrete-event engine that every other crate builds on.
//!
//! It knows nothing about packets or TCP. It provides:
//! - [`SimTime`]: simulated time as an integer count of nanoseconds (contract 1 in ARCHITECTURE.md);
//! - [`Rate`] and [`Bytes`]: unit-carrying newtypes, parsed from strings such as `"1Gbps"`;
//! - [`EventQueue`]: a priority queue ordered by `(time, tie rank, insertion sequence)`, so
//!   equal-time events run in an order that does not depend on the data structure (contract 2:
//!   determinism), by rank ([`TieRank`]) and then in the order they were scheduled;
//! - [`RngStream`]: one deterministic random stream per component, derived from the scenario seed
//!   and a stable component id.

pub mod event;
pub mod rng;
pub mod time;
pub mod units;

pub use event::{EventQueue, TieRank};
pub use rng::RngStream;
pub use time::SimTime;
pub use units::{
    parse_duration, parse_rate, parse_size, Bytes, Rate, SizeSpec, UnitError, UnitProblem,
    MAX_BASE_UNITS, MAX_PACKETS,
};
