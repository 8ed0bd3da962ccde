//! fatpipe-linkem: a userspace link emulator with the simulator's own link model, for testbeds
//! on kernels without qdiscs (docs/link-emulator.md).
//!
//! ```text
//! config.rs   the JSON configuration (the contract with the testbed driver), checked by field
//! frame.rs    flow hash, ECN, CE marking and checksum completion on real frames (pure)
//! model.rs    one link direction: loss, queue (any fatpipe-net discipline), serialisation, delay
//! slab.rs     frame storage beside the model's packets
//! stats.rs    counters, achieved rate, departure-error histogram, the JSON report
//! emulator.rs the single-threaded event loop over AF_PACKET sockets
//! sys/        namespaces, packet sockets, epoll/timerfd/signalfd (libc only)
//! testbed.rs  namespaces and veths for tests and measurements
//! ```

pub mod config;
pub mod emulator;
pub mod frame;
pub mod model;
pub mod slab;
pub mod spin_budget;
pub mod stats;
pub mod sys;
pub mod testbed;
