//! Entering a network namespace to open a socket there, then coming back. A socket stays in the
//! namespace it was created in, so one process can serve interfaces of several namespaces.

use super::{cvt, Fd};
use std::ffi::CString;
use std::io;

/// The file that names namespace `ns`: `ip netns` names live in /run/netns; an absolute path
/// (e.g. /proc/PID/ns/net) is taken as is; "" is the emulator's own namespace.
pub fn ns_path(ns: &str) -> Option<String> {
    if ns.is_empty() {
        None
    } else if ns.starts_with('/') {
        Some(ns.to_string())
    } else {
        Some(format!("/run/netns/{ns}"))
    }
}

fn open(path: &str) -> io::Result<Fd> {
    let c = CString::new(path).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: valid C string.
    let fd = cvt(unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?;
    Ok(Fd(fd))
}

/// Run `f` inside namespace `ns` (see [`ns_path`]) and return to the current one. The outer
/// error is about the namespace itself, the inner one is `f`'s. The process must be
/// single-threaded (setns changes the calling thread only; the emulator has one thread).
pub fn with_netns<T>(ns: &str, f: impl FnOnce() -> io::Result<T>) -> io::Result<io::Result<T>> {
    let Some(path) = ns_path(ns) else {
        return Ok(f());
    };
    let target = open(&path)?;
    let home = open("/proc/thread-self/ns/net")?;
    // SAFETY: valid namespace descriptors.
    cvt(unsafe { libc::setns(target.0, libc::CLONE_NEWNET) })?;
    let r = f();
    // SAFETY: as above; failing to return would leave every later socket in the wrong place.
    if unsafe { libc::setns(home.0, libc::CLONE_NEWNET) } != 0 {
        panic!(
            "cannot return to the original network namespace: {}",
            io::Error::last_os_error()
        );
    }
    Ok(r)
}
