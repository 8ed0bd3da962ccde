//! DCCP (RFC 4340) with its congestion-control profiles; [`tfrc`] is the rate core of CCID 3.
pub mod tfrc;
