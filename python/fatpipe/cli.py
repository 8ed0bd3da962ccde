"""The ``fatpipe`` command line.

Exit status: 0 success, 2 bad input (a malformed scenario, an unknown algorithm, an unroutable flow,
a run over its limits), 130 interrupted.

Start-up matters here (``fatpipe --help`` should answer at once): this module and the command
modules import only the light parts of the package at load time; pandas, pyarrow, matplotlib,
scipy and dask are imported inside the commands that use them.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import fatpipe
from fatpipe.exceptions import FatpipeError, ScenarioError


def _progress_reporter(quiet: bool):
    """A progress callback that shows a bar only once a run has taken more than a second."""
    state: dict[str, Any] = {"t0": time.monotonic(), "bar": None, "task": None}

    def cb(now_s: float, end_s: float) -> None:
        if quiet:
            return
        if state["bar"] is None:
            if time.monotonic() - state["t0"] < 1.0:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            from rich.console import Console

            bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            state["bar"], state["task"] = bar, bar.add_task("run", total=end_s)
        state["bar"].update(state["task"], completed=now_s)

    def close() -> None:
        if state["bar"] is not None:
            state["bar"].stop()

    return cb, close


def _print_summary(summary: dict[str, Any], out_dir: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    c = Console()
    t = Table(title=f"{summary['name']} — seed {summary['seed']}, {summary['sim_s']:g} s simulated")
    for col in ("flow", "path", "cc", "goodput (Mb/s)", "retransmits", "timeouts"):
        t.add_column(col, justify="right" if col not in ("path", "cc") else "left")
    for f in summary["flows"]:
        t.add_row(
            str(f["flow_id"]), f"{f['src']}->{f['dst']}", f["cc"], f"{f['goodput_bps'] / 1e6:.3f}",
            str(f["retransmits"]), str(f["timeouts"]),
        )
    c.print(t)
    if summary.get("segments"):
        seg = Table(title="relay segments (depot at the receiving end: most held / buffer)")
        for col in ("flow", "seg", "path", "cc", "goodput (Mb/s)", "retransmits", "depot (MB)"):
            seg.add_column(col, justify="right" if col not in ("path", "cc") else "left")
        for g in summary["segments"]:
            buf = f"{g['buffer_max_bytes'] / 1e6:.2f}/{g['buffer_bytes'] / 1e6:.2f}" if g["depot"] else "sink"
            seg.add_row(str(g["flow_id"]), str(g["segment"]), f"{g['src']}->{g['dst']}", g["cc"],
                        f"{g['goodput_bps'] / 1e6:.3f}", str(g["retransmits"]), buf)
        c.print(seg)
    util = summary["utilisation"]
    c.print(
        f"aggregate goodput {summary['aggregate_goodput_bps'] / 1e6:.2f} Mb/s · bottleneck {summary['bottleneck']} "
        f"utilisation {util * 100:.1f}% · drops {summary['drops']} · retransmits {summary['retransmits']}"
        if util is not None
        else f"aggregate goodput {summary['aggregate_goodput_bps'] / 1e6:.2f} Mb/s · drops {summary['drops']}"
    )
    pps = summary["packets_per_wall_s"]
    c.print(
        f"{summary['events']:,} events · {summary['packets_delivered']:,} data packets delivered · "
        f"{summary['wall_s']:.2f} s wall" + (f" · {pps / 1e6:.2f} M packets/s" if pps else "")
    )
    for w in summary.get("warnings", []):
        c.print(f"[yellow]warning:[/yellow] {w}")
    if out_dir is not None:
        c.print(f"results: {out_dir}/  ·  report: {out_dir}/report/report.html")


def cmd_run(args: argparse.Namespace) -> int:
    scenario = fatpipe.Scenario.load(args.file, args.set or [])
    cb, close = _progress_reporter(args.quiet or args.json)
    t0 = time.monotonic()
    try:
        result = fatpipe.run(scenario, seed=args.seed, progress=cb)
    finally:
        close()
    wall = time.monotonic() - t0
    out_dir = None
    if not args.no_write:
        out_dir = Path(args.out) if args.out else Path("out") / f"{result.plan['name']}-seed{result.seed}"
        command = "fatpipe " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else None
        from fatpipe.output import write_results

        write_results(out_dir, result, scenario, wall_s=wall, command=command, report=not args.no_report)
    summary = result.summary
    if args.json:
        if out_dir is not None:
            summary["out_dir"] = str(out_dir)
        from fatpipe.peak_memory import vm_hwm_bytes

        summary["peak_rss_bytes"] = vm_hwm_bytes()
        print(json.dumps(summary))
    else:
        _print_summary(summary, out_dir)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    scenario = fatpipe.Scenario.load(args.file, args.set or [])
    print(json.dumps(scenario.plan(args.seed), indent=2))
    return 0


def cmd_schema(_args: argparse.Namespace) -> int:
    print(fatpipe.schema())
    return 0


def cmd_algorithms(args: argparse.Namespace) -> int:
    details = fatpipe.algorithm_details()
    if args.name is None and not args.params:
        for a in details:
            print(f"{a['name']:12s} {a['summary']}")
        print("\n`fatpipe algorithms NAME` shows an algorithm's citation and parameters ([tcp.cc_params]).")
        return 0
    if args.name is not None:
        chosen = [a for a in details if a["name"] == args.name]
        if not chosen:
            known = ", ".join(a["name"] for a in details)
            print(f"error: unknown congestion control {args.name!r}; known: {known}", file=sys.stderr)
            return 2
        details = chosen
    for a in details:
        print(f"{a['name']}: {a['summary']}")
        print(f"  source: {a['citation']}")
        if not a["params"]:
            print("  parameters: none")
        for p in a["params"]:
            unit = f" [{p['unit']}]" if p["unit"] not in ("", "1") else ""
            print(f"  {p['name']} = {p['default']}{unit}")
            print(f"      {p['doc']}")
        print()
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.sweep:
        from fatpipe.bench_sweep import main as bench_sweep_main

        return bench_sweep_main(args)
    if args.table:
        from fatpipe.bench_table import main as table_main

        return table_main(args)
    from fatpipe.bench import main as bench_main

    return bench_main(args)


#: Commands whose parser needs none of the other commands' modules: `fatpipe run FILE` and its
#: kin build only these subparsers (the others' imports and argparse set-up cost about 55 ms of
#: a run's start-up).
CORE_COMMANDS = ("run", "plan", "schema", "algorithms")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser; with ``command`` one of :data:`CORE_COMMANDS`, only the core
    commands' subparsers (enough to parse that command's arguments)."""
    p = argparse.ArgumentParser(prog="fatpipe", description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--version", action="version", version=f"fatpipe {fatpipe.__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run a scenario file")
    r.add_argument("file", help="scenario TOML file (see scenarios/)")
    r.add_argument("--seed", type=int, default=None, help="random seed (default: the scenario's, else 1)")
    r.add_argument("--out", help="results directory (default out/<name>-seed<N>)")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario key, e.g. topology.pairs=16")
    r.add_argument("--json", action="store_true", help="print the run summary as one JSON object")
    r.add_argument("--no-report", action="store_true", help="write tables and metadata but no report")
    r.add_argument("--no-write", action="store_true", help="write nothing (summary only)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_run)

    pl = sub.add_parser("plan", help="print the elaborated run plan (JSON)")
    pl.add_argument("file")
    pl.add_argument("--seed", type=int, default=None)
    pl.add_argument("--set", action="append", metavar="KEY=VALUE")
    pl.set_defaults(func=cmd_plan)

    s = sub.add_parser("schema", help="print the JSON Schema of scenario files")
    s.set_defaults(func=cmd_schema)

    a = sub.add_parser("algorithms", help="list congestion controls (NAME: citation and parameters)")
    a.add_argument("name", nargs="?", default=None, help="show one algorithm's citation and parameters")
    a.add_argument("--params", action="store_true", help="show citation and parameters of every algorithm")
    a.set_defaults(func=cmd_algorithms)
    if command not in CORE_COMMANDS:
        _register_other_commands(sub)
    return p


def _register_other_commands(sub: Any) -> None:
    b = sub.add_parser("bench", help="reference scenario in fatpipe and ns-2: data packets per wall-second")
    b.add_argument("--scenario", default=None, help="scenario file (default scenarios/reference-dumbbell.toml)")
    b.add_argument("--set", action="append", metavar="KEY=VALUE")
    b.add_argument("--cc", default=None, metavar="NAME", help="congestion control of every flow (default: the scenario's); ns-2 runs only if its TCP-Linux has it")
    b.add_argument("--no-ns2", action="store_true", help="run fatpipe only")
    b.add_argument("--stock-headers", action="store_true", help="ns-2 with all packet headers (slower)")
    b.add_argument("--repeat", type=int, default=1, help="repetitions of each simulator (the fastest run of each is reported)")
    b.add_argument("--table", action="store_true",
                   help="fatpipe, ns-2.35 and ns-3.44 on the reference, long-fat and 1000-flow scenarios: a markdown table")
    b.add_argument("--skip", action="append", choices=["ns-2.35", "ns-3.44"], help="with --table: leave a peer out")
    b.add_argument("--table-duration", metavar="DUR", default=None,
                   help="with --table: simulate every row for DUR in every simulator (a quick check)")
    b.add_argument("--json", action="store_true")
    b.add_argument("--sweep", action="store_true",
                   help="instead: the sweep writer's cost per run and runs/s against the number of workers")
    from fatpipe.bench_sweep import add_arguments as add_sweep_bench_arguments

    add_sweep_bench_arguments(b, prefix="with --sweep: ")
    b.set_defaults(func=cmd_bench)

    from fatpipe import cli_depot, cli_experiments, cli_studies, cli_testbed

    cli_experiments.register(sub)
    cli_studies.register(sub)
    cli_testbed.register(sub)
    cli_depot.register(sub)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except FatpipeError as e:
        # Every bad input (scenario, sweep, study, stored run) is one of these.
        kind = type(e).__name__
        print(f"fatpipe: {kind}: {e}", file=sys.stderr)
        if isinstance(e, ScenarioError):
            print("  (see the scenario reference in docs/scenarios.md, or `fatpipe schema`)", file=sys.stderr)
        return 2
    except KeyError as e:
        print(f"fatpipe: {type(e).__name__}: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"fatpipe: no such file: {e.filename}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fatpipe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`fatpipe results export X | head`): not an error of ours. Point
        # stdout at /dev/null so the interpreter's final flush does not raise again.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
