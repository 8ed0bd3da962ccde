"""Replication statistics per sweep point: n, mean, std and a Student's t confidence interval.

Every value carries its ``n``: replications whose metric is undefined (NaN, e.g. a flow that never
converged) are left out of that metric's statistics and ``n`` says how many remained.
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np
import pandas as pd

from fatpipe.stats import summarize

__all__ = ["summarize_sweep"]

COLUMNS = ["metric", "n", "mean", "std", "half_width", "ci_low", "ci_high", "level"]


def summarize_sweep(runs: pd.DataFrame, parameters: Iterable[str], metrics: Iterable[str],
                    level: float = 0.95) -> pd.DataFrame:
    """One row per (sweep point, metric) from per-run rows (``Store.runs(sweep)``).

    >>> df = pd.DataFrame({"point": [0, 0, 0], "topology.pairs": [2, 2, 2], "seed": [1, 2, 3],
    ...                    "utilisation": [0.90, 0.92, 0.94]})
    >>> row = summarize_sweep(df, ["topology.pairs"], ["utilisation"]).iloc[0]
    >>> int(row["n"]), round(float(row["mean"]), 2), round(float(row["half_width"]), 4)
    (3, 0.92, 0.0497)
    """
    params = list(parameters)
    metrics = list(metrics)
    if runs.empty:
        return pd.DataFrame(columns=["point", *params, *COLUMNS])
    rows = []
    for point, g in runs.groupby("point", sort=True):
        first = g.iloc[0]
        for metric in metrics:
            vals = g[metric].to_numpy(dtype=float) if metric in g else np.array([])
            vals = vals[np.isfinite(vals)]
            if vals.size:
                s = summarize(vals, level)
                stats = [s.n, s.mean, s.std, s.half_width, s.low, s.high]
            else:
                stats = [0, math.nan, math.nan, math.nan, math.nan, math.nan]
            rows.append([point, *(first[p] for p in params), metric, *stats, level])
    return pd.DataFrame(rows, columns=["point", *params, *COLUMNS])
