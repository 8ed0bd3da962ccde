//! How DCCP packets are laid out in the simulator's fixed-size [`Packet`].
//!
//! A simulated packet has no room for real options, so each DCCP field the congestion controls
//! read is given a slot (the SACK-block area is used as three raw words, see
//! `SackBlocks::from_words`):
//!
//! | field                         | sender → receiver (`Dccp`)        | receiver → sender (`DccpAck`)          |
//! |-------------------------------|-----------------------------------|----------------------------------------|
//! | `seq`                         | sequence number of this packet    | greatest sequence number received (GSR) |
//! | `ts`                          | Timestamp (send time, ns)         | Timestamp Echo (of the GSR packet)      |
//! | `len`                         | payload bytes                     | Elapsed Time since GSR arrived, µs      |
//! | word 0 bits 0–7               | packet type                       | packet type                             |
//! | word 0 bits 8–63              | CCVal (8–11), Ack Ratio (16–47)   | the ack's own sequence number           |
//! | words 1–2                     | CCID 3: sender's RTT estimate, ns | CCID 2: Ack Vector bitmap; CCID 3: X_recv and p |
//!
//! Acknowledgement packets have their own sequence space (RFC 4340 §7.1: every packet, pure
//! acknowledgements included, consumes a sequence number), which is how CCID 2's sender notices
//! lost acknowledgements (RFC 4341 §6.1.2).
//!
//! **Ack Vector.** RFC 4340 §11.4 run-length encodes the receipt state of every packet back to
//! the last acknowledged acknowledgement. Here it is a bitmap of the 128 packets below GSR
//! (bit i set = GSR − 1 − i arrived), which covers every window a CCID 2 flow of this study can
//! have in flight at a time and is what the sender's loss rules need; a packet older than that
//! which no earlier ACK reported counts as not received (ns-2's module caps the vector too,
//! `ackv_size_lim_`).
//!
//! **Wire sizes** default to what ns-2.35's DCCP agents put on the wire (measured from its trace
//! with 160-byte application packets): data 160 + 32 bytes (IPv4 20 + DCCP generic header with
//! short sequence numbers 12), CCID 2 acknowledgements 40 bytes, CCID 3 feedback 52 bytes,
//! Request/Response 88 bytes.

use fatpipe_net::{Flags, Packet, PacketKind, SackBlocks};

/// RFC 4340 §5.1 packet types used here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DccpType {
    Request = 0,
    Response = 1,
    Data = 2,
    Ack = 3,
}

impl DccpType {
    fn from_u8(x: u8) -> DccpType {
        match x {
            0 => DccpType::Request,
            1 => DccpType::Response,
            2 => DccpType::Data,
            _ => DccpType::Ack,
        }
    }
}

/// Fields of a packet from the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Forward {
    pub kind: DccpType,
    pub ccval: u8,
    pub ack_ratio: u32,
    /// CCID 3: the sender's RTT estimate in ns (RFC 5348 §3.2.1), 0 if none.
    pub rtt_ns: u64,
}

/// Fields of a packet from the receiver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backward {
    pub kind: DccpType,
    /// The acknowledgement's own sequence number.
    pub ack_seq: u64,
    /// CCID 2: Ack Vector bitmap below GSR. CCID 3: X_recv (bytes/s) and p as f64 bits.
    pub payload: [u64; 2],
}

pub fn forward(p: &Packet) -> Forward {
    let [w0, w1, _] = p.sack.words();
    Forward {
        kind: DccpType::from_u8(w0 as u8),
        ccval: ((w0 >> 8) & 0xf) as u8,
        ack_ratio: (w0 >> 16) as u32,
        rtt_ns: w1,
    }
}

pub fn backward(p: &Packet) -> Backward {
    let [w0, w1, w2] = p.sack.words();
    Backward {
        kind: DccpType::from_u8(w0 as u8),
        ack_seq: w0 >> 8,
        payload: [w1, w2],
    }
}

/// Build a sender-side packet.
#[allow(clippy::too_many_arguments)]
pub fn forward_packet(
    flow: u32,
    dst: u32,
    seq: u64,
    ts: u64,
    payload: u32,
    wire: u32,
    f: Forward,
) -> Packet {
    let w0 = f.kind as u64 | ((f.ccval as u64 & 0xf) << 8) | ((f.ack_ratio as u64) << 16);
    Packet {
        flow,
        dst,
        seq,
        ts,
        size: wire,
        len: payload,
        sack: SackBlocks::from_words([w0, f.rtt_ns, 0]),
        kind: PacketKind::Dccp,
        flags: Flags::default(),
        epoch: 0,
    }
}

/// Build a receiver-side packet: `gsr` and `echo` as in the table above, `elapsed_us` the
/// Elapsed Time.
#[allow(clippy::too_many_arguments)]
pub fn backward_packet(
    flow: u32,
    dst: u32,
    gsr: u64,
    echo: u64,
    elapsed_us: u32,
    wire: u32,
    b: Backward,
) -> Packet {
    let w0 = b.kind as u64 | (b.ack_seq << 8);
    Packet {
        flow,
        dst,
        seq: gsr,
        ts: echo,
        size: wire,
        len: elapsed_us,
        sack: SackBlocks::from_words([w0, b.payload[0], b.payload[1]]),
        kind: PacketKind::DccpAck,
        flags: Flags::default(),
        epoch: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let f = Forward {
            kind: DccpType::Data,
            ccval: 13,
            ack_ratio: 7,
            rtt_ns: 123_456_789,
        };
        let p = forward_packet(3, 9, 42, 1000, 160, 192, f);
        assert_eq!(forward(&p), f);
        assert_eq!(
            (p.seq, p.len, p.size, p.kind),
            (42, 160, 192, PacketKind::Dccp)
        );
        let b = Backward {
            kind: DccpType::Ack,
            ack_seq: (1 << 50) + 5,
            payload: [u64::MAX, 0.25f64.to_bits()],
        };
        let q = backward_packet(3, 1, 42, 1000, 77, 40, b);
        assert_eq!(backward(&q), b);
        assert_eq!(
            (q.seq, q.ts, q.len, q.kind),
            (42, 1000, 77, PacketKind::DccpAck)
        );
    }
}
