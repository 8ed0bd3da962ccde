"""The ns-2 peer runner: a hand-built dumbbell plan run in ns-2.35, checked against first principles."""

from __future__ import annotations

import importlib.util
import math
import shutil
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.validation,
    pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 ('ns', Debian package ns2) is not installed"),
]


def _load(name: str):
    try:
        return importlib.import_module(f"fatpipe.peers.{name}")
    except Exception:  # the compiled core may be missing: load the module file on its own
        path = Path(__file__).resolve().parents[2] / "python" / "fatpipe" / "peers" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(f"fatpipe_peers_{name}", path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod


ns2 = _load("ns2")
analysis = _load("analysis")

MSS, HDR = 1460, 40
WIRE = MSS + HDR
BOTTLENECK = "r0->r1"


def dumbbell_plan(
    pairs: int = 1,
    *,
    bott_bps: int = 20_000_000,
    bott_delay_ns: int = 10_000_000,
    access_bps: int = 1_000_000_000,
    access_delay_ns: int = 1_000_000,
    buffer_pkts: int = 50,
    duration_ns: int = 20_000_000_000,
    starts_ns: list[int] | None = None,
    recovery: str = "sack",
    delayed_ack: bool = False,
    size_bytes: int | None = None,
) -> dict:
    """Senders s<i> -> r0 -> r1 -> receivers d<i>; every link is a pair of directed links."""
    nodes = (
        [{"name": f"s{i}", "kind": "host"} for i in range(pairs)]
        + [{"name": "r0", "kind": "router"}, {"name": "r1", "kind": "router"}]
        + [{"name": f"d{i}", "kind": "host"} for i in range(pairs)]
    )

    def link(a: str, b: str, rate: int, delay: int, limit: int) -> dict:
        return {
            "name": f"{a}->{b}",
            "from": a,
            "to": b,
            "rate_bps": rate,
            "delay_ns": delay,
            "queue": {"kind": "droptail", "limit_packets": limit, "limit_bytes": None},
        }

    links = []
    for i in range(pairs):
        for a, b in ((f"s{i}", "r0"), ("r0", f"s{i}"), ("r1", f"d{i}"), (f"d{i}", "r1")):
            links.append(link(a, b, access_bps, access_delay_ns, 10_000))
    links.append(link("r0", "r1", bott_bps, bott_delay_ns, buffer_pkts))
    links.append(link("r1", "r0", bott_bps, bott_delay_ns, buffer_pkts))
    flows = [
        {
            "id": i,
            "src": f"s{i}",
            "dst": f"d{i}",
            "kind": "bulk" if size_bytes is None else "finite",
            "start_ns": starts_ns[i] if starts_ns else 0,
            "stop_ns": None,
            "size_bytes": size_bytes,
            "cc": "reno",
            "cc_params": {},
            "recovery": recovery,
            "mss": MSS,
            "header_bytes": HDR,
            "initial_window": 2,
            "initial_ssthresh": None,
            "delayed_ack": delayed_ack,
            "delack_timeout_ns": 40_000_000,
            "min_rto_ns": 200_000_000,
            "initial_rto_ns": 1_000_000_000,
            "rwnd_bytes": 1 << 40,
            "pacing": False,
            # ns-2.35 has no RACK-TLP: the peer refuses plans with them on.
            "rack": False,
            "tlp": False,
        }
        for i in range(pairs)
    ]
    return {
        "name": f"dumbbell-{pairs}",
        "seed": 1,
        "duration_ns": duration_ns,
        "nodes": nodes,
        "links": links,
        "flows": flows,
        "monitor": {"interval_ns": 100_000_000},
        "bottleneck": BOTTLENECK,
    }


def payload_capacity_bps(plan: dict) -> float:
    rate = next(l["rate_bps"] for l in plan["links"] if l["name"] == BOTTLENECK)
    return rate * MSS / WIRE


def reno_model(plan: dict) -> tuple[float, float, float]:
    """First-principles Reno sawtooth of flow 0 (no delayed ACK): (base RTT, W, period).

    Loss when cwnd exceeds W = BDP + buffer + 1 (one packet in service); cwnd then grows by one
    segment per RTT from W/2 back to W, and RTT(w) = max(base RTT, w * serialisation time).
    """
    links = {l["name"]: l for l in plan["links"]}
    path = ["s0->r0", "r0->r1", "r1->d0"]
    back = ["d0->r1", "r1->r0", "r0->s0"]
    base = sum(links[n]["delay_ns"] for n in path + back) / 1e9
    base += sum(WIRE * 8 / links[n]["rate_bps"] for n in path) + sum(HDR * 8 / links[n]["rate_bps"] for n in back)
    ser = WIRE * 8 / links[BOTTLENECK]["rate_bps"]
    buf = links[BOTTLENECK]["queue"]["limit_packets"]
    w_max = base / ser + buf + 1
    period = sum(max(base, w * ser) for w in range(int(w_max / 2), int(w_max) + 1))
    return base, w_max, period


def by_link(rows: list[dict]) -> dict[str, dict]:
    return {r["link"]: r for r in rows}


@pytest.fixture(scope="module")
def single_flow():
    plan = dumbbell_plan(1)
    return plan, ns2.run_plan(plan, sample_interval_ns=100_000_000)


def test_single_flow_goodput_and_drops(single_flow):
    plan, res = single_flow
    (flow,) = res["flows"]
    cap = payload_capacity_bps(plan)
    assert 0.5 * cap < flow["goodput_bps"] <= cap
    assert flow["bytes_delivered"] == flow["data_packets_delivered"] * MSS
    assert flow["goodput_bps"] == pytest.approx(flow["bytes_delivered"] * 8 / 20.0)
    queues = by_link(res["queues"])
    assert queues[BOTTLENECK]["drops_tail"] > 0
    assert all(q["drops_tail"] == 0 for name, q in queues.items() if name != BOTTLENECK)
    # every drop is a data segment and Reno/SACK resends each one (no spurious retransmits here)
    assert flow["retransmits"] >= queues[BOTTLENECK]["drops_tail"]
    assert queues[BOTTLENECK]["dropped_bytes"] == queues[BOTTLENECK]["drops_tail"] * WIRE
    assert flow["timeouts"] == 0
    assert res["packets_delivered"] == flow["data_packets_delivered"]


def test_single_flow_wire_sizes_and_conservation(single_flow):
    plan, res = single_flow
    (flow,) = res["flows"]
    links = by_link(res["links"])
    queues = by_link(res["queues"])
    # the sender's access link carries only data: mss + header bytes each (ns-2 sends segment 0
    # without headers, hence one packet of MSS)
    up = links["s0->r0"]
    assert up["tx_packets"] == flow["data_packets_sent"]
    assert up["tx_bytes"] == MSS + (up["tx_packets"] - 1) * WIRE
    # reverse path: pure ACKs of HDR bytes plus 8 bytes per SACK block
    ack = links["d0->r1"]
    assert HDR * ack["tx_packets"] <= ack["tx_bytes"] <= (HDR + 24) * ack["tx_packets"]
    assert ack["tx_packets"] >= flow["data_packets_delivered"]  # one ACK per data packet
    # packet conservation along the path
    assert flow["data_packets_sent"] >= flow["data_packets_delivered"]
    assert flow["data_packets_sent"] - flow["retransmits"] >= flow["data_packets_delivered"]
    q = queues[BOTTLENECK]
    in_flight_on_access = flow["data_packets_sent"] - q["arrivals"]
    assert 0 <= in_flight_on_access <= 100  # 1 Gb/s x 1 ms is ~83 packets
    assert q["enqueued"] == q["arrivals"] - q["drops_tail"]
    assert 0 <= q["enqueued"] - q["dequeued"] <= 50
    assert q["dequeued"] >= flow["data_packets_delivered"]
    # in flight at the end: at most the window limit W = BDP + buffer + 1 (< 100 here)
    assert q["dequeued"] - flow["data_packets_delivered"] < 100
    assert 0 < q["mean_len_pkts"] <= 50


def test_single_flow_sawtooth(single_flow):
    plan, res = single_flow
    series = [r for r in res["flow_series"] if r["flow_id"] == 0]
    assert len(series) == 200  # every 100 ms up to and including 20 s
    assert series[-1]["t_s"] == pytest.approx(20.0)
    times = [r["t_s"] for r in series]
    cwnds = [r["cwnd_pkts"] for r in series]
    reductions = analysis.cwnd_reductions(times, cwnds)
    assert len(reductions) >= 6
    base_rtt, w_max, expected = reno_model(plan)  # ~24.6 ms, ~92 packets, ~1.95 s
    period = analysis.sawtooth_period_s(times, cwnds, skip=2)  # skip the slow-start exit
    assert period == pytest.approx(expected, rel=0.2)
    # cwnd peaks near W and is cut to about half of it
    late = cwnds[len(cwnds) // 2 :]
    assert 0.85 * w_max <= max(late) <= 1.05 * w_max
    assert 0.4 * w_max <= min(late) <= 0.6 * w_max
    # series are cumulative and consistent with the end-of-run counters
    assert series[-1]["bytes_delivered"] == res["flows"][0]["bytes_delivered"]
    assert all(a["bytes_delivered"] <= b["bytes_delivered"] for a, b in zip(series, series[1:]))
    ser = WIRE * 8 / plan["links"][-2]["rate_bps"]
    assert base_rtt - 0.002 < series[-1]["srtt_s"] < base_rtt + 51 * ser + 0.002
    qlens = [r["len_pkts"] for r in res["queue_series"] if r["link"] == BOTTLENECK]
    assert len(qlens) == 200 and max(qlens) <= 50


def test_queue_limit_counts_waiting_packets():
    plan = dumbbell_plan(1, duration_ns=2_000_000_000)
    res = ns2.run_plan(plan, sample_interval_ns=1_000_000)
    q = by_link(res["queues"])[BOTTLENECK]
    assert q["drops_tail"] > 0
    assert q["max_len_pkts"] == 50  # limit_packets waiting, plus the one on the wire


def test_four_flows_share_bottleneck():
    plan = dumbbell_plan(4, starts_ns=[0, 250_000_000, 500_000_000, 750_000_000], duration_ns=15_000_000_000)
    res = ns2.run_plan(plan)
    cap = payload_capacity_bps(plan)
    aggregate = sum(f["bytes_delivered"] for f in res["flows"]) * 8 / 15.0
    assert 0.5 * cap < aggregate <= cap
    # each flow's goodput is over its own start..end, so check shares, not the sum
    assert min(f["goodput_bps"] for f in res["flows"]) > 0.1 * cap / 4
    assert res["packets_delivered"] == sum(f["data_packets_delivered"] for f in res["flows"])
    queues = by_link(res["queues"])
    assert queues[BOTTLENECK]["drops_tail"] > 0
    assert all(q["drops_tail"] == 0 for name, q in queues.items() if name != BOTTLENECK)


@pytest.mark.parametrize("recovery", ["sack", "newreno"])
def test_delayed_ack_halves_acks(recovery):
    plan = dumbbell_plan(1, recovery=recovery, delayed_ack=True, duration_ns=5_000_000_000)
    res = ns2.run_plan(plan)
    (flow,) = res["flows"]
    acks = by_link(res["links"])["d0->r1"]["tx_packets"]
    assert 0.45 * flow["data_packets_delivered"] < acks < 0.7 * flow["data_packets_delivered"]
    assert 0.5 * payload_capacity_bps(plan) < flow["goodput_bps"] <= payload_capacity_bps(plan)


def test_finite_transfers_complete():
    size = 1_000_000
    plan = dumbbell_plan(2, starts_ns=[0, 300_000_000], size_bytes=size, duration_ns=5_000_000_000)
    plan["flows"][1]["recovery"] = "newreno"
    res = ns2.run_plan(plan)
    for f in res["flows"]:
        assert f["bytes_delivered"] == size
        assert f["completion_s"] is not None and f["end_s"] == f["completion_s"]
        # at least slow start's worth of RTTs after the start, and well before the end
        assert f["start_s"] + 0.1 < f["completion_s"] < 5.0
        assert f["goodput_bps"] == pytest.approx(size * 8 / (f["completion_s"] - f["start_s"]))
        assert f["data_packets_delivered"] == math.ceil(size / MSS)
        # idle time after completion must not count as congestion events
        assert f["fast_recoveries"] + f["timeouts"] <= 6


def test_stopped_bulk_flow():
    plan = dumbbell_plan(1, duration_ns=4_000_000_000)
    plan["flows"][0]["stop_ns"] = 2_000_000_000
    res = ns2.run_plan(plan, sample_interval_ns=100_000_000)
    (flow,) = res["flows"]
    assert flow["end_s"] == 2.0 and flow["completion_s"] is None
    series = [r for r in res["flow_series"] if r["flow_id"] == 0]
    at_stop = next(r for r in series if r["t_s"] == pytest.approx(2.0))
    # after the stop only the data already in flight (< W ~ 92 segments) arrives
    assert 0 <= flow["bytes_delivered"] - at_stop["bytes_delivered"] <= 100 * MSS
    assert all(r["goodput_bps"] == 0 for r in series if r["t_s"] > 2.5)
    assert flow["goodput_bps"] == pytest.approx(flow["bytes_delivered"] * 8 / 2.0)
    cuts = analysis.cwnd_reductions([r["t_s"] for r in series], [r["cwnd_pkts"] for r in series])
    assert flow["fast_recoveries"] <= len(cuts) + 2


def test_fast_headers_do_not_change_results():
    plan = dumbbell_plan(2, starts_ns=[0, 500_000_000], duration_ns=5_000_000_000)
    a = ns2.run_plan(plan, sample_interval_ns=100_000_000)
    b = ns2.run_plan(plan, sample_interval_ns=100_000_000, fast_headers=True)
    for key in ("flows", "queues", "links", "flow_series", "queue_series", "packets_delivered"):
        assert a[key] == b[key], key
    assert "remove-all-packet-headers" in ns2.plan_to_tcl(plan, "/tmp", fast_headers=True)


def test_send_jitter_maps_to_overhead_and_the_seed_to_the_rng():
    plan = dumbbell_plan(4, starts_ns=[0, 1_000_000, 2_000_000, 3_000_000], duration_ns=10_000_000_000)
    for f in plan["flows"]:
        # 1 ms, above the 0.6 ms a packet takes at 20 Mb/s: smaller delays can leave the order of
        # arrivals at the bottleneck, and so every result, the same for every seed.
        f["send_jitter_ns"] = 1_000_000
    plan["seed"] = 7
    tcl = ns2.plan_to_tcl(plan, "/tmp")
    assert "$defaultRNG seed 8" in tcl
    assert tcl.count("set overhead_ 0.001") == 4, tcl
    # The jitter is live in Agent/TCP/Linux: another seed gives other per-flow goodputs, the same
    # seed the same ones (ns-2 has no other randomness in this plan).
    a = ns2.run_plan(plan)
    b = ns2.run_plan(plan)
    plan["seed"] = 8
    c = ns2.run_plan(plan)
    goodputs = lambda r: [f["goodput_bps"] for f in r["flows"]]  # noqa: E731
    assert goodputs(a) == goodputs(b)
    assert goodputs(a) != goodputs(c)


def test_plan_errors():
    plan = dumbbell_plan(1)
    plan["flows"][0]["cc"] = "no-such-cc"
    with pytest.raises(ValueError, match="no-such-cc"):
        ns2.plan_to_tcl(plan, "/tmp")
    plan = dumbbell_plan(1, recovery="newreno")
    plan["flows"][0]["cc"] = "cubic"
    with pytest.raises(ValueError, match="newreno"):
        ns2.plan_to_tcl(plan, "/tmp")


def test_rack_tlp_plans_are_refused_with_the_fix():
    # fatpipe's default (RACK-TLP on, as Linux) is a TCP ns-2.35 does not have: never run it
    # silently as something else.
    for on in (["rack"], ["tlp"], ["rack", "tlp"]):
        plan = dumbbell_plan(2)
        for k in on:
            plan["flows"][1][k] = True
        with pytest.raises(ValueError) as e:
            ns2.plan_to_tcl(plan, "/tmp")
        msg = str(e.value)
        assert msg.startswith("flow 1:"), msg
        for k in on:
            assert f"tcp.{k}" in msg and f"tcp.{k} = false" in msg, msg
    # Off (or absent, as in plans older than RACK-TLP) is accepted.
    plan = dumbbell_plan(1)
    del plan["flows"][0]["rack"], plan["flows"][0]["tlp"]
    assert "Agent/TCP/Linux" in ns2.plan_to_tcl(plan, "/tmp")


def test_ns_failure_raises_with_stderr(monkeypatch, tmp_path):
    monkeypatch.setattr(ns2, "plan_to_tcl", lambda *a, **k: 'error "boom from the test"\n')
    with pytest.raises(RuntimeError, match="boom from the test"):
        ns2.run_plan(dumbbell_plan(1), workdir=str(tmp_path))
