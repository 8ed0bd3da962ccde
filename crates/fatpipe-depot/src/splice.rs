//! Zero-copy relay (`depot.splice = true`, Linux): the response body goes from the upstream
//! socket to the client socket through a pipe with splice(2), never through user space.
//!
//! hyper owns the sockets of the default path, so this mode speaks HTTP/1.1 itself, minimally:
//! one request per connection (answers carry `Connection: close`), heads parsed with httparse
//! under the same limits, the same checks (`Depot::admit`: signature, expiry, position,
//! allow-list, transfer slots) and the same failure semantics: 403/405/503 before any upstream
//! connection, 502/504 before the response head, an aborted connection after it. The body is
//! relayed byte for byte: a Content-Length body is counted (an upstream that ends early makes the
//! depot close the client connection short of the length), a chunked body is passed through with its own framing (so
//! a final chunk reaches the client only if the upstream sent it). A response delimited only by
//! the connection's end cannot be checked for truncation and is refused with 502.

use crate::config::secs;
use crate::headers;
use crate::relay::{Depot, Refusal};
use crate::sock::{self, ConnectError};
use crate::transfer::{Account, Meta, Outcome};
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

/// Largest upstream response head accepted, bytes.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

/// Accept loop of the splice mode (same limits and shutdown as server.rs).
pub async fn accept_loop(
    listener: TcpListener,
    depot: Arc<Depot>,
    mut shutdown: watch::Receiver<bool>,
) {
    let l = depot.limits.clone();
    let slots = Arc::new(Semaphore::new(l.max_connections));
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, peer)) => {
                    let Ok(slot) = slots.clone().try_acquire_owned() else {
                        depot.metrics.connections_refused.fetch_add(1, Relaxed);
                        continue;
                    };
                    sock::accepted(&stream);
                    depot.metrics.connections_total.fetch_add(1, Relaxed);
                    depot.metrics.connections_active.fetch_add(1, Relaxed);
                    let (d, sd) = (depot.clone(), shutdown.clone());
                    tasks.spawn(async move {
                        connection(&d, stream, peer, sd).await;
                        d.metrics.connections_active.fetch_sub(1, Relaxed);
                        drop(slot);
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "depot: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    let wait_all = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(secs(l.shutdown_grace_s), wait_all)
        .await
        .is_err()
    {
        tracing::warn!(
            aborted = tasks.len(),
            "depot: grace period over; aborting the remaining connections"
        );
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
}

/// Writes a complete small response and closes. The close lingers: what the client is still
/// sending (the rest of an oversized head) is read and dropped for up to a second, since closing
/// with unread data would reset the connection and could destroy the answer before it is read.
async fn answer(s: &mut TcpStream, status: u16, reason: &str, extra: &str) {
    let body = format!("{reason}\n");
    let head = format!(
        "HTTP/1.1 {status} {}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n",
        hyper::StatusCode::from_u16(status).ok().and_then(|c| c.canonical_reason()).unwrap_or(""),
        body.len()
    );
    let _ = s.write_all(head.as_bytes()).await;
    let _ = s.write_all(body.as_bytes()).await;
    let _ = s.shutdown().await;
    let drain = async {
        let mut sink = [0u8; 16384];
        let mut total = 0usize;
        while total < 1 << 20 {
            match s.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}

/// Reads a message head (up to the blank line) within `limit` bytes; returns the head and any
/// bytes read past it. `Ok(None)` on a clean close before any byte.
async fn read_head(s: &mut TcpStream, limit: usize) -> io::Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + i + 4;
            let rest = buf.split_off(end);
            return Ok(Some((buf, rest)));
        }
        if buf.len() > limit {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too large"));
        }
    }
}

fn to_map(hs: &[httparse::Header<'_>]) -> HeaderMap {
    let mut m = HeaderMap::new();
    for h in hs {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(h.name.as_bytes()),
            HeaderValue::from_bytes(h.value),
        ) {
            m.append(n, v);
        }
    }
    m
}

async fn connection(
    depot: &Depot,
    mut down: TcpStream,
    peer: SocketAddr,
    mut shutdown: watch::Receiver<bool>,
) {
    let l = &depot.limits;
    let head = tokio::select! {
        r = tokio::time::timeout(secs(l.header_timeout_s), read_head(&mut down, l.max_header_bytes)) => r,
        _ = shutdown.changed() => return,
    };
    let (head, _rest) = match head {
        Err(_) => {
            return answer(
                &mut down,
                408,
                "request head not received within limits.header_timeout_s",
                "",
            )
            .await
        }
        Ok(Ok(Some(h))) => h,
        Ok(Ok(None)) => return,
        Ok(Err(e)) if e.kind() == io::ErrorKind::InvalidData => {
            return answer(
                &mut down,
                431,
                "request head larger than limits.max_header_bytes",
                "",
            )
            .await
        }
        Ok(Err(_)) => return,
    };
    let mut hbuf = vec![httparse::EMPTY_HEADER; l.max_headers];
    let mut req = httparse::Request::new(&mut hbuf);
    match req.parse(&head) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => {
            return answer(&mut down, 431, "too many header fields", "").await
        }
        _ => return answer(&mut down, 400, "malformed request", "").await,
    }
    let method = req.method.unwrap_or("").to_string();
    let path = req.path.unwrap_or("").to_string();
    let req_headers = to_map(req.headers);
    let (parsed, permit) = match depot.admit(&method, &path) {
        Ok(x) => x,
        Err(Refusal {
            status,
            reason,
            label,
        }) => {
            depot
                .metrics
                .inc("rejected_total", format!("reason=\"{label}\""));
            depot.metrics.code(status);
            tracing::warn!(%peer, status, %reason, "refused");
            let extra = match status {
                503 => "retry-after: 1\r\n",
                405 => "allow: GET, HEAD\r\n",
                _ => "",
            };
            return answer(&mut down, status, &reason, extra).await;
        }
    };
    let next = parsed.next_hop();
    let fail = |kind: &'static str, status: u16, msg: String| {
        depot
            .metrics
            .inc("upstream_errors_total", format!("kind=\"{kind}\""));
        depot.metrics.code(status);
        tracing::warn!(%peer, status, error = %msg, "upstream failed before the response head");
        (status, msg)
    };
    let mut up = match sock::connect(
        next,
        &depot.upstream.for_hop(&next),
        secs(l.connect_timeout_s),
    )
    .await
    {
        Ok(s) => s,
        Err(ConnectError::Timeout) => {
            let (s, m) = fail(
                "connect_timeout",
                504,
                format!("next hop {next}: connect timed out"),
            );
            return answer(&mut down, s, &m, "").await;
        }
        Err(e) => {
            let (s, m) = fail("connect", 502, format!("next hop {next}: {e}"));
            return answer(&mut down, s, &m, "").await;
        }
    };
    let mut out = format!(
        "{method} {} HTTP/1.1\r\nhost: {next}\r\nconnection: close\r\n",
        parsed.chain.path(&depot.key, parsed.index + 1)
    );
    for (n, v) in headers::request_upstream(&req_headers).iter() {
        out.push_str(&format!("{n}: {}\r\n", v.to_str().unwrap_or("")));
    }
    out.push_str("\r\n");
    let resp_head = async {
        up.write_all(out.as_bytes()).await?;
        read_head(&mut up, MAX_RESPONSE_HEAD).await
    };
    let (rhead, rest) =
        match tokio::time::timeout(secs(l.upstream_header_timeout_s), resp_head).await {
            Err(_) => {
                let (s, m) = fail(
                    "header_timeout",
                    504,
                    format!("next hop {next}: no response head in time"),
                );
                return answer(&mut down, s, &m, "").await;
            }
            Ok(Ok(Some(x))) => x,
            Ok(Ok(None)) | Ok(Err(_)) => {
                let (s, m) = fail(
                    "reset",
                    502,
                    format!("next hop {next}: closed or reset before the response head"),
                );
                return answer(&mut down, s, &m, "").await;
            }
        };
    let mut rh = vec![httparse::EMPTY_HEADER; 128];
    let mut resp = httparse::Response::new(&mut rh);
    if !matches!(resp.parse(&rhead), Ok(httparse::Status::Complete(_))) {
        let (s, m) = fail(
            "reset",
            502,
            format!("next hop {next}: malformed response head"),
        );
        return answer(&mut down, s, &m, "").await;
    }
    let status = resp.code.unwrap_or(502);
    let up_headers = to_map(resp.headers);
    let chunked = up_headers.get_all("transfer-encoding").iter().any(|v| {
        v.to_str()
            .map(|s| s.to_ascii_lowercase().contains("chunked"))
            .unwrap_or(false)
    });
    let length: Option<u64> = up_headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let bodyless =
        method == "HEAD" || status == 204 || status == 304 || (100..200).contains(&status);
    if !bodyless && !chunked && length.is_none() {
        let (s, m) = fail("reset", 502, format!("next hop {next}: response without Content-Length or chunked framing (truncation could not be detected)"));
        return answer(&mut down, s, &m, "").await;
    }
    depot.metrics.code(status);
    let mut head_out = format!("HTTP/1.1 {status} {}\r\n", resp.reason.unwrap_or(""));
    for (n, v) in headers::response_downstream(&up_headers).iter() {
        head_out.push_str(&format!("{n}: {}\r\n", v.to_str().unwrap_or("")));
    }
    if chunked && !bodyless {
        head_out.push_str("transfer-encoding: chunked\r\n");
    }
    head_out.push_str("connection: close\r\n\r\n");
    let expected = if bodyless {
        Some(0)
    } else if chunked {
        None
    } else {
        length
    };
    let mut acct = Account::new(Meta {
        metrics: depot.metrics.clone(),
        hop: next.to_string(),
        peer,
        target: parsed.chain.target.clone(),
        status,
        expected,
        permit: Some(permit),
    });
    let result = relay_body(
        depot,
        &mut up,
        &mut down,
        head_out.as_bytes(),
        &rest,
        expected,
        &mut acct,
    )
    .await;
    match result {
        Ok(()) => {
            acct.finish(Outcome::Complete);
            let _ = down.shutdown().await;
        }
        Err((o, e)) => {
            acct.finish(o);
            // Closed without completing the body (dropping the socket sends a FIN, as hyper
            // does): the client keeps what arrived, so `curl -C -` can resume from there.
            tracing::debug!(%peer, error = %e, "splice relay failed");
        }
    }
}

type RelayError = (Outcome, io::Error);

/// `f` within `d`, a time-out being an I/O error.
async fn timed<T>(
    d: Duration,
    f: impl std::future::Future<Output = io::Result<T>>,
) -> io::Result<T> {
    match tokio::time::timeout(d, f).await {
        Ok(r) => r,
        Err(_) => Err(io::Error::new(io::ErrorKind::TimedOut, "timed out")),
    }
}

async fn relay_body(
    depot: &Depot,
    up: &mut TcpStream,
    down: &mut TcpStream,
    head: &[u8],
    early: &[u8],
    expected: Option<u64>,
    acct: &mut Account,
) -> Result<(), RelayError> {
    let l = &depot.limits;
    let send_t = secs(l.send_timeout_s);
    let gone = |e: io::Error| (Outcome::ClientGone, e);
    timed(send_t, down.write_all(head)).await.map_err(gone)?;
    let mut remaining = expected;
    // Body bytes that arrived with the upstream's head.
    let take = match remaining {
        Some(r) => early.len().min(r as usize),
        None => early.len(),
    };
    if take > 0 {
        timed(send_t, down.write_all(&early[..take]))
            .await
            .map_err(gone)?;
        acct.add(take as u64);
        remaining = remaining.map(|r| r - take as u64);
    }
    let (pr, pw) = pipe(depot.buffer_bytes).map_err(|e| (Outcome::UpstreamError, e))?;
    let cap = depot.buffer_bytes;
    loop {
        if remaining == Some(0) {
            return Ok(());
        }
        let want = remaining.map_or(cap, |r| r.min(cap as u64) as usize);
        let n = loop {
            match up.try_io(Interest::READABLE, || {
                splice(up.as_raw_fd(), pw.as_raw_fd(), want)
            }) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    timed(secs(l.upstream_read_timeout_s), up.readable())
                        .await
                        .map_err(|e| (Outcome::UpstreamTimeout, e))?;
                }
                Err(e) => return Err((Outcome::UpstreamError, e)),
            }
        };
        if n == 0 {
            return match remaining {
                None => Ok(()),
                Some(r) => Err((
                    Outcome::UpstreamError,
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("upstream closed {r} bytes early"),
                    ),
                )),
            };
        }
        let mut left = n;
        while left > 0 {
            match down.try_io(Interest::WRITABLE, || {
                splice(pr.as_raw_fd(), down.as_raw_fd(), left)
            }) {
                Ok(m) => left -= m,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    timed(send_t, down.writable()).await.map_err(gone)?;
                }
                Err(e) => return Err(gone(e)),
            }
        }
        acct.add(n as u64);
        remaining = remaining.map(|r| r - n as u64);
    }
}

/// A non-blocking pipe with room for `size` bytes (F_SETPIPE_SZ; the kernel rounds up to pages
/// and caps unprivileged users at fs.pipe-max-size).
fn pipe(size: usize) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two fresh descriptors that we now own.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: a valid pipe fd; failure leaves the default size, which still works.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, size as libc::c_int) };
    Ok((r, w))
}

/// One splice(2) call, non-blocking on the pipe side; the sockets are non-blocking already.
fn splice(from: RawFd, to: RawFd, len: usize) -> io::Result<usize> {
    // SAFETY: valid descriptors; null offsets (sockets and pipes have none).
    let n = unsafe {
        libc::splice(
            from,
            std::ptr::null_mut(),
            to,
            std::ptr::null_mut(),
            len,
            libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
