"""Shapes of a cwnd trace (Figs 2.2-2.6): congestion episodes, epochs, backoff and growth.

A trace is the single flow's ``flow_series`` sampled at the monitor interval (cwnd and ssthresh in
packets, smoothed RTT). In congestion avoidance cwnd never falls except in a congestion response,
so:

- a **congestion episode** is a run of samples over which cwnd falls by at least ``MIN_DROP`` of
  its value (rate halving spreads a cut over an RTT, several samples); falls closer than
  ``merge_rtts`` smoothed RTTs belong to one episode (a fast recovery followed by a timeout is one
  response). Repeated cuts to the same ssthresh (a regular sawtooth) are each an episode;
- its **peak** is cwnd just before the fall, its **backoff** the ssthresh it leaves over that peak
  (Reno 0.5, Scalable 0.875, BIC 0.8, H-TCP RTT_min/RTT_max in [0.5, 0.8], HighSpeed
  1 - b(w) in [0.5, 0.9]);
- an **epoch** runs from an episode to the next: the time to climb back to the point where the
  link overflows (the first epoch, after slow start's overshoot, is Fig 2.2's "≈ 50 minutes to
  regain the link limit" for Reno);
- the **growth shape** of an epoch (from cwnd back at the cut's ssthresh to the next cut: slow
  start after a recovery is left out) compares the cwnd gained in its first and second halves
  (time): about equal for a linear (AIMD) climb, more in the second half for an accelerating one
  (H-TCP's α(Δ), Scalable's MIMD); over the **approach** to the previous peak alone, more in the
  first half for a climb that slows down near its target (BIC's binary search, before it probes
  beyond).

Times are in the trace's own seconds; quick mode runs the traces at a tenth of the rate, and the
analysis scales the times back (Reno's epoch in RTTs is proportional to the window, hence to the
capacity at a fixed RTT and buffer in BDPs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Episode", "TraceShape", "shape", "MERGE_RTTS", "INFINITE_SSTHRESH"]

#: Falls of cwnd closer than this many smoothed RTTs are one congestion response.
MERGE_RTTS = 3.0
#: A fall of cwnd by less than this fraction is not counted (sampling noise of an integer cwnd).
MIN_DROP = 0.03
#: The approach to the previous peak ends when cwnd first reaches this fraction of it.
APPROACH = 0.98
#: ssthresh at or above this is the "infinite" initial value (Linux 0x7fffffff, fatpipe the same).
INFINITE_SSTHRESH = 2**30


@dataclass
class Episode:
    t_s: float
    peak: float
    ssthresh: float

    @property
    def backoff(self) -> float:
        return self.ssthresh / self.peak if self.peak > 0 else math.nan


@dataclass
class TraceShape:
    episodes: list[Episode]
    end_s: float
    #: cwnd after the first episode: mean over max (how close to the top it stays).
    mean_over_max_after_first: float
    #: Per epoch after the first: cwnd gained in the first half over that in the second half.
    growth_ratios: list[float] = field(default_factory=list)
    #: Per epoch after the first: the same ratio over the approach to the previous peak only
    #: (until cwnd first reaches APPROACH of it): > 1 for a climb that slows near its target.
    approach_ratios: list[float] = field(default_factory=list)
    #: Per epoch after the first: packets gained per smoothed RTT.
    growth_per_rtt: list[float] = field(default_factory=list)
    #: Per epoch after the first: cwnd growth factor per smoothed RTT (for MIMD).
    growth_factor_per_rtt: list[float] = field(default_factory=list)

    @property
    def first_epoch_s(self) -> float:
        """Time from the first congestion response to the second; NaN if there is no second."""
        return self.episodes[1].t_s - self.episodes[0].t_s if len(self.episodes) > 1 else math.nan

    @property
    def first_epoch_lower_bound_s(self) -> float:
        """With no second episode: the run's end minus the first (the epoch is at least that)."""
        return self.end_s - self.episodes[0].t_s if self.episodes else math.nan

    @property
    def epochs_s(self) -> list[float]:
        t = [e.t_s for e in self.episodes]
        return [b - a for a, b in zip(t[1:], t[2:])]

    @property
    def backoffs(self) -> list[float]:
        """Backoff factors after the first episode (slow start's overshoot is not a steady cut)."""
        return [e.backoff for e in self.episodes[1:]]


def shape(t: np.ndarray, cwnd: np.ndarray, ssthresh: np.ndarray, srtt: np.ndarray,
          merge_rtts: float = MERGE_RTTS) -> TraceShape:
    """The episodes and epochs of one trace (module docstring)."""
    t, cwnd, ssthresh, srtt = (np.asarray(x, dtype=float) for x in (t, cwnd, ssthresh, srtt))
    rtt = float(np.nanmedian(srtt[srtt > 0])) if np.any(srtt > 0) else 0.1
    episodes: list[Episode] = []
    ends: list[int] = []  # index of each episode's last falling sample
    last_fall = -math.inf
    i, n = 0, len(t)
    while i < n - 1:
        if cwnd[i + 1] >= cwnd[i]:
            i += 1
            continue
        # The fall: through flat samples (a recovery may hold cwnd), ending at its last decrease;
        # a decrease after a flat stretch longer than the merge window starts a fall of its own.
        j = last = i + 1
        while j + 1 < n and cwnd[j + 1] <= cwnd[j]:
            if cwnd[j + 1] < cwnd[j]:
                if t[j + 1] - t[last] > merge_rtts * rtt:
                    break
                last = j + 1
            j += 1
        j = last
        peak, trough = float(cwnd[i]), float(cwnd[j])
        if peak > 0 and (peak - trough) / peak >= MIN_DROP:
            ss = float(ssthresh[j]) if ssthresh[j] < INFINITE_SSTHRESH else trough
            if episodes and t[i + 1] - last_fall <= merge_rtts * rtt:
                episodes[-1].ssthresh = ss  # the same response: its final ssthresh
                ends[-1] = j
            else:
                episodes.append(Episode(float(t[i + 1]), peak, ss))
                ends.append(j)
            last_fall = t[j]
        i = j
    after = cwnd[ends[0] + 1:] if episodes else np.array([])
    mom = float(after.mean() / after.max()) if after.size and after.max() > 0 else math.nan
    out = TraceShape(episodes, float(t[-1]) if len(t) else 0.0, mom)
    for k in range(1, len(episodes) - 1):
        # Congestion avoidance proper: from the first sample at or above the cut's ssthresh (a
        # recovery may leave cwnd below it, to slow-start back up) to the next cut.
        ss = episodes[k].ssthresh
        sel = (np.arange(n) > ends[k]) & (t < episodes[k + 1].t_s) & (cwnd >= ss)
        if sel.any():
            sel &= np.arange(n) >= int(np.argmax(sel))
        if np.count_nonzero(sel) < 4:
            continue
        tt, cw, rt = t[sel], cwnd[sel], srtt[sel]
        ratio = _halves(tt, cw)
        if math.isfinite(ratio):
            out.growth_ratios.append(ratio)
        reach = np.nonzero(cw >= APPROACH * episodes[k].peak)[0]
        if reach.size and reach[0] >= 3:
            ratio = _halves(tt[:reach[0] + 1], cw[:reach[0] + 1])
            if math.isfinite(ratio):
                out.approach_ratios.append(ratio)
        rtts = float(np.sum(np.diff(tt) / np.maximum(rt[1:], 1e-9)))
        if rtts > 0:
            out.growth_per_rtt.append(float(cw[-1] - cw[0]) / rtts)
            if cw[0] > 0 and cw[-1] > cw[0]:
                out.growth_factor_per_rtt.append(float((cw[-1] / cw[0]) ** (1.0 / rtts)))
    return out


def _halves(tt: np.ndarray, cw: np.ndarray) -> float:
    """cwnd gained in the first half of the time span over that gained in the second half."""
    mid = 0.5 * (tt[0] + tt[-1])
    w_mid = float(np.interp(mid, tt, cw))
    first, second = w_mid - cw[0], cw[-1] - w_mid
    return first / second if second > 0 else math.nan
