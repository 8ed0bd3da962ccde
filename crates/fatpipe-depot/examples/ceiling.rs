//! The depot's throughput ceiling on loopback and its CPU per Gb/s (docs/depot.md reports the
//! numbers). Starts an origin and one depot (release binary), downloads a file held in memory
//! (tmpfs) directly from the origin and through the depot, and reads the processes' CPU time
//! from /proc. A measurement, not a test: nothing is asserted.
//!
//!     cargo build --release -p fatpipe-depot
//!     cargo run --release -p fatpipe-depot --example ceiling -- [--splice] [--mb 1024] [--reps 5]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

fn bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/release/examples/ceiling -> target/release/fatpipe-depot
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("fatpipe-depot")
}

fn start(args: &[&str]) -> (Child, SocketAddr) {
    let mut c = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split_whitespace()
        .nth(2)
        .expect("listening line")
        .parse()
        .unwrap();
    (c, addr)
}

fn cpu_s(pid: u32) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let f: Vec<&str> = s[s.rfind(')').unwrap() + 2..].split_whitespace().collect();
    (f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap()) / 100.0
}

/// GET `url` (following one redirect), reading the body as fast as possible; returns bytes.
fn fetch(url: &str) -> u64 {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut r = BufReader::with_capacity(1 << 20, s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let mut location = None;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        if h.trim().is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("location:") {
            location = Some(h[h.len() - v.len()..].trim().to_string());
        }
    }
    if line.contains(" 302 ") {
        return fetch(&location.unwrap());
    }
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        match r.read(&mut buf).unwrap() {
            0 => return n,
            k => n += k as u64,
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let splice = args.iter().any(|a| a == "--splice");
    let get = |k: &str, d: u64| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (mb, reps) = (get("--mb", 1024), get("--reps", 5));
    let dir = PathBuf::from(format!("/dev/shm/fpd-ceiling-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("files")).unwrap();
    let key = dir.join("key");
    std::fs::write(&key, "ceiling-measurement-key-0123456789abcdef\n").unwrap();
    let mut f = std::fs::File::create(dir.join("files/big.bin")).unwrap();
    let block = vec![0x5au8; 1 << 20];
    for _ in 0..mb {
        f.write_all(&block).unwrap();
    }
    drop(f);
    let k = key.to_str().unwrap();
    let mut dargs = vec![
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        k,
        "--allow",
        "127.0.0.1",
        "--log-level",
        "warn",
    ];
    if splice {
        dargs.push("--splice");
    }
    let (mut depot, da) = start(&dargs);
    let root = dir.join("files");
    let root = root.to_str().unwrap();
    let chain = da.to_string();
    let (mut origin, oa) = start(&[
        "origin",
        "--listen",
        "127.0.0.1:0",
        "--root",
        root,
        "--key-file",
        k,
        "--chain",
        &chain,
        "--log-level",
        "warn",
    ]);
    let (mut direct, xa) = start(&[
        "origin",
        "--listen",
        "127.0.0.1:0",
        "--root",
        root,
        "--key-file",
        k,
        "--chain",
        "",
        "--log-level",
        "warn",
    ]);
    println!(
        "mode: {}; file {mb} MiB in tmpfs; {reps} repetitions; Linux loopback, {} cores",
        if splice { "splice" } else { "hyper (copy)" },
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    for (name, url, relay) in [
        ("direct", format!("http://{xa}/big.bin"), None),
        ("1 depot", format!("http://{oa}/big.bin"), Some(depot.id())),
    ] {
        let mut rates = Vec::new();
        let mut cores_per_gbps = Vec::new();
        for _ in 0..reps {
            let c0 = relay.map(cpu_s);
            let t0 = Instant::now();
            let n = fetch(&url);
            let wall = t0.elapsed().as_secs_f64();
            let gbps = n as f64 * 8.0 / wall / 1e9;
            rates.push(gbps);
            if let (Some(pid), Some(c0)) = (relay, c0) {
                cores_per_gbps.push((cpu_s(pid) - c0) / wall / gbps);
            }
        }
        rates.sort_by(|a, b| a.total_cmp(b));
        let med = rates[rates.len() / 2];
        print!(
            "{name}: median {med:.2} Gb/s (min {:.2}, max {:.2})",
            rates[0],
            rates[rates.len() - 1]
        );
        if !cores_per_gbps.is_empty() {
            cores_per_gbps.sort_by(|a, b| a.total_cmp(b));
            print!(
                "; depot CPU {:.3} core per Gb/s (median)",
                cores_per_gbps[cores_per_gbps.len() / 2]
            );
        }
        println!();
    }
    for c in [&mut depot, &mut origin, &mut direct] {
        let _ = c.kill();
        let _ = c.wait();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
