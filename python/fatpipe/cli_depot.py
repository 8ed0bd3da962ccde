"""``fatpipe depot serve|origin|keygen|sign|demo``: the split-TCP depot daemon (docs/depot.md).

Each subcommand hands its arguments, unchanged, to the ``fatpipe-depot`` binary (crates/fatpipe-depot)
and replaces this process with it, so signals (SIGTERM for a graceful shutdown) reach the daemon
itself and ``fatpipe depot serve --help`` shows the daemon's own flags. ``demo`` (root) builds a
depot chain on the testbed and runs the user's command, e.g. ``curl -L``, in its client
(:mod:`fatpipe.testbed.demo`).
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


def cmd_demo(args: argparse.Namespace) -> int:
    from fatpipe.testbed.demo import parse_size, run_demo

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    return run_demo(command, depots=args.depots, rate=args.rate, delay=args.delay, size=parse_size(args.size))


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
    demo = dsub.add_parser("demo", help="root: a depot chain on the testbed; runs COMMAND (e.g. curl -L {url}) "
                                        "in its client namespace, then tears it down",
                           description="Builds client - d1 - ... - dk - server from network namespaces with "
                                       "emulated links, starts the depots and an origin serving demo.bin, runs "
                                       "COMMAND in the client's namespace with {url} replaced by the file's URL "
                                       "(default: curl -L -o demo.bin {url}), prints what each depot relayed and "
                                       "removes everything.")
    demo.add_argument("--depots", type=int, default=2, help="depots in the chain (default 2)")
    demo.add_argument("--rate", default="100Mbps", help="every link's rate (default 100Mbps)")
    demo.add_argument("--delay", default="5ms", help="every link's one-way delay (default 5ms)")
    demo.add_argument("--size", default="20MB", help="the file's size (default 20MB)")
    demo.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS... with {url}")
    demo.set_defaults(func=cmd_demo)
