//! Helpers of the integration tests: the real binary started as depots and origins on loopback
//! (port 0, the bound address read from its `listening` line), files with known checksums,
//! curl, and fake upstreams that count their connections or misbehave on purpose.
#![allow(dead_code)]

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_fatpipe-depot");

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "fpd-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(p.join("files")).unwrap();
        TempDir(p)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
    pub fn files(&self) -> PathBuf {
        self.0.join("files")
    }
    /// A fresh key file (`fatpipe-depot keygen`).
    pub fn key(&self, name: &str) -> PathBuf {
        let p = self.path(name);
        let st = Command::new(BIN).arg("keygen").arg(&p).status().unwrap();
        assert!(st.success());
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Deterministic pseudo-random bytes (xorshift64*), so a wrong byte anywhere changes the hash.
pub fn make_file(dir: &Path, name: &str, size: usize, seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut data = Vec::with_capacity(size + 8);
    while data.len() < size {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        data.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    data.truncate(size);
    std::fs::write(dir.join(name), &data).unwrap();
    hex(&Sha256::digest(&data))
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub fn sha256_file(p: &Path) -> String {
    hex(&Sha256::digest(std::fs::read(p).unwrap()))
}

/// A running `fatpipe-depot` process, killed when dropped.
pub struct Daemon {
    pub child: Child,
    pub addr: SocketAddr,
    pub metrics: Option<SocketAddr>,
    pub stderr: PathBuf,
}

impl Daemon {
    /// Starts `fatpipe-depot ARGS` and waits for its `listening MODE ADDR` line(s).
    pub fn start(mode: &str, args: &[String], log: PathBuf) -> Daemon {
        let err = std::fs::File::create(&log).unwrap();
        let mut child = Command::new(BIN)
            .arg(mode)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(err)
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let want_metrics = args.iter().any(|a| a == "--metrics-listen");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let name = if mode == "serve" { "depot" } else { "origin" };
        let (mut addr, mut metrics) = (None, None);
        let deadline = Instant::now() + Duration::from_secs(20);
        while addr.is_none() || (want_metrics && metrics.is_none()) {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = rx.recv_timeout(left) else {
                let _ = child.kill();
                panic!(
                    "{mode} did not start: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            };
            let parts: Vec<&str> = line.split_whitespace().collect();
            if parts.len() == 3 && parts[0] == "listening" {
                let a: SocketAddr = parts[2].parse().unwrap();
                if parts[1] == name {
                    addr = Some(a);
                } else if parts[1] == "metrics" {
                    metrics = Some(a);
                }
            }
        }
        Daemon {
            child,
            addr: addr.unwrap(),
            metrics,
            stderr: log,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn signal(&self, sig: i32) {
        // SAFETY: a pid we spawned and have not reaped.
        unsafe { libc::kill(self.pid(), sig) };
    }

    /// Waits up to `limit` for the process to exit.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = Instant::now() + limit;
        while Instant::now() < end {
            if let Some(st) = self.child.try_wait().unwrap() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Resident set size in KiB (/proc/PID/status VmRSS).
    pub fn rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    /// CPU seconds (user + system) used so far (/proc/PID/stat fields 14 and 15).
    pub fn cpu_s(&self) -> f64 {
        let s = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let after = &s[s.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = after.split_whitespace().collect();
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }

    /// The value of a metric sample line that starts with `series` (e.g. `fatpipe_depot_transfers_active`).
    pub fn metric(&self, series: &str) -> Option<f64> {
        let text = http_get(
            self.metrics.expect("started with --metrics-listen"),
            "/metrics",
        )
        .1;
        text.lines()
            .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn s(v: &str) -> String {
    v.to_string()
}

/// Starts a depot on loopback that may reach any 127.0.0.1 port, plus `extra` arguments.
pub fn depot(t: &TempDir, key: &Path, extra: &[&str], tag: &str) -> Daemon {
    let mut args = vec![
        s("--listen"),
        s("127.0.0.1:0"),
        s("--key-file"),
        key.display().to_string(),
        s("--allow"),
        s("127.0.0.1"),
        s("--metrics-listen"),
        s("127.0.0.1:0"),
    ];
    args.extend(extra.iter().map(|x| x.to_string()));
    Daemon::start("serve", &args, t.path(&format!("{tag}.log")))
}

/// Starts an origin serving `t.files()` whose chain is `depots` (client side first).
pub fn origin(t: &TempDir, key: &Path, depots: &[SocketAddr], extra: &[&str]) -> Daemon {
    let chain: Vec<String> = depots.iter().map(|d| d.to_string()).collect();
    let mut args = vec![
        s("--listen"),
        s("127.0.0.1:0"),
        s("--root"),
        t.files().display().to_string(),
        s("--key-file"),
        key.display().to_string(),
        s("--chain"),
        chain.join(","),
        s("--metrics-listen"),
        s("127.0.0.1:0"),
    ];
    args.extend(extra.iter().map(|x| x.to_string()));
    Daemon::start("origin", &args, t.path("origin.log"))
}

/// A 2-depot chain on loopback: (depot 1, depot 2, origin).
pub fn chain2(t: &TempDir, key: &Path, depot_extra: &[&str]) -> (Daemon, Daemon, Daemon) {
    let d1 = depot(t, key, depot_extra, "d1");
    let d2 = depot(t, key, depot_extra, "d2");
    let o = origin(t, key, &[d1.addr, d2.addr], &[]);
    (d1, d2, o)
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn curl(args: &[&str]) -> Run {
    let out = Command::new("curl")
        .args(args)
        .output()
        .expect("curl is installed (make system-deps)");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

pub fn have(cmd: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {cmd}"))
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A bare HTTP/1.1 GET; returns (status, body) with the body read to the end of the connection.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The `Location` of the origin's redirect for `path`.
pub fn redirect(origin: SocketAddr, path: &str) -> String {
    let r = curl(&[
        "-sS",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code} %{redirect_url}",
        &format!("http://{origin}{path}"),
    ]);
    let (code, url) = r.stdout.split_once(' ').unwrap();
    assert_eq!(code, "302", "{}", r.stderr);
    url.to_string()
}

/// What a fake upstream does with each connection.
#[derive(Clone)]
pub enum Behaviour {
    /// Accept and never answer (keeps the socket open).
    Silent,
    /// Answer `head` then `body`, then close with a reset (SO_LINGER 0).
    ResetAfter { head: String, body: Vec<u8> },
    /// Answer `head` then `body`, then close normally (FIN).
    CloseAfter { head: String, body: Vec<u8> },
    /// Answer `head` then `body`, then stay silent with the socket open.
    StallAfter { head: String, body: Vec<u8> },
}

/// A listener on loopback that counts the connections it accepts.
pub struct FakeUpstream {
    pub addr: SocketAddr,
    pub accepts: Arc<AtomicUsize>,
}

impl FakeUpstream {
    pub fn start(b: Behaviour) -> FakeUpstream {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let accepts = Arc::new(AtomicUsize::new(0));
        let n = accepts.clone();
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { break };
                n.fetch_add(1, Ordering::SeqCst);
                let b = b.clone();
                std::thread::spawn(move || {
                    // Read the request head first, as a server would.
                    let mut req = Vec::new();
                    let mut byte = [0u8; 1];
                    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                    while !req.ends_with(b"\r\n\r\n")
                        && c.read(&mut byte).map(|n| n == 1).unwrap_or(false)
                    {
                        req.push(byte[0]);
                    }
                    match b {
                        Behaviour::Silent => std::thread::sleep(Duration::from_secs(60)),
                        Behaviour::ResetAfter { head, body } => {
                            let _ = c.write_all(head.as_bytes());
                            let _ = c.write_all(&body);
                            std::thread::sleep(Duration::from_millis(100));
                            socket2::SockRef::from(&c)
                                .set_linger(Some(Duration::ZERO))
                                .unwrap();
                        }
                        Behaviour::CloseAfter { head, body } => {
                            let _ = c.write_all(head.as_bytes());
                            let _ = c.write_all(&body);
                        }
                        Behaviour::StallAfter { head, body } => {
                            let _ = c.write_all(head.as_bytes());
                            let _ = c.write_all(&body);
                            std::thread::sleep(Duration::from_secs(60));
                        }
                    }
                });
            }
        });
        FakeUpstream { addr, accepts }
    }

    pub fn count(&self) -> usize {
        self.accepts.load(Ordering::SeqCst)
    }
}

/// A loopback port with nothing listening (bound then released).
pub fn closed_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap()
}

/// A signed URL for `hops` (client side first, last = the fake origin) valid `validity` s from now.
pub fn signed(key: &Path, hops: &[SocketAddr], target: &str, expires: u64, index: usize) -> String {
    let k = fatpipe_depot::sign::Key::load(key, "key").unwrap();
    let c = fatpipe_depot::chain::Chain::new(hops.to_vec(), expires, target.into()).unwrap();
    format!("http://{}{}", hops[index], c.path(&k, index))
}

pub fn now() -> u64 {
    fatpipe_depot::chain::unix_now()
}

/// Waits until `f` holds (polling), up to `limit`.
pub fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The depot's two data paths: hyper (default) and splice(2). Tests of behaviour run in both.
pub const MODES: [&[&str]; 2] = [&[], &["--splice"]];

/// `mode` then `extra`, as one argument list.
pub fn with<'a>(mode: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    [mode, extra].concat()
}
