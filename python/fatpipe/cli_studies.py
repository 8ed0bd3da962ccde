"""CLI commands for reports and studies: ``fatpipe report`` and ``fatpipe reproduce``."""

from __future__ import annotations

import argparse
import sys

from fatpipe.cli_experiments import DEFAULT_STORE


def cmd_report(args: argparse.Namespace) -> int:
    from fatpipe.experiments import open_store
    from fatpipe.report_sweep import write_sweep_report

    store = open_store(args.store, create=False)
    page = write_sweep_report(store, args.sweep, args.out or f"out/report-{args.sweep}", runs=args.runs or ())
    print(f"report: {page}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from fatpipe.studies import list_studies, reproduce, studies_dir

    if args.list or not args.study:
        names = list_studies(args.studies_dir)
        print("\n".join(names) if names else f"(no studies in {studies_dir(args.studies_dir)})")
        return 0
    mode = "full" if args.full else "demo" if args.demo else "quick"
    out = reproduce(args.study, mode=mode, replications=args.reps, store=args.store, out=args.out,
                    workers=args.workers, cluster=args.cluster, studies_root=args.studies_dir,
                    progress=not args.quiet)
    width = max(len(v.target.id) for v in out.verdicts) if out.verdicts else 0
    print(f"{out.study.title} ({mode})")
    for v in out.verdicts:
        print(f"  {v.target.id:<{width}}  {v.status:<15} {v.target.claim} — {v.detail}")
    if out.failed_runs:
        print(f"  {out.failed_runs} runs failed (see the report)", file=sys.stderr)
    print(f"report: {out.report}")
    return 1 if out.failed_runs else 0


def register(sub) -> None:
    r = sub.add_parser("report", help="figures and an HTML page for a sweep in the results store")
    r.add_argument("sweep", help="sweep name (see `fatpipe results ls`)")
    r.add_argument("--store", default=DEFAULT_STORE, help=f"results store (default {DEFAULT_STORE}/)")
    r.add_argument("--out", default=None, help="output directory (default out/report-<sweep>)")
    r.add_argument("--runs", nargs="*", metavar="KEY", help="also plot the time series of these runs")
    r.set_defaults(func=cmd_report)

    p = sub.add_parser("reproduce", help="reproduce a study: run its sweeps, check its targets, write its report")
    p.add_argument("study", nargs="?", help="study name (see --list)")
    p.add_argument("--list", action="store_true", help="list the studies")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="the scaled-down version (default; minutes on 2 cores)")
    g.add_argument("--full", action="store_true", help="the study's own settings")
    g.add_argument("--demo", action="store_true", help="a slice of a couple of minutes (studies that offer one)")
    p.add_argument("--reps", type=int, default=None, help="replications per point (default: the mode's)")
    p.add_argument("--store", default=DEFAULT_STORE, help=f"results store (default {DEFAULT_STORE}/)")
    p.add_argument("--out", default=None, help="report directory (default out/<study>-<mode>)")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: all cores)")
    p.add_argument("--cluster", default=None, metavar="tcp://HOST:PORT", help="run on a Dask scheduler")
    p.add_argument("--studies-dir", default=None, help="where studies live (default: the repository's studies/)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_reproduce)
