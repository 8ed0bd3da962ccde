"""Reproduction targets and their honest evaluation: holds / does not hold / not comparable.

Kinds:

- ``reference``: the reproduction's mean at every sweep point lies within ``tolerance``
  (absolute, in the metric's unit) of a reference curve read from a CSV file (columns ``x``,
  ``value``, ``source``), interpolated linearly at the point's x. Points outside the reference's
  x range, or without a finished replication, make the target "not comparable".
- ``trend``: the means, ordered by the x parameter, rise (``direction = "increasing"``) or fall;
  a step against the direction smaller than ``tolerance`` is allowed (replication noise), and the
  last point must differ from the first in the stated direction.

``x`` is a varied parameter name, or a derived quantity: ``buffer_bdp`` is the bottleneck buffer
over the bandwidth-delay product of the first flow's path, in packets (read from the run's plan).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["Target", "Verdict", "HOLDS", "FAILS", "NOT_COMPARABLE", "checks_markdown"]

HOLDS, FAILS, NOT_COMPARABLE = "holds", "does not hold", "not comparable"


@dataclass
class Verdict:
    target: "Target"
    status: str
    detail: str
    rows: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Target:
    id: str
    kind: str
    sweep: str
    metric: str
    x: str
    claim: str
    why: str
    tolerance: float = 0.0
    reference: Path | None = None
    direction: str = "increasing"

    @classmethod
    def from_dict(cls, d: dict[str, Any], base: Path) -> "Target":
        from fatpipe.studies import StudyError

        try:
            t = cls(
                id=str(d["id"]), kind=str(d["kind"]), sweep=str(d["sweep"]), metric=str(d["metric"]),
                x=str(d["x"]), claim=str(d["claim"]), why=str(d.get("why", "")),
                tolerance=float(d.get("tolerance", 0.0)),
                reference=base / d["reference"] if "reference" in d else None,
                direction=str(d.get("direction", "increasing")),
            )
        except KeyError as e:
            raise StudyError(f"target {d.get('id', '?')}: missing key {e.args[0]!r}") from None
        if t.kind not in ("reference", "trend"):
            raise StudyError(f"target {t.id}: unknown kind {t.kind!r}; allowed: reference, trend")
        if t.kind == "reference" and (t.reference is None or not t.reference.is_file()):
            raise StudyError(f"target {t.id}: a reference target needs an existing `reference` CSV")
        if t.direction not in ("increasing", "decreasing"):
            raise StudyError(f"target {t.id}: direction must be increasing or decreasing")
        return t

    def evaluate(self, points: pd.DataFrame) -> Verdict:
        """``points``: one row per sweep point with columns ``x``, ``mean``, ``half_width``, ``n``."""
        if points.empty or (points["n"] == 0).any():
            return Verdict(self, NOT_COMPARABLE, "some sweep points have no finished replication")
        pts = points.sort_values("x").reset_index(drop=True)
        if self.kind == "reference":
            return self._reference(pts)
        return self._trend(pts)

    def _reference(self, pts: pd.DataFrame) -> Verdict:
        ref = pd.read_csv(self.reference).sort_values("x")
        lo, hi = ref["x"].min(), ref["x"].max()
        rows, worst = [], 0.0
        for _, p in pts.iterrows():
            if not lo <= p["x"] <= hi:
                return Verdict(self, NOT_COMPARABLE, f"x = {p['x']:.3g} lies outside the reference's range [{lo}, {hi}]")
            r = float(np.interp(p["x"], ref["x"], ref["value"]))
            diff = float(p["mean"]) - r
            worst = max(worst, abs(diff))
            rows.append({"x": p["x"], "reference": r, "mean": p["mean"], "half_width": p["half_width"],
                         "n": int(p["n"]), "difference": diff})
        status = HOLDS if worst <= self.tolerance else FAILS
        return Verdict(self, status, f"largest |difference| {worst:.3g} against a tolerance of {self.tolerance:g}", rows)

    def _trend(self, pts: pd.DataFrame) -> Verdict:
        sign = 1.0 if self.direction == "increasing" else -1.0
        m = pts["mean"].to_numpy(dtype=float) * sign
        steps = np.diff(m)
        worst_back = float(-steps.min()) if steps.size else 0.0
        rows = [{"x": x, "mean": mu, "half_width": hw, "n": int(n)}
                for x, mu, hw, n in zip(pts["x"], pts["mean"], pts["half_width"], pts["n"])]
        if len(m) < 2:
            return Verdict(self, NOT_COMPARABLE, "a trend needs at least two points", rows)
        ok = m[-1] > m[0] and worst_back <= self.tolerance
        detail = (f"first {pts['mean'].iloc[0]:.4g}, last {pts['mean'].iloc[-1]:.4g}; largest step against "
                  f"the trend {max(worst_back, 0.0):.3g} (allowed {self.tolerance:g})")
        return Verdict(self, HOLDS if ok else FAILS, detail, rows)


def figures_markdown(figs: list) -> list[str]:
    """A report's "Figures" section: each written figure (paths under ``figures/``) as an image;
    nothing when no figure was written."""
    if not figs:
        return []
    return ["## Figures", *[f"![{p.stem}](figures/{p.name})" for p in figs]]


def checks_markdown(verdicts: list, shown: int = 15) -> list[str]:
    """Markdown for rule verdicts that carry ``checks`` (analysis modules): per target its status,
    claim and rule, the checks that do not hold (at most ``shown``) and how many hold."""
    parts = []
    for v in verdicts:
        checks = getattr(v, "checks", [])
        parts.append(f"### {v.target.id}: {v.status}\n\n{v.target.claim}. *Rule:* {v.target.why}.\n")
        not_held = [c for c in checks if c.status != HOLDS]
        lines = [f"- {c.status}: {c.text}" for c in not_held[:shown]]
        held = len(checks) - len(not_held)
        if held:
            lines.append(f"- ({held} check{'s' if held != 1 else ''} hold)")
        if len(not_held) > shown:
            lines.append("- (more not listed; all are in the verdict's checks)")
        parts.append("\n".join(lines) or "- no checks")
    return parts
