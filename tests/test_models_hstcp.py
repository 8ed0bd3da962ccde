"""a(W), b(W): RFC 3649 against its numbers, the seed's Eq. 2 against the RFC, slopes against
finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from fatpipe.models.hstcp import LOW_P, response

HSTCP = response("hstcp")
EQ2 = response("hstcp-eq2")
RENO = response("reno")


# The seed note's table (§2.2), computed from RFC 3649's formulas: (W, b, a).
@pytest.mark.parametrize(
    ("w", "b", "a"),
    [(38, 0.5, 1.00), (100, 0.4497, 1.88), (1000, 0.3299, 8.03), (2744, 0.2774, 14.64),
     (16667, 0.1835, 38.71), (83000, 0.1, 72.52)],
)
def test_rfc3649_against_the_seed_table(w, b, a):
    # the table prints 4 decimals for b and 2 for a: half a unit of the last digit
    assert float(HSTCP.b(w)) == pytest.approx(b, abs=5e-5)
    assert float(HSTCP.a(w)) == pytest.approx(a, abs=5e-3)


# RFC 3649 Appendix B, b(w) column at the first rows (2 decimals; Linux tcp_highspeed.c carries
# the same rows with the values as comments).
@pytest.mark.parametrize(
    ("w", "b"),
    [(118, 0.44), (221, 0.41), (347, 0.38), (495, 0.37), (663, 0.35), (851, 0.34), (1058, 0.33)],
)
def test_rfc3649_appendix_b_decrease(w, b):
    assert float(HSTCP.b(w)) == pytest.approx(b, abs=0.007)  # 2-decimal rounding + truncation


def test_rfc_constants_and_response_function():
    assert LOW_P == pytest.approx(1.0388e-3, rel=1e-4)  # 1.5/38², seed §2.2
    # RFC 3649 §5: w = 0.12/p^0.835 is the log-log line through the two end points (within 2 %)
    for w in (100.0, 1000.0, 10000.0, 83000.0):
        assert 0.12 / float(HSTCP.p_response(w)) ** 0.835 == pytest.approx(w, rel=0.02)


@pytest.mark.parametrize("w", [100, 1000, 2744, 16667, 83000])
def test_eq2_is_the_rfc_within_two_percent(w):
    # seed A1: Eq. 2 (log10) matches RFC 3649 to ~2 %
    assert float(EQ2.b(w)) == pytest.approx(float(HSTCP.b(w)), rel=0.02, abs=1e-3)
    assert float(EQ2.a(w)) == pytest.approx(float(HSTCP.a(w)), rel=0.02)


def test_below_low_window_is_standard_tcp_and_reno_is_constant():
    for law in (HSTCP, EQ2):
        assert float(law.a(20)) == 1.0 and float(law.b(20)) == 0.5
        assert float(law.da(20)) == 0.0 and float(law.db(20)) == 0.0
    assert np.all(RENO.a([1, 10, 1e5]) == 1.0) and np.all(RENO.b([1, 10, 1e5]) == 0.5)


def test_above_high_window_is_held():
    assert float(HSTCP.b(2e5)) == pytest.approx(0.1) and float(HSTCP.db(2e5)) == 0.0
    assert float(HSTCP.a(2e5)) == float(HSTCP.a(83000))


@pytest.mark.parametrize("law", [HSTCP, EQ2])
def test_slopes_match_finite_differences(law):
    w = np.array([50.0, 500.0, 2000.0, 20000.0])
    h = 1e-5 * w
    fd_a = (law.a(w + h) - law.a(w - h)) / (2 * h)
    fd_b = (law.b(w + h) - law.b(w - h)) / (2 * h)
    np.testing.assert_allclose(law.da(w), fd_a, rtol=1e-6)
    np.testing.assert_allclose(law.db(w), fd_b, rtol=1e-6)
