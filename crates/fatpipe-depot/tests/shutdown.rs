//! SIGTERM: the depot stops accepting at once, lets transfers in progress finish within
//! limits.shutdown_grace_s, and aborts (visibly to the client) those that do not.

mod common;
use common::*;
use std::net::TcpStream;
use std::time::Duration;

fn size_of(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

#[test]
fn transfers_in_progress_finish_and_new_connections_are_refused() {
    for mode in MODES {
        let t = TempDir::new("shut-finish");
        let key = t.key("key");
        let sum = make_file(&t.files(), "g.bin", 8_000_000, 14);
        let mut d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.shutdown_grace_s=30"]),
            "d",
        );
        let o = origin(&t, &key, &[d.addr], &[]);
        let out = t.path("g.out");
        // 4 MB/s: about 2 s for the file.
        let mut child = std::process::Command::new("curl")
            .args([
                "-sS",
                "-L",
                "--limit-rate",
                "4M",
                "-o",
                out.to_str().unwrap(),
                &format!("http://{}/g.bin", o.addr),
            ])
            .spawn()
            .unwrap();
        assert!(wait_until(Duration::from_secs(10), || size_of(&out) > 1_000_000));
        d.signal(libc::SIGTERM);
        // The listener is closed at once.
        assert!(
            wait_until(Duration::from_secs(5), || TcpStream::connect(d.addr)
                .is_err()),
            "still accepting after SIGTERM"
        );
        let st = child.wait().unwrap();
        assert!(
            st.success(),
            "the transfer in progress was not allowed to finish"
        );
        assert_eq!(sha256_file(&out), sum);
        let exit = d
            .wait_exit(Duration::from_secs(10))
            .expect("depot did not exit after its transfers");
        assert!(exit.success(), "{exit:?}");
        assert!(d.log().contains("stopped"), "{}", d.log());
    }
}

#[test]
fn transfers_past_the_grace_period_are_aborted_visibly() {
    for mode in MODES {
        let t = TempDir::new("shut-abort");
        let key = t.key("key");
        const SIZE: u64 = 40_000_000;
        make_file(&t.files(), "h.bin", SIZE as usize, 15);
        let mut d = depot(
            &t,
            &key,
            &with(mode, &["--set", "limits.shutdown_grace_s=1"]),
            "d",
        );
        let o = origin(&t, &key, &[d.addr], &[]);
        let out = t.path("h.out");
        // 2 MB/s: 20 s for the file, far past the 1 s grace period.
        let mut child = std::process::Command::new("curl")
            .args([
                "-sS",
                "-L",
                "--limit-rate",
                "2M",
                "-o",
                out.to_str().unwrap(),
                &format!("http://{}/h.bin", o.addr),
            ])
            .spawn()
            .unwrap();
        assert!(wait_until(Duration::from_secs(10), || size_of(&out) > 500_000));
        d.signal(libc::SIGTERM);
        let exit = d
            .wait_exit(Duration::from_secs(15))
            .expect("depot did not exit after its grace period");
        assert!(exit.success(), "{exit:?}");
        // It waited for the grace period, not for the transfer: curl sees a partial file.
        let st = child.wait().unwrap();
        assert_eq!(
            st.code(),
            Some(18),
            "curl must see the abort as a partial file"
        );
        assert!(size_of(&out) < SIZE);
        assert!(d.log().contains("grace period over"), "{}", d.log());
    }
}
