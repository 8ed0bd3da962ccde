"""Scenarios: load a TOML file or build one in code; the Rust core is the single validator."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from fatpipe import _core
from fatpipe.aqm_design import expand_designs
from fatpipe.exceptions import scenario_error
from fatpipe.files import read_text
from fatpipe.seeds import check_seed


class Scenario:
    """A scenario: TOML text plus ``key=value`` overrides, validated by the core on creation.

    Examples
    --------
    >>> import fatpipe
    >>> sc = fatpipe.Scenario.dumbbell(pairs=2, rate="10Mbps", delay="10ms", buffer="50pkt",
    ...                                duration="5s")
    >>> sc.with_overrides("topology.pairs=3").plan(seed=1)["flows"][2]["src"]
    's2'
    """

    def __init__(self, text: str, overrides: Iterable[str] = (), *, source: str | None = None):
        if not isinstance(text, str):
            raise scenario_error("", f"scenario text must be a str (TOML), got {type(text).__name__}")
        if isinstance(overrides, str):
            overrides = [overrides]  # one assignment, not its characters
        self.text = text
        self.overrides: list[str] = list(overrides)
        for o in self.overrides:
            if not isinstance(o, str):
                raise scenario_error("--set", f"{o!r} is not a key=value string")
        self.source = source
        # H2/PI queues with a `design = {...}` table are designed here (fatpipe.models), before
        # the core sees them; `text` and `overrides` keep what was given (docs/aqm.md).
        self._core_text, self._core_overrides = expand_designs(self.text, self.overrides)
        # Validate now so mistakes surface where the scenario is made.
        self.normalized = _core.validate(self._core_text, self._core_overrides)

    def core_args(self) -> tuple[str, list[str]]:
        """The text and overrides the core runs: as given, or, when a queue has a ``design``
        table, the normalised scenario with every design expanded into coefficients."""
        return self._core_text, list(self._core_overrides)

    # ---- constructors ------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str], overrides: Iterable[str] = ()) -> "Scenario":
        """Load a scenario file (TOML). A file that cannot be read as UTF-8 text is a
        :class:`fatpipe.ScenarioError` naming it."""
        p = Path(path)
        text = read_text(p, "scenario file", lambda msg: scenario_error("", msg))
        return cls(text, overrides, source=str(p))

    @classmethod
    def from_toml(cls, text: str, overrides: Iterable[str] = ()) -> "Scenario":
        return cls(text, overrides)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], overrides: Iterable[str] = ()) -> "Scenario":
        """Build from a nested dict with the same keys as the TOML file."""
        return cls(_core.json_to_toml(json.dumps(data)), overrides)

    @classmethod
    def dumbbell(
        cls,
        *,
        pairs: int = 1,
        rate: str = "100Mbps",
        delay: str = "50ms",
        buffer: str | None = None,
        access_rate: str | None = None,
        access_delay: str = "1ms",
        cc: str = "reno",
        recovery: str = "sack",
        duration: str = "30s",
        start_spread: str = "0s",
        **tcp: Any,
    ) -> "Scenario":
        """A dumbbell of ``pairs`` bulk flows; ``buffer=None`` sizes the bottleneck queue to one
        bandwidth-delay product. Extra keyword arguments go to ``[tcp]``."""
        bottleneck: dict[str, Any] = {"rate": rate, "delay": delay}
        if buffer is not None:
            bottleneck["queue"] = {"kind": "droptail", "limit": buffer}
        topo: dict[str, Any] = {"kind": "dumbbell", "pairs": pairs, "bottleneck": bottleneck}
        if access_rate is not None:
            topo["access"] = {"rate": access_rate, "delay": access_delay}
        data = {
            "name": f"dumbbell-{cc}-{pairs}",
            "duration": duration,
            "topology": topo,
            "tcp": {"cc": cc, "recovery": recovery, **tcp},
            "flows": [{"kind": "bulk", "start_spread": start_spread}],
        }
        return cls.from_dict(data)

    # ---- derived -------------------------------------------------------------------------------
    def with_overrides(self, *assignments: str) -> "Scenario":
        """A copy with more ``key=value`` overrides (as ``fatpipe run --set``)."""
        return Scenario(self.text, [*self.overrides, *assignments], source=self.source)

    def plan(self, seed: int | None = None) -> dict[str, Any]:
        """The elaborated run plan (explicit nodes, links, flows) — see docs/plan-and-results.md."""
        if seed is not None:
            seed = check_seed(seed)
        return json.loads(_core.plan(self._core_text, self._core_overrides, seed))

    def to_toml(self) -> str:
        """The scenario with overrides applied, as TOML."""
        return self.normalized

    @property
    def name(self) -> str:
        return str(self.plan().get("name", "scenario"))

    def __repr__(self) -> str:
        src = f" from {self.source}" if self.source else ""
        return f"<Scenario{src} overrides={self.overrides}>"
