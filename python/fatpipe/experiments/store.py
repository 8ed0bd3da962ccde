"""The results store: content-addressed runs (Parquet + metadata) and a SQLite catalogue.

Layout of a store directory::

    catalog.sqlite            runs, sweeps, sweep membership and failures (a derived index)
    runs/ab/abcdef.../        one finished run: <table>.parquet, metadata.json, MANIFEST.json
    tmp/                      runs being written; never read

A run's key is the SHA-256 of its elaborated plan (which contains the seed and every parameter,
with units resolved) and the fatpipe version, so the same run is found again whichever sweep or
file asked for it, and a new version never reuses an old version's results.

Writes are atomic: a run is written and fsynced under ``tmp/`` and renamed into ``runs/`` in one
step, with ``MANIFEST.json`` (size and SHA-256 of every file) written last. A run directory whose
manifest does not match its files (truncated, corrupted, half-copied) is treated as missing and
rerun, never used. The catalogue is only an index: :meth:`Store.reconcile` rebuilds its rows from
the run directories, so a process killed between the rename and the catalogue insert loses
nothing. SQLite (stdlib, transactional, one file) was chosen over DuckDB to keep the dependency
list short; pandas/pyarrow give the analytical side.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import sqlite3
import time
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd
import pyarrow.parquet as pq

from fatpipe.exceptions import FatpipeError
from fatpipe.result import RELAY_TABLES, TABLES, Result

__all__ = ["Store", "CorruptResultError", "open_store", "run_key"]

FORMAT = 1
MANIFEST = "MANIFEST.json"

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


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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


def _nan_to_none(d: Mapping[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


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

    def _connect(self) -> sqlite3.Connection:
        c = sqlite3.connect(self.root / "catalog.sqlite", timeout=60)
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
        tmp = self.root / "tmp" / f"{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            files = []
            for name in TABLES:
                pq.write_table(result.table(name), tmp / f"{name}.parquet")
                files.append(f"{name}.parquet")
            meta = {**metadata, "key": key, "metrics": _nan_to_none(metrics)}
            (tmp / "metadata.json").write_text(json.dumps(meta, indent=2, default=str))
            files.append("metadata.json")
            for f in files:
                _fsync_file(tmp / f)
            manifest = {
                "format": FORMAT,
                "key": key,
                "files": {f: {"size": (tmp / f).stat().st_size, "sha256": _sha256(tmp / f)} for f in files},
            }
            (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1))
            _fsync_file(tmp / MANIFEST)
            _fsync_dir(tmp)
            dest = self.path(key)
            dest.parent.mkdir(exist_ok=True)
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
            _fsync_dir(dest.parent)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._index(key, meta)
        return dest

    def _index(self, key: str, meta: Mapping[str, Any]) -> None:
        with closing(self._connect()) as c, c:
            c.execute(
                "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?)",
                (
                    key,
                    meta.get("plan", {}).get("name"),
                    meta.get("seed"),
                    meta.get("fatpipe_version"),
                    meta.get("created_unix"),
                    (meta.get("timings") or {}).get("wall_s"),
                    (meta.get("engine") or {}).get("packets_delivered"),
                    json.dumps(meta.get("metrics", {})),
                ),
            )

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

        Indexes run directories the catalogue lacks (a process killed after the rename), drops
        rows whose directory is gone (or, with ``verify=True``, corrupted), and removes leftovers
        of interrupted writes from ``tmp/``.
        """
        fixed = {"indexed": 0, "dropped": 0, "tmp_removed": 0}
        for t in (self.root / "tmp").iterdir():
            if not _writer_alive(t.name):
                shutil.rmtree(t, ignore_errors=True)
                fixed["tmp_removed"] += 1
        with closing(self._connect()) as c:
            known = {r[0] for r in c.execute("SELECT key FROM runs")}
        on_disk = {p.name for p in (self.root / "runs").glob("*/*") if p.is_dir()}
        for key in sorted(on_disk - known):
            if self.has(key):
                self._index(key, json.loads((self.path(key) / "metadata.json").read_text()))
                fixed["indexed"] += 1
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
