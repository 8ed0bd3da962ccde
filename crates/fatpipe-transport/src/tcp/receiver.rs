//! TCP receiver: cumulative ACKs, SACK blocks (RFC 2018), timestamp echo (RFC 7323 §4.3) and
//! optional delayed ACKs (RFC 5681 §4.2: ACK at least every second full-sized segment, within
//! `delack_timeout`; out-of-order and gap-filling segments are ACKed at once).
//!
//! By default the application reads everything at once, so the window is the sender's static
//! `rwnd_bytes` and ACKs carry no window. A receiver given a finite buffer that its application
//! drains ([`TcpReceiver::with_receive_buffer`], [`TcpReceiver::read`]; relay depots) advertises
//! the free space on every ACK (see [`super::flow_control`]).

use super::config::{Recovery, TcpConfig};
use super::flow_control::RecvWindow;
use fatpipe_core::SimTime;
use fatpipe_net::{Flags, Packet, PacketKind, SackBlocks};
use std::collections::VecDeque;

/// How many recently received out-of-order segments are remembered to order SACK blocks.
const RECENT: usize = 8;
/// How many of the highest out-of-order ranges a lookup tries one by one before it searches
/// them all (`partition_from_back`).
const BACK_SCAN: usize = 4;

pub struct TcpReceiver {
    pub flow: u32,
    /// Node of the sender (where ACKs go).
    pub peer: u32,
    header_bytes: u32,
    sack: bool,
    max_blocks: usize,
    delayed_ack: bool,
    delack_timeout: SimTime,
    /// Next in-order byte expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges above rcv_nxt, sorted and disjoint. A ring buffer: holes are filled
    /// from the front (retransmissions) and new ranges appear at the back, both O(1), which
    /// matters after a loss burst leaves tens of thousands of holes in a 10 Gb/s window.
    ooo: VecDeque<(u64, u64)>,
    /// Start bytes of recently received out-of-order segments, most recent first (RFC 2018 §4:
    /// the first block reports the most recent segment, then the most recently reported ones).
    recent: Vec<u64>,
    ts_recent: u64,
    last_ack_sent: u64,
    unacked_segments: u32,
    delack_deadline: Option<SimTime>,
    /// Total bytes of a finite transfer, for the completion time.
    total: Option<u64>,
    pub completed_at: Option<SimTime>,
    pub data_packets_received: u64,
    pub acks_sent: u64,
    /// Incarnation of the connection slot, stamped on every ACK (see `Packet::epoch`).
    epoch: u16,
    /// RFC 3168 §6.1.3: a CE-marked segment arrived and no CWR since; every ACK carries ECE.
    ece_pending: bool,
    /// A finite buffer the application drains (None: it reads everything at once).
    window: Option<Box<RecvWindow>>,
}

impl TcpReceiver {
    pub fn new(flow: u32, peer: u32, cfg: &TcpConfig, total: Option<u64>) -> Self {
        TcpReceiver {
            flow,
            peer,
            header_bytes: cfg.header_bytes,
            sack: cfg.recovery == Recovery::Sack,
            max_blocks: (cfg.max_sack_blocks as usize).min(SackBlocks::MAX),
            delayed_ack: cfg.delayed_ack,
            delack_timeout: cfg.delack_timeout,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            recent: Vec::with_capacity(RECENT),
            ts_recent: 0,
            last_ack_sent: 0,
            unacked_segments: 0,
            delack_deadline: None,
            total,
            completed_at: None,
            data_packets_received: 0,
            acks_sent: 0,
            epoch: 0,
            ece_pending: false,
            window: None,
        }
    }

    /// Give this receiver a buffer of `bytes` that the application drains with
    /// [`TcpReceiver::read`]; every ACK then advertises the free space (flow control). The
    /// sender must be built with [`super::TcpSender::with_peer_window`] of the same size.
    pub fn with_receive_buffer(mut self, bytes: u64, mss: u32) -> Self {
        self.window = Some(Box::new(RecvWindow::new(bytes, mss)));
        self
    }

    /// The receive buffer's state, if this receiver has one.
    pub fn receive_window(&self) -> Option<&RecvWindow> {
        self.window.as_deref()
    }

    /// Bytes received in order that the application has not read (0 without a buffer: it reads
    /// everything at once).
    pub fn unread(&self) -> u64 {
        self.window
            .as_ref()
            .map_or(0, |w| self.rcv_nxt - w.copied())
    }

    /// The application reads up to `max` bytes of what arrived in order; returns the bytes read.
    /// A read that frees much of the buffer sends a window update into `out` (Linux
    /// `tcp_cleanup_rbuf`).
    pub fn read(&mut self, max: u64, out: &mut Vec<Packet>) -> u64 {
        let Some(w) = self.window.as_mut() else {
            return 0;
        };
        let (n, update) = w.read(self.rcv_nxt, max);
        if update {
            self.send_ack(out);
        }
        n
    }

    /// Stamp this connection's ACKs with slot incarnation `epoch` (see `Packet::epoch`).
    pub fn with_epoch(mut self, epoch: u16) -> Self {
        self.epoch = epoch;
        self
    }

    /// Whether this receiver delays ACKs (and so uses a timer).
    pub fn delayed_ack(&self) -> bool {
        self.delayed_ack
    }

    /// Bytes delivered in order to the application.
    pub fn bytes_delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// (bytes delivered in order, data packets received).
    #[inline]
    pub fn delivery_counters(&self) -> (u64, u64) {
        (self.rcv_nxt, self.data_packets_received)
    }

    pub fn next_timer(&self) -> Option<SimTime> {
        self.delack_deadline
    }

    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if let Some(d) = self.delack_deadline {
            if d <= now {
                self.send_ack(out);
            }
        }
    }

    /// A data segment arrived. Returns the number of bytes newly delivered in order.
    pub fn on_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) -> u64 {
        self.data_packets_received += 1;
        // RFC 3168 §6.1.3: echo CE until the sender says it reduced (CWR); a CWR segment that is
        // itself marked starts the echo again.
        if p.flags.has(Flags::CWR | Flags::CE) {
            self.ece_pending =
                p.flags.has(Flags::CE) || (self.ece_pending && !p.flags.has(Flags::CWR));
        }
        // RFC 7323 §4.3 (2): update TS.Recent from segments that do not lie beyond the last ACK.
        if p.seq <= self.last_ack_sent && p.ts >= self.ts_recent {
            self.ts_recent = p.ts;
        }
        let (s, e) = (p.seq, p.seq + p.len as u64);
        let before = self.rcv_nxt;
        let mut immediate = false;
        if e <= self.rcv_nxt {
            immediate = true; // duplicate: tell the sender at once
        } else if s <= self.rcv_nxt {
            self.rcv_nxt = e;
            if !self.ooo.is_empty() {
                immediate = true; // fills (part of) a hole
                while let Some(&(s0, e0)) = self.ooo.front() {
                    if s0 > self.rcv_nxt {
                        break;
                    }
                    self.rcv_nxt = self.rcv_nxt.max(e0);
                    self.ooo.pop_front();
                }
            }
        } else {
            immediate = true;
            self.insert_ooo(s, e);
            self.recent.retain(|&r| r != s);
            if self.recent.len() == RECENT {
                self.recent.pop();
            }
            self.recent.insert(0, s);
        }
        if let (Some(total), None) = (self.total, self.completed_at) {
            if self.rcv_nxt >= total {
                self.completed_at = Some(now);
            }
        }
        if !self.delayed_ack || immediate {
            self.send_ack(out);
        } else {
            self.unacked_segments += 1;
            if self.unacked_segments >= 2 {
                self.send_ack(out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.delack_timeout);
            }
        }
        self.rcv_nxt - before
    }

    fn insert_ooo(&mut self, s: u64, e: u64) {
        let i = self.partition_from_back(|r| r.1 < s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        while j < self.ooo.len() && self.ooo[j].0 <= ne {
            ns = ns.min(self.ooo[j].0);
            ne = ne.max(self.ooo[j].1);
            j += 1;
        }
        if j == i + 1 {
            self.ooo[i] = (ns, ne);
        } else {
            self.ooo.drain(i..j);
            self.ooo.insert(i, (ns, ne));
        }
    }

    fn range_containing(&self, b: u64) -> Option<(u64, u64)> {
        let i = self.partition_from_back(|r| r.1 <= b);
        self.ooo.get(i).copied().filter(|r| r.0 <= b)
    }

    /// `self.ooo.partition_point(pred)` (`pred` holds on a prefix of the ranges), trying the
    /// highest `BACK_SCAN` ranges first: the segments a receiver inserts and looks up are mostly
    /// recent ones, at or near the top, while the ranges can number thousands after a loss
    /// burst in a large window (a binary search of a `VecDeque` cost ~100 instructions).
    #[inline]
    fn partition_from_back(&self, pred: impl Fn(&(u64, u64)) -> bool) -> usize {
        let mut k = self.ooo.len();
        for _ in 0..BACK_SCAN {
            if k == 0 || pred(&self.ooo[k - 1]) {
                return k;
            }
            k -= 1;
        }
        self.ooo.partition_point(pred)
    }

    #[inline]
    fn sack_blocks(&mut self) -> SackBlocks {
        if !self.sack || self.ooo.is_empty() {
            self.recent.clear();
            return SackBlocks::default();
        }
        self.sack_blocks_from_ranges()
    }

    #[inline(never)]
    fn sack_blocks_from_ranges(&mut self) -> SackBlocks {
        let mut sb = SackBlocks::default();
        let rcv_nxt = self.rcv_nxt;
        self.recent.retain(|&r| r >= rcv_nxt);
        for &r in &self.recent {
            if sb.len() == self.max_blocks {
                break;
            }
            // Ranges are disjoint: a segment inside a block already chosen has its range there.
            if sb.iter(rcv_nxt).any(|(s, e)| s <= r && r < e) {
                continue;
            }
            if let Some((s, e)) = self.range_containing(r) {
                sb.push(rcv_nxt, s, e);
            }
        }
        sb
    }

    /// Flow control: the ACK just pushed advertises the buffer's free space.
    #[cold]
    #[inline(never)]
    fn stamp_window(&mut self, out: &mut [Packet]) {
        let w = self.window.as_mut().expect("flow control");
        let field = w.advertise(self.rcv_nxt);
        out.last_mut().expect("the ACK").set_window_field(field);
    }

    #[inline]
    fn send_ack(&mut self, out: &mut Vec<Packet>) {
        let sack = self.sack_blocks();
        out.push(Packet {
            flow: self.flow,
            dst: self.peer,
            size: self.header_bytes,
            kind: PacketKind::Ack,
            seq: self.rcv_nxt,
            len: 0,
            ts: self.ts_recent,
            sack,
            flags: Flags::new(if self.ece_pending { Flags::ECE } else { 0 }),
            epoch: self.epoch,
        });
        if self.window.is_some() {
            self.stamp_window(out);
        }
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.delack_deadline = None;
        self.acks_sent += 1;
    }
}
