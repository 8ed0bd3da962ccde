"""The same sweep on a real Dask cluster: a scheduler and two workers started here on loopback.

Results must equal a local run's (same keys, same metrics), through `--cluster` and through a
`distributed.Client`; a worker killed mid-sweep must lose and duplicate nothing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is a declared dependency; install it")

from fatpipe.experiments import Sweep, open_store, run_sweep  # noqa: E402
from experiments.sweeps_common import write_sweep  # noqa: E402
from experiments.test_faults import SLOW_SET, assert_complete_once, slow_sweep  # noqa: E402

DASK = str(Path(sys.executable).with_name("dask"))


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([DASK, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


@pytest.fixture
def cluster(tmp_path):
    """(address, worker processes) of a scheduler and two single-threaded workers on 127.0.0.1."""
    if not Path(DASK).exists():
        pytest.skip("the dask command is not installed next to this Python")
    sfile = tmp_path / "scheduler.json"
    procs = [_spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(sfile))]
    try:
        t0 = time.monotonic()
        while not sfile.exists() or not sfile.read_text().strip():
            assert time.monotonic() - t0 < 60, "scheduler did not start"
            time.sleep(0.1)
        addr = json.loads(sfile.read_text())["address"]
        workers = [_spawn("worker", "--scheduler-file", str(sfile), "--nthreads", "1", "--no-nanny",
                          "--no-dashboard", "--host", "127.0.0.1") for _ in range(2)]
        procs += workers
        with distributed.Client(addr) as c:
            c.wait_for_workers(2, timeout=60)
        yield addr, workers
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_cluster_runs_equal_local_runs(cluster, tmp_path):
    addr, _ = cluster
    sw = Sweep.load(write_sweep(tmp_path, reps=2))
    local = run_sweep(sw, tmp_path / "local", workers=2).runs().set_index("key").sort_index()
    r = subprocess.run([sys.executable, "-m", "fatpipe.cli", "sweep", str(tmp_path / "sweep.toml"),
                        "--store", str(tmp_path / "dask-cli"), "--cluster", addr, "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ran"] == 4
    via_cli = open_store(tmp_path / "dask-cli").runs(sw.name).set_index("key").sort_index()
    with distributed.Client(addr) as client:
        via_client = run_sweep(sw, tmp_path / "dask-client", cluster=client).runs().set_index("key").sort_index()
    m = list(sw.metrics)
    for other in (via_cli, via_client):
        assert list(other.index) == list(local.index)
        pd.testing.assert_frame_equal(other[m], local[m], check_exact=True)


def test_worker_killed_mid_sweep_loses_and_duplicates_nothing(cluster, tmp_path):
    addr, workers = cluster
    sw = Sweep.load(slow_sweep(tmp_path, reps=1))
    store = tmp_path / "store"
    killed = []

    def kill_one(kind, info):
        if kind == "done" and not killed:
            killed.append(workers[0].pid)
            os.killpg(workers[0].pid, signal.SIGKILL)

    out = run_sweep(sw, store, cluster=addr, retries=2, on_event=kill_one)
    assert killed and out.ok and out.ran == 4
    assert_complete_once(store, 4)


def test_a_dask_worker_imports_once_and_runs_many(cluster, tmp_path):
    """Each worker process runs its share of the sweep in one imported copy of fatpipe: the
    run counter of that copy equals the runs the worker did, and the copy is the same object
    before and after the sweep (nothing re-imported per run)."""
    addr, _ = cluster

    def copy_of_fatpipe():
        import sys

        import fatpipe.experiments.execute as ex

        return id(sys.modules["fatpipe"]), ex.RUNS_IN_PROCESS

    with distributed.Client(addr) as client:
        before = client.run(copy_of_fatpipe)
        out = run_sweep(Sweep.load(write_sweep(tmp_path, reps=3)), tmp_path / "store", cluster=client)
        after = client.run(copy_of_fatpipe)
    assert out.ok and out.ran == 6
    assert set(after) == set(before)
    runs = {w: after[w][1] - before[w][1] for w in after}
    assert sum(runs.values()) == 6, runs
    assert max(runs.values()) >= 2, runs
    assert all(after[w][0] == before[w][0] for w in after), "fatpipe was imported again"
