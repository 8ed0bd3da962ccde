"""Discrete AQM controllers as a queue discipline runs them: the HSTCP-H2 difference equation
(the seed's Algorithm 1, corrected) and the ns-2 PI controller. numpy only.

HSTCP-H2 — de Santi, Fonseca, Lima (seed 003) Algorithm 1, sampled every 1/sample_hz s::

    p1 = q0 (c - a - b) + a q + b q_old - c q_old1 + p0 (1 - d - e) + d p_old + e p_old1
    p_old1 <- p_old;  q_old1 <- q_old;  p_old <- p1;  q_old <- q

i.e. Δp[k] = a Δq[k] + b Δq[k-1] - c Δq[k-2] + d Δp[k-1] + e Δp[k-2] with Δq = q - q0,
Δp = p - p0, the transfer function C(z) = (a + b z⁻¹ - c z⁻²) / (1 - d z⁻¹ - e z⁻²).
Corrections to the printed algorithm (seed note §4.5): ``+ e p_old1`` (printed ``- e``; the
constant p0(1 - d - e) and the pole analysis both require +e), and lines 5–6 update with the new
sample (``p_old <- p1``, ``q_old <- q``; printed ``p0`` and ``q0``, which would freeze the
recursion), as in the ns-2 PI code the algorithm is patterned on. Line 1's p0 is
a0 N0² / (b0 (C0 R0)²). The paper's coefficients (seed §4.5): a = 7.361e-10, b = 3.06e-13,
c = 7.358e-10, d = 0.08609, e = 0.9131 at 8333 Hz (:data:`PAPER_H2`).

PI — Hollot, Misra, Towsley, Gong, "On designing improved controllers for AQM routers
supporting TCP flows", INFOCOM 2001, as ns-2.35 ``queue/pi.cc`` runs it every 1/w_ s::

    p = a (q - q_ref) - b (q_old - q_ref) + p_old;   p_old <- p;  q_old <- q

ns-2 defaults (``tcl/lib/ns-default.tcl``): a_ = 1.822e-5, b_ = 1.816e-5, w_ = 170 Hz,
qref_ = 50 packets.

Choices (not in the sources, stated): the output is clipped to [0, 1] and the *clipped* value is
what the state remembers (ns-2's PI does the same: ``v_prob`` holds the clipped p); both
controllers start from q_old = q_old1 = q0 (q_ref) and p_old = p_old1 = p0, i.e. at the design
equilibrium, unless :meth:`reset` says otherwise (ns-2's PI starts from q_old = 0, p = 0).

The dict a queue discipline takes (:meth:`H2Controller.to_dict`, :meth:`PIController.to_dict`)::

    {"kind": "h2", "sample_hz": 8333.0, "q0": ..., "p0": ..., "a": ..., "b": ..., "c": ...,
     "d": ..., "e": ...}
    {"kind": "pi", "sample_hz": 160.0, "q_ref": ..., "p0": ..., "a": ..., "b": ...}

All values are floats; queue lengths in packets, probabilities in [0, 1], ``sample_hz`` > 0;
``p0`` of the PI dict is only its starting probability.

>>> c = PAPER_H2
>>> [round(float(z), 5) for z in sorted(c.poles().real)]
[-0.91349, 0.99958]
>>> f"{c.dc_gain():.2e}"
'7.48e-10'
>>> run = c.runtime()
>>> run.update(c.q0) == c.p0          # at q = q0 the recursion stays at p0
True
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np
from numpy.typing import NDArray

from fatpipe.models.errors import DesignError

__all__ = [
    "H2Controller",
    "PAPER_H2",
    "PIController",
    "controller_from_dict",
]


def _check_rate(sample_hz: float) -> None:
    if not isinstance(sample_hz, (int, float)) or not sample_hz > 0 or math.isinf(sample_hz):
        raise DesignError("sample_hz", f"must be a finite number > 0 (got {sample_hz!r})")


def _roots(poly: list[float]) -> NDArray[Any]:
    """Roots in z of a polynomial given in powers of z⁻¹ (leading coefficient first)."""
    return np.roots(np.asarray(poly, dtype=float)).astype(complex)


@dataclass(frozen=True)
class H2Controller:
    """Coefficients of the HSTCP-H2 difference equation (module docstring)."""

    sample_hz: float
    q0: float
    p0: float
    a: float
    b: float
    c: float
    d: float
    e: float
    kind: str = "h2"

    def __post_init__(self) -> None:
        _check_rate(self.sample_hz)
        for name in ("q0", "p0", "a", "b", "c", "d", "e"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise DesignError(name, f"must be a finite number (got {v!r})")
        if not 0.0 <= self.p0 <= 1.0:
            raise DesignError("p0", f"must lie in [0, 1] (got {self.p0})")

    def num(self) -> list[float]:
        """Numerator in powers of z⁻¹: a + b z⁻¹ - c z⁻²."""
        return [self.a, self.b, -self.c]

    def den(self) -> list[float]:
        """Denominator in powers of z⁻¹: 1 - d z⁻¹ - e z⁻²."""
        return [1.0, -self.d, -self.e]

    def poles(self) -> NDArray[Any]:
        return _roots(self.den())

    def zeros(self) -> NDArray[Any]:
        return _roots(self.num())

    def dc_gain(self) -> float:
        """C(1) = (a + b - c)/(1 - d - e), probability per packet."""
        return (self.a + self.b - self.c) / (1.0 - self.d - self.e)

    def freq_response(self, omega: NDArray[Any]) -> NDArray[Any]:
        """C(e^{jωT}) at angular frequencies ``omega`` (rad/s)."""
        zi = np.exp(-1j * np.asarray(omega) / self.sample_hz)
        return np.polyval(self.num()[::-1], zi) / np.polyval(self.den()[::-1], zi)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        kind = d.pop("kind")
        return {"kind": kind, **{k: float(v) for k, v in d.items()}}

    def runtime(self) -> "H2Runtime":
        return H2Runtime(self)


class H2Runtime:
    """Algorithm 1's state, stepped once per sample: ``update(q) -> p``."""

    def __init__(self, ctl: H2Controller) -> None:
        self.ctl = ctl
        self.reset()

    def reset(self, q: float | None = None, p: float | None = None) -> None:
        """Start from q_old = q_old1 = ``q`` (default q0) and p_old = p_old1 = ``p`` (default p0)."""
        q = self.ctl.q0 if q is None else q
        p = self.ctl.p0 if p is None else p
        self.q_old = self.q_old1 = float(q)
        self.p_old = self.p_old1 = float(p)
        self.p = float(p)

    def update(self, q: float) -> float:
        c = self.ctl
        p1 = (
            c.q0 * (c.c - c.a - c.b)
            + c.a * q
            + c.b * self.q_old
            - c.c * self.q_old1
            + c.p0 * (1.0 - c.d - c.e)
            + c.d * self.p_old
            + c.e * self.p_old1
        )
        p1 = min(1.0, max(0.0, p1))
        self.p_old1, self.q_old1 = self.p_old, self.q_old
        self.p_old, self.q_old = p1, float(q)
        self.p = p1
        return p1


@dataclass(frozen=True)
class PIController:
    """ns-2 PI: p = a (q - q_ref) - b (q_old - q_ref) + p_old, every 1/sample_hz s."""

    sample_hz: float
    q_ref: float
    a: float
    b: float
    p0: float = 0.0
    kind: str = "pi"

    def __post_init__(self) -> None:
        _check_rate(self.sample_hz)
        for name in ("q_ref", "a", "b", "p0"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v):
                raise DesignError(name, f"must be a finite number (got {v!r})")

    @property
    def q0(self) -> float:
        return self.q_ref

    def num(self) -> list[float]:
        return [self.a, -self.b]

    def den(self) -> list[float]:
        return [1.0, -1.0]

    def poles(self) -> NDArray[Any]:
        return _roots(self.den())

    def zeros(self) -> NDArray[Any]:
        return _roots(self.num())

    def dc_gain(self) -> float:
        return math.inf

    def freq_response(self, omega: NDArray[Any]) -> NDArray[Any]:
        zi = np.exp(-1j * np.asarray(omega) / self.sample_hz)
        return (self.a - self.b * zi) / (1.0 - zi)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        kind = d.pop("kind")
        return {"kind": kind, **{k: float(v) for k, v in d.items()}}

    def runtime(self) -> "PIRuntime":
        return PIRuntime(self)


class PIRuntime:
    """The ns-2 PI state: ``update(q) -> p``."""

    def __init__(self, ctl: PIController) -> None:
        self.ctl = ctl
        self.reset()

    def reset(self, q: float | None = None, p: float | None = None) -> None:
        self.q_old = float(self.ctl.q_ref if q is None else q)
        self.p = float(self.ctl.p0 if p is None else p)

    def update(self, q: float) -> float:
        c = self.ctl
        p = c.a * (q - c.q_ref) - c.b * (self.q_old - c.q_ref) + self.p
        p = min(1.0, max(0.0, p))
        self.p, self.q_old = p, float(q)
        return p


def controller_from_dict(d: Mapping[str, Any]) -> H2Controller | PIController:
    """The controller a queue-discipline dict describes (module docstring)."""
    kind = d.get("kind")
    fields = {k: v for k, v in d.items() if k != "kind"}
    try:
        if kind == "h2":
            return H2Controller(**fields)
        if kind == "pi":
            return PIController(**fields)
    except TypeError as err:
        raise DesignError("kind", f"bad fields for {kind!r}: {err}") from None
    raise DesignError("kind", f"must be 'h2' or 'pi' (got {kind!r})")


#: The paper's printed coefficients (seed §4.5), with the +e reading. q0 and p0 are not printed:
#: the values here are placeholders (the inferred operating point's, see docs/models.md), only
#: the dynamics (poles, zeros, gains) are the paper's.
PAPER_H2 = H2Controller(
    sample_hz=8333.0, q0=1666.0, p0=1e-5, a=7.361e-10, b=3.06e-13, c=7.358e-10, d=0.08609,
    e=0.9131,
)
