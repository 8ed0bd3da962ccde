"""Tests of fatpipe.report on small synthetic tables (no simulation needed)."""

from __future__ import annotations

import html
import re
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fatpipe import metrics
from fatpipe import report

ROOT = Path(__file__).resolve().parents[1]


BOTTLENECK = "r0->r1"
SCENARIO = """name = "dumbbell-test"
duration = "5s"
# a comment with <angle> & ampersand
[topology]
kind = "dumbbell"
pairs = 2
"""
COMMAND = "fatpipe run scenarios/dumbbell-reno.toml --set topology.pairs=2 --set 'duration=5s'"


def _run_tables(n_flows: int = 2, n_samples: int = 50, duration_s: float = 5.0) -> dict:
    """Small but realistic result tables: Reno-like sawtooth cwnd on a 10 Mb/s dumbbell."""
    t = np.linspace(duration_s / n_samples, duration_s, n_samples)
    goodputs = np.linspace(6.2e6, 3.7e6, n_flows) if n_flows > 1 else np.array([9.4e6])
    flows = pd.DataFrame(
        {
            "flow_id": np.arange(n_flows, dtype=np.uint32),
            "src": [f"s{i}" for i in range(n_flows)],
            "dst": [f"d{i}" for i in range(n_flows)],
            "cc": ["reno"] * n_flows,
            "start_s": np.linspace(0.0, 0.5, n_flows),
            "end_s": np.full(n_flows, duration_s),
            "bytes_sent": (goodputs * duration_s / 8 * 1.01).astype(np.uint64),
            "bytes_delivered": (goodputs * duration_s / 8).astype(np.uint64),
            "goodput_bps": goodputs,
            "throughput_bps": goodputs * 1.01,
            "data_packets_sent": (goodputs * duration_s / 8 / 1460).astype(np.uint64),
            "retransmits": np.arange(n_flows, dtype=np.uint64) + 3,
            "timeouts": np.zeros(n_flows, dtype=np.uint64),
            "fast_recoveries": np.full(n_flows, 2, dtype=np.uint64),
            "rtt_min_s": np.full(n_flows, 0.022),
            "rtt_mean_s": np.full(n_flows, 0.041),
            "rtt_max_s": np.full(n_flows, 0.0634),
            "completion_s": [None] * n_flows,
        }
    )
    rows = []
    for i in range(n_flows):
        phase = i / max(n_flows, 1)
        saw = 10 + 40 * ((t / 1.3 + phase) % 1.0)  # cwnd grows linearly then halves
        gp = goodputs[i] * (0.8 + 0.4 * ((t / 1.3 + phase) % 1.0))
        delivered = np.cumsum(gp * (duration_s / n_samples) / 8)
        rows.append(
            pd.DataFrame(
                {
                    "t_s": t,
                    "flow_id": np.uint32(i),
                    "cwnd_pkts": saw,
                    "ssthresh_pkts": np.maximum(saw / 2, 2),
                    "srtt_s": 0.02 + 0.02 * ((t / 1.3 + phase) % 1.0),
                    "bytes_delivered": delivered.astype(np.uint64),
                    "goodput_bps": gp,
                }
            )
        )
    flow_series = pd.concat(rows, ignore_index=True).sort_values(["t_s", "flow_id"], ignore_index=True)
    links = ["s0->r0", "s1->r0", BOTTLENECK, "r1->d0", "r1->d1", "r1->r0"]
    qlen = {l: np.zeros(n_samples) for l in links}
    qlen[BOTTLENECK] = np.round(35 * ((t / 1.3) % 1.0) ** 2)
    qlen["s0->r0"] = np.where(t < 0.3, 4.0, 0.0)  # initial-window burst on an access link
    queue_series = pd.concat(
        [pd.DataFrame({"t_s": t, "link": l, "len_pkts": qlen[l].astype(np.uint32), "len_bytes": (qlen[l] * 1500).astype(np.uint64)}) for l in links],
        ignore_index=True,
    )
    queues = pd.DataFrame(
        {
            "link": links,
            "kind": ["droptail"] * len(links),
            "enqueued": [2100, 1300, 3400, 1700, 1300, 3300],
            "dequeued": [2100, 1300, 3390, 1700, 1300, 3300],
            "drops_tail": [0, 0, 10, 0, 0, 0],
            "drops_aqm_early": [0] * len(links),
            "drops_aqm_forced": [0] * len(links),
            "dropped_bytes": [0, 0, 15000, 0, 0, 0],
            "max_len_pkts": [int(qlen[l].max()) for l in links],
            "mean_len_pkts": [float(qlen[l].mean()) for l in links],
        }
    )
    rates = {l: (10e6 if l in (BOTTLENECK, "r1->r0") else 100e6) for l in links}
    tx_bytes = {l: e * 1500 for l, e in zip(links, queues["dequeued"])}
    links_df = pd.DataFrame(
        {
            "link": links,
            "from": [l.split("->")[0] for l in links],
            "to": [l.split("->")[1] for l in links],
            "rate_bps": [rates[l] for l in links],
            "delay_s": [0.001 if l not in (BOTTLENECK, "r1->r0") else 0.01 for l in links],
            "tx_bytes": [tx_bytes[l] for l in links],
            "tx_packets": list(queues["dequeued"]),
            "utilisation": [tx_bytes[l] * 8 / (rates[l] * duration_s) for l in links],
        }
    )
    summary = {
        "name": "dumbbell-test",
        "seed": 1,
        "version": "0.1.0",
        "sim_s": duration_s,
        "flows": [
            {"flow_id": i, "src": f"s{i}", "dst": f"d{i}", "cc": "reno", "goodput_bps": float(goodputs[i]),
             "retransmits": i + 3, "timeouts": 0}
            for i in range(n_flows)
        ],
        "aggregate_goodput_bps": float(flows["goodput_bps"].sum()),
        "bottleneck": BOTTLENECK,
        "utilisation": tx_bytes[BOTTLENECK] * 8 / (rates[BOTTLENECK] * duration_s),
        "drops": 10,
        "retransmits": int(flows["retransmits"].to_numpy().sum()),
        "timeouts": 0,
        "events": 123456,
        "packets_delivered": 4200,
        "wall_s": 0.05,
        "packets_per_wall_s": 84000.0,
        "warnings": [],
    }
    return {"summary": summary, "flows": flows, "flow_series": flow_series, "queues": queues,
            "queue_series": queue_series, "links": links_df}


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "report"  # does not exist yet: must be created
    tables = _run_tables()
    path = report.write_run_report(out, **tables, scenario_text=SCENARIO, command=COMMAND)
    return out, path, tables


def test_files_exist(written):
    out, path, _ = written
    assert path == out / "report.html" and path.is_file()
    for stem in ("cwnd", "goodput", "queues"):
        for ext in ("png", "svg"):
            f = out / f"{stem}.{ext}"
            assert f.is_file() and f.stat().st_size > 2000, f
        svg = (out / f"{stem}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_png_is_a_real_image(written):
    out, _, _ = written
    import matplotlib.image

    for stem in ("cwnd", "goodput", "queues"):
        png = out / f"{stem}.png"
        w, h = _png_size(png)
        assert w >= 600 and h >= 300, (stem, w, h)
        assert png.stat().st_size > 15_000, stem
        pixels = matplotlib.image.imread(png)
        assert pixels.shape[:2] == (h, w)
        assert pixels[..., :3].std() > 0.05, f"{stem}.png looks blank"


def test_html_has_goodputs_jain_and_tables(written):
    _, path, tables = written
    page = path.read_text(encoding="utf-8")
    for gp in tables["flows"]["goodput_bps"]:
        assert f"{gp / 1e6:.3f}" in page  # per-flow goodput in Mb/s
    assert f"{tables['summary']['aggregate_goodput_bps'] / 1e6:.3f}" in page
    jain = metrics.jain_index(tables["flows"]["goodput_bps"].to_numpy())
    assert f"{jain:.4f}" in page
    assert "Jain" in page
    for text in ("retransmits", "timeouts", "RTT mean (ms)", "41.00", "drops: tail", "utilisation (%)", html.escape(BOTTLENECK)):
        assert text in page, text
    bn_util = tables["summary"]["utilisation"] * 100
    assert f"{bn_util:.2f}" in page


def test_html_is_self_contained_and_escaped(written):
    _, path, _ = written
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('<img src="data:image/png;base64,') == 3
    assert not re.search(r'(src|href)="(?!data:)', page), "external reference in a self-contained page"
    assert "&lt;angle&gt; &amp; ampersand" in page and "<angle>" not in page
    assert "<pre" in page and "--set topology.pairs=2 --set &#x27;duration=5s&#x27;" in page


def test_report_is_reproducible(tmp_path, written):
    out, path, tables = written
    again = report.write_run_report(tmp_path, **tables, scenario_text=SCENARIO, command=COMMAND)
    assert again.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")
    assert (tmp_path / "cwnd.svg").read_bytes() == (out / "cwnd.svg").read_bytes()


def test_many_flows_have_no_legend_but_a_count():
    tables = _run_tables(n_flows=12, n_samples=20)
    fig = report.plot_cwnd(tables["flow_series"], tables["flows"])
    ax = fig.axes[0]
    assert ax.get_legend() is None
    assert any(t.get_text() == "12 flows" for t in ax.texts)
    assert len(ax.lines) == 12
    assert ax.get_xlabel() == "time (s)" and "packets" in ax.get_ylabel()
    ax = report.plot_goodput(tables["flow_series"], tables["flows"]).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["aggregate", "12 flows"]


def test_few_flows_have_a_legend():
    tables = _run_tables(n_flows=2)
    ax = report.plot_cwnd(tables["flow_series"], tables["flows"]).axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["flow 0 (reno)", "flow 1 (reno)"]
    ax = report.plot_goodput(tables["flow_series"], tables["flows"], 10e6).axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "aggregate" in labels and "bottleneck rate" in labels
    assert ax.get_ylabel() == "goodput (Mb/s)"
    agg = next(l for l in ax.lines if l.get_label() == "aggregate")
    expected = tables["flow_series"].groupby("t_s")["goodput_bps"].sum().to_numpy() / 1e6
    np.testing.assert_allclose(agg.get_ydata(), expected)


def test_queue_plot_shows_bottleneck_and_non_empty_others():
    tables = _run_tables()
    ax = report.plot_queues(tables["queue_series"], tables["queues"], BOTTLENECK).axes[0]
    labels = [l.get_label() for l in ax.lines]
    assert labels == [f"{BOTTLENECK} (bottleneck)", "s0->r0"]  # empty queues are left out


def test_zero_goodput_and_missing_columns_do_not_break_the_report(tmp_path):
    tables = _run_tables()
    tables["flows"] = tables["flows"].assign(goodput_bps=0.0).drop(columns=["rtt_max_s"])
    tables["flow_series"] = tables["flow_series"].iloc[0:0]  # no samples at all
    tables["summary"] = dict(tables["summary"], utilisation=None, warnings=["a warning from the core"])
    path = report.write_run_report(tmp_path / "r", **tables)
    page = path.read_text(encoding="utf-8")
    assert "undefined" in page  # Jain's index is 0/0 for all-zero goodput
    assert "a warning from the core" in page
    assert "no column &#x27;rtt_max_s&#x27;" in page
    assert "command not recorded" in page
    assert (tmp_path / "r" / "cwnd.png").is_file()
