//! Unmodified clients (curl -L, wget) download through real depot chains on loopback, byte for
//! byte; ranges, validators and statuses are relayed end to end.

mod common;
use common::*;

const SIZE: usize = 24 * 1024 * 1024 + 12_345;

#[test]
fn curl_follows_the_redirect_through_two_depots() {
    for mode in MODES {
        let t = TempDir::new("e2e-curl");
        let key = t.key("key");
        let sum = make_file(&t.files(), "big.bin", SIZE, 1);
        let (d1, d2, o) = chain2(&t, &key, mode);
        let out = t.path("got.bin");
        let r = curl(&[
            "-sS",
            "-L",
            "-o",
            out.to_str().unwrap(),
            "-w",
            "%{http_code} %{num_redirects} %{url_effective}",
            &format!("http://{}/big.bin", o.addr),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let fields: Vec<&str> = r.stdout.split(' ').collect();
        assert_eq!(fields[0], "200");
        assert_eq!(fields[1], "1", "one redirect, into the chain");
        assert!(
            fields[2].starts_with(&format!("http://{}/.fp1/0/", d1.addr)),
            "{}",
            fields[2]
        );
        assert!(fields[2].contains(&format!("{},{},{}", d1.addr, d2.addr, o.addr)));
        assert_eq!(sha256_file(&out), sum);
        // Each depot relayed the whole body, from its own next hop.
        assert_eq!(
            d1.metric(&format!(
                "fatpipe_depot_hop_bytes_total{{hop=\"{}\"}}",
                d2.addr
            )),
            Some(SIZE as f64)
        );
        assert_eq!(
            d2.metric(&format!(
                "fatpipe_depot_hop_bytes_total{{hop=\"{}\"}}",
                o.addr
            )),
            Some(SIZE as f64)
        );
        assert_eq!(
            d1.metric("fatpipe_depot_transfers_total{result=\"complete\"}"),
            Some(1.0)
        );
    }
}

#[test]
fn wget_follows_the_redirect_too() {
    if !have("wget") {
        eprintln!("skipped: wget not installed (make system-deps installs it)");
        return;
    }
    let t = TempDir::new("e2e-wget");
    let key = t.key("key");
    let sum = make_file(&t.files(), "w.bin", 5_000_001, 2);
    let (_d1, _d2, o) = chain2(&t, &key, &[]);
    let out = t.path("w.bin");
    let st = std::process::Command::new("wget")
        .args([
            "-q",
            "-O",
            out.to_str().unwrap(),
            &format!("http://{}/w.bin", o.addr),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(sha256_file(&out), sum);
}

#[test]
fn one_depot_and_direct_chains() {
    let t = TempDir::new("e2e-one");
    let key = t.key("key");
    let sum = make_file(&t.files(), "f.bin", 3_000_000, 3);
    let d = depot(&t, &key, &[], "d");
    let o1 = origin(&t, &key, &[d.addr], &[]);
    let direct = origin(&t, &key, &[], &[]);
    for (o, redirects) in [(&o1, "1"), (&direct, "0")] {
        let out = t.path("f.out");
        let r = curl(&[
            "-sS",
            "-L",
            "-o",
            out.to_str().unwrap(),
            "-w",
            "%{num_redirects}",
            &format!("http://{}/f.bin", o.addr),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, redirects);
        assert_eq!(sha256_file(&out), sum);
    }
}

#[test]
fn resume_with_curl_c_works_through_the_chain() {
    for mode in MODES {
        let t = TempDir::new("e2e-resume");
        let key = t.key("key");
        let sum = make_file(&t.files(), "r.bin", SIZE, 4);
        let (_d1, _d2, o) = chain2(&t, &key, mode);
        let out = t.path("r.bin");
        // The first 10 MB as a previous, interrupted download would have left them.
        let data = std::fs::read(t.files().join("r.bin")).unwrap();
        std::fs::write(&out, &data[..10_000_000]).unwrap();
        let r = curl(&[
            "-sS",
            "-L",
            "-C",
            "-",
            "-o",
            out.to_str().unwrap(),
            "-w",
            "%{http_code} %{size_download}",
            &format!("http://{}/r.bin", o.addr),
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(r.stdout, format!("206 {}", SIZE - 10_000_000));
        assert_eq!(sha256_file(&out), sum);
    }
}

#[test]
fn headers_and_statuses_are_relayed_end_to_end() {
    for mode in MODES {
        let t = TempDir::new("e2e-headers");
        let key = t.key("key");
        make_file(&t.files(), "page.txt", 1000, 5);
        let (d1, d2, o) = chain2(&t, &key, mode);
        let direct = origin(&t, &key, &[], &[]);
        let head = |url: &str, extra: &[&str]| {
            let mut a = vec!["-sS", "-L", "-D", "-", "-o", "/dev/null"];
            a.extend_from_slice(extra);
            a.push(url);
            let r = curl(&a);
            assert_eq!(r.code, 0, "{}", r.stderr);
            // Headers of the last response only.
            let last = r.stdout.rsplit("HTTP/1.1 ").next().unwrap().to_string();
            last.to_lowercase()
        };
        let via_chain = head(&format!("http://{}/page.txt", o.addr), &[]);
        let plain = head(&format!("http://{}/page.txt", direct.addr), &[]);
        let field = |h: &str, name: &str| {
            h.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                .map(|v| v.trim().to_string())
        };
        assert!(via_chain.starts_with("200"));
        for name in [
            "content-type",
            "content-length",
            "etag",
            "last-modified",
            "accept-ranges",
        ] {
            assert_eq!(field(&via_chain, name), field(&plain, name), "{name}");
            assert!(field(&via_chain, name).is_some(), "{name}");
        }
        assert_eq!(
            field(&via_chain, "content-type").as_deref(),
            Some("text/plain")
        );
        assert_eq!(
            field(&via_chain, "via").as_deref(),
            Some("1.1 fatpipe-depot, 1.1 fatpipe-depot")
        );
        // A range: 206 and Content-Range from the origin, through both depots.
        let part = head(&format!("http://{}/page.txt", o.addr), &["-r", "10-19"]);
        assert!(part.starts_with("206"), "{part}");
        assert_eq!(
            field(&part, "content-range").as_deref(),
            Some("bytes 10-19/1000")
        );
        assert_eq!(field(&part, "content-length").as_deref(), Some("10"));
        // Past the end: 416 relayed.
        let r = curl(&[
            "-sS",
            "-L",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-r",
            "5000-",
            &format!("http://{}/page.txt", o.addr),
        ]);
        assert_eq!(r.stdout, "416");
        // A conditional request: 304 relayed.
        let etag = field(&plain, "etag").unwrap();
        let r = curl(&[
            "-sS",
            "-L",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-H",
            &format!("If-None-Match: {etag}"),
            &format!("http://{}/page.txt", o.addr),
        ]);
        assert_eq!(r.stdout, "304");
        // HEAD through the chain.
        let r = curl(&["-sS", "-L", "-I", &format!("http://{}/page.txt", o.addr)]);
        assert_eq!(r.code, 0);
        assert!(
            r.stdout.to_lowercase().contains("content-length: 1000"),
            "{}",
            r.stdout
        );
        // An origin 404 behind a valid chain (the file went away after the redirect) reaches the client.
        let url = signed(
            &key,
            &[d1.addr, d2.addr, o.addr],
            "/gone.bin",
            now() + 60,
            0,
        );
        let r = curl(&["-sS", "-o", "/dev/null", "-w", "%{http_code}", &url]);
        assert_eq!(r.stdout, "404");
        // And the origin never redirects a missing file.
        let r = curl(&[
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("http://{}/gone.bin", o.addr),
        ]);
        assert_eq!(r.stdout, "404");
    }
}

#[test]
fn sign_subcommand_prints_a_url_the_chain_accepts() {
    let t = TempDir::new("e2e-sign");
    let key = t.key("key");
    let sum = make_file(&t.files(), "s.bin", 100_000, 6);
    let (d1, d2, o) = chain2(&t, &key, &[]);
    let out = std::process::Command::new(BIN)
        .args([
            "sign",
            "--key-file",
            key.to_str().unwrap(),
            "--hops",
            &format!("{},{},{}", d1.addr, d2.addr, o.addr),
            "--target",
            "/s.bin",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let url = String::from_utf8(out.stdout).unwrap();
    let dest = t.path("s.out");
    let r = curl(&["-sS", "-o", dest.to_str().unwrap(), url.trim()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(sha256_file(&dest), sum);
}
