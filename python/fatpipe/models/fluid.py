"""Fluid model of N AIMD (HSTCP or Reno) flows through one AQM queue, integrated numerically.

Equations (the seed's Eqs. 3–5; Sonkoly, Trinh, Molnár, "Understanding HighSpeed TCP: a
control-theoretic perspective", CCN 2005, for HSTCP; the form is Misra, Gong, Towsley, "Fluid-based
analysis of a network of AQM routers supporting TCP flows", SIGCOMM 2000)::

    W'(t) = a(W(t))/R(t) - b(W(t)) W(t) W(t-R(t)) / R(t-R(t)) p(t-R(t))
    q'(t) = N W(t)/R(t) - C + w_q(t)          (held at 0 when the queue is empty or full)
    R(t)  = q(t)/C + T_p

``w_q(t)`` is the UDP noise (packets/s, a callable of t; the seed's ω_q). a(W), b(W) are evaluated
at the current window (one loss event cuts b(W(t))·W(t)); the loss events arrive at the rate the
flows sent one RTT ago, W(t-R)/R(t-R) p(t-R).

AQM: a static law p = f(q) of the instantaneous queue (:class:`StaticAQM`, e.g. a RED-like ramp
for tests) or a discrete controller (:mod:`fatpipe.models.discrete`) sampled every
1/sample_hz s and held in between (:class:`SampledAQM`).

Choices (not in the seed; stated)
---------------------------------
- Integration: Heun's method (explicit trapezoid) with a fixed step ``dt`` and a history buffer
  of W, q and the loss probability on the same grid; delayed values are linearly interpolated at
  t - R(t). Default ``dt = T_p/200`` (1 ms at T_p = 0.2 s): the fastest linear mode is the queue
  pole 1/R <= 1/T_p, so there are >= 200 steps per time constant and per delay; halving dt
  changes the H2 closed-loop trajectory by < 0.1 % (test). Because R >= T_p >> dt, a step only
  reads the past, so the scheme stays explicit.
- A sampled controller runs at its own instants inside each step, on the queue interpolated
  linearly across the step (the step's delayed terms never need the current p, since R >= T_p).
- The window is kept in [1, +inf) (one packet in flight at least), p in [0, 1].
- Buffer overflow: while q = B and the arrival rate λ = N W/R exceeds C - w_q, the excess is lost;
  the flows see the loss probability p + (1 - p)·(1 - (C - w_q)/λ) (tail drop as a loss
  fraction, a fluid reading of Misra et al.'s drop-tail). ``overflow_loss=False`` drops it (the
  queue is then only clipped).
- When the queue is empty and λ < C the link idles: q' = 0, R = T_p.

>>> from fatpipe.models import Network, StaticAQM, equilibrium, simulate
>>> net = Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=800, response="reno")
>>> ramp = StaticAQM.red(min_th=0, max_th=800, max_p=0.05)     # p = 0.05 q/800
>>> res = simulate(net, ramp, duration=40.0, w0=10.0, q0=0.0)
>>> q_end = float(res.q[-1]); round(q_end, 1)
144.1
>>> op = equilibrium(net, q0=q_end)       # the law's p(q_end) is the equilibrium p0(q_end)
>>> round(op.p0 / (0.05 * q_end / 800), 3)
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Protocol

import numpy as np
from numpy.typing import NDArray

from fatpipe.models.discrete import H2Controller, PIController
from fatpipe.models.errors import DesignError
from fatpipe.models.hstcp import HIGH_WINDOW, LOW_WINDOW, Response
from fatpipe.models.network import Network

__all__ = ["AQM", "FluidResult", "SampledAQM", "StaticAQM", "rhs", "simulate"]


def rhs(
    net: Network,
    W: float,
    q: float,
    W_d: float,
    q_d: float,
    p_d: float,
    omega: float = 0.0,
    ab: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """(W', q') of the fluid model, unclipped, given the current (W, q) and the delayed
    (W(t-R), q(t-R), p(t-R)). ``ab`` freezes (a, b) instead of a(W), b(W)."""
    c = net.capacity
    r = q / c + net.prop_delay
    r_d = q_d / c + net.prop_delay
    a, b = ab if ab is not None else net.law.a0b0(W)
    dw = a / r - b * W * W_d / r_d * p_d
    dq = net.n_flows * W / r - c + omega
    return dw, dq


class AQM(Protocol):
    """What :func:`simulate` needs of an AQM: the probability at the start, and after each step
    from (t0, q0) to (t1, q1)."""

    def start(self, q: float, t0: float) -> float: ...
    def advance(self, t0: float, q0: float, t1: float, q1: float) -> float: ...


@dataclass
class StaticAQM:
    """p = ``law(q)`` of the instantaneous queue."""

    law: Callable[[float], float]

    @classmethod
    def red(cls, min_th: float, max_th: float, max_p: float) -> "StaticAQM":
        """A RED-like ramp on the instantaneous queue: 0 below min_th, max_p at max_th, then
        gentle (up to 1 at 2 max_th). No averaging: a static law, for model tests."""
        if not 0 <= min_th < max_th:
            raise DesignError("min_th", f"must satisfy 0 <= min_th < max_th (got {min_th}, {max_th})")
        if not 0 < max_p <= 1:
            raise DesignError("max_p", f"must lie in (0, 1] (got {max_p})")

        def law(q: float) -> float:
            if q <= min_th:
                return 0.0
            if q <= max_th:
                return max_p * (q - min_th) / (max_th - min_th)
            return min(1.0, max_p + (1.0 - max_p) * (q - max_th) / max_th)

        return cls(law)

    @classmethod
    def constant(cls, p: float) -> "StaticAQM":
        return cls(lambda _q: p)

    def start(self, q: float, t0: float) -> float:
        return min(1.0, max(0.0, float(self.law(q))))

    def advance(self, t0: float, q0: float, t1: float, q1: float) -> float:
        return min(1.0, max(0.0, float(self.law(q1))))


class SampledAQM:
    """A discrete controller sampled every 1/sample_hz s (at t0 + k/sample_hz, k = 1, 2, ...),
    its output held in between. ``p_init`` overrides the controller's starting probability."""

    def __init__(self, controller: H2Controller | PIController, p_init: float | None = None):
        self.controller = controller
        self.period = 1.0 / controller.sample_hz
        self.p_init = p_init
        self.run = controller.runtime()
        self.t_start = 0.0
        self.samples = 0

    def start(self, q: float, t0: float) -> float:
        self.run.reset(p=self.p_init)
        self.t_start = t0
        self.samples = 0
        return self.run.p

    def advance(self, t0: float, q0: float, t1: float, q1: float) -> float:
        span = t1 - t0
        while True:
            ts = self.t_start + (self.samples + 1) * self.period
            if ts > t1 + 1e-9 * span:
                return self.run.p
            self.run.update(q0 + (q1 - q0) * (ts - t0) / span)
            self.samples += 1


@dataclass(frozen=True)
class FluidResult:
    """Time series of a fluid run, all numpy arrays on the grid ``t`` (s).

    ``W`` window (packets), ``q`` queue (packets), ``R`` RTT (s), ``p`` the AQM's probability,
    ``loss`` the loss probability the flows see (p plus buffer overflow), ``rate`` N W/R
    (packets/s).
    """

    t: NDArray[Any]
    W: NDArray[Any]
    q: NDArray[Any]
    R: NDArray[Any]
    p: NDArray[Any]
    loss: NDArray[Any]
    rate: NDArray[Any]
    dt: float

    def tail(self, seconds: float) -> "FluidResult":
        """The last ``seconds`` of the run."""
        keep = self.t >= self.t[-1] - seconds
        return FluidResult(
            t=self.t[keep], W=self.W[keep], q=self.q[keep], R=self.R[keep], p=self.p[keep],
            loss=self.loss[keep], rate=self.rate[keep], dt=self.dt,
        )


def _ab_scalar(law: Response) -> Callable[[float], tuple[float, float]]:
    """A fast scalar (a(W), b(W)) for the integration loop (same formulas as ``law``)."""
    if law.name == "reno":
        return lambda w: (1.0, 0.5)
    # Tabulate on a fine log grid and interpolate: exact at the nodes, relative error < 1e-7.
    grid = np.exp(np.linspace(math.log(LOW_WINDOW), math.log(HIGH_WINDOW), 20001))
    la, lb = np.log(law.a(grid)), law.b(grid)
    lo, step = math.log(LOW_WINDOW), (math.log(HIGH_WINDOW) - math.log(LOW_WINDOW)) / 20000
    la_l, lb_l = la.tolist(), lb.tolist()
    last = len(la_l) - 1

    def ab(w: float) -> tuple[float, float]:
        if w <= LOW_WINDOW:
            return 1.0, 0.5
        x = (math.log(w) - lo) / step
        i = int(x)
        if i >= last:
            return math.exp(la_l[last]), lb_l[last]
        f = x - i
        return math.exp(la_l[i] + f * (la_l[i + 1] - la_l[i])), lb_l[i] + f * (lb_l[i + 1] - lb_l[i])

    return ab


def simulate(
    net: Network,
    aqm: AQM | H2Controller | PIController,
    duration: float,
    *,
    w0: float,
    q0: float,
    dt: float | None = None,
    udp: Callable[[float], float] | None = None,
    overflow_loss: bool = True,
    record_every: int = 1,
) -> FluidResult:
    """Integrate the fluid model for ``duration`` s from W = ``w0``, q = ``q0`` (constant history
    for t <= 0, with the AQM's initial probability). ``udp(t)`` is w_q in packets/s. Returns every
    ``record_every``-th step."""
    if not duration > 0:
        raise DesignError("duration", f"must be > 0 (got {duration})")
    if dt is None:
        dt = net.prop_delay / 200.0
    if not 0 < dt < net.prop_delay:
        raise DesignError("dt", f"must lie in (0, prop_delay) = (0, {net.prop_delay:g}) (got {dt})")
    if not w0 >= 1:
        raise DesignError("w0", f"must be >= 1 (got {w0})")
    if not 0 <= q0 <= net.buffer:
        raise DesignError("q0", f"must lie in [0, buffer] (got {q0})")
    if isinstance(aqm, (H2Controller, PIController)):
        aqm = SampledAQM(aqm)

    n_steps = int(round(duration / dt))
    c, tp, nf, buf = net.capacity, net.prop_delay, net.n_flows, net.buffer
    ab = _ab_scalar(net.law)
    noise = udp if udp is not None else (lambda _t: 0.0)

    W = np.empty(n_steps + 1)
    Q = np.empty(n_steps + 1)
    P = np.empty(n_steps + 1)  # the AQM's probability
    L = np.empty(n_steps + 1)  # the loss probability the flows see
    Wl, Ql, Ll = [0.0] * (n_steps + 1), [0.0] * (n_steps + 1), [0.0] * (n_steps + 1)
    p_start = aqm.start(q0, 0.0)
    Wl[0], Ql[0] = float(w0), float(q0)
    Pl = [0.0] * (n_steps + 1)
    Pl[0] = p_start

    def loss_at(w: float, q: float, p: float, om: float) -> float:
        if overflow_loss and q >= buf:
            lam = nf * w / (q / c + tp)
            spare = c - om
            if lam > spare:
                return p + (1.0 - p) * (1.0 - max(spare, 0.0) / lam)
        return p

    Ll[0] = loss_at(w0, q0, p_start, noise(0.0))

    def delayed(k: int, t: float, q: float) -> tuple[float, float, float]:
        """(W, q, loss) at t - R(t) from the history up to index k (t_k <= t)."""
        td = t - (q / c + tp)
        if td <= 0.0:
            return Wl[0], Ql[0], Ll[0]
        x = td / dt
        i = int(x)
        if i >= k:  # cannot happen while R >= T_p > dt; guard anyway
            i = k - 1
        f = x - i
        return (
            Wl[i] + f * (Wl[i + 1] - Wl[i]),
            Ql[i] + f * (Ql[i + 1] - Ql[i]),
            Ll[i] + f * (Ll[i + 1] - Ll[i]),
        )

    def deriv(k: int, t: float, w: float, q: float) -> tuple[float, float]:
        wd, qd, pd = delayed(k, t, q)
        r = q / c + tp
        a, b = ab(w)
        dw = a / r - b * w * wd / (qd / c + tp) * pd
        dq = nf * w / r - c + noise(t)
        if (q <= 0.0 and dq < 0.0) or (q >= buf and dq > 0.0):
            dq = 0.0
        return dw, dq

    for k in range(n_steps):
        t = k * dt
        w, q = Wl[k], Ql[k]
        # Heun: the predictor's delayed lookups at t + dt read history up to index k (R > dt).
        dw1, dq1 = deriv(k, t, w, q)
        wp = max(1.0, w + dt * dw1)
        qp = min(buf, max(0.0, q + dt * dq1))
        dw2, dq2 = deriv(k, t + dt, wp, qp)
        w1 = max(1.0, w + 0.5 * dt * (dw1 + dw2))
        q1 = min(buf, max(0.0, q + 0.5 * dt * (dq1 + dq2)))
        p1 = aqm.advance(t, q, t + dt, q1)
        Wl[k + 1], Ql[k + 1], Pl[k + 1] = w1, q1, p1
        Ll[k + 1] = loss_at(w1, q1, p1, noise(t + dt))

    W[:], Q[:], P[:], L[:] = Wl, Ql, Pl, Ll
    t_arr = np.arange(n_steps + 1) * dt
    sl = slice(None, None, record_every)
    R = Q / c + tp
    return FluidResult(
        t=t_arr[sl], W=W[sl], q=Q[sl], R=R[sl], p=P[sl], loss=L[sl], rate=(nf * W / R)[sl], dt=dt,
    )
