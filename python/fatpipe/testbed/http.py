"""The ``http`` traffic driver (``[testbed] driver = "http"``): file flows as HTTP downloads and
relay flows through real depots, as in seed 002's testbed (Apache and wget there; the
``fatpipe-depot`` origin and ``curl`` here).

Per flow ``f`` (a plan flow of kind "file" or "relay", sender = the web server ``f.src``):

- an origin (``fatpipe-depot origin``) in ``f.src`` serving one file of ``f.size`` pseudo-random
  bytes (the flow's seed), sending with the first segment's congestion control;
- for a relay, a depot (``fatpipe-depot serve``) on each of its depots, sending with the
  congestion control of the segment it starts; the origin redirects into the chain (client side
  first), each hop being the depot's address facing the previous node, so each segment is the
  plan's own path between its ends;
- at the flow's start time, ``curl -L`` in ``f.dst`` downloads the file (one redirect through a
  chain, none directly); the download is checked against the file's SHA-256.

The flows-table row measures the paper's throughput (seed note §4.3): bits over the time from the
start of the connection that carries the data (curl's ``time_redirect``: after the redirect
round trip, before the SYN of the final connection) to the last byte (``time_total``). Each
segment's sender socket is looked at with ``ss -tin`` while the data moves: the congestion
control it runs, its RTT and retransmissions (the ``segments`` rows), so a run shows that there
were depots + 1 TCP connections and which algorithm each ran (targets F2, F4). The depots' own
buffer (``depot.buffer_bytes``) is the daemon's default; the kernel's socket buffers (the host
tuning, ``rmem``/``wmem``) do the rest of the buffering, as in the paper's C daemon.
"""

from __future__ import annotations

import hashlib
import math
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from fatpipe.exceptions import FatpipeError
from fatpipe.peak_memory import vm_hwm_bytes
from fatpipe.testbed.build import tuning_sysctls
from fatpipe.testbed.bulk import popen_ns, sleep_until, stop_of
from fatpipe.testbed.depot import DEPOT_PORT, ORIGIN_PORT, Daemon, link_ip, node_path, route_to_depots, start_daemon
from fatpipe.testbed.layout import Layout
from fatpipe.testbed.run import HTTP_KINDS
from fatpipe.testbed.system import in_ns

__all__ = ["run_http_flows", "parse_ss", "sockets", "write_random_file", "KINDS", "CURL_FORMAT"]

#: Flows the http driver runs.
KINDS = HTTP_KINDS
#: What curl reports per download (``-w``); the names are curl's.
CURL_FORMAT = ("%{http_code} %{num_redirects} %{size_download} %{time_redirect} %{time_connect} "
               "%{time_starttransfer} %{time_total} %{url_effective}")
#: Times at which the senders' sockets are looked at (seconds after the download starts), until
#: it ends: early enough for short transfers (the server's segment ends first, as soon as the
#: depots' buffers hold the rest), few enough to leave the CPU to the emulator.
SNAPSHOT_AT_S = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2)


def write_random_file(path: Path, size: int, seed: int) -> str:
    """Writes ``size`` pseudo-random bytes (from ``seed``) to ``path``; returns their SHA-256."""
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()
    with open(path, "wb") as f:
        left = size
        while left > 0:
            block = rng.bytes(min(left, 1 << 24))
            f.write(block)
            h.update(block)
            left -= len(block)
    return h.hexdigest()


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# `ss -tinH state established`: "Recv-Q Send-Q LOCAL:PORT PEER:PORT", then a line of details.
_CONN = re.compile(r"^\d+\s+\d+\s+(\S+):(\d+)\s+(\S+):(\d+)")


def sockets(ns: str, algorithms: Sequence[str]) -> list[dict[str, Any]]:
    """Established TCP sockets of namespace ``ns`` (:func:`parse_ss` of ``ss -tinH``)."""
    r = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tinH", "state", "established"], capture_output=True,
                       text=True)
    return parse_ss(r.stdout, algorithms)


def parse_ss(text: str, algorithms: Sequence[str]) -> list[dict[str, Any]]:
    """Sockets from ``ss -tinH state established``: local/peer address and port, the congestion
    control (the first word that names one of ``algorithms``), bytes acknowledged, smoothed RTT
    (s) and retransmissions (the total after ``retrans:``'s slash)."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        m = _CONN.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if m:
            out.append({"local": m.group(1), "lport": int(m.group(2)), "peer": m.group(3), "pport": int(m.group(4)),
                        "cc": None, "bytes_acked": 0, "rtt_s": math.nan, "retrans": 0})
        elif out:
            s = out[-1]
            for w in line.split():
                if w in algorithms and s["cc"] is None:
                    s["cc"] = w
                elif w.startswith("bytes_acked:"):
                    s["bytes_acked"] = int(w.split(":")[1])
                elif w.startswith("rtt:"):
                    s["rtt_s"] = float(w[4:].split("/")[0]) / 1e3
                elif w.startswith("retrans:"):
                    s["retrans"] = int(w.split("/")[-1])
    return out


def _metric(ns: str, d: Daemon, series: str) -> float | None:
    r = subprocess.run(["ip", "netns", "exec", ns, "curl", "-sS", f"http://{d.metrics}/metrics"], capture_output=True,
                       text=True, timeout=30)
    for line in r.stdout.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def _peak_rss_kib(d: Daemon) -> int | None:
    b = vm_hwm_bytes(d.pid)
    return None if b is None else b // 1024


class _Flow:
    """One download: its origin, depots, curl and what was seen of it."""

    def __init__(self, f: dict[str, Any], lay: Layout, tmp: Path, key: Path, addresses: list[str], seed: int):
        self.f = f
        self.fid = int(f["id"])
        if f.get("size_bytes") is None:
            raise FatpipeError(f"flows[{self.fid}]: the http driver downloads files: give the flow a `size`")
        self.size = int(f["size_bytes"])
        relay = f.get("relay") or {}
        #: Data order: server, depots..., client.
        self.nodes = [f["src"], *relay.get("depots", []), f["dst"]]
        self.segments = relay.get("segments") or [f]
        root = tmp / f"files-{self.fid}"
        root.mkdir()
        self.name = f"flow{self.fid}.bin"
        self.sha = write_random_file(root / self.name, self.size, seed * 1000003 + self.fid)
        self.depots: list[Daemon] = []
        self.lay = lay
        allow = [a for ip in addresses for a in ("--allow", ip)]
        port = DEPOT_PORT + self.fid
        # Depots, the server's side first: depot i sends segment i + 1.
        for i, node in enumerate(self.nodes[1:-1]):
            cc = self.segments[i + 1]["cc"]
            args = ["--listen", f"0.0.0.0:{port}", *allow, "--set", f'downstream.congestion="{cc}"',
                    "--log-level", "warn"]
            self.depots.append(start_daemon(lay.ns(node), node, "serve", args, "0.0.0.0", key,
                                            tmp / f"depot-{self.fid}-{node}.log"))
        # Hops, the client's side first: each depot's address facing its client-side neighbour.
        hops = []
        for d in reversed(self.depots):
            path = node_path(lay, f["dst"], d.node)
            hops.append(f"{link_ip(lay, d.node, path[-2])}:{port}")
            d.addr = hops[-1]
        last = self.nodes[-2]
        oport = ORIGIN_PORT + self.fid
        advertise = link_ip(lay, f["src"], node_path(lay, f["src"], last)[1]) if self.depots else lay.host_ip[f["src"]]
        args = ["--listen", f"0.0.0.0:{oport}", "--root", str(root), "--chain", ",".join(hops), "--advertise",
                f"{advertise}:{oport}", "--set", f'downstream.congestion="{self.segments[0]["cc"]}"',
                "--log-level", "warn"]
        self.origin = start_daemon(lay.ns(f["src"]), f["src"], "origin", args, lay.host_ip[f["src"]], key,
                                   tmp / f"origin-{self.fid}.log")
        #: The origin as the last depot reaches it (the first depot's upstream hop).
        self.origin_hop = f"{advertise}:{oport}"
        self.out = tmp / f"got-{self.fid}.bin"
        self.curl: subprocess.Popen[str] | None = None
        self.t_start = math.nan
        #: Per segment: the latest view of its sender's socket that had moved data.
        self.seen: list[dict[str, Any] | None] = [None] * len(self.segments)
        self.snapshots = 0

    def start(self, remaining_s: float) -> None:
        self.t_start = time.clock_gettime(time.CLOCK_MONOTONIC)
        argv = ["curl", "-sS", "-L", "-o", str(self.out), "-w", CURL_FORMAT, "--max-time", f"{max(remaining_s, 1):.3f}",
                self.origin.url(f"/{self.name}")]
        self.curl = popen_ns(self.lay.ns(self.f["dst"]), argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def snapshot(self, algorithms: Sequence[str]) -> None:
        """Looks at each segment's sender socket: in the sending node, the socket on the port it
        listens on, towards the next node, that has acknowledged data."""
        for i in range(len(self.segments)):
            sender = self.nodes[i]
            port = ORIGIN_PORT + self.fid if i == 0 else DEPOT_PORT + self.fid
            nxt = self.nodes[i + 1]
            peer = link_ip(self.lay, nxt, node_path(self.lay, nxt, sender)[1])
            for s in sockets(self.lay.ns(sender), algorithms):
                if s["lport"] == port and s["peer"] == peer and s["bytes_acked"] > 1:
                    prev = self.seen[i]
                    if prev is None or s["bytes_acked"] >= prev["bytes_acked"]:
                        self.seen[i] = s

    def finish(self, t0: float) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        assert self.curl is not None
        out, err = self.curl.communicate()
        parts = out.split(" ", 7)
        ok_curl = self.curl.returncode == 0 and len(parts) == 8
        code, redirects, size, t_redir, t_conn, t_first, t_total = (parts[:7] if len(parts) >= 7 else
                                                                    ["0", "0", "0", "nan", "nan", "nan", "nan"])
        got = self.out.stat().st_size if self.out.exists() else 0
        complete = ok_curl and code == "200" and got == self.size
        identical = complete and _sha(self.out) == self.sha
        start = self.t_start - t0
        t_redir_f, t_total_f = float(t_redir), float(t_total)
        begin = start + (t_redir_f if math.isfinite(t_redir_f) else 0.0)
        end = start + t_total_f if math.isfinite(t_total_f) else math.nan
        span = end - begin if complete and end > begin else math.nan
        # What each depot (data order) received from the hop before it.
        hop_bytes = [_metric(self.lay.ns(d.node), d, 'fatpipe_depot_hop_bytes_total{hop="%s"}'
                             % (self.origin_hop if i == 0 else self.depots[i - 1].addr))
                     for i, d in enumerate(self.depots)]
        rtts = [s["rtt_s"] for s in self.seen if s is not None]
        row = {
            "flow_id": self.fid, "src": self.f["src"], "dst": self.f["dst"], "cc": self.f["cc"], "kind": self.f["kind"],
            "role": self.f["role"], "start_s": begin, "end_s": end if complete else math.nan, "bytes_sent": got,
            "bytes_delivered": got, "goodput_bps": got * 8 / span if complete else math.nan,
            "throughput_bps": got * 8 / span if complete else math.nan, "data_packets_sent": None,
            "retransmits": sum(s["retrans"] for s in self.seen if s is not None), "timeouts": None,
            "fast_recoveries": None, "rtt_min_s": min(rtts) if rtts else math.nan,
            "rtt_mean_s": sum(rtts) / len(rtts) if rtts else math.nan, "rtt_max_s": max(rtts) if rtts else math.nan,
            "completion_s": end if complete else math.nan, "rwnd_limited": False, "objects": int(complete),
            "transfer_time_mean_s": span, "bytes_offered": self.size, "conn_goodput_mean_bps": math.nan,
            "conn_throughput_mean_bps": math.nan, "conn_cwnd_mean_pkts": math.nan, "conn_rtt_mean_s": math.nan,
            "conn_timeouts_mean": math.nan, "delay_mean_s": math.nan, "jitter_s": math.nan, "app_packets": 0,
            "app_discards": 0, "packets_delivered": got // max(int(self.f["mss"]), 1), "packets_dropped": 0,
            "loss_event_rate": math.nan,
        }
        segs = []
        if self.f["kind"] == "relay":
            depot_names = self.nodes[1:-1]
            for i, seg in enumerate(self.segments):
                s = self.seen[i]
                delivered = got if i == len(self.segments) - 1 else hop_bytes[i]
                segs.append({
                    "flow_id": self.fid, "segment": i, "src": self.nodes[i], "dst": self.nodes[i + 1],
                    "cc": (s or {}).get("cc") or "", "bytes_sent": None if s is None else s["bytes_acked"],
                    "bytes_delivered": None if delivered is None else int(delivered),
                    "goodput_bps": math.nan, "throughput_bps": math.nan, "data_packets_sent": None,
                    "retransmits": None if s is None else s["retrans"], "timeouts": None, "fast_recoveries": None,
                    "packets_dropped": None, "rtt_min_s": math.nan, "rtt_mean_s": (s or {}).get("rtt_s", math.nan),
                    "rtt_max_s": math.nan, "completion_s": math.nan, "rwnd_limited": False, "window_probes": None,
                    "depot": depot_names[i] if i < len(depot_names) else "", "buffer_bytes": None,
                    "buffer_max_bytes": None, "buffer_mean_bytes": math.nan,
                })
        record = {
            "flow_id": self.fid, "http_code": int(code) if code.isdigit() else 0,
            "redirects": int(redirects) if redirects.isdigit() else 0, "url": parts[7] if len(parts) == 8 else "",
            "size_bytes": self.size, "downloaded_bytes": got, "complete": complete, "identical": identical,
            "curl_exit": self.curl.returncode, "curl_error": err.strip()[-500:],
            "time_redirect_s": t_redir_f, "time_connect_s": float(t_conn), "time_starttransfer_s": float(t_first),
            "time_total_s": t_total_f,
            "planned_cc": [s["cc"] for s in self.segments],
            "seen_cc": [None if s is None else s["cc"] for s in self.seen],
            "segments_seen": sum(s is not None for s in self.seen),
            "depot_hop_bytes": hop_bytes,
            "depot_peak_rss_kib": [_peak_rss_kib(d) for d in self.depots],
        }
        return row, segs, record

    def stop(self) -> None:
        for d in [*self.depots, self.origin]:
            if d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()


def run_http_flows(plan: dict[str, Any], lay: Layout, t0: float, duration: float, tmp: Path,
                   key_file: Path, depot_tuning: dict[str, Any], algorithms: Sequence[str]):
    """Runs every flow of ``plan`` as above; returns (flow rows, segment rows, per-flow records)."""
    sysctls = tuning_sysctls({k: v for k, v in depot_tuning.items() if k != "txqueuelen"})
    depot_nodes = {d for f in plan["flows"] for d in (f.get("relay") or {}).get("depots", [])}
    for node in sorted(depot_nodes):
        # Depots terminate TCP: a router that is a depot gets the hosts' socket tuning.
        if lay.nodes.get(node) == "router" and sysctls:
            in_ns(lay.ns(node), "sysctl", "-q", *[a for k, v in sysctls.items() for a in ("-w", f"{k}={v}")])
    route_to_depots(lay, depot_nodes)
    addresses = [ip for s in lay.links for ip in (s.a_ip, s.b_ip)]
    flows: list[_Flow] = []
    try:
        for f in plan["flows"]:
            flows.append(_Flow(f, lay, tmp, key_file, addresses, int(plan["seed"])))
        for fl in sorted(flows, key=lambda x: x.f["start_ns"]):
            start = fl.f["start_ns"] * 1e-9
            sleep_until(t0 + start)
            fl.start(stop_of(fl.f, duration) - start)
        pending = list(flows)
        while pending:
            now = time.clock_gettime(time.CLOCK_MONOTONIC)
            for fl in pending:
                if fl.snapshots < len(SNAPSHOT_AT_S) and now >= fl.t_start + SNAPSHOT_AT_S[fl.snapshots]:
                    fl.snapshot(algorithms)
                    fl.snapshots += 1
            pending = [fl for fl in pending if fl.curl is not None and fl.curl.poll() is None]
            time.sleep(0.02)
        results = [fl.finish(t0) for fl in flows]
        for fl in flows:
            for d in [*fl.depots, fl.origin]:
                d.stop()
        return [r[0] for r in results], [s for r in results for s in r[1]], [r[2] for r in results]
    finally:
        for fl in flows:
            fl.stop()

