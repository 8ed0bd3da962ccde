"""The result of one run: columnar tables (pyarrow), a summary, and the plan that produced it."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

TABLES = ("flows", "flow_series", "queues", "queue_series", "links")


@dataclass
class Result:
    """Tables: ``flows``, ``flow_series``, ``queues``, ``queue_series``, ``links`` (pyarrow), each
    convertible with ``.to_pandas()``; column meanings in docs/plan-and-results.md."""

    flows: pa.Table
    flow_series: pa.Table
    queues: pa.Table
    queue_series: pa.Table
    links: pa.Table
    engine: dict[str, Any]
    plan: dict[str, Any]
    seed: int
    version: str
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def _from_core(cls, raw: dict[str, Any], seed: int, version: str) -> "Result":
        tables = {name: pa.table(raw[name]) for name in TABLES}
        return cls(
            **tables,
            engine=dict(raw["engine"]),
            plan=json.loads(raw["plan"]),
            seed=seed,
            version=version,
            warnings=list(raw.get("warnings", [])),
        )

    def table(self, name: str) -> pa.Table:
        if name not in TABLES:
            raise KeyError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        return getattr(self, name)

    def to_pandas(self, name: str):
        """One table as a pandas DataFrame."""
        return self.table(name).to_pandas()

    @property
    def bottleneck(self) -> str | None:
        """The link whose utilisation is reported: the plan's, else the busiest."""
        bn = self.plan.get("bottleneck")
        if bn:
            return str(bn)
        links = self.links.to_pylist()
        if not links:
            return None
        return str(max(links, key=lambda l: l["utilisation"])["link"])

    @property
    def summary(self) -> dict[str, Any]:
        """The run summary (what ``fatpipe run --json`` prints)."""
        flows = self.flows.to_pylist()
        queues = self.queues.to_pylist()
        links = {l["link"]: l for l in self.links.to_pylist()}
        bn = self.bottleneck
        wall = float(self.engine.get("wall_s", 0.0))
        delivered = int(self.engine["packets_delivered"])
        return {
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
