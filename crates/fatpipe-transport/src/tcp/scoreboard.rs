//! The sender's scoreboard: one flag byte per outstanding segment (RFC 6675 §3 "scoreboard").
//!
//! Segments are numbered from 0 (segment i carries bytes [i·MSS, (i+1)·MSS)). The scoreboard holds
//! the segments in [una, nxt) in rings indexed by segment number ([`SegRing`]), so memory grows
//! with the packets in flight, not with simulated time, a cumulative ACK only moves `una` when
//! no segment it covers carries a mark, and every operation is O(1) amortised except range
//! marking, which is linear in the size of the *newly* covered range.
//!
//! Counters follow Linux naming: `sacked_out`, `lost_out`, `retrans_out`; the pipe (RFC 6675
//! SetPipe / Linux `tcp_packets_in_flight`) is `outstanding - sacked_out - lost_out + retrans_out`.

use super::rack::{sent_after, Rack, RackAck};
use super::rate::{pick_newer, TxRecord};
use super::seg_ring::SegRing;
use fatpipe_core::SimTime;
use std::collections::VecDeque;

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;
/// Ever retransmitted (Linux `TCPCB_EVER_RETRANS`): never cleared while the segment is
/// outstanding, so RACK can tell an ambiguous delivery from an unambiguous one.
const EVER: u8 = 8;

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    una: u64,
    nxt: u64,
    /// Flags of the outstanding segments [una, nxt).
    flags: SegRing<u8>,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Segments marked lost and not retransmitted since (RFC 6675 NextSeg rule 1 candidates):
    /// `next_lost` answers at once when there are none instead of scanning the window.
    lost_pending: u32,
    /// Highest segment number SACKed + 1 (0 if none outstanding).
    pub high_sacked: u64,
    /// Segments marked lost so far, counting a segment again when it is lost again after its
    /// retransmission (Linux `tp->lost`, `tcp_sum_lost`).
    pub lost_total: u64,
    /// Segments below this have already been considered by `mark_lost_by_sack`.
    lost_hint: u64,
    /// Lost segments below this have been retransmitted (scan hint for `next_lost`).
    retx_hint: u64,
    /// Outstanding retransmissions in the order they were sent, each with the `nxt` of that
    /// moment (Linux `TCP_SKB_CB(skb)->ack_seq`, for lost-retransmission detection) and its send
    /// time (RACK: the log is the time-ordered list of retransmissions in flight, Linux
    /// `tsorted_sent_queue`). Only kept when the sender asks for it
    /// ([`Scoreboard::log_retransmit`]).
    retx_log: VecDeque<(u64, u64, SimTime)>,
    /// Delivery-rate snapshots, one per outstanding segment parallel to `flags` (Linux
    /// `TCP_SKB_CB(skb)->tx`); kept only after [`Scoreboard::track_rate`], so flows whose
    /// algorithm does not use rate samples pay one untaken branch per ACK.
    tx: SegRing<TxRecord>,
    tracking: bool,
    /// The most recently sent segment (S)ACKed since the last `take_rate_pick`, and its snapshot.
    rate_pick: Option<(u64, TxRecord)>,
    /// RACK (RFC 8985): the latest transmission stamp of each outstanding segment, parallel to
    /// `flags`, kept only after [`Scoreboard::track_xmit`]. Stamps are the send time made
    /// strictly increasing per connection (`last_stamp` + 1 ns when several segments leave at
    /// the same instant), so "sent after" is the true send order: in a simulation several ACKs
    /// are handled at one instant, and a retransmission sent on a later one would otherwise
    /// look older than new data sent just before it (RFC 8985's tie-break by sequence assumes
    /// segments of one instant go out in sequence order). The rate snapshots' `tx_time` is
    /// not reused for this: it must stay the true send time.
    xmit: SegRing<SimTime>,
    last_stamp: SimTime,
    timing: bool,
    /// RACK state and the ACK being processed (see `tcp/rack.rs`).
    pub rack: Rack,
    rack_ack: RackAck,
    /// Reordering has been seen (Linux `tp->reord_seen`): a segment sent once was delivered
    /// below one delivered before it.
    pub reord_seen: bool,
    /// Segments below this are not "clean" (neither SACKed, lost nor retransmitted): the RACK
    /// scan of never-retransmitted segments starts here. Flags only ever get set on an
    /// outstanding segment, so the hint only moves up.
    rack_hint: u64,
}

impl Scoreboard {
    pub fn new() -> Self {
        Self::default()
    }
    #[inline]
    pub fn una(&self) -> u64 {
        self.una
    }
    #[inline]
    pub fn nxt(&self) -> u64 {
        self.nxt
    }
    #[inline]
    pub fn outstanding(&self) -> u32 {
        (self.nxt - self.una) as u32
    }
    /// RFC 6675 SetPipe (Linux `tcp_packets_in_flight`).
    #[inline]
    pub fn pipe(&self) -> u32 {
        (self.outstanding() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// A new segment (number `nxt`) was sent.
    #[inline]
    pub fn push_new(&mut self) {
        self.flags.push(self.una, self.nxt, 0);
        self.nxt += 1;
    }

    /// Keep a delivery-rate snapshot per segment (call before anything is sent).
    pub fn track_rate(&mut self) {
        self.tracking = true;
    }

    /// Keep per-segment transmission times for RACK-TLP (call before anything is sent).
    pub fn track_xmit(&mut self) {
        self.timing = true;
    }

    /// Per-segment transmission times are kept.
    #[inline]
    pub fn timing(&self) -> bool {
        self.timing
    }

    #[inline]
    fn stamp(&mut self, now: SimTime) -> SimTime {
        let t = now.max(self.last_stamp + SimTime(1));
        self.last_stamp = t;
        t
    }

    /// A new segment was sent at `now` (timing; call after `push_new_tracked` when rate
    /// snapshots are kept too, instead of `push_new` otherwise).
    #[inline]
    pub fn push_new_timed(&mut self, now: SimTime, flags_pushed: bool) {
        if !flags_pushed {
            self.push_new();
        }
        let t = self.stamp(now);
        self.xmit.push(self.una, self.nxt - 1, t);
    }

    /// Record the retransmission of `seg` at `now` (timing); returns its stamp.
    #[inline]
    pub fn set_xmit(&mut self, seg: u64, now: SimTime) -> SimTime {
        let t = self.stamp(now);
        self.xmit[seg] = t;
        t
    }

    /// Latest transmission time of outstanding segment number `seg` (timing only).
    #[inline]
    pub fn xmit_time(&self, seg: u64) -> SimTime {
        self.xmit[seg]
    }

    /// Start processing an ACK for RACK (timing only): what the offered segments are judged by.
    /// Called before SACK blocks are processed; `rack_deliver` ends the ACK.
    #[inline]
    pub fn rack_begin_ack(&mut self, now: SimTime, min_rtt: Option<SimTime>, echo: u64) {
        self.rack_ack = RackAck {
            now,
            min_rtt: min_rtt.unwrap_or(SimTime::MAX),
            echo,
            prior_high: self.high_sacked.max(self.una),
            pick: None,
            begun: true,
        };
    }

    /// Finish the ACK: RACK.xmit_ts / end_seq / rtt from the segments it delivered.
    #[inline]
    fn rack_end_ack(&mut self) {
        let a = self.rack_ack;
        self.rack.update(a.now, a.pick);
    }

    /// A new segment was sent, with its delivery-rate snapshot (rate tracking only).
    #[inline]
    pub fn push_new_tracked(&mut self, rec: TxRecord) {
        self.tx.push(self.una, self.nxt, rec);
        self.push_new();
    }

    /// Replace the snapshot of `seg` on its retransmission (rate tracking only).
    #[inline]
    pub fn set_tx(&mut self, seg: u64, rec: TxRecord) {
        self.tx[seg] = rec;
    }

    /// The segment whose snapshot gives this ACK's rate sample (rate tracking only); resets it.
    #[inline]
    pub fn take_rate_pick(&mut self) -> Option<(u64, TxRecord)> {
        self.rate_pick.take()
    }

    /// Cumulative ACK up to (excluding) segment `ack`. Returns the number of segments removed that
    /// had not been SACKed before (newly delivered).
    #[inline]
    pub fn advance_to(&mut self, ack: u64) -> u32 {
        if self.tracking && ack > self.una {
            self.deliver_tracked(ack);
        }
        self.advance_flags(ack)
    }

    /// RACK, before `advance_to(ack)` (timing only): offer the segments the cumulative ACK
    /// newly delivers (those SACKed before were offered then), note reordering, drop their
    /// transmission stamps, and update the RACK state from this ACK. A retransmitted
    /// segment whose ACK echoes an earlier timestamp was delivered by an earlier transmission
    /// and is skipped (Linux `tcp_skb_spurious_retrans` in `tcp_clean_rtx_queue`). An original
    /// below the highest segment SACKed before this ACK filled a hole late: reordering (Linux
    /// `tcp_clean_rtx_queue` -> `tcp_check_sack_reordering`).
    #[inline(never)]
    pub fn rack_deliver(&mut self, ack: u64, now: SimTime, min_rtt: Option<SimTime>, echo: u64) {
        let end = ack.min(self.nxt());
        if !self.rack_ack.begun
            && end > self.una
            && self.sacked_out == 0
            && self.lost_out == 0
            && self.retrans_out == 0
        {
            // No SACK blocks with this ACK and nothing SACKed, lost or retransmitted: every
            // segment here was sent once, in order, and nothing lies above them SACKed (no
            // reordering to see). The newest is the last one.
            let t = self.xmit[end - 1];
            self.rack.update(now, Some((t, end - 1)));
            return;
        }
        if !self.rack_ack.begun {
            self.rack_begin_ack(now, min_rtt, echo);
        }
        self.rack_ack.begun = false;
        if end <= self.una {
            self.rack_end_ack();
            return;
        }
        for seg in self.una..end {
            let f = self.flags[seg];
            if f & SACKED != 0 {
                continue;
            }
            let t = self.xmit[seg];
            if f & EVER == 0 {
                if seg < self.rack_ack.prior_high {
                    self.reord_seen = true;
                }
            } else if self.rack_ack.echo < t.as_nanos() + 1 {
                continue;
            }
            self.rack_ack.offer(seg, t, f & EVER != 0);
        }
        self.rack_end_ack();
    }

    /// Rate tracking: offer the snapshots of the segments a cumulative ACK newly delivers (those
    /// not SACKed before, which were offered then: Linux clears `tx.delivered_mstamp` of SACKed
    /// segments) and drop the snapshots of all the segments it covers.
    #[inline(never)]
    fn deliver_tracked(&mut self, ack: u64) {
        let end = ack.min(self.nxt());
        for seg in self.una..end {
            if self.flags[seg] & SACKED == 0 {
                pick_newer(&mut self.rate_pick, seg, self.tx[seg]);
            }
        }
    }

    #[inline]
    fn advance_flags(&mut self, ack: u64) -> u32 {
        let end = ack.min(self.nxt);
        let mut newly = 0;
        if end > self.una {
            if self.is_clean() {
                // No segment carries a mark: all of them are newly delivered.
                newly = (end - self.una) as u32;
            } else {
                newly = self.unmark_acked(end);
            }
            self.una = end;
        }
        if self.high_sacked < self.una {
            self.high_sacked = self.una;
        }
        self.lost_hint = self.lost_hint.max(self.una);
        self.retx_hint = self.retx_hint.max(self.una);
        newly
    }

    /// Take the marks of segments [una, end) off the counters; returns how many were not
    /// SACKed (newly delivered).
    #[inline(never)]
    fn unmark_acked(&mut self, end: u64) -> u32 {
        let mut newly = 0;
        for seg in self.una..end {
            let f = self.flags[seg];
            if f & SACKED != 0 {
                self.sacked_out -= 1;
            } else {
                newly += 1;
            }
            if f & LOST != 0 {
                self.lost_out -= 1;
                if f & RETRANS == 0 {
                    self.lost_pending -= 1;
                }
            }
            if f & RETRANS != 0 {
                self.retrans_out -= 1;
            }
        }
        newly
    }

    /// Mark segments [start, end) SACKed. Returns how many were newly SACKed.
    pub fn mark_sacked(&mut self, start: u64, end: u64) -> u32 {
        let start = start.max(self.una);
        let end = end.min(self.nxt());
        if self.timing {
            self.rack_sacked(start, end);
        }
        let mut newly = 0;
        for seg in start..end {
            let f = self.flags[seg];
            if f & SACKED != 0 {
                continue;
            }
            if f & LOST != 0 {
                self.lost_out -= 1;
                if f & RETRANS == 0 {
                    self.lost_pending -= 1;
                }
            }
            if f & RETRANS != 0 {
                self.retrans_out -= 1;
            }
            self.flags[seg] = SACKED;
            self.sacked_out += 1;
            newly += 1;
            if self.tracking {
                pick_newer(&mut self.rate_pick, seg, self.tx[seg]);
            }
        }
        if end > start && end > self.high_sacked {
            self.high_sacked = end;
        }
        newly
    }

    /// RACK's view of segments [start, end) about to be SACKed (timing only): offer the newly
    /// SACKed ones; one sent once, below the highest segment SACKed before this ACK, arrived out
    /// of order (Linux `tcp_sacktag_one`).
    #[inline(never)]
    fn rack_sacked(&mut self, start: u64, end: u64) {
        for seg in start..end {
            let f = self.flags[seg];
            if f & SACKED != 0 {
                continue;
            }
            if f & EVER == 0 && seg < self.rack_ack.prior_high {
                self.reord_seen = true;
            }
            let t = self.xmit[seg];
            self.rack_ack.offer(seg, t, f & EVER != 0);
        }
    }

    #[inline]
    pub fn is_sacked(&self, seg: u64) -> bool {
        self.flags[seg] & SACKED != 0
    }

    /// Mark one segment lost (if neither SACKed nor already lost).
    pub fn mark_lost(&mut self, seg: u64) {
        if seg < self.una || seg >= self.nxt() {
            return;
        }
        let f = self.flags[seg];
        if f & (SACKED | LOST) == 0 {
            self.flags[seg] = f | LOST;
            self.lost_out += 1;
            if f & RETRANS == 0 {
                self.lost_pending += 1;
            }
            self.lost_total += 1;
            self.retx_hint = self.retx_hint.min(seg);
        }
    }

    /// RFC 6675 IsLost: a segment is lost when at least `dupthresh` SACKed segments lie above it.
    /// Marks every such unSACKed segment not yet marked. Returns the number newly marked.
    #[inline]
    pub fn mark_lost_by_sack(&mut self, dupthresh: u32) -> u32 {
        // Called on every ACK; without enough SACKed segments nothing can be lost.
        if self.sacked_out < dupthresh {
            return 0;
        }
        self.mark_lost_by_sack_scan(dupthresh)
    }

    #[inline(never)]
    fn mark_lost_by_sack_scan(&mut self, dupthresh: u32) -> u32 {
        // Walk down from the highest SACKed segment until `dupthresh` SACKed segments are counted:
        // everything below that point is lost.
        let mut count = 0;
        let mut seg = self.high_sacked;
        while seg > self.una && count < dupthresh {
            seg -= 1;
            if self.is_sacked(seg) {
                count += 1;
            }
        }
        if count < dupthresh {
            return 0;
        }
        let limit = seg;
        let mut marked = 0;
        let from = self.lost_hint.max(self.una);
        for s in from..limit {
            let f = self.flags[s];
            if f & (SACKED | LOST) == 0 {
                self.flags[s] = f | LOST;
                self.lost_out += 1;
                if f & RETRANS == 0 {
                    self.lost_pending += 1;
                }
                marked += 1;
            }
        }
        self.lost_total += marked as u64;
        if limit > self.lost_hint {
            self.lost_hint = limit;
        }
        if marked > 0 {
            self.retx_hint = self.retx_hint.min(from);
        }
        marked
    }

    /// RTO (RFC 6298 §5.4 / RFC 6675 §5.1): every unSACKed segment is lost and no retransmission
    /// is outstanding any more.
    pub fn mark_all_lost(&mut self) {
        for seg in self.una..self.nxt {
            let f = self.flags[seg];
            if f & SACKED == 0 {
                // Counted again if it was lost and retransmitted (Linux tcp_mark_skb_lost).
                if f & LOST == 0 || f & RETRANS != 0 {
                    self.lost_total += 1;
                }
                self.flags[seg] = LOST | (f & EVER);
            }
        }
        self.retrans_out = 0;
        self.retx_log.clear();
        self.lost_out = self.outstanding() - self.sacked_out;
        self.lost_pending = self.lost_out;
        self.retx_hint = self.una;
        self.lost_hint = self.nxt();
    }

    /// The first segment marked lost and not yet retransmitted (RFC 6675 NextSeg rule 1).
    /// Segments marked lost and not retransmitted since.
    pub fn lost_pending(&self) -> u32 {
        self.lost_pending
    }

    pub fn next_lost(&mut self) -> Option<u64> {
        if self.lost_pending == 0 {
            return None;
        }
        let mut seg = self.retx_hint.max(self.una);
        let end = self.nxt();
        while seg < end {
            let f = self.flags[seg];
            if f & LOST != 0 && f & RETRANS == 0 {
                self.retx_hint = seg;
                return Some(seg);
            }
            seg += 1;
        }
        self.retx_hint = end;
        None
    }

    /// Record a retransmission of `seg`.
    pub fn set_retransmitted(&mut self, seg: u64) {
        let f = self.flags[seg];
        if f & RETRANS == 0 {
            self.flags[seg] = f | RETRANS | EVER;
            self.retrans_out += 1;
            if f & LOST != 0 {
                self.lost_pending -= 1;
            }
        }
    }

    /// Remember that `seg` was just retransmitted, with transmission stamp `now` (see `xmit`),
    /// while `nxt` was the next new segment.
    pub fn log_retransmit(&mut self, seg: u64, now: SimTime) {
        let nxt = self.nxt();
        self.retx_log.push_back((seg, nxt, now));
    }

    /// A retransmission (segment `seg`) is lost too: lost again and waiting, so NextSeg sends
    /// it once more (Linux tcp_mark_skb_lost clears SACKED_RETRANS).
    #[inline]
    fn lose_retransmission(&mut self, seg: u64) {
        let f = self.flags[seg];
        self.flags[seg] = (f & !RETRANS) | LOST;
        self.retrans_out -= 1;
        if f & LOST == 0 {
            self.lost_out += 1;
        }
        self.lost_pending += 1;
        self.lost_total += 1;
        self.retx_hint = self.retx_hint.min(seg);
    }

    /// Lost-retransmission detection (Linux 2.6–4.x `tcp_mark_lost_retrans`, the non-FACK rule):
    /// a retransmission is lost when SACKs reach `reordering` segments beyond what was the next
    /// new segment when it was sent — data sent after it arrived, it did not. Such a segment is
    /// no longer counted as retransmitted, so it is lost again and NextSeg resends it; without
    /// this only the RTO can repair it. Returns how many were marked.
    pub fn mark_lost_retransmits(&mut self, reordering: u32) -> u32 {
        let upto = self.high_sacked;
        let mut marked = 0;
        while let Some(&(seg, nxt_at, _)) = self.retx_log.front() {
            if seg < self.una {
                self.retx_log.pop_front();
                continue;
            }
            let f = self.flags[seg];
            if f & RETRANS == 0 || f & SACKED != 0 {
                self.retx_log.pop_front();
                continue;
            }
            // Entries are in send order, so `nxt_at` never decreases along the log.
            if upto < nxt_at + reordering as u64 {
                break;
            }
            self.retx_log.pop_front();
            self.lose_retransmission(seg);
            marked += 1;
        }
        marked
    }

    /// RACK loss detection (RFC 8985 §6.2 step 5, Linux `tcp_rack_detect_loss`): every
    /// outstanding segment that is neither SACKed nor waiting for retransmission, sent before
    /// RACK's segment, is lost once `RACK.rtt + reo_wnd` has passed since its (latest)
    /// transmission. Returns the longest wait among those not yet expired (the reordering
    /// timer's delay, RFC 8985 §6.2 step 5), or None.
    ///
    /// Linux walks one time-ordered list. Here the candidates come from two lists that are
    /// each in send order: segments never retransmitted ("clean": sent once, so in sequence
    /// order), scanned from `rack_hint`, and retransmissions in flight, from the retransmission
    /// log. Both scans stop at the first candidate not sent before RACK's segment.
    pub fn rack_detect_loss(&mut self, now: SimTime, reo_wnd: SimTime) -> Option<SimTime> {
        let rack = self.rack;
        if !rack.valid {
            return None;
        }
        let budget = rack.rtt + reo_wnd;
        let mut wait = SimTime::ZERO;
        let end = self.nxt();
        let mut seg = self.rack_hint.max(self.una);
        let mut at_hint = true;
        while seg < end {
            let f = self.flags[seg];
            if f & (SACKED | LOST | RETRANS) == 0 {
                let t = self.xmit[seg];
                if !sent_after(rack.xmit_ts, rack.seg, t, seg) {
                    break;
                }
                let since_sent = now.saturating_sub(t);
                if since_sent >= budget {
                    self.flags[seg] = f | LOST;
                    self.lost_out += 1;
                    self.lost_pending += 1;
                    self.lost_total += 1;
                    self.retx_hint = self.retx_hint.min(seg);
                } else {
                    wait = wait.max(budget - since_sent);
                    at_hint = false;
                }
            }
            if at_hint {
                self.rack_hint = seg + 1;
            }
            seg += 1;
        }
        let mut k = 0;
        while k < self.retx_log.len() {
            let (seg, _, t) = self.retx_log[k];
            let live = seg >= self.una && {
                let f = self.flags[seg];
                f & RETRANS != 0 && f & SACKED == 0 && self.xmit[seg] == t
            };
            if live {
                if !sent_after(rack.xmit_ts, rack.seg, t, seg) {
                    break;
                }
                let since_sent = now.saturating_sub(t);
                if since_sent < budget {
                    wait = wait.max(budget - since_sent);
                    k += 1;
                    continue;
                }
                // A lost retransmission (Linux tcp_mark_skb_lost clears SACKED_RETRANS): lost
                // again, so NextSeg sends it once more.
                self.lose_retransmission(seg);
            }
            // Stale or just marked: drop it if it is at the front, else step over it.
            if k == 0 {
                self.retx_log.pop_front();
            } else {
                k += 1;
            }
        }
        (wait > SimTime::ZERO).then_some(wait)
    }

    /// No outstanding segment is SACKed, lost or retransmitted.
    #[inline]
    pub fn is_clean(&self) -> bool {
        self.sacked_out == 0 && self.lost_out == 0 && self.retrans_out == 0
    }

    /// Whether any retransmission is outstanding.
    #[inline]
    pub fn has_retransmits_out(&self) -> bool {
        self.retrans_out > 0
    }

    /// Consistency check used by tests: counters equal a recount of the flags.
    pub fn check_invariants(&self) -> Result<(), String> {
        let window = || (self.una..self.nxt).map(|seg| self.flags[seg]);
        let s = window().filter(|f| *f & SACKED != 0).count() as u32;
        let l = window().filter(|f| *f & LOST != 0).count() as u32;
        let r = window().filter(|f| *f & RETRANS != 0).count() as u32;
        let pending = window().filter(|f| *f & (LOST | RETRANS) == LOST).count() as u32;
        if pending != self.lost_pending {
            return Err(format!(
                "{} segments wait for retransmission, counter says {}",
                pending, self.lost_pending
            ));
        }
        if (s, l, r) != (self.sacked_out, self.lost_out, self.retrans_out) {
            return Err(format!(
                "counters (sacked {}, lost {}, retrans {}) != recount ({s}, {l}, {r})",
                self.sacked_out, self.lost_out, self.retrans_out
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u64) -> Scoreboard {
        let mut b = Scoreboard::new();
        for _ in 0..n {
            b.push_new();
        }
        b
    }

    #[test]
    fn a_retransmission_is_lost_when_later_data_is_sacked_past_it() {
        // 10 segments out; 0 lost (1..4 SACKed) and retransmitted while nxt = 10.
        let mut b = board(10);
        b.mark_sacked(1, 4);
        assert_eq!(b.mark_lost_by_sack(3), 1);
        let seg = b.next_lost().unwrap();
        b.set_retransmitted(seg);
        b.log_retransmit(seg, SimTime::ZERO);
        // SACKs up to segment 9: nothing sent after the retransmission has arrived yet.
        b.mark_sacked(4, 10);
        assert_eq!(b.mark_lost_retransmits(3), 0);
        // New segments 10..14 go out; 10..12 SACKed → high_sacked 12 < 10 + 3: not yet.
        for _ in 0..4 {
            b.push_new();
        }
        b.mark_sacked(10, 12);
        assert_eq!(b.mark_lost_retransmits(3), 0);
        // 12 SACKed too: three segments sent after the retransmission arrived, it did not.
        b.mark_sacked(12, 13);
        assert_eq!(b.mark_lost_retransmits(3), 1);
        assert_eq!(b.next_lost(), Some(0));
        assert_eq!(b.retrans_out, 0);
        b.check_invariants().unwrap();
        // Retransmitted again and then cumulatively ACKed: the log empties.
        b.set_retransmitted(0);
        b.log_retransmit(0, SimTime::ZERO);
        b.advance_to(13);
        assert_eq!(b.mark_lost_retransmits(3), 0);
        assert!(b.retx_log.is_empty());
    }

    #[test]
    fn is_lost_needs_dupthresh_sacked_segments_above() {
        let mut b = board(10);
        // Segment 0 lost; 1 and 2 SACKed: only 2 above, not yet lost.
        b.mark_sacked(1, 3);
        assert_eq!(b.mark_lost_by_sack(3), 0);
        // Third SACKed segment above: 0 is lost (RFC 6675 IsLost).
        b.mark_sacked(3, 4);
        assert_eq!(b.mark_lost_by_sack(3), 1);
        assert_eq!(b.next_lost(), Some(0));
        assert_eq!(b.pipe(), 10 - 3 - 1);
        b.set_retransmitted(0);
        assert_eq!(b.pipe(), 10 - 3 - 1 + 1);
        assert_eq!(b.next_lost(), None);
        b.check_invariants().unwrap();
        // Cumulative ACK of 0..4: one newly delivered (segment 0), counters drop to zero.
        assert_eq!(b.advance_to(4), 1);
        assert_eq!((b.sacked_out, b.lost_out, b.retrans_out), (0, 0, 0));
        b.check_invariants().unwrap();
    }

    #[test]
    fn rto_marks_everything_unsacked_lost() {
        let mut b = board(6);
        b.mark_sacked(2, 3);
        b.set_retransmitted(0);
        b.mark_all_lost();
        assert_eq!(b.lost_out, 5);
        assert_eq!(b.retrans_out, 0);
        assert_eq!(b.pipe(), 0);
        b.check_invariants().unwrap();
    }
}
