//! Failure semantics: before the response head, 502/504; after it, an aborted connection, so a
//! truncated body never looks complete (short Content-Length, or chunked without its last chunk).

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn status(url: &str) -> String {
    curl(&[
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "30",
        url,
    ])
    .stdout
}

#[test]
fn next_hop_refusing_gives_502() {
    for mode in MODES {
        let t = TempDir::new("fail-502");
        let key = t.key("key");
        let d = depot(&t, &key, mode, "d");
        let url = signed(&key, &[d.addr, closed_port()], "/x", now() + 60, 0);
        assert_eq!(status(&url), "502");
        assert_eq!(
            d.metric("fatpipe_depot_upstream_errors_total{kind=\"connect\"}"),
            Some(1.0)
        );
    }
}

#[test]
fn next_hop_silent_gives_504() {
    for mode in MODES {
        let t = TempDir::new("fail-504");
        let key = t.key("key");
        let up = FakeUpstream::start(Behaviour::Silent);
        let d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.upstream_header_timeout_s=1"]),
            "d",
        );
        let url = signed(&key, &[d.addr, up.addr], "/x", now() + 60, 0);
        assert_eq!(status(&url), "504");
        assert_eq!(up.count(), 1);
    }
}

#[test]
fn next_hop_not_answering_syn_gives_504() {
    for mode in MODES {
        // A listener whose accept queue is full drops further SYNs (Linux), so connect() hangs as it
        // would towards a dead host; the depot's connect timeout must answer 504.
        let sock =
            socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        sock.bind(
            &"127.0.0.1:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
        sock.listen(0).unwrap();
        let addr = sock.local_addr().unwrap().as_socket().unwrap();
        let mut fill = Vec::new();
        for _ in 0..4 {
            let s =
                socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            s.set_nonblocking(true).unwrap();
            let _ = s.connect(&addr.into());
            fill.push(s);
        }
        std::thread::sleep(Duration::from_millis(200));
        let t = TempDir::new("fail-504c");
        let key = t.key("key");
        let d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.connect_timeout_s=1"]),
            "d",
        );
        let url = signed(&key, &[d.addr, addr], "/x", now() + 60, 0);
        assert_eq!(status(&url), "504");
        assert_eq!(
            d.metric("fatpipe_depot_upstream_errors_total{kind=\"connect_timeout\"}"),
            Some(1.0)
        );
    }
}

/// Raw response bytes of a GET, read until the connection ends.
fn raw_get(url: &str) -> Vec<u8> {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    buf
}

#[test]
fn upstream_reset_after_the_head_truncates_visibly() {
    for mode in MODES {
        let t = TempDir::new("fail-reset");
        let key = t.key("key");
        let up = FakeUpstream::start(Behaviour::ResetAfter {
            head: "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n".into(),
            body: vec![7u8; 300_000],
        });
        let (d1, d2) = (depot(&t, &key, mode, "d1"), depot(&t, &key, mode, "d2"));
        let url = signed(&key, &[d1.addr, d2.addr, up.addr], "/x", now() + 60, 0);
        let out = t.path("out");
        let r = curl(&[
            "-sS",
            "-o",
            out.to_str().unwrap(),
            "-w",
            "%{http_code}",
            &url,
        ]);
        assert_eq!(r.stdout, "200");
        assert_eq!(r.code, 18, "curl must report a partial file: {}", r.stderr);
        let got = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
        assert!(got <= 300_000, "{got} bytes, more than the upstream sent");
        assert!(wait_until(Duration::from_secs(5), || d1
            .metric("fatpipe_depot_transfers_total{result=\"aborted\"}")
            == Some(1.0)));
    }
}

#[test]
fn chunked_upstream_cut_short_never_gets_a_final_chunk() {
    for mode in MODES {
        let t = TempDir::new("fail-chunked");
        let key = t.key("key");
        let mut body = Vec::new();
        for _ in 0..20 {
            body.extend_from_slice(b"1000\r\n");
            body.extend_from_slice(&[b'z'; 0x1000]);
            body.extend_from_slice(b"\r\n");
        }
        for behaviour in [
            Behaviour::CloseAfter {
                head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".into(),
                body: body.clone(),
            },
            Behaviour::ResetAfter {
                head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".into(),
                body: body.clone(),
            },
        ] {
            let up = FakeUpstream::start(behaviour);
            let (d1, d2) = (depot(&t, &key, mode, "d1"), depot(&t, &key, mode, "d2"));
            let url = signed(&key, &[d1.addr, d2.addr, up.addr], "/x", now() + 60, 0);
            let raw = raw_get(&url);
            let text = String::from_utf8_lossy(&raw);
            assert!(
                text.starts_with("HTTP/1.1 200"),
                "{}",
                &text[..text.len().min(200)]
            );
            assert!(text.to_lowercase().contains("transfer-encoding: chunked"));
            assert!(
                !raw.ends_with(b"0\r\n\r\n"),
                "a truncated chunked body got its terminating chunk"
            );
            let r = curl(&["-sS", "-o", "/dev/null", &url]);
            assert_ne!(r.code, 0, "curl accepted a truncated chunked body");
            // The control: a complete chunked body does end with the final chunk through the chain.
            let mut full = body.clone();
            full.extend_from_slice(b"0\r\n\r\n");
            let ok = FakeUpstream::start(Behaviour::CloseAfter {
                head: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                    .into(),
                body: full,
            });
            let url = signed(&key, &[d1.addr, d2.addr, ok.addr], "/x", now() + 60, 0);
            let r = curl(&["-sS", "-o", "/dev/null", "-w", "%{size_download}", &url]);
            assert_eq!((r.code, r.stdout.as_str()), (0, "81920"), "{}", r.stderr);
        }
    }
}

#[test]
fn upstream_silent_mid_body_aborts_after_the_read_timeout() {
    for mode in MODES {
        let t = TempDir::new("fail-stall");
        let key = t.key("key");
        let up = FakeUpstream::start(Behaviour::StallAfter {
            head: "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".into(),
            body: vec![1u8; 5000],
        });
        let d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.upstream_read_timeout_s=1"]),
            "d",
        );
        let url = signed(&key, &[d.addr, up.addr], "/x", now() + 60, 0);
        let r = curl(&[
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{size_download}",
            "--max-time",
            "20",
            &url,
        ]);
        assert_eq!(r.code, 18, "{}", r.stderr);
        assert_eq!(r.stdout, "5000");
        assert_eq!(
            d.metric("fatpipe_depot_upstream_errors_total{kind=\"read_timeout\"}"),
            Some(1.0)
        );
    }
}

/// Starts a rate-limited curl download in the background; returns it and its output path.
fn slow_download(t: &TempDir, url: &str, rate: &str) -> (std::process::Child, std::path::PathBuf) {
    let out = t.path("slow.out");
    let child = std::process::Command::new("curl")
        .args([
            "-sS",
            "-L",
            "--limit-rate",
            rate,
            "-o",
            out.to_str().unwrap(),
            url,
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    (child, out)
}

fn size_of(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn killing_the_origin_or_a_depot_mid_transfer_truncates_visibly() {
    for mode in MODES {
        const SIZE: usize = 40_000_000;
        for victim in ["origin", "depot2", "depot1"] {
            let t = TempDir::new("fail-kill");
            let key = t.key("key");
            make_file(&t.files(), "k.bin", SIZE, 11);
            let (mut d1, mut d2, mut o) = chain2(&t, &key, mode);
            // 4 MB/s: 10 s for the whole file; the kill comes after the first 2 MB.
            let (mut child, out) = slow_download(&t, &format!("http://{}/k.bin", o.addr), "4M");
            assert!(
                wait_until(Duration::from_secs(20), || size_of(&out) > 2_000_000),
                "download did not start"
            );
            let killed = match victim {
                "origin" => &mut o,
                "depot2" => &mut d2,
                _ => &mut d1,
            };
            killed.signal(libc::SIGKILL);
            killed.wait_exit(Duration::from_secs(5)).unwrap();
            let st = child.wait().unwrap();
            let got = size_of(&out);
            assert!(
                !st.success(),
                "{victim} killed: curl reported success with {got} of {SIZE} bytes"
            );
            assert!(got < SIZE as u64, "{victim}");
            // curl's partial-file (18) or receive error (56): the transfer is reported incomplete.
            assert!(
                matches!(st.code(), Some(18) | Some(56)),
                "{victim}: curl exit {:?}",
                st.code()
            );
        }
    }
}
