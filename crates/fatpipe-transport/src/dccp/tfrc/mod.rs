//! TFRC, TCP-Friendly Rate Control (RFC 5348, and RFC 3448 as a variant): the rate logic DCCP's
//! CCID 3 (RFC 4342) runs, as pure state machines with no packets.
//!
//! - [`equation`]: the TCP throughput equation X(s, R, p) of RFC 5348 §3.1 (b = 1, t_RTO = 4R by
//!   default) and its inverse p(X), which gives the receiver's synthetic first loss interval
//!   (RFC 5348 §6.3.1).
//! - [`loss_history`]: the receiver. [`loss_history::LossHistory`] turns arriving sequence numbers
//!   (with CCVal, NDP Count, ECN) into losses (NDUPACK = 3), loss events (one RTT, or CCVal more
//!   than 4 apart as RFC 4342 §10.2), loss intervals and p = 1/I_mean (n = 8 weights, with and
//!   without the open interval); [`loss_history::ReceiveRate`] measures X_recv.
//! - [`sender`]: the sender. [`sender::TfrcSender`] holds X, R and the nofeedback timer and
//!   follows either RFC 3448 §4 or RFC 5348 §4 ([`sender::TfrcVariant`]); its module doc spells
//!   out how the two treat an idle (on/off) sender, which is what decides CCID 3's throughput
//!   with voice traffic.
//!
//! What CCID 3 adds around these (and keeps out of here): the CCVal window counter on data
//! packets, R_sample from the acknowledged packet's send time and the Elapsed Time option, the
//! feedback schedule (RFC 5348 §6.2: once per RTT and at once on a new loss event; ns-2.35 sends
//! only when a data packet arrives whose CCVal is ≥ 4 past the last feedback's, or when p rises),
//! the Loss Event Rate / Receive Rate / Loss Intervals options, the send-buffer, and packet
//! scheduling by t_ipi.
//!
//! ns-2.35 `Agent/DCCP/TFRC` (dccp/dccp_tfrc.cc, Mattsson's module) is RFC 3448 with CCVal loss
//! events, X_recv since the last feedback and its own short-history averaging; the presets
//! [`sender::SenderConfig::ns2`] and [`loss_history::LossHistoryConfig::ns2`] with
//! [`loss_history::XRecvWindow::SinceLastFeedback`] mirror it. See docs/dccp.md.

pub mod equation;
pub mod loss_history;
pub mod sender;
