//! Checks on the raw TOML tree that apply to every field at once, before typed validation.
//!
//! TOML can spell `nan`, `inf` and `-inf`, and no quantity of a scenario means any of them: a
//! NaN passes every `x <= 0` guard unnoticed, an infinity turns into a saturated integer. Rather
//! than trust each of the many float fields (queues, traffic models, congestion-control
//! parameters) to test for them, the whole tree is refused here, naming the field.

use crate::error::ScenarioError;

/// Refuse any non-finite float anywhere in `v`; the error names its dotted path.
pub(crate) fn check_finite(v: &toml::Value) -> Result<(), ScenarioError> {
    walk(v, &mut Vec::new())
}

fn walk(v: &toml::Value, path: &mut Vec<String>) -> Result<(), ScenarioError> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Err(ScenarioError::invalid(
            path.join("."),
            format!("{x} is not a usable number; give a finite value"),
        )),
        toml::Value::Table(t) => t.iter().try_for_each(|(k, x)| {
            path.push(k.clone());
            let r = walk(x, path);
            path.pop();
            r
        }),
        toml::Value::Array(a) => a.iter().enumerate().try_for_each(|(i, x)| {
            path.push(i.to_string());
            let r = walk(x, path);
            path.pop();
            r
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_non_finite_float() {
        let v: toml::Value = toml::from_str("a = 1.0\n[b]\nc = [1.0, nan]\n").unwrap();
        assert_eq!(check_finite(&v).unwrap_err().path, "b.c.1");
        let v: toml::Value = toml::from_str("x = -inf").unwrap();
        assert_eq!(check_finite(&v).unwrap_err().path, "x");
        let v: toml::Value = toml::from_str("x = 1e308\ny = \"nan\"").unwrap();
        assert!(check_finite(&v).is_ok());
    }
}
