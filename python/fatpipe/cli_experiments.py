"""CLI commands for experiments: ``fatpipe sweep`` and ``fatpipe results ls|show|export``."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

DEFAULT_STORE = "results"


def cmd_sweep(args: argparse.Namespace) -> int:
    from fatpipe.experiments import Sweep, open_store, run_sweep

    sweep = Sweep.load(args.file, replications=args.reps, set=args.set or ())
    if args.dry_run:
        dry = sweep.dry_run()
        store = open_store(args.store) if Path(args.store).exists() else None
        if args.json:
            print(json.dumps({**dry.__dict__}))
        else:
            print(dry)
            if store is not None:
                from fatpipe.experiments.store import run_key
                import fatpipe

                have = sum(store.has(run_key(s.scenario().plan(seed=s.seed), fatpipe.__version__))
                           for s in sweep.runs())
                print(f"already in {store.root}: {have} of {dry.runs} runs")
        return 0
    outcome = run_sweep(sweep, args.store, workers=args.workers, cluster=args.cluster, retries=args.retries,
                        force=args.force, progress=not args.quiet and not args.json)
    if args.json:
        print(json.dumps(outcome.as_dict()))
    else:
        _print_outcome(outcome)
    return 0 if outcome.ok else 1


def _print_outcome(outcome) -> None:
    from rich.console import Console
    from rich.table import Table

    c = Console()
    c.print(f"sweep [bold]{outcome.sweep.name}[/]: {outcome.total} runs — {outcome.ran} run now, "
            f"{outcome.reused} reused from {outcome.store.root}, {outcome.retried} retries, "
            f"{len(outcome.failures)} failed ({outcome.wall_s:.1f} s)")
    summ = outcome.summary()
    if not summ.empty:
        params = list(outcome.sweep.parameters)
        t = Table(title="mean ± 95% CI half-width (n replications)")
        for col in [*params, *outcome.sweep.metrics]:
            t.add_column(col, justify="right")
        for _, g in summ.groupby("point", sort=True):
            cells = [str(g.iloc[0][p]) for p in params]
            for m in outcome.sweep.metrics:
                r = g[g.metric == m].iloc[0]
                cells.append(_fmt_ci(r["mean"], r["half_width"], int(r["n"])))
            t.add_row(*cells)
        c.print(t)
    for f in outcome.failures:
        c.print(f"[red]failed[/] {f.label} seed {f.seed} after {f.attempts} attempts: {f.error}")


def _fmt_ci(mean: float, hw: float, n: int) -> str:
    if n == 0:
        return "—"
    if hw != hw:  # NaN: one replication
        return f"{mean:.4g} (n={n})"
    return f"{mean:.4g} ± {hw:.2g} (n={n})"


def cmd_results(args: argparse.Namespace) -> int:
    from fatpipe.experiments import open_store

    store = open_store(args.store, create=False)
    if args.action == "ls":
        if args.sweep:
            df = store.runs(args.sweep)
            cols = [c for c in ["point", *store.sweep_definition(args.sweep)["parameters"], "seed", "key"] if c in df]
        elif args.runs:
            df = store.runs()
            cols = [c for c in ["key", "name", "seed", "version", "wall_s", "utilisation"] if c in df]
        else:
            df = store.sweeps()
            cols = ["sweep", "runs", "finished", "parameters", "metrics"]
        if df.empty:
            print("(nothing stored)")
            return 0
        df = df[cols].copy()
        if "key" in df:
            df["key"] = df["key"].str[:12]
        print(df.to_string(index=False))
        return 0
    if args.action == "show":
        key = store.resolve(args.key)
        meta = store.metadata(key)
        if args.json:
            print(json.dumps(meta, default=str))
        else:
            s = meta["summary"]
            print(f"run {key}\n  name {s['name']}  seed {meta['seed']}  fatpipe {meta['fatpipe_version']}")
            print(f"  path {store.path(key)}")
            print("  metrics:")
            for k, v in meta["metrics"].items():
                print(f"    {k:24s} {v}")
            src = meta.get("scenario_source") or "<scenario.toml>"
            sets = " ".join(shlex.quote(f"--set={o}") for o in meta.get("overrides", []))
            print(f"  rerun: fatpipe run {shlex.quote(src)} --seed {meta['seed']} {sets}".rstrip())
            print("  (the exact scenario is in metadata.json: scenario_toml + overrides, "
                  "and normalized_scenario_toml)")
        return 0
    if args.action == "export":
        df = store.runs(args.sweep) if not args.summary else _summary(store, args.sweep)
        out = Path(args.out) if args.out else None
        fmt = args.format or (out.suffix.lstrip(".") if out else "csv")
        if fmt == "parquet":
            if out is None:
                raise SystemExit("fatpipe: --format parquet needs --out FILE")
            df.to_parquet(out)
        elif fmt == "csv":
            df.to_csv(out if out else sys.stdout, index=False)
        elif fmt == "json":
            text = df.to_json(orient="records")
            out.write_text(text) if out else print(text)
        else:
            raise SystemExit(f"fatpipe: unknown --format {fmt!r}; use csv, parquet or json")
        return 0
    raise AssertionError(args.action)


def _summary(store, sweep: str):
    from fatpipe.experiments import summarize_sweep

    d = store.sweep_definition(sweep)
    return summarize_sweep(store.runs(sweep), d["parameters"], d["metrics"])


def register(sub) -> None:
    sw = sub.add_parser("sweep", help="run a sweep file (replications, local processes or a Dask cluster)")
    sw.add_argument("file", help="sweep TOML file")
    sw.add_argument("--store", default=DEFAULT_STORE, help=f"results store directory (default {DEFAULT_STORE}/)")
    sw.add_argument("--dry-run", action="store_true", help="print the number of runs and a cost estimate; run nothing")
    sw.add_argument("--workers", type=int, default=None, help="local worker processes (default: all cores)")
    sw.add_argument("--cluster", default=None, metavar="tcp://HOST:PORT", help="run on a Dask scheduler")
    sw.add_argument("--reps", type=int, default=None, help="replications (overrides the file)")
    sw.add_argument("--set", action="append", metavar="KEY=VALUE", help="fixed override for every run")
    sw.add_argument("--retries", type=int, default=2, help="resubmissions of a failed run (default 2)")
    sw.add_argument("--force", action="store_true", help="rerun runs the store already has")
    sw.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    sw.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    sw.set_defaults(func=cmd_sweep)

    rs = sub.add_parser("results", help="query the results store: ls | show KEY | export SWEEP")
    rs.add_argument("--store", default=DEFAULT_STORE, help=f"results store directory (default {DEFAULT_STORE}/)")
    rsub = rs.add_subparsers(dest="action", required=True)
    ls = rsub.add_parser("ls", help="list sweeps (or one sweep's runs, or all runs)")
    ls.add_argument("--sweep", default=None, help="list this sweep's runs")
    ls.add_argument("--runs", action="store_true", help="list every stored run")
    sh = rsub.add_parser("show", help="one run: metrics, metadata, how to rerun it")
    sh.add_argument("key", help="run key or a unique prefix (as printed by ls)")
    sh.add_argument("--json", action="store_true", help="print the full metadata JSON")
    ex = rsub.add_parser("export", help="a sweep's per-run metrics (or --summary with CIs) as CSV/Parquet/JSON")
    ex.add_argument("sweep")
    ex.add_argument("--summary", action="store_true", help="per-point mean, std, 95%% CI and n instead of runs")
    ex.add_argument("--format", choices=["csv", "parquet", "json"], default=None)
    ex.add_argument("--out", default=None, help="output file (default: stdout for csv/json)")
    for p in (rs, ls, sh, ex):
        p.set_defaults(func=cmd_results)
