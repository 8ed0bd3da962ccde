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


@dataclass
class Mode:
    """One way to run a study: sweep files by role, replications, and what it scales down."""

    sweeps: dict[str, Path]
    replications: int
    description: str = ""


@dataclass
class Study:
    name: str
    path: Path
    title: str
    source: str
    modes: dict[str, Mode]
    targets: list[Target] = field(default_factory=list)

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


def list_studies(root: str | os.PathLike[str] | None = None) -> list[str]:
    d = studies_dir(root)
    return sorted(p.parent.name for p in d.glob("*/study.toml")) if d.is_dir() else []


def load_study(name: str, root: str | os.PathLike[str] | None = None) -> Study:
    d = studies_dir(root)
    path = d / name
    if not (path / "study.toml").is_file():
        known = ", ".join(list_studies(root)) or "(none)"
        raise StudyError(f"no study {name!r} in {d}; available: {known}")
    try:
        data = tomllib.loads((path / "study.toml").read_text())
    except tomllib.TOMLDecodeError as e:
        raise StudyError(f"{path / 'study.toml'}: {e}") from None
    modes = {}
    for m in MODES:
        spec = data.get("modes", {}).get(m)
        if spec is None:
            raise StudyError(f"{name}: study.toml needs [modes.{m}]")
        sweeps = {role: path / f for role, f in spec.get("sweeps", {}).items()}
        for role, f in sweeps.items():
            if not f.is_file():
                raise StudyError(f"{name}: modes.{m}.sweeps.{role}: no file {f}")
        modes[m] = Mode(sweeps, int(spec.get("replications", 1)), str(spec.get("description", "")))
    targets = [Target.from_dict(t, path) for t in data.get("targets", [])]
    for t in targets:
        for m in MODES:
            if t.sweep not in modes[m].sweeps:
                raise StudyError(f"{name}: target {t.id} names sweep role {t.sweep!r}, "
                                 f"which modes.{m}.sweeps does not define")
    return Study(name, path, str(data.get("title", name)), str(data.get("source", "")), modes, targets)
