"""Performance metrics, each defined once.

Every function here is plain numpy (this module imports nothing else, so it works without the
compiled core). Quantities are fractions, not percentages, and rates are in bit/s, matching the
result tables (docs/plan-and-results.md).

References
----------
.. [Jain84] R. Jain, D.-M. Chiu, W. Hawe, "A Quantitative Measure of Fairness and Discrimination
   for Resource Allocation in Shared Computer Systems", DEC Research Report DEC-TR-301, 1984.
.. [Michel09] N. F. Michel, "Análise de Protocolos TCP para Redes de Alta Velocidade", MSc
   dissertation, Instituto de Computação, UNICAMP, 2008/2009: Eq. 4.1 (Jain's index), Eq. 4.2
   (coefficient of variation), Table 4.2 (RTT fairness), §4.1.4 (fair share). Extracted in
   ``shared/seeds/000-michel2009-highspeed-tcp.md`` (beside this repository) §5.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "jain_index",
    "coefficient_of_variation",
    "jain_from_cv",
    "utilisation",
    "fair_share_bps",
    "interval_throughput_bps",
    "convergence_time_s",
    "stability_cv",
    "reno_share",
]


def _as_finite_1d(values: ArrayLike, what: str) -> np.ndarray:
    """``values`` as a 1-D float64 array; raise ValueError if empty, not 1-D or not finite."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D sequence of numbers, got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"{what}: undefined for an empty sequence")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what}: values must be finite (no NaN or inf)")
    return x


def _scalar_or_array(x: np.ndarray) -> float | np.ndarray:
    return float(x) if x.ndim == 0 else x


def jain_index(values: ArrayLike) -> float:
    r"""Jain's fairness index of an allocation.

    .. math:: J = \frac{\left(\sum_{i=1}^{n} x_i\right)^2}{n \sum_{i=1}^{n} x_i^2}

    ([Jain84]_; Eq. 4.1 of [Michel09]_, where :math:`x_i` is the throughput of flow *i*.)
    :math:`J` lies in :math:`[1/n, 1]`: 1 when all flows get the same, :math:`1/n` when one flow
    gets everything. It does not depend on the unit or scale of the values.

    Parameters
    ----------
    values : array_like, 1-D
        Non-negative allocations, e.g. per-flow goodput in bit/s.

    Returns
    -------
    float
        The index.

    Raises
    ------
    ValueError
        If ``values`` is empty, not 1-D, contains NaN/inf or negative numbers, or is all zeros.
        The index is 0/0 for an all-zero allocation: no flow got anything, so fairness is
        undefined (it is *not* reported as 1 or as NaN, so that a broken run cannot pass as fair).

    See Also
    --------
    jain_from_cv : the same index from the population coefficient of variation.

    Examples
    --------
    >>> jain_index([10.0, 10.0, 10.0, 10.0])
    1.0
    >>> jain_index([1.0, 0.0, 0.0, 0.0])  # one flow takes everything: 1/n
    0.25
    >>> round(jain_index([1.0, 3.0]), 6)
    0.8
    """
    x = _as_finite_1d(values, "jain_index")
    if np.any(x < 0):
        raise ValueError("jain_index: allocations must be non-negative")
    sum_sq = float(np.dot(x, x))
    if sum_sq == 0.0:
        raise ValueError("jain_index: undefined when every value is zero (0/0)")
    total = float(np.sum(x))
    return total * total / (x.size * sum_sq)


def coefficient_of_variation(values: ArrayLike) -> float:
    r"""Coefficient of variation :math:`c_v = \sigma / \bar{x}`, as a fraction.

    Eq. 4.2 of [Michel09]_ (``cv = s / x̄``). :math:`\sigma` is the **population** standard
    deviation (``ddof=0``, divide by *n*): that is the convention under which the dissertation's
    Table 4.2 satisfies ``Jain = 1 / (1 + cv²)`` for all 21 entries (see :func:`jain_from_cv`); the
    sample standard deviation (divide by *n − 1*) does not reproduce it.

    The result is a fraction; the dissertation prints cv in percent (Table 4.2, Fig. 4.11:
    "cv ≤ 25% is low"), i.e. ``100 * coefficient_of_variation(x)``.

    Parameters
    ----------
    values : array_like, 1-D
        Samples, e.g. per-flow goodputs (fairness) or per-interval aggregate throughput
        (stability).

    Returns
    -------
    float
        :math:`\sigma / \bar{x}`. Non-negative when the values are.

    Raises
    ------
    ValueError
        If ``values`` is empty, not 1-D, contains NaN/inf, or has mean zero.

    Examples
    --------
    >>> coefficient_of_variation([1.0, 3.0])  # sigma = 1 (ddof=0), mean = 2
    0.5
    >>> coefficient_of_variation([5.0, 5.0, 5.0])
    0.0
    """
    x = _as_finite_1d(values, "coefficient_of_variation")
    mean = float(np.mean(x))
    if mean == 0.0:
        raise ValueError("coefficient_of_variation: undefined when the mean is zero")
    return float(np.std(x, ddof=0)) / mean


def jain_from_cv(cv: ArrayLike) -> float | np.ndarray:
    r"""Jain's index from the population coefficient of variation: :math:`J = 1/(1 + c_v^2)`.

    For any values with mean :math:`\bar{x} \neq 0` and population variance :math:`\sigma^2`,
    :math:`\sum x_i = n\bar{x}` and :math:`\sum x_i^2 = n(\sigma^2 + \bar{x}^2)`, so

    .. math:: J = \frac{n^2\bar{x}^2}{n \cdot n(\sigma^2 + \bar{x}^2)}
              = \frac{1}{1 + (\sigma/\bar{x})^2}.

    The identity is exact only for the population cv (``ddof=0``), as computed by
    :func:`coefficient_of_variation`. It is how Table 4.2 of [Michel09]_ can be checked from its
    printed cv column alone.

    Parameters
    ----------
    cv : float or array_like
        Coefficient(s) of variation as a **fraction** (divide the dissertation's % by 100).

    Returns
    -------
    float or numpy.ndarray
        A float for scalar input, an array of the same shape otherwise.

    Raises
    ------
    ValueError
        If any ``cv`` is NaN or infinite.

    Examples
    --------
    >>> jain_from_cv(0.0)
    1.0
    >>> jain_from_cv(0.5)
    0.8
    >>> round(jain_from_cv(31.238 / 100), 4)  # BIC, bg 20%, Table 4.2 prints 0.9110
    0.9111
    """
    c = np.asarray(cv, dtype=np.float64)
    if not np.all(np.isfinite(c)):
        raise ValueError("jain_from_cv: cv must be finite")
    return _scalar_or_array(1.0 / (1.0 + c * c))


def utilisation(bytes_: ArrayLike, rate_bps: ArrayLike, duration_s: ArrayLike) -> float | np.ndarray:
    r"""Fraction of a link's capacity used: :math:`U = 8B / (C \cdot T)`.

    The definition of the ``links.utilisation`` column (docs/plan-and-results.md): bytes put on
    the wire (headers included) times 8, over rate times duration. The dissertation's
    "utilização (%)" ([Michel09]_ §4.1.1) is ``100 * utilisation(...)`` of the main flows' bytes.

    Parameters
    ----------
    bytes_ : float or array_like
        Bytes transmitted during the interval (non-negative).
    rate_bps : float or array_like
        Link rate in bit/s (positive).
    duration_s : float or array_like
        Length of the interval in seconds (positive).

    Returns
    -------
    float or numpy.ndarray
        The fraction (broadcast over array inputs). It can exceed 1 only if the inputs are
        inconsistent.

    Raises
    ------
    ValueError
        If any input is not finite, ``bytes_`` is negative, or ``rate_bps``/``duration_s`` is not
        positive.

    Examples
    --------
    >>> utilisation(125_000_000, 1e9, 1.0)  # 1 Gbit in 1 s on a 1 Gb/s link
    1.0
    >>> utilisation(62_500_000, 1e9, 2.0)
    0.25
    """
    b = np.asarray(bytes_, dtype=np.float64)
    r = np.asarray(rate_bps, dtype=np.float64)
    t = np.asarray(duration_s, dtype=np.float64)
    for name, a in (("bytes_", b), ("rate_bps", r), ("duration_s", t)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"utilisation: {name} must be finite")
    if np.any(b < 0):
        raise ValueError("utilisation: bytes_ must be non-negative")
    if np.any(r <= 0):
        raise ValueError("utilisation: rate_bps must be positive")
    if np.any(t <= 0):
        raise ValueError("utilisation: duration_s must be positive")
    return _scalar_or_array(b * 8.0 / (r * t))


def fair_share_bps(capacity_bps: float, n_flows: int, background_fraction: float = 0.0) -> float:
    r"""Fair share of one flow: :math:`\frac{1}{N}\,C\,(1 - b)`.

    [Michel09]_ §4.1.4 (convergence) writes it :math:`\frac{1}{N}\left(C - \frac{C \cdot bg}{100}\right)`
    with *bg* in percent; here ``background_fraction`` is :math:`b = bg/100`. The background load
    is taken off the capacity and the rest split equally among the *N* flows.

    Parameters
    ----------
    capacity_bps : float
        Bottleneck capacity *C* in bit/s (positive).
    n_flows : int
        Number of flows *N* sharing it (at least 1).
    background_fraction : float, default 0.0
        Share of the capacity taken by background traffic, in ``[0, 1]`` (0.2 for "bg 20%").

    Returns
    -------
    float
        Bit/s per flow.

    Raises
    ------
    ValueError
        If ``capacity_bps`` is not positive and finite, ``n_flows`` is not an integer ≥ 1, or
        ``background_fraction`` is outside ``[0, 1]`` (a common slip is passing 20 for 20%).

    Examples
    --------
    >>> fair_share_bps(1e9, 20, 0.2)  # 40 Mb/s, as in the dissertation's convergence test
    40000000.0
    >>> fair_share_bps(1e9, 20, 0.5)
    25000000.0
    >>> fair_share_bps(10e6, 4)
    2500000.0
    """
    if isinstance(n_flows, bool) or not isinstance(n_flows, (int, np.integer)):
        raise ValueError(f"fair_share_bps: n_flows must be an integer, got {n_flows!r}")
    if n_flows < 1:
        raise ValueError(f"fair_share_bps: n_flows must be at least 1, got {n_flows}")
    c = float(capacity_bps)
    if not np.isfinite(c) or c <= 0:
        raise ValueError(f"fair_share_bps: capacity_bps must be positive and finite, got {capacity_bps!r}")
    b = float(background_fraction)
    if not (0.0 <= b <= 1.0):
        raise ValueError(
            f"fair_share_bps: background_fraction must be in [0, 1] (a fraction, not %), got {background_fraction!r}"
        )
    return c * (1.0 - b) / int(n_flows)


# ---- Time-series metrics ([Michel09] §5 items 4-7) -------------------------------------------


def interval_throughput_bps(t_s: ArrayLike, cumulative_bytes: ArrayLike, interval_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Throughput per interval of length ``interval_s`` from cumulative byte samples.

    ``t_s`` are sample times (increasing) and ``cumulative_bytes`` the bytes delivered up to each
    (the ``bytes_delivered`` column of ``flow_series``). Intervals are ``[k*interval, (k+1)*interval)``
    from time 0; the counter is read at the last sample at or before each boundary, so the
    interval should be a multiple of the sampling interval ([Michel09] counts bits per 1 s).

    Parameters
    ----------
    t_s : array_like
        Sample times in seconds, increasing.
    cumulative_bytes : array_like
        Bytes delivered up to each sample time.
    interval_s : float
        Interval length in seconds.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Interval end times (s) and throughput per interval (bit/s).

    >>> t, bps = interval_throughput_bps([0.5, 1.0, 1.5, 2.0], [100, 250, 300, 500], 1.0)
    >>> t.tolist(), bps.tolist()
    ([1.0, 2.0], [2000.0, 2000.0])
    """
    t = _as_finite_1d(t_s, "interval_throughput_bps")
    b = _as_finite_1d(cumulative_bytes, "interval_throughput_bps")
    if t.size != b.size:
        raise ValueError("interval_throughput_bps: t_s and cumulative_bytes differ in length")
    if not interval_s > 0:
        raise ValueError("interval_throughput_bps: interval_s must be positive")
    n = int(np.floor(t[-1] / interval_s + 1e-9))
    ends = np.arange(1, n + 1) * interval_s
    idx = np.searchsorted(t, ends + 1e-9, side="right") - 1
    at = np.where(idx >= 0, b[np.clip(idx, 0, None)], 0.0)
    before = np.concatenate([[0.0], at[:-1]])
    return ends, (at - before) * 8.0 / interval_s


def convergence_time_s(
    t_end_s: ArrayLike, throughput_bps: ArrayLike, start_s: float, fair_share: float, sustain: int = 1
) -> float | None:
    """Time from a flow's start until its per-interval throughput reaches the fair share.

    [Michel09] §5 item 6: the last connection's bits are counted per 1 s interval and the
    convergence time is measured from its start until its throughput first reaches the fair share
    (``sustain=1``, "first reaching", as implied there). ``sustain=k`` is the stricter variant: the
    first of ``k`` consecutive intervals all at or above the fair share. Intervals are identified
    by their end times; the result is the end of the first qualifying interval minus ``start_s``,
    or None if the flow never converges.

    Parameters
    ----------
    t_end_s : array_like
        End times of the measurement intervals (s).
    throughput_bps : array_like
        The flow's throughput in each interval (bit/s).
    start_s : float
        The flow's start time (s); intervals ending at or before it are ignored.
    fair_share : float
        Fair share in bit/s (see :func:`fair_share_bps`).
    sustain : int
        Consecutive intervals that must reach the fair share (1 = first reaching).

    Returns
    -------
    float or None
        Convergence time in seconds after ``start_s``.

    >>> convergence_time_s([1, 2, 3, 4, 5], [1, 5, 3, 6, 7], start_s=0.5, fair_share=5)
    1.5
    >>> convergence_time_s([1, 2, 3, 4, 5], [1, 5, 3, 6, 7], start_s=0.5, fair_share=5, sustain=2)
    3.5
    """
    t = _as_finite_1d(t_end_s, "convergence_time_s")
    x = _as_finite_1d(throughput_bps, "convergence_time_s")
    if t.size != x.size:
        raise ValueError("convergence_time_s: times and throughputs differ in length")
    if sustain < 1:
        raise ValueError("convergence_time_s: sustain must be at least 1")
    ok = (x >= fair_share) & (t > start_s)
    run = 0
    for i, good in enumerate(ok):
        run = run + 1 if good else 0
        if run == sustain:
            return float(t[i - sustain + 1] - start_s)
    return None


def stability_cv(t_end_s: ArrayLike, aggregate_bps: ArrayLike, warmup_s: float = 0.0) -> float:
    """Stability: coefficient of variation of the aggregate throughput over sampling intervals.

    [Michel09] §5 item 4: the cv (population standard deviation) of the *aggregate* throughput
    over time; cv <= 25 % is called "low" (stable). The dissertation names no warm-up; intervals
    ending at or before ``warmup_s`` are left out when it is given (the variant with a cut).

    Parameters
    ----------
    t_end_s : array_like
        End times of the sampling intervals (s).
    aggregate_bps : array_like
        Aggregate throughput in each interval (bit/s).
    warmup_s : float
        Intervals ending at or before this time are excluded.

    Returns
    -------
    float
        The coefficient of variation as a fraction.

    >>> stability_cv([1, 2, 3, 4], [0, 10, 10, 10])                # doctest: +ELLIPSIS
    0.577...
    >>> stability_cv([1, 2, 3, 4], [0, 10, 10, 10], warmup_s=1.0)
    0.0
    """
    t = _as_finite_1d(t_end_s, "stability_cv")
    x = _as_finite_1d(aggregate_bps, "stability_cv")
    if t.size != x.size:
        raise ValueError("stability_cv: times and throughputs differ in length")
    kept = x[t > warmup_s]
    if kept.size == 0:
        raise ValueError(f"stability_cv: no interval ends after the warm-up of {warmup_s} s")
    return coefficient_of_variation(kept)


def reno_share(goodput_bps: ArrayLike, is_reno: ArrayLike, capacity_bps: float) -> float:
    """Friendliness: the fraction of the link capacity taken by the Reno flows.

    [Michel09] §5 item 7 measures compatibility with Reno as "% of link capacity used by the
    Reno connections" against the number of high-speed connections; this returns that share as
    a fraction (goodput of the flows marked ``is_reno`` summed, over ``capacity_bps``).

    Parameters
    ----------
    goodput_bps : array_like
        Per-flow goodput (bit/s).
    is_reno : array_like of bool
        Which flows are Reno.
    capacity_bps : float
        Link capacity (bit/s).

    Returns
    -------
    float
        The Reno flows' share of the capacity, as a fraction.

    >>> reno_share([30e6, 20e6, 40e6], [True, True, False], 100e6)
    0.5
    """
    g = _as_finite_1d(goodput_bps, "reno_share")
    r = np.asarray(is_reno, dtype=bool)
    if r.shape != g.shape:
        raise ValueError("reno_share: goodput_bps and is_reno differ in length")
    if not capacity_bps > 0:
        raise ValueError("reno_share: capacity_bps must be positive")
    return float(g[r].sum() / capacity_bps)
