"""Relay chains from Python and the command line: the segments tables, the plan, the summary, the
store (also for runs stored before the relay tables existed), the peers that refuse relays, and
errors naming the field."""

from __future__ import annotations

import json
import pickle

import pyarrow.parquet as pq
import pytest

import fatpipe
from conftest import SCENARIOS
from fatpipe.result import RELAY_TABLES, relay_schema

CHAIN = SCENARIOS / "depot-chain.toml"


@pytest.fixture(scope="module")
def chain_result():
    return fatpipe.run(fatpipe.Scenario.load(CHAIN, ["duration=3s"]))


def test_a_relay_run_has_a_row_per_segment_and_their_series(chain_result):
    r = chain_result
    flows = r.flows.to_pylist()
    assert [f["kind"] for f in flows] == ["relay"]
    assert flows[0]["cc"] == "reno/highspeed/reno"
    seg = r.segments.to_pylist()
    assert [(s["src"], s["dst"], s["cc"]) for s in seg] == [
        ("server", "depot2", "reno"), ("depot2", "depot1", "highspeed"), ("depot1", "client", "reno")]
    assert [s["depot"] for s in seg] == ["depot2", "depot1", ""]
    assert all(s["buffer_max_bytes"] <= s["buffer_bytes"] for s in seg)
    # The sink's segment delivered what the flow delivered.
    assert seg[2]["bytes_delivered"] == flows[0]["bytes_delivered"] > 0
    series = r.segment_series
    assert series.schema == relay_schema("segment_series")
    assert sorted(set(series.column("segment").to_pylist())) == [0, 1, 2]
    s = r.summary
    assert [g["segment"] for g in s["segments"]] == [0, 1, 2]
    # A pickled result (sweep workers) keeps the tables.
    again = pickle.loads(pickle.dumps(r))
    assert again.segments.num_rows == 3


def test_runs_without_relays_have_empty_relay_tables_with_their_schema():
    r = fatpipe.run(fatpipe.Scenario.load(SCENARIOS / "dumbbell-reno.toml", ["duration=1s"]))
    for name in RELAY_TABLES:
        assert r.table(name).num_rows == 0
        assert r.table(name).schema == relay_schema(name)
    assert "segments" not in r.summary


def test_the_plan_lists_every_segment_on_the_command_line(capsys):
    from fatpipe import cli

    assert cli.main(["plan", str(CHAIN)]) == 0
    plan = json.loads(capsys.readouterr().out)
    relay = plan["flows"][0]["relay"]
    assert relay["depots"] == ["depot2", "depot1"]
    assert [s["cc"] for s in relay["segments"]] == ["reno", "highspeed", "reno"]
    assert plan["flows"][0]["path_loss"] == pytest.approx(1e-5)
    assert relay["segments"][1]["path_loss"] == pytest.approx(1e-5)
    assert "path_loss" not in relay["segments"][0]


def test_the_store_keeps_the_relay_tables_and_reads_runs_stored_without_them(tmp_path, chain_result):
    from fatpipe.experiments.store import MANIFEST, Store, run_key

    store = Store(tmp_path / "results")
    key = run_key(chain_result.plan, chain_result.version)
    store.put(key, chain_result, {"plan": chain_result.plan, "seed": 1, "engine": chain_result.engine,
                                  "fatpipe_version": chain_result.version}, {})
    back = store.load(key)
    for name in RELAY_TABLES:
        assert back.to_pandas(name).equals(chain_result.to_pandas(name)), name
    # A run stored before the relay tables existed: no such files, no manifest entries.
    d = store.path(key)
    manifest = json.loads((d / MANIFEST).read_text())
    for name in RELAY_TABLES:
        (d / f"{name}.parquet").unlink()
        del manifest["files"][f"{name}.parquet"]
    (d / MANIFEST).write_text(json.dumps(manifest))
    old = store.load(key)
    assert old.segments.num_rows == 0 and old.flows.num_rows == 1
    assert pq.read_table(d / "flows.parquet").num_rows == 1


def test_the_peers_refuse_relays():
    from fatpipe.peers import ns2, ns3

    plan = fatpipe.Scenario.load(CHAIN, ["topology.links.1.loss=0.0"]).plan()  # the peers refuse loss too
    with pytest.raises(ValueError, match="relay"):
        ns2.plan_to_tcl(plan, "/tmp/unused")
    with pytest.raises(ValueError, match="relay"):
        ns3.plan_to_spec(plan)


@pytest.mark.parametrize("override, path", [
    ('flows.0.depots=["depot9"]', "flows.0.depots.0"),
    ("flows.0.depots=[]", "flows.0.depots"),
    ('flows.0.depot_buffer="0B"', "flows.0.depot_buffer"),
    ('flows.0.segments=[{}, {}]', "flows.0.segments"),
    ('flows.0.segments.1.cc="nope"', "flows.0.segments.1.cc"),
])
def test_bad_relays_are_scenario_errors_naming_the_field(override, path):
    with pytest.raises(fatpipe.ScenarioError) as e:
        fatpipe.Scenario.load(CHAIN, [override]).plan()
    assert e.value.path == path
