"""fatpipe — a fast, deterministic laboratory for transport protocols on long fat networks.

>>> import fatpipe
>>> sc = fatpipe.Scenario.dumbbell(pairs=2, rate="10Mbps", delay="10ms", duration="5s")
>>> res = fatpipe.run(sc, seed=1)
>>> res.to_pandas("flows")[["flow_id", "goodput_bps"]].shape
(2, 2)
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

# mimalloc, the core's allocator, commits its 1 GiB arenas eagerly by default: planning the
# 1 000-flow benchmark scenario then peaks at 286 MB of RSS for a live heap of about 10 MB, and
# `fatpipe run` on it at 347 MB. Lazy commit (read when the extension first allocates, so set
# before it loads; a user's own setting wins): 63 MB and no slower (reference dumbbell 55 -> 30 MB).
os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")

from fatpipe import _core  # noqa: E402
from fatpipe.exceptions import (
    FatpipeError,
    ScenarioError,
    SimulationError,
    UnknownAlgorithmError,
    UnroutableError,
)
from fatpipe.result import Result
from fatpipe.scenario import Scenario
from fatpipe.seeds import check_seed

if TYPE_CHECKING:
    from fatpipe.experiments import CorruptResultError, Store, Sweep, SweepError, open_store, run_sweep

__version__: str = _core.__version__

# Names whose modules pull in pandas and pyarrow (the results store, sweeps): imported on
# first use, so `import fatpipe`, `fatpipe --help` and a single run start without them.
_LAZY = {
    "CorruptResultError": "fatpipe.experiments",
    "Store": "fatpipe.experiments",
    "Sweep": "fatpipe.experiments",
    "SweepError": "fatpipe.experiments",
    "open_store": "fatpipe.experiments",
    "run_sweep": "fatpipe.experiments",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fatpipe' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

ProgressCallback = Callable[[float, float], None]


def run(
    scenario: Scenario | str | os.PathLike[str],
    seed: int | None = None,
    *,
    overrides: list[str] | tuple[str, ...] = (),
    progress: ProgressCallback | None = None,
) -> Result:
    """Run a scenario and return its :class:`Result`.

    ``scenario`` is a :class:`Scenario` or a path to a TOML file. ``seed`` defaults to the
    scenario's ``seed`` (else 1). The same scenario, seed and fatpipe version give bit-identical
    results. The GIL is released while the core runs; ``progress(sim_now_s, sim_end_s)`` is called
    a few times per second. Ctrl-C raises ``KeyboardInterrupt``.
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.load(scenario)
    if overrides:
        scenario = scenario.with_overrides(*overrides)
    if seed is not None:
        seed = check_seed(seed)
    text, sets = scenario.core_args()
    raw = _core.run(text, sets, seed, progress)
    plan_seed = seed
    if plan_seed is None:
        import json

        plan_seed = json.loads(raw["plan"])["seed"]
    return Result._from_core(raw, int(plan_seed), __version__)


def algorithms() -> dict[str, str]:
    """Registered congestion controls: name -> one-line summary."""
    return {name: summary for name, summary, _cite, _params in _core.cc_algorithms()}


def algorithm_details() -> list[dict[str, Any]]:
    """Every registered congestion control with its citation and parameters.

    Each entry is ``{"name", "summary", "citation", "params"}``; each parameter is
    ``{"name", "default", "unit", "doc"}`` with the default as a TOML literal, as it would be
    written under ``[tcp.cc_params]``.

    >>> reno = next(a for a in algorithm_details() if a["name"] == "reno")
    >>> reno["params"]
    []
    """
    return [
        {
            "name": name,
            "summary": summary,
            "citation": cite,
            "params": [{"name": n, "default": d, "unit": u, "doc": doc} for n, d, u, doc in params],
        }
        for name, summary, cite, params in _core.cc_algorithms()
    ]


def schema() -> str:
    """The JSON Schema of scenario files."""
    return _core.schema()


__all__ = [
    "CorruptResultError",
    "FatpipeError",
    "Result",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "Store",
    "Sweep",
    "SweepError",
    "UnknownAlgorithmError",
    "UnroutableError",
    "algorithms",
    "algorithm_details",
    "open_store",
    "run",
    "run_sweep",
    "schema",
    "__version__",
]
