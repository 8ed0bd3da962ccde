//! placeholder
use crate::config::Config;
use crate::metrics::Metrics;
use crate::relay::Depot;
use std::sync::Arc;
pub async fn serve(_cfg: Config, _l: tokio::net::TcpListener, _d: Arc<Depot>, _m: Arc<Metrics>) -> Result<(), String> {
    Err("splice: not yet".into())
}
