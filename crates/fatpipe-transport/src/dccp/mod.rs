//! DCCP, the Datagram Congestion Control Protocol (RFC 4340), as the simulator needs it: an
//! unreliable datagram transport with congestion control, sender and receiver in the same
//! sans-IO shape as TCP's (fed packets and timer expiries, they push packets into a caller's
//! buffer and report their next deadline).
//!
//! - [`sender`] / [`receiver`]: set-up, sequence numbers, the bounded sender queue, delivery;
//! - [`ccid2`]: TCP-like congestion control (RFC 4341), Ack Vectors and Ack Ratio;
//! - [`tfrc`] and [`ccid3`]: TCP-Friendly Rate Control (RFC 5348 / RFC 3448, RFC 4342);
//! - [`wire`]: how DCCP's header fields and options map onto the simulated packet;
//! - [`config`]: every setting, with ns-2.35's defaults where the RFCs leave a choice.
//!
//! See docs/dccp.md.

pub mod ccid2;
pub mod ccid3;
pub mod config;
pub mod receiver;
pub mod sender;
pub mod tfrc;
pub mod wire;

pub use config::{Ccid, DccpConfig, TfrcVariant};
pub use receiver::DccpReceiver;
pub use sender::{DccpSender, DccpSenderStats};
