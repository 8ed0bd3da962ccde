"""The one error of ``fatpipe.models``: a design or model asked for something that does not exist."""

from __future__ import annotations

__all__ = ["DesignError"]


class DesignError(ValueError):
    """An operating point, model or controller parameter that admits no valid design.

    ``field`` names the offending parameter (``"n_flows"``, ``"q0"``, ``"sample_hz"``, ...) and
    the message says why, e.g. ``q0: must lie in (0, buffer) = (0, 3333) (got 4000)``.
    A subclass of :class:`ValueError`, so callers that only know "bad value" still catch it.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.reason = message
        super().__init__(f"{field}: {message}")
