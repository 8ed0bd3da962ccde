//! Limits: slow request heads (slowloris), oversized heads, stalled readers, too many transfers
//! or connections. Times here are generous upper bounds on behaviour (a connection must be closed
//! at all), not performance assertions.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads until the peer closes; returns what came and how long it took.
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> (Vec<u8>, Duration, bool) {
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let t0 = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while t0.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => return (got, t0.elapsed(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(_) => return (got, t0.elapsed(), true),
        }
    }
    (got, t0.elapsed(), false)
}

#[test]
fn slowloris_heads_are_cut_off() {
    for mode in MODES {
        let t = TempDir::new("lim-slow");
        let key = t.key("key");
        let up = FakeUpstream::start(Behaviour::Silent);
        let d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.header_timeout_s=1"]),
            "d",
        );
        // A head trickled a byte every 100 ms would never end; the depot must close it.
        let mut s = TcpStream::connect(d.addr).unwrap();
        s.write_all(b"GET /x HTTP/1.1\r\nHost: a\r\n").unwrap();
        let t0 = Instant::now();
        let mut closed = false;
        while t0.elapsed() < Duration::from_secs(10) {
            if s.write_all(b"X").is_err() {
                closed = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            let mut b = [0u8; 256];
            s.set_nonblocking(true).unwrap();
            if let Ok(0) = s.read(&mut b) {
                closed = true;
                break;
            }
            s.set_nonblocking(false).unwrap();
        }
        assert!(
            closed,
            "a trickled head kept its connection for 10 s with header_timeout_s = 1"
        );
        // An idle connection that sends nothing at all is closed as well.
        let mut idle = TcpStream::connect(d.addr).unwrap();
        let (_, _, closed) = read_until_closed(&mut idle, Duration::from_secs(10));
        assert!(closed, "an idle connection stayed open");
        assert_eq!(up.count(), 0);
    }
}

#[test]
fn oversized_heads_get_431() {
    for mode in MODES {
        let t = TempDir::new("lim-431");
        let key = t.key("key");
        let d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.max_header_bytes=4096"]),
            "d",
        );
        let mut s = TcpStream::connect(d.addr).unwrap();
        let big = "a".repeat(20_000);
        // The depot may answer before it has read everything: a failed write is not the test.
        let _ = write!(s, "GET /x HTTP/1.1\r\nHost: a\r\nX-Big: {big}\r\n\r\n");
        let (got, _, _) = read_until_closed(&mut s, Duration::from_secs(10));
        assert!(
            String::from_utf8_lossy(&got).starts_with("HTTP/1.1 431"),
            "{}",
            String::from_utf8_lossy(&got)
        );
        // Too many header lines: also refused.
        let mut s = TcpStream::connect(d.addr).unwrap();
        let mut req = String::from("GET /x HTTP/1.1\r\nHost: a\r\n");
        for i in 0..200 {
            req.push_str(&format!("X-{i}: 1\r\n"));
        }
        req.push_str("\r\n");
        let _ = s.write_all(req.as_bytes());
        let (got, _, _) = read_until_closed(&mut s, Duration::from_secs(10));
        assert!(
            String::from_utf8_lossy(&got).starts_with("HTTP/1.1 431"),
            "{}",
            String::from_utf8_lossy(&got)
        );
    }
}

#[test]
fn a_reader_that_stops_reading_is_dropped() {
    for mode in MODES {
        let t = TempDir::new("lim-stall");
        let key = t.key("key");
        const SIZE: usize = 64_000_000;
        make_file(&t.files(), "s.bin", SIZE, 12);
        let d = depot(
            &t,
            &key,
            &with(
                mode,
                &[
                    "--set",
                    "limits.send_timeout_s=1",
                    "--set",
                    "downstream.send_buffer=65536",
                ],
            ),
            "d",
        );
        let o = origin(&t, &key, &[d.addr], &[]);
        let url = redirect(o.addr, "/s.bin");
        let path = url.strip_prefix(&format!("http://{}", d.addr)).unwrap();
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.set_recv_buffer_size(65536).unwrap();
        s.connect(&d.addr.into()).unwrap();
        let mut s: TcpStream = s.into();
        write!(s, "GET {path} HTTP/1.1\r\nHost: a\r\n\r\n").unwrap();
        // Read nothing for 4 s: the depot's write stalls, and after send_timeout_s it gives up.
        std::thread::sleep(Duration::from_secs(4));
        let (got, _, closed) = read_until_closed(&mut s, Duration::from_secs(20));
        assert!(closed);
        assert!(
            got.len() < SIZE,
            "the whole body arrived: the stall was not detected"
        );
        assert!(wait_until(Duration::from_secs(5), || d
            .metric("fatpipe_depot_transfers_total{result=\"aborted\"}")
            == Some(1.0)));
    }
}

#[test]
fn transfers_and_connections_are_capped() {
    for mode in MODES {
        let t = TempDir::new("lim-cap");
        let key = t.key("key");
        make_file(&t.files(), "c.bin", 20_000_000, 13);
        let d = depot(
            &t,
            &key,
            &with(
                mode,
                &[
                    "--set",
                    "limits.max_transfers=1",
                    "--set",
                    "limits.max_connections=3",
                ],
            ),
            "d",
        );
        let o = origin(&t, &key, &[d.addr], &[]);
        let url = redirect(o.addr, "/c.bin");
        let mut first = std::process::Command::new("curl")
            .args(["-sS", "--limit-rate", "2M", "-o", "/dev/null", &url])
            .spawn()
            .unwrap();
        assert!(wait_until(Duration::from_secs(10), || d
            .metric("fatpipe_depot_transfers_active")
            == Some(1.0)));
        let r = curl(&[
            "-sS",
            "-o",
            "/dev/null",
            "-D",
            "-",
            "-w",
            "%{http_code}",
            &url,
        ]);
        assert!(r.stdout.ends_with("503"), "{}", r.stdout);
        assert!(r.stdout.to_lowercase().contains("retry-after: 1"));
        // Connections: one is the transfer. The refused request's connection closes on its own
        // time; wait for it, or an idle connection opened now could be the one refused.
        assert!(wait_until(Duration::from_secs(5), || d
            .metric("fatpipe_depot_connections_active")
            == Some(1.0)));
        // Open idle ones until the cap; the next is closed at once.
        let _a = TcpStream::connect(d.addr).unwrap();
        let _b = TcpStream::connect(d.addr).unwrap();
        assert!(wait_until(Duration::from_secs(5), || d
            .metric("fatpipe_depot_connections_active")
            == Some(3.0)));
        let mut c = TcpStream::connect(d.addr).unwrap();
        let (_, _, closed) = read_until_closed(&mut c, Duration::from_secs(5));
        assert!(closed, "a connection beyond max_connections stayed open");
        assert_eq!(
            d.metric("fatpipe_depot_connections_refused_total"),
            Some(1.0)
        );
        first.kill().unwrap();
        let _ = first.wait();
    }
}
