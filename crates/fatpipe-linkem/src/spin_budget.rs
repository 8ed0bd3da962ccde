//! A cap on the share of wall time the event loop spends spinning before departures.
//!
//! Spinning the last `spin_ns` to a deadline removes the timer's wake-up latency (tens of µs on a
//! virtual machine), but when departures are closer together than `spin_ns` (1 Gb/s of 1514-byte
//! frames: 12 µs apart) the loop would spin all the time. Under SCHED_FIFO a thread that keeps
//! its core busy runs into the kernel's real-time throttle (`sched_rt_runtime_us`, 950 ms of
//! every second by default) and is then suspended for up to 50 ms: far worse than a late
//! wake-up. The budget allows spinning for at most `share` of each 100 ms window; past it the
//! loop sleeps to the deadline itself until the window ends. Pure logic, time injected.

/// Length of the accounting window, ns. Short enough that a burst of spinning cannot approach the
/// throttle's one-second period, long enough to cover many departures.
pub const WINDOW_NS: u64 = 100_000_000;

#[derive(Debug, Clone)]
pub struct SpinBudget {
    /// Spin time allowed per window, ns.
    per_window_ns: u64,
    window_start: u64,
    spun_in_window: u64,
    /// Totals for the report.
    pub spun_ns: u64,
    pub refused: u64,
}

impl SpinBudget {
    /// `share` of wall time (0..=1) may be spent spinning, from `now` on.
    pub fn new(share: f64, now: u64) -> Self {
        SpinBudget {
            per_window_ns: (share.clamp(0.0, 1.0) * WINDOW_NS as f64) as u64,
            window_start: now,
            spun_in_window: 0,
            spun_ns: 0,
            refused: 0,
        }
    }

    /// Whether the loop may spin at `now` (it is then expected to report the time spun).
    pub fn allows(&mut self, now: u64) -> bool {
        if now.saturating_sub(self.window_start) >= WINDOW_NS {
            self.window_start = now;
            self.spun_in_window = 0;
        }
        let ok = self.spun_in_window < self.per_window_ns;
        if !ok {
            self.refused += 1;
        }
        ok
    }

    /// The loop spun for `ns`.
    pub fn spent(&mut self, ns: u64) {
        self.spun_in_window += ns;
        self.spun_ns += ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spinning_stops_at_the_share_and_resumes_next_window() {
        let mut b = SpinBudget::new(0.25, 0);
        let mut t = 0;
        let mut spun = 0;
        // A loop that would spin 10 µs every 12 µs (saturated 1 Gb/s) for one second.
        while t < 1_000_000_000 {
            if b.allows(t) {
                b.spent(10_000);
                spun += 10_000;
            }
            t += 12_000;
        }
        // At most a quarter of each window (+ one spin of overshoot per window).
        assert!(spun <= 10 * (25_000_000 + 10_000), "spun {spun} ns");
        assert!(spun >= 10 * 25_000_000, "spun only {spun} ns");
        assert!(b.refused > 0);
        assert_eq!(b.spun_ns, spun);
    }

    #[test]
    fn zero_share_never_spins_and_full_share_always_does() {
        let mut none = SpinBudget::new(0.0, 0);
        let mut all = SpinBudget::new(1.0, 0);
        for i in 0..1000u64 {
            assert!(!none.allows(i * 1000));
            assert!(all.allows(i * 1000));
            all.spent(999);
        }
    }
}
