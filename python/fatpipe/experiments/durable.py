"""fsync of many paths at once, for the store's group commit.

Each fsync waits for the disk. The kernel's journal (ext4's jbd2, XFS's log) folds fsyncs that
arrive together into one commit and one cache flush, so the files and directories of a batch of
runs fsynced from a few threads cost about one flush instead of one per file — which a loop of
fsyncs in one thread pays in full. fsync releases the GIL, so the threads really wait together.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

__all__ = ["fsync_path", "fsync_paths", "fsync_paths_async", "wait_all"]

# Every path of one run (eight files and its directory) at once, and a disk's queue kept busy for
# a group; more only adds threads that wait on the same commit.
THREADS = 16

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def fsync_path(path: str | os.PathLike[str]) -> None:
    """fsync one file or directory (a directory's fsync makes its entries durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(THREADS, thread_name_prefix="fatpipe-fsync")
        return _pool


def fsync_paths_async(paths: Iterable[Path]) -> list[Future]:
    """Start fsyncing every path concurrently; :func:`wait_all` waits until all are durable."""
    pool = _executor()
    return [pool.submit(fsync_path, p) for p in paths]


def wait_all(futures: Iterable[Future]) -> None:
    """Wait for every fsync started by :func:`fsync_paths_async`; raise the first error."""
    for f in list(futures):
        f.result()


def fsync_paths(paths: Iterable[Path]) -> None:
    """fsync every path, concurrently; returns when all are durable."""
    paths = list(paths)
    if len(paths) == 1:
        fsync_path(paths[0])
    else:
        wait_all(fsync_paths_async(paths))
