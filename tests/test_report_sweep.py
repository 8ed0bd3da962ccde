"""``fatpipe report``: figures, tables with n and rerun commands for a real (small) sweep.

The sweep is real (10 Mb/s dumbbell, 3 s simulated, 2 points x 2 series x 2 replications) so the
report is checked against what the store actually holds, not against hand-made tables.
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fatpipe
from fatpipe.experiments import Sweep, open_store, run_sweep, summarize_sweep
from fatpipe.report_sweep import choose_axes, format_ci, numeric, plot_metric, write_sweep_report

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "dumbbell-reno.toml"
METRICS = ["utilisation", "jain", "drops"]


@pytest.fixture(scope="module")
def sweep_store(tmp_path_factory):
    """A stored sweep: queue limit (x) crossed with tcp.recovery (series), 2 replications."""
    tmp = tmp_path_factory.mktemp("report-sweep")
    path = tmp / "sweep.toml"
    path.write_text(
        'name = "rep"\n'
        f'scenario = "{SCENARIO.as_posix()}"\n'
        'set = ["duration=3s", "topology.bottleneck.rate=10Mbps", "topology.pairs=2"]\n'
        "replications = 2\n"
        f"metrics = {METRICS!r}\n".replace("'", '"')
        + '[[vary]]\n"topology.bottleneck.queue.limit" = { values = [10, 40], unit = "pkt" }\n'
        + '[[vary]]\n"tcp.recovery" = ["sack", "newreno"]\n'
    )
    store = open_store(tmp / "store")
    outcome = run_sweep(Sweep.load(path), store, workers=2)
    assert outcome.ok and outcome.ran == 8
    return tmp, store, path


def test_report_has_figures_every_value_with_n_and_rerun_commands(sweep_store):
    tmp, store, _ = sweep_store
    page = write_sweep_report(store, "rep", tmp / "out")
    text = page.read_text()
    # One PNG and one SVG per metric, and the default time series (first and last point).
    for m in METRICS:
        assert (tmp / "out" / f"rep-{m}.png").stat().st_size > 1000
        assert (tmp / "out" / f"rep-{m}.svg").read_text().lstrip().startswith("<?xml")
    assert len(list((tmp / "out").glob("run-*-cwnd.png"))) == 2
    assert len(list((tmp / "out").glob("run-*-queues.svg"))) == 2
    assert text.count("data:image/png;base64,") == len(METRICS) + 2 * 3  # self-contained
    # Every per-point value appears with its n.
    summary = summarize_sweep(store.runs("rep"), ["topology.bottleneck.queue.limit", "tcp.recovery"], METRICS)
    assert len(summary) == 4 * len(METRICS)
    unescaped = html.unescape(text)
    for _, r in summary.iterrows():
        assert int(r["n"]) == 2
        assert format_ci(r["mean"], r["half_width"], 2) in unescaped
    assert len(re.findall(r"\(n=2\)", unescaped)) >= len(summary)
    # The exact commands: rerun the sweep with its replications, rebuild the report.
    assert "fatpipe sweep " in unescaped and "--reps 2" in unescaped
    assert "fatpipe report rep --store" in unescaped
    assert "--set duration=3s" in unescaped
    assert "fatpipe run " in unescaped and "--seed 1" in unescaped  # per-run rerun lines


def test_cli_report_with_chosen_runs(sweep_store, tmp_path):
    tmp, store, _ = sweep_store
    key = store.runs("rep").iloc[-1]["key"]
    p = subprocess.run(
        [sys.executable, "-m", "fatpipe.cli", "report", "rep", "--store", str(store.root), "--out",
         str(tmp_path / "r"), "--runs", key[:10]],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "report:" in p.stdout
    assert sorted(f.name for f in (tmp_path / "r").glob("run-*-goodput.png")) == [f"run-{key[:12]}-goodput.png"]


def test_cli_report_unknown_sweep_is_bad_input(sweep_store, tmp_path):
    _, store, _ = sweep_store
    p = subprocess.run([sys.executable, "-m", "fatpipe.cli", "report", "nope", "--store", str(store.root),
                        "--out", str(tmp_path / "x")], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2
    assert "nope" in p.stderr and "rep" in p.stderr  # names the sweeps the store has
    assert not (tmp_path / "x" / "report.html").exists()


def test_axes_and_series_choice():
    x, series = choose_axes({"tcp.recovery": ["sack", "newreno"], "topology.bottleneck.queue.limit": ["10pkt", "40pkt"]})
    assert (x, series) == ("topology.bottleneck.queue.limit", ["tcp.recovery"])
    assert choose_axes({"tcp.cc": ["reno", "newreno"], "x": [1, 2], "topology.pairs": [1, 2, 4]}) == (
        "topology.pairs", ["tcp.cc", "x"])
    assert numeric("2500pkt") == 2500.0 and numeric(True) is None


def test_figure_has_one_errorbar_line_per_series(sweep_store):
    _, store, _ = sweep_store
    summary = summarize_sweep(store.runs("rep"), ["topology.bottleneck.queue.limit", "tcp.recovery"], METRICS)
    fig = plot_metric(summary, "topology.bottleneck.queue.limit", "utilisation", ["tcp.recovery"])
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["tcp.recovery=sack", "tcp.recovery=newreno"]
    assert ax.get_xlabel() == "topology.bottleneck.queue.limit (pkt)"


def test_single_replication_says_no_ci():
    assert format_ci(0.5, float("nan"), 1) == "0.5 (n=1, no CI)"
    assert format_ci(float("nan"), float("nan"), 0) == "— (n=0)"
    assert fatpipe.__version__  # the package under test is importable


def test_docstring_examples():
    import doctest

    import fatpipe.report_sweep

    result = doctest.testmod(fatpipe.report_sweep, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
