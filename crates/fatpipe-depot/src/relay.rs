//! Depot mode: check the signed chain URL, open the next hop's connection, forward the GET
//! re-signed for the next position, and stream the response back as it arrives.
//!
//! Failure semantics (the paper is silent, seed note §2.7): before the response head, the client
//! gets 403 (refused, and no upstream connection is opened), 502 (the next hop refused, reset or
//! closed), 503 (limits.max_transfers) or 504 (connect or head timed out); after the head, the
//! client connection is closed without completing the body (short Content-Length, or no final
//! chunk), so a truncated body never looks complete.

use crate::allow::AllowList;
use crate::chain::{self, Parsed, Reject, Role};
use crate::config::{secs, Limits, Upstream};
use crate::headers;
use crate::metrics::Metrics;
use crate::server::{reply, Body, ConnInfo, Handler};
use crate::sign::Key;
use crate::sock::{self, ConnectError};
use crate::transfer::{Meta, Tracked};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, HOST};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct Depot {
    pub key: Key,
    pub allow: AllowList,
    pub max_validity_s: u64,
    pub buffer_bytes: usize,
    pub limits: Limits,
    pub upstream: Upstream,
    pub metrics: Arc<Metrics>,
    pub transfers: Arc<Semaphore>,
}

/// A refusal before any upstream work: status and reason.
pub struct Refusal {
    pub status: u16,
    pub reason: String,
    pub label: &'static str,
}

impl Depot {
    /// Everything decided from the request line alone: method, signature, expiry, position and
    /// allow-list, then a transfer slot. Nothing here touches the network.
    pub fn admit(
        &self,
        method: &str,
        path_and_query: &str,
    ) -> Result<(Parsed, OwnedSemaphorePermit), Refusal> {
        if method != "GET" && method != "HEAD" {
            return Err(Refusal {
                status: 405,
                reason: "only GET and HEAD".into(),
                label: "method",
            });
        }
        let parsed = authorize(
            &self.key,
            &self.allow,
            self.max_validity_s,
            path_and_query,
            chain::unix_now(),
        )
        .map_err(|r| Refusal {
            status: 403,
            reason: r.to_string(),
            label: r.label(),
        })?;
        let permit = self
            .transfers
            .clone()
            .try_acquire_owned()
            .map_err(|_| Refusal {
                status: 503,
                reason: "busy: limits.max_transfers reached".into(),
                label: "max_transfers",
            })?;
        Ok((parsed, permit))
    }

    fn refused(&self, r: Refusal, conn: &ConnInfo) -> Response<Body> {
        self.metrics
            .inc("rejected_total", format!("reason=\"{}\"", r.label));
        tracing::warn!(peer = %conn.peer, status = r.status, reason = %r.reason, "refused");
        let mut resp = reply(r.status, &r.reason);
        if r.status == 503 {
            resp.headers_mut()
                .insert("retry-after", HeaderValue::from_static("1"));
        }
        if r.status == 405 {
            resp.headers_mut()
                .insert("allow", HeaderValue::from_static("GET, HEAD"));
        }
        resp
    }

    fn upstream_failed(
        &self,
        kind: &'static str,
        status: u16,
        msg: String,
        conn: &ConnInfo,
    ) -> Response<Body> {
        self.metrics
            .inc("upstream_errors_total", format!("kind=\"{kind}\""));
        tracing::warn!(peer = %conn.peer, status, error = %msg, "upstream failed before the response head");
        reply(status, &msg)
    }

    async fn relay(self: Arc<Self>, req: Request<Incoming>, conn: ConnInfo) -> Response<Body> {
        let method = req.method().clone();
        let pq = req
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let (parsed, permit) = match self.admit(method.as_str(), &pq) {
            Ok(x) => x,
            Err(r) => return self.refused(r, &conn),
        };
        let next = parsed.next_hop();
        let l = &self.limits;
        let stream = match sock::connect(
            next,
            &self.upstream.for_hop(&next),
            secs(l.connect_timeout_s),
        )
        .await
        {
            Ok(s) => s,
            Err(ConnectError::Timeout) => {
                return self.upstream_failed(
                    "connect_timeout",
                    504,
                    format!("next hop {next}: connect timed out"),
                    &conn,
                )
            }
            Err(ConnectError::Io(e)) => {
                return self.upstream_failed("connect", 502, format!("next hop {next}: {e}"), &conn)
            }
            Err(ConnectError::Options(e)) => {
                return self.upstream_failed(
                    "refused_options",
                    502,
                    format!("next hop {next}: {e}"),
                    &conn,
                )
            }
        };
        let (mut sender, up_conn) = match hyper::client::conn::http1::Builder::new()
            .max_buf_size(self.buffer_bytes)
            .handshake(TokioIo::new(stream))
            .await
        {
            Ok(x) => x,
            Err(e) => {
                return self.upstream_failed("connect", 502, format!("next hop {next}: {e}"), &conn)
            }
        };
        tokio::spawn(async move {
            if let Err(e) = up_conn.await {
                tracing::debug!(%next, error = %e, "upstream connection ended with an error");
            }
        });
        let mut up = Request::builder()
            .method(method.clone())
            .uri(parsed.chain.path(&self.key, parsed.index + 1))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .expect("valid request");
        *up.headers_mut() = headers::request_upstream(req.headers());
        up.headers_mut().insert(
            HOST,
            HeaderValue::from_str(&next.to_string()).expect("address"),
        );
        up.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        let resp =
            match tokio::time::timeout(secs(l.upstream_header_timeout_s), sender.send_request(up))
                .await
            {
                Err(_) => {
                    return self.upstream_failed(
                        "header_timeout",
                        504,
                        format!("next hop {next}: no response head in time"),
                        &conn,
                    )
                }
                Ok(Err(e)) => {
                    return self.upstream_failed(
                        "reset",
                        502,
                        format!("next hop {next}: {e}"),
                        &conn,
                    )
                }
                Ok(Ok(r)) => r,
            };
        let (parts, body) = resp.into_parts();
        let status = parts.status.as_u16();
        let expected = if method == Method::HEAD
            || parts.status == StatusCode::NO_CONTENT
            || parts.status == StatusCode::NOT_MODIFIED
        {
            Some(0)
        } else {
            parts
                .headers
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
        };
        let meta = Meta {
            metrics: self.metrics.clone(),
            hop: next.to_string(),
            peer: conn.peer,
            target: parsed.chain.target.clone(),
            status,
            expected,
            permit: Some(permit),
        };
        let body = Tracked::new(body, meta, Some(secs(l.upstream_read_timeout_s))).boxed_unsync();
        let mut out = Response::new(body);
        *out.status_mut() = parts.status;
        *out.headers_mut() = headers::response_downstream(&parts.headers);
        out
    }
}

/// The checks of a chain URL at a depot: syntax, signature, expiry, position, allow-list.
pub fn authorize(
    key: &Key,
    allow: &AllowList,
    max_validity_s: u64,
    path_and_query: &str,
    now: u64,
) -> Result<Parsed, Reject> {
    let p = chain::parse(path_and_query)?;
    p.verify(key, now, max_validity_s, Role::Depot)?;
    let next = p.next_hop();
    if !allow.permits(&next) {
        return Err(Reject::NotAllowed(next));
    }
    Ok(p)
}

impl Handler for Depot {
    async fn handle(self: Arc<Self>, req: Request<Incoming>, conn: ConnInfo) -> Response<Body> {
        let m = self.metrics.clone();
        let r = self.relay(req, conn).await;
        m.code(r.status().as_u16());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::Chain;

    #[test]
    fn allow_list_is_checked_after_the_signature() {
        let key = Key::from_bytes(&[3u8; 32]).unwrap();
        let c = Chain::new(
            vec![
                "127.0.0.1:9001".parse().unwrap(),
                "127.0.0.1:9002".parse().unwrap(),
                "127.0.0.1:8080".parse().unwrap(),
            ],
            2_000_000_000,
            "/f".into(),
        )
        .unwrap();
        let now = 1_999_999_999;
        let only_9002 = AllowList::parse(&["127.0.0.1:9002".into()], "a").unwrap();
        let only_8080 = AllowList::parse(&["127.0.0.1:8080".into()], "a").unwrap();
        assert!(authorize(&key, &only_9002, 3600, &c.path(&key, 0), now).is_ok());
        assert_eq!(
            authorize(&key, &only_9002, 3600, &c.path(&key, 1), now).unwrap_err(),
            Reject::NotAllowed("127.0.0.1:8080".parse().unwrap())
        );
        assert!(authorize(&key, &only_8080, 3600, &c.path(&key, 1), now).is_ok());
        // The origin's position is never relayed by a depot, whatever its allow-list.
        let all = AllowList::parse(&["0.0.0.0/0".into()], "a").unwrap();
        assert_eq!(
            authorize(&key, &all, 3600, &c.path(&key, 2), now).unwrap_err(),
            Reject::WrongPosition
        );
        // A bad signature is reported as such even when the hop would not be allowed either.
        let other = Key::from_bytes(&[4u8; 32]).unwrap();
        assert_eq!(
            authorize(&key, &AllowList::default(), 3600, &c.path(&other, 0), now).unwrap_err(),
            Reject::BadSignature
        );
    }
}
