"""The result of one run: columnar tables (pyarrow), a summary, and the plan that produced it.

The core hands its tables over as Python lists, column by column. They become pyarrow tables
only when first asked for, so a caller that wants the summary alone (``fatpipe run --json
--no-write``) never imports pyarrow, which costs more start-up than a short run.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    import pyarrow as pa

TABLES = ("flows", "flow_series", "queues", "queue_series", "links", "segments", "segment_series")

#: Tables only relay chains fill (``kind = "relay"``, docs/relay-simulation.md): empty otherwise,
#: and absent from runs stored before they existed.
RELAY_TABLES = ("segments", "segment_series")

# Column types of the relay tables, so that an empty one has the same schema as a full one.
_RELAY_COLUMNS = {
    "segments": [
        ("flow_id", "int64"), ("segment", "int64"), ("src", "string"), ("dst", "string"), ("cc", "string"),
        ("bytes_sent", "int64"), ("bytes_delivered", "int64"), ("goodput_bps", "float64"),
        ("throughput_bps", "float64"), ("data_packets_sent", "int64"), ("retransmits", "int64"),
        ("timeouts", "int64"), ("fast_recoveries", "int64"), ("packets_dropped", "int64"),
        ("rtt_min_s", "float64"), ("rtt_mean_s", "float64"), ("rtt_max_s", "float64"),
        ("completion_s", "float64"), ("rwnd_limited", "bool_"), ("window_probes", "int64"), ("depot", "string"),
        ("buffer_bytes", "int64"), ("buffer_max_bytes", "int64"), ("buffer_mean_bytes", "float64"),
    ],
    "segment_series": [
        ("t_s", "float64"), ("flow_id", "int64"), ("segment", "int64"), ("cwnd_pkts", "int64"),
        ("ssthresh_pkts", "int64"), ("srtt_s", "float64"), ("bytes_delivered", "int64"), ("goodput_bps", "float64"),
        ("buffer_bytes", "int64"), ("unread_bytes", "int64"),
    ],
}


def relay_schema(name: str) -> "pa.Schema":
    """The schema of relay table ``name`` (``segments`` or ``segment_series``)."""
    import pyarrow as pa

    return pa.schema([(c, getattr(pa, t)()) for c, t in _RELAY_COLUMNS[name]])

Columns = Mapping[str, list]


class Result:
    """Tables: ``flows``, ``flow_series``, ``queues``, ``queue_series``, ``links`` and, for relay
    chains, ``segments`` and ``segment_series`` (pyarrow, empty without relays), each convertible
    with ``.to_pandas()``; column meanings in docs/plan-and-results.md.

    Each table may be given as a pyarrow table or as a mapping of column name to list (what the
    core returns); the latter is converted on first access.
    """

    def __init__(
        self,
        flows: "pa.Table | Columns",
        flow_series: "pa.Table | Columns",
        queues: "pa.Table | Columns",
        queue_series: "pa.Table | Columns",
        links: "pa.Table | Columns",
        engine: dict[str, Any],
        plan: dict[str, Any],
        seed: int,
        version: str,
        warnings: list[str] | None = None,
        segments: "pa.Table | Columns | None" = None,
        segment_series: "pa.Table | Columns | None" = None,
    ):
        self._tables: dict[str, Any] = {
            "flows": flows,
            "flow_series": flow_series,
            "queues": queues,
            "queue_series": queue_series,
            "links": links,
            "segments": segments if segments is not None else {c: [] for c, _ in _RELAY_COLUMNS["segments"]},
            "segment_series": (segment_series if segment_series is not None
                               else {c: [] for c, _ in _RELAY_COLUMNS["segment_series"]}),
        }
        self.engine = engine
        self.plan = plan
        self.seed = seed
        self.version = version
        self.warnings = list(warnings or [])

    @classmethod
    def _from_core(cls, raw: dict[str, Any], seed: int, version: str) -> "Result":
        return cls(
            **{name: raw[name] for name in TABLES if name in raw},
            engine=dict(raw["engine"]),
            plan=json.loads(raw["plan"]),
            seed=seed,
            version=version,
            warnings=list(raw.get("warnings", [])),
        )

    # ---- tables ----------------------------------------------------------------------------------
    def table(self, name: str) -> "pa.Table":
        if name not in TABLES:
            raise KeyError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        t = self._tables[name]
        if isinstance(t, Mapping):
            import pyarrow as pa

            schema = relay_schema(name) if name in RELAY_TABLES else None
            t = self._tables[name] = pa.table(dict(t), schema=schema)
        return t

    flows = property(lambda self: self.table("flows"))
    flow_series = property(lambda self: self.table("flow_series"))
    queues = property(lambda self: self.table("queues"))
    queue_series = property(lambda self: self.table("queue_series"))
    links = property(lambda self: self.table("links"))
    segments = property(lambda self: self.table("segments"))
    segment_series = property(lambda self: self.table("segment_series"))

    def to_pandas(self, name: str):
        """One table as a pandas DataFrame. The conversion is made once per table (a sweep's
        metrics read the same tables dozens of times: 870 -> 170 ms per reference run); each
        call gets its own shallow copy, so adding or replacing a column never reaches another
        caller (modifying values in place would: do not)."""
        cache = self.__dict__.setdefault("_pandas", {})
        if name not in cache:
            cache[name] = self.table(name).to_pandas()
        return cache[name].copy(deep=False)

    def _rows(self, name: str) -> list[dict[str, Any]]:
        """A table's rows as dicts, from the core's columns when not yet converted."""
        t = self._tables[name]
        if isinstance(t, Mapping):
            cols = list(t)
            return [dict(zip(cols, vals)) for vals in zip(*(t[c] for c in cols))]
        return t.to_pylist()

    def __getstate__(self) -> dict[str, Any]:
        # Results cross process boundaries (sweep workers, Dask) as Arrow tables: compact
        # buffers rather than millions of pickled floats.
        state = dict(self.__dict__)
        state.pop("_pandas", None)  # rebuilt on demand; never shipped
        state["_tables"] = {name: self.table(name) for name in TABLES}
        return state

    def __repr__(self) -> str:
        return f"<Result {self.plan.get('name')!r} seed={self.seed} flows={len(self.plan.get('flows', []))}>"

    # ---- derived ---------------------------------------------------------------------------------
    @property
    def bottleneck(self) -> str | None:
        """The link whose utilisation is reported: the plan's, else the busiest."""
        bn = self.plan.get("bottleneck")
        if bn:
            return str(bn)
        links = self._rows("links")
        if not links:
            return None
        return str(max(links, key=lambda l: l["utilisation"])["link"])

    @property
    def summary(self) -> dict[str, Any]:
        """The run summary (what ``fatpipe run --json`` prints)."""
        flows = self._rows("flows")
        queues = self._rows("queues")
        links = {l["link"]: l for l in self._rows("links")}
        bn = self.bottleneck
        wall = float(self.engine.get("wall_s", 0.0))
        delivered = int(self.engine["packets_delivered"])
        out = {
            "name": self.plan.get("name"),
            "seed": self.seed,
            "version": self.version,
            "sim_s": self.plan["duration_ns"] / 1e9,
            "flows": [
                {
                    "flow_id": f["flow_id"],
                    "src": f["src"],
                    "dst": f["dst"],
                    "cc": f["cc"],
                    "goodput_bps": f["goodput_bps"],
                    "retransmits": f["retransmits"],
                    "timeouts": f["timeouts"],
                }
                for f in flows
            ],
            "aggregate_goodput_bps": sum(f["goodput_bps"] for f in flows),
            "bottleneck": bn,
            "utilisation": links[bn]["utilisation"] if bn in links else None,
            "drops": sum(q["drops_tail"] + q["drops_aqm_early"] + q["drops_aqm_forced"] + q.get("drops_random", 0)
                         for q in queues),
            "retransmits": sum(f["retransmits"] for f in flows if f["retransmits"] is not None),
            # Counts a back-end does not measure are null (the testbed's timeouts): summed as absent.
            "timeouts": sum(f["timeouts"] for f in flows if f["timeouts"] is not None),
            "events": int(self.engine.get("events", 0)),
            "backend": self.engine.get("backend", "simulator"),
            "packets_delivered": delivered,
            "wall_s": wall,
            "packets_per_wall_s": delivered / wall if wall > 0 else None,
            "warnings": self.warnings,
        }
        segments = self._rows("segments")
        if segments:  # relay chains: each segment's goodput, losses and depot buffer
            out["segments"] = [
                {k: g[k] for k in ("flow_id", "segment", "src", "dst", "cc", "goodput_bps", "retransmits",
                                   "timeouts", "depot", "buffer_bytes", "buffer_max_bytes")}
                for g in segments
            ]
        return out
