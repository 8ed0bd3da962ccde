//! fatpipe-scenario's integration tests, as one test binary: each file beside this one is a
//! module here. One binary is linked once; as 22 binaries, each linked the whole engine with
//! LTO again (about a minute of CPU each, most of `cargo test`'s time on a 2-core machine).
//! `bad_input.rs` stays a binary of its own: it installs a counting global allocator.
//! A new test file must be declared below; `every_test_file_is_compiled` checks that none is
//! left out (with `autotests = false`, Cargo no longer finds them by itself).

mod common;

mod aqm;
mod cc_bbr;
mod cc_bic;
mod cc_compound;
mod cc_cubic;
mod cc_fast;
mod cc_highspeed;
mod cc_htcp;
mod cc_illinois;
mod cc_libra;
mod cc_scalable;
mod cc_vegas;
mod dccp_voip;
mod delay_reverse_and_testbed;
mod files;
mod loss;
mod parking_lot;
mod plan_queue_json;
mod relay;
mod ring;
mod scenarios;
mod shortcut_ties;
mod traffic;

/// Every `tests/*.rs` file is a module of this binary or a test target of its own.
#[test]
fn every_test_file_is_compiled() {
    let root = include_str!("integration.rs");
    let manifest = include_str!("../Cargo.toml");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
    for entry in std::fs::read_dir(dir).expect("tests directory") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let file = path
            .file_name()
            .expect("a file name")
            .to_string_lossy()
            .into_owned();
        let stem = file.trim_end_matches(".rs");
        let declared = root.contains(&format!("\nmod {stem};"))
            || manifest.contains(&format!("path = \"tests/{file}\""));
        assert!(
            declared,
            "tests/{file} is neither a module of tests/integration.rs nor a [[test]] target"
        );
    }
}
