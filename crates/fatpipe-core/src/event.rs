//! The event queue: events ordered by `(time, tie rank, insertion sequence)`.
//!
//! Events of equal time pop in the order of their [`TieRank`], then in the order in which they
//! were scheduled (FIFO), which is what makes a run deterministic regardless of the data
//! structure. The rank exists for events whose relative order at one instant must not depend on
//! when they were scheduled: the simulator ranks packet arrivals by link, so that two packets
//! reaching a node at the same nanosecond are taken in the same order whichever way the engine
//! got them there (events, or its shortcuts, which schedule at other moments). Rank 0 (the
//! default) is plain scheduling order.
//! Popping asserts that time never goes backwards (as htsim's `EventList` does).
//!
//! Structure: a calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue
//! implementation for the simulation event set problem", CACM 31(10), 1988) for the near future —
//! 2^12 buckets of 65.536 µs, a 268 ms horizon that covers the propagation delays and timers of
//! typical long fat networks — with a bitmap to skip empty buckets, and a binary heap for events
//! beyond the horizon, which move into the calendar as time advances. The bucket count was
//! chosen by measurement (reference dumbbell, `cargo bench`): few enough buckets that the
//! calendar stays in cache, since a simulation has only a few hundred pending events.
//!
//! Each bucket is kept sorted by (time, rank), equal keys in the order they were scheduled, so popping
//! takes the bucket's first entry and the calendar needs no sequence numbers. Events are mostly
//! scheduled in time order, so an insertion usually lands at the end after one comparison. The
//! order within a bucket is the scheduling order for equal times because far events move into
//! the calendar as soon as the clock brings them within the horizon (at the end of the `pop`
//! that moved the clock), before anything else can be scheduled at their time; the far heap
//! orders by `(time, rank, sequence)`. Every pop thus returns exactly the minimum
//! `(time, rank, seq)`, the order of a plain binary heap (a test checks this on random
//! workloads).

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// log2 of the bucket width in nanoseconds (65.536 µs).
const SHIFT: u32 = 16;
/// Number of buckets (power of two): horizon = 2^12 x 65.536 µs = 268 ms.
const NB: usize = 1 << 12;
const MASK: u64 = NB as u64 - 1;
const WORDS: usize = NB / 64;

/// Where an event goes among events of the same time: lower ranks first, equal ranks in
/// scheduling order.
pub trait TieRank {
    fn tie_rank(&self) -> u32 {
        0
    }
}

impl TieRank for char {}
impl TieRank for i32 {}
impl TieRank for u32 {}
impl TieRank for u64 {}

/// An event beyond the calendar's horizon.
struct Entry<E> {
    time: SimTime,
    rank: u32,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.rank == other.rank && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, rank, seq) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.rank.cmp(&self.rank))
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// One calendar bucket: `items[head..]` sorted by (time, rank), equal keys in scheduling order.
struct Bucket<E> {
    items: Vec<(SimTime, E)>,
    head: usize,
}

/// A deterministic priority queue of events of type `E`.
pub struct EventQueue<E> {
    /// Fixed-size arrays, so indices masked to the calendar's size need no bounds checks.
    buckets: Box<[Bucket<E>; NB]>,
    bitmap: [u64; WORDS],
    near_len: usize,
    far: BinaryHeap<Entry<E>>,
    /// Bucket number (time >> SHIFT) of the earliest far event (u64::MAX if none), so a pop
    /// checks whether anything must move into the calendar without looking into the heap.
    far_top: u64,
    /// Absolute bucket number (time >> SHIFT) of the clock: the calendar covers
    /// [cur, cur + NB) buckets.
    cur: u64,
    /// Sequence number of the next far event.
    next_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E: Copy + TieRank> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy + TieRank> EventQueue<E> {
    pub fn new() -> Self {
        let mut buckets = Vec::with_capacity(NB);
        buckets.resize_with(NB, || Bucket {
            items: Vec::new(),
            head: 0,
        });
        let buckets: Box<[Bucket<E>; NB]> = buckets
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("NB buckets"));
        EventQueue {
            buckets,
            bitmap: [0; WORDS],
            near_len: 0,
            far: BinaryHeap::new(),
            far_top: u64::MAX,
            cur: 0,
            next_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    /// The time of the last event popped (the simulation clock).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Put an event into its calendar bucket, after every entry of an earlier time, or of the
    /// same time and the same or a lower rank.
    #[inline(always)]
    fn push_near(&mut self, time: SimTime, event: E) {
        let idx = ((time.0 >> SHIFT) & MASK) as usize;
        let b = &mut self.buckets[idx];
        b.items.push((time, event));
        let mut i = b.items.len() - 1;
        while i > b.head && b.items[i - 1].0 >= time {
            let prev = &b.items[i - 1];
            if prev.0 == time && prev.1.tie_rank() <= event.tie_rank() {
                break;
            }
            b.items.swap(i - 1, i);
            i -= 1;
        }
        self.bitmap[idx / 64] |= 1 << (idx % 64);
        self.near_len += 1;
    }

    /// Schedule `event` at absolute time `at` (which must not be in the past).
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, event: E) {
        debug_assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        let bucket = at.0 >> SHIFT;
        if bucket < self.cur + NB as u64 {
            self.push_near(at, event);
        } else {
            self.push_far(at, event, bucket);
        }
    }

    /// An event beyond the horizon; the sequence number orders equal times in the heap.
    #[inline(never)]
    fn push_far(&mut self, at: SimTime, event: E, bucket: u64) {
        self.far.push(Entry {
            time: at,
            rank: event.tie_rank(),
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
        self.far_top = self.far_top.min(bucket);
    }

    /// Move far events that the calendar now covers into it (in `(time, rank, seq)` order, so
    /// equal keys keep their scheduling order).
    #[inline(never)]
    fn migrate_far(&mut self) {
        while let Some(top) = self.far.peek() {
            if (top.time.0 >> SHIFT) >= self.cur + NB as u64 {
                break;
            }
            let e = self.far.pop().expect("peeked");
            self.push_near(e.time, e.event);
        }
        self.far_top = self.far.peek().map_or(u64::MAX, |top| top.time.0 >> SHIFT);
    }

    /// Bucket index of the earliest calendar event (calendar non-empty).
    #[inline]
    fn first_bucket(&self) -> usize {
        let start = (self.cur & MASK) as usize;
        let mut w = start / 64;
        let mut bits = self.bitmap[w] & (!0u64 << (start % 64));
        let mut scanned = 0;
        while bits == 0 {
            w = (w + 1) % WORDS;
            bits = self.bitmap[w];
            scanned += 1;
            debug_assert!(scanned <= WORDS, "calendar bitmap out of sync");
        }
        w * 64 + bits.trailing_zeros() as usize
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        if self.near_len == 0 {
            return self.far.peek().map(|e| e.time);
        }
        let b = &self.buckets[self.first_bucket()];
        Some(b.items[b.head].0)
    }

    /// Remove the next event and advance the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.pop_until(SimTime::MAX)
    }

    /// Remove the next event if its time is at most `limit`, advancing the clock.
    #[inline]
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if self.near_len == 0 {
            // Only far events (or none): jump the calendar to the earliest.
            let top = self.far.peek()?;
            if top.time > limit {
                return None;
            }
            self.cur = top.time.0 >> SHIFT;
            self.migrate_far();
        }
        let idx = self.first_bucket();
        let b = &mut self.buckets[idx];
        let (time, event) = b.items[b.head];
        if time > limit {
            return None;
        }
        b.head += 1;
        if b.head == b.items.len() {
            b.items.clear();
            b.head = 0;
            self.bitmap[idx / 64] &= !(1 << (idx % 64));
        }
        self.near_len -= 1;
        assert!(
            time >= self.now,
            "event time must be monotonically non-decreasing"
        );
        self.now = time;
        self.cur = time.0 >> SHIFT;
        self.popped += 1;
        if self.far_top < self.cur + NB as u64 {
            self.migrate_far();
        }
        Some((time, event))
    }

    /// Move the clock to `t` without popping anything (no event may be pending before `t`): the
    /// simulation's monitor samples run between events this way. Far events the calendar now
    /// covers move into it, as after a pop, before anything can be scheduled at their time.
    pub fn advance_to(&mut self, t: SimTime) {
        assert!(t >= self.now, "the clock cannot go backwards");
        debug_assert!(
            self.peek_time().is_none_or(|e| e >= t),
            "an event is pending before {t}"
        );
        self.now = t;
        self.cur = t.0 >> SHIFT;
        if self.far_top < self.cur + NB as u64 {
            self.migrate_far();
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.near_len + self.far.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Number of events popped so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), 'b');
        q.schedule(SimTime(1), 'a');
        q.schedule(SimTime(5), 'c');
        q.schedule(SimTime(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), SimTime(5));
        assert_eq!(q.events_processed(), 4);
    }

    /// A test event with a rank of its own.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Ranked(u64, u32);
    impl TieRank for Ranked {
        fn tie_rank(&self) -> u32 {
            self.1
        }
    }

    #[test]
    fn equal_time_events_pop_by_rank_then_in_insertion_order() {
        let mut q = EventQueue::new();
        let far = SimTime::from_secs(5);
        for (i, r) in [2, 0, 1, 0, 2].into_iter().enumerate() {
            q.schedule(SimTime(5), Ranked(i as u64, r));
            q.schedule(far, Ranked(10 + i as u64, r));
        }
        let order: Vec<u64> = std::iter::from_fn(|| q.pop().map(|(_, e)| e.0)).collect();
        assert_eq!(order, vec![1, 3, 2, 0, 4, 11, 13, 12, 10, 14]);
    }

    /// The calendar must pop exactly what a plain binary heap pops, for event times spread from
    /// nanoseconds to many horizons ahead, with ties of equal and unequal rank, and with pushes
    /// interleaved with pops.
    #[test]
    fn matches_a_binary_heap_on_random_workloads() {
        let mut rng = crate::RngStream::new(42, "event-queue-test");
        let mut q = EventQueue::new();
        let mut reference: BinaryHeap<Entry<Ranked>> = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for step in 0..200_000u64 {
            let pushes = rng.below(3);
            for _ in 0..pushes {
                let delta = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(10_000),
                    2 => rng.below(300_000_000),
                    _ => rng.below(5_000_000_000),
                };
                let ev = Ranked(step, rng.below(3) as u32);
                q.schedule(SimTime(now + delta), ev);
                reference.push(Entry {
                    time: SimTime(now + delta),
                    rank: ev.1,
                    seq,
                    event: ev,
                });
                seq += 1;
            }
            if rng.below(2) == 0 || step % 7 == 0 {
                let a = q.pop();
                let b = reference.pop().map(|e| (e.time, e.event));
                assert_eq!(a, b);
                if let Some((t, _)) = a {
                    now = t.0;
                }
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(b) = reference.pop() {
            assert_eq!(q.pop(), Some((b.time, b.event)));
        }
        assert!(q.pop().is_none());
    }

    /// Advancing the clock between events keeps the order of a binary heap: a far event that the
    /// new clock brings within the horizon still pops before a near event scheduled later at the
    /// same time.
    #[test]
    fn advance_to_moves_the_clock_and_keeps_the_order() {
        let mut q = EventQueue::new();
        let far = SimTime::from_secs(2);
        q.schedule(far, 1);
        q.schedule(SimTime(10), 0);
        assert_eq!(q.pop(), Some((SimTime(10), 0)));
        q.advance_to(SimTime::from_millis(1900));
        assert_eq!(q.now(), SimTime::from_millis(1900));
        q.schedule(far, 2);
        assert_eq!(q.pop(), Some((far, 1)));
        assert_eq!(q.pop(), Some((far, 2)));
        assert_eq!(q.events_processed(), 3);
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 1);
        q.schedule(SimTime(1_000_000_000_000), 2);
        assert_eq!(q.pop_until(SimTime(100)), Some((SimTime(10), 1)));
        assert_eq!(q.pop_until(SimTime(100)), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.peek_time(), Some(SimTime(1_000_000_000_000)));
    }
}
