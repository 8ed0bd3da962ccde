"""Closed-loop checks of a designed AQM controller on the fluid model (numpy + scipy).

Sign convention: the controller maps the queue deviation to the probability deviation,
δp = K(s) δq (p rises with the queue when K > 0), and the plant P(s) = δq/δp < 0. The loop
transfer function in the usual negative-feedback form is therefore L(s) = -P(s) K(s) and the
closed loop is stable iff 1 + L has no zeros in Re s >= 0.

- :func:`closed_loop_poles` — eigenvalues of the loop with the delay replaced by its Padé
  approximant (continuous controller, state space).
- :func:`loop_margins` — the Nyquist test with the *exact* delay: P and K are stable, so the loop
  is stable iff the curve 1 + L(jω), ω from -inf to inf, does not wind around 0 (Nyquist; e.g.
  K. J. Åström, R. M. Murray, "Feedback Systems", 2nd ed., 2021, §10.2); phase and gain margins
  and the crossover frequency are read off the same curve. For a discrete controller K(jω) is
  C(e^{jωT}) times the zero-order hold (1 - e^{-jωT})/(jωT), valid below the Nyquist frequency.
- :func:`run_closed_loop` — the fluid model (:func:`fatpipe.models.fluid.simulate`) with the
  discrete controller at the operating point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from fatpipe.models.discrete import H2Controller, PIController
from fatpipe.models.fluid import FluidResult, SampledAQM, simulate
from fatpipe.models.linear import LinearPlant, OperatingPoint
from fatpipe.models.lti import pade_plant

__all__ = ["Margins", "closed_loop_poles", "discrete_tf", "loop_margins", "run_closed_loop"]

Transfer = Callable[[NDArray[Any]], NDArray[Any]]


@dataclass(frozen=True)
class Margins:
    """Nyquist result: ``stable``; ``phase_margin`` (degrees) at ``crossover`` (rad/s, the
    highest |L| = 1 crossing; NaN when |L| < 1 everywhere, then the margin is infinite);
    ``gain_margin`` (factor) at the -180° crossing of largest |L| (inf if none); ``winding``
    the number of encirclements of -1; ``dc_loop_gain`` L(0) (inf with an integrator)."""

    stable: bool
    winding: int
    crossover: float
    phase_margin: float
    gain_margin: float
    dc_loop_gain: float


def discrete_tf(ctl: H2Controller | PIController) -> Transfer:
    """K(jω) of a discrete controller with its zero-order hold."""
    T = 1.0 / ctl.sample_hz

    def k(s: NDArray[Any]) -> NDArray[Any]:
        w = np.imag(np.asarray(s, dtype=complex))
        safe = np.where(w == 0, 1.0, w)
        zoh = np.where(w == 0, 1.0 + 0j, (1 - np.exp(-1j * safe * T)) / (1j * safe * T))
        with np.errstate(divide="ignore", invalid="ignore"):
            return ctl.freq_response(w) * zoh

    return k


def loop_margins(
    plant: LinearPlant,
    K: Transfer,
    w_min: float = 1e-4,
    w_max: float | None = None,
    points: int = 20000,
) -> Margins:
    """Nyquist stability and margins of L = -P K with the exact delay (module docstring).

    ``w_max`` defaults to 1e5 rad/s (beyond any crossover here); ``K`` must be stable.
    """
    if w_max is None:
        w_max = 1e5
    w = np.logspace(math.log10(w_min), math.log10(w_max), points)
    s = 1j * w
    L = -plant.tf(s) * K(s)
    # A controller with an integrator (PI): |K| ~ 1/ω at very low frequency.
    k_low = np.abs(K(np.array([1e-8j, 1e-7j])))
    integrator = bool(k_low[0] > 5.0 * k_low[1])
    if integrator:
        L0 = math.inf
        dc_ok = bool((L[0] * 1j * w[0]).real > 0)  # L ~ c/s with c > 0
    else:
        L0 = float((-plant.tf(np.array([0j])) * K(np.array([0j])))[0].real)
        dc_ok = 1.0 + L0 > 0
    # Winding of 1 + L around 0 over the Nyquist contour (indented at s = 0 when needed). By
    # conjugate symmetry it is twice the phase change over ω > 0 closed through the positive
    # real axis at ω -> 0 and ω -> inf, i.e. 2 × (whole turns of the unwrapped phase). With
    # 1 + L(0) < 0 an odd number of closed-loop poles is real and unstable.
    ph = np.unwrap(np.angle(1.0 + L))
    wrapped_end = math.atan2((1.0 + L[-1]).imag, (1.0 + L[-1]).real)
    winding = int(round(2 * (ph[-1] - wrapped_end) / (2 * math.pi)))
    mag = np.abs(L)
    cross = np.nonzero((mag[:-1] >= 1.0) & (mag[1:] < 1.0))[0]
    if len(cross):
        i = cross[-1]
        f = (math.log(mag[i])) / (math.log(mag[i]) - math.log(mag[i + 1]))
        wc = math.exp(math.log(w[i]) + f * (math.log(w[i + 1]) - math.log(w[i])))
        Lc = (-plant.tf(np.array([1j * wc])) * K(np.array([1j * wc])))[0]
        pm = math.degrees(math.pi + math.atan2(Lc.imag, Lc.real))
        pm = (pm + 180.0) % 360.0 - 180.0
    else:
        wc, pm = math.nan, math.inf
    # gain margin: where the phase of L crosses -180° (L real negative)
    gm = math.inf
    neg = np.nonzero((np.sign(L.imag[:-1]) != np.sign(L.imag[1:])) & (L.real[:-1] < 0))[0]
    if len(neg):
        gm = float(1.0 / np.max(mag[neg]))
    return Margins(
        stable=(winding == 0 and dc_ok),
        winding=winding,
        crossover=wc,
        phase_margin=pm,
        gain_margin=gm,
        dc_loop_gain=L0,
    )


def closed_loop_poles(
    plant: LinearPlant,
    controller: tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]],
    pade_order: int = 6,
) -> NDArray[Any]:
    """Eigenvalues of the loop of ``plant`` (delay -> Padé of ``pade_order``) and the continuous
    controller ``(A, B, C, D)`` (δq -> δp, physical units)."""
    A, B = pade_plant(plant.A0, plant.A1, plant.B_u, plant.delay, pade_order)
    n = A.shape[0]
    C = np.zeros((1, n))
    C[0, :2] = plant.C_y[0]
    Ak, Bk, Ck, Dk = (np.asarray(m, dtype=float) for m in controller)
    Dk = Dk.reshape(1, 1)
    Acl = np.block([[A + B @ Dk @ C, B @ Ck], [Bk @ C, Ak]])
    return np.linalg.eigvals(Acl)


def run_closed_loop(
    op: OperatingPoint,
    controller: H2Controller | PIController,
    duration: float,
    *,
    q_init: float | None = None,
    w_init: float | None = None,
    p_init: float | None = None,
    udp: Callable[[float], float] | None = None,
    dt: float | None = None,
    record_every: int = 1,
) -> FluidResult:
    """The fluid model of ``op.network`` with the discrete ``controller``, started from
    (``w_init``, ``q_init``) (default: the equilibrium W0, q0) and the controller's p0."""
    return simulate(
        op.network,
        SampledAQM(controller, p_init=p_init),
        duration,
        w0=op.W0 if w_init is None else w_init,
        q0=op.q0 if q_init is None else q_init,
        dt=dt,
        udp=udp,
        record_every=record_every,
    )
