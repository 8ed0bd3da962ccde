"""A finished run as the bytes of the files the store keeps, encoded where the run ran.

A sweep has many workers and one writer (the process driving the sweep). Encoding a run —
Parquet for every table, ``metadata.json``, the SHA-256 of each file for the manifest, the
catalogue row — costs more than writing the bytes, so the workers do it (:func:`encode_run`, called
by :func:`fatpipe.experiments.execute.execute_run`) and the writer only writes, fsyncs and renames
(:meth:`fatpipe.experiments.store.Store.write_runs`). The bytes are those the store wrote itself
before this split: same Parquet writer, same JSON layout, same manifest.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Mapping

from fatpipe.result import RELAY_TABLES, TABLES, Result

__all__ = ["EncodedRun", "encode_run", "catalogue_row", "FORMAT", "MANIFEST"]

#: Store format: part of every run key and of every manifest.
FORMAT = 1
MANIFEST = "MANIFEST.json"

#: A row of the catalogue's ``runs`` table: key, name, seed, version, created_unix, wall_s,
#: packets_delivered, metrics (JSON).
Row = tuple[str, Any, Any, Any, Any, Any, Any, str]


@dataclass(frozen=True)
class EncodedRun:
    """One run ready to be stored: its files' bytes, its manifest and its catalogue row.

    ``files`` maps each file name to its contents, in the order they are written; ``manifest`` is
    the contents of ``MANIFEST.json`` (size and SHA-256 of every file), written after them.
    """

    key: str
    files: dict[str, bytes]
    manifest: bytes
    row: Row
    metrics: dict[str, float]

    @property
    def nbytes(self) -> int:
        return sum(len(b) for b in self.files.values()) + len(self.manifest)


def _nan_to_none(d: Mapping[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def catalogue_row(key: str, meta: Mapping[str, Any]) -> Row:
    """The catalogue row of a run, from its ``metadata.json`` (so :meth:`Store.reconcile` builds
    the same row from a run directory as the writer did)."""
    return (
        key,
        meta.get("plan", {}).get("name"),
        meta.get("seed"),
        meta.get("fatpipe_version"),
        meta.get("created_unix"),
        (meta.get("timings") or {}).get("wall_s"),
        (meta.get("engine") or {}).get("packets_delivered"),
        json.dumps(meta.get("metrics", {})),
    )


def _parquet(table) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def encode_run(key: str, result: Result, metadata: Mapping[str, Any], metrics: Mapping[str, float]) -> EncodedRun:
    """The files of one run (every table as Parquet, the relay tables only when filled, then ``metadata.json`` with the metrics and
    the key) and the manifest that lists their sizes and SHA-256."""
    # The relay tables are written only when a relay chain filled them (the store reads an absent
    # one as empty), so runs without relays keep their five files and the writer's cost.
    files = {f"{name}.parquet": _parquet(result.table(name)) for name in TABLES
             if name not in RELAY_TABLES or result.table(name).num_rows > 0}
    meta = {**metadata, "key": key, "metrics": _nan_to_none(metrics)}
    files["metadata.json"] = json.dumps(meta, indent=2, default=str).encode()
    manifest = {
        "format": FORMAT,
        "key": key,
        "files": {name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in files.items()},
    }
    return EncodedRun(key, files, json.dumps(manifest, indent=1).encode(), catalogue_row(key, meta), dict(metrics))
