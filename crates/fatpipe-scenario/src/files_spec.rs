//! A "files" flow's `sizes` table as fatpipe-traffic's [`FileSizes`]: unset fields keep seed 003's
//! values, and an error names the field as the user wrote it (`flows.0.sizes.tail_alpha`).

use crate::error::ScenarioError;
use crate::plan::size_bytes_only;
use crate::schema::FileSizesSpec;
use fatpipe_traffic::files::{DEFAULT_BODY_SIGMA, DEFAULT_MAX, DEFAULT_TAIL_ALPHA};
use fatpipe_traffic::FileSizes;

/// Seed 003's FTP file size: "exponential, mean 512 KBytes", read as KiB (the seed does not say;
/// 512 kB = 512 000 B would change the arrival rate by 2.4 % and nothing else).
pub const SEED003_FTP_MEAN: u64 = 512 * 1024;
/// Seed 003's WEB sizes: body probability and the two parts' means (bytes).
pub const SEED003_BODY_PROB: f64 = 0.88;
pub const SEED003_BODY_MEAN: u64 = 7247;
pub const SEED003_TAIL_MEAN: u64 = 10558;

/// The size law of `spec` (None = the default, exponential with mean 512 KiB); `path` is the
/// table's path for errors (`flows.0.sizes`).
pub fn sizes(spec: Option<&FileSizesSpec>, path: &str) -> Result<FileSizes, ScenarioError> {
    let s = spec.cloned().unwrap_or_default();
    let field = |f: &str| format!("{path}.{f}");
    let bytes =
        |v: &Option<crate::units::SizeStr>, f: &str, default: u64| -> Result<f64, ScenarioError> {
            Ok(match v {
                None => default as f64,
                Some(x) => size_bytes_only(x, &field(f))? as f64,
            })
        };
    let named = |e: fatpipe_traffic::ParamError| ScenarioError::invalid(field(&e.field), e.message);
    match s.law.as_deref().unwrap_or("exponential") {
        "exponential" => {
            for (f, set) in [
                ("body_prob", s.body_prob.is_some()),
                ("body_mean", s.body_mean.is_some()),
                ("body_sigma", s.body_sigma.is_some()),
                ("tail_mean", s.tail_mean.is_some()),
                ("tail_alpha", s.tail_alpha.is_some()),
                ("max", s.max.is_some()),
            ] {
                if set {
                    return Err(ScenarioError::invalid(
                        field(f),
                        "only law = \"body-tail\" takes this field",
                    ));
                }
            }
            FileSizes::exponential(bytes(&s.mean, "mean", SEED003_FTP_MEAN)?).map_err(named)
        }
        "body-tail" => {
            if s.mean.is_some() {
                return Err(ScenarioError::invalid(
                    field("mean"),
                    "law = \"body-tail\" takes body_mean and tail_mean, not mean",
                ));
            }
            FileSizes::body_tail(
                s.body_prob.unwrap_or(SEED003_BODY_PROB),
                bytes(&s.body_mean, "body_mean", SEED003_BODY_MEAN)?,
                s.body_sigma.unwrap_or(DEFAULT_BODY_SIGMA),
                bytes(&s.tail_mean, "tail_mean", SEED003_TAIL_MEAN)?,
                s.tail_alpha.unwrap_or(DEFAULT_TAIL_ALPHA),
                bytes(&s.max, "max", DEFAULT_MAX as u64)?,
            )
            .map_err(named)
        }
        other => Err(ScenarioError::invalid(
            field("law"),
            format!("unknown size law {other:?}; allowed: \"exponential\", \"body-tail\""),
        )),
    }
}
