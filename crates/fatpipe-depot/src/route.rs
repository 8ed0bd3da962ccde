//! Which depots a download goes through: the static chains of the configuration (the paper's
//! experiments), or, as an extension, the candidate whose segments balance RTTs best.
//!
//! The paper's model (Eqs. 1–3, seed note §3): chain throughput is the minimum of the segments'
//! Mathis rates, so with equal MSS and loss the gain over a direct connection is
//! RTT_e2e / max_i RTT_i. The origin knows RTT_e2e from the client's own connection (the kernel's
//! estimate, TCP_INFO) and the configuration gives the segments it cannot measure (depot to depot,
//! last depot to origin). The client's segment is estimated as what is left of RTT_e2e once the
//! others are taken out — which assumes the depots lie on the path, as in the paper's linear
//! testbed. This choice is an extension, not in the paper (which leaves depot selection to
//! future work, §2.4).

use crate::config::{AutoSection, ChainRule};
use std::net::SocketAddr;
use std::time::Duration;

/// The static rule for `path`: the first whose prefix starts it.
pub fn static_chain<'a>(rules: &'a [ChainRule], path: &str) -> Option<&'a [SocketAddr]> {
    rules
        .iter()
        .find(|r| path.starts_with(&r.prefix))
        .map(|r| r.depots.as_slice())
}

/// The model's predicted gain of a candidate for a client `e2e_ms` away: RTT_e2e / max segment.
/// The first segment is RTT_e2e minus the configured ones, floored at 0 (a candidate whose
/// configured segments alone exceed RTT_e2e is off the path: its largest segment decides).
pub fn predicted_gain(e2e_ms: f64, segment_rtt_ms: &[f64]) -> f64 {
    let rest: f64 = segment_rtt_ms.iter().sum();
    let first = (e2e_ms - rest).max(0.0);
    let worst = segment_rtt_ms.iter().copied().fold(first, f64::max);
    if worst <= 0.0 {
        return 1.0;
    }
    e2e_ms / worst
}

/// The candidate with the largest predicted gain, if it reaches `min_gain`; otherwise `None`
/// (serve directly). `rtt` is the client connection's RTT; unknown means direct.
pub fn auto_chain(auto: &AutoSection, rtt: Option<Duration>) -> Option<(&[SocketAddr], f64)> {
    let e2e_ms = rtt?.as_secs_f64() * 1e3;
    auto.candidate
        .iter()
        .map(|c| {
            (
                c.depots.as_slice(),
                predicted_gain(e2e_ms, &c.segment_rtt_ms),
            )
        })
        .filter(|(_, g)| *g >= auto.min_gain)
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Checks the auto section at start-up.
pub fn check_auto(auto: &AutoSection) -> Result<(), String> {
    if !(auto.min_gain.is_finite() && auto.min_gain >= 1.0) {
        return Err(format!(
            "origin.auto.min_gain = {}: give a number >= 1",
            auto.min_gain
        ));
    }
    for (i, c) in auto.candidate.iter().enumerate() {
        if c.depots.is_empty() {
            return Err(format!(
                "origin.auto.candidate[{i}].depots: give at least one depot"
            ));
        }
        if c.segment_rtt_ms.len() != c.depots.len() {
            return Err(format!(
                "origin.auto.candidate[{i}].segment_rtt_ms: give {} values (D1-D2 ... Dk-origin), got {}",
                c.depots.len(),
                c.segment_rtt_ms.len()
            ));
        }
        if c.segment_rtt_ms
            .iter()
            .any(|r| !(r.is_finite() && *r >= 0.0))
        {
            return Err(format!(
                "origin.auto.candidate[{i}].segment_rtt_ms: give non-negative milliseconds"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AutoCandidate;

    #[test]
    fn gain_is_e2e_over_the_largest_segment() {
        // The paper's Figure 4 case: equal segments give N.
        assert!((predicted_gain(90.0, &[30.0, 30.0]) - 3.0).abs() < 1e-12);
        assert!((predicted_gain(90.0, &[45.0]) - 2.0).abs() < 1e-12);
        // Unbalanced: the largest segment decides.
        assert!((predicted_gain(90.0, &[10.0, 10.0]) - 90.0 / 70.0).abs() < 1e-12);
        // Off the path: configured segments exceed e2e.
        assert!((predicted_gain(50.0, &[60.0]) - 50.0 / 60.0).abs() < 1e-12);
    }

    #[test]
    fn auto_picks_the_best_balanced_candidate_or_none() {
        let a = |p: u16| -> SocketAddr { format!("127.0.0.1:{p}").parse().unwrap() };
        let auto = AutoSection {
            candidate: vec![
                AutoCandidate {
                    depots: vec![a(1)],
                    segment_rtt_ms: vec![45.0],
                },
                AutoCandidate {
                    depots: vec![a(1), a(2)],
                    segment_rtt_ms: vec![30.0, 30.0],
                },
                AutoCandidate {
                    depots: vec![a(3)],
                    segment_rtt_ms: vec![5.0],
                },
            ],
            min_gain: 1.5,
        };
        let (d, g) = auto_chain(&auto, Some(Duration::from_millis(90))).unwrap();
        assert_eq!(d, &[a(1), a(2)]);
        assert!((g - 3.0).abs() < 1e-9);
        // A short path: no candidate reaches the minimum gain.
        // (6 ms: the best is 6 / max(1, 5) = 1.2.)
        assert!(auto_chain(&auto, Some(Duration::from_millis(6))).is_none());
        assert!(auto_chain(&auto, None).is_none());
        check_auto(&auto).unwrap();
    }

    #[test]
    fn static_rules_first_match() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let rules = vec![
            ChainRule {
                prefix: "/direct/".into(),
                depots: vec![],
            },
            ChainRule {
                prefix: "/".into(),
                depots: vec![a],
            },
        ];
        assert_eq!(static_chain(&rules, "/direct/x"), Some(&[][..]));
        assert_eq!(static_chain(&rules, "/big"), Some(&[a][..]));
        assert_eq!(static_chain(&[], "/big"), None);
    }
}
