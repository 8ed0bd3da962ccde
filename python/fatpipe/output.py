"""Writing a run's results: Parquet tables + metadata.json (+ the report), atomically.

Everything is written into a temporary sibling directory that is renamed into place at the end,
so an interrupted run never leaves a half-written result directory behind.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from fatpipe.result import TABLES, Result
from fatpipe.scenario import Scenario


def metadata(result: Result, scenario: Scenario, *, wall_s: float, command: str | None) -> dict[str, Any]:
    """Everything needed to rerun and to trust a result."""
    return {
        "fatpipe_version": result.version,
        "seed": result.seed,
        "scenario_source": scenario.source,
        "scenario_toml": scenario.text,
        "overrides": scenario.overrides,
        "normalized_scenario_toml": scenario.to_toml(),
        "command": command,
        "timings": {"wall_s": wall_s, "core_wall_s": result.engine.get("wall_s")},
        "engine": result.engine,
        "summary": result.summary,
        "plan": result.plan,
        "python": platform.python_version(),
        "created_unix": time.time(),
    }


def write_results(
    out_dir: str | os.PathLike[str],
    result: Result,
    scenario: Scenario,
    *,
    wall_s: float,
    command: str | None = None,
    report: bool = True,
) -> Path:
    """Write tables, metadata and (optionally) the report into ``out_dir``; returns it."""
    import pyarrow.parquet as pq  # here, not at import: sweep workers use `metadata` alone

    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        for name in TABLES:
            pq.write_table(result.table(name), tmp / f"{name}.parquet")
        meta = metadata(result, scenario, wall_s=wall_s, command=command)
        (tmp / "metadata.json").write_text(json.dumps(meta, indent=2, default=str))
        (tmp / "scenario.toml").write_text(scenario.to_toml())
        if report:
            from fatpipe.report import write_run_report

            write_run_report(
                tmp / "report",
                summary=result.summary,
                flows=result.to_pandas("flows"),
                flow_series=result.to_pandas("flow_series"),
                queues=result.to_pandas("queues"),
                queue_series=result.to_pandas("queue_series"),
                links=result.to_pandas("links"),
                scenario_text=scenario.to_toml(),
                command=command,
            )
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            tmp.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
