//! Exponential on/off voice source with ns-2's `Application/Traffic/Exponential` (EXPOO)
//! semantics, the VoIP model of seed 001 (ITU-T P.59 talk spurts, after Bouras et al. 2007).
//!
//! While "on" the source emits packets of `packet_bytes` every `interval = packet_bytes·8/rate`.
//! As in ns-2's `EXPOO_Traffic::next_interval` (tools/expoo.cc, ns-2.35), the on period is not
//! drawn as a time but as a **burst length in packets**: N = round(Exp(on_mean / interval)),
//! at least 1; the **off time** Exp(off_mean) is added to the gap that precedes a burst's first
//! packet. The very first packet therefore comes one interval plus one off time after the start
//! (ns-2's `TrafficGenerator::start` schedules `next_interval` before sending anything).
//!
//! Mean rate: E[N]·packet·8 / (E[N]·interval + off_mean). With seed 001's values (on 1.004 s,
//! off 1.587 s, 80 kb/s, 160-byte packets → interval 16 ms, E[N] ≈ 62.75) that is
//! 80 kb/s × 1.004 / 2.591 ≈ 31.0 kb/s, 24.2 packets/s. (Rounding N to the nearest integer with a
//! floor of 1 moves E[N] from on_mean/interval by less than 0.2 % at these values.)

use crate::dist::{Exponential, ParamError};
use fatpipe_core::{RngStream, SimTime};

/// Parameters of an exponential on/off source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OnOffParams {
    /// Mean talk-spurt duration, seconds (seed 001: 1.004 s, ITU-T P.59).
    pub on_mean_s: f64,
    /// Mean silence, seconds (seed 001: 1.587 s).
    pub off_mean_s: f64,
    /// Sending rate while on, bits per second, counting `packet_bytes` (seed 001: 80 kb/s).
    pub rate_bps: u64,
    /// Packet size handed to the transport, bytes (seed 001: 160).
    pub packet_bytes: u32,
}

impl OnOffParams {
    /// Seed 001's voice source.
    pub const P59: OnOffParams = OnOffParams {
        on_mean_s: 1.004,
        off_mean_s: 1.587,
        rate_bps: 80_000,
        packet_bytes: 160,
    };

    /// Check every parameter, naming the bad one.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.on_mean_s.is_finite() && self.on_mean_s > 0.0) {
            return Err(ParamError::new(
                "on",
                "must be a positive duration, e.g. \"1.004s\"",
            ));
        }
        if !(self.off_mean_s.is_finite() && self.off_mean_s > 0.0) {
            return Err(ParamError::new(
                "off",
                "must be a positive duration, e.g. \"1.587s\"",
            ));
        }
        if self.rate_bps == 0 {
            return Err(ParamError::new("rate", "must be positive, e.g. \"80kbps\""));
        }
        if self.packet_bytes == 0 {
            return Err(ParamError::new("packet", "must be positive, e.g. \"160B\""));
        }
        Ok(())
    }

    /// Gap between packets of a burst, in ns (exact integer arithmetic).
    pub fn interval(&self) -> SimTime {
        SimTime((self.packet_bytes as u128 * 8 * 1_000_000_000 / self.rate_bps as u128) as u64)
    }

    /// Long-run mean rate in bits per second (burst length taken as its continuous mean).
    pub fn mean_rate_bps(&self) -> f64 {
        self.rate_bps as f64 * self.on_mean_s / (self.on_mean_s + self.off_mean_s)
    }
}

/// The source's state: packets left in the current burst.
#[derive(Clone, Debug)]
pub struct ExpOnOff {
    params: OnOffParams,
    interval: SimTime,
    burst: Exponential,
    off: Exponential,
    rng: RngStream,
    left_in_burst: u64,
}

impl ExpOnOff {
    pub fn new(params: OnOffParams, rng: RngStream) -> Result<Self, ParamError> {
        params.validate()?;
        let interval = params.interval();
        if interval == SimTime::ZERO {
            return Err(ParamError::new(
                "rate",
                "is so high that packets would be 0 ns apart",
            ));
        }
        Ok(ExpOnOff {
            params,
            interval,
            burst: Exponential::new(params.on_mean_s / interval.as_secs_f64())?,
            off: Exponential::new(params.off_mean_s)?,
            rng,
            left_in_burst: 0,
        })
    }

    pub fn params(&self) -> &OnOffParams {
        &self.params
    }

    /// Time from the previous packet (or the start) to the next one (ns-2 `next_interval`).
    pub fn next_gap(&mut self) -> SimTime {
        let mut gap = self.interval;
        if self.left_in_burst == 0 {
            // ns-2: rem_ = int(Burstlen_.value() + .5), at least 1; the idle time goes first.
            self.left_in_burst = ((self.burst.sample(&mut self.rng) + 0.5) as u64).max(1);
            gap += SimTime::from_secs_f64(self.off.sample(&mut self.rng));
        }
        self.left_in_burst -= 1;
        gap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(seed: u64) -> ExpOnOff {
        ExpOnOff::new(OnOffParams::P59, RngStream::new(seed, "voip-test")).unwrap()
    }

    #[test]
    fn mean_rate_is_31_kbps_within_2_percent() {
        // Seed 001's ceiling: 80 kb/s × 1.004 / 2.591 = 31.0 kb/s. Over 10^5 s (≈ 38 600 on/off
        // cycles) the standard error of the measured rate is about 0.5 %, so 2 % is a 4-sigma
        // bound on a correct source.
        assert!((OnOffParams::P59.mean_rate_bps() - 31_000.0).abs() < 50.0);
        for seed in 1..=3 {
            let mut s = source(seed);
            let mut t = SimTime::ZERO;
            let mut packets = 0u64;
            let horizon = SimTime::from_secs(100_000);
            loop {
                t = t + s.next_gap();
                if t > horizon {
                    break;
                }
                packets += 1;
            }
            let rate = packets as f64 * 160.0 * 8.0 / horizon.as_secs_f64();
            assert!(
                (rate / 31_000.0 - 1.0).abs() < 0.02,
                "seed {seed}: {rate} b/s"
            );
        }
    }

    #[test]
    fn bursts_are_spaced_by_the_interval_and_start_after_an_off_time() {
        let mut s = source(7);
        assert_eq!(s.params().interval(), SimTime::from_millis(16));
        let first = s.next_gap();
        assert!(
            first >= SimTime::from_millis(16),
            "first packet after interval + off"
        );
        let n = s.left_in_burst + 1; // this burst's length
        for _ in 1..n {
            assert_eq!(s.next_gap(), SimTime::from_millis(16));
        }
        assert!(
            s.next_gap() > SimTime::from_millis(16),
            "the next burst starts with an off time"
        );
    }

    #[test]
    fn same_stream_same_times() {
        let (mut a, mut b) = (source(3), source(3));
        for _ in 0..1000 {
            assert_eq!(a.next_gap(), b.next_gap());
        }
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let bad = |f: fn(&mut OnOffParams)| {
            let mut p = OnOffParams::P59;
            f(&mut p);
            ExpOnOff::new(p, RngStream::new(1, "x"))
                .unwrap_err()
                .to_string()
        };
        assert!(bad(|p| p.on_mean_s = 0.0).contains("on"));
        assert!(bad(|p| p.off_mean_s = -1.0).contains("off"));
        assert!(bad(|p| p.rate_bps = 0).contains("rate"));
        assert!(bad(|p| p.packet_bytes = 0).contains("packet"));
    }
}
