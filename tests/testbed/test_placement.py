"""CPU placement of the link emulator: pinned to one CPU, the hosts' receive processing steered
(RPS) to the others (fatpipe.testbed.placement; docs/link-emulator.md has the measurements)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fatpipe.testbed.placement import emulator_cpu, rps_mask


def test_rps_masks_are_the_kernels_bitmap_format():
    assert rps_mask({0}) == "1"
    assert rps_mask({0, 1, 2}) == "7"
    assert rps_mask({1, 3}) == "a"
    # Above 32 CPUs the bitmap is written in comma-separated 32-bit groups.
    assert rps_mask({33}) == "2,00000000"
    assert rps_mask({0, 40}) == "100,00000001"
    assert rps_mask(set()) == "0"


def test_the_emulator_takes_the_last_cpu_and_needs_two():
    assert emulator_cpu({0, 1}) == 1
    assert emulator_cpu({2, 5, 7}) == 7
    assert emulator_cpu({3}) is None


def _cpus_allowed(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError("no Cpus_allowed_list")


def test_emulator_is_pinned_and_host_receives_are_steered(netns_or_skip, binaries, tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: the emulator is not pinned (nothing to steer receives to)")
    from fatpipe.testbed.depot import DepotTestbed, chain_scenario

    with DepotTestbed(chain_scenario(1, rate="100Mbps", delay="2ms")) as tb:
        pl = tb.placement
        assert pl is not None
        cpus = set(os.sched_getaffinity(0))
        assert pl["emulator_cpu"] == max(cpus)
        assert pl["rps_cpus"] == rps_mask(cpus - {max(cpus)})
        emu = tb._procs[0]
        assert _cpus_allowed(emu.pid) == str(max(cpus))
        assert pl["devices"] and not pl["not_steered"], pl
        for entry in pl["devices"]:
            node, dev = entry.split(":")
            r = tb.run(node, ["cat", f"/sys/class/net/{dev}/queues/rx-0/rps_cpus"])
            assert int(r.stdout.strip().replace(",", ""), 16) == int(pl["rps_cpus"].replace(",", ""), 16), entry
