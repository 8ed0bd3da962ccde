//! `--set key=value` overrides on the raw TOML tree, before validation.
//!
//! Keys are dotted paths; numeric segments index arrays (`flows.0.tcp.cc=reno`). Values are read
//! as TOML (`16`, `true`, `[1, 2]`, `"1Gbps"`) and fall back to a bare string (`1Gbps`). Setting a
//! key the schema does not have is caught by validation like any unknown field.

use crate::error::ScenarioError;

pub fn apply(root: &mut toml::Value, assignment: &str) -> Result<(), ScenarioError> {
    let (key, raw) = assignment.split_once('=').ok_or_else(|| {
        ScenarioError::invalid(
            "--set",
            format!("{assignment:?} is not key=value (e.g. topology.pairs=16)"),
        )
    })?;
    let key = key.trim();
    if key.is_empty() {
        return Err(ScenarioError::invalid("--set", "empty key"));
    }
    let value = parse_value(raw.trim());
    let parts: Vec<&str> = key.split('.').collect();
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        let here = parts[..=i].join(".");
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            toml::Value::Array(a) => {
                let idx: usize = part.parse().map_err(|_| {
                    ScenarioError::invalid(
                        here.clone(),
                        "this is a list: use a number to pick an element",
                    )
                })?;
                let len = a.len();
                let slot = a.get_mut(idx).ok_or_else(|| {
                    ScenarioError::invalid(
                        here.clone(),
                        format!("index {idx} out of range (list has {len})"),
                    )
                })?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => {
                return Err(ScenarioError::invalid(
                    here,
                    "is not a table; cannot set a field inside it",
                ))
            }
        };
    }
    Ok(())
}

fn parse_value(raw: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.to_string())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_keys_and_array_elements() {
        let mut v: toml::Value = toml::from_str("a = 1\n[b]\nc = \"x\"\n[[f]]\ng = 1\n").unwrap();
        apply(&mut v, "b.c=1Gbps").unwrap();
        apply(&mut v, "a=16").unwrap();
        apply(&mut v, "f.0.g=true").unwrap();
        apply(&mut v, "new.deep=2").unwrap();
        assert_eq!(v["b"]["c"].as_str(), Some("1Gbps"));
        assert_eq!(v["a"].as_integer(), Some(16));
        assert_eq!(v["f"][0]["g"].as_bool(), Some(true));
        assert_eq!(v["new"]["deep"].as_integer(), Some(2));
        assert!(apply(&mut v, "f.3.g=1").is_err());
        assert!(apply(&mut v, "nokey").is_err());
    }
}
