"""Tests that build namespaces need root, iproute2 and a kernel with network namespaces; without
them they are skipped with the reason the testbed itself gives (never silently passed)."""

from __future__ import annotations

import pytest


def _unavailable() -> str | None:
    from fatpipe.testbed.system import TestbedUnavailable, check_available

    try:
        check_available()
    except TestbedUnavailable as e:
        return str(e)
    return None


@pytest.fixture(scope="session")
def netns_or_skip() -> None:
    reason = _unavailable()
    if reason:
        pytest.skip(f"testbed unavailable: {reason}")


@pytest.fixture(scope="session")
def binaries():
    """The depot daemon and the link emulator, built; skipped with the reason otherwise."""
    from fatpipe.binaries import binary
    from fatpipe.exceptions import FatpipeError

    try:
        return binary("fatpipe-depot"), binary("fatpipe-linkem")
    except FatpipeError as e:
        pytest.skip(str(e))
