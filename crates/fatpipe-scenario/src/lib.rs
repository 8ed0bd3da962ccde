//! fatpipe-scenario: from a TOML file (or a Python-built table) to a runnable simulation.
//!
//! ```text
//! TOML text ──parse──▶ toml::Value ──--set overrides──▶ Scenario (serde, deny_unknown_fields)
//!        ──elaborate(seed)──▶ Plan (explicit nodes, links, flows, start times)  ──build──▶ Simulation
//! ```
//! Every user mistake becomes a [`ScenarioError`] naming the field path and what is allowed.

pub mod aqm_spec;
pub mod background;
pub mod budget;
pub mod error;
pub mod files_spec;
pub mod message_spec;
mod numbers;
pub mod overrides;
pub mod parking_lot;
pub mod plan;
pub mod ring;
pub mod schema;
pub mod testbed_spec;
pub mod units;
pub mod web_spec;

pub use error::{ErrorKind, ScenarioError};
pub use plan::{elaborate, Plan};
pub use schema::Scenario;

/// Parse scenario text, apply `key=value` overrides, and validate the structure.
pub fn load_str(text: &str, sets: &[String]) -> Result<Scenario, ScenarioError> {
    let mut value: toml::Value = toml::from_str::<toml::Table>(text)
        .map(toml::Value::Table)
        .map_err(|e| {
            ScenarioError::parse(
                e.message().to_string(),
                e.span().map(|s| line_of(text, s.start)),
            )
        })?;
    for s in sets {
        overrides::apply(&mut value, s)?;
    }
    numbers::check_finite(&value)?;
    let sc = Scenario::from_value(value)?;
    // Sizes first: the topology's own checks expand lists per bottleneck or router.
    budget::check_scenario(&sc)?;
    sc.topology.validate()?;
    if let Some(t) = &sc.testbed {
        t.check()?;
    }
    Ok(sc)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The JSON Schema of scenario files, for editors (e.g. taplo / Even Better TOML).
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(schema::ScenarioSchema);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}
