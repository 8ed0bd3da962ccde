//! Congestion control, mirroring Linux `struct tcp_congestion_ops` (include/net/tcp.h) and the
//! helpers of net/ipv4/tcp_cong.c.
//!
//! The TCP sender owns the shared window state ([`TcpState`], Linux `struct tcp_sock` fields); each
//! algorithm owns only its private state and implements the hooks, named as in Linux so kernel code
//! can be read side by side. Units: windows in segments, as in Linux.
//!
//! Adding an algorithm: write `cc/<name>.rs` implementing [`CongestionOps`] with a typed
//! `Params` struct (`#[serde(deny_unknown_fields)]`), headed by its specification and every
//! constant's source, and add one line to [`REGISTRY`]. Nothing outside `cc/` changes.
//! Dispatch is `Box<dyn CongestionOps>`: one indirect call per ACK, negligible next to the rest of
//! ACK processing, and it keeps every algorithm in its own file.

pub mod bbr;
pub mod bic;
pub mod compound;
pub mod cubic;
pub mod fast;
pub mod hstcp;
pub mod htcp;
pub mod illinois;
pub mod libra;
pub mod reno;
pub mod scalable;
pub mod vegas;

use fatpipe_core::SimTime;
use thiserror::Error;

/// Linux `enum tcp_ca_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing bad has been observed.
    Open,
    /// Duplicate ACKs or SACKs seen, not yet deemed a loss.
    Disorder,
    /// Window reduced without loss recovery: by ECN (not modelled) or after a tail loss probe
    /// repaired a loss (RFC 8985 §7.4, Linux `tcp_process_tlp_ack`).
    Cwr,
    /// Fast retransmit / fast recovery.
    Recovery,
    /// Retransmission timeout.
    Loss,
}

/// Linux `enum tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission after idle (`CA_EVENT_TX_START`).
    TxStart,
    /// Congestion window restart after idle (`CA_EVENT_CWND_RESTART`).
    CwndRestart,
    /// End of congestion window reduction (`CA_EVENT_COMPLETE_CWR`).
    CompleteCwr,
    /// Retransmission timeout (`CA_EVENT_LOSS`).
    Loss,
}

/// Window state shared by the sender and the algorithm (Linux `struct tcp_sock` subset).
#[derive(Clone, Debug)]
pub struct TcpState {
    /// Congestion window, segments (`snd_cwnd`).
    pub snd_cwnd: u32,
    /// Slow-start threshold, segments (`snd_ssthresh`).
    pub snd_ssthresh: u32,
    /// Fractional additive-increase counter (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Upper bound of cwnd (`snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// cwnd before the last reduction (`prior_cwnd`), for undo.
    pub prior_cwnd: u32,
    pub ca_state: CaState,
    /// Maximum segment size, bytes.
    pub mss: u32,
    /// Smoothed RTT (RFC 6298 SRTT), if sampled.
    pub srtt: Option<SimTime>,
    /// Minimum RTT seen.
    pub min_rtt: Option<SimTime>,
    /// Segments in flight (Linux `tcp_packets_in_flight`).
    pub packets_in_flight: u32,
    /// Whether the last send was limited by cwnd (Linux `is_cwnd_limited`); algorithms should not
    /// grow cwnd when the application or the receiver window limits the flow.
    pub is_cwnd_limited: bool,
    /// Segments delivered (cumulatively ACKed or SACKed) so far.
    pub delivered: u64,
    /// Pacing rate set by rate-based algorithms, in bits/s of payload (0 = let the sender derive
    /// it). As Linux's internal pacing (`tcp_update_skb_after_send` spaces `skb->len`), each
    /// segment is spaced by its payload at this rate.
    pub pacing_rate_bps: u64,
    /// Application-limited mark of the delivery-rate estimator (Linux `tp->app_limited`): 0 when
    /// not app-limited, else the `delivered` count after which the mark ends. Kept only for
    /// algorithms with `has_cong_control`; BBR sets it in PROBE_RTT.
    pub app_limited: u64,
    /// Current time.
    pub now: SimTime,
    /// First unacknowledged segment (`snd_una`, in segments, not bytes).
    pub snd_una: u64,
    /// Next new segment to send (`snd_nxt`, in segments).
    pub snd_nxt: u64,
    /// Segments marked lost so far (Linux `tp->lost`).
    pub lost: u64,
}

impl TcpState {
    pub fn new(mss: u32, initial_window: u32, initial_ssthresh: u32) -> Self {
        TcpState {
            snd_cwnd: initial_window,
            snd_ssthresh: initial_ssthresh,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            prior_cwnd: 0,
            ca_state: CaState::Open,
            mss,
            srtt: None,
            min_rtt: None,
            packets_in_flight: 0,
            is_cwnd_limited: true,
            delivered: 0,
            pacing_rate_bps: 0,
            app_limited: crate::tcp::rate::APP_LIMITED_AT_START,
            now: SimTime::ZERO,
            snd_una: 0,
            snd_nxt: 0,
            lost: 0,
        }
    }

    /// Linux `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }
}

/// A per-ACK sample for `pkts_acked` (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// Segments newly acknowledged (cumulatively or by SACK).
    pub pkts_acked: u32,
    /// RTT measured from this ACK, if any.
    pub rtt: Option<SimTime>,
    /// Segments in flight before this ACK.
    pub in_flight: u32,
}

/// A delivery-rate sample for `cong_control` (Linux `struct rate_sample`), produced by the
/// sender's estimator ([`crate::tcp::rate`]) on every ACK when the algorithm has `cong_control`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    /// Segments delivered over `interval` (0 when there is no sample).
    pub delivered: u32,
    /// Sampling interval; zero when the sample is invalid (Linux `interval_us` ≤ 0).
    pub interval: SimTime,
    /// RTT of the segment that gave the sample, if it was not retransmitted (Linux `rtt_us`).
    pub rtt: Option<SimTime>,
    /// Segments newly marked lost by this ACK.
    pub losses: u32,
    /// The sample's segment was sent while the connection was application-limited.
    pub is_app_limited: bool,
    /// `tp.delivered` when the sample's segment was sent (`prior_delivered`), for round counting.
    pub prior_delivered: u64,
    /// Segments newly (S)ACKed by this ACK (`acked_sacked`).
    pub acked_sacked: u32,
    /// Pipe before this ACK (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// The sample's segment was a retransmission (`is_retrans`).
    pub is_retrans: bool,
}

/// Linux `struct tcp_congestion_ops`. Required: `ssthresh`, and `cong_avoid` unless
/// `has_cong_control` is true; the others are optional (defaults do what Linux does when the hook
/// is NULL).
pub trait CongestionOps: std::fmt::Debug + Send {
    /// `.name`, also the key used in scenario files.
    fn name(&self) -> &'static str;
    /// `.init`.
    fn init(&mut self, _tp: &mut TcpState) {}
    /// `.ssthresh`: the slow-start threshold after a loss; the sender applies it.
    fn ssthresh(&mut self, tp: &TcpState) -> u32;
    /// `.undo_cwnd`: the window to restore after a spurious reduction.
    fn undo_cwnd(&mut self, tp: &TcpState) -> u32 {
        reno_undo_cwnd(tp)
    }
    /// `.cong_avoid`: grow the window after `acked` newly acknowledged segments.
    fn cong_avoid(&mut self, tp: &mut TcpState, acked: u32);
    /// `.min_cwnd` of Linux up to 2.6.24 (removed in 2.6.25), as ns-2.35's TCP-Linux modules
    /// still have it: `tcp_reno_min_cwnd` (ssthresh / 2) in its reno, highspeed, scalable,
    /// illinois, vegas and compound; none in bic, cubic and htcp. Only ns-2's agent rule uses it
    /// (`cwnd_reduction = "rate-halving"`: the cwnd recovery starts from); `None` elsewhere.
    fn min_cwnd(&self, _tp: &TcpState) -> Option<u32> {
        None
    }
    /// `.set_state`: called before `tp.ca_state` changes to `new`.
    fn set_state(&mut self, _tp: &mut TcpState, _new: CaState) {}
    /// `.cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut TcpState, _ev: CaEvent) {}
    /// `.pkts_acked`: per-ACK sample (RTT, count).
    fn pkts_acked(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}
    /// Whether the algorithm has a `pkts_acked` hook. Linux calls `.pkts_acked` only when it is
    /// not NULL (`tcp_clean_rtx_queue`); an algorithm without one returns false, and the sender
    /// (which reads this once, at construction) then skips the call on every ACK.
    fn has_pkts_acked(&self) -> bool {
        true
    }
    /// Whether `cong_control` replaces `cong_avoid` (rate-based algorithms such as BBR).
    fn has_cong_control(&self) -> bool {
        false
    }
    /// `.cong_control`: set cwnd and pacing rate from a delivery-rate sample.
    fn cong_control(&mut self, _tp: &mut TcpState, _rs: &RateSample) {}
}

// ---- Shared helpers (net/ipv4/tcp_cong.c) ------------------------------------------------------

/// Linux `tcp_slow_start`: grow cwnd by one per acked segment up to ssthresh; return the acked
/// segments left over for congestion avoidance.
pub fn slow_start(tp: &mut TcpState, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let used = cwnd - tp.snd_cwnd.min(cwnd);
    let left = acked - used.min(acked);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// Linux `tcp_cong_avoid_ai`: additive increase of one segment per `w` acked segments.
pub fn cong_avoid_ai(tp: &mut TcpState, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now (Linux comment).
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// Linux `tcp_reno_ssthresh`: half the window, at least 2 segments (RFC 5681 Eq. 4 with
/// FlightSize approximated by cwnd, as Linux does).
pub fn reno_ssthresh(tp: &TcpState) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// Linux 2.6.22 `tcp_reno_min_cwnd`: half the (new) slow-start threshold. See
/// [`CongestionOps::min_cwnd`].
pub fn reno_min_cwnd(tp: &TcpState) -> Option<u32> {
    Some(tp.snd_ssthresh / 2)
}

/// Linux `tcp_reno_undo_cwnd`.
pub fn reno_undo_cwnd(tp: &TcpState) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

/// Linux `tcp_reno_cong_avoid`: slow start below ssthresh, then one segment per RTT.
pub fn reno_cong_avoid(tp: &mut TcpState, acked: u32) {
    if !tp.is_cwnd_limited {
        return;
    }
    let mut acked = acked;
    if tp.in_slow_start() {
        acked = slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    cong_avoid_ai(tp, w, acked);
}

// ---- Registry (Linux tcp_ca_find) --------------------------------------------------------------

/// Errors from selecting an algorithm.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum CcError {
    #[error("unknown congestion control {name:?}; known: {known}")]
    UnknownAlgorithm { name: String, known: String },
    #[error("bad parameters for congestion control {name:?}: {message}")]
    BadParams { name: String, message: String },
}

type Constructor = fn(&toml::Table) -> Result<Box<dyn CongestionOps>, String>;

/// One documented parameter of an algorithm, as `fatpipe algorithms` shows it. `default` is a
/// TOML literal (`"0.7"`, `"true"`, `"\"linux\""`); a registry test checks that every algorithm
/// builds from its documented defaults, so the table cannot drift from the `Params` struct.
#[derive(Clone, Copy, Debug)]
pub struct ParamDoc {
    pub name: &'static str,
    pub default: &'static str,
    /// Unit of the value ("segments", "s", "1" for a pure number, "" for names and flags).
    pub unit: &'static str,
    pub doc: &'static str,
}

/// One entry of the registry.
pub struct CcInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Specification and implementation it mirrors (paper/RFC, Linux file, ns-2 module).
    pub citation: &'static str,
    pub params: &'static [ParamDoc],
    pub build: Constructor,
}

/// Every built-in algorithm, by the name used in scenario files.
pub const REGISTRY: &[CcInfo] = &[
    CcInfo {
        name: "reno",
        summary: reno::SUMMARY,
        citation: reno::CITATION,
        params: reno::PARAMS,
        build: reno::build,
    },
    CcInfo {
        name: "newreno",
        summary: reno::SUMMARY_NEWRENO,
        citation: reno::CITATION,
        params: reno::PARAMS,
        build: reno::build,
    },
    // registry: one entry per algorithm below this line
    CcInfo {
        name: "highspeed",
        summary: hstcp::SUMMARY,
        citation: hstcp::CITATION,
        params: hstcp::PARAMS,
        build: hstcp::build,
    },
    CcInfo {
        name: "hstcp",
        summary: "alias of highspeed (RFC 3649)",
        citation: hstcp::CITATION,
        params: hstcp::PARAMS,
        build: hstcp::build,
    },
    CcInfo {
        name: "scalable",
        summary: scalable::SUMMARY,
        citation: scalable::CITATION,
        params: scalable::PARAMS,
        build: scalable::build,
    },
    CcInfo {
        name: "bic",
        summary: bic::SUMMARY,
        citation: bic::CITATION,
        params: bic::PARAMS,
        build: bic::build,
    },
    CcInfo {
        name: "htcp",
        summary: htcp::SUMMARY,
        citation: htcp::CITATION,
        params: htcp::PARAMS,
        build: htcp::build,
    },
    CcInfo {
        name: "illinois",
        summary: illinois::SUMMARY,
        citation: illinois::CITATION,
        params: illinois::PARAMS,
        build: illinois::build,
    },
    CcInfo {
        name: "vegas",
        summary: vegas::SUMMARY,
        citation: vegas::CITATION,
        params: vegas::PARAMS,
        build: vegas::build,
    },
    CcInfo {
        name: "cubic",
        summary: cubic::SUMMARY,
        citation: cubic::CITATION,
        params: cubic::PARAMS,
        build: cubic::build,
    },
    CcInfo {
        name: "compound",
        summary: compound::SUMMARY,
        citation: compound::CITATION,
        params: compound::PARAMS,
        build: compound::build,
    },
    CcInfo {
        name: "ctcp",
        summary: "alias of compound (Compound TCP)",
        citation: compound::CITATION,
        params: compound::PARAMS,
        build: compound::build,
    },
    CcInfo {
        name: "bbr",
        summary: bbr::SUMMARY,
        citation: bbr::CITATION,
        params: bbr::PARAMS,
        build: bbr::build,
    },
    CcInfo {
        name: "fast",
        summary: fast::SUMMARY,
        citation: fast::CITATION,
        params: fast::PARAMS,
        build: fast::build,
    },
    CcInfo {
        name: "libra",
        summary: libra::SUMMARY,
        citation: libra::CITATION,
        params: libra::PARAMS,
        build: libra::build,
    },
];

/// Names of every registered algorithm.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|c| c.name).collect()
}

/// Build an algorithm by name with typed parameters (unknown names or parameters are errors).
pub fn by_name(name: &str, params: &toml::Table) -> Result<Box<dyn CongestionOps>, CcError> {
    let info =
        REGISTRY
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| CcError::UnknownAlgorithm {
                name: name.to_string(),
                known: names().join(", "),
            })?;
    (info.build)(params).map_err(|message| CcError::BadParams {
        name: name.to_string(),
        message,
    })
}

/// Deserialize a parameter table into an algorithm's typed `Params` struct. Unknown keys are
/// rejected by `deny_unknown_fields` with the list of valid ones.
pub fn parse_params<P: serde::de::DeserializeOwned>(params: &toml::Table) -> Result<P, String> {
    toml::Value::Table(params.clone())
        .try_into::<P>()
        .map_err(|e| e.to_string().trim().to_string())
}

/// Range check for a parameter: `Err("name = value: must be <what>")` unless `ok`.
pub fn check(
    ok: bool,
    name: &str,
    value: impl std::fmt::Display,
    what: &str,
) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{name} = {value}: must be {what}"))
    }
}

/// The registry entry of `name`.
pub fn info(name: &str) -> Option<&'static CcInfo> {
    REGISTRY.iter().find(|c| c.name == name)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn state(cwnd: u32, ssthresh: u32) -> TcpState {
        TcpState::new(1460, cwnd, ssthresh)
    }

    /// An algorithm that says it has no `pkts_acked` hook (so the sender never calls it) must
    /// indeed do nothing in it: neither the shared state nor its own changes.
    #[test]
    fn algorithms_without_pkts_acked_ignore_it() {
        let mut without = 0;
        for info in REGISTRY {
            let mut cc = by_name(info.name, &toml::Table::new()).unwrap();
            let mut tp = state(20, 10);
            cc.init(&mut tp);
            if cc.has_pkts_acked() {
                continue;
            }
            without += 1;
            let (tp_before, cc_before) = (format!("{tp:?}"), format!("{cc:?}"));
            let sample = AckSample {
                pkts_acked: 3,
                rtt: Some(SimTime::from_millis(50)),
                in_flight: 15,
            };
            cc.pkts_acked(&mut tp, &sample);
            assert_eq!(format!("{tp:?}"), tp_before, "{}", info.name);
            assert_eq!(format!("{cc:?}"), cc_before, "{}", info.name);
        }
        assert!(
            without >= 3,
            "reno, highspeed and scalable have no pkts_acked hook"
        );
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_leftover() {
        let mut tp = state(8, 10);
        // 8 + 5 would be 13; capped at 10, 3 acks left for congestion avoidance.
        assert_eq!(slow_start(&mut tp, 5), 3);
        assert_eq!(tp.snd_cwnd, 10);
    }

    #[test]
    fn cong_avoid_ai_adds_one_segment_per_window_of_acks() {
        let mut tp = state(10, 5);
        for _ in 0..9 {
            cong_avoid_ai(&mut tp, 10, 1);
        }
        assert_eq!(tp.snd_cwnd, 10);
        cong_avoid_ai(&mut tp, 10, 1);
        assert_eq!(tp.snd_cwnd, 11);
        assert_eq!(tp.snd_cwnd_cnt, 0);
    }

    /// Every algorithm builds with no parameters and with its documented defaults, its name is
    /// its registry name (or the one it is an alias of), and an unknown parameter is rejected with
    /// the list of valid ones.
    #[test]
    fn registry_entries_build_from_their_documented_defaults() {
        for info in REGISTRY {
            let cc = by_name(info.name, &toml::Table::new())
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            assert!(
                cc.name() == info.name || REGISTRY.iter().any(|o| o.name == cc.name()),
                "{} builds {}",
                info.name,
                cc.name()
            );
            assert!(!info.citation.is_empty() && !info.summary.is_empty());
            let mut t = toml::Table::new();
            for p in info.params {
                let v: toml::Table =
                    toml::from_str(&format!("v = {}", p.default)).unwrap_or_else(|e| {
                        panic!("{}.{} default {:?}: {e}", info.name, p.name, p.default)
                    });
                t.insert(p.name.to_string(), v["v"].clone());
                assert!(!p.doc.is_empty(), "{}.{} undocumented", info.name, p.name);
            }
            by_name(info.name, &t).unwrap_or_else(|e| panic!("{} defaults: {e}", info.name));
            let mut bad = toml::Table::new();
            bad.insert("no_such_param".into(), toml::Value::Integer(1));
            let err = by_name(info.name, &bad).unwrap_err().to_string();
            assert!(err.contains("no_such_param"), "{}: {err}", info.name);
            for p in info.params {
                assert!(
                    err.contains(p.name),
                    "{}: error does not list {}: {err}",
                    info.name,
                    p.name
                );
            }
        }
    }

    #[test]
    fn registry_rejects_unknown_names_and_params() {
        assert!(matches!(
            by_name("vegas2", &toml::Table::new()),
            Err(CcError::UnknownAlgorithm { .. })
        ));
        let mut p = toml::Table::new();
        p.insert("beta".into(), toml::Value::Float(0.7));
        assert!(matches!(
            by_name("reno", &p),
            Err(CcError::BadParams { .. })
        ));
        assert_eq!(by_name("reno", &toml::Table::new()).unwrap().name(), "reno");
    }
}
