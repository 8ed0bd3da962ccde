//! TCP as sans-IO state machines.

pub mod config;
pub mod flow_control;
#[cfg(test)]
mod flow_control_tests;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod scoreboard;
mod seg_ring;
pub mod sender;
#[cfg(test)]
mod tests;
pub mod window_mean;

pub use config::{
    CwndGrowth, CwndReduction, IdleRestart, LossState, Recovery, RtoEstimator, RtoRestart,
    RtoSsthresh, RttSamples, TcpConfig,
};
pub use receiver::TcpReceiver;
pub use sender::{SenderStats, TcpSender};
