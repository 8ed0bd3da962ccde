//! Counters and the Prometheus text exposition (format 0.0.4) served on `metrics.listen`.
//!
//! Per-hop series are keyed by the upstream hop (`host:port`, or `local` for the origin's own
//! files). A hop label only ever comes from a signed, allow-listed chain, so a client cannot
//! create series at will; still, past `MAX_HOPS_TRACKED` distinct hops new ones share `other`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

const MAX_HOPS_TRACKED: usize = 256;

/// Counters of one upstream hop, updated lock-free while bodies flow.
#[derive(Default, Debug)]
pub struct HopStats {
    pub bytes: AtomicU64,
    /// Nanoseconds spent with at least one transfer from this hop in progress, summed per transfer.
    pub busy_ns: AtomicU64,
    pub transfers: AtomicU64,
    /// Throughput of the last completed transfer, bit/s.
    pub last_bps: AtomicU64,
}

#[derive(Debug)]
pub struct Metrics {
    mode: &'static str,
    pub connections_active: AtomicI64,
    pub connections_total: AtomicU64,
    pub connections_refused: AtomicU64,
    pub transfers_active: AtomicI64,
    counters: Mutex<BTreeMap<(&'static str, String), u64>>,
    hops: Mutex<BTreeMap<String, Arc<HopStats>>>,
}

/// Descriptions of the labelled counters (name -> help).
const HELP: &[(&str, &str)] = &[
    ("requests_total", "Responses sent, by status code."),
    ("rejected_total", "Requests refused before any upstream connection, by reason."),
    ("transfers_total", "Response bodies finished, by result (complete, aborted)."),
    ("upstream_errors_total", "Upstream failures, by kind (connect, connect_timeout, header_timeout, reset, read_timeout, refused_options)."),
];

impl Metrics {
    pub fn new(mode: &'static str) -> Arc<Metrics> {
        Arc::new(Metrics {
            mode,
            connections_active: AtomicI64::new(0),
            connections_total: AtomicU64::new(0),
            connections_refused: AtomicU64::new(0),
            transfers_active: AtomicI64::new(0),
            counters: Mutex::new(BTreeMap::new()),
            hops: Mutex::new(BTreeMap::new()),
        })
    }

    /// Adds one to `name{label}` (label is `key="value"` text).
    pub fn inc(&self, name: &'static str, label: String) {
        *self
            .counters
            .lock()
            .expect("metrics lock")
            .entry((name, label))
            .or_insert(0) += 1;
    }

    pub fn code(&self, status: u16) {
        self.inc("requests_total", format!("code=\"{status}\""));
    }

    pub fn hop(&self, hop: &str) -> Arc<HopStats> {
        let mut m = self.hops.lock().expect("metrics lock");
        if !m.contains_key(hop) && m.len() >= MAX_HOPS_TRACKED {
            return m.entry("other".into()).or_default().clone();
        }
        m.entry(hop.to_string()).or_default().clone()
    }

    /// The value of a counter (tests and the shutdown summary).
    pub fn get(&self, name: &'static str, label: &str) -> u64 {
        self.counters
            .lock()
            .expect("metrics lock")
            .get(&(name, label.to_string()))
            .copied()
            .unwrap_or(0)
    }

    pub fn render(&self) -> String {
        let p = "fatpipe_depot";
        let mut s = String::new();
        let _ = writeln!(s, "# HELP {p}_info The running daemon: mode and version.");
        let _ = writeln!(s, "# TYPE {p}_info gauge");
        let _ = writeln!(
            s,
            "{p}_info{{mode=\"{}\",version=\"{}\"}} 1",
            self.mode,
            env!("CARGO_PKG_VERSION")
        );
        for (name, help, v) in [
            (
                "connections_active",
                "Open client connections.",
                self.connections_active.load(Relaxed),
            ),
            (
                "transfers_active",
                "Response bodies in progress.",
                self.transfers_active.load(Relaxed),
            ),
        ] {
            let _ = writeln!(
                s,
                "# HELP {p}_{name} {help}\n# TYPE {p}_{name} gauge\n{p}_{name} {v}"
            );
        }
        for (name, help, v) in [
            (
                "connections_total",
                "Client connections accepted.",
                self.connections_total.load(Relaxed),
            ),
            (
                "connections_refused_total",
                "Client connections closed at accept (limits.max_connections).",
                self.connections_refused.load(Relaxed),
            ),
        ] {
            let _ = writeln!(
                s,
                "# HELP {p}_{name} {help}\n# TYPE {p}_{name} counter\n{p}_{name} {v}"
            );
        }
        let counters = self.counters.lock().expect("metrics lock").clone();
        for (name, help) in HELP {
            let _ = writeln!(s, "# HELP {p}_{name} {help}\n# TYPE {p}_{name} counter");
            for ((n, label), v) in &counters {
                if n == name {
                    let _ = writeln!(s, "{p}_{name}{{{label}}} {v}");
                }
            }
        }
        let hops = self.hops.lock().expect("metrics lock").clone();
        let series: [(&str, &str, &str, fn(&HopStats) -> f64); 4] = [
            ("hop_bytes_total", "counter", "Body bytes relayed from each upstream hop to clients.", |h| h.bytes.load(Relaxed) as f64),
            ("hop_transfer_seconds_total", "counter", "Seconds of body transfer from each hop, summed over transfers (bytes / seconds = mean throughput per transfer).", |h| h.busy_ns.load(Relaxed) as f64 * 1e-9),
            ("hop_transfers_total", "counter", "Transfers from each hop.", |h| h.transfers.load(Relaxed) as f64),
            ("hop_last_throughput_bits_per_second", "gauge", "Throughput of the last completed transfer from each hop.", |h| h.last_bps.load(Relaxed) as f64),
        ];
        for (name, kind, help, f) in series {
            let _ = writeln!(s, "# HELP {p}_{name} {help}\n# TYPE {p}_{name} {kind}");
            for (hop, h) in &hops {
                let _ = writeln!(s, "{p}_{name}{{hop=\"{hop}\"}} {}", f(h));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_lists_every_series_once_with_type() {
        let m = Metrics::new("depot");
        m.code(200);
        m.code(200);
        m.code(403);
        m.inc("rejected_total", "reason=\"bad_signature\"".into());
        let h = m.hop("127.0.0.1:9002");
        h.bytes.fetch_add(1000, Relaxed);
        h.busy_ns.fetch_add(2_000_000_000, Relaxed);
        let text = m.render();
        assert!(
            text.contains("fatpipe_depot_requests_total{code=\"200\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("fatpipe_depot_requests_total{code=\"403\"} 1\n"));
        assert!(text.contains("fatpipe_depot_rejected_total{reason=\"bad_signature\"} 1\n"));
        assert!(text.contains("fatpipe_depot_hop_bytes_total{hop=\"127.0.0.1:9002\"} 1000\n"));
        assert!(
            text.contains("fatpipe_depot_hop_transfer_seconds_total{hop=\"127.0.0.1:9002\"} 2\n")
        );
        assert!(text.contains("fatpipe_depot_info{mode=\"depot\""));
        // Every sample line belongs to a declared metric.
        let declared: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# TYPE "))
            .map(|l| l.split(' ').next().unwrap())
            .collect();
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let name = l.split(['{', ' ']).next().unwrap();
            assert!(declared.contains(&name), "{l}");
        }
        assert_eq!(m.get("requests_total", "code=\"200\""), 2);
    }

    #[test]
    fn hop_labels_are_capped() {
        let m = Metrics::new("depot");
        for i in 0..(MAX_HOPS_TRACKED + 10) {
            m.hop(&format!("10.0.0.1:{i}"));
        }
        assert_eq!(m.hops.lock().unwrap().len(), MAX_HOPS_TRACKED + 1);
    }
}
