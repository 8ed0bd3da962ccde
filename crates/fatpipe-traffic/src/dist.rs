//! Random distributions for traffic models, each with its analytic mean.
//!
//! Every distribution draws from a caller-owned [`RngStream`], so a traffic source's numbers
//! depend only on its own stream (one stream per component, see `fatpipe_core::rng`). Each one
//! also knows its mean in closed form, because the background-traffic generator calibrates
//! offered load from means (rate = load / mean size) and must not estimate them by sampling.
//!
//! Constructors validate their parameters and name the offending one in a [`ParamError`]
//! ("sigma must be > 0"); a model that owns several distributions prefixes the name with
//! [`ParamError::within`] ("base_size.sigma must be > 0"), so the message points at the field
//! a user wrote.
//!
//! Samplers use inversion where the inverse CDF is elementary (exponential, Pareto, bounded
//! Pareto, Weibull) and Box-Muller for the normal behind the lognormal. Truncated lognormals
//! use rejection; the constructors refuse truncations that would reject most draws.

use fatpipe_core::RngStream;
use std::f64::consts::{PI, SQRT_2};
use std::fmt;

/// A parameter outside its allowed range: `field` is the parameter's name (with the model's
/// prefix once [`ParamError::within`] has been applied), `message` what is required.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub field: String,
    pub message: String,
}

impl ParamError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        ParamError {
            field: field.to_string(),
            message: message.into(),
        }
    }
    /// The same error seen from a containing structure: `sigma` becomes `base_size.sigma`.
    pub fn within(mut self, prefix: &str) -> Self {
        self.field = format!("{prefix}.{}", self.field);
        self
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.field, self.message)
    }
}

impl std::error::Error for ParamError {}

/// `value` must be finite and > 0 (sizes, scales, times, shapes and rates all are).
pub(crate) fn positive(field: &str, value: f64) -> Result<f64, ParamError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ParamError::new(field, format!("must be > 0 (got {value})")))
    }
}

fn finite(field: &str, value: f64) -> Result<f64, ParamError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(ParamError::new(
            field,
            format!("must be finite (got {value})"),
        ))
    }
}

/// Uniform in (0, 1]: safe to take the logarithm of, and to raise to a negative power.
#[inline]
fn open_unit(rng: &mut RngStream) -> f64 {
    1.0 - rng.uniform()
}

/// Standard normal by Box-Muller (one of the pair is used, so a draw always consumes exactly
/// two uniforms and the stream position never depends on a cached value).
pub fn standard_normal(rng: &mut RngStream) -> f64 {
    let r = (-2.0 * open_unit(rng).ln()).sqrt();
    r * (2.0 * PI * rng.uniform()).cos()
}

// ---------------------------------------------------------------------------------------------
// Special functions for the closed-form means: the normal CDF (truncated lognormal) and the
// gamma function (Weibull). Written here to keep the crate free of dependencies; accuracy is
// ~1e-12 relative, far below the sampling tolerances that use them.

/// Complementary error function for x >= 0.
fn erfc_nonneg(x: f64) -> f64 {
    debug_assert!(x >= 0.0);
    if x < 3.0 {
        // erf(x) = 2/sqrt(pi) e^{-x^2} sum_n 2^n x^{2n+1} / (1*3*...*(2n+1)): all terms positive,
        // so no cancellation; below x = 3 it converges in under 100 terms.
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut n = 0.0;
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        1.0 - 2.0 / PI.sqrt() * (-x2).exp() * sum
    } else {
        // Laplace's continued fraction erfc(x) = e^{-x^2}/sqrt(pi) / (x + (1/2)/(x + 1/(x +
        // (3/2)/(x + ...)))), evaluated from the bottom; 120 levels are ample for x >= 3.
        let mut f = x;
        for n in (1..=120).rev() {
            f = x + (n as f64 / 2.0) / f;
        }
        (-x * x).exp() / (PI.sqrt() * f)
    }
}

/// Standard normal CDF.
pub fn normal_cdf(z: f64) -> f64 {
    let x = z / SQRT_2;
    if x >= 0.0 {
        1.0 - 0.5 * erfc_nonneg(x)
    } else {
        0.5 * erfc_nonneg(-x)
    }
}

/// ln Gamma(x) for x > 0: shift up to x >= 10 with Gamma(x+1) = x Gamma(x), then Stirling's
/// series (truncation error below 1e-12 there).
pub fn ln_gamma(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    let mut shift = 0.0;
    let mut x = x;
    while x < 10.0 {
        shift += x.ln();
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    let series = inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)));
    (x - 0.5) * x.ln() - x + 0.5 * (2.0 * PI).ln() + series - shift
}

/// Gamma(x) for x > 0.
pub fn gamma(x: f64) -> f64 {
    ln_gamma(x).exp()
}

// ---------------------------------------------------------------------------------------------

/// Exponential with the given mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exponential {
    mean: f64,
}

impl Exponential {
    pub fn new(mean: f64) -> Result<Self, ParamError> {
        Ok(Exponential {
            mean: positive("mean", mean)?,
        })
    }
    pub fn sample(&self, rng: &mut RngStream) -> f64 {
        rng.exponential(self.mean)
    }
    pub fn mean(&self) -> f64 {
        self.mean
    }
}

/// Lognormal: ln X ~ Normal(mu, sigma), optionally truncated to X <= `upper` (conditioned on
/// it, i.e. redrawn, not clipped, so no probability mass piles up at the bound).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogNormal {
    mu: f64,
    sigma: f64,
    /// +inf when not truncated.
    upper: f64,
}

impl LogNormal {
    pub fn new(mu: f64, sigma: f64) -> Result<Self, ParamError> {
        Ok(LogNormal {
            mu: finite("mu", mu)?,
            sigma: positive("sigma", sigma)?,
            upper: f64::INFINITY,
        })
    }

    /// Conditioned on X <= `upper`. Rejection sampling costs 1/P(X <= upper) draws on average,
    /// so an `upper` that keeps less than 1 % of the mass is refused rather than run slowly.
    pub fn truncated(mu: f64, sigma: f64, upper: f64) -> Result<Self, ParamError> {
        let mut d = LogNormal::new(mu, sigma)?;
        d.upper = positive("upper", upper)?;
        let keep = d.untruncated_cdf(upper);
        if keep < 0.01 {
            return Err(ParamError::new(
                "upper",
                format!("keeps only {keep:.2e} of the distribution (must keep >= 1 %)"),
            ));
        }
        Ok(d)
    }

    pub fn mu(&self) -> f64 {
        self.mu
    }
    pub fn sigma(&self) -> f64 {
        self.sigma
    }
    pub fn upper(&self) -> f64 {
        self.upper
    }

    /// P(X <= x) of the untruncated lognormal.
    pub fn untruncated_cdf(&self, x: f64) -> f64 {
        if x <= 0.0 {
            0.0
        } else if x.is_infinite() {
            1.0
        } else {
            normal_cdf((x.ln() - self.mu) / self.sigma)
        }
    }

    pub fn sample(&self, rng: &mut RngStream) -> f64 {
        loop {
            let x = (self.mu + self.sigma * standard_normal(rng)).exp();
            if x <= self.upper {
                return x;
            }
        }
    }

    /// E[X | X <= upper] = e^{mu + sigma^2/2} Phi((ln u - mu - sigma^2)/sigma) / Phi((ln u - mu)/sigma).
    pub fn mean(&self) -> f64 {
        let full = (self.mu + 0.5 * self.sigma * self.sigma).exp();
        if self.upper.is_infinite() {
            return full;
        }
        let lu = self.upper.ln();
        full * normal_cdf((lu - self.mu - self.sigma * self.sigma) / self.sigma)
            / normal_cdf((lu - self.mu) / self.sigma)
    }
}

/// Pareto (type I): P(X > x) = (k/x)^alpha for x >= k. The mean is infinite for alpha <= 1
/// (and the variance for alpha <= 2): use [`BoundedPareto`] wherever a finite, calibratable
/// mean matters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pareto {
    alpha: f64,
    k: f64,
}

impl Pareto {
    pub fn new(alpha: f64, k: f64) -> Result<Self, ParamError> {
        Ok(Pareto {
            alpha: positive("alpha", alpha)?,
            k: positive("k", k)?,
        })
    }
    pub fn sample(&self, rng: &mut RngStream) -> f64 {
        self.k / open_unit(rng).powf(1.0 / self.alpha)
    }
    /// alpha k / (alpha - 1), or +inf for alpha <= 1.
    pub fn mean(&self) -> f64 {
        if self.alpha <= 1.0 {
            f64::INFINITY
        } else {
            self.alpha * self.k / (self.alpha - 1.0)
        }
    }
}

/// Bounded (truncated) Pareto on [k, h]: the Pareto conditioned on X <= h,
/// F(x) = (1 - (k/x)^alpha) / (1 - (k/h)^alpha), sampled by inverting F.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundedPareto {
    k: f64,
    h: f64,
    alpha: f64,
    /// 1 - (k/h)^alpha, the untruncated mass below h.
    mass: f64,
}

impl BoundedPareto {
    pub fn new(k: f64, h: f64, alpha: f64) -> Result<Self, ParamError> {
        let k = positive("k", k)?;
        let h = positive("upper", h)?;
        let alpha = positive("alpha", alpha)?;
        if h <= k {
            return Err(ParamError::new(
                "upper",
                format!("must be > k (got upper {h}, k {k})"),
            ));
        }
        Ok(BoundedPareto {
            k,
            h,
            alpha,
            mass: 1.0 - (k / h).powf(alpha),
        })
    }
    pub fn k(&self) -> f64 {
        self.k
    }
    pub fn upper(&self) -> f64 {
        self.h
    }
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// P(X >= x).
    pub fn survival(&self, x: f64) -> f64 {
        if x <= self.k {
            1.0
        } else if x >= self.h {
            0.0
        } else {
            ((self.k / x).powf(self.alpha) - (self.k / self.h).powf(self.alpha)) / self.mass
        }
    }

    pub fn sample(&self, rng: &mut RngStream) -> f64 {
        // u in [0, 1) keeps 1 - u*mass in (1 - mass, 1], so x stays in [k, h]; the min guards
        // the last ulp of rounding.
        let u = rng.uniform();
        (self.k / (1.0 - u * self.mass).powf(1.0 / self.alpha)).min(self.h)
    }

    /// alpha k^alpha / (1 - (k/h)^alpha) * (k^{1-alpha} - h^{1-alpha}) / (alpha - 1),
    /// and k h ln(h/k) / (h - k) at alpha = 1.
    pub fn mean(&self) -> f64 {
        let (k, h, a) = (self.k, self.h, self.alpha);
        if (a - 1.0).abs() < 1e-12 {
            k * h * (h / k).ln() / (h - k)
        } else {
            // Written with ratios (k/h) so that k^alpha and h^{1-alpha} never overflow.
            a * k * (1.0 - (k / h).powf(a - 1.0)) / ((a - 1.0) * self.mass)
        }
    }
}

/// Weibull with scale lambda and shape c: P(X > x) = exp(-(x/lambda)^c).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weibull {
    scale: f64,
    shape: f64,
}

impl Weibull {
    pub fn new(scale: f64, shape: f64) -> Result<Self, ParamError> {
        Ok(Weibull {
            scale: positive("scale", scale)?,
            shape: positive("shape", shape)?,
        })
    }
    pub fn sample(&self, rng: &mut RngStream) -> f64 {
        self.scale * (-open_unit(rng).ln()).powf(1.0 / self.shape)
    }
    /// lambda Gamma(1 + 1/c).
    pub fn mean(&self) -> f64 {
        self.scale * gamma(1.0 + 1.0 / self.shape)
    }
}

/// SURGE's hybrid size distribution: with probability `body_prob` a lognormal conditioned on
/// X <= `cutoff` (the body), otherwise a Pareto with k = `cutoff` (the tail), bounded at
/// `upper` so that the mean is finite.
///
/// [`Hybrid::spliced`] sets `body_prob` to the lognormal's own mass below the cut-off, so the
/// distribution equals the lognormal up to the cut-off and only the part above it is replaced
/// by the Pareto tail (no jump in the CDF at the cut-off).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hybrid {
    body: LogNormal,
    tail: BoundedPareto,
    body_prob: f64,
}

impl Hybrid {
    /// Field names in errors: `mu`, `sigma`, `cutoff`, `tail_alpha`, `body_prob`, `upper`.
    pub fn new(
        mu: f64,
        sigma: f64,
        cutoff: f64,
        tail_alpha: f64,
        body_prob: f64,
        upper: f64,
    ) -> Result<Self, ParamError> {
        let cutoff = positive("cutoff", cutoff)?;
        let body = LogNormal::truncated(mu, sigma, cutoff).map_err(|e| {
            if e.field == "upper" {
                ParamError::new("cutoff", e.message)
            } else {
                e
            }
        })?;
        let upper = positive("upper", upper)?;
        if upper <= cutoff {
            return Err(ParamError::new(
                "upper",
                format!("must be > cutoff (got upper {upper}, cutoff {cutoff})"),
            ));
        }
        let tail =
            BoundedPareto::new(cutoff, upper, tail_alpha).map_err(|e| match e.field.as_str() {
                "alpha" => ParamError::new("tail_alpha", e.message),
                "k" => ParamError::new("cutoff", e.message),
                _ => e,
            })?;
        if !(body_prob > 0.0 && body_prob <= 1.0) {
            return Err(ParamError::new(
                "body_prob",
                format!("must be in (0, 1] (got {body_prob})"),
            ));
        }
        Ok(Hybrid {
            body,
            tail,
            body_prob,
        })
    }

    /// `body_prob` = P(lognormal <= cutoff): the CDF is continuous at the cut-off.
    pub fn spliced(
        mu: f64,
        sigma: f64,
        cutoff: f64,
        tail_alpha: f64,
        upper: f64,
    ) -> Result<Self, ParamError> {
        let p = LogNormal::new(mu, sigma)?.untruncated_cdf(positive("cutoff", cutoff)?);
        Hybrid::new(mu, sigma, cutoff, tail_alpha, p, upper)
    }

    pub fn body_prob(&self) -> f64 {
        self.body_prob
    }
    pub fn body(&self) -> &LogNormal {
        &self.body
    }
    pub fn tail(&self) -> &BoundedPareto {
        &self.tail
    }

    pub fn sample(&self, rng: &mut RngStream) -> f64 {
        if rng.uniform() < self.body_prob {
            self.body.sample(rng)
        } else {
            self.tail.sample(rng)
        }
    }

    pub fn mean(&self) -> f64 {
        self.body_prob * self.body.mean() + (1.0 - self.body_prob) * self.tail.mean()
    }
}

/// A count: floor(X) for X ~ bounded Pareto(k, max + 1, alpha), so values run from floor(k)
/// to `max`. SURGE fits a continuous Pareto to a count (embedded references per page, k = 1);
/// flooring keeps k = 1 meaning "at least one".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParetoCount {
    x: BoundedPareto,
    max: u32,
}

/// The largest `max` of a [`ParetoCount`]: its mean is an exact sum of `max` terms, computed
/// whenever a web model is checked, so `max_embedded = 4294967295` took minutes; a page of more
/// than 10^5 objects is not one SURGE's fits describe (its default cap is 150).
pub const MAX_COUNT: u32 = 100_000;

impl ParetoCount {
    /// Field names in errors: `alpha`, `k`, `max` (which must be >= k, at most [`MAX_COUNT`]).
    pub fn new(alpha: f64, k: f64, max: u32) -> Result<Self, ParamError> {
        let k = positive("k", k)?;
        if max > MAX_COUNT {
            return Err(ParamError::new(
                "max",
                format!("must be at most {MAX_COUNT} (got {max})"),
            ));
        }
        if (max as f64) < k {
            return Err(ParamError::new(
                "max",
                format!("must be >= k (got max {max}, k {k})"),
            ));
        }
        let x = BoundedPareto::new(k, max as f64 + 1.0, alpha).map_err(|e| {
            if e.field == "upper" {
                ParamError::new("max", e.message)
            } else {
                e
            }
        })?;
        Ok(ParetoCount { x, max })
    }
    pub fn max(&self) -> u32 {
        self.max
    }
    pub fn sample(&self, rng: &mut RngStream) -> u32 {
        (self.x.sample(rng).floor() as u32).min(self.max)
    }
    /// E[floor X] = sum_{j=1..max} P(X >= j): exact, a finite sum.
    pub fn mean(&self) -> f64 {
        (1..=self.max).map(|j| self.x.survival(j as f64)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sample mean of n draws and the half-width of the acceptance band: 5 standard errors,
    /// with the standard error estimated from the sample's own standard deviation. A correct
    /// sampler fails this about once in 1.7 million runs (normal approximation of the mean,
    /// good at n = 10^6 for every distribution here since all have finite variance).
    fn mean_and_band(n: usize, mut draw: impl FnMut() -> f64) -> (f64, f64) {
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let x = draw();
            s += x;
            s2 += x * x;
        }
        let m = s / n as f64;
        let var = (s2 / n as f64 - m * m) * n as f64 / (n as f64 - 1.0);
        (m, 5.0 * (var / n as f64).sqrt())
    }

    const N: usize = 1_000_000;

    fn check(name: &str, analytic: f64, (m, band): (f64, f64)) {
        assert!(
            (m - analytic).abs() < band,
            "{name}: sample mean {m}, analytic {analytic}, allowed +-{band}"
        );
    }

    #[test]
    fn special_functions_match_reference_values() {
        // Reference values: Phi as printed by scipy.stats.norm.cdf (SciPy, in this repository's
        // .venv), Gamma(1/2) = sqrt(pi), Gamma(5) = 24, Gamma(3.5) = 15 sqrt(pi)/8.
        let cases = [
            (0.0, 0.5),
            (1.0, 0.841_344_746_068_543),
            (-2.0, 0.022_750_131_948_179_2),
            (3.0, 0.998_650_101_968_370),
            (-5.0, 2.866_515_718_791_933e-7),
        ];
        for (z, p) in cases {
            let got = normal_cdf(z);
            assert!(
                (got - p).abs() < 1e-12 * p.max(1e-3),
                "Phi({z}) = {got}, want {p}"
            );
        }
        assert!((gamma(0.5) - PI.sqrt()).abs() < 1e-12);
        assert!((gamma(5.0) - 24.0).abs() < 1e-10);
        assert!((gamma(3.5) - 15.0 * PI.sqrt() / 8.0).abs() < 1e-11);
        assert!((gamma(1.0) - 1.0).abs() < 1e-12, "{}", gamma(1.0) - 1.0);
    }

    #[test]
    fn exponential_mean() {
        let d = Exponential::new(2.5).unwrap();
        let mut r = RngStream::new(1, "test/exp");
        check(
            "exponential",
            d.mean(),
            mean_and_band(N, || d.sample(&mut r)),
        );
    }

    #[test]
    fn lognormal_mean_plain_and_truncated() {
        // The embedded-object size law of web.rs, plain and capped at 10 MB.
        let d = LogNormal::new(8.215, 1.46).unwrap();
        let mut r = RngStream::new(2, "test/lognormal");
        check("lognormal", d.mean(), mean_and_band(N, || d.sample(&mut r)));
        // A truncation that bites: SURGE's body below its 133 KB cut-off.
        let t = LogNormal::truncated(9.357, 1.318, 133_000.0).unwrap();
        assert!(t.mean() < LogNormal::new(9.357, 1.318).unwrap().mean());
        check(
            "truncated lognormal",
            t.mean(),
            mean_and_band(N, || t.sample(&mut r)),
        );
    }

    #[test]
    fn pareto_mean_finite_variance_case() {
        // alpha > 2: the unbounded Pareto has a variance, so the 5-sigma band is valid.
        let d = Pareto::new(2.43, 1.0).unwrap();
        let mut r = RngStream::new(3, "test/pareto");
        check("pareto", d.mean(), mean_and_band(N, || d.sample(&mut r)));
        assert!(Pareto::new(1.0, 1.0).unwrap().mean().is_infinite());
    }

    #[test]
    fn bounded_pareto_mean_heavy_and_alpha_one() {
        // SURGE's file-size tail (alpha 1.1, k 133 KB) capped at 10 MB, and the alpha = 1
        // special case of the mean.
        let d = BoundedPareto::new(133_000.0, 10e6, 1.1).unwrap();
        let mut r = RngStream::new(4, "test/bpareto");
        check(
            "bounded pareto 1.1",
            d.mean(),
            mean_and_band(N, || d.sample(&mut r)),
        );
        let d1 = BoundedPareto::new(1.0, 1000.0, 1.0).unwrap();
        check(
            "bounded pareto 1.0",
            d1.mean(),
            mean_and_band(N, || d1.sample(&mut r)),
        );
        // The alpha -> 1 limit of the general formula agrees with the special case.
        let near = BoundedPareto::new(1.0, 1000.0, 1.0 + 1e-7).unwrap();
        assert!((near.mean() - d1.mean()).abs() / d1.mean() < 1e-5);
    }

    #[test]
    fn weibull_mean() {
        // SURGE's active-OFF law (scale 1.46, shape 0.382): shape < 1, long but finite tail.
        let d = Weibull::new(1.46, 0.382).unwrap();
        let mut r = RngStream::new(5, "test/weibull");
        check("weibull", d.mean(), mean_and_band(N, || d.sample(&mut r)));
    }

    #[test]
    fn hybrid_mean_spliced_and_explicit_split() {
        let d = Hybrid::spliced(9.357, 1.318, 133_000.0, 1.1, 10e6).unwrap();
        // The lognormal keeps 96.8 % of its mass below 133 KB.
        assert!((d.body_prob() - 0.968).abs() < 0.001, "{}", d.body_prob());
        let mut r = RngStream::new(6, "test/hybrid");
        check(
            "hybrid spliced",
            d.mean(),
            mean_and_band(N, || d.sample(&mut r)),
        );
        let e = Hybrid::new(9.357, 1.318, 133_000.0, 1.1, 0.88, 10e6).unwrap();
        check(
            "hybrid 0.88",
            e.mean(),
            mean_and_band(N, || e.sample(&mut r)),
        );
    }

    #[test]
    fn pareto_count_mean() {
        let d = ParetoCount::new(2.43, 1.0, 150).unwrap();
        let mut r = RngStream::new(7, "test/count");
        check(
            "pareto count",
            d.mean(),
            mean_and_band(N, || d.sample(&mut r) as f64),
        );
        let mut r = RngStream::new(8, "test/count");
        assert!((0..10_000).all(|_| (1..=150).contains(&d.sample(&mut r))));
    }

    #[test]
    fn bad_parameters_are_rejected_naming_the_field() {
        let field = |e: ParamError| e.field;
        assert_eq!(field(LogNormal::new(1.0, 0.0).unwrap_err()), "sigma");
        assert_eq!(field(LogNormal::new(f64::NAN, 1.0).unwrap_err()), "mu");
        assert_eq!(field(Exponential::new(-1.0).unwrap_err()), "mean");
        assert_eq!(field(Pareto::new(1.5, 0.0).unwrap_err()), "k");
        assert_eq!(field(Pareto::new(0.0, 1.0).unwrap_err()), "alpha");
        assert_eq!(
            field(BoundedPareto::new(10.0, 5.0, 1.0).unwrap_err()),
            "upper"
        );
        assert_eq!(field(Weibull::new(1.0, -0.5).unwrap_err()), "shape");
        assert_eq!(field(Weibull::new(0.0, 0.5).unwrap_err()), "scale");
        assert_eq!(
            field(Hybrid::new(9.0, 1.0, 1e5, 1.1, 1.5, 1e7).unwrap_err()),
            "body_prob"
        );
        assert_eq!(
            field(Hybrid::new(9.0, 1.0, 1e5, 1.1, 0.9, 1e4).unwrap_err()),
            "upper"
        );
        assert_eq!(
            field(Hybrid::new(9.0, 1.0, -1.0, 1.1, 0.9, 1e7).unwrap_err()),
            "cutoff"
        );
        assert_eq!(
            field(Hybrid::new(9.0, 1.0, 1e5, 0.0, 0.9, 1e7).unwrap_err()),
            "tail_alpha"
        );
        assert_eq!(field(ParetoCount::new(2.43, 1.0, 0).unwrap_err()), "max");
        let e = LogNormal::new(1.0, 0.0).unwrap_err().within("object_size");
        assert_eq!(e.to_string(), "object_size.sigma must be > 0 (got 0)");
    }
}
