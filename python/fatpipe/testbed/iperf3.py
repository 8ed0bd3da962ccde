"""iperf3 as the testbed's traffic driver (``[testbed] driver = "iperf3"``).

One ``iperf3 -s -1`` server per flow in its destination and one client in its source at the
flow's start time, both with ``-J``; the client sets the congestion control (``-C``), the segment
size (``-M``, TCP_MAXSEG), the socket buffer (``-w``, both ends, when the scenario's
``testbed.sndbuf`` or ``rcvbuf`` is set) and reports every ``-i`` seconds (iperf3 takes at
least 0.1 s). Its reports become fatpipe-bulk's shape, so the same tables come out, with what
iperf3 does not measure left null:

- ``ssthresh`` is not reported (null in ``flow_series``), nor data segments sent;
- the per-interval byte counts are bytes the application wrote to the socket, so
  ``flow_series.goodput_bps`` is the send rate (the flows table's goodput is the server's count);
- times are relative to iperf3's test start, which follows the client's launch by its control
  connection's set-up (about one RTT): the flow's start is the launch time.

iperf3 3.x serves one test at a time per server, so every flow has its own port and server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from typing import Any

from fatpipe.exceptions import FatpipeError
from fatpipe.testbed.bulk import BASE_PORT, Report, popen_ns, sleep_until, stop_of
from fatpipe.testbed.layout import Layout

__all__ = ["run_flows", "client_argv", "server_argv", "reports_from", "MIN_INTERVAL_S"]

#: iperf3 refuses report intervals below 0.1 s (iperf_api.c: MIN_INTERVAL).
MIN_INTERVAL_S = 0.1


def server_argv(port: int) -> list[str]:
    return ["iperf3", "-s", "-1", "-J", "-p", str(port)]


def client_argv(flow: dict[str, Any], dst_ip: str, port: int, interval: float, duration: float,
                buffer_bytes: int | None) -> list[str]:
    """The client command for one plan flow (a finite transfer sends ``-n`` bytes)."""
    start = flow["start_ns"] * 1e-9
    amount = (["-n", str(flow["size_bytes"])] if flow.get("size_bytes") is not None
              else ["-t", f"{max(stop_of(flow, duration) - start, 1e-3):.3f}"])
    buf = ["-w", str(buffer_bytes)] if buffer_bytes else []
    return ["iperf3", "-c", dst_ip, "-p", str(port), "-J", "-C", flow["cc"], "-M", str(flow["mss"]),
            "-i", f"{max(interval, MIN_INTERVAL_S):.3f}", *buf, *amount]


def reports_from(client: dict[str, Any], server: dict[str, Any] | None, t_launch: float,
                 mss: int) -> Report:
    """iperf3's client and server JSON -> (sender report, receiver report) as fatpipe-bulk's."""
    end = client.get("end") or {}
    sent = end.get("sum_sent") or {}
    smss = int((client.get("start") or {}).get("tcp_mss") or mss)
    samples, acc = [], 0
    for iv in client.get("intervals") or []:
        st = iv["streams"][0]
        acc += int(st.get("bytes", 0))
        samples.append({"t": t_launch + float(st["end"]), "cwnd": int(st.get("snd_cwnd", 0)) // max(smss, 1),
                        "ssthresh": None, "rtt_s": float(st.get("rtt", 0)) * 1e-6, "bytes_acked": acc + 1})
    send = {"t_start": t_launch, "bytes_sent": int(sent.get("bytes", acc)),
            "total_retrans": int(sent.get("retransmits", 0)), "data_segs_out": None, "snd_mss": smss,
            "samples": samples}
    recv = None
    if server is not None:
        got = (server.get("end") or {}).get("sum_received") or {}
        recv = {"bytes": int(got.get("bytes", 0)), "bytes_until": int(got.get("bytes", 0)),
                "t_last": t_launch + float(got.get("end", 0.0))}
    return send, recv


def _wait_listening(ns: str, port: int, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", f"sport = :{port}"],
                             capture_output=True, text=True).stdout
        if out.strip():
            return True
        time.sleep(0.02)
    return False


def run_flows(plan: dict[str, Any], lay: Layout, t0: float, duration: float, interval: float,
              procs: list[subprocess.Popen[str]], opts: dict[str, Any] | None = None) -> dict[int, Report]:
    """As :func:`fatpipe.testbed.bulk.run_flows`, with iperf3 (bulk and file flows; ``close`` does
    not apply: iperf3 ends its own way)."""
    if shutil.which("iperf3") is None:
        raise FatpipeError("testbed.driver = \"iperf3\" but iperf3 is not installed (Debian: apt-get install iperf3; "
                           "make setup does as root)")
    opts = opts or {}
    buf = opts.get("sndbuf") or opts.get("rcvbuf")
    servers = {}
    for f in plan["flows"]:
        port = BASE_PORT + int(f["id"])
        s = popen_ns(lay.ns(f["dst"]), server_argv(port), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(s)
        if not _wait_listening(lay.ns(f["dst"]), port):
            raise FatpipeError(f"flows[{f['id']}]: the iperf3 server did not start")
        servers[int(f["id"])] = s
    clients = {}
    for f in sorted(plan["flows"], key=lambda f: f["start_ns"]):
        sleep_until(t0 + f["start_ns"] * 1e-9)
        argv = client_argv(f, lay.host_ip[f["dst"]], BASE_PORT + int(f["id"]), interval, duration, buf)
        c = popen_ns(lay.ns(f["src"]), argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(c)
        clients[int(f["id"])] = (c, time.clock_gettime(time.CLOCK_MONOTONIC), f)
    reports: dict[int, Report] = {}
    deadline = t0 + duration + 10.0
    for fid, (c, launched, f) in clients.items():
        try:
            out, err = c.communicate(timeout=max(deadline - time.clock_gettime(time.CLOCK_MONOTONIC), 0.1))
        except subprocess.TimeoutExpired:
            c.kill()
            out, err = c.communicate()
        report = json.loads(out) if out.strip() else {}
        if c.returncode != 0 or "error" in report:
            raise FatpipeError(f"flows[{fid}]: iperf3 failed: {report.get('error') or err.strip()}")
        s = servers[fid]
        try:
            sout, _ = s.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            s.kill()
            sout, _ = s.communicate()
        reports[fid] = reports_from(report, json.loads(sout) if sout.strip() else None, launched, int(f["mss"]))
    return reports
