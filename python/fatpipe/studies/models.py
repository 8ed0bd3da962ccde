"""Analytic reference models used as study references (labelled as models, not measurements)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["reno_sawtooth_utilisation"]


def reno_sawtooth_utilisation(buffer_over_bdp: ArrayLike) -> np.ndarray:
    """Link utilisation of one Reno flow in steady state, versus the buffer as a fraction of the BDP.

    The window ``w`` (packets) grows by one per RTT from ``W/2`` to ``W = P + B`` and halves on the
    loss when the buffer ``B`` overflows (``P`` = bandwidth-delay product in packets). While
    ``w < P`` the link is idle part of the time and a round trip lasts the propagation RTT; above
    ``P`` the queue holds ``w - P`` packets and a round trip lasts ``w / C``. Each RTT delivers
    ``w`` packets, so over one sawtooth, with ``b = B / P``::

        U = ∫_{W/2}^{W} w dw / ∫_{W/2}^{W} max(P, w) dw
          = 1                                                   if b >= 1
          = (3/8)(1+b)^2 / ((1 - (1+b)/2) + ((1+b)^2 - 1)/2)    if b < 1

    the textbook argument behind the bandwidth-delay-product buffer rule (e.g. C. Villamizar and
    C. Song, "High performance TCP in ANSNET", CCR 24(5), 1994; G. Appenzeller, I. Keslassy and
    N. McKeown, "Sizing Router Buffers", SIGCOMM 2004, §2). It ignores slow start, timeouts and
    the packet granularity of the window.

    >>> [round(float(u), 4) for u in reno_sawtooth_utilisation([0.0, 0.5, 1.0, 2.0])]
    [0.75, 0.9643, 1.0, 1.0]
    """
    b = np.asarray(buffer_over_bdp, dtype=float)
    if np.any(b < 0):
        raise ValueError("reno_sawtooth_utilisation: the buffer cannot be negative")
    w = 1.0 + b  # W / P
    below = (3.0 / 8.0) * w**2 / ((1.0 - w / 2.0) + (w**2 - 1.0) / 2.0)
    return np.where(b >= 1.0, 1.0, below)
