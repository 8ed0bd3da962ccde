//! Constant-bit-rate source: fixed-size packets at a fixed rate between a start and a stop time
//! (ns-2's `Application/Traffic/CBR` without its optional jitter), e.g. the UDP share of seed
//! 000's background mix.
//!
//! Send times are computed, never accumulated: packet k leaves at
//! start + round(k * size * 8 * 1e9 / rate) ns, in exact integer arithmetic. Adding a rounded
//! interval k times would drift by up to k/2 ns (a 3 Mb/s source of 1000-byte packets has an
//! interval of 2 666 666.67 ns; after an hour, 1.35 million packets, that is 0.45 ms late).

use crate::dist::ParamError;
use fatpipe_core::{Rate, RngStream, SimTime};

/// A CBR source description. Sends happen at `send_time(k)` for k = 0, 1, ... while the time
/// is before `stop` (stop is exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cbr {
    rate: Rate,
    packet_bytes: u32,
    start: SimTime,
    stop: SimTime,
}

impl Cbr {
    /// `rate` > 0 b/s, `packet_bytes` > 0 (the application payload the engine puts in one
    /// packet; the rate is of those bytes), `stop` > `start`.
    pub fn new(
        rate: Rate,
        packet_bytes: u32,
        start: SimTime,
        stop: SimTime,
    ) -> Result<Self, ParamError> {
        if rate.bps() == 0 {
            return Err(ParamError::new("rate", "must be > 0 (got 0)"));
        }
        if packet_bytes == 0 {
            return Err(ParamError::new("packet_size", "must be > 0 (got 0)"));
        }
        if stop <= start {
            return Err(ParamError::new(
                "stop",
                format!("must be after start (got start {start}, stop {stop})"),
            ));
        }
        Ok(Cbr {
            rate,
            packet_bytes,
            start,
            stop,
        })
    }

    /// The same source started a uniform random offset in [0, `max_offset`) later (so that
    /// many CBR sources do not send in lock-step); the stop time stays. Draw it from the
    /// source's own stream, e.g. `RngStream::new(seed, "cbr/2/start")`. If the offset reaches
    /// the stop time the source sends nothing.
    pub fn with_random_start_offset(mut self, max_offset: SimTime, rng: &mut RngStream) -> Self {
        if max_offset.as_nanos() > 0 {
            self.start += SimTime(rng.below(max_offset.as_nanos()));
        }
        self
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }
    pub fn packet_bytes(&self) -> u32 {
        self.packet_bytes
    }
    pub fn start(&self) -> SimTime {
        self.start
    }
    pub fn stop(&self) -> SimTime {
        self.stop
    }

    /// The nominal interval between packets, rounded to the nearest nanosecond (for display
    /// and planning; the send times themselves come from [`Cbr::send_time`]).
    pub fn interval(&self) -> SimTime {
        self.offset(1)
    }

    /// Nanoseconds from start to packet k: round(k * bits * 1e9 / rate), half up, in u128
    /// (k * bits * 1e9 overflows u64 after 2.3e6 packets of 1000 bytes).
    fn offset(&self, k: u64) -> SimTime {
        let num = k as u128 * self.packet_bytes as u128 * 8 * 1_000_000_000;
        let r = self.rate.bps() as u128;
        SimTime(((2 * num + r) / (2 * r)) as u64)
    }

    /// When packet k is sent (whether or not that is before `stop`).
    pub fn send_time(&self, k: u64) -> SimTime {
        self.start + self.offset(k)
    }

    /// The smallest k with send_time(k) >= t (t >= start).
    fn first_index_at_or_after(&self, t: SimTime) -> u64 {
        if t <= self.start {
            return 0;
        }
        let d = (t - self.start).as_nanos() as u128;
        let per = self.packet_bytes as u128 * 8 * 1_000_000_000;
        // floor(d * rate / per) is within one of the answer; rounding decides the rest.
        let mut k = (d * self.rate.bps() as u128 / per) as u64;
        while k > 0 && self.send_time(k - 1) >= t {
            k -= 1;
        }
        while self.send_time(k) < t {
            k += 1;
        }
        k
    }

    /// Number of packets sent in [start, stop).
    pub fn packet_count(&self) -> u64 {
        if self.start >= self.stop {
            return 0;
        }
        self.first_index_at_or_after(self.stop)
    }

    /// The first send strictly after `after` (any time before `start` gives packet 0), as
    /// (k, time); None once the source has stopped. An engine calls `next_send(now)` after
    /// each send to schedule the next one.
    pub fn next_send(&self, after: SimTime) -> Option<(u64, SimTime)> {
        let k = if after < self.start {
            0
        } else {
            self.first_index_at_or_after(SimTime(after.as_nanos() + 1))
        };
        let t = self.send_time(k);
        (t < self.stop).then_some((k, t))
    }

    /// Every send time, in order.
    pub fn sends(&self) -> impl Iterator<Item = SimTime> + '_ {
        (0..self.packet_count()).map(|k| self.send_time(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousand_packets_at_one_mbps_end_exactly_at_999_times_8_ms() {
        let start = SimTime::from_millis(1500);
        // Stop exactly at packet 1000's time: stop is exclusive, so 1000 packets (0..=999).
        let stop = start + SimTime::from_millis(8000);
        let c = Cbr::new(Rate::from_mbps(1), 1000, start, stop).unwrap();
        assert_eq!(c.interval(), SimTime::from_millis(8));
        assert_eq!(c.packet_count(), 1000);
        let times: Vec<SimTime> = c.sends().collect();
        assert_eq!(times.len(), 1000);
        assert_eq!(times[0], start);
        assert_eq!(
            *times.last().unwrap(),
            start + SimTime::from_millis(999 * 8)
        );
        assert_eq!(c.next_send(*times.last().unwrap()), None);
    }

    #[test]
    fn send_times_do_not_drift_with_a_fractional_interval() {
        // 3 Mb/s, 1000 B: interval 8e6/3 ns = 2 666 666.67 ns.
        let c = Cbr::new(
            Rate::from_mbps(3),
            1000,
            SimTime::ZERO,
            SimTime::from_secs(3600),
        )
        .unwrap();
        assert_eq!(c.interval(), SimTime(2_666_667));
        // Packet 1 350 000 at exactly 3600 s (1.35e6 * 8e6 / 3 = 3.6e12 ns): accumulating the
        // rounded interval would say 3600.00045 s.
        assert_eq!(c.send_time(1_350_000), SimTime::from_secs(3600));
        assert_eq!(c.packet_count(), 1_350_000);
        // Each time is the exact rational value rounded to the nearest nanosecond.
        for k in [1u64, 2, 3, 1_000_001, 1_349_999] {
            let exact = k as f64 * 8e6 / 3.0;
            assert!(
                (c.send_time(k).as_nanos() as f64 - exact).abs() <= 0.5,
                "k {k}"
            );
        }
    }

    #[test]
    fn next_send_walks_the_schedule() {
        let c = Cbr::new(
            Rate::from_bps(1_000_000),
            125, // 1 ms per packet
            SimTime::from_millis(10),
            SimTime::from_millis(13),
        )
        .unwrap();
        assert_eq!(
            c.next_send(SimTime::ZERO),
            Some((0, SimTime::from_millis(10)))
        );
        assert_eq!(
            c.next_send(SimTime::from_millis(10)),
            Some((1, SimTime::from_millis(11)))
        );
        assert_eq!(
            c.next_send(SimTime::from_micros(11_500)),
            Some((2, SimTime::from_millis(12)))
        );
        assert_eq!(c.next_send(SimTime::from_millis(12)), None);
        assert_eq!(c.packet_count(), 3);
    }

    #[test]
    fn random_start_offset_is_deterministic_and_in_range() {
        let base = Cbr::new(
            Rate::from_mbps(1),
            1000,
            SimTime::from_secs(1),
            SimTime::from_secs(10),
        )
        .unwrap();
        let max = SimTime::from_millis(100);
        let a = base.with_random_start_offset(max, &mut RngStream::new(5, "cbr/0/start"));
        let b = base.with_random_start_offset(max, &mut RngStream::new(5, "cbr/0/start"));
        assert_eq!(a, b);
        assert!(a.start() >= base.start() && a.start() < base.start() + max);
        assert_eq!(a.stop(), base.stop());
        assert_eq!(a.sends().next(), Some(a.start()));
    }

    #[test]
    fn bad_parameters_are_rejected_naming_the_field() {
        let s = SimTime::from_secs(1);
        let e = SimTime::from_secs(2);
        assert_eq!(Cbr::new(Rate(0), 1000, s, e).unwrap_err().field, "rate");
        assert_eq!(
            Cbr::new(Rate::from_mbps(1), 0, s, e).unwrap_err().field,
            "packet_size"
        );
        assert_eq!(
            Cbr::new(Rate::from_mbps(1), 1000, e, s).unwrap_err().field,
            "stop"
        );
        assert_eq!(
            Cbr::new(Rate::from_mbps(1), 1000, s, s).unwrap_err().field,
            "stop"
        );
    }
}
