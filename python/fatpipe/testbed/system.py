"""The testbed's system calls: iproute2 and sysctl in network namespaces, and their teardown.

Everything the testbed creates is named with a prefix ``fpt<pid>-`` (the driver's pid), so a
teardown by prefix removes exactly one testbed and a sweep can tell a dead driver's leftovers
(its pid no longer exists) from a live one's.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time

from fatpipe.exceptions import FatpipeError

__all__ = ["TestbedUnavailable", "check_available", "prefix_for", "ip", "ip_batch", "in_ns", "teardown",
           "sweep_orphans", "testbed_namespaces"]

PREFIX_RE = re.compile(r"^fpt(\d+)-")


class TestbedUnavailable(FatpipeError):
    """The machine cannot host a testbed (not root, no iproute2, no network namespaces); the
    message says which and how to fix it."""


def check_available() -> None:
    if os.geteuid() != 0:
        raise TestbedUnavailable("the testbed needs root (it creates network namespaces and veth pairs): "
                                 "run as root, e.g. with sudo")
    if shutil.which("ip") is None:
        raise TestbedUnavailable("the testbed needs iproute2's `ip` (Debian: apt-get install iproute2)")
    probe = f"fptprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        raise TestbedUnavailable(f"this kernel refuses network namespaces ({r.stderr.strip()})")
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)


def prefix_for(pid: int | None = None) -> str:
    return f"fpt{os.getpid() if pid is None else pid}-"


def ip(*args: str) -> None:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise FatpipeError(f"ip {' '.join(args)}: {r.stderr.strip()}")


def ip_batch(lines: list[str], ns: str | None = None) -> None:
    """Many iproute2 commands in one process (``ip [-n NS] -batch -``)."""
    if not lines:
        return
    cmd = ["ip", *(["-n", ns] if ns else []), "-batch", "-"]
    r = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True)
    if r.returncode != 0:
        raise FatpipeError(f"{' '.join(cmd)}: {r.stderr.strip()}")


def in_ns(ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise FatpipeError(f"in {ns}: {' '.join(argv)}: {r.stderr.strip()}")
    return r


def testbed_namespaces(prefix: str = "fpt") -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    names = [line.split()[0] for line in r.stdout.splitlines() if line.strip()]
    return [n for n in names if n.startswith(prefix)]


def _pids(ns: str) -> list[int]:
    r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    return [int(x) for x in r.stdout.split() if x.isdigit()]


def teardown(prefix: str) -> list[str]:
    """Kill every process in the testbed's namespaces, then delete the namespaces (their
    interfaces go with them). Idempotent; returns the namespaces removed."""
    names = testbed_namespaces(prefix)
    for _ in range(3):
        pids = [p for ns in names for p in _pids(ns)]
        if not pids:
            break
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return names


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_orphans() -> list[str]:
    """Tear down testbeds whose driver is dead (a crash the watchdog could not see, e.g. the
    watchdog itself was killed). Returns the namespaces removed."""
    removed: list[str] = []
    prefixes = {m.group(0) for n in testbed_namespaces() if (m := PREFIX_RE.match(n))}
    for p in sorted(prefixes):
        m = PREFIX_RE.match(p)
        if m and not _alive(int(m.group(1))):
            removed += teardown(p)
    return removed
