"""Shared fixtures. Tests run against the installed package (``make build`` installs it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def scenarios_dir() -> Path:
    return SCENARIOS


@pytest.fixture
def small_scenario():
    import fatpipe

    return fatpipe.Scenario.dumbbell(
        pairs=3, rate="10Mbps", delay="20ms", buffer="30pkt", duration="5s", start_spread="500ms",
        initial_window=2,
    )


def pytest_collection_modifyitems(config, items):
    """The testbed's tests run `alone` (see the Makefile's test-python): real-time link emulation
    must not compete with the parallel phase for the CPU."""
    testbed = ROOT / "tests" / "testbed"
    for item in items:
        if testbed in item.path.parents:
            item.add_marker(pytest.mark.alone)


def ns2_available() -> bool:
    return shutil.which("ns") is not None
