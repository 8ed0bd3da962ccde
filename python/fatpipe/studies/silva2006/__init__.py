"""The da Silva (2006) reproduction: high-speed TCP variants in real, emulated and simulated
environments (seed 004).

``studies/silva2006/make_sweeps.py`` is the single source of the study's settings (the
dissertation's tables, the script's rules, every inferred parameter); :func:`settings` imports it
for the analysis and the arithmetic targets.
"""

from __future__ import annotations

from types import ModuleType


def settings() -> ModuleType:
    """``studies/silva2006/make_sweeps.py`` as a module (imported once)."""
    from fatpipe.studies.study import study_settings

    return study_settings("silva2006")
