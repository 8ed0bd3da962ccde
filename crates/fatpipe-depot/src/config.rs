//! The configuration file (TOML) and its command-line overrides.
//!
//! One file describes one machine: `[depot]` for `serve`, `[origin]` for `origin`, and the
//! sections both share (`[limits]`, `[downstream]`, `[upstream]`, `[metrics]`, `[log]`). Every key
//! has a default except the listen address, the key file and (for a depot) the allow-list, and
//! any key can be overridden on the command line with `--set section.key=value` (the value is
//! read as TOML, so `--set limits.max_transfers=64`, `--set 'depot.allow=["10.0.0.0/8"]'`).
//! Unknown keys are errors (a typo must not silently fall back to a default).
//! docs/depot.md has the reference.

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub depot: Option<DepotSection>,
    pub origin: Option<OriginSection>,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub downstream: SocketOpts,
    #[serde(default)]
    pub upstream: Upstream,
    #[serde(default)]
    pub metrics: Metrics,
    #[serde(default)]
    pub log: Log,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DepotSection {
    pub listen: SocketAddr,
    pub key_file: PathBuf,
    /// Next hops this depot may connect to (see allow.rs for the forms). Required: an empty list
    /// would refuse everything, so it is an error at start-up (daemon.rs), not a silent default.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Refuse URLs whose expiry is further ahead than this (seconds): bounds the life of any URL
    /// this depot honours, whatever the signer chose. Default one day.
    #[serde(default = "default_max_validity")]
    pub max_validity_s: u64,
    /// Application buffer between the two connections, in bytes (the upstream reader's buffer;
    /// hyper's minimum is 8192). Default 256 KiB.
    #[serde(default = "default_buffer")]
    pub buffer_bytes: usize,
    /// Relay response bodies with splice(2) through a pipe instead of through user space.
    #[serde(default)]
    pub splice: bool,
}

fn default_max_validity() -> u64 {
    86_400
}
fn default_buffer() -> usize {
    256 * 1024
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginSection {
    pub listen: SocketAddr,
    /// Directory whose files are served (nothing outside it, no directory listings).
    pub root: PathBuf,
    pub key_file: PathBuf,
    /// How the last depot reaches this origin (the last hop of every chain). Default: `listen`,
    /// which must then be a specific address, not 0.0.0.0.
    pub advertise: Option<SocketAddr>,
    /// Lifetime of the chain URLs this origin signs, seconds. Default one hour.
    #[serde(default = "default_validity")]
    pub validity_s: u64,
    /// Static chains: the first whose `prefix` starts the request path is used.
    #[serde(default)]
    pub chain: Vec<ChainRule>,
    /// Extension (not in the paper): choose among candidate chains by balancing segment RTTs.
    pub auto: Option<AutoSection>,
}

fn default_validity() -> u64 {
    3600
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainRule {
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// Depots, the client's side first. Empty: serve these paths directly.
    pub depots: Vec<SocketAddr>,
}

fn default_prefix() -> String {
    "/".into()
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoSection {
    /// Candidate chains with the RTTs (ms) of their segments that the origin cannot measure
    /// itself: depot-to-depot and last-depot-to-origin, in chain order.
    pub candidate: Vec<AutoCandidate>,
    /// Redirect only when the predicted gain RTT_e2e / max segment RTT reaches this. Default 1.5.
    #[serde(default = "default_min_gain")]
    pub min_gain: f64,
}

fn default_min_gain() -> f64 {
    1.5
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoCandidate {
    pub depots: Vec<SocketAddr>,
    /// RTT in ms of each segment after the first: D1-D2, ..., Dk-origin (len = depots.len()).
    pub segment_rtt_ms: Vec<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Request head (request line and headers) in bytes; larger gets 431 and a close.
    pub max_header_bytes: usize,
    pub max_headers: usize,
    /// Transfers in progress; one more gets 503.
    pub max_transfers: usize,
    /// Open client connections (idle keep-alive ones included); more are closed at accept.
    pub max_connections: usize,
    /// A client must send its whole request head within this (slowloris), and an idle
    /// keep-alive connection is closed after it.
    pub header_timeout_s: f64,
    /// A client that accepts no byte for this long is dropped (a stalled reader).
    pub send_timeout_s: f64,
    pub connect_timeout_s: f64,
    /// From the request sent upstream to its response head.
    pub upstream_header_timeout_s: f64,
    /// Longest silence of the upstream while a body is relayed.
    pub upstream_read_timeout_s: f64,
    /// After SIGTERM, transfers have this long to finish; then they are aborted.
    pub shutdown_grace_s: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_bytes: 8192,
            max_headers: 64,
            max_transfers: 1024,
            max_connections: 4096,
            header_timeout_s: 10.0,
            send_timeout_s: 60.0,
            connect_timeout_s: 5.0,
            upstream_header_timeout_s: 30.0,
            upstream_read_timeout_s: 60.0,
            shutdown_grace_s: 30.0,
        }
    }
}

/// Options of a TCP socket: congestion control (TCP_CONGESTION) and buffer sizes (SO_SNDBUF,
/// SO_RCVBUF; unset leaves the kernel's autotuning on).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct SocketOpts {
    pub congestion: Option<String>,
    pub send_buffer: Option<usize>,
    pub recv_buffer: Option<usize>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upstream {
    #[serde(flatten)]
    pub default: SocketOpts,
    /// Per next hop overrides.
    #[serde(default)]
    pub peer: Vec<Peer>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peer {
    pub addr: SocketAddr,
    #[serde(flatten)]
    pub opts: SocketOpts,
}

impl Upstream {
    /// The options for a connection to `hop`: the peer's own entries over the defaults.
    pub fn for_hop(&self, hop: &SocketAddr) -> SocketOpts {
        let mut o = self.default.clone();
        if let Some(p) = self.peer.iter().find(|p| p.addr == *hop) {
            if p.opts.congestion.is_some() {
                o.congestion = p.opts.congestion.clone();
            }
            if p.opts.send_buffer.is_some() {
                o.send_buffer = p.opts.send_buffer;
            }
            if p.opts.recv_buffer.is_some() {
                o.recv_buffer = p.opts.recv_buffer;
            }
        }
        o
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Address of the Prometheus endpoint (`GET /metrics`); none by default. Keep it off the
    /// public interface.
    pub listen: Option<SocketAddr>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Log {
    /// `text` or `json` (one object per line).
    pub format: String,
    /// A tracing filter: `info`, `debug`, `fatpipe_depot=debug,hyper=warn`...
    pub level: String,
}

impl Default for Log {
    fn default() -> Self {
        Log {
            format: "text".into(),
            level: "info".into(),
        }
    }
}

pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Applies `key.path=value` overrides to the TOML document (`value` read as a TOML value, or
/// as a string when it is not one).
fn apply_set(doc: &mut toml::Table, set: &str) -> Result<(), String> {
    let (path, raw) = set
        .split_once('=')
        .ok_or_else(|| format!("--set {set:?}: expected SECTION.KEY=VALUE"))?;
    let keys: Vec<&str> = path.trim().split('.').collect();
    if keys.iter().any(|k| k.is_empty()) {
        return Err(format!("--set {set:?}: empty key"));
    }
    let value: toml::Value = format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let mut table = doc;
    for k in &keys[..keys.len() - 1] {
        let entry = table
            .entry(k.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = entry
            .as_table_mut()
            .ok_or_else(|| format!("--set {set:?}: {k} is not a table"))?;
    }
    table.insert(keys[keys.len() - 1].to_string(), value);
    Ok(())
}

impl Config {
    /// Reads the file (if any) and applies the overrides in order.
    pub fn load(file: Option<&std::path::Path>, sets: &[String]) -> Result<Config, String> {
        let mut doc = match file {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("config {}: {e}", p.display()))?;
                text.parse::<toml::Table>()
                    .map_err(|e| format!("config {}: {e}", p.display()))?
            }
            None => toml::Table::new(),
        };
        for s in sets {
            apply_set(&mut doc, s)?;
        }
        let where_ = file.map_or("command line".to_string(), |p| p.display().to_string());
        let cfg: Config = toml::Value::Table(doc)
            .try_into()
            .map_err(|e: toml::de::Error| format!("config ({where_}): {e}"))?;
        cfg.check()?;
        Ok(cfg)
    }

    fn check(&self) -> Result<(), String> {
        let l = &self.limits;
        for (name, v) in [
            ("limits.header_timeout_s", l.header_timeout_s),
            ("limits.send_timeout_s", l.send_timeout_s),
            ("limits.connect_timeout_s", l.connect_timeout_s),
            (
                "limits.upstream_header_timeout_s",
                l.upstream_header_timeout_s,
            ),
            ("limits.upstream_read_timeout_s", l.upstream_read_timeout_s),
            ("limits.shutdown_grace_s", l.shutdown_grace_s),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
                return Err(format!("{name} = {v}: give seconds in (0, 86400]"));
            }
        }
        if l.max_header_bytes < 1024 || l.max_header_bytes > 1 << 20 {
            return Err(format!(
                "limits.max_header_bytes = {}: give 1024..=1048576",
                l.max_header_bytes
            ));
        }
        if l.max_headers == 0 || l.max_headers > 1000 {
            return Err(format!(
                "limits.max_headers = {}: give 1..=1000",
                l.max_headers
            ));
        }
        if l.max_transfers == 0 || l.max_connections == 0 {
            return Err(
                "limits.max_transfers and limits.max_connections must be at least 1".into(),
            );
        }
        if let Some(d) = &self.depot {
            if d.buffer_bytes < 8192 || d.buffer_bytes > 64 << 20 {
                return Err(format!(
                    "depot.buffer_bytes = {}: give 8192..=67108864",
                    d.buffer_bytes
                ));
            }
        }
        if !matches!(self.log.format.as_str(), "text" | "json") {
            return Err(format!(
                "log.format = {:?}: give \"text\" or \"json\"",
                self.log.format
            ));
        }
        Ok(())
    }

    /// The depot section, or an error saying how to give it.
    pub fn depot(&self) -> Result<&DepotSection, String> {
        self.depot.as_ref().ok_or_else(|| {
            "no [depot] section: give one in --config, or --listen, --key-file and --allow".into()
        })
    }

    pub fn origin(&self) -> Result<&OriginSection, String> {
        self.origin.as_ref().ok_or_else(|| {
            "no [origin] section: give one in --config, or --listen, --root and --key-file".into()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, sets: &[&str]) -> Result<Config, String> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fpd-cfg-{}-{n}", std::process::id()));
        std::fs::write(&dir, text).unwrap();
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let r = Config::load(Some(&dir), &sets);
        std::fs::remove_file(&dir).ok();
        r
    }

    const DEPOT: &str = r#"
[depot]
listen = "127.0.0.1:9001"
key_file = "/k"
allow = ["127.0.0.1"]

[upstream]
congestion = "reno"
[[upstream.peer]]
addr = "127.0.0.1:9002"
congestion = "cubic"
recv_buffer = 1048576
"#;

    #[test]
    fn defaults_and_peer_overrides() {
        let c = load(DEPOT, &[]).unwrap();
        let d = c.depot().unwrap();
        assert_eq!(d.buffer_bytes, 256 * 1024);
        assert_eq!(c.limits.max_transfers, 1024);
        let p = c.upstream.for_hop(&"127.0.0.1:9002".parse().unwrap());
        assert_eq!(p.congestion.as_deref(), Some("cubic"));
        assert_eq!(p.recv_buffer, Some(1 << 20));
        let o = c.upstream.for_hop(&"127.0.0.1:9003".parse().unwrap());
        assert_eq!(o.congestion.as_deref(), Some("reno"));
        assert_eq!(o.recv_buffer, None);
        assert!(c.origin().is_err());
    }

    #[test]
    fn set_overrides_win() {
        let c = load(
            DEPOT,
            &[
                "limits.max_transfers=7",
                "depot.allow=[\"10.0.0.0/8\"]",
                "downstream.congestion=bbr",
                "depot.listen=127.0.0.1:9009",
            ],
        )
        .unwrap();
        assert_eq!(c.limits.max_transfers, 7);
        assert_eq!(c.depot().unwrap().allow, vec!["10.0.0.0/8".to_string()]);
        assert_eq!(c.downstream.congestion.as_deref(), Some("bbr"));
        assert_eq!(c.depot().unwrap().listen.port(), 9009);
    }

    #[test]
    fn errors_name_the_field() {
        let e = load(DEPOT, &["limits.connect_timeout_s=0"]).unwrap_err();
        assert!(e.contains("limits.connect_timeout_s"), "{e}");
        let e = load(&format!("{DEPOT}\n[limits]\nmax_transfer = 3\n"), &[]).unwrap_err();
        assert!(e.contains("max_transfer"), "{e}");
        let e = load(DEPOT, &["depot.buffer_bytes=100"]).unwrap_err();
        assert!(e.contains("depot.buffer_bytes"), "{e}");
        let e = load(DEPOT, &["log.format=xml"]).unwrap_err();
        assert!(e.contains("log.format"), "{e}");
        let e = load(DEPOT, &["nonsense"]).unwrap_err();
        assert!(e.contains("SECTION.KEY=VALUE"), "{e}");
    }
}
