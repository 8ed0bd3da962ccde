"""The sweep writer and the run order: runs submitted longest first (the dry run's estimate), the
same stored bytes whatever the order or the number of workers, and the catalogue — committed per
group of runs, its run rows without waiting for the disk — rebuilt from the run directories after
a kill -9 between the renames and the commit, or after its rows or its file are lost."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

import fatpipe
from fatpipe.experiments import Sweep, open_store, run_sweep
from fatpipe.experiments.execute import execute_run, schedule
from fatpipe.experiments.sweep import NOMINAL_PACKETS_PER_S, NOMINAL_SAMPLE_S
from experiments.sweeps_common import write_sweep

# Six points: duration crossed with pairs. At a saturated 10 Mb/s bottleneck the data packets
# grow with the duration, the monitor samples with the duration and the flows (and links).
ORDER_VARY = '"duration" = ["1s", "3s", "2s"]\n[[vary]]\n"topology.pairs" = [1, 2]'
# Point indices (duration outer, pairs inner): 0 = (1s, 1), 1 = (1s, 2), 2 = (3s, 1),
# 3 = (3s, 2), 4 = (2s, 1), 5 = (2s, 2). Longest first: 3 s before 2 s before 1 s, and at equal
# duration two pairs (more samples) before one; a point's seeds in the sweep's order.
EXPECTED_ORDER = [(p, s) for p in (3, 2, 5, 4, 1, 0) for s in (1, 2)]


def test_schedule_is_longest_first_and_keeps_the_sweep_order_between_equal_costs():
    keys = ["a", "b", "c", "d", "e"]
    costs = {"a": 1.0, "b": 3.0, "c": 1.0, "d": 3.0, "e": 2.0}
    assert schedule(keys, costs) == ["b", "d", "e", "a", "c"]
    assert schedule(keys, {k: 0.0 for k in keys}) == keys


def test_dry_run_estimate_counts_packets_and_monitor_samples(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, vary=ORDER_VARY, reps=2))
    d = sw.dry_run()
    # 10 Mb/s in 1500-byte packets for 1 + 3 + 2 s, at two pair counts, two seeds.
    assert d.packets_estimate == pytest.approx(2 * 2 * 10e6 * 6 / (8 * 1500))
    # One sample per 100 ms of every flow and link: a dumbbell of p pairs has 4p + 2 links.
    samples_per_s = 10 * ((1 + 6) + (2 + 10))
    assert d.samples_estimate == pytest.approx(2 * 6 * samples_per_s)
    assert d.wall_s_estimate == pytest.approx(d.packets_estimate / NOMINAL_PACKETS_PER_S
                                              + d.samples_estimate * NOMINAL_SAMPLE_S)


def _manifest_hashes(store, key: str) -> dict[str, str]:
    m = json.loads((store.path(key) / "MANIFEST.json").read_text())
    # metadata.json holds timings and the creation time: the tables are what must not change.
    return {f: v["sha256"] for f, v in m["files"].items() if f.endswith(".parquet")}


def test_runs_are_submitted_longest_first_and_results_do_not_depend_on_order_or_workers(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, vary=ORDER_VARY, reps=2, name="order"))
    orders, stores = [], []
    for workers in (1, 2):
        submitted: list[tuple[int, int]] = []

        def record(kind, info):
            if kind == "submitted":
                submitted.append((info["point"], info["seed"]))

        store = tmp_path / f"w{workers}"
        out = run_sweep(sw, store, workers=workers, on_event=record)
        assert out.ok and out.ran == 12
        orders.append(submitted)
        stores.append(open_store(store))
    assert orders[0] == orders[1] == EXPECTED_ORDER
    # The same runs executed in this process, shortest first (the reverse of the sweep's order),
    # stored through the writer one by one.
    rev = open_store(tmp_path / "reversed")
    by_point = {(s.point.index, s.seed): s for s in sw.runs()}
    for point_seed in reversed(EXPECTED_ORDER):
        rev.write_runs([execute_run(by_point[point_seed])])
    stores.append(rev)
    ref = stores[0].runs("order").set_index("key").sort_index()
    assert len(ref) == 12
    for st in stores[1:]:
        other = st.runs().set_index("key").sort_index()
        assert list(other.index) == list(ref.index)
        pd.testing.assert_frame_equal(other[list(sw.metrics)], ref[list(sw.metrics)], check_exact=True)
        for key in ref.index:
            st.verify(key)
            assert _manifest_hashes(st, key) == _manifest_hashes(stores[0], key)


def test_a_run_stored_by_put_has_the_bytes_a_worker_encodes(tmp_path):
    """Store.put (encoding in the calling process) and a worker's encoding give the same tables."""
    sw = Sweep.load(write_sweep(tmp_path, reps=1))
    spec = sw.runs()[0]
    a = open_store(tmp_path / "a")
    a.write_runs([run := execute_run(spec)])
    b = open_store(tmp_path / "b")
    scenario = spec.scenario()
    result = fatpipe.run(scenario, seed=spec.seed)
    from fatpipe.output import metadata

    b.put(run.key, result, metadata(result, scenario, wall_s=0.0, command=None), run.metrics)
    b.verify(run.key)
    assert _manifest_hashes(a, run.key) == _manifest_hashes(b, run.key)


def test_lost_catalogue_rows_or_file_are_rebuilt_from_the_run_directories(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, reps=2))
    store = tmp_path / "store"
    assert run_sweep(sw, store, workers=2).ran == 4
    before_all = open_store(store).runs().set_index("key").sort_index()
    before_sweep = open_store(store).runs(sw.name).set_index("key").sort_index()
    # What a power loss can take from the catalogue: run rows committed since its last
    # checkpoint (they are committed without waiting for the disk).
    with sqlite3.connect(store / "catalog.sqlite") as c:
        c.execute("DELETE FROM runs")
    st = open_store(store)
    assert st.runs().empty
    assert st.reconcile()["indexed"] == 4
    pd.testing.assert_frame_equal(st.runs().set_index("key").sort_index(), before_all, check_exact=True)
    # Even the whole catalogue gone: the next sweep re-indexes every run and reruns none.
    for f in store.glob("catalog.sqlite*"):
        f.unlink()
    again = run_sweep(sw, store, workers=2)
    assert (again.ran, again.reused) == (0, 4)
    pd.testing.assert_frame_equal(open_store(store).runs(sw.name).set_index("key").sort_index(), before_sweep,
                                  check_exact=True)


CHILD = textwrap.dedent("""
    import json, os, signal, sys
    from fatpipe.experiments import Sweep, open_store
    from fatpipe.experiments.execute import execute_run
    from fatpipe.experiments.store import Store

    sw = Sweep.load(sys.argv[1])
    store = open_store(sys.argv[2])
    runs = [execute_run(s) for s in sw.runs()]
    print(json.dumps({r.key: r.metrics for r in runs}), flush=True)

    def killed_before_commit(self, rows):  # the worst moment: every run renamed, no row committed
        os.kill(os.getpid(), signal.SIGKILL)

    Store._index_rows = killed_before_commit
    store.write_runs(runs)
    print("not reached", flush=True)
""")


def test_kill_9_between_the_renames_and_the_catalogue_commit_loses_no_run(tmp_path):
    p = write_sweep(tmp_path, reps=2)
    store = tmp_path / "store"
    r = subprocess.run([sys.executable, "-c", CHILD, str(p), str(store)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == -signal.SIGKILL, r.stderr
    assert "not reached" not in r.stdout
    metrics = json.loads(r.stdout.splitlines()[0])
    st = open_store(store)
    assert st.runs().empty  # the group's rows were never committed ...
    for key in metrics:
        st.verify(key)  # ... but every run is complete under runs/
    sw = Sweep.load(p)
    again = run_sweep(sw, store, workers=1)
    assert (again.ran, again.reused) == (0, 4)
    runs = open_store(store).runs(sw.name).set_index("key")
    assert set(runs.index) == set(metrics)
    for key, m in metrics.items():
        for name in sw.metrics:
            assert runs.loc[key, name] == m[name] or (math.isnan(m[name]) and math.isnan(runs.loc[key, name]))
    assert not any((store / "tmp").iterdir())
    assert len(list((store / "runs").glob("*/*"))) == 4
    assert os.path.exists(store / "catalog.sqlite")
