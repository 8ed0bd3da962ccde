//! `fatpipe-linkem CONFIG.json`: emulate the configured links until SIGTERM/SIGINT (or the
//! parent's death), then write the statistics to the configuration's `stats_path`.
//! Prints `ready` on stdout once every socket is open. Exit status 2: bad configuration (the
//! message names the field); 1: any other failure.

use fatpipe_linkem::config;
use fatpipe_linkem::emulator::{write_json, Emulator, StartError};
use fatpipe_linkem::sys::poll::{
    die_with_parent, pin_to_cpu, realtime, stop_signals, tight_timer_slack,
};
use std::io::Write;
use std::process::exit;

const USAGE: &str = "usage: fatpipe-linkem CONFIG.json (see docs/link-emulator.md)";

fn fail(status: i32, msg: impl std::fmt::Display) -> ! {
    eprintln!("fatpipe-linkem: {msg}");
    exit(status)
}

fn main() {
    // SAFETY: plain call.
    let parent = unsafe { libc::getppid() };
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 1 || args[0] == "-h" || args[0] == "--help" {
        if args.first().is_some_and(|a| a == "-h" || a == "--help") {
            println!("{USAGE}");
            exit(0);
        }
        fail(2, USAGE);
    }
    let text = std::fs::read_to_string(&args[0]).unwrap_or_else(|e| {
        fail(
            2,
            format!("{}: cannot read the configuration: {e}", args[0]),
        )
    });
    let cfg = config::parse(&text).unwrap_or_else(|e| fail(2, e));
    let dir = std::path::Path::new(&cfg.stats_path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        fail(2, format!("stats_path: no directory {}", dir.display()));
    }
    if let Err(e) = die_with_parent(parent) {
        fail(1, e);
    }
    let signals = stop_signals().unwrap_or_else(|e| fail(1, format!("signalfd: {e}")));
    tight_timer_slack();
    if let Some(cpu) = cfg.tuning.cpu {
        if let Err(e) = pin_to_cpu(cpu) {
            fail(2, format!("tuning.cpu: cannot run on CPU {cpu}: {e}"));
        }
    }
    let stats_path = cfg.stats_path.clone();
    let priority = cfg.tuning.realtime_priority();
    let mut emu = match Emulator::open(cfg, signals) {
        Ok(e) => e,
        Err(StartError::Config(e)) => fail(2, e),
        Err(StartError::Io(e)) => fail(1, e),
    };
    emu.sched = realtime(priority);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
    drop(out);
    let r = emu.run();
    let report = emu.report();
    if let Err(e) = write_json(&stats_path, &report) {
        fail(1, format!("stats_path: cannot write {stats_path}: {e}"));
    }
    if let Err(e) = r {
        fail(1, format!("event loop: {e}"));
    }
}
