"""Type stub of the compiled module ``fatpipe._core`` (checked with ``mypy.stubtest`` in tests)."""

from typing import Any, Callable

__version__: str
__all__ = [
    "__version__",
    "FatpipeError",
    "ScenarioError",
    "UnknownAlgorithmError",
    "UnroutableError",
    "SimulationError",
    "validate",
    "plan",
    "run",
    "schema",
    "json_to_toml",
    "cc_algorithms",
]

class FatpipeError(Exception): ...
class ScenarioError(FatpipeError): ...
class UnknownAlgorithmError(ScenarioError): ...
class UnroutableError(ScenarioError): ...
class SimulationError(FatpipeError): ...

def validate(text: str, sets: list[str] = ...) -> str: ...
def plan(text: str, sets: list[str] = ..., seed: int | None = ...) -> str: ...
def json_to_toml(json: str) -> str: ...
def schema() -> str: ...
def cc_algorithms() -> list[tuple[str, str, str, list[tuple[str, str, str, str]]]]: ...
def run(
    text: str,
    sets: list[str] = ...,
    seed: int | None = ...,
    progress: Callable[[float, float], Any] | None = ...,
) -> dict[str, Any]: ...
