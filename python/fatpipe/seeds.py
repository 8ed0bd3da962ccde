"""Seeds: the core draws every random stream from an unsigned 64-bit seed.

Python integers are unbounded, so a seed is checked here before it reaches the core, where a
negative or too large one would fail converting (an ``OverflowError``, not a fatpipe error).
"""

from __future__ import annotations

import operator
from typing import Any

from fatpipe.exceptions import scenario_error

#: The largest seed: 2^64 - 1.
MAX_SEED = 2**64 - 1


def check_seed(seed: Any, path: str = "seed") -> int:
    """``seed`` as an int in [0, 2^64 - 1], else a :class:`fatpipe.ScenarioError` naming ``path``."""
    if isinstance(seed, bool):
        raise scenario_error(path, f"{seed!r} is not a seed; give an integer from 0 to {MAX_SEED}")
    try:
        value = operator.index(seed)  # ints and integer types such as numpy's, never floats
    except TypeError:
        raise scenario_error(path, f"{seed!r} is not a seed; give an integer from 0 to {MAX_SEED}") from None
    if not 0 <= value <= MAX_SEED:
        raise scenario_error(path, f"{value} is out of range; a seed is an integer from 0 to {MAX_SEED} (2^64 - 1)")
    return value
