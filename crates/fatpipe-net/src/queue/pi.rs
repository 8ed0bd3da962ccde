//! The PI controller of C. V. Hollot, V. Misra, D. Towsley and W.-B. Gong, "On Designing Improved
//! Controllers for AQM Routers Supporting TCP Flows", IEEE INFOCOM 2001, with the semantics of
//! ns-2.35's `Queue/PI` (`queue/pi.cc`, read to understand; written anew here).
//!
//! - Every 1/`sample_hz` seconds, on the instantaneous queue q in packets:
//!   p ← a·(q − q_ref) − b·(q_old − q_ref) + p, clipped to [0, 1]; q_old ← q. The state keeps
//!   the clipped value (ns-2's `v_prob`).
//! - Each arrival: if the queue is full (waiting packets ≥ limit) it is tail-dropped; otherwise it
//!   is dropped with probability p (`u < p`, so p = 0 never drops), or, with `ecn`, an ECT
//!   arrival is marked CE and enqueued instead (ns-2 `setbit_`). Drops count as
//!   [`DropReason::AqmEarly`] (ns-2's `DTYPE_UNFORCED`).
//! - The sampling has no timer: it runs lazily and exactly at each enqueue and dequeue (see
//!   [`super::sampler`]); sample k is at k/`sample_hz`.
//! - Start: q_old = q_ref and p = p0 (the Python design tool's convention,
//!   `fatpipe.models.PIController`, whose dict this queue takes). ns-2 starts from q_old = 0
//!   and p = 0; with p0 = 0 the only difference is the first sample's b·q_ref term.
//!
//! Defaults and their sources: a = 1.822e-5, b = 1.816e-5 (ns-2.35 `tcl/lib/ns-default.tcl`,
//! `Queue/PI set a_ 0.00001822`, `b_ 0.00001816`: Hollot et al.'s design for N = 60 Reno flows,
//! C = 3750 packets/s, R ≈ 0.25 s, discretised at 160 Hz); sample_hz = 160 (Hollot et al.'s
//! sampling rate, for which a and b were computed; ns-2.35 ships `w_ 170`); q_ref = 50 packets
//! (ns-2 `qref_ 50`); p0 = 0 (ns-2 `prob_ 0`). Not modelled: ns-2's byte mode.

use super::droptail::Limit;
use super::sampled::{ControlLaw, Sampled};
use fatpipe_core::rng::RngStream;

/// The PI controller's configuration (the fields of `fatpipe.models.PIController.to_dict()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PiParams {
    pub limit: Limit,
    pub sample_hz: f64,
    /// Reference queue, packets.
    pub q_ref: f64,
    /// Starting probability.
    pub p0: f64,
    pub a: f64,
    pub b: f64,
    pub ecn: bool,
}

impl PiParams {
    /// ns-2's defaults (Hollot et al.'s 160 Hz, see the module doc).
    pub fn ns2(limit: Limit) -> Self {
        PiParams {
            limit,
            sample_hz: 160.0,
            q_ref: 50.0,
            p0: 0.0,
            a: 1.822e-5,
            b: 1.816e-5,
            ecn: false,
        }
    }

    /// Check the parameters; the error names the scenario field and says why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        check_rate(self.sample_hz)?;
        check_finite("q_ref", self.q_ref)?;
        check_prob("p0", self.p0)?;
        check_finite("a", self.a)?;
        check_finite("b", self.b)?;
        Ok(())
    }
}

pub(crate) fn check_rate(hz: f64) -> Result<(), (&'static str, String)> {
    if !(hz > 0.0 && hz.is_finite()) {
        return Err((
            "sample_hz",
            format!("the sampling rate must be a finite number of Hz > 0, got {hz}"),
        ));
    }
    if hz > 1e9 {
        return Err((
            "sample_hz",
            format!(
                "the sampling rate must be at most 1e9 Hz (the clock counts nanoseconds), got {hz}"
            ),
        ));
    }
    Ok(())
}

pub(crate) fn check_finite(name: &'static str, v: f64) -> Result<(), (&'static str, String)> {
    if !v.is_finite() {
        return Err((name, format!("must be a finite number, got {v}")));
    }
    Ok(())
}

pub(crate) fn check_prob(name: &'static str, v: f64) -> Result<(), (&'static str, String)> {
    if !(0.0..=1.0).contains(&v) {
        return Err((name, format!("must be a probability in [0, 1], got {v}")));
    }
    Ok(())
}

/// The PI recursion's state with its coefficients (copied to answer `aqm_state`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PiLaw {
    c: PiParams,
    p: f64,
    q_old: f64,
}

impl ControlLaw for PiLaw {
    const KIND: &'static str = "pi";

    fn update(&mut self, q: f64) {
        let c = &self.c;
        let p = c.a * (q - c.q_ref) - c.b * (self.q_old - c.q_ref) + self.p;
        self.p = p.clamp(0.0, 1.0);
        self.q_old = q;
    }
    fn prob(&self) -> f64 {
        self.p
    }
    fn last_q(&self) -> f64 {
        self.q_old
    }
}

/// The PI queue (the shared sampled-controller discipline, `sampled.rs`).
pub type Pi = Sampled<PiLaw>;

impl Sampled<PiLaw> {
    pub fn new(c: PiParams, rng: RngStream) -> Self {
        let law = PiLaw {
            c,
            p: c.p0,
            q_old: c.q_ref,
        };
        Sampled::with_law(law, c.sample_hz, c.limit, c.ecn, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::codel::tests::pkt;
    use crate::queue::{DropReason, Queue};
    use fatpipe_core::SimTime;

    fn pi(c: PiParams) -> Pi {
        Pi::new(c, RngStream::new(1, "test/pi"))
    }

    #[test]
    fn the_recursion_on_a_given_queue_sequence() {
        // a = 0.01, b = 0.008, q_ref = 10, p0 = 0.1; samples q = 20, 20, 5, 0:
        // p1 = 0.01·10 − 0.008·0 + 0.1 = 0.2
        // p2 = 0.01·10 − 0.008·10 + 0.2 = 0.22
        // p3 = 0.01·(−5) − 0.008·10 + 0.22 = 0.09
        // p4 = 0.01·(−10) − 0.008·(−5) + 0.09 = 0.03
        // p5 (q = 0) = −0.1 + 0.08 + 0.03 = 0.01; p6 = −0.1 + 0.08 + 0.01 → −0.01 → 0.
        let c = PiParams {
            a: 0.01,
            b: 0.008,
            q_ref: 10.0,
            p0: 0.1,
            ..PiParams::ns2(Limit::Packets(1000))
        };
        let mut law = pi(c).law;
        let mut out = Vec::new();
        for q in [20.0, 20.0, 5.0, 0.0, 0.0, 0.0] {
            law.update(q);
            out.push(law.p);
        }
        let want = [0.2, 0.22, 0.09, 0.03, 0.01, 0.0];
        for (o, w) in out.iter().zip(want) {
            assert!((o - w).abs() < 1e-12, "{out:?}");
        }
    }

    #[test]
    fn samples_are_taken_lazily_at_the_sampling_rate_with_the_queue_that_held() {
        // 100 Hz: samples at 10, 20, 30 ms. 20 packets arrive at 5 ms, 5 leave at 25 ms; the
        // samples see 20, 20, 15 packets.
        let c = PiParams {
            sample_hz: 100.0,
            a: 0.01,
            b: 0.008,
            q_ref: 10.0,
            p0: 0.0,
            ..PiParams::ns2(Limit::Packets(1000))
        };
        let mut q = pi(c);
        for _ in 0..20 {
            q.q.push(pkt(0, 1000, false));
        }
        q.catch_up(SimTime::from_millis(5)); // nothing due yet
        for _ in 0..5 {
            q.dequeue(SimTime::from_millis(25));
        }
        // At 25 ms the samples at 10 and 20 ms ran with q = 20: p = 0.1, then 0.1 − 0.08 + 0.1.
        assert!((q.prob() - 0.12).abs() < 1e-12);
        // aqm_state at 30 ms: the sample at 30 sees 15: 0.05 − 0.08 + 0.12 = 0.09.
        let st = q.aqm_state(SimTime::from_millis(30)).unwrap();
        assert!((st.prob - 0.09).abs() < 1e-12);
        assert_eq!(st.avg_pkts, 15.0);
        assert!((q.prob() - 0.12).abs() < 1e-12);
    }

    #[test]
    fn arrivals_are_dropped_with_probability_p_or_marked_with_ecn() {
        let c = PiParams {
            p0: 0.25,
            a: 0.0,
            b: 0.0,
            ..PiParams::ns2(Limit::Packets(100_000))
        };
        let mut q = pi(c);
        let mut drops = 0;
        for _ in 0..4000 {
            if q.enqueue(pkt(0, 1000, false), SimTime::ZERO).is_err() {
                drops += 1;
            }
        }
        assert!((900..1100).contains(&drops), "{drops}");
        let mut q = pi(PiParams { ecn: true, ..c });
        for _ in 0..4000 {
            q.enqueue(pkt(0, 1000, true), SimTime::ZERO).unwrap();
        }
        let marks = q.stats().marks[DropReason::AqmEarly.index()];
        assert!((900..1100).contains(&marks), "{marks}");
        // Full: a tail drop whatever p.
        let mut q = pi(PiParams {
            limit: Limit::Packets(1),
            p0: 0.0,
            ..c
        });
        q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        assert_eq!(
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap_err().1,
            DropReason::TailDrop
        );
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = PiParams::ns2(Limit::Packets(10));
        assert!(ok.validate().is_ok());
        assert_eq!(
            PiParams {
                sample_hz: 0.0,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "sample_hz"
        );
        assert_eq!(
            PiParams {
                sample_hz: -5.0,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "sample_hz"
        );
        assert_eq!(
            PiParams {
                sample_hz: 2e9,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "sample_hz"
        );
        assert_eq!(PiParams { p0: 2.0, ..ok }.validate().unwrap_err().0, "p0");
        assert_eq!(
            PiParams {
                a: f64::INFINITY,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "a"
        );
    }
}
