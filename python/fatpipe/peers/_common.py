"""What every peer runner needs alike (standard library only, like the peers themselves): a work
directory that is kept when given and removed otherwise, the tail of a tool's output for error
messages, and a flow's result row shaped like fatpipe's ``flows`` table."""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Any, Iterator


@contextlib.contextmanager
def work_directory(workdir: str | None, prefix: str) -> Iterator[str]:
    """``workdir`` (created if missing, kept afterwards), or a temporary directory removed on exit."""
    if workdir is not None:
        os.makedirs(workdir, exist_ok=True)
        yield workdir
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield tmp


def tail(text: str, n: int = 3000) -> str:
    """The last ``n`` characters of a tool's output."""
    return text[-n:] if len(text) > n else text


def flow_row(f: dict, dur_s: float, *, bytes_sent: int, bytes_delivered: int, completion: float | None,
             **counters: Any) -> dict:
    """A plan flow's result row: the span it is measured over (start to ``completion``, stop or
    the end of the run) and goodput and throughput over that span, then the peer's ``counters``
    (retransmits, timeouts, RTTs, ``completion_s``, extras) in the order given."""
    start_s = int(f.get("start_ns", 0)) / 1e9
    if completion is not None:
        end_s = completion
    elif f.get("stop_ns") is not None and int(f["stop_ns"]) / 1e9 < dur_s:
        end_s = int(f["stop_ns"]) / 1e9
    else:
        end_s = dur_s
    span = end_s - start_s
    return {
        "flow_id": int(f["id"]),
        "src": f["src"],
        "dst": f["dst"],
        "cc": f.get("cc", "reno"),
        "start_s": start_s,
        "end_s": end_s,
        "bytes_sent": bytes_sent,
        "bytes_delivered": bytes_delivered,
        "goodput_bps": bytes_delivered * 8 / span if span > 0 else 0.0,
        "throughput_bps": bytes_sent * 8 / span if span > 0 else 0.0,
        **counters,
    }
