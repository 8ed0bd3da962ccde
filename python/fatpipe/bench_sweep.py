"""``fatpipe bench --sweep``: what a sweep costs besides its simulations, and how it scales.

Two measurements, printed and never asserted (timings are this machine at this moment):

1. **The writer.** One process (the one running the sweep) writes every run into the store, so
   its cost per run bounds a sweep's throughput however many workers simulate. For typical runs
   (the points of the reno-dumbbell quick sweep, ``studies/reno-dumbbell/sweeps/flows-quick.toml``,
   and the reference dumbbell sampled every 100 ms), each run is simulated once and encoded as a
   worker would (the worker's times are shown), then stored ``--writer-reps`` times into a fresh
   store, each run alone, and again in groups of :data:`GROUP` (runs that finish together are
   stored as one group); the mean milliseconds per run of each writer stage are printed
   (receive = unpickling the worker's answer), and the writer's CPU time per run (the rest of
   its time is waiting for the disk, which depends on the disk and on what else writes to it).
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

#: The writer's stages: unpickling a worker's answer, writing the files' bytes under tmp/, the
#: fsync barriers (files and directories, then the renamed-into directories), the renames, the
#: catalogue transaction.
STAGES = ("receive", "write", "fsync", "rename", "catalogue")
GROUP = 8  # runs stored as one group in the second measurement (runs finishing together)


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
    """Per typical run: the worker's time (simulation, metrics, encoding the files) and the
    writer's ms per run by stage, each run stored alone; and the writer's ms per run when
    :data:`GROUP` runs are stored as one group."""
    import fatpipe
    from fatpipe.experiments.run_files import encode_run
    from fatpipe.experiments.run_metrics import compute
    from fatpipe.experiments.store import open_store
    from fatpipe.output import metadata

    rows: list[dict[str, Any]] = []
    tmp = Path(tempfile.mkdtemp(prefix="fatpipe-bench-store-", dir=where))
    try:
        for label, spec in _cases():
            scenario = spec.scenario()
            t0 = time.perf_counter()
            result = fatpipe.run(scenario, seed=spec.seed)
            t1 = time.perf_counter()
            meta = metadata(result, scenario, wall_s=t1 - t0, command=None)
            metrics = compute(result)
            t2 = time.perf_counter()

            def frames(n: int, tag: str) -> tuple[list[bytes], float]:
                out, t = [], time.perf_counter()
                for i in range(n):
                    key = hashlib.sha256(f"{label}/{tag}/{i}".encode()).hexdigest()
                    out.append(pickle.dumps(("ok", encode_run(key, result, meta, metrics)),
                                            protocol=pickle.HIGHEST_PROTOCOL))
                return out, (time.perf_counter() - t) / n

            def store_all(batches: list[list[bytes]], name: str) -> tuple[dict[str, float], float]:
                store = open_store(tmp / name)
                receive = cpu = 0.0
                for batch in batches:
                    c, t = time.thread_time(), time.perf_counter()
                    runs = [pickle.loads(f)[1] for f in batch]
                    receive += time.perf_counter() - t
                    store.write_runs(runs)
                    cpu += time.thread_time() - c
                store.close()
                n = sum(len(b) for b in batches)
                ms = {k: 1e3 * v / n for k, v in {"receive": receive, **store.timings}.items() if k in STAGES}
                return ms, 1e3 * cpu / n

            single, encode_s = frames(reps, "single")
            alone, alone_cpu = store_all([[f] for f in single], hashlib.sha256(f"{label}/1".encode()).hexdigest()[:12])
            grouped, _ = frames(GROUP * max(1, reps // GROUP), "group")
            together, _ = store_all([grouped[i:i + GROUP] for i in range(0, len(grouped), GROUP)],
                                    hashlib.sha256(f"{label}/g".encode()).hexdigest()[:12])
            rows.append({"run": label, "simulate_s": t1 - t0, "metrics_s": t2 - t1, "encode_s": encode_s,
                         "frame_bytes": len(single[0]), "flow_series_rows": result.table("flow_series").num_rows,
                         "ms_per_run": alone, "total_ms": sum(alone.values()), "cpu_ms": alone_cpu,
                         "group_ms_per_run": together, "group_total_ms": sum(together.values())})

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
        print(f"{'':36s} {'-- in the worker --':>30s}   {'-- writer, each run alone, ms --':>58s}  {f'group of {GROUP}':>10s}")
        print(f"{'run':36s} {'fs rows':>7s} {'sim ms':>7s} {'metr ms':>7s} {'enc ms':>7s} {'kB':>6s} "
              + " ".join(f"{s:>9s}" for s in STAGES) + f" {'total':>7s} {'cpu':>6s}  {'ms/run':>10s}")
        for r in writer:
            print(f"{r['run'][:36]:36s} {r['flow_series_rows']:7d} {1e3 * r['simulate_s']:7.1f} "
                  f"{1e3 * r['metrics_s']:7.1f} {1e3 * r['encode_s']:7.1f} {r['frame_bytes'] / 1e3:6.0f} "
                  + " ".join(f"{r['ms_per_run'][s]:9.2f}" for s in STAGES) + f" {r['total_ms']:7.2f} "
                  f"{r['cpu_ms']:6.2f}  {r['group_total_ms']:10.2f}")
        print("(cpu: the writer thread's CPU time; the rest of its total is waiting for the disk)")
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


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return n


def add_arguments(p: argparse.ArgumentParser, prefix: str = "") -> None:
    """The options of ``python -m fatpipe.bench_sweep``; ``fatpipe bench`` adds them with
    ``prefix = "with --sweep: "``."""
    p.add_argument("--writer-reps", type=_positive, default=10, help=f"{prefix}writes of each typical run (default 10)")
    p.add_argument("--sweep-runs", type=_positive, default=24, help=f"{prefix}runs of the scaling sweep (default 24)")
    p.add_argument("--sweep-duration", default="60s", help=f"{prefix}simulated time of each scaling run (default 60s)")
    p.add_argument("--max-workers", type=_positive, default=None,
                   help=f"{prefix}largest worker count (default: usable cores)")
    p.add_argument("--dir", default=None, help=f"{prefix}where the temporary stores go (default: the system's temp dir)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(prog="python -m fatpipe.bench_sweep", description=__doc__.splitlines()[0])
    add_arguments(ap)
    ap.add_argument("--json", action="store_true")
    raise SystemExit(main(ap.parse_args()))
