"""The origin's automatic chain choice (docs/depot.md, an extension: the candidate whose predicted
gain RTT_e2e / max segment RTT is largest, if it reaches min_gain) end to end on the testbed, with
the RTT the origin measures on each client's own connection (root only; skipped with the
testbed's reason otherwise).

The line client -15 ms- d1 -15 ms- d2 -1.5 ms- server (one way): RTT_e2e = 63 ms from the client.
Candidates: [d1] with d1-origin 33 ms (gain 63 / 33 = 1.9) and [d1, d2] with d1-d2 30 ms and
d2-origin 3 ms (gain 63 / 30 = 2.1). The far client must be sent through both depots; a client in
d1's namespace (RTT 33 ms: no candidate reaches 1.5) must be served directly."""

from __future__ import annotations

import hashlib


def test_the_origin_chooses_the_chain_that_balances_segment_rtts(netns_or_skip, binaries, tmp_path):
    from fatpipe.testbed.depot import DepotTestbed, chain_scenario

    root = tmp_path / "files"
    root.mkdir()
    data = hashlib.sha256(b"auto").digest() * 100_000
    (root / "f.bin").write_bytes(data)
    want = hashlib.sha256(data).hexdigest()
    with DepotTestbed(chain_scenario(2, rate="100Mbps", delay=["15ms", "15ms", "1.5ms"])) as tb:
        d1, d2 = tb.depot("d1"), tb.depot("d2")
        o = tb.origin("server", root, auto=[(["d1"], [33.0]), (["d1", "d2"], [30.0, 3.0])], min_gain=1.5)
        out = tmp_path / "far.bin"
        r = tb.run("client", ["curl", "-sS", "-L", "-o", str(out), "-w", "%{num_redirects} %{url_effective}",
                              o.url("/f.bin")])
        assert r.returncode == 0, r.stderr
        redirects, url = r.stdout.split(" ")
        assert redirects == "1"
        # Both depots, client side first, then the origin: the 2-depot candidate (gain 2.1 > 1.9).
        assert f"{tb.ip('d1', 'client')}:9001,{tb.ip('d2', 'd1')}:9001,{tb.ip('server', 'd2')}:8080" in url, url
        assert hashlib.sha256(out.read_bytes()).hexdigest() == want
        assert tb.metric(d2, f'fatpipe_depot_hop_bytes_total{{hop="{tb.ip("server", "d2")}:8080"}}') == len(data)
        # A near client (d1's own namespace, 33 ms from the origin): best gain 33 / 30 = 1.1 < 1.5.
        near = tmp_path / "near.bin"
        r = tb.run("d1", ["curl", "-sS", "-L", "-o", str(near), "-w", "%{num_redirects}",
                          f"http://{tb.layout.host_ip['server']}:8080/f.bin"])
        assert (r.returncode, r.stdout) == (0, "0"), r.stderr
        assert hashlib.sha256(near.read_bytes()).hexdigest() == want
        for d in (d1, d2, o):
            assert d.stop() == 0
