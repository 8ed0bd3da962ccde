"""One scenario on two back-ends: the simulator and the testbed (real Linux TCP), compared.

``compare(scenario, algorithms, reps)`` runs every algorithm on both back-ends ``reps`` times
(seeds 1..reps; the testbed's randomness is the kernel's, the seed only places the flows' start
offsets as in the simulator) and judges agreement per metric:

- aggregate goodput and per-flow goodput (share of the aggregate, so a systematic rate
  offset of the emulator does not count twice),
- retransmissions per flow (data segments retransmitted),
- mean RTT,

each as the mean over replications with its 95 % confidence interval. A metric **agrees** when the
two means differ by at most its tolerance (relative, :data:`TOLERANCES`) or by less than the two
CIs together (the data cannot tell them apart); otherwise it **differs**. An algorithm agrees when
every metric does. The tolerances are stated with their reasons in docs/validation.md ("The
simulator against Linux"); they are not tuned per scenario.

Framing (``wire``): with ``"linux"`` (default) the simulator is given the bytes the kernel puts on
the emulated wire, so both back-ends carry the same payload per wire byte: Linux with TCP
timestamps (on by default, ``net.ipv4.tcp_timestamps = 1``) fills a ``mss``-byte segment limit
(``TCP_MAXSEG``) with ``mss - 12`` bytes of payload (RFC 7323's 10-byte option, padded to 12) in
a frame of 14 (Ethernet) + 20 (IPv4) + 20 (TCP) + 12 (timestamps) bytes of headers, which the
emulator serialises (docs/link-emulator.md: the frame, not the preamble or FCS). ``"scenario"``
runs the simulator with the scenario's own ``mss`` and ``header``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

__all__ = ["TOLERANCES", "LINUX_TS_OPTION", "LINUX_FRAME_HEADERS", "MetricVerdict", "Comparison", "judge",
           "run_metrics", "linux_framing", "compare"]

#: Payload bytes the TCP timestamp option takes from each segment (RFC 7323 §3: 10 bytes, padded
#: to 12 by Linux's two leading NOPs).
LINUX_TS_OPTION = 12
#: Header bytes of a Linux data segment with timestamps on the emulated wire: Ethernet 14, IPv4 20,
#: TCP 20, options 12 (a pure ACK is exactly these 66 bytes, as the simulator's ACK is `header`).
LINUX_FRAME_HEADERS = 14 + 20 + 20 + LINUX_TS_OPTION

#: Relative tolerance per metric (docs/validation.md gives the reasons).
TOLERANCES: dict[str, float] = {
    "aggregate_goodput_bps": 0.05,
    "flow_share": 0.10,
    "retransmits_per_flow": 0.50,
    "rtt_mean_s": 0.10,
}


def run_metrics(flows: Any) -> dict[str, Any]:
    """The compared quantities of one run's flows table (pandas)."""
    agg = float(flows["goodput_bps"].sum())
    shares = (flows.sort_values("flow_id")["goodput_bps"] / agg).tolist() if agg > 0 else []
    return {
        "aggregate_goodput_bps": agg,
        "flow_share": shares,
        "retransmits_per_flow": float(flows["retransmits"].mean()),
        "rtt_mean_s": float(flows["rtt_mean_s"].mean()),
    }


def _mean_ci(xs: Sequence[float]) -> tuple[float, float]:
    from scipy import stats

    xs = [x for x in xs if not math.isnan(x)]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan
    m = sum(xs) / n
    if n < 2:
        return m, math.nan
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n))


@dataclass
class MetricVerdict:
    metric: str
    sim: float
    sim_hw: float
    testbed: float
    testbed_hw: float
    tolerance: float
    agrees: bool

    @property
    def rel_diff(self) -> float:
        return (self.sim - self.testbed) / self.testbed if self.testbed else math.nan

    def text(self) -> str:
        word = "agrees" if self.agrees else "DIFFERS"
        return (f"{self.metric}: simulator {self.sim:.4g} ± {self.sim_hw:.2g}, testbed {self.testbed:.4g} ± "
                f"{self.testbed_hw:.2g} ({100 * self.rel_diff:+.1f} %, tolerance {100 * self.tolerance:.0f} %): {word}")


def _verdict(metric: str, sim: Sequence[float], tb: Sequence[float], tol: float) -> MetricVerdict:
    (ms, hs), (mt, ht) = _mean_ci(sim), _mean_ci(tb)
    noise = (0.0 if math.isnan(hs) else hs) + (0.0 if math.isnan(ht) else ht)
    diff = abs(ms - mt)
    ok = (not math.isnan(diff)) and (diff <= tol * abs(mt) or diff <= noise)
    return MetricVerdict(metric, ms, hs, mt, ht, tol, ok)


def judge(sim_runs: Sequence[dict[str, Any]], tb_runs: Sequence[dict[str, Any]]) -> list[MetricVerdict]:
    """Verdicts of every metric over the replications (``run_metrics`` dicts of each back-end)."""
    out = []
    for metric, tol in TOLERANCES.items():
        if metric == "flow_share":
            k = min(len(r[metric]) for r in [*sim_runs, *tb_runs])
            for i in range(k):
                out.append(_verdict(f"flow {i} share", [r[metric][i] for r in sim_runs],
                                    [r[metric][i] for r in tb_runs], tol))
        else:
            out.append(_verdict(metric, [r[metric] for r in sim_runs], [r[metric] for r in tb_runs], tol))
    return out


@dataclass
class Comparison:
    algorithm: str
    verdicts: list[MetricVerdict]
    sim_series: list[Any] = field(default_factory=list)
    tb_series: list[Any] = field(default_factory=list)

    @property
    def agrees(self) -> bool:
        return all(v.agrees for v in self.verdicts)


def linux_framing(scenario: Any) -> Any:
    """``scenario`` with the segments Linux sends for it (module docstring, "Framing"): payload
    ``mss - 12`` and 66 header bytes per packet. Every flow must share one ``mss``; a scenario
    whose flow groups set their own is refused (use ``wire="scenario"``)."""
    from fatpipe.exceptions import scenario_error

    mss = {f["mss"] for f in scenario.plan()["flows"]}
    if len(mss) != 1:
        raise scenario_error("tcp.mss", f"compare's wire='linux' needs one mss for every flow, found "
                             f"{sorted(mss)}; set one, or pass wire='scenario' (--wire scenario)")
    (m,) = mss
    return scenario.with_overrides(f'tcp.mss="{m - LINUX_TS_OPTION}B"', f'tcp.header="{LINUX_FRAME_HEADERS}B"')


def compare(scenario: Any, algorithms: Sequence[str], reps: int = 5, *, emulate: bool = True,
            wire: str = "linux", progress: Callable[[str], None] | None = None) -> list[Comparison]:
    """Run ``scenario`` with every flow on each algorithm, ``reps`` seeds on each back-end; the
    simulator with Linux's framing unless ``wire="scenario"`` (module docstring)."""
    import fatpipe
    from fatpipe.exceptions import scenario_error
    from fatpipe.testbed.run import run_testbed

    if wire not in ("linux", "scenario"):
        raise scenario_error("wire", f"{wire!r} is not 'linux' or 'scenario'")
    out = []
    for algo in algorithms:
        sc = scenario.with_overrides(f'tcp.cc="{algo}"')
        simulated = linux_framing(sc) if wire == "linux" else sc
        sims, tbs, s_series, t_series = [], [], [], []
        for seed in range(1, reps + 1):
            if progress:
                progress(f"{algo}: replication {seed}/{reps}")
            rs = fatpipe.run(simulated, seed=seed)
            rt = run_testbed(sc, seed=seed, emulate=emulate)
            sims.append(run_metrics(rs.to_pandas("flows")))
            tbs.append(run_metrics(rt.to_pandas("flows")))
            s_series.append(rs.to_pandas("flow_series"))
            t_series.append(rt.to_pandas("flow_series"))
        out.append(Comparison(algo, judge(sims, tbs), s_series, t_series))
    return out
