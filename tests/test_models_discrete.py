"""Algorithm 1 (corrected) and ns-2's PI as difference equations; the queue-discipline dict."""

from __future__ import annotations

import numpy as np
import pytest

from fatpipe.models import DesignError, H2Controller, PAPER_H2, PIController, controller_from_dict


def test_paper_coefficients_poles_zeros_and_gain():
    # seed A4 (the +e reading): poles 0.99958, -0.91349; zeros 0.99959, -1.000004; DC 7.5e-10
    poles = sorted(PAPER_H2.poles().real)
    zeros = sorted(PAPER_H2.zeros().real)
    assert poles == pytest.approx([-0.91349, 0.99958], abs=1e-5)
    assert zeros == pytest.approx([-1.000004, 0.99959], abs=1e-5)
    assert PAPER_H2.dc_gain() == pytest.approx(7.5e-10, rel=0.01)
    assert np.all(np.abs(PAPER_H2.poles()) < 1)


def test_algorithm1_fixed_point_and_direction():
    ctl = H2Controller(8333.0, q0=1666.5, p0=1.2e-5, a=PAPER_H2.a, b=PAPER_H2.b, c=PAPER_H2.c,
                       d=PAPER_H2.d, e=PAPER_H2.e)
    run = ctl.runtime()
    for _ in range(100):  # seed A5: q = q0 keeps p = p0
        assert run.update(1666.5) == pytest.approx(1.2e-5, rel=1e-12)
    run.reset()
    p = [run.update(1666.5 + 100) for _ in range(200000)]
    assert p[0] > 1.2e-5  # Δq > 0 gives Δp > 0
    # the step response converges to p0 + C(1)·Δq
    assert p[-1] == pytest.approx(1.2e-5 + ctl.dc_gain() * 100, rel=1e-6)


def test_algorithm1_recursion_by_hand():
    ctl = H2Controller(100.0, q0=10.0, p0=0.1, a=0.01, b=0.002, c=0.003, d=0.5, e=0.25)
    run = ctl.runtime()
    q = [12.0, 9.0, 15.0]
    p1 = 10 * (0.003 - 0.012) + 0.01 * 12 + 0.002 * 10 - 0.003 * 10 + 0.1 * 0.25 + 0.5 * 0.1 + 0.25 * 0.1
    p2 = 10 * (0.003 - 0.012) + 0.01 * 9 + 0.002 * 12 - 0.003 * 10 + 0.1 * 0.25 + 0.5 * p1 + 0.25 * 0.1
    p3 = 10 * (0.003 - 0.012) + 0.01 * 15 + 0.002 * 9 - 0.003 * 12 + 0.1 * 0.25 + 0.5 * p2 + 0.25 * p1
    assert [run.update(x) for x in q] == pytest.approx([p1, p2, p3], rel=1e-13)


def test_outputs_are_clipped_and_remembered_clipped():
    ctl = H2Controller(100.0, q0=10.0, p0=0.5, a=1.0, b=0.0, c=0.0, d=0.5, e=0.0)
    run = ctl.runtime()
    assert run.update(20.0) == 1.0  # 10 + 0.25 + 0.25 -> 1
    assert run.update(10.0) == pytest.approx(0.25 + 0.5 * 1.0)
    assert run.update(-100.0) == 0.0


def test_ns2_pi_recursion():
    # ns-2.35 queue/pi.cc: p = a (q - qref) - b (qold - qref) + p_old, clipped
    ctl = PIController(sample_hz=170.0, q_ref=50.0, a=1.822e-5, b=1.816e-5, p0=0.0)
    run = ctl.runtime()
    run.reset(q=0.0, p=0.0)  # ns-2 starts from qold = 0, p = 0
    p1 = 1.822e-5 * (80 - 50) - 1.816e-5 * (0 - 50)
    p2 = 1.822e-5 * (70 - 50) - 1.816e-5 * (80 - 50) + p1
    assert run.update(80.0) == pytest.approx(p1) and run.update(70.0) == pytest.approx(p2)
    assert ctl.poles() == pytest.approx([1.0])


def test_dict_round_trip():
    for ctl in (PAPER_H2, PIController(160.0, 175.0, 1.822e-5, 1.816e-5, 0.008)):
        d = ctl.to_dict()
        assert d["kind"] in ("h2", "pi") and all(isinstance(v, float) for k, v in d.items() if k != "kind")
        assert controller_from_dict(d) == ctl
    assert set(PAPER_H2.to_dict()) == {"kind", "sample_hz", "q0", "p0", "a", "b", "c", "d", "e"}


@pytest.mark.parametrize(
    ("d", "field"),
    [
        ({"kind": "red"}, "kind"),
        (PAPER_H2.to_dict() | {"sample_hz": 0.0}, "sample_hz"),
        (PAPER_H2.to_dict() | {"sample_hz": -8333.0}, "sample_hz"),
        (PAPER_H2.to_dict() | {"p0": 1.5}, "p0"),
        (PAPER_H2.to_dict() | {"a": float("nan")}, "a"),
        ({"kind": "pi", "sample_hz": 160.0, "q_ref": 1.0, "a": 1.0}, "kind"),
    ],
)
def test_bad_controller_dicts(d, field):
    with pytest.raises(DesignError) as err:
        controller_from_dict(d)
    assert err.value.field == field
