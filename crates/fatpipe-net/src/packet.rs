//! The simulated packet. It is a plain value (no heap data) so queues and links move it without
//! allocating.

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// Transport payload (a TCP segment).
    Data,
    /// A pure acknowledgement.
    Ack,
}

/// Up to 4 SACK blocks `[start, end)` in bytes (RFC 2018 allows 4 without timestamps, 3 with).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    pub n: u8,
    pub blocks: [(u64, u64); 4],
}

impl SackBlocks {
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.n as usize]
    }
}

/// A packet on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Index of the flow (transport connection) it belongs to.
    pub flow: u32,
    /// Destination node (routing key).
    pub dst: u32,
    /// Size on the wire in bytes (payload + headers): what links serialise and queues count.
    pub size: u32,
    pub kind: PacketKind,
    /// Data: sequence number of the first payload byte. Ack: cumulative ack (next byte expected).
    pub seq: u64,
    /// Payload length in bytes (0 for a pure ACK).
    pub len: u32,
    /// Timestamp value (RFC 7323 TSval), simulated ns at send time.
    pub ts_val: u64,
    /// Timestamp echo reply (RFC 7323 TSecr).
    pub ts_ecr: u64,
    /// SACK blocks carried by an ACK.
    pub sack: SackBlocks,
    /// Set on retransmitted data segments (for statistics only; receivers ignore it).
    pub retransmit: bool,
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_size() {
        eprintln!("PACKET SIZE {}", std::mem::size_of::<super::Packet>());
    }
}
