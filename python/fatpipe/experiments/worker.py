"""A local worker process: ``python -m fatpipe.experiments.worker``.

Reads length-prefixed pickled ``(RunSpec, key)`` jobs on stdin and answers each with a pickled
``("ok", EncodedRun)`` — the run's files already encoded, see
:mod:`fatpipe.experiments.run_files` — or ``("error", "Type: message")`` on the original stdout.
Anything else written to stdout (by Python or the core) is redirected to stderr so it cannot
corrupt the protocol. Exits when stdin closes, which is also what happens when the parent dies.

Why not ``multiprocessing``: its spawn/forkserver modes re-import the caller's main script in every
worker (breaking scripts without an ``if __name__ == "__main__"`` guard), fork is unsafe with
threads, and a crashed worker breaks the whole pool without saying which run killed it. A plain
child process per worker avoids all three.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys

_LEN = struct.Struct("<Q")


def read_frame(f) -> bytes | None:
    head = f.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    body = f.read(n)
    if len(body) < n:
        return None
    return body


def write_frame(f, payload: bytes) -> None:
    f.write(_LEN.pack(len(payload)))
    f.write(payload)
    f.flush()


def main() -> int:
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints go to stderr
    sys.stdout = sys.stderr
    from fatpipe.experiments.execute import execute_run

    stdin = sys.stdin.buffer
    while True:
        frame = read_frame(stdin)
        if frame is None:
            return 0
        spec, key = pickle.loads(frame)
        reply: tuple[str, object]
        try:
            reply = ("ok", execute_run(spec, key))
        except Exception as e:  # reported to the parent, which records and retries
            reply = ("error", f"{type(e).__name__}: {e}")
        write_frame(proto_out, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
