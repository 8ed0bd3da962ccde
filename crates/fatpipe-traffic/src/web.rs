//! Web traffic after SURGE: P. Barford and M. Crovella, "Generating representative web
//! workloads for network and server performance evaluation", Proc. ACM SIGMETRICS 1998,
//! pp. 151-160 (also BU-CS-97-006).
//!
//! A *page* is a base object (the HTML file) followed by its embedded objects (images, ...).
//! This module draws pages: the size of every object and, for the sequential fetch option, the
//! pauses between them. It knows nothing about packets or TCP; the engine does the fetching.
//!
//! # How the engine should run it: open loop
//!
//! Pages of one web source arrive as a Poisson process ([`PageArrivals`]) with rate
//! [`page_rate_for_load`]`(model, load_bps)` = load_bps / (8 * mean_page_bytes), independently
//! of how fast earlier pages completed: a new page starts even if the previous one is still
//! loading. For each page the engine fetches `objects[0]` (the base object) on its own
//! connection and, when it has completed, the embedded objects `objects[1..]` in parallel (one
//! connection each), as a browser does once it has parsed the HTML. Object sizes are bytes the
//! server sends to the client; requests are small and not modelled.
//!
//! Why open loop: the background mix must offer a known share of the bottleneck (seed 000:
//! 20/50/80 % of capacity, 56 % of it web). In SURGE's closed loop (a user waits for a page,
//! thinks, then asks for the next) the offered load depends on response times, i.e. on the
//! very congestion being studied, and cannot be set in advance. With open-loop arrivals the
//! offered load is rate * mean page size whatever the network does, so it is calibrated from
//! the closed-form mean alone. [`WebGenerator::think_time`] (SURGE's inactive OFF) is provided
//! for a closed-loop engine, and is not used in open loop.
//!
//! Streams: give arrivals and page contents separate streams, e.g. `RngStream::new(seed,
//! "web/3/arrivals")` and `RngStream::new(seed, "web/3/pages")`, so changing the size model
//! leaves the arrival times of every source unchanged.
//!
//! # Why the heavy tails are bounded
//!
//! SURGE's file-size tail is Pareto with alpha = 1.1: its mean exists but its variance does
//! not, so sample means of the offered load converge very slowly (a 600 s run could be
//! dominated by one huge file) and a study could not reproduce a target load. Every object is
//! therefore capped at `max_object` (default 10 MB: the tail's mean is then finite and its
//! variance too, while 10 MB objects are still far larger than anything a 600 s background run
//! at tens of Mb/s needs) and the number of embedded objects at `max_embedded`. The caps are
//! truncations (the distribution conditioned on the bound), not clipping, and the means used
//! for calibration are those of the truncated laws, in closed form.

use crate::dist::{positive, BoundedPareto, Hybrid, LogNormal, ParamError, ParetoCount, Weibull};
use fatpipe_core::{RngStream, SimTime};

// Defaults and their sources. "SURGE" = Barford & Crovella 1998, the summary table of SURGE's
// distributions (cited as Table 2 in this project's brief; the search tools reached only the
// paper's first page, so the table number and values are as the brief gives them and as
// commonly quoted, not re-read from the full text; see docs/traffic-models.md, open points).

/// SURGE, file sizes, body: lognormal mu (of ln bytes).
pub const SURGE_BODY_MU: f64 = 9.357;
/// SURGE, file sizes, body: lognormal sigma.
pub const SURGE_BODY_SIGMA: f64 = 1.318;
/// SURGE, file sizes, tail: Pareto k, "133K" (read as 133 000 bytes; 133 KiB = 136 192 would
/// change the mean page size by about 1 %).
pub const SURGE_TAIL_K: f64 = 133_000.0;
/// SURGE, file sizes, tail: Pareto alpha.
pub const SURGE_TAIL_ALPHA: f64 = 1.1;
/// SURGE, embedded references per page: Pareto alpha.
pub const SURGE_EMBEDDED_ALPHA: f64 = 2.43;
/// SURGE, embedded references per page: Pareto k.
pub const SURGE_EMBEDDED_K: f64 = 1.0;
/// SURGE, inactive OFF (user think) time: Pareto alpha.
pub const SURGE_THINK_ALPHA: f64 = 1.5;
/// SURGE, inactive OFF time: Pareto k, seconds.
pub const SURGE_THINK_K: f64 = 1.0;
/// SURGE, active OFF time (between objects of a page): Weibull scale, seconds.
pub const SURGE_ACTIVE_OFF_SCALE: f64 = 1.46;
/// SURGE, active OFF time: Weibull shape.
pub const SURGE_ACTIVE_OFF_SHAPE: f64 = 0.382;
/// Embedded-object sizes: lognormal mu, as given in this project's brief. Not found in SURGE's
/// table (SURGE draws every file from the one hybrid law); origin unconfirmed, see the doc.
pub const EMBEDDED_SIZE_MU: f64 = 8.215;
/// Embedded-object sizes: lognormal sigma (same provenance as [`EMBEDDED_SIZE_MU`]).
pub const EMBEDDED_SIZE_SIGMA: f64 = 1.46;
/// Cap on any object, bytes (this project's choice, see the module docs).
pub const DEFAULT_MAX_OBJECT: u64 = 10_000_000;
/// Cap on embedded objects per page (this project's choice): P(count > 150) under SURGE's
/// Pareto(2.43, 1) is about 5e-6; conditioning on the cap lowers the mean count from
/// zeta(2.43) = 1.3701 to 1.3688 (-0.09 %).
pub const DEFAULT_MAX_EMBEDDED: u32 = 150;
/// Cap on think times, seconds (this project's choice): an hour's idleness ends a session;
/// it gives the alpha = 1.5 Pareto a variance.
pub const DEFAULT_MAX_THINK: f64 = 3600.0;

/// Lognormal body below a cut-off, Pareto tail above it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HybridParams {
    pub mu: f64,
    pub sigma: f64,
    pub cutoff: f64,
    pub tail_alpha: f64,
    /// Probability of the body. None: the lognormal's own mass below the cut-off (0.968 for
    /// SURGE's values), so the law equals SURGE's lognormal up to 133 KB and the Pareto
    /// replaces only what lies above.
    pub body_prob: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogNormalParams {
    pub mu: f64,
    pub sigma: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParetoParams {
    pub alpha: f64,
    pub k: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WeibullParams {
    pub scale: f64,
    pub shape: f64,
}

/// How the embedded objects of a page are fetched once the base object has arrived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EmbeddedFetch {
    /// All at once, one connection each (a browser after parsing the HTML). The default.
    #[default]
    Parallel,
    /// One after another, each after the previous one completed plus an active-OFF pause
    /// ([`Page::embedded_delays`]), as SURGE's single-connection client does.
    Sequential,
}

/// Parameters of the web model (plain data; [`WebModel::validate`] checks them and
/// [`WebModel::generator`] builds the sampler).
#[derive(Clone, Debug, PartialEq)]
pub struct WebModel {
    /// Base (HTML) object size, bytes.
    pub base_size: HybridParams,
    /// Embedded objects per page: floor of a Pareto (k = 1 means at least one).
    pub embedded_count: ParetoParams,
    pub max_embedded: u32,
    /// Embedded object size, bytes (ln-space parameters).
    pub embedded_size: LogNormalParams,
    /// Upper bound on every object, bytes.
    pub max_object: u64,
    /// Think time (inactive OFF), seconds; closed-loop engines only.
    pub think_time: ParetoParams,
    /// Upper bound on think times, seconds.
    pub max_think: f64,
    /// Pause before each embedded object in [`EmbeddedFetch::Sequential`], seconds.
    pub active_off: WeibullParams,
    pub fetch: EmbeddedFetch,
}

impl Default for WebModel {
    fn default() -> Self {
        WebModel {
            base_size: HybridParams {
                mu: SURGE_BODY_MU,
                sigma: SURGE_BODY_SIGMA,
                cutoff: SURGE_TAIL_K,
                tail_alpha: SURGE_TAIL_ALPHA,
                body_prob: None,
            },
            embedded_count: ParetoParams {
                alpha: SURGE_EMBEDDED_ALPHA,
                k: SURGE_EMBEDDED_K,
            },
            max_embedded: DEFAULT_MAX_EMBEDDED,
            embedded_size: LogNormalParams {
                mu: EMBEDDED_SIZE_MU,
                sigma: EMBEDDED_SIZE_SIGMA,
            },
            max_object: DEFAULT_MAX_OBJECT,
            think_time: ParetoParams {
                alpha: SURGE_THINK_ALPHA,
                k: SURGE_THINK_K,
            },
            max_think: DEFAULT_MAX_THINK,
            active_off: WeibullParams {
                scale: SURGE_ACTIVE_OFF_SCALE,
                shape: SURGE_ACTIVE_OFF_SHAPE,
            },
            fetch: EmbeddedFetch::Parallel,
        }
    }
}

/// Errors of a capped distribution name the cap's own field: "upper" becomes `cap`, other
/// fields get the distribution's prefix.
fn rename(e: ParamError, prefix: &str, cap: &str) -> ParamError {
    if e.field == "upper" || e.field == "max" {
        ParamError::new(cap, e.message)
    } else {
        e.within(prefix)
    }
}

impl WebModel {
    /// Checks every parameter; the error names the field, e.g. "base_size.sigma must be > 0".
    pub fn validate(&self) -> Result<(), ParamError> {
        self.generator().map(|_| ())
    }

    /// The page sampler (validates first).
    pub fn generator(&self) -> Result<WebGenerator, ParamError> {
        if self.max_object == 0 {
            return Err(ParamError::new("max_object", "must be > 0 (got 0)"));
        }
        let max_object = self.max_object as f64;
        let b = &self.base_size;
        let base = match b.body_prob {
            None => Hybrid::spliced(b.mu, b.sigma, b.cutoff, b.tail_alpha, max_object),
            Some(p) => Hybrid::new(b.mu, b.sigma, b.cutoff, b.tail_alpha, p, max_object),
        }
        .map_err(|e| rename(e, "base_size", "max_object"))?;
        let c = &self.embedded_count;
        let count = ParetoCount::new(c.alpha, c.k, self.max_embedded)
            .map_err(|e| rename(e, "embedded_count", "max_embedded"))?;
        let s = &self.embedded_size;
        let embedded = LogNormal::truncated(s.mu, s.sigma, max_object)
            .map_err(|e| rename(e, "embedded_size", "max_object"))?;
        let t = &self.think_time;
        positive("max_think", self.max_think)?;
        let think = BoundedPareto::new(t.k, self.max_think, t.alpha)
            .map_err(|e| rename(e, "think_time", "max_think"))?;
        let a = &self.active_off;
        let active_off = Weibull::new(a.scale, a.shape).map_err(|e| e.within("active_off"))?;
        Ok(WebGenerator {
            base,
            count,
            embedded,
            think,
            active_off,
            fetch: self.fetch,
            pages: 0,
        })
    }

    /// Mean bytes per page (base plus embedded objects), in closed form.
    pub fn mean_page_bytes(&self) -> Result<f64, ParamError> {
        Ok(self.generator()?.mean_page_bytes())
    }
}

/// Pages per second that make one web source offer `load_bps` on average:
/// load_bps / (8 * mean_page_bytes). The engine feeds it to [`PageArrivals`]; with n sources
/// sharing a target, give each `target / n`.
pub fn page_rate_for_load(model: &WebModel, load_bps: f64) -> Result<f64, ParamError> {
    if !(load_bps.is_finite() && load_bps >= 0.0) {
        return Err(ParamError::new(
            "load_bps",
            format!("must be >= 0 (got {load_bps})"),
        ));
    }
    Ok(load_bps / (8.0 * model.mean_page_bytes()?))
}

/// One page: object sizes in bytes, the base object first.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// 0, 1, 2, ... per generator.
    pub index: u64,
    /// Object sizes in bytes (each >= 1 and <= max_object); `objects[0]` is the base object.
    pub objects: Vec<u64>,
    /// Sequential fetch only: the pause in seconds before each embedded object (so
    /// `embedded_delays[i]` precedes `objects[i + 1]`); empty for parallel fetch.
    pub embedded_delays: Vec<f64>,
}

impl Page {
    pub fn total_bytes(&self) -> u64 {
        self.objects.iter().sum()
    }
}

/// Draws pages (see [`WebModel::generator`]).
#[derive(Clone, Debug)]
pub struct WebGenerator {
    base: Hybrid,
    count: ParetoCount,
    embedded: LogNormal,
    think: BoundedPareto,
    active_off: Weibull,
    fetch: EmbeddedFetch,
    pages: u64,
}

/// Continuous size to whole bytes: rounding moves the mean by far less than a byte, and an
/// object is never empty.
fn bytes(x: f64) -> u64 {
    (x.round() as u64).max(1)
}

impl WebGenerator {
    pub fn next_page(&mut self, rng: &mut RngStream) -> Page {
        let n = self.count.sample(rng) as usize;
        let mut objects = Vec::with_capacity(n + 1);
        objects.push(bytes(self.base.sample(rng)));
        for _ in 0..n {
            objects.push(bytes(self.embedded.sample(rng)));
        }
        let embedded_delays = match self.fetch {
            EmbeddedFetch::Parallel => Vec::new(),
            EmbeddedFetch::Sequential => (0..n).map(|_| self.active_off.sample(rng)).collect(),
        };
        let index = self.pages;
        self.pages += 1;
        Page {
            index,
            objects,
            embedded_delays,
        }
    }

    /// A think time (SURGE's inactive OFF) in seconds, for closed-loop use.
    pub fn think_time(&self, rng: &mut RngStream) -> f64 {
        self.think.sample(rng)
    }

    pub fn fetch(&self) -> EmbeddedFetch {
        self.fetch
    }

    /// Mean base size + mean count x mean embedded size (count and sizes are independent).
    pub fn mean_page_bytes(&self) -> f64 {
        self.base.mean() + self.count.mean() * self.embedded.mean()
    }
    pub fn mean_base_bytes(&self) -> f64 {
        self.base.mean()
    }
    pub fn mean_embedded_count(&self) -> f64 {
        self.count.mean()
    }
    pub fn mean_embedded_bytes(&self) -> f64 {
        self.embedded.mean()
    }
    pub fn mean_think_time(&self) -> f64 {
        self.think.mean()
    }
    pub fn mean_active_off(&self) -> f64 {
        self.active_off.mean()
    }
}

/// Poisson page arrivals of one web source: exponential gaps of mean 1/rate, accumulated in
/// integer nanoseconds (each gap rounded; the rounding is unbiased to within half a
/// nanosecond per page, nothing at these rates).
#[derive(Clone, Debug)]
pub struct PageArrivals {
    mean_gap_s: f64,
    last: SimTime,
}

impl PageArrivals {
    /// Arrivals after `start` at `rate_per_s` pages per second (> 0).
    pub fn new(start: SimTime, rate_per_s: f64) -> Result<Self, ParamError> {
        let rate = positive("rate", rate_per_s)?;
        Ok(PageArrivals {
            mean_gap_s: 1.0 / rate,
            last: start,
        })
    }
    /// The next arrival time (strictly increasing up to nanosecond ties).
    pub fn next_arrival(&mut self, rng: &mut RngStream) -> SimTime {
        self.last += SimTime::from_secs_f64(rng.exponential(self.mean_gap_s));
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_model_is_valid_and_its_means_are_as_computed_by_hand() {
        let m = WebModel::default();
        m.validate().unwrap();
        let g = m.generator().unwrap();
        // Base: 0.968 x 20.0 KB (body below 133 KB) + 0.032 x 519 KB (tail capped at 10 MB).
        assert!(
            (g.mean_base_bytes() - 36_100.0).abs() < 500.0,
            "{}",
            g.mean_base_bytes()
        );
        // Embedded: E[floor X] = sum_j P(X >= j), = zeta(2.43) = 1.3701 uncapped, 1.3688 with
        // the cap at 150; each object of mean e^{8.215 + 1.46^2/2} = 10.7 KB.
        assert!(
            (g.mean_embedded_count() - 1.3688).abs() < 1e-4,
            "{}",
            g.mean_embedded_count()
        );
        assert!((g.mean_embedded_bytes() - 10_730.0).abs() < 50.0);
        // Think: bounded Pareto(1.5, 1 s, 3600 s) mean 3 (1 - 1/60) / (1 - 3600^-1.5) = 2.95 s.
        assert!((g.mean_think_time() - 2.95).abs() < 0.01);
    }

    #[test]
    fn pages_are_well_formed_and_deterministic() {
        let m = WebModel::default();
        let mut g1 = m.generator().unwrap();
        let mut g2 = m.generator().unwrap();
        let mut r1 = RngStream::new(9, "web/0/pages");
        let mut r2 = RngStream::new(9, "web/0/pages");
        for i in 0..10_000 {
            let p = g1.next_page(&mut r1);
            assert_eq!(p, g2.next_page(&mut r2));
            assert_eq!(p.index, i);
            assert!(p.objects.len() >= 2 && p.objects.len() <= 151);
            assert!(p
                .objects
                .iter()
                .all(|&b| (1..=DEFAULT_MAX_OBJECT).contains(&b)));
            assert!(p.embedded_delays.is_empty());
        }
        let mut seq = WebModel {
            fetch: EmbeddedFetch::Sequential,
            ..WebModel::default()
        }
        .generator()
        .unwrap();
        let p = seq.next_page(&mut r1);
        assert_eq!(p.embedded_delays.len(), p.objects.len() - 1);
        assert!(p.embedded_delays.iter().all(|&d| d > 0.0));
    }

    /// Offered load, open loop: 5 seeds x 600 s at the page rate for 10 Mb/s.
    ///
    /// Measured with the default model (mean page 50 668 B, 24.67 pages/s, about 14 800 pages
    /// per run): per-seed offered load 10.45, 9.70, 9.65, 10.02, 9.55 Mb/s (spread -4.5 % to
    /// +4.5 %), mean 9.874 Mb/s (-1.3 %). Expected per-seed standard deviation 3.1 % (compound
    /// Poisson: sqrt(E[page^2] / (rate * 600 s)) / E[page], E[page^2] in closed form, dominated
    /// by the alpha = 1.1 tail), so the mean of 5 has a standard error of 1.4 % and the 5 %
    /// bound is 3.6 standard errors. (Cross-checked in SciPy: mean page 50 667.8 B.)
    #[test]
    fn offered_load_matches_target_over_five_seeds() {
        let model = WebModel::default();
        let target = 10e6;
        let rate = page_rate_for_load(&model, target).unwrap();
        let horizon = SimTime::from_secs(600);
        let mut loads = Vec::new();
        for seed in 1..=5u64 {
            let mut gen = model.generator().unwrap();
            let mut arrivals = PageArrivals::new(SimTime::ZERO, rate).unwrap();
            let mut ra = RngStream::new(seed, "web/0/arrivals");
            let mut rp = RngStream::new(seed, "web/0/pages");
            let mut bytes = 0u64;
            while arrivals.next_arrival(&mut ra) < horizon {
                bytes += gen.next_page(&mut rp).total_bytes();
            }
            loads.push(bytes as f64 * 8.0 / 600.0);
        }
        let mean = loads.iter().sum::<f64>() / loads.len() as f64;
        let per_seed: Vec<String> = loads.iter().map(|l| format!("{:.2}", l / 1e6)).collect();
        // Visible with --nocapture: the numbers quoted in this test's doc comment.
        eprintln!(
            "web offered load: mean page {:.0} B, {:.2} pages/s, per seed {per_seed:?} Mb/s, mean {:.3}",
            model.mean_page_bytes().unwrap(),
            rate,
            mean / 1e6
        );
        assert!(
            (mean - target).abs() / target < 0.05,
            "mean offered load {:.3} Mb/s, per seed {per_seed:?}",
            mean / 1e6
        );
    }

    #[test]
    fn page_rate_is_load_over_eight_mean_page_bytes() {
        let m = WebModel::default();
        let r = page_rate_for_load(&m, 1e6).unwrap();
        assert!((r * 8.0 * m.mean_page_bytes().unwrap() - 1e6).abs() < 1e-6);
        assert_eq!(page_rate_for_load(&m, 0.0).unwrap(), 0.0);
        assert_eq!(page_rate_for_load(&m, -1.0).unwrap_err().field, "load_bps");
    }

    #[test]
    fn bad_parameters_are_rejected_naming_the_field() {
        let err = |f: &dyn Fn(&mut WebModel)| {
            let mut m = WebModel::default();
            f(&mut m);
            m.validate().unwrap_err().to_string()
        };
        assert_eq!(
            err(&|m| m.base_size.sigma = 0.0),
            "base_size.sigma must be > 0 (got 0)"
        );
        assert!(err(&|m| m.base_size.cutoff = -5.0).starts_with("base_size.cutoff must be > 0"));
        assert!(err(&|m| m.base_size.tail_alpha = 0.0).starts_with("base_size.tail_alpha "));
        assert!(err(&|m| m.base_size.body_prob = Some(0.0)).starts_with("base_size.body_prob "));
        assert!(err(&|m| m.embedded_size.sigma = -1.0).starts_with("embedded_size.sigma "));
        assert!(err(&|m| m.embedded_count.alpha = 0.0).starts_with("embedded_count.alpha "));
        assert!(err(&|m| m.max_embedded = 0).starts_with("max_embedded "));
        assert!(err(&|m| m.max_object = 0).starts_with("max_object "));
        // A cap below the tail's cut-off is the cap's fault.
        assert!(err(&|m| m.max_object = 100_000).starts_with("max_object must be > "));
        assert!(err(&|m| m.think_time.k = 0.0).starts_with("think_time.k "));
        assert!(err(&|m| m.max_think = 0.5).starts_with("max_think "));
        assert!(err(&|m| m.active_off.shape = 0.0).starts_with("active_off.shape "));
        assert_eq!(
            PageArrivals::new(SimTime::ZERO, 0.0).unwrap_err().field,
            "rate"
        );
    }
}
