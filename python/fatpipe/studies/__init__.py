"""Study reproductions: ``fatpipe reproduce <study>``.

A study is a folder ``studies/<name>/`` with ``study.toml`` (title, source, modes with their sweep
files and replications, reproduction targets), the sweep files, reference values as CSV files and
a README. :func:`reproduce` runs the sweeps into a results store (reusing finished runs),
evaluates every target (holds / does not hold / not comparable, with the numbers) and writes a
report that puts reference and reproduction side by side.

The names below are imported on first use: the targets and the report need numpy, pandas and
matplotlib, which the command line does not need to start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fatpipe.exceptions import FatpipeError

if TYPE_CHECKING:
    from fatpipe.studies.reproduction import reproduce
    from fatpipe.studies.study import Study, list_studies, load_study, studies_dir
    from fatpipe.studies.targets import Target, Verdict


class StudyError(FatpipeError, ValueError):
    """A malformed study folder or an unknown study name."""


_WHERE = {
    "Study": "study",
    "list_studies": "study",
    "load_study": "study",
    "studies_dir": "study",
    "Target": "targets",
    "Verdict": "targets",
    "reproduce": "reproduction",
}

__all__ = ["StudyError", *sorted(_WHERE)]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'fatpipe.studies' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"fatpipe.studies.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
