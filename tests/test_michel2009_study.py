"""The michel2009 study folder (study.toml, generated sweep files) and its analysis hook, without
running a simulation: sweep files are validated (every value and point applied by the core) and
the hook is fed a synthetic store."""

from __future__ import annotations

import importlib.util
import math
from types import SimpleNamespace as NS

import pandas as pd
import pytest

from fatpipe.experiments import Sweep
from fatpipe.studies import StudyError, load_study, studies_dir
from fatpipe.studies.michel2009 import study as hook
from fatpipe.studies.michel2009.targets import TARGETS
from fatpipe.studies.reproduce import _markdown_html

DUMBBELL = ("D-S1", "D-S2", "D-S3", "D-S3a", "D-S3b", "D-S3c", "D-C", "D-F1a", "D-F1b", "D-F1c", "D-F2", "D-CV", "D-ST")


def test_study_loads_with_its_analysis_module_and_every_dumbbell_experiment():
    s = load_study("michel2009")
    assert s.analysis_module() is hook
    for m in ("quick", "full"):
        assert set(s.modes[m].sweeps) == set(DUMBBELL)
    assert s.modes["quick"].analysis["capacity_scale"] == 0.1
    assert s.modes["full"].analysis["capacity_scale"] == 1.0


def test_sweep_files_are_what_make_sweeps_writes():
    path = studies_dir() / "michel2009" / "make_sweeps.py"
    spec = importlib.util.spec_from_file_location("michel_make_sweeps", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.write(check=True) == []


@pytest.mark.parametrize("mode", ["quick", "full"])
def test_every_sweep_file_validates_and_plans(mode):
    """Sweep.load applies every value (with its zipped partners) and every point to the scenario;
    dry_run plans the runs. Nothing is simulated."""
    s = load_study("michel2009")
    total = 0
    for role, path in s.modes[mode].sweeps.items():
        sw = Sweep.load(path, replications=s.modes[mode].replications)
        plan = sw.dry_run()
        assert plan.runs == plan.points * s.modes[mode].replications, role
        total += plan.runs
    assert total > 0


def test_quick_points_plan_the_intended_flows():
    s = load_study("michel2009")
    sw = Sweep.load(s.modes["quick"].sweeps["D-C"])
    base = sw.scenario.with_overrides(*sw.set)
    first, last = sw.points()[0], sw.points()[-1]
    a = hook.point_columns(base.with_overrides(*first.overrides).plan(), first.as_dict(), 0.1)
    b = hook.point_columns(base.with_overrides(*last.overrides).plan(), last.as_dict(), 0.1)
    assert (a["n_flows"], a["n_hs"], a["cc"]) == (20, 0, "bic")  # 20 Reno alone, on BIC's curve
    assert (b["n_flows"], b["n_hs"], b["cc"]) == (60, 40, "scalable")
    assert a["capacity_bps"] == pytest.approx(1e9) and a["delay_s"] == pytest.approx(0.1)


class _Store:
    """What the hook reads from a results store: sweep_definition, runs, metadata."""

    def __init__(self):
        self.defs, self.run_rows, self.plans = {}, {}, {}

    def add(self, exp, points, metrics):
        """points: list of (params, plan, {metric: [values per replication]})."""
        name = f"synthetic-{exp}"
        params = sorted({k for p, _, _ in points for k in p})
        rows = []
        for i, (p, plan, vals) in enumerate(points):
            reps = len(next(iter(vals.values())))
            for r in range(reps):
                key = f"{exp}-{i}-{r}"
                self.plans[key] = plan
                rows.append(dict(point=i, seed=r + 1, key=key, **p, **{m: v[r] for m, v in vals.items()}))
        self.defs[name] = {"parameters": params, "metrics": metrics}
        self.run_rows[name] = pd.DataFrame(rows)
        return NS(sweep=NS(name=name))

    def sweep_definition(self, name):
        return self.defs[name]

    def runs(self, name):
        return self.run_rows[name]

    def metadata(self, key):
        return {"plan": self.plans[key]}


def _plan(ccs, bg=0.2, rate=1e8, delay=0.1):
    flows = [{"cc": c, "role": "main"} for c in ccs] + [{"cc": "reno", "role": "background"}]
    return {"flows": flows, "bottleneck": "r0->r1",
            "links": [{"name": "r0->r1", "rate_bps": rate, "delay_ns": int(delay * 1e9)}],
            "background": {"load": bg}}


def test_hook_builds_the_tidy_frame_and_judges_every_target():
    st = _Store()
    protos = ["bic", "cubic", "fast", "highspeed", "htcp", "libra", "scalable"]
    outcomes = {}
    pts = []
    for p in protos:
        for bg in (0.2, 0.8):
            for n in (2, 16):
                pts.append(({"flows.0.tcp.cc": p}, _plan([p] * n, bg), {"main_utilisation": [0.5, 0.52],
                                                                         "goodput_bps_reno": [1e6, 1.2e6]}))
    outcomes["D-S1"] = st.add("D-S1", pts, ["main_utilisation", "goodput_bps_reno"])
    pts = []
    for p in protos:
        for n_hs in (0, 10):
            pts.append(({"flows.1.tcp.cc": p}, _plan(["reno"] * 20 + [p] * n_hs), {"reno_share_main": [0.4, 0.42]}))
    outcomes["D-C"] = st.add("D-C", pts, ["reno_share_main"])
    outcomes["D-F2"] = st.add("D-F2", [({}, _plan(protos * 2 + ["reno"] * 2), {"main_jain": [0.8, 0.9]})], ["main_jain"])

    tidy = hook.tidy_frame(st, outcomes, capacity_scale=0.1)
    d1 = tidy[tidy["experiment"] == "D-S1"]
    assert set(d1["cc"]) == set(protos) and set(d1["n_flows"]) == {2, 16}
    assert (d1["capacity_bps"] == 1e9).all() and set(d1["bg"]) == {0.2, 0.8}
    # rates are reported at the paper's scale: 1.1 Mb/s at a tenth of the capacity -> 11 Mb/s
    reno = d1[d1["metric"] == "goodput_bps_reno"]["mean"]
    assert reno.to_numpy() == pytest.approx(11e6)
    dc = tidy[tidy["experiment"] == "D-C"]
    # the n_hs = 0 point has no high-speed flow: its curve is the varied flows.1.tcp.cc
    assert set(dc[dc["n_hs"] == 0]["cc"]) == set(protos) and set(dc["n_hs"]) == {0, 10}
    assert set(tidy[tidy["experiment"] == "D-F2"]["cc"]) == {"mixed"}
    row = dc.iloc[0]
    assert row["n"] == 2 and not math.isnan(row["half_width"])

    verdicts = hook.evaluate(st, outcomes, NS(analysis={"capacity_scale": 0.1}))
    assert [v.target.id for v in verdicts] == sorted(TARGETS, key=lambda s: int(s[1:]))
    assert {f"T{i}" for i in range(1, 30)} == {v.target.id for v in verdicts}
    assert all(v.status in ("holds", "does not hold", "not comparable") for v in verdicts)
    by = {v.target.id: v for v in verdicts}
    assert by["T23"].status == "not comparable" and "not run" in by["T23"].detail  # no D-CV here


def test_report_sections_render(tmp_path):
    st = _Store()
    pts = [({"flows.0.tcp.cc": p}, _plan([p] * 20, bg), {"main_jain": [0.9, 0.91], "main_cv": [0.3, 0.31],
                                                          "main_mean_goodput_bps": [2.7e6, 2.8e6]})
           for p in ("bic", "cubic", "fast", "highspeed", "htcp", "libra", "scalable") for bg in (0.2, 0.8)]
    outcomes = {"D-F1a": st.add("D-F1a", pts, ["main_jain", "main_cv", "main_mean_goodput_bps"])}
    mode = NS(analysis={"capacity_scale": 0.1})
    md = hook.report_sections(st, outcomes, mode, hook.evaluate(st, outcomes, mode), tmp_path)
    assert "Table 4.2" in md and "| BIC |" in md and "T16" in md
    assert (tmp_path / "michel2009-tidy.csv").is_file() and list((tmp_path / "figures").glob("*.png"))
    page = _markdown_html(md)
    assert "<table>" in page and "<img" in page


def test_a_bad_analysis_module_fails_at_load(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "x.toml").write_text("")
    (d / "study.toml").write_text('analysis = "fatpipe.no_such_module"\n[modes.quick]\nsweeps = {a = "x.toml"}\n'
                                  '[modes.full]\nsweeps = {a = "x.toml"}\n')
    with pytest.raises(StudyError, match="no_such_module"):
        load_study("s", tmp_path)
