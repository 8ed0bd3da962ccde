"""The default traffic driver: fatpipe-bulk (crates/fatpipe-bulk), one receiver per flow in its
destination and one sender in its source at the flow's start time; the sender samples TCP_INFO
at the monitor interval."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

from fatpipe.exceptions import FatpipeError
from fatpipe.testbed.layout import Layout

__all__ = ["run_flows", "popen_ns", "stop_of", "BASE_PORT"]

BASE_PORT = 5001

Report = tuple[dict[str, Any], "dict[str, Any] | None"]


def popen_ns(ns: str, argv: list[str], **kw: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(["ip", "netns", "exec", ns, *argv], text=True, **kw)


def stop_of(f: dict[str, Any], duration: float) -> float:
    return (f["stop_ns"] * 1e-9) if f.get("stop_ns") else duration


def sleep_until(t: float) -> None:
    wait = t - time.clock_gettime(time.CLOCK_MONOTONIC)
    if wait > 0:
        time.sleep(wait)


def run_flows(plan: dict[str, Any], lay: Layout, t0: float, duration: float, interval: float,
              procs: list[subprocess.Popen[str]], binary: str, opts: dict[str, Any] | None = None) -> dict[int, Report]:
    """Start every flow on the run's clock (``t0`` = CLOCK_MONOTONIC time of t = 0) and return
    each flow's (sender report, receiver report). ``opts``: ``sndbuf``, ``rcvbuf`` (bytes) and
    ``close`` of :func:`fatpipe.testbed.tuning.run_options`."""
    opts = opts or {}
    rcvbuf = ["--rcvbuf", str(int(opts["rcvbuf"]))] if opts.get("rcvbuf") else []
    sndbuf = ["--sndbuf", str(int(opts["sndbuf"]))] if opts.get("sndbuf") else []
    # A graceful close applies to timed flows (a file transfer ends with its last byte anyway).
    graceful = opts.get("close") == "graceful"
    receivers = {}
    # Each receiver reports the bytes it read by its flow's end apart, as the simulator counts them.
    for f in plan["flows"]:
        port = BASE_PORT + int(f["id"])
        r = popen_ns(lay.ns(f["dst"]), [binary, "recv", "--port", str(port), "--until",
                                        f"{t0 + stop_of(f, duration):.6f}", *rcvbuf],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert r.stderr is not None
        procs.append(r)
        if not r.stderr.readline().startswith("listening"):
            raise FatpipeError(f"flows[{f['id']}]: the receiver did not start")
        receivers[int(f["id"])] = r
    senders = {}
    for f in sorted(plan["flows"], key=lambda f: f["start_ns"]):
        start = f["start_ns"] * 1e-9
        sleep_until(t0 + start)
        stop = stop_of(f, duration)
        amount = (["--bytes", str(f["size_bytes"])] if f.get("size_bytes") is not None
                  else ["--duration", f"{max(stop - start, 1e-3):.6f}"])
        argv = [binary, "send", "--to", f"{lay.host_ip[f['dst']]}:{BASE_PORT + int(f['id'])}", "--cc", f["cc"],
                "--mss", str(f["mss"]), "--interval", f"{interval:.6f}", "--flow", str(f["id"]), *sndbuf, *amount,
                *(["--close", "graceful"] if graceful and f.get("size_bytes") is None else [])]
        s = popen_ns(lay.ns(f["src"]), argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        senders[int(f["id"])] = s
        procs.append(s)
    reports: dict[int, Report] = {}
    deadline = t0 + duration + 5.0
    for fid, s in senders.items():
        try:
            out, err = s.communicate(timeout=max(deadline - time.clock_gettime(time.CLOCK_MONOTONIC), 0.1))
        except subprocess.TimeoutExpired:
            s.kill()
            out, err = s.communicate()
        if s.returncode != 0:
            raise FatpipeError(f"flows[{fid}]: fatpipe-bulk send failed: {err.strip()}")
        rout, _ = receivers[fid].communicate(timeout=10)
        rjson = json.loads(rout) if rout.strip() else {}
        conns = rjson.get("connections", [])
        first = dict(conns[0]) if conns and conns[0] else None
        if first is not None:
            first["rcvbuf_bytes"] = rjson.get("rcvbuf_bytes")  # what Linux granted the listener
        reports[fid] = (json.loads(out), first)
    return reports
