//! What the emulator reports per link direction: frames and bytes in and out, modelled drops by
//! reason, ECN marks, the emulator's own overflow (apart), the achieved rate and the error of
//! actual against scheduled departures. Pure bookkeeping, unit-tested without sockets.

use fatpipe_net::queue::{DropReason, QueueStats};
use serde_json::{json, Value};

/// Histogram of departure errors (actual − scheduled, ns): 1 µs bins to 50 ms, then one
/// overflow bin; mean and max are exact.
#[derive(Clone, Debug)]
pub struct ErrorHist {
    bins: Vec<u64>,
    over: u64,
    count: u64,
    sum: u128,
    max: u64,
}

const BIN_NS: u64 = 1_000;
const BINS: usize = 50_000;

impl Default for ErrorHist {
    fn default() -> Self {
        ErrorHist {
            bins: vec![0; BINS],
            over: 0,
            count: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl ErrorHist {
    pub fn record(&mut self, err_ns: u64) {
        let b = (err_ns / BIN_NS) as usize;
        if b < BINS {
            self.bins[b] += 1;
        } else {
            self.over += 1;
        }
        self.count += 1;
        self.sum += err_ns as u128;
        self.max = self.max.max(err_ns);
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }
    pub fn max_ns(&self) -> u64 {
        self.max
    }
    /// Upper edge of the bin holding quantile `q` (so within 1 µs above the true value); the
    /// maximum when it falls in the overflow bin.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((i as u64 + 1) * BIN_NS).min(self.max);
            }
        }
        self.max
    }
    pub fn to_json(&self) -> Value {
        json!({
            "count": self.count,
            "mean": self.mean_ns(),
            "p50": self.quantile_ns(0.5),
            "p99": self.quantile_ns(0.99),
            "p999": self.quantile_ns(0.999),
            "max": self.max,
        })
    }
}

/// Output side of a direction: what left, when, against when it was due.
#[derive(Clone, Debug, Default)]
pub struct OutStats {
    pub frames: u64,
    pub bytes: u64,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    /// Backlogged departures: bytes of frames whose serialisation followed the previous one
    /// without a gap, and the actual time between their departure and the previous one's.
    pub busy_bytes: u64,
    pub busy_ns: u64,
    pub err: ErrorHist,
}

impl OutStats {
    /// A frame of `size` bytes scheduled at `due` left at `actual` (both CLOCK_MONOTONIC ns).
    pub fn record(&mut self, due: u64, actual: u64, size: u32, back_to_back: bool) {
        if back_to_back && self.frames > 0 {
            self.busy_bytes += size as u64;
            self.busy_ns += actual.saturating_sub(self.last_ns);
        }
        self.frames += 1;
        self.bytes += size as u64;
        self.first_ns.get_or_insert(actual);
        self.last_ns = actual;
        self.err.record(actual.saturating_sub(due));
    }
    /// Rate achieved while the modelled transmitter was backlogged (bits/s), the quantity to
    /// hold against `rate_bps`; None without backlog.
    pub fn achieved_rate_bps(&self) -> Option<f64> {
        (self.busy_ns > 0).then(|| self.busy_bytes as f64 * 8e9 / self.busy_ns as f64)
    }
    /// Bytes out over the time from the first to the last departure (bits/s).
    pub fn mean_rate_bps(&self) -> Option<f64> {
        let first = self.first_ns?;
        (self.last_ns > first).then(|| self.bytes as f64 * 8e9 / (self.last_ns - first) as f64)
    }
}

/// Frames the emulator itself lost (not modelled): counted apart.
#[derive(Clone, Debug, Default)]
pub struct Overflow {
    /// Frames the kernel dropped because the ingress socket's buffer was full
    /// (PACKET_STATISTICS tp_drops): the emulator did not read fast enough.
    pub rx_drops: u64,
    /// Frames whose send failed (ENOBUFS, EAGAIN, ...).
    pub send_failures: u64,
    /// Frames larger than a slot (segmentation offload left on upstream): not forwarded.
    pub oversize: u64,
}

impl Overflow {
    pub fn total(&self) -> u64 {
        self.rx_drops + self.send_failures + self.oversize
    }
}

/// One direction's report.
pub fn direction_json(
    asked_rate_bps: u64,
    delay_ns: u64,
    loss: f64,
    frames_in: u64,
    bytes_in: u64,
    lost: u64,
    q: &QueueStats,
    queue_kind: &str,
    out: &OutStats,
    of: &Overflow,
    held_at_stop: usize,
) -> Value {
    let d = |r: DropReason| q.drops[r.index()];
    let m = |r: DropReason| q.marks[r.index()];
    let achieved = out.achieved_rate_bps();
    json!({
        "rate_bps": asked_rate_bps,
        "delay_ns": delay_ns,
        "loss": loss,
        "queue": queue_kind,
        "frames_in": frames_in,
        "bytes_in": bytes_in,
        "frames_out": out.frames,
        "bytes_out": out.bytes,
        "drops": {
            "tail": d(DropReason::TailDrop),
            "aqm_early": d(DropReason::AqmEarly),
            "aqm_forced": d(DropReason::AqmForced),
            "loss": lost,
            "total": q.total_drops() + lost,
        },
        "ecn_marks": {
            "aqm_early": m(DropReason::AqmEarly),
            "aqm_forced": m(DropReason::AqmForced),
            "total": q.total_marks(),
        },
        "overflow": {
            "rx_drops": of.rx_drops,
            "send_failures": of.send_failures,
            "oversize": of.oversize,
            "total": of.total(),
        },
        "held_at_stop": held_at_stop,
        "achieved_rate_bps": achieved,
        "rate_error": achieved.map(|a| a / asked_rate_bps as f64 - 1.0),
        "busy_s": out.busy_ns as f64 * 1e-9,
        "mean_rate_bps": out.mean_rate_bps(),
        "delay_error_ns": out.err.to_json(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_mean_and_max() {
        let mut h = ErrorHist::default();
        for i in 0..1000u64 {
            h.record(i * 100); // 0 .. 99.9 us
        }
        h.record(80_000_000); // one far outlier
        assert_eq!(h.count(), 1001);
        assert_eq!(h.max_ns(), 80_000_000);
        assert_eq!(h.quantile_ns(0.5), 51_000);
        assert_eq!(h.quantile_ns(0.99), 100_000);
        assert_eq!(h.quantile_ns(1.0), 80_000_000);
        assert!((h.mean_ns() - (49_950.0 * 1000.0 + 8e7) / 1001.0).abs() < 1e-6);
    }

    #[test]
    fn achieved_rate_counts_backlogged_departures_only() {
        let mut o = OutStats::default();
        // 1250 B every 1 ms backlogged (10 Mb/s), then an idle gap, then 5 more backlogged.
        let mut t = 1_000_000u64;
        for i in 0..10 {
            o.record(t, t + 3_000, 1250, i > 0);
            t += 1_000_000;
        }
        t += 50_000_000;
        for i in 0..5 {
            o.record(t, t + 3_000, 1250, i > 0);
            t += 1_000_000;
        }
        let r = o.achieved_rate_bps().unwrap();
        assert!((r - 10e6).abs() < 1.0, "{r}");
        assert!(o.mean_rate_bps().unwrap() < 5e6);
        assert_eq!(o.err.quantile_ns(0.99), 3_000);
        // Late departures, bunched: the same bytes over less time is a higher rate.
        let mut o = OutStats::default();
        for i in 0..10u64 {
            let due = 1_000_000 * i;
            let actual = if i < 5 {
                due
            } else {
                8_000_000 + 100_000 * (i - 5)
            };
            o.record(due, actual, 1250, i > 0);
        }
        assert!(o.achieved_rate_bps().unwrap() > 10e6);
    }
}
