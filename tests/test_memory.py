"""Memory a user's process pays, not only the engine's own."""

import os
import subprocess
import sys

CODE = "import os, fatpipe; print(os.environ.get('MIMALLOC_ARENA_EAGER_COMMIT'))"


def _python(code: str, extra_env: dict[str, str] | None = None) -> str:
    """Run ``code`` in a fresh Python without our mimalloc settings (plus ``extra_env``); its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIMALLOC_")} | (extra_env or {})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return out.stdout.strip()


def _import_fatpipe(extra_env: dict[str, str]) -> str:
    return _python(CODE, extra_env)


def test_import_turns_off_mimallocs_eager_arena_commit_unless_the_user_set_it():
    """mimalloc's default eager commit took planning the 1 000-flow benchmark scenario to 286 MB
    of RSS for a ~10 MB live heap (and `fatpipe run` on it to 347 MB; 63 MB with lazy commit):
    `import fatpipe` selects lazy commit before the extension loads, and a user's own setting
    wins."""
    assert _import_fatpipe({}) == "0"
    assert _import_fatpipe({"MIMALLOC_ARENA_EAGER_COMMIT": "1"}) == "1"


#: Peak RSS bound for planning the 1 000-flow benchmark scenario in a fresh process. Measured
#: 27 MB (2026-11-28); with mimalloc's eager arena commit, the regression this guards, 288 MB.
#: The bound sits well between the two so that another machine's Python and libraries cannot
#: trip it while the regression still does.
PLANNING_RSS_BOUND_MB = 100


def test_planning_many_flows_stays_small_in_its_own_process():
    """Peak memory of planning in a fresh process, read by that process itself from
    /proc/self/status (VmHWM: its own address space's high-water mark). Neither
    `RUSAGE_CHILDREN` nor `os.wait4` would do: Linux folds the spawning process's high-water mark
    into a vfork'd child's at exec, so inside a long pytest session (hundreds of MB) every child
    looked as large as pytest itself, which once made this look like a leak."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scenario = os.path.join(root, "scenarios", "many-flows.toml")
    code = (f"import fatpipe; fatpipe.Scenario.load({scenario!r}).plan(); "
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1])")
    peak_mb = int(_python(code)) / 1024  # kB
    assert peak_mb < PLANNING_RSS_BOUND_MB, f"planning took {peak_mb:.0f} MB"
