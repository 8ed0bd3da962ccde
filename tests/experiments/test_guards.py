"""Guards found while testing the experiments code: bad executor options rejected before anything
is written, a corrupted run never listed as finished while it awaits its rerun, seeds and
replications that contradict each other, and the rerun command that `results show` prints."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pandas as pd
import pytest

from fatpipe.experiments import Sweep, SweepError, open_store, run_sweep
from experiments.sweeps_common import write_sweep


def cli(*args):
    return subprocess.run([sys.executable, "-m", "fatpipe.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("kw,param", [({"workers": 0}, "workers"), ({"workers": -1}, "workers"),
                                      ({"retries": -1}, "retries")])
def test_bad_executor_options_are_rejected_before_the_store_is_touched(tmp_path, kw, param):
    sw = Sweep.load(write_sweep(tmp_path, reps=1))
    with pytest.raises(SweepError) as e:
        run_sweep(sw, tmp_path / "store", **kw)
    assert e.value.parameter == param
    assert not (tmp_path / "store").exists()
    # A negative pool size used to run nothing and report success.
    flag = f"--{param}"
    r = cli("sweep", str(tmp_path / "sweep.toml"), "--store", str(tmp_path / "store"), flag, str(kw[param]))
    assert r.returncode == 2 and param in r.stderr
    assert not (tmp_path / "store").exists()


def test_seeds_and_replications_must_agree(tmp_path):
    p = write_sweep(tmp_path, reps=2, extra="seeds = [5, 6, 7]\n")
    with pytest.raises(SweepError) as e:
        Sweep.load(p)
    assert e.value.parameter == "replications"
    p.write_text(p.read_text().replace("seeds = [5, 6, 7]", "seeds = [5, 6]"))
    assert Sweep.load(p).seed_list == [5, 6]
    # --reps overrides both.
    assert Sweep.load(p, replications=3).seed_list == [1, 2, 3]


def test_a_corrupted_run_leaves_the_catalogue_until_its_rerun_is_stored(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, reps=2))
    store = tmp_path / "store"
    first = run_sweep(sw, store, workers=2)
    st = open_store(store)
    key = first.runs()["key"].iloc[-1]
    before = st.runs(sw.name).set_index("key").sort_index()
    f = st.path(key) / "flows.parquet"
    f.write_bytes(f.read_bytes()[:-50])
    # The same sweep with a new first value: two new runs go before the corrupted one's rerun
    # (one worker), so the catalogue can be read while that rerun has not been stored yet.
    sw2 = Sweep.load(write_sweep(tmp_path, reps=2, vary='"topology.bottleneck.queue.limit" = ["10pkt", "20pkt", "60pkt"]'))
    seen = []

    def look(kind, info):
        if kind == "done" and not seen:
            seen.append(set(open_store(store).runs()["key"]))

    again = run_sweep(sw2, store, workers=1, on_event=look)
    assert key not in seen[0] and len(seen[0]) == 4  # 3 intact runs + the first new one
    assert (again.ran, again.reused) == (3, 3)
    after = open_store(store).runs(sw2.name).set_index("key")
    m = list(sw.metrics)
    pd.testing.assert_frame_equal(after.loc[before.index, m], before[m], check_exact=True)


def test_results_show_prints_a_runnable_rerun_command(tmp_path):
    sw = Sweep.load(write_sweep(tmp_path, reps=1))
    store = tmp_path / "store"
    out = run_sweep(sw, store, workers=2)
    key = out.runs()["key"].iloc[0]
    r = cli("results", "--store", str(store), "show", key[:12])
    assert r.returncode == 0, r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if ln.strip().startswith("rerun:")]
    argv = shlex.split(line.split("rerun:", 1)[1])
    assert argv[:2] == ["fatpipe", "run"] and "<" not in argv[2]
    dest = tmp_path / "rerun"
    r = cli(*argv[1:], "--out", str(dest), "--no-report", "-q")
    assert r.returncode == 0, r.stderr
    flows = pd.read_parquet(dest / "flows.parquet")
    pd.testing.assert_frame_equal(flows, open_store(store).load(key).to_pandas("flows"), check_exact=True)
