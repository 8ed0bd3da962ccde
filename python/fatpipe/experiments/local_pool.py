"""A pool of local worker processes (see :mod:`fatpipe.experiments.worker`) behind futures.

Each worker is served by one thread that sends it a run and waits for the answer. If the worker
dies (crash, out-of-memory kill, ``kill -9``) only the run it was executing fails, with the exit
status and the end of the worker's stderr, and a fresh worker takes its place.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from typing import Any

from fatpipe.experiments.worker import read_frame, write_frame

__all__ = ["WorkerPool", "WorkerDied", "RunFailed"]


class WorkerDied(RuntimeError):
    """The worker process running a task exited before answering."""


class RunFailed(RuntimeError):
    """The run raised an error inside the worker (message: ``Type: message``)."""


_STOP = object()


class WorkerPool:
    def __init__(self, workers: int):
        self.workers = workers
        self._tasks: queue.Queue = queue.Queue()
        self._procs: list[subprocess.Popen | None] = [None] * workers
        self._threads = [threading.Thread(target=self._serve, args=(i,), daemon=True, name=f"fatpipe-worker-{i}")
                         for i in range(workers)]
        self._closed = False
        for t in self._threads:
            t.start()

    def submit(self, payload: Any) -> Future:
        if self._closed:
            raise RuntimeError("pool is shut down")
        fut: Future = Future()
        self._tasks.put((fut, payload))
        return fut

    def pids(self) -> list[int]:
        """Process ids of the live workers (tests use this to kill one)."""
        return [p.pid for p in self._procs if p is not None and p.poll() is None]

    def _start(self, i: int) -> subprocess.Popen:
        err = tempfile.TemporaryFile()
        p = subprocess.Popen([sys.executable, "-m", "fatpipe.experiments.worker"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        p._fatpipe_stderr = err  # type: ignore[attr-defined]
        self._procs[i] = p
        return p

    def _serve(self, i: int) -> None:
        proc: subprocess.Popen | None = None
        while True:
            item = self._tasks.get()
            if item is _STOP:
                break
            fut, payload = item
            if not fut.set_running_or_notify_cancel():
                continue
            if proc is None or proc.poll() is not None:
                proc = self._start(i)
            try:
                write_frame(proc.stdin, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
                frame = read_frame(proc.stdout)
            except (BrokenPipeError, OSError):
                frame = None
            if frame is None:
                code = proc.wait()
                fut.set_exception(WorkerDied(f"worker process died (exit status {code}) during the run"
                                             f"{_tail(proc)}"))
                proc = None
                continue
            status, value = pickle.loads(frame)
            if status == "ok":
                fut.set_result(value)
            else:
                fut.set_exception(RunFailed(value))
        if proc is not None:
            _stop(proc)

    def shutdown(self) -> None:
        """Cancel queued runs, stop the workers (a running simulation is terminated)."""
        self._closed = True
        while True:
            try:
                fut, _ = self._tasks.get_nowait()
                fut.cancel()
            except queue.Empty:
                break
        for p in self._procs:
            if p is not None and p.poll() is None:
                p.terminate()
        for _ in self._threads:
            self._tasks.put(_STOP)
        for t in self._threads:
            t.join(timeout=10)


def _stop(proc: subprocess.Popen) -> None:
    try:
        proc.stdin.close()
        proc.wait(timeout=5)
    except Exception:
        proc.kill()


def _tail(proc: subprocess.Popen) -> str:
    err = getattr(proc, "_fatpipe_stderr", None)
    if err is None:
        return ""
    err.seek(0, os.SEEK_END)
    err.seek(max(0, err.tell() - 600))
    text = err.read().decode(errors="replace").strip()
    return f"; worker stderr: ...{text[-500:]}" if text else ""
