//! A three-namespace bench for tests and measurements:
//!
//! ```text
//!  <p>s: s0 10.201.0.1/24 ── veth ── e0 ┐ <p>e: the emulator ┌ e1 ── veth ── r0 10.201.0.2/24 :<p>r
//! ```
//!
//! The sender and receiver share one subnet, so the emulator is a wire: ARP crosses it like any
//! other frame. The emulator's namespace has no addresses and IPv6 off. TSO/GSO/GRO are off on
//! every veth (checksum offload stays on: the emulator completes those checksums). Namespaces
//! are named after the process id and a tag, and deleted (with their veths) on drop.

use crate::sys::ethtool::segmentation_offloads_off;
use crate::sys::netns::with_netns;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const SENDER_ADDR: &str = "10.201.0.1";
pub const RECEIVER_ADDR: &str = "10.201.0.2";

pub struct Testbed {
    pub sender_ns: String,
    pub emu_ns: String,
    pub receiver_ns: String,
    /// SCHED_FIFO priority of the traffic probes (default: LINKEM_PROBE_RT from the
    /// environment, else ordinary scheduling). At 1 Gb/s on a busy 2-core host an ordinary
    /// sender cannot offer the rate and an ordinary receiver falls behind.
    pub probe_rt: Option<String>,
}

/// The emulator's CPU (the last this process may use) and the RPS mask of the others, with two
/// CPUs or more below 64 and LINKEM_BENCH_PLACEMENT not "0".
pub fn placement() -> Option<(usize, u64)> {
    if std::env::var("LINKEM_BENCH_PLACEMENT").is_ok_and(|v| v == "0") {
        return None;
    }
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it.
    let cpus: Vec<usize> = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        (0..64).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    };
    let (&emu, others) = cpus.split_last()?;
    if others.is_empty() {
        return None;
    }
    Some((emu, others.iter().map(|&c| 1u64 << c).sum()))
}

/// Write `value` to `/sys/PATH` as namespace `ns` sees it (`ip netns exec` mounts its sysfs).
fn write_sys(ns: &str, path: &str, value: &str) -> Result<(), String> {
    run(&[
        "ip",
        "netns",
        "exec",
        ns,
        "sh",
        "-c",
        &format!("echo {value} > /sys/{path}"),
    ])
}

/// Set one sysctl (`key=value`) in namespace `ns`.
fn sysctl(ns: &str, setting: &str) -> Result<(), String> {
    run(&["ip", "netns", "exec", ns, "sysctl", "-qw", setting])
}

fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(())
}

fn mac(ns: &str, ifname: &str) -> Result<String, String> {
    let out = Command::new("ip")
        .args(["-n", ns, "link", "show", "dev", ifname])
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .skip_while(|w| *w != "link/ether")
        .nth(1)
        .map(String::from)
        .ok_or_else(|| format!("no MAC address for {ifname} in {ns}: {text}"))
}

/// Why a bench cannot be built here (None when it can): not root, no `ip`, no namespaces.
pub fn unavailable() -> Option<String> {
    // SAFETY: plain call.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (network namespaces, veths, AF_PACKET)".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("needs iproute2's `ip`".into());
    }
    if !std::path::Path::new("/proc/self/ns/net").exists() {
        return Some("no network namespace support".into());
    }
    None
}

impl Testbed {
    pub fn new(tag: &str) -> Result<Testbed, String> {
        let p = format!("fpe{}{tag}", std::process::id());
        let tb = Testbed {
            sender_ns: format!("{p}s"),
            emu_ns: format!("{p}e"),
            receiver_ns: format!("{p}r"),
            probe_rt: std::env::var("LINKEM_PROBE_RT").ok(),
        };
        tb.build().map(|_| tb)
    }

    fn build(&self) -> Result<(), String> {
        let (s, e, r) = (&self.sender_ns, &self.emu_ns, &self.receiver_ns);
        for ns in [s, e, r] {
            run(&["ip", "netns", "add", ns])?;
        }
        run(&[
            "ip", "link", "add", "s0", "netns", s, "type", "veth", "peer", "name", "e0", "netns", e,
        ])?;
        run(&[
            "ip", "link", "add", "r0", "netns", r, "type", "veth", "peer", "name", "e1", "netns", e,
        ])?;
        for ns in [s, e, r] {
            sysctl(ns, "net.ipv6.conf.all.disable_ipv6=1")?;
            sysctl(ns, "net.ipv6.conf.default.disable_ipv6=1")?;
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
        }
        // TCP buffers that let autotuning reach a few BDPs of a 1 Gb/s x 100 ms path (the
        // defaults cap the receive window near 3 MB, i.e. 480 Mb/s at 50 ms: the window, not the
        // emulator, would be measured).
        for ns in [s, r] {
            sysctl(ns, "net.ipv4.tcp_rmem=4096 131072 67108864")?;
            sysctl(ns, "net.ipv4.tcp_wmem=4096 131072 67108864")?;
        }
        run(&[
            "ip",
            "-n",
            s,
            "addr",
            "add",
            &format!("{SENDER_ADDR}/24"),
            "dev",
            "s0",
        ])?;
        run(&[
            "ip",
            "-n",
            r,
            "addr",
            "add",
            &format!("{RECEIVER_ADDR}/24"),
            "dev",
            "r0",
        ])?;
        // Static neighbours: no ARP exchange (through the emulated delay) before the first datagram.
        let mac_s = mac(s, "s0")?;
        let mac_r = mac(r, "r0")?;
        run(&[
            "ip",
            "-n",
            s,
            "neigh",
            "replace",
            RECEIVER_ADDR,
            "lladdr",
            &mac_r,
            "dev",
            "s0",
            "nud",
            "permanent",
        ])?;
        run(&[
            "ip",
            "-n",
            r,
            "neigh",
            "replace",
            SENDER_ADDR,
            "lladdr",
            &mac_s,
            "dev",
            "r0",
            "nud",
            "permanent",
        ])?;
        for (ns, ifs) in [(s, &["s0"][..]), (e, &["e0", "e1"][..]), (r, &["r0"][..])] {
            for i in ifs {
                with_netns(ns, || segmentation_offloads_off(i))
                    .and_then(|r| r)
                    .map_err(|err| format!("offloads off on {i} in {ns}: {err}"))?;
                run(&["ip", "-n", ns, "link", "set", i, "up"])?;
            }
        }
        // As the testbed does (python/fatpipe/testbed/placement.py): with two CPUs or more, the
        // emulator runs on the last one (`start_emulator`) and receive packet steering hands the
        // hosts' receive processing to the others, so the receiving stack of a frame the emulator
        // sends does not run inside its sendmmsg. LINKEM_BENCH_PLACEMENT=0 leaves both alone.
        if let Some((_, mask)) =
            placement().filter(|_| std::env::var("LINKEM_BENCH_RPS").ok().as_deref() != Some("0"))
        {
            for (ns, i) in [(s, "s0"), (r, "r0")] {
                write_sys(
                    ns,
                    &format!("class/net/{i}/queues/rx-0/rps_cpus"),
                    &format!("{mask:x}"),
                )?;
            }
        }
        // Experiment (LINKEM_BENCH_NAPI=1): the hosts' veths receive through threaded NAPI
        // (enabled on a veth by GRO), so the receiving stack runs in a kernel thread rather
        // than inside the emulator's sendmmsg.
        if std::env::var("LINKEM_BENCH_NAPI").is_ok_and(|v| v == "1") {
            for (ns, i) in [(s, "s0"), (r, "r0")] {
                run(&["ip", "netns", "exec", ns, "ethtool", "-K", i, "gro", "on"])?;
                write_sys(ns, &format!("class/net/{i}/threaded"), "1")?;
            }
            if let Ok(prio) = std::env::var("LINKEM_BENCH_NAPI_RT") {
                // The NAPI threads' names are napi/<ifname>-<id>; the veths are named alike in
                // every bench, so raise all of them.
                for e in std::fs::read_dir("/proc")
                    .map_err(|e| e.to_string())?
                    .flatten()
                {
                    let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
                    if comm.starts_with("napi/s0-") || comm.starts_with("napi/r0-") {
                        let pid = e.file_name().to_string_lossy().to_string();
                        run(&["chrt", "-f", "-p", &prio, &pid])?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The emulator configuration for one link e0 → e1 (`ab`, sender to receiver) and back.
    pub fn config(&self, ab: serde_json::Value, ba: serde_json::Value, stats: &str) -> String {
        serde_json::json!({
            "seed": 1,
            "links": [{
                "name": "s->r",
                "a": {"netns": self.emu_ns, "ifname": "e0"},
                "b": {"netns": self.emu_ns, "ifname": "e1"},
                "ab": ab,
                "ba": ba,
            }],
            "stats_path": stats,
        })
        .to_string()
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        for ns in [&self.sender_ns, &self.emu_ns, &self.receiver_ns] {
            let _ = run(&["ip", "netns", "del", ns]);
        }
    }
}

/// A direction's JSON for [`Testbed::config`]: DropTail of `limit` packets.
pub fn droptail_dir(rate_bps: u64, delay_ns: u64, limit: u64) -> serde_json::Value {
    serde_json::json!({
        "rate_bps": rate_bps,
        "delay_ns": delay_ns,
        "loss": 0.0,
        "queue": {"kind": "droptail", "limit_packets": limit, "limit_bytes": null},
    })
}

/// Paths of the two binaries.
#[derive(Clone, Debug)]
pub struct Bins {
    pub emulator: PathBuf,
    pub probe: PathBuf,
}

/// A running emulator.
pub struct Emu {
    child: Child,
    pub stats_path: String,
    config_path: String,
}

impl Emu {
    fn signal(&self, sig: libc::c_int) {
        // SAFETY: signalling our own child by its pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, sig) };
    }
    /// Stop the emulator's process (SIGSTOP) to starve it; `resume` continues it.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }
    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }
    /// SIGTERM, wait, and read its statistics.
    pub fn stop(mut self) -> Result<serde_json::Value, String> {
        self.signal(libc::SIGTERM);
        let st = self.child.wait().map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&self.config_path);
        if !st.success() {
            return Err(format!("emulator exited with {st}"));
        }
        let text = std::fs::read_to_string(&self.stats_path).map_err(|e| e.to_string())?;
        let _ = std::fs::remove_file(&self.stats_path);
        serde_json::from_str(&text).map_err(|e| e.to_string())
    }
}

impl Drop for Emu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Testbed {
    /// Start the emulator on e0/e1 with these directions and wait for its `ready`.
    pub fn start_emulator(
        &self,
        bins: &Bins,
        ab: serde_json::Value,
        ba: serde_json::Value,
        tuning: Option<serde_json::Value>,
    ) -> Result<Emu, String> {
        let stats_path = std::env::temp_dir()
            .join(format!("{}-stats.json", self.emu_ns))
            .display()
            .to_string();
        let config_path = std::env::temp_dir()
            .join(format!("{}-config.json", self.emu_ns))
            .display()
            .to_string();
        let mut cfg: serde_json::Value =
            serde_json::from_str(&self.config(ab, ba, &stats_path)).expect("json");
        if let Some(t) = tuning {
            cfg["tuning"] = t;
        }
        if let Some((cpu, _)) = placement() {
            if !cfg["tuning"].is_object() {
                cfg["tuning"] = serde_json::json!({});
            }
            cfg["tuning"]["cpu"] = serde_json::json!(cpu);
        }
        // Measurements: LINKEM_TUNING='{"cpu": 1, "spin_share": 0.1}' adds to the tuning.
        if let Ok(extra) = std::env::var("LINKEM_TUNING") {
            let extra: serde_json::Value =
                serde_json::from_str(&extra).map_err(|e| format!("LINKEM_TUNING: {e}"))?;
            if !cfg["tuning"].is_object() {
                cfg["tuning"] = serde_json::json!({});
            }
            for (k, v) in extra.as_object().ok_or("LINKEM_TUNING: not an object")? {
                cfg["tuning"][k] = v.clone();
            }
        }
        std::fs::write(&config_path, cfg.to_string()).map_err(|e| e.to_string())?;
        let mut child = Command::new(&bins.emulator)
            .arg(&config_path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", bins.emulator.display()))?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        if line.trim() != "ready" {
            let _ = child.kill();
            let st = child.wait().map_err(|e| e.to_string())?;
            return Err(format!("emulator did not become ready ({st})"));
        }
        Ok(Emu {
            child,
            stats_path,
            config_path,
        })
    }

    /// Run the probe in namespace `ns` with `args`, in the background.
    /// With `probe_rt` (LINKEM_PROBE_RT=N in the environment) the probe runs under SCHED_FIFO priority N
    /// (`chrt`), for measurements on a busy host.
    pub fn probe(&self, bins: &Bins, ns: &str, args: &[String]) -> Result<Child, String> {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns]);
        if let Some(p) = &self.probe_rt {
            c.args(["chrt", "-f", p]);
        }
        c.arg(&bins.probe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())
    }
}

/// Wait for a probe and parse its JSON line.
pub fn probe_result(child: Child) -> Result<serde_json::Value, String> {
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("probe exited with {}", out.status));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("probe output: {e}"))
}

/// A UDP run through a started emulator: a receiver, then a sender of `payload`-byte datagrams
/// at `send_rate_bps` (wire) for `duration_ms`; the receiver skips `warmup_ms` when it measures
/// the rate. `during` runs while the sender sends (e.g. to starve the emulator).
pub fn udp_run(
    tb: &Testbed,
    bins: &Bins,
    send_rate_bps: u64,
    payload: usize,
    duration_ms: u64,
    warmup_ms: u64,
    extra_wait_ms: u64,
    during: impl FnOnce(),
) -> Result<(serde_json::Value, serde_json::Value), String> {
    let port = format!("{RECEIVER_ADDR}:5201");
    let recv = tb.probe(
        bins,
        &tb.receiver_ns,
        &[
            "udp-recv".into(),
            port.clone(),
            (duration_ms + extra_wait_ms + 300).to_string(),
            warmup_ms.to_string(),
        ],
    )?;
    std::thread::sleep(Duration::from_millis(150));
    let send = tb.probe(
        bins,
        &tb.sender_ns,
        &[
            "udp-send".into(),
            port,
            send_rate_bps.to_string(),
            payload.to_string(),
            duration_ms.to_string(),
        ],
    )?;
    during();
    let s = probe_result(send)?;
    let r = probe_result(recv)?;
    Ok((s, r))
}
