//! Periodic updates of an AQM's control law without timers.
//!
//! PIE recomputes its probability every T_update and the PI and H2 controllers sample the queue at
//! a fixed rate. The engine has no periodic queue events, so a discipline keeps a [`Sampler`] and,
//! at every enqueue or dequeue at `now`, first runs each update due at or before `now` that has
//! not run, with the queue as it stood over that time: the queue changes only at enqueue and
//! dequeue, so every skipped update saw exactly that queue, and the result equals a timer-driven
//! run. An update due at the very instant of an enqueue or dequeue runs before it (it sees the
//! queue the event finds).
//!
//! Update k (k = 1, 2, ...) is due at round(k · num / den) nanoseconds: k · P for a period of P
//! ns (`num` = P, `den` = 1, exact), k · 10⁹ / f for a rate of f Hz (rounded to the nearest ns, so
//! the ticks never drift however long the run). The first update is one period after t = 0.

use fatpipe_core::SimTime;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampler {
    num: f64,
    den: f64,
    /// Index of the next update and its time.
    next: u64,
    next_at: SimTime,
}

impl Sampler {
    /// Updates every `period` (> 0).
    pub fn every(period: SimTime) -> Self {
        assert!(period > SimTime::ZERO, "a sampling period must be positive");
        Self::new(period.as_nanos() as f64, 1.0)
    }

    /// Updates at `hz` per second (finite, > 0).
    pub fn at_hz(hz: f64) -> Self {
        assert!(
            hz > 0.0 && hz.is_finite(),
            "a sampling rate must be positive"
        );
        Self::new(1e9, hz)
    }

    fn new(num: f64, den: f64) -> Self {
        let mut s = Sampler {
            num,
            den,
            next: 1,
            next_at: SimTime::ZERO,
        };
        s.next_at = s.time_of(1);
        s
    }

    fn time_of(&self, k: u64) -> SimTime {
        SimTime((k as f64 * self.num / self.den).round() as u64)
    }

    /// Time of the next update.
    pub fn next_at(&self) -> SimTime {
        self.next_at
    }

    /// Run `update(t)` for every update due at or before `now`, in order.
    #[inline]
    pub fn run_until(&mut self, now: SimTime, mut update: impl FnMut(SimTime)) {
        while self.next_at <= now {
            update(self.next_at);
            self.next += 1;
            self.next_at = self.time_of(self.next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_on_multiples_of_the_period_and_run_once_each() {
        let mut s = Sampler::every(SimTime::from_millis(15));
        let mut seen = Vec::new();
        s.run_until(SimTime::from_millis(44), |t| seen.push(t.as_nanos()));
        assert_eq!(seen, vec![15_000_000, 30_000_000]);
        s.run_until(SimTime::from_millis(45), |t| seen.push(t.as_nanos()));
        assert_eq!(seen.last(), Some(&45_000_000));
        s.run_until(SimTime::from_millis(45), |_| panic!("ran twice"));
        // 8333 Hz: tick k at round(k · 10⁹ / 8333) ns; k = 8333 is exactly 1 s.
        let mut s = Sampler::at_hz(8333.0);
        let mut n = 0;
        let mut last = 0;
        s.run_until(SimTime::from_secs(1), |t| {
            n += 1;
            last = t.as_nanos();
        });
        assert_eq!(n, 8333);
        assert_eq!(last, 1_000_000_000);
        assert_eq!(s.next_at().as_nanos(), 1_000_120_005); // 8334 · 10⁹/8333 = 1000120004.8
    }
}
