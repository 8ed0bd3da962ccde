"""Memory a user's process pays, not only the engine's own."""

import os
import subprocess
import sys

CODE = "import os, fatpipe; print(os.environ.get('MIMALLOC_ARENA_EAGER_COMMIT'))"


def _import_fatpipe(extra_env: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")} | extra_env
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True, env=env)
    return out.stdout.strip()


def test_import_turns_off_mimallocs_eager_arena_commit_unless_the_user_set_it():
    """mimalloc's default eager commit took planning the 1 000-flow benchmark scenario to 286 MB
    of RSS for a ~10 MB live heap (and `fatpipe run` on it to 347 MB; 63 MB with lazy commit):
    `import fatpipe` selects lazy commit before the extension loads, and a user's own setting
    wins."""
    assert _import_fatpipe({}) == "0"
    assert _import_fatpipe({"MIMALLOC_ARENA_EAGER_COMMIT": "1"}) == "1"
