"""More bad input through the CLI (exit status 2, the parameter named, nothing written), the
human-readable dry run, and two sweeps writing one store at the same time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fatpipe.experiments import open_store
from experiments.sweeps_common import write_sweep


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "fatpipe.cli", *args], capture_output=True, text=True, **kw)


@pytest.mark.parametrize(
    "extra,flags,param",
    [
        ('metrics = ["utilisation", "happiness"]\n', (), "metrics"),
        ("replications = 0\n", (), "replications"),
        ('replications = "3"\n', (), "replications"),
        ("seeds = [4, 4]\n", (), "seeds"),
        ("", ("--reps", "0"), "replications"),
        ("", ("--set", "topology.nonsense=1"), "topology.nonsense"),
    ],
)
def test_more_bad_input_exits_2_naming_the_parameter_and_writes_nothing(tmp_path, extra, flags, param):
    p = write_sweep(tmp_path, reps=2)
    text = p.read_text()
    if extra.startswith("metrics"):
        text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("metrics")) + "\n"
    if extra.startswith(("replications", "seeds")):
        text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("replications")) + "\n"
    # Top-level keys go before the first [[vary]] table.
    head, _, vary = text.partition("[[vary]]")
    p.write_text(head + extra + "[[vary]]" + vary)
    store = tmp_path / "store"
    r = cli("sweep", str(p), "--store", str(store), *flags)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert param in r.stderr
    assert "Traceback" not in r.stderr
    assert not store.exists()


def test_dry_run_text_gives_counts_and_cost_and_what_the_store_has(tmp_path):
    p = write_sweep(tmp_path, vary='"topology.pairs" = [1, 2, 4]', reps=2)
    store = tmp_path / "store"
    r = cli("sweep", str(p), "--store", str(store), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "3 points x 2 replications = 6 runs" in r.stdout
    assert "estimated cost" in r.stdout and "packets" in r.stdout
    assert not store.exists()
    # With part of the sweep stored, the dry run says how much.
    r = cli("sweep", str(p), "--store", str(store), "--reps", "1", "--workers", "2", "--json")
    assert r.returncode == 0, r.stderr
    r = cli("sweep", str(p), "--store", str(store), "--dry-run")
    assert r.returncode == 0 and "3 of 6 runs" in r.stdout
    # Still nothing new ran.
    assert len(open_store(store).runs()) == 3


def test_two_sweeps_into_one_store_at_once_store_each_run_once(tmp_path):
    """Two `fatpipe sweep` processes on the same file and store (say, two terminals) both finish;
    each run is stored once, whichever process stored it."""
    p = write_sweep(tmp_path, vary='"topology.bottleneck.queue.limit" = ["20pkt", "40pkt", "60pkt"]', reps=2)
    store = tmp_path / "store"
    open_store(store)  # both processes find the store already there
    cmd = [sys.executable, "-m", "fatpipe.cli", "sweep", str(p), "--store", str(store), "--workers", "1", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [pr.communicate(timeout=300) for pr in procs]
    for pr, (out, err) in zip(procs, outs):
        assert pr.returncode == 0, err
        o = json.loads(out)
        assert o["ran"] + o["reused"] == 6 and not o["failed"]
    st = open_store(store)
    runs = st.runs("t")
    assert len(runs) == 6 and runs["key"].is_unique
    assert len(st.runs()) == 6
    assert len(list((store / "runs").glob("*/*"))) == 6
    for k in runs["key"]:
        st.verify(k)
    assert not any((store / "tmp").iterdir())
