"""The Augusto et al. (2008) reproduction: TCP connection segmentation through depots (seed 002).

``studies/augusto2008/make_sweeps.py`` is the single source of the study's settings (the paper's
numbers, every choice it leaves open, what quick mode scales down); :func:`settings` imports it
for the analysis.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

_loaded: list[ModuleType] = []


def settings() -> ModuleType:
    """``studies/augusto2008/make_sweeps.py`` as a module (imported once)."""
    if _loaded:
        return _loaded[0]
    from fatpipe.studies import studies_dir

    path = studies_dir() / "augusto2008" / "make_sweeps.py"
    if not path.is_file():  # FATPIPE_STUDIES points elsewhere: the repository's copy
        path = Path(__file__).resolve().parents[4] / "studies" / "augusto2008" / "make_sweeps.py"
    spec = importlib.util.spec_from_file_location("augusto2008_make_sweeps", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _loaded.append(mod)
    return mod
