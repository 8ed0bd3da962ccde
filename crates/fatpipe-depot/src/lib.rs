//! fatpipe-depot: the split-TCP relay of Augusto et al. (2008), "TCP connection segmentation for
//! high-speed end-to-end transfer" (seed note 002): depots chained by HTTP redirects, each
//! relaying a download from one TCP connection to the next as a pipeline, and the origin server
//! that issues the redirects. docs/depot.md is the user's reference.

pub mod allow;
pub mod chain;
pub mod config;
pub mod daemon;
pub mod files;
pub mod headers;
pub mod metrics;
pub mod origin;
pub mod relay;
pub mod route;
pub mod server;
pub mod sign;
pub mod sock;
pub mod splice;
pub mod stall;
pub mod transfer;
