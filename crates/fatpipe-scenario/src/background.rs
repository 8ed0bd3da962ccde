//! Background traffic: `[background]` becomes ordinary flow groups, across each bottleneck in
//! both directions, before elaboration, so background flows are planned, seeded and reported
//! exactly like the flows a user writes (with `role = "background"`).
//!
//! Seed 000 (Michel 2009, §4.0) loads each bottleneck with background traffic of 20, 50 or 80 %
//! of its capacity in both directions, made of 20 % UDP CBR, 24 % FTP and 56 % web, after Ha,
//! Le, Rhee & Xu, "Impact of background traffic on performance of high-speed TCP variant
//! protocols", Computer Networks 51(7), 2007. Each part offers its share:
//!
//! - **CBR**: one UDP source per direction at exactly its share (wire rate).
//! - **FTP**: `ftp_flows` long-lived TCP flows per direction, each window-limited: its receiver
//!   window is its share times the path's base round trip (propagation plus one data packet's
//!   and one ACK's serialisation per hop), so on an uncongested path it sends exactly its share
//!   and under congestion it backs off like any TCP. (A long-lived TCP flow has no offered rate
//!   of its own; the window limit is this project's choice to make the 24 % meaningful.)
//! - **Web**: `web_sources` open-loop page sources per direction (fatpipe-traffic's SURGE model),
//!   each at an equal part of the share; offered load = page rate x mean page bytes exactly in
//!   expectation, whatever the network does.

use crate::error::ScenarioError;
use crate::schema::{BackgroundSpec, FlowGroup, MixSpec, TcpSpec};
use crate::units::{Duration, RateStr, SizeStr};

/// Ha et al. 2007's mix as seed 000 gives it.
pub const DEFAULT_MIX: MixSpec = MixSpec {
    cbr: 0.20,
    ftp: 0.24,
    web: 0.56,
};
pub(crate) const DEFAULT_FTP_FLOWS: u32 = 2;
pub(crate) const DEFAULT_WEB_SOURCES: u32 = 2;
const DEFAULT_CBR_PACKET: &str = "1500B";
const DEFAULT_START_SPREAD: &str = "1s";
/// How far from 1 the mix may sum (rounding in hand-written shares such as 0.333).
const MIX_TOLERANCE: f64 = 1e-6;

/// Two hosts on either side of one bottleneck, and that bottleneck's rate.
#[derive(Clone, Debug)]
pub struct Site {
    pub left: String,
    pub right: String,
    pub rate_bps: u64,
}

/// Check `[background]` and expand it into flow groups over `sites`. `base_rtt_ns(src, dst)` is
/// the base round trip of a full-sized data packet from src and its ACK (see the module doc);
/// `mss` and `wire` the payload and wire bytes of a full segment.
pub fn expand(
    bg: &BackgroundSpec,
    sites: &[Site],
    base_rtt_ns: &dyn Fn(&str, &str) -> u64,
    mss: u64,
    wire: u64,
) -> Result<Vec<FlowGroup>, ScenarioError> {
    validate(bg)?;
    let mix = bg.mix.clone().unwrap_or(DEFAULT_MIX);
    let ftp_flows = bg.ftp_flows.unwrap_or(DEFAULT_FTP_FLOWS);
    let web_sources = bg.web_sources.unwrap_or(DEFAULT_WEB_SOURCES);
    let packet = bg
        .cbr_packet
        .clone()
        .unwrap_or_else(|| SizeStr::new(DEFAULT_CBR_PACKET));
    let spread = bg
        .start_spread
        .clone()
        .unwrap_or_else(|| Duration::new(DEFAULT_START_SPREAD));
    let mut groups = Vec::new();
    if bg.load == 0.0 {
        return Ok(groups);
    }
    for site in sites {
        let share = |part: f64| bg.load * part * site.rate_bps as f64;
        for (src, dst) in [(&site.left, &site.right), (&site.right, &site.left)] {
            let base = FlowGroup {
                role: Some("background".into()),
                src: Some(src.clone()),
                dst: Some(dst.clone()),
                start_spread: Some(spread.clone()),
                tcp: bg.tcp.clone(),
                ..FlowGroup::default()
            };
            if mix.cbr > 0.0 {
                groups.push(FlowGroup {
                    kind: Some("cbr".into()),
                    rate: Some(rate(share(mix.cbr))),
                    packet: Some(packet.clone()),
                    tcp: None,
                    ..base.clone()
                });
            }
            if mix.ftp > 0.0 && ftp_flows > 0 {
                let per_flow = share(mix.ftp) / ftp_flows as f64;
                let rtt_s = base_rtt_ns(src, dst) as f64 * 1e-9;
                // Shares are wire rates; the window counts payload (mss of every wire bytes).
                let payload = per_flow / 8.0 * rtt_s * mss as f64 / wire as f64;
                // Whole segments (the sender counts its window in segments), rounded to nearest.
                let rwnd = (payload / mss as f64).round().max(1.0) as u64 * mss;
                let mut tcp: TcpSpec = bg.tcp.clone().unwrap_or_default();
                tcp.rwnd = Some(format!("{rwnd}B"));
                groups.push(FlowGroup {
                    kind: Some("bulk".into()),
                    count: Some(ftp_flows),
                    tcp: Some(tcp),
                    ..base.clone()
                });
            }
            if mix.web > 0.0 && web_sources > 0 {
                groups.push(FlowGroup {
                    kind: Some("web".into()),
                    count: Some(web_sources),
                    load: Some(rate(share(mix.web) / web_sources as f64)),
                    web: bg.web.clone(),
                    ..base.clone()
                });
            }
        }
    }
    Ok(groups)
}

fn rate(bps: f64) -> RateStr {
    RateStr::new(&format!("{}bps", bps.round().max(1.0) as u64))
}

fn validate(bg: &BackgroundSpec) -> Result<(), ScenarioError> {
    if !(bg.load.is_finite() && (0.0..1.0).contains(&bg.load)) {
        return Err(ScenarioError::invalid(
            "background.load",
            format!(
                "{} is outside [0, 1): give the fraction of each bottleneck, e.g. 0.5 for 50 %",
                bg.load
            ),
        ));
    }
    if let Some(m) = &bg.mix {
        for (name, v) in [("cbr", m.cbr), ("ftp", m.ftp), ("web", m.web)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ScenarioError::invalid(
                    format!("background.mix.{name}"),
                    format!("{v} must be a share >= 0"),
                ));
            }
        }
        let sum = m.cbr + m.ftp + m.web;
        if (sum - 1.0).abs() > MIX_TOLERANCE {
            return Err(ScenarioError::invalid(
                "background.mix",
                format!(
                    "the shares sum to {sum} ({} + {} + {}); they must sum to 1 (100 %), e.g. cbr = 0.20, ftp = 0.24, web = 0.56",
                    m.cbr, m.ftp, m.web
                ),
            ));
        }
    }
    if let Some(p) = &bg.cbr_packet {
        if p.bytes(1500) == 0 {
            return Err(ScenarioError::invalid(
                "background.cbr_packet",
                "must be positive, e.g. \"1500B\"",
            ));
        }
    }
    if let Some(web) = &bg.web {
        crate::web_spec::model(web).map_err(|e| e.within_path("background.web"))?;
    }
    Ok(())
}
