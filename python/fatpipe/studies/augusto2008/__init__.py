"""The Augusto et al. (2008) reproduction: TCP connection segmentation through depots (seed 002).

``studies/augusto2008/make_sweeps.py`` is the single source of the study's settings (the paper's
numbers, every choice it leaves open, what quick mode scales down); :func:`settings` imports it
for the analysis.
"""

from __future__ import annotations

from types import ModuleType


def settings() -> ModuleType:
    """``studies/augusto2008/make_sweeps.py`` as a module (imported once)."""
    from fatpipe.studies.study import study_settings

    return study_settings("augusto2008")
