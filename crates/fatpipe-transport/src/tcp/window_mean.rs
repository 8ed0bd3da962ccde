//! The time-averaged congestion window of one connection (seed 003's "average window per
//! connection"): the integral of cwnd over time divided by the time elapsed.
//!
//! cwnd changes only while the sender handles an event (an ACK, a timer, a write), so the sender
//! calls [`WindowArea::advance`] with the window *before* the event: the window held unchanged
//! since the previous event. Only connections that ask for it pay for it (web and file objects);
//! bulk flows report their window as sampled time series instead.

use fatpipe_core::SimTime;

#[derive(Clone, Copy, Debug)]
pub struct WindowArea {
    start: SimTime,
    since: SimTime,
    /// Integral of cwnd (packets) over [start, since], in packet-nanoseconds.
    area: f64,
}

impl WindowArea {
    pub fn new(start: SimTime) -> Self {
        WindowArea {
            start,
            since: start,
            area: 0.0,
        }
    }

    /// The window was `cwnd` from the last call until `now`.
    #[inline]
    pub fn advance(&mut self, now: SimTime, cwnd: u32) {
        self.area += cwnd as f64 * now.saturating_sub(self.since).as_nanos() as f64;
        self.since = self.since.max(now);
    }

    /// Mean window over [start, now] given the window `cwnd` held since the last event (packets;
    /// the current window when no time has passed).
    pub fn mean(&self, now: SimTime, cwnd: u32) -> f64 {
        let span = now.saturating_sub(self.start).as_nanos() as f64;
        if span <= 0.0 {
            return cwnd as f64;
        }
        let tail = cwnd as f64 * now.saturating_sub(self.since).as_nanos() as f64;
        (self.area + tail) / span
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_held_twice_as_long_weighs_twice_as_much() {
        let ms = |x: u64| SimTime(x * 1_000_000);
        let mut w = WindowArea::new(ms(100));
        w.advance(ms(100), 2); // start: nothing elapsed
        w.advance(ms(300), 2); // cwnd 2 for 200 ms, then it becomes 8
        w.advance(ms(400), 8); // cwnd 8 for 100 ms, then 5
                               // 2*200 + 8*100 + 5*100 = 1700 over 400 ms
        assert!((w.mean(ms(500), 5) - 1700.0 / 400.0).abs() < 1e-12);
        assert_eq!(WindowArea::new(ms(1)).mean(ms(1), 10), 10.0);
    }
}
