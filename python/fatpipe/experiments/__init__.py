"""Experiments: sweeps, their execution (local processes or Dask), the results store and
replication statistics. The main names are re-exported from :mod:`fatpipe`.

Each name is imported from its module on first use: the store and the aggregation need pandas
and pyarrow, which defining a sweep (``fatpipe sweep --dry-run``) or catching a
:class:`SweepError` does not.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fatpipe.experiments.aggregate import summarize_sweep
    from fatpipe.experiments.execute import Failure, SweepOutcome, run_sweep
    from fatpipe.experiments.run_metrics import METRICS
    from fatpipe.experiments.store import CorruptResultError, Store, open_store, run_key
    from fatpipe.experiments.sweep import DryRun, RunSpec, Sweep, SweepError, SweepPoint

_WHERE = {
    "summarize_sweep": "aggregate",
    "Failure": "execute",
    "SweepOutcome": "execute",
    "run_sweep": "execute",
    "METRICS": "run_metrics",
    "CorruptResultError": "store",
    "Store": "store",
    "open_store": "store",
    "run_key": "store",
    "DryRun": "sweep",
    "RunSpec": "sweep",
    "Sweep": "sweep",
    "SweepError": "sweep",
    "SweepPoint": "sweep",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'fatpipe.experiments' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"fatpipe.experiments.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
