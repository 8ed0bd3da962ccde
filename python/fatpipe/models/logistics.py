"""The TCP-logistics model of seed 002 (Augusto, da Silva, Cardoso, Mendes, Guedes, de Rezende,
"Segmentação de Conexões TCP para a Transferência Fim-a-Fim em Alta Velocidade", GTA/COPPE/UFRJ,
about 2008, §3): an end-to-end transfer split into a chain of TCP connections through depots runs
as a pipeline, so its throughput is the slowest segment's, each segment following Mathis et al.

- Eq. 1: throughput = min(V_1, ..., V_N) over the N segments (N = depots + 1).
- Eq. 2: V_TCP = s √(3/2) / (r √p) bytes/s (Mathis, Semke, Mahdavi & Ott, CCR 27(3), 1997): MSS
  ``s`` bytes, RTT ``r`` seconds, loss probability ``p``.
- Eq. 3: Eq. 1 with Eq. 2 for every segment.
- Eq. 4: p_e2e = 1 − ∏(1 − p_i): losses "uniformly distributed in time" are split equally over
  the segments, p_i = 1 − (1 − p_e2e)^(1/N).

The paper's constants: s = 1500 B; buffer-overflow loss 0.0001 % (1e-6) per connection, unchanged
by segmentation (Figure 3's argument); Figure 5 adds 0.001 % (1e-5) end to end, split with Eq. 4.
How the two loss terms combine the paper does not say; they are combined here as independent
losses, 1 − (1 − a)(1 − b), numerically the same as a + b at these values.

Rates here are in bit/s (fatpipe's unit; the paper's Eq. 2 is in bytes/s). The model has no
capacity cap (Eq. 2 grows without bound as r → 0), no slow start and no depot buffer; the chain
prediction offers a cap at the path's slowest link as a labelled extension.

Figures 4 and 5 (throughput against the end-to-end RTT for N = 1, 2, 3 equal-RTT segments) are
:func:`figure4` and :func:`figure5`; :func:`write_figures` draws them. :func:`chain_from_plan`
predicts any relay (or direct) flow of a fatpipe plan from its segments' MSS, RTT and path loss.
docs/models.md, "TCP logistics", has the derivations and the seed's numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

#: √(3/2), the constant of Eq. 2 (Mathis et al. 1997, periodic loss).
MATHIS_C = math.sqrt(1.5)
#: The paper's MSS for Figures 4 and 5, bytes.
PAPER_MSS_BYTES = 1500
#: Buffer-overflow loss per connection in Figures 4 and 5 (0.0001 %).
PAPER_P_BUFFER = 1e-6
#: The additional end-to-end loss of Figure 5 (0.001 %).
PAPER_P_EXTRA = 1e-5
#: End-to-end RTTs of the figures' x axis, seconds. The paper does not print the axis; the
#: seed note tabulates 10-100 ms, the range of its experiments (10-90 ms).
PAPER_RTTS_S = tuple(k / 1000 for k in range(10, 101, 10))


def mathis_bps(mss_bytes: float, rtt_s: float, p: float, c: float = MATHIS_C) -> float:
    """Eq. 2 in bit/s: 8 s c / (r √p). Infinite when p = 0 (the model has no capacity cap)."""
    if mss_bytes <= 0 or rtt_s <= 0:
        raise ValueError(f"MSS and RTT must be positive (got {mss_bytes} B, {rtt_s} s)")
    if not 0 <= p < 1:
        raise ValueError(f"a loss probability lies in [0, 1) (got {p})")
    if p == 0:
        return math.inf
    return 8.0 * mss_bytes * c / (rtt_s * math.sqrt(p))


def combine_loss(*ps: float) -> float:
    """Eq. 4 forwards: the loss of independent stages, 1 − ∏(1 − p_i)."""
    keep = 1.0
    for p in ps:
        if not 0 <= p < 1:
            raise ValueError(f"a loss probability lies in [0, 1) (got {p})")
        keep *= 1.0 - p
    return 1.0 - keep


def split_loss(p_e2e: float, n: int) -> float:
    """Eq. 4 backwards: the per-segment loss p_i = 1 − (1 − p_e2e)^(1/n) of n equal segments."""
    if n < 1:
        raise ValueError(f"a chain has at least one segment (got {n})")
    if not 0 <= p_e2e < 1:
        raise ValueError(f"a loss probability lies in [0, 1) (got {p_e2e})")
    if n == 1:
        return p_e2e
    return 1.0 - (1.0 - p_e2e) ** (1.0 / n)


def pipeline_bps(rates_bps: Iterable[float]) -> float:
    """Eq. 1: a pipeline runs at its slowest segment."""
    rates = list(rates_bps)
    if not rates:
        raise ValueError("a chain has at least one segment")
    return min(rates)


def equal_segments_bps(rtt_s: float, n: int, mss_bytes: float = PAPER_MSS_BYTES,
                       p_buffer: float = PAPER_P_BUFFER, p_extra: float = 0.0) -> float:
    """Eq. 3 for n segments of RTT rtt/n each: every one has the buffer loss ``p_buffer`` and
    its Eq. 4 share of the end-to-end ``p_extra`` (n = 1 is the direct connection)."""
    p = combine_loss(p_buffer, split_loss(p_extra, n))
    return pipeline_bps(mathis_bps(mss_bytes, rtt_s / n, p) for _ in range(n))


def gain(n: int, p_buffer: float = PAPER_P_BUFFER, p_extra: float = 0.0) -> float:
    """Throughput of n equal-RTT segments over the direct connection's: n √(p_direct / p_segment),
    independent of RTT and MSS. n exactly without extra loss (Figure 4), more with it (Figure 5)."""
    direct = combine_loss(p_buffer, p_extra)
    segment = combine_loss(p_buffer, split_loss(p_extra, n))
    return n * math.sqrt(direct / segment)


def figure4(rtts_s: Sequence[float] = PAPER_RTTS_S, ns: Sequence[int] = (1, 2, 3),
            mss_bytes: float = PAPER_MSS_BYTES, p: float = PAPER_P_BUFFER) -> dict[int, list[float]]:
    """Figure 4: throughput (bit/s) against the end-to-end RTT for each n, loss p everywhere."""
    return {n: [equal_segments_bps(r, n, mss_bytes, p, 0.0) for r in rtts_s] for n in ns}


def figure5(rtts_s: Sequence[float] = PAPER_RTTS_S, ns: Sequence[int] = (1, 2, 3),
            mss_bytes: float = PAPER_MSS_BYTES, p_buffer: float = PAPER_P_BUFFER,
            p_extra: float = PAPER_P_EXTRA) -> dict[int, list[float]]:
    """Figure 5: as Figure 4 with ``p_extra`` end to end, split over the segments (Eq. 4)."""
    return {n: [equal_segments_bps(r, n, mss_bytes, p_buffer, p_extra) for r in rtts_s] for n in ns}


@dataclass(frozen=True)
class Segment:
    """One TCP connection of a chain: its MSS (bytes), RTT (s), random loss on its path and the
    buffer-overflow loss it adds (the paper's p per connection)."""

    mss_bytes: float
    rtt_s: float
    path_loss: float = 0.0
    p_buffer: float = 0.0
    src: str = ""
    dst: str = ""

    @property
    def loss(self) -> float:
        return combine_loss(self.path_loss, self.p_buffer)

    def rate_bps(self, c: float = MATHIS_C) -> float:
        return mathis_bps(self.mss_bytes, self.rtt_s, self.loss, c)


@dataclass(frozen=True)
class Prediction:
    """A chain's Eq. 3 throughput: per-segment rates, the slowest segment, and the end-to-end
    rate (bit/s). ``cap_bps``, when given, bounds every segment by its slowest link (an extension:
    the paper's model has no capacity cap)."""

    segments: tuple[Segment, ...]
    rates_bps: tuple[float, ...]
    throughput_bps: float
    bottleneck: int

    def gain_over(self, other: "Prediction") -> float:
        return self.throughput_bps / other.throughput_bps


def predict(segments: Sequence[Segment], caps_bps: Sequence[float] | None = None,
            c: float = MATHIS_C) -> Prediction:
    """Eq. 3 for any chain of segments (Eq. 1 over Eq. 2)."""
    if not segments:
        raise ValueError("a chain has at least one segment")
    rates = [s.rate_bps(c) for s in segments]
    if caps_bps is not None:
        rates = [min(r, cap) for r, cap in zip(rates, caps_bps, strict=True)]
    k = min(range(len(rates)), key=rates.__getitem__)
    return Prediction(tuple(segments), tuple(rates), rates[k], k)


def chain_from_plan(plan: Mapping[str, Any], flow_id: int = 0, p_buffer: float = 0.0,
                    cap: bool = False, c: float = MATHIS_C) -> Prediction:
    """The model's prediction for plan flow ``flow_id`` (``fatpipe.Scenario.plan()`` or a result's
    ``plan``): a relay's segments, or a direct flow as one segment. Each segment's RTT is its
    path's propagation RTT (``path_rtt_ns``: no queueing, no serialisation, so the prediction is for
    flows that do not fill their links), its loss the path's random loss (``path_loss``) combined
    with ``p_buffer``. ``cap`` bounds each segment by its path's slowest link (an extension)."""
    flows = {int(f["id"]): f for f in plan["flows"]}
    if flow_id not in flows:
        raise KeyError(f"the plan has no flow {flow_id}")
    f = flows[flow_id]
    parts = f["relay"]["segments"] if f.get("relay") else [f]
    segments = [Segment(mss_bytes=float(s["mss"]), rtt_s=s["path_rtt_ns"] * 1e-9,
                        path_loss=float(s.get("path_loss", 0.0)), p_buffer=p_buffer,
                        src=s["src"], dst=s["dst"]) for s in parts]
    caps = [float(s["path_bottleneck_bps"]) for s in parts] if cap else None
    return predict(segments, caps, c)


def figure_rows(rtts_s: Sequence[float] = PAPER_RTTS_S) -> list[dict[str, float]]:
    """Figures 4 and 5 as rows (RTT in ms, throughputs in Mbit/s), the seed note's table."""
    f4, f5 = figure4(rtts_s), figure5(rtts_s)
    return [{"rtt_ms": r * 1e3,
             **{f"fig4_n{n}_mbps": f4[n][i] / 1e6 for n in f4},
             **{f"fig5_n{n}_mbps": f5[n][i] / 1e6 for n in f5}} for i, r in enumerate(rtts_s)]


def write_figures(out_dir: str | Path, rtts_s: Sequence[float] | None = None) -> list[Path]:
    """Draw Figures 4 and 5 (PNG) and write their values (CSV) into ``out_dir``; returns the files."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rtts = list(rtts_s) if rtts_s is not None else [k / 1000 for k in range(5, 101)]
    files = []
    titles = {
        "figure4": ("Figure 4: throughput by the model (Eq. 3), p = 0.0001 % per connection", figure4(rtts)),
        "figure5": ("Figure 5: with 0.001 % more end to end, split by Eq. 4", figure5(rtts)),
    }
    for name, (title, data) in titles.items():
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        labels = {1: "direct", 2: "2 segments (1 depot)", 3: "3 segments (2 depots)"}
        for n, ys in data.items():
            ax.plot([r * 1e3 for r in rtts], [y / 1e6 for y in ys], label=labels.get(n, f"{n} segments"))
        ax.set_xlabel("end-to-end RTT (ms)")
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        path = out / f"{name}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        files.append(path)
    table = out / "figures4-5.csv"
    rows = figure_rows()
    with table.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    files.append(table)
    return files
