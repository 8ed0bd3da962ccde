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
    code = (f"import fatpipe; from fatpipe.peak_memory import vm_hwm_bytes; "
            f"fatpipe.Scenario.load({scenario!r}).plan(); print(vm_hwm_bytes())")
    peak_mb = int(_python(code)) / 2**20
    assert peak_mb < PLANNING_RSS_BOUND_MB, f"planning took {peak_mb:.0f} MB"


#: Ballast the spawning process holds (touched, so resident) before it starts the children below.
BALLAST_MB = 400

SPAWN_FROM_A_LARGE_PROCESS = """
import json, os, shutil, subprocess, sys
ballast = b"\\x01" * ({ballast} << 20)  # resident: bytes() writes every page
sc = {scenario!r}
exe = os.path.join(os.path.dirname(sys.executable), "fatpipe")
p = subprocess.Popen([exe, "run", sc, "--json", "--no-write", "-q", "--set", "duration=1s"],
                     stdout=subprocess.PIPE)
out = p.stdout.read()
_, status, usage = os.wait4(p.pid, 0)
res = {{"fatpipe": (json.loads(out)["peak_rss_bytes"], usage.ru_maxrss * 1024)}}
if shutil.which("ns"):
    import resource
    import fatpipe
    from fatpipe.peers import ns2
    r = ns2.run_plan(fatpipe.Scenario.load(sc, ["duration=1s"]).plan(), fast_headers=True)
    res["ns-2"] = (r["peak_rss_bytes"], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
print(json.dumps(res))
"""


def test_simulators_report_their_own_peak_memory_not_their_spawners():
    """`fatpipe run --json` and the ns-2 peer report the simulator process's own peak memory
    (`fatpipe.peak_memory`), which `fatpipe bench --table` prints. Started from a process holding
    400 MB, each child's `ru_maxrss` is at least that (Linux folds the spawner's high-water mark
    in at exec: the figure the table used to print), while its own peak is its size. Measured
    (2026-11-28, reference dumbbell for 1 s): fatpipe 19 MB own against 412 MB by `ru_maxrss`,
    ns 19 MB against 422 MB. The 200 MB bound is far from both."""
    import json

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    scenario = os.path.join(root, "scenarios", "reference-dumbbell.toml")
    res = json.loads(_python(SPAWN_FROM_A_LARGE_PROCESS.format(ballast=BALLAST_MB, scenario=scenario)))
    for sim, (own, rusage) in res.items():
        assert rusage >= BALLAST_MB << 20, f"{sim}: the premise (ru_maxrss carries the spawner's peak) no longer holds"
        assert 1 << 20 < own < 200 << 20, f"{sim}: own peak {own / 2**20:.0f} MB, ru_maxrss {rusage / 2**20:.0f} MB"
