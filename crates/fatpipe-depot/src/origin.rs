//! Origin mode: the "modified content provider" of the paper (seed note §2.2, §2.9 item 3). A
//! plain download is answered with a 302 into the configured chain (so curl -L, wget and
//! browsers follow it unmodified); the last depot's own request, recognisable by its signed
//! chain URL at the origin's position, is served the file.

use crate::chain::{self, Chain, Role, PREFIX};
use crate::config::{AutoSection, ChainRule, Limits};
use crate::files::{self, FileBody, FileInfo, Span};
use crate::metrics::Metrics;
use crate::route;
use crate::server::{reply, Body, ConnInfo, Handler};
use crate::sign::Key;
use crate::transfer::{Meta, Tracked};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Semaphore;

pub struct Origin {
    /// Canonical root directory.
    pub root: PathBuf,
    pub key: Key,
    pub advertise: SocketAddr,
    pub validity_s: u64,
    pub rules: Vec<ChainRule>,
    pub auto: Option<AutoSection>,
    pub limits: Limits,
    pub metrics: Arc<Metrics>,
    pub transfers: Arc<Semaphore>,
}

fn header<'a>(req: &'a Request<Incoming>, name: header::HeaderName) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

impl Origin {
    fn refuse(
        &self,
        status: u16,
        label: &'static str,
        reason: &str,
        conn: &ConnInfo,
    ) -> Response<Body> {
        self.metrics
            .inc("rejected_total", format!("reason=\"{label}\""));
        tracing::warn!(peer = %conn.peer, status, reason, "refused");
        reply(status, reason)
    }

    /// The depots for a plain request to `path`, if any.
    fn depots_for(&self, path: &str, conn: &ConnInfo) -> Vec<SocketAddr> {
        if let Some(d) = route::static_chain(&self.rules, path) {
            return d.to_vec();
        }
        if let Some(auto) = &self.auto {
            if let Some((d, gain)) = route::auto_chain(auto, conn.rtt) {
                tracing::debug!(peer = %conn.peer, rtt_ms = conn.rtt.map(|r| r.as_secs_f64() * 1e3), gain, "auto chain");
                return d.to_vec();
            }
        }
        Vec::new()
    }

    async fn answer(self: Arc<Self>, req: Request<Incoming>, conn: ConnInfo) -> Response<Body> {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            let mut r = self.refuse(405, "method", "only GET and HEAD", &conn);
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        let pq = req
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        if pq.starts_with(PREFIX) {
            // The last depot's request: served only when signed for the origin's position.
            let parsed = match chain::parse(&pq).and_then(|p| {
                p.verify(&self.key, chain::unix_now(), self.validity_s, Role::Origin)
                    .map(|()| p)
            }) {
                Ok(p) => p,
                Err(r) => return self.refuse(403, r.label(), &r.to_string(), &conn),
            };
            let hop = format!("local via {}", parsed.chain.hops[parsed.index - 1]);
            return match files::resolve(&self.root, &parsed.chain.target) {
                Some(info) => {
                    self.serve(&req, info, &parsed.chain.target, conn, hop)
                        .await
                }
                None => reply(404, "not found"),
            };
        }
        let Some(info) = files::resolve(&self.root, &pq) else {
            return reply(404, "not found");
        };
        let path = pq.split('?').next().unwrap_or("/");
        let depots = self.depots_for(path, &conn);
        if depots.is_empty() {
            return self.serve(&req, info, &pq, conn, "local".into()).await;
        }
        let mut hops = depots;
        hops.push(self.advertise);
        let expires = chain::unix_now() + self.validity_s;
        let c = match Chain::new(hops, expires, pq.clone()) {
            Ok(c) => c,
            Err(e) => return reply(500, &format!("cannot build the chain: {e}")),
        };
        let url = c.url(&self.key, 0);
        tracing::info!(peer = %conn.peer, target = %pq, first_depot = %c.hops[0], depots = c.hops.len() - 1, "redirect");
        let mut r = reply(302, &format!("redirect to the depot chain: {url}"));
        *r.status_mut() = StatusCode::FOUND;
        let h = r.headers_mut();
        h.insert(
            header::LOCATION,
            HeaderValue::from_str(&url).expect("ASCII URL"),
        );
        // The URL is signed and expires: no cache may keep it.
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    }

    async fn serve(
        &self,
        req: &Request<Incoming>,
        info: FileInfo,
        target: &str,
        conn: ConnInfo,
        hop: String,
    ) -> Response<Body> {
        let Ok(permit) = self.transfers.clone().try_acquire_owned() else {
            let mut r = self.refuse(
                503,
                "max_transfers",
                "busy: limits.max_transfers reached",
                &conn,
            );
            r.headers_mut()
                .insert("retry-after", HeaderValue::from_static("1"));
            return r;
        };
        let mut builder = Response::builder()
            .header(header::CONTENT_TYPE, info.content_type.as_str())
            .header(header::ETAG, info.etag.as_str())
            .header(header::LAST_MODIFIED, files::http_date(info.modified))
            .header(header::ACCEPT_RANGES, "bytes");
        if files::none_match(header(req, header::IF_NONE_MATCH), &info) {
            return builder
                .status(304)
                .body(crate::server::text(""))
                .expect("valid response");
        }
        let range = if files::if_range_holds(header(req, header::IF_RANGE), &info) {
            files::span(header(req, header::RANGE), info.len)
        } else {
            Span::Full
        };
        let (status, offset, len) = match range {
            Span::Full => (200, 0, info.len),
            Span::Part(a, b) => {
                builder =
                    builder.header(header::CONTENT_RANGE, format!("bytes {a}-{b}/{}", info.len));
                (206, a, b - a + 1)
            }
            Span::Unsatisfiable => {
                return builder
                    .status(416)
                    .header(header::CONTENT_RANGE, format!("bytes */{}", info.len))
                    .body(crate::server::text(""))
                    .expect("valid response");
            }
        };
        builder = builder.status(status).header(header::CONTENT_LENGTH, len);
        let head = req.method() == Method::HEAD;
        let body = match FileBody::open(&info, offset, if head { 0 } else { len }).await {
            Ok(b) => b,
            Err(e) => return reply(500, &format!("cannot read the file: {e}")),
        };
        let meta = Meta {
            metrics: self.metrics.clone(),
            hop,
            peer: conn.peer,
            target: target.split('?').next().unwrap_or("").to_string(),
            status,
            expected: Some(if head { 0 } else { len }),
            permit: Some(permit),
        };
        builder
            .body(Tracked::new(body, meta, None).boxed_unsync())
            .expect("valid response")
    }
}

impl Handler for Origin {
    async fn handle(self: Arc<Self>, req: Request<Incoming>, conn: ConnInfo) -> Response<Body> {
        let m = self.metrics.clone();
        let r = self.answer(req, conn).await;
        m.code(r.status().as_u16());
        r
    }
}
