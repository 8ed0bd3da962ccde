"""Property-based fuzzing of the scenario format: nothing a user can write escapes as anything but
a FatpipeError.

Scenarios are generated from the published JSON Schema (`fatpipe schema`), so every table and
field is reached and new fields are fuzzed without touching this file: values are drawn from
what each field is (unit strings, integers, floats, names), mostly plausible so that scenarios
get past the first check and reach the deep ones, often at the edges (zero, negative zero,
2^32, 2^53, 2^64, nan, inf, bare numbers, unknown units, unknown keys). `--set` overrides are
drawn the same way. Each scenario must then either be refused with a FatpipeError subclass, or
plan and run; runs are kept tiny (a short duration, low event and memory limits, which turn any
runaway into a SimulationError) so that a hang can only be a bug.

Three populations: scenarios generated from the schema, the repository's scenarios mutated by
typed overrides of their own keys (these reach the checks only a nearly valid scenario gets to),
and H2/PI queues in design mode (the front end's numerical models).

Bounded to under a minute (`MAX_EXAMPLES`: 5000 examples in 40 s on the quiet 2-core development
machine, 2026-11-28; the mutation population's test adds about 7 s) and deterministic (`derandomize=True`: the same examples on every run and
machine). For a longer hunt: FATPIPE_FUZZ_EXAMPLES=100000 (still deterministic; the examples
beyond the first 5000 are new).
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import re
import signal
import tomllib
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is a test dependency (Makefile)")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fatpipe  # noqa: E402
from fatpipe import FatpipeError  # noqa: E402

MAX_EXAMPLES = int(os.environ.get("FATPIPE_FUZZ_EXAMPLES", "5000"))
#: A single example that takes longer is a hang (the runs are tiny; see `run_guarded`).
EXAMPLE_TIMEOUT_S = 30

SCHEMA = json.loads(fatpipe.schema())
DEFS = SCHEMA["definitions"]

# ---- values ---------------------------------------------------------------------------------------
NODE_NAMES = ["a", "b", "c", "r", "r0", "r1", "r2", "s0", "s1", "d0", "d1", "h1", "h2", "x0l", "x0r", "bgl"]
# Words the string fields take (choices listed in docs/scenarios.md), plus node names.
WORDS = sorted(set(
    list(fatpipe.algorithms())
    + ["sack", "newreno", "droptail", "red", "codel", "pie", "fq_codel", "h2", "pi", "bulk", "file",
       "cbr", "web", "files", "voip", "relay", "tcp", "udp", "dccp", "all", "main", "background", "auto",
       "host", "router", "exponential", "body-tail", "linux", "rfc6298", "advance", "every-ack",
       "prr", "rate-halving", "at-once", "segments", "per-ack", "once-per-episode", "halve-again",
       "rfc2861", "ns2", "packets", "bytes", "timestamp", "dq_rate", "rfc3448", "rfc5348",
       "hstcp", "reno", "frozen", "slopes", "r0->r1", "a->b", "dumbbell", "graph", "parkinglot",
       "ring", "clockwise", "counterclockwise", ""]
    + NODE_NAMES
))
CC_PARAMS = sorted({p["name"] for a in fatpipe.algorithm_details() for p in a["params"]} | {"variant", "bogus"})
DESIGN_KEYS = ["flows", "q0", "rtt", "packet", "rate", "response", "sample_hz", "form",
               "crossover_fraction", "sigma_w", "sigma_q", "sigma_y", "rho", "jitter_time", "pade_order",
               "match_dc", "bogus"]

EDGE_INTS = [0, 1, 2, 3, -1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 100_000, 2**53, 2**62, 2**63 - 1, -(2**63)]
EDGE_FLOATS = [0.0, -0.0, 1.0, 0.5, 1e-300, 1e300, 1.7976931348623157e308, -1.0, math.nan, math.inf, -math.inf]


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, each drawn with its weight (plausible values must dominate, or
    every scenario fails its first check and the deep ones are never reached)."""
    return st.sampled_from([s for w, s in choices for _ in range(w)]).flatmap(lambda s: s)


ints = weighted((16, st.integers(1, 4)), (4, st.integers(0, 64)), (1, st.sampled_from(EDGE_INTS)))
floats = weighted((12, st.floats(0.01, 1.0)), (6, st.floats(0.0, 1e4)), (1, st.sampled_from(EDGE_FLOATS)),
                  (1, st.floats(allow_nan=True, allow_infinity=True)))

UNITS = {
    "Duration": (["ns", "us", "µs", "ms", "s", "min"], ["0.1", "1", "5", "20", "100"], "ms"),
    "RateStr": (["bps", "kbps", "Kbps", "Mbps", "Gbps", "Tbps", "b/s", "Mb/s"], ["1", "10", "100"], "Mbps"),
    "SizeStr": (["B", "KB", "kB", "MB", "GB", "KiB", "MiB", "GiB", "pkt", "pkts"], ["1", "40", "1500", "100"], "pkt"),
}
EDGE_NUMBERS = ["0", "-0", "-0.0", "-1", "1e-12", "0.5", "1.5", "4294967295", "4294967296", "9007199254740992",
                "9007199254740993", "18446744073709551616", "1e19", "1e30", "1e308", "nan", "inf", "", "1e", ".", "+1"]


@st.composite
def unit_string(draw, kind: str) -> str:
    units, plain, default_unit = UNITS[kind]
    choice = draw(st.integers(0, 39))
    if choice < 36:  # plausible
        return draw(st.sampled_from(plain)) + draw(st.sampled_from(units + [default_unit] * 6))
    if choice < 39:  # the edges
        number = draw(st.sampled_from(EDGE_NUMBERS) | st.floats(allow_nan=False, allow_infinity=False).map(repr))
        unit = draw(st.sampled_from(units + ["", " ", "furlongs", "Pbps", "d", "%"]))
        return number + draw(st.sampled_from(["", " "])) + unit
    return draw(st.text(max_size=12))


def free_value(depth: int = 0):
    """A value for a free-form table (cc_params, design) or a wrong-typed field."""
    leaves = st.one_of(ints, floats, st.booleans(), st.sampled_from(WORDS), unit_string("Duration"),
                       unit_string("RateStr"), st.text(max_size=6))
    if depth >= 1:
        return leaves
    return st.one_of(leaves, st.lists(leaves, max_size=3))


def from_schema(node: dict[str, Any], key: str = "") -> st.SearchStrategy[Any]:
    """A strategy for values of a schema node; occasionally of the wrong type."""
    ref = node.get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        if name in UNITS:
            return unit_string(name)
        return from_schema(DEFS[name], key)
    for combo in ("allOf", "anyOf", "oneOf"):
        if combo in node:
            options = [n for n in node[combo] if n.get("type") != "null"]
            if combo == "allOf":
                options = options[:1]
            return st.one_of(*(from_schema(n, key) for n in options))
    if "enum" in node:
        return st.sampled_from([v for v in node["enum"] if v is not None])
    types = node.get("type", [])
    types = [t for t in (types if isinstance(types, list) else [types]) if t != "null"]
    kind = types[0] if types else "any"
    if kind == "object":
        if node.get("additionalProperties") is True:  # free-form: cc_params, design
            names = DESIGN_KEYS if key == "design" else CC_PARAMS
            return st.dictionaries(st.sampled_from(names), free_value(), max_size=4)
        props = node.get("properties", {})
        required = {k: from_schema(v, k) for k, v in props.items() if k in node.get("required", [])}
        optional = {k: from_schema(v, k) for k, v in props.items() if k not in required}
        return table(required, optional)
    if kind == "array":
        item = from_schema(node.get("items", {}), key)
        lo, hi = node.get("minItems", 0), node.get("maxItems", 3)
        return st.lists(item, min_size=lo, max_size=max(lo, min(hi, 3)))
    if kind == "string":
        return weighted((12, st.sampled_from(WORDS)), (1, st.text(max_size=8)))
    if kind == "integer":
        return ints
    if kind == "number":
        return floats
    if kind == "boolean":
        return st.booleans()
    return free_value()


@st.composite
def table(draw, required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """The required keys and a few optional ones (a table with half of its thirty optional keys
    would always combine two that exclude each other, and never get further)."""
    out = {k: draw(v) for k, v in required.items()}
    if optional:
        n = draw(weighted((6, st.integers(0, 2)), (1, st.integers(0, len(optional)))))
        for k in draw(st.lists(st.sampled_from(sorted(optional)), max_size=n, unique=True)):
            out[k] = draw(optional[k])
    return out


def sometimes_wrong(strategy):
    """Mostly the schema's value; now and then one of another type."""
    return weighted((30, strategy), (1, free_value()))


# ---- documents, TOML and overrides ----------------------------------------------------------------
def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # JSON's escapes are TOML's basic-string escapes
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def to_toml(doc: dict[str, Any]) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in doc.items())


def paths_of(node: dict[str, Any], prefix: str = "", depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """Dotted keys of the schema (list items as index 0) with their schema nodes."""
    ref = node.get("$ref")
    if ref is not None:
        return paths_of(DEFS[ref.rsplit("/", 1)[-1]], prefix, depth)
    out = [(prefix, node)] if prefix else []
    if depth > 4:
        return out
    for combo in ("allOf", "anyOf", "oneOf"):
        for n in node.get(combo, []):
            out += paths_of(n, prefix, depth)
    if node.get("items"):
        out += paths_of(node["items"], f"{prefix}.0", depth + 1)
    for k, v in node.get("properties", {}).items():
        out += paths_of(v, f"{prefix}.{k}" if prefix else k, depth + 1)
    return out


SET_PATHS = {path: node for path, node in paths_of(SCHEMA)}
SET_PATHS.update({"bogus": {}, "topology.pairs.x": {}, "flows.9.count": {"type": "integer"}})


def assignment(key: str, value: Any, bare: bool) -> str:
    # `--set` reads the value as TOML, falling back to a bare string (`rate=1Gbps`).
    return f"{key}={value}" if bare and isinstance(value, str) else f"{key}={toml_value(value)}"


override = st.sampled_from(sorted(SET_PATHS)).flatmap(
    lambda k: st.builds(assignment, st.just(k), sometimes_wrong(from_schema(SET_PATHS[k], k.rsplit(".", 1)[-1])),
                        st.booleans()))
overrides = weighted((3, st.just([])), (6, st.lists(override, min_size=1, max_size=3)),
                     (1, st.lists(st.text(max_size=10), min_size=1, max_size=2)))

# Generated from the schema, with `topology` and `duration` always present (without them a
# scenario fails at once; the schema's `required` says so and a few examples cover it) ...
generated = table(
    {"duration": unit_string("Duration"), "topology": sometimes_wrong(from_schema(DEFS["Topology"], "topology"))},
    {k: sometimes_wrong(from_schema(v, k)) for k, v in SCHEMA["properties"].items()
     if k not in ("duration", "topology")},
)
# ... or one of the repository's scenarios (valid, every topology and traffic kind), which the
# overrides then mutate: these reach the checks that only a nearly valid scenario gets to.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASES = []
for folder in ("scenarios", "studies/michel2009", "studies/doria2010", "studies/desanti2008"):
    for f in sorted(os.listdir(os.path.join(ROOT, folder))):
        if f.endswith(".toml") and f != "study.toml":
            with open(os.path.join(ROOT, folder, f), "rb") as fh:
                BASES.append(tomllib.load(fh))


def leaf_paths(v: Any, prefix: str = "") -> list[str]:
    """The dotted keys of a document's values (tables and lists opened)."""
    if isinstance(v, dict):
        return [p for k, x in v.items() for p in leaf_paths(x, f"{prefix}.{k}" if prefix else k)]
    if isinstance(v, list) and v and isinstance(v[0], dict):
        return [p for i, x in enumerate(v) for p in leaf_paths(x, f"{prefix}.{i}")]
    return [prefix]


def schema_of(key: str) -> dict[str, Any]:
    return SET_PATHS.get(re.sub(r"\.\d+(?=\.|$)", ".0", key), {})


@st.composite
def mutated_base(draw) -> tuple[dict[str, Any], list[str]]:
    """A repository scenario with a few of its own values (now and then any key) replaced by
    values of the field's type."""
    doc = draw(st.sampled_from(BASES))
    own = leaf_paths(doc)
    sets = []
    for _ in range(draw(weighted((2, st.just(0)), (6, st.just(1)), (2, st.integers(2, 3))))):
        key = draw(weighted((4, st.sampled_from(own)), (1, st.sampled_from(sorted(SET_PATHS)))))
        value = draw(sometimes_wrong(from_schema(schema_of(key), key.rsplit(".", 1)[-1])))
        sets.append(assignment(key, value, draw(st.booleans())))
    return doc, sets


@st.composite
def designed_queue(draw) -> tuple[dict[str, Any], list[str]]:
    """The reference dumbbell with an H2 or PI queue in design mode: the front end's fluid
    models and controller synthesis (numpy, scipy) are fed whatever the table holds."""
    doc = next(b for b in BASES if b.get("name") == "reference-dumbbell")
    design = {"flows": draw(weighted((4, st.sampled_from([1, 10, 20])), (1, floats))),
              "q0": draw(weighted((4, st.sampled_from([50, 1666.5, 3000])), (1, floats)))}
    design.update(draw(st.dictionaries(st.sampled_from(DESIGN_KEYS), free_value(), max_size=3)))
    queue = {"kind": draw(st.sampled_from(["h2", "pi"])), "limit": draw(unit_string("SizeStr")),
             "design": design}
    return doc, [assignment("topology.bottleneck.queue", queue, False)]


cases = weighted((4, st.tuples(generated, overrides)), (8, mutated_base()), (1, designed_queue()))

# What keeps a run tiny whatever the scenario asks: a runaway becomes a SimulationError.
GUARDS = ["duration=20ms", "limits.max_events=200000", "limits.max_packets=100000", "limits.max_memory=256MB"]


class Hang(Exception):
    """An example that ran past EXAMPLE_TIMEOUT_S."""


def run_guarded(sc: fatpipe.Scenario) -> None:
    fatpipe.run(sc.with_overrides(*GUARDS), seed=1)


@pytest.fixture(autouse=True)
def watchdog():
    # A Python-level alarm per example (the core checks signals while it runs), and a last resort
    # that ends the process with tracebacks rather than letting a hang in code that never checks
    # signals stall the suite.
    faulthandler.dump_traceback_later(max(900, MAX_EXAMPLES // 5), exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _alarm(_signum, _frame):
    raise Hang(f"an example took more than {EXAMPLE_TIMEOUT_S} s")


# Extreme operating points make numpy warn (overflow in a matrix product) on their way to a
# DesignError; the warnings are expected, the errors are what is checked.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(case=cases)
def test_any_scenario_runs_or_is_a_fatpipe_error(case):
    doc, sets = case
    text = to_toml(doc)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(EXAMPLE_TIMEOUT_S)
    try:
        try:
            sc = fatpipe.Scenario.from_toml(text, sets)
            sc.plan(seed=7)
            run_guarded(sc)
        except FatpipeError:
            pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@settings(max_examples=max(MAX_EXAMPLES // 5, 20), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(doc=weighted((1, generated), (1, st.sampled_from(BASES))))
def test_the_same_scenario_as_a_dict_fails_the_same_way(doc):
    """`Scenario.from_dict` (JSON to TOML in the core) refuses what the TOML path refuses."""
    def outcome(make):
        try:
            make()
        except FatpipeError as e:
            return type(e)
        return None

    from_toml = outcome(lambda: fatpipe.Scenario.from_toml(to_toml(doc)))
    from_dict = outcome(lambda: fatpipe.Scenario.from_dict(doc))
    # JSON cannot carry nan or inf, so a dict holding them fails on the way in; otherwise the
    # two paths agree.
    if from_toml is None:
        assert from_dict is None or "nan" in to_toml(doc) or "inf" in to_toml(doc)
