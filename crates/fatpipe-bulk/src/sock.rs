//! Sockets set up the way the testbed needs them (socket2, options applied before connect or
//! listen so the SYN carries them), and the shared monotonic clock.

use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{SocketAddr, TcpListener, TcpStream};

fn tcp_socket(addr: &SocketAddr) -> Result<Socket, String> {
    Socket::new(
        Domain::for_address(*addr),
        Type::STREAM,
        Some(Protocol::TCP),
    )
    .map_err(|e| format!("socket: {e}"))
}

/// Ask for a socket buffer of `bytes` as netperf's -s/-S do. `SO_SNDBUFFORCE`/`SO_RCVBUFFORCE`
/// (socket(7); CAP_NET_ADMIN, which the testbed's root has) are tried first because the plain
/// options are capped at `net.core.wmem_max`/`rmem_max`, which a network namespace cannot raise
/// (they are the host's); without the capability the plain option is used. Linux doubles the
/// value either way.
fn set_buffer(s: &Socket, bytes: u32, send: bool) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let force = if send {
        libc::SO_SNDBUFFORCE
    } else {
        libc::SO_RCVBUFFORCE
    };
    let v = bytes.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: a valid socket descriptor and a c_int option value of the right size.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            force,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        return Ok(());
    }
    if send {
        s.set_send_buffer_size(bytes as usize)
    } else {
        s.set_recv_buffer_size(bytes as usize)
    }
}

/// A connected sender socket with the congestion control, send buffer and MSS set first.
pub fn connect(
    to: &SocketAddr,
    cc: &str,
    sndbuf: Option<u32>,
    mss: Option<u32>,
) -> Result<TcpStream, String> {
    let s = tcp_socket(to)?;
    // The kernel refuses a name it does not have (ENOENT) or, for an unprivileged user, one not in
    // tcp_allowed_congestion_control (EPERM).
    s.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
        format!("--cc {cc}: {e} (see /proc/sys/net/ipv4/tcp_available_congestion_control)")
    })?;
    if let Some(b) = sndbuf {
        set_buffer(&s, b, true).map_err(|e| format!("--sndbuf: {e}"))?;
    }
    if let Some(m) = mss {
        s.set_mss(m).map_err(|e| format!("--mss: {e}"))?;
    }
    s.connect(&SockAddr::from(*to))
        .map_err(|e| format!("--to {to}: {e}"))?;
    Ok(s.into())
}

/// A listener with the receive buffer set before listen (accepted sockets inherit it, and the
/// window scale in the SYN-ACK follows from it).
pub fn listen(port: u16, rcvbuf: Option<u32>) -> Result<TcpListener, String> {
    let addr: SocketAddr = ([0, 0, 0, 0], port).into();
    let s = tcp_socket(&addr)?;
    s.set_reuse_address(true)
        .map_err(|e| format!("SO_REUSEADDR: {e}"))?;
    if let Some(b) = rcvbuf {
        set_buffer(&s, b, false).map_err(|e| format!("--rcvbuf: {e}"))?;
    }
    s.bind(&SockAddr::from(addr))
        .map_err(|e| format!("--port {port}: {e}"))?;
    s.listen(128).map_err(|e| format!("listen: {e}"))?;
    Ok(s.into())
}

/// Seconds of CLOCK_MONOTONIC (shared by every network namespace of the host).
pub fn now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
