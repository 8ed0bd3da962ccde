"""Tests of fatpipe.metrics, including a check against the dissertation's Table 4.2.

"""

from __future__ import annotations

import csv
import doctest
import math
from pathlib import Path

import numpy as np
import pytest

from fatpipe import metrics

ROOT = Path(__file__).resolve().parents[1]
TABLE_4_2 = ROOT / "tests" / "data" / "michel2009_table4_2.csv"


def _table_4_2() -> list[dict[str, str]]:
    with TABLE_4_2.open(newline="") as f:
        return list(csv.DictReader(f))


# --------------------------------------------------------------------------- Table 4.2


def test_table_4_2_transcription_is_complete():
    rows = _table_4_2()
    assert len(rows) == 21
    assert list(rows[0]) == ["protocol", "bg", "mean_mbps", "cv_pct", "jain"]
    protocols = ["BIC", "CUBIC", "FAST", "HSTCP", "HTCP", "LIBRA", "STCP"]
    assert sorted({(r["protocol"], int(r["bg"])) for r in rows}) == sorted(
        (p, bg) for p in protocols for bg in (20, 50, 80)
    )
    for r in rows:
        assert 0 < float(r["mean_mbps"]) < 50  # 20 flows on 1 Gb/s: under the 50 Mb/s equal share
        assert 0 < float(r["cv_pct"]) < 100
        assert 0.5 < float(r["jain"]) <= 1


@pytest.mark.parametrize("row", _table_4_2(), ids=lambda r: f"{r['protocol']}-bg{r['bg']}")
def test_table_4_2_jain_equals_one_over_one_plus_cv_squared(row):
    """Michel (2009), Table 4.2: the printed Jain index follows from the printed cv (%) with
    J = 1/(1 + cv²), cv taken with the population standard deviation.

    Tolerance 0.00015: the Jain column is printed with 4 decimals and, judging by the data, was
    truncated rather than rounded (every printed value is at or just below 1/(1 + cv²); e.g. BIC at
    bg 20%: cv = 0.31238 gives 0.91109, printed 0.9110), which alone allows up to 1e-4; the cv
    column's own rounding to 3 decimals (of a percentage) adds a few 1e-6. The largest gap in
    the table is HTCP at bg 80% (0.928303 vs 0.9282, 1.03e-4). Had cv been computed with the sample
    standard deviation (n − 1 = 19), every entry would miss by 0.0012–0.0088, so the tolerance also
    tells the two conventions apart.
    """
    cv = float(row["cv_pct"]) / 100.0
    printed = float(row["jain"])
    assert metrics.jain_from_cv(cv) == pytest.approx(printed, abs=0.00015)
    # Had the printed cv used the sample std (ddof=1, n = 20), the population cv would be
    # cv·sqrt(19/20) and J would be 1/(1 + 0.95·cv²): 0.0012–0.0088 above every printed value.
    assert metrics.jain_from_cv(cv * math.sqrt(19 / 20)) - printed > 0.001


def test_table_4_2_bic_20_example_from_the_seed():
    assert round(metrics.jain_from_cv(0.31238), 4) == 0.9111  # printed: 0.9110 (truncated)


def test_table_4_2_vectorised():
    rows = _table_4_2()
    cv = np.array([float(r["cv_pct"]) for r in rows]) / 100
    jain = np.array([float(r["jain"]) for r in rows])
    computed = metrics.jain_from_cv(cv)
    assert isinstance(computed, np.ndarray) and computed.shape == (21,)
    np.testing.assert_allclose(computed, jain, atol=0.00015, rtol=0)


# --------------------------------------------------------------------------- identities


def _with_population_cv(n: int, mean: float, cv: float, rng: np.random.Generator) -> np.ndarray:
    """n positive values with exactly the given mean and population cv."""
    z = rng.standard_normal(n)
    z = (z - z.mean()) / z.std(ddof=0)
    x = mean * (1.0 + cv * z)
    assert np.all(x > 0)
    return x


@pytest.mark.parametrize("n, cv", [(2, 0.3), (20, 0.31238), (20, 0.16077), (256, 0.25), (7, 0.0)])
def test_jain_index_of_vector_equals_jain_from_cv(n, cv):
    rng = np.random.default_rng(42)
    x = _with_population_cv(n, 26.979, cv, rng) if cv > 0 else np.full(n, 5.0)
    assert metrics.coefficient_of_variation(x) == pytest.approx(cv, abs=1e-12)
    assert metrics.jain_index(x) == pytest.approx(metrics.jain_from_cv(cv), abs=1e-12)
    # and the identity holds for the cv computed from the data, whatever the data
    assert metrics.jain_index(x) == pytest.approx(metrics.jain_from_cv(metrics.coefficient_of_variation(x)), abs=1e-12)


def test_jain_index_is_scale_invariant_and_bounded():
    rng = np.random.default_rng(7)
    x = rng.exponential(size=50)
    j = metrics.jain_index(x)
    assert 1 / 50 <= j <= 1
    assert metrics.jain_index(x * 8e6) == pytest.approx(j, rel=1e-12)


def test_jain_index_extremes():
    assert metrics.jain_index([3.0, 3.0, 3.0]) == 1.0
    assert metrics.jain_index([5.0]) == 1.0
    assert metrics.jain_index([7.0, 0.0, 0.0, 0.0, 0.0]) == pytest.approx(0.2)
    assert metrics.jain_index((1, 3)) == pytest.approx(0.8)  # 16 / (2 * 10); tuples and ints accepted


# --------------------------------------------------------------------------- coefficient of variation


def test_coefficient_of_variation_uses_population_std():
    assert metrics.coefficient_of_variation([1.0, 3.0]) == 0.5  # ddof=1 would give 0.7071
    assert metrics.coefficient_of_variation([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(2 / 5)
    assert metrics.coefficient_of_variation([4.0, 4.0]) == 0.0


def test_coefficient_of_variation_is_a_fraction_not_percent():
    x = np.array([26.979 * (1 - 0.31238), 26.979 * (1 + 0.31238)])  # population cv 0.31238
    assert metrics.coefficient_of_variation(x) == pytest.approx(0.31238, rel=1e-12)


# --------------------------------------------------------------------------- utilisation and fair share


def test_utilisation():
    assert metrics.utilisation(125_000_000, 1e9, 1.0) == 1.0
    assert metrics.utilisation(0, 1e9, 600.0) == 0.0
    assert metrics.utilisation(1500 * 2500, 100e6, 3.0) == pytest.approx(1500 * 2500 * 8 / 300e6)
    u = metrics.utilisation(np.array([0, 62_500_000, 125_000_000]), 1e9, 1.0)
    np.testing.assert_allclose(u, [0.0, 0.5, 1.0])
    assert isinstance(metrics.utilisation(1, 1, 1), float)


@pytest.mark.parametrize("bg, expected", [(0.2, 40e6), (0.5, 25e6), (0.8, 10e6), (0.0, 50e6)])
def test_fair_share_dissertation_values(bg, expected):
    # Michel (2009) §4.1.4: N = 20, C = 1 Gb/s → 40 / 25 / 10 Mb/s at bg 20 / 50 / 80 %.
    assert metrics.fair_share_bps(1e9, 20, bg) == pytest.approx(expected, rel=1e-12)


def test_fair_share_single_flow_and_numpy_int():
    assert metrics.fair_share_bps(10e6, 1) == 10e6
    assert metrics.fair_share_bps(10e6, np.int64(4), 1.0) == 0.0


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("bad", [[], np.array([]), [0.0, 0.0, 0.0], [1.0, -1.0], [1.0, np.nan], [np.inf, 1.0], [[1.0, 2.0]]])
def test_jain_index_rejects(bad):
    with pytest.raises(ValueError, match="jain_index"):
        metrics.jain_index(bad)


def test_jain_index_all_zero_message_is_clear():
    with pytest.raises(ValueError, match="every value is zero"):
        metrics.jain_index(np.zeros(20))


@pytest.mark.parametrize("bad", [[], [0.0, 0.0], [-1.0, 1.0], [1.0, np.nan], [[1.0], [2.0]]])
def test_coefficient_of_variation_rejects(bad):
    with pytest.raises(ValueError, match="coefficient_of_variation"):
        metrics.coefficient_of_variation(bad)


@pytest.mark.parametrize("bad", [np.nan, np.inf, [0.1, np.nan]])
def test_jain_from_cv_rejects_non_finite(bad):
    with pytest.raises(ValueError, match="finite"):
        metrics.jain_from_cv(bad)


def test_jain_from_cv_scalar_types():
    assert isinstance(metrics.jain_from_cv(0.3), float)
    assert isinstance(metrics.jain_from_cv(np.float64(0.3)), float)
    assert metrics.jain_from_cv(-0.5) == metrics.jain_from_cv(0.5)  # only cv² matters


@pytest.mark.parametrize(
    "args",
    [(-1, 1e9, 1.0), (1, 0.0, 1.0), (1, 1e9, 0.0), (1, -1e9, 1.0), (np.nan, 1e9, 1.0), (1, 1e9, np.inf)],
)
def test_utilisation_rejects(args):
    with pytest.raises(ValueError, match="utilisation"):
        metrics.utilisation(*args)


@pytest.mark.parametrize(
    "args",
    [(1e9, 0), (1e9, -3), (1e9, 2.5), (1e9, True), (0.0, 20), (np.inf, 20), (1e9, 20, 20), (1e9, 20, -0.1)],
)
def test_fair_share_rejects(args):
    with pytest.raises(ValueError, match="fair_share_bps"):
        metrics.fair_share_bps(*args)


def test_percent_slip_in_fair_share_is_caught():
    with pytest.raises(ValueError, match="not %"):
        metrics.fair_share_bps(1e9, 20, 20)


# --------------------------------------------------------------------------- module hygiene


def test_docstring_examples():
    result = doctest.testmod(metrics, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted >= 10
    assert result.failed == 0


def test_metrics_imports_only_numpy():
    """metrics must work without the compiled core, pandas or matplotlib."""
    import ast

    tree = ast.parse((ROOT / "python" / "fatpipe" / "metrics.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert imported <= {"__future__", "numpy"}, imported


def test_every_public_function_has_a_docstring_with_examples():
    for name in metrics.__all__:
        doc = getattr(metrics, name).__doc__
        assert doc and ">>>" in doc and "Parameters" in doc and "Returns" in doc, name
