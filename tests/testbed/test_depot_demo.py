"""The README's one-line download through a 2-depot chain on the testbed (`fatpipe depot demo --
curl -L ...`), run exactly as the README writes it (root only; skipped with the testbed's reason
otherwise): the file lands in the current directory with the SHA-256 the demo prints."""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_line() -> str:
    lines = [l for l in README.read_text().splitlines() if l.startswith("fatpipe depot demo ")]
    assert len(lines) == 1, "the README has one `fatpipe depot demo` line"
    return lines[0].split("#", 1)[0].strip()


def test_the_readme_line_downloads_through_two_depots(netns_or_skip, tmp_path):
    argv = shlex.split(_readme_line())
    assert argv[:3] == ["fatpipe", "depot", "demo"] and "curl" in argv and "-L" in argv
    fatpipe_cli = Path(sys.executable).with_name("fatpipe")
    r = subprocess.run([str(fatpipe_cli), *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"serves demo\.bin, (\d+) bytes, sha256 ([0-9a-f]{64})", r.stdout)
    assert m, r.stdout
    got = (tmp_path / "demo.bin").read_bytes()
    assert len(got) == int(m.group(1)) and hashlib.sha256(got).hexdigest() == m.group(2)
    # Each depot relayed the whole file from the hop before it.
    relayed = re.findall(r"depot (d\d) \S+ relayed (\d+) bytes", r.stdout)
    assert sorted(relayed) == [("d1", m.group(1)), ("d2", m.group(1))], r.stdout
