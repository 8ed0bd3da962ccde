//! CoDel, Controlled Delay (K. Nichols, V. Jacobson, A. McGregor, J. Iyengar, "Controlled Delay
//! Active Queue Management", RFC 8289, January 2018), written from the RFC's text and its
//! annotated pseudocode (§5).
//!
//! - Every packet is stamped with its enqueue time (§5.4); the queue keeps the stamp beside the
//!   packet ([`TimedFifo`]), so the packet stays 64 bytes.
//! - At dequeue the packet's sojourn time is compared with TARGET (§5.6, `dodequeue`): below
//!   TARGET, or with at most MAXPACKET bytes left in the queue, the queue is "below"; once above
//!   for a whole INTERVAL, dropping is "ok".
//! - Dequeue (§5.5): outside the dropping state, "ok" drops the head packet, enters the dropping
//!   state and schedules the next drop at `control_law(now)`; inside it, each time `now` reaches
//!   `drop_next` the head packet is dropped, count grows by one and the next drop comes at
//!   `control_law(drop_next)` = drop_next + INTERVAL/√count (§5.6), until a sojourn below TARGET
//!   leaves the state. Drops are at the head (the pseudocode drops the packet it dequeued).
//! - Re-entering the dropping state (§5.5, the Linux variant the RFC prints): with
//!   delta = count − lastcount, count restarts at delta when delta > 1 and the state was left
//!   recently (now − drop_next < 16·INTERVAL), else at 1; lastcount ← count. The difference
//!   now − drop_next is signed here (a drop_next still in the future counts as recent), as in
//!   Linux's `codel_time_before`.
//! - ECN: the RFC speaks of dropping throughout and of marking as its alternative for
//!   ECN-capable traffic; with `ecn` on, a packet the law would drop that is ECT is marked CE
//!   (RFC 3168 §5) and sent instead, and count and drop_next advance exactly as for a drop. As in
//!   Linux's `codel_dequeue`, a mark ends the dequeue (the marked packet is the one sent), so at
//!   most one packet is marked per dequeue, where drops may take several. Non-ECT packets are
//!   still dropped.
//! - The hard limit (in packets or bytes, counted as waiting packets) is a tail drop of the
//!   arrival at enqueue; CoDel itself never drops at enqueue.
//!
//! Constants, all from RFC 8289 §5.3 / §4: TARGET = 5 ms, INTERVAL = 100 ms (the defaults of
//! [`CoDelParams::rfc8289`]); MAXPACKET = the interface MTU (the pseudocode's constant is 512
//! bytes "should use interface MTU"; the default here is 1500 bytes, the packet size of every
//! default flow); 16 intervals in the count-reuse rule (§5.5).
//!
//! Drops are counted as [`DropReason::AqmForced`] (the control law schedules them; nothing is
//! drawn at random) and handed out through [`Queue::pop_dropped`].

use super::droptail::Limit;
use super::fifo::TimedFifo;
use super::{DropReason, Queue, QueueStats};
use crate::packet::{Flags, Packet};
use fatpipe_core::SimTime;

/// CoDel's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoDelParams {
    pub limit: Limit,
    /// TARGET: acceptable standing queue delay (RFC 8289: 5 ms).
    pub target: SimTime,
    /// INTERVAL: the window the sojourn time must stay above TARGET (RFC 8289: 100 ms).
    pub interval: SimTime,
    /// MAXPACKET: the queue is never "above target" while it holds at most this many bytes.
    pub mtu: u32,
    /// Mark ECT packets with CE instead of dropping them.
    pub ecn: bool,
}

impl CoDelParams {
    /// RFC 8289's defaults with a 1500-byte MTU and no ECN.
    pub fn rfc8289(limit: Limit) -> Self {
        CoDelParams {
            limit,
            target: SimTime::from_millis(5),
            interval: SimTime::from_millis(100),
            mtu: 1500,
            ecn: false,
        }
    }

    /// Check the parameters; the error names the scenario field and says why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        law_check(self.target, self.interval, self.mtu)
    }

    pub(crate) fn law(&self) -> Law {
        Law {
            target: self.target,
            interval: self.interval,
            mtu: self.mtu as u64,
            ecn: self.ecn,
        }
    }
}

pub(crate) fn law_check(
    target: SimTime,
    interval: SimTime,
    mtu: u32,
) -> Result<(), (&'static str, String)> {
    if target == SimTime::ZERO {
        return Err((
            "target",
            "must be a positive delay (RFC 8289: 5ms), got 0".into(),
        ));
    }
    if interval == SimTime::ZERO {
        return Err((
            "interval",
            "must be a positive delay (RFC 8289: 100ms), got 0".into(),
        ));
    }
    if mtu == 0 {
        return Err(("mtu", "must be a positive size in bytes".into()));
    }
    Ok(())
}

/// The parameters CoDel's law reads (shared by every FQ-CoDel queue).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Law {
    pub target: SimTime,
    pub interval: SimTime,
    pub mtu: u64,
    pub ecn: bool,
}

/// The state of one CoDel queue (RFC 8289 §5.2).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct CoDelVars {
    /// When the sojourn time will have been above TARGET for INTERVAL (None: below).
    first_above_time: Option<SimTime>,
    /// Time of the next drop while dropping.
    drop_next: SimTime,
    /// Drops (and marks) since entering the dropping state, with the reuse rule.
    count: u32,
    /// count when the dropping state was last entered.
    lastcount: u32,
    dropping: bool,
}

impl CoDelVars {
    /// t + INTERVAL/√count (RFC 8289 §5.6), to the nearest nanosecond.
    fn control_law(&self, t: SimTime, law: &Law) -> SimTime {
        let step = law.interval.as_nanos() as f64 / (self.count.max(1) as f64).sqrt();
        t + SimTime(step.round() as u64)
    }

    /// RFC 8289's `dodequeue`: the head packet and whether it may be dropped. `other_bytes` is
    /// backlog outside this queue that counts towards the MAXPACKET test (FQ-CoDel's other
    /// queues; 0 for plain CoDel).
    fn dodequeue(
        &mut self,
        law: &Law,
        q: &mut TimedFifo,
        other_bytes: u64,
        now: SimTime,
    ) -> (Option<Packet>, bool) {
        let Some((p, stamp)) = q.pop() else {
            // An empty queue cannot be above TARGET.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - stamp;
        let mut ok = false;
        if sojourn < law.target || q.bytes() + other_bytes <= law.mtu {
            // Went below: stay below for at least INTERVAL.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + law.interval),
                Some(t) if now >= t => ok = true,
                Some(_) => {}
            }
        }
        (Some(p), ok)
    }

    /// RFC 8289's `dequeue` (§5.5): the packet to send, if any. Dropped packets are recorded in
    /// `stats` and pushed to `dropped`; marks are recorded in `stats`.
    pub(crate) fn dequeue(
        &mut self,
        law: &Law,
        q: &mut TimedFifo,
        other_bytes: u64,
        now: SimTime,
        stats: &mut QueueStats,
        dropped: &mut Vec<Packet>,
    ) -> Option<Packet> {
        let (mut p, ok) = self.dodequeue(law, q, other_bytes, now);
        if self.dropping {
            if !ok {
                // Sojourn time below TARGET: leave the dropping state.
                self.dropping = false;
            }
            // Each drop that is due: drop the head and take the next; a large backlog may make
            // several due at once.
            while self.dropping && now >= self.drop_next {
                let mut head = p.take().expect("ok to drop implies a packet");
                self.count += 1;
                if law.ecn && head.flags.markable() {
                    head.flags.set(Flags::CE);
                    stats.record_mark(DropReason::AqmForced);
                    self.drop_next = self.control_law(self.drop_next, law);
                    return Some(head);
                }
                stats.record_queued_drop(&head, DropReason::AqmForced);
                dropped.push(head);
                let (next, ok) = self.dodequeue(law, q, other_bytes, now);
                p = next;
                if ok {
                    self.drop_next = self.control_law(self.drop_next, law);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok {
            // Above TARGET for INTERVAL: drop (or mark) and enter the dropping state.
            let mut head = p.take().expect("ok to drop implies a packet");
            if law.ecn && head.flags.markable() {
                head.flags.set(Flags::CE);
                stats.record_mark(DropReason::AqmForced);
                p = Some(head);
            } else {
                stats.record_queued_drop(&head, DropReason::AqmForced);
                dropped.push(head);
                p = self.dodequeue(law, q, other_bytes, now).0;
            }
            self.dropping = true;
            // If the queue comes back above TARGET soon after leaving the dropping state, start
            // from the drop rate that last controlled it.
            let delta = self.count - self.lastcount;
            let since = now.as_nanos() as i128 - self.drop_next.as_nanos() as i128;
            self.count = if delta > 1 && since < 16 * law.interval.as_nanos() as i128 {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now, law);
            self.lastcount = self.count;
        }
        p
    }
}

/// A single CoDel queue.
pub struct CoDel {
    p: CoDelParams,
    law: Law,
    q: TimedFifo,
    vars: CoDelVars,
    stats: QueueStats,
    dropped: Vec<Packet>,
}

impl CoDel {
    pub fn new(p: CoDelParams) -> Self {
        CoDel {
            law: p.law(),
            p,
            q: TimedFifo::default(),
            vars: CoDelVars::default(),
            stats: QueueStats::default(),
            dropped: Vec::new(),
        }
    }

    /// Drops (and marks) counted by the law since it last entered the dropping state.
    pub fn count(&self) -> u32 {
        self.vars.count
    }

    /// Whether the law is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.vars.dropping
    }
}

impl Queue for CoDel {
    fn kind(&self) -> &'static str {
        "codel"
    }

    fn enqueue(&mut self, p: Packet, now: SimTime) -> Result<(), (Packet, DropReason)> {
        let full = match self.p.limit {
            Limit::Packets(n) => self.q.len() as u64 >= n,
            Limit::Bytes(b) => self.q.bytes() + p.size as u64 > b,
        };
        if full {
            self.stats.record_drop(&p, DropReason::TailDrop);
            return Err((p, DropReason::TailDrop));
        }
        self.q.push(p, now);
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(self.q.len() as u64);
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime) -> Option<Packet> {
        let p = self.vars.dequeue(
            &self.law,
            &mut self.q,
            0,
            now,
            &mut self.stats,
            &mut self.dropped,
        )?;
        self.stats.dequeued += 1;
        Some(p)
    }

    fn len_packets(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
    fn stats(&self) -> &QueueStats {
        &self.stats
    }
    fn pop_dropped(&mut self) -> Option<Packet> {
        self.dropped.pop()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::packet::{PacketKind, SackBlocks};

    pub(crate) fn pkt(flow: u32, size: u32, ect: bool) -> Packet {
        Packet {
            flow,
            dst: 0,
            size,
            kind: PacketKind::Data,
            seq: 0,
            len: size,
            ts: 0,
            sack: SackBlocks::default(),
            flags: Flags::new(if ect { Flags::ECT } else { 0 }),
            epoch: 0,
        }
    }

    fn ms(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    /// Dequeue once every 10 ms from `from` to `to` (inclusive); returns the instants (ms) at
    /// which the dequeue dropped or marked something.
    fn drain(q: &mut CoDel, from: u64, to: u64) -> Vec<u64> {
        let mut at = Vec::new();
        let mut t = from;
        while t <= to {
            let before = q.stats().total_drops() + q.stats().total_marks();
            let _ = q.dequeue(ms(t));
            if q.stats().total_drops() + q.stats().total_marks() > before {
                at.push(t);
            }
            t += 10;
        }
        at
    }

    #[test]
    fn a_standing_queue_is_dropped_on_the_control_law_schedule() {
        // 100 packets of 1000 bytes arrive at t = 0; the link takes one every 10 ms, so the
        // packet leaving at t has waited t. target 5 ms, interval 100 ms, MTU 1500 bytes.
        let mut q = CoDel::new(CoDelParams::rfc8289(Limit::Packets(1000)));
        for _ in 0..100 {
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        // t = 0: sojourn 0 < target. t = 10 ms: above, first_above_time = 110 ms. t = 110 ms:
        // ok to drop -> first drop, count 1, drop_next = 110 + 100/√1 = 210. Then each drop at the
        // first dequeue at or after drop_next, drop_next += 100/√count:
        // 210 (count 2, next 280.71), 290 (3, next 338.45), 340 (4, 388.45), 390 (5, 433.17),
        // 440 (6, 473.99), 480 (7, 511.79), 520 (8, next 547.14).
        assert_eq!(
            drain(&mut q, 0, 530),
            vec![110, 210, 290, 340, 390, 440, 480, 520]
        );
        assert_eq!(q.count(), 8);
        assert!(q.dropping());
        assert_eq!(q.stats().drops[DropReason::AqmForced.index()], 8);
        assert_eq!(q.stats().dropped_queued, 8);
        let mut n = 0;
        while q.pop_dropped().is_some() {
            n += 1;
        }
        assert_eq!(n, 8);
        // 54 dequeues (0..=530 ms) and 8 drops: 38 left.
        assert_eq!(q.len_packets(), 38);
        assert_eq!(
            q.stats().enqueued,
            q.stats().dequeued + q.stats().dropped_queued + q.len_packets() as u64
        );
    }

    #[test]
    fn re_entering_soon_reuses_the_count_and_late_re_entry_restarts_it() {
        let mut q = CoDel::new(CoDelParams::rfc8289(Limit::Packets(1000)));
        for _ in 0..100 {
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        // As above: count 8, lastcount 1, drop_next 547.14 ms.
        drain(&mut q, 0, 530);
        // Empty the queue at 530 ms: once at most one MTU is left the state ends.
        while q.dequeue(ms(530)).is_some() {}
        assert!(!q.dropping());
        // A new standing queue from 600 ms: above from 610, ok to drop at 710.
        for _ in 0..60 {
            q.enqueue(pkt(0, 1000, false), ms(600)).unwrap();
        }
        // Re-entry at 710: delta = 8 − 1 = 7 > 1 and 710 − 547.14 < 16·100 ms, so count = 7,
        // drop_next = 710 + 100/√7 = 747.80; then 750 (count 8, next 783.15), 790 (9, 816.49),
        // 820 (10, 848.11), 850 (11, next 878.26).
        assert_eq!(drain(&mut q, 600, 870), vec![710, 750, 790, 820, 850]);
        assert_eq!(q.count(), 11);

        // The same, but the second queue builds 2 s later: 16 intervals have passed since
        // drop_next, so count restarts at 1 (drop_next = entry + 100 ms).
        let mut q = CoDel::new(CoDelParams::rfc8289(Limit::Packets(1000)));
        for _ in 0..100 {
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        drain(&mut q, 0, 530);
        while q.dequeue(ms(530)).is_some() {}
        for _ in 0..60 {
            q.enqueue(pkt(0, 1000, false), ms(2600)).unwrap();
        }
        assert_eq!(drain(&mut q, 2600, 2860), vec![2710, 2810]);
        assert_eq!(q.count(), 2);
    }

    #[test]
    fn ecn_marks_ect_packets_on_the_same_schedule_and_still_drops_the_others() {
        let mut q = CoDel::new(CoDelParams {
            ecn: true,
            ..CoDelParams::rfc8289(Limit::Packets(1000))
        });
        for _ in 0..100 {
            q.enqueue(pkt(0, 1000, true), SimTime::ZERO).unwrap();
        }
        let mut marked_at = Vec::new();
        let mut t = 0;
        while t <= 530 {
            let p = q.dequeue(ms(t)).unwrap();
            if p.flags.has(Flags::CE) {
                marked_at.push(t);
            }
            t += 10;
        }
        // A mark advances count and drop_next as a drop does; every dequeue sends a packet.
        assert_eq!(marked_at, vec![110, 210, 290, 340, 390, 440, 480, 520]);
        assert_eq!(q.stats().total_drops(), 0);
        assert_eq!(q.stats().marks[DropReason::AqmForced.index()], 8);
        assert_eq!(q.len_packets(), 100 - 54);
        // A non-ECT packet at the head when the next drop is due is dropped.
        let mut q = CoDel::new(CoDelParams {
            ecn: true,
            ..CoDelParams::rfc8289(Limit::Packets(1000))
        });
        for _ in 0..100 {
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        }
        assert_eq!(drain(&mut q, 0, 300), vec![110, 210, 290]);
        assert_eq!(q.stats().total_drops(), 3);
    }

    #[test]
    fn below_one_mtu_nothing_is_dropped_and_the_limit_is_a_tail_drop() {
        // One 1000-byte packet behind the head: after the dequeue at most one MTU is left, so
        // the queue never counts as above target however long packets wait.
        let mut q = CoDel::new(CoDelParams::rfc8289(Limit::Packets(2)));
        q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap();
        assert_eq!(
            q.enqueue(pkt(0, 1000, false), SimTime::ZERO).unwrap_err().1,
            DropReason::TailDrop
        );
        assert!(q.dequeue(ms(500)).is_some());
        assert!(q.dequeue(ms(1000)).is_some());
        assert!(q.dequeue(ms(1000)).is_none());
        assert_eq!(q.stats().total_drops(), 1);
        assert_eq!(q.stats().drops[DropReason::TailDrop.index()], 1);
        // Byte limit: 2500 bytes take two 1000-byte packets, not three.
        let mut q = CoDel::new(CoDelParams::rfc8289(Limit::Bytes(2500)));
        assert!(q.enqueue(pkt(0, 1000, false), SimTime::ZERO).is_ok());
        assert!(q.enqueue(pkt(0, 1000, false), SimTime::ZERO).is_ok());
        assert!(q.enqueue(pkt(0, 1000, false), SimTime::ZERO).is_err());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let ok = CoDelParams::rfc8289(Limit::Packets(10));
        assert!(ok.validate().is_ok());
        let e = CoDelParams {
            target: SimTime::ZERO,
            ..ok
        };
        assert_eq!(e.validate().unwrap_err().0, "target");
        let e = CoDelParams {
            interval: SimTime::ZERO,
            ..ok
        };
        assert_eq!(e.validate().unwrap_err().0, "interval");
    }
}
