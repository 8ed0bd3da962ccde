//! Flow control end to end: a sender and a receiver with a finite buffer that an application
//! drains at its own pace, over a wire with a fixed one-way delay that may lose ACKs.

use super::*;
use crate::cc;
use fatpipe_core::SimTime;
use fatpipe_net::{Packet, PacketKind};
use std::collections::VecDeque;

const MSS: u32 = 1460;

/// How the receiving application reads.
#[derive(Clone, Copy)]
enum Reader {
    /// Everything, as soon as it arrives.
    Eager,
    /// `bytes` every `every` (a slow consumer), starting at `every`.
    Paced { bytes: u64, every: SimTime },
    /// Nothing until `at`, then everything as it arrives.
    StallUntil(SimTime),
}

struct Outcome {
    sender: TcpSender,
    receiver: TcpReceiver,
    read: u64,
    end: SimTime,
    /// Largest unread backlog seen (must stay within the buffer).
    max_unread: u64,
}

/// Transfer `bytes` with a receive buffer of `buf` (None: no flow control, the application
/// reads at once) and `reader`; `drop_ack(n, ack)` loses the n-th ACK.
fn run(
    bytes: u64,
    buf: Option<u64>,
    reader: Reader,
    mut drop_ack: impl FnMut(u64, &Packet) -> bool,
) -> Outcome {
    let cfg = TcpConfig {
        mss: MSS,
        initial_window: 10,
        rwnd_bytes: buf.unwrap_or(64 * MSS as u64),
        ..TcpConfig::default()
    };
    let cc = cc::by_name("reno", &toml::Table::new()).unwrap();
    let mut s = TcpSender::new(0, 1, cfg.clone(), cc, Some(bytes));
    let mut r = TcpReceiver::new(0, 0, &cfg, Some(bytes));
    if let Some(b) = buf {
        s = s.with_peer_window(b);
        r = r.with_receive_buffer(b, MSS);
    }
    let delay = SimTime::from_millis(10);
    let gap = SimTime::from_micros(100); // a 117 Mb/s bottleneck for the data
    let mut wire: VecDeque<(SimTime, Packet)> = VecDeque::new();
    let mut out = Vec::new();
    let mut now = SimTime::ZERO;
    let mut link_free = SimTime::ZERO;
    let mut acks = 0u64;
    let mut read = 0u64;
    let mut max_unread = 0u64;
    let mut next_read = match reader {
        Reader::Paced { every, .. } => every,
        Reader::StallUntil(t) => t,
        Reader::Eager => SimTime::MAX,
    };
    s.start(now, &mut out);
    for _ in 0..5_000_000 {
        for p in out.drain(..) {
            let at = if p.kind == PacketKind::Data {
                link_free = now.max(link_free) + gap;
                link_free + delay
            } else {
                acks += 1;
                if drop_ack(acks, &p) {
                    continue;
                }
                now + delay
            };
            let k = wire.partition_point(|(t, _)| *t <= at);
            wire.insert(k, (at, p));
        }
        s.check_invariants().unwrap();
        if r.completed_at.is_some() && s.is_done() && (buf.is_none() || read == bytes) {
            break;
        }
        let t_wire = wire.front().map_or(SimTime::MAX, |x| x.0);
        let t_s = s.next_timer().unwrap_or(SimTime::MAX);
        let t_r = r.next_timer().unwrap_or(SimTime::MAX);
        let t = t_wire.min(t_s).min(t_r).min(next_read);
        assert!(t < SimTime::MAX, "deadlock at {now:?}: nothing scheduled");
        now = t;
        if t == t_wire {
            let (_, p) = wire.pop_front().unwrap();
            match p.kind {
                PacketKind::Data => {
                    r.on_data(now, &p, &mut out);
                    max_unread = max_unread.max(r.unread());
                    if let Some(w) = r.receive_window() {
                        assert!(
                            r.bytes_delivered() <= w.copied() + w.buffer(),
                            "data beyond the buffer"
                        );
                    }
                    let eager = match reader {
                        Reader::Eager => true,
                        Reader::StallUntil(at) => now >= at,
                        Reader::Paced { .. } => false,
                    };
                    if eager {
                        read += r.read(u64::MAX, &mut out);
                    }
                }
                PacketKind::Ack => s.on_ack(now, &p, &mut out),
                _ => unreachable!(),
            }
        } else if t == t_s {
            s.on_timer(now, &mut out);
        } else if t == t_r {
            r.on_timer(now, &mut out);
        } else {
            match reader {
                Reader::Paced { bytes: b, every } => {
                    read += r.read(b, &mut out);
                    next_read = now + every;
                }
                Reader::StallUntil(_) => {
                    read += r.read(u64::MAX, &mut out);
                    next_read = SimTime::MAX;
                }
                Reader::Eager => unreachable!(),
            }
        }
    }
    Outcome {
        sender: s,
        receiver: r,
        read,
        end: now,
        max_unread,
    }
}

/// A reader that takes each segment as it arrives, just after the receiver has ACKed it (as a
/// process woken by the data does): each ACK advertises the buffer less that one segment, so a
/// buffer of 65 segments allows what a static window of 64 does, and the transfer is the same
/// packet for packet (the path's BDP is 200 segments: the window is what limits it).
#[test]
fn an_eager_reader_never_closes_the_window_and_changes_nothing() {
    let bytes = 3_000_000;
    let fc = run(bytes, Some(65 * MSS as u64), Reader::Eager, |_, _| false);
    let plain = run(bytes, None, Reader::Eager, |_, _| false);
    assert_eq!(fc.read, bytes);
    assert_eq!(fc.receiver.completed_at, plain.receiver.completed_at);
    assert_eq!(
        fc.sender.stats.data_packets_sent,
        plain.sender.stats.data_packets_sent
    );
    assert_eq!(fc.sender.stats.window_probes, 0);
}

#[test]
fn a_slow_reader_sets_the_pace_through_the_window_without_losses() {
    // The reader takes 10 segments every 10 ms: 11.7 Mb/s, a tenth of the bottleneck. The
    // buffer holds more than the reader takes in a round trip (20 segments) plus one read, so
    // the reader never finds it empty (with 32 segments it sometimes does, and falls behind).
    let bytes = 2_000_000;
    let buf = 64 * MSS as u64;
    let every = SimTime::from_millis(10);
    let o = run(
        bytes,
        Some(buf),
        Reader::Paced {
            bytes: 10 * MSS as u64,
            every,
        },
        |_, _| false,
    );
    assert_eq!(o.read, bytes);
    assert!(o.max_unread <= buf, "{} > {buf}", o.max_unread);
    assert!(o.sender.stats.rwnd_limited);
    assert_eq!(o.sender.stats.retransmits, 0, "backpressure, not loss");
    // The transfer takes as long as the reader needs, plus the reads that find the buffer empty
    // while slow start fills it (the first data arrives just after the first read, 10.1 ms: 2
    // reads in this run; 3 allowed).
    let reads = bytes.div_ceil(10 * MSS as u64);
    let need = SimTime(every.as_nanos() * reads);
    assert!(
        o.end >= need && o.end <= need + SimTime(3 * every.as_nanos()),
        "{:?} vs {need:?}",
        o.end
    );
}

#[test]
fn lost_window_updates_are_recovered_by_zero_window_probes() {
    // The reader stalls for 3 s with the buffer full; every ACK sent while the window is
    // closed and the one update sent when it reopens are lost, so only the persist timer's
    // probes can learn that the window opened.
    let bytes = 500_000;
    let buf = 16 * MSS as u64;
    let stall = SimTime::from_secs(3);
    let (mut at_edge, mut update_lost) = (0, false);
    let o = run(bytes, Some(buf), Reader::StallUntil(stall), |_, ack| {
        // The ACK of the segment that fills the buffer arrives (window 0); the answers to the
        // probes during the stall and the update sent when the reader wakes are lost; later
        // answers (window open) arrive.
        if ack.seq != buf || (update_lost && ack.window_field() > 0) {
            return false;
        }
        at_edge += 1;
        if at_edge == 1 {
            return false;
        }
        if ack.window_field() > 0 {
            update_lost = true;
        }
        true
    });
    assert_eq!(o.read, bytes);
    assert!(o.max_unread <= buf);
    assert!(
        o.sender.stats.window_probes >= 2,
        "probes: {}",
        o.sender.stats.window_probes
    );
    assert_eq!(o.sender.stats.timeouts, 0, "a closed window is not a loss");
}
