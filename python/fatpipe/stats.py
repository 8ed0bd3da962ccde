"""Statistics across replications: mean, standard deviation and a Student's t confidence interval.

Every reported value carries the number of replications it comes from. The interval uses the
sample standard deviation (divide by n - 1), as a confidence interval for a mean must; this is
unrelated to the population standard deviation the fairness metrics use (``fatpipe.metrics``).

References
----------
.. [Student] W. S. Gosset ("Student"), "The probable error of a mean", Biometrika 6(1), 1908;
   any statistics text, e.g. R. Jain, "The Art of Computer Systems Performance Analysis", Wiley
   1991, §13.2 (confidence interval for the mean).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Summary", "mean_ci", "summarize"]


@dataclass(frozen=True)
class Summary:
    """Mean of ``n`` replications with a two-sided confidence interval at ``level``."""

    n: int
    mean: float
    std: float
    half_width: float
    level: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def __str__(self) -> str:
        return f"{self.mean:.6g} ± {self.half_width:.3g} ({self.level:.0%} CI, n={self.n})"


def summarize(values: ArrayLike, level: float = 0.95) -> Summary:
    """Mean, sample standard deviation and Student's t confidence interval of ``values``.

    The half-width is ``t_{(1+level)/2, n-1} * s / sqrt(n)``. With a single replication the
    spread is unknown: ``std`` and ``half_width`` are NaN (never zero, which would look certain).

    >>> s = summarize([10.0, 12.0, 14.0])
    >>> (s.n, s.mean, s.std)
    (3, 12.0, 2.0)
    >>> round(s.half_width, 4)    # t(0.975, 2) = 4.3027; 4.3027 * 2 / sqrt(3)
    4.9683
    >>> summarize([5.0]).half_width
    nan
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("summarize: expected a non-empty 1-D sequence of numbers")
    if not np.all(np.isfinite(x)):
        raise ValueError("summarize: values must be finite (a failed run should be excluded, not NaN)")
    n = int(x.size)
    mean = float(x.mean())
    if n == 1:
        return Summary(n, mean, math.nan, math.nan, level)
    std = float(x.std(ddof=1))
    from scipy import stats as _st  # imported here: `import fatpipe` does not load scipy

    t = float(_st.t.ppf((1.0 + level) / 2.0, n - 1))
    return Summary(n, mean, std, t * std / math.sqrt(n), level)


def mean_ci(values: ArrayLike, level: float = 0.95) -> tuple[float, float, int]:
    """Mean, half-width of the Student's t interval at ``level`` (NaN for one value) and n of
    the finite ``values`` (NaN, NaN, 0 when there are none): the studies' cell summary, where a
    failed run leaves a NaN."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, 0
    s = summarize(x, level)
    return float(s.mean), float(s.half_width), int(s.n)
