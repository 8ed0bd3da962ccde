"""Fluid models of TCP/AQM and AQM controller design (issue 10; seed 003, de Santi et al.), and
the TCP-logistics model of relay chains (issue 12; seed 002, Augusto et al.).

Not imported by ``import fatpipe``: ``import fatpipe.models`` when you need it. The modeling parts
use numpy only; the design parts (:mod:`~fatpipe.models.design`,
:mod:`~fatpipe.models.closed_loop`) import scipy on first use.

=====================  ===================================================================
``hstcp``              a(W), b(W): RFC 3649 HSTCP, the seed's Eq. 2, Reno
``network``            :class:`Network` (N, C, T_p, buffer, AIMD law)
``fluid``              the delay-differential fluid model (seed Eqs. 3–5), integrated
``linear``             equilibrium (W0, q0, p0) and the linearised delayed plant
``discrete``           the HSTCP-H2 difference equation (Algorithm 1) and ns-2's PI
``design``             H2 synthesis, Hollot's PI design, discretisation
``closed_loop``        stability, margins, fluid runs with a designed controller
``logistics``          seed 002's TCP-logistics model: Eqs. 1-4, Figures 4 and 5, any
                       relay chain's prediction (pure Python: ``from fatpipe.models import
                       logistics``)
=====================  ===================================================================

See ``docs/models.md`` for the equations, every design choice and the comparison with the paper.
"""

from __future__ import annotations

from typing import Any

from fatpipe.models.discrete import PAPER_H2, H2Controller, PIController, controller_from_dict
from fatpipe.models.errors import DesignError
from fatpipe.models.fluid import FluidResult, SampledAQM, StaticAQM, rhs, simulate
from fatpipe.models.hstcp import Response, response
from fatpipe.models.linear import LinearPlant, OperatingPoint, equilibrium, linearize
from fatpipe.models.network import Network, capacity_pkts

_LAZY = {
    "design_h2": "fatpipe.models.design",
    "H2Weights": "fatpipe.models.design",
    "paper_comparison": "fatpipe.models.design",
    "paper_weights": "fatpipe.models.design",
    "onoff_noise": "fatpipe.models.design",
    "discrete_tf": "fatpipe.models.closed_loop",
    "design_pi": "fatpipe.models.design",
    "H2Design": "fatpipe.models.design",
    "PIDesign": "fatpipe.models.design",
    "paper_operating_point": "fatpipe.models.design",
    "loop_margins": "fatpipe.models.closed_loop",
    "closed_loop_poles": "fatpipe.models.closed_loop",
    "run_closed_loop": "fatpipe.models.closed_loop",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fatpipe.models' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "DesignError",
    "FluidResult",
    "H2Controller",
    "LinearPlant",
    "Network",
    "OperatingPoint",
    "PAPER_H2",
    "PIController",
    "Response",
    "SampledAQM",
    "StaticAQM",
    "capacity_pkts",
    "controller_from_dict",
    "equilibrium",
    "linearize",
    "response",
    "rhs",
    "simulate",
    *_LAZY,
]
