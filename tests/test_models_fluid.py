"""The fluid model: equilibria stay put, a static law settles where theory says, the step size
is fine enough, the buffer and the UDP term act as documented."""

from __future__ import annotations

import numpy as np
import pytest

from fatpipe.models import (
    DesignError,
    Network,
    StaticAQM,
    capacity_pkts,
    equilibrium,
    simulate,
)


def paper_net(n=10.0, law="hstcp"):
    return Network(n_flows=n, capacity=capacity_pkts(1e9), prop_delay=0.2, buffer=3333, response=law)


@pytest.mark.parametrize(
    "net",
    [paper_net(), paper_net(law="hstcp-eq2"), Network(60, 3750, 0.2, buffer=800, response="reno")],
)
def test_started_at_the_equilibrium_it_stays_there(net):
    q0 = 1666.5 if net.capacity > 1e4 else 175.0
    op = equilibrium(net, q0)
    res = simulate(net, StaticAQM.constant(op.p0), 20.0, w0=op.W0, q0=op.q0)
    # the HSTCP laws are tabulated for speed (relative error < 1e-7): drift stays below 1e-4
    assert np.max(np.abs(res.q - op.q0)) < 1e-4 * op.q0
    assert np.max(np.abs(res.W - op.W0)) < 1e-4 * op.W0
    assert np.allclose(res.R, op.R0, rtol=1e-6)
    assert np.allclose(res.rate, net.capacity, rtol=1e-4)


def test_static_ramp_settles_at_the_equilibrium_the_law_crosses():
    net = Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=800, response="reno")
    law = StaticAQM.red(min_th=0, max_th=800, max_p=0.05)
    res = simulate(net, law, 40.0, w0=10.0, q0=0.0)
    q_end = res.q[-1]
    assert np.ptp(res.tail(5.0).q) < 1e-3  # settled
    op = equilibrium(net, q_end)
    assert op.p0 == pytest.approx(0.05 * q_end / 800, rel=1e-3)


def test_halving_the_step_changes_little():
    net = Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=800, response="reno")
    law = StaticAQM.red(min_th=0, max_th=800, max_p=0.05)
    a = simulate(net, law, 10.0, w0=10.0, q0=0.0)
    b = simulate(net, law, 10.0, w0=10.0, q0=0.0, dt=a.dt / 2)
    assert np.max(np.abs(b.q[::2] - a.q)) < 1e-3 * 800  # 0.1 % of the buffer
    assert np.max(np.abs(b.W[::2] - a.W)) < 1e-3 * 15


def test_the_queue_stays_in_the_buffer_and_overflow_is_loss():
    net = Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=100, response="reno")
    res = simulate(net, StaticAQM.constant(0.0), 20.0, w0=30.0, q0=0.0)
    assert res.q.min() >= 0.0 and res.q.max() <= 100.0
    full = res.q >= 100.0
    assert full.any() and np.all(res.loss[full] > 0) and np.all(res.p == 0.0)
    quiet = simulate(net, StaticAQM.constant(0.0), 20.0, w0=30.0, q0=0.0, overflow_loss=False)
    assert np.all(quiet.loss == 0.0)  # only clipped: windows grow without bound
    assert quiet.W[-1] > res.W[-1]


def test_udp_noise_takes_capacity():
    net = Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=800, response="reno")
    law = StaticAQM.red(min_th=0, max_th=800, max_p=0.05)
    base = simulate(net, law, 40.0, w0=10.0, q0=0.0)
    udp = simulate(net, law, 40.0, w0=10.0, q0=0.0, udp=lambda t: 0.2 * 3750)
    # the TCP flows get 80 % of the link and the queue (hence p) rises to slow them down
    assert udp.rate[-1] == pytest.approx(0.8 * 3750, rel=1e-3)
    assert udp.q[-1] > base.q[-1]


@pytest.mark.parametrize(
    ("kw", "field"),
    [({"duration": 0.0}, "duration"), ({"dt": 0.5}, "dt"), ({"w0": 0.5}, "w0"), ({"q0": 1e6}, "q0")],
)
def test_bad_simulation_parameters(kw, field):
    net = Network(n_flows=60, capacity=3750, prop_delay=0.2, buffer=800, response="reno")
    args = {"duration": 1.0, "w0": 10.0, "q0": 0.0} | kw
    with pytest.raises(DesignError) as err:
        simulate(net, StaticAQM.constant(0.01), args.pop("duration"), **args)
    assert err.value.field == field
