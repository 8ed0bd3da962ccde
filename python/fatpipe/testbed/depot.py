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
from fatpipe.testbed.linkem import start_linkem
from fatpipe.testbed.run import _start_watchdog
from fatpipe.testbed.tuning import base_tuning, host_tunings
from fatpipe.testbed.system import check_available, in_ns, prefix_for, sweep_orphans, teardown

__all__ = ["DepotTestbed", "Daemon", "chain_scenario", "start_daemon", "link_ip", "node_path", "route_to_depots", "DEPOT_PORT", "ORIGIN_PORT"]

DEPOT_PORT = 9001
ORIGIN_PORT = 8080


def chain_scenario(depots: int, *, rate: str = "1Gbps", delay: str | Sequence[str] = "1ms",
                   loss: float | Sequence[float] = 0.0, queue: str | None = None,
                   mss: str | None = None) -> Any:
    """A line ``client - d1 - ... - d<depots> - server`` (depots are routers); ``delay`` and
    ``loss`` are one value for every link or one per link, client side first; ``queue`` a DropTail
    limit such as ``"1MB"`` (default: the scenario default, one BDP at 100 ms). ``depots = 0``
    gives ``client - r1 - server`` with ``r1`` a plain router (a direct path of the same length as
    a 1-depot chain). ``mss`` (such as ``"8960B"``) sets the scenario's segment size, and with it
    the MTU of every testbed link (``layout.link_mtu``: jumbo frames for a larger one); the
    kernel's connections then use that MTU's MSS."""
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
    tcp = f'[tcp]\nmss = "{mss}"\n' if mss else ""
    toml = (f'name = "depot-chain-{depots}"\nduration = "1s"\n{tcp}[topology]\nkind = "graph"\nnodes = [{nodes}]\n'
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


def start_daemon(ns: str, node: str, mode: str, args: Sequence[str], advertise: str, key_file: Path,
                 log: Path) -> Daemon:
    """Starts ``fatpipe-depot MODE ARGS`` (``serve`` or ``origin``) in namespace ``ns`` and waits
    until it prints where it listens; its stderr goes to ``log``. ``advertise`` is the address its
    neighbours use (the port is the one it bound)."""
    argv = [binary("fatpipe-depot"), mode, *args, "--key-file", str(key_file), "--metrics-listen", "127.0.0.1:0"]
    with open(log, "w") as err:
        p = popen_ns(ns, argv, stdout=subprocess.PIPE, stderr=err)
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
        p.wait()
        raise FatpipeError(f"fatpipe-depot {mode} in {node} did not start: {log.read_text()[-2000:]}")
    port = found["depot" if mode == "serve" else "origin"].rsplit(":", 1)[1]
    return Daemon(node, mode, p, f"{advertise}:{port}", found["metrics"], log)


def link_ip(lay: Layout, node: str, facing: str) -> str:
    """``node``'s address on its link to ``facing``."""
    for s in lay.links:
        if (s.a, s.b) == (node, facing):
            return s.a_ip
        if (s.b, s.a) == (node, facing):
            return s.b_ip
    raise FatpipeError(f"no link between {node!r} and {facing!r}")


def node_path(lay: Layout, src: str, dst: str) -> list[str]:
    """Nodes from ``src`` to ``dst`` (BFS over the links, first-added links first)."""
    adj: dict[str, list[str]] = {n: [] for n in lay.nodes}
    for s in lay.links:
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
    cur: str | None = dst
    while cur is not None:
        out.append(cur)
        cur = prev[cur]
    return out[::-1]



def route_to_depots(lay: Layout, depots: set[str]) -> None:
    """Routes every node to the depots' addresses. The layout routes to hosts only; a depot on a
    router opens its upstream connection from its own address, which a server that is not its
    neighbour (a segment over several links) must be able to answer."""
    for d in sorted(depots):
        for s in lay.links:
            if d not in (s.a, s.b):
                continue
            ip = s.a_ip if s.a == d else s.b_ip
            for n in lay.nodes:
                if n in (s.a, s.b):
                    continue
                path = node_path(lay, n, d)
                if len(path) < 2:
                    continue
                via = link_ip(lay, path[1], n)
                in_ns(lay.ns(n), "ip", "route", "replace", f"{ip}/32", "via", via)



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
    #: Where the emulator runs and where the hosts' receive processing was steered.
    placement: dict[str, Any] | None = field(default=None, init=False)

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
                emu, _stats, self.placement = start_linkem(lay, int(plan["seed"]), self._tmp)
                self._procs.append(emu)
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
        return link_ip(self.layout, node, facing)

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
        assert self.key_file is not None
        d = start_daemon(self.ns(node), node, mode, args, advertise, self.key_file,
                         self.tmp / f"{mode}-{node}-{len(self.daemons)}.log")
        self.daemons.append(d)
        return d

    def depot(self, node: str, *, port: int = DEPOT_PORT, cc: str | None = None, allow: Sequence[str] | None = None,
              args: Sequence[str] = ()) -> Daemon:
        """Starts a depot in ``node``, listening on all its addresses. ``cc`` sets the congestion
        control of the data it sends (``downstream.congestion``); ``allow`` defaults to every
        address of the testbed; ``args`` are more flags (e.g. ``["--splice"]``,
        ``["--set", "upstream.recv_buffer=8388608"]``)."""
        allow = list(allow) if allow is not None else self.addresses()
        assert self.layout is not None
        route_to_depots(self.layout, {node})
        argv = ["--listen", f"0.0.0.0:{port}", *[a for x in allow for a in ("--allow", x)], *args]
        if cc:
            argv += ["--set", f'downstream.congestion="{cc}"']
        # The address the previous hop uses is chosen by the origin's chain (see origin()).
        return self._start(node, "serve", argv, advertise="0.0.0.0")

    def origin(self, node: str, root: str | Path, *, chain: Sequence[str] = (), port: int = ORIGIN_PORT,
               cc: str | None = None, args: Sequence[str] = (),
               auto: Sequence[tuple[Sequence[str], Sequence[float]]] | None = None, min_gain: float = 1.5) -> Daemon:
        """Starts an origin in ``node`` serving ``root``, whose downloads go through the depots
        on the nodes ``chain`` (client side first; empty: served directly). Each hop is the
        depot's address facing the previous node and the origin's facing the last depot, so every
        segment is one emulated link, as in the paper's testbed.

        ``auto`` (instead of ``chain``) gives the origin candidate chains to choose from per
        client (docs/depot.md, "automatic chain choice", an extension): each a list of depot
        nodes (client side first) and the RTTs (ms) of its segments after the first."""
        assert self.layout is not None
        by_node = {d.node: d for d in self.daemons if d.mode == "serve"}
        if auto is not None and chain:
            raise FatpipeError("origin: give chain or auto, not both (a static chain takes precedence)")
        hops = self._hops(chain, by_node)
        last = chain[-1] if chain else None
        if auto is not None:
            cands = []
            for nodes, rtts in auto:
                cands.append("{depots = [%s], segment_rtt_ms = [%s]}" % (
                    ", ".join(f'"{h}"' for h in self._hops(nodes, by_node)), ", ".join(f"{float(r)!r}" for r in rtts)))
            # Candidates end at different depots: the address every one of them is routed to.
            last = self._path(node, self._client_side_of(node))[1] if node != self._client_side_of(node) else None
        advertise_ip = self.ip(node, last) if last else self.layout.host_ip[node]
        argv = ["--listen", f"0.0.0.0:{port}", "--root", str(root), "--advertise", f"{advertise_ip}:{port}", *args]
        if auto is None:
            argv += ["--chain", ",".join(hops)]
        else:
            argv += ["--set", f"origin.auto={{min_gain = {float(min_gain)!r}, candidate = [{', '.join(cands)}]}}"]
        if cc:
            argv += ["--set", f'downstream.congestion="{cc}"']
        return self._start(node, "origin", argv, advertise=self.layout.host_ip[node])

    def _hops(self, chain: Sequence[str], by_node: dict[str, Daemon]) -> list[str]:
        """Each depot's address facing its neighbour towards the client, with its port."""
        hops = []
        for c in chain:
            if c not in by_node:
                raise FatpipeError(f"origin chain: no depot started on {c!r}")
            dport = by_node[c].addr.rsplit(":", 1)[1]
            hops.append(f"{self.ip(c, self._client_side_of(c))}:{dport}")
            by_node[c].addr = hops[-1]
        return hops

    def _client_side_of(self, node: str) -> str:
        """The neighbour of ``node`` towards the client (the node named ``client``, else the
        first host)."""
        assert self.layout is not None
        hosts = [n for n, k in self.layout.nodes.items() if k == "host"]
        client = "client" if "client" in self.layout.nodes else hosts[0]
        path = self._path(client, node)
        return path[-2] if len(path) >= 2 else client

    def _path(self, src: str, dst: str) -> list[str]:
        assert self.layout is not None
        return node_path(self.layout, src, dst)

    def metrics(self, d: Daemon) -> str:
        """The Prometheus text of a daemon (read inside its namespace)."""
        r = self.run(d.node, ["curl", "-sS", f"http://{d.metrics}/metrics"], timeout=30)
        return r.stdout

    def metric(self, d: Daemon, series: str) -> float | None:
        for line in self.metrics(d).splitlines():
            if line.startswith(series + " "):
                return float(line.rsplit(" ", 1)[1])
        return None
