//! The interface between a web workload model and the engine that carries it.
//!
//! The engine runs pages as an open-loop process: at each page arrival it asks the source for
//! the page (its objects' sizes, the base object first) and for the time to the next arrival.
//! The base object is fetched first; its embedded objects start, in parallel, once the base
//! object's last byte is acknowledged (the client has parsed the page and its requests have
//! reached the server half a round trip later — which is when the server sees that ACK). Each
//! object is its own TCP connection with the source's congestion control.
//!
//! Because arrivals do not wait for downloads, the bytes offered per second are the model's mean
//! page size times its page rate whatever the network does, which is what lets a background mix
//! be calibrated to a fraction of the bottleneck (seed 000).

use fatpipe_core::SimTime;

/// One page: payload sizes in bytes of its objects, the base object first (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub objects: Vec<u64>,
}

/// A source of pages (a web client population seen from one server).
pub trait PageSource: std::fmt::Debug + Send {
    /// The next page.
    fn next_page(&mut self) -> Page;
    /// Time from one page arrival to the next.
    fn next_gap(&mut self) -> SimTime;
}
