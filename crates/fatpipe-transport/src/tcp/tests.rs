//! A tiny two-endpoint harness (a lossy wire with fixed one-way delay) that drives a sender and a
//! receiver, so recovery behaviour can be checked without the full simulator.

use super::config::{CwndReduction, LossState, RtoRestart, RttSamples};
use super::*;
use crate::cc;
use fatpipe_core::{RngStream, SimTime};
use fatpipe_net::{Flags, Packet, PacketKind};
use std::collections::VecDeque;

struct Wire {
    delay: SimTime,
    /// (arrival time, packet) in arrival order (FIFO unless a packet is held back).
    q: VecDeque<(SimTime, Packet)>,
}

impl Wire {
    /// Queue `p` to arrive at `at`, after everything due at or before `at`.
    fn put(&mut self, at: SimTime, p: Packet) {
        let k = self.q.partition_point(|(t, _)| *t <= at);
        self.q.insert(k, (at, p));
    }
}

/// What the wire does with a data packet.
enum Fate {
    Deliver,
    Drop,
    /// Deliver it this much later than its turn (reordering after the bottleneck).
    Delay(SimTime),
    /// Deliver it with CE set if it is ECN-capable (an AQM marking instead of dropping).
    Mark,
}

/// Run a finite transfer; `drop(n, pkt)` decides whether the n-th data packet is lost.
/// Returns (sender, receiver, end time).
fn transfer(
    cfg: TcpConfig,
    bytes: u64,
    drop: impl FnMut(u64, &Packet) -> bool,
) -> (TcpSender, TcpReceiver, SimTime) {
    transfer_observed(cfg, bytes, drop, |_| {})
}

/// As [`transfer`], calling `observe(&sender)` after every ACK and timer the sender handles.
fn transfer_observed(
    cfg: TcpConfig,
    bytes: u64,
    mut drop: impl FnMut(u64, &Packet) -> bool,
    observe: impl FnMut(&TcpSender),
) -> (TcpSender, TcpReceiver, SimTime) {
    transfer_on(
        cfg,
        bytes,
        SimTime::ZERO,
        |n, p| {
            if drop(n, p) {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        },
        observe,
    )
}

/// The general harness: data packets leave a bottleneck of `gap` per packet (0: infinitely fast)
/// into a 10 ms path; `fate(n, pkt)` drops, delays or delivers the n-th data packet.
fn transfer_on(
    cfg: TcpConfig,
    bytes: u64,
    gap: SimTime,
    fate: impl FnMut(u64, &Packet) -> Fate,
    observe: impl FnMut(&TcpSender),
) -> (TcpSender, TcpReceiver, SimTime) {
    transfer_with("reno", cfg, bytes, gap, fate, observe)
}

/// [`transfer_on`] with congestion control `cc_name`.
fn transfer_with(
    cc_name: &str,
    cfg: TcpConfig,
    bytes: u64,
    gap: SimTime,
    mut fate: impl FnMut(u64, &Packet) -> Fate,
    mut observe: impl FnMut(&TcpSender),
) -> (TcpSender, TcpReceiver, SimTime) {
    let cc = cc::by_name(cc_name, &toml::Table::new()).unwrap();
    let mut s = TcpSender::new(0, 1, cfg.clone(), cc, Some(bytes));
    let mut r = TcpReceiver::new(0, 0, &cfg, Some(bytes));
    let mut wire = Wire {
        delay: SimTime::from_millis(10),
        q: VecDeque::new(),
    };
    let mut out = Vec::new();
    let mut now = SimTime::ZERO;
    let mut n_data = 0u64;
    let mut link_free = SimTime::ZERO;
    s.start(now, &mut out);
    for _ in 0..2_000_000 {
        for mut p in out.drain(..) {
            let mut at = now + wire.delay;
            if p.kind == PacketKind::Data {
                n_data += 1;
                let turn = now.max(link_free) + gap;
                link_free = turn;
                at = turn + wire.delay;
                match fate(n_data, &p) {
                    Fate::Drop => continue,
                    Fate::Deliver => {}
                    Fate::Delay(d) => at = at + d,
                    Fate::Mark => {
                        if p.flags.markable() {
                            p.flags.set(Flags::CE);
                        }
                    }
                }
            }
            wire.put(at, p);
        }
        s.check_invariants().unwrap();
        if r.completed_at.is_some() && s.is_done() {
            break;
        }
        // Next event: wire arrival or a timer.
        let t_wire = wire.q.front().map(|x| x.0).unwrap_or(SimTime::MAX);
        let t_s = s.next_timer().unwrap_or(SimTime::MAX);
        let t_r = r.next_timer().unwrap_or(SimTime::MAX);
        let t = t_wire.min(t_s).min(t_r);
        assert!(t < SimTime::MAX, "deadlock: nothing scheduled");
        now = t;
        if t == t_wire {
            let (_, p) = wire.q.pop_front().unwrap();
            match p.kind {
                PacketKind::Data => {
                    r.on_data(now, &p, &mut out);
                }
                PacketKind::Ack => {
                    s.on_ack(now, &p, &mut out);
                    observe(&s);
                }
                PacketKind::Datagram | PacketKind::Dccp | PacketKind::DccpAck => {
                    unreachable!("TCP endpoints send no datagrams")
                }
            }
        } else if t == t_s {
            s.on_timer(now, &mut out);
            observe(&s);
        } else {
            r.on_timer(now, &mut out);
        }
    }
    (s, r, now)
}

fn cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        recovery,
        initial_window: 10,
        ..TcpConfig::default()
    }
}

/// SACK recovery with RACK and TLP set as given.
fn rack_tlp(rack: bool, tlp: bool) -> TcpConfig {
    TcpConfig {
        rack,
        tlp,
        ..cfg(Recovery::Sack)
    }
}

#[test]
fn lossless_transfer_delivers_everything_without_retransmissions() {
    let (s, r, _) = transfer(cfg(Recovery::Sack), 1_000_000, |_, _| false);
    assert_eq!(r.bytes_delivered(), 1_000_000);
    assert_eq!(s.stats.retransmits, 0);
    assert_eq!(s.stats.data_packets_sent, 1_000_000u64.div_ceil(1460));
}

#[test]
fn single_loss_is_repaired_by_one_fast_retransmit_with_sack_and_newreno() {
    for rec in [Recovery::Sack, Recovery::NewReno] {
        let (s, r, _) = transfer(cfg(rec), 2_000_000, |n, _| n == 100);
        assert_eq!(r.bytes_delivered(), 2_000_000, "{rec:?}");
        assert_eq!(s.stats.fast_recoveries, 1, "{rec:?}");
        assert_eq!(s.stats.retransmits, 1, "{rec:?}");
        assert_eq!(s.stats.timeouts, 0, "{rec:?}");
    }
}

#[test]
fn sack_repairs_several_losses_in_one_window_without_timeout() {
    // Three non-adjacent losses in one window: SACK recovers all in one episode.
    let (s, r, _) = transfer(cfg(Recovery::Sack), 3_000_000, |n, _| {
        n == 200 || n == 205 || n == 210
    });
    assert_eq!(r.bytes_delivered(), 3_000_000);
    assert_eq!(s.stats.fast_recoveries, 1);
    assert_eq!(s.stats.retransmits, 3);
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn newreno_repairs_several_losses_with_partial_acks() {
    let (s, r, _) = transfer(cfg(Recovery::NewReno), 3_000_000, |n, _| {
        n == 200 || n == 205 || n == 210
    });
    assert_eq!(r.bytes_delivered(), 3_000_000);
    assert_eq!(s.stats.fast_recoveries, 1);
    assert_eq!(s.stats.retransmits, 3);
    assert_eq!(s.stats.timeouts, 0);
}

/// Packet 100 is lost, and so is its retransmission (sent after the third dupack).
fn lose_a_retransmission(c: TcpConfig) -> (TcpSender, TcpReceiver) {
    let mut first_lost_seq = None;
    let (s, r, _) = transfer(c, 1_000_000, |n, p| {
        if n == 100 {
            first_lost_seq = Some(p.seq);
            return true;
        }
        p.flags.retransmit() && Some(p.seq) == first_lost_seq && p.seq != u64::MAX && {
            first_lost_seq = Some(u64::MAX); // drop only the first retransmission
            true
        }
    });
    (s, r)
}

#[test]
fn lost_retransmission_is_detected_by_later_sacks_or_else_repaired_by_timeout() {
    // Linux 2.6-4.x tcp_mark_lost_retrans (RACK off): segments sent after the retransmission
    // are SACKed, so it is sent again within the same recovery, no timeout.
    let (s, r) = lose_a_retransmission(rack_tlp(false, false));
    assert_eq!(r.bytes_delivered(), 1_000_000);
    assert_eq!(s.stats.timeouts, 0);
    assert_eq!(s.stats.retransmits, 2);
    // Without detection only the RTO can repair it.
    let mut c = rack_tlp(false, false);
    c.lost_retransmit = false;
    let (s, r) = lose_a_retransmission(c);
    assert_eq!(r.bytes_delivered(), 1_000_000);
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn random_losses_always_complete_and_keep_invariants() {
    for (seed, rec) in [
        (1, Recovery::Sack),
        (2, Recovery::NewReno),
        (3, Recovery::Sack),
        (4, Recovery::NewReno),
    ] {
        let mut rng = RngStream::new(seed, "loss");
        let (s, r, _) = transfer(cfg(rec), 2_000_000, |_, _| rng.uniform() < 0.03);
        assert_eq!(r.bytes_delivered(), 2_000_000, "seed {seed} {rec:?}");
        assert!(s.stats.retransmits > 0);
    }
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let mut c = cfg(Recovery::Sack);
    c.delayed_ack = true;
    let (s, r, _) = transfer(c, 1_460_000, |_, _| false);
    assert_eq!(r.bytes_delivered(), 1_460_000);
    // 1000 segments; one ACK per two segments, give or take the delayed-ACK timer at window edges.
    assert!(
        r.acks_sent >= 500 && r.acks_sent < 600,
        "acks {}",
        r.acks_sent
    );
    assert_eq!(s.stats.retransmits, 0);
}

#[test]
fn rto_follows_the_chosen_estimator_after_samples() {
    // Constant 20 ms RTT. Linux (default): the variance term never drops below min_rto, which is
    // added to SRTT: RTO = 20 + 200 ms.
    let (s, _, _) = transfer(cfg(Recovery::Sack), 100_000, |_, _| false);
    assert_eq!(s.rtt.srtt(), Some(SimTime::from_millis(20)));
    assert_eq!(s.rtt.rto(), SimTime::from_millis(220));
    // RFC 6298: RTTVAR decays and the RTO clamps to min_rto 200 ms.
    let mut c = cfg(Recovery::Sack);
    c.rto_estimator = crate::tcp::RtoEstimator::Rfc6298;
    let (s, _, _) = transfer(c, 100_000, |_, _| false);
    assert_eq!(s.rtt.srtt(), Some(SimTime::from_millis(20)));
    assert_eq!(s.rtt.rto(), SimTime::from_millis(200));
}

#[test]
fn newreno_with_many_losses_in_a_window_times_out_instead_of_one_loss_per_rtt() {
    // Every other packet of a 60-packet stretch is lost. Repairing one hole per RTT (20 ms) would
    // take 30 RTTs = 600 ms; with the Impatient rule (RFC 6582 §4) the timer set at the first
    // partial ACK expires after 200 ms (min RTO) and slow start repairs the rest.
    let (s, r, _t) = transfer(cfg(Recovery::NewReno), 3_000_000, |n, p| {
        !p.flags.retransmit() && (300..360).contains(&n) && n % 2 == 0
    });
    assert_eq!(r.bytes_delivered(), 3_000_000);
    // One fast recovery: the dupacks that go-back-N duplicates cause after the timeout must
    // not start another (RFC 6582 §3.2 step 2 / §4.1; an off-by-one here once let them).
    assert_eq!(s.stats.fast_recoveries, 1);
    assert_eq!(s.stats.timeouts, 1);
    // The same losses with SACK are repaired in one episode without a timeout.
    let (s, r, _) = transfer(cfg(Recovery::Sack), 3_000_000, |n, p| {
        !p.flags.retransmit() && (300..360).contains(&n) && n % 2 == 0
    });
    assert_eq!(r.bytes_delivered(), 3_000_000);
    assert_eq!(s.stats.timeouts, 0);
}

#[test]
fn cwnd_growth_per_ack_counts_acks_not_segments() {
    // Lossless transfer with delayed ACKs (one ACK per two segments), no ssthresh: in slow
    // start "segments" (Linux) grows cwnd by 2 per ACK (x2 per RTT), "per-ack" (RFC 5681 Eq. 2)
    // by 1 per ACK (x1.5 per RTT), so the window at the end is far smaller.
    let mut final_cwnd = Vec::new();
    for growth in [CwndGrowth::Segments, CwndGrowth::PerAck] {
        let mut c = cfg(Recovery::Sack);
        c.delayed_ack = true;
        c.cwnd_growth = growth;
        let (s, r, _) = transfer(c, 1_460_000, |_, _| false);
        assert_eq!(r.bytes_delivered(), 1_460_000);
        assert!(s.tp.snd_cwnd <= 10 + r.acks_sent as u32 * 2);
        final_cwnd.push((s.tp.snd_cwnd, r.acks_sent));
    }
    let ((seg, _), (per_ack, acks)) = (final_cwnd[0], final_cwnd[1]);
    // Never more than one segment per ACK, and clearly below the segment-counting window.
    assert!(per_ack <= 10 + acks as u32, "{per_ack} > 10 + {acks} ACKs");
    assert!(
        (per_ack as f64) < 0.8 * seg as f64,
        "per-ack {per_ack} vs segments {seg}"
    );
}

#[test]
fn rto_ssthresh_halve_again_reduces_a_second_time_during_recovery() {
    // The NewReno many-losses case: fast recovery halves ssthresh, then the timer expires while
    // the episode is still being repaired (one hole per RTT is too slow).
    let losses =
        |n: u64, p: &Packet| !p.flags.retransmit() && (300..360).contains(&n) && n % 2 == 0;
    let mut at_rto = Vec::new();
    for rule in [RtoSsthresh::OncePerEpisode, RtoSsthresh::HalveAgain] {
        let mut c = cfg(Recovery::NewReno);
        c.rto_ssthresh = rule;
        let mut seen = None;
        let mut before = None;
        let (s, r, _) = transfer_observed(c, 3_000_000, losses, |s| {
            if s.stats.timeouts == 0 {
                before = Some(s.tp.snd_ssthresh);
            } else if seen.is_none() {
                seen = Some((before.unwrap_or(0), s.tp.snd_ssthresh));
            }
        });
        assert_eq!(r.bytes_delivered(), 3_000_000);
        assert!(s.stats.timeouts >= 1, "{rule:?}");
        at_rto.push(seen.expect("a timeout was observed"));
    }
    let ((fr, once), (fr2, again)) = (at_rto[0], at_rto[1]);
    assert_eq!(fr, fr2, "identical up to the timeout");
    // Once per episode keeps the fast-recovery ssthresh (cwnd equals it during recovery);
    // halve-again halves it (floor 2).
    assert_eq!(once, fr);
    assert_eq!(again, (fr / 2).max(2));
}

#[test]
fn rto_ssthresh_every_timeout_floors_ssthresh_on_a_repeated_timeout() {
    // Segment 300 is lost three times: the original, the fast retransmission and the first
    // timeout's retransmission, so two timeouts follow each other. ssthresh after the second:
    // once per episode keeps the fast recovery's; halve-again halved once, at the first timeout;
    // every-timeout (ns-2 TCP-Linux) asks again from cwnd = 1 and gets Reno's floor, 2.
    let mut after = Vec::new();
    for rule in [
        RtoSsthresh::OncePerEpisode,
        RtoSsthresh::HalveAgain,
        RtoSsthresh::EveryTimeout,
    ] {
        let mut c = cfg(Recovery::Sack);
        c.rto_ssthresh = rule;
        // Only the timer may repair a lost retransmission here.
        (c.rack, c.tlp, c.lost_retransmit) = (false, false, false);
        let mut sent_300 = 0;
        let mut fr = None;
        let mut second = None;
        let (s, r, _) = transfer_observed(
            c,
            1_000_000,
            |_, p| {
                if p.seq / 1460 == 300 {
                    sent_300 += 1;
                    sent_300 <= 3
                } else {
                    false
                }
            },
            |s| {
                if s.stats.timeouts == 0 && s.stats.fast_recoveries == 1 {
                    fr = Some(s.tp.snd_ssthresh);
                } else if s.stats.timeouts == 2 && second.is_none() {
                    second = Some(s.tp.snd_ssthresh);
                }
            },
        );
        assert_eq!(r.bytes_delivered(), 1_000_000, "{rule:?}");
        assert_eq!(s.stats.timeouts, 2, "{rule:?}");
        after.push((fr.expect("fast recovery"), second.expect("second timeout")));
    }
    let fr = after[0].0;
    assert!(
        after.iter().all(|&(f, _)| f == fr),
        "identical up to the timeouts: {after:?}"
    );
    assert!(fr > 8, "{after:?}");
    assert_eq!(after[0].1, fr, "once per episode");
    assert_eq!(after[1].1, (fr / 2).max(2), "halve-again");
    assert_eq!(after[2].1, 2, "every timeout");
}

/// RFC 6675 §2: with SACK only ACKs that SACK new data are duplicate ACKs. A delay spike makes
/// the timer expire spuriously; the go-back-N retransmissions reach a receiver that already has
/// them, and its duplicate ACKs carry no new SACK information, so they must not start a fast
/// recovery (nothing is lost: counting them did, once per spike).
#[test]
fn duplicate_acks_without_new_sack_information_do_not_start_recovery() {
    let mut c = cfg(Recovery::Sack);
    (c.rack, c.tlp) = (false, false);
    let (s, r, _) = transfer_on(
        c,
        1_000_000,
        SimTime::ZERO,
        |n, _| {
            if (150..400).contains(&n) {
                Fate::Delay(SimTime::from_millis(1500))
            } else {
                Fate::Deliver
            }
        },
        |_| {},
    );
    assert_eq!(r.bytes_delivered(), 1_000_000);
    assert!(s.stats.timeouts >= 1, "the spike must fire the timer");
    assert!(
        s.stats.retransmits > 3,
        "go-back-N sends duplicates: {}",
        s.stats.retransmits
    );
    assert_eq!(s.stats.fast_recoveries, 0);
}

/// RFC 3168: a CE mark on one segment makes the receiver echo ECE until the sender's CWR; the
/// sender halves its window once (ssthresh from the algorithm, nothing retransmitted) and not
/// again for the marks of the same window; marks a window later reduce again. Without `ecn`
/// nothing is ECT, so marks cannot happen and the window is untouched.
#[test]
fn ecn_echo_halves_the_window_once_per_window_without_retransmitting() {
    let run = |ecn: bool, marked: &'static [u64]| {
        let c = TcpConfig {
            initial_window: 40,
            initial_ssthresh: 40,
            ecn,
            ..cfg(Recovery::Sack)
        };
        let mut trace = Vec::new();
        let (s, r, _) = transfer_on(
            c,
            2_000_000,
            SimTime::ZERO,
            |n, _| {
                if marked.contains(&n) {
                    Fate::Mark
                } else {
                    Fate::Deliver
                }
            },
            |s| trace.push((s.tp.snd_cwnd, s.tp.snd_ssthresh)),
        );
        assert_eq!(r.bytes_delivered(), 2_000_000);
        (s, trace)
    };
    // Three marks within one window (segments 200..202): one reduction.
    let (s, trace) = run(true, &[200, 201, 202]);
    assert_eq!(s.stats.ecn_reductions, 1);
    assert_eq!(s.stats.retransmits, 0);
    assert_eq!(s.stats.fast_recoveries, 0);
    let ssth = trace.iter().map(|t| t.1).min().unwrap();
    // Reno halves the window (40 segments plus its congestion-avoidance growth by then).
    assert!((20..=24).contains(&ssth), "{ssth}");
    // Marks two windows apart (200, then 400): two reductions.
    let (s, _) = run(true, &[200, 400]);
    assert_eq!(s.stats.ecn_reductions, 2);
    // ECN off: packets are not ECT, the marks cannot apply.
    let (s, trace) = run(false, &[200, 201, 202]);
    assert_eq!(s.stats.ecn_reductions, 0);
    assert!(trace.iter().all(|t| t.1 == 40));
}

#[test]
fn send_jitter_holds_each_flight_for_one_random_delay_then_sends_the_window() {
    // ns-2 `overhead_` semantics (TcpAgent::send_much): the initial window of 10 waits one
    // U(0, 1 ms) delay, then all ten segments leave together, in order. (The old gate sent one
    // packet per delay, capping a sender near 2/jitter packets per second: it fails here.)
    let mut c = cfg(Recovery::Sack);
    c.send_jitter = SimTime::from_millis(1);
    let cc = cc::by_name("reno", &toml::Table::new()).unwrap();
    let mut s = TcpSender::new(0, 1, c.clone(), cc, None).with_seed(5, 0);
    let mut out = Vec::new();
    s.start(SimTime::ZERO, &mut out);
    assert!(out.is_empty(), "nothing leaves before the delay");
    let due = s.next_timer().expect("a delayed send is pending");
    assert!(
        due > SimTime::ZERO && due < SimTime::from_millis(1),
        "{due:?}"
    );
    s.on_timer(due, &mut out);
    let seqs: Vec<u64> = out.iter().map(|p| p.seq / 1460).collect();
    assert_eq!(seqs, (0..10).collect::<Vec<_>>());
    // The next opportunity (an ACK opening the window) draws a fresh delay.
    out.clear();
    assert!(s
        .next_timer()
        .map_or(true, |t| t > due || t >= SimTime::from_millis(200)));
    // Another seed gives another delay; no jitter sends the whole window at once.
    let cc = cc::by_name("reno", &toml::Table::new()).unwrap();
    let mut s2 = TcpSender::new(0, 1, c, cc, None).with_seed(6, 0);
    s2.start(SimTime::ZERO, &mut out);
    assert!(out.is_empty());
    assert_ne!(s2.next_timer(), Some(due));
    let cc = cc::by_name("reno", &toml::Table::new()).unwrap();
    let mut s3 = TcpSender::new(0, 1, cfg(Recovery::Sack), cc, None);
    s3.start(SimTime::ZERO, &mut out);
    assert_eq!(out.len(), 10);
}

#[test]
fn rto_restart_every_ack_rearms_the_timer_on_duplicate_acks() {
    // Segment 100 is lost. Record the RTO deadline right after each duplicate ACK: with
    // "every-ack" (ns-2 Agent/TCP/Linux) it moves with every dupack; with "advance" (Linux,
    // RFC 6298) it stays where the last advancing ACK or the head's retransmission put it.
    for (restart, moves) in [(RtoRestart::EveryAck, true), (RtoRestart::Advance, false)] {
        // RACK-TLP off: their timers share the slot and would move it on duplicate ACKs too.
        let mut c = rack_tlp(false, false);
        c.rto_restart = restart;
        c.lost_retransmit = false;
        // Deadline moves on ACKs that neither advance snd_una nor retransmit anything.
        let mut moved_on_dupacks = 0;
        let mut last = (0, 0, None);
        let (s, r, _) = transfer_observed(
            c,
            400_000,
            |n, p| n == 100 && !p.flags.retransmit(),
            |s| {
                let now = (s.bytes_acked(), s.stats.retransmits, s.next_timer());
                if now.0 == last.0 && now.1 == last.1 && now.2 != last.2 {
                    moved_on_dupacks += 1;
                }
                last = now;
            },
        );
        assert_eq!(r.bytes_delivered(), 400_000);
        assert_eq!(s.stats.timeouts, 0);
        assert_eq!(
            moved_on_dupacks > 0,
            moves,
            "{restart:?}: {moved_on_dupacks}"
        );
    }
}

/// Segments sent on each ACK of the first fast recovery after one loss in a window of about 40
/// (slow start capped at 40, loss of the 200th data packet), for a cwnd-reduction mode; and the
/// cwnd and ssthresh once the recovery is over.
fn recovery_sends_with(cc_name: &str, mode: CwndReduction) -> (Vec<u64>, u32, u32) {
    let c = TcpConfig {
        initial_window: 40,
        initial_ssthresh: 40,
        cwnd_reduction: mode,
        ..cfg(Recovery::Sack)
    };
    let mut per_ack = Vec::new();
    let mut last_sent = 0u64;
    let mut after = None;
    let mut seen_recovery = false;
    let (s, _, _) = transfer_with(
        cc_name,
        c,
        1_000_000,
        SimTime::ZERO,
        |n, _| if n == 200 { Fate::Drop } else { Fate::Deliver },
        |s| {
            let in_rec = s.tp.ca_state == crate::cc::CaState::Recovery;
            if in_rec && after.is_none() {
                seen_recovery = true;
                per_ack.push(s.stats.data_packets_sent - last_sent);
            } else if seen_recovery && after.is_none() {
                after = Some((s.tp.snd_cwnd, s.tp.snd_ssthresh));
            }
            last_sent = s.stats.data_packets_sent;
        },
    );
    assert_eq!(s.stats.fast_recoveries, 1, "{mode:?}");
    assert_eq!(s.stats.timeouts, 0, "{mode:?}");
    let (cwnd, ssthresh) = after.expect("recovery ended");
    (per_ack, cwnd, ssthresh)
}

#[test]
fn cwnd_reduction_modes_differ_in_when_recovery_sends_and_agree_at_its_end() {
    // Rate halving is checked with a module that has no min_cwnd in ns-2 (H-TCP, whose first
    // backoff halves as Reno's): then it ends at ssthresh like the others. With min_cwnd see
    // rate_halving_drains_to_min_cwnd_and_moderates_on_exit.
    for (cc_name, mode) in [
        ("reno", CwndReduction::Prr),
        ("htcp", CwndReduction::RateHalving),
        ("reno", CwndReduction::AtOnce),
    ] {
        let (sends, cwnd, ssthresh) = recovery_sends_with(cc_name, mode);
        let n = sends.len();
        // About one window (~40) of ACKs arrives during the recovery.
        assert!((30..=45).contains(&n), "{mode:?}: {n} ACKs in recovery");
        // All three end at cwnd = ssthresh = half the window (Linux tcp_end_cwnd_reduction).
        assert_eq!(cwnd, ssthresh, "{mode:?}");
        assert!(
            (20..=24).contains(&ssthresh),
            "{mode:?}: ssthresh {ssthresh}"
        );
        let first_half: u64 = sends[1..n / 2].iter().sum();
        let total: u64 = sends.iter().sum();
        // Over the recovery each mode sends about ssthresh segments (the retransmission and
        // new data): ~ half of what is delivered.
        assert!(
            (total as i64 - ssthresh as i64).abs() <= 3,
            "{mode:?}: {total} sent, {sends:?}"
        );
        match mode {
            // PRR (RFC 6937 §3: sndcnt = ceil(prr_delivered·ssthresh/prior_cwnd) − prr_out) and
            // rate halving send one segment per two ACKs from the start of the recovery.
            CwndReduction::Prr | CwndReduction::RateHalving => assert!(
                (first_half as i64 - (n / 2) as i64 / 2).abs() <= 2,
                "{mode:?}: {first_half} sent on the first {} ACKs: {sends:?}",
                n / 2
            ),
            // At once: the pipe must first fall from ~40 to ~20, so the first half sends nothing
            // after the fast retransmit.
            CwndReduction::AtOnce => assert_eq!(first_half, 0, "{sends:?}"),
        }
    }
}

/// ns-2.35's Agent/TCP/Linux: a module with `min_cwnd` (Reno: ssthresh/2) enters recovery with
/// cwnd = min_cwnd, so a recovery that lasts several RTTs (NewReno, three losses in one window:
/// one repaired per RTT) lets rate halving drain the pipe to a quarter of the window, and on
/// leaving it cwnd = min(ssthresh, pipe + 3). Without min_cwnd (H-TCP) the pipe stops at
/// ssthresh and recovery ends there.
#[test]
fn rate_halving_drains_to_min_cwnd_and_moderates_on_exit() {
    let run = |cc_name: &str| {
        let c = TcpConfig {
            initial_window: 40,
            initial_ssthresh: 40,
            cwnd_reduction: CwndReduction::RateHalving,
            ..cfg(Recovery::NewReno)
        };
        let mut min_pipe = u32::MAX;
        let mut after = None;
        let mut seen = false;
        let (s, _, _) = transfer_with(
            cc_name,
            c,
            1_000_000,
            SimTime::ZERO,
            |n, p| {
                if !p.flags.retransmit() && [200, 205, 210].contains(&n) {
                    Fate::Drop
                } else {
                    Fate::Deliver
                }
            },
            |s| {
                if s.tp.ca_state == crate::cc::CaState::Recovery && after.is_none() {
                    seen = true;
                    min_pipe = min_pipe.min(s.tp.packets_in_flight);
                } else if seen && after.is_none() {
                    after = Some((s.tp.snd_cwnd, s.tp.snd_ssthresh));
                }
            },
        );
        assert_eq!(s.stats.fast_recoveries, 1, "{cc_name}");
        assert_eq!(s.stats.timeouts, 0, "{cc_name}");
        let (cwnd, ssthresh) = after.expect("recovery ended");
        (min_pipe, cwnd, ssthresh)
    };
    let (pipe, cwnd, ssthresh) = run("reno");
    assert!((20..=24).contains(&ssthresh), "reno ssthresh {ssthresh}");
    let floor = ssthresh / 2;
    assert!(
        pipe <= floor + 1,
        "reno: pipe fell to {pipe}, min_cwnd {floor}"
    );
    assert!(
        cwnd >= floor && cwnd <= floor + 1 + 3,
        "reno: cwnd {cwnd} after, min_cwnd {floor}"
    );
    assert!(
        cwnd < ssthresh,
        "reno: moderated below ssthresh {ssthresh}: {cwnd}"
    );
    let (pipe, cwnd, ssthresh) = run("htcp");
    assert!(
        pipe + 1 >= ssthresh,
        "htcp: pipe fell to {pipe} below ssthresh {ssthresh}"
    );
    assert_eq!(cwnd, ssthresh, "htcp");
}

// ---- RACK-TLP (RFC 8985) ----

/// The first transmission of segment `seg` (number) is dropped.
fn drop_segments(segs: &'static [u64]) -> impl FnMut(u64, &Packet) -> bool {
    move |_, p| !p.flags.retransmit() && segs.contains(&(p.seq / 1460))
}

#[test]
fn tail_loss_is_repaired_by_a_loss_probe_without_rto() {
    // 100 segments, the last two lost: no segment after them can be SACKed, so neither RFC 6675
    // nor RACK sees the loss. With TLP the probe (segment 99 again: nothing new to send) leaves
    // PTO = 2 SRTT + 2 ms = 42 ms after the last ACK; its SACK lets RACK mark 98, and fast
    // recovery repairs it. Without TLP the RTO (SRTT + 200 ms) fires.
    let bytes = 100 * 1460;
    let (s, r, t_tlp) = transfer(rack_tlp(true, true), bytes, drop_segments(&[98, 99]));
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!(s.stats.timeouts, 0);
    assert_eq!(s.stats.loss_probes, 1);
    assert_eq!(s.stats.retransmits, 2);
    let (s, r, t_rto) = transfer(rack_tlp(true, false), bytes, drop_segments(&[98, 99]));
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(s.stats.loss_probes, 0);
    assert!(
        t_tlp + SimTime::from_millis(150) < t_rto,
        "{t_tlp} vs {t_rto}"
    );
    // Only the last segment lost: one segment is out, so PTO = 2 SRTT + min_rto (a delayed ACK
    // may be pending, RFC 8985 §7.2), capped by the RTO. The probe then goes when the RTO would
    // have, but it is a probe: no timeout, no collapse of cwnd to 1.
    let (s, r, _) = transfer(rack_tlp(true, true), bytes, drop_segments(&[99]));
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!((s.stats.timeouts, s.stats.loss_probes), (0, 1));
    let (s, _, _) = transfer(rack_tlp(true, false), bytes, drop_segments(&[99]));
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn tail_of_three_lost_probe_then_rack_recover_without_rto() {
    // The last three segments are lost: the probe (segment 99 again) is SACKed above 97 and
    // 98, RACK marks them lost by time (they were sent before it) and fast recovery repairs them.
    let bytes = 100 * 1460;
    let (s, r, _) = transfer(rack_tlp(true, true), bytes, drop_segments(&[97, 98, 99]));
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!(s.stats.timeouts, 0);
    assert_eq!(s.stats.loss_probes, 1);
    assert_eq!(s.stats.fast_recoveries, 1);
    assert_eq!(s.stats.retransmits, 3);
}

#[test]
fn rack_reordering_timer_repairs_a_loss_with_too_few_sacks_for_dupthresh() {
    // Segment 18 of 20 is lost: only 19 is SACKed above it, fewer than DupThresh, so RFC 6675
    // waits for the RTO. RACK marks it once RACK.rtt + min_rtt/4 has passed since it was sent
    // (the reordering timer) and starts fast recovery. TLP off to isolate RACK.
    let bytes = 20 * 1460;
    let (s, r, _) = transfer(rack_tlp(true, false), bytes, drop_segments(&[18]));
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!(s.stats.timeouts, 0);
    assert_eq!(s.stats.fast_recoveries, 1);
    assert_eq!(s.stats.retransmits, 1);
    let (s, r, _) = transfer(rack_tlp(false, false), bytes, drop_segments(&[18]));
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!(s.stats.timeouts, 1);
}

#[test]
fn rack_detects_a_lost_retransmission_by_time() {
    // The retransmission of segment 99 is lost too. With RACK (and the SACK-count rule off) the
    // segments sent after the retransmission are delivered, RACK.xmit_ts passes its send time,
    // and one RACK.rtt later it is lost again: a second retransmission, no timeout.
    let mut c = rack_tlp(true, false);
    c.lost_retransmit = false;
    let (s, r) = lose_a_retransmission(c);
    assert_eq!(r.bytes_delivered(), 1_000_000);
    assert_eq!(s.stats.timeouts, 0);
    assert_eq!(s.stats.retransmits, 2);
    assert_eq!(s.stats.fast_recoveries, 1);
}

/// Over a 12 Mb/s bottleneck (1 ms per packet), packet 100 is held back 1.5 ms (one later
/// packet overtakes it) and packet 300 by 4.5 ms (four overtake it).
fn reorder(n: u64, _: &Packet) -> Fate {
    match n {
        100 => Fate::Delay(SimTime::from_micros(1_500)),
        300 => Fate::Delay(SimTime::from_micros(4_500)),
        _ => Fate::Deliver,
    }
}

#[test]
fn reordering_within_the_reordering_window_is_not_retransmitted() {
    // The first event shows RACK reordering (an original fills a hole below SACKed data), so the
    // window is min_rtt/4 (about 5 ms) from then on: four SACKs above packet 300 do not mark it
    // lost because it arrives within 4.5 ms. RFC 6675's DupThresh rule retransmits it.
    let bytes = 600 * 1460;
    let gap = SimTime::from_millis(1);
    let (s, r, _) = transfer_on(rack_tlp(true, true), bytes, gap, reorder, |_| {});
    assert_eq!(r.bytes_delivered(), bytes);
    assert!(s.reordering_seen());
    assert_eq!(s.stats.retransmits, 0, "RACK: no spurious retransmission");
    assert_eq!(s.stats.fast_recoveries, 0);
    let (s, r, _) = transfer_on(rack_tlp(false, false), bytes, gap, reorder, |_| {});
    assert_eq!(r.bytes_delivered(), bytes);
    assert_eq!(
        s.stats.retransmits, 1,
        "DupThresh: one spurious fast retransmit"
    );
}

#[test]
fn rack_tlp_runs_are_deterministic_and_keep_invariants() {
    // Random losses and reordering: every run completes with a consistent scoreboard
    // (checked after every event by the harness), and the same inputs give the same run.
    let run = |seed: u64| {
        let mut rng = RngStream::new(seed, "loss");
        let mut rng2 = RngStream::new(seed, "reorder");
        transfer_on(
            rack_tlp(true, true),
            2_000_000,
            SimTime::from_micros(200),
            move |_, _| {
                if rng.uniform() < 0.03 {
                    Fate::Drop
                } else if rng2.uniform() < 0.02 {
                    Fate::Delay(SimTime::from_micros((rng2.uniform() * 3000.0) as u64))
                } else {
                    Fate::Deliver
                }
            },
            |_| {},
        )
    };
    for seed in 1..=4 {
        let (a, ra, ta) = run(seed);
        let (b, rb, tb) = run(seed);
        assert_eq!(ra.bytes_delivered(), 2_000_000, "seed {seed}");
        assert_eq!(rb.bytes_delivered(), 2_000_000);
        assert_eq!(ta, tb, "seed {seed}: same end time");
        assert_eq!(
            format!("{:?}", a.stats),
            format!("{:?}", b.stats),
            "seed {seed}: same counters"
        );
    }
}

/// A streaming sender sends `n` segments at `t` over a lossless 50 ms wire; returns when all are
/// acknowledged (the time of the last ACK).
fn stream_burst(tx: &mut TcpSender, rx: &mut TcpReceiver, n: u64, t: SimTime) -> SimTime {
    let d = SimTime::from_millis(50);
    let mut out = Vec::new();
    tx.write_segments(n, t, &mut out);
    let mut now = t;
    while !out.is_empty() {
        let data: Vec<Packet> = std::mem::take(&mut out);
        let mut acks = Vec::new();
        for p in &data {
            rx.on_data(now + d, p, &mut acks);
        }
        now = now + d + d;
        for a in &acks {
            tx.on_ack(now, a, &mut out);
        }
    }
    now
}

#[test]
fn idle_restart_rules_rfc2861_halves_ns2_returns_to_the_initial_window() {
    let run = |rule: IdleRestart, idle_ms: u64| {
        let c = TcpConfig {
            initial_window: 2,
            idle_restart: rule,
            ..cfg(Recovery::Sack)
        };
        let mut tx = TcpSender::new(
            0,
            1,
            c.clone(),
            cc::by_name("reno", &Default::default()).unwrap(),
            None,
        )
        .streaming();
        let mut rx = TcpReceiver::new(0, 0, &c, None);
        let mut out = Vec::new();
        tx.start(SimTime::ZERO, &mut out);
        let end = stream_burst(&mut tx, &mut rx, 200, SimTime::ZERO);
        let before = tx.tp.snd_cwnd;
        // The next write after `idle_ms` without traffic (the RTO is ~300 ms here).
        let t = end + SimTime::from_millis(idle_ms);
        tx.write_segments(1, t, &mut out);
        (before, tx.tp.snd_cwnd, tx.tp.snd_ssthresh)
    };
    let (before, after, _) = run(IdleRestart::Rfc2861, 100);
    assert_eq!(before, after, "shorter than an RTO: no restart");
    let (before, after, ssthresh) = run(IdleRestart::Rfc2861, 450);
    assert!(before > 8, "slow start grew the window: {before}");
    assert_eq!(
        after,
        before / 2,
        "one idle RTO (and less than two) halves it"
    );
    assert!(ssthresh >= before * 3 / 4);
    let (_, after, ssthresh) = run(IdleRestart::InitialWindow, 450);
    assert_eq!(after, 2, "ns-2: back to the initial window");
    assert_eq!(ssthresh, u32::MAX, "ns-2 keeps ssthresh");
}

#[test]
fn rtt_samples_every_ack_lets_duplicate_acks_raise_the_rto_during_recovery() {
    // One segment lost behind a 1 ms-per-packet bottleneck: the duplicate ACKs that follow echo
    // TS.Recent, the timestamp of the segment before the hole (RFC 7323 §4.3), so their samples
    // grow with the time since the hole. ns-2.35's TCP-Linux feeds them to the estimator
    // ("every-ack"); RFC 7323 §4.2 and Linux take samples only from ACKs of new data.
    let mut peak = Vec::new();
    for rule in [RttSamples::NewData, RttSamples::EveryAck] {
        let mut c = cfg(Recovery::Sack);
        (c.rack, c.tlp) = (false, false);
        c.rto_estimator = RtoEstimator::Rfc6298;
        c.rtt_samples = rule;
        let mut max_rto = SimTime::ZERO;
        let mut rto_before = None;
        let (s, r, _) = transfer_on(
            c,
            2_000_000,
            SimTime::from_millis(1),
            |n, p| {
                if n == 300 && !p.flags.retransmit() {
                    Fate::Drop
                } else {
                    Fate::Deliver
                }
            },
            |s| {
                if s.stats.fast_recoveries == 0 {
                    rto_before = Some(s.rtt.rto());
                } else if s.tp.ca_state == cc::CaState::Recovery {
                    max_rto = max_rto.max(s.rtt.rto());
                }
            },
        );
        assert_eq!(r.bytes_delivered(), 2_000_000, "{rule:?}");
        assert_eq!(s.stats.fast_recoveries, 1, "{rule:?}");
        peak.push((rto_before.unwrap(), max_rto));
    }
    let ((before, new_data), (before2, every_ack)) = (peak[0], peak[1]);
    assert_eq!(before, before2, "identical up to the loss");
    // ACKs of new data keep the RTO where it was; the duplicates' samples raise it.
    assert!(new_data <= before, "{peak:?}");
    assert!(every_ack.as_nanos() > before.as_nanos() * 3 / 2, "{peak:?}");
}

#[test]
fn loss_state_ns2_repairs_a_lost_retransmission_by_a_recovery_instead_of_a_timeout() {
    // Segments 300 and 310 are lost, and so are their fast retransmissions: the timer fires.
    // In Loss, 300's third copy arrives, 310's is lost again while new data sent after it is
    // SACKed. Linux's Loss state leaves that to a second timeout; ns-2.35's TCP-Linux marks the
    // retransmission lost (data sent after it arrived) and starts a Recovery.
    let mut out = Vec::new();
    for rule in [LossState::Linux, LossState::Ns2] {
        let mut c = cfg(Recovery::Sack);
        (c.rack, c.tlp, c.lost_retransmit) = (false, false, false);
        c.cwnd_reduction = CwndReduction::RateHalving;
        c.loss_state = rule;
        let mut sends = std::collections::HashMap::new();
        let (s, r, _) = transfer_observed(
            c,
            5_000_000,
            |_, p| {
                let seg = p.seq / 1460;
                let k = sends.entry(seg).or_insert(0u32);
                *k += 1;
                (seg == 300 && *k <= 2) || (seg == 310 && *k <= 3)
            },
            |_| {},
        );
        assert_eq!(r.bytes_delivered(), 5_000_000, "{rule:?}");
        out.push((s.stats.timeouts, s.stats.fast_recoveries));
    }
    assert_eq!(out[0], (2, 1), "linux: {out:?}");
    assert_eq!(out[1], (1, 2), "ns2: {out:?}");
}
