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
    // What the kernel made of --sndbuf (Linux stores twice the value asked for).
    let sndbuf_bytes = socket2::SockRef::from(&s)
        .send_buffer_size()
        .map_err(|e| format!("SO_SNDBUF: {e}"))?;
    if a.graceful && a.duration_s.is_some() {
        // A graceful end sends what is queued before its FIN: keep at most this much unsent in
        // the socket (TCP_NOTSENT_LOWAT), so the drain after the deadline is short.
        set_notsent_lowat(&s, NOTSENT_LOWAT)?;
    }
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
    let mut closed = "reset";
    if timed && a.graceful && finish_gracefully(&mut s) {
        closed = "graceful";
    }
    if timed && closed == "reset" {
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
        "sndbuf_bytes": sndbuf_bytes,
        "closed": closed,
        // Time (us) the connection was limited by the peer's window, by its send buffer, and
        // busy sending at all (tcpi_rwnd_limited, tcpi_sndbuf_limited, tcpi_busy_time).
        "rwnd_limited_us": last.rwnd_limited,
        "sndbuf_limited_us": last.sndbuf_limited,
        "busy_time_us": last.busy_time,
        "samples": samples,
    })
    .to_string())
}

/// Unsent bytes a graceful sender keeps queued (TCP_NOTSENT_LOWAT): 128 KiB keeps a 1 Gb/s
/// pipe fed between wake-ups (1 ms of data) and drains in well under a second at 2 Mb/s.
const NOTSENT_LOWAT: u32 = 128 * 1024;
/// How long a graceful close may wait for the receiver's FIN before falling back to a reset.
const GRACEFUL_WAIT_S: f64 = 4.0;

fn set_notsent_lowat(s: &std::net::TcpStream, bytes: u32) -> Result<(), String> {
    let v = bytes as libc::c_int;
    // SAFETY: a valid socket and an int option value of the right size.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NOTSENT_LOWAT,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(format!(
            "TCP_NOTSENT_LOWAT: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// FIN after what is queued, then wait for the receiver's FIN: the connection goes through
/// TIME-WAIT, where Linux saves its metrics (ssthresh, RTT) for the next connection to the same
/// host unless net.ipv4.tcp_no_metrics_save is set. False if the receiver did not close in time.
fn finish_gracefully(s: &mut std::net::TcpStream) -> bool {
    use std::io::Read;
    if s.shutdown(std::net::Shutdown::Write).is_err() {
        return false;
    }
    let deadline = now() + GRACEFUL_WAIT_S;
    let mut buf = [0u8; 4096];
    while now() < deadline {
        let left = (deadline - now()).max(0.001);
        if s.set_read_timeout(Some(std::time::Duration::from_secs_f64(left)))
            .is_err()
        {
            return false;
        }
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
    false
}
