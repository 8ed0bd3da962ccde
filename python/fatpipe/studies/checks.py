"""Building blocks of the studies' target rules: points with a 95 % CI, and claims about them.

The papers' claims are statements about point estimates (Michel 2009 ran one replication per
point; de Santi et al. describe figures). We have means with a 95 % confidence half-width ``hw`` (Student's t over replications).
Rule for every claim, stated once here:

- the claim **holds** when our mean is on the claimed side (ordering, bound) or within the stated
  tolerance of the paper's value (≈), because that reproduces the paper's point-estimate claim;
- it is **not comparable** when our mean is on the wrong side but by no more than the noise —
  the CI half-width of the quantity compared (of a difference: sqrt(hw_a² + hw_b²)); our data
  then cannot say which side is right;
- it **does not hold** when our mean is on the wrong side by more than that noise.

With one replication (hw NaN) the noise is taken as 0: the means decide, as in the paper.
A composite target does not hold if any of its checks does not; holds if all hold; otherwise it
is not comparable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE, Verdict

__all__ = ["Pt", "Check", "Missing", "RuleVerdict", "greater", "above", "below", "near", "monotone",
           "combine", "diff", "ratio", "average"]


class Missing(LookupError):
    """A point a check needs is not in the data."""


@dataclass(frozen=True)
class Pt:
    """One quantity: mean, 95 % CI half-width (NaN if unknown), replications, a label."""

    mean: float
    hw: float = math.nan
    n: int = 1
    label: str = ""

    @property
    def noise(self) -> float:
        return 0.0 if math.isnan(self.hw) else self.hw

    def fmt(self) -> str:
        hw = "" if math.isnan(self.hw) else f" ± {self.hw:.3g}"
        return f"{self.label} = {self.mean:.4g}{hw} (n={self.n})"


@dataclass
class Check:
    status: str
    text: str
    numbers: dict[str, Any] = field(default_factory=dict)


@dataclass
class RuleVerdict(Verdict):
    """A :class:`fatpipe.studies.targets.Verdict` with the checks that decided it (``rows`` stays
    empty: the generic report's rows are sweep points against a reference curve)."""

    checks: list[Check] = field(default_factory=list)


def _side(d: float, noise: float, text: str, numbers: dict[str, Any]) -> Check:
    """``d`` > 0 means the claim's side."""
    if math.isnan(d):
        return Check(NOT_COMPARABLE, text + ": undefined value (NaN)", numbers)
    if d > 0:
        return Check(HOLDS, text, numbers)
    if -d <= noise:
        return Check(NOT_COMPARABLE, text + f": wrong side by {-d:.3g}, within the noise {noise:.3g}", numbers)
    return Check(FAILS, text + f": wrong side by {-d:.3g} (noise {noise:.3g})", numbers)


def greater(a: Pt, b: Pt) -> Check:
    """Claim a > b."""
    d = diff(a, b)
    return _side(d.mean, d.noise, f"{a.fmt()} > {b.fmt()}", {"a": a.mean, "b": b.mean, "hw": d.hw})


def above(a: Pt, bound: float, strict_text: str = ">") -> Check:
    """Claim a > bound (or ≥: the same rule, a mean equal to the bound counts as holding)."""
    d = a.mean - bound
    return _side(d if d != 0 else 1e-300, a.noise, f"{a.fmt()} {strict_text} {bound:.4g}", {"a": a.mean, "bound": bound})


def below(a: Pt, bound: float, strict_text: str = "<") -> Check:
    d = bound - a.mean
    return _side(d if d != 0 else 1e-300, a.noise, f"{a.fmt()} {strict_text} {bound:.4g}", {"a": a.mean, "bound": bound})


def near(a: Pt, value: float, tol: float) -> Check:
    """Claim a ≈ value, within the absolute tolerance ``tol``."""
    off = abs(a.mean - value)
    return _side(tol - off if tol != off else 1e-300, a.noise, f"{a.fmt()} ≈ {value:.4g} (±{tol:.3g})",
                 {"a": a.mean, "value": value, "tol": tol})


def monotone(points: Sequence[Pt], direction: int, tol: float) -> Check:
    """Claim: the points (in x order) rise (``direction`` = +1) or fall (−1); a step against the
    direction is allowed up to max(``tol``, the step's noise), and the last must differ from the
    first in the direction."""
    if len(points) < 2:
        return Check(NOT_COMPARABLE, "a trend needs two points")
    label = " → ".join(f"{p.mean:.3g}" for p in points)
    worst = None
    for a, b in zip(points, points[1:]):
        step = direction * (b.mean - a.mean)
        if math.isnan(step):
            return Check(NOT_COMPARABLE, f"{points[0].label}: undefined value in {label}")
        allowed = max(tol, diff(b, a).noise)
        if step < -allowed and (worst is None or step < worst):
            worst = step
    end = diff(points[-1], points[0])
    word = "rises" if direction > 0 else "falls"
    text = f"{points[0].label} {word}: {label}"
    if worst is not None:
        return Check(FAILS, text + f": a step of {-worst:.3g} against the trend (allowed {tol:.3g})")
    return _side(direction * end.mean, end.noise, text, {"values": [p.mean for p in points]})


def combine(checks: Sequence[Check]) -> str:
    if not checks:
        return NOT_COMPARABLE
    if any(c.status == FAILS for c in checks):
        return FAILS
    if all(c.status == HOLDS for c in checks):
        return HOLDS
    return NOT_COMPARABLE


def diff(a: Pt, b: Pt, label: str = "") -> Pt:
    """a − b, with the half-widths combined in quadrature (independent runs)."""
    hw = math.hypot(a.noise, b.noise) if not (math.isnan(a.hw) and math.isnan(b.hw)) else math.nan
    return Pt(a.mean - b.mean, hw, min(a.n, b.n), label or f"{a.label} − {b.label}")


def ratio(a: Pt, b: Pt, label: str = "") -> Pt:
    """a / b, relative half-widths combined in quadrature (first-order delta method)."""
    r = a.mean / b.mean if b.mean else math.nan
    if math.isnan(a.hw) and math.isnan(b.hw) or not a.mean or not b.mean:
        hw = math.nan
    else:
        hw = abs(r) * math.hypot(a.noise / a.mean, b.noise / b.mean)
    return Pt(r, hw, min(a.n, b.n), label or f"{a.label} / {b.label}")


def average(points: Sequence[Pt], label: str) -> Pt:
    """Mean of independent points; half-width sqrt(Σ hw²)/k."""
    if not points:
        raise Missing(f"{label}: no points")
    k = len(points)
    mean = sum(p.mean for p in points) / k
    hws = [p.hw for p in points]
    hw = math.nan if all(math.isnan(h) for h in hws) else math.sqrt(sum(p.noise ** 2 for p in points)) / k
    return Pt(mean, hw, min(p.n for p in points), label)
