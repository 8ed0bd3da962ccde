//! Helpers shared by the scenario crate's integration tests: run a scenario text with
//! overrides, the field path of the error a bad input gives, and the check that the engine's
//! shortcuts never change results.

#![allow(dead_code)] // each test file uses its own subset

use fatpipe_scenario::{elaborate, load_str};
use fatpipe_sim::results::SimResults;
use fatpipe_sim::Simulation;

fn strings(sets: &[&str]) -> Vec<String> {
    sets.iter().map(|s| s.to_string()).collect()
}

/// Build and run `text` with `sets` overrides for `seed`, checking packet conservation; returns
/// the finished simulation.
pub fn run_sim(text: &str, sets: &[&str], seed: u64) -> Simulation {
    let sc = load_str(text, &strings(sets)).unwrap();
    let mut sim = elaborate(&sc, Some(seed)).unwrap().build().unwrap();
    sim.run().unwrap();
    sim.check_conservation().unwrap();
    sim
}

/// The results of [`run_sim`].
pub fn run(text: &str, sets: &[&str], seed: u64) -> SimResults {
    run_sim(text, sets, seed).results()
}

/// The field path named by the error `text` with `sets` gives at load or elaboration.
pub fn err_path(text: &str, sets: &[&str]) -> String {
    match load_str(text, &strings(sets)).and_then(|sc| elaborate(&sc, None).map(|_| ())) {
        Ok(()) => panic!("expected an error for {sets:?}"),
        Err(e) => e.path,
    }
}

/// Run `text` with `sets` for `seed` with the engine's shortcuts on and off (conservation checked
/// every 1000 events) and require identical flow, queue and series tables.
pub fn assert_shortcuts_identical(text: &str, sets: &[&str], seed: u64) {
    let sc = load_str(text, &strings(sets)).unwrap();
    let plan = elaborate(&sc, Some(seed)).unwrap();
    let go = |shortcuts: bool| {
        let mut sim = plan.build().unwrap();
        if !shortcuts {
            sim.disable_shortcuts();
        }
        while !sim.run_chunk(1000).unwrap() {
            sim.check_conservation().unwrap();
        }
        let r = sim.results();
        format!(
            "{:?}{:?}{:?}{:?}",
            r.flows, r.queues, r.flow_series, r.queue_series
        )
    };
    assert_eq!(go(true), go(false), "shortcuts changed the results");
}
