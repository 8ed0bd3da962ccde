"""The da Silva (2006) reproduction: high-speed TCP variants in real, emulated and simulated
environments (seed 004).

``studies/silva2006/make_sweeps.py`` is the single source of the study's settings (the
dissertation's tables, the script's rules, every inferred parameter); :func:`settings` imports it
for the analysis and the arithmetic targets.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

_loaded: list[ModuleType] = []


def settings() -> ModuleType:
    """``studies/silva2006/make_sweeps.py`` as a module (imported once)."""
    if _loaded:
        return _loaded[0]
    from fatpipe.studies import studies_dir

    path = studies_dir() / "silva2006" / "make_sweeps.py"
    if not path.is_file():  # FATPIPE_STUDIES points elsewhere: the repository's copy
        from pathlib import Path

        path = Path(__file__).resolve().parents[4] / "studies" / "silva2006" / "make_sweeps.py"
    spec = importlib.util.spec_from_file_location("silva2006_make_sweeps", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _loaded.append(mod)
    return mod
