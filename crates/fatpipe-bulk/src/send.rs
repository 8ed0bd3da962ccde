//! The sender: write zeros as fast as the socket takes them, sample TCP_INFO on a timer.
//!
//! The socket is non-blocking and polled with a timeout equal to the time left to the next
//! sample, so samples are taken on time whether or not the window is open.

use crate::args::SendArgs;
use crate::info::TcpInfo;
use crate::sock::{connect, now};
use serde_json::json;
use std::io::{ErrorKind, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

const CHUNK: usize = 1 << 16;

pub fn run(a: &SendArgs) -> Result<String, String> {
    let to: SocketAddr =
        a.to.parse()
            .map_err(|_| format!("--to {}: not ADDR:PORT", a.to))?;
    let t_connect = now();
    let mut s = connect(&to, &a.cc, a.sndbuf, a.mss)?;
    let t0 = now();
    s.set_nonblocking(true).map_err(|e| e.to_string())?;
    let fd = s.as_raw_fd();
    let buf = vec![0u8; CHUNK];
    let mut written: u64 = 0;
    let mut samples = Vec::new();
    let mut next_sample = t0;
    let deadline = a.duration_s.map(|d| t0 + d);
    let total = a.bytes;
    loop {
        let t = now();
        if t >= next_sample {
            let info = TcpInfo::read(fd).map_err(|e| format!("TCP_INFO: {e}"))?;
            samples.push(info.sample(t));
            next_sample += a.interval_s;
        }
        if deadline.is_some_and(|d| t >= d) || total.is_some_and(|b| written >= b) {
            break;
        }
        let want = total.map_or(CHUNK, |b| (b - written).min(CHUNK as u64) as usize);
        match s.write(&buf[..want]) {
            Ok(n) => written += n as u64,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let wait_ms = ((next_sample - now()).max(0.0) * 1e3).ceil() as i32;
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut pfd, 1, wait_ms.max(1)) };
            }
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    // A timed (bulk) flow ends at its deadline, as in the simulator: what is still in the
    // socket buffer is not sent; the connection is reset (linger 0) so nothing drains after the
    // run. A finite transfer waits until everything written is acknowledged (bytes_acked counts
    // the SYN's byte too, so compare with written + 1), sampling on the way.
    s.set_nonblocking(false).map_err(|e| e.to_string())?;
    let timed = deadline.is_some();
    if timed {
        let info = TcpInfo::read(fd).map_err(|e| format!("TCP_INFO: {e}"))?;
        samples.push(info.sample(now()));
    }
    while !timed {
        let info = TcpInfo::read(fd).map_err(|e| format!("TCP_INFO: {e}"))?;
        let t = now();
        if info.bytes_acked > written || info.state != 1 {
            samples.push(info.sample(t));
            break;
        }
        if t >= next_sample {
            samples.push(info.sample(t));
            next_sample += a.interval_s;
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    }
    let t_end = now();
    let last = TcpInfo::read(fd).map_err(|e| format!("TCP_INFO: {e}"))?;
    if timed {
        socket2::SockRef::from(&s)
            .set_linger(Some(std::time::Duration::ZERO))
            .map_err(|e| format!("SO_LINGER: {e}"))?;
    }
    drop(s);
    Ok(json!({
        "role": "send",
        "flow": a.flow,
        "cc": a.cc,
        "to": a.to,
        "t_connect": t_connect,
        "t_start": t0,
        "t_end": t_end,
        "bytes_written": written,
        "bytes_acked": last.bytes_acked.saturating_sub(1),
        "bytes_sent": last.bytes_sent,
        "bytes_retrans": last.bytes_retrans,
        "total_retrans": last.total_retrans,
        "segs_out": last.segs_out,
        "data_segs_out": last.data_segs_out,
        "snd_mss": last.snd_mss,
        "samples": samples,
    })
    .to_string())
}
