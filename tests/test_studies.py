"""The study framework: target verdicts on hand-made data, the reference model against hand
arithmetic, study lookup errors, and the reno-dumbbell study end to end (quick mode)."""

from __future__ import annotations

import html
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fatpipe.studies import StudyError, list_studies, load_study, reproduce
from fatpipe.studies.models import reno_sawtooth_utilisation
from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE, Target


def test_model_matches_hand_arithmetic():
    # b = 0.25: W/P = 1.25; (3/8)(1.5625) / ((1 - 0.625) + (1.5625 - 1)/2) = 0.5859375 / 0.65625
    assert float(reno_sawtooth_utilisation(0.25)) == pytest.approx(0.5859375 / 0.65625)
    assert float(reno_sawtooth_utilisation(0.0)) == 0.75
    assert float(reno_sawtooth_utilisation(3.0)) == 1.0
    with pytest.raises(ValueError):
        reno_sawtooth_utilisation(-0.1)


def _points(xs, means, n=3, hw=0.01):
    return pd.DataFrame({"point": range(len(xs)), "x": xs, "mean": means, "half_width": hw, "n": n})


@pytest.fixture
def ref_csv(tmp_path):
    p = tmp_path / "ref.csv"
    p.write_text("x,value,source\n0,0.5,hand\n1,1.0,hand\n")
    return p


def target(kind, tmp_path, **kw):
    base = dict(id="T", kind=kind, sweep="s", metric="m", x="x", claim="c", why="w", tolerance=0.05)
    base.update(kw)
    return Target.from_dict(base, tmp_path)


def test_reference_target_verdicts(tmp_path, ref_csv):
    t = target("reference", tmp_path, reference=ref_csv.name)
    v = t.evaluate(_points([0.0, 0.5, 1.0], [0.52, 0.74, 0.97]))
    assert v.status == HOLDS and [round(r["reference"], 3) for r in v.rows] == [0.5, 0.75, 1.0]
    assert t.evaluate(_points([0.0, 0.5], [0.5, 0.85])).status == FAILS  # 0.10 off at 0.5
    assert t.evaluate(_points([0.0, 2.0], [0.5, 1.0])).status == NOT_COMPARABLE  # outside range
    assert t.evaluate(_points([0.0, 0.5], [0.5, 0.75], n=0)).status == NOT_COMPARABLE  # no runs


def test_trend_target_verdicts(tmp_path):
    t = target("trend", tmp_path, tolerance=0.01)
    assert t.evaluate(_points([1, 2, 4], [0.80, 0.85, 0.90])).status == HOLDS
    assert t.evaluate(_points([1, 2, 4], [0.80, 0.795, 0.90])).status == HOLDS  # small step back
    assert t.evaluate(_points([1, 2, 4], [0.80, 0.70, 0.90])).status == FAILS
    assert t.evaluate(_points([1, 2, 4], [0.90, 0.90, 0.85])).status == FAILS
    assert t.evaluate(_points([1], [0.9])).status == NOT_COMPARABLE
    down = target("trend", tmp_path, direction="decreasing")
    assert down.evaluate(_points([1, 2], [0.9, 0.8])).status == HOLDS


def test_malformed_targets_are_rejected(tmp_path):
    with pytest.raises(StudyError, match="unknown kind"):
        target("vibes", tmp_path)
    with pytest.raises(StudyError, match="reference"):
        target("reference", tmp_path, reference="missing.csv")


def test_unknown_study_names_the_available_ones():
    assert "reno-dumbbell" in list_studies()
    with pytest.raises(StudyError, match="reno-dumbbell"):
        load_study("no-such-study")
    r = subprocess.run([sys.executable, "-m", "fatpipe.cli", "reproduce", "no-such-study"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "reno-dumbbell" in r.stderr
    r = subprocess.run([sys.executable, "-m", "fatpipe.cli", "reproduce", "--list"], capture_output=True, text=True)
    assert r.returncode == 0 and "reno-dumbbell" in r.stdout


def test_reno_dumbbell_quick_end_to_end(tmp_path):
    out = reproduce("reno-dumbbell", mode="quick", replications=2, store=tmp_path / "store",
                    out=tmp_path / "report", workers=2)
    assert out.failed_runs == 0
    verdicts = {v.target.id: v for v in out.verdicts}
    assert set(verdicts) == {"T1", "T2"}
    for v in verdicts.values():
        assert v.status in (HOLDS, FAILS, NOT_COMPARABLE) and v.rows
        assert all(r["n"] == 2 for r in v.rows)
    page = out.report.read_text()
    for v in verdicts.values():
        assert v.status in page and html.escape(v.target.claim) in page
    assert "fatpipe reproduce reno-dumbbell --quick" in page
    assert (tmp_path / "report" / "target-T1.png").exists() and (tmp_path / "report" / "target-T1.svg").exists()
    for role in ("buffer", "flows"):
        assert (tmp_path / "report" / role / "report.html").exists()
    # Rerunning reuses every finished run.
    again = reproduce("reno-dumbbell", mode="quick", replications=2, store=tmp_path / "store",
                      out=tmp_path / "report2", workers=2)
    assert all(o.ran == 0 for o in again.sweeps.values())
    assert [v.status for v in again.verdicts] == [v.status for v in out.verdicts]


@pytest.mark.parametrize("line, field", [("replications = 0", "replications"), ("replications = true", "replications"),
                                         ("report_series = -1", "report_series"), ("report_series = 1.5", "report_series")])
def test_bad_mode_settings_are_named(tmp_path, line, field):
    d = tmp_path / "s"
    d.mkdir()
    (d / "sw.toml").write_text('scenario = "x.toml"\n')
    (d / "study.toml").write_text(f'[modes.quick]\nsweeps = {{ a = "sw.toml" }}\n{line}\n'
                                  '[modes.full]\nsweeps = { a = "sw.toml" }\n')
    with pytest.raises(StudyError, match=f"modes.quick.{field}"):
        load_study("s", tmp_path)


def test_a_mode_without_replications_keeps_each_sweep_files(tmp_path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "sw.toml").write_text('scenario = "x.toml"\n')
    (d / "study.toml").write_text('[modes.quick]\nsweeps = { a = "sw.toml" }\nreport_series = 0\n'
                                  '[modes.full]\nsweeps = { a = "sw.toml" }\nreplications = 4\n')
    s = load_study("s", tmp_path)
    assert s.modes["quick"].replications is None and s.modes["quick"].report_series == 0
    assert s.modes["full"].replications == 4 and s.modes["full"].report_series is None
