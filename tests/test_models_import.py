"""``import fatpipe`` stays light: no scipy, no control, no fatpipe.models; ``fatpipe.models``
itself is numpy-only until a design is asked for."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    return set(out.stdout.split())


def test_import_fatpipe_does_not_import_scipy_or_models():
    mods = modules_after("import fatpipe")
    assert not any(m == "scipy" or m.startswith("scipy.") for m in mods)
    assert "control" not in mods and "fatpipe.models" not in mods


def test_models_imports_scipy_only_for_design():
    mods = modules_after("import fatpipe.models as m\nm.simulate")
    assert not any(m == "scipy" or m.startswith("scipy.") for m in mods)
    mods = modules_after("import fatpipe.models as m\nm.design_h2")
    assert "scipy.linalg" in mods
