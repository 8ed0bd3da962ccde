"""The de Santi, da Fonseca & Lima (~2008) reproduction: RED vs HSTCP-H2 (seed 003).

``studies/desanti2008/make_sweeps.py`` is the single source of the study's settings (queues,
traffic, loads); :func:`make_sweeps_module` imports it for the analysis.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

_loaded: list[ModuleType] = []


def make_sweeps_module() -> ModuleType:
    """``studies/desanti2008/make_sweeps.py`` as a module (imported once)."""
    if _loaded:
        return _loaded[0]
    from fatpipe.studies import studies_dir

    path = studies_dir() / "desanti2008" / "make_sweeps.py"
    spec = importlib.util.spec_from_file_location("desanti2008_make_sweeps", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _loaded.append(mod)
    return mod
