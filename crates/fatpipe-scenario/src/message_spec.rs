//! Scenario fields of message applications and their transports: `kind = "voip"` with its
//! `[flows.voip]` table, `transport = "udp" | "dccp" | "tcp"`, and DCCP settings (`[dccp]` for
//! every flow, `[flows.dccp]` per group). Checked here, turned into plan values, and back into
//! the engine's `AppSpec` when a plan is built.

use crate::error::ScenarioError;
use crate::units::{Duration, RateStr, SizeStr};
use fatpipe_core::{RngStream, SimTime};
use fatpipe_sim::{MessageSource, MessageTransportSpec};
use fatpipe_traffic::{ExpOnOff, OnOffParams};
use fatpipe_transport::dccp::{Ccid, DccpConfig};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// IPv4 + UDP header bytes added to each datagram of a message application over UDP.
pub const UDP_MESSAGE_HEADER: u32 = 28;

/// Voice source (exponential on/off, ns-2's EXPOO); unset fields keep seed 001's ITU-T P.59
/// values.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VoipSpec {
    /// Mean talk spurt (default "1.004s").
    pub on: Option<Duration>,
    /// Mean silence (default "1.587s").
    pub off: Option<Duration>,
    /// Rate while talking, counting the application's packets (default "80kbps").
    pub rate: Option<RateStr>,
    /// Application packet (payload handed to the transport; default "160B").
    pub packet: Option<SizeStr>,
}

/// DCCP settings (RFC 4340); unset fields keep ns-2.35's `Agent/DCCP` defaults (docs/dccp.md).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DccpSpec {
    /// Congestion Control ID: 2 (TCP-like, RFC 4341; default) or 3 (TFRC, RFC 4342).
    pub ccid: Option<i64>,
    /// Sender queue in packets (default 1000, ns-2 `sb_size_`); data written to a full queue is
    /// discarded and counted in `app_discards`.
    pub queue: Option<i64>,
    /// CCID 2: initial Ack Ratio (default 2) and initial window in packets (default 3).
    pub ack_ratio: Option<i64>,
    pub initial_window: Option<i64>,
    /// CCID 2: decay the window after an idle RTO (RFC 4341 §5.1 after RFC 2861; default true).
    /// ns-2.35's `Agent/DCCP/TCPlike` has no such rule: false runs it, as a comparison with ns-2
    /// or a reproduction of an ns-2 study needs.
    pub restart_after_idle: Option<bool>,
    /// CCID 3: TFRC rules, "rfc3448" (2003, what ns-2's module implements) or "rfc5348" (2008).
    pub tfrc: Option<String>,
    /// CCID 3: s, the segment size TFRC's equation and rate floors use (default "500B", ns-2's
    /// `s_s_`, whatever the packets' real size; RFC 5348 §4.1 means the mean packet size).
    pub segment: Option<SizeStr>,
}

/// Plan values of a voice source.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PlanVoip {
    pub on_s: f64,
    pub off_s: f64,
    pub rate_bps: u64,
    pub packet_bytes: u32,
}

/// Plan values of a DCCP connection.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PlanDccp {
    pub ccid: u8,
    pub queue_packets: u32,
    pub ack_ratio: u32,
    pub initial_window: u32,
    pub restart_after_idle: bool,
    pub tfrc: String,
    pub segment_bytes: u32,
    pub header_bytes: u32,
}

/// The transport of a flow group of `kind`, checked: "tcp" for bulk/file/web by default, "udp"
/// for cbr and voip.
pub(crate) fn transport(
    kind: &str,
    given: Option<&str>,
    gp: &str,
) -> Result<&'static str, ScenarioError> {
    let default = match kind {
        "cbr" | "voip" => "udp",
        _ => "tcp",
    };
    let t = match given.unwrap_or(default) {
        "tcp" => "tcp",
        "udp" => "udp",
        "dccp" => "dccp",
        other => {
            return Err(ScenarioError::invalid(
                format!("{gp}.transport"),
                format!("unknown transport {other:?}; allowed: \"tcp\", \"udp\", \"dccp\""),
            ))
        }
    };
    let ok = match kind {
        "bulk" => t != "udp",
        "file" | "web" | "files" | "relay" => t == "tcp",
        "cbr" => t != "tcp",
        "voip" => true,
        _ => true, // the kind itself is checked by the caller
    };
    if !ok {
        return Err(ScenarioError::invalid(
            format!("{gp}.transport"),
            format!(
                "a {kind} flow cannot run over {t}; {}",
                match kind {
                    "bulk" =>
                        "use \"tcp\" or \"dccp\" (UDP has no congestion control to pace a backlog)",
                    "cbr" => "use \"udp\" or \"dccp\"",
                    _ => "use \"tcp\"",
                }
            ),
        ));
    }
    Ok(t)
}

/// The voice source of a group, checked (errors name `{gp}.voip.<field>`).
pub(crate) fn voip(spec: Option<&VoipSpec>, gp: &str) -> Result<PlanVoip, ScenarioError> {
    let d = OnOffParams::P59;
    let s = spec.cloned().unwrap_or_default();
    let packet = match &s.packet {
        None => d.packet_bytes as u64,
        Some(p) => crate::plan::size_bytes_only(p, &format!("{gp}.voip.packet"))?,
    };
    let params = OnOffParams {
        on_mean_s: s.on.as_ref().map_or(d.on_mean_s, |x| x.value.as_secs_f64()),
        off_mean_s: s
            .off
            .as_ref()
            .map_or(d.off_mean_s, |x| x.value.as_secs_f64()),
        rate_bps: s.rate.as_ref().map_or(d.rate_bps, |r| r.value.bps()),
        packet_bytes: packet.min(u32::MAX as u64) as u32,
    };
    if packet > 65_000 {
        return Err(ScenarioError::invalid(
            format!("{gp}.voip.packet"),
            "must be at most 65000 B",
        ));
    }
    params
        .validate()
        .map_err(|e| ScenarioError::invalid(format!("{gp}.voip.{}", e.field), e.message))?;
    Ok(PlanVoip {
        on_s: params.on_mean_s,
        off_s: params.off_mean_s,
        rate_bps: params.rate_bps,
        packet_bytes: params.packet_bytes,
    })
}

/// DCCP settings from `[dccp]` overridden by `[flows.N.dccp]`, checked.
pub(crate) fn dccp(
    base: Option<&DccpSpec>,
    group: Option<&DccpSpec>,
    gp: &str,
) -> Result<PlanDccp, ScenarioError> {
    let d = DccpConfig::new(Ccid::Two);
    let mut out = PlanDccp {
        ccid: 2,
        queue_packets: d.queue_packets,
        ack_ratio: d.ack_ratio,
        initial_window: d.initial_cwnd,
        restart_after_idle: d.restart_after_idle,
        tfrc: "rfc3448".into(),
        segment_bytes: d.tfrc_segment,
        header_bytes: d.header_bytes,
    };
    for (spec, path) in [(base, "dccp".to_string()), (group, format!("{gp}.dccp"))] {
        let Some(s) = spec else { continue };
        let count = |v: i64, field: &str, what: &str| -> Result<u32, ScenarioError> {
            if v < 1 || v > u32::MAX as i64 {
                return Err(ScenarioError::invalid(
                    format!("{path}.{field}"),
                    format!("{v}: {what} must be at least 1"),
                ));
            }
            Ok(v as u32)
        };
        if let Some(c) = s.ccid {
            let ccid = Ccid::from_number(c).ok_or_else(|| {
                ScenarioError::invalid(
                    format!("{path}.ccid"),
                    format!("unknown CCID {c}; fatpipe has 2 (TCP-like, RFC 4341) and 3 (TFRC, RFC 4342)"),
                )
            })?;
            out.ccid = ccid.number();
        }
        if let Some(q) = s.queue {
            out.queue_packets = count(q, "queue", "the sender queue (packets)")?;
        }
        if let Some(r) = s.ack_ratio {
            out.ack_ratio = count(r, "ack_ratio", "the Ack Ratio")?;
        }
        if let Some(w) = s.initial_window {
            out.initial_window = count(w, "initial_window", "the initial window (packets)")?;
        }
        if let Some(r) = s.restart_after_idle {
            out.restart_after_idle = r;
        }
        if let Some(t) = &s.tfrc {
            if t != "rfc3448" && t != "rfc5348" {
                return Err(ScenarioError::invalid(
                    format!("{path}.tfrc"),
                    format!("unknown TFRC rules {t:?}; allowed: \"rfc3448\", \"rfc5348\""),
                ));
            }
            out.tfrc = t.clone();
        }
        if let Some(seg) = &s.segment {
            let b = crate::plan::size_bytes_only(seg, &format!("{path}.segment"))?;
            if b == 0 || b > 65_000 {
                return Err(ScenarioError::invalid(
                    format!("{path}.segment"),
                    format!("{b} B: must be between 1 B and 65000 B"),
                ));
            }
            out.segment_bytes = b as u32;
        }
    }
    Ok(out)
}

/// The engine's DCCP configuration for plan values.
pub fn dccp_config(p: &PlanDccp) -> DccpConfig {
    let ccid = Ccid::from_number(p.ccid as i64).expect("validated");
    let mut c = DccpConfig::new(ccid);
    c.queue_packets = p.queue_packets;
    c.ack_ratio = p.ack_ratio;
    c.initial_cwnd = p.initial_window;
    c.restart_after_idle = p.restart_after_idle;
    c.header_bytes = p.header_bytes;
    c.tfrc_segment = p.segment_bytes;
    c.tfrc = match p.tfrc.as_str() {
        "rfc5348" => fatpipe_transport::dccp::TfrcVariant::Rfc5348,
        _ => fatpipe_transport::dccp::TfrcVariant::Rfc3448,
    };
    c
}

/// The application source of a message flow.
pub fn source(
    kind: &str,
    voip: Option<&PlanVoip>,
    cbr: Option<(u64, u32)>,
    payload_of_wire: impl Fn(u32) -> u32,
    seed: u64,
    flow: u32,
) -> MessageSource {
    match kind {
        "voip" => {
            let v = voip.expect("validated");
            let params = OnOffParams {
                on_mean_s: v.on_s,
                off_mean_s: v.off_s,
                rate_bps: v.rate_bps,
                packet_bytes: v.packet_bytes,
            };
            let rng = RngStream::new(seed, &format!("flow/{flow}/voip"));
            MessageSource::Voip(ExpOnOff::new(params, rng).expect("validated"))
        }
        "cbr" => {
            let (rate, wire) = cbr.expect("validated");
            MessageSource::Cbr {
                interval: SimTime((wire as u128 * 8 * 1_000_000_000 / rate as u128) as u64),
                packet_bytes: payload_of_wire(wire),
            }
        }
        _ => MessageSource::Bulk {
            packet_bytes: payload_of_wire(cbr.map_or(1032, |c| c.1)),
        },
    }
}

/// The engine's transport for a plan transport name.
pub fn transport_spec(transport: &str, dccp: Option<&PlanDccp>) -> MessageTransportSpec {
    match transport {
        "dccp" => MessageTransportSpec::Dccp(dccp_config(dccp.expect("validated"))),
        "tcp" => MessageTransportSpec::Tcp,
        _ => MessageTransportSpec::Udp {
            header_bytes: UDP_MESSAGE_HEADER,
        },
    }
}
