"""Depot chains on the testbed: ``fatpipe-depot`` daemons (docs/depot.md) inside the namespaces of
a scenario's topology, with the links emulated as in :func:`fatpipe.testbed.run_testbed`.

The scenario gives the topology only (its flows are not run): typically a line
``client - d1 - ... - dk - server`` (:func:`chain_scenario`), the depots being routers, so the same
namespaces also carry a direct transfer routed through them (the paper's testbed: a depot machine
either routes or splits, seed note §4.1).

>>> from fatpipe.testbed.depot import DepotTestbed, chain_scenario   # doctest: +SKIP
>>> with DepotTestbed(chain_scenario(2, rate="200Mbps", delay="2ms")) as tb:   # doctest: +SKIP
...     tb.depot("d1"); tb.depot("d2")
...     origin = tb.origin("server", root="/srv/files", chain=["d1", "d2"])
...     tb.run("client", ["curl", "-sSL", "-o", "/tmp/f", origin.url("/f.bin")])
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from fatpipe.binaries import binary
from fatpipe.exceptions import FatpipeError
from fatpipe.testbed.build import build, tuning_sysctls
from fatpipe.testbed.layout import Layout, layout_of
from fatpipe.testbed.bulk import popen_ns
from fatpipe.testbed.run import _emulator_config, _start_watchdog
from fatpipe.testbed.tuning import base_tuning, host_tunings
from fatpipe.testbed.system import check_available, in_ns, prefix_for, sweep_orphans, teardown

__all__ = ["DepotTestbed", "Daemon", "chain_scenario", "DEPOT_PORT", "ORIGIN_PORT"]

DEPOT_PORT = 9001
ORIGIN_PORT = 8080


def chain_scenario(depots: int, *, rate: str = "1Gbps", delay: str | Sequence[str] = "1ms",
                   loss: float | Sequence[float] = 0.0, queue: str | None = None) -> Any:
    """A line ``client - d1 - ... - d<depots> - server`` (depots are routers); ``delay`` and
    ``loss`` are one value for every link or one per link, client side first; ``queue`` a DropTail
    limit such as ``"1MB"`` (default: the scenario default, one BDP at 100 ms). ``depots = 0``
    gives ``client - r1 - server`` with ``r1`` a plain router (a direct path of the same length as
    a 1-depot chain)."""
    import fatpipe

    inner = [f"d{i}" for i in range(1, depots + 1)] or ["r1"]
    names = ["client", *inner, "server"]
    n_links = len(names) - 1
    delays = [delay] * n_links if isinstance(delay, str) else list(delay)
    losses = [loss] * n_links if isinstance(loss, (int, float)) else list(loss)
    if len(delays) != n_links or len(losses) != n_links:
        raise FatpipeError(f"chain_scenario: give one delay and loss, or {n_links} of each (one per link)")
    router = ', kind = "router"'
    nodes = ", ".join(f'{{ name = "{n}"{"" if n in ("client", "server") else router} }}' for n in names)
    links = []
    for i in range(n_links):
        q = f', queue = {{ kind = "droptail", limit = "{queue}" }}' if queue else ""
        lo = f", loss = {losses[i]!r}, loss_reverse = {losses[i]!r}" if losses[i] else ""
        links.append(f'{{ between = ["{names[i]}", "{names[i + 1]}"], rate = "{rate}", delay = "{delays[i]}"{q}{lo} }}')
    link_lines = ",\n  ".join(links)
    toml = (f'name = "depot-chain-{depots}"\nduration = "1s"\n[topology]\nkind = "graph"\nnodes = [{nodes}]\n'
            f'links = [\n  {link_lines},\n]\n[[flows]]\nsrc = "server"\ndst = "client"\n')
    return fatpipe.Scenario.from_toml(toml)


@dataclass
class Daemon:
    """A running ``fatpipe-depot`` inside a namespace."""

    node: str
    mode: str
    proc: subprocess.Popen[str]
    #: The address it listens on, as reachable from its neighbours (the chain's hop).
    addr: str
    metrics: str | None
    log: Path

    @property
    def pid(self) -> int:
        # `ip netns exec` execs the command after setns: the child is the daemon itself.
        return self.proc.pid

    def url(self, path: str) -> str:
        return f"http://{self.addr}{path}"

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise FatpipeError(f"{self.node}: no VmRSS")

    def cpu_s(self) -> float:
        s = Path(f"/proc/{self.pid}/stat").read_text()
        f = s[s.rfind(")") + 2:].split()
        return (int(f[11]) + int(f[12])) / 100.0

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM (graceful shutdown) and wait; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)


@dataclass
class DepotTestbed:
    """Namespaces and emulated links of ``scenario``'s topology, and the depots started in them.
    A context manager: on exit every daemon is stopped and the namespaces are removed (a watchdog
    does the same if this process dies)."""

    scenario: Any
    emulate: bool = True
    tuning: dict[str, Any] | None = None
    seed: int | None = None
    layout: Layout | None = field(default=None, init=False)
    key_file: Path | None = field(default=None, init=False)
    daemons: list[Daemon] = field(default_factory=list, init=False)
    _procs: list[subprocess.Popen[str]] = field(default_factory=list, init=False)
    _tmp: Path | None = field(default=None, init=False)
    _watchdog: subprocess.Popen[str] | None = field(default=None, init=False)
    _prefix: str = field(default="", init=False)

    def __enter__(self) -> "DepotTestbed":
        check_available()
        sweep_orphans()
        plan = self.scenario.plan(self.seed)
        self._prefix = prefix_for()
        self.layout = lay = layout_of(plan, self._prefix, emulate=self.emulate)
        self._watchdog = _start_watchdog(self._prefix)
        self._tmp = Path(tempfile.mkdtemp(prefix="fatpipe-depot-testbed-"))
        try:
            build(lay, host_tuning=host_tunings(plan, self.tuning), offloads_off=self.emulate)
            # Depots terminate TCP, so they get the hosts' socket tuning too (build() gives routers
            # only ip_forward).
            sysctls = tuning_sysctls(base_tuning(plan, self.tuning))
            for node, kind in lay.nodes.items():
                if kind == "router" and sysctls:
                    in_ns(lay.ns(node), "sysctl", "-q", *[a for k, v in sysctls.items() for a in ("-w", f"{k}={v}")])
            if self.emulate and any(s.emulated for s in lay.links):
                cfg = self._tmp / "linkem.json"
                cfg.write_text(json.dumps(_emulator_config(lay, int(plan["seed"]), self._tmp / "linkem-stats.json")))
                emu = popen_ns(lay.emu_ns, [binary("fatpipe-linkem"), str(cfg)], stdout=subprocess.PIPE)
                self._procs.append(emu)
                assert emu.stdout is not None
                if emu.stdout.readline().strip() != "ready":
                    raise FatpipeError("fatpipe-linkem did not start")
            self.key_file = self._tmp / "depot.key"
            subprocess.run([binary("fatpipe-depot"), "keygen", str(self.key_file)], check=True)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for d in self.daemons:
            if d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
        for p in self._procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if self._prefix:
            teardown(self._prefix)
        if self._watchdog is not None:
            self._watchdog.terminate()
            try:
                self._watchdog.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    # -- addresses -------------------------------------------------------------------------
    def ns(self, node: str) -> str:
        assert self.layout is not None
        if node not in self.layout.nodes:
            raise FatpipeError(f"no node {node!r} in the testbed (nodes: {', '.join(self.layout.nodes)})")
        return self.layout.ns(node)

    def ip(self, node: str, facing: str) -> str:
        """``node``'s address on its link to ``facing``."""
        assert self.layout is not None
        for s in self.layout.links:
            if (s.a, s.b) == (node, facing):
                return s.a_ip
            if (s.b, s.a) == (node, facing):
                return s.b_ip
        raise FatpipeError(f"no link between {node!r} and {facing!r}")

    def addresses(self) -> list[str]:
        assert self.layout is not None
        return [ip for s in self.layout.links for ip in (s.a_ip, s.b_ip)]

    @property
    def tmp(self) -> Path:
        assert self._tmp is not None
        return self._tmp

    # -- processes --------------------------------------------------------------------------
    def run(self, node: str, argv: Sequence[str], timeout: float = 600.0) -> subprocess.CompletedProcess[str]:
        """Runs ``argv`` in ``node``'s namespace and waits for it."""
        return subprocess.run(["ip", "netns", "exec", self.ns(node), *argv], capture_output=True, text=True,
                              timeout=timeout)

    def popen(self, node: str, argv: Sequence[str], **kw: Any) -> subprocess.Popen[str]:
        p = popen_ns(self.ns(node), list(argv), **kw)
        self._procs.append(p)
        return p

    def _start(self, node: str, mode: str, args: list[str], advertise: str) -> Daemon:
        log = self.tmp / f"{mode}-{node}-{len(self.daemons)}.log"
        argv = [binary("fatpipe-depot"), mode, *args, "--key-file", str(self.key_file),
                "--metrics-listen", "127.0.0.1:0"]
        with open(log, "w") as err:
            p = popen_ns(self.ns(node), argv, stdout=subprocess.PIPE, stderr=err)
        assert p.stdout is not None
        found: dict[str, str] = {}
        deadline = time.monotonic() + 20
        while len(found) < 2 and time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            parts = line.split()
            if len(parts) == 3 and parts[0] == "listening":
                found[parts[1]] = parts[2]
        if len(found) < 2:
            p.kill()
            raise FatpipeError(f"fatpipe-depot {mode} in {node} did not start: {log.read_text()[-2000:]}")
        port = found["depot" if mode == "serve" else "origin"].rsplit(":", 1)[1]
        d = Daemon(node, mode, p, f"{advertise}:{port}", found["metrics"], log)
        self.daemons.append(d)
        return d

    def depot(self, node: str, *, port: int = DEPOT_PORT, cc: str | None = None, allow: Sequence[str] | None = None,
              args: Sequence[str] = ()) -> Daemon:
        """Starts a depot in ``node``, listening on all its addresses. ``cc`` sets the congestion
        control of the data it sends (``downstream.congestion``); ``allow`` defaults to every
        address of the testbed; ``args`` are more flags (e.g. ``["--splice"]``,
        ``["--set", "upstream.recv_buffer=8388608"]``)."""
        allow = list(allow) if allow is not None else self.addresses()
        argv = ["--listen", f"0.0.0.0:{port}", *[a for x in allow for a in ("--allow", x)], *args]
        if cc:
            argv += ["--set", f'downstream.congestion="{cc}"']
        # The address the previous hop uses is chosen by the origin's chain (see origin()).
        return self._start(node, "serve", argv, advertise="0.0.0.0")

    def origin(self, node: str, root: str | Path, *, chain: Sequence[str] = (), port: int = ORIGIN_PORT,
               cc: str | None = None, args: Sequence[str] = ()) -> Daemon:
        """Starts an origin in ``node`` serving ``root``, whose downloads go through the depots
        on the nodes ``chain`` (client side first; empty: served directly). Each hop is the
        depot's address facing the previous node and the origin's facing the last depot, so every
        segment is one emulated link, as in the paper's testbed."""
        assert self.layout is not None
        by_node = {d.node: d for d in self.daemons if d.mode == "serve"}
        hops = []
        prev = self._client_side_of(chain[0]) if chain else None
        for c in chain:
            if c not in by_node:
                raise FatpipeError(f"origin chain: no depot started on {c!r}")
            dport = by_node[c].addr.rsplit(":", 1)[1]
            hops.append(f"{self.ip(c, prev)}:{dport}")
            by_node[c].addr = hops[-1]
            prev = c
        advertise_ip = self.ip(node, chain[-1]) if chain else self.layout.host_ip[node]
        argv = ["--listen", f"0.0.0.0:{port}", "--root", str(root), "--chain", ",".join(hops),
                "--advertise", f"{advertise_ip}:{port}", *args]
        if cc:
            argv += ["--set", f'downstream.congestion="{cc}"']
        return self._start(node, "origin", argv, advertise=self.layout.host_ip[node])

    def _client_side_of(self, node: str) -> str:
        """The neighbour of ``node`` towards the client (the node named ``client``, else the
        first host)."""
        assert self.layout is not None
        hosts = [n for n, k in self.layout.nodes.items() if k == "host"]
        client = "client" if "client" in self.layout.nodes else hosts[0]
        path = self._path(client, node)
        return path[-2] if len(path) >= 2 else client

    def _path(self, src: str, dst: str) -> list[str]:
        """Nodes from ``src`` to ``dst`` (BFS over the links, first-added links first)."""
        assert self.layout is not None
        adj: dict[str, list[str]] = {n: [] for n in self.layout.nodes}
        for s in self.layout.links:
            adj[s.a].append(s.b)
            adj[s.b].append(s.a)
        prev: dict[str, str | None] = {src: None}
        q = [src]
        while q:
            n = q.pop(0)
            for nb in adj[n]:
                if nb not in prev:
                    prev[nb] = n
                    q.append(nb)
        if dst not in prev:
            raise FatpipeError(f"{dst!r} is not reachable from {src!r}")
        out = []
        n: str | None = dst
        while n is not None:
            out.append(n)
            n = prev[n]
        return out[::-1]

    def metrics(self, d: Daemon) -> str:
        """The Prometheus text of a daemon (read inside its namespace)."""
        r = self.run(d.node, ["curl", "-sS", f"http://{d.metrics}/metrics"], timeout=30)
        return r.stdout

    def metric(self, d: Daemon, series: str) -> float | None:
        for line in self.metrics(d).splitlines():
            if line.startswith(series + " "):
                return float(line.rsplit(" ", 1)[1])
        return None
