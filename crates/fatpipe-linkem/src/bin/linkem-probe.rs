//! Test traffic for the link emulator (run inside a namespace with `ip netns exec`):
//!
//! ```text
//! linkem-probe udp-send DST:PORT RATE_BPS PAYLOAD_BYTES DURATION_MS   paced datagrams (0 = flat out)
//! linkem-probe udp-recv BIND:PORT DURATION_MS WARMUP_MS               rate and one-way delay
//! linkem-probe tcp-send DST:PORT DURATION_MS CC                       one bulk TCP flow
//! linkem-probe tcp-recv BIND:PORT DURATION_MS WARMUP_MS               its goodput
//! ```
//!
//! Each prints one JSON object. A datagram carries its sequence number and CLOCK_REALTIME send
//! time; the receiver takes the kernel's receive timestamp (clocks are shared across
//! namespaces). Rates are on the wire: payload + UDP/IP/Ethernet headers (42 bytes).

use serde_json::json;
use std::io::{Read, Write};
use std::mem::{size_of, zeroed};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

const UDP_OVERHEAD: u64 = 42;

fn real_ns() -> u64 {
    fatpipe_linkem::sys::real_ns()
}

fn setopt(fd: i32, level: i32, name: i32, v: libc::c_int) {
    // SAFETY: pointer to a live int.
    unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const _ as *const libc::c_void,
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

fn usage() -> ! {
    eprintln!("usage: linkem-probe udp-send DST:PORT RATE_BPS PAYLOAD DURATION_MS | udp-recv BIND:PORT DURATION_MS WARMUP_MS | tcp-send DST:PORT DURATION_MS CC | tcp-recv BIND:PORT DURATION_MS WARMUP_MS");
    std::process::exit(2)
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or_else(|_| usage())
}

fn main() {
    // SAFETY: plain prctl (precise sleeps for pacing).
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() != 4 && a.len() != 5 {
        usage();
    }
    let addr: SocketAddr = a[1].parse().unwrap_or_else(|_| usage());
    let out = match (a[0].as_str(), a.len()) {
        ("udp-send", 5) => udp_send(addr, num(&a[2]), num(&a[3]) as usize, num(&a[4])),
        ("udp-recv", 4) => udp_recv(addr, num(&a[2]), num(&a[3])),
        ("tcp-send", 4) => tcp_send(addr, num(&a[2]), &a[3]),
        ("tcp-recv", 4) => tcp_recv(addr, num(&a[2]), num(&a[3])),
        _ => usage(),
    };
    println!("{out}");
}

fn udp_send(dst: SocketAddr, rate_bps: u64, payload: usize, duration_ms: u64) -> serde_json::Value {
    let sock = UdpSocket::bind("0.0.0.0:0").expect("bind");
    sock.connect(dst).expect("connect");
    setopt(
        sock.as_raw_fd(),
        libc::SOL_SOCKET,
        libc::SO_SNDBUFFORCE,
        8 << 20,
    );
    let payload = payload.max(16);
    let mut bufs = vec![vec![0u8; payload]; 64];
    let mut iovs: Vec<libc::iovec> = (0..64)
        .map(|_| libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        })
        .collect();
    // SAFETY: plain data.
    let mut hdrs: Vec<libc::mmsghdr> = (0..64).map(|_| unsafe { zeroed() }).collect();
    let wire_bits = (payload as u64 + UDP_OVERHEAD) * 8;
    let interval_ns = if rate_bps == 0 {
        0
    } else {
        wire_bits * 1_000_000_000 / rate_bps
    };
    let start = Instant::now();
    let end = Duration::from_millis(duration_ms);
    let mut seq: u64 = 0;
    let mut errors = 0u64;
    loop {
        let el = start.elapsed();
        if el >= end {
            break;
        }
        let owed = if interval_ns == 0 {
            seq + 32
        } else {
            el.as_nanos() as u64 / interval_ns + 1
        };
        if owed <= seq {
            let next = Duration::from_nanos(seq * interval_ns);
            let gap = next.saturating_sub(start.elapsed());
            // Sleep to the next send (no spinning: the probe may run under SCHED_FIFO); short
            // gaps are caught up in a burst of the datagrams owed.
            if gap > Duration::from_micros(5) {
                std::thread::sleep(gap);
            }
            if interval_ns < 20_000 {
                // below 20 us per datagram, send in bursts of up to 64 us worth
                std::thread::sleep(Duration::from_micros(64));
            }
            continue;
        }
        // Up to 64 owed datagrams in one sendmmsg, each stamped just before the call.
        let k = (owed - seq).min(64) as usize;
        let now = real_ns();
        for (i, b) in bufs.iter_mut().take(k).enumerate() {
            b[..8].copy_from_slice(&(seq + i as u64).to_le_bytes());
            b[8..16].copy_from_slice(&now.to_le_bytes());
        }
        for i in 0..k {
            iovs[i] = libc::iovec {
                iov_base: bufs[i].as_mut_ptr() as *mut libc::c_void,
                iov_len: payload,
            };
            // SAFETY: plain data.
            let mut h: libc::mmsghdr = unsafe { zeroed() };
            h.msg_hdr.msg_iov = &mut iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            hdrs[i] = h;
        }
        // SAFETY: headers over live buffers.
        let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), hdrs.as_mut_ptr(), k as u32, 0) };
        let done = if r < 0 { 0 } else { r as usize };
        errors += (k - done) as u64;
        seq += k as u64;
    }
    json!({"sent": seq, "send_errors": errors, "payload": payload,
           "elapsed_s": start.elapsed().as_secs_f64()})
}

fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn udp_recv(bind: SocketAddr, duration_ms: u64, warmup_ms: u64) -> serde_json::Value {
    let sock = UdpSocket::bind(bind).expect("bind");
    let fd = sock.as_raw_fd();
    setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 64 << 20);
    setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let start = Instant::now();
    let mut buf = vec![0u8; 65536];
    let mut ctrl = [0u64; 16];
    // (seq, tx, rx, wire bytes)
    let mut got: Vec<(u64, u64, u64, u64)> = Vec::with_capacity(1 << 20);
    while start.elapsed() < Duration::from_millis(duration_ms) {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: msghdr over live buffers.
        let mut h: libc::msghdr = unsafe { zeroed() };
        h.msg_iov = &mut iov;
        h.msg_iovlen = 1;
        h.msg_control = ctrl.as_mut_ptr() as *mut libc::c_void;
        h.msg_controllen = size_of::<[u64; 16]>() as _;
        let n = unsafe { libc::recvmsg(fd, &mut h, 0) };
        if n < 16 {
            continue;
        }
        let mut rx = 0;
        // SAFETY: walking the control messages the kernel wrote.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    rx = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
                }
                c = libc::CMSG_NXTHDR(&h, c);
            }
        }
        if rx == 0 {
            rx = real_ns();
        }
        let seq = u64::from_le_bytes(buf[..8].try_into().unwrap());
        let tx = u64::from_le_bytes(buf[8..16].try_into().unwrap());
        got.push((seq, tx, rx, n as u64 + UDP_OVERHEAD));
    }
    if got.is_empty() {
        return json!({"received": 0});
    }
    let first = got[0].2;
    let last = got.last().unwrap().2;
    let from = first + warmup_ms * 1_000_000;
    let counted: Vec<&(u64, u64, u64, u64)> = got.iter().filter(|g| g.2 >= from).collect();
    let rate = if counted.len() > 1 {
        let bytes: u64 = counted[1..].iter().map(|g| g.3).sum();
        let span = counted.last().unwrap().2 - counted[0].2;
        (span > 0).then(|| bytes as f64 * 8e9 / span as f64)
    } else {
        None
    };
    let mut owd: Vec<u64> = got.iter().map(|g| g.2.saturating_sub(g.1)).collect();
    let mean = owd.iter().sum::<u64>() as f64 / owd.len() as f64;
    owd.sort_unstable();
    let max_seq = got.iter().map(|g| g.0).max().unwrap();
    let reordered = got.windows(2).filter(|w| w[1].0 < w[0].0).count();
    json!({
        "received": got.len(),
        "max_seq": max_seq,
        "missing": max_seq + 1 - got.len() as u64,
        "reordered": reordered,
        "span_s": (last - first) as f64 * 1e-9,
        "rate_bps": rate,
        "owd_ns": {"min": owd[0], "mean": mean, "p50": quantile(&owd, 0.5),
                   "p99": quantile(&owd, 0.99), "max": *owd.last().unwrap()},
    })
}

fn tcp_send(dst: SocketAddr, duration_ms: u64, cc: &str) -> serde_json::Value {
    let start = Instant::now();
    let mut s = loop {
        match TcpStream::connect_timeout(&dst, Duration::from_secs(2)) {
            Ok(s) => break s,
            Err(e) if start.elapsed() < Duration::from_secs(5) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return json!({"error": e.to_string()}),
        }
    };
    let fd = s.as_raw_fd();
    let name = cc.as_bytes();
    // SAFETY: name buffer of the given length.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr() as *const libc::c_void,
            name.len() as libc::socklen_t,
        )
    };
    if r != 0 {
        return json!({"error": format!("TCP_CONGESTION {cc}: {}", std::io::Error::last_os_error())});
    }
    let buf = vec![0u8; 1 << 16];
    let mut sent = 0u64;
    let t0 = Instant::now();
    s.set_write_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while t0.elapsed() < Duration::from_millis(duration_ms) {
        match s.write(&buf) {
            Ok(n) => sent += n as u64,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut => {}
            Err(e) => return json!({"error": e.to_string(), "sent": sent}),
        }
    }
    // SAFETY: plain data out-parameter.
    let mut ti: libc::tcp_info = unsafe { zeroed() };
    let mut len = size_of::<libc::tcp_info>() as libc::socklen_t;
    unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut ti as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    let _ = s.shutdown(std::net::Shutdown::Both);
    json!({"sent": sent, "cc": cc, "total_retrans": ti.tcpi_total_retrans,
           "srtt_us": ti.tcpi_rtt, "snd_cwnd": ti.tcpi_snd_cwnd, "snd_mss": ti.tcpi_snd_mss})
}

fn tcp_recv(bind: SocketAddr, duration_ms: u64, warmup_ms: u64) -> serde_json::Value {
    let l = TcpListener::bind(bind).expect("bind");
    let start = Instant::now();
    l.set_nonblocking(true).unwrap();
    let mut s = loop {
        match l.accept() {
            Ok((s, _)) => break s,
            Err(_) if start.elapsed() < Duration::from_millis(duration_ms) => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return json!({"error": e.to_string()}),
        }
    };
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let t0 = Instant::now();
    let mut buf = vec![0u8; 1 << 18];
    let mut total = 0u64;
    let mut at_warm: Option<(Duration, u64)> = None;
    let mut last = (Duration::ZERO, 0u64);
    while t0.elapsed() < Duration::from_millis(duration_ms) {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                let el = t0.elapsed();
                if at_warm.is_none() && el >= Duration::from_millis(warmup_ms) {
                    at_warm = Some((el, total));
                }
                last = (el, total);
            }
            Err(_) => {}
        }
    }
    let goodput = at_warm.and_then(|(t, b)| {
        let dt = (last.0 - t).as_secs_f64();
        (dt > 0.0).then(|| (last.1 - b) as f64 * 8.0 / dt)
    });
    json!({"received": total, "elapsed_s": last.0.as_secs_f64(), "goodput_bps": goodput,
           "warmup_s": warmup_ms as f64 / 1e3})
}
