"""The results store: content-addressed runs (Parquet + metadata) and a SQLite catalogue.

Layout of a store directory::

    catalog.sqlite            runs, sweeps, sweep membership and failures (a derived index)
    runs/ab/abcdef.../        one finished run: <table>.parquet, metadata.json, MANIFEST.json
    tmp/                      runs being written; never read

A run's key is the SHA-256 of its elaborated plan (which contains the seed and every parameter,
with units resolved) and the fatpipe version, so the same run is found again whichever sweep or
file asked for it, and a new version never reuses an old version's results.

Writes are atomic: a run is written under ``tmp/`` with ``MANIFEST.json`` (size and SHA-256 of
every file) last, fsynced, and renamed into ``runs/`` in one step. The writer stores the runs that
finished together as one group (:meth:`Store.write_runs`): one concurrent fsync of all their
files, their renames, then one catalogue transaction for all their rows. A run directory whose
manifest does not match its files (truncated, corrupted, half-copied) is treated as missing and
rerun, never used. The catalogue is only an index: :meth:`Store.reconcile` rebuilds its rows from
the run directories, so a process killed between a rename and the catalogue commit loses
nothing. SQLite (stdlib, transactional, one file) was chosen over DuckDB to keep the dependency
list short; pandas/pyarrow give the analytical side.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd
import pyarrow.parquet as pq

from fatpipe.exceptions import FatpipeError
from fatpipe.experiments.durable import fsync_paths
from fatpipe.experiments.run_files import FORMAT, MANIFEST, EncodedRun, catalogue_row, encode_run
from fatpipe.result import RELAY_TABLES, TABLES, Result

__all__ = ["Store", "CorruptResultError", "open_store", "run_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    name TEXT, seed INTEGER, version TEXT,
    created_unix REAL, wall_s REAL, packets_delivered INTEGER,
    metrics TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sweeps (
    name TEXT PRIMARY KEY,
    definition TEXT NOT NULL,
    metrics TEXT NOT NULL,
    parameters TEXT NOT NULL,
    updated_unix REAL
);
CREATE TABLE IF NOT EXISTS sweep_runs (
    sweep TEXT NOT NULL, point INTEGER NOT NULL, seed INTEGER NOT NULL,
    params TEXT NOT NULL, key TEXT NOT NULL,
    PRIMARY KEY (sweep, point, seed)
);
CREATE TABLE IF NOT EXISTS failures (
    sweep TEXT, point INTEGER, seed INTEGER, key TEXT,
    attempt INTEGER, error TEXT, at_unix REAL
);
"""


class CorruptResultError(FatpipeError, RuntimeError):
    """A stored run whose files do not match its manifest (or that is missing)."""


def run_key(plan: Mapping[str, Any], version: str) -> str:
    """Content address of a run: SHA-256 of the canonical plan JSON and the fatpipe version."""
    canon = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(f"fatpipe-run/{FORMAT}\n{version}\n{canon}".encode()).hexdigest()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _writer_alive(tmp_name: str) -> bool:
    """Whether the process that is writing ``tmp/<key>.<pid>.<rand>`` is still running."""
    try:
        pid = int(tmp_name.split(".")[-2])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:  # alive, owned by another user
        return True
    return True  # alive, possibly this process (another thread's write in progress)


class Store:
    """A results directory. Create with :func:`open_store`."""

    def __init__(self, root: str | os.PathLike[str], *, create: bool = True):
        self.root = Path(root)
        if not self.root.exists():
            if not create:
                raise FileNotFoundError(errno.ENOENT, "no results store", str(self.root))
            self.root.mkdir(parents=True)
        (self.root / "runs").mkdir(exist_ok=True)
        (self.root / "tmp").mkdir(exist_ok=True)
        with closing(self._connect()) as c, c:
            c.executescript(_SCHEMA)
        #: Seconds this object spent storing runs, per stage, and ``runs`` stored
        #: (``fatpipe bench --sweep`` reports them).
        self.timings: dict[str, float] = {}
        # The writer's catalogue connection, kept open while runs are stored: opening one per
        # commit costs a WAL checkpoint each time the last connection closes.
        self._writer: sqlite3.Connection | None = None
        self._writer_lock = threading.Lock()

    def _timed(self, stage: str, t0: float) -> float:
        t1 = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (t1 - t0)
        return t1

    def _connect(self, check_same_thread: bool = True) -> sqlite3.Connection:
        c = sqlite3.connect(self.root / "catalog.sqlite", timeout=60, check_same_thread=check_same_thread)
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=FULL")
        return c

    def __repr__(self) -> str:
        return f"<Store {self.root}>"

    # ---- one run -------------------------------------------------------------------------------
    def path(self, key: str) -> Path:
        return self.root / "runs" / key[:2] / key

    def verify(self, key: str) -> None:
        """Raise :class:`CorruptResultError` unless the run is present and matches its manifest."""
        d = self.path(key)
        try:
            manifest = json.loads((d / MANIFEST).read_text())
        except FileNotFoundError:
            raise CorruptResultError(f"run {key[:12]} is missing or has no manifest") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CorruptResultError(f"run {key[:12]}: manifest is corrupted") from None
        if manifest.get("key") != key or manifest.get("format") != FORMAT:
            raise CorruptResultError(f"run {key[:12]}: manifest is for another key or format")
        for name, info in manifest["files"].items():
            f = d / name
            if not f.is_file() or f.stat().st_size != info["size"] or _sha256(f) != info["sha256"]:
                raise CorruptResultError(f"run {key[:12]}: {name} does not match its manifest "
                                         "(truncated or corrupted); it will be rerun")

    def has(self, key: str) -> bool:
        """True only for a complete, uncorrupted run."""
        try:
            self.verify(key)
            return True
        except CorruptResultError:
            return False

    def put(self, key: str, result: Result, metadata: Mapping[str, Any], metrics: Mapping[str, float]) -> Path:
        """Store one run atomically (tables, metadata with metrics, manifest) and index it."""
        t = time.perf_counter()
        run = encode_run(key, result, metadata, metrics)
        self._timed("encode", t)
        return self.write_runs([run])[0]

    def write_runs(self, runs: Sequence[EncodedRun]) -> list[Path]:
        """Store runs encoded by :func:`~fatpipe.experiments.run_files.encode_run` (in a worker)
        atomically, and index them: the writer's group commit.

        Each run is written under ``tmp/``, manifest last; one barrier fsyncs every file and
        directory of the group concurrently; each directory is renamed into ``runs/`` in one
        step; a second barrier fsyncs the directories that received them; then the group's
        catalogue rows are committed in one transaction, so a row only ever names a durable run.
        When this returns, every run is durable and indexed. If the process dies before, a run is
        either absent (rerun by the next sweep) or complete under ``runs/`` (indexed by
        :meth:`reconcile`); never half-written there.
        """
        runs = list(runs)
        if not runs:
            return []
        t = time.perf_counter()
        staged: list[Path] = []
        try:
            paths: list[Path] = []
            for r in runs:
                tmp = self.root / "tmp" / f"{r.key}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
                tmp.mkdir()
                staged.append(tmp)
                for name, data in (*r.files.items(), (MANIFEST, r.manifest)):  # manifest last
                    (tmp / name).write_bytes(data)
                    paths.append(tmp / name)
                paths.append(tmp)
            t = self._timed("write", t)
            fsync_paths(paths)
            t = self._timed("fsync", t)
            parents: set[Path] = set()
            dests = [self._publish(r.key, tmp, parents) for r, tmp in zip(runs, staged)]
            t = self._timed("rename", t)
            fsync_paths(sorted(parents))  # the renames are durable before any row names them
            t = self._timed("fsync", t)
            self._index_rows([r.row for r in runs])
            self._timed("catalogue", t)
        except BaseException:
            for tmp in staged:
                shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.timings["runs"] = self.timings.get("runs", 0) + len(runs)
        return dests

    def _publish(self, key: str, tmp: Path, parents: set[Path]) -> Path:
        """Rename a complete, durable run directory into ``runs/``; record the directories whose
        entries changed (to be fsynced)."""
        dest = self.path(key)
        try:
            dest.parent.mkdir()
            parents.add(dest.parent.parent)  # runs/ gained an entry
        except FileExistsError:
            pass
        if dest.exists():  # a corrupted copy (a valid one would not be rerun): move it aside
            trash = self.root / "tmp" / f"trash-{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
            dest.rename(trash)
            shutil.rmtree(trash, ignore_errors=True)
        try:
            tmp.rename(dest)
        except OSError:
            # Another writer renamed the same run in first (same key, same content): keep it.
            if not self.has(key):
                raise
            shutil.rmtree(tmp, ignore_errors=True)
        parents.add(dest.parent)
        return dest

    def _index_rows(self, rows: Sequence[tuple]) -> None:
        """Insert catalogue rows in one transaction on the writer's connection."""
        with self._writer_lock:
            if self._writer is None:
                self._writer = self._connect(check_same_thread=False)
                # Run rows are an index of the run directories, which are durable before their
                # rows are written; reconcile() re-indexes any row a power loss takes back, so
                # their commits need not wait for the disk (WAL: the database stays consistent;
                # the rows reach the disk at the next checkpoint, at the latest when the sweep
                # closes the connection). Sweeps and failures keep synchronous=FULL.
                self._writer.execute("PRAGMA synchronous=NORMAL")
            with self._writer as c:
                c.executemany("INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?)", rows)

    def close(self) -> None:
        """Close the writer's catalogue connection (reopened if more runs are stored)."""
        with self._writer_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    def forget(self, keys: Iterable[str]) -> None:
        """Drop catalogue rows (not files) of runs that are missing or corrupted."""
        with closing(self._connect()) as c, c:
            c.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k in keys])

    def metadata(self, key: str) -> dict[str, Any]:
        self.verify(key)
        return json.loads((self.path(key) / "metadata.json").read_text())

    def load(self, key: str) -> Result:
        """The stored run as a :class:`fatpipe.Result` (verified against its manifest first)."""
        meta = self.metadata(key)
        d = self.path(key)
        # Runs stored before the relay tables existed have none (the Result then has them empty).
        tables = {name: pq.read_table(d / f"{name}.parquet") for name in TABLES
                  if name not in RELAY_TABLES or (d / f"{name}.parquet").is_file()}
        return Result(**tables, engine=meta["engine"], plan=meta["plan"], seed=int(meta["seed"]),
                      version=meta["fatpipe_version"], warnings=list(meta.get("summary", {}).get("warnings", [])))

    def resolve(self, prefix: str) -> str:
        """The full key for a unique key prefix (as printed by ``fatpipe results ls``)."""
        with closing(self._connect()) as c:
            rows = c.execute("SELECT key FROM runs WHERE key LIKE ?", (prefix + "%",)).fetchall()
        if len(rows) != 1:
            raise KeyError(f"{'no' if not rows else 'more than one'} run with key prefix {prefix!r}")
        return str(rows[0][0])

    # ---- sweeps --------------------------------------------------------------------------------
    def register_sweep(self, name: str, definition: Mapping[str, Any], metrics: Iterable[str],
                       parameters: Iterable[str], members: Iterable[tuple[int, int, str, str]]) -> None:
        """Record a sweep's definition and its (point, seed, params JSON, key) membership.

        Membership rows of an earlier definition under the same name are replaced, so the
        catalogue always describes the sweep as last run.
        """
        with closing(self._connect()) as c, c:
            c.execute("INSERT OR REPLACE INTO sweeps VALUES (?,?,?,?,?)",
                      (name, json.dumps(definition, default=str), json.dumps(list(metrics)),
                       json.dumps(list(parameters)), time.time()))
            c.execute("DELETE FROM sweep_runs WHERE sweep = ?", (name,))
            c.executemany("INSERT INTO sweep_runs VALUES (?,?,?,?,?)",
                          [(name, p, s, params, k) for p, s, params, k in members])

    def record_failure(self, sweep: str, point: int, seed: int, key: str, attempt: int, error: str) -> None:
        with closing(self._connect()) as c, c:
            c.execute("INSERT INTO failures VALUES (?,?,?,?,?,?,?)",
                      (sweep, point, seed, key, attempt, error, time.time()))

    def sweeps(self) -> pd.DataFrame:
        """One row per sweep: name, runs, stored (finished) runs, metrics, parameters."""
        with closing(self._connect()) as c:
            rows = c.execute(
                "SELECT s.name, s.metrics, s.parameters, s.updated_unix, COUNT(m.key), COUNT(r.key) "
                "FROM sweeps s LEFT JOIN sweep_runs m ON m.sweep = s.name "
                "LEFT JOIN runs r ON r.key = m.key GROUP BY s.name ORDER BY s.name"
            ).fetchall()
        return pd.DataFrame(
            [(n, tot, done, json.loads(mt), json.loads(pa), up) for n, mt, pa, up, tot, done in rows],
            columns=["sweep", "runs", "finished", "metrics", "parameters", "updated_unix"],
        )

    def sweep_definition(self, name: str) -> dict[str, Any]:
        with closing(self._connect()) as c:
            row = c.execute("SELECT definition FROM sweeps WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise KeyError(f"no sweep {name!r} in {self.root}; sweeps: {', '.join(self.sweeps()['sweep'])}")
        return dict(json.loads(row[0]))

    def runs(self, sweep: str | None = None) -> pd.DataFrame:
        """Finished runs with their metrics as columns; for a sweep, its parameters and point too."""
        with closing(self._connect()) as c:
            if sweep is None:
                rows = c.execute("SELECT key, name, seed, version, created_unix, wall_s, packets_delivered, "
                                 "metrics FROM runs ORDER BY created_unix").fetchall()
                base = [dict(key=k, name=n, seed=s, version=v, created_unix=cr, wall_s=w,
                             packets_delivered=p, **json.loads(mt)) for k, n, s, v, cr, w, p, mt in rows]
            else:
                self.sweep_definition(sweep)
                rows = c.execute(
                    "SELECT m.point, m.seed, m.params, m.key, r.wall_s, r.metrics FROM sweep_runs m "
                    "JOIN runs r ON r.key = m.key WHERE m.sweep = ? ORDER BY m.point, m.seed", (sweep,)
                ).fetchall()
                base = [dict(point=p, **json.loads(pa), seed=s, key=k, wall_s=w, **json.loads(mt))
                        for p, s, pa, k, w, mt in rows]
        df = pd.DataFrame(base)
        return df.fillna(value=float("nan")) if not df.empty else df

    def failures(self, sweep: str | None = None) -> pd.DataFrame:
        q = "SELECT sweep, point, seed, key, attempt, error, at_unix FROM failures"
        with closing(self._connect()) as c:
            rows = c.execute(q + (" WHERE sweep = ?" if sweep else "") + " ORDER BY at_unix",
                             (sweep,) if sweep else ()).fetchall()
        return pd.DataFrame(rows, columns=["sweep", "point", "seed", "key", "attempt", "error", "at_unix"])

    # ---- maintenance ---------------------------------------------------------------------------
    def reconcile(self, *, verify: bool = False) -> dict[str, int]:
        """Make the catalogue agree with the run directories.

        Indexes the complete run directories the catalogue lacks (a process killed after a
        rename, before its group's catalogue commit: no finished run is lost), drops rows whose
        directory is gone (or, with ``verify=True``, corrupted), and removes leftovers of
        interrupted writes from ``tmp/``.
        """
        fixed = {"indexed": 0, "dropped": 0, "tmp_removed": 0}
        for t in (self.root / "tmp").iterdir():
            if not _writer_alive(t.name):
                shutil.rmtree(t, ignore_errors=True)
                fixed["tmp_removed"] += 1
        with closing(self._connect()) as c:
            known = {r[0] for r in c.execute("SELECT key FROM runs")}
        on_disk = {p.name for p in (self.root / "runs").glob("*/*") if p.is_dir()}
        rows = [catalogue_row(key, json.loads((self.path(key) / "metadata.json").read_text()))
                for key in sorted(on_disk - known) if self.has(key)]
        if rows:
            self._index_rows(rows)
        fixed["indexed"] = len(rows)
        gone = [k for k in known if k not in on_disk or (verify and not self.has(k))]
        with closing(self._connect()) as c, c:
            c.executemany("DELETE FROM runs WHERE key = ?", [(k,) for k in gone])
        fixed["dropped"] = len(gone)
        return fixed


def open_store(root: str | os.PathLike[str] = "results", *, create: bool = True) -> Store:
    """Open (or create) a results store.

    >>> import tempfile, fatpipe
    >>> st = fatpipe.open_store(tempfile.mkdtemp())
    >>> st.runs().empty
    True
    """
    return Store(root, create=create)
