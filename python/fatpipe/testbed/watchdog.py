"""The testbed's watchdog: a process of its own session that tears the testbed down when the
driver dies, however it dies (``kill -9`` included), or when told to (SIGTERM).

``python -m fatpipe.testbed.watchdog PREFIX DRIVER_PID`` waits on a pidfd of the driver (the
kernel wakes it the moment the driver exits), then kills every process in the testbed's
namespaces and deletes them. It is started in a new session, so a signal to the driver's process
group (Ctrl-C in a terminal) does not reach it before it has done its job.
"""

from __future__ import annotations

import os
import select
import signal
import sys

from fatpipe.testbed.system import teardown


def main(argv: list[str]) -> int:
    prefix, driver = argv[0], int(argv[1])
    signal.signal(signal.SIGTERM, lambda *_: (teardown(prefix), os._exit(0)))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        fd = os.pidfd_open(driver)
    except ProcessLookupError:
        teardown(prefix)
        return 0
    print("watching", flush=True)
    p = select.poll()
    p.register(fd, select.POLLIN)
    while not p.poll(1000):
        pass
    teardown(prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
