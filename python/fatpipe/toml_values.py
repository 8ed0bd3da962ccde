"""One Python value as a TOML literal: the right-hand side of a ``--set`` override, or of a key in
a generated sweep file. Python's standard library reads TOML (``tomllib``) but does not write it,
and documents are not what is needed here: single inline values (tables inline, strings escaped).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["toml_value"]


def toml_value(v: Any, *, quote_keys: bool = True) -> str:
    """``v`` (bool, int, float, str, list/tuple, mapping) as a TOML literal. ``quote_keys``
    writes an inline table's keys as quoted strings (always valid) rather than bare. Anything
    else raises TypeError."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x, quote_keys=quote_keys) for x in v) + "]"
    if isinstance(v, Mapping):
        # A TOML inline table, so one varied key can set a whole sub-table (e.g. per-protocol
        # `tcp.cc_params` zipped with `tcp.cc`, where protocols take different parameters).
        return "{" + ", ".join(f"{toml_value(str(k)) if quote_keys else k} = {toml_value(x, quote_keys=quote_keys)}"
                               for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {v!r} as a TOML value")
