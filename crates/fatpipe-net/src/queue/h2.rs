//! HSTCP-H2: the H2-optimal AQM controller of J. de Santi, N. L. S. da Fonseca, M. M. A. E. Lima,
//! "Avaliação de Desempenho de Gerenciamento Ativo de Filas para Redes de Alta Velocidade"
//! (seed 003, `shared/seeds/003-desanti2008-aqm-h2.md`), §4.5 Algorithm 1, with the seed note's
//! corrections.
//!
//! Every 1/`sample_hz` seconds, on the instantaneous queue q in packets:
//!
//! ```text
//! p1 = q0(c − a − b) + a·q + b·q_old − c·q_old1 + p0(1 − d − e) + d·p_old + e·p_old1
//! p1 clipped to [0, 1]
//! p_old1 ← p_old;  q_old1 ← q_old;  p_old ← p1;  q_old ← q
//! ```
//!
//! i.e. Δp[k] = a·Δq[k] + b·Δq[k−1] − c·Δq[k−2] + d·Δp[k−1] + e·Δp[k−2] around (q0, p0).
//! Corrections to the printed algorithm (seed note §4.5, notes 3 and 4): `+ e·p_old1` (printed
//! `− e·p_old1`; the constant p0(1 − d − e) and the stable poles 0.99958, −0.91349 both need +e),
//! and the last two lines update with the new sample, `p_old ← p1`, `q_old ← q` (printed `p0`
//! and `q0`, which would freeze the recursion), as the ns-2 PI code it is patterned on does.
//!
//! - Choices the paper leaves open (seed note §4.5 note 5, §10 item 5), stated: the output is
//!   clipped to [0, 1] and the clipped value is what the state remembers (as ns-2's PI); the state
//!   starts at the design equilibrium (q_old = q_old1 = q0, p_old = p_old1 = p0), as
//!   `fatpipe.models.H2Controller`'s runtime does; arrivals are dropped with probability p1, or
//!   ECN-marked with `ecn` (the paper says "descarte/marcação" throughout); a full queue
//!   tail-drops the arrival.
//! - The sampling has no timer: it runs lazily and exactly at each enqueue and dequeue (see
//!   [`super::sampler`]); sample k is at k/`sample_hz`.
//!
//! Defaults and their sources: a = 7.361e-10, b = 3.06e-13, c = 7.358e-10, d = 0.08609,
//! e = 0.9131 and 8333 Hz, the paper's printed coefficients and sampling rate (seed §4.5, §5;
//! "e^{-10}" read as ×10⁻¹⁰, seed note 1). q0 and p0 have no printed values (the paper's
//! operating point is not in the text): they have no default. Drops count as
//! [`DropReason::AqmEarly`].

use super::droptail::Limit;
use super::pi::{check_finite, check_prob, check_rate};
use super::sampled::{ControlLaw, Sampled};
use fatpipe_core::rng::RngStream;

/// The H2 controller's configuration (the fields of `fatpipe.models.H2Controller.to_dict()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct H2Params {
    pub limit: Limit,
    pub sample_hz: f64,
    /// Equilibrium queue (packets) and probability of the design.
    pub q0: f64,
    pub p0: f64,
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    pub e: f64,
    pub ecn: bool,
}

impl H2Params {
    /// The paper's coefficients at 8333 Hz around the given equilibrium.
    pub fn paper(limit: Limit, q0: f64, p0: f64) -> Self {
        H2Params {
            limit,
            sample_hz: 8333.0,
            q0,
            p0,
            a: 7.361e-10,
            b: 3.06e-13,
            c: 7.358e-10,
            d: 0.08609,
            e: 0.9131,
            ecn: false,
        }
    }

    /// Check the parameters; the error names the scenario field and says why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        check_rate(self.sample_hz)?;
        check_finite("q0", self.q0)?;
        check_prob("p0", self.p0)?;
        for (name, v) in [
            ("a", self.a),
            ("b", self.b),
            ("c", self.c),
            ("d", self.d),
            ("e", self.e),
        ] {
            check_finite(name, v)?;
        }
        Ok(())
    }
}

/// Algorithm 1's state with its coefficients (copied to answer `aqm_state`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct H2Law {
    c: H2Params,
    q_old: f64,
    q_old1: f64,
    p_old: f64,
    p_old1: f64,
}

impl ControlLaw for H2Law {
    const KIND: &'static str = "h2";

    fn update(&mut self, q: f64) {
        let c = &self.c;
        let p1 = c.q0 * (c.c - c.a - c.b) + c.a * q + c.b * self.q_old - c.c * self.q_old1
            + c.p0 * (1.0 - c.d - c.e)
            + c.d * self.p_old
            + c.e * self.p_old1;
        let p1 = p1.clamp(0.0, 1.0);
        self.p_old1 = self.p_old;
        self.q_old1 = self.q_old;
        self.p_old = p1;
        self.q_old = q;
    }
    fn prob(&self) -> f64 {
        self.p_old
    }
    fn last_q(&self) -> f64 {
        self.q_old
    }
}

/// The HSTCP-H2 queue (the shared sampled-controller discipline, `sampled.rs`).
pub type H2 = Sampled<H2Law>;

impl Sampled<H2Law> {
    pub fn new(c: H2Params, rng: RngStream) -> Self {
        let law = H2Law {
            c,
            q_old: c.q0,
            q_old1: c.q0,
            p_old: c.p0,
            p_old1: c.p0,
        };
        Sampled::with_law(law, c.sample_hz, c.limit, c.ecn, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::codel::tests::pkt;
    use crate::queue::Queue;
    use fatpipe_core::SimTime;

    fn h2(c: H2Params) -> H2 {
        H2::new(c, RngStream::new(1, "test/h2"))
    }

    fn toy() -> H2Params {
        H2Params {
            sample_hz: 1000.0,
            q0: 10.0,
            p0: 0.2,
            a: 0.1,
            b: 0.02,
            c: 0.05,
            d: 0.5,
            e: 0.3,
            ..H2Params::paper(Limit::Packets(1000), 0.0, 0.0)
        }
    }

    #[test]
    fn algorithm_1_on_a_given_queue_sequence() {
        // a = 0.1, b = 0.02, c = 0.05, d = 0.5, e = 0.3 around q0 = 10, p0 = 0.2, in deviation
        // form Δp = a Δq + b Δq₁ − c Δq₂ + d Δp₁ + e Δp₂, starting at the equilibrium:
        // q = 12: Δp = 0.1·2 = 0.2                                   → p = 0.4
        // q = 12: Δp = 0.2 + 0.02·2 + 0.5·0.2 = 0.34                 → p = 0.54
        // q = 8:  Δp = −0.2 + 0.04 − 0.05·2 + 0.5·0.34 + 0.3·0.2 = −0.03 → p = 0.17
        // q = 0:  Δp = −1 − 0.04 − 0.1 − 0.015 + 0.102 = −1.053        → p = 0 (clipped; the
        //         state keeps Δp = −0.2)
        // q = 10: Δp = 0 − 0.2 + 0.1 − 0.1 − 0.009 = −0.209            → p = 0
        let c = toy();
        let mut law = h2(c).law;
        let mut out = Vec::new();
        for q in [12.0, 12.0, 8.0, 0.0, 10.0] {
            law.update(q);
            out.push(law.p_old);
        }
        for (o, w) in out.iter().zip([0.4, 0.54, 0.17, 0.0, 0.0]) {
            assert!((o - w).abs() < 1e-12, "{out:?}");
        }
        // The paper's coefficients hold p at p0 while q stays at q0 (seed note target A5), and
        // a queue above q0 raises p.
        let c = H2Params::paper(Limit::Packets(3333), 1666.0, 1e-5);
        let mut law = h2(c).law;
        for _ in 0..1000 {
            law.update(1666.0);
        }
        assert!((law.p_old - 1e-5).abs() < 1e-15, "{}", law.p_old);
        law.update(1766.0);
        assert!(law.p_old > 1e-5);
        // First step: a·100 = 7.361e-8 above p0.
        assert!((law.p_old - 1e-5 - 7.361e-8).abs() < 1e-15);
    }

    #[test]
    fn samples_run_lazily_and_aqm_state_reports_the_value_at_now() {
        // 1000 Hz: samples at 1, 2, 3 ms. 12 packets are queued before 1 ms; nothing else
        // happens until an arrival at 2.5 ms: the samples at 1 and 2 ms both see 12.
        let c = toy();
        let mut q = h2(c);
        for _ in 0..12 {
            q.q.push(pkt(0, 1000, false));
        }
        let _ = q.enqueue(pkt(0, 1000, false), SimTime::from_micros(2500));
        assert!((q.prob() - 0.54).abs() < 1e-12);
        // At 3 ms the sample sees 12 or 13 packets (depending on that arrival's fate).
        let n = q.len_packets() as f64;
        let mut law = q.law;
        law.update(n);
        let st = q.aqm_state(SimTime::from_millis(3)).unwrap();
        assert_eq!(st.prob, law.p_old);
        assert_eq!(st.avg_pkts, n);
        assert!((q.prob() - 0.54).abs() < 1e-12);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = H2Params::paper(Limit::Packets(10), 5.0, 0.01);
        assert!(ok.validate().is_ok());
        assert_eq!(
            H2Params {
                sample_hz: 0.0,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "sample_hz"
        );
        assert_eq!(
            H2Params { q0: f64::NAN, ..ok }.validate().unwrap_err().0,
            "q0"
        );
        assert_eq!(H2Params { p0: -0.1, ..ok }.validate().unwrap_err().0, "p0");
        assert_eq!(
            H2Params {
                e: f64::INFINITY,
                ..ok
            }
            .validate()
            .unwrap_err()
            .0,
            "e"
        );
    }
}
