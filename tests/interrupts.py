"""For tests that interrupt a child with SIGINT, as a terminal's Ctrl-C does."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """``preexec_fn`` for such a child: a shell runs a background job (``pytest ... &``) with
    SIGINT ignored and children inherit that, so restore the default a foreground process has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
