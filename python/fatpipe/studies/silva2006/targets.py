"""Targets 1-20 of seed note §8, judged with the rule of :mod:`fatpipe.studies.checks`.

- **1-6** (configuration and arithmetic) are computed: the dissertation's printed numbers (restated
  here as :data:`PRINTED`) against the formulas of ``make_sweeps.py`` and against what the study's
  sweep files and the testbed's runs actually used.
- **7-11** (protocol constants) compare the closed forms and the constants the thesis prints with
  the parameters of fatpipe's modules, and with what the cwnd traces show (backoff factors,
  growth per RTT).
- **12-15, 19** (result shapes: the source has no numbers for these curves) are rules over the
  measured data, each stated in the target's ``why``.
- **16-18** are about the real GIGA environment, which cannot be reproduced: "not comparable",
  with whatever arithmetic or measurement of ours stands in.
- **20** checks Jain's index on known vectors and on every series measured.

A target whose data is absent (a sweep not in the mode, a testbed this machine cannot host) is
"not comparable" and says which. Means are compared with the rule of :mod:`~fatpipe.studies.checks`
(on the claimed side: holds; on the wrong side within the noise: not comparable; beyond it: does
not hold); one replication has no noise, and the means decide, as in the dissertation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from fatpipe.studies import checks as c
from fatpipe.studies.checks import Check, Missing, Pt, RuleVerdict
from fatpipe.studies.targets import FAILS, HOLDS, NOT_COMPARABLE, Target

__all__ = ["TARGETS", "PRINTED", "Data", "evaluate_all", "TOL"]

#: The dissertation's numbers as printed (seed note §3-§8), for the arithmetic targets.
PRINTED: dict[str, Any] = {
    "table_3_2_queue": {10: 856, 25: 2140, 50: 4281, 75: 6421, 100: 8562, 150: 12842, 200: 17123},
    "table_3_2_bdp_mb": {10: 1.25, 25: 3.13, 50: 6.25, 75: 9.38, 100: 12.5, 150: 18.8, 200: 25.0},
    "table_4_3": {10: 1000, 25: 3000, 50: 5000, 75: 7000, 100: 10000, 150: 13000, 200: 18000},
    "script_20ms": 2000,
    "socket_buffer_delay0": 162500,
    "core_max": 26000000,
    "tcp_mem_vector": (4096, 3125000, 26000000),
    "schedule_days": 29.22,
    "conditions": 250,
    "d1": {"moderate_rcvbuf": False, "dsack": False, "no_metrics_save": True, "timestamps": True,
           "window_scaling": True, "sack": True},
    "hstcp": {"low_window": 38, "high_window": 83000, "high_decrease": 0.1, "high_p": 1e-7, "a38": 1.0, "b38": 0.5,
              "a83000_text": 70.7, "a83000_rfc": 72.0, "b83000": 0.1},
    "scalable": {"a": 0.01, "b": 0.125, "doubling_rtts": 70.0},
    "htcp": {"delta_l": 1.0, "beta_min": 0.5, "beta_max": 0.8},
    "bic": {"low_window": 14, "s_max": 16, "s_min": 0.01, "beta_1024": 819},
    "reno": {"a": 1.0, "b": 0.5},
    "reno_recovery_min": 50.0,
    "giga": {"mean_mbps": 759.1, "losses_per_min": 259.8, "loss_pct": 0.0068, "packet_bytes": 1500},
    "pktgen_mbps": 980.1,
    "fair_window_s": 125.0,
}

#: Tolerances of the rules, each with its reason (also in the targets' ``why``).
TOL: dict[str, float] = {
    # "Visually indistinguishable" curves (ON vs OFF) and "the same" (emulated vs simulated at
    # 0.1 %): 15 % of the larger mean, about what two curves on the thesis's throughput plots
    # could differ by and still be read as one; within the noise also counts.
    "same_curve": 0.15,
    # "Nearly identical" protocols at low delay: max / min <= 1.25.
    "identical_ratio": 1.25,
    # "Poor" at 0.1 %: below half of the link; "close together": max / min <= 2.
    "poor_fraction": 0.5, "close_ratio": 2.0,
    # A protocol "clearly above" another: 10 % more on average over the delays >= 25 ms.
    "clearly_above": 0.10,
    # Steps against "throughput falls with the loss rate": 2 % of the link (the same throughput at
    # the line rate under two loss rates differs by run noise only).
    "monotone_step": 0.02,
    # Reno's ~50 min: a factor 2 either way (the buffer of Fig 2.2 is unstated, and the epoch
    # scales with the peak window).
    "reno_factor": 2.0,
    # HighSpeed "far faster" than Reno: at most a quarter of Reno's first epoch.
    "hs_fraction": 0.25,
    # Scalable "oscillates near the maximum": mean cwnd after the first cut >= 85 % of the max.
    "near_max": 0.85,
    # Measured backoff factors against the module's constant: +/- 0.03 (sampling at 100 ms reads
    # the peak up to one sample early).
    "backoff": 0.03,
    # Reno's measured growth against 1 segment per RTT: +/- 15 % (the smoothed RTT of the samples
    # lags the queue's growth).
    "reno_growth": 0.15,
    # Fairness: "unfair" below 0.95; "clearly unfair" below 0.8 (5 flows of 10 taking all:
    # 0.5).
    "unfair": 0.95, "clearly_unfair": 0.8,
    # The replica's receiver window against the window the testbed's receiver advertised: 10 %.
    "window": 0.10,
}


@dataclass
class Data:
    """What the rules read (fatpipe.studies.silva2006.data builds each)."""

    settings: Any  # the make_sweeps module
    cells: pd.DataFrame = field(default_factory=pd.DataFrame)  # every connection
    later_cells: pd.DataFrame = field(default_factory=pd.DataFrame)  # connections after a run's first
    fairness: pd.DataFrame = field(default_factory=pd.DataFrame)
    traces: dict[str, Any] = field(default_factory=dict)
    emulation: pd.DataFrame = field(default_factory=pd.DataFrame)
    tuning: list[dict[str, Any]] = field(default_factory=list)  # engine.tuning of testbed runs
    offloads: list[Any] = field(default_factory=list)  # engine.offloads of testbed runs
    sweeps: dict[str, Any] = field(default_factory=dict)  # role -> Sweep of this mode
    skipped: dict[str, str] = field(default_factory=dict)  # role -> why it was not run
    trace_scale: float = 1.0
    algorithm_params: dict[str, dict[str, str]] = field(default_factory=dict)


# ---- small helpers -----------------------------------------------------------------------------

def _ok(text: str, **numbers: Any) -> Check:
    return Check(HOLDS, text, numbers)


def _fail(text: str, **numbers: Any) -> Check:
    return Check(FAILS, text, numbers)


def _nc(text: str) -> Check:
    return Check(NOT_COMPARABLE, text)


def _exact(label: str, ours: Any, printed: Any, tol: float = 0.0) -> Check:
    good = abs(float(ours) - float(printed)) <= tol if tol else ours == printed
    t = f"{label}: ours {ours!r}, printed {printed!r}" + (f" (±{tol:g})" if tol else "")
    return _ok(t) if good else _fail(t)


def _cell(d: Data, env: str, cc: str, delay: float, loss: float, nms: Any = "n/a", real: bool = False,
          later: bool = False) -> Pt:
    cells = d.later_cells if later else d.cells
    if cells.empty:
        raise Missing(f"no {env} data")
    sel = cells[(cells["env"] == env) & (cells["cc"] == cc) & (np.isclose(cells["delay_ms"], delay))
                & (np.isclose(cells["loss"], loss)) & (cells["real"] == real)]
    if nms != "n/a":
        sel = sel[sel["nms"] == nms]
    if sel.empty:
        raise Missing(f"{env} {cc} at {delay:g} ms, loss {loss:g}{'' if nms == 'n/a' else f', nms {nms}'}")
    r = sel.iloc[0]
    label = f"{env} {cc} {delay:g} ms {loss:g}" + ("" if nms == "n/a" else f" {'ON' if nms else 'OFF'}")
    return Pt(float(r["mean"]), float(r["half_width"]), int(r["n"]), label)


def _axes(d: Data, env: str, real: bool = False) -> tuple[list[str], list[float], list[float]]:
    if d.cells.empty:
        return [], [], []
    s = d.cells[(d.cells["env"] == env) & (d.cells["real"] == real)]
    return sorted(s["cc"].unique()), sorted(s["delay_ms"].unique()), sorted(s["loss"].unique())


def _capacity_mbps(d: Data, env: str) -> float:
    if env == "sim":
        return d.settings.CAPACITY_BPS / 1e6
    return d.settings.CAPACITY_BPS * d.settings.EMU_SCALE / 1e6


def _param(d: Data, algo: str, name: str) -> str | None:
    return d.algorithm_params.get(algo, {}).get(name)


# ---- 1-6: configuration and arithmetic ---------------------------------------------------------

def _t1(d: Data) -> list[Check]:
    s = d.settings
    out = []
    for rtt in s.TABLE_3_2_RTTS_MS:
        bdp, q = s.table_3_2(rtt)
        out.append(_exact(f"RTT {rtt} ms: queue = round(1 Gb/s x RTT / 8 / 1460)", q, PRINTED["table_3_2_queue"][rtt]))
        printed = PRINTED["table_3_2_bdp_mb"][rtt]
        digits = 1 if printed >= 10 and rtt > 100 else 2
        # Half a unit of the printed digit, inclusive (3.125 prints as 3.13, rounding half up).
        out.append(_exact(f"RTT {rtt} ms: BDP {bdp:g} MB to the printed digits", bdp, printed, 10 ** -digits / 2 + 1e-9))
    return out


def _t2(d: Data) -> list[Check]:
    s = d.settings
    out = [_exact(f"get_queue({ms} ms)", s.get_queue(ms), q) for ms, q in PRINTED["table_4_3"].items()]
    out.append(_exact("get_queue(20 ms) (the script's extra step)", s.get_queue(20), PRINTED["script_20ms"]))
    try:
        s.get_queue(201)
        out.append(_fail("get_queue(201 ms) must be rejected, and was not"))
    except ValueError:
        out.append(_ok("get_queue(201 ms) is rejected, as the script exits"))
    # The sweeps actually use it: queue limit = get_queue(delay) x the mode's scale, and the
    # testbed's txqueuelen the same number.
    for role, sw in d.sweeps.items():
        if not role.startswith(("sim.", "emu.", "real.")):
            continue
        scale = 1.0 if role.startswith("sim.") or role == "real.sim" else s.EMU_SCALE
        for pt in sw.points():
            p = pt.as_dict()
            delay = float(str(p["topology.links.0.delay"]).removesuffix("ms")) - s.BASE_RTT_MS / 2
            want = max(round(s.get_queue(round(delay, 6)) * scale), 1)
            got = int(str(p["topology.links.0.queue.limit"]).removesuffix("pkt"))
            if got != want or ("testbed.txqueuelen" in p and int(p["testbed.txqueuelen"]) != want):
                out.append(_fail(f"{role} point {pt.index}: queue {got} (txqueuelen {p.get('testbed.txqueuelen')}), "
                                 f"get_queue x {scale:g} = {want}"))
                break
        else:
            out.append(_ok(f"{role}: every point's queue (and txqueuelen) is get_queue(delay) x {scale:g}"))
    return out


def _t3(d: Data) -> list[Check]:
    s = d.settings
    out = [_exact("socket buffer at delay 0 (the script's (1 + .3) x 10^6/8)", s.socket_buffer_bytes(0),
                  PRINTED["socket_buffer_delay0"]),
           _exact("socket buffer at 200 ms", s.socket_buffer_bytes(200), round(200.3 * 125000)),
           Check(HOLDS if s.socket_buffer_bytes(200) <= PRINTED["core_max"] else FAILS,
                 f"the largest buffer {s.socket_buffer_bytes(200)} B fits E.1's maxima of {PRINTED['core_max']} B"),
           _exact("E.1's tcp_rmem/tcp_wmem in lan-emulated.toml", tuple(s.TUNING_D1_E1["rmem"]), PRINTED["tcp_mem_vector"])]
    for role, sw in d.sweeps.items():
        if not role.startswith(("emu.testbed", "real.testbed")):
            continue
        bad = [pt for pt in sw.points()
               if str(pt.as_dict()["testbed.sndbuf"]) != f"{s.socket_buffer_bytes(_delay(pt, s), s.CAPACITY_BPS * s.EMU_SCALE)}B"]
        out.append(_fail(f"{role}: {len(bad)} points' sndbuf is not (delay + 0.3 ms) x the scaled rate") if bad else
                   _ok(f"{role}: every point asks netperf's -s/-S = (delay + 0.3 ms) x {s.EMU_SCALE:g} Gb/s / 8"))
    if not d.emulation.empty:
        e = d.emulation.dropna(subset=["granted_bytes"])
        doubled = (e["granted_bytes"] == 2 * e["asked_bytes"]).all() if not e.empty else False
        out.append(_ok(f"Linux granted twice the buffer asked in all {len(e)} testbed runs")
                   if doubled else _fail("Linux did not grant twice the buffer asked in every testbed run"))
        w = d.emulation.dropna(subset=["advertised_window_bytes"])
        if "rwnd_limited_s" in w:
            # Linux opens the advertised window as data arrives, so only a run the receiver's
            # window actually limited (TCP_INFO's rwnd_limited) shows the cap.
            w = w[w["rwnd_limited_s"] > 0]
        if not w.empty:
            most = w.groupby("asked_bytes")["advertised_window_bytes"].max()
            want = {a: s.linux_advertised_window(int(a)) for a in most.index}
            good = all(abs(most[a] / want[a] - 1) <= TOL["window"] for a in most.index)
            text = ("the largest window the testbed's receivers advertised in runs it limited, per -S value: "
                    + ", ".join(f"{int(a)} B: {int(most[a])} B (replica {want[a]} B)" for a in most.index)
                    + f" (within {TOL['window']:.0%})")
            out.append(_ok(text) if good else _fail(text))
        else:
            out.append(_nc("no testbed run was limited by the receiver's window: the replica's window is not checked"))
    else:
        out.append(_nc("no testbed run: what Linux grants for -s/-S is not measured" + _why_skipped(d, "emu.testbed")))
    return out


def _delay(pt: Any, s: Any) -> float:
    return round(float(str(pt.as_dict()["topology.links.0.delay"]).removesuffix("ms")) - s.BASE_RTT_MS / 2, 6)


def _why_skipped(d: Data, prefix: str) -> str:
    why = {r: w for r, w in d.skipped.items() if r.startswith(prefix)}
    return f" ({next(iter(why.values()))})" if why else ""


def _t4(d: Data) -> list[Check]:
    s = d.settings
    days = s.schedule_seconds() / 86400
    out = [_exact("Table 4.2's run time incl. 10 s pauses, 5 protocols x 10 delays, days", round(days, 2),
                  PRINTED["schedule_days"])]
    full = s.sim_grid("full")
    import tomllib

    for p, (secs, runs) in s.SCHEDULE.items():
        text = full[f"sim.{s.loss_tag(p)}"]
        t = tomllib.loads(text)
        dur = next(x for x in t["set"] if x.startswith("duration="))
        ok = dur == f"duration={secs}s" and t["replications"] == runs
        out.append(Check(HOLDS if ok else FAILS, f"full mode at loss {p:g}: {dur}, {t['replications']} replications "
                         f"(Table 4.2: {secs} s x {runs})"))
    return out


def _t5(d: Data) -> list[Check]:
    s = d.settings
    n = sum(len(list(_points_of(text))) for role, text in s.sim_grid("full").items())
    out = [_exact("full mode's simulated conditions (protocols x delays x loss rates)", n, PRINTED["conditions"])]
    algos = s.MODES["full"]["emu_algorithms"]
    out.append(_nc(f"emulated grid: the thesis's modules (tcp_highspeed, tcp_scalable, tcp_htcp, tcp_bic of Linux "
                   f"2.6.13) are not in this kernel; full mode runs {', '.join(algos)} x 10 delays x 5 loss rates x ON/OFF "
                   f"= {len(algos) * 100} conditions at a tenth of the rate instead of 250 x 2"))
    out.append(_nc("the real-environment point (GIGA, RTT 13.6 ms) cannot be run; its emulated and simulated replicas are"))
    return out


def _points_of(text: str):
    import tomllib

    t = tomllib.loads(text)
    sizes = [len(next(iter(g.values()))) for g in t.get("vary", [])]
    return range(math.prod(sizes))


def _t6(d: Data) -> list[Check]:
    if not d.tuning:
        return [_nc("no testbed run" + _why_skipped(d, "emu.testbed"))]
    out = []
    for k, v in PRINTED["d1"].items():
        vals = {t.get(k) for t in d.tuning}
        if k == "no_metrics_save" and vals == {True, False}:
            n_on = sum(t.get(k) is True for t in d.tuning)
            out.append(_ok(f"D.1 {k} = 1 in {n_on} runs; 0 in the others: the thesis's ON/OFF experiment (target 14)"))
            continue
        out.append(_ok(f"D.1 {k} = {v} in every testbed run") if vals == {v} else
                   _fail(f"D.1 {k}: the testbed runs had {sorted(map(str, vals))}, D.1 sets {v}"))
    for k in ("rmem", "wmem"):
        vals = {tuple(t.get(k) or ()) for t in d.tuning}
        out.append(_ok(f"E.1 tcp_{k} = {PRINTED['tcp_mem_vector']} in every testbed run")
                   if vals == {PRINTED["tcp_mem_vector"]} else _fail(f"E.1 tcp_{k}: {vals}"))
    snd = [o for o in d.offloads if any(str(x).startswith("snd:") for x in o)]
    out.append(_ok(f"TSO (and GSO, GRO) off on the sender's interface in every run ({len(snd)} runs), as "
                   "`ethtool -K ethX tso off`") if snd and len(snd) == len(d.offloads)
               else _fail(f"segmentation offloads were switched off on the sender in {len(snd)} of {len(d.offloads)} runs"))
    if not d.emulation.empty:
        p99 = d.emulation["emu_delay_p99_ms"].astype(float)
        text = (f"HZ = 1000 bought netem 1 ms delay resolution; the link emulator's p99 departure error was "
                f"{p99.max():.3g} ms at worst over {len(p99)} runs")
        out.append(_ok(text) if p99.max() <= 1.0 else _fail(text))
    out.append(_nc("net.core.netdev_max_backlog and net.core.rmem_max/wmem_max are host-wide (not per network "
                   "namespace): the testbed does not change them (the buffers asked, at most "
                   f"{d.settings.socket_buffer_bytes(200, d.settings.CAPACITY_BPS * d.settings.EMU_SCALE)} B, "
                   "are below this host's cap, and Linux granted them: target 3)"))
    out.append(_ok("D.2/E.2's restore: every setting is per namespace, and the namespaces are deleted after each run"))
    return out


# ---- 7-11: protocol constants -----------------------------------------------------------------

def _hs_text(w: float) -> tuple[float, float]:
    """The thesis's formulas: b(w) linear in log w, p(w) = 0.078 / w^1.2, a = w^2 p 2b/(2 - b)."""
    lo, hi, hd = 38.0, 83000.0, 0.1
    b = (hd - 0.5) * (math.log(w) - math.log(lo)) / (math.log(hi) - math.log(lo)) + 0.5
    p = 0.078 / w**1.2
    return w * w * p * 2 * b / (2 - b), b


def _trace_shape(d: Data, cc: str):
    from fatpipe.studies.silva2006.traces import shape

    tr = d.traces.get(cc)
    if tr is None:
        raise Missing(f"no cwnd trace of {cc}")
    return shape(tr["t_s"], tr["cwnd"], tr["ssthresh"], tr["srtt_s"])


def _backoff_checks(d: Data, cc: str, lo: float, hi: float, what: str) -> list[Check]:
    try:
        sh = _trace_shape(d, cc)
    except Missing as e:
        return [_nc(str(e))]
    b = [x for x in sh.backoffs if math.isfinite(x)]
    if not b:
        return [_nc(f"{cc}: the trace has no congestion response after the first")]
    tol = TOL["backoff"]
    text = f"{cc}: measured backoff factors {min(b):.3f}-{max(b):.3f} over {len(b)} cuts; {what} [{lo:g}, {hi:g}] ± {tol:g}"
    return [_ok(text) if lo - tol <= min(b) and max(b) <= hi + tol else _fail(text)]


def _t7(d: Data) -> list[Check]:
    h = PRINTED["hstcp"]
    a38, b38 = _hs_text(38)
    a83, b83 = _hs_text(83000)
    out = [_exact("a(38) by the thesis's formulas", round(a38, 2), h["a38"], 0.1),
           _exact("b(38)", round(b38, 4), h["b38"], 1e-9),
           _exact("a(83000) by the thesis's formulas (p = 0.078 / w^1.2)", round(a83, 1), h["a83000_text"], 1.0),
           _exact("b(83000)", round(b83, 4), h["b83000"], 1e-9)]
    from fatpipe.models.hstcp import response

    rfc = float(response("hstcp").a(83000))
    out.append(_exact("a(83000) by RFC 3649's exact p(w) (fatpipe.models.hstcp)", round(rfc, 1), h["a83000_rfc"], 0.02 * 72))
    for k in ("low_window", "high_window", "high_decrease", "high_p"):
        v = _param(d, "highspeed", k)
        out.append(_exact(f"fatpipe highspeed {k}", float(v) if v else None, h[k]) if v else _nc(f"no parameter {k}"))
    out.append(_ok("below Low_Window = 38 the module is Reno (a = 1, b = 0.5): RFC 3649 §5, the Linux table's first row"))
    out += _backoff_checks(d, "highspeed", 0.5, 0.9, "b(w) in [0.1, 0.5] keeps 1 - b(w) in")
    return out


def _t8(d: Data) -> list[Check]:
    sc = PRINTED["scalable"]
    out = [_exact("doubling time ln 2 / ln(1 + 0.01), RTTs", round(math.log(2) / math.log(1 + sc["a"]), 1), 69.7, 0.05),
           _exact("fatpipe scalable b", float(_param(d, "scalable", "b") or "nan"), sc["b"])]
    ai = float(_param(d, "scalable", "ai_cnt") or "nan")
    out.append(_ok(f"Linux's module adds 1/{ai:g} per ACK = {1 / ai:g}, 'to account for delayed ACKs': with a receiver "
                   f"that ACKs every second segment, {1 / (2 * ai):g} per segment, the thesis's a = 0.01"))
    out += _backoff_checks(d, "scalable", 1 - sc["b"], 1 - sc["b"], "1 - b =")
    try:
        sh = _trace_shape(d, "scalable")
        g = [x for x in sh.growth_factor_per_rtt if math.isfinite(x)]
        if g:
            gm = float(np.median(g))
            doubling = math.log(2) / math.log(gm) if gm > 1 else math.inf
            # The module grows 1/ai_cnt per ACK: per RTT x(1 + 1/ai_cnt) when every segment is
            # ACKed (ns-2's TCPSink, this simulation), x(1 + 1/(2 ai_cnt)) with delayed ACKs (a Linux
            # receiver): 35 or 70 RTTs to double.
            every, delayed = (math.log(2) / math.log(1 + 1 / (k * ai)) for k in (1, 2))
            which = min((every, "every segment ACKed"), (delayed, "delayed ACKs, the thesis's 70"),
                        key=lambda x: abs(doubling / x[0] - 1))
            text = (f"measured growth x{gm:.4f} per RTT, doubling in {doubling:.0f} RTTs: the module's {which[0]:.0f} "
                    f"RTTs with {which[1]} (±25 %)")
            out.append(_ok(text) if abs(doubling / which[0] - 1) <= 0.25 else _fail(text))
    except Missing as e:
        out.append(_nc(str(e)))
    return out


def _t9(d: Data) -> list[Check]:
    h = PRINTED["htcp"]

    def alpha(delta: float) -> float:
        x = delta - h["delta_l"]
        return 1.0 if x <= 0 else 1 + 10 * x + 0.25 * x * x

    out = [_exact("α(Δ = 1 s) (Δ_L = 1 s: standard TCP)", alpha(1.0), 1.0),
           _exact("α(Δ = 3 s) = 1 + 10·2 + 0.25·4", alpha(3.0), 22.0),
           _exact("effective increase 2(1 - β)α at β = 0.5 equals α", 2 * (1 - 0.5) * alpha(3.0), alpha(3.0)),
           _exact("fatpipe htcp beta_min", float(_param(d, "htcp", "beta_min") or "nan"), h["beta_min"]),
           _exact("fatpipe htcp beta_max", float(_param(d, "htcp", "beta_max") or "nan"), h["beta_max"])]
    out += _backoff_checks(d, "htcp", h["beta_min"], h["beta_max"], "β = RTT_min / RTT_max clamped to")
    return out


def _t10(d: Data) -> list[Check]:
    b = PRINTED["bic"]
    beta = float(_param(d, "bic", "beta") or "nan")
    out = [_exact("fatpipe bic low_window", int(_param(d, "bic", "low_window") or -1), b["low_window"]),
           _exact("S_max: the study's bic max_increment", int(d.settings.PROTOCOL_PARAMS["bic"]["max_increment"]), b["s_max"]),
           _exact("fatpipe bic min_increment (S_min)", float(_param(d, "bic", "min_increment") or "nan"), b["s_min"]),
           _exact("fatpipe bic beta as applied, x 1024", round(beta * 1024), b["beta_1024"]),
           _ok("the text's β = 0.125 (1 - β = 0.875) is the paper's; Table 2.5's 819/1024 is Linux's, which the "
               "thesis ran and this reproduction runs (variant \"linux\")")]
    out += _backoff_checks(d, "bic", b["beta_1024"] / 1024, b["beta_1024"] / 1024, "819/1024 =")
    return out


def _t11(d: Data) -> list[Check]:
    out = _backoff_checks(d, "reno", 0.5, 0.5, "b = 0.5:")
    try:
        sh = _trace_shape(d, "reno")
        g = [x for x in sh.growth_per_rtt if math.isfinite(x)]
        if g:
            gm = float(np.median(g))
            text = f"reno: measured growth {gm:.3f} segments per RTT in congestion avoidance (a = 1 ± {TOL['reno_growth']:.0%})"
            out.append(_ok(text) if abs(gm - 1) <= TOL["reno_growth"] else _fail(text))
        else:
            out.append(_nc("reno: no complete epoch after the first in the trace (run longer)"))
    except Missing as e:
        out.append(_nc(str(e)))
    out.append(_ok("timeout: cwnd = 1 and fast recovery's inflation to ssthresh + 3 are RFC 5681's, which fatpipe's Reno "
                   "implements (its validation against ns-2, docs/validation.md); 100 ms samples cannot show them"))
    return out


# ---- 12: cwnd traces ---------------------------------------------------------------------------

def _t12(d: Data) -> list[Check]:
    if not d.traces:
        return [_nc("no cwnd traces")]
    scale = d.trace_scale
    out = []
    shapes = {}
    for cc in d.settings.THESIS_PROTOCOLS:
        try:
            shapes[cc] = _trace_shape(d, cc)
        except Missing as e:
            out.append(_nc(str(e)))
    reno = shapes.get("reno")
    if reno is not None:
        e = reno.first_epoch_s
        lb = reno.first_epoch_lower_bound_s
        f = TOL["reno_factor"]
        lo, hi = PRINTED["reno_recovery_min"] / f, PRINTED["reno_recovery_min"] * f
        if math.isfinite(e):
            m = e / scale / 60
            text = (f"reno: {m:.0f} min from the first cut back to the link limit "
                    + (f"({e:.0f} s at {scale:g} x the rate, x {1 / scale:g}) " if scale != 1 else "")
                    + f"against ≈ {PRINTED['reno_recovery_min']:g} min (a factor {f:g}: [{lo:g}, {hi:g}])")
            out.append(_ok(text) if lo <= m <= hi else _fail(text))
        else:
            m = lb / scale / 60
            text = f"reno: no second cut in the run; the climb takes more than {m:.0f} min"
            out.append(_fail(text + f" > {hi:g}") if m > hi else _nc(text + " (run longer)"))
    hs = shapes.get("highspeed")
    if reno is not None and hs is not None:
        r_e = reno.first_epoch_s if math.isfinite(reno.first_epoch_s) else reno.first_epoch_lower_bound_s
        text = (f"highspeed climbs back in {hs.first_epoch_s:.0f} s against reno's {r_e:.0f} s "
                f"(far faster: at most {TOL['hs_fraction']:.0%})")
        out.append(_ok(text) if math.isfinite(hs.first_epoch_s) and hs.first_epoch_s <= TOL["hs_fraction"] * r_e
                   else _fail(text))
    ep = {cc: float(np.mean(s.epochs_s)) for cc, s in shapes.items() if s.epochs_s}
    sc = shapes.get("scalable")
    if sc is not None and "scalable" in ep:
        others = {k: v for k, v in ep.items() if k != "scalable"}
        text = (f"scalable's epochs last {ep['scalable']:.1f} s on average, the others' "
                + ", ".join(f"{k} {v:.1f}" for k, v in sorted(others.items())) + " s (the shortest: rapid oscillation)")
        out.append(_ok(text) if all(ep["scalable"] < v for v in others.values()) else _fail(text))
        text = f"scalable keeps cwnd at {sc.mean_over_max_after_first:.0%} of its maximum after the first cut (near it: >= {TOL['near_max']:.0%})"
        out.append(_ok(text) if sc.mean_over_max_after_first >= TOL["near_max"] else _fail(text))
    elif sc is not None:
        out.append(_nc("scalable: fewer than three congestion responses in the trace"))
    for cc, attr, want, word in (("htcp", "growth_ratios", lambda r: r < 1, "accelerating (α grows with the time since the cut)"),
                                 ("bic", "approach_ratios", lambda r: r > 1,
                                  "decelerating as they approach the previous peak (binary search)")):
        s = shapes.get(cc)
        if s is None:
            continue
        r = [x for x in getattr(s, attr) if math.isfinite(x)]
        if not r:
            out.append(_nc(f"{cc}: no complete epoch after the first"))
            continue
        k = sum(want(x) for x in r)
        text = (f"{cc}: {k} of {len(r)} epochs grow {word}: cwnd gained in the first half / second half "
                f"median {float(np.median(r)):.2f}")
        out.append(_ok(text) if k > len(r) / 2 else _fail(text))
    return out


# ---- 13: the delay x loss grid -----------------------------------------------------------------

def _t13(d: Data) -> list[Check]:
    env = "sim"
    ccs, delays, losses = _axes(d, env)
    if not ccs:
        return [_nc("no simulated grid")]
    cap = _capacity_mbps(d, env)
    out = [_nc("the thesis states these for its emulated environment, whose modules this kernel lacks; they are "
               "judged here on the simulated grid of the same five modules (the thesis's own replica, Figs 4.14-4.18)")]
    # a. throughput falls with the loss rate
    for cc in ccs:
        for dl in delays:
            try:
                pts = [_cell(d, env, cc, dl, p) for p in sorted(losses)]  # 1e-7 first: falling
            except Missing:
                continue
            ch = c.monotone(pts, -1, TOL["monotone_step"] * cap)
            if ch.status != HOLDS:
                out.append(Check(ch.status, f"a. {cc} at {dl:g} ms, loss 1e-7 -> 1e-3: {ch.text}"))
    if not any(x.text.startswith("a.") for x in out):
        out.append(_ok(f"a. throughput falls with the loss rate for every protocol at every delay "
                       f"(steps back up to {TOL['monotone_step']:.0%} of the link allowed)"))
    # b. at 0.1 % all poor and close
    if 1e-3 in losses:
        for dl in [x for x in delays if x >= 10]:
            pts = [_cell(d, env, cc, dl, 1e-3) for cc in ccs]
            hi, lo = max(pts, key=lambda p: p.mean), min(pts, key=lambda p: p.mean)
            out.append(c.below(hi, TOL["poor_fraction"] * cap, "<"))
            out[-1].text = f"b. loss 1e-3, {dl:g} ms, poor: " + out[-1].text
            ratio = hi.mean / lo.mean if lo.mean > 0 else math.inf
            t = f"b. loss 1e-3, {dl:g} ms, close: max/min = {hi.label} / {lo.label} = {ratio:.2f} (<= {TOL['close_ratio']:g})"
            out.append(_ok(t) if ratio <= TOL["close_ratio"] else _fail(t))
    # c. low delays: nearly identical
    for dl in [x for x in delays if x <= 10]:
        for p in losses:
            pts = [_cell(d, env, cc, dl, p) for cc in ccs]
            hi, lo = max(pts, key=lambda x: x.mean), min(pts, key=lambda x: x.mean)
            ratio = hi.mean / lo.mean if lo.mean > 0 else math.inf
            t = f"c. {dl:g} ms, loss {p:g}: max/min = {hi.label} / {lo.label} = {ratio:.2f} (<= {TOL['identical_ratio']:g})"
            out.append(_ok(t) if ratio <= TOL["identical_ratio"] else _fail(t))
    # d. gaps open with delay
    for p in losses:
        spread = []
        for dl in (min(delays), max(delays)):
            ms = [_cell(d, env, cc, dl, p).mean for cc in ccs]
            spread.append(max(ms) / min(ms) if min(ms) > 0 else math.inf)
        t = f"d. loss {p:g}: max/min {spread[0]:.2f} at {min(delays):g} ms, {spread[1]:.2f} at {max(delays):g} ms (the gap opens)"
        out.append(_ok(t) if spread[1] > spread[0] else _fail(t))
    # e. Scalable best at most delays for loss <= 1e-4 (1e-7: f)
    for p in [x for x in losses if 1e-7 < x <= 1e-4]:
        best = [max(ccs, key=lambda cc: _cell(d, env, cc, dl, p).mean) for dl in delays]
        k = best.count("scalable")
        t = f"e. loss {p:g}: scalable is best at {k} of {len(delays)} delays (best: {', '.join(best)})"
        out.append(_ok(t) if k > len(delays) / 2 else _fail(t))
    # f. at 1e-7, beaten at short/medium delays, best at >= 140 ms
    if 1e-7 in losses:
        best = {dl: max(ccs, key=lambda cc: _cell(d, env, cc, dl, 1e-7).mean) for dl in delays}
        short = [dl for dl in delays if dl < 140]
        long = [dl for dl in delays if dl >= 140]
        t = f"f. loss 1e-7, delays < 140 ms: best " + ", ".join(f"{dl:g} ms {best[dl]}" for dl in short) + " (someone beats scalable)"
        out.append(_ok(t) if any(best[dl] != "scalable" for dl in short) else _fail(t))
        for dl in long:
            out.append(c.greater(_cell(d, env, "scalable", dl, 1e-7),
                                 max((_cell(d, env, cc, dl, 1e-7) for cc in ccs if cc != "scalable"), key=lambda x: x.mean)))
            out[-1].text = f"f. loss 1e-7, {dl:g} ms, scalable best: " + out[-1].text
    # g. BIC clearly above HighSpeed at 1e-4
    if 1e-4 in losses and {"bic", "highspeed"} <= set(ccs):
        far = [dl for dl in delays if dl >= 25]
        rel = [(_cell(d, env, "bic", dl, 1e-4).mean / _cell(d, env, "highspeed", dl, 1e-4).mean - 1) for dl in far]
        m = float(np.mean(rel)) if rel else math.nan
        t = (f"g. loss 1e-4: bic over highspeed by {m:+.0%} on average at {', '.join(f'{x:g}' for x in far)} ms "
             f"(per delay {', '.join(f'{x:+.0%}' for x in rel)}; clearly: >= {TOL['clearly_above']:.0%})")
        out.append(_ok(t) if m >= TOL["clearly_above"] else _fail(t))
    return out


# ---- 14, 15: the testbed -----------------------------------------------------------------------

def _t14(d: Data) -> list[Check]:
    ccs, delays, losses = _axes(d, "testbed")
    if not ccs:
        return [_nc("no testbed run" + _why_skipped(d, "emu.testbed"))]
    out = []
    for cc in ccs:
        for dl in delays:
            for p in losses:
                try:
                    on = _cell(d, "testbed", cc, dl, p, True, later=True)
                    off = _cell(d, "testbed", cc, dl, p, False, later=True)
                except Missing:
                    continue
                t = f"connections after the first: {on.fmt()} against {off.fmt()} Mb/s"
                out.append(_same(on, off, t))
    return out or [_nc("no ON/OFF pair in the testbed runs")]


def _t15(d: Data) -> list[Check]:
    ccs, delays, losses = _axes(d, "testbed")
    if not ccs:
        return [_nc("no testbed run" + _why_skipped(d, "emu.testbed"))]
    out = []
    for cc in ccs:
        for dl in delays:
            for p in losses:
                try:
                    tb = _cell(d, "testbed", cc, dl, p, True)
                    rp = _cell(d, "replica", cc, dl, p)
                except Missing:
                    continue
                rel = 100 * (rp.mean - tb.mean) / tb.mean if tb.mean else math.nan
                t = f"{tb.fmt()} against {rp.fmt()} Mb/s ({rel:+.0f} %)"
                if p >= 1e-3:
                    out.append(_same(rp, tb, t))
                else:
                    ch = _same(rp, tb, t)
                    word = {HOLDS: "they match", FAILS: "they differ", NOT_COMPARABLE: "the noise cannot tell"}[ch.status]
                    out.append(Check(HOLDS, f"{t}: {word} (at {p:g} the thesis says they diverge for the modules we lack; "
                                     "recorded, not judged)", {"status": ch.status}))
    out.append(_nc("the thesis's HighSpeed/BIC/H-TCP divergence at <= 0.01 % cannot be tested: the kernel offers "
                   "none of those modules (only reno of the thesis's five)"))
    return out


def _same(a: Pt, b: Pt, text: str) -> Check:
    """Claim: a and b are the same curve: within TOL["same_curve"] of the larger mean. Further
    apart but by less than the noise: not comparable; beyond it: does not hold (checks module)."""
    tol = TOL["same_curve"] * max(abs(a.mean), abs(b.mean))
    d = c.diff(a, b)
    off = abs(d.mean) - tol
    return c._side(-off if off != 0 else 1e-300, d.noise,
                   f"{text}: the same curve (within {TOL['same_curve']:.0%} = {tol:.3g})",
                   {"a": a.mean, "b": b.mean, "tol": tol})


# ---- 16-18: the real environment ---------------------------------------------------------------

def _t16(d: Data) -> list[Check]:
    out = [_nc("the GIGA testbed (Rio - São Paulo, RTT 13.6 ms) cannot be reproduced: there is no real WAN here, "
               "so 'all protocols clearly below their replicas' cannot be judged")]
    rows = []
    if not d.cells.empty:
        for env in ("sim", "testbed", "replica"):
            s = d.cells[(d.cells["env"] == env) & (d.cells["real"])]
            rows += [f"{env} {r.cc} {r.mean:.4g} Mb/s (n={r.n})" for r in s.itertuples()]
    if rows:
        out.append(_ok("the replicas ran: " + "; ".join(rows)))
    return out


def _t17(d: Data) -> list[Check]:
    g = PRINTED["giga"]
    pkts_per_min = g["mean_mbps"] * 1e6 / (g["packet_bytes"] * 8) * 60
    frac = g["losses_per_min"] / pkts_per_min
    return [_exact("259.8 losses/min over 759.1 Mb/s of 1500-byte packets, in %", round(100 * frac, 4), g["loss_pct"], 0.00005),
            _nc("the 24 h trace of the GIGA network (1440 samples, mean 759.1 Mb/s) is a measurement of a network we "
                "do not have")]


def _t18(d: Data) -> list[Check]:
    out = [_nc(f"pktgen's {PRINTED['pktgen_mbps']:g} Mb/s host to host (and 943-946 with the hand-made cable) measure "
               "the 2006 NICs, bus and cables; nothing here has them")]
    if not d.emulation.empty:
        e = d.emulation["emu_rate_error"].dropna().astype(float)
        if not e.empty:
            out.append(_ok(f"in place of pktgen's check: the emulated link delivered its rate within "
                           f"{100 * e.abs().max():.3f} % in {len(e)} testbed runs (the emulator's backlogged departures), "
                           f"with {int(d.emulation['emu_overflow'].fillna(0).sum())} frames it could not keep up with"))
    return out


# ---- 19, 20: fairness --------------------------------------------------------------------------

def _fair(d: Data, exp: str) -> pd.DataFrame:
    from fatpipe.studies.silva2006.measures import JAIN_KIND

    f = d.fairness
    if f.empty:
        raise Missing("no fairness runs")
    s = f[(f["experiment"] == exp) & (f["kind"] == JAIN_KIND)]
    if s.empty:
        raise Missing(f"no {exp} fairness runs")
    return s.groupby(["cc", "t_s"], as_index=False)["jain"].mean()


def _series(s: pd.DataFrame, cc: str) -> tuple[np.ndarray, np.ndarray]:
    g = s[s["cc"] == cc].sort_values("t_s")
    return g["t_s"].to_numpy(dtype=float), g["jain"].to_numpy(dtype=float)


def _window_mean(t: np.ndarray, j: np.ndarray, lo: float, hi: float) -> float:
    sel = (t >= lo) & (t <= hi) & np.isfinite(j)
    return float(j[sel].mean()) if sel.any() else math.nan


def _reach(t: np.ndarray, j: np.ndarray, level: float) -> float:
    """First time from which the index stays at or above ``level`` to the end."""
    ok = j >= level
    for i in range(len(j)):
        if ok[i:].all():
            return float(t[i])
    return math.inf


def _t19(d: Data) -> list[Check]:
    out = []
    try:
        s = _fair(d, "rtt")
        t, reno = _series(s, "reno")
        end = float(t.max())
        rmean = _window_mean(t, reno, 0, end)
        txt = f"a. different RTTs: reno's index averages {rmean:.3f} (unfair: < {TOL['unfair']:g})"
        out.append(_ok(txt) if rmean < TOL["unfair"] else _fail(txt))
        for cc in sorted(set(s["cc"]) - {"reno"}):
            m = _window_mean(*_series(s, cc), 0, end)
            txt = f"a. different RTTs: {cc} averages {m:.3f}, below reno's {rmean:.3f}"
            out.append(_ok(txt) if m < rmean else _fail(txt))
    except Missing as e:
        out.append(_nc(f"a. {e}"))
    try:
        s = _fair(d, "same")
        end = float(s["t_s"].max())
        ccs = sorted(set(s["cc"]))
        if "reno" in ccs:
            tr, jr = _series(s, "reno")
            target = float(jr[np.isfinite(jr)][-1])
            for cc in ("htcp", "bic"):
                if cc not in ccs:
                    continue
                t, j = _series(s, cc)
                when = _reach(t, j, target)
                txt = (f"b. same RTT: {cc} is at or above reno's final index ({target:.3f}) from {when:.0f} s on, "
                       f"within the first half of the {end:.0f} s run (much faster than reno, which needs all of it)")
                out.append(_ok(txt) if when <= 0.5 * end else _fail(txt))
        means = {cc: _window_mean(*_series(s, cc), 0, end) for cc in ccs}
        low = min(means, key=means.get)
        txt = "b. same RTT: mean index " + ", ".join(f"{k} {v:.3f}" for k, v in sorted(means.items())) + " (highspeed the lowest)"
        out.append(_ok(txt) if low == "highspeed" else _fail(txt))
        if "scalable" in means:
            t, j = _series(s, "scalable")
            sel = np.isfinite(j)
            slope = float(np.polyfit(t[sel], j[sel], 1)[0]) if sel.sum() > 2 else math.nan
            txt = f"b. same RTT: scalable's index trends {'up' if slope > 0 else 'down'} ({slope * 100:+.3f} per 100 s, least squares)"
            out.append(_ok(txt) if slope > 0 else _fail(txt))
    except Missing as e:
        out.append(_nc(f"b. {e}"))
    try:
        s = _fair(d, "inter")
        t, reno = _series(s, "reno")
        end = float(t.max())
        w = PRINTED["fair_window_s"]
        tail = (max(w, end - 0.25 * end), end)
        r_tail = _window_mean(t, reno, *tail)
        r_early = _window_mean(t, reno, 0, w)
        for cc in sorted(set(s["cc"]) - {"reno"}):
            tt, j = _series(s, cc)
            m_tail = _window_mean(tt, j, *tail)
            txt = (f"c. 5 reno + 5 {cc}: {m_tail:.3f} over {tail[0]:.0f}-{tail[1]:.0f} s (the run's last quarter, "
                   f"after {w:g} s) against reno alone {r_tail:.3f} (below it)")
            out.append(_ok(txt) if m_tail < r_tail else _fail(txt))
            if cc in ("htcp", "bic"):
                m_early = _window_mean(tt, j, 0, w)
                txt = f"c. 5 reno + 5 {cc}: {m_early:.3f} over the first {w:g} s against reno alone {r_early:.3f} (above it)"
                out.append(_ok(txt) if m_early > r_early else _fail(txt))
            if cc in ("scalable", "highspeed"):
                m_all = _window_mean(tt, j, 0, end)
                txt = f"c. 5 reno + 5 {cc}: {m_all:.3f} on average (clearly unfair: < {TOL['clearly_unfair']:g})"
                out.append(_ok(txt) if m_all < TOL["clearly_unfair"] else _fail(txt))
        if end < w:
            out.append(_nc(f"c. the runs last {end:.0f} s, less than the thesis's {w:g} s"))
    except Missing as e:
        out.append(_nc(f"c. {e}"))
    return out


def _t20(d: Data) -> list[Check]:
    from fatpipe.metrics import jain_index

    out = [_exact("J(equal shares of 10) = 1", round(jain_index([3.0] * 10), 12), 1.0),
           _exact("J(one flow takes all, n = 10) = 1/n", round(jain_index([1.0] + [0.0] * 9), 12), 0.1),
           _exact("J(1, 2, 3, 4) = 100 / (4 x 30)", round(jain_index([1, 2, 3, 4]), 12), round(100 / 120, 12))]
    rng = np.random.default_rng(2006)
    vals = [jain_index(rng.exponential(1.0, 10)) for _ in range(1000)]
    out.append(_ok(f"1000 random allocations of 10: J in [{min(vals):.3f}, {max(vals):.3f}] within [1/10, 1]")
               if min(vals) >= 0.1 - 1e-12 and max(vals) <= 1 + 1e-12 else _fail("J left [1/n, 1]"))
    if not d.fairness.empty:
        j = d.fairness["jain"].dropna()
        out.append(_ok(f"every measured index ({len(j)} values) lies in [0, 1]: {j.min():.3f}-{j.max():.3f}")
                   if ((j >= 0) & (j <= 1 + 1e-12)).all() else _fail("a measured index left [0, 1]"))
    return out


# ---- the table ---------------------------------------------------------------------------------

def _target(i: int, claim: str, why: str) -> Target:
    return Target(id=f"T{i}", kind="rule", sweep="*", metric="*", x="*", claim=claim, why=why)


TARGETS: list[tuple[Target, Callable[[Data], list[Check]]]] = [
    (_target(1, "Table 3.2: queue = round(1 Gb/s x RTT / 8 / 1460) = 856 ... 17123 packets; BDP 1.25 ... 25.0 MB",
             "exact, BDPs to the printed digits"), _t1),
    (_target(2, "Table 4.3 and the script's get_queue (<= 20 ms: 2000; > 200 ms rejected), used for the queue, "
                "txqueuelen (and backlog, netem limit)", "exact; every sweep point checked"), _t2),
    (_target(3, "socket buffer (delay + 0.3 ms) x 125 000 B (162 500 at 0 ms), maxima 26 000 000, tcp_rmem/wmem "
                "4096 3125000 26000000", "exact; and what Linux granted on the testbed (doubled; the advertised "
                f"window against the replica's within {TOL['window']:.0%})"), _t3),
    (_target(4, "Table 4.2's schedule (30 s x 20 ... 3600 s x 10, 10 s pauses) totals 29.22 days; full mode uses it",
             "to the printed digits; full mode's sweep files checked"), _t4),
    (_target(5, "test matrix: 5 protocols x 10 delays x 5 loss rates = 250 conditions, emulated (x2 ON/OFF) and simulated, "
                "plus the real point", "count of full mode's points; the parts we cannot run are not comparable"), _t5),
    (_target(6, "host tuning D.1 + E.1 + TSO off + HZ = 1000, restored by D.2/E.2",
             "what every testbed run recorded; host-wide settings are not comparable"), _t6),
    (_target(7, "HighSpeed: Low_Window 38, High_Window 83000, High_Decrease 0.1, High_P 1e-7; a(38) ≈ 1, b(38) = 0.5, "
                "a(83000) ≈ 70.7 (72 in RFC 3649), b(83000) = 0.1", "±0.1 / ±1.0 on the printed a, 2 % against the RFC; "
                f"the trace's backoffs within ±{TOL['backoff']:g}"), _t7),
    (_target(8, "Scalable: +0.01 per ACK, x (1 - 0.125) on loss; doubling ≈ 70 RTTs (ln 2 / ln 1.01 = 69.7)",
             f"closed form to 0.1 RTT; backoff ±{TOL['backoff']:g}; measured growth against the module's own rate ±25 %"), _t8),
    (_target(9, "H-TCP: α(Δ) = 1 + 10(Δ - Δ_L) + 0.25(Δ - Δ_L)² above Δ_L (1 s), increase 2(1 - β)α(Δ), β = RTTmin/RTTmax "
                "in [0.5, 0.8]", f"exact; the trace's backoffs in [0.5, 0.8] ± {TOL['backoff']:g}"), _t9),
    (_target(10, "BIC: low_window 14, S_max 16, S_min 0.01, β = 819/1024 (the text's 0.125 is the paper's)",
             f"exact; the trace's backoff 819/1024 ± {TOL['backoff']:g}"), _t10),
    (_target(11, "Reno: a = 1, b = 0.5; timeout -> cwnd 1; fast recovery ssthresh + 3, deflating to ssthresh",
             f"the trace: backoff 0.5 ± {TOL['backoff']:g}, growth 1 segment/RTT ± {TOL['reno_growth']:.0%}"), _t11),
    (_target(12, "cwnd traces (1 Gb/s, RTT 200 ms, overflow only): Reno ≈ 50 min back to its peak; HighSpeed far "
                 "faster; Scalable oscillates fast near the maximum; H-TCP smooth, accelerating growth; BIC smooth "
                 "approach to its target", "Reno within a factor 2 of 50 min; HighSpeed <= 1/4 of Reno's; Scalable the "
                 f"shortest epochs and >= {TOL['near_max']:.0%} of its max; H-TCP accelerating and BIC decelerating in "
                 "most epochs"), _t12),
    (_target(13, "the delay x loss grid: throughput falls with loss; at 0.1 % all poor and close; at 0-10 ms all "
                 "nearly identical; gaps open with delay; Scalable best at most delays for loss <= 0.01 %; at 1e-7 "
                 "beaten at short/medium delays but best >= ~140 ms; at 0.01 % BIC clearly above HighSpeed",
              f"steps against the fall <= {TOL['monotone_step']:.0%} of the link; poor < {TOL['poor_fraction']:.0%} of the link, close "
              f"max/min <= {TOL['close_ratio']:g}; identical max/min <= {TOL['identical_ratio']:g}; clearly >= "
              f"{TOL['clearly_above']:.0%}; means decide (checks module)"), _t13),
    (_target(14, "tcp_no_metrics_save ON vs OFF: the curves are indistinguishable",
             f"the connections after a run's first (the only ones a cache can reach) within {TOL['same_curve']:.0%} or the noise"), _t14),
    (_target(15, "emulated and simulated agree at 0.1 % loss; at <= 0.01 % they diverge for HighSpeed, BIC and H-TCP",
             f"testbed against the simulator's replica within {TOL['same_curve']:.0%} or the noise at 0.1 %; the modules' "
             "divergence is not comparable"), _t15),
    (_target(16, "real environment (RTT 13.6 ms): every protocol clearly below its emulated and simulated replicas",
             "no real WAN here"), _t16),
    (_target(17, "GIGA 24 h Reno trace: mean 759.1 Mb/s, 259.8 loss events/min = 0.0068 % at 1500 B",
             "the arithmetic to the printed digits; the measurement is not comparable"), _t17),
    (_target(18, "capacity: pktgen ≈ 980.1 Mb/s host to host (943-946 with the hand-made cable), ≈ 979.3 to the switch",
             "hardware we do not have; the emulated link's rate stands in"), _t18),
    (_target(19, "fairness (10 flows, starts U[0.1, 4] s): different RTTs: Reno unfair and every variant below it; same "
                 "RTT: H-TCP and BIC converge much faster than Reno, HighSpeed lowest, Scalable trending up; 5 Reno + 5 X: "
                 "none reaches Reno-alone fairness in long runs, H-TCP and BIC above it in the first ≈ 125 s, Scalable "
                 "and HighSpeed clearly unfair", f"Jain's index ({'cumulative'} throughput averages, measures.JAIN_KIND) averaged "
                 f"over the run; unfair < {TOL['unfair']:g}, clearly unfair < {TOL['clearly_unfair']:g}; much faster "
                 "convergence: at or above Reno's final index from the first half of the run on; trend: least-squares "
                 "slope"), _t19),
    (_target(20, "Jain's index lies in [0, 1] and equals 1 for equal shares", "exact; every measured value"), _t20),
]


def evaluate_all(d: Data) -> list[RuleVerdict]:
    out = []
    for target, rule in TARGETS:
        try:
            checks = rule(d)
        except Missing as e:
            checks = [_nc(f"missing data: {e}")]
        status = c.combine(checks)
        held = sum(ch.status == HOLDS for ch in checks)
        bad = [ch for ch in checks if ch.status != HOLDS]
        detail = (f"{held} of {len(checks)} checks hold" + (f"; first other: {bad[0].status}: {bad[0].text}" if bad else ""))
        out.append(RuleVerdict(target, status, detail, checks=checks))
    return out
