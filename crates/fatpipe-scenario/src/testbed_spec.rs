//! `[testbed]`: how a scenario runs on real Linux TCP (`fatpipe testbed run`, docs/testbed.md).
//!
//! The simulator models none of it (its receiver window is `tcp.rwnd`); the testbed reads it from
//! the plan. Host tuning follows seed 004 (da Silva 2006, §3.2 and Appendices D.1/E.1): the
//! sysctls it set on both end systems that Linux keeps per network namespace (`struct
//! netns_ipv4`), so every host of a testbed can be tuned on its own and the host's own
//! configuration is never changed. Its `net.core.rmem_max`/`wmem_max` and `netdev_max_backlog`
//! are the host's (read-only inside a namespace), so they are not options: the socket buffers,
//! netperf's `-s` / `-S` (seed 004 Appendix C: the path's BDP), are requested with
//! `SO_SNDBUFFORCE` / `SO_RCVBUFFORCE`, which those maxima do not cap; Linux doubles the request
//! (socket(7)).
//!
//! The table is flat: tuning keys, socket buffers, the close mode, the traffic driver and the
//! emulator at its top level, and `[testbed.hosts.NODE]` tables that override tuning keys for
//! one node. Checked when the scenario is loaded; an error names the field and what is allowed.
//! A scenario without the table has no `testbed` in its plan, so its plan and run keys are those
//! of a scenario written before the table existed.

use crate::error::ScenarioError;
use crate::units::SizeStr;
use fatpipe_core::units::SizeSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest socket buffer a scenario may ask for: Linux stores twice the value given to
/// `SO_SNDBUF`/`SO_RCVBUF` in an `int` (net/core/sock.c `sk_setsockopt`), so anything above
/// 2^30 − 1 bytes would overflow there.
pub const MAX_SOCKET_BUFFER: u64 = (1 << 30) - 1;

/// Drivers and emulators the testbed knows.
pub const DRIVERS: [&str; 2] = ["fatpipe-bulk", "iperf3"];
pub const EMULATORS: [&str; 3] = ["auto", "linkem", "qdisc"];
/// How a timed flow ends.
pub const CLOSES: [&str; 2] = ["reset", "graceful"];

/// Host tuning (seed 004 Table A.1): the keys of `[testbed]` and of `[testbed.hosts.NODE]`.
/// Unset keys keep the kernel's defaults, except tcp_rmem / tcp_wmem, whose maximum the testbed
/// raises to 4 x the largest path BDP so that no socket buffer caps a flow the simulator does
/// not cap.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TuningSpec {
    /// `net.ipv4.tcp_window_scaling` (RFC 7323 window scale).
    pub window_scaling: Option<bool>,
    /// `net.ipv4.tcp_timestamps` (RFC 7323 timestamps).
    pub timestamps: Option<bool>,
    /// `net.ipv4.tcp_sack` (RFC 2018).
    pub sack: Option<bool>,
    /// `net.ipv4.tcp_dsack` (RFC 2883).
    pub dsack: Option<bool>,
    /// `net.ipv4.tcp_no_metrics_save`: true = do not cache a closed connection's ssthresh and
    /// RTT for the next connection to the same host.
    pub no_metrics_save: Option<bool>,
    /// `net.ipv4.tcp_no_ssthresh_metrics_save` (Linux 5.6+, default true): true = never cache
    /// ssthresh, even when `no_metrics_save` is false (older kernels cached it with the rest).
    pub no_ssthresh_metrics_save: Option<bool>,
    /// `net.ipv4.tcp_moderate_rcvbuf`: the receive buffer's auto-tuning (DRS).
    pub moderate_rcvbuf: Option<bool>,
    /// `net.ipv4.tcp_rmem`: [min, default, max] receive buffer, bytes (e.g.
    /// `["4096B", "3125000B", "26MB"]`).
    pub rmem: Option<Vec<SizeStr>>,
    /// `net.ipv4.tcp_wmem`: [min, default, max] send buffer, bytes.
    pub wmem: Option<Vec<SizeStr>>,
    /// Transmit queue length of the host's interfaces (`ip link set ... txqueuelen`), packets.
    pub txqueuelen: Option<u32>,
}

/// The `[testbed]` table: the tuning of every host (flat), socket buffers, close mode, driver,
/// emulator and per-node overrides. Every field is optional.
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
    /// `SO_SNDBUF` the sender sets before connecting (netperf `-s`); Linux doubles it. Default:
    /// Linux's autotuning.
    pub sndbuf: Option<SizeStr>,
    /// `SO_RCVBUF` the receiver sets before listening (netperf `-S`); Linux doubles it.
    pub rcvbuf: Option<SizeStr>,
    /// How a timed flow ends at its stop: "reset" (default: counted up to the stop, then reset,
    /// as the simulator stops counting) or "graceful" (FIN after at most 128 KiB still queued,
    /// through TIME-WAIT, where Linux saves the connection's metrics for the next connection to
    /// the same host unless `no_metrics_save` is set). Bytes count up to the stop either way.
    pub close: Option<String>,
    pub window_scaling: Option<bool>,
    pub timestamps: Option<bool>,
    pub sack: Option<bool>,
    pub dsack: Option<bool>,
    pub no_metrics_save: Option<bool>,
    pub no_ssthresh_metrics_save: Option<bool>,
    pub moderate_rcvbuf: Option<bool>,
    pub rmem: Option<Vec<SizeStr>>,
    pub wmem: Option<Vec<SizeStr>>,
    pub txqueuelen: Option<u32>,
    /// Per node: tuning keys that override the table's for that node's namespace.
    #[serde(default)]
    pub hosts: BTreeMap<String, TuningSpec>,
}

/// Resolved tuning: sizes in bytes; unset keys absent (the kernel's value).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlanTuning {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window_scaling: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dsack: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_metrics_save: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_ssthresh_metrics_save: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moderate_rcvbuf: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmem: Option<[u64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wmem: Option<[u64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub txqueuelen: Option<u32>,
}

/// The plan's `testbed` object: the table's tuning flat (as written), sizes in bytes, unset
/// fields absent; `hosts` holds each overridden node's full tuning (table merged with the node's
/// keys).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlanTestbed {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulator: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sndbuf: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close: Option<String>,
    #[serde(flatten)]
    pub tuning: PlanTuning,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts: BTreeMap<String, PlanTuning>,
}

fn bytes(s: &SizeStr, path: &str) -> Result<u64, ScenarioError> {
    match s.value {
        SizeSpec::Bytes(b) if b > 0 => Ok(b),
        SizeSpec::Bytes(_) => Err(ScenarioError::invalid(path, "must be positive")),
        SizeSpec::Packets(_) => Err(ScenarioError::invalid(
            path,
            "socket memory is counted in bytes; write e.g. \"3125000B\" or \"26MB\", not packets",
        )),
    }
}

fn triple(v: &[SizeStr], path: &str) -> Result<[u64; 3], ScenarioError> {
    if v.len() != 3 {
        return Err(ScenarioError::invalid(
            path,
            format!(
                "give [min, default, max] (three sizes, Linux's vector), not {} values",
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
    if t[2] > i32::MAX as u64 {
        return Err(ScenarioError::invalid(
            format!("{path}.2"),
            format!("at most {} bytes (the kernel keeps it in an int)", i32::MAX),
        ));
    }
    Ok(t)
}

fn socket_buffer(s: &Option<SizeStr>, path: &str) -> Result<Option<u64>, ScenarioError> {
    s.as_ref()
        .map(|s| {
            let b = bytes(s, path)?;
            if b > MAX_SOCKET_BUFFER {
                return Err(ScenarioError::invalid(
                    path,
                    format!(
                        "give 1 to {MAX_SOCKET_BUFFER} bytes (Linux stores twice the value in an int), got {b}"
                    ),
                ));
            }
            Ok(b)
        })
        .transpose()
}

fn one_of(
    value: &Option<String>,
    allowed: &[&str],
    path: &str,
) -> Result<Option<String>, ScenarioError> {
    match value.as_deref() {
        None => Ok(None),
        Some(v) if allowed.contains(&v) => Ok(Some(v.to_string())),
        Some(v) => Err(ScenarioError::invalid(
            path,
            format!("unknown {v:?}; allowed: {}", allowed.join(", ")),
        )),
    }
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
            no_ssthresh_metrics_save: self.no_ssthresh_metrics_save,
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
            no_ssthresh_metrics_save: over
                .no_ssthresh_metrics_save
                .or(self.no_ssthresh_metrics_save),
            moderate_rcvbuf: over.moderate_rcvbuf.or(self.moderate_rcvbuf),
            rmem: over.rmem.or(self.rmem),
            wmem: over.wmem.or(self.wmem),
            txqueuelen: over.txqueuelen.or(self.txqueuelen),
        }
    }
}

impl TestbedSpec {
    /// The tuning keys of the table's top level.
    fn tuning(&self) -> TuningSpec {
        TuningSpec {
            window_scaling: self.window_scaling,
            timestamps: self.timestamps,
            sack: self.sack,
            dsack: self.dsack,
            no_metrics_save: self.no_metrics_save,
            no_ssthresh_metrics_save: self.no_ssthresh_metrics_save,
            moderate_rcvbuf: self.moderate_rcvbuf,
            rmem: self.rmem.clone(),
            wmem: self.wmem.clone(),
            txqueuelen: self.txqueuelen,
        }
    }

    /// Checks every value but the host names (which need the topology built): at load time.
    pub fn check(&self) -> Result<(), ScenarioError> {
        self.resolve_with(None).map(|_| ())
    }

    /// Checks every value; `nodes` are the plan's node names (a host override must name one).
    pub fn resolve(&self, nodes: &[&str]) -> Result<PlanTestbed, ScenarioError> {
        self.resolve_with(Some(nodes))
    }

    fn resolve_with(&self, nodes: Option<&[&str]>) -> Result<PlanTestbed, ScenarioError> {
        let tuning = self.tuning().resolve("testbed")?;
        let mut hosts = BTreeMap::new();
        for (name, over) in &self.hosts {
            let path = format!("testbed.hosts.{name}");
            if let Some(nodes) = nodes.filter(|n| !n.contains(&name.as_str())) {
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
            driver: one_of(&self.driver, &DRIVERS, "testbed.driver")?,
            emulator: one_of(&self.emulator, &EMULATORS, "testbed.emulator")?,
            sndbuf: socket_buffer(&self.sndbuf, "testbed.sndbuf")?,
            rcvbuf: socket_buffer(&self.rcvbuf, "testbed.rcvbuf")?,
            close: one_of(&self.close, &CLOSES, "testbed.close")?,
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
    fn unset_keys_are_absent_from_the_plan() {
        let p = TestbedSpec::default().resolve(&["s0"]).unwrap();
        assert_eq!(p, PlanTestbed::default());
        assert_eq!(serde_json::to_string(&p).unwrap(), "{}");
    }

    #[test]
    fn a_host_override_replaces_only_its_keys() {
        let s = spec(
            "sndbuf = \"3125000B\"\nsack = true\nno_metrics_save = true\n\
             rmem = [\"4096B\", \"3125000B\", \"26000000B\"]\n[hosts.s0]\nsack = false\n",
        );
        let p = s.resolve(&["s0", "r0"]).unwrap();
        assert_eq!(p.sndbuf, Some(3_125_000));
        assert_eq!(p.tuning.rmem, Some([4096, 3_125_000, 26_000_000]));
        let h = &p.hosts["s0"];
        assert_eq!((h.sack, h.no_metrics_save), (Some(false), Some(true)));
        assert_eq!(h.rmem, p.tuning.rmem);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["sack"], true);
        assert_eq!(json["hosts"]["s0"]["sack"], false);
    }

    #[test]
    fn bad_values_name_their_field() {
        let cases = [
            ("driver = \"netperf\"", "testbed.driver"),
            ("emulator = \"dummynet\"", "testbed.emulator"),
            ("close = \"linger\"", "testbed.close"),
            ("sndbuf = \"10pkt\"", "testbed.sndbuf"),
            ("rcvbuf = \"2GB\"", "testbed.rcvbuf"),
            ("rmem = [\"4096B\", \"3MB\"]", "testbed.rmem"),
            ("wmem = [\"4096B\", \"3MB\", \"1MB\"]", "testbed.wmem"),
            ("txqueuelen = 0", "testbed.txqueuelen"),
            ("[hosts.nowhere]\nsack = false", "testbed.hosts.nowhere"),
            (
                "[hosts.s0]\nrmem = [\"1B\", \"2B\", \"4GB\"]",
                "testbed.hosts.s0.rmem.2",
            ),
        ];
        for (text, path) in cases {
            let e = spec(text).resolve(&["s0"]).unwrap_err();
            assert_eq!(e.path, path, "{text}: {e}");
        }
    }
}
