"""Real namespaces: a plumbing run, and nothing left behind after a normal end, Ctrl-C or kill -9
of the driver (namespaces, interfaces, processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fatpipe.testbed import system as tb_system
from interrupts import default_sigint

pytestmark = pytest.mark.usefixtures("netns_or_skip")
SCENARIO = str(Path(__file__).resolve().parents[2] / "scenarios" / "dumbbell-reno.toml")


def _leftovers(prefix: str) -> list[str]:
    """This checkout's testbed namespaces and helper processes still there (processes of other
    checkouts or builds on a shared machine, whose command lines name other paths, are not ours)."""
    from fatpipe.testbed.run import binary

    out = list(tb_system.testbed_namespaces(prefix))
    bin_dir = os.path.dirname(binary("fatpipe-bulk"))
    pattern = f"^{bin_dir}/(fatpipe-bulk|fatpipe-linkem)( |$)"
    ps = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return out + [f"process {p}" for p in ps]


def _wait_gone(prefix: str, timeout: float = 10.0) -> list[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        left = _leftovers(prefix)
        if not left:
            return []
        time.sleep(0.1)
    return _leftovers(prefix)


def test_a_plumbing_run_delivers_on_every_flow_and_leaves_nothing():
    import fatpipe
    from fatpipe.testbed import run_testbed

    sc = fatpipe.Scenario.load(SCENARIO).with_overrides("duration=1s", 'tcp.cc="cubic"')
    r = run_testbed(sc, emulate=False)
    f = r.to_pandas("flows")
    assert len(f) == 4 and (f["bytes_delivered"] > 0).all()
    assert r.engine["backend"] == "testbed" and r.engine["kernel"]
    assert len(r.to_pandas("flow_series")) > 0
    assert _wait_gone(f"fpt{os.getpid()}-") == []


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_the_driver_dying_leaves_nothing_behind(sig):
    p = subprocess.Popen([sys.executable, "-m", "fatpipe.cli", "testbed", "run", SCENARIO, "--no-emulate",
                          "--no-write", "--set", "duration=60s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=default_sigint)
    prefix = f"fpt{p.pid}-"
    end = time.monotonic() + 30
    # Wait until the flows run: the namespaces exist and senders are up.
    while time.monotonic() < end:
        ns = tb_system.testbed_namespaces(prefix)
        if ns and any(subprocess.run(["ip", "netns", "pids", n], capture_output=True, text=True).stdout.strip()
                      for n in ns if n.endswith("-s0")):
            break
        time.sleep(0.1)
    else:
        p.kill()
        pytest.fail("the testbed did not come up")
    p.send_signal(sig)
    p.wait(timeout=30)
    assert _wait_gone(prefix) == [], "left behind"
