"""``fatpipe bench --table``: fatpipe, ns-2.35 and ns-3.44 side by side on three scenarios.

Rows (scenario files in ``scenarios/``):

- the reference dumbbell (``reference-dumbbell.toml``: 1 Gb/s, 100 ms, 20 Reno flows, 60 s);
- a long fat pipe (``long-fat-10g.toml``: 10 Gb/s, 200 ms RTT, 8 Reno flows, one-BDP buffer),
  with RACK-TLP off so that ns-2 runs the same TCP;
- many flows (``many-flows.toml``: 1 000 Reno flows, 10 per host pair, 1 Gb/s, 100 ms RTT).

Every run is its own child process, waited for with ``os.wait4``: wall time is the whole process
(start-up, planning, the run, output). Peak memory is the simulator process's own high-water mark
(``VmHWM``, reported by ``fatpipe run --json``, by ns-2's script and by the ns-3 child; see
:mod:`fatpipe.peak_memory`), not ``ru_maxrss``, which on Linux also carries the high-water mark
of the process that spawned the child; ``ru_maxrss`` is the fallback where ``/proc`` is missing.
fatpipe runs as a user
runs it (``fatpipe run FILE --json --no-write``), ns-2 and ns-3 through their peers
(:mod:`fatpipe.peers.ns2` with unused packet headers removed, :mod:`fatpipe.peers.ns3` in a
child that imports the ns-3 wheel); beside the whole process, the table gives each simulator's
own loop (fatpipe's engine, ``$ns run``, ``Simulator::Run``). ns-3 runs the plan with the rules
it hard-wires (``NS3_RULES``), which change nothing else in these no-timeout scenarios.

Durations: each row states the simulated time per simulator. ns-2 and ns-3 run shortened
versions where the full one would take minutes; packets per wall-second is the figure to compare.
ns-3 (the PyPI wheel) gets slower per packet as windows grow — measured here: 10 000 packets per
second of its own loop over the reference's first 2 s, no end in 7 minutes for its first 4 s, 2 000
per second with 1 000 flows — so it runs only the first seconds (slow start, small windows), which
flatters it.

Timings are measurements of this machine at this moment, best of ``--repeat`` runs; they are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fatpipe.peers.ns3 import NS3_RULES

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

SIMULATORS = ("fatpipe", "ns-2.35", "ns-3.44")


@dataclass(frozen=True)
class Row:
    label: str
    file: str
    #: overrides for every simulator
    sets: tuple[str, ...] = ()
    #: simulated duration per simulator (None: the scenario's own)
    durations: dict[str, str | None] = field(default_factory=dict)


ROWS = (
    Row("reference dumbbell", "reference-dumbbell.toml", durations={"ns-3.44": "2s"}),
    Row(
        "long fat 10 Gb/s",
        "long-fat-10g.toml",
        sets=("tcp.rack=false", "tcp.tlp=false"),
        durations={"ns-2.35": "5s", "ns-3.44": "1.5s"},
    ),
    Row("1 000 flows", "many-flows.toml", durations={"ns-3.44": "2s"}),
)


def _child_env() -> dict[str, str]:
    """The children's environment: ours, but allowed to cache bytecode. A user's install has
    its ``.pyc`` files (pip compiles them at install time; an editable install writes them on
    first import), so a developer's ``PYTHONDONTWRITEBYTECODE=1`` must not make every timed
    ``fatpipe run`` recompile the package (15-25 ms of start-up here; the fastest of the repeats
    is kept, and the first one writes the cache)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run_child(argv: list[str]) -> tuple[str, float, int]:
    """Run ``argv`` as a child; (stdout, wall seconds, peak RSS in bytes) of that child alone."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_child_env())
    assert p.stdout is not None and p.stderr is not None
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... failed ({p.returncode}):\n{err.decode()[-2000:]}")
    return out.decode(), wall, usage.ru_maxrss * 1024


def _sets(row: Row, sim: str) -> list[str]:
    sets = list(row.sets)
    d = row.durations.get(sim)
    if d is not None:
        sets.append(f"duration={d}")
    if sim == "ns-3.44":
        sets.extend(NS3_RULES)
    return sets


def run_fatpipe(row: Row) -> dict[str, Any]:
    exe = shutil.which("fatpipe", path=str(Path(sys.executable).parent)) or shutil.which("fatpipe")
    argv = [exe or "fatpipe", "run", str(SCENARIOS / row.file), "--json", "--no-write", "-q"]
    for s in _sets(row, "fatpipe"):
        argv += ["--set", s]
    out, wall, rss = _run_child(argv)
    s = json.loads(out)
    return {
        "sim_s": s["sim_s"],
        "packets_delivered": s["packets_delivered"],
        "wall_s": wall,
        "loop_s": s["wall_s"],
        "peak_rss_bytes": s.get("peak_rss_bytes") or rss,
    }


def run_peer(row: Row, sim: str) -> dict[str, Any]:
    """ns-2 or ns-3 in a helper child (``python -m fatpipe.bench_table --peer``): its own child is
    the simulator, whose peak memory it reports."""
    argv = [sys.executable, "-m", "fatpipe.bench_table", "--peer", sim, str(SCENARIOS / row.file), *_sets(row, sim)]
    out, _, _ = _run_child(argv)
    return json.loads(out)


def _peer_child(sim: str, path: str, sets: list[str]) -> None:
    """Helper mode: run one plan in ns-2 or ns-3 and print its figures as JSON."""
    import fatpipe

    plan = fatpipe.Scenario.load(path, sets).plan()
    if sim == "ns-2.35":
        from fatpipe.peers import ns2

        res = ns2.run_plan(plan, fast_headers=True, timeout_s=3600)
    else:
        from fatpipe.peers import ns3

        res = ns3.run_plan(plan, timeout_s=3600)
    print(
        json.dumps(
            {
                "sim_s": int(plan["duration_ns"]) / 1e9,
                "packets_delivered": res["packets_delivered"],
                "wall_s": res["wall_s"],
                "loop_s": res.get("wall_run_s"),
                "peak_rss_bytes": res.get("peak_rss_bytes")
                or resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
            }
        )
    )


def measure(rows: tuple[Row, ...], sims: tuple[str, ...], repeat: int, log=print) -> list[dict[str, Any]]:
    """Run every (row, simulator) ``repeat`` times; keep the fastest run of each."""
    out = []
    for row in rows:
        for sim in sims:
            best = None
            for _ in range(max(1, repeat)):
                log(f"{row.label}: {sim} ...")
                r = run_fatpipe(row) if sim == "fatpipe" else run_peer(row, sim)
                if best is None or r["wall_s"] < best["wall_s"]:
                    best = r
            assert best is not None
            best["packets_per_wall_s"] = best["packets_delivered"] / best["wall_s"]
            loop = best.get("loop_s")
            best["loop_packets_per_s"] = best["packets_delivered"] / loop if loop else None
            out.append({"row": row.label, "simulator": sim, **best})
    return out


def _mb(b: int) -> str:
    return f"{b / 2**20:,.0f}"


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "| scenario | simulator | simulated s | data packets | wall s | packets / wall-s | own loop: packets / s | peak RSS MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        loop = r["loop_packets_per_s"]
        lines.append(
            f"| {r['row']} | {r['simulator']} | {r['sim_s']:g} | {r['packets_delivered']:,} | {r['wall_s']:.2f} | "
            f"{r['packets_per_wall_s']:,.0f} | {f'{loop:,.0f}' if loop else '—'} | {_mb(r['peak_rss_bytes'])} |"
        )
    by = {(r["row"], r["simulator"]): r for r in results}
    ratios = []
    for row in dict.fromkeys(r["row"] for r in results):
        fp = by.get((row, "fatpipe"))
        for peer in SIMULATORS[1:]:
            other = by.get((row, peer))
            if fp and other:
                own = (fp["loop_packets_per_s"] or 0) / (other["loop_packets_per_s"] or other["packets_per_wall_s"])
                if fp["sim_s"] == other["sim_s"]:
                    whole = fp["packets_per_wall_s"] / other["packets_per_wall_s"]
                    ratios.append(f"{row}: fatpipe / {peer} = {whole:.1f}x whole process, {own:.1f}x own loop")
                else:
                    # Start-up spread over fewer packets would flatter fatpipe's whole process.
                    ratios.append(f"{row}: fatpipe / {peer} = {own:.1f}x own loop "
                                  f"({peer} simulated {other['sim_s']:g} s, so whole processes are not compared)")
    return "\n".join(lines + [""] + [f"- {r}" for r in ratios])


def main(args: argparse.Namespace) -> int:
    sims = tuple(s for s in SIMULATORS if s == "fatpipe" or s not in (args.skip or []))
    from fatpipe.peers import ns2, ns3

    missing = []
    if "ns-2.35" in sims and not ns2.ns2_available():
        missing.append("ns-2.35 (Debian package ns2)")
    if "ns-3.44" in sims and not ns3.ns3_available():
        missing.append("ns-3.44 (pip install ns3==3.44.post0)")
    if missing:
        print("not installed: " + ", ".join(missing) + "; `make setup` installs them, or pass --skip")
        return 2
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if not args.json else (lambda m: None)
    rows = ROWS
    if args.table_duration:
        # One duration for every simulator (a quick check; the README's table uses the defaults).
        rows = tuple(replace(r, durations={s: args.table_duration for s in SIMULATORS}) for r in ROWS)
    results = measure(rows, sims, args.repeat, log=log)
    if args.json:
        print(json.dumps({"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
                          "repeat": args.repeat, "results": results}))
    else:
        print(markdown(results))
    return 0


if __name__ == "__main__":  # helper mode for the peers (see run_peer)
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "--peer":
        _peer_child(a[1], a[2], a[3:])
    else:
        sys.exit("usage: python -m fatpipe.bench_table --peer ns-2.35|ns-3.44 FILE [KEY=VALUE ...]")
