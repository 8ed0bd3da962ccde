"""Experiments: sweeps, their execution (local processes or Dask), the results store and
replication statistics. The main names are re-exported from :mod:`fatpipe`."""

from fatpipe.experiments.aggregate import summarize_sweep
from fatpipe.experiments.execute import Failure, SweepOutcome, run_sweep
from fatpipe.experiments.run_metrics import METRICS
from fatpipe.experiments.store import CorruptResultError, Store, open_store, run_key
from fatpipe.experiments.sweep import DryRun, RunSpec, Sweep, SweepError, SweepPoint

__all__ = [
    "CorruptResultError",
    "DryRun",
    "Failure",
    "METRICS",
    "RunSpec",
    "Store",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "SweepPoint",
    "open_store",
    "run_key",
    "run_sweep",
    "summarize_sweep",
]
