//! A depot's allow-list: the next hops it may open a connection to, whatever a signed chain says.
//! Signature and allow-list are both required, so a leaked key alone does not turn a depot into
//! an open relay towards arbitrary hosts.
//!
//! Entry forms: `10.0.0.2:8080` (one address and port), `10.0.0.2` (any port), `10.0.0.0/24`
//! (a network, any port), `10.0.0.0/24:8080` (a network and one port), and for IPv6 the same in
//! brackets when a port is given: `[fd00::2]:80`, `fd00::/64`, `[fd00::/64]:80`.

use std::net::{IpAddr, SocketAddr};

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    net: IpAddr,
    prefix: u8,
    port: Option<u16>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList(Vec<Entry>);

fn parse_net(s: &str) -> Result<(IpAddr, u8), String> {
    let (ip_s, prefix_s) = match s.split_once('/') {
        Some((a, p)) => (a, Some(p)),
        None => (s, None),
    };
    let ip: IpAddr = ip_s
        .parse()
        .map_err(|_| format!("{ip_s:?} is not an IP address"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix_s {
        None => max,
        Some(p) => match p.parse::<u8>() {
            Ok(n) if n <= max => n,
            _ => return Err(format!("prefix /{p} is not 0..={max}")),
        },
    };
    if masked(ip, prefix) != ip {
        return Err(format!(
            "{s} has host bits set (did you mean {}/{prefix}?)",
            masked(ip, prefix)
        ));
    }
    Ok((ip, prefix))
}

fn parse_port(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!("port {s:?} is not 1..=65535")),
    }
}

fn masked(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - prefix)
            };
            IpAddr::V4((u32::from(a) & m).into())
        }
        IpAddr::V6(a) => {
            let m = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - prefix)
            };
            IpAddr::V6((u128::from(a) & m).into())
        }
    }
}

fn parse_entry(s: &str) -> Result<Entry, String> {
    let s = s.trim();
    let (net_s, port) = if let Some(rest) = s.strip_prefix('[') {
        let (inner, after) = rest
            .split_once(']')
            .ok_or_else(|| "missing ]".to_string())?;
        let port = match after {
            "" => None,
            p => Some(parse_port(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("unexpected {p:?} after ]"))?,
            )?),
        };
        (inner, port)
    } else if s.matches(':').count() == 1 {
        // IPv4 (or IPv4 network) with a port.
        let (a, p) = s.split_once(':').expect("one colon");
        (a, Some(parse_port(p)?))
    } else {
        (s, None)
    };
    let (net, prefix) = parse_net(net_s)?;
    Ok(Entry { net, prefix, port })
}

impl AllowList {
    /// Parses every entry; an error names the entry and what is wrong with it.
    pub fn parse(entries: &[String], what: &str) -> Result<AllowList, String> {
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                parse_entry(e).map_err(|msg| {
                    format!("{what}[{i}] = {e:?}: {msg} (forms: 10.0.0.2:8080, 10.0.0.2, 10.0.0.0/24, 10.0.0.0/24:8080, [fd00::2]:80, fd00::/64)")
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(AllowList)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// True when some entry permits `addr`. An empty list permits nothing.
    pub fn permits(&self, addr: &SocketAddr) -> bool {
        // Compare IPv4-mapped IPv6 hops as the IPv4 they are, so `::ffff:10.0.0.2` cannot slip
        // past a list written in IPv4.
        let ip = match addr.ip() {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
            v4 => v4,
        };
        self.0.iter().any(|e| {
            e.net.is_ipv4() == ip.is_ipv4()
                && masked(ip, e.prefix) == e.net
                && e.port.map_or(true, |p| p == addr.port())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(v: &[&str]) -> AllowList {
        AllowList::parse(
            &v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "depot.allow",
        )
        .unwrap()
    }

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forms() {
        let l = list(&[
            "10.0.0.2:8080",
            "10.0.1.0/24",
            "192.168.0.0/16:9000",
            "[fd00::2]:80",
            "fd01::/64",
            "127.0.0.1",
        ]);
        assert!(l.permits(&a("10.0.0.2:8080")));
        assert!(!l.permits(&a("10.0.0.2:8081")));
        assert!(!l.permits(&a("10.0.0.3:8080")));
        assert!(l.permits(&a("10.0.1.77:1")));
        assert!(!l.permits(&a("10.0.2.1:1")));
        assert!(l.permits(&a("192.168.5.5:9000")));
        assert!(!l.permits(&a("192.168.5.5:9001")));
        assert!(l.permits(&a("[fd00::2]:80")));
        assert!(!l.permits(&a("[fd00::3]:80")));
        assert!(l.permits(&a("[fd01::abcd]:5")));
        assert!(l.permits(&a("127.0.0.1:65535")));
        assert!(!l.permits(&a("127.0.0.2:1")));
    }

    #[test]
    fn mapped_ipv6_is_judged_as_ipv4() {
        let l = list(&["10.0.0.0/8"]);
        assert!(l.permits(&a("[::ffff:10.1.2.3]:80")));
        assert!(!l.permits(&a("[::ffff:11.1.2.3]:80")));
        let only_v6 = list(&["::/0"]);
        assert!(!only_v6.permits(&a("[::ffff:10.1.2.3]:80")));
    }

    #[test]
    fn empty_permits_nothing() {
        assert!(!AllowList::default().permits(&a("127.0.0.1:80")));
    }

    #[test]
    fn zero_prefix_is_everything_of_that_family() {
        let l = list(&["0.0.0.0/0"]);
        assert!(l.permits(&a("8.8.8.8:53")));
        assert!(!l.permits(&a("[::1]:53")));
    }

    #[test]
    fn bad_entries_are_named() {
        for (bad, needle) in [
            ("10.0.0.1/24", "host bits"),
            ("10.0.0.0/33", "prefix"),
            ("host.example:80", "not an IP"),
            ("10.0.0.1:0", "port"),
            ("[fd00::1", "missing ]"),
            ("[fd00::1]x", "after ]"),
        ] {
            let e = AllowList::parse(&[bad.to_string()], "depot.allow").unwrap_err();
            assert!(
                e.contains("depot.allow[0]") && e.contains(needle),
                "{bad}: {e}"
            );
        }
    }
}
