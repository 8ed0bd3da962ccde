"""The fluid model (seed Eqs. 3-5) with the designed discrete controllers settles near q0."""

from __future__ import annotations

import numpy as np
import pytest

from fatpipe.models import (
    H2Controller,
    PAPER_H2,
    Network,
    design_h2,
    design_pi,
    equilibrium,
    paper_operating_point,
    run_closed_loop,
)

# Band: the last 10 s of the run average within 1 % of q0 and stay within 2 % of it.
MEAN_BAND, MAX_BAND = 0.01, 0.02


def settled(res, q0):
    tail = res.tail(10.0)
    return abs(tail.q.mean() - q0) < MEAN_BAND * q0 and np.max(np.abs(tail.q - q0)) < MAX_BAND * q0


@pytest.fixture(scope="module")
def op():
    return paper_operating_point()


def test_h2_settles_from_half_the_target(op):
    res = run_closed_loop(op, design_h2(op).controller, 60.0, q_init=op.q0 / 2)
    assert settled(res, op.q0)
    assert res.p.min() > 0 and res.W.min() > 0.9 * op.W0  # no collapse on the way


def test_h2_settles_from_smaller_windows(op):
    res = run_closed_loop(op, design_h2(op).controller, 60.0, q_init=op.q0, w_init=0.9 * op.W0)
    assert settled(res, op.q0)


def test_pi_settles_on_the_hstcp_plant(op):
    res = run_closed_loop(op, design_pi(op, sample_hz=160.0).controller, 100.0, q_init=op.q0 / 2)
    assert settled(res, op.q0)


def test_pi_settles_in_hollots_example():
    op = equilibrium(Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=800, response="reno"), 175)
    res = run_closed_loop(op, design_pi(op, sample_hz=160.0).controller, 40.0, q_init=50, w_init=5)
    assert settled(res, op.q0)


def test_the_papers_coefficients_also_hold_our_operating_point(op):
    ctl = H2Controller(8333.0, op.q0, op.p0, PAPER_H2.a, PAPER_H2.b, PAPER_H2.c, PAPER_H2.d, PAPER_H2.e)
    assert settled(run_closed_loop(op, ctl, 60.0, q_init=op.q0 / 2), op.q0)
