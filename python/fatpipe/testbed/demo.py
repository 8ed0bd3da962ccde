"""``fatpipe depot demo``: a download through a depot chain on the testbed, in one command.

Builds the line ``client - d1 - ... - dk - server`` of network namespaces with emulated links
(:func:`fatpipe.testbed.depot.chain_scenario`), starts a depot on each ``d<i>`` and an origin on
``server`` serving one file (``demo.bin``, pseudo-random bytes whose SHA-256 it prints) whose
downloads are redirected into the chain, runs the user's command in the client's namespace with
``{url}`` replaced by the file's URL (by default ``curl -L -o demo.bin {url}``), prints what each
depot relayed, and tears everything down. The command runs in the current directory, so what it
writes lands there.

    sudo fatpipe depot demo -- curl -L -o demo.bin {url}
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Sequence

from fatpipe.exceptions import FatpipeError

__all__ = ["run_demo", "parse_size", "DEFAULT_COMMAND"]

DEFAULT_COMMAND = ("curl", "-L", "-o", "demo.bin", "{url}")
#: Size units, as in scenarios (docs/scenarios.md): decimal kB/MB/GB, binary KiB/MiB/GiB.
_UNITS = {"B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def parse_size(text: str) -> int:
    """``"20MB"`` -> 20000000 (a bare number is bytes)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if not m or (m.group(2) and m.group(2) not in _UNITS) or float(m.group(1)) <= 0:
        raise FatpipeError(f"--size {text!r}: give a positive size such as 20MB, 500kB or 1GiB "
                           f"(units: {', '.join(_UNITS)})")
    return int(float(m.group(1)) * _UNITS[m.group(2) or "B"])


def run_demo(command: Sequence[str] = (), *, depots: int = 2, rate: str = "100Mbps", delay: str = "5ms",
             size: int = 20_000_000, seed: int = 1, out=sys.stdout) -> int:
    """Runs ``command`` (``{url}`` replaced) in the client; returns its exit status."""
    from fatpipe.testbed.depot import DepotTestbed, chain_scenario
    from fatpipe.testbed.http import write_random_file

    if depots < 1:
        raise FatpipeError("--depots: give at least 1 (the demo shows a chain)")
    cmd = list(command) or list(DEFAULT_COMMAND)
    if not any("{url}" in a for a in cmd):
        raise FatpipeError("the command must contain {url} where the download's URL goes, e.g. "
                           "`fatpipe depot demo -- curl -L -o demo.bin {url}`")
    names = [f"d{i}" for i in range(1, depots + 1)]
    with DepotTestbed(chain_scenario(depots, rate=rate, delay=delay)) as tb:
        root = tb.tmp / "files"
        root.mkdir()
        sha = write_random_file(root / "demo.bin", size, seed)
        ds = [tb.depot(n, args=["--log-level", "warn"]) for n in names]
        origin = tb.origin("server", root, chain=names, args=["--log-level", "warn"])
        url = origin.url("/demo.bin")
        print(f"testbed: client - {' - '.join(names)} - server, links {rate}, {delay} one way each", file=out)
        print(f"origin: {url} serves demo.bin, {size} bytes, sha256 {sha}", file=out)
        print(f"running in the client's namespace: {' '.join(a.replace('{url}', url) for a in cmd)}", file=out,
              flush=True)
        r = subprocess.run(["ip", "netns", "exec", tb.ns("client"), *[a.replace("{url}", url) for a in cmd]])
        prev = f"{tb.ip('server', names[-1])}:{origin.addr.rsplit(':', 1)[1]}"
        for d in reversed(ds):  # the server's side first: each depot relayed from the hop before it
            got = tb.metric(d, f'fatpipe_depot_hop_bytes_total{{hop="{prev}"}}')
            print(f"depot {d.node} ({d.addr}) relayed {int(got or 0)} bytes from {prev}", file=out)
            prev = d.addr
        for d in [*ds, origin]:
            d.stop()
    return r.returncode
