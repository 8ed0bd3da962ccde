"""Tables 4.7/4.8 and the final ranking, derived from our results by stated rules.

The dissertation rates each protocol per property *relative to the other protocols* (§6.11,
Table 4.6): ★★ very good = a positive highlight, ★ good but not a highlight, ◆ regular =
satisfactory but unremarkable, ■ poor = worse than the others. It gives no numeric rule; ours:

1. **Score** per protocol and property (:func:`property_scores`), each the mean over the bg levels
   and sweep points of one experiment family, so every protocol is judged on the same points:

   ============= =================================================== ==========
   property      score                                               better
   ============= =================================================== ==========
   scalability   mean ``main_utilisation`` over D-S1, D-S2, D-S3      higher
                 (parking lot: P-S1, P-S2)
   compatibility mean ``reno_share_main`` over D-C (P-C), n_hs > 0    higher
   fairness      mean ``main_jain`` over D-F1a, D-F1b, D-F1c (P-F1)   higher
   convergence   mean ``convergence_time_s`` over D-CV; undefined if  lower
                 the late flow never reaches its share at some bg
   stability     mean ``main_stability_cv`` over D-ST                 lower
   ============= =================================================== ==========

2. **Standard score** within the property: z = ±(score − mean)/std over the protocols that have a
   score (population std; sign so that larger z is better). Relative by construction, and a
   single outlier (LIBRA's utilisation) stands out without forcing the best/worst of a tight
   group into a highlight/poor grade — the paper's stability column has no ■ and its convergence
   column no ★, which a rank quota (top 2 = ★★, ...) could never give.
3. **Grade** by cut-offs on z (:data:`CUTOFFS`): ★★ z ≥ 0.75; ★ 0.25 ≤ z < 0.75; ◆ −1.3 < z < 0.25;
   ■ z ≤ −1.3. ★★ is about the top 23 % of a normal spread (1–2 of 7 protocols, as in every
   column of Tables 4.7/4.8); ■ is reserved for protocols well below the rest: a lone outlier
   (LIBRA's scalability, z ≈ −2) or a pair clearly apart from a tight group (−1.3 is the least
   extreme z a bottom pair of 6–7 protocols can have while the middle protocols stay ◆).
   Known limit: the paper's stability column (two clearly worse protocols, BIC and STCP, rated ◆,
   none ■) cannot come out of any z cut-off that also gives its compatibility and convergence
   columns (two ■ each): with 7 scores, two equal bottom values below five better ones always
   have z ≤ −1.32. The paper's stability grade had an absolute element ("cv ≤ 25 % is low"; BIC
   "behaves like CUBIC at lower bg"). If every
   protocol has the same score, all are ◆ (nothing stands out). A protocol without a score is
   "undefined" (Table 4.7's LIBRA convergence).
4. **Final ranking** (:func:`ranking`): points ★★ = 3, ★ = 2, ◆ = 1, ■ = 0, undefined = 0 (no
   credit for a flow that never reaches its share), summed over every rated cell of the tables
   given. A ■ in scalability sends a protocol to the last tier whatever its points: the paper says
   LIBRA was "severely penalized for scalability despite median overall performance" — for a
   high-speed protocol, not scaling outweighs everything else. Protocols are then ordered by
   points (ties by name) and split into tiers of 1, 2, 2, 2, the shape of the paper's ranking
   (FAST > {HTCP, HSTCP} > {CUBIC, STCP} > {BIC, LIBRA}), so the comparison is tier by tier.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable

from fatpipe.studies.michel2009.reference import GRADES, HIGH_SPEED, SYMBOLS, protocol_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PROPERTIES", "CUTOFFS", "POINTS", "TIER_SIZES", "EXPERIMENTS", "property_scores", "rate",
           "ranking", "compare_ratings", "compare_ranking"]

#: property -> +1 if a higher score is better, -1 if lower is better.
PROPERTIES: dict[str, int] = {"scalability": 1, "compatibility": 1, "fairness": 1, "convergence": -1, "stability": -1}
#: z cut-offs: ★★ at or above the first, ★ at or above the second, ■ at or below the third.
CUTOFFS: tuple[float, float, float] = (0.75, 0.25, -1.3)
POINTS: dict[str, int] = {"very_good": 3, "good": 2, "regular": 1, "poor": 0, "undefined": 0}
TIER_SIZES: tuple[int, ...] = (1, 2, 2, 2)
#: topology -> property -> (experiments, metric)
EXPERIMENTS: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "dumbbell": {
        "scalability": (("D-S1", "D-S2", "D-S3"), "main_utilisation"),
        "compatibility": (("D-C",), "reno_share_main"),
        "fairness": (("D-F1a", "D-F1b", "D-F1c"), "main_jain"),
        "convergence": (("D-CV",), "convergence_time_s"),
        "stability": (("D-ST",), "main_stability_cv"),
    },
    "parking": {
        "scalability": (("P-S1", "P-S2"), "main_utilisation"),
        "compatibility": (("P-C",), "reno_share_main"),
        "fairness": (("P-F1",), "main_jain"),
    },
}


def property_scores(tidy: "pd.DataFrame", topology: str = "dumbbell") -> "pd.DataFrame":
    """Per protocol (rows, paper names) and property (columns): the score of step 1 above.

    ``tidy`` is the per-point frame of :mod:`fatpipe.studies.michel2009.targets` (columns
    ``experiment``, ``cc``, ``metric``, ``mean``, ``n``, and ``n_hs`` for the compatibility
    experiments). A property whose experiments are absent is left out (no column).
    """
    import pandas as pd

    from fatpipe.studies.michel2009.targets import normalise

    d = normalise(tidy)
    out: dict[str, dict[str, float]] = {}
    for prop, (exps, metric) in EXPERIMENTS[topology].items():
        rows = d[d["experiment"].isin(exps) & (d["metric"] == metric)]
        if prop == "compatibility" and "n_hs" in rows:
            rows = rows[rows["n_hs"] > 0]
        if rows.empty:
            continue
        col: dict[str, float] = {}
        for proto, g in rows.groupby("protocol"):
            if proto not in HIGH_SPEED:
                continue
            vals = g["mean"].where(g["n"] > 0)
            # convergence: one bg level where the flow never reached its share makes it undefined
            col[str(proto)] = math.nan if vals.isna().any() else float(vals.mean())
        out[prop] = col
    return pd.DataFrame(out).reindex([p for p in HIGH_SPEED if any(p in c for c in out.values())])


def _grade(z: float) -> str:
    if math.isnan(z):
        return "undefined"
    if z >= CUTOFFS[0]:
        return "very_good"
    if z >= CUTOFFS[1]:
        return "good"
    if z > CUTOFFS[2]:
        return "regular"
    return "poor"


def rate(scores: "pd.DataFrame") -> "pd.DataFrame":
    """Ratings (``very_good``/``good``/``regular``/``poor``/``undefined``) from a score table.

    ``scores``: rows = protocols (either spelling), columns = properties of :data:`PROPERTIES`
    (others are ignored), NaN = undefined. Also accepted: a long frame with columns
    ``protocol``, ``property``, ``score``.
    """
    import numpy as np
    import pandas as pd

    if {"protocol", "property", "score"} <= set(scores.columns):
        scores = scores.pivot(index="protocol", columns="property", values="score")
    scores = scores.rename(index=protocol_of)
    out = pd.DataFrame(index=scores.index)
    for prop, sign in PROPERTIES.items():
        if prop not in scores:
            continue
        s = scores[prop].astype(float)
        ok = s.dropna()
        std = float(np.std(ok.to_numpy(), ddof=0)) if len(ok) else 0.0
        if std == 0.0:
            z = s.where(s.isna(), 0.0)
        else:
            z = sign * (s - float(ok.mean())) / std
        out[prop] = [_grade(float(v)) for v in z]
    out.index.name = "protocol"
    return out


def ranking(tables: Iterable["pd.DataFrame"]) -> "pd.DataFrame":
    """Final ranking from one or more rating tables (e.g. ours for Tables 4.7 and 4.8).

    Returns columns ``protocol``, ``points``, ``scalability_poor`` and ``tier`` (1 = best), best
    first; see the module docstring, step 4.
    """
    import pandas as pd

    points: dict[str, int] = {}
    vetoed: dict[str, bool] = {}
    for t in tables:
        for proto, row in t.iterrows():
            p = protocol_of(str(proto))
            points[p] = points.get(p, 0) + sum(POINTS[str(v)] for v in row.to_numpy())
            vetoed[p] = vetoed.get(p, False) or row.get("scalability") == "poor"
    order = sorted(points, key=lambda p: (vetoed[p], -points[p], p))
    tiers: list[int] = []
    for k, size in enumerate(TIER_SIZES, start=1):
        tiers += [k] * size
    tiers += [len(TIER_SIZES)] * max(0, len(order) - len(tiers))
    return pd.DataFrame({"protocol": order, "points": [points[p] for p in order],
                         "scalability_poor": [vetoed[p] for p in order], "tier": tiers[:len(order)]})


def compare_ratings(ours: "pd.DataFrame", paper: "pd.DataFrame") -> "pd.DataFrame":
    """Cell by cell: ``protocol``, ``property``, ``paper``, ``ours``, ``agree`` and ``grades_apart``
    (0 = same grade, 3 = ★★ against ■; NaN when either is undefined and the other is not).

    ``paper``: a reference table as loaded (``protocol`` column or index). Only cells present in
    both are compared.
    """
    import pandas as pd

    p = paper.set_index("protocol") if "protocol" in paper.columns else paper
    o = ours.set_index("protocol") if "protocol" in ours.columns else ours
    rows = []
    for proto in p.index:
        for prop in p.columns:
            if proto not in o.index or prop not in o.columns:
                continue
            a, b = str(p.loc[proto, prop]), str(o.loc[proto, prop])
            apart = abs(GRADES.index(a) - GRADES.index(b)) if a in GRADES and b in GRADES else (0 if a == b else math.nan)
            rows.append({"protocol": proto, "property": prop, "paper": a, "ours": b, "agree": a == b,
                         "grades_apart": apart, "paper_symbol": SYMBOLS.get(a, a), "our_symbol": SYMBOLS.get(b, b)})
    return pd.DataFrame(rows)


def compare_ranking(ours: "pd.DataFrame", paper: "pd.DataFrame") -> "pd.DataFrame":
    """Per protocol: the paper's tier, ours, and whether they agree."""
    import pandas as pd

    o = dict(zip(ours["protocol"], ours["tier"]))
    rows = [{"protocol": pr, "paper_tier": int(t), "our_tier": o.get(pr), "agree": o.get(pr) == int(t)}
            for pr, t in zip(paper["protocol"], paper["tier"])]
    return pd.DataFrame(rows)
