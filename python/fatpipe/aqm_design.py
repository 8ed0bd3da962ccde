"""Design mode of the H2 and PI queues: ``design = {...}`` expanded into coefficients.

A queue table may ask for a controller designed at an operating point instead of giving the
coefficients::

    [topology]
    bottleneck = { rate = "1Gbps", delay = "100ms",
                   queue = { kind = "h2", limit = "3333pkt", design = { flows = 10, q0 = 1666.5 } } }

Before the core sees the scenario, :func:`expand_designs` replaces each such table with the
dict :func:`fatpipe.models.design_h2` / :func:`fatpipe.models.design_pi` return
(``{"kind", "sample_hz", "q0", "p0", "a".."e"}`` / ``{"kind", "sample_hz", "q_ref", "p0", "a",
"b"}``), keeping ``kind``, ``limit`` and ``ecn``. The core itself rejects an unexpanded
``design`` (it has no fluid model). ``fatpipe.models`` (and scipy) is imported only when a
design table is present, so ``import fatpipe`` stays light.

Fields of the design table (docs/aqm.md):

==================  ==============================================================================
``flows``           N0, the number of flows the design assumes (required)
``q0``              the equilibrium (target) queue, packets (required); the PI's ``q_ref``
``rtt``             round-trip propagation delay T_p, e.g. ``"104ms"``; default: the mean of the
                    plan's TCP flows' ``path_rtt_ns`` (give it when not every flow crosses this
                    link)
``packet``          packet size on the wire for C in packets/s, e.g. ``"1500B"``; default: the
                    mean MSS + headers of the plan's TCP flows
``rate``            link capacity, e.g. ``"1Gbps"``; default: the ``rate`` of the link table
                    holding the queue
``response``        the AIMD law of the fluid model: ``"hstcp"``, ``"hstcp-eq2"`` or ``"reno"``;
                    default from the flows' ``cc`` (``highspeed`` → ``"hstcp"``, ``reno`` →
                    ``"reno"``)
``sample_hz``       the controller's sampling rate (default: the queue's ``sample_hz``, else
                    8333 Hz for H2 and 160 Hz for PI, the designs' defaults)
``form``            linearisation, ``"frozen"`` (default) or ``"slopes"``
``crossover_fraction``  PI only (default 1)
``sigma_w``, ``sigma_q``, ``sigma_y``, ``rho``, ``jitter_time``, ``pade_order``, ``match_dc``
                    H2 only: the weights of :class:`fatpipe.models.H2Weights` (``jitter_time`` in
                    seconds, a number)
==================  ==============================================================================

The buffer of the fluid model is the queue's ``limit`` (in packets, or bytes / ``packet``).
Errors are :class:`fatpipe.ScenarioError` naming the field (``topology.bottleneck.queue.design.q0``);
an operating point without equilibrium (too many flows for the pipe, q0 outside the buffer) is
one of them, with the fluid model's reason.
"""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from typing import Any, Iterator

from fatpipe import _core
from fatpipe.exceptions import ScenarioError, scenario_error

__all__ = ["expand_designs"]

_COMMON = {"flows", "q0", "rtt", "packet", "rate", "response", "sample_hz", "form"}
_ONLY = {
    "h2": {"sigma_w", "sigma_q", "sigma_y", "rho", "jitter_time", "pade_order", "match_dc"},
    "pi": {"crossover_fraction"},
}
#: The type each design field must have before it reaches the models (which would otherwise
#: take `pade_order = true` as 1 or fail deep inside numpy): "number" is finite and not a bool.
_FIELD_TYPES = {
    **{k: "number" for k in ("flows", "q0", "sample_hz", "sigma_w", "sigma_q", "sigma_y", "rho",
                             "jitter_time", "crossover_fraction")},
    **{k: "string" for k in ("rtt", "packet", "rate", "response", "form")},
    "pade_order": "integer",
    "match_dc": "boolean",
}
#: Queue fields a design replaces (giving them beside ``design`` is a conflict).
_DESIGNED = {
    "h2": {"q0", "p0", "a", "b", "c", "d", "e"},
    "pi": {"q_ref", "p0", "a", "b"},
}
_RESPONSE_OF_CC = {"highspeed": "hstcp", "reno": "reno"}


def _error(path: str, message: str) -> ScenarioError:
    return scenario_error(path, message)


_NUMBER = re.compile(r"^\s*([0-9.eE+]+)\s*([a-zA-Zµ/]*)\s*$")


def _split(text: Any, path: str, what: str) -> tuple[float, str]:
    m = _NUMBER.match(text) if isinstance(text, str) else None
    if not m:
        raise _error(path, f"give {what}, got {text!r}")
    try:
        return float(m.group(1)), m.group(2)
    except ValueError:
        raise _error(path, f"give {what}, got {text!r}") from None


def _seconds(text: Any, path: str) -> float:
    """A duration as the core reads it ("100ms"; units ns, us, ms, s, min)."""
    v, unit = _split(text, path, 'a duration like "100ms"')
    scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}.get(unit)
    if scale is None:
        raise _error(path, f'give a duration like "100ms" (units ns, us, ms, s, min), got {text!r}')
    return v * scale


def _bps(text: Any, path: str) -> float:
    """A rate as the core reads it ("100Mbps")."""
    v, unit = _split(text, path, 'a rate like "100Mbps"')
    scale = {
        "bps": 1.0, "b/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kb/s": 1e3, "Mbps": 1e6, "Mb/s": 1e6,
        "Gbps": 1e9, "Gb/s": 1e9, "Tbps": 1e12, "Tb/s": 1e12,
    }.get(unit)
    if scale is None:
        raise _error(path, f'give a rate like "100Mbps", got {text!r}')
    return v * scale


def _size(text: Any, path: str) -> tuple[float, str]:
    """A size as the core reads it: (value, "pkt") or (bytes, "B")."""
    v, unit = _split(text, path, 'a size like "1500B" or "100pkt"')
    if unit in ("pkt", "pkts", "p"):
        return v, "pkt"
    scale = {
        "B": 1.0, "": 1.0, "KB": 1e3, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1024.0,
        "MiB": 1024.0**2, "GiB": 1024.0**3,
    }.get(unit)
    if scale is None:
        raise _error(path, f'give a size like "1500B" or "100pkt", got {text!r}')
    return v * scale, "B"


def _sites(node: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path of the queue table, the table holding it) for every queue with a design. Paths
    are dotted with list indices as numbers (``topology.links.2.queue``), as the core names
    fields and as ``--set`` keys are written."""
    if isinstance(node, dict):
        q = node.get("queue")
        if isinstance(q, dict) and "design" in q:
            yield (f"{path}.queue" if path else "queue"), node
        for k, v in node.items():
            yield from _sites(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _sites(v, f"{path}.{i}")


def _inline(v: Any) -> str:
    """A value as an inline TOML literal; floats in Python's shortest round-trip form, so the
    core reads back exactly the designed numbers."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_inline(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {v!r} as TOML")


def _mentions_design(text: str, overrides: list[str]) -> bool:
    return "design" in text or any("design" in o for o in overrides)


def expand_designs(text: str, overrides: list[str]) -> tuple[str, list[str]]:
    """The scenario the core should run: ``(text, overrides)`` unchanged when no queue has a
    ``design`` table, else the normalised TOML with every design expanded, plus one override per
    designed queue that sets it exactly (the given overrides are applied first, so they may set
    or change a design)."""
    if not _mentions_design(text, overrides):
        return text, list(overrides)
    data = tomllib.loads(_core.normalize(text, list(overrides)))
    sites = list(_sites(data, ""))
    if not sites:
        return text, list(overrides)
    flows = _probe_flows(data, sites)
    sets = []
    for path, holder in sites:
        holder["queue"] = _expand(path, holder, flows, data)
        # The text goes through JSON (whose float parsing in the core may be off by an ulp);
        # an override with every designed value written exactly puts the numbers right.
        sets.append(f"{path}={_inline(holder['queue'])}")
    return _core.json_to_toml(json.dumps(data)), sets


def _probe_flows(data: dict[str, Any], sites: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The plan's TCP flows with every designed queue replaced by a DropTail of its limit."""
    probe = copy.deepcopy(data)
    for path, _ in sites:
        holder = _resolve(probe, path.rsplit(".", 1)[0] if "." in path else "")
        q = holder["queue"]
        holder["queue"] = {"kind": "droptail", **({"limit": q["limit"]} if "limit" in q else {})}
    plan = json.loads(_core.plan(_core.json_to_toml(json.dumps(probe)), [], None))
    return [f for f in plan["flows"] if f.get("kind") in ("bulk", "file", "web", "files") and not f.get("transport")]


def _resolve(data: Any, path: str) -> Any:
    node = data
    for part in path.split(".") if path else []:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _check_type(v: Any, want: str, path: str) -> None:
    ok = {
        "number": not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v),
        "integer": not isinstance(v, bool) and isinstance(v, int),
        "boolean": isinstance(v, bool),
        "string": isinstance(v, str),
    }[want]
    if not ok:
        raise _error(path, f"must be {'a finite number' if want == 'number' else 'an ' + want if want == 'integer' else 'a ' + want}, got {v!r}")


def _number(d: dict[str, Any], key: str, path: str) -> float:
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _error(f"{path}.{key}", f"must be a finite number, got {v!r}")
    return float(v)


def _expand(path: str, holder: dict[str, Any], flows: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    queue = holder["queue"]
    kind = queue.get("kind", "droptail")
    dpath = f"{path}.design"
    if kind not in _DESIGNED:
        raise _error(dpath, f'only "h2" and "pi" queues take a design table (this one is {kind!r})')
    design = queue["design"]
    if not isinstance(design, dict):
        raise _error(dpath, "must be a table, e.g. design = { flows = 10, q0 = 100 }")
    allowed = _COMMON | _ONLY[kind]
    for key in design:
        if key not in allowed:
            raise _error(f"{dpath}.{key}", f"a {kind!r} design does not take {key!r}; allowed: {', '.join(sorted(allowed))}")
        _check_type(design[key], _FIELD_TYPES[key], f"{dpath}.{key}")
    for key in queue:
        if key in _DESIGNED[kind]:
            raise _error(f"{path}.{key}", "give either the coefficients or a design table, not both")
    for key in ("flows", "q0"):
        if key not in design:
            raise _error(f"{dpath}.{key}", f"a design needs {key} ({'N0, the number of flows' if key == 'flows' else 'the target queue in packets'})")
    n_flows = _number(design, "flows", dpath)
    q0 = _number(design, "q0", dpath)

    tcp = flows
    if "rate" in design:
        bps = _bps(design["rate"], f"{dpath}.rate")
    elif isinstance(holder.get("rate"), str):
        bps = _bps(holder["rate"], f"{path.rsplit('.', 1)[0]}.rate")
    else:
        raise _error(f"{dpath}.rate", "this queue's table has no single link rate; give design.rate, e.g. \"1Gbps\"")
    if "rtt" in design:
        rtt = _seconds(design["rtt"], f"{dpath}.rtt")
    elif tcp:
        rtt = sum(f["path_rtt_ns"] for f in tcp) / len(tcp) / 1e9
    else:
        raise _error(f"{dpath}.rtt", "the scenario has no TCP flow to take the round-trip propagation delay from; give design.rtt")
    if "packet" in design:
        packet, unit = _size(design["packet"], f"{dpath}.packet")
        if unit != "B":
            raise _error(f"{dpath}.packet", 'give the packet size in bytes, e.g. "1500B"')
    elif tcp:
        packet = sum(f["mss"] + f["header_bytes"] for f in tcp) / len(tcp)
    else:
        packet = 1500.0
    if "response" in design:
        response = design["response"]
    else:
        ccs = sorted({f["cc"] for f in tcp})
        laws = {_RESPONSE_OF_CC.get(c) for c in ccs}
        if len(laws) != 1 or None in laws:
            raise _error(
                f"{dpath}.response",
                f'the flows run {", ".join(ccs) or "no TCP"}; give the fluid model\'s law: "hstcp", "hstcp-eq2" or "reno"',
            )
        response = laws.pop()
    limit_v, limit_unit = _size(queue.get("limit"), f"{path}.limit")
    buffer = limit_v if limit_unit == "pkt" else limit_v / packet

    sample_hz = design.get("sample_hz", queue.get("sample_hz"))
    form = design.get("form", "frozen")

    import fatpipe.models as fm  # only now: the design tools import scipy

    try:
        net = fm.Network(n_flows=n_flows, capacity=fm.capacity_pkts(bps, packet), prop_delay=rtt, buffer=buffer, response=response)
        op = fm.equilibrium(net, q0)
        kwargs: dict[str, Any] = {"form": form}
        if sample_hz is not None:
            kwargs["sample_hz"] = sample_hz
        if kind == "h2":
            weights = {k: design[k] for k in _ONLY["h2"] if k in design}
            ctl = fm.design_h2(op, weights=fm.H2Weights(**weights), **kwargs).to_dict()
        else:
            if "crossover_fraction" in design:
                kwargs["crossover_fraction"] = design["crossover_fraction"]
            ctl = fm.design_pi(op, **kwargs).to_dict()
    except fm.DesignError as err:
        where = {
            "n_flows": f"{dpath}.flows", "prop_delay": f"{dpath}.rtt", "capacity": f"{dpath}.rate",
            "packet_bytes": f"{dpath}.packet", "buffer": f"{path}.limit",
        }.get(err.field, f"{dpath}.{err.field}")
        raise _error(where, f"no {kind.upper()} design at this operating point: {err.reason}") from None
    except ArithmeticError as err:
        # An operating point far outside the models' range (flows = 1e300) overflows in the
        # fluid model: no design there, said like the other operating-point errors.
        raise _error(dpath, f"no {kind.upper()} design at this operating point: the fluid model "
                            f"overflows ({err})") from None
    except (TypeError, ValueError) as err:  # also numpy's LinAlgError, a ValueError
        raise _error(dpath, f"bad design field: {err}") from None
    # Everything else in the table stays (the core checks it); the design supplies the rest.
    out = {k: v for k, v in queue.items() if k not in ("design", "sample_hz")}
    out.update({k: v for k, v in ctl.items() if k != "kind"})
    return out
