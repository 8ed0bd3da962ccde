//! `[testbed]`: how a scenario runs on real Linux TCP (`fatpipe testbed run`, docs/testbed.md).
//!
//! The simulator ignores this section; the testbed reads it from the plan. Host tuning follows
//! seed 004 (da Silva 2006, §3.2 and Appendices D/E): the sysctls it set on both end systems
//! that Linux keeps per network namespace (`struct netns_ipv4`), so every host of the testbed
//! can be tuned on its own. Its `net.core.rmem_max`/`wmem_max` and `netdev_max_backlog` are the
//! host's (read-only inside a namespace), so they are not options: the socket buffers, netperf's
//! `-s` / `-S` (seed 004 Appendix C: the path's BDP), are requested with `SO_SNDBUFFORCE` /
//! `SO_RCVBUFFORCE`, which those maxima do not cap; Linux doubles the request (socket(7)).

use crate::error::ScenarioError;
use crate::units::SizeStr;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Real Linux TCP settings: traffic driver, link emulation, socket buffers and host tuning.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestbedSpec {
    /// Traffic generator: "fatpipe-bulk" (default; TCP_INFO sampled at the monitor interval) or
    /// "iperf3" (its JSON report; bulk flows only).
    pub driver: Option<String>,
    /// Link emulation: "auto" (default: the kernel's qdiscs, netem and tbf, when every link can
    /// be expressed with them and the kernel has them; otherwise fatpipe-linkem), "linkem" or
    /// "qdisc" (an error where the kernel lacks a qdisc a link needs).
    pub emulator: Option<String>,
    /// SO_SNDBUF of every sender, like netperf's -s (default: Linux's autotuning).
    pub sndbuf: Option<SizeStr>,
    /// SO_RCVBUF of every receiver, like netperf's -S (default: Linux's autotuning).
    pub rcvbuf: Option<SizeStr>,
    /// Sysctls applied in every host's namespace.
    #[serde(default)]
    pub tuning: TuningSpec,
    /// Per node: tuning that overrides `[testbed.tuning]` for that node's namespace.
    #[serde(default)]
    pub hosts: BTreeMap<String, TuningSpec>,
}

/// Host tuning (seed 004 Table A.1). Unset keys keep the kernel's defaults, except tcp_rmem /
/// tcp_wmem, whose maximum the testbed raises to 4 x the largest path BDP so that no socket
/// buffer caps a flow the simulator does not cap.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TuningSpec {
    /// net.ipv4.tcp_window_scaling (RFC 7323 window scale).
    pub window_scaling: Option<bool>,
    /// net.ipv4.tcp_timestamps (RFC 7323 timestamps).
    pub timestamps: Option<bool>,
    /// net.ipv4.tcp_sack (RFC 2018).
    pub sack: Option<bool>,
    /// net.ipv4.tcp_dsack (RFC 2883).
    pub dsack: Option<bool>,
    /// net.ipv4.tcp_no_metrics_save: true flushes the per-destination ssthresh cache.
    pub no_metrics_save: Option<bool>,
    /// net.ipv4.tcp_moderate_rcvbuf: receive-buffer autotuning.
    pub moderate_rcvbuf: Option<bool>,
    /// net.ipv4.tcp_rmem: [min, default, max] sizes, e.g. ["4096B", "3125000B", "26MB"].
    pub rmem: Option<Vec<SizeStr>>,
    /// net.ipv4.tcp_wmem: [min, default, max] sizes.
    pub wmem: Option<Vec<SizeStr>>,
    /// Transmit queue length of the host's interfaces (ip link set ... txqueuelen), in packets.
    pub txqueuelen: Option<u32>,
}

/// Drivers and emulators the testbed knows.
pub const DRIVERS: [&str; 2] = ["fatpipe-bulk", "iperf3"];
pub const EMULATORS: [&str; 3] = ["auto", "linkem", "qdisc"];

/// Resolved tuning: sizes in bytes. `None` keeps the kernel's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlanTuning {
    pub window_scaling: Option<bool>,
    pub timestamps: Option<bool>,
    pub sack: Option<bool>,
    pub dsack: Option<bool>,
    pub no_metrics_save: Option<bool>,
    pub moderate_rcvbuf: Option<bool>,
    pub rmem: Option<[u64; 3]>,
    pub wmem: Option<[u64; 3]>,
    pub txqueuelen: Option<u32>,
}

/// The plan's `testbed` object: everything explicit, per-host tuning already merged.
#[derive(Clone, Debug, Serialize)]
pub struct PlanTestbed {
    pub driver: String,
    pub emulator: String,
    pub sndbuf_bytes: Option<u64>,
    pub rcvbuf_bytes: Option<u64>,
    pub tuning: PlanTuning,
    /// Node name -> its tuning (the section's tuning with the node's overrides), for the nodes
    /// that have overrides.
    pub hosts: BTreeMap<String, PlanTuning>,
}

fn bytes(s: &SizeStr, path: &str) -> Result<u64, ScenarioError> {
    match s.value {
        fatpipe_core::units::SizeSpec::Bytes(b) if b > 0 => Ok(b),
        fatpipe_core::units::SizeSpec::Bytes(_) => {
            Err(ScenarioError::invalid(path, "must be positive"))
        }
        fatpipe_core::units::SizeSpec::Packets(_) => Err(ScenarioError::invalid(
            path,
            "socket memory is counted in bytes; write e.g. \"3125000B\" or \"26MB\"",
        )),
    }
}

fn triple(v: &[SizeStr], path: &str) -> Result<[u64; 3], ScenarioError> {
    if v.len() != 3 {
        return Err(ScenarioError::invalid(
            path,
            format!(
                "give [min, default, max] (three sizes), not {} values",
                v.len()
            ),
        ));
    }
    let t = [
        bytes(&v[0], &format!("{path}.0"))?,
        bytes(&v[1], &format!("{path}.1"))?,
        bytes(&v[2], &format!("{path}.2"))?,
    ];
    if !(t[0] <= t[1] && t[1] <= t[2]) {
        return Err(ScenarioError::invalid(
            path,
            format!(
                "needs min <= default <= max, got {} {} {}",
                t[0], t[1], t[2]
            ),
        ));
    }
    // The kernel keeps these as int (bytes).
    if t[2] > i32::MAX as u64 {
        return Err(ScenarioError::invalid(
            path,
            "the kernel holds socket memory below 2 GiB",
        ));
    }
    Ok(t)
}

fn max_bytes(s: &Option<SizeStr>, path: &str) -> Result<Option<u64>, ScenarioError> {
    s.as_ref()
        .map(|s| {
            let b = bytes(s, path)?;
            if b > i32::MAX as u64 {
                return Err(ScenarioError::invalid(
                    path,
                    "the kernel holds socket memory below 2 GiB",
                ));
            }
            Ok(b)
        })
        .transpose()
}

impl TuningSpec {
    fn resolve(&self, path: &str) -> Result<PlanTuning, ScenarioError> {
        if self.txqueuelen == Some(0) {
            return Err(ScenarioError::invalid(
                format!("{path}.txqueuelen"),
                "a transmit queue of 0 packets stalls the interface; give at least 1 (Linux's default is 1000)",
            ));
        }
        Ok(PlanTuning {
            window_scaling: self.window_scaling,
            timestamps: self.timestamps,
            sack: self.sack,
            dsack: self.dsack,
            no_metrics_save: self.no_metrics_save,
            moderate_rcvbuf: self.moderate_rcvbuf,
            rmem: self
                .rmem
                .as_deref()
                .map(|v| triple(v, &format!("{path}.rmem")))
                .transpose()?,
            wmem: self
                .wmem
                .as_deref()
                .map(|v| triple(v, &format!("{path}.wmem")))
                .transpose()?,
            txqueuelen: self.txqueuelen,
        })
    }
}

impl PlanTuning {
    /// `self` with every key `over` sets replaced.
    fn overridden_by(&self, over: &PlanTuning) -> PlanTuning {
        PlanTuning {
            window_scaling: over.window_scaling.or(self.window_scaling),
            timestamps: over.timestamps.or(self.timestamps),
            sack: over.sack.or(self.sack),
            dsack: over.dsack.or(self.dsack),
            no_metrics_save: over.no_metrics_save.or(self.no_metrics_save),
            moderate_rcvbuf: over.moderate_rcvbuf.or(self.moderate_rcvbuf),
            rmem: over.rmem.or(self.rmem),
            wmem: over.wmem.or(self.wmem),
            txqueuelen: over.txqueuelen.or(self.txqueuelen),
        }
    }
}

fn one_of(
    value: &Option<String>,
    allowed: &[&str],
    default: &str,
    path: &str,
) -> Result<String, ScenarioError> {
    let v = value.as_deref().unwrap_or(default);
    if allowed.contains(&v) {
        Ok(v.to_string())
    } else {
        Err(ScenarioError::invalid(
            path,
            format!("unknown {v:?}; allowed: {}", allowed.join(", ")),
        ))
    }
}

impl TestbedSpec {
    /// Checks every value; `nodes` are the plan's node names (a host override must name one).
    pub fn resolve(&self, nodes: &[&str]) -> Result<PlanTestbed, ScenarioError> {
        let driver = one_of(&self.driver, &DRIVERS, "fatpipe-bulk", "testbed.driver")?;
        let emulator = one_of(&self.emulator, &EMULATORS, "auto", "testbed.emulator")?;
        let tuning = self.tuning.resolve("testbed.tuning")?;
        let mut hosts = BTreeMap::new();
        for (name, over) in &self.hosts {
            let path = format!("testbed.hosts.{name}");
            if !nodes.contains(&name.as_str()) {
                let mut shown: Vec<&str> = nodes.iter().copied().take(12).collect();
                if nodes.len() > 12 {
                    shown.push("...");
                }
                return Err(ScenarioError::invalid(
                    path,
                    format!("no node of that name; nodes are {}", shown.join(", ")),
                ));
            }
            hosts.insert(name.clone(), tuning.overridden_by(&over.resolve(&path)?));
        }
        Ok(PlanTestbed {
            driver,
            emulator,
            sndbuf_bytes: max_bytes(&self.sndbuf, "testbed.sndbuf")?,
            rcvbuf_bytes: max_bytes(&self.rcvbuf, "testbed.rcvbuf")?,
            tuning,
            hosts,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> TestbedSpec {
        toml::from_str(text).expect("parses")
    }

    #[test]
    fn defaults_are_explicit_in_the_plan() {
        let p = TestbedSpec::default().resolve(&["s0"]).unwrap();
        assert_eq!(
            (p.driver.as_str(), p.emulator.as_str()),
            ("fatpipe-bulk", "auto")
        );
        assert_eq!(p.tuning, PlanTuning::default());
        assert!(p.hosts.is_empty() && p.sndbuf_bytes.is_none());
    }

    #[test]
    fn a_host_override_replaces_only_its_keys() {
        let s = spec(
            "sndbuf = \"3125000B\"\n[tuning]\nsack = true\nno_metrics_save = true\n\
             rmem = [\"4096B\", \"3125000B\", \"26000000B\"]\n[hosts.s0]\nsack = false\n",
        );
        let p = s.resolve(&["s0", "r0"]).unwrap();
        assert_eq!(p.sndbuf_bytes, Some(3_125_000));
        assert_eq!(p.tuning.rmem, Some([4096, 3_125_000, 26_000_000]));
        let h = &p.hosts["s0"];
        assert_eq!((h.sack, h.no_metrics_save), (Some(false), Some(true)));
        assert_eq!(h.rmem, p.tuning.rmem);
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases = [
            ("driver = \"netperf\"", "testbed.driver"),
            ("emulator = \"dummynet\"", "testbed.emulator"),
            ("sndbuf = \"10pkt\"", "testbed.sndbuf"),
            (
                "[tuning]\nrmem = [\"4096B\", \"3MB\"]",
                "testbed.tuning.rmem",
            ),
            (
                "[tuning]\nwmem = [\"4096B\", \"3MB\", \"1MB\"]",
                "testbed.tuning.wmem",
            ),
            ("[tuning]\ntxqueuelen = 0", "testbed.tuning.txqueuelen"),
            ("[hosts.nowhere]\nsack = false", "testbed.hosts.nowhere"),
            (
                "[hosts.s0]\nrmem = [\"1B\", \"2B\", \"4GB\"]",
                "testbed.hosts.s0.rmem",
            ),
        ];
        for (text, path) in cases {
            let e = spec(text).resolve(&["s0"]).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
        }
    }
}
