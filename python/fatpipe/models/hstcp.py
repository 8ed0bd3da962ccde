"""Window-dependent AIMD laws a(W), b(W) for the fluid models: HighSpeed TCP and Reno.

A TCP in congestion avoidance adds a(W)/W per ACK and removes b(W)·W per loss (the seed's Eq. 1).

``"hstcp"`` — RFC 3649 exactly
    S. Floyd, "HighSpeed TCP for Large Congestion Windows", RFC 3649 (Experimental), Dec. 2003,
    §5 and Appendix B. For W <= Low_Window, Standard TCP (a = 1, b = 0.5). Above it::

        f(W) = (ln W - ln Low_Window) / (ln High_Window - ln Low_Window)     (position, 0..1)
        b(W) = (High_Decrease - 0.5) f(W) + 0.5
        p(W) = exp(ln Low_P + f(W) (ln High_P - ln Low_P))
        a(W) = W² p(W) 2 b(W) / (2 - b(W))

``"hstcp-eq2"`` — the seed's Eq. 2, the rounded closed form
    de Santi, Fonseca, Lima (seed 003) Eq. 2, citing Floyd & Ratnasamy 2002 and Huang et al.
    2004: ``b = -0.12 log10(W) + 0.69``, ``a = 0.16 W^0.8 b / (2 - b)``. ``log`` is log10 (the
    seed note's check: b(38) = 0.500, b(83000) = 0.0997; the natural log would make b < 0).
    Below Low_Window it is Standard TCP as well (the seed: "below 38 MSS HSTCP uses Reno").

``"reno"`` — a = 1, b = 0.5 (RFC 5681 congestion avoidance; the fluid model of Misra, Gong,
    Towsley, SIGCOMM 2000, and Hollot et al., INFOCOM 2001).

Constants and their sources
---------------------------
- Low_Window = 38 segments: RFC 3649 §5 (ns-2 ``Agent/TCP low_window_ 38``).
- High_Window = 83000 segments: RFC 3649 §5 (ns-2 ``high_window_ 83000``).
- High_P = 1e-7: RFC 3649 §5 (ns-2 ``high_p_ 0.0000001``).
- High_Decrease = 0.1: RFC 3649 §5 (ns-2 ``high_decrease_ 0.1``).
- Low_P = 1.5 / Low_Window² = 1.0388e-3: Standard TCP's response function W = sqrt(1.5/p) at
  Low_Window, RFC 3649 §5 (ns-2 computes it the same way; so does ``crates/fatpipe-transport``
  ``cc/hstcp.rs``).
- 0.12, 0.69, 0.16, 0.8 of Eq. 2: the seed, as printed.

Choices
-------
- Above High_Window both HSTCP forms are evaluated at High_Window (a, b constant, slopes 0),
  as the simulator's ``variant = "rfc3649"`` does: the RFC designs the function up to
  High_Window, and its formulas would drive b(W) to zero near W = 5.7e5.
- The slopes a'(W), b'(W) are exact derivatives of the chosen form (0 where a, b are constant).
  At W = Low_Window they jump (Reno below, HSTCP above); the right-hand slope is returned there.

>>> from fatpipe.models.hstcp import response
>>> h = response("hstcp")
>>> round(float(h.b(1000)), 4), round(float(h.a(1000)), 2)
(0.3299, 8.03)
>>> round(float(response("hstcp-eq2").b(100)), 4)    # RFC 3649: 0.4497
0.45
>>> float(response("reno").a(5000)), float(response("reno").b(5000))
(1.0, 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "HIGH_DECREASE",
    "HIGH_P",
    "HIGH_WINDOW",
    "LOW_P",
    "LOW_WINDOW",
    "RESPONSES",
    "Response",
    "response",
]

LOW_WINDOW = 38.0  # RFC 3649 §5
HIGH_WINDOW = 83000.0  # RFC 3649 §5
HIGH_P = 1e-7  # RFC 3649 §5
HIGH_DECREASE = 0.1  # RFC 3649 §5
LOW_P = 1.5 / LOW_WINDOW**2  # RFC 3649 §5: Standard TCP's W = sqrt(1.5/p) at Low_Window

_LN_SPAN = math.log(HIGH_WINDOW) - math.log(LOW_WINDOW)
# Log-log slope of p(W): (ln High_P - ln Low_P)/(ln High_Window - ln Low_Window) ≈ -1.2.
_P_SLOPE = (math.log(HIGH_P) - math.log(LOW_P)) / _LN_SPAN
_LN10 = math.log(10.0)


@dataclass(frozen=True)
class Response:
    """One AIMD law: ``a(W)``, ``b(W)`` and their slopes, vectorised over ``W`` (segments)."""

    name: str

    def __post_init__(self) -> None:
        if self.name not in ("reno", "hstcp", "hstcp-eq2"):
            raise ValueError(f"unknown response {self.name!r} (reno, hstcp, hstcp-eq2)")

    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def _w(w: ArrayLike) -> NDArray[Any]:
        return np.clip(np.asarray(w, dtype=float), 1e-9, HIGH_WINDOW)

    def _above(self, w: ArrayLike) -> NDArray[np.bool_]:
        """Where the HSTCP law (not Standard TCP) applies, and a, b still vary with W."""
        raw = np.asarray(w, dtype=float)
        return (raw > LOW_WINDOW) & (raw < HIGH_WINDOW)

    # -- the law -------------------------------------------------------------------------------
    def b(self, w: ArrayLike) -> NDArray[Any]:
        """Multiplicative decrease: the fraction of the window removed on a loss."""
        x = self._w(w)
        if self.name == "reno":
            return np.full_like(x, 0.5)
        if self.name == "hstcp":
            f = (np.log(x) - math.log(LOW_WINDOW)) / _LN_SPAN
            hs = (HIGH_DECREASE - 0.5) * f + 0.5
        else:
            hs = -0.12 * np.log10(x) + 0.69
        return np.where(x <= LOW_WINDOW, 0.5, hs)

    def p_response(self, w: ArrayLike) -> NDArray[Any]:
        """RFC 3649's p(W): the loss rate at which the window settles at W (HSTCP forms only;
        Standard TCP's 1.5/W² below Low_Window and for Reno)."""
        x = self._w(w)
        std = 1.5 / x**2
        if self.name == "reno":
            return std
        if self.name == "hstcp":
            f = (np.log(x) - math.log(LOW_WINDOW)) / _LN_SPAN
            hs = np.exp(math.log(LOW_P) + f * (math.log(HIGH_P) - math.log(LOW_P)))
        else:
            # Eq. 2's a = 0.16 W^0.8 b/(2-b) is a = W² p 2b/(2-b) with p(W) = 0.08 W^-1.2 (the RFC's
            # p(W) is ≈ 0.078 W^-1.2, seed §2.2).
            hs = 0.08 * x**-1.2
        return np.where(x <= LOW_WINDOW, std, hs)

    def a(self, w: ArrayLike) -> NDArray[Any]:
        """Additive increase: segments added per RTT in congestion avoidance."""
        x = self._w(w)
        if self.name == "reno":
            return np.ones_like(x)
        b = self.b(x)
        if self.name == "hstcp":
            hs = x**2 * self.p_response(x) * 2.0 * b / (2.0 - b)
        else:
            hs = 0.16 * x**0.8 * b / (2.0 - b)
        return np.where(x <= LOW_WINDOW, 1.0, hs)

    def db(self, w: ArrayLike) -> NDArray[Any]:
        """b'(W) (0 where b is constant: Reno, W <= Low_Window, W >= High_Window)."""
        x = self._w(w)
        if self.name == "reno":
            return np.zeros_like(x)
        if self.name == "hstcp":
            slope = (HIGH_DECREASE - 0.5) / (x * _LN_SPAN)
        else:
            slope = -0.12 / (x * _LN10)
        return np.where(self._above(w), slope, 0.0)

    def da(self, w: ArrayLike) -> NDArray[Any]:
        """a'(W) = a(W) [k/W + 2 b'(W)/(b(W)(2 - b(W)))], k = 2 + slope of ln p (RFC) or 0.8 (Eq. 2)."""
        x = self._w(w)
        if self.name == "reno":
            return np.zeros_like(x)
        k = 2.0 + _P_SLOPE if self.name == "hstcp" else 0.8
        b = self.b(x)
        db = (HIGH_DECREASE - 0.5) / (x * _LN_SPAN) if self.name == "hstcp" else -0.12 / (x * _LN10)
        slope = self.a(x) * (k / x + 2.0 * db / (b * (2.0 - b)))
        return np.where(self._above(w), slope, 0.0)

    def a0b0(self, w: float) -> tuple[float, float]:
        """``(a(w), b(w))`` as plain floats."""
        return float(self.a(w)), float(self.b(w))


RESPONSES: dict[str, Response] = {n: Response(n) for n in ("reno", "hstcp", "hstcp-eq2")}


def response(name: str | Response) -> Response:
    """The AIMD law called ``name``: ``"hstcp"`` (RFC 3649), ``"hstcp-eq2"`` (seed Eq. 2) or
    ``"reno"``. A :class:`Response` passes through."""
    if isinstance(name, Response):
        return name
    try:
        return RESPONSES[name]
    except KeyError:
        from fatpipe.models.errors import DesignError

        raise DesignError(
            "response", f"unknown response {name!r}; one of {', '.join(RESPONSES)}"
        ) from None
