"""The hand-written stub `_core.pyi` matches the compiled module (mypy.stubtest)."""

import subprocess
import sys


def test_core_stub_matches_runtime():
    p = subprocess.run([sys.executable, "-m", "mypy.stubtest", "fatpipe._core"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
