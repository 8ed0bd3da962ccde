"""The default H2 design over a grid of operating points (docs/models.md, "H2 design choices").

Grid: Reno and HSTCP (RFC 3649), N = 5, 20, 50, 200 flows, C = 10 Mb/s, 100 Mb/s, 1 Gb/s
(1500-byte packets), round-trip propagation delay T_p = 20, 50, 100, 200 ms, q0 = 0.1, 0.25 and
1 BDP (buffer max(2 q0, BDP)), sampled at 8333 Hz as a ``design`` table does by default. Left
out, and said so: points without an equilibrium (p0 >= 1), points with W0 < 4 packets (a window
of W packets gives at most W - 1 duplicate ACKs, so below 4 every loss ends in a timeout, which
the fluid model does not contain; the designs there are stable but nearly inert, |L(0)| < 0.1,
of either sign), and HSTCP points with W0 <= Low_Window, where HSTCP is Reno and the design is
Reno's. That leaves 175 points (of 288; p0 up to 0.115).

At every point:

1. the discrete controller with its zero-order hold stabilises the loop with the *exact* delay
   e^{-sR0} (Nyquist, ``loop_margins``), with phase margin >= 60 degrees and gain margin >= 3
   (measured minima 98 degrees and 5.8), and the reduced controller keeps the full-order loop's
   H2 norm within 0.5 % (measured 0.2 %);
2. the controller has positive DC gain (more queue, more dropping) and the structure of the
   paper's: a, b, c > 0; two real poles, a slow one in (0.99, 1) and a fast one at least 100
   times faster in continuous time; a zero at z = -1 (Tustin's) and a slow real zero inside
   the unit circle near the slow pole: within a factor 4 of it (measured 0.30 to 1.41) for
   W0 >= 6, within a factor 12 (measured 0.098 to 0.54) for 4 <= W0 < 6, where the controller
   becomes a lag.

The last two tests show the cause of the previous version's negative DC gains. The queue
equation R0 δq' = N δW − δq gives, along the model's trajectories,
∫ (δq² + τ_z² δq'²) dt = ∫ ((τ_z/R0)² (N δW)² + (1 − τ_z²/R0²) δq²) dt + const: with the
printed C_z read in seconds (τ_z = 1 s > R0) the cost *rewards* queue deviations, the LQR's
gain on δq is negative, and where that dominates (large a0/(W0 R0²)) the DC gain flips; with
τ_z = R0 (the default) the queue term vanishes, the LQR's gain on δq is zero and the controller
acts on the estimated windows.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import scipy.linalg as sla

from fatpipe.models import (
    DesignError,
    H2Weights,
    Network,
    capacity_pkts,
    design_h2,
    discrete_tf,
    equilibrium,
    linearize,
    loop_margins,
)
from fatpipe.models.design import generalized_plant

FS = 8333.0
LAWS = ("reno", "hstcp")
FLOWS = (5, 20, 50, 200)
RATES = (10e6, 100e6, 1e9)
DELAYS = (0.02, 0.05, 0.1, 0.2)
Q0_BDP = (0.1, 0.25, 1.0)
MIN_W0 = 4.0


def grid():
    for law in LAWS:
        for n in FLOWS:
            for bps in RATES:
                for tp in DELAYS:
                    for frac in Q0_BDP:
                        c = capacity_pkts(bps, 1500.0)
                        q0 = max(frac * c * tp, 5.0)
                        net = Network(n_flows=n, capacity=c, prop_delay=tp, buffer=max(2 * q0, c * tp), response=law)
                        try:
                            op = equilibrium(net, q0)
                        except DesignError:
                            continue  # no equilibrium: p0 >= 1
                        if op.W0 < MIN_W0 or (law == "hstcp" and op.W0 <= 38.0):
                            continue
                        yield op


OPS = list(grid())


def label(op):
    net = op.network
    return f"{net.law.name} N={net.n_flows:g} C={net.capacity * 12e3 / 1e6:g}Mb/s Tp={net.prop_delay * 1e3:g}ms q0={op.q0:g}"


@pytest.fixture(scope="module")
def designs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ill-conditioned Riccati or Lyapunov solves
        return [design_h2(op, sample_hz=FS) for op in OPS]


def test_the_grid_is_what_the_docstring_says():
    assert len(OPS) == 175
    assert min(op.W0 for op in OPS) >= MIN_W0 and max(op.p0 for op in OPS) < 0.12


def test_every_design_stabilises_the_exact_delay_loop(designs):
    bad = []
    for d in designs:
        m = loop_margins(d.plant, discrete_tf(d.controller), w_max=0.99 * math.pi * FS, points=4000)
        ok = m.stable and m.winding == 0 and m.phase_margin >= 60.0 and m.gain_margin >= 3.0 and m.dc_loop_gain > 0
        ok = ok and d.h2_norm_reduced == pytest.approx(d.h2_norm_full, rel=5e-3)
        if not ok:
            bad.append((label(d.op), m, d.h2_norm_reduced / d.h2_norm_full))
    assert not bad, bad


def test_every_design_has_positive_dc_gain_and_the_papers_structure(designs):
    bad = []
    for d in designs:
        c = d.controller
        why = []
        if not (c.dc_gain() > 0 and c.a > 0 and c.b > 0 and c.c > 0):
            why.append("signs")
        s_poles = d.continuous_poles()
        s_zeros = d.continuous_zeros()
        if np.any(s_poles.imag != 0) or np.any(s_poles.real >= 0) or len(s_zeros) != 1 or s_zeros[0].imag != 0:
            why.append("real stable poles, one real zero")
        else:
            s_fast, s_slow = sorted(s_poles.real)
            if not s_fast < 100 * s_slow:
                why.append("fast pole")
            ratio = s_zeros[0].real / s_slow
            k = 4.0 if d.op.W0 >= 6 else 12.0
            if not 1 / k < ratio < k:
                why.append(f"zero/pole {ratio:.3g}")
        z_poles = sorted(c.poles().real, reverse=True)
        z_zeros = sorted(c.zeros().real, reverse=True)
        if not (0.99 < z_poles[0] < 1.0 and abs(z_zeros[1] + 1.0) < 1e-6 and 0.0 < z_zeros[0] < 1.0):
            why.append("z-plane")
        if why:
            bad.append((label(d.op), why))
    assert not bad, bad


@pytest.mark.parametrize(
    ("n", "bps", "tp", "q0"),
    [
        (8, 10e6, 0.044, 25.0),  # docs/aqm.md's examples of the previous version's L(0) < 0
        (20, 100e6, 0.054, 100.0),
        (20, 100e6, 0.02, 100.0),
        (20, 1e9, 0.02, 200.0),
    ],
)
def test_the_printed_cz_in_seconds_flips_the_sign(n, bps, tp, q0):
    c = capacity_pkts(bps, 1500.0)
    op = equilibrium(Network(n_flows=n, capacity=c, prop_delay=tp, buffer=1000.0, response="reno"), q0)
    assert op.a0 / (op.W0 * op.R0**2) > 8.0  # beyond the sign change at ~0.5 to 8 s^-2
    seconds = design_h2(op, weights=H2Weights(jitter_time=1.0))
    assert seconds.continuous_dc_gain("full") < 0  # the full-order optimum itself, not the reduction
    default = design_h2(op)
    assert default.continuous_dc_gain("full") > 0 and default.controller.dc_gain() > 0


def lqr_gain(op, weights):
    """F of the state-feedback half of the H2 problem, u = F x (scaled units; x[:2] = δW, δq)."""
    g = generalized_plant(linearize(op), weights, FS)
    R = g.D12.T @ g.D12
    X = sla.solve_continuous_are(g.A, g.B2, g.C1.T @ g.C1, R)
    return (-np.linalg.solve(R, g.B2.T @ X))[0]


@pytest.mark.parametrize("i", range(0, 175, 25))
def test_with_jitter_time_r0_the_lqr_ignores_the_queue(i):
    op = OPS[i]
    f = lqr_gain(op, H2Weights())
    assert f[0] > 0 and abs(f[1]) < 1e-9 * f[0]  # acts on δW only (p up with the windows)
    f_seconds = lqr_gain(op, H2Weights(jitter_time=1.0))
    assert op.R0 < 1.0 and f_seconds[1] < 0  # rewards queue excess: p down with the queue
