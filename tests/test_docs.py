"""Documentation is executable: README Python blocks, the TOML examples in docs/scenarios.md, and
the docstring examples of the public modules."""

from __future__ import annotations

import doctest
import re
import tomllib

import pytest

import fatpipe
import fatpipe.metrics
import fatpipe.scenario
import fatpipe.stats
from conftest import ROOT


def code_blocks(path, lang):
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_python_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = code_blocks(ROOT / "README.md", "python")
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_scenario_reference_examples_are_valid_scenarios():
    blocks = code_blocks(ROOT / "docs" / "scenarios.md", "toml")
    full, graph, parking_lot = blocks[0], blocks[1], blocks[2]
    fatpipe.Scenario.from_toml(full)
    # The graph and parking-lot fragments complete with a duration.
    fatpipe.Scenario.from_toml('duration = "1s"\n' + graph)
    fatpipe.Scenario.from_toml('duration = "1s"\n' + parking_lot)
    assert tomllib.loads(full)["topology"]["kind"] == "dumbbell"
    # Later sections are complete scenarios of their own, and elaborate.
    for block in blocks[2:]:
        if "duration" in tomllib.loads(block):
            fatpipe.Scenario.from_toml(block).plan()


def test_ring_examples_are_valid_scenarios():
    blocks = code_blocks(ROOT / "docs" / "ring.md", "toml")
    assert blocks
    for block in blocks:
        plan = fatpipe.Scenario.from_toml(block).plan()
        assert any(n["name"] == "r4" for n in plan["nodes"])


@pytest.mark.parametrize("module", [fatpipe, fatpipe.scenario, fatpipe.metrics, fatpipe.stats])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
