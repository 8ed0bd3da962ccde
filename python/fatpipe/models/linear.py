"""Equilibrium and linearisation of the HSTCP/AQM fluid model (seed §3.2–§3.3, §4.1).

Fluid model (seed Eqs. 3–5; Sonkoly, Trinh, Molnár, CCN 2005, after Misra, Gong, Towsley,
SIGCOMM 2000)::

    W'(t) = a(W)/R(t) - b(W) W(t) W(t-R) / R(t-R) p(t-R)
    q'(t) = N W(t)/R(t) - C + w_q(t)
    R(t)  = q(t)/C + T_p

Equilibrium (W' = q' = 0, w_q = 0), for a target queue q0::

    R0 = q0/C + T_p,   W0 = R0 C / N,   a0 = a(W0), b0 = b(W0)
    p0 = a0 / (b0 W0²) = a0 N² / (b0 (C R0)²)          (the seed's Algorithm 1, line 1)

There is no equilibrium when N, C or T_p is not positive, when q0 is outside (0, buffer), or when
the flows would need p0 >= 1 (too many flows for the pipe: W0 too small). Each raises
:class:`~fatpipe.models.errors.DesignError` naming the field. A W0 below HSTCP's Low_Window (38)
is *not* an error: there HSTCP is Standard TCP (a0 = 1, b0 = 0.5) and the model is Reno's;
:attr:`OperatingPoint.below_low_window` says so.

Linearisation (Hollot, Misra, Towsley, Gong, INFOCOM 2001 / IEEE TAC 47(6) 2002, §III: delay
arguments evaluated at R0, deviations δ from the equilibrium, x = [δW, δq])::

    x'(t) = A0 x(t) + A1 x(t - R0) + B_u δp(t - R0)
    y(t)  = C_y x(t) = δq(t)
    z(t)  = C_z x(t)                 C_z = [[0, 1], [N/R0, -1/R0]]  (seed §4.3: δq and δq')

``form="frozen"`` (Hollot's form; a, b frozen at a0, b0)::

    A0 = [[-a0 N/(R0² C), 0], [N/R0, -1/R0]]    A1 = [[-a0 N/(R0² C), 0], [0, 0]]
    B_u = [-b0 R0 C²/N², 0]

For Reno (a0 = 1, b0 = 1/2) this is exactly Hollot et al.'s model:
δW' = -N/(R0² C) (δW + δW(t-R0)) - R0 C²/(2N²) δp(t-R0).

``form="slopes"`` keeps a'(W), b'(W) (seed §3.3, "possibly Sonkoly's variant")::

    A0[0,0] = a'(W0)/R0 - (b'(W0) W0 + b0) W0 p0 / R0      A1[0,0] = -b0 W0 p0 / R0

``queue_terms=True`` adds the dependence of R on q in the window equation (dropped by Hollot and
by default here): A0[0,1] = -a0/(R0² C), A1[0,1] = +a0/(R0² C). With ``form="slopes"`` and
``queue_terms=True`` the matrices are the exact Jacobian of the fluid right-hand side
(:func:`fatpipe.models.fluid.rhs`); a test checks this against finite differences.

The seed's Eq. 6 writes the input undelayed and the measurement delayed, y = C_y x(t - R0): the
time shift x~(t) = x(t + R0) maps one form onto the other exactly, so the loop is the same.

Plant transfer function (δp -> δq, exact delay)::

    P(s) = C_y (sI - A0 - A1 e^{-sR0})^{-1} B_u e^{-sR0}
         = -(b0 C²/N) e^{-sR0} / ([s + (a0 N/(R0² C))(1 + e^{-sR0})] (s + 1/R0))   (frozen)

Hollot's rational approximation 1 + e^{-sR0} ≈ 2 gives the window ("TCP") pole 2 a0 N/(R0² C)
and the queue pole 1/R0 (:meth:`LinearPlant.hollot_poles`).

>>> from fatpipe.models.network import Network
>>> from fatpipe.models.linear import equilibrium, linearize
>>> op = equilibrium(Network(n_flows=60, capacity=3750, prop_delay=0.2, response="reno"), q0=172.5)
>>> round(op.R0, 3), round(op.W0, 3), round(op.p0, 5)
(0.246, 15.375, 0.00846)
>>> plant = linearize(op)
>>> [round(x, 3) for x in plant.hollot_poles()]       # Hollot 2001: 0.53 and 1/R0 = 4.07
[0.529, 4.065]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from fatpipe.models.errors import DesignError
from fatpipe.models.hstcp import LOW_WINDOW
from fatpipe.models.network import Network

__all__ = ["LinearPlant", "OperatingPoint", "equilibrium", "linearize"]

Form = Literal["frozen", "slopes"]


@dataclass(frozen=True)
class OperatingPoint:
    """An equilibrium (W0, q0, p0) of the fluid model of ``network``."""

    network: Network
    q0: float
    R0: float
    W0: float
    p0: float
    a0: float
    b0: float

    @property
    def below_low_window(self) -> bool:
        """True when W0 <= Low_Window: HSTCP runs as Standard TCP there (a0 = 1, b0 = 0.5)."""
        return self.network.law.name != "reno" and self.W0 <= LOW_WINDOW

    @property
    def n_flows(self) -> float:
        return self.network.n_flows

    @property
    def capacity(self) -> float:
        return self.network.capacity


def equilibrium(network: Network, q0: float) -> OperatingPoint:
    """The equilibrium of ``network`` with the queue held at ``q0`` packets (seed §3.2).

    Raises :class:`DesignError` when there is none (see the module docstring).
    """
    if not isinstance(network, Network):
        raise TypeError("network must be a fatpipe.models.Network")
    if not isinstance(q0, (int, float)) or isinstance(q0, bool) or math.isnan(q0):
        raise DesignError("q0", f"must be a number (got {q0!r})")
    if not 0.0 < q0 < network.buffer:
        raise DesignError("q0", f"must lie in (0, buffer) = (0, {network.buffer:g}) (got {q0:g})")
    n, c = network.n_flows, network.capacity
    r0 = network.rtt(q0)
    w0 = r0 * c / n
    a0, b0 = network.law.a0b0(w0)
    p0 = a0 * n**2 / (b0 * (c * r0) ** 2)
    if not p0 < 1.0:
        raise DesignError(
            "n_flows",
            f"no equilibrium: {n:g} flows would need p0 = {p0:.3g} >= 1 "
            f"(W0 = R0 C/N = {w0:.3g} packets per flow); use fewer flows or a larger "
            "capacity, prop_delay or q0",
        )
    return OperatingPoint(network=network, q0=float(q0), R0=r0, W0=w0, p0=p0, a0=a0, b0=b0)


@dataclass(frozen=True)
class LinearPlant:
    """The linearised delayed plant around ``op`` (see the module docstring for the equations).

    ``delay`` is R0; ``A1`` multiplies x(t - R0) and ``B_u`` multiplies δp(t - R0).
    """

    op: OperatingPoint
    form: str
    queue_terms: bool
    A0: NDArray[Any]
    A1: NDArray[Any]
    B_u: NDArray[Any]
    C_y: NDArray[Any]
    C_z: NDArray[Any]
    delay: float = field(default=0.0)

    def tf(self, s: complex | NDArray[Any]) -> NDArray[Any]:
        """P(s) = δq/δp with the exact delay, at one or many complex ``s``."""
        s_arr = np.atleast_1d(np.asarray(s, dtype=complex))
        flat = s_arr.reshape(-1)
        e = np.exp(-flat * self.delay)[:, None, None]
        m = flat[:, None, None] * np.eye(2) - self.A0 - self.A1 * e  # one 2x2 system per s
        rhs = self.B_u[None, :, :] * e
        out = (self.C_y @ np.linalg.solve(m, rhs))[:, 0, 0].reshape(s_arr.shape)
        return out if np.ndim(s) else out[0]

    def dc_gain(self) -> float:
        """P(0), packets per unit drop probability (negative: more drops, shorter queue)."""
        return float(self.tf(0.0).real)

    def hollot_poles(self) -> tuple[float, float]:
        """(window pole, queue pole), rad/s, of Hollot's rational approximation e^{-sR0} -> 1 in
        the window feedback: -(A0[0,0] + A1[0,0]) and 1/R0 (for ``frozen``: 2 a0 N/(R0² C))."""
        return (-float(self.A0[0, 0] + self.A1[0, 0]), 1.0 / self.op.R0)

    def hollot_tf(self, s: complex | NDArray[Any]) -> NDArray[Any]:
        """Hollot's approximated plant: k e^{-sR0} / ((s + p_w)(s + 1/R0)), k = B_u[0]·N/R0."""
        s_arr = np.asarray(s, dtype=complex)
        pw, pq = self.hollot_poles()
        k = self.B_u[0, 0] * self.op.n_flows / self.op.R0
        return k * np.exp(-s_arr * self.delay) / ((s_arr + pw) * (s_arr + pq))


def linearize(op: OperatingPoint, form: Form = "frozen", queue_terms: bool = False) -> LinearPlant:
    """Linearise the fluid model around ``op`` (module docstring; seed §3.3)."""
    if form not in ("frozen", "slopes"):
        raise DesignError("form", f"must be 'frozen' or 'slopes' (got {form!r})")
    net = op.network
    n, c, r0, w0, p0, a0, b0 = net.n_flows, net.capacity, op.R0, op.W0, op.p0, op.a0, op.b0
    drop = b0 * w0 * p0 / r0  # = a0 N / (R0² C)
    a_w_now = -drop
    if form == "slopes":
        da, db = float(net.law.da(w0)), float(net.law.db(w0))
        a_w_now = da / r0 - (db * w0 + b0) * w0 * p0 / r0
    A0 = np.array([[a_w_now, 0.0], [n / r0, -1.0 / r0]])
    A1 = np.array([[-drop, 0.0], [0.0, 0.0]])
    if queue_terms:
        k = a0 / (r0**2 * c)
        A0[0, 1] = -k
        A1[0, 1] = k
    B_u = np.array([[-b0 * w0**2 / r0], [0.0]])  # = -b0 R0 C²/N²
    C_y = np.array([[0.0, 1.0]])
    C_z = np.array([[0.0, 1.0], [n / r0, -1.0 / r0]])
    return LinearPlant(
        op=op, form=form, queue_terms=queue_terms, A0=A0, A1=A1, B_u=B_u, C_y=C_y, C_z=C_z,
        delay=r0,
    )
