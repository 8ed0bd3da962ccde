//! `fatpipe-bulk`: the testbed's traffic, one real TCP connection per invocation.
//!
//! ```text
//! fatpipe-bulk recv --port P [--rcvbuf BYTES] [--conns N] [--until T]
//! fatpipe-bulk send --to ADDR:PORT --cc NAME [--bytes N | --duration S] [--mss BYTES]
//!                   [--sndbuf BYTES] [--interval S] [--flow ID] [--close reset|graceful]
//! ```
//!
//! `send` connects, sets the congestion control (`TCP_CONGESTION`), buffers and MSS on the
//! socket *before* connecting (so the SYN advertises them), writes until `--bytes` are sent or
//! `--duration` has passed, samples `TCP_INFO` every `--interval` seconds, and prints one JSON
//! object: the flow's totals and its samples. `recv` accepts `--conns` connections (default 1),
//! reads until each closes and prints one JSON object per connection (bytes, bytes read by
//! `--until` (a CLOCK_MONOTONIC time: the run's end), first and last byte times). Times are seconds of `CLOCK_MONOTONIC`, which every namespace shares, so the
//! orchestrator can put sender and receiver on one time axis.
//!
//! Errors (bad arguments, an unknown congestion control, a refused connection) print a message
//! and exit with status 2.

mod args;
mod info;
mod recv;
mod send;
mod sock;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = match argv.first().map(String::as_str) {
        Some("send") => args::SendArgs::parse(&argv[1..]).and_then(|a| send::run(&a)),
        Some("recv") => args::RecvArgs::parse(&argv[1..]).and_then(|a| recv::run(&a)),
        _ => Err("usage: fatpipe-bulk send|recv [options] (see the module documentation)".into()),
    };
    match result {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fatpipe-bulk: {e}");
            ExitCode::from(2)
        }
    }
}
