//! Start-up and shutdown of `serve` and `origin`: logs, listeners, the metrics endpoint, signals.

use crate::allow::AllowList;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::origin::Origin;
use crate::relay::Depot;
use crate::server::{self, MetricsHandler};
use crate::sign::Key;
use crate::sock;
use std::io::Write;
use std::sync::Arc;
use tokio::sync::{watch, Semaphore};

pub fn init_logs(cfg: &Config) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::try_new(&cfg.log.level)
        .map_err(|e| format!("log.level = {:?}: {e}", cfg.log.level))?;
    use std::io::IsTerminal;
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let r = if cfg.log.format == "json" {
        b.json().flatten_event(true).try_init()
    } else {
        b.try_init()
    };
    r.map_err(|e| format!("logging: {e}"))
}

fn load_key(path: &std::path::Path, what: &str) -> Result<Key, String> {
    let k = Key::load(path, what)?;
    if Key::readable_by_others(path) {
        tracing::warn!(file = %path.display(), "{what}: the key file is readable by group or others (chmod 600)");
    }
    Ok(k)
}

/// Announces a bound address on stdout (`listening MODE ADDR`), one line each, so scripts and
/// tests that asked for port 0 learn the port.
fn announce(what: &str, addr: std::net::SocketAddr) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "listening {what} {addr}");
    let _ = out.flush();
}

/// SIGTERM or SIGINT turns the watch true.
fn on_signals(tx: watch::Sender<bool>) -> Result<(), String> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM handler: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT handler: {e}"))?;
    tokio::spawn(async move {
        let which = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!(signal = which, "shutting down: no new connections");
        let _ = tx.send(true);
    });
    Ok(())
}

/// Runs a daemon: signals, the metrics endpoint, the `listening` line, then `serve` until a
/// signal and its drain.
pub(crate) async fn run<F, Fut>(
    mode: &'static str,
    cfg: &Config,
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
    serve: F,
) -> Result<(), String>
where
    F: FnOnce(tokio::net::TcpListener, watch::Receiver<bool>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let (tx, rx) = watch::channel(false);
    on_signals(tx)?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let metrics_task = match cfg.metrics.listen {
        Some(a) => {
            let l = sock::listen(a, &Default::default(), "metrics")?;
            announce("metrics", l.local_addr().map_err(|e| e.to_string())?);
            let mut limits = cfg.limits.clone();
            limits.shutdown_grace_s = 1.0;
            Some(tokio::spawn(server::serve(
                "metrics",
                l,
                Arc::new(MetricsHandler(metrics.clone())),
                limits,
                Metrics::new("metrics"),
                rx.clone(),
            )))
        }
        None => None,
    };
    tracing::info!(%bound, mode, "listening");
    announce(mode, bound);
    serve(listener, rx).await;
    if let Some(t) = metrics_task {
        let _ = t.await;
    }
    tracing::info!(
        complete = metrics.get("transfers_total", "result=\"complete\""),
        aborted = metrics.get("transfers_total", "result=\"aborted\""),
        "stopped"
    );
    Ok(())
}

fn check_upstream_opts(cfg: &Config) -> Result<(), String> {
    sock::check_opts(&cfg.upstream.default, "upstream")?;
    for (i, p) in cfg.upstream.peer.iter().enumerate() {
        sock::check_opts(&p.opts, &format!("upstream.peer[{i}]"))?;
    }
    Ok(())
}

pub async fn serve_depot(cfg: Config) -> Result<(), String> {
    let d = cfg.depot()?.clone();
    let allow = AllowList::parse(&d.allow, "depot.allow")?;
    if allow.is_empty() {
        return Err("depot.allow is empty: this depot would refuse every chain; list the next hops it may reach (--allow NET or depot.allow = [...])".into());
    }
    check_upstream_opts(&cfg)?;
    let listener = sock::listen(d.listen, &cfg.downstream, "downstream")?;
    let metrics = Metrics::new("depot");
    let depot = Depot {
        key: load_key(&d.key_file, "depot.key_file")?,
        allow,
        max_validity_s: d.max_validity_s,
        buffer_bytes: d.buffer_bytes,
        limits: cfg.limits.clone(),
        upstream: cfg.upstream.clone(),
        metrics: metrics.clone(),
        transfers: Arc::new(Semaphore::new(cfg.limits.max_transfers)),
    };
    let depot = Arc::new(depot);
    if d.splice {
        return run("depot", &cfg, listener, metrics, |l, rx| {
            crate::splice::accept_loop(l, depot, rx)
        })
        .await;
    }
    let (limits, m) = (cfg.limits.clone(), metrics.clone());
    run("depot", &cfg, listener, metrics, |l, rx| {
        server::serve("depot", l, depot, limits, m, rx)
    })
    .await
}

pub async fn serve_origin(cfg: Config) -> Result<(), String> {
    let o = cfg.origin()?.clone();
    let root = o
        .root
        .canonicalize()
        .map_err(|e| format!("origin.root = {}: {e}", o.root.display()))?;
    if !root.is_dir() {
        return Err(format!(
            "origin.root = {}: not a directory",
            o.root.display()
        ));
    }
    let listener = sock::listen(o.listen, &cfg.downstream, "downstream")?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    let advertise = match o.advertise {
        Some(a) => a,
        None if bound.ip().is_unspecified() => {
            if o.chain.iter().any(|c| !c.depots.is_empty()) || o.auto.is_some() {
                return Err(format!(
                    "origin.advertise: needed because origin.listen = {} is not an address depots can reach",
                    o.listen
                ));
            }
            bound
        }
        None => bound,
    };
    for (i, c) in o.chain.iter().enumerate() {
        if c.depots.len() + 1 > crate::chain::MAX_HOPS {
            return Err(format!(
                "origin.chain[{i}].depots: at most {} depots",
                crate::chain::MAX_HOPS - 1
            ));
        }
        if !c.prefix.starts_with('/') {
            return Err(format!(
                "origin.chain[{i}].prefix = {:?}: must start with /",
                c.prefix
            ));
        }
    }
    if let Some(a) = &o.auto {
        crate::route::check_auto(a)?;
    }
    let metrics = Metrics::new("origin");
    let origin = Origin {
        root,
        key: load_key(&o.key_file, "origin.key_file")?,
        advertise,
        validity_s: o.validity_s,
        rules: o.chain.clone(),
        auto: o.auto.clone(),
        limits: cfg.limits.clone(),
        metrics: metrics.clone(),
        transfers: Arc::new(Semaphore::new(cfg.limits.max_transfers)),
    };
    let (limits, m) = (cfg.limits.clone(), metrics.clone());
    run("origin", &cfg, listener, metrics, |l, rx| {
        server::serve("origin", l, Arc::new(origin), limits, m, rx)
    })
    .await
}
