//! A client connection that fails when a write stays blocked too long: a client that stops
//! reading (or reads a byte a minute) would otherwise hold a transfer, its upstream connection
//! and its buffers forever. Reads are not timed here: hyper's header read timeout bounds a slow
//! request head, and a request body is not expected.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{sleep, Instant, Sleep};

pub struct StallGuard<S> {
    inner: S,
    limit: Duration,
    timer: Pin<Box<Sleep>>,
    armed: bool,
}

impl<S> StallGuard<S> {
    pub fn new(inner: S, limit: Duration) -> Self {
        StallGuard {
            inner,
            limit,
            timer: Box::pin(sleep(limit)),
            armed: false,
        }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }
}

/// Turns a pending write into an error once the stall has lasted `limit`; any progress disarms.
fn guard<T>(
    r: Poll<io::Result<T>>,
    mut timer: Pin<&mut Sleep>,
    armed: &mut bool,
    limit: Duration,
    cx: &mut Context<'_>,
) -> Poll<io::Result<T>> {
    match r {
        Poll::Pending => {
            if !*armed {
                *armed = true;
                timer.as_mut().reset(Instant::now() + limit);
            }
            match timer.poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "client accepted no data within limits.send_timeout_s",
                ))),
                Poll::Pending => Poll::Pending,
            }
        }
        ready => {
            *armed = false;
            ready
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StallGuard<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StallGuard<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let p = &mut *self;
        let r = Pin::new(&mut p.inner).poll_write(cx, buf);
        guard(r, p.timer.as_mut(), &mut p.armed, p.limit, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let p = &mut *self;
        let r = Pin::new(&mut p.inner).poll_write_vectored(cx, bufs);
        guard(r, p.timer.as_mut(), &mut p.armed, p.limit, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let p = &mut *self;
        let r = Pin::new(&mut p.inner).poll_flush(cx);
        guard(r, p.timer.as_mut(), &mut p.armed, p.limit, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
