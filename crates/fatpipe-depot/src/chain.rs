//! The chain URL: how the rest of a relay chain travels inside an ordinary HTTP GET.
//!
//! The seed paper (Augusto et al. 2008, §4; seed note 002 §2.3) says only that "additional
//! information is passed in the redirect commands, and so in the client's GET". We use its
//! reading (A), a source-routed URL: the origin redirects the client to the first depot with the
//! whole chain in the path, and each depot forwards the same URL, re-signed for the next hop:
//!
//! ```text
//! /.fp1/{index}/{expires}/{hop0},{hop1},...,{origin}/{tag}{target}
//! ```
//!
//! * `.fp1` — version 1 of this format (a path no origin file normally has);
//! * `index` — position, in the hop list, of the node this request is addressed to (0 = the
//!   depot the client talks to; the last position is the origin);
//! * `expires` — Unix time in seconds after which no node accepts the URL;
//! * hops — `IPv4:port` or `[IPv6]:port` (brackets may be percent-encoded), client side first,
//!   origin last; literal addresses only, so a depot never resolves a name (no DNS rebinding);
//! * `tag` — base64url (no padding) HMAC-SHA256 of the canonical message below, keyed with the
//!   secret shared by the origin and the depots;
//! * `target` — the origin's path and query, verbatim, starting with `/`.
//!
//! The tag covers `fatpipe-depot/1\n{index}\n{expires}\n{hops}\n{target}` with the hops in
//! canonical form (Rust's `SocketAddr` display). Because the index is signed, a node can only be
//! asked to act at the position the signer gave it; each depot signs `index + 1` for the next
//! hop (it holds the key), so a chain cannot loop longer than its hop list.

use crate::sign::{Key, TAG_BYTES};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use std::net::SocketAddr;

/// The first path segment of every chain URL.
pub const PREFIX: &str = "/.fp1/";

/// At most this many hops (depots plus the origin): 7 depots. The paper's experiments use up to
/// 2 and its Figure 6 shows 3; more only lengthens URLs.
pub const MAX_HOPS: usize = 8;

/// Longest target (path and query) accepted, in bytes: the common 8 KiB request-line budget of
/// servers, minus room for the chain itself.
pub const MAX_TARGET_BYTES: usize = 4096;

/// A chain: the hops (depots then origin) and what to fetch from the origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub hops: Vec<SocketAddr>,
    pub expires: u64,
    pub target: String,
}

/// A chain URL as received, with the position of its receiver; not yet checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub chain: Chain,
    pub index: usize,
    tag: Vec<u8>,
}

/// Why a request is refused. Every variant is answered 403 and opens no upstream connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reject {
    /// No `/.fp1/` prefix: not a chain request at all.
    Unsigned,
    /// The URL does not follow the format (the string says which part).
    Malformed(&'static str),
    /// The tag does not match: tampered, or signed with another key.
    BadSignature,
    Expired,
    /// `expires` lies further ahead than this node's `max_validity_s`.
    TooLongLived,
    /// The index addresses another role (a depot given the origin's position, or the reverse).
    WrongPosition,
    /// The next hop is signed but this node's allow-list does not permit it.
    NotAllowed(SocketAddr),
}

impl std::fmt::Display for Reject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reject::Unsigned => write!(f, "unsigned: not a chain URL ({PREFIX}...)"),
            Reject::Malformed(what) => write!(f, "malformed chain URL: {what}"),
            Reject::BadSignature => write!(f, "bad signature"),
            Reject::Expired => write!(f, "expired"),
            Reject::TooLongLived => write!(f, "expiry beyond this node's max_validity_s"),
            Reject::WrongPosition => write!(f, "index addresses another role"),
            Reject::NotAllowed(a) => write!(f, "next hop {a} not in the allow-list"),
        }
    }
}

impl Reject {
    /// A short label for metrics and logs.
    pub fn label(&self) -> &'static str {
        match self {
            Reject::Unsigned => "unsigned",
            Reject::Malformed(_) => "malformed",
            Reject::BadSignature => "bad_signature",
            Reject::Expired => "expired",
            Reject::TooLongLived => "too_long_lived",
            Reject::WrongPosition => "wrong_position",
            Reject::NotAllowed(_) => "not_allowed",
        }
    }
}

fn message(index: usize, expires: u64, hops: &[SocketAddr], target: &str) -> Vec<u8> {
    let hops: Vec<String> = hops.iter().map(|h| h.to_string()).collect();
    format!(
        "fatpipe-depot/1\n{index}\n{expires}\n{}\n{target}",
        hops.join(",")
    )
    .into_bytes()
}

/// Hops as they appear in a URL: IPv6 brackets percent-encoded (RFC 3986 keeps `[` and `]` out of
/// paths; curl and browsers would otherwise re-encode them or refuse).
fn render_hops(hops: &[SocketAddr]) -> String {
    hops.iter()
        .map(|h| h.to_string().replace('[', "%5B").replace(']', "%5D"))
        .collect::<Vec<_>>()
        .join(",")
}

impl Chain {
    /// Checks a chain before signing it (the origin's configuration goes through here).
    pub fn new(hops: Vec<SocketAddr>, expires: u64, target: String) -> Result<Chain, String> {
        if hops.len() < 2 {
            return Err("a chain needs at least one depot and the origin".into());
        }
        if hops.len() > MAX_HOPS {
            return Err(format!(
                "a chain has at most {MAX_HOPS} hops (depots plus origin)"
            ));
        }
        check_hops(&hops).map_err(|e| e.to_string())?;
        check_target(&target).map_err(|e| e.to_string())?;
        Ok(Chain {
            hops,
            expires,
            target,
        })
    }

    /// The signed path and query addressed to hop `index`.
    pub fn path(&self, key: &Key, index: usize) -> String {
        let tag = key.tag(&message(index, self.expires, &self.hops, &self.target));
        format!(
            "{PREFIX}{index}/{}/{}/{}{}",
            self.expires,
            render_hops(&self.hops),
            URL_SAFE_NO_PAD.encode(tag),
            self.target
        )
    }

    /// The full URL of hop `index` (what a redirect's `Location` carries).
    pub fn url(&self, key: &Key, index: usize) -> String {
        format!("http://{}{}", self.hops[index], self.path(key, index))
    }
}

fn check_hops(hops: &[SocketAddr]) -> Result<(), Reject> {
    for (i, h) in hops.iter().enumerate() {
        if h.port() == 0 {
            return Err(Reject::Malformed("hop with port 0"));
        }
        let ip = h.ip();
        if ip.is_unspecified() || ip.is_multicast() {
            return Err(Reject::Malformed(
                "hop with an unspecified or multicast address",
            ));
        }
        if hops[..i].contains(h) {
            return Err(Reject::Malformed("the same hop twice"));
        }
    }
    Ok(())
}

fn check_target(target: &str) -> Result<(), Reject> {
    if !target.starts_with('/') {
        return Err(Reject::Malformed("target must start with /"));
    }
    if target.len() > MAX_TARGET_BYTES {
        return Err(Reject::Malformed("target too long"));
    }
    if target.bytes().any(|b| b <= b' ' || b == 0x7f || b >= 0x80) {
        return Err(Reject::Malformed(
            "target has spaces, control or non-ASCII bytes",
        ));
    }
    Ok(())
}

fn parse_hop(s: &str) -> Result<SocketAddr, Reject> {
    let s = s
        .replace("%5B", "[")
        .replace("%5b", "[")
        .replace("%5D", "]")
        .replace("%5d", "]");
    s.parse()
        .map_err(|_| Reject::Malformed("hop is not IP:port or [IPv6]:port"))
}

fn parse_decimal(s: &str, what: &'static str) -> Result<u64, Reject> {
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Reject::Malformed(what));
    }
    s.parse().map_err(|_| Reject::Malformed(what))
}

/// Splits a request's path and query into a chain. Pure syntax: no key, no clock.
pub fn parse(path_and_query: &str) -> Result<Parsed, Reject> {
    let rest = path_and_query
        .strip_prefix(PREFIX)
        .ok_or(Reject::Unsigned)?;
    let mut parts = rest.splitn(4, '/');
    let index = parse_decimal(parts.next().unwrap_or(""), "index is not a decimal number")?;
    let expires = parse_decimal(
        parts.next().ok_or(Reject::Malformed("no expiry"))?,
        "expiry is not a decimal number",
    )?;
    let hops_s = parts.next().ok_or(Reject::Malformed("no hops"))?;
    let tail = parts.next().ok_or(Reject::Malformed("no signature"))?;
    if hops_s.split(',').count() > MAX_HOPS {
        return Err(Reject::Malformed("too many hops"));
    }
    let hops = hops_s
        .split(',')
        .map(parse_hop)
        .collect::<Result<Vec<_>, _>>()?;
    if hops.len() < 2 {
        return Err(Reject::Malformed("fewer than two hops"));
    }
    check_hops(&hops)?;
    let (tag_s, target) = match tail.find('/') {
        Some(i) => tail.split_at(i),
        None => return Err(Reject::Malformed("no target after the signature")),
    };
    let tag = URL_SAFE_NO_PAD
        .decode(tag_s)
        .map_err(|_| Reject::Malformed("signature is not base64url"))?;
    if tag.len() != TAG_BYTES {
        return Err(Reject::Malformed("signature has the wrong length"));
    }
    check_target(target)?;
    let index = usize::try_from(index).map_err(|_| Reject::Malformed("index too large"))?;
    if index >= hops.len() {
        return Err(Reject::Malformed("index beyond the hop list"));
    }
    Ok(Parsed {
        chain: Chain {
            hops,
            expires,
            target: target.to_string(),
        },
        index,
        tag,
    })
}

/// The role a node checks a chain URL for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A depot: the index names a depot (not the last hop); it will relay to `hops[index + 1]`.
    Depot,
    /// The origin: the index names the last hop.
    Origin,
}

impl Parsed {
    /// Signature, expiry and position. `now` and `max_validity_s` in seconds.
    pub fn verify(
        &self,
        key: &Key,
        now: u64,
        max_validity_s: u64,
        role: Role,
    ) -> Result<(), Reject> {
        let c = &self.chain;
        if !key.verify(
            &message(self.index, c.expires, &c.hops, &c.target),
            &self.tag,
        ) {
            return Err(Reject::BadSignature);
        }
        if c.expires < now {
            return Err(Reject::Expired);
        }
        if c.expires > now.saturating_add(max_validity_s) {
            return Err(Reject::TooLongLived);
        }
        let last = c.hops.len() - 1;
        match role {
            Role::Depot if self.index < last => Ok(()),
            Role::Origin if self.index == last => Ok(()),
            _ => Err(Reject::WrongPosition),
        }
    }

    /// The hop this request is to be relayed to (depot role).
    pub fn next_hop(&self) -> SocketAddr {
        self.chain.hops[self.index + 1]
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> Key {
        Key::from_bytes(b"0123456789abcdef0123456789abcdef").unwrap()
    }

    fn chain() -> Chain {
        Chain::new(
            vec![
                "127.0.0.1:9001".parse().unwrap(),
                "[::1]:9002".parse().unwrap(),
                "127.0.0.1:8080".parse().unwrap(),
            ],
            2_000_000_000,
            "/files/big.bin?v=1".into(),
        )
        .unwrap()
    }

    #[test]
    fn round_trip_each_index() {
        let c = chain();
        for i in 0..3 {
            let p = parse(&c.path(&key(), i)).unwrap();
            assert_eq!(p.chain, c);
            assert_eq!(p.index, i);
        }
    }

    #[test]
    fn documented_layout() {
        let p = chain().path(&key(), 1);
        let expect = "/.fp1/1/2000000000/127.0.0.1:9001,%5B::1%5D:9002,127.0.0.1:8080/";
        assert!(p.starts_with(expect), "{p}");
        assert!(p.ends_with("/files/big.bin?v=1"));
        assert_eq!(p.len(), expect.len() + 43 + "/files/big.bin?v=1".len());
    }

    #[test]
    fn verify_roles_and_clock() {
        let c = chain();
        let now = 1_999_999_000;
        let d0 = parse(&c.path(&key(), 0)).unwrap();
        assert_eq!(d0.verify(&key(), now, 3600, Role::Depot), Ok(()));
        assert_eq!(d0.next_hop(), "[::1]:9002".parse().unwrap());
        assert_eq!(
            d0.verify(&key(), now, 3600, Role::Origin),
            Err(Reject::WrongPosition)
        );
        let o = parse(&c.path(&key(), 2)).unwrap();
        assert_eq!(o.verify(&key(), now, 3600, Role::Origin), Ok(()));
        assert_eq!(
            o.verify(&key(), now, 3600, Role::Depot),
            Err(Reject::WrongPosition)
        );
        // Expiry: valid through its second, refused after.
        assert_eq!(d0.verify(&key(), 2_000_000_000, 3600, Role::Depot), Ok(()));
        assert_eq!(
            d0.verify(&key(), 2_000_000_001, 3600, Role::Depot),
            Err(Reject::Expired)
        );
        // Further ahead than this node accepts.
        assert_eq!(
            d0.verify(&key(), now, 999, Role::Depot),
            Err(Reject::TooLongLived)
        );
    }

    #[test]
    fn tampering_any_field_breaks_the_signature() {
        let c = chain();
        let good = c.path(&key(), 0);
        let tampered = [
            good.replacen("/.fp1/0/", "/.fp1/1/", 1),
            good.replacen("2000000000", "2000000001", 1),
            good.replacen("127.0.0.1:8080", "127.0.0.1:8081", 1),
            good.replacen("9001", "9003", 1),
            good.replacen("big.bin", "big.bim", 1),
            good.replacen("?v=1", "?v=2", 1),
            format!("{good}&x"),
        ];
        for t in tampered {
            let p = parse(&t).unwrap();
            assert_eq!(
                p.verify(&key(), 1_999_999_000, 3600, Role::Depot),
                Err(Reject::BadSignature),
                "{t}"
            );
        }
        let other = Key::from_bytes(&[1u8; 32]).unwrap();
        let p = parse(&good).unwrap();
        assert_eq!(
            p.verify(&other, 1_999_999_000, 3600, Role::Depot),
            Err(Reject::BadSignature)
        );
    }

    #[test]
    fn malformed_urls() {
        let good = chain().path(&key(), 0);
        assert_eq!(parse("/files/big.bin"), Err(Reject::Unsigned));
        assert_eq!(parse("/.fp2/0/1/a:1,b:2/x/y"), Err(Reject::Unsigned));
        for bad in [
            "/.fp1/",
            "/.fp1/x/1/127.0.0.1:1,127.0.0.1:2/AAAA/t",
            "/.fp1/0/-1/127.0.0.1:1,127.0.0.1:2/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1,localhost:2/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1,127.0.0.1:0/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1,127.0.0.1:1/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1,0.0.0.0:1/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1,127.0.0.1:2/AAAA/t",
            "/.fp1/0/1/127.0.0.1:1,127.0.0.1:2/AAAA",
            "/.fp1/5/1/127.0.0.1:1,127.0.0.1:2/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/t",
            "/.fp1/99999999999999999999999/1/127.0.0.1:1,127.0.0.1:2/A/t",
        ] {
            assert!(
                matches!(parse(bad), Err(Reject::Malformed(_))),
                "{bad}: {:?}",
                parse(bad)
            );
        }
        // Too many hops.
        let hops: Vec<String> = (1..=9).map(|p| format!("127.0.0.1:{p}")).collect();
        let many = format!("/.fp1/0/1/{}/{}/t", hops.join(","), "A".repeat(43));
        assert_eq!(parse(&many), Err(Reject::Malformed("too many hops")));
        // A target with a space or non-ASCII byte.
        let sp = good.replacen("big.bin", "big bin", 1);
        assert!(matches!(parse(&sp), Err(Reject::Malformed(_))));
    }

    #[test]
    fn chain_new_checks_its_input() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(Chain::new(vec![a], 1, "/x".into()).is_err());
        assert!(Chain::new(vec![a, a], 1, "/x".into()).is_err());
        let b: SocketAddr = "127.0.0.1:2".parse().unwrap();
        assert!(Chain::new(vec![a, b], 1, "x".into()).is_err());
        assert!(Chain::new(vec![a, b], 1, "/x".into()).is_ok());
    }
}
