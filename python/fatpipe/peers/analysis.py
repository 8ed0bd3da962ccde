"""Peer-independent analysis helpers for comparing fatpipe with ns-2 / ns-3 runs.

Standard library only, so it works on plain lists, numpy arrays or pandas columns alike.
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["cwnd_reductions", "sawtooth_period_s"]


def cwnd_reductions(
    times: Iterable[float],
    cwnds: Iterable[float],
    *,
    min_drop: float = 0.2,
) -> list[float]:
    """Times at which a multiplicative decrease of the congestion window is first seen.

    A reduction is detected at the first sample whose cwnd is below ``(1 - min_drop)`` times the
    highest cwnd seen since the previous reduction ended. A reduction episode lasts while cwnd keeps
    falling, so a decrease spread over several samples (Linux rate halving, a fast recovery
    followed by a timeout in the same descent, a coarse sampler straddling the cut) counts once.
    ``min_drop = 0.2`` catches Reno (50 %) and CUBIC (30 %) cuts but not sampling jitter.
    Samples must be in time order; ``None``/NaN cwnds are skipped.
    """
    if not 0.0 < min_drop < 1.0:
        raise ValueError("min_drop must be in (0, 1)")
    events: list[float] = []
    peak: float | None = None
    falling = False
    prev = 0.0
    for t, w in zip(times, cwnds):
        if w is None or w != w:  # None or NaN
            continue
        w = float(w)
        if falling:
            if w <= prev:
                prev = w
                continue
            # the descent is over: start tracking the next peak from here
            falling = False
            peak = w
        elif peak is None or w > peak:
            peak = w
        elif w < (1.0 - min_drop) * peak:
            events.append(float(t))
            falling = True
        prev = w
    return events


def sawtooth_period_s(
    times: Sequence[float],
    cwnds: Sequence[float],
    *,
    min_drop: float = 0.2,
    skip: int = 0,
) -> float | None:
    """Mean time between congestion-window reductions (multiplicative decreases), in seconds.

    ``times``/``cwnds`` are one flow's cwnd samples (e.g. ``flow_series`` rows of one flow_id),
    from any peer. ``skip`` drops the first reductions (e.g. ``skip=1`` ignores the slow-start
    exit so only congestion-avoidance cycles count). Returns None when fewer than two reductions
    remain.
    """
    ev = cwnd_reductions(times, cwnds, min_drop=min_drop)[skip:]
    if len(ev) < 2:
        return None
    return (ev[-1] - ev[0]) / (len(ev) - 1)
