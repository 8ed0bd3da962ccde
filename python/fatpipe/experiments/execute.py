"""Running a sweep: reuse what the store has, run the rest locally or on a Dask cluster.

Workers simulate, compute the metrics and encode the run's files (Parquet, metadata, manifest
hashes); the calling process alone writes the store, so a cluster needs no shared filesystem and
the catalogue has one writer. That writer only writes bytes: the runs that finish together are
stored as one group (one concurrent fsync, one catalogue transaction), while every worker already
has its next run queued. Runs are submitted longest first by the dry run's cost estimate, so the
end of a sweep is not one long run alone; the order changes no result.

A run that fails (an error, a crashed worker process, a lost Dask worker) is recorded in the
store's ``failures`` table and resubmitted, at most ``retries`` more times; the sweep goes on and
the outcome lists what still failed. Results are keyed by content, so a run that a lost worker
had already finished and a rescheduled copy of it can never appear twice.
"""

from __future__ import annotations

import json
from collections import Counter, deque
import os
import time
from concurrent.futures import FIRST_COMPLETED
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass, field
from typing import Any, Callable

import fatpipe
from fatpipe.experiments.local_pool import RunFailed
from fatpipe.experiments.run_files import EncodedRun, encode_run
from fatpipe.experiments.store import Store, open_store, run_key
from fatpipe.experiments.sweep import RunSpec, Sweep, SweepError, cost_estimate_s

__all__ = ["run_sweep", "SweepOutcome", "Failure", "execute_run", "schedule", "spec_key"]


@dataclass(frozen=True)
class Failure:
    point: int
    seed: int
    key: str
    attempts: int
    error: str
    label: str


@dataclass
class SweepOutcome:
    """What a sweep did: counts of runs done now / reused, and the runs that still failed."""

    sweep: Sweep
    store: Store
    total: int
    ran: int = 0
    reused: int = 0
    retried: int = 0
    failures: list[Failure] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def runs(self):
        """Per-run metrics of this sweep (pandas)."""
        return self.store.runs(self.sweep.name)

    def summary(self, level: float = 0.95):
        """Per sweep point and metric: n, mean, std and the confidence interval (pandas)."""
        from fatpipe.experiments.aggregate import summarize_sweep

        return summarize_sweep(self.runs(), self.sweep.parameters, self.sweep.metrics, level=level)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sweep": self.sweep.name,
            "store": str(self.store.root),
            "total": self.total,
            "ran": self.ran,
            "reused": self.reused,
            "retried": self.retried,
            "failed": [f.__dict__ for f in self.failures],
            "wall_s": self.wall_s,
        }


#: Runs executed by this process. A worker (local or Dask) imports this module once and runs
#: many runs in it, paying the imports (pandas, pyarrow, the core) once; the tests read this
#: counter on the workers to hold them to that.
RUNS_IN_PROCESS = 0


def execute_run(spec: RunSpec, key: str | None = None) -> EncodedRun:
    """Run one replication (in a worker, or in this process for the testbed): run it, compute
    every metric and encode the files the store keeps under ``key`` (by default the run's key,
    :func:`spec_key`)."""
    global RUNS_IN_PROCESS
    from fatpipe.experiments.run_metrics import compute
    from fatpipe.output import metadata

    scenario = spec.scenario()
    if key is None:
        key = spec_key(spec, fatpipe.__version__)
    t0 = time.perf_counter()
    if spec.backend == "testbed":
        from fatpipe.testbed import run_testbed

        result = run_testbed(scenario, seed=spec.seed)
    else:
        result = fatpipe.run(scenario, seed=spec.seed)
    wall = time.perf_counter() - t0
    meta = metadata(result, scenario, wall_s=wall, command=None)
    meta["sweep_point"] = {"sweep": spec.sweep, "point": spec.point.index, "params": spec.point.as_dict()}
    metrics = compute(result)
    RUNS_IN_PROCESS += 1
    return encode_run(key, result, meta, metrics)


def schedule(keys: list[str], costs: dict[str, float]) -> list[str]:
    """The order runs are submitted in: longest first by estimated cost, runs of equal cost in
    the sweep's own order (points, then seeds). Deterministic, and irrelevant to the results
    (each run is determined by its spec); it only keeps a long run from starting last."""
    return sorted(keys, key=lambda k: -costs[k])  # sorted() is stable


# ---- backends: submit a spec, wait for some to finish -------------------------------------------
class _LocalBackend:
    """Local worker processes (:class:`fatpipe.experiments.local_pool.WorkerPool`)."""

    def __init__(self, workers: int):
        from fatpipe.experiments.local_pool import WorkerPool

        self.pool = WorkerPool(workers)

    @property
    def capacity(self) -> int:
        # Each worker has its next run queued while the writer stores what finished.
        return 2 * self.pool.workers

    def submit(self, spec: RunSpec, key: str, name: str):
        return self.pool.submit((spec, key))

    def wait(self, futures: list, timeout: float):
        done, _ = futures_wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return list(done)

    @staticmethod
    def outcome(fut) -> tuple[Any, BaseException | None]:
        exc = fut.exception()
        return (None, exc) if exc is not None else (fut.result(), None)

    def shutdown(self) -> None:
        self.pool.shutdown()


class _DaskBackend:
    """A Dask distributed client; a lost worker's task is rescheduled by Dask or fails here."""

    def __init__(self, cluster: Any):
        from distributed import Client

        self._own = not isinstance(cluster, Client)
        self.client = Client(cluster) if self._own else cluster

    @property
    def capacity(self) -> int:
        n = sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        return max(2 * n, 2)  # keep every worker thread busy, plus one queued each

    def submit(self, spec: RunSpec, key: str, name: str):
        return self.client.submit(execute_run, spec, key, key=name, pure=False, retries=0)

    def wait(self, futures: list, timeout: float):
        from distributed import wait as dask_wait
        from distributed.client import FuturesCancelledError

        try:
            done, _ = dask_wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except FuturesCancelledError:
            return [f for f in futures if f.done()]
        except TimeoutError:
            return []
        return list(done)

    @staticmethod
    def outcome(fut) -> tuple[Any, BaseException | None]:
        if fut.status == "error" or fut.status == "cancelled":
            try:
                exc = fut.exception()
            except Exception as e:  # cancelled futures raise here
                exc = e
            return None, exc if isinstance(exc, BaseException) else RuntimeError(str(exc))
        try:
            return fut.result(), None
        except Exception as e:
            return None, e

    def shutdown(self) -> None:
        if self._own:
            self.client.close()


class _TestbedBackend:
    """The testbed: one run at a time, in this process (it needs root and the machine's CPU to
    itself; a run is real time). ``submit`` runs the replication and returns a finished future."""

    capacity = 1

    def submit(self, spec: RunSpec, key: str, name: str):
        from concurrent.futures import Future

        fut: Future = Future()
        try:
            fut.set_result(execute_run(spec, key))
        except Exception as e:  # recorded as the run's failure, like a worker's
            fut.set_exception(e)
        return fut

    def wait(self, futures: list, timeout: float):
        return [f for f in futures if f.done()]

    @staticmethod
    def outcome(fut) -> tuple[Any, BaseException | None]:
        exc = fut.exception()
        return (None, exc) if exc is not None else (fut.result(), None)

    def shutdown(self) -> None:
        pass


def spec_key(spec: RunSpec, version: str, plan: dict[str, Any] | None = None) -> str:
    """The store key of a run: its plan's content address; a testbed run's also names the back-end
    and the kernel, so it never stands for the simulator's run of the same plan (nor for another
    kernel's)."""
    if plan is None:
        plan = spec.scenario().plan(seed=spec.seed)
    if spec.backend == "testbed":
        import platform

        plan = {**plan, "backend": {"kind": "testbed", "kernel": platform.release()}}
    return run_key(plan, version)


# ---- the loop -----------------------------------------------------------------------------------
ProgressHook = Callable[[str, dict[str, Any]], None]


def run_sweep(
    sweep: Sweep,
    store: Store | str | os.PathLike[str] = "results",
    *,
    workers: int | None = None,
    cluster: Any = None,
    retries: int = 2,
    force: bool = False,
    progress: bool = False,
    on_event: ProgressHook | None = None,
) -> SweepOutcome:
    """Run every run of ``sweep`` that ``store`` does not already hold.

    Parameters
    ----------
    sweep : Sweep
        The sweep to run.
    store : Store or path
        Results store (created if missing).
    workers : int, optional
        Local worker processes (default: all cores). Ignored with ``cluster``.
    cluster : str or distributed.Client, optional
        A Dask scheduler address (``tcp://host:8786``) or a connected ``Client``.
    retries : int
        How many more times a failed run is submitted (errors, crashed or lost workers).
    force : bool
        Rerun runs the store already has.
    progress : bool
        Show a live progress bar (runs done / total, failures, ETA) on stderr.
    on_event : callable, optional
        ``on_event(kind, info)`` for ``"submitted"`` (in the order runs are handed to the workers),
        ``"done"`` (stored and indexed), ``"failed"``, ``"retry"`` (used by tests and GUIs).
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError(f"must be a positive number of worker processes, got {workers!r}", "workers")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise SweepError(f"must be a non-negative integer, got {retries!r}", "retries")
    if sweep.backend == "testbed":
        from fatpipe.testbed.system import check_available

        check_available()  # TestbedUnavailable (not root, no namespaces) before anything is recorded
    if not isinstance(store, Store):
        store = open_store(store)
    store.reconcile()
    t_start = time.monotonic()
    version = fatpipe.__version__
    specs = sweep.runs()
    plans = [s.scenario().plan(seed=s.seed) for s in specs]
    keys = [spec_key(s, version, p) for s, p in zip(specs, plans)]
    costs = {k: cost_estimate_s(p) for k, p in zip(keys, plans)}
    del plans
    store.register_sweep(
        sweep.name,
        _definition(sweep),
        sweep.metrics,
        sweep.parameters,
        [(s.point.index, s.seed, json.dumps(s.point.as_dict()), k) for s, k in zip(specs, keys)],
    )
    outcome = SweepOutcome(sweep, store, total=len(specs))
    # One job per distinct key: identical points (or seeds) are run once.
    jobs: dict[str, RunSpec] = {}
    bad: list[str] = []
    for s, k in zip(specs, keys):
        if k in jobs:
            continue
        if not store.has(k):
            bad.append(k)
        elif not force:
            continue
        jobs[k] = s
    # A run that is missing or fails its manifest check leaves the catalogue now, so that until
    # its rerun is stored (which may fail or be interrupted) no query reports it as finished.
    store.forget(bad)
    jobs = {k: jobs[k] for k in schedule(list(jobs), costs)}
    per_key = Counter(keys)  # runs sharing a key (identical points or seeds) are run once
    members = {k: per_key[k] for k in jobs}
    outcome.reused = len(specs) - sum(members.values())
    bar = _Bar(sweep.name, len(specs), outcome.reused) if progress else None
    backend: Any = None
    try:
        if jobs:
            if sweep.backend == "testbed":
                backend = _TestbedBackend()
            else:
                backend = _DaskBackend(cluster) if cluster is not None else _LocalBackend(workers or _cores())
            _drive(backend, jobs, members, store, outcome, retries, bar, on_event)
    finally:
        if backend is not None:
            backend.shutdown()
        store.close()
        if bar is not None:
            bar.close()
    outcome.wall_s = time.monotonic() - t_start
    return outcome


def _drive(backend, jobs, members, store, outcome, retries, bar, on_event) -> None:
    queue = deque(jobs.items())  # in schedule order; retries go to the back
    attempts: dict[str, int] = {k: 0 for k in jobs}
    inflight: dict[Any, str] = {}

    def submit_more() -> None:
        while queue and len(inflight) < backend.capacity:
            key, spec = queue.popleft()
            attempts[key] += 1
            inflight[backend.submit(spec, key, f"fatpipe-run-{key[:16]}-{attempts[key]}")] = key
            if on_event:
                on_event("submitted", {"key": key, "point": spec.point.index, "seed": spec.seed,
                                       "attempt": attempts[key]})

    submit_more()
    while inflight:
        finished: list[tuple[str, RunSpec, EncodedRun]] = []
        for fut in backend.wait(list(inflight), timeout=0.5):
            key = inflight.pop(fut)
            spec = jobs[key]
            value, exc = backend.outcome(fut)
            if exc is None and not (isinstance(value, EncodedRun) and value.key == key):
                exc = RuntimeError(f"worker answered {type(value).__name__} for run {key[:12]}, not its encoded files")
            if exc is None:
                finished.append((key, spec, value))
                continue
            err = str(exc) if isinstance(exc, RunFailed) else f"{type(exc).__name__}: {exc}"
            store.record_failure(spec.sweep, spec.point.index, spec.seed, key, attempts[key], err)
            if attempts[key] <= retries:
                outcome.retried += 1
                queue.append((key, spec))
                if on_event:
                    on_event("retry", {"key": key, "error": err, "attempt": attempts[key]})
            else:
                outcome.failures.append(Failure(spec.point.index, spec.seed, key, attempts[key], err, spec.point.label))
                if bar:
                    bar.fail(members[key])
                if on_event:
                    on_event("failed", {"key": key, "error": err})
        submit_more()  # workers get their next runs before the writer waits on the disk
        if finished:
            # Everything that finished together is stored as one group; "done" means durable
            # and in the catalogue.
            store.write_runs([run for _, _, run in finished])
            for key, spec, _ in finished:
                outcome.ran += 1
                if bar:
                    bar.advance(members[key])
                if on_event:
                    on_event("done", {"key": key, "point": spec.point.index, "seed": spec.seed})


def _definition(sweep: Sweep) -> dict[str, Any]:
    """What the catalogue keeps about a sweep: enough to show and rerun it."""
    return {
        "name": sweep.name,
        "description": sweep.description,
        "source": sweep.source,
        "scenario_source": sweep.scenario.source,
        "scenario_overrides": list(sweep.scenario.overrides),
        "parameters": sweep.parameters,
        "seeds": sweep.seed_list,
        "metrics": list(sweep.metrics),
        "backend": sweep.backend,
    }


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class _Bar:
    """A rich progress bar: runs done / total, failures, elapsed and ETA."""

    def __init__(self, name: str, total: int, already: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.failed = 0
        self.p = Progress(
            TextColumn(f"sweep {name}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("runs, {task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self.p.start()
        self.task = self.p.add_task("sweep", total=total, completed=already, failed=0)

    def advance(self, n: int) -> None:
        self.p.update(self.task, advance=n)

    def fail(self, n: int) -> None:
        self.failed += n
        self.p.update(self.task, advance=n, failed=self.failed)

    def close(self) -> None:
        self.p.stop()
