"""CLI commands for reports and studies: ``fatpipe report`` and ``fatpipe reproduce``."""

from __future__ import annotations


def register(sub) -> None:
    """Add the report/reproduce subcommands (being built)."""
