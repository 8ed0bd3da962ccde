//! A scenario's `web` table as fatpipe-traffic's web model: unset fields keep SURGE's values,
//! and a model error names the field as the user wrote it (`flows.2.web.base_sigma`).

use crate::error::ScenarioError;
use crate::schema::WebSpec;
use fatpipe_traffic::web::{HybridParams, WebModel};

/// The model's own field names (fatpipe-traffic `ParamError`) and the scenario's.
const FIELDS: &[(&str, &str)] = &[
    ("base_size.mu", "base_mu"),
    ("base_size.sigma", "base_sigma"),
    ("base_size.cutoff", "base_cutoff"),
    ("base_size.tail_alpha", "base_tail_alpha"),
    ("base_size.alpha", "base_tail_alpha"),
    ("base_size.body_prob", "base_body_prob"),
    ("embedded_count.alpha", "embedded_alpha"),
    ("embedded_count.k", "embedded_k"),
    ("max_embedded", "max_embedded"),
    ("embedded_size.mu", "embedded_mu"),
    ("embedded_size.sigma", "embedded_sigma"),
    ("max_object", "max_object"),
];

/// An invalid web parameter, by its scenario field name (relative to the `web` table).
#[derive(Debug)]
pub struct WebSpecError {
    pub field: String,
    pub message: String,
}

impl WebSpecError {
    /// As a scenario error under `prefix` (e.g. "flows.2.web").
    pub fn within_path(self, prefix: &str) -> ScenarioError {
        ScenarioError::invalid(format!("{prefix}.{}", self.field), self.message)
    }
}

/// The web model a `web` table describes (validated).
pub fn model(spec: &WebSpec) -> Result<WebModel, WebSpecError> {
    let mut m = WebModel::default();
    let b: &mut HybridParams = &mut m.base_size;
    b.mu = spec.base_mu.unwrap_or(b.mu);
    b.sigma = spec.base_sigma.unwrap_or(b.sigma);
    if let Some(c) = &spec.base_cutoff {
        b.cutoff = c.bytes(1500) as f64;
    }
    b.tail_alpha = spec.base_tail_alpha.unwrap_or(b.tail_alpha);
    if spec.base_body_prob.is_some() {
        b.body_prob = spec.base_body_prob;
    }
    m.embedded_count.alpha = spec.embedded_alpha.unwrap_or(m.embedded_count.alpha);
    m.embedded_count.k = spec.embedded_k.unwrap_or(m.embedded_count.k);
    m.max_embedded = spec.max_embedded.unwrap_or(m.max_embedded);
    m.embedded_size.mu = spec.embedded_mu.unwrap_or(m.embedded_size.mu);
    m.embedded_size.sigma = spec.embedded_sigma.unwrap_or(m.embedded_size.sigma);
    if let Some(x) = &spec.max_object {
        m.max_object = x.bytes(1500);
    }
    m.validate().map_err(|e| {
        let field = FIELDS
            .iter()
            .find(|(model, _)| *model == e.field)
            .map_or(e.field.clone(), |(_, user)| user.to_string());
        WebSpecError {
            field,
            message: e.message,
        }
    })?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_surge_and_bad_values_name_the_scenario_field() {
        assert_eq!(model(&WebSpec::default()).unwrap(), WebModel::default());
        for (spec, field) in [
            (
                WebSpec {
                    base_sigma: Some(0.0),
                    ..Default::default()
                },
                "base_sigma",
            ),
            (
                WebSpec {
                    embedded_k: Some(-1.0),
                    ..Default::default()
                },
                "embedded_k",
            ),
            (
                WebSpec {
                    max_object: Some(crate::units::SizeStr::new("0B")),
                    ..Default::default()
                },
                "max_object",
            ),
        ] {
            let e = model(&spec).unwrap_err();
            assert_eq!(e.field, field, "{}", e.message);
        }
    }
}
