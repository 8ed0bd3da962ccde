//! One response body on its way to a client: bytes counted per hop, the upstream's silences
//! bounded, the transfer slot held until the body ends, and one log line with the outcome.
//!
//! The body is never buffered here: each frame is handed on as it comes, and the next one is
//! asked for only when the client's connection has taken the last (hyper polls a response body
//! only when it can write). That is the pipeline of the paper: memory per transfer is bounded by
//! the upstream reader's buffer and the kernel's socket buffers, whatever the file size.

use crate::metrics::{HopStats, Metrics};
use crate::server::BoxError;
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::{Instant, Sleep};

/// Who a transfer is for and from, for the log line and the metrics.
pub struct Meta {
    pub metrics: Arc<Metrics>,
    pub hop: String,
    pub peer: SocketAddr,
    pub target: String,
    pub status: u16,
    /// Bytes the body should carry (Content-Length, or 0 for HEAD/204/304), if known.
    pub expected: Option<u64>,
    pub permit: Option<OwnedSemaphorePermit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Complete,
    UpstreamError,
    UpstreamTimeout,
    /// The client stopped taking data (send timeout) or went away.
    ClientGone,
}

/// The accounting of one transfer: bytes per hop, the active count, and on drop the outcome in
/// the metrics and one log line. A transfer dropped without an outcome is a client that left.
pub struct Account {
    meta: Meta,
    hop: Arc<HopStats>,
    start: Instant,
    bytes: u64,
    outcome: Option<Outcome>,
}

impl Account {
    pub fn new(meta: Meta) -> Account {
        meta.metrics.transfers_active.fetch_add(1, Relaxed);
        let hop = meta.metrics.hop(&meta.hop);
        Account {
            meta,
            hop,
            start: Instant::now(),
            bytes: 0,
            outcome: None,
        }
    }

    pub fn add(&mut self, n: u64) {
        self.bytes += n;
        self.hop.bytes.fetch_add(n, Relaxed);
    }

    pub fn finish(&mut self, o: Outcome) {
        self.outcome.get_or_insert(o);
    }

    pub fn finished(&self) -> bool {
        self.outcome.is_some()
    }
}

pub struct Tracked<B> {
    inner: B,
    acct: Account,
    /// Longest wait for the next upstream frame (none for local files).
    read_limit: Option<Duration>,
    timer: Option<Pin<Box<Sleep>>>,
    waiting: bool,
}

impl<B> Tracked<B> {
    pub fn new(inner: B, meta: Meta, read_limit: Option<Duration>) -> Self {
        Tracked {
            inner,
            acct: Account::new(meta),
            read_limit,
            timer: None,
            waiting: false,
        }
    }
}

impl<B> Body for Tracked<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.acct.finished() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                this.waiting = false;
                if let Some(d) = frame.data_ref() {
                    this.acct.add(d.len() as u64);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.acct.finish(Outcome::UpstreamError);
                let e: BoxError = e.into();
                tracing::debug!(error = %e, hop = %this.acct.meta.hop, "upstream body failed");
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.acct.finish(Outcome::Complete);
                Poll::Ready(None)
            }
            Poll::Pending => {
                let Some(limit) = this.read_limit else {
                    return Poll::Pending;
                };
                // The silence counts from the first time we find the upstream with nothing to
                // give, not from the last frame: a client that reads slowly is not the upstream's
                // fault (and the stall guard handles it).
                let timer = this
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                if !this.waiting {
                    this.waiting = true;
                    timer.as_mut().reset(Instant::now() + limit);
                }
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        this.acct.finish(Outcome::UpstreamTimeout);
                        Poll::Ready(Some(Err(
                            "upstream sent nothing within limits.upstream_read_timeout_s".into(),
                        )))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.acct.finished() || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        let m = &self.meta.metrics;
        m.transfers_active.fetch_sub(1, Relaxed);
        let secs = self.start.elapsed().as_secs_f64();
        // A body hyper never polled because it had nothing to carry (HEAD, 304) is complete.
        let complete = self.outcome == Some(Outcome::Complete)
            || (self.outcome.is_none() && self.meta.expected == Some(self.bytes));
        let result = match (complete, self.outcome) {
            (true, _) => "complete",
            (false, Some(Outcome::UpstreamTimeout)) => "upstream_timeout",
            (false, Some(Outcome::UpstreamError)) => "upstream_error",
            (false, Some(Outcome::Complete)) => unreachable!("complete is complete"),
            (false, Some(Outcome::ClientGone)) | (false, None) => "client_gone",
        };
        match result {
            "upstream_timeout" => m.inc("upstream_errors_total", "kind=\"read_timeout\"".into()),
            "upstream_error" => m.inc("upstream_errors_total", "kind=\"reset\"".into()),
            _ => {}
        }
        m.inc(
            "transfers_total",
            format!(
                "result=\"{}\"",
                if complete { "complete" } else { "aborted" }
            ),
        );
        self.hop.transfers.fetch_add(1, Relaxed);
        self.hop.busy_ns.fetch_add((secs * 1e9) as u64, Relaxed);
        let bps = if secs > 0.0 {
            self.bytes as f64 * 8.0 / secs
        } else {
            0.0
        };
        if complete && self.bytes > 0 {
            self.hop.last_bps.store(bps as u64, Relaxed);
        }
        if complete {
            tracing::info!(peer = %self.meta.peer, hop = %self.meta.hop, target = %self.meta.target,
                status = self.meta.status, bytes = self.bytes, secs, mbps = bps / 1e6, result, "transfer");
        } else {
            tracing::warn!(peer = %self.meta.peer, hop = %self.meta.hop, target = %self.meta.target,
                status = self.meta.status, bytes = self.bytes, expected = self.meta.expected, secs, result,
                "transfer aborted");
        }
        drop(self.meta.permit.take());
    }
}
