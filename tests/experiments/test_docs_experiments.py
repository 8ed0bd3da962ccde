"""docs/experiments.md is executable: its sweep file is a valid sweep with the counts the page
states, and its Python example runs (a small real sweep into a temporary store)."""

from __future__ import annotations

import re
import tomllib

from fatpipe.experiments import Sweep

from conftest import ROOT

DOC = ROOT / "docs" / "experiments.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_sweep_file_example_is_a_valid_sweep():
    (text,) = blocks("toml")
    sw = Sweep.from_dict(tomllib.loads(text), base_dir=ROOT, source="docs/experiments.md")
    assert (len(sw.points()), len(sw.runs())) == (9, 27)  # as the page says
    assert sw.parameters["topology.bottleneck.queue.limit"] == ["20pkt", "40pkt", "60pkt"]
    assert sw.dry_run().runs == 27


def test_python_api_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)
    (code,) = blocks("python")
    exec(compile(code, str(DOC), "exec"), {})
