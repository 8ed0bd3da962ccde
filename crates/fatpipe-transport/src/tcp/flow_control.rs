//! TCP flow control with a finite receive buffer that the application drains (RFC 9293 §3.8.6),
//! for connections whose receiving application may fall behind (a relay depot whose onward
//! connection is slower). Every other connection's application reads at once, so its window is
//! the sender's static `rwnd_bytes` and none of this runs.
//!
//! Receiver ([`RecvWindow`]): the buffer holds `buf` bytes; data received in order and not yet
//! read (`rcv_nxt - copied`) occupies it. Each ACK advertises the right edge `copied + buf`,
//! subject to:
//! - receiver silly-window avoidance (RFC 9293 §3.8.6.2.2, RFC 1122 §4.2.3.3): the edge moves
//!   right only by at least min(buf / 2, MSS) (Fr = 1/2 as the RFC suggests);
//! - the edge never moves left (RFC 9293 §3.8.6.2.2, "shrinking the window" is discouraged;
//!   Linux `tcp_select_window` never shrinks it);
//! - the 16-bit window field is right-shifted by the window scale (RFC 7323 §2.3), which the
//!   receiver picks from its buffer as Linux `tcp_select_initial_window` does: the smallest
//!   shift, at most 14, that brings the buffer under 65 535; the shifted value rounds down, so
//!   the sender never learns more space than there is (above 65 535 << 14, about 1 GiB, the
//!   window saturates, as TCP's does).
//!
//! When the application reads, the receiver sends a window update at once if the window it had
//! advertised was at most half the buffer and the read at least doubles it (Linux
//! `tcp_cleanup_rbuf`: "send ACK now, if this read freed lots of space"); otherwise the new edge
//! rides on the next ACK.
//!
//! Sender ([`SendWindow`]): the usable window ends at the largest right edge learned from an ACK
//! (`ack + field << shift`; ACKs of a connection arrive in order here, so RFC 9293's SND.WL1/WL2
//! test reduces to keeping the largest edge, and edges never shrink). Only whole segments go
//! (sender silly-window avoidance, RFC 9293 §3.8.6.2.1: the sender in this simulator works in
//! segments; the last segment of a transfer may be short). When the window stops new data and
//! nothing is outstanding (so no ACK is coming), the persist timer (RFC 9293 §3.8.6.1; Linux
//! `ICSK_TIME_PROBE0`, in the slot the RTO uses) sends zero-window probes: first after
//! max(RTO, min_rto), then doubling up to `max_rto` (Linux `tcp_probe0_when`), each a zero-length
//! segment with the already acknowledged sequence number `snd_una - 1` that the receiver answers
//! with an ACK carrying its current window (Linux `tcp_xmit_probe_skb`). An ACK that opens the
//! window stops the timer and resets the backoff; one that does not re-arms it (Linux
//! `tcp_ack_probe`).

use fatpipe_core::SimTime;

/// Largest window scale (RFC 7323 §2.3, Linux `TCP_MAX_WSCALE`).
pub const MAX_WSCALE: u8 = 14;

/// The window scale a receiver with `buf` bytes of buffer announces (Linux
/// `tcp_select_initial_window`: the smallest shift that brings the space under 65 535).
pub fn window_shift(buf: u64) -> u8 {
    let mut s = 0;
    while (buf >> s) > u16::MAX as u64 && s < MAX_WSCALE {
        s += 1;
    }
    s
}

/// The receiving side: a buffer the application drains.
#[derive(Clone, Debug)]
pub struct RecvWindow {
    /// Receive buffer (RCV.BUFF), bytes.
    buf: u64,
    shift: u8,
    mss: u64,
    /// Bytes the application has read (Linux `copied_seq`).
    copied: u64,
    /// The right edge last advertised (RCV.NXT + RCV.WND then); never moves left.
    edge: u64,
}

impl RecvWindow {
    /// A buffer of `buf` bytes (at least one segment) on a connection with segments of `mss`.
    /// The first edge is the whole buffer, as announced in the handshake.
    pub fn new(buf: u64, mss: u32) -> Self {
        RecvWindow {
            buf,
            shift: window_shift(buf),
            mss: mss as u64,
            copied: 0,
            edge: buf,
        }
    }

    /// Receive buffer, bytes.
    pub fn buffer(&self) -> u64 {
        self.buf
    }

    /// Bytes the application has read.
    pub fn copied(&self) -> u64 {
        self.copied
    }

    /// The right edge last advertised.
    pub fn edge(&self) -> u64 {
        self.edge
    }

    /// The right edge the receiver may offer now: the buffer's end, but only once it has moved
    /// by at least min(buf / 2, MSS) (receiver silly-window avoidance), and never left of the
    /// last one.
    fn offer(&self) -> u64 {
        let end = self.copied + self.buf;
        let step = (self.buf / 2).min(self.mss);
        if end >= self.edge + step {
            end
        } else {
            self.edge
        }
    }

    /// The window field of an ACK acknowledging `rcv_nxt`; the edge it announces is remembered.
    #[inline(never)]
    pub fn advertise(&mut self, rcv_nxt: u64) -> u16 {
        let field = (self.offer().saturating_sub(rcv_nxt) >> self.shift).min(u16::MAX as u64);
        self.edge = self.edge.max(rcv_nxt + (field << self.shift));
        field as u16
    }

    /// The application reads up to `max` of the bytes received in order up to `rcv_nxt`.
    /// Returns the bytes read and whether a window update should be sent now (Linux
    /// `tcp_cleanup_rbuf`).
    pub fn read(&mut self, rcv_nxt: u64, max: u64) -> (u64, bool) {
        let n = rcv_nxt.saturating_sub(self.copied).min(max);
        if n == 0 {
            return (0, false);
        }
        let open = self.edge.saturating_sub(rcv_nxt);
        self.copied += n;
        let update = 2 * open <= self.buf && {
            let new = self.offer().saturating_sub(rcv_nxt) >> self.shift << self.shift;
            new > 0 && new >= 2 * open
        };
        (n, update)
    }
}

/// The sending side: the edge learned from ACKs and the persist timer's backoff.
#[derive(Clone, Debug)]
pub struct SendWindow {
    shift: u8,
    /// SND.UNA + SND.WND (bytes), the largest seen.
    edge: u64,
    /// Backoff exponent of the persist timer (Linux `icsk_backoff` while probing).
    backoff: u32,
}

impl SendWindow {
    /// The sending side of a connection whose receiver has `peer_buf` bytes of buffer (learned
    /// in the handshake: the first window and the scale).
    pub fn new(peer_buf: u64) -> Self {
        SendWindow {
            shift: window_shift(peer_buf),
            edge: peer_buf,
            backoff: 0,
        }
    }

    /// The right edge of the usable window (bytes).
    pub fn edge(&self) -> u64 {
        self.edge
    }

    /// An ACK acknowledging byte `ack` with window field `field`.
    pub fn on_ack(&mut self, ack: u64, field: u16) {
        self.edge = self.edge.max(ack + ((field as u64) << self.shift));
    }

    /// Whether data ending at byte `end` lies inside the window.
    #[inline]
    pub fn allows(&self, end: u64) -> bool {
        end <= self.edge
    }

    /// Time to the next zero-window probe: the RTO (never below min_rto) doubled per probe
    /// already sent, at most `max_rto` (Linux `tcp_probe0_when`).
    pub fn probe_timeout(&self, rto: SimTime, max_rto: SimTime) -> SimTime {
        let when = rto.as_nanos().saturating_mul(1u64 << self.backoff.min(32));
        SimTime(when.min(max_rto.as_nanos()))
    }

    /// A probe went out: the next one waits twice as long.
    pub fn probe_sent(&mut self) {
        self.backoff = (self.backoff + 1).min(32);
    }

    /// The window opened: the backoff starts again from 0.
    pub fn opened(&mut self) {
        self.backoff = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_scale_is_the_smallest_shift_that_fits_16_bits() {
        assert_eq!(window_shift(65_535), 0);
        assert_eq!(window_shift(65_536), 1);
        assert_eq!(window_shift(6_000_000), 7); // 6e6 >> 7 = 46 875
        assert_eq!(window_shift(u64::MAX), MAX_WSCALE);
    }

    #[test]
    fn a_full_buffer_closes_the_window_and_a_large_read_reopens_it_at_once() {
        let mss = 1000;
        let mut w = RecvWindow::new(10_000, mss);
        assert_eq!(w.advertise(0), 10_000);
        // Ten segments arrive, none is read: the window closes.
        assert_eq!(w.advertise(10_000), 0);
        // Reading one segment frees less than min(buf/2, mss)? No: exactly one MSS; the update
        // rule wants the window (0 before) at least doubled and positive: send it now.
        let (n, update) = w.read(10_000, 1_000);
        assert_eq!((n, update), (1_000, true));
        assert_eq!(w.advertise(10_000), 1_000);
        // A read of 200 bytes does not move the edge (silly-window avoidance) ...
        let (n, update) = w.read(10_000, 200);
        assert_eq!((n, update), (200, false));
        assert_eq!(w.advertise(10_000), 1_000);
        // ... until the buffer's end has moved by a whole segment.
        w.read(10_000, 800);
        assert_eq!(w.advertise(10_000), 2_000);
    }

    #[test]
    fn the_edge_never_moves_left_and_scaling_rounds_down() {
        let mut w = RecvWindow::new(1 << 20, 1460); // shift 5
        assert_eq!(window_shift(1 << 20), 5);
        let f = w.advertise(100);
        // (2^20 - 100) >> 5, rounded down: the announced edge is at most the buffer's end.
        assert_eq!(f as u64, ((1u64 << 20) - 100) >> 5);
        assert!(100 + ((f as u64) << 5) <= 1 << 20);
        assert_eq!(w.edge(), 1 << 20, "the handshake's edge stays the largest");
        let mut s = SendWindow::new(1 << 20);
        s.on_ack(100, f);
        assert_eq!(
            s.edge(),
            1 << 20,
            "a rounded-down edge does not shrink the sender's"
        );
        assert!(s.allows(1 << 20) && !s.allows((1 << 20) + 1));
    }

    #[test]
    fn probes_back_off_to_the_maximum() {
        let mut s = SendWindow::new(65_535);
        let rto = SimTime::from_millis(300);
        let max = SimTime::from_secs(120);
        assert_eq!(s.probe_timeout(rto, max), rto);
        s.probe_sent();
        assert_eq!(s.probe_timeout(rto, max), SimTime::from_millis(600));
        for _ in 0..20 {
            s.probe_sent();
        }
        assert_eq!(s.probe_timeout(rto, max), max);
        s.opened();
        assert_eq!(s.probe_timeout(rto, max), rto);
    }
}
