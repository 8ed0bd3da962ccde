"""Type stub of the compiled module ``fatpipe._core`` (checked with ``mypy.stubtest`` in tests)."""

from typing import Any, Callable

__version__: str
#: "pgo" for the profile-guided build (`make build-pgo`), else "release".
BUILD: str
__all__ = [
    "__version__",
    "BUILD",
    "FatpipeError",
    "ScenarioError",
    "UnknownAlgorithmError",
    "UnroutableError",
    "SimulationError",
    "validate",
    "normalize",
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
def normalize(text: str, sets: list[str] = ...) -> str: ...
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
