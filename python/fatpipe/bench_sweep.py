"""``fatpipe bench --sweep``: what a sweep costs besides its simulations, and how it scales.

Two measurements, printed and never asserted (timings are this machine at this moment):

1. **The writer.** One process (the one running the sweep) writes every run into the store, so
   its cost per run bounds a sweep's throughput however many workers simulate. For typical runs
   (the points of the reno-dumbbell quick sweep, ``studies/reno-dumbbell/sweeps/flows-quick.toml``,
   and the reference dumbbell sampled every 100 ms), each run is simulated once as a worker
   would, then written ``--reps`` times into a fresh store; the mean milliseconds per run of each
   writer stage are printed (receive = unpickling the worker's answer).
2. **Scaling.** A small sweep run on 1, 2, ... all cores worker processes, each into a fresh
   store: runs per second, the speed-up over one worker and the writer's milliseconds per run.

``python -m fatpipe.bench_sweep`` runs the same as ``fatpipe bench --sweep``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
QUICK_SWEEP = ROOT / "studies" / "reno-dumbbell" / "sweeps" / "flows-quick.toml"
REFERENCE = ROOT / "scenarios" / "reference-dumbbell.toml"
SCALING_BASE = ROOT / "scenarios" / "dumbbell-reno.toml"

STAGES = ("receive", "parquet", "metadata", "hash", "fsync", "rename", "catalogue")


def _cases() -> list[tuple[str, Any]]:
    """(label, RunSpec) of the typical runs: each point of the quick sweep (seed 1) and the
    reference dumbbell with a flow_series sample every 100 ms."""
    import fatpipe
    from fatpipe.experiments.sweep import RunSpec, Sweep, SweepPoint

    sw = Sweep.load(QUICK_SWEEP)
    cases = [(f"flows-quick {s.point.label}", s) for s in sw.runs() if s.seed == sw.seed_list[0]]
    ref = fatpipe.Scenario.load(REFERENCE).with_overrides("monitor.interval=100ms")
    cases.append(("reference-dumbbell, 100 ms samples",
                  RunSpec("bench", SweepPoint(0, ()), 1, ref.text, tuple(ref.overrides), ref.source)))
    return cases


def writer_cost(reps: int = 10, where: str | None = None) -> list[dict[str, Any]]:
    """Per typical run: the worker's time (simulation, metrics) and the writer's ms per stage."""
    from fatpipe.experiments.execute import execute_run
    from fatpipe.experiments.store import open_store

    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="fatpipe-bench-store-", dir=where))
    try:
        for label, spec in _cases():
            t0 = time.perf_counter()
            value = execute_run(spec)
            worker_s = time.perf_counter() - t0
            frame = pickle.dumps(("ok", value), protocol=pickle.HIGHEST_PROTOCOL)
            store = open_store(tmp / hashlib.sha256(label.encode()).hexdigest()[:12])
            receive = 0.0
            for i in range(reps):
                t0 = time.perf_counter()
                _, (result, metrics, meta) = pickle.loads(frame)
                receive += time.perf_counter() - t0
                store.put(hashlib.sha256(f"{label}/{i}".encode()).hexdigest(), result, meta, metrics)
            stages = {"receive": receive, **{k: v for k, v in store.timings.items() if k != "runs"}}
            ms = {k: 1e3 * stages.get(k, 0.0) / reps for k in STAGES}
            rows.append({"run": label, "worker_s": worker_s, "frame_bytes": len(frame),
                         "flow_series_rows": result.table("flow_series").num_rows,
                         "ms_per_run": ms, "total_ms": sum(ms.values())})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


def scaling(runs: int = 24, duration: str = "60s", max_workers: int | None = None,
            where: str | None = None) -> list[dict[str, Any]]:
    """Runs per second of one small sweep on 1, 2, ... ``max_workers`` (default all cores)."""
    import fatpipe
    from fatpipe.experiments import Sweep, run_sweep

    base = fatpipe.Scenario.load(SCALING_BASE).with_overrides(f"duration={duration}")  # 4 flows, 100 Mb/s
    reps = max(1, runs // 4)
    sw = Sweep("bench-scaling", base, vary={"topology.bottleneck.queue.limit": ["20pkt", "40pkt", "80pkt", "160pkt"]},
               replications=reps, metrics=["utilisation"])
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="fatpipe-bench-sweep-", dir=where))
    try:
        for w in range(1, (max_workers or _cores()) + 1):
            out = run_sweep(sw, tmp / f"w{w}", workers=w)
            t = out.store.timings
            n = max(1, int(t.get("runs", 0)))
            rows.append({"workers": w, "runs": out.ran, "wall_s": out.wall_s, "runs_per_s": out.ran / out.wall_s,
                         "writer_ms_per_run": 1e3 * sum(v for k, v in t.items() if k != "runs") / n})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for r in rows:
        r["speedup"] = r["runs_per_s"] / rows[0]["runs_per_s"]
    return rows


def main(args: argparse.Namespace) -> int:
    cores = _cores()
    report: dict[str, Any] = {"cpu_count": os.cpu_count(), "usable_cores": cores}
    if not args.json:
        print(f"writer cost per run ({args.writer_reps} writes of each typical run; ms per run)", flush=True)
    report["writer"] = writer = writer_cost(args.writer_reps, args.dir)
    if not args.json:
        print(f"{'run':44s} {'fs rows':>8s} {'frame kB':>9s} " + " ".join(f"{s:>9s}" for s in STAGES) + f" {'total':>7s}")
        for r in writer:
            print(f"{r['run']:44s} {r['flow_series_rows']:8d} {r['frame_bytes'] / 1e3:9.0f} "
                  + " ".join(f"{r['ms_per_run'][s]:9.2f}" for s in STAGES) + f" {r['total_ms']:7.2f}")
        print(f"\nsweep scaling: {args.sweep_runs} runs of {args.sweep_duration} simulated on 1..{args.max_workers or cores} "
              f"workers ({cores} usable cores)", flush=True)
    report["scaling"] = sc = scaling(args.sweep_runs, args.sweep_duration, args.max_workers, args.dir)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'workers':>7s} {'runs':>5s} {'wall s':>8s} {'runs/s':>8s} {'speed-up':>9s} {'writer ms/run':>14s}")
    for r in sc:
        print(f"{r['workers']:7d} {r['runs']:5d} {r['wall_s']:8.2f} {r['runs_per_s']:8.2f} {r['speedup']:9.2f} "
              f"{r['writer_ms_per_run']:14.2f}")
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``python -m fatpipe.bench_sweep`` (``fatpipe bench --sweep`` has the same)."""
    p.add_argument("--writer-reps", type=int, default=10, help="writes of each typical run (default 10)")
    p.add_argument("--sweep-runs", type=int, default=24, help="runs of the scaling sweep (default 24)")
    p.add_argument("--sweep-duration", default="60s", help="simulated time of each scaling run (default 60s)")
    p.add_argument("--max-workers", type=int, default=None, help="largest worker count (default: usable cores)")
    p.add_argument("--dir", default=None, help="where the temporary stores go (default: the system's temp dir)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m fatpipe.bench_sweep", description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--json", action="store_true")
    raise SystemExit(main(ap.parse_args()))
