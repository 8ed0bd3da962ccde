//! Which headers cross a depot (RFC 9110 §7.6.1 on hop-by-hop fields, RFC 9110 §14 on ranges).
//!
//! Requests: only what a download needs goes upstream: ranges and their validators (so resume
//! works end to end), the validators of conditional requests, User-Agent and Accept. Cookies,
//! credentials and Accept-Encoding stay behind (a depot is not the origin's domain, and an
//! identity body keeps Content-Length and ranges meaningful).
//! Responses: every end-to-end field comes back (status, Content-Length, Content-Type, ETag,
//! Last-Modified, Content-Range, Accept-Ranges, ...); hop-by-hop fields do not.

use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONNECTION};

/// Request fields relayed upstream.
pub const REQUEST_RELAYED: &[&str] = &[
    "range",
    "if-range",
    "if-match",
    "if-none-match",
    "if-modified-since",
    "if-unmodified-since",
    "user-agent",
    "accept",
    "accept-language",
];

/// Fields that belong to one connection (RFC 9110 §7.6.1, plus the obsolete proxy ones).
pub const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The `Via` value a depot adds (RFC 9110 §7.6.3).
pub const VIA: &str = "1.1 fatpipe-depot";

/// The request fields to send upstream.
pub fn request_upstream(from: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for name in REQUEST_RELAYED {
        for v in from.get_all(*name) {
            out.append(HeaderName::from_static(name), v.clone());
        }
    }
    append_via(from, &mut out);
    out
}

fn append_via(from: &HeaderMap, out: &mut HeaderMap) {
    let via = match from.get("via").and_then(|v| v.to_str().ok()) {
        Some(prev) if prev.len() < 1024 => format!("{prev}, {VIA}"),
        _ => VIA.to_string(),
    };
    if let Ok(v) = HeaderValue::from_str(&via) {
        out.insert("via", v);
    }
}

/// The response fields to send downstream: all but hop-by-hop ones and those the upstream's
/// `Connection` names.
pub fn response_downstream(from: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = from
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    let mut out = HeaderMap::new();
    for (name, v) in from {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n) || named.iter().any(|t| t == n) || n == "via" {
            continue;
        }
        out.append(name.clone(), v.clone());
    }
    append_via(from, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.append(
                HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        m
    }

    #[test]
    fn requests_carry_ranges_not_credentials() {
        let m = map(&[
            ("range", "bytes=100-"),
            ("if-range", "\"abc\""),
            ("cookie", "a=b"),
            ("authorization", "Basic x"),
            ("accept-encoding", "gzip"),
            ("user-agent", "curl/8"),
            ("connection", "keep-alive"),
        ]);
        let out = request_upstream(&m);
        assert_eq!(out.get("range").unwrap(), "bytes=100-");
        assert_eq!(out.get("if-range").unwrap(), "\"abc\"");
        assert_eq!(out.get("user-agent").unwrap(), "curl/8");
        for gone in ["cookie", "authorization", "accept-encoding", "connection"] {
            assert!(out.get(gone).is_none(), "{gone}");
        }
        assert_eq!(out.get("via").unwrap(), VIA);
    }

    #[test]
    fn responses_drop_hop_by_hop_and_connection_named() {
        let m = map(&[
            ("content-length", "10"),
            ("content-type", "application/octet-stream"),
            ("etag", "\"e\""),
            ("content-range", "bytes 0-9/20"),
            ("transfer-encoding", "chunked"),
            ("connection", "close, x-secret"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("via", "1.1 fatpipe-depot"),
        ]);
        let out = response_downstream(&m);
        for kept in ["content-length", "content-type", "etag", "content-range"] {
            assert_eq!(out.get(kept), m.get(kept), "{kept}");
        }
        for gone in ["transfer-encoding", "connection", "x-secret", "keep-alive"] {
            assert!(out.get(gone).is_none(), "{gone}");
        }
        assert_eq!(
            out.get("via").unwrap(),
            "1.1 fatpipe-depot, 1.1 fatpipe-depot"
        );
    }
}
