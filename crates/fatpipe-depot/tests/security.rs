//! Never an open relay: tampered, expired, unsigned, wrongly positioned or disallowed requests
//! get 403 and the depot opens no connection to the hop they name (a listener counts accepts).

mod common;
use common::*;

fn code(url: &str, extra: &[&str]) -> String {
    let mut a = vec!["-sS", "-o", "/dev/null", "-w", "%{http_code}"];
    a.extend_from_slice(extra);
    a.push(url);
    curl(&a).stdout
}

#[test]
fn refused_requests_open_no_upstream_connection() {
    for mode in MODES {
        let t = TempDir::new("sec-refuse");
        let key = t.key("key");
        let other_key = t.key("other");
        let up = FakeUpstream::start(Behaviour::CloseAfter {
            head: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n".into(),
            body: b"ok".to_vec(),
        });
        // The depot may reach the fake upstream; a second hop it may not reach is signed in one case.
        let d = depot(
            &t,
            &key,
            &with(mode, &["--set", "depot.max_validity_s=3600"]),
            "d",
        );
        let hops = [d.addr, up.addr];
        let good = signed(&key, &hops, "/x", now() + 60, 0);
        let base = format!("http://{}", d.addr);
        let path = good.strip_prefix(&base).unwrap().to_string();
        let flip = |s: &str, at: usize| -> String {
            let mut b = s.as_bytes().to_vec();
            b[at] = if b[at] == b'A' { b'B' } else { b'A' };
            String::from_utf8(b).unwrap()
        };
        let tag_at = path.rfind("/x").unwrap() - 5;
        let cases: Vec<(&str, String)> = vec![
            ("unsigned plain path", format!("{base}/x")),
            (
                "unsigned with the right hops",
                format!("{base}/.fp1/0/{}/{},{}/x", now() + 60, d.addr, up.addr),
            ),
            ("tag flipped", format!("{base}{}", flip(&path, tag_at))),
            (
                "target changed",
                format!("{base}{}", path.replace("/x", "/y")),
            ),
            (
                "next hop changed to another port",
                format!(
                    "{base}{}",
                    path.replace(
                        &format!(",{}/", up.addr),
                        &format!(",127.0.0.1:{}/", up.addr.port() ^ 1)
                    )
                ),
            ),
            (
                "signed with another key",
                signed(&other_key, &hops, "/x", now() + 60, 0),
            ),
            ("expired", signed(&key, &hops, "/x", now() - 1, 0)),
            (
                "expiry beyond max_validity_s",
                signed(&key, &hops, "/x", now() + 7200, 0),
            ),
            ("malformed", format!("{base}/.fp1/0/zz/{}/x", up.addr)),
        ];
        for (what, url) in &cases {
            assert_eq!(code(url, &[]), "403", "{what}: {url}");
        }
        // The wrong position: a URL signed for index 1 sent to the depot.
        let at_origin =
            signed(&key, &hops, "/x", now() + 60, 1).replace(&format!("http://{}", up.addr), &base);
        assert_eq!(code(&at_origin, &[]), "403", "index of the origin");
        // Other methods are refused before anything else.
        assert_eq!(code(&good, &["-X", "POST"]), "405");
        assert_eq!(
            up.count(),
            0,
            "a refused request opened an upstream connection"
        );
        assert!(
            d.metric("fatpipe_depot_rejected_total{reason=\"bad_signature\"}")
                .unwrap()
                >= 4.0
        );
        assert_eq!(
            d.metric("fatpipe_depot_rejected_total{reason=\"expired\"}"),
            Some(1.0)
        );

        // The control: the same depot does open the connection for the valid URL, so the counter
        // above would have seen a leak.
        assert_eq!(code(&good, &[]), "200");
        assert_eq!(up.count(), 1);
    }
}

#[test]
fn signed_but_not_allowed_is_refused() {
    let t = TempDir::new("sec-allow");
    let key = t.key("key");
    let up = FakeUpstream::start(Behaviour::Silent);
    // This depot may only reach 127.0.0.2 (nothing there).
    let d = Daemon::start(
        "serve",
        &[
            s("--listen"),
            s("127.0.0.1:0"),
            s("--key-file"),
            key.display().to_string(),
            s("--allow"),
            s("127.0.0.2"),
        ],
        t.path("d.log"),
    );
    let url = signed(&key, &[d.addr, up.addr], "/x", now() + 60, 0);
    assert_eq!(code(&url, &[]), "403");
    assert!(d.log().contains("not in the allow-list"), "{}", d.log());
    assert_eq!(up.count(), 0);
}

#[test]
fn origin_serves_only_correctly_signed_depot_requests() {
    let t = TempDir::new("sec-origin");
    let key = t.key("key");
    let other = t.key("other");
    make_file(&t.files(), "f.bin", 1000, 9);
    let fake_depot = closed_port();
    let o = origin(&t, &key, &[fake_depot], &[]);
    let good = signed(&key, &[fake_depot, o.addr], "/f.bin", now() + 60, 1);
    assert_eq!(code(&good, &[]), "200");
    assert_eq!(
        code(
            &signed(&other, &[fake_depot, o.addr], "/f.bin", now() + 60, 1),
            &[]
        ),
        "403"
    );
    assert_eq!(
        code(
            &signed(&key, &[fake_depot, o.addr], "/f.bin", now() - 5, 1),
            &[]
        ),
        "403"
    );
    // Index 0 names the depot, not the origin.
    let wrong = signed(&key, &[fake_depot, o.addr], "/f.bin", now() + 60, 0)
        .replace(&fake_depot.to_string(), &o.addr.to_string());
    assert_eq!(code(&wrong, &[]), "403");
    // A plain request is redirected, not served.
    assert_eq!(code(&format!("http://{}/f.bin", o.addr), &[]), "302");
    // Nothing outside the root.
    assert_eq!(
        code(&format!("http://{}/../key", o.addr), &["--path-as-is"]),
        "404"
    );
    let esc = signed(&key, &[fake_depot, o.addr], "/%2e%2e/key", now() + 60, 1);
    assert_eq!(code(&esc, &[]), "404");
}

#[test]
fn the_key_never_appears_in_logs_or_on_the_command_line() {
    let t = TempDir::new("sec-key");
    let key = t.key("key");
    let secret = std::fs::read_to_string(&key).unwrap().trim().to_string();
    make_file(&t.files(), "f.bin", 1000, 10);
    let d = depot(&t, &key, &["--log-level", "trace"], "d");
    let o = origin(&t, &key, &[d.addr], &["--log-level", "trace"]);
    let r = curl(&[
        "-sS",
        "-L",
        "-o",
        "/dev/null",
        &format!("http://{}/f.bin", o.addr),
    ]);
    assert_eq!(r.code, 0);
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", d.pid())).unwrap();
    for text in [
        d.log(),
        o.log(),
        String::from_utf8_lossy(&cmdline).to_string(),
    ] {
        assert!(!text.contains(&secret), "the key leaked");
        assert!(!text.contains(&secret[..16]));
    }
}
