//! One direction of a point-to-point link: an output queue, a transmitter of fixed rate, and a
//! propagation pipe of fixed delay.
//!
//! Two queue modes, chosen from the queue discipline:
//!
//! - **Computed FIFO** (DropTail). For a FIFO with tail drop, the time a packet starts to be
//!   serialised is known the moment it arrives: `start = max(arrival, end of the previous
//!   packet's transmission)`. The link keeps only the start times of waiting packets (to decide tail
//!   drops exactly as ns-2's `Queue/DropTail`: the limit counts packets that have not started
//!   transmission), puts the packet straight into its propagation pipe with its arrival time at the
//!   far end, and needs no "transmission done" event at all. Because the outcome is fixed at arrival,
//!   the caller may even offer a packet *in advance* (`at > now`) when it knows no other packet can
//!   reach the link earlier — this is how a hop fed by a single upstream link costs no event
//!   (see fatpipe-sim's cut-through).
//! - **Evented** (disciplines that decide at dequeue time, e.g. CoDel). The [`Queue`] object holds
//!   the packets and a "transmission done" event pulls the next one.
//!
//! Packets in propagation sit in a FIFO (arrival times are monotone on a FIFO link) and only its
//! head is scheduled, so the event queue stays small whatever the bandwidth-delay product.

use crate::packet::{Flags, Packet};
use crate::queue::droptail::Limit;
use crate::queue::{DropReason, Queue, QueueStats};
use fatpipe_core::{Rate, RngStream, SimTime};
use std::collections::VecDeque;

pub type LinkId = u32;

/// What the caller must schedule after `on_tx_done`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkWake {
    /// Schedule a "transmission done" event for this link at this time (evented mode).
    pub tx_done: Option<SimTime>,
}

/// The outcome of offering a packet to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// The queue refused it.
    Dropped(DropReason),
    /// It will reach the far end at this time; the caller places it (pipe or next hop).
    Departs(SimTime),
    /// As `Departs`, but an AQM marked it: it leaves with CE set (RFC 3168).
    DepartsMarked(SimTime),
    /// Nothing done yet: a transmission completes at this instant and must start the next
    /// packet first (the caller runs `on_tx_done`, then offers again). Completions and arrivals
    /// at one time thus always happen in that order, whichever of their events the engine's
    /// shortcuts scheduled first.
    TxDue,
    /// It waits in an evented queue; a later `on_tx_done` releases it.
    Queued,
    /// As `Queued`, and the transmitter was idle: schedule a "transmission done" event (evented
    /// mode) for this link at this time.
    QueuedWake(SimTime),
}

/// Arrival and start times of packets that had to wait in a computed FIFO.
struct ComputedFifo {
    limit: Limit,
    /// (arrival at the queue, start of transmission, bytes pushed before this entry), oldest
    /// first; both times are non-decreasing, so lengths at any time are two binary searches.
    /// Entries whose transmission has started are forgotten in batches (`prune`), not one by one.
    waiting: VecDeque<(SimTime, SimTime, u64)>,
    /// Total bytes ever pushed (running sum for O(1) byte counts of any index range).
    pushed_bytes: u64,
    /// Number of entries at the front of `waiting` whose transmission has started by the time of
    /// the latest offer. Offers come in time order, so this cursor only moves forward (less what
    /// `prune` removes) and the waiting count at an offer costs no search.
    started: usize,
    /// `prune` runs when `started` reaches this: a batch beyond what the last prune left. Offers
    /// made far ahead of the clock (a data-side merge, fatpipe-sim) start long after `now`, so
    /// a prune may find nothing to forget; trying again only a batch later keeps that cheap.
    prune_at: usize,
    stats: QueueStats,
}

/// Started entries kept before `prune` forgets them (a batch amortises its cost).
const PRUNE_BATCH: usize = 32;

impl ComputedFifo {
    /// Forget packets whose transmission started at or before `now` (they count at no time
    /// from `now` on). Only memory depends on it: counts skip started entries by the cursor.
    #[inline(never)]
    fn prune(&mut self, now: SimTime) {
        let k = self
            .waiting
            .iter()
            .take(self.started)
            .take_while(|e| e.1 <= now)
            .count();
        self.waiting.drain(..k);
        self.started -= k;
        self.prune_at = self.started + PRUNE_BATCH;
    }

    /// Bytes pushed before entry `i` (all bytes ever pushed for `i` = len).
    #[inline]
    fn cum(&self, i: usize) -> u64 {
        match self.waiting.get(i) {
            Some(e) => e.2,
            None => self.pushed_bytes,
        }
    }

    /// Packets and bytes waiting when a packet is offered at `at`, as `len_at(at)` would say.
    /// Offers come in time order (the link's contract), so every entry has arrived by `at`, and
    /// those that have started lie before the cursor.
    #[inline]
    fn waiting_at_offer(&mut self, at: SimTime) -> (usize, u64) {
        debug_assert!(
            self.waiting.back().is_none_or(|e| e.0 <= at),
            "offers to a computed FIFO must come in time order"
        );
        let n = self.waiting.len();
        while self.started < n && self.waiting[self.started].1 <= at {
            self.started += 1;
        }
        (n - self.started, self.pushed_bytes - self.cum(self.started))
    }

    /// A packet of `size` bytes offered at `at` must wait until `start`: tail drop if the queue is
    /// full (exactly ns-2's `Queue/DropTail`: the limit counts packets that have not started
    /// transmission), else record it. Returns whether it was accepted.
    #[inline]
    fn admit(&mut self, p: &Packet, now: SimTime, at: SimTime, start: SimTime) -> bool {
        if self.started >= self.prune_at {
            self.prune(now);
        }
        let (waiting, bytes) = self.waiting_at_offer(at);
        let fits = match self.limit {
            Limit::Packets(n) => (waiting as u64) < n,
            Limit::Bytes(b) => bytes + p.size as u64 <= b,
        };
        if !fits {
            self.stats.record_drop(p, DropReason::TailDrop);
            return false;
        }
        self.waiting.push_back((at, start, self.pushed_bytes));
        self.pushed_bytes += p.size as u64;
        self.stats.enqueued += 1;
        self.stats.max_len_packets = self.stats.max_len_packets.max(waiting as u64 + 1);
        true
    }

    /// Packets and bytes waiting at time `at` (>= the last prune time): arrived by `at` and not
    /// yet started. (Packets offered in advance have not arrived yet at earlier times.)
    #[inline]
    fn len_at(&self, at: SimTime) -> (usize, u64) {
        let started = self.waiting.partition_point(|&(_, s, _)| s <= at);
        let arrived = self.waiting.partition_point(|&(a, _, _)| a <= at);
        if arrived <= started {
            return (0, 0);
        }
        (arrived - started, self.cum(arrived) - self.cum(started))
    }
}

pub struct Link {
    /// A boxed str, not a String: the link is indexed on every hop, and keeping its size as it
    /// was before `loss` kept the reference scenario's instruction count.
    pub name: Box<str>,
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    pub delay: SimTime,
    queue: Box<dyn Queue>,
    fifo: Option<ComputedFifo>,
    busy_until: SimTime,
    tx_pending: bool,
    /// Serialisation time of the last packet size seen (links mostly carry one size), to avoid a
    /// division per packet.
    last_size: u32,
    last_tx_time: SimTime,
    in_flight: VecDeque<(SimTime, Packet)>,
    /// Bytes and packets put on the wire, counted when their transmission is scheduled; at the
    /// end of a run this includes the backlog scheduled but not yet serialised (see
    /// [`Link::bytes_serialised_by`]).
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Random loss before the queue (see [`Link::set_loss`]).
    loss: Option<Box<RandomLoss>>,
}

/// Independent random loss with probability `p` per packet, drawn from the link's own stream.
struct RandomLoss {
    p: f64,
    rng: RngStream,
    drops: u64,
    dropped_bytes: u64,
}

impl Link {
    pub fn new(
        name: String,
        from: u32,
        to: u32,
        rate: Rate,
        delay: SimTime,
        queue: Box<dyn Queue>,
    ) -> Self {
        let fifo = queue.fifo_tail_drop_limit().map(|limit| ComputedFifo {
            limit,
            waiting: VecDeque::new(),
            pushed_bytes: 0,
            started: 0,
            prune_at: PRUNE_BATCH,
            stats: QueueStats::default(),
        });
        Link {
            name: name.into_boxed_str(),
            from,
            to,
            rate,
            delay,
            queue,
            fifo,
            busy_until: SimTime::ZERO,
            tx_pending: false,
            last_size: 0,
            last_tx_time: SimTime::ZERO,
            in_flight: VecDeque::new(),
            tx_bytes: 0,
            tx_packets: 0,
            loss: None,
        }
    }

    /// Lose each packet reaching this link with probability `p`, independently, before it reaches
    /// the queue (netem's loss: the packet never occupies the buffer or the wire). A lossy link
    /// runs its queue evented (every arrival passes through it), never computed, so the engine's
    /// shortcuts never skip a loss draw.
    pub fn set_loss(&mut self, p: f64, rng: RngStream) {
        if p > 0.0 {
            self.fifo = None;
            self.loss = Some(Box::new(RandomLoss {
                p,
                rng,
                drops: 0,
                dropped_bytes: 0,
            }));
        }
    }

    /// End of the last transmission scheduled: a packet offered from now on starts no earlier.
    #[inline]
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }

    /// True when the queue is a computed FIFO, so packets may be offered in advance.
    #[inline]
    pub fn is_computed(&self) -> bool {
        self.fifo.is_some()
    }

    /// Start serialising a packet of `size` bytes no earlier than `at`; returns its arrival time
    /// at the far end.
    #[inline]
    fn schedule_tx(&mut self, size: u32, at: SimTime) -> SimTime {
        let start = at.max(self.busy_until);
        if size != self.last_size {
            self.last_size = size;
            self.last_tx_time = self.rate.tx_time(size as u64);
        }
        self.busy_until = start + self.last_tx_time;
        self.tx_bytes += size as u64;
        self.tx_packets += 1;
        self.busy_until + self.delay
    }

    /// Bytes whose serialisation finished by `end` (a partly sent packet counts pro rata): the
    /// scheduled bytes minus the backlog still ahead of the transmitter at `end`. Transmissions
    /// are contiguous from `end` to `busy_until` because each starts at max(arrival, busy_until)
    /// and nothing arrives after the end of a run. Utilisation uses this, so it never exceeds 1.
    pub fn bytes_serialised_by(&self, end: SimTime) -> f64 {
        let backlog_s = self.busy_until.saturating_sub(end).as_secs_f64();
        (self.tx_bytes as f64 - backlog_s * self.rate.bps() as f64 / 8.0).max(0.0)
    }

    /// A packet reaches this link's input at time `at` (`at > now` only for computed FIFOs, and
    /// then in time order).
    #[inline]
    pub fn offer(&mut self, p: &Packet, now: SimTime, at: SimTime) -> Offer {
        let Some(f) = &mut self.fifo else {
            return self.offer_evented(p, now, at);
        };
        let start = at.max(self.busy_until);
        // An idle transmitter takes it at once; only a packet that has to wait involves the queue.
        if start > at && !f.admit(p, now, at, start) {
            return Offer::Dropped(DropReason::TailDrop);
        }
        Offer::Departs(self.schedule_tx(p.size, at))
    }

    /// `offer` for disciplines that hold packets (AQMs). Every arrival goes through the queue,
    /// also one that finds the transmitter idle (as in ns-2, where `enque` runs before the link
    /// pulls the packet): the AQM's averages and counters see all traffic.
    #[inline(never)]
    #[cold]
    fn offer_evented(&mut self, p: &Packet, now: SimTime, at: SimTime) -> Offer {
        debug_assert_eq!(at, now, "evented queues cannot take packets in advance");
        if self.tx_due(now) {
            return Offer::TxDue;
        }
        if let Some(l) = &mut self.loss {
            if l.rng.uniform() < l.p {
                l.drops += 1;
                l.dropped_bytes += p.size as u64;
                return Offer::Dropped(DropReason::Random);
            }
        }
        if let Err((_p, why)) = self.queue.enqueue(*p, now) {
            return Offer::Dropped(why);
        }
        if self.tx_pending {
            return Offer::Queued;
        }
        if self.busy_until <= now {
            // The transmitter is idle, so the queue held nothing before: the head is this packet
            // (the AQM may have marked it).
            if let Some(head) = self.queue.dequeue(now) {
                debug_assert_eq!((head.flow, head.seq, head.kind), (p.flow, p.seq, p.kind));
                let arrive = self.schedule_tx(head.size, now);
                if self.queue.is_empty() {
                    self.queue.idle_from(self.busy_until);
                }
                if head.flags.has(Flags::CE) && !p.flags.has(Flags::CE) {
                    return Offer::DepartsMarked(arrive);
                }
                return Offer::Departs(arrive);
            }
            // A dequeue-time AQM discarded it.
            self.queue.idle_from(now);
            return Offer::Queued;
        }
        self.tx_pending = true;
        Offer::QueuedWake(self.busy_until)
    }

    /// Evented mode: a transmission completes at or before `now` and the next packet waits (its
    /// "transmission done" event may not have fired yet).
    #[inline(always)]
    pub fn tx_due(&self, now: SimTime) -> bool {
        self.tx_pending && self.busy_until <= now
    }

    /// Evented mode: the transmitter became free; start the next queued packet, if any. A stale
    /// event (its completion was already handled, see `tx_due`) does nothing.
    #[inline]
    pub fn on_tx_done(&mut self, now: SimTime, wake: &mut LinkWake) -> Option<(Packet, SimTime)> {
        if !self.tx_due(now) {
            return None;
        }
        self.tx_pending = false;
        let Some(p) = self.queue.dequeue(now) else {
            self.queue.idle_from(now);
            return None;
        };
        let arrive = self.schedule_tx(p.size, now);
        if self.queue.is_empty() {
            self.queue.idle_from(self.busy_until);
        } else {
            self.tx_pending = true;
            wake.tx_done = Some(self.busy_until);
        }
        Some((p, arrive))
    }

    /// Put a departed packet into the propagation pipe; returns true if the pipe was empty (the
    /// caller must schedule an arrival event at `arrive`).
    #[inline]
    pub fn push_in_flight(&mut self, arrive: SimTime, p: Packet) -> bool {
        debug_assert!(
            self.in_flight.back().is_none_or(|(t, _)| *t <= arrive),
            "pipe must stay FIFO"
        );
        self.in_flight.push_back((arrive, p));
        self.in_flight.len() == 1
    }

    /// Arrival time and packet at the head of the propagation pipe, if any.
    #[inline]
    pub fn pipe_head(&self) -> Option<&(SimTime, Packet)> {
        self.in_flight.front()
    }

    /// The head of the propagation pipe reached the far end: return it and the time of the next
    /// arrival to schedule, if any.
    #[inline]
    pub fn on_arrive(&mut self) -> (Packet, Option<SimTime>) {
        let (_, p) = self
            .in_flight
            .pop_front()
            .expect("arrival event without a packet in flight");
        (p, self.in_flight.front().map(|(t, _)| *t))
    }

    /// An arrival event for this link fired at `now`: if the head of the pipe arrives at `now`,
    /// return it and the time of the next arrival to schedule, if any; otherwise the event is
    /// stale (its packet was taken ahead of the clock) and there is nothing to do.
    #[inline]
    pub fn arrival_at(&mut self, now: SimTime) -> Option<(Packet, Option<SimTime>)> {
        match self.in_flight.front() {
            Some(&(t, _)) if t == now => {}
            _ => return None,
        }
        let (_, p) = self.in_flight.pop_front()?;
        Some((p, self.in_flight.front().map(|(t, _)| *t)))
    }

    /// Packets in the pipe (for computed FIFOs this includes packets still waiting to be sent).
    pub fn in_flight_packets(&self) -> usize {
        self.in_flight.len()
    }

    /// Packets held by an evented queue (not yet in the pipe).
    pub fn held_packets(&self) -> usize {
        if self.fifo.is_some() {
            0
        } else {
            self.queue.len_packets()
        }
    }

    /// Queue length (packets, bytes) at `now`, not counting the packet being serialised.
    pub fn queue_len(&self, now: SimTime) -> (usize, u64) {
        match &self.fifo {
            Some(f) => f.len_at(now),
            None => (self.queue.len_packets(), self.queue.len_bytes()),
        }
    }

    /// Queue counters as of `now`.
    pub fn queue_stats(&self, now: SimTime) -> QueueStats {
        match &self.fifo {
            Some(f) => {
                let mut s = f.stats.clone();
                s.dequeued = s.enqueued - f.len_at(now).0 as u64;
                s
            }
            None => {
                let mut s = self.queue.stats().clone();
                if let Some(l) = &self.loss {
                    s.drops[DropReason::Random.index()] += l.drops;
                    s.dropped_bytes += l.dropped_bytes;
                }
                s
            }
        }
    }

    pub fn queue_kind(&self) -> &'static str {
        self.queue.kind()
    }

    /// The AQM's control-law state at `now` (None for DropTail).
    pub fn aqm_state(&self, now: SimTime) -> Option<crate::queue::AqmState> {
        if self.fifo.is_some() {
            None
        } else {
            self.queue.aqm_state(now)
        }
    }

    /// A packet an evented queue discarded from inside (CoDel's head drops, FQ-CoDel's fattest
    /// queue) since the last call: the caller charges it to its flow. Call after every `offer`
    /// answered other than `Departs` and after every `on_tx_done`.
    #[inline]
    pub fn pop_dropped(&mut self) -> Option<Packet> {
        if self.fifo.is_some() {
            None
        } else {
            self.queue.pop_dropped()
        }
    }
}
