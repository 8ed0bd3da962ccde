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
