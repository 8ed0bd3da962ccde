"""Where fatpipe's helper binaries are (``fatpipe-bulk``, ``fatpipe-linkem``, ``fatpipe-depot``).

A light module (no third-party imports), so a command that only starts a binary stays quick.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fatpipe.exceptions import FatpipeError

__all__ = ["binary"]


def binary(name: str) -> str:
    """A fatpipe helper binary: ``$FATPIPE_BIN_DIR``, else the repository's release build, else PATH."""
    for d in (os.environ.get("FATPIPE_BIN_DIR"), str(Path(__file__).resolve().parents[2] / "target" / "release")):
        if d and (Path(d) / name).is_file():
            return str(Path(d) / name)
    found = shutil.which(name)
    if found:
        return found
    raise FatpipeError(f"{name} not found: build it with `cargo build --release -p {name}` (make build does)")
