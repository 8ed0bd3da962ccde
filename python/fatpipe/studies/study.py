"""Loading a study folder (``study.toml``) and finding studies."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fatpipe.studies import StudyError
from fatpipe.studies.targets import Target

__all__ = ["Study", "studies_dir", "list_studies", "load_study"]

MODES = ("quick", "full")
#: Modes a study may offer besides those: "demo", a slice of a couple of minutes (`make demo`).
OPTIONAL_MODES = ("demo",)


@dataclass
class Mode:
    """One way to run a study: sweep files by role, replications, and what it scales down."""

    sweeps: dict[str, Path]
    #: Replications of every sweep; None: each sweep file's own (``replications`` left out).
    replications: int | None
    description: str = ""
    #: Settings handed to the study's analysis module (``[modes.<m>] analysis = {...}``).
    analysis: dict[str, Any] = field(default_factory=dict)
    #: Time series each sweep's page draws (``report_series``; default: the first and last point's
    #: first run). A study with many sweeps whose analysis draws its own figures may set 0.
    report_series: int | None = None


@dataclass
class Study:
    name: str
    path: Path
    title: str
    source: str
    modes: dict[str, Mode]
    targets: list[Target] = field(default_factory=list)
    #: Dotted name of a module that evaluates the study's own targets and adds report sections
    #: (see fatpipe.studies.reproduction: ``evaluate`` and ``report_sections``), or None.
    analysis: str | None = None

    def analysis_module(self) -> Any:
        """The imported analysis module, or None when the study declares none."""
        if not self.analysis:
            return None
        import importlib

        try:
            mod = importlib.import_module(self.analysis)
        except ImportError as e:
            raise StudyError(f"{self.name}: analysis module {self.analysis!r} cannot be imported: {e}") from None
        if not callable(getattr(mod, "evaluate", None)):
            raise StudyError(f"{self.name}: analysis module {self.analysis!r} has no evaluate(store, outcomes, mode)")
        return mod

    def readme(self) -> Path:
        return self.path / "README.md"


def studies_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """``override``, else ``$FATPIPE_STUDIES``, else the repository's ``studies/`` folder."""
    if override:
        return Path(override)
    env = os.environ.get("FATPIPE_STUDIES")
    if env:
        return Path(env)
    import fatpipe

    return Path(fatpipe.__file__).resolve().parents[2] / "studies"


_SETTINGS: dict[str, Any] = {}


def study_settings(name: str):
    """``studies/NAME/make_sweeps.py`` as a module, imported once: a study's single source of
    settings, which its analysis reads. Where ``$FATPIPE_STUDIES`` points at a folder without
    it, the repository's copy."""
    if name in _SETTINGS:
        return _SETTINGS[name]
    import importlib.util

    path = studies_dir() / name / "make_sweeps.py"
    if not path.is_file():
        import fatpipe

        path = Path(fatpipe.__file__).resolve().parents[2] / "studies" / name / "make_sweeps.py"
    spec = importlib.util.spec_from_file_location(f"{name}_make_sweeps", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _SETTINGS[name] = mod
    return mod


def list_studies(root: str | os.PathLike[str] | None = None) -> list[str]:
    d = studies_dir(root)
    return sorted(p.parent.name for p in d.glob("*/study.toml")) if d.is_dir() else []


def load_study(name: str, root: str | os.PathLike[str] | None = None) -> Study:
    d = studies_dir(root)
    path = d / name
    if not (path / "study.toml").is_file():
        known = ", ".join(list_studies(root)) or "(none)"
        raise StudyError(f"no study {name!r} in {d}; available: {known}")
    from fatpipe.files import read_text

    text = read_text(path / "study.toml", "study file", StudyError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StudyError(f"{path / 'study.toml'}: {e}") from None
    modes = {}
    for m in MODES + OPTIONAL_MODES:
        spec = data.get("modes", {}).get(m)
        if spec is None:
            if m in OPTIONAL_MODES:
                continue
            raise StudyError(f"{name}: study.toml needs [modes.{m}]")
        sweeps = {role: path / f for role, f in spec.get("sweeps", {}).items()}
        for role, f in sweeps.items():
            if not f.is_file():
                raise StudyError(f"{name}: modes.{m}.sweeps.{role}: no file {f}")
        opts = spec.get("analysis", {})
        if not isinstance(opts, dict):
            raise StudyError(f"{name}: modes.{m}.analysis must be a table")
        reps = spec.get("replications")
        if reps is not None and (isinstance(reps, bool) or not isinstance(reps, int) or reps < 1):
            raise StudyError(f"{name}: modes.{m}.replications must be a positive integer (or left out: "
                             f"each sweep file's own), got {reps!r}")
        series = spec.get("report_series")
        if series is not None and (isinstance(series, bool) or not isinstance(series, int) or series < 0):
            raise StudyError(f"{name}: modes.{m}.report_series must be a non-negative integer, got {series!r}")
        modes[m] = Mode(sweeps, reps, str(spec.get("description", "")), dict(opts), series)
    targets = [Target.from_dict(t, path) for t in data.get("targets", [])]
    for t in targets:
        for m in modes:
            if t.sweep not in modes[m].sweeps:
                raise StudyError(f"{name}: target {t.id} names sweep role {t.sweep!r}, "
                                 f"which modes.{m}.sweeps does not define")
    analysis = data.get("analysis")
    if analysis is not None and not isinstance(analysis, str):
        raise StudyError(f"{name}: `analysis` must be a module name (a string)")
    study = Study(name, path, str(data.get("title", name)), str(data.get("source", "")), modes, targets, analysis)
    study.analysis_module()  # fail at load time, not after the sweeps, if the module is wrong
    return study
