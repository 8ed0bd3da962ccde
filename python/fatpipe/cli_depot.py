"""``fatpipe depot serve|origin|keygen|sign``: the split-TCP depot daemon (docs/depot.md).

Each subcommand hands its arguments, unchanged, to the ``fatpipe-depot`` binary (crates/fatpipe-depot)
and replaces this process with it, so signals (SIGTERM for a graceful shutdown) reach the daemon
itself and ``fatpipe depot serve --help`` shows the daemon's own flags.
"""

from __future__ import annotations

import argparse
import os

__all__ = ["register", "depot_binary"]

SUBCOMMANDS = {
    "serve": "run a depot: relay signed chain URLs to their next hop (--config FILE)",
    "origin": "run the origin: serve files, redirecting downloads into the depot chain (--config FILE)",
    "keygen": "write a new shared key to FILE (owner-readable only)",
    "sign": "print a signed chain URL (scripts, debugging)",
}


def depot_binary() -> str:
    """Path of ``fatpipe-depot``: ``$FATPIPE_BIN_DIR``, the repository's release build, or PATH."""
    from fatpipe.binaries import binary

    return binary("fatpipe-depot")


def cmd_depot(args: argparse.Namespace) -> int:
    exe = depot_binary()
    argv = [exe, args.depot_command, *args.rest]
    os.execv(exe, argv)
    return 0  # not reached


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    d = sub.add_parser("depot", help="split-TCP depot chains set up by HTTP redirects (docs/depot.md)",
                       description="The depot daemon of seed 002 (Augusto et al. 2008). Every subcommand's "
                                   "flags are the fatpipe-depot binary's: `fatpipe depot serve --help`.")
    dsub = d.add_subparsers(dest="depot_command", required=True)
    for name, help_ in SUBCOMMANDS.items():
        # No option of its own (the prefix is a character no argument starts with), so every
        # argument, flags included, lands in `rest` for the binary.
        p = dsub.add_parser(name, help=help_, add_help=False, prefix_chars="\x01")
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=cmd_depot)
