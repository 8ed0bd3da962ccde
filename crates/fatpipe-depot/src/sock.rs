//! Sockets with per-hop options: congestion control (TCP_CONGESTION, Linux), buffer sizes, set
//! before `listen`/`connect` so the SYN's window scale follows the receive buffer.

use crate::config::SocketOpts;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::Duration;
use tokio::net::{TcpListener, TcpSocket, TcpStream};

fn new_socket(addr: &SocketAddr) -> io::Result<Socket> {
    let s = Socket::new(
        Domain::for_address(*addr),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    s.set_nonblocking(true)?;
    s.set_cloexec(true)?;
    Ok(s)
}

/// Applies `opts` to a socket; `what` names the config section in errors.
fn apply(s: &Socket, opts: &SocketOpts, what: &str) -> Result<(), String> {
    if let Some(cc) = &opts.congestion {
        // The kernel refuses a name it has not loaded (ENOENT) or, unprivileged, one missing from
        // net.ipv4.tcp_allowed_congestion_control (EPERM).
        s.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
            format!("{what}.congestion = {cc:?}: {e} (see /proc/sys/net/ipv4/tcp_available_congestion_control; `modprobe tcp_{cc}`)")
        })?;
    }
    if let Some(b) = opts.send_buffer {
        s.set_send_buffer_size(b)
            .map_err(|e| format!("{what}.send_buffer = {b}: {e}"))?;
    }
    if let Some(b) = opts.recv_buffer {
        s.set_recv_buffer_size(b)
            .map_err(|e| format!("{what}.recv_buffer = {b}: {e}"))?;
    }
    Ok(())
}

/// Checks that the kernel accepts `opts` (at start-up, so a bad congestion name is a clear
/// error then, not a 502 on the first transfer).
pub fn check_opts(opts: &SocketOpts, what: &str) -> Result<(), String> {
    let s =
        new_socket(&"127.0.0.1:1".parse().expect("literal")).map_err(|e| format!("socket: {e}"))?;
    apply(&s, opts, what)
}

/// A listener whose accepted sockets inherit `opts` (Linux copies the congestion control and
/// buffer sizes of a listening socket to the connections it accepts).
pub fn listen(addr: SocketAddr, opts: &SocketOpts, what: &str) -> Result<TcpListener, String> {
    let s = new_socket(&addr).map_err(|e| format!("socket: {e}"))?;
    s.set_reuse_address(true)
        .map_err(|e| format!("SO_REUSEADDR: {e}"))?;
    apply(&s, opts, what)?;
    s.bind(&SockAddr::from(addr))
        .map_err(|e| format!("{what}: cannot listen on {addr}: {e}"))?;
    s.listen(1024).map_err(|e| format!("listen {addr}: {e}"))?;
    TcpListener::from_std(s.into()).map_err(|e| format!("listen {addr}: {e}"))
}

/// Options on an accepted connection: no Nagle delay on the response head and the last small
/// write of a body.
pub fn accepted(stream: &TcpStream) {
    let _ = stream.set_nodelay(true);
}

#[derive(Debug)]
pub enum ConnectError {
    Timeout,
    Io(io::Error),
    Options(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Timeout => write!(f, "connect timed out"),
            ConnectError::Io(e) => write!(f, "connect: {e}"),
            ConnectError::Options(e) => write!(f, "{e}"),
        }
    }
}

/// Opens a connection to `to` with `opts` set before the SYN, within `timeout`.
pub async fn connect(
    to: SocketAddr,
    opts: &SocketOpts,
    timeout: Duration,
) -> Result<TcpStream, ConnectError> {
    let s = new_socket(&to).map_err(ConnectError::Io)?;
    apply(&s, opts, "upstream").map_err(ConnectError::Options)?;
    let std_stream: std::net::TcpStream = s.into();
    let sock = TcpSocket::from_std_stream(std_stream);
    let stream = match tokio::time::timeout(timeout, sock.connect(to)).await {
        Err(_) => return Err(ConnectError::Timeout),
        Ok(r) => r.map_err(ConnectError::Io)?,
    };
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// The kernel's smoothed RTT of a connection (TCP_INFO tcpi_rtt), if it has one.
pub fn smoothed_rtt(stream: &TcpStream) -> Option<Duration> {
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: a valid fd, a buffer of the given length.
    let r = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut info as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0 && info.tcpi_rtt > 0).then(|| Duration::from_micros(info.tcpi_rtt as u64))
}

/// The congestion control a socket runs (for logs and tests).
pub fn congestion_of(stream: &TcpStream) -> Option<String> {
    let s = socket2::SockRef::from(stream);
    s.tcp_congestion().ok().map(|v| {
        String::from_utf8_lossy(&v)
            .trim_end_matches('\0')
            .to_string()
    })
}
