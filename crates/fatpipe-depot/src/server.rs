//! The accept loop shared by the depot, the origin and the metrics endpoint: HTTP/1.1 (hyper) with
//! the connection limits, and graceful shutdown (stop accepting, let transfers finish within the
//! grace period, then abort the rest).

use crate::config::{secs, Limits};
use crate::metrics::Metrics;
use crate::sock;
use crate::stall::StallGuard;
use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// Every response body: a relayed upstream body, a file, or a short text.
pub type Body = UnsyncBoxBody<Bytes, BoxError>;

/// What a handler knows of the client connection.
#[derive(Clone, Copy, Debug)]
pub struct ConnInfo {
    pub peer: SocketAddr,
    /// The kernel's RTT estimate of the connection when it was accepted (TCP_INFO).
    pub rtt: Option<Duration>,
}

pub trait Handler: Send + Sync + 'static {
    fn handle(
        self: Arc<Self>,
        req: Request<Incoming>,
        conn: ConnInfo,
    ) -> impl Future<Output = Response<Body>> + Send;
}

/// A short text body.
pub fn text(s: impl Into<String>) -> Body {
    use http_body_util::BodyExt;
    http_body_util::Full::new(Bytes::from(s.into()))
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A complete small response.
pub fn reply(status: u16, msg: &str) -> Response<Body> {
    let mut r = Response::new(text(format!("{msg}\n")));
    *r.status_mut() = hyper::StatusCode::from_u16(status).expect("valid status");
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Serves `listener` until `shutdown` turns true, then drains. `label` names it in logs.
///
/// hyper's per-connection buffer is capped at the request-head limit: it holds the head being
/// read, and the response frames queued for writing (hyper asks the body for the next frame only
/// below the cap). So at most one body frame waits in user space on the client side; hyper's
/// default cap (about 400 KiB) would otherwise be most of a depot's memory per transfer.
pub async fn serve<H: Handler>(
    label: &'static str,
    listener: TcpListener,
    handler: Arc<H>,
    limits: Limits,
    metrics: Arc<Metrics>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut builder = http1::Builder::new();
    builder
        .max_buf_size((limits.max_header_bytes + 1024).max(8192))
        .timer(TokioTimer::new())
        .header_read_timeout(secs(limits.header_timeout_s))
        .max_header_size(limits.max_header_bytes)
        .max_headers(limits.max_headers)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut tasks = JoinSet::new();
    let send_timeout = secs(limits.send_timeout_s);
    loop {
        tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, peer)) => {
                    let Ok(slot) = slots.clone().try_acquire_owned() else {
                        metrics.connections_refused.fetch_add(1, Relaxed);
                        tracing::warn!(%peer, limit = limits.max_connections, "{label}: connection refused: limits.max_connections reached");
                        drop(stream);
                        continue;
                    };
                    sock::accepted(&stream);
                    let info = ConnInfo { peer, rtt: sock::smoothed_rtt(&stream) };
                    metrics.connections_total.fetch_add(1, Relaxed);
                    metrics.connections_active.fetch_add(1, Relaxed);
                    let h = handler.clone();
                    let svc = service_fn(move |req| {
                        let h = h.clone();
                        async move { Ok::<_, Infallible>(h.handle(req, info).await) }
                    });
                    let io = TokioIo::new(StallGuard::new(stream, send_timeout));
                    let conn = graceful.watch(builder.serve_connection(io, svc));
                    let m = metrics.clone();
                    tasks.spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(%peer, error = %e, "{label}: connection ended with an error");
                        }
                        m.connections_active.fetch_sub(1, Relaxed);
                        drop(slot);
                    });
                }
                Err(e) => {
                    // EMFILE/ENFILE and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "{label}: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
        }
    }
    drop(listener);
    let open = tasks.len();
    if open > 0 {
        tracing::info!(
            open,
            grace_s = limits.shutdown_grace_s,
            "{label}: stopped accepting; waiting for transfers"
        );
    }
    let grace = secs(limits.shutdown_grace_s);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(grace) => {
            tracing::warn!(aborted = tasks.len(), "{label}: grace period over; aborting the remaining connections");
            tasks.abort_all();
        }
    }
    while tasks.join_next().await.is_some() {}
}

/// The metrics endpoint: `GET /metrics` in Prometheus text format.
pub struct MetricsHandler(pub Arc<Metrics>);

impl Handler for MetricsHandler {
    async fn handle(self: Arc<Self>, req: Request<Incoming>, _c: ConnInfo) -> Response<Body> {
        if req.uri().path() != "/metrics" {
            return reply(404, "not found (try /metrics)");
        }
        let mut r = Response::new(text(self.0.render()));
        r.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
        );
        r
    }
}
