//! The emulator's configuration file (the contract with the testbed driver):
//!
//! ```json
//! {"seed": 1,
//!  "links": [{"name": "r0->r1",
//!             "a": {"netns": "NS", "ifname": "IF"}, "b": {"netns": "NS2", "ifname": "IF2"},
//!             "ab": {"rate_bps": 1000000000, "delay_ns": 50000000, "loss": 0.0,
//!                    "queue": {"kind": "droptail", "limit_packets": 100, "limit_bytes": null}},
//!             "ba": {...}}],
//!  "stats_path": "/tmp/x.json",
//!  "tuning": {"spin_ns": 50000, "spin_share": 0.1, "awake_share": 0.3, "coalesce_ns": 50000, "batch": 64, "rx_buffer_bytes": 67108864,
//!             "realtime_priority": 20, "cpu": 1}}
//! ```
//!
//! `queue` is the plan's queue object (`fatpipe plan` prints it under `links[i].queue`), read by
//! `fatpipe_scenario::plan::PlanQueue::from_json`. `tuning` is optional. Every error names its
//! field.

use fatpipe_core::{Rate, SimTime};
use fatpipe_scenario::plan::PlanQueue;
use serde::Deserialize;
use std::collections::HashSet;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

fn one() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default = "one")]
    seed: u64,
    links: Vec<RawLink>,
    stats_path: String,
    #[serde(default)]
    tuning: Tuning,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    name: String,
    a: End,
    b: End,
    ab: RawDir,
    ba: RawDir,
}

/// An interface in a namespace ("" = the emulator's own; a name from `ip netns`; or a path
/// such as /proc/PID/ns/net).
#[derive(Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct End {
    #[serde(default)]
    pub netns: String,
    pub ifname: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDir {
    rate_bps: u64,
    delay_ns: u64,
    #[serde(default)]
    loss: f64,
    queue: serde_json::Value,
}

/// Knobs of the emulator itself (not of the model); all optional.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Tuning {
    /// Wake this long before a departure and spin to it (ns; default 50 µs).
    pub spin_ns: Option<u64>,
    /// At most this share of wall time is spent spinning (default 0.1), measured over windows
    /// of 100 ms: at 1 Gb/s and more departures are closer together than `spin_ns` and an
    /// unbounded spin keeps the core busy, which under SCHED_FIFO runs into the kernel's
    /// real-time throttle (the thread is then suspended for tens of ms).
    pub spin_share: Option<f64>,
    /// Pin the emulator's thread to this CPU (default: not pinned). The testbed pins it and
    /// steers the hosts' receive processing (RPS) to the other CPUs.
    pub cpu: Option<usize>,
    /// Frames per recvmmsg/sendmmsg call (default 64).
    pub batch: Option<usize>,
    /// Receive buffer of each socket, bytes (default 64 MiB).
    pub rx_buffer_bytes: Option<usize>,
    /// SCHED_FIFO priority of the emulator's thread (default 20; 0 = ordinary scheduling).
    pub realtime_priority: Option<i32>,
    /// How the loop sleeps to a deadline: "epoll_pwait2" (default, one syscall) or "timerfd".
    pub timer: Option<String>,
    /// At most this share of wall time (default 0.3) is spent awake while departures are
    /// served one wake-up each, measured over windows of 100 ms; past it the loop coalesces.
    pub awake_share: Option<f64>,
    /// Coalescing: sleep to the next departure plus this much (ns; default 50 µs; 0 = never
    /// coalesce) and send everything due by then in one batch. A saturated 1 Gb/s link
    /// otherwise wakes the loop for every frame (12 µs apart), which costs ~0.9 of a core on a
    /// virtual machine and meets the real-time throttle (departures then wait tens of ms);
    /// coalescing bounds the extra lateness by this value.
    pub coalesce_ns: Option<u64>,
}

impl Tuning {
    pub fn spin_ns(&self) -> u64 {
        self.spin_ns.unwrap_or(50_000)
    }
    pub fn spin_share(&self) -> f64 {
        self.spin_share.unwrap_or(0.1)
    }
    pub fn awake_share(&self) -> f64 {
        self.awake_share.unwrap_or(0.3)
    }
    pub fn coalesce_ns(&self) -> u64 {
        self.coalesce_ns.unwrap_or(50_000)
    }
    pub fn batch(&self) -> usize {
        self.batch.unwrap_or(64)
    }
    pub fn realtime_priority(&self) -> i32 {
        self.realtime_priority.unwrap_or(20)
    }
    pub fn rx_buffer_bytes(&self) -> usize {
        self.rx_buffer_bytes.unwrap_or(64 << 20)
    }
}

/// One direction of a link, checked.
#[derive(Clone, Debug)]
pub struct DirConfig {
    pub rate: Rate,
    pub delay: SimTime,
    pub loss: f64,
    pub queue: PlanQueue,
}

#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub name: String,
    pub a: End,
    pub b: End,
    pub ab: DirConfig,
    pub ba: DirConfig,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    pub links: Vec<LinkConfig>,
    pub stats_path: String,
    pub tuning: Tuning,
}

fn dir(raw: RawDir, path: &str) -> Result<DirConfig, ConfigError> {
    if raw.rate_bps == 0 {
        return Err(ConfigError::new(
            format!("{path}.rate_bps"),
            "a link needs a positive rate in bits per second",
        ));
    }
    if !(0.0..=1.0).contains(&raw.loss) {
        return Err(ConfigError::new(
            format!("{path}.loss"),
            "a loss probability must be within [0, 1]",
        ));
    }
    let queue = PlanQueue::from_json(&raw.queue, &format!("{path}.queue"))
        .map_err(|e| ConfigError::new(e.path, e.message))?;
    Ok(DirConfig {
        rate: Rate(raw.rate_bps),
        delay: SimTime(raw.delay_ns),
        loss: raw.loss,
        queue,
    })
}

/// Parse and check a configuration text.
pub fn parse(text: &str) -> Result<Config, ConfigError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let raw: RawConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        let p = e.path().to_string();
        ConfigError::new(
            if p == "." { String::new() } else { p },
            e.into_inner().to_string(),
        )
    })?;
    if raw.links.is_empty() {
        return Err(ConfigError::new("links", "give at least one link"));
    }
    if raw.stats_path.is_empty() {
        return Err(ConfigError::new(
            "stats_path",
            "give a file to write the statistics to",
        ));
    }
    if raw
        .tuning
        .realtime_priority
        .is_some_and(|p| !(0..=99).contains(&p))
    {
        return Err(ConfigError::new(
            "tuning.realtime_priority",
            "a SCHED_FIFO priority is within 1..=99 (0: ordinary scheduling)",
        ));
    }
    if let Some(t) = raw.tuning.timer.as_deref() {
        if t != "epoll_pwait2" && t != "timerfd" {
            return Err(ConfigError::new(
                "tuning.timer",
                format!("unknown timer {t:?}; allowed: \"epoll_pwait2\", \"timerfd\""),
            ));
        }
    }
    if raw.tuning.coalesce_ns.is_some_and(|c| c > 10_000_000) {
        return Err(ConfigError::new(
            "tuning.coalesce_ns",
            "at most 10 ms (10000000): it is the lateness allowed to save wake-ups",
        ));
    }
    for (field, share, zero) in [
        (
            "tuning.awake_share",
            raw.tuning.awake_share,
            "always coalesce",
        ),
        ("tuning.spin_share", raw.tuning.spin_share, "never spin"),
    ] {
        if share.is_some_and(|x| !(0.0..=1.0).contains(&x)) {
            return Err(ConfigError::new(
                field,
                format!("a share of wall time is within 0..=1 (0: {zero})"),
            ));
        }
    }
    if let Some(c) = raw.tuning.cpu {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(ConfigError::new(
                "tuning.cpu",
                format!("CPU {c} is beyond the largest CPU number Linux supports"),
            ));
        }
    }
    if raw.tuning.batch == Some(0) {
        return Err(ConfigError::new(
            "tuning.batch",
            "a batch holds at least one frame",
        ));
    }
    let mut names = HashSet::new();
    let mut ends = HashSet::new();
    let mut links = Vec::new();
    for (i, l) in raw.links.into_iter().enumerate() {
        let p = format!("links[{i}]");
        if l.name.is_empty() || !names.insert(l.name.clone()) {
            return Err(ConfigError::new(
                format!("{p}.name"),
                format!("link names must be non-empty and distinct ({:?})", l.name),
            ));
        }
        for (e, side) in [(&l.a, "a"), (&l.b, "b")] {
            if e.ifname.is_empty() {
                return Err(ConfigError::new(
                    format!("{p}.{side}.ifname"),
                    "give an interface name",
                ));
            }
            if !ends.insert(e.clone()) {
                return Err(ConfigError::new(
                    format!("{p}.{side}"),
                    format!(
                        "interface {:?} in netns {:?} is used twice; each interface belongs to one link end",
                        e.ifname, e.netns
                    ),
                ));
            }
        }
        links.push(LinkConfig {
            ab: dir(l.ab, &format!("{p}.ab"))?,
            ba: dir(l.ba, &format!("{p}.ba"))?,
            name: l.name,
            a: l.a,
            b: l.b,
        });
    }
    Ok(Config {
        seed: raw.seed,
        links,
        stats_path: raw.stats_path,
        tuning: raw.tuning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> serde_json::Value {
        serde_json::json!({
            "seed": 3,
            "links": [{
                "name": "r0->r1",
                "a": {"netns": "x", "ifname": "e0"},
                "b": {"netns": "x", "ifname": "e1"},
                "ab": {"rate_bps": 100000000u64, "delay_ns": 20000000u64, "loss": 0.01,
                       "queue": {"kind": "droptail", "limit_packets": 100, "limit_bytes": null}},
                "ba": {"rate_bps": 100000000u64, "delay_ns": 20000000u64,
                       "queue": {"kind": "codel", "limit_packets": 1000, "limit_bytes": null,
                                 "aqm": {"kind": "codel", "target_ns": 5000000, "interval_ns": 100000000,
                                         "mtu_bytes": 1500, "ecn": true}}}
            }],
            "stats_path": "/tmp/s.json"
        })
    }

    fn err(edit: impl FnOnce(&mut serde_json::Value)) -> ConfigError {
        let mut v = good();
        edit(&mut v);
        parse(&v.to_string()).unwrap_err()
    }

    #[test]
    fn a_good_config_parses() {
        let c = parse(&good().to_string()).unwrap();
        assert_eq!(c.seed, 3);
        assert_eq!(c.links[0].ab.loss, 0.01);
        assert_eq!(c.links[0].ba.loss, 0.0);
        assert_eq!(c.links[0].ba.queue.kind, "codel");
        assert_eq!(c.tuning, Tuning::default());
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(
            err(|v| v["links"][0]["ab"]["rate_bps"] = 0.into()).path,
            "links[0].ab.rate_bps"
        );
        assert_eq!(
            err(|v| v["links"][0]["ba"]["loss"] = 1.5.into()).path,
            "links[0].ba.loss"
        );
        assert_eq!(
            err(|v| v["links"][0]["ab"]["delay_ns"] = "20ms".into()).path,
            "links[0].ab.delay_ns"
        );
        assert_eq!(
            err(|v| v["links"][0]["ab"]["queue"]["limit_packets"] = 0.into()).path,
            "links[0].ab.queue.limit_packets"
        );
        assert_eq!(
            err(|v| v["links"][0]["ba"]["queue"]["aqm"]["target_ns"] = (-1).into()).path,
            "links[0].ba.queue.aqm.target_ns"
        );
        assert_eq!(
            err(|v| v["links"][0]["b"]["ifname"] = "e0".into()).path,
            "links[0].b"
        );
        assert_eq!(
            err(|v| v["links"][0]["a"]["ifname"] = "".into()).path,
            "links[0].a.ifname"
        );
        assert!(err(|v| v["links"][0]["speed"] = 1.into())
            .message
            .contains("speed"));
        assert_eq!(err(|v| v["links"] = serde_json::json!([])).path, "links");
        assert_eq!(
            err(|v| {
                v.as_object_mut().unwrap().remove("stats_path");
            })
            .path,
            ""
        );
        assert_eq!(
            err(|v| v["tuning"] = serde_json::json!({"batch": 0})).path,
            "tuning.batch"
        );
        assert_eq!(
            err(|v| v["tuning"] = serde_json::json!({"spin_share": 1.5})).path,
            "tuning.spin_share"
        );
        assert_eq!(
            err(|v| v["tuning"] = serde_json::json!({"awake_share": -0.1})).path,
            "tuning.awake_share"
        );
        assert_eq!(
            err(|v| v["tuning"] = serde_json::json!({"coalesce_ns": 20_000_000})).path,
            "tuning.coalesce_ns"
        );
        assert_eq!(
            err(|v| v["tuning"] = serde_json::json!({"cpu": 100_000})).path,
            "tuning.cpu"
        );
        assert!(parse("{not json").is_err());
    }
}
