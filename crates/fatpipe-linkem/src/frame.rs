//! What the link model needs from a real Ethernet frame: its flow (for FQ-CoDel's hash), its ECN
//! codepoint, and the two rewrites the emulator makes — CE marking (with the IPv4 header checksum
//! updated incrementally, RFC 1624) and completing a TCP/UDP checksum the sender left to
//! offload (`CHECKSUM_PARTIAL` frames seen by a packet socket carry only the pseudo-header sum).
//!
//! Pure functions over byte slices; anything that is not IPv4/IPv6 (ARP, ...) gets flow 0 and
//! no ECN.

/// Ethernet header length (no VLAN tag: the kernel strips tags into metadata on receive).
pub const ETH_HLEN: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86DD;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// Network-layer facts of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameInfo {
    /// Hash of (addresses, protocol, ports): equal for every frame of one transport flow and
    /// direction.
    pub flow: u32,
    /// ECN field (RFC 3168: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE); 0 for non-IP frames.
    pub ecn: u8,
    /// A UDP datagram (the simulator's `Datagram` kind).
    pub udp: bool,
}

fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// FNV-1a over the flow key, then a final avalanche (SplitMix64's), folded to 32 bits.
fn hash_key(parts: &[&[u8]]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^= h >> 31;
    (h ^ (h >> 32)) as u32
}

/// Where the IP header and the transport header start, and the transport protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct L3 {
    v6: bool,
    l4: usize,
    proto: u8,
    /// A non-first IPv4 fragment (no ports).
    fragment: bool,
}

fn l3(f: &[u8]) -> Option<L3> {
    if f.len() < ETH_HLEN {
        return None;
    }
    let n = ETH_HLEN;
    match be16(f, 12) {
        ETHERTYPE_IPV4 if f.len() >= n + 20 && f[n] >> 4 == 4 => {
            let ihl = (f[n] & 0x0f) as usize * 4;
            if ihl < 20 || f.len() < n + ihl {
                return None;
            }
            let frag = be16(f, n + 6) & 0x1fff != 0;
            Some(L3 {
                v6: false,
                l4: n + ihl,
                proto: f[n + 9],
                fragment: frag,
            })
        }
        ETHERTYPE_IPV6 if f.len() >= n + 40 && f[n] >> 4 == 6 => Some(L3 {
            v6: true,
            l4: n + 40,
            proto: f[n + 6],
            fragment: false,
        }),
        _ => None,
    }
}

/// The flow, ECN codepoint and transport of a frame.
pub fn parse(f: &[u8]) -> FrameInfo {
    let Some(l) = l3(f) else {
        return FrameInfo::default();
    };
    let n = ETH_HLEN;
    let (ecn, addrs) = if l.v6 {
        ((f[n + 1] >> 4) & 3, &f[n + 8..n + 40])
    } else {
        (f[n + 1] & 3, &f[n + 12..n + 20])
    };
    let ports: &[u8] =
        if (l.proto == IPPROTO_TCP || l.proto == IPPROTO_UDP) && !l.fragment && f.len() >= l.l4 + 4
        {
            &f[l.l4..l.l4 + 4]
        } else {
            &[]
        };
    FrameInfo {
        flow: hash_key(&[addrs, &[l.proto], ports]),
        ecn,
        udp: l.proto == IPPROTO_UDP,
    }
}

/// One's-complement sum of 16-bit big-endian words (an odd tail byte padded with zero).
fn sum16(mut acc: u32, b: &[u8]) -> u32 {
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        acc += u16::from_be_bytes([c[0], c[1]]) as u32;
    }
    if let [x] = chunks.remainder() {
        acc += (*x as u32) << 8;
    }
    acc
}

fn fold(mut acc: u32) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// Set the ECN field of an IP frame to CE (RFC 3168 §5). Returns whether the frame changed. The
/// IPv4 header checksum is updated incrementally (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')).
pub fn set_ce(f: &mut [u8]) -> bool {
    let Some(l) = l3(f) else { return false };
    let n = ETH_HLEN;
    if l.v6 {
        if (f[n + 1] >> 4) & 3 == 3 {
            return false;
        }
        f[n + 1] |= 0x30;
        return true;
    }
    if f[n + 1] & 3 == 3 {
        return false;
    }
    let old = be16(f, n);
    f[n + 1] |= 3;
    let new = be16(f, n);
    let hc = be16(f, n + 10);
    let sum = (!hc as u32) + (!old as u32 & 0xffff) + new as u32;
    let hc2 = !fold(sum);
    f[n + 10..n + 12].copy_from_slice(&hc2.to_be_bytes());
    true
}

/// The pseudo-header address range, transport start and length, protocol and checksum offset
/// of a TCP or UDP frame whose whole segment is present.
fn l4_span(f: &[u8]) -> Option<(std::ops::Range<usize>, usize, usize, u8, usize)> {
    let l = l3(f)?;
    let n = ETH_HLEN;
    let (addrs, l4_len) = if l.v6 {
        (n + 8..n + 40, be16(f, n + 4) as usize)
    } else {
        let total = be16(f, n + 2) as usize;
        (n + 12..n + 20, total.checked_sub(l.l4 - n)?)
    };
    let off = match l.proto {
        IPPROTO_TCP => 16,
        IPPROTO_UDP => 6,
        _ => return None,
    };
    if l.fragment || l4_len < off + 2 || f.len() < l.l4 + l4_len {
        return None;
    }
    Some((addrs, l.l4, l4_len, l.proto, off))
}

fn l4_sum(f: &[u8], addrs: std::ops::Range<usize>, l4: usize, len: usize, proto: u8) -> u32 {
    let acc = sum16(0, &f[addrs]) + proto as u32 + len as u32;
    sum16(acc, &f[l4..l4 + len])
}

/// Compute the TCP or UDP checksum of an IP frame from scratch (pseudo-header + segment), for a
/// frame whose sender left the checksum to offload. Returns false (frame unchanged) for anything
/// else (non-IP, other protocols, fragments, truncated frames).
pub fn complete_l4_checksum(f: &mut [u8]) -> bool {
    let Some((addrs, l4, len, proto, off)) = l4_span(f) else {
        return false;
    };
    f[l4 + off] = 0;
    f[l4 + off + 1] = 0;
    let mut c = !fold(l4_sum(f, addrs, l4, len, proto));
    if c == 0 && proto == IPPROTO_UDP {
        c = 0xffff; // RFC 768: a computed zero is sent as all ones
    }
    f[l4 + off..l4 + off + 2].copy_from_slice(&c.to_be_bytes());
    true
}

/// Whether the IPv4 header checksum of a frame verifies (for tests).
pub fn ipv4_header_ok(f: &[u8]) -> bool {
    match l3(f) {
        Some(l) if !l.v6 => fold(sum16(0, &f[ETH_HLEN..l.l4])) == 0xffff,
        _ => false,
    }
}

/// Whether the TCP/UDP checksum of an IP frame verifies (for tests and diagnostics).
pub fn l4_checksum_ok(f: &[u8]) -> bool {
    match l4_span(f) {
        Some((addrs, l4, len, proto, _)) => fold(l4_sum(f, addrs, l4, len, proto)) == 0xffff,
        None => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet + IPv4 + UDP/TCP frame with a correct IP header checksum and L4 checksum.
    pub fn ipv4_frame(proto: u8, tos: u8, sport: u16, dport: u16, payload: usize) -> Vec<u8> {
        let l4h = if proto == IPPROTO_TCP { 20 } else { 8 };
        let total = 20 + l4h + payload;
        let mut f = vec![0u8; ETH_HLEN + total];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let n = ETH_HLEN;
        f[n] = 0x45;
        f[n + 1] = tos;
        f[n + 2..n + 4].copy_from_slice(&(total as u16).to_be_bytes());
        f[n + 8] = 64;
        f[n + 9] = proto;
        f[n + 12..n + 16].copy_from_slice(&[10, 201, 0, 1]);
        f[n + 16..n + 20].copy_from_slice(&[10, 201, 0, 2]);
        let hc = !fold(sum16(0, &f[n..n + 20]));
        f[n + 10..n + 12].copy_from_slice(&hc.to_be_bytes());
        let l4 = n + 20;
        f[l4..l4 + 2].copy_from_slice(&sport.to_be_bytes());
        f[l4 + 2..l4 + 4].copy_from_slice(&dport.to_be_bytes());
        if proto == IPPROTO_TCP {
            f[l4 + 12] = 5 << 4;
        } else {
            f[l4 + 4..l4 + 6].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        }
        for (i, b) in f[l4 + l4h..].iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        assert!(complete_l4_checksum(&mut f));
        f
    }

    fn ipv6_udp(tc: u8) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HLEN + 40 + 8 + 10];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        let n = ETH_HLEN;
        f[n] = 0x60 | (tc >> 4);
        f[n + 1] = tc << 4;
        f[n + 4..n + 6].copy_from_slice(&18u16.to_be_bytes());
        f[n + 6] = IPPROTO_UDP;
        f[n + 8 + 15] = 1;
        f[n + 24 + 15] = 2;
        f[n + 40..n + 42].copy_from_slice(&5000u16.to_be_bytes());
        f[n + 42..n + 44].copy_from_slice(&6000u16.to_be_bytes());
        f[n + 44..n + 46].copy_from_slice(&18u16.to_be_bytes());
        f
    }

    #[test]
    fn flows_are_told_apart_by_ports_and_kept_together_otherwise() {
        let a = parse(&ipv4_frame(IPPROTO_TCP, 0, 40000, 5001, 1000));
        let b = parse(&ipv4_frame(IPPROTO_TCP, 0, 40000, 5001, 10));
        let c = parse(&ipv4_frame(IPPROTO_TCP, 0, 40001, 5001, 1000));
        let d = parse(&ipv4_frame(IPPROTO_UDP, 0, 40000, 5001, 1000));
        assert_eq!(a.flow, b.flow);
        assert_ne!(a.flow, c.flow);
        assert_ne!(a.flow, d.flow);
        assert!(d.udp && !a.udp);
        let arp = {
            let mut f = vec![0u8; 42];
            f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
            f
        };
        assert_eq!(parse(&arp), FrameInfo::default());
        assert_eq!(parse(&[0u8; 5]), FrameInfo::default());
    }

    #[test]
    fn ecn_is_read_and_ce_set_with_a_valid_ipv4_checksum() {
        for tos in [0x00u8, 0x01, 0x02, 0xb8 | 0x02, 0x03] {
            let mut f = ipv4_frame(IPPROTO_TCP, tos, 1, 2, 100);
            assert_eq!(parse(&f).ecn, tos & 3);
            assert!(ipv4_header_ok(&f));
            let changed = set_ce(&mut f);
            assert_eq!(changed, tos & 3 != 3);
            assert_eq!(parse(&f).ecn, 3);
            assert_eq!(f[ETH_HLEN + 1] & 0xfc, tos & 0xfc, "DSCP kept");
            assert!(ipv4_header_ok(&f), "tos {tos:#x}");
            assert!(l4_checksum_ok(&f), "CE does not touch the TCP checksum");
        }
        let mut f = ipv6_udp(0x02);
        assert_eq!(parse(&f).ecn, 2);
        assert!(set_ce(&mut f));
        assert_eq!(parse(&f).ecn, 3);
        assert_eq!(f[ETH_HLEN] & 0x0f, 0, "traffic class high bits kept");
    }

    #[test]
    fn partial_checksums_are_completed() {
        for proto in [IPPROTO_TCP, IPPROTO_UDP] {
            for payload in [0usize, 1, 1000, 1447] {
                let good = ipv4_frame(proto, 0, 33333, 5201, payload);
                assert!(l4_checksum_ok(&good));
                let mut partial = good.clone();
                let off = ETH_HLEN + 20 + if proto == IPPROTO_TCP { 16 } else { 6 };
                partial[off] = 0x12;
                partial[off + 1] = 0x34;
                assert!(!l4_checksum_ok(&partial));
                assert!(complete_l4_checksum(&mut partial));
                assert_eq!(partial, good);
            }
        }
        let mut f = ipv6_udp(0);
        assert!(complete_l4_checksum(&mut f));
        assert!(l4_checksum_ok(&f));
    }
}
