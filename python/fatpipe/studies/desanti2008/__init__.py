"""The de Santi, da Fonseca & Lima (~2008) reproduction: RED vs HSTCP-H2 (seed 003).

``studies/desanti2008/make_sweeps.py`` is the single source of the study's settings (queues,
traffic, loads); :func:`make_sweeps_module` imports it for the analysis.
"""

from __future__ import annotations

from types import ModuleType


def make_sweeps_module() -> ModuleType:
    """``studies/desanti2008/make_sweeps.py`` as a module (imported once)."""
    from fatpipe.studies.study import study_settings

    return study_settings("desanti2008")
