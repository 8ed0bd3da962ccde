"""A process's own peak memory: the high-water mark of its resident set (``VmHWM`` in
``/proc/PID/status``, Linux).

Why not ``ru_maxrss``: Linux folds the high-water mark of the address space a process replaces at
exec into its ``ru_maxrss``. A child started by ``vfork`` + exec (Python's ``subprocess`` does
that) replaces its parent's address space, so its ``ru_maxrss`` is at least the parent's own peak:
every child of a 500 MB pytest run, or of a 60 MB benchmark helper, looks at least that large.
``VmHWM`` belongs to the address space the process built itself, so processes that report their
own peak (``fatpipe run --json``, the ns-2 and ns-3 peers' children) give the figure a user
means.
"""

from __future__ import annotations

from pathlib import Path


def vm_hwm_bytes(pid: int | str = "self") -> int | None:
    """Peak resident set of process ``pid`` (default: this one) in bytes, or None where
    ``/proc`` has no such figure (not Linux, the process is gone or is a zombie)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024  # the kernel reports kB
    return None
