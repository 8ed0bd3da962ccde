"""Faults the issue requires: kill -9 and Ctrl-C of a sweep, corrupted results, a worker process
killed mid-run, a run that always fails. Every sweep must end with each run present exactly once.

Runs here are sized to take about a second each (1 Gb/s for 60 s simulated), so a signal sent
after the first result lands while others are still running; the assertions hold wherever the
signal lands, only how much is left to do changes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fatpipe.experiments import CorruptResultError, Sweep, open_store, run_sweep
from fatpipe.experiments.local_pool import WorkerDied, WorkerPool
from experiments.sweeps_common import BASE, write_sweep
from interrupts import default_sigint

SLOW = '"topology.bottleneck.queue.limit" = ["100pkt", "200pkt", "300pkt", "400pkt"]'
SLOW_SET = ["duration=60s", "topology.bottleneck.rate=1Gbps", "topology.pairs=4"]


def slow_sweep(tmp: Path, reps: int = 2) -> Path:
    p = write_sweep(tmp, vary=SLOW, reps=reps, name="slow")
    text = p.read_text().replace('set = ["duration=3s", "topology.bottleneck.rate=10Mbps", "topology.pairs=2"]',
                                 "set = " + json.dumps(SLOW_SET))
    p.write_text(text)
    return p


def start_sweep(p: Path, store: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fatpipe.cli", "sweep", str(p), "--store", str(store),
                             "--workers", "2", "--json", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=default_sigint)


def wait_for_runs(store: Path, n: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    t0 = time.monotonic()
    while len([d for d in (store / "runs").glob("*/*") if (d / "MANIFEST.json").exists()]) < n:
        assert proc.poll() is None, "sweep ended before it could be interrupted"
        assert time.monotonic() - t0 < timeout
        time.sleep(0.05)


def assert_complete_once(store: Path, expected: int) -> None:
    st = open_store(store)
    runs = st.runs("slow")
    assert len(runs) == expected and runs["key"].is_unique
    assert len(st.runs()) == expected
    dirs = [d for d in (store / "runs").glob("*/*")]
    assert len(dirs) == expected
    for k in runs["key"]:
        st.verify(k)
    assert not any((store / "tmp").iterdir())


def test_kill_9_then_rerun_completes_every_run_exactly_once(tmp_path):
    p, store = slow_sweep(tmp_path), tmp_path / "store"
    proc = start_sweep(p, store)
    wait_for_runs(store, 2, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list((store / "runs").glob("*/*")))
    assert 2 <= done_before < 8
    proc = start_sweep(p, store)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    outcome = json.loads(out)
    assert outcome["reused"] >= done_before and outcome["ran"] + outcome["reused"] == 8
    assert_complete_once(store, 8)


def test_ctrl_c_exits_130_and_leaves_only_complete_runs(tmp_path):
    p, store = slow_sweep(tmp_path), tmp_path / "store"
    proc = start_sweep(p, store)
    wait_for_runs(store, 1, proc)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends to the foreground group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    st = open_store(store)
    keys = [d.name for d in (store / "runs").glob("*/*")]
    assert keys
    for k in keys:
        st.verify(k)


def test_corrupted_or_truncated_results_are_detected_and_rerun(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, reps=2))
    store = tmp_path / "store"
    first = run_sweep(sw, store, workers=2)
    st = open_store(store)
    keys = list(first.runs()["key"])
    original = {k: st.load(k).to_pandas("flows") for k in keys[:3]}
    d0, d1, d2 = (st.path(k) for k in keys[:3])
    pq_file = d0 / "flows.parquet"
    pq_file.write_bytes(pq_file.read_bytes()[:-100])  # truncated
    meta = bytearray((d1 / "metadata.json").read_bytes())
    meta[50] ^= 0xFF  # one flipped byte
    (d1 / "metadata.json").write_bytes(bytes(meta))
    (d2 / "MANIFEST.json").unlink()  # a half-written directory
    for k in keys[:3]:
        with pytest.raises(CorruptResultError):
            st.verify(k)
        with pytest.raises(CorruptResultError):
            st.load(k)
    again = run_sweep(sw, store, workers=2)
    assert (again.ran, again.reused) == (3, 1)
    import pandas as pd

    for k, df in original.items():
        st.verify(k)
        pd.testing.assert_frame_equal(st.load(k).to_pandas("flows"), df, check_exact=True)


def test_worker_killed_mid_run_fails_only_that_run():
    from experiments.sweeps_common import FAST
    import fatpipe
    from fatpipe.experiments.sweep import RunSpec, SweepPoint

    sc = fatpipe.Scenario.load(BASE).with_overrides(*SLOW_SET)
    spec = RunSpec("x", SweepPoint(0, ()), 1, sc.text, tuple(sc.overrides), sc.source)
    pool = WorkerPool(1)
    try:
        fut = pool.submit((spec, None))
        t0 = time.monotonic()
        while not pool.pids() and time.monotonic() - t0 < 30:
            time.sleep(0.01)
        time.sleep(0.3)  # the run takes about a second
        os.kill(pool.pids()[0], signal.SIGKILL)
        with pytest.raises(WorkerDied, match="exit status -9"):
            fut.result(timeout=60)
        # A fresh worker takes the next run.
        quick = fatpipe.Scenario.load(BASE).with_overrides(*FAST)
        run = pool.submit((RunSpec("x", SweepPoint(0, ()), 1, quick.text, tuple(quick.overrides)), None)).result(timeout=60)
        assert run.metrics["utilisation"] > 0
    finally:
        pool.shutdown()


def test_worker_killed_during_a_sweep_is_recorded_and_retried(tmp_path):
    sw = Sweep.load(slow_sweep(tmp_path, reps=1))
    store = tmp_path / "store"
    killed = threading.Event()

    def killer(kind, info):
        # After the first result, kill every worker: the other one is mid-run.
        if kind == "done" and not killed.is_set():
            killed.set()
            for pid in _worker_pids():
                os.kill(pid, signal.SIGKILL)

    out = run_sweep(sw, store, workers=2, retries=2, on_event=killer)
    assert out.ok and out.ran == 4
    assert_complete_once(store, 4)
    fails = open_store(store).failures("slow")
    assert len(fails) >= 1 and fails["error"].str.contains("worker process died").all()
    assert out.retried == len(fails)


def _worker_pids() -> list[int]:
    me, pids = os.getpid(), []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and b"fatpipe.experiments.worker" in cmd:
            pids.append(int(d.name))
    return pids


def test_a_run_that_always_fails_is_retried_then_listed(tmp_path):
    # The small run needs about 230 events (its monitor 30 samples, below the limit).
    p = write_sweep(tmp_path, vary='"limits.max_events" = [100, 20000000000]', reps=1, name="slow")
    store = tmp_path / "store"
    r = subprocess.run([sys.executable, "-m", "fatpipe.cli", "sweep", str(p), "--store", str(store),
                        "--workers", "2", "--retries", "2", "--json"], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    outcome = json.loads(r.stdout)
    assert outcome["ran"] == 1 and len(outcome["failed"]) == 1
    f = outcome["failed"][0]
    assert f["attempts"] == 3 and "event limit" in f["error"]
    fails = open_store(store).failures("slow")
    assert len(fails) == 3 and (fails["key"] == f["key"]).all()
    assert len(open_store(store).runs("slow")) == 1
