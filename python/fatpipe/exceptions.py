"""The fatpipe exception hierarchy (raised from the compiled core, re-exported here).

``FatpipeError``
 ├── ``ScenarioError``            a malformed or inconsistent scenario; ``.path`` names the field
 │    ├── ``UnknownAlgorithmError`` a congestion control name or parameter that does not exist
 │    └── ``UnroutableError``       a flow whose endpoints are not connected
 └── ``SimulationError``          a run stopped by one of its limits (events, packets)
"""

from fatpipe._core import (
    FatpipeError,
    ScenarioError,
    SimulationError,
    UnknownAlgorithmError,
    UnroutableError,
)

__all__ = [
    "FatpipeError",
    "ScenarioError",
    "SimulationError",
    "UnknownAlgorithmError",
    "UnroutableError",
]
