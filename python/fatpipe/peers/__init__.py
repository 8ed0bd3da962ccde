"""Peer simulators (ns-2, ...) that run the same plan as fatpipe, for validation and benchmarks."""
