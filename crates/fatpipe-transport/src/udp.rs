//! UDP (RFC 768) as the simulator needs it: a sender that wraps what its application hands it
//! into datagrams, and a receiver that counts what arrives. No acknowledgements, no
//! retransmission, no congestion control: a datagram lost in the network is simply gone.
//!
//! The receiver keeps what datagram applications are judged by (seed 001, VoIP; seed 000's CBR
//! background): bytes and packets delivered, one-way delay (the sender stamps its send time in
//! the packet's `ts`), and the RFC 3550 §6.4.1 interarrival jitter estimate
//! J += (|D(i-1,i)| - J) / 16, where D is the difference of transit times of consecutive
//! datagrams.

use fatpipe_core::SimTime;
use fatpipe_net::{Flags, Packet, PacketKind, SackBlocks};

/// Sends datagrams of a fixed wire size for flow `flow` to node `peer`.
#[derive(Clone, Debug)]
pub struct UdpSender {
    flow: u32,
    peer: u32,
    /// Header bytes per datagram (IPv4 20 + UDP 8 = 28 by default).
    header: u32,
    pub packets_sent: u64,
    pub bytes_sent: u64,
}

impl UdpSender {
    pub fn new(flow: u32, peer: u32, header: u32) -> Self {
        UdpSender {
            flow,
            peer,
            header,
            packets_sent: 0,
            bytes_sent: 0,
        }
    }

    /// Send one datagram of `wire_bytes` on the wire (headers included) at `now`.
    #[inline]
    pub fn send(&mut self, wire_bytes: u32, now: SimTime, out: &mut Vec<Packet>) {
        let len = wire_bytes.saturating_sub(self.header);
        out.push(Packet {
            flow: self.flow,
            dst: self.peer,
            size: wire_bytes,
            kind: PacketKind::Datagram,
            seq: self.packets_sent,
            len,
            ts: now.as_nanos(),
            sack: SackBlocks::default(),
            flags: Flags::default(),
            epoch: 0,
        });
        self.packets_sent += 1;
        self.bytes_sent += wire_bytes as u64;
    }
}

/// A UDP receiver is nothing but its delivery statistics.
pub type UdpReceiver = DatagramStats;

/// Counts the datagrams of one flow that arrive: packets, bytes, one-way delay and RFC 3550
/// jitter (also what DCCP's receiver keeps about the data it delivers).
#[derive(Clone, Debug, Default)]
pub struct DatagramStats {
    pub packets: u64,
    /// Wire bytes received (what a CBR source's rate counts).
    pub bytes: u64,
    /// Payload bytes received.
    pub payload_bytes: u64,
    delay_sum_ns: u128,
    delay_min_ns: u64,
    delay_max_ns: u64,
    /// Previous transit time and the RFC 3550 jitter estimate, both in ns.
    last_transit_ns: Option<i128>,
    jitter_ns: f64,
}

impl DatagramStats {
    #[inline]
    pub fn on_datagram(&mut self, now: SimTime, p: &Packet) {
        let transit = now.as_nanos().saturating_sub(p.ts);
        if let Some(prev) = self.last_transit_ns {
            let d = (transit as i128 - prev).unsigned_abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit_ns = Some(transit as i128);
        if self.packets == 0 || transit < self.delay_min_ns {
            self.delay_min_ns = transit;
        }
        self.delay_max_ns = self.delay_max_ns.max(transit);
        self.delay_sum_ns += transit as u128;
        self.packets += 1;
        self.bytes += p.size as u64;
        self.payload_bytes += p.len as u64;
    }

    /// Mean, minimum and maximum one-way delay in seconds (NaN before the first datagram).
    pub fn delay_s(&self) -> (f64, f64, f64) {
        if self.packets == 0 {
            return (f64::NAN, f64::NAN, f64::NAN);
        }
        (
            self.delay_sum_ns as f64 / self.packets as f64 * 1e-9,
            self.delay_min_ns as f64 * 1e-9,
            self.delay_max_ns as f64 * 1e-9,
        )
    }

    /// RFC 3550 interarrival jitter in seconds.
    pub fn jitter_s(&self) -> f64 {
        self.jitter_ns * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_and_rfc3550_jitter() {
        let mut tx = UdpSender::new(0, 1, 28);
        let mut rx = UdpReceiver::default();
        let mut out = Vec::new();
        // Sent every 10 ms; transit 5 ms, then 7 ms, then 5 ms.
        for (k, transit_ms) in [5u64, 7, 5].iter().enumerate() {
            let sent = SimTime::from_millis(10 * k as u64);
            tx.send(200, sent, &mut out);
            let p = out.pop().unwrap();
            assert_eq!((p.size, p.len, p.kind), (200, 172, PacketKind::Datagram));
            rx.on_datagram(sent + SimTime::from_millis(*transit_ms), &p);
        }
        let (mean, min, max) = rx.delay_s();
        assert!((mean - 17e-3 / 3.0).abs() < 1e-12);
        assert_eq!((min, max), (5e-3, 7e-3));
        // J1 = 2/16 ms; J2 = J1 + (2 - J1)/16 ms (RFC 3550 §6.4.1).
        let j1 = 2e-3 / 16.0;
        let j2 = j1 + (2e-3 - j1) / 16.0;
        assert!((rx.jitter_s() - j2).abs() < 1e-12, "{}", rx.jitter_s());
        assert_eq!((rx.packets, rx.bytes, rx.payload_bytes), (3, 600, 516));
        assert_eq!((tx.packets_sent, tx.bytes_sent), (3, 600));
    }
}
