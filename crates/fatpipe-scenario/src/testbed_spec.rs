//! `[testbed]`: host settings of the testbed back-end (`fatpipe testbed run`, docs/testbed.md).
//!
//! The testbed runs a scenario's flows as real Linux TCP between network namespaces. These keys
//! tune its end hosts the way seed 004 (da Silva 2006, Appendices D.1 and E.1) tuned its
//! machines, and give the socket buffers its traffic asks for (netperf's `-s`/`-S`). Every one is
//! a per-namespace setting of the running kernel, so a testbed never changes the host's own
//! configuration. The simulator models none of them: its receiver window is `tcp.rwnd`.
//!
//! Checked when the scenario is loaded; an error names the field and what is allowed.

use crate::error::ScenarioError;
use crate::units::SizeStr;
use fatpipe_core::units::SizeSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest socket buffer a scenario may ask for: Linux stores twice the value given to
/// `SO_SNDBUF`/`SO_RCVBUF` in an `int` (net/core/sock.c `sk_setsockopt`), so anything above
/// 2^30 − 1 bytes would overflow there.
pub const MAX_SOCKET_BUFFER: u64 = (1 << 30) - 1;

/// The `[testbed]` table. Every field is optional; an unset one leaves the kernel's default.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestbedSpec {
    /// `net.ipv4.tcp_window_scaling` on the hosts (RFC 7323 window scale).
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
    /// `net.ipv4.tcp_rmem`: min, default and max receive buffer, bytes (e.g.
    /// `["4096B", "3125000B", "26000000B"]`).
    pub rmem: Option<[SizeStr; 3]>,
    /// `net.ipv4.tcp_wmem`: min, default and max send buffer, bytes.
    pub wmem: Option<[SizeStr; 3]>,
    /// Transmit queue length of the hosts' interfaces, packets (`ip link set ... txqueuelen`).
    pub txqueuelen: Option<u32>,
    /// `SO_SNDBUF` the sender sets before connecting (netperf `-s`); Linux doubles it.
    pub sndbuf: Option<SizeStr>,
    /// `SO_RCVBUF` the receiver sets before listening (netperf `-S`); Linux doubles it.
    pub rcvbuf: Option<SizeStr>,
    /// How a timed flow ends at its stop: "reset" (default: counted up to the stop, then reset,
    /// as the simulator stops counting) or "graceful" (FIN after at most 128 KiB still queued,
    /// through TIME-WAIT, where Linux saves the connection's metrics for the next connection to
    /// the same host unless `no_metrics_save` is set). Bytes count up to the stop either way.
    pub close: Option<String>,
}

/// The `[testbed]` table as the plan carries it: sizes in bytes, unset fields absent.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PlanTestbed {
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sndbuf: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub close: Option<String>,
}

fn bytes(s: &SizeStr, field: &str) -> Result<u64, ScenarioError> {
    match s.value {
        SizeSpec::Bytes(b) => Ok(b),
        SizeSpec::Packets(_) => Err(ScenarioError::invalid(
            format!("testbed.{field}"),
            "a socket buffer is a number of bytes, e.g. \"3125000B\" or \"3MB\", not packets",
        )),
    }
}

fn triple(v: &[SizeStr; 3], field: &str) -> Result<[u64; 3], ScenarioError> {
    let mut out = [0u64; 3];
    for (i, s) in v.iter().enumerate() {
        out[i] = bytes(s, &format!("{field}.{i}"))?;
    }
    if out[0] == 0 || out[0] > out[1] || out[1] > out[2] {
        return Err(ScenarioError::invalid(
            format!("testbed.{field}"),
            format!(
                "give min <= default <= max with min >= 1 byte (Linux's tcp_{field} vector), got {out:?}"
            ),
        ));
    }
    if out[2] > i32::MAX as u64 {
        return Err(ScenarioError::invalid(
            format!("testbed.{field}.2"),
            format!("at most {} bytes (the kernel keeps it in an int)", i32::MAX),
        ));
    }
    Ok(out)
}

fn socket_buffer(s: &SizeStr, field: &str) -> Result<u64, ScenarioError> {
    let b = bytes(s, field)?;
    if b == 0 || b > MAX_SOCKET_BUFFER {
        return Err(ScenarioError::invalid(
            format!("testbed.{field}"),
            format!(
                "give 1 to {MAX_SOCKET_BUFFER} bytes (Linux stores twice the value in an int), got {b}"
            ),
        ));
    }
    Ok(b)
}

impl TestbedSpec {
    /// The plan's form, checked: sizes in bytes, vectors ordered, buffers within the kernel's int.
    pub fn plan(&self) -> Result<PlanTestbed, ScenarioError> {
        Ok(PlanTestbed {
            window_scaling: self.window_scaling,
            timestamps: self.timestamps,
            sack: self.sack,
            dsack: self.dsack,
            no_metrics_save: self.no_metrics_save,
            no_ssthresh_metrics_save: self.no_ssthresh_metrics_save,
            moderate_rcvbuf: self.moderate_rcvbuf,
            rmem: self.rmem.as_ref().map(|v| triple(v, "rmem")).transpose()?,
            wmem: self.wmem.as_ref().map(|v| triple(v, "wmem")).transpose()?,
            txqueuelen: self.txqueuelen,
            sndbuf: self
                .sndbuf
                .as_ref()
                .map(|s| socket_buffer(s, "sndbuf"))
                .transpose()?,
            rcvbuf: self
                .rcvbuf
                .as_ref()
                .map(|s| socket_buffer(s, "rcvbuf"))
                .transpose()?,
            close: match self.close.as_deref() {
                None => None,
                Some(c @ ("reset" | "graceful")) => Some(c.to_string()),
                Some(c) => {
                    return Err(ScenarioError::invalid(
                        "testbed.close",
                        format!("{c:?}: allowed \"reset\" (default) or \"graceful\""),
                    ))
                }
            },
        })
    }
}
