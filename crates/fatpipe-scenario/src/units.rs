//! Unit-string fields for scenario files: `Duration("100ms")`, `RateStr("1Gbps")`,
//! `SizeStr("2500pkt")`. They deserialize only from strings with units, so a bare number (is it
//! ms or s?) is an error that says what to write.

use fatpipe_core::units::{parse_duration, parse_rate, parse_size, SizeSpec};
use fatpipe_core::{Rate, SimTime};
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

macro_rules! unit_field {
    ($name:ident, $inner:ty, $parse:expr, $pattern:expr, $desc:expr) => {
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            pub text: String,
            pub value: $inner,
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($desc)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        let value = $parse(s).map_err(|e| E::custom(e.to_string()))?;
                        Ok($name {
                            text: s.to_string(),
                            value,
                        })
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as {}", $desc)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as {}", $desc)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; write it as {}", $desc)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.text)
            }
        }
        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
                let mut o = schemars::schema::SchemaObject {
                    instance_type: Some(schemars::schema::InstanceType::String.into()),
                    ..Default::default()
                };
                o.string().pattern = Some($pattern.to_string());
                o.metadata().description = Some($desc.to_string());
                o.into()
            }
        }
        impl $name {
            pub fn new(text: &str) -> Self {
                let value = $parse(text).expect("valid literal");
                $name {
                    text: text.to_string(),
                    value,
                }
            }
        }
    };
}

unit_field!(
    Duration,
    SimTime,
    parse_duration,
    r"^\s*[0-9.eE+]+\s*(ns|us|µs|ms|s|min)\s*$",
    "a duration with a unit, like \"100ms\" (ns, us, ms, s, min)"
);
unit_field!(
    RateStr,
    Rate,
    parse_rate,
    r"^\s*[0-9.eE+]+\s*(bps|kbps|Kbps|Mbps|Gbps|Tbps|b/s|kb/s|Mb/s|Gb/s|Tb/s)\s*$",
    "a rate with a unit, like \"100Mbps\" (bps, kbps, Mbps, Gbps, Tbps)"
);
unit_field!(
    SizeStr,
    SizeSpec,
    parse_size,
    r"^\s*[0-9.eE+]+\s*(B|KB|kB|MB|GB|KiB|MiB|GiB|pkt|pkts)\s*$",
    "a size with a unit, like \"1500B\", \"10MB\" or \"2500pkt\""
);

impl SizeStr {
    /// In bytes, with `pkt` converted using `packet_size`.
    pub fn bytes(&self, packet_size: u64) -> u64 {
        match self.value {
            SizeSpec::Bytes(b) => b,
            SizeSpec::Packets(n) => n * packet_size,
        }
    }
}
