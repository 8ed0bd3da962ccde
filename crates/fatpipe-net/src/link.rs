//! One direction of a point-to-point link: an output queue, a transmitter of fixed rate, and a
//! propagation pipe of fixed delay.
//!
//! Events per packet: an idle link starts serialising an arriving packet at once (no event for the
//! enqueue or the end of transmission); only a backlogged link needs a "transmission done" event to
//! pull the next packet from its queue. Packets in propagation sit in a FIFO (arrival times are
//! monotone on a FIFO link) and only its head is scheduled, so a hop costs one event when
//! uncongested and two when backlogged.

use crate::packet::Packet;
use crate::queue::{DropReason, Queue};
use fatpipe_core::{Rate, SimTime};
use std::collections::VecDeque;

pub type LinkId = u32;

/// What the caller must schedule after a link operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkWake {
    /// Schedule a "transmission done" event for this link at this time.
    pub tx_done: Option<SimTime>,
    /// Schedule an "arrival at the far end" event for this link at this time.
    pub arrive: Option<SimTime>,
}

pub struct Link {
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub rate: Rate,
    pub delay: SimTime,
    pub queue: Box<dyn Queue>,
    busy_until: SimTime,
    tx_pending: bool,
    in_flight: VecDeque<(SimTime, Packet)>,
    /// Bytes and packets put on the wire (utilisation = tx_bytes*8 / (rate*duration)).
    pub tx_bytes: u64,
    pub tx_packets: u64,
    /// Bytes sent during the current sampling interval (reset by the monitor).
    pub tx_bytes_interval: u64,
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
        Link {
            name,
            from,
            to,
            rate,
            delay,
            queue,
            busy_until: SimTime::ZERO,
            tx_pending: false,
            in_flight: VecDeque::new(),
            tx_bytes: 0,
            tx_packets: 0,
            tx_bytes_interval: 0,
        }
    }

    #[inline]
    fn transmit(&mut self, p: Packet, now: SimTime, wake: &mut LinkWake) {
        let start = now.max(self.busy_until);
        self.busy_until = start + self.rate.tx_time(p.size as u64);
        self.tx_bytes += p.size as u64;
        self.tx_bytes_interval += p.size as u64;
        self.tx_packets += 1;
        let at = self.busy_until + self.delay;
        if self.in_flight.is_empty() {
            wake.arrive = Some(at);
        }
        self.in_flight.push_back((at, p));
    }

    /// A packet arrives at this link's output. Returns the drop reason if the queue refused it.
    #[inline]
    pub fn send(&mut self, p: Packet, now: SimTime, wake: &mut LinkWake) -> Option<DropReason> {
        if !self.tx_pending && self.busy_until <= now && self.queue.is_empty() {
            self.transmit(p, now, wake);
            return None;
        }
        match self.queue.enqueue(p, now) {
            Ok(()) => {
                if !self.tx_pending {
                    self.tx_pending = true;
                    wake.tx_done = Some(self.busy_until.max(now));
                }
                None
            }
            Err((_p, why)) => Some(why),
        }
    }

    /// The transmitter became free: start the next queued packet, if any.
    #[inline]
    pub fn on_tx_done(&mut self, now: SimTime, wake: &mut LinkWake) {
        self.tx_pending = false;
        if let Some(p) = self.queue.dequeue(now) {
            self.transmit(p, now, wake);
            if !self.queue.is_empty() {
                self.tx_pending = true;
                wake.tx_done = Some(self.busy_until);
            }
        }
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

    /// Packets currently propagating.
    pub fn in_flight_packets(&self) -> usize {
        self.in_flight.len()
    }
    /// 1 if a packet is being serialised at `now`, else 0 (for conservation checks).
    pub fn transmitting(&self, now: SimTime) -> bool {
        self.busy_until > now
    }
}
