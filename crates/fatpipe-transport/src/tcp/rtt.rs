//! Retransmission timer estimator, RFC 6298.
//!
//! SRTT and RTTVAR use the RFC's gains alpha = 1/8 and beta = 1/4 (§2.3) and K = 4; the clock
//! granularity G is the simulator's (1 ns), negligible. RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)),
//! doubled on each expiry (§5.5) and capped at max_rto (§2.5).

use fatpipe_core::SimTime;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt_ns: f64,
    rttvar_ns: f64,
    has_sample: bool,
    min_rto: SimTime,
    max_rto: SimTime,
    initial_rto: SimTime,
    backoff: u32,
    /// The current RTO, recomputed when a sample or a backoff changes it (it is read on every
    /// ACK).
    rto: SimTime,
    pub min_rtt: Option<SimTime>,
    pub max_rtt: Option<SimTime>,
    pub samples: u64,
    pub sum_rtt_ns: f64,
}

impl RttEstimator {
    pub fn new(min_rto: SimTime, max_rto: SimTime, initial_rto: SimTime) -> Self {
        let mut e = RttEstimator {
            srtt_ns: 0.0,
            rttvar_ns: 0.0,
            has_sample: false,
            min_rto,
            max_rto,
            initial_rto,
            backoff: 0,
            rto: initial_rto,
            min_rtt: None,
            max_rtt: None,
            samples: 0,
            sum_rtt_ns: 0.0,
        };
        e.rto = e.compute_rto();
        e
    }

    /// Feed one RTT measurement (RFC 6298 §2.2–2.3). A new sample also clears the backoff (§5.7
    /// allows collapsing it once a valid sample arrives, as Linux does).
    pub fn sample(&mut self, rtt: SimTime) {
        let r = rtt.as_nanos() as f64;
        if !self.has_sample {
            self.srtt_ns = r;
            self.rttvar_ns = r / 2.0;
            self.has_sample = true;
        } else {
            self.rttvar_ns = 0.75 * self.rttvar_ns + 0.25 * (self.srtt_ns - r).abs();
            self.srtt_ns = 0.875 * self.srtt_ns + 0.125 * r;
        }
        self.backoff = 0;
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.max_rtt = Some(self.max_rtt.map_or(rtt, |m| m.max(rtt)));
        self.samples += 1;
        self.sum_rtt_ns += r;
        self.rto = self.compute_rto();
    }

    pub fn srtt(&self) -> Option<SimTime> {
        self.has_sample.then(|| SimTime(self.srtt_ns as u64))
    }

    /// The current RTO including exponential backoff.
    #[inline]
    pub fn rto(&self) -> SimTime {
        self.rto
    }

    fn compute_rto(&self) -> SimTime {
        let base = if self.has_sample {
            let v = self.srtt_ns + (4.0 * self.rttvar_ns).max(1.0);
            SimTime(v as u64).max(self.min_rto)
        } else {
            self.initial_rto
        };
        let backed = base.as_nanos().saturating_mul(1u64 << self.backoff.min(30));
        SimTime(backed).min(self.max_rto)
    }

    /// Double the RTO after an expiry (RFC 6298 §5.5).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(30);
        self.rto = self.compute_rto();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_and_update_follow_rfc6298() {
        let mut e = RttEstimator::new(
            SimTime::from_millis(200),
            SimTime::from_secs(60),
            SimTime::from_secs(1),
        );
        assert_eq!(e.rto(), SimTime::from_secs(1));
        // First sample R = 100 ms: SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        e.sample(SimTime::from_millis(100));
        assert_eq!(e.rto(), SimTime::from_millis(300));
        // Second R = 100 ms: RTTVAR = 0.75*50 + 0.25*0 = 37.5, SRTT = 100, RTO = 250 ms.
        e.sample(SimTime::from_millis(100));
        assert_eq!(e.rto(), SimTime::from_millis(250));
        e.back_off();
        assert_eq!(e.rto(), SimTime::from_millis(500));
    }

    #[test]
    fn min_rto_applies() {
        let mut e = RttEstimator::new(
            SimTime::from_millis(200),
            SimTime::from_secs(60),
            SimTime::from_secs(1),
        );
        e.sample(SimTime::from_millis(10));
        assert_eq!(e.rto(), SimTime::from_millis(200));
    }
}
