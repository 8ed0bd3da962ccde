//! Thin wrappers over the Linux calls the emulator makes (libc only): network namespaces,
//! AF_PACKET sockets, timerfd/epoll/signalfd and the monotonic clock.

pub mod ethtool;
pub mod netns;
pub mod packet;
pub mod poll;

use std::io;

/// `Err(last OS error)` when a libc call returned -1.
pub fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
#[inline]
pub fn mono_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds (the clock of the kernel's packet timestamps).
#[inline]
pub fn real_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(c: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(c, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// An owned file descriptor closed on drop.
#[derive(Debug)]
pub struct Fd(pub libc::c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own the descriptor.
        unsafe { libc::close(self.0) };
    }
}
