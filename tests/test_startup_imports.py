"""Start-up: `import fatpipe` and the quick commands load none of the heavy libraries.

pandas, pyarrow, matplotlib, scipy and dask together cost most of a second before anything
happens; they are imported where they are used (results, reports, models, clusters). This holds
the package to it by the modules a fresh interpreter has loaded, not by a timing (which a
loaded machine would make flaky).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "matplotlib", "scipy", "dask", "distributed")

# Runs the given CLI arguments (or just `import fatpipe`) in a fresh interpreter and prints, as
# its last stderr line, the top-level heavy modules it ended up with.
PROBE = """
import json, sys, contextlib, io
args = json.loads(sys.argv[1])
if args is None:
    import fatpipe
else:
    from fatpipe.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(args)
        except SystemExit as e:  # --help exits
            rc = e.code
    assert rc in (0, None), rc
watched = set(json.loads(sys.argv[2]))
heavy = sorted(({m.split(".")[0] for m in sys.modules} | set(sys.modules)) & watched)
print("HEAVY " + json.dumps(heavy), file=sys.stderr)
"""


def loaded_heavy_modules(args: list[str] | None, cwd, watched: tuple[str, ...] = HEAVY) -> list[str]:
    p = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), json.dumps(watched)],
                       capture_output=True, text=True, cwd=cwd, timeout=300)
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stderr.splitlines() if l.startswith("HEAVY ")][-1]
    return json.loads(line[len("HEAVY "):])


@pytest.mark.parametrize(
    "args",
    [
        None,
        ["--help"],
        ["--version"],
        ["algorithms"],
        ["algorithms", "cubic"],
        ["schema"],
        ["plan", "scenarios/reference-dumbbell.toml"],
        # A single run that writes nothing needs only the core and the summary.
        ["run", "scenarios/reference-dumbbell.toml", "--json", "--no-write", "--set", "duration=200ms"],
    ],
    ids=lambda a: "import fatpipe" if a is None else " ".join(a[:2]),
)
def test_no_heavy_imports(args, root):
    assert loaded_heavy_modules(args, root) == []


# The modules of the commands other than the core ones (fatpipe.cli.CORE_COMMANDS).
OTHER_COMMANDS = ("fatpipe.cli_experiments", "fatpipe.cli_studies", "fatpipe.cli_testbed",
                  "fatpipe.cli_depot", "fatpipe.bench_sweep")


@pytest.mark.parametrize("args", [["plan", "scenarios/reference-dumbbell.toml"], ["schema"],
                                  ["run", "scenarios/reference-dumbbell.toml", "--json", "--no-write",
                                   "--set", "duration=200ms"]], ids=lambda a: a[0])
def test_core_commands_build_only_their_parsers(args, root):
    assert loaded_heavy_modules(args, root, OTHER_COMMANDS) == []


def test_the_other_commands_are_still_parsed(root):
    assert loaded_heavy_modules(["--help"], root, OTHER_COMMANDS) == sorted(OTHER_COMMANDS)


def test_the_lazy_names_still_resolve():
    import fatpipe
    import fatpipe.experiments as ex
    import fatpipe.studies as st

    assert fatpipe.Sweep is ex.Sweep and fatpipe.Store is ex.Store and fatpipe.open_store is ex.open_store
    assert issubclass(fatpipe.SweepError, fatpipe.FatpipeError)
    assert issubclass(fatpipe.CorruptResultError, fatpipe.FatpipeError)
    assert issubclass(st.StudyError, fatpipe.FatpipeError)
    assert callable(st.reproduce) and callable(ex.summarize_sweep)
    assert set(fatpipe.__all__) <= set(dir(fatpipe))
    with pytest.raises(AttributeError):
        fatpipe.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", ["fatpipe", "fatpipe.experiments", "fatpipe.studies", "fatpipe.models"])
def test_no_lazy_name_is_also_a_submodule(package):
    """A lazy name that is also a submodule's name is shadowed by the module as soon as anything
    imports that submodule (the import system sets the package attribute), so the name's meaning
    would depend on import order: ``fatpipe.studies.reproduce`` once turned from the function into
    a module this way."""
    import importlib
    import pkgutil

    pkg = importlib.import_module(package)
    lazy = set(getattr(pkg, "_WHERE", {}) or getattr(pkg, "_LAZY", {}))
    assert lazy, f"{package} has no lazy-name table; update this test"
    submodules = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    assert not (lazy & submodules)
