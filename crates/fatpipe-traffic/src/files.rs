//! File transfers arriving as a Poisson process: each file is one TCP connection, its size drawn
//! from a size law whose mean is known in closed form (so the arrival rate that offers a given
//! load is computed, not estimated).
//!
//! Seed 003 (de Santi, da Fonseca & Lima, "Avaliação de desempenho de gerenciamento ativo de
//! filas para redes de alta velocidade", §5) loads its bottleneck with TrafficGen (Cardoso & de
//! Rezende, IEEE ITS 2002) in two ways:
//!
//! - **FTP**: sizes exponential with mean 512 KB ([`FileSizes::Exponential`]);
//! - **WEB**: a "hybrid lognormal/Pareto" whose body carries probability 0.88 and is lognormal with
//!   mean 7247 bytes, and whose tail is Pareto with mean 10558 bytes, after Barford, Bestavros,
//!   Bradley & Crovella, "Changes in web client access patterns", BU TR 1998-023
//!   ([`FileSizes::BodyTail`]).
//!
//! The seed gives the two means and the body's mass, not the shapes. The shapes default to SURGE's
//! (Barford & Crovella, SIGMETRICS 1998: lognormal sigma 1.318 for the body, Pareto alpha 1.1 for
//! the tail; the same constants as [`crate::web`]), and the scales are solved so that each part
//! has exactly its stated mean *after* truncation at `max` (a Pareto with alpha 1.1 has no
//! variance; capped, the load a run offers converges, see [`crate::web`]'s module doc). Unlike
//! SURGE's spliced hybrid ([`crate::dist::Hybrid`]) the two parts are a mixture with overlapping
//! supports: a tail whose mean (10558 B) is barely above the body's (7247 B) cannot start where
//! the body ends. Both readings are choices the seed leaves open; docs/traffic-models.md lists
//! them.
//!
//! Streams: sizes and arrival gaps come from separate streams (`files/<id>/sizes`,
//! `files/<id>/arrivals`), so changing the size law never moves an arrival.

use crate::dist::{positive, BoundedPareto, Exponential, LogNormal, ParamError};
use crate::pages::PageSource;
use crate::web::Page;
use fatpipe_core::{RngStream, SimTime};

/// SURGE's body shape (Barford & Crovella 1998), the default `body_sigma`.
pub const DEFAULT_BODY_SIGMA: f64 = crate::web::SURGE_BODY_SIGMA;
/// SURGE's tail shape (Barford & Crovella 1998), the default `tail_alpha`.
pub const DEFAULT_TAIL_ALPHA: f64 = crate::web::SURGE_TAIL_ALPHA;
/// Default cap on a body/tail file (the web model's `max_object`).
pub const DEFAULT_MAX: f64 = 10_000_000.0;

/// A file-size law with its mean in closed form.
#[derive(Clone, Debug, PartialEq)]
pub enum FileSizes {
    Exponential(Exponential),
    /// With probability `body_prob` a lognormal (the body), otherwise a bounded Pareto (the tail);
    /// both conditioned on size <= the cap.
    BodyTail {
        body_prob: f64,
        body: LogNormal,
        tail: BoundedPareto,
    },
}

impl FileSizes {
    /// Exponential sizes with mean `mean` bytes.
    pub fn exponential(mean: f64) -> Result<Self, ParamError> {
        Ok(FileSizes::Exponential(Exponential::new(mean)?))
    }

    /// The body/tail mixture with the stated means (bytes) after truncation at `max` bytes.
    /// Field names in errors: `body_prob`, `body_mean`, `body_sigma`, `tail_mean`, `tail_alpha`,
    /// `max`.
    pub fn body_tail(
        body_prob: f64,
        body_mean: f64,
        body_sigma: f64,
        tail_mean: f64,
        tail_alpha: f64,
        max: f64,
    ) -> Result<Self, ParamError> {
        if !(body_prob > 0.0 && body_prob <= 1.0) {
            return Err(ParamError::new(
                "body_prob",
                format!("must lie in (0, 1] (got {body_prob})"),
            ));
        }
        let body_mean = positive("body_mean", body_mean)?;
        let body_sigma = positive("body_sigma", body_sigma)?;
        let tail_mean = positive("tail_mean", tail_mean)?;
        let tail_alpha = positive("tail_alpha", tail_alpha)?;
        let max = positive("max", max)?;
        for (field, mean) in [("body_mean", body_mean), ("tail_mean", tail_mean)] {
            // A truncated law's mean is below the cap, and far below it for a useful cap.
            if mean >= max / 2.0 {
                return Err(ParamError::new(
                    field,
                    format!("must be below half of max ({max} B) (got {mean})"),
                ));
            }
        }
        let body = lognormal_with_mean(body_mean, body_sigma, max)
            .map_err(|e| ParamError::new("body_mean", e.message))?;
        let tail = pareto_with_mean(tail_mean, tail_alpha, max)?;
        Ok(FileSizes::BodyTail {
            body_prob,
            body,
            tail,
        })
    }

    /// Mean size in bytes (of the continuous law; the integer size adds at most one byte).
    pub fn mean(&self) -> f64 {
        match self {
            FileSizes::Exponential(e) => e.mean(),
            FileSizes::BodyTail {
                body_prob,
                body,
                tail,
            } => body_prob * body.mean() + (1.0 - body_prob) * tail.mean(),
        }
    }

    /// One file size in bytes (>= 1): the continuous draw rounded up.
    pub fn sample(&self, rng: &mut RngStream) -> u64 {
        let x = match self {
            FileSizes::Exponential(e) => e.sample(rng),
            FileSizes::BodyTail {
                body_prob,
                body,
                tail,
            } => {
                // One uniform picks the part, so the stream position per file is the part's own.
                if rng.uniform() < *body_prob {
                    body.sample(rng)
                } else {
                    tail.sample(rng)
                }
            }
        };
        (x.ceil() as u64).max(1)
    }
}

/// A lognormal with shape `sigma`, conditioned on X <= `max`, whose mean is `mean`: mu solved by
/// bisection (the truncated mean increases with mu).
fn lognormal_with_mean(mean: f64, sigma: f64, max: f64) -> Result<LogNormal, ParamError> {
    let untruncated_mu = mean.ln() - 0.5 * sigma * sigma;
    let (mut lo, mut hi) = (untruncated_mu - 5.0, untruncated_mu + 5.0);
    let at = |mu: f64| LogNormal::truncated(mu, sigma, max).map(|d| d.mean());
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        match at(mid) {
            Ok(m) if m < mean => lo = mid,
            // Too large, or so far up that the cap keeps under 1 % of the mass.
            _ => hi = mid,
        }
    }
    LogNormal::truncated(0.5 * (lo + hi), sigma, max)
}

/// A Pareto with shape `alpha` bounded at `max` whose mean is `mean`: k solved by bisection on a
/// log scale (the bounded mean increases with k).
fn pareto_with_mean(mean: f64, alpha: f64, max: f64) -> Result<BoundedPareto, ParamError> {
    // The bounded mean lies in [k, max), so k <= mean; and it grows with k continuously.
    let (mut lo, mut hi) = (mean * 1e-9, mean);
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        let m = BoundedPareto::new(mid, max, alpha)?.mean();
        if m < mean {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let d = BoundedPareto::new((lo * hi).sqrt(), max, alpha)?;
    if (d.mean() - mean).abs() > 1e-6 * mean {
        return Err(ParamError::new(
            "tail_mean",
            format!("no Pareto with alpha {alpha} bounded at {max} B has mean {mean} B"),
        ));
    }
    Ok(d)
}

/// Files of `sizes` arriving as a Poisson process of `rate_per_s`; each file is a page of one
/// object, so the engine's web machinery (pooled connections, per-object accounting) carries it.
#[derive(Debug)]
pub struct PoissonFiles {
    sizes: FileSizes,
    mean_gap_s: f64,
    index: u64,
    size_rng: RngStream,
    arrivals: RngStream,
}

impl PoissonFiles {
    /// `rate_per_s` must be > 0 (the caller validates it against the scenario field).
    pub fn new(sizes: FileSizes, rate_per_s: f64, seed: u64, id: &str) -> Self {
        PoissonFiles {
            sizes,
            mean_gap_s: 1.0 / rate_per_s,
            index: 0,
            size_rng: RngStream::new(seed, &format!("files/{id}/sizes")),
            arrivals: RngStream::new(seed, &format!("files/{id}/arrivals")),
        }
    }
}

impl PageSource for PoissonFiles {
    fn next_page(&mut self) -> Page {
        self.index += 1;
        Page {
            index: self.index - 1,
            objects: vec![self.sizes.sample(&mut self.size_rng)],
            embedded_delays: Vec::new(),
        }
    }
    fn next_gap(&mut self) -> SimTime {
        SimTime::from_secs_f64(self.arrivals.exponential(self.mean_gap_s))
    }
    fn kind(&self) -> &'static str {
        "files"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_mean(d: &FileSizes, n: usize) -> f64 {
        let mut rng = RngStream::new(7, "test");
        (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn seed_003_web_sizes_have_the_stated_part_means() {
        let d = FileSizes::body_tail(0.88, 7247.0, 1.318, 10558.0, 1.1, DEFAULT_MAX).unwrap();
        let FileSizes::BodyTail { body, tail, .. } = &d else {
            unreachable!()
        };
        assert!((body.mean() - 7247.0).abs() < 1e-3, "{}", body.mean());
        assert!((tail.mean() - 10558.0).abs() < 1e-2, "{}", tail.mean());
        // 0.88 * 7247 + 0.12 * 10558 = 7644.32
        assert!((d.mean() - 7644.32).abs() < 0.01, "{}", d.mean());
        // The capped tail has a finite variance: the sample mean of 2e6 draws is within 2 %
        // (its standard error is 0.33 %: sd ~ 35.7 kB / sqrt(2e6) ~ 25 B of 7644).
        let m = sample_mean(&d, 2_000_000);
        assert!((m / d.mean() - 1.0).abs() < 0.02, "{m}");
    }

    #[test]
    fn exponential_sizes_have_their_mean() {
        let d = FileSizes::exponential(524_288.0).unwrap();
        assert_eq!(d.mean(), 524_288.0);
        // sd/sqrt(n) = 0.22 % at n = 2e5; 1 % is 4.5 standard errors.
        let m = sample_mean(&d, 200_000);
        assert!((m / 524_288.0 - 1.0).abs() < 0.01, "{m}");
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = FileSizes::body_tail(0.0, 7247.0, 1.318, 10558.0, 1.1, 1e7).unwrap_err();
        assert_eq!(e.field, "body_prob");
        let e = FileSizes::body_tail(0.88, 7247.0, -1.0, 10558.0, 1.1, 1e7).unwrap_err();
        assert_eq!(e.field, "body_sigma");
        let e = FileSizes::body_tail(0.88, 7247.0, 1.318, 6e6, 1.1, 1e7).unwrap_err();
        assert_eq!(e.field, "tail_mean");
        let e = FileSizes::exponential(0.0).unwrap_err();
        assert_eq!(e.field, "mean");
    }

    #[test]
    fn arrivals_and_sizes_use_separate_streams() {
        let a = FileSizes::exponential(1000.0).unwrap();
        let b = FileSizes::body_tail(0.88, 7247.0, 1.318, 10558.0, 1.1, 1e7).unwrap();
        let mut pa = PoissonFiles::new(a, 10.0, 3, "0");
        let mut pb = PoissonFiles::new(b, 10.0, 3, "0");
        for _ in 0..100 {
            pa.next_page();
            pb.next_page();
            assert_eq!(pa.next_gap(), pb.next_gap());
        }
        assert_eq!(pa.next_page().objects.len(), 1);
    }
}
