"""Unit tests for the peer-independent cwnd analysis helpers."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

try:
    from fatpipe.peers import analysis
except Exception:  # the compiled core may be missing: load the module file on its own
    _path = Path(__file__).resolve().parents[2] / "python" / "fatpipe" / "peers" / "analysis.py"
    _spec = importlib.util.spec_from_file_location("fatpipe_peers_analysis", _path)
    assert _spec is not None and _spec.loader is not None
    analysis = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(analysis)


def reno_sawtooth(period_s: float, w_max: float, duration_s: float, dt: float, *, halving_dip: bool = False):
    """Synthetic Reno cwnd samples: linear growth from w_max/2 to w_max over period_s, then halve.

    With ``halving_dip`` each cut first dips to w_max/4 for one sample before settling at w_max/2
    (as TCP-Linux's rate halving looks in ns-2 traces).
    """
    times, cwnds = [], []
    n = int(round(duration_s / dt))
    dipped = set()
    for k in range(1, n + 1):
        t = k * dt
        phase = math.fmod(t, period_s) / period_s
        cycle = int(t // period_s)
        w = w_max / 2 + phase * (w_max / 2)
        if halving_dip and cycle > 0 and cycle not in dipped and phase < 0.999:
            dipped.add(cycle)
            w = w_max / 4
        times.append(t)
        cwnds.append(math.floor(w))
    return times, cwnds


def test_period_of_clean_sawtooth():
    t, w = reno_sawtooth(5.0, 100, 60.0, 0.1)
    ev = analysis.cwnd_reductions(t, w)
    assert len(ev) == 12  # cuts at 5, 10, ..., 60 s
    assert ev[0] == pytest.approx(5.0, abs=0.11)
    assert analysis.sawtooth_period_s(t, w) == pytest.approx(5.0, abs=0.02)


def test_rate_halving_dip_counts_once():
    t, w = reno_sawtooth(4.0, 200, 40.0, 0.1, halving_dip=True)
    assert len(analysis.cwnd_reductions(t, w)) == 10  # 4, 8, ..., 40 s
    assert analysis.sawtooth_period_s(t, w) == pytest.approx(4.0, abs=0.02)


def test_cubic_like_cut_detected_and_jitter_ignored():
    # 30 % cuts every 3 s; +-5 % jitter on every sample must not add reductions
    times, cwnds = [], []
    for k in range(1, 301):
        t = k * 0.1
        phase = math.fmod(t, 3.0) / 3.0
        w = 70 + 30 * phase
        w *= 1.05 if k % 2 else 0.95
        times.append(t)
        cwnds.append(w)
    assert analysis.sawtooth_period_s(times, cwnds) == pytest.approx(3.0, abs=0.05)


def test_skip_and_too_few_reductions():
    t, w = reno_sawtooth(5.0, 100, 12.0, 0.1)  # two cuts: 5 s and 10 s
    assert analysis.sawtooth_period_s(t, w) == pytest.approx(5.0, abs=0.02)
    assert analysis.sawtooth_period_s(t, w, skip=1) is None
    assert analysis.sawtooth_period_s([0.0, 1.0, 2.0], [1.0, 2.0, 3.0]) is None
    assert analysis.sawtooth_period_s([], []) is None


def test_slow_start_exit_then_avoidance_cycles():
    # slow start to 160, cut to 80 at t=1, then cycles of 50 s... shortened: AI 1 pkt/0.1 s to 120
    times, cwnds = [], []
    t, w = 0.0, 2.0
    while w < 160:
        t += 0.1
        w *= 2
        times.append(t)
        cwnds.append(w)
    w = 80.0
    first_cut = t + 0.1
    for _ in range(3):
        while w <= 120:
            t += 0.1
            times.append(t)
            cwnds.append(w)
            w += 1
        w = 60.0
    ev = analysis.cwnd_reductions(times, cwnds)
    assert len(ev) == 3
    assert ev[0] == pytest.approx(first_cut)
    p = analysis.sawtooth_period_s(times, cwnds, skip=1)
    assert p == pytest.approx(6.1, abs=0.15)  # 61 samples from 60 to 120


def test_nan_and_none_are_skipped_and_bad_min_drop_rejected():
    t, w = reno_sawtooth(5.0, 100, 30.0, 0.1)
    w2: list = list(w)
    w2[10] = None
    w2[20] = float("nan")
    assert analysis.sawtooth_period_s(t, w2) == pytest.approx(5.0, abs=0.02)
    with pytest.raises(ValueError):
        analysis.cwnd_reductions(t, w, min_drop=0.0)
