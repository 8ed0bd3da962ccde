"""The command line: run, --json, --set, results files, exit status 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

FATPIPE = [sys.executable, "-m", "fatpipe.cli"]


def fatpipe_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FATPIPE, *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_run_json_prints_one_object_with_the_summary(scenarios_dir, tmp_path):
    out = tmp_path / "run"
    p = fatpipe_cli("run", str(scenarios_dir / "dumbbell-reno.toml"), "--set", "duration=3s",
                    "--out", str(out), "--json", "--seed", "4")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    for key in ("flows", "aggregate_goodput_bps", "utilisation", "drops", "retransmits", "events",
                "packets_delivered", "wall_s", "seed", "version"):
        assert key in s, key
    assert s["seed"] == 4 and len(s["flows"]) == 4
    # results: Parquet tables + metadata JSON + report
    for name in ("flows", "flow_series", "queues", "queue_series", "links"):
        assert pq.read_table(out / f"{name}.parquet").num_rows > 0
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["seed"] == 4 and meta["fatpipe_version"] and "timings" in meta
    assert meta["overrides"] == ["duration=3s"]
    assert (out / "report" / "report.html").exists()


def test_run_prints_a_summary_table(scenarios_dir, tmp_path):
    p = fatpipe_cli("run", str(scenarios_dir / "dumbbell-reno.toml"), "--set", "duration=2s",
                    "--out", str(tmp_path / "r"), "--no-report")
    assert p.returncode == 0, p.stderr
    assert "goodput" in p.stdout and "s0->d0" in p.stdout and "utilisation" in p.stdout


BAD = [
    ("bogus_field=1", "unknown field"),
    ("topology.bottleneck.rate=-5Mbps", "topology.bottleneck.rate"),
    ("topology.bottleneck.rate=0Mbps", "positive rate"),
    ("topology.bottleneck.queue.limit=0pkt", "queue of size 0"),
    ("tcp.cc=nosuchcc", "unknown congestion control"),
    ("flows.0.pairs=[9]", "pair 9 does not exist"),
    # Traffic and background (the 2009-study issue): rejected at load time naming the field.
    ("background.load=1.5", "background.load"),
    ("background={load = 0.5, mix = {cbr = 0.5, ftp = 0.5, web = 0.5}}", "background.mix"),
    ("background={load = 0.5, web = {base_sigma = 0.0}}", "background.web.base_sigma"),
    ("flows.0.kind=web", "flows.0.load"),
    ("topology={kind = \"parkinglot\", bottlenecks = 1, pairs = 2, bottleneck = {rate = \"10Mbps\", delay = \"10ms\"}}",
     "topology.bottlenecks"),
    # DCCP and voice (the DCCP/VoIP issue).
    ("dccp={ccid = 4}", "dccp.ccid"),
    ("dccp={queue = 0}", "dccp.queue"),
    ("flows.0={kind = \"voip\", voip = {on = \"0s\"}}", "flows.0.voip.on"),
    ("flows.0={kind = \"voip\", voip = {off = \"0s\"}}", "flows.0.voip.off"),
    ("flows.0={kind = \"voip\", voip = {rate = \"0bps\"}}", "flows.0.voip.rate"),
    ("flows.0={kind = \"voip\", voip = {packet = \"0B\"}}", "flows.0.voip.packet"),
    ("flows.0={kind = \"bulk\", transport = \"udp\"}", "flows.0.transport"),
    # A ring with a missing link (3 delays for 4 routers), and an odd ring.
    ("topology={kind = \"ring\", ring = {delays = [\"25ms\", \"25ms\", \"25ms\"]}}", "topology.ring.delays"),
    ("topology={kind = \"ring\", routers = 5, ring = {delay = \"25ms\"}}", "topology.routers"),
]


#: Out-of-range congestion-control parameters named by the high-speed TCP issue: rejected at load
#: time, exit 2, the message naming tcp.cc_params, the parameter and what it must be.
BAD_CC = [
    ("cubic", "{beta = 1.0}", "beta = 1: must be in (0, 1)"),
    ("cubic", "{beta = 0.0}", "beta = 0: must be in (0, 1)"),
    ("cubic", "{c = 0.0}", "c = 0: must be > 0"),
    ("bic", "{max_increment = 8.0, min_increment = 16.0}", "min_increment = 16"),
    ("libra", "{capacity = 0}", "capacity = 0: must be > 0 bit/s"),
    ("fast", "{alpha = 0.0}", "alpha = 0: must be > 0 packets"),
    ("compound", "{beta = 1.5}", "beta = 1.5: must be in (0, 1)"),
    ("cubic", "{no_such = 1}", "no_such"),
]


@pytest.mark.parametrize("cc, params, needle", BAD_CC)
def test_bad_cc_params_exit_2_naming_the_parameter(scenarios_dir, tmp_path, cc, params, needle):
    out = tmp_path / "never"
    p = fatpipe_cli("run", str(scenarios_dir / "dumbbell-reno.toml"), "--set", f"tcp.cc={cc}",
                    "--set", f"tcp.cc_params={params}", "--out", str(out))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr and "cc_params" in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    assert not out.exists()


@pytest.mark.parametrize("override, needle", BAD)
def test_bad_input_exits_2_with_a_clear_message_and_writes_nothing(scenarios_dir, tmp_path, override, needle):
    out = tmp_path / "never"
    p = fatpipe_cli("run", str(scenarios_dir / "dumbbell-reno.toml"), "--set", override, "--out", str(out))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert needle in p.stderr
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    assert not out.exists()
    assert not any(tmp_path.iterdir()), "no partial result files"


def test_unroutable_scenario_file_exits_2(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text(
        'duration = "1s"\n[topology]\nkind = "graph"\n'
        'nodes = [{ name = "a" }, { name = "b" }]\nlinks = []\n'
        '[[flows]]\nsrc = "a"\ndst = "b"\n'
    )
    p = fatpipe_cli("run", str(f), "--out", str(tmp_path / "o"))
    assert p.returncode == 2
    assert "no route" in p.stderr


def test_malformed_toml_and_missing_file_exit_2(tmp_path):
    f = tmp_path / "broken.toml"
    f.write_text('duration = "1s"\n[topology\n')
    p = fatpipe_cli("run", str(f))
    assert p.returncode == 2 and "line 2" in p.stderr
    p = fatpipe_cli("run", str(tmp_path / "absent.toml"))
    assert p.returncode == 2 and "no such file" in p.stderr


def test_schema_and_plan_commands(scenarios_dir):
    p = fatpipe_cli("schema")
    assert p.returncode == 0
    assert "topology" in json.loads(p.stdout)["properties"]
    p = fatpipe_cli("plan", str(scenarios_dir / "dumbbell-reno.toml"), "--set", "topology.pairs=2")
    assert p.returncode == 0
    assert len(json.loads(p.stdout)["flows"]) == 2


def test_bench_reports_packets_per_second_for_fatpipe_and_ns2():
    import shutil

    args = ["bench", "--set", "duration=2s", "--json"]
    if shutil.which("ns") is None:
        args.append("--no-ns2")
    p = fatpipe_cli(*args)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    fp = r["fatpipe"]
    assert fp["packets_delivered"] > 0 and fp["packets_per_wall_s"] > 0
    assert r["overrides"] == ["duration=2s"]
    if "ns2" in r:
        # Both simulators ran the same 2 s plan: delivered packets within 10 % of each other.
        assert abs(r["ns2"]["packets_delivered"] - fp["packets_delivered"]) < 0.1 * fp["packets_delivered"]
        assert r["speedup"] > 0


def test_bench_keeps_each_simulators_fastest_run(monkeypatch):
    """`--repeat N` repeats ns-2 as it repeats fatpipe and keeps the fastest of each: one ns-2
    run against fatpipe's best would favour fatpipe."""
    import fatpipe
    from fatpipe import bench
    from fatpipe.peers import ns2

    walls = iter([3.0, 1.5, 2.0])
    calls = []

    def fake_run_plan(plan, fast_headers):
        calls.append(fast_headers)
        return {"packets_delivered": 300, "wall_s": next(walls), "flows": [{"goodput_bps": 1e6}],
                "queues": [{"drops_tail": 2}]}

    monkeypatch.setattr(ns2, "run_plan", fake_run_plan)
    sc = fatpipe.Scenario.load(str(bench.DEFAULT_SCENARIO), ["duration=1s"])
    best = bench.run_ns2(sc, stock_headers=False, repeat=3)
    assert calls == [True, True, True]
    assert best["wall_s"] == 1.5 and best["packets_per_wall_s"] == 200.0


def test_bench_with_rack_tlp_runs_fatpipe_only():
    # The reference scenario turns RACK-TLP off for ns-2; turned on, ns-2 is skipped with a
    # reason instead of running another TCP.
    p = fatpipe_cli("bench", "--set", "duration=1s", "--set", "tcp.rack=true", "--set", "tcp.tlp=true")
    assert p.returncode == 0, p.stderr
    assert "ns-2.35 has no RACK-TLP (tcp.rack, tcp.tlp on): fatpipe only" in p.stdout
    assert "ns-2.35 " not in p.stdout.split("fatpipe only")[1]


def test_bench_cc_runs_the_reference_with_another_algorithm():
    p = fatpipe_cli("bench", "--cc", "newreno", "--set", "duration=1s", "--json", "--no-ns2")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["overrides"] == ["duration=1s", "tcp.cc=newreno"]
    assert r["fatpipe"]["packets_delivered"] > 0
    # Which build ran (speed depends on it): `make build-pgo` sets "pgo" at compile time.
    assert r["build"] in ("release", "pgo")
    p = fatpipe_cli("bench", "--cc", "no-such-cc", "--set", "duration=1s", "--no-ns2")
    assert p.returncode == 2 and "no-such-cc" in p.stderr


def test_bench_sweep_reports_the_writer_by_stage_and_runs_per_second_by_workers(tmp_path):
    p = fatpipe_cli("bench", "--sweep", "--writer-reps", "1", "--sweep-runs", "4", "--sweep-duration", "2s",
                    "--max-workers", "2", "--dir", str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    stages = {"receive", "write", "fsync", "rename", "catalogue"}
    # Five points of the quick sweep and the reference dumbbell, each stored alone and in groups.
    assert len(r["writer"]) == 6 and r["writer"][0]["run"] == "flows-quick topology.pairs=1"
    for row in r["writer"]:
        assert set(row["ms_per_run"]) == stages == set(row["group_ms_per_run"])
        assert row["total_ms"] == sum(row["ms_per_run"].values()) > 0 and row["flow_series_rows"] > 0
    assert [s["workers"] for s in r["scaling"]] == [1, 2]
    assert all(s["runs"] == 4 and s["runs_per_s"] > 0 and s["writer_ms_per_run"] > 0 for s in r["scaling"])
    assert r["scaling"][0]["speedup"] == 1.0
    assert not any(tmp_path.iterdir())  # the temporary stores are removed
    p = fatpipe_cli("bench", "--sweep", "--max-workers", "0")
    assert p.returncode == 2 and "--max-workers" in p.stderr


def test_ctrl_c_stops_a_run_with_status_130_and_writes_nothing(scenarios_dir, tmp_path):
    import signal
    import time

    from interrupts import default_sigint

    out = tmp_path / "interrupted"
    proc = subprocess.Popen(
        [*FATPIPE, "run", str(scenarios_dir / "long-fat-10g.toml"), "--set", "duration=120s", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )
    time.sleep(5.0)  # past start-up and into the simulation (a 120 s run at 10 Gb/s takes far longer)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert not out.exists() and not any(tmp_path.iterdir())


def test_algorithms_lists_the_registered_congestion_controls():
    p = fatpipe_cli("algorithms")
    assert p.returncode == 0
    names = [line.split()[0] for line in p.stdout.splitlines() if line.strip()]
    assert {"reno", "newreno"} <= set(names)


def test_a_closed_pipe_is_not_a_traceback():
    """`fatpipe plan ... | head`: the reader leaves early; no traceback, status 0. The plan of 300
    pairs is about 500 kB, far more than a pipe buffer (64 KiB), so the write does hit the closed pipe."""
    cmd = f"{sys.executable} -m fatpipe.cli plan scenarios/dumbbell-reno.toml --set topology.pairs=300"
    r = subprocess.run(f"set -o pipefail; {cmd} | head -c 10",
                       shell=True, executable="/bin/bash", capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parents[1])
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr


def test_peers_refuse_dccp_and_voice_flows_they_cannot_run_by_name(tmp_path):
    import fatpipe
    from fatpipe.peers import ns2, ns3
    sc = fatpipe.Scenario.from_toml(
        'duration = "2s"\n[topology]\nkind = "dumbbell"\npairs = 1\n'
        'bottleneck = { rate = "10Mbps", delay = "10ms" }\n[[flows]]\nkind = "voip"\ntransport = "dccp"\n')
    plan = sc.plan()
    # ns-2 runs voice over DCCP, but its CCID 2 has no idle decay (fatpipe's default)
    with pytest.raises(ValueError, match="dccp.restart_after_idle"):
        ns2.plan_to_tcl(plan, str(tmp_path))
    ok = sc.with_overrides("dccp.restart_after_idle=false").plan()
    assert "Agent/DCCP/TCPlike" in ns2.plan_to_tcl(ok, str(tmp_path))
    with pytest.raises(ValueError, match="ccid2|transport = 'dccp'"):
        ns3.plan_to_spec(plan)


def test_bench_table_children_may_cache_bytecode(monkeypatch):
    """A user's installed package has its .pyc files: a developer's PYTHONDONTWRITEBYTECODE must
    not make every timed `fatpipe run` child recompile the package (15-25 ms of its start-up);
    the rest of the environment (e.g. the allocator's settings) passes through."""
    from fatpipe import bench_table

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("MIMALLOC_ARENA_EAGER_COMMIT", "0")
    env = bench_table._child_env()
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["MIMALLOC_ARENA_EAGER_COMMIT"] == "0"


def test_bench_table_runs_every_row_and_prints_the_ratios():
    # Short runs (1 s each) of the three rows; ns-3 is left out (importing it costs ~20 s), ns-2
    # runs where installed. Timings are printed, never asserted.
    import shutil

    args = ["bench", "--table", "--table-duration", "1s", "--skip", "ns-3.44"]
    if shutil.which("ns") is None:
        args += ["--skip", "ns-2.35"]
    p = fatpipe_cli(*args, "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    sims = ["fatpipe"] + (["ns-2.35"] if shutil.which("ns") else [])
    rows = ["reference dumbbell", "long fat 10 Gb/s", "1 000 flows"]
    assert [(x["row"], x["simulator"]) for x in r["results"]] == [(row, s) for row in rows for s in sims]
    for x in r["results"]:
        assert x["sim_s"] == 1.0 and x["packets_delivered"] > 0 and x["peak_rss_bytes"] > 0
        assert x["wall_s"] >= x["loop_s"] > 0
    p = fatpipe_cli(*args)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("| 1 000 flows |") == len(sims)
    if "ns-2.35" in sims:
        assert "1 000 flows: fatpipe / ns-2.35 = " in p.stdout
