//! Bad input: exit status 2 and a message naming the field (no root needed).

use std::process::Command;

fn run_with(config: &str) -> (i32, String) {
    let dir = std::env::temp_dir();
    let path = dir.join(format!(
        "linkem-cli-{}-{}.json",
        std::process::id(),
        config.len()
    ));
    std::fs::write(&path, config).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_fatpipe-linkem"))
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn config(ab_rate: u64, netns: &str, stats: &str) -> String {
    serde_json::json!({
        "seed": 1,
        "links": [{
            "name": "x",
            "a": {"netns": netns, "ifname": "nosuch0"},
            "b": {"netns": netns, "ifname": "nosuch1"},
            "ab": {"rate_bps": ab_rate, "delay_ns": 1000000, "loss": 0.0,
                   "queue": {"kind": "droptail", "limit_packets": 10, "limit_bytes": null}},
            "ba": {"rate_bps": 1000000, "delay_ns": 1000000, "loss": 0.0,
                   "queue": {"kind": "droptail", "limit_packets": 10, "limit_bytes": null}},
        }],
        "stats_path": stats,
    })
    .to_string()
}

#[test]
fn bad_configurations_exit_2_naming_the_field() {
    let (code, err) = run_with(&config(0, "", "/tmp/s.json"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("links[0].ab.rate_bps"), "{err}");
    let (code, err) = run_with(&config(1000, "", "/nonexistent-dir/s.json"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("stats_path"), "{err}");
    let (code, err) = run_with(&config(1000, "fatpipe-no-such-ns", "/tmp/s.json"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("links[0].a.netns"), "{err}");
    // A CPU this process may not run on (numbers above the machine's CPUs are not in its
    // affinity set): refused by name before anything is opened.
    let mut v: serde_json::Value = serde_json::from_str(&config(1000, "", "/tmp/s.json")).unwrap();
    v["tuning"] = serde_json::json!({"cpu": 1000});
    let (code, err) = run_with(&v.to_string());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("tuning.cpu"), "{err}");
    let (code, err) = run_with("{\"links\": 3}");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("links"), "{err}");
    // SAFETY: plain call.
    if unsafe { libc::geteuid() } == 0 {
        // In our own namespace: the interface does not exist.
        let (code, err) = run_with(&config(1000, "", "/tmp/s.json"));
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("links[0].a.ifname"), "{err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_fatpipe-linkem"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
