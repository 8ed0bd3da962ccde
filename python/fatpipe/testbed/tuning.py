"""Host tuning for one testbed run: the plan's ``testbed`` section, the caller's overrides and the
testbed's own socket-memory defaults, merged into one tuning per host.

Precedence, lowest first: the kernel's defaults; the tuning keys of ``[testbed]``;
``[testbed.hosts.NODE]`` (the plan has it merged already); the tuning keys of the ``tuning``
argument of :func:`run_testbed` (every host);
then, for keys still unset, the testbed's default: ``tcp_rmem`` / ``tcp_wmem`` allow 4 x the
largest path BDP (at least Linux's 6 MB), so that autotuned buffers never cap a flow the
simulator does not cap. (Explicit ``sndbuf`` / ``rcvbuf`` are requested with SO_*BUFFORCE,
which the host's ``net.core.*mem_max`` do not cap.)
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["host_tunings", "base_tuning", "TUNING_KEYS", "RUN_KEYS", "run_options"]

#: Keys of ``[testbed]`` (and ``[testbed.hosts.NODE]``) that tune a host's namespace.
TUNING_KEYS = ("window_scaling", "timestamps", "sack", "dsack", "no_metrics_save", "no_ssthresh_metrics_save",
               "moderate_rcvbuf", "rmem", "wmem", "txqueuelen")
#: Keys of ``[testbed]`` that say how the run is driven rather than how a host is tuned.
RUN_KEYS = ("driver", "emulator", "sndbuf", "rcvbuf", "close")


def _set(d: Mapping[str, Any] | None) -> dict[str, Any]:
    """The tuning keys a plan object sets (None or absent means 'the kernel's value')."""
    return {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in (d or {}).items()
            if k in TUNING_KEYS and v is not None}


def run_options(plan: dict[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``driver``, ``emulator``, ``sndbuf``, ``rcvbuf`` and ``close`` of the plan's ``[testbed]``,
    with the caller's on top; unset ones absent."""
    tb = plan.get("testbed") or {}
    out = {k: tb[k] for k in RUN_KEYS if tb.get(k) is not None}
    out.update({k: v for k, v in (overrides or {}).items() if k in RUN_KEYS and v is not None})
    return out


def _defaults(plan: dict[str, Any], tuning: dict[str, Any]) -> dict[str, Any]:
    bdp = max((f["path_bottleneck_bps"] / 8 * f["path_rtt_ns"] * 1e-9 for f in plan["flows"]), default=0.0)
    cap = max(int(4 * bdp), 6 * 1024 * 1024)
    out = dict(tuning)
    out.setdefault("rmem", [4096, 131072, cap])
    out.setdefault("wmem", [4096, 16384, cap])
    return out


def base_tuning(plan: dict[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The tuning of a node without its own ``[testbed.hosts.NODE]`` (e.g. a depot on a router)."""
    t = _set(plan.get("testbed"))
    t.update(_set(overrides))
    return _defaults(plan, t)


def host_tunings(plan: dict[str, Any], overrides: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Node name -> the tuning its namespace gets, for every host of ``plan``."""
    tb = plan.get("testbed") or {}
    per_host = {name: _set(t) for name, t in (tb.get("hosts") or {}).items()}
    out = {}
    for n in plan["nodes"]:
        if n.get("kind", "host") != "host":
            continue
        if n["name"] in per_host:
            t = dict(per_host[n["name"]])
            t.update(_set(overrides))
            out[n["name"]] = _defaults(plan, t)
        else:
            out[n["name"]] = base_tuning(plan, overrides)
    return out
