"""Write the Michel (2009) sweep files (sweeps/<experiment>-<mode>.toml) from one table: the
dumbbell experiments D-* over dumbbell.toml and the parking-lot ones P-* over parkinglot.toml.

The sweep files are generated so that quick and full differ only where the README's table says
they do, and so the long per-pair lists (D-C's and P-C's pairs, D-F1a's delays, D-F1b's starts) are never
typed by hand. Run from anywhere: ``python studies/michel2009/make_sweeps.py``; the files are
committed, and tests/test_michel2009_study.py checks they are what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fatpipe.toml_values import toml_value

HERE = Path(__file__).resolve().parent

#: The protocol under test, zipped with its parameters. Variants follow the 2008 ns-2 modules the
#: dissertation used (ns-2.29 + the NCSU/CUBIC/FAST/Libra modules; README "Protocol variants"):
#: BIC "linux" (the NCSU patch is the Linux 2.6 BIC), CUBIC "paper2008" (CUBIC v2.1, no HyStart),
#: FAST "ns2" (the ns-2 module: update every other RTT), HSTCP "rfc3649" (ns-2's built-in HSTCP
#: computes a(w), b(w) from the RFC formulas), STCP "paper" (Kelly's constants a = 0.01, legacy
#: window 16); H-TCP and LIBRA have no variants.
PROTOCOLS: list[tuple[str, dict[str, str]]] = [
    ("bic", {"variant": "linux"}),
    ("cubic", {"variant": "paper2008"}),
    ("fast", {"variant": "ns2"}),
    ("highspeed", {"variant": "rfc3649"}),
    ("htcp", {}),
    ("libra", {}),
    ("scalable", {"variant": "paper"}),
]

#: Paper capacities of D-S3 (OC-3 ... OC-192), bit/s.
CAPS_FULL = [155e6, 622e6, 1e9, 2.5e9, 5e9, 10e9]

MODES = {
    # The dissertation's settings (seed note §4.0-§4.2); 5 replications instead of its one run.
    "full": dict(
        scale=1.0, buffer=2500, duration=600, reps=5,
        bgs=[0.2, 0.5, 0.8], n_flows=[2, 4, 8, 16, 32, 64, 128, 256], delays_ms=[10, 50, 100, 200],
        caps=CAPS_FULL, n_hs=[0, 5, 10, 15, 20, 25, 30, 35, 40],
        f1b_step=25, cv_late=150, cv_spread=10, protocols=[p for p, _ in PROTOCOLS],
        # parking lot (seed note §4.3): P-S1's N = 2^2 .. 2^8, P-S2's capacities as D-S3's
        pl_n_flows=[4, 8, 16, 32, 64, 128, 256], pl_caps=CAPS_FULL, pl_n_hs=[0, 5, 10, 15, 20, 25, 30, 35, 40],
    ),
    # Capacity / 10 with the buffer the same fraction of the BDP (250 pkt = 15 % of 1667) and
    # duration / 10: a Reno-like congestion epoch lasts ~W/2 RTTs with W ∝ C, so a tenth of the
    # capacity in a tenth of the time covers about as many epochs. Start offsets scale the same way.
    "quick": dict(
        scale=0.1, buffer=250, duration=60, reps=3,
        bgs=[0.2, 0.8], n_flows=[2, 16, 64], delays_ms=[10, 100, 200],
        caps=[155e6, 1e9, 2.5e9], n_hs=[0, 10, 40],
        f1b_step=2.5, cv_late=15, cv_spread=1, protocols=[p for p, _ in PROTOCOLS],
        # N = 16 (the paper's saturation point) and 128 (T26's "near capacity by 128"); 155 Mb/s
        # (T27's widest spread) and 2.5 Gb/s (T27's "above the share at C >= 2.5 Gb/s") around 1 Gb/s.
        pl_n_flows=[4, 16, 128], pl_caps=[155e6, 1e9, 2.5e9], pl_n_hs=[0, 10, 40],
    ),
}

RTT_S = 0.2  # the paper's "RTT 200 ms" for the 20 %-of-BDP buffers of D-S3c
PKT_BITS = 1500 * 8


def _toml(v) -> str:
    return toml_value(v, quote_keys=False)


def _rate(bps: float) -> str:
    return f"{bps / 1e6:g}Mbps"


def _s(x: float) -> str:
    return f"{x:g}s"


#: A main bulk flow group as in dumbbell.toml (start offsets in [0, 1 s)).
MAIN = {"kind": "bulk", "role": "main", "start": "0s", "start_spread": "1s"}


def _flows(groups: list[dict]) -> str:
    """Replace the base's flow groups (an override cannot add a group to the list)."""
    return "flows=" + _toml(groups)


#: FAST's alpha: packets each flow keeps queued (fatpipe's default 200, the FAST papers' value).
FAST_ALPHA = 200.0


def protocols_for(m: dict) -> list[tuple[str, dict]]:
    """PROTOCOLS with the parameters a scaled-down mode must scale too. FAST's alpha is a number of
    packets in the bottleneck queue, so it scales with the capacity like the buffer does (quick:
    20 of a 250-packet buffer, as 200 of 2500); left unscaled, two FAST flows alone want more
    than the whole quick buffer and take the link from every loss-based protocol (measured: D-F2
    quick, FAST 34-43 of about 65 Mb/s). Full mode keeps the defaults (no explicit alpha)."""
    out = []
    for p, params in PROTOCOLS:
        q = dict(params)
        if p == "fast" and m["scale"] != 1.0:
            q["alpha"] = FAST_ALPHA * m["scale"]
        out.append((p, q))
    return out


def _cc_group(m: dict, flow_group: int = 0, reno: bool = False) -> dict:
    """The protocol under test on one flow group (``reno``: Reno as an extra curve, the baseline
    of Figs 4.13/4.14 that T26/T27 compare with)."""
    ps = [(p, params) for p, params in protocols_for(m) if p in m["protocols"]] + ([("reno", {})] if reno else [])
    return {f"flows.{flow_group}.tcp.cc": [p for p, _ in ps], f"flows.{flow_group}.tcp.cc_params": [q for _, q in ps]}


def sweeps(mode: str) -> dict[str, dict]:
    """experiment id -> sweep definition (description, set, vary groups) for ``mode``."""
    m = MODES[mode]
    c1g = 1e9 * m["scale"]
    base = [f"topology.bottleneck.rate={_rate(c1g)}", f'topology.bottleneck.queue.limit="{m["buffer"]}pkt"',
            f"duration={_s(m['duration'])}"]
    bg = {"background.load": m["bgs"]}
    bg20 = ["background.load=0.2"]
    caps = {"topology.bottleneck.rate": [_rate(c * m["scale"]) for c in m["caps"]]}
    out: dict[str, dict] = {}
    out["D-S1"] = dict(desc="scalability vs number of connections (Fig 4.3)", set=base,
                       vary=[_cc_group(m), bg, {"topology.pairs": m["n_flows"]}])
    out["D-S2"] = dict(desc="scalability vs bottleneck propagation delay, N = 20 (Fig 4.6, Table 4.1)", set=base,
                       vary=[_cc_group(m), bg, {"topology.bottleneck.delay": [f"{d}ms" for d in m["delays_ms"]]}])
    out["D-S3"] = dict(desc="scalability vs capacity, N = 20, fixed buffer (Fig 4.4)", set=base,
                       vary=[_cc_group(m), bg, caps])
    for exp, n in (("D-S3a", 100), ("D-S3b", 50)):
        out[exp] = dict(desc=f"capacity follow-up, bg 20 %, N = {n} (Fig 4.5{exp[-1]})",
                        set=base + bg20 + [f"topology.pairs={n}"], vary=[_cc_group(m), caps])
    out["D-S3c"] = dict(
        desc="capacity follow-up, bg 20 %, N = 20, buffer = 20 % of the BDP at RTT 200 ms (Fig 4.5c)",
        set=base + bg20,
        vary=[_cc_group(m), caps | {"topology.bottleneck.queue.limit":
                                    [f"{round(0.2 * c * m['scale'] * RTT_S / PKT_BITS)}pkt" for c in m["caps"]]}])
    # 20 Reno flows on pairs 0..19 (group 0) and n_hs flows of the protocol on pairs 20.. (group 1).
    out["D-C"] = dict(
        desc="compatibility: 20 Reno + n_hs high-speed flows (Fig 4.7)",
        set=base + [_flows([dict(MAIN, pairs=list(range(20)), tcp={"cc": "reno"}), dict(MAIN, pairs=[])])],
        vary=[_cc_group(m, 1), bg, {"topology.pairs": [20 + n for n in m["n_hs"]],
                                    "flows.1.pairs": [list(range(20, 20 + n)) for n in m["n_hs"]]}])
    # d_p = 10, 15, ..., 105 ms added to each sender's access link, on top of the 100 ms bottleneck
    # (the paper leaves open whether it replaces it; adding keeps the D-S experiments' RTTs).
    out["D-F1a"] = dict(desc="RTT fairness: per-flow extra one-way delay 10..105 ms (Fig 4.8a, Table 4.2)",
                        set=base + ["topology.extra_delay=" + _toml([f"{10 + 5 * i}ms" for i in range(20)])],
                        vary=[_cc_group(m), bg])
    # One flow group per start time, so flow i starts at i x step.
    starts = _flows([dict(MAIN, pairs=[i], start=_s(i * m["f1b_step"]), start_spread="0s") for i in range(20)])
    f1b = dict(_cc_group(m))
    for i in range(1, 20):
        f1b[f"flows.{i}.tcp.cc"] = f1b["flows.0.tcp.cc"]
        f1b[f"flows.{i}.tcp.cc_params"] = f1b["flows.0.tcp.cc_params"]
    out["D-F1b"] = dict(desc=f"start-time fairness: flow i starts at i x {m['f1b_step']:g} s (Fig 4.8b)",
                        set=base + [starts], vary=[f1b, bg])
    out["D-F1c"] = dict(desc="intra fairness, same RTT and start, N = 20 (Fig 4.8c)", set=base, vary=[_cc_group(m), bg])
    # Erratum 6: "2 per protocol, 14 in total" but Table 4.3 lists RENO. We run 2 Reno flows too
    # (16 flows) so Table 4.3's RENO row and T18's Reno comparisons have data.
    names = [p for p, _ in PROTOCOLS] + ["reno"]
    params = dict(protocols_for(m)) | {"reno": {}}
    f2 = [_flows([dict(MAIN, pairs=[2 * i, 2 * i + 1], tcp={"cc": p, "cc_params": params[p]})
                  for i, p in enumerate(names)])]
    out["D-F2"] = dict(desc="inter-protocol fairness: 2 flows of each of the 7 protocols + 2 Reno (Fig 4.9, Table 4.3)",
                       set=base + [f"topology.pairs={2 * len(names)}"] + f2, vary=[bg])
    out["D-CV"] = dict(
        desc=f"convergence: 19 flows start in [0, {m['cv_spread']:g}] s, the 20th at {m['cv_late']:g} s (Fig 4.10)",
        set=base + [_flows([dict(MAIN, pairs=list(range(19)), start_spread=_s(m["cv_spread"])),
                            dict(MAIN, pairs=[19], start=_s(m["cv_late"]), start_spread="0s")])],
        vary=[_cc_group(m) | {k.replace("flows.0", "flows.1"): v for k, v in _cc_group(m).items()}, bg])
    # Same runs as D-F1c (identical plans share store keys, so they run once); its own role keeps
    # the stability metrics and figure separate.
    out["D-ST"] = dict(desc="stability: cv of the aggregate throughput, N = 20 (Fig 4.11)", set=base,
                       vary=[_cc_group(m), bg])
    out.update(parking_sweeps(mode))
    return out


def parking_sweeps(mode: str) -> dict[str, dict]:
    """The parking-lot experiments (seed note §4.3) over parkinglot.toml.

    The parking lot gives pair i the base RTT main_rtt[i mod 2] (90 ms for even i, 180 ms for odd
    i), so a flow group on consecutive pairs starting at an even index is split 50/50 between the
    RTTs (one more at 90 ms when its size is odd).
    """
    m = MODES[mode]
    buf = f'"{m["buffer"]}pkt"'
    # Every link's buffer scales with quick's capacity (the paper: 2500 packets on every link).
    base = [f"topology.bottleneck.rate={_rate(1e9 * m['scale'])}", f"topology.bottleneck.queue.limit={buf}",
            f"topology.access.queue.limit={buf}", f"duration={_s(m['duration'])}"]
    bg = {"background.load": m["bgs"]}
    out: dict[str, dict] = {}
    out["P-S1"] = dict(desc="parking lot: scalability vs number of connections, half at 90 ms, half at 180 ms (Fig 4.13)",
                       set=base, vary=[_cc_group(m, reno=True), bg, {"topology.pairs": m["pl_n_flows"]}])
    out["P-S2"] = dict(desc="parking lot: scalability vs capacity (all bottlenecks), N = 100, fixed buffer (Fig 4.14)",
                       set=base + ["topology.pairs=100"],
                       vary=[_cc_group(m, reno=True), bg,
                             {"topology.bottleneck.rate": [_rate(c * m["scale"]) for c in m["pl_caps"]]}])
    # 20 Reno flows on pairs 0..19 (10 at 90 ms, 10 at 180 ms) and the n_hs high-speed flows on
    # pairs 20.. (even start: n_hs/2 at each RTT), the paper's "50 % of the Reno and 50 % of the
    # high-speed connections at 90 ms". The n_hs steps are D-C's, so T15 compares like with like.
    out["P-C"] = dict(
        desc="parking lot: compatibility, 20 Reno + n_hs high-speed flows, each group half 90 ms, half 180 ms (Fig 4.15)",
        set=base + [_flows([dict(MAIN, pairs=list(range(20)), tcp={"cc": "reno"}), dict(MAIN, pairs=[])])],
        vary=[_cc_group(m, 1), bg, {"topology.pairs": [20 + n for n in m["pl_n_hs"]],
                                    "flows.1.pairs": [list(range(20, 20 + n)) for n in m["pl_n_hs"]]}])
    out["P-F1"] = dict(desc="parking lot: intra fairness, N = 20 (10 at 90 ms, 10 at 180 ms) (Fig 4.16, Table 4.4)",
                       set=base, vary=[_cc_group(m), bg])
    # One group per protocol on pairs 2i (90 ms) and 2i + 1 (180 ms); no Reno (seed note: N = 14).
    f2 = [_flows([dict(MAIN, pairs=[2 * i, 2 * i + 1], tcp={"cc": p, "cc_params": q})
                  for i, (p, q) in enumerate(protocols_for(m))])]
    out["P-F2"] = dict(desc="parking lot: inter fairness, one flow of each of the 7 protocols at 90 ms and one at 180 ms "
                            "(Fig 4.17, Table 4.5)",
                       set=base + [f"topology.pairs={2 * len(PROTOCOLS)}"] + f2, vary=[bg])
    return out


METRICS = {
    "D-S1": ["main_utilisation", "main_jain"],
    "D-S2": ["main_utilisation"],
    "D-S3": ["main_utilisation"], "D-S3a": ["main_utilisation"], "D-S3b": ["main_utilisation"],
    "D-S3c": ["main_utilisation"],
    "D-C": ["reno_share_main", "main_utilisation"],
    "D-F1a": ["main_jain", "main_cv", "main_mean_goodput_bps"],
    "D-F1b": ["main_jain", "main_cv"],
    "D-F1c": ["main_jain", "main_cv"],
    "D-F2": ["main_jain", "jain_cc_aggregates", "jain_cc_aggregates_excl_libra",
             *(f"goodput_bps_{p}" for p in ["bic", "cubic", "fast", "highspeed", "htcp", "libra", "scalable", "reno"])],
    "D-CV": ["convergence_time_s", "convergence_time_sustained_s"],
    "D-ST": ["main_stability_cv", "main_stability_cv_warm", "main_utilisation"],
    "P-S1": ["main_utilisation", "main_jain"],
    "P-S2": ["main_utilisation"],
    "P-C": ["reno_share_main", "main_utilisation"],
    # Table 4.4 (mean per connection per RTT group) and Fig 4.16 (Jain)
    "P-F1": ["main_jain", "main_cv", "rtt_short_mean_goodput_bps", "rtt_long_mean_goodput_bps",
             "rtt_short_jain", "rtt_long_jain"],
    # Fig 4.17a (Jain per group, dashed: without LIBRA), 4.17b (link share per group), T22's
    # per-protocol aggregates and Table 4.5 (each protocol's one connection per group)
    "P-F2": ["main_jain", "rtt_short_jain", "rtt_long_jain", "rtt_short_jain_excl_libra", "rtt_long_jain_excl_libra",
             "rtt_short_utilisation", "rtt_long_utilisation", "rtt_short_mean_goodput_bps", "rtt_long_mean_goodput_bps",
             *(f"goodput_bps_{p}" for p, _ in PROTOCOLS),
             *(f"goodput_bps_{p}_{g}" for p, _ in PROTOCOLS for g in ("short", "long"))],
}

#: The base scenario of each topology (the experiment id's first letter).
SCENARIOS = {"D": "dumbbell.toml", "P": "parkinglot.toml"}


def render(exp: str, mode: str, d: dict) -> str:
    m = MODES[mode]
    lines = [f"# {exp} ({mode}): {d['desc']}.", "# Generated by ../make_sweeps.py; edit that, not this file.",
             f'name = "michel2009-{exp}-{mode}"', f'description = "Michel (2009) {exp}: {d["desc"]}"',
             f'scenario = "../{SCENARIOS[exp[0]]}"', "set = ["]
    lines += [f"  {_toml(s)}," for s in d["set"]]
    lines += ["]", f"replications = {m['reps']}", f"metrics = {_toml(METRICS[exp])}"]
    for g in d["vary"]:
        lines += ["", "[[vary]]"] + [f'"{k}" = {_toml(v)}' for k, v in g.items()]
    return "\n".join(lines) + "\n"


def write(check: bool = False) -> list[str]:
    """Write every file (or, with ``check``, list those that differ from what would be written)."""
    stale = []
    for mode in MODES:
        for exp, d in sweeps(mode).items():
            path = HERE / "sweeps" / f"{exp}-{mode}.toml"
            text = render(exp, mode, d)
            if check:
                if not path.is_file() or path.read_text() != text:
                    stale.append(path.name)
            else:
                path.parent.mkdir(exist_ok=True)
                path.write_text(text)
    return stale


if __name__ == "__main__":
    write()
    sys.exit(0)
