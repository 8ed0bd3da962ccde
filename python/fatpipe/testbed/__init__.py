"""The emulated testbed: a scenario's topology as Linux network namespaces and veth pairs, its flows
as real TCP connections, links emulated in user space (``fatpipe-linkem``); results in the
simulator's tables. See docs/testbed.md."""

from fatpipe.testbed.run import kernel_algorithms, run_testbed
from fatpipe.testbed.system import TestbedUnavailable

__all__ = ["run_testbed", "kernel_algorithms", "TestbedUnavailable"]
