//! Property-based fuzzing (proptest, fixed seeds so runs repeat): the chain encoding, the
//! allow-list and range parsers never panic and never accept what they should not; and a live
//! depot fed malformed, oversized and badly signed requests answers each with a refusal (or
//! closes), stays up, and never opens a connection upstream.

mod common;
use common::*;
use fatpipe_depot::allow::AllowList;
use fatpipe_depot::chain::{self, Chain, Role};
use fatpipe_depot::files::{self, Span};
use fatpipe_depot::sign::Key;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

fn cfg(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}

fn key() -> Key {
    Key::from_bytes(b"fuzzing-key-0123456789abcdefghij").unwrap()
}

fn hop() -> impl Strategy<Value = SocketAddr> {
    prop_oneof![
        (any::<[u8; 4]>(), 1u16..).prop_map(|(ip, p)| SocketAddr::new(IpAddr::from(ip), p)),
        (any::<[u16; 8]>(), 1u16..).prop_map(|(ip, p)| SocketAddr::new(IpAddr::from(ip), p)),
    ]
    .prop_filter("usable hop", |a| {
        !a.ip().is_unspecified() && !a.ip().is_multicast()
    })
}

fn valid_chain() -> impl Strategy<Value = (Chain, usize)> {
    (
        prop::collection::vec(hop(), 2..=chain::MAX_HOPS),
        any::<u64>(),
        "/[A-Za-z0-9._~%/-]{0,64}(\\?[A-Za-z0-9=&]{0,20})?",
    )
        .prop_filter_map("distinct hops", |(hops, exp, target)| {
            let n = hops.len();
            Chain::new(hops, exp, target).ok().map(|c| (c, n))
        })
        .prop_flat_map(|(c, n)| (Just(c), 0..n))
}

proptest! {
    #![proptest_config(cfg(3000, 1))]

    #[test]
    fn parse_never_panics_on_any_string(s in "\\PC*") {
        let _ = chain::parse(&s);
        let _ = chain::parse(&format!("{}{s}", chain::PREFIX));
    }

    #[test]
    fn parse_never_panics_on_near_miss_urls(s in "/\\.fp1/[0-9]{0,3}/[0-9]{0,12}/[0-9.:,\\[\\]%5BD]{0,80}/[A-Za-z0-9_-]{0,50}(/[ -~]{0,30})?") {
        let _ = chain::parse(&s);
    }

    #[test]
    fn encoding_round_trips((c, i) in valid_chain()) {
        let p = chain::parse(&c.path(&key(), i)).unwrap();
        prop_assert_eq!(&p.chain, &c);
        prop_assert_eq!(p.index, i);
        let role = if i + 1 == c.hops.len() { Role::Origin } else { Role::Depot };
        // Verified at any time before expiry, with a validity window that covers it.
        prop_assert!(p.verify(&key(), c.expires.saturating_sub(1), u64::MAX, role).is_ok());
    }

    #[test]
    fn a_mutated_url_is_never_accepted_for_another_chain(
        (c, i) in valid_chain(), at in any::<prop::sample::Index>(), byte in 0x21u8..0x7f
    ) {
        let path = c.path(&key(), i);
        let mut b = path.clone().into_bytes();
        let k = at.index(b.len());
        b[k] = byte;
        let m = String::from_utf8(b).unwrap();
        if let Ok(p) = chain::parse(&m) {
            let role = if p.index + 1 == p.chain.hops.len() { Role::Origin } else { Role::Depot };
            if p.verify(&key(), c.expires.saturating_sub(1), u64::MAX, role).is_ok() {
                // Only a change that means the same (e.g. %5B written %5b) may pass.
                prop_assert_eq!(&p.chain, &c, "{} accepted", m);
                prop_assert_eq!(p.index, i);
            }
        }
    }

    #[test]
    fn allow_list_parsing_never_panics(entries in prop::collection::vec("[0-9a-f.:/\\[\\]]{0,40}", 0..5), h in hop()) {
        if let Ok(l) = AllowList::parse(&entries, "fuzz") {
            let _ = l.permits(&h);
        }
    }

    #[test]
    fn ranges_stay_inside_the_file(header in "(bytes=)?[0-9-, ]{0,24}", len in 0u64..10_000) {
        match files::span(Some(&header), len) {
            Span::Part(a, b) => prop_assert!(a <= b && b < len),
            Span::Full | Span::Unsatisfiable => {}
        }
    }
}

/// One request's bytes: a method, a target (garbage, a mutated signed URL, or unsigned), and
/// headers up to twice the head limit.
fn request() -> impl Strategy<Value = Vec<u8>> {
    let method = prop_oneof![
        Just("GET".to_string()),
        Just("HEAD".into()),
        Just("POST".into()),
        "[A-Z]{1,10}",
        "[ -~]{0,12}"
    ];
    let target = prop_oneof![
        "[ -~]{0,300}",
        "/\\.fp1/[0-9]{1,2}/[0-9]{1,12}/127\\.0\\.0\\.1:[0-9]{1,5},127\\.0\\.0\\.1:[0-9]{1,5}/[A-Za-z0-9_-]{43}/[a-z]{1,8}",
        Just("/plain/file.bin".to_string()),
    ];
    let headers = prop::collection::vec(("[A-Za-z-]{0,20}", "[ -~]{0,200}", 0usize..20_000), 0..40);
    let tail = prop::collection::vec(any::<u8>(), 0..64);
    (method, target, headers, tail).prop_map(|(m, t, hs, tail)| {
        let mut r = format!("{m} {t} HTTP/1.1\r\nHost: x\r\n").into_bytes();
        for (n, v, pad) in hs {
            r.extend_from_slice(format!("{n}: {v}{}\r\n", "a".repeat(pad % 9000)).as_bytes());
        }
        r.extend_from_slice(b"\r\n");
        r.extend_from_slice(&tail);
        r
    })
}

#[test]
fn a_live_depot_refuses_fuzzed_requests_and_stays_up() {
    let t = TempDir::new("fuzz-live");
    let keyf = t.key("key");
    let up = FakeUpstream::start(Behaviour::Silent);
    let mut d = depot(
        &t,
        &keyf,
        &["--set", "limits.header_timeout_s=2", "--log-level", "error"],
        "d",
    );
    let addr = d.addr;
    let mut runner = proptest::test_runner::TestRunner::new(cfg(300, 2));
    runner
        .run(&request(), |req| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = s.write_all(&req);
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            let text = String::from_utf8_lossy(&out);
            // A refusal, or a closed connection; never a relay.
            if let Some(code) = text.strip_prefix("HTTP/1.1 ").and_then(|r| r.get(..3)) {
                prop_assert!(
                    ["400", "403", "405", "414", "431", "501", "505"].contains(&code),
                    "answered {} to {:?}",
                    code,
                    String::from_utf8_lossy(&req[..req.len().min(200)])
                );
            }
            Ok(())
        })
        .unwrap();
    assert!(
        d.child.try_wait().unwrap().is_none(),
        "the depot died: {}",
        d.log()
    );
    assert_eq!(up.count(), 0, "a fuzzed request reached the upstream");
    // Still serving: a valid request is relayed (to the silent upstream, which accepts it).
    let url = signed(&keyf, &[d.addr, up.addr], "/x", now() + 60, 0);
    let _ = curl(&["-sS", "-o", "/dev/null", "--max-time", "1", &url]);
    assert!(wait_until(Duration::from_secs(5), || up.count() == 1));
    let _ = d.wait_exit(Duration::ZERO);
}
