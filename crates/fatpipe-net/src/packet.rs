//! The simulated packet. It is a plain value (no heap data) so queues and links move it without
//! allocating.

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// Transport payload (a TCP segment).
    Data,
    /// A pure acknowledgement.
    Ack,
    /// A UDP datagram (CBR and other datagram sources): no acknowledgement, no retransmission.
    Datagram,
    /// A DCCP packet from the sender's side (Request or Data), see fatpipe-transport's `dccp`.
    Dccp,
    /// A DCCP packet from the receiver's side (Response, Ack with an Ack Vector, CCID 3
    /// feedback).
    DccpAck,
}

impl PacketKind {
    /// Whether the packet belongs to an application's datagram transport (UDP or DCCP), whose
    /// `flow` is the plan flow's index, rather than to a TCP connection.
    #[inline(always)]
    pub fn is_datagram_transport(self) -> bool {
        matches!(
            self,
            PacketKind::Datagram | PacketKind::Dccp | PacketKind::DccpAck
        )
    }
}

/// Up to 3 SACK blocks `[start, end)` (RFC 2018 allows 3 when timestamps are used, as here).
///
/// Stored as 32-bit offsets from the ACK's cumulative acknowledgement, which keeps a packet in one
/// cache line; blocks always lie within the receive window above it, and windows are limited to
/// 4 GiB (`u32::MAX` bytes) by the scenario layer.
///
/// The two bytes of padding after the block count carry the ACK's 16-bit window field (RFC 9293
/// §3.1 SEG.WND, scaled by the connection's RFC 7323 shift), so a packet stays one cache line; see
/// [`Packet::window_field`]. Only receivers with a finite, application-drained buffer fill it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    n: u8,
    wnd: u16,
    rel: [(u32, u32); 3],
}

impl SackBlocks {
    pub const MAX: usize = 3;

    pub fn len(&self) -> usize {
        self.n as usize
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// Append block `[start, end)` to an ACK acknowledging `ack`; false if full or out of range.
    pub fn push(&mut self, ack: u64, start: u64, end: u64) -> bool {
        if self.len() == Self::MAX || start < ack || end - ack > u32::MAX as u64 {
            return false;
        }
        self.rel[self.len()] = ((start - ack) as u32, (end - ack) as u32);
        self.n += 1;
        true
    }
    /// The block area as three raw 64-bit words: DCCP uses it for its options (an Ack Vector
    /// bitmap, TFRC feedback values), which have no SACK blocks to carry.
    pub fn from_words(w: [u64; 3]) -> Self {
        let split = |x: u64| (x as u32, (x >> 32) as u32);
        SackBlocks {
            n: 0,
            wnd: 0,
            rel: [split(w[0]), split(w[1]), split(w[2])],
        }
    }
    /// The words stored by [`SackBlocks::from_words`].
    pub fn words(&self) -> [u64; 3] {
        let join = |(lo, hi): (u32, u32)| lo as u64 | (hi as u64) << 32;
        [join(self.rel[0]), join(self.rel[1]), join(self.rel[2])]
    }
    /// Whether block `[start, end)` is already present.
    pub fn contains(&self, ack: u64, start: u64, end: u64) -> bool {
        self.iter(ack).any(|b| b == (start, end))
    }
    /// The blocks in absolute sequence numbers, first (most recent) first.
    pub fn iter(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.rel[..self.len()]
            .iter()
            .map(move |&(s, e)| (ack + s as u64, ack + e as u64))
    }
}

/// Per-packet bits: whether data is a retransmission (statistics only; receivers ignore it) and
/// the ECN codepoints and TCP flags of RFC 3168.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    /// A retransmitted data segment.
    pub const RETRANSMIT: u8 = 1;
    /// ECN-Capable Transport (IP header ECT(0), RFC 3168 §5): an AQM may mark instead of drop.
    pub const ECT: u8 = 2;
    /// Congestion Experienced (IP header CE, RFC 3168 §5), set by an AQM on an ECT packet.
    pub const CE: u8 = 4;
    /// TCP ECN-Echo on an ACK (RFC 3168 §6.1.3).
    pub const ECE: u8 = 8;
    /// TCP Congestion Window Reduced on data (RFC 3168 §6.1.2).
    pub const CWR: u8 = 16;

    pub const fn new(bits: u8) -> Self {
        Flags(bits)
    }
    #[inline(always)]
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
    #[inline(always)]
    pub fn set(&mut self, bit: u8) {
        self.0 |= bit;
    }
    #[inline(always)]
    pub fn retransmit(self) -> bool {
        self.has(Self::RETRANSMIT)
    }
    /// ECT and not yet marked: an AQM may set CE on it.
    #[inline(always)]
    pub fn markable(self) -> bool {
        self.has(Self::ECT)
    }
}

/// A packet on the wire (64 bytes: one cache line).
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Index of the flow (transport connection) it belongs to.
    pub flow: u32,
    /// Destination node (routing key).
    pub dst: u32,
    /// Data: sequence number of the first payload byte. Ack: cumulative ack (next byte expected).
    pub seq: u64,
    /// RFC 7323 timestamp, simulated ns: TSval on data segments, TSecr on ACKs (a pure ACK carries
    /// no TSval the sender would use, and data carries no TSecr here).
    pub ts: u64,
    /// Size on the wire in bytes (payload + headers): what links serialise and queues count.
    pub size: u32,
    /// Payload length in bytes (0 for a pure ACK).
    pub len: u32,
    /// SACK blocks carried by an ACK.
    pub sack: SackBlocks,
    pub kind: PacketKind,
    /// Retransmission and ECN bits (one byte, the size of the `bool` it replaced).
    pub flags: Flags,
    /// Incarnation of the connection slot `flow` (web objects reuse slots, see fatpipe-sim's
    /// apps): a packet of an earlier connection on the same slot is recognised and discarded.
    /// Fits the packet's padding, so a packet stays 64 bytes.
    pub epoch: u16,
}

impl Packet {
    /// An ACK's window field (RFC 9293 SEG.WND: the receive window above `seq`, right-shifted by
    /// the receiver's RFC 7323 window scale). Meaningful only on connections whose receiver
    /// advertises its buffer (flow control); 0 otherwise.
    #[inline]
    pub fn window_field(&self) -> u16 {
        self.sack.wnd
    }

    /// Set the window field (a receiver with flow control, on each ACK it sends).
    #[inline]
    pub fn set_window_field(&mut self, wnd: u16) {
        self.sack.wnd = wnd;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_fits_one_cache_line() {
        assert_eq!(
            std::mem::size_of::<super::Packet>(),
            64,
            "a packet should fit one cache line"
        );
    }
}

#[cfg(test)]
mod sack_tests {
    use super::SackBlocks;

    #[test]
    fn blocks_round_trip_relative_to_the_ack() {
        let mut b = SackBlocks::default();
        assert!(b.push(1_000_000, 1_002_920, 1_004_380));
        assert!(b.push(1_000_000, 1_010_000, 1_020_000));
        assert!(!b.push(1_000_000, 999_000, 1_000_500), "below the ACK");
        assert!(b.push(1_000_000, 1_030_000, 1_040_000));
        assert!(!b.push(1_000_000, 1_050_000, 1_060_000), "at most 3 blocks");
        let v: Vec<_> = b.iter(1_000_000).collect();
        assert_eq!(
            v,
            vec![
                (1_002_920, 1_004_380),
                (1_010_000, 1_020_000),
                (1_030_000, 1_040_000)
            ]
        );
        assert!(b.contains(1_000_000, 1_010_000, 1_020_000));
    }
}
