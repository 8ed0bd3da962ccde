"""Equilibrium identities, bad operating points, and the linearisation against the fluid
right-hand side."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fatpipe.models import DesignError, Network, capacity_pkts, equilibrium, linearize, rhs


def paper_net(n=10.0, **kw):
    return Network(n_flows=n, capacity=capacity_pkts(1e9, 1500), prop_delay=0.2, buffer=3333, **kw)


@pytest.mark.parametrize("law", ["hstcp", "hstcp-eq2", "reno"])
def test_equilibrium_identities(law):
    net = paper_net(response=law) if law != "reno" else paper_net(n=2000, response="reno")
    op = equilibrium(net, q0=1666.5)
    assert op.R0 == pytest.approx(1666.5 / net.capacity + 0.2, rel=1e-15)
    assert op.W0 == pytest.approx(op.R0 * net.capacity / net.n_flows, rel=1e-15)
    a0, b0 = net.law.a0b0(op.W0)
    assert (op.a0, op.b0) == (a0, b0)
    # seed Algorithm 1 line 1
    assert op.p0 == pytest.approx(a0 * net.n_flows**2 / (b0 * (net.capacity * op.R0) ** 2), rel=1e-13)
    # and it is an equilibrium of Eqs. 3-4 (seed A2): both derivatives vanish
    dw, dq = rhs(net, op.W0, op.q0, op.W0, op.q0, op.p0)
    assert abs(dw) < 1e-9 * a0 / op.R0 and abs(dq) < 1e-9 * net.capacity


def test_paper_operating_point_numbers():
    op = equilibrium(paper_net(), q0=1666.5)
    assert op.W0 == pytest.approx(1833.3, abs=0.1)
    assert op.p0 == pytest.approx(1.153e-5, rel=1e-3)
    assert not op.below_low_window


def test_below_low_window_is_allowed_and_flagged():
    op = equilibrium(paper_net(n=1000), q0=1666.5)  # W0 = 18.3 < 38: Standard TCP there
    assert op.below_low_window and (op.a0, op.b0) == (1.0, 0.5)
    assert not equilibrium(paper_net(n=1000, response="reno"), q0=1666.5).below_low_window


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: Network(n_flows=0, capacity=1e4, prop_delay=0.1), "n_flows"),
        (lambda: Network(n_flows=-3, capacity=1e4, prop_delay=0.1), "n_flows"),
        (lambda: Network(n_flows=10, capacity=0, prop_delay=0.1), "capacity"),
        (lambda: Network(n_flows=10, capacity=1e4, prop_delay=-0.1), "prop_delay"),
        (lambda: Network(n_flows=10, capacity=1e4, prop_delay=math.nan), "prop_delay"),
        (lambda: Network(n_flows=10, capacity=1e4, prop_delay=0.1, buffer=0), "buffer"),
        (lambda: Network(n_flows=10, capacity=1e4, prop_delay=0.1, response="cubic"), "response"),
        (lambda: equilibrium(paper_net(), q0=0.0), "q0"),
        (lambda: equilibrium(paper_net(), q0=3333.0), "q0"),
        (lambda: equilibrium(paper_net(), q0=5000.0), "q0"),
        (lambda: equilibrium(paper_net(), q0=-5.0), "q0"),
        # 1e5 flows in a 16 667-packet pipe: W0 = 0.18, p0 = 30 >= 1
        (lambda: equilibrium(paper_net(n=1e5), q0=1666.5), "n_flows"),
        (lambda: linearize(equilibrium(paper_net(), q0=1666.5), form="exact"), "form"),
    ],
)
def test_bad_operating_points_name_the_field(make, field):
    with pytest.raises(DesignError) as err:
        make()
    assert err.value.field == field
    assert str(err.value).startswith(f"{field}: ")
    assert isinstance(err.value, ValueError)


def test_no_equilibrium_message_says_why():
    with pytest.raises(DesignError, match=r"no equilibrium: .* p0 = .* >= 1"):
        equilibrium(paper_net(n=1e5), q0=1666.5)


def fd_jacobian(net, op, ab=None):
    """∂(W', q')/∂(W, q, W_d, q_d, p_d) at the equilibrium by central differences."""
    x0 = np.array([op.W0, op.q0, op.W0, op.q0, op.p0])
    J = np.zeros((2, 5))
    for j in range(5):
        h = 1e-6 * x0[j]
        xp, xm = x0.copy(), x0.copy()
        xp[j] += h
        xm[j] -= h
        J[:, j] = (np.array(rhs(net, *xp, ab=ab)) - np.array(rhs(net, *xm, ab=ab))) / (2 * h)
    return J


@pytest.mark.parametrize("law", ["hstcp", "hstcp-eq2"])
def test_full_linearisation_is_the_jacobian_of_the_fluid_rhs(law):
    net = paper_net(response=law)
    op = equilibrium(net, q0=1666.5)
    pl = linearize(op, form="slopes", queue_terms=True)
    J = fd_jacobian(net, op)
    # central differences with h = 1e-6 x: relative error ~1e-8 of the largest entry in a row
    for row in range(2):
        scale = np.max(np.abs(J[row]))
        np.testing.assert_allclose(pl.A0[row], J[row, 0:2], atol=1e-6 * scale)
        np.testing.assert_allclose(pl.A1[row], J[row, 2:4], atol=1e-6 * scale)
        np.testing.assert_allclose(pl.B_u[row, 0], J[row, 4], atol=1e-6 * scale)


def test_frozen_form_is_the_jacobian_with_a_b_frozen_and_no_queue_terms():
    net = paper_net()
    op = equilibrium(net, q0=1666.5)
    pl = linearize(op)  # frozen, Hollot's form
    J = fd_jacobian(net, op, ab=(op.a0, op.b0))
    scale = np.max(np.abs(J[0]))
    assert pl.A0[0, 0] == pytest.approx(J[0, 0], abs=1e-6 * scale)
    assert pl.A1[0, 0] == pytest.approx(J[0, 2], abs=1e-6 * scale)
    assert pl.B_u[0, 0] == pytest.approx(J[0, 4], rel=1e-6)
    # the q columns of the window row are what queue_terms=True adds (Hollot drops them)
    with_q = linearize(op, queue_terms=True)
    assert with_q.A0[0, 1] == pytest.approx(J[0, 1], rel=1e-5)
    assert with_q.A1[0, 1] == pytest.approx(J[0, 3], rel=1e-5)
    assert pl.A0[0, 1] == 0.0 and pl.A1[0, 1] == 0.0
    # closed forms of seed §3.3
    n, c, r = net.n_flows, net.capacity, op.R0
    assert pl.A0[0, 0] == pytest.approx(-op.a0 * n / (r**2 * c), rel=1e-12)
    assert pl.B_u[0, 0] == pytest.approx(-op.b0 * r * c**2 / n**2, rel=1e-12)


def test_performance_row_two_is_the_queue_derivative():
    # seed A3: C_z row 2 applied to x equals δq' of the linear model
    pl = linearize(equilibrium(paper_net(), q0=1666.5))
    x = np.array([3.0, -40.0])
    assert pl.C_z[1] @ x == pytest.approx(pl.A0[1] @ x + pl.A1[1] @ x, rel=1e-14)
    assert np.array_equal(pl.C_z[0], [0.0, 1.0])


def test_reno_reduces_to_hollots_plant():
    # Hollot, Misra, Towsley, Gong (INFOCOM 2001 / TAC 2002) example: N = 60, C = 3750 pkt/s,
    # T_p = 0.2 s, q0 = 175 packets -> R0 = 0.2467 s, W0 = 15.4, p0 = 2/W0² = 0.0084
    op = equilibrium(Network(n_flows=60, capacity=3750, prop_delay=0.2, response="reno"), q0=175)
    pl = linearize(op)
    n, c, r = 60.0, 3750.0, op.R0
    assert op.p0 == pytest.approx(2.0 / op.W0**2, rel=1e-12)
    assert pl.A0[0, 0] == pytest.approx(-n / (r**2 * c), rel=1e-12)
    assert pl.A1[0, 0] == pytest.approx(-n / (r**2 * c), rel=1e-12)
    assert pl.B_u[0, 0] == pytest.approx(-r * c**2 / (2 * n**2), rel=1e-12)
    p_w, p_q = pl.hollot_poles()
    assert p_w == pytest.approx(2 * n / (r**2 * c), rel=1e-12)  # 0.526, "0.53" in the paper
    assert round(p_w, 2) == 0.53 and round(p_q, 2) == 4.05
    # Hollot's P(s) = (C²/2N) e^{-sR}/((s + 2N/(R²C))(s + 1/R)), with our sign (more drops,
    # shorter queue); exact and approximated plants agree at s = 0 where 1 + e^{-sR} = 2
    s = np.array([0.0, 0.3j, 2j])
    hollot = -(c**2 / (2 * n)) * np.exp(-s * r) / ((s + p_w) * (s + 1 / r))
    np.testing.assert_allclose(pl.hollot_tf(s), hollot, rtol=1e-12)
    assert pl.tf(0.0).real == pytest.approx(hollot[0].real, rel=1e-12)


def test_exact_plant_transfer_function_formula():
    pl = linearize(equilibrium(paper_net(), q0=1666.5))
    op, n, c = pl.op, 10.0, capacity_pkts(1e9)
    for s in (0.01j, 0.5j, 3j, 0.2 + 1j):
        e = np.exp(-s * op.R0)
        alpha = op.a0 * n / (op.R0**2 * c)
        expect = -(op.b0 * c**2 / n) * e / ((s + alpha * (1 + e)) * (s + 1 / op.R0))
        assert pl.tf(s) == pytest.approx(expect, rel=1e-12)
