//! The origin's files: path resolution confined to the root, validators (ETag, Last-Modified),
//! single byte ranges (RFC 9110 §14) and a streaming body.

use crate::server::BoxError;
use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use percent_encoding::percent_decode_str;
use std::path::{Component, Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::SystemTime;
use tokio::io::{AsyncRead, AsyncSeekExt, ReadBuf};

/// Size of each read from disk and so of each body frame.
pub const CHUNK: usize = 256 * 1024;

#[derive(Debug, Clone)]
pub struct FileInfo {
    pub path: PathBuf,
    pub len: u64,
    pub etag: String,
    pub modified: SystemTime,
    pub content_type: String,
}

/// Maps a request path (query ignored) to a regular file under `root` (already canonical).
/// `None` for anything else: missing, a directory, outside the root (`..`, a symlink out).
pub fn resolve(root: &Path, path_and_query: &str) -> Option<FileInfo> {
    let path = path_and_query.split('?').next().unwrap_or("");
    let decoded = percent_decode_str(path).decode_utf8().ok()?;
    if decoded.contains('\0') {
        return None;
    }
    let mut rel = PathBuf::new();
    for c in Path::new(decoded.as_ref()).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(s) => rel.push(s),
            Component::ParentDir | Component::Prefix(_) => return None,
        }
    }
    if rel.as_os_str().is_empty() {
        return None;
    }
    let full = root.join(&rel).canonicalize().ok()?;
    if !full.starts_with(root) {
        return None;
    }
    let meta = std::fs::metadata(&full).ok()?;
    if !meta.is_file() {
        return None;
    }
    use std::os::unix::fs::MetadataExt;
    let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
    let mtime_ns = (meta.mtime() as i128) * 1_000_000_000 + meta.mtime_nsec() as i128;
    Some(FileInfo {
        etag: format!("\"{:x}-{:x}-{:x}\"", meta.ino(), meta.len(), mtime_ns),
        len: meta.len(),
        modified,
        content_type: mime_guess::from_path(&full)
            .first_or_octet_stream()
            .essence_str()
            .to_string(),
        path: full,
    })
}

/// What to send for a request's `Range` (and `If-Range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    Full,
    /// First and last byte, inclusive.
    Part(u64, u64),
    Unsatisfiable,
}

/// One `bytes=` range against a file of `len` bytes. Several ranges, other units or a malformed
/// header give the whole file (RFC 9110 §14.2 lets a server ignore Range).
pub fn span(range: Option<&str>, len: u64) -> Span {
    let Some(spec) = range.and_then(|r| r.trim().strip_prefix("bytes=")) else {
        return Span::Full;
    };
    if spec.contains(',') {
        return Span::Full;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return Span::Full;
    };
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (a.trim(), b.trim()) {
        ("", suffix) => match num(suffix) {
            Some(0) => Span::Unsatisfiable,
            Some(_) if len == 0 => Span::Unsatisfiable,
            Some(n) => Span::Part(len.saturating_sub(n), len - 1),
            None => Span::Full,
        },
        (first, "") => match num(first) {
            Some(f) if f < len => Span::Part(f, len - 1),
            Some(_) => Span::Unsatisfiable,
            None => Span::Full,
        },
        (first, last) => match (num(first), num(last)) {
            (Some(f), Some(l)) if f <= l => {
                if f >= len {
                    Span::Unsatisfiable
                } else {
                    Span::Part(f, l.min(len - 1))
                }
            }
            _ => Span::Full,
        },
    }
}

/// True when `If-Range` allows the range: it names the current strong ETag, or the exact
/// Last-Modified date (RFC 9110 §13.1.5).
pub fn if_range_holds(if_range: Option<&str>, info: &FileInfo) -> bool {
    match if_range.map(str::trim) {
        None => true,
        Some(v) if v.starts_with('"') => v == info.etag,
        Some(v) if v.starts_with("W/") => false,
        Some(v) => httpdate::parse_http_date(v)
            .map(|d| d == truncate_secs(info.modified))
            .unwrap_or(false),
    }
}

/// True when `If-None-Match` lists the current ETag (or `*`): answer 304.
pub fn none_match(if_none_match: Option<&str>, info: &FileInfo) -> bool {
    if_none_match.is_some_and(|v| {
        v.split(',')
            .map(str::trim)
            .any(|t| t == "*" || t.trim_start_matches("W/") == info.etag)
    })
}

fn truncate_secs(t: SystemTime) -> SystemTime {
    let s = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s)
}

pub fn http_date(t: SystemTime) -> String {
    httpdate::fmt_http_date(truncate_secs(t))
}

/// `len` bytes of a file from `offset`, read in `CHUNK`s as the client takes them. A file that
/// ends early (truncated while served) is an error, never a short success.
pub struct FileBody {
    file: tokio::fs::File,
    remaining: u64,
    buf: BytesMut,
}

impl FileBody {
    pub async fn open(info: &FileInfo, offset: u64, len: u64) -> std::io::Result<FileBody> {
        let mut file = tokio::fs::File::open(&info.path).await?;
        if offset > 0 {
            file.seek(std::io::SeekFrom::Start(offset)).await?;
        }
        Ok(FileBody {
            file,
            remaining: len,
            buf: BytesMut::new(),
        })
    }
}

impl Body for FileBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.remaining == 0 {
            return Poll::Ready(None);
        }
        let want = this.remaining.min(CHUNK as u64) as usize;
        if this.buf.len() != want {
            this.buf = BytesMut::zeroed(want);
        }
        let mut rb = ReadBuf::new(&mut this.buf[..]);
        match Pin::new(&mut this.file).poll_read(cx, &mut rb) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(Ok(())) => {
                let n = rb.filled().len();
                if n == 0 {
                    return Poll::Ready(Some(Err(
                        "file shorter than announced (changed while served)".into(),
                    )));
                }
                this.remaining -= n as u64;
                let out = this.buf.split_to(n).freeze();
                this.buf = BytesMut::new();
                Poll::Ready(Some(Ok(Frame::data(out))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(span(None, 100), Span::Full);
        assert_eq!(span(Some("bytes=0-9"), 100), Span::Part(0, 9));
        assert_eq!(span(Some("bytes=90-"), 100), Span::Part(90, 99));
        assert_eq!(span(Some("bytes=90-200"), 100), Span::Part(90, 99));
        assert_eq!(span(Some("bytes=-10"), 100), Span::Part(90, 99));
        assert_eq!(span(Some("bytes=-1000"), 100), Span::Part(0, 99));
        assert_eq!(span(Some("bytes=100-"), 100), Span::Unsatisfiable);
        assert_eq!(span(Some("bytes=100-200"), 100), Span::Unsatisfiable);
        assert_eq!(span(Some("bytes=-0"), 100), Span::Unsatisfiable);
        assert_eq!(span(Some("bytes=0-"), 0), Span::Unsatisfiable);
        assert_eq!(span(Some("bytes=5-1"), 100), Span::Full);
        assert_eq!(span(Some("bytes=0-1,5-6"), 100), Span::Full);
        assert_eq!(span(Some("items=0-1"), 100), Span::Full);
        assert_eq!(span(Some("bytes=x-1"), 100), Span::Full);
        assert_eq!(span(Some("bytes=+1-2"), 100), Span::Full);
    }

    #[test]
    fn resolve_stays_in_the_root() {
        let base = std::env::temp_dir().join(format!("fpd-files-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/a.txt"), b"hello").unwrap();
        std::fs::write(base.join("secret"), b"no").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("link")).unwrap();
        let root = root.canonicalize().unwrap();
        let info = resolve(&root, "/sub/a.txt?x=1").unwrap();
        assert_eq!(info.len, 5);
        assert_eq!(info.content_type, "text/plain");
        assert!(resolve(&root, "/sub/%61.txt").is_some());
        for bad in [
            "/../secret",
            "/sub/../../secret",
            "/%2e%2e/secret",
            "/link",
            "/sub",
            "/",
            "/missing",
            "/a%00b",
        ] {
            assert!(resolve(&root, bad).is_none(), "{bad}");
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn validators() {
        let info = FileInfo {
            path: PathBuf::new(),
            len: 10,
            etag: "\"1-a-b\"".into(),
            modified: SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_700_000_000_500),
            content_type: String::new(),
        };
        assert!(if_range_holds(None, &info));
        assert!(if_range_holds(Some("\"1-a-b\""), &info));
        assert!(!if_range_holds(Some("\"1-a-c\""), &info));
        assert!(!if_range_holds(Some("W/\"1-a-b\""), &info));
        assert!(if_range_holds(Some(&http_date(info.modified)), &info));
        assert!(!if_range_holds(
            Some("Tue, 15 Nov 1994 08:12:31 GMT"),
            &info
        ));
        assert!(none_match(Some("\"x\", \"1-a-b\""), &info));
        assert!(none_match(Some("*"), &info));
        assert!(!none_match(Some("\"x\""), &info));
        assert!(!none_match(None, &info));
    }
}
