//! `fatpipe-depot serve | origin | keygen | sign`: see docs/depot.md.

use clap::{Args, Parser, Subcommand};
use fatpipe_depot::chain::{unix_now, Chain};
use fatpipe_depot::config::Config;
use fatpipe_depot::{daemon, sign};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fatpipe-depot",
    version,
    about = "Split-TCP depot chains set up by HTTP redirects (docs/depot.md)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Common {
    /// TOML configuration file (docs/depot.md lists every key)
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Override a configuration key, e.g. --set limits.max_transfers=64 (repeatable; applied last)
    #[arg(long = "set", value_name = "SECTION.KEY=VALUE")]
    set: Vec<String>,
    /// Address of the Prometheus metrics endpoint (metrics.listen)
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// Log format, text or json (log.format)
    #[arg(long)]
    log_format: Option<String>,
    /// Log filter, e.g. info or debug (log.level)
    #[arg(long)]
    log_level: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run a depot: relay signed chain URLs to their next hop
    Serve {
        #[command(flatten)]
        common: Common,
        /// Listen address (depot.listen)
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// File holding the shared key (depot.key_file); never give the key itself
        #[arg(long)]
        key_file: Option<PathBuf>,
        /// Next hops this depot may reach (depot.allow; repeatable; replaces the file's list)
        #[arg(long, value_name = "NET")]
        allow: Vec<String>,
        /// Relay bodies with splice(2) (depot.splice)
        #[arg(long)]
        splice: bool,
    },
    /// Run the origin: serve files, redirecting downloads into the configured chain
    Origin {
        #[command(flatten)]
        common: Common,
        /// Listen address (origin.listen)
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Directory to serve (origin.root)
        #[arg(long)]
        root: Option<PathBuf>,
        /// File holding the shared key (origin.key_file)
        #[arg(long)]
        key_file: Option<PathBuf>,
        /// Address depots use to reach this origin (origin.advertise)
        #[arg(long)]
        advertise: Option<SocketAddr>,
        /// Depots of the chain for every path, client side first, comma-separated
        /// (replaces origin.chain with one rule for "/"; an empty string serves directly)
        #[arg(long, value_name = "D1,D2,...")]
        chain: Option<String>,
    },
    /// Write a new random key (32 bytes, hex) to FILE, readable by its owner only
    Keygen { file: PathBuf },
    /// Print a signed chain URL (for scripts and debugging)
    Sign {
        #[arg(long)]
        key_file: PathBuf,
        /// Hops, client side first, origin last: D1,D2,...,ORIGIN
        #[arg(long, value_name = "D1,...,ORIGIN")]
        hops: String,
        /// The origin's path and query, e.g. /files/big.bin
        #[arg(long)]
        target: String,
        /// Seconds until the URL expires
        #[arg(long, default_value_t = 3600)]
        validity_s: u64,
    },
}

fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn common_sets(c: &Common, sets: &mut Vec<String>) {
    if let Some(a) = c.metrics_listen {
        sets.push(format!("metrics.listen={}", quoted(&a.to_string())));
    }
    if let Some(f) = &c.log_format {
        sets.push(format!("log.format={}", quoted(f)));
    }
    if let Some(l) = &c.log_level {
        sets.push(format!("log.level={}", quoted(l)));
    }
}

fn path_set(key: &str, p: &std::path::Path) -> String {
    format!("{key}={}", quoted(&p.to_string_lossy()))
}

fn load(common: &Common, mut sets: Vec<String>) -> Result<Config, String> {
    common_sets(common, &mut sets);
    sets.extend(common.set.iter().cloned());
    let cfg = Config::load(common.config.as_deref(), &sets)?;
    daemon::init_logs(&cfg)?;
    Ok(cfg)
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))
}

fn main_inner() -> Result<(), String> {
    match Cli::parse().command {
        Command::Serve {
            common,
            listen,
            key_file,
            allow,
            splice,
        } => {
            let mut sets = Vec::new();
            if let Some(a) = listen {
                sets.push(format!("depot.listen={}", quoted(&a.to_string())));
            }
            if let Some(k) = &key_file {
                sets.push(path_set("depot.key_file", k));
            }
            if !allow.is_empty() {
                let list: Vec<String> = allow.iter().map(|a| quoted(a)).collect();
                sets.push(format!("depot.allow=[{}]", list.join(",")));
            }
            if splice {
                sets.push("depot.splice=true".into());
            }
            let cfg = load(&common, sets)?;
            runtime()?.block_on(daemon::serve_depot(cfg))
        }
        Command::Origin {
            common,
            listen,
            root,
            key_file,
            advertise,
            chain,
        } => {
            let mut sets = Vec::new();
            if let Some(a) = listen {
                sets.push(format!("origin.listen={}", quoted(&a.to_string())));
            }
            if let Some(r) = &root {
                sets.push(path_set("origin.root", r));
            }
            if let Some(k) = &key_file {
                sets.push(path_set("origin.key_file", k));
            }
            if let Some(a) = advertise {
                sets.push(format!("origin.advertise={}", quoted(&a.to_string())));
            }
            if let Some(c) = &chain {
                let depots: Vec<String> = c
                    .split(',')
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| quoted(s.trim()))
                    .collect();
                sets.push(format!(
                    "origin.chain=[{{prefix = \"/\", depots = [{}]}}]",
                    depots.join(",")
                ));
            }
            let cfg = load(&common, sets)?;
            runtime()?.block_on(daemon::serve_origin(cfg))
        }
        Command::Keygen { file } => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let hex = sign::generate_key_hex()?;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&file)
                .map_err(|e| format!("{}: {e} (keygen never overwrites a key)", file.display()))?;
            writeln!(f, "{hex}").map_err(|e| format!("{}: {e}", file.display()))?;
            Ok(())
        }
        Command::Sign {
            key_file,
            hops,
            target,
            validity_s,
        } => {
            let key = sign::Key::load(&key_file, "--key-file")?;
            let hops = hops
                .split(',')
                .map(|h| {
                    h.trim()
                        .parse::<SocketAddr>()
                        .map_err(|_| format!("--hops: {h:?} is not IP:port"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let c = Chain::new(hops, unix_now() + validity_s, target)
                .map_err(|e| format!("--hops/--target: {e}"))?;
            println!("{}", c.url(&key, 0));
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match main_inner() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fatpipe-depot: {e}");
            ExitCode::from(2)
        }
    }
}
