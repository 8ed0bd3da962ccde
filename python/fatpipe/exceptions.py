"""The fatpipe exception hierarchy (raised from the compiled core, re-exported here).

``FatpipeError``
 ├── ``ScenarioError``            a malformed or inconsistent scenario; ``.path`` names the field
 │    ├── ``UnknownAlgorithmError`` a congestion control name or parameter that does not exist
 │    └── ``UnroutableError``       a flow whose endpoints are not connected
 ├── ``SimulationError``          a run stopped by one of its limits (events, packets)
 ├── ``SweepError``               a malformed sweep; ``.parameter`` names the key
 │                                (:mod:`fatpipe.experiments.sweep`)
 ├── ``CorruptResultError``       a stored run that fails its manifest check
 │                                (:mod:`fatpipe.experiments.store`)
 └── ``StudyError``               a malformed study folder or unknown study (:mod:`fatpipe.studies`)

Every bad input surfaces as one of these (the command line exits with status 2 for any of
them), never as another exception; a property-based test (tests/test_fuzz_inputs.py) holds the
scenario format to it.
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
    "scenario_error",
]


def scenario_error(path: str, message: str) -> ScenarioError:
    """A :class:`ScenarioError` raised from Python, shaped like the core's: ``.path`` names the
    field ("" for the whole file) and the message starts with it."""
    e = ScenarioError(f"{path}: {message}" if path else message)
    e.path = path  # type: ignore[attr-defined]
    e.line = None  # type: ignore[attr-defined]
    return e
