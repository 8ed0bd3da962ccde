//! TFRC, TCP-Friendly Rate Control (RFC 5348, and RFC 3448 as a variant): the rate logic DCCP's
//! CCID 3 (RFC 4342) runs, as pure state machines with no packets.
pub mod equation;
pub mod loss_history;
pub mod sender;
