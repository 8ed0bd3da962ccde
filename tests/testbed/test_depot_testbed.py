"""The depot daemon in the testbed's namespaces, across emulated links (root only; skipped with the
testbed's own reason otherwise): plain `curl -L` and `wget` through a 2-depot chain, 200
concurrent transfers with every byte checked and the depots' memory per transfer measured, and a
transfer through one depot against the direct one."""

from __future__ import annotations

import hashlib
import os
import statistics
import subprocess
import threading

import pytest


def _file(path, size: int, seed: int) -> str:
    data = hashlib.sha256(str(seed).encode()).digest() * (size // 32 + 1)
    data = bytes(b ^ (i * 131 & 0xFF) for i, b in enumerate(data[:size])) if size <= 1 << 20 else data[:size]
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _sha(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def test_curl_and_wget_through_two_depots(netns_or_skip, binaries, tmp_path):
    from fatpipe.testbed.depot import DepotTestbed, chain_scenario

    root = tmp_path / "files"
    root.mkdir()
    size = 16_000_003
    want = _file(root / "big.bin", size, 1)
    with DepotTestbed(chain_scenario(2, rate="200Mbps", delay="2ms")) as tb:
        d1, d2 = tb.depot("d1"), tb.depot("d2")
        o = tb.origin("server", root, chain=["d1", "d2"])
        out = tmp_path / "got.bin"
        r = tb.run("client", ["curl", "-sS", "-L", "-o", str(out), "-w", "%{http_code} %{num_redirects} %{url_effective}",
                              o.url("/big.bin")])
        assert r.returncode == 0, r.stderr
        code, redirects, url = r.stdout.split(" ")
        assert (code, redirects) == ("200", "1")
        # Each hop is the next node's address on the shared link: client -> d1 -> d2 -> server.
        assert url.startswith(f"http://{tb.ip('d1', 'client')}:9001/.fp1/0/")
        assert f"{tb.ip('d1', 'client')}:9001,{tb.ip('d2', 'd1')}:9001,{tb.ip('server', 'd2')}:8080" in url
        assert _sha(out) == want
        assert tb.metric(d1, f'fatpipe_depot_hop_bytes_total{{hop="{tb.ip("d2", "d1")}:9001"}}') == size
        assert tb.metric(d2, f'fatpipe_depot_hop_bytes_total{{hop="{tb.ip("server", "d2")}:8080"}}') == size
        # Resume: keep the first 5 MB, fetch the rest through the chain.
        with open(out, "r+b") as f:
            f.truncate(5_000_000)
        r = tb.run("client", ["curl", "-sS", "-L", "-C", "-", "-o", str(out), "-w", "%{http_code}", o.url("/big.bin")])
        assert (r.returncode, r.stdout) == (0, "206"), r.stderr
        assert _sha(out) == want
        if tb.run("client", ["sh", "-c", "command -v wget"]).returncode == 0:
            wout = tmp_path / "w.bin"
            r = tb.run("client", ["wget", "-q", "-O", str(wout), o.url("/big.bin")])
            assert r.returncode == 0, r.stderr
            assert _sha(wout) == want
        for d in (d1, d2, o):
            assert d.stop() == 0


def test_two_hundred_concurrent_transfers_on_the_testbed(netns_or_skip, binaries, tmp_path):
    from fatpipe.testbed.depot import DepotTestbed, chain_scenario

    n, files, size = 200, 4, 1_000_003
    root = tmp_path / "files"
    root.mkdir()
    sums = [_file(root / f"l{i}.bin", size, 100 + i) for i in range(files)]
    buffer = 65536
    with DepotTestbed(chain_scenario(2, rate="200Mbps", delay="1ms")) as tb:
        opts = ["--set", f"depot.buffer_bytes={buffer}", "--set", "limits.max_transfers=1000", "--log-level", "warn"]
        d1, d2 = tb.depot("d1", args=opts), tb.depot("d2", args=opts)
        o = tb.origin("server", root, chain=["d1", "d2"], args=["--log-level", "warn"])
        # Warm-up, then the baseline.
        r = tb.run("client", ["curl", "-sS", "-L", "-o", "/dev/null", o.url("/l0.bin")])
        assert r.returncode == 0, r.stderr
        before = [d1.rss_kib(), d2.rss_kib()]
        outdir = tmp_path / "out"
        outdir.mkdir()
        cfg = tmp_path / "curl.cfg"
        cfg.write_text("".join(f'url = "{o.url(f"/l{i % files}.bin")}"\noutput = "{outdir}/{i}.bin"\n' for i in range(n)))
        peak = list(before)
        done = threading.Event()

        def sample() -> None:
            while not done.is_set():
                for i, d in enumerate((d1, d2)):
                    peak[i] = max(peak[i], d.rss_kib())
                done.wait(0.05)

        t = threading.Thread(target=sample)
        t.start()
        try:
            # One curl, 200 transfers at once, each following the origin's redirect.
            r = tb.run("client", ["curl", "-sS", "-L", "-Z", "--parallel-max", str(n), "--parallel-immediate",
                                  "--limit-rate", "1M", "-K", str(cfg)], timeout=300)
        finally:
            done.set()
            t.join()
        assert r.returncode == 0, r.stderr[-2000:]
        bad = [i for i in range(n) if _sha(outdir / f"{i}.bin") != sums[i % files]]
        assert not bad, f"{len(bad)} of {n} transfers corrupted or truncated: {bad[:10]}"
        for d in (d1, d2):
            assert tb.metric(d, 'fatpipe_depot_transfers_total{result="complete"}') == n + 1
            assert tb.metric(d, 'fatpipe_depot_transfers_total{result="aborted"}') is None
        bound = (3 * buffer + 65536) / 1024
        for i, name in enumerate(("d1", "d2")):
            per = (peak[i] - before[i]) / n
            print(f"{name}: RSS {before[i]} KiB before, {peak[i]} KiB peak: {per:.1f} KiB per transfer (bound {bound:.0f})")
            assert per <= bound, f"{name}: {per:.1f} KiB per transfer"


def _rate(tb, url: str) -> float:
    r = tb.run("client", ["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download} %{time_total}", url], timeout=300)
    assert r.returncode == 0, r.stderr
    size, secs = r.stdout.split()
    return int(size) * 8 / float(secs)


def _depot_against_direct(tmp_path, scenario, size: int, reps: int = 5) -> dict[str, list[float]]:
    """``reps`` alternating transfers of a ``size``-byte file, directly and through one depot, over
    ``scenario``'s chain: the rates (bit/s) of each."""
    from fatpipe.testbed.depot import DepotTestbed

    root = tmp_path / "files"
    root.mkdir()
    with open(root / "t.bin", "wb") as f:
        f.write(os.urandom(size))
        # Written back now, not by a kernel flusher competing for the CPUs during the transfers.
        os.fsync(f.fileno())
    with DepotTestbed(scenario) as tb:
        tb.depot("d1")
        via = tb.origin("server", root, chain=["d1"])
        direct = tb.origin("server", root, port=8081)
        # The depot's URL itself (the redirect's round trip is not part of the data transfer).
        loc = tb.run("client", ["curl", "-sS", "-o", "/dev/null", "-w", "%{redirect_url}", via.url("/t.bin")]).stdout
        rates: dict[str, list[float]] = {"direct": [], "depot": []}
        for _ in range(reps):
            rates["direct"].append(_rate(tb, direct.url("/t.bin")))
            rates["depot"].append(_rate(tb, loc))
    return rates


def test_one_depot_reaches_the_direct_rate(netns_or_skip, binaries, tmp_path):
    """Over an emulated 1 Gb/s path (RTT 8 ms, DropTail queues of one BDP at 100 ms, so neither
    transfer is loss-limited), a transfer through one depot reaches >= 95 % of the direct
    transfer's rate (the issue's criterion; the 5 % allows the depot's own pipeline fill). Five
    alternating repetitions, medians.

    In 9000-byte frames (``tcp.mss = 8960B``, the links' MTU follows): with 1500-byte frames the
    two cores of the test machine cannot carry 1 Gb/s for four kernel TCP endpoints, a router and a
    two-link emulator at once (the emulator takes one core, every host's receive processing the
    other; through the depot that one is 86-97 % busy), and the comparison then measures how the depot's extra CPU work
    is scheduled (ratios 0.89-0.99 from run to run), not the depot's relaying. Real depots have NICs
    with segmentation and receive offloads, which the emulator, seeing wire frames, cannot give
    the hosts; jumbo frames cut the per-frame work about sixfold and leave both cores a quarter
    to a half idle (docs/depot.md has the measurements). The standard frame size is checked at 500 Mb/s
    below."""
    from fatpipe.testbed.depot import chain_scenario

    # 12.5 MB = 1 Gb/s x 100 ms, in bytes (a packet limit would be counted in 9000-byte frames).
    scenario = chain_scenario(1, rate="1Gbps", delay="2ms", mss="8960B", queue="12500kB")
    rates = _depot_against_direct(tmp_path, scenario, 100_000_000)
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"1 Gb/s, RTT 8 ms, MTU 9000: direct {med['direct'] / 1e6:.1f} Mb/s, 1 depot {med['depot'] / 1e6:.1f} Mb/s")
    assert med["depot"] >= 0.95 * med["direct"], rates


def test_one_depot_reaches_the_direct_rate_in_standard_frames(netns_or_skip, binaries, tmp_path):
    """The same criterion with 1500-byte frames, at the rate this machine's two cores carry
    without being saturated (500 Mb/s: one core 20-35 % idle, the other 15-30 %; RTT 8 ms, queues
    of one BDP at 100 ms). Five alternating repetitions of a 60 MB file, medians."""
    from fatpipe.testbed.depot import chain_scenario

    rates = _depot_against_direct(tmp_path, chain_scenario(1, rate="500Mbps", delay="2ms"), 60_000_000)
    med = {k: statistics.median(v) for k, v in rates.items()}
    print(f"500 Mb/s, RTT 8 ms, MTU 1500: direct {med['direct'] / 1e6:.1f} Mb/s, 1 depot {med['depot'] / 1e6:.1f} Mb/s")
    assert med["depot"] >= 0.95 * med["direct"], rates


def test_jumbo_segments_give_every_testbed_interface_a_jumbo_mtu(netns_or_skip, binaries):
    """`tcp.mss = 8960B` (the 1 Gb/s test's frames) puts a 9000-byte MTU on every veth, hosts'
    and emulator's ends alike (the emulator sizes its frame slots from them)."""
    from fatpipe.testbed.depot import DepotTestbed, chain_scenario

    with DepotTestbed(chain_scenario(1, rate="1Gbps", delay="1ms", mss="8960B")) as tb:
        for node in ("client", "d1", "server", "emu"):
            ns = tb.layout.emu_ns if node == "emu" else tb.ns(node)
            r = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c",
                                "for d in /sys/class/net/*; do [ \"${d##*/}\" = lo ] || cat $d/mtu; done"],
                               capture_output=True, text=True, check=True)
            assert set(r.stdout.split()) == {"9000"}, (node, r.stdout)
