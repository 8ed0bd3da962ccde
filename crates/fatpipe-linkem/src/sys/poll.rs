//! The event loop's kernel objects: epoll, a timerfd armed at absolute CLOCK_MONOTONIC
//! deadlines, a signalfd for SIGTERM/SIGINT, and the parent-death signal.

use super::{cvt, Fd};
use std::io;
use std::mem::zeroed;

pub struct Epoll(Fd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain call.
        Ok(Epoll(Fd(cvt(unsafe {
            libc::epoll_create1(libc::EPOLL_CLOEXEC)
        })?)))
    }
    pub fn add(&self, fd: i32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: valid event.
        cvt(unsafe { libc::epoll_ctl(self.0 .0, libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }
    /// Wait at most `timeout_ns` (None: forever) with nanosecond precision (epoll_pwait2, Linux
    /// 5.11; with a 1 ns timer slack the hrtimer fires on time), returning how many are ready.
    /// One syscall per wait, against three for a timerfd (arm, wait, read).
    pub fn wait_ns(
        &self,
        evs: &mut [libc::epoll_event],
        timeout_ns: Option<u64>,
    ) -> io::Result<usize> {
        let ts = timeout_ns.map(|t| libc::timespec {
            tv_sec: (t / 1_000_000_000) as libc::time_t,
            tv_nsec: (t % 1_000_000_000) as libc::c_long,
        });
        let tp = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: buffer of the given length; timespec or null; no signal mask.
        let r = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                self.0 .0,
                evs.as_mut_ptr(),
                evs.len() as libc::c_int,
                tp,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(r as usize)
    }

    /// Wait (timeout in ms, -1 forever) and return the tokens that are ready.
    pub fn wait(&self, evs: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        // SAFETY: buffer of the given length.
        let r =
            unsafe { libc::epoll_wait(self.0 .0, evs.as_mut_ptr(), evs.len() as i32, timeout_ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(e);
        }
        Ok(r as usize)
    }
}

/// A timerfd on CLOCK_MONOTONIC armed with absolute deadlines (no drift from computing relative
/// timeouts; timerfd hrtimers take no timer slack).
pub struct Timer {
    pub fd: Fd,
    armed: Option<u64>,
}

impl Timer {
    pub fn new() -> io::Result<Timer> {
        // SAFETY: plain call.
        let fd = cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        Ok(Timer {
            fd: Fd(fd),
            armed: None,
        })
    }
    /// Arm at `at_ns` (CLOCK_MONOTONIC), or disarm with None; no syscall if unchanged.
    pub fn set(&mut self, at_ns: Option<u64>) -> io::Result<()> {
        if at_ns == self.armed {
            return Ok(());
        }
        let v = at_ns.unwrap_or(0).max(if at_ns.is_some() { 1 } else { 0 });
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (v / 1_000_000_000) as libc::time_t,
                tv_nsec: (v % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid itimerspec.
        cvt(unsafe {
            libc::timerfd_settime(
                self.fd.0,
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        self.armed = at_ns;
        Ok(())
    }
    /// Acknowledge an expiry (the timer is then disarmed until set again).
    pub fn ack(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: 8-byte buffer.
        unsafe { libc::read(self.fd.0, buf.as_mut_ptr() as *mut libc::c_void, 8) };
        self.armed = None;
    }
}

/// SIGTERM and SIGINT as a readable descriptor (the signals are blocked for normal delivery).
pub fn stop_signals() -> io::Result<Fd> {
    // SAFETY: sigset manipulation on a local set.
    unsafe {
        let mut set: libc::sigset_t = zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        cvt(libc::sigprocmask(
            libc::SIG_BLOCK,
            &set,
            std::ptr::null_mut(),
        ))?;
        Ok(Fd(cvt(libc::signalfd(
            -1,
            &set,
            libc::SFD_NONBLOCK | libc::SFD_CLOEXEC,
        ))?))
    }
}

/// Ask for SIGTERM when the parent dies, and fail if it already has (then the orphan would
/// never get it). `parent` is the parent pid read at start.
pub fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    // SAFETY: plain prctl.
    cvt(unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGTERM as libc::c_ulong,
            0,
            0,
            0,
        )
    })?;
    if unsafe { libc::getppid() } != parent {
        return Err(io::Error::other("the parent process is already gone"));
    }
    Ok(())
}

/// Timer slack of 1 ns for this thread (the default 50 µs would blur epoll timeouts).
pub fn tight_timer_slack() {
    // SAFETY: plain prctl.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Run this thread under SCHED_FIFO at `priority` (1..99) so that departures are not delayed by
/// ordinary processes on a busy host; the kernel's RT throttling (sched_rt_runtime_us) still
/// leaves the others a share. Returns the policy in force ("fifo:N" or "other: why").
pub fn realtime(priority: i32) -> String {
    if priority <= 0 {
        return nice_top();
    }
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: plain call on this process.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        format!("fifo:{priority}")
    } else {
        format!("other ({})", io::Error::last_os_error())
    }
}

/// Pin this thread to `cpu`. Fails when the CPU is not among those this process may use.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within it (cpu is checked
    // against CPU_SETSIZE by the configuration).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        cvt(libc::sched_setaffinity(
            0,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        ))?;
    }
    Ok(())
}

/// Nice -20 for this process (ordinary scheduling with the largest weight).
pub fn nice_top() -> String {
    // SAFETY: plain call on this process.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, -20) } == 0 {
        "other, nice -20".into()
    } else {
        format!("other ({})", io::Error::last_os_error())
    }
}

/// Sleep until CLOCK_MONOTONIC reaches `at_ns` (absolute, so no drift), deaf to the sockets.
pub fn sleep_until(at_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a valid timespec; an interruption (EINTR) only ends the sleep early.
    unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &ts,
            std::ptr::null_mut(),
        )
    };
}
