"""Sweep definitions: a base scenario, the parameters to vary, replications and metrics.

A sweep is a value: it expands to sweep *points* (one assignment of every varied parameter) and
each point to ``replications`` *runs* (one per seed). Everything is checked before any run starts:
each parameter is applied to the scenario and validated by the core, so a parameter the scenario
does not have, a bad value or an empty range is rejected naming the parameter.

Sweep files (TOML)::

    name = "reno-flows"
    scenario = "../scenarios/dumbbell-reno.toml"   # relative to this file
    set = ["duration=20s"]                          # fixed overrides for every run
    replications = 5                                # seeds 1..5 (or: seeds = [3, 7, 11])
    metrics = ["utilisation", "jain"]               # see fatpipe.experiments.run_metrics
    backend = "simulator"                           # or "testbed": real Linux TCP (docs/testbed.md),
                                                    #   one run at a time, in real time, as root

    [[vary]]                                        # groups are crossed with each other;
    "topology.pairs" = [1, 2, 4, 8, 16]             # keys inside one group are zipped

    [[vary]]
    "topology.bottleneck.queue.limit" = { from = 50, to = 400, step = 50, unit = "pkt" }

Value forms: a list; ``{ from, to, step }`` (inclusive arithmetic range); ``{ from, to, factor }``
(inclusive geometric range); ``{ values = [...] }``; each optionally with ``unit`` appended to
every value (``50`` with ``unit = "pkt"`` becomes ``"50pkt"``).
"""

from __future__ import annotations

import itertools
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from fatpipe.exceptions import FatpipeError
from fatpipe.files import read_text
from fatpipe.scenario import Scenario
from fatpipe.seeds import MAX_SEED

__all__ = ["Sweep", "SweepError", "SweepPoint", "RunSpec", "DryRun"]

# Guard against a typo such as `step = 0.0001` expanding to millions of runs.
MAX_VALUES_PER_PARAMETER = 10_000
# Guards on the whole sweep, checked before anything is expanded: a product of ranges or a
# replication count such as 2^62 would otherwise build its list until memory runs out.
MAX_POINTS = 100_000
MAX_REPLICATIONS = 100_000
MAX_RUNS = 1_000_000
# Nominal engine speed used only for cost estimates — the dry run's time and the order in which
# a sweep submits its runs — (measured on the reference scenario, see README "Speed"); the
# estimate says so.
NOMINAL_PACKETS_PER_S = 3.0e6
# Nominal cost of one monitor sample row (one flow or one link at one sampling instant): recorded
# by the core, converted to Arrow, read by the metrics and encoded as Parquet in the worker.
# Measured on scenarios/dumbbell-reno.toml (4 flows, 100 Mb/s, 30 s: the same packets) with
# monitor.interval = 1 s and 10 ms: (0.180 - 0.113) s of worker time / 65 340 more rows = 1.0 us.
# It is what ranks runs of equal packets but more flows (e.g. the points of a `topology.pairs`
# sweep at a saturated bottleneck) longest first.
NOMINAL_SAMPLE_S = 1.0e-6
#: Where a sweep's runs execute: the simulator, or the testbed (real Linux TCP between network
#: namespaces, fatpipe.testbed; runs one at a time in real time and needs root).
BACKENDS = ("simulator", "testbed")
#: Wall time a testbed run takes besides its simulated duration (namespaces, emulator, teardown;
#: measured 1.5-2 s on the 2-core development machine), for the dry run's estimate.
TESTBED_OVERHEAD_S = 2.0


class SweepError(FatpipeError, ValueError):
    """A malformed sweep; ``.parameter`` names the offending key (or ``None``)."""

    def __init__(self, message: str, parameter: str | None = None):
        self.parameter = parameter
        super().__init__(f"{parameter}: {message}" if parameter else message)


@dataclass(frozen=True)
class SweepPoint:
    """One assignment of the varied parameters. ``index`` is its position in the sweep."""

    index: int
    params: tuple[tuple[str, Any], ...]

    @property
    def overrides(self) -> list[str]:
        return [f"{k}={_format_value(v)}" for k, v in self.params]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.params) or "(base)"


@dataclass(frozen=True)
class RunSpec:
    """Everything a worker needs to run one replication: picklable, no open handles."""

    sweep: str
    point: SweepPoint
    seed: int
    scenario_text: str
    overrides: tuple[str, ...]
    source: str | None = None
    backend: str = "simulator"

    def scenario(self) -> Scenario:
        return Scenario(self.scenario_text, self.overrides, source=self.source)


@dataclass(frozen=True)
class DryRun:
    """What a sweep would cost: counts and an estimate from the simulated packet count."""

    name: str
    points: int
    replications: int
    runs: int
    packets_estimate: float
    wall_s_estimate: float
    parameters: dict[str, list[Any]]
    samples_estimate: float = 0.0
    backend: str = "simulator"

    def __str__(self) -> str:
        params = "\n".join(f"  {k}: {len(v)} values {_short(v)}" for k, v in self.parameters.items())
        head = f"sweep {self.name}: {self.points} points x {self.replications} replications = {self.runs} runs\n{params}\n"
        if self.backend == "testbed":
            return head + (f"estimated cost: {_human_s(self.wall_s_estimate)} of real time on the testbed (one run at "
                           f"a time: each run's duration plus about {TESTBED_OVERHEAD_S:g} s to build and tear down)")
        return head + (
            f"estimated cost: {self.packets_estimate:.3g} data packets and {self.samples_estimate:.3g} monitor "
            f"samples, about {_human_s(self.wall_s_estimate)} of core time at a nominal "
            f"{NOMINAL_PACKETS_PER_S:.0e} packets/s and {NOMINAL_SAMPLE_S * 1e6:.3g} us per sample\n"
            "(upper bound: every bottleneck kept busy for the whole run); runs start longest first"
        )


@dataclass
class Sweep:
    """A base scenario, the parameters to vary, replications (seeds) and metrics.

    ``vary`` is a mapping (each key crossed with the others) or a list of mappings (groups crossed
    with each other; keys inside a group zipped, so they must have equal lengths).

    >>> import fatpipe
    >>> base = fatpipe.Scenario.dumbbell(rate="10Mbps", delay="10ms", duration="2s")
    >>> sw = fatpipe.Sweep("demo", base, vary={"topology.pairs": [1, 2], "tcp.recovery": ["sack", "newreno"]},
    ...                    replications=3)
    >>> len(sw.points()), len(sw.runs())
    (4, 12)
    """

    name: str
    scenario: Scenario
    vary: Mapping[str, Any] | Sequence[Mapping[str, Any]] = field(default_factory=dict)
    replications: int = 1
    seeds: Sequence[int] | None = None
    metrics: Sequence[str] = ("utilisation", "aggregate_goodput_bps", "jain", "drops")
    set: Sequence[str] = ()
    description: str = ""
    source: str | None = None
    backend: str = "simulator"

    def __post_init__(self) -> None:
        if not self.name or not str(self.name).strip():
            raise SweepError("a sweep needs a non-empty name", "name")
        if self.backend not in BACKENDS:
            raise SweepError(f"{self.backend!r} is not a back-end; allowed: {', '.join(BACKENDS)}", "backend")
        if isinstance(self.scenario, (str, os.PathLike)):
            self.scenario = Scenario.load(self.scenario)
        if self.set:
            self.scenario = self.scenario.with_overrides(*self.set)
            self.set = ()
        self._groups = _parse_groups(self.vary)
        self._seeds = _seeds(self.replications, self.seeds)
        self.replications = len(self._seeds)
        points = math.prod(len(next(iter(g.values()))) for g in self._groups)
        if points > MAX_POINTS:
            raise SweepError(f"the [[vary]] groups cross into {points} points (limit {MAX_POINTS}); "
                             "vary fewer values or split the sweep", "vary")
        if points * self.replications > MAX_RUNS:
            raise SweepError(f"{points} points x {self.replications} replications = "
                             f"{points * self.replications} runs (limit {MAX_RUNS})", "replications")
        from fatpipe.experiments.run_metrics import check_metric_names

        check_metric_names(self.metrics)
        self.metrics = tuple(self.metrics)
        self._points = self._expand()
        self._check_points()

    # ---- construction from files -------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str], *, replications: int | None = None,
             set: Iterable[str] = ()) -> "Sweep":
        """Load a sweep file; ``replications`` and ``set`` override the file's."""
        p = Path(path)
        text = read_text(p, "sweep file", SweepError)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"{p}: not valid TOML: {e}") from None
        return cls.from_dict(data, base_dir=p.parent, replications=replications, set=set, source=str(p))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str | os.PathLike[str] = ".",
                  replications: int | None = None, set: Iterable[str] = (),
                  source: str | None = None) -> "Sweep":
        allowed = {"name", "description", "scenario", "set", "replications", "seeds", "metrics", "vary", "backend"}
        unknown = sorted(set_(data) - allowed)
        if unknown:
            raise SweepError(f"unknown key(s) {unknown}; allowed: {sorted(allowed)}", unknown[0])
        if "scenario" not in data:
            raise SweepError("missing: the path of the base scenario file, relative to the sweep file", "scenario")
        scen_path = Path(base_dir) / str(data["scenario"])
        if not scen_path.is_file():
            raise SweepError(f"no such scenario file {scen_path}", "scenario")
        if replications is None and "seeds" in data and "replications" in data:
            seeds_ = data["seeds"]
            if not isinstance(seeds_, list) or data["replications"] != len(seeds_):
                raise SweepError(f"replications = {data['replications']!r} contradicts seeds = {seeds_!r}; "
                                 "give one of them", "replications")
        fixed = list(_str_list(data.get("set", []), "set")) + list(set)
        reps = replications if replications is not None else data.get("replications", 1 if "seeds" not in data else None)
        seeds = None if replications is not None else data.get("seeds")
        return cls(
            name=str(data.get("name", Path(source or "sweep").stem)),
            description=str(data.get("description", "")),
            scenario=Scenario.load(scen_path),
            vary=data.get("vary", {}),
            replications=reps if reps is not None else 1,
            seeds=seeds,
            metrics=tuple(_str_list(data.get("metrics", list(cls.metrics)), "metrics")),
            set=fixed,
            source=source,
            backend=data.get("backend", "simulator"),
        )

    # ---- expansion -----------------------------------------------------------------------------
    @property
    def parameters(self) -> dict[str, list[Any]]:
        return {k: list(v) for g in self._groups for k, v in g.items()}

    @property
    def seed_list(self) -> list[int]:
        return list(self._seeds)

    def points(self) -> list[SweepPoint]:
        return list(self._points)

    def runs(self) -> list[RunSpec]:
        """Every (point, seed) run, points in order, seeds inner."""
        return [
            RunSpec(
                sweep=self.name,
                point=pt,
                seed=seed,
                scenario_text=self.scenario.text,
                overrides=(*self.scenario.overrides, *pt.overrides),
                source=self.scenario.source,
                backend=self.backend,
            )
            for pt in self._points
            for seed in self._seeds
        ]

    def dry_run(self) -> DryRun:
        """Counts and a cost estimate, without running anything."""
        packets = samples = wall = real_s = 0.0
        for pt in self._points:
            plan = self.scenario.with_overrides(*pt.overrides).plan(seed=self._seeds[0])
            packets += packet_estimate(plan) * len(self._seeds)
            samples += sample_estimate(plan) * len(self._seeds)
            wall += cost_estimate_s(plan) * len(self._seeds)
            real_s += (plan["duration_ns"] / 1e9 + TESTBED_OVERHEAD_S) * len(self._seeds)
        return DryRun(
            name=self.name,
            points=len(self._points),
            replications=len(self._seeds),
            runs=len(self._points) * len(self._seeds),
            packets_estimate=packets,
            wall_s_estimate=real_s if self.backend == "testbed" else wall,
            parameters=self.parameters,
            samples_estimate=samples,
            backend=self.backend,
        )

    def run(self, store: Any = "results", **kwargs: Any):
        """Run the sweep into a results store; see :func:`fatpipe.experiments.execute.run_sweep`."""
        from fatpipe.experiments.execute import run_sweep

        return run_sweep(self, store, **kwargs)

    def _expand(self) -> list[SweepPoint]:
        per_group: list[list[tuple[tuple[str, Any], ...]]] = []
        for g in self._groups:
            keys = list(g)
            per_group.append([tuple(zip(keys, vals)) for vals in zip(*(g[k] for k in keys))])
        combos = itertools.product(*per_group) if per_group else [()]
        return [SweepPoint(i, tuple(kv for grp in combo for kv in grp)) for i, combo in enumerate(combos)]

    def _check_points(self) -> None:
        """Apply every value to the scenario once, so a bad one fails before any run starts."""
        from fatpipe.exceptions import ScenarioError

        # Each value is applied with its zipped partners (the other keys of its [[vary]] group at
        # the same index): they form one unit, and a value may only be valid beside them (e.g.
        # `tcp.cc_params` for the `tcp.cc` zipped with it).
        for g in self._groups:
            keys = list(g)
            for vals in zip(*(g[k] for k in keys)):
                sets = [f"{k}={_format_value(v)}" for k, v in zip(keys, vals)]
                try:
                    self.scenario.with_overrides(*sets)
                except ScenarioError as e:
                    key, v = next(((k, v) for k, v, a in zip(keys, vals, sets) if not _applies(self.scenario, a)),
                                  (keys[-1], vals[-1]))
                    raise SweepError(f"value {v!r} is not valid for this scenario: {e}", key) from None
        # Zipped/crossed combinations can still be inconsistent together (e.g. a flow list index).
        for pt in self._points:
            try:
                self.scenario.with_overrides(*pt.overrides)
            except ScenarioError as e:
                raise SweepError(f"point {pt.label} is not a valid scenario: {e}") from None


# ---- helpers ------------------------------------------------------------------------------------
def set_(m: Mapping[str, Any]) -> set[str]:
    return set(m.keys())


def _str_list(v: Any, what: str) -> list[str]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise SweepError("must be a list of strings", what)
    return v


def _seeds(replications: int | None, seeds: Sequence[int] | None) -> list[int]:
    if seeds is not None:
        if not isinstance(seeds, (list, tuple)) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= MAX_SEED for s in seeds
        ):
            raise SweepError(f"must be a list of integers from 0 to {MAX_SEED}", "seeds")
        if len(seeds) > MAX_REPLICATIONS:
            raise SweepError(f"has {len(seeds)} seeds (limit {MAX_REPLICATIONS})", "seeds")
        if not seeds:
            raise SweepError("is empty: give at least one seed", "seeds")
        if len(set(seeds)) != len(seeds):
            raise SweepError("has duplicates: every replication needs its own seed", "seeds")
        return list(seeds)
    if not isinstance(replications, int) or isinstance(replications, bool) or replications < 1:
        raise SweepError(f"must be a positive integer, got {replications!r}", "replications")
    if replications > MAX_REPLICATIONS:
        raise SweepError(f"{replications} replications (limit {MAX_REPLICATIONS})", "replications")
    return list(range(1, replications + 1))


def _parse_groups(vary: Any) -> list[dict[str, list[Any]]]:
    if isinstance(vary, Mapping):
        groups = [{k: v} for k, v in vary.items()]
    elif isinstance(vary, (list, tuple)):
        if not all(isinstance(g, Mapping) for g in vary):
            raise SweepError("each [[vary]] group must be a table of parameter = values, "
                             f"got {vary!r}", "vary")
        groups = [dict(g) for g in vary]
    else:
        raise SweepError("must be a table or a list of tables", "vary")
    seen: set[str] = set()
    out = []
    for g in groups:
        if not g:
            raise SweepError("a [[vary]] group is empty", "vary")
        parsed = {}
        for key, spec in g.items():
            if not isinstance(key, str) or not key:
                raise SweepError(f"a varied parameter is a scenario key such as \"topology.pairs\", got {key!r}", "vary")
            if key in seen:
                raise SweepError("is varied twice", key)
            seen.add(key)
            parsed[key] = _values(key, spec)
        lengths = {k: len(v) for k, v in parsed.items()}
        if len(set(lengths.values())) > 1:
            raise SweepError(f"zipped parameters in one [[vary]] group need equal lengths, got {lengths}",
                             next(iter(lengths)))
        out.append(parsed)
    return out


def _values(key: str, spec: Any) -> list[Any]:
    if isinstance(spec, Mapping):
        allowed = {"from", "to", "step", "factor", "values", "unit"}
        extra = sorted(set(spec) - allowed)
        if extra:
            raise SweepError(f"unknown range key(s) {extra}; allowed: {sorted(allowed)}", key)
        unit = spec.get("unit")
        if unit is not None and not isinstance(unit, str):
            raise SweepError(f"range `unit` must be a string such as \"pkt\", got {unit!r}", key)
        if "values" in spec:
            if not isinstance(spec["values"], (list, tuple)):
                raise SweepError(f"`values` must be a list, got {spec['values']!r}", key)
            vals = list(spec["values"])
        elif "from" in spec and "to" in spec and ("step" in spec) != ("factor" in spec):
            vals = _range(key, spec["from"], spec["to"], spec.get("step"), spec.get("factor"))
        else:
            raise SweepError("a range needs `from`, `to` and exactly one of `step` or `factor` "
                             "(or give `values = [...]`)", key)
        if unit is not None:
            vals = [f"{_num(v)}{unit}" for v in vals]
    elif isinstance(spec, (list, tuple)):
        vals = list(spec)
    else:
        vals = [spec]
    if not vals:
        raise SweepError("has no values (empty list or empty range)", key)
    return vals


def _range(key: str, lo: Any, hi: Any, step: Any, factor: Any) -> list[Any]:
    for name, v in (("from", lo), ("to", hi), ("step", step), ("factor", factor)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise SweepError(f"range `{name}` must be a number, got {v!r}", key)
        if v is not None and not math.isfinite(v):
            raise SweepError(f"range `{name}` must be a finite number, got {v!r}", key)
    vals: list[Any] = []
    if step is not None:
        if step == 0:
            raise SweepError("range `step` is 0", key)
        count = (hi - lo) / step  # may overflow to inf for extreme finite bounds
        if not math.isfinite(count) or count + 1 > MAX_VALUES_PER_PARAMETER:
            raise SweepError(f"range has {count + 1:.3g} values (limit {MAX_VALUES_PER_PARAMETER})", key)
        n = math.floor(count + 1e-9) + 1
        vals = [lo + i * step for i in range(max(n, 0))]
    else:
        if factor <= 0 or factor == 1 or lo <= 0:
            raise SweepError("a geometric range needs `from` > 0 and `factor` > 0, != 1", key)
        x = lo
        while (factor > 1 and x <= hi * (1 + 1e-12)) or (factor < 1 and x >= hi * (1 - 1e-12)):
            vals.append(x)
            if len(vals) > MAX_VALUES_PER_PARAMETER:
                raise SweepError(f"range has more than {MAX_VALUES_PER_PARAMETER} values", key)
            x = x * factor
    if all(isinstance(v, int) for v in (lo, step or 1, factor or 1)):
        vals = [int(v) for v in vals]
    else:
        vals = [round(v, 12) for v in vals]
    return vals


def _num(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _applies(scenario: Scenario, assignment: str) -> bool:
    from fatpipe.exceptions import ScenarioError

    try:
        scenario.with_overrides(assignment)
    except ScenarioError:
        return False
    return True


def _format_value(v: Any) -> str:
    """A value as the right-hand side of ``--set`` (TOML literal, bare strings allowed)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_format_value(x) for x in v) + "]"
    if isinstance(v, Mapping):
        # A TOML inline table, so one varied key can set a whole sub-table (e.g. per-protocol
        # `tcp.cc_params` zipped with `tcp.cc`, where protocols take different parameters).
        return "{" + ", ".join(f"{_format_value(str(k))} = {_format_value(x)}" for k, x in v.items()) + "}"
    raise SweepError(f"cannot use {v!r} as a parameter value")


def packet_estimate(plan: Mapping[str, Any]) -> float:
    """Upper bound on data packets: the bottleneck (or fastest link) busy for the whole run."""
    duration_s = plan["duration_ns"] / 1e9
    links = {l["name"]: l for l in plan["links"]}
    bn = links.get(plan.get("bottleneck") or "")
    rate = bn["rate_bps"] if bn else max((l["rate_bps"] for l in plan["links"]), default=0)
    flows = plan.get("flows") or []
    size = (flows[0]["mss"] + flows[0]["header_bytes"]) if flows else 1500
    return rate * duration_s / (8.0 * size)


def sample_estimate(plan: Mapping[str, Any]) -> float:
    """Monitor sample rows: one per flow and per link at every sampling instant."""
    interval = (plan.get("monitor") or {}).get("interval_ns")
    if not interval:
        return 0.0
    return plan["duration_ns"] / interval * (len(plan.get("flows") or []) + len(plan["links"]))


def cost_estimate_s(plan: Mapping[str, Any]) -> float:
    """Core time a run is expected to take at the nominal speeds: what the dry run sums and
    what orders a sweep's runs (longest first)."""
    return packet_estimate(plan) / NOMINAL_PACKETS_PER_S + sample_estimate(plan) * NOMINAL_SAMPLE_S


def _short(vals: list[Any]) -> str:
    s = ", ".join(map(str, vals[:6]))
    return f"[{s}{', ...' if len(vals) > 6 else ''}]"


def _human_s(s: float) -> str:
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"
