"""Every example scenario runs as-is (shortened), and validates against the exported JSON Schema."""

from __future__ import annotations

import json
import tomllib

import jsonschema
import pytest

import fatpipe
from conftest import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.toml"))


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_scenario_runs(path):
    res = fatpipe.run(fatpipe.Scenario.load(path, ["duration=2s"]))
    assert res.summary["packets_delivered"] > 0


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_example_scenario_matches_the_json_schema(path):
    schema = json.loads(fatpipe.schema())
    jsonschema.validate(tomllib.loads(path.read_text()), schema)


def test_schema_rejects_an_unknown_field():
    schema = json.loads(fatpipe.schema())
    doc = tomllib.loads((SCENARIOS / "dumbbell-reno.toml").read_text())
    doc["tcp"]["ccc"] = "reno"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
