//! fatpipe-transport: transport protocols as sans-IO state machines.
//!
//! Endpoints never touch the event queue: they are fed packets and timer expiries with the current
//! time, push the packets they want to send into a caller-owned buffer, and report their next timer
//! deadline. The simulator (fatpipe-sim) does the plumbing.
//!
//! - [`tcp`]: byte-stream TCP sender and receiver, SACK (RFC 6675) or NewReno (RFC 6582) loss
//!   recovery, RTO per RFC 6298, timestamps (RFC 7323), delayed ACKs (RFC 1122/5681), pacing.
//! - [`cc`]: congestion controls behind a trait that mirrors Linux `struct tcp_congestion_ops`.
//! - [`udp`]: datagram sender and receiver (delay, RFC 3550 jitter) for CBR and other datagram apps.

pub mod cc;
pub mod dccp;
pub mod tcp;
pub mod udp;
