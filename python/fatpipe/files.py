"""Reading input files (scenarios, sweeps, studies) with every failure as a fatpipe error.

A path that is missing, a directory, a device or FIFO, unreadable, too large or not UTF-8 would
otherwise escape as an ``OSError`` or ``UnicodeDecodeError`` traceback (or, for ``/dev/zero``
or a FIFO, never return). Here each becomes the caller's error type with the file named.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Callable

#: Inputs are small text files; a 20 000-node graph scenario is about 2 MB. Anything larger is
#: refused before it is read whole.
MAX_INPUT_BYTES = 64 * 1024 * 1024


def read_text(path: str | os.PathLike[str], what: str, error: Callable[[str], Exception]) -> str:
    """The UTF-8 text of ``path``, else ``error(message)`` raised; ``what`` names the kind of
    file in messages ("scenario file")."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except IsADirectoryError:
        raise error(f"{p}: is a directory, not a {what}") from None
    except PermissionError:
        raise error(f"{p}: not readable (permission denied)") from None
    except OSError as e:
        raise error(f"{p}: cannot open it ({e.strerror or e})") from None
    st = os.fstat(fd)
    problem = None
    if stat.S_ISDIR(st.st_mode):
        problem = f"{p}: is a directory, not a {what}"
    elif not stat.S_ISREG(st.st_mode):
        problem = f"{p}: not a regular file (a device or a pipe); give a {what}"
    elif st.st_size > MAX_INPUT_BYTES:
        problem = f"{p}: {st.st_size} bytes is too large for a {what} (at most {MAX_INPUT_BYTES})"
    if problem is not None:
        os.close(fd)
        raise error(problem)
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_INPUT_BYTES + 1)
        except OSError as e:
            raise error(f"{p}: cannot read it ({e.strerror or e})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(
            f"{p}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start}); a {what} is UTF-8 TOML"
        ) from None
