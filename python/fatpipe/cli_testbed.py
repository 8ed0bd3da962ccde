"""``fatpipe testbed run FILE``: a scenario on real Linux TCP in network namespaces (docs/testbed.md)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

__all__ = ["register"]


def cmd_testbed_run(args: argparse.Namespace) -> int:
    import fatpipe
    from fatpipe.testbed import run_testbed

    scenario = fatpipe.Scenario.load(args.file, args.set or [])
    t0 = time.monotonic()
    result = run_testbed(scenario, seed=args.seed, emulate=not args.no_emulate)
    wall = time.monotonic() - t0
    out_dir = None
    if not args.no_write:
        out_dir = Path(args.out) if args.out else Path("out") / f"{result.plan['name']}-testbed-seed{result.seed}"
        from fatpipe.output import write_results

        command = "fatpipe " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else None
        write_results(out_dir, result, scenario, wall_s=wall, command=command, report=not args.no_report)
    summary = result.summary
    summary["kernel"] = result.engine.get("kernel")
    if out_dir is not None:
        summary["out_dir"] = str(out_dir)
    if args.json:
        print(json.dumps(summary))
    else:
        for f in summary["flows"]:
            print(f"flow {f['flow_id']} {f['src']}->{f['dst']} {f['cc']}: {f['goodput_bps'] / 1e6:.2f} Mb/s, "
                  f"{f['retransmits']} retransmissions")
        print(f"testbed on Linux {summary['kernel']}: {wall:.1f} s wall" + (f"; results: {out_dir}/" if out_dir else ""))
    return 0


def _cwnd_figure(comparisons: list, path: Path) -> None:
    """cwnd of flow 0, replication 1, simulator and testbed overlaid, one panel per algorithm."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(comparisons), figsize=(5 * len(comparisons), 3.6), squeeze=False)
    for ax, c in zip(axes[0], comparisons):
        for series, label, style in ((c.sim_series, "simulator", "-"), (c.tb_series, "testbed (Linux)", "--")):
            if series:
                d = series[0][series[0]["flow_id"] == 0]
                ax.plot(d["t_s"], d["cwnd_pkts"], style, label=label)
        ax.set_title(f"{c.algorithm}: {'agrees' if c.agrees else 'differs'}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd of flow 0 (packets)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def cmd_compare(args: argparse.Namespace) -> int:
    import fatpipe
    from fatpipe.testbed import kernel_algorithms
    from fatpipe.testbed.compare import compare

    scenario = fatpipe.Scenario.load(args.file, args.set or [])
    algos = args.algorithms.split(",") if args.algorithms else kernel_algorithms()
    known = set(fatpipe.algorithms())
    algos = [a for a in algos if a in known]
    comps = compare(scenario, algos, args.reps, emulate=not args.no_emulate, wire=args.wire,
                    progress=None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    lines = [f"# {scenario.plan()['name']}: simulator against Linux {__import__('platform').release()}",
             f"{args.reps} replications per back-end; tolerances and rule: docs/validation.md", ""]
    for c in comps:
        lines.append(f"## {c.algorithm}: {'agrees' if c.agrees else 'DIFFERS'}")
        lines += [f"- {v.text()}" for v in c.verdicts]
        lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(text)
        _cwnd_figure(comps, out / "cwnd.png")
    return 0 if all(c.agrees for c in comps) else 1


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    t = sub.add_parser("testbed", help="run a scenario on real Linux TCP in network namespaces (root)")
    tsub = t.add_subparsers(dest="testbed_command", required=True)
    r = tsub.add_parser("run", help="build the scenario's topology from namespaces and run its flows")
    r.add_argument("file", help="scenario TOML file")
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario key")
    r.add_argument("--out", help="results directory (default out/<name>-testbed-seed<N>)")
    r.add_argument("--json", action="store_true", help="print the run summary as one JSON object")
    r.add_argument("--no-report", action="store_true")
    r.add_argument("--no-write", action="store_true")
    r.add_argument("--no-emulate", action="store_true",
                   help="plain veth pairs instead of the link emulator (no rate, delay or queue: plumbing checks only)")
    r.set_defaults(func=cmd_testbed_run)

    c = sub.add_parser("compare", help="run a scenario in the simulator and on the testbed and judge agreement (root)")
    c.add_argument("file", help="scenario TOML file")
    c.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a scenario key")
    c.add_argument("--algorithms", help="comma-separated (default: every one the kernel offers that fatpipe has)")
    c.add_argument("--reps", type=int, default=5, help="replications per back-end (default 5)")
    c.add_argument("--out", help="write compare.md and cwnd.png here")
    c.add_argument("--wire", choices=("linux", "scenario"), default="linux",
                   help="simulate Linux's segments (payload mss-12 with timestamps, 66 header bytes; default) "
                        "or the scenario's own mss and header")
    c.add_argument("--no-emulate", action="store_true", help="plain veths (plumbing only; the comparison is meaningless)")
    c.add_argument("-q", "--quiet", action="store_true")
    c.set_defaults(func=cmd_compare)
