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

use crate::web::{Page, WebGenerator};
use fatpipe_core::{RngStream, SimTime};

/// A source of pages (a web client population seen from one server).
pub trait PageSource: std::fmt::Debug + Send {
    /// The next page.
    fn next_page(&mut self) -> Page;
    /// Time from one page arrival to the next.
    fn next_gap(&mut self) -> SimTime;
    /// The application's name in the flows table ("web" for pages, "files" for file arrivals).
    fn kind(&self) -> &'static str {
        "web"
    }
}

/// SURGE pages (see [`crate::web`]) arriving as a Poisson process of `rate_per_s`. Contents and
/// arrival times come from separate streams (`web/<id>/pages`, `web/<id>/arrivals`), so changing
/// the size model never moves an arrival.
#[derive(Debug)]
pub struct PoissonPages {
    generator: WebGenerator,
    mean_gap_s: f64,
    pages: RngStream,
    arrivals: RngStream,
}

impl PoissonPages {
    /// `rate_per_s` must be > 0 (the caller validates it against the scenario field).
    pub fn new(generator: WebGenerator, rate_per_s: f64, seed: u64, id: &str) -> Self {
        PoissonPages {
            generator,
            mean_gap_s: 1.0 / rate_per_s,
            pages: RngStream::new(seed, &format!("web/{id}/pages")),
            arrivals: RngStream::new(seed, &format!("web/{id}/arrivals")),
        }
    }
}

impl PageSource for PoissonPages {
    fn next_page(&mut self) -> Page {
        self.generator.next_page(&mut self.pages)
    }
    fn next_gap(&mut self) -> SimTime {
        SimTime::from_secs_f64(self.arrivals.exponential(self.mean_gap_s))
    }
}
