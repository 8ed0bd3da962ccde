"""Write the Augusto et al. (2008) sweep files (sweeps/<role>-<mode>.toml) from the settings below.

This file is the single source of the study's settings: the paper's numbers (seed note 002, §4),
every choice the paper leaves open with its reason (README "Choices the paper leaves open"), and
what quick mode scales down. fatpipe.studies.augusto2008 imports it for the analysis.

Each experiment runs twice: on the testbed (``<exp>.testbed``: real Linux TCP between network
namespaces, the links emulated by fatpipe-linkem, the downloads over HTTP with curl -L from a
fatpipe-depot origin through fatpipe-depot depots: ``[testbed] driver = "http"``) and in the
simulator (``<exp>.sim``: the same points with relay chains, ``kind = "relay"``). Roles:

- ``delay``  Section 5.1 / Fig. 8: RTT 10-90 ms, direct / 1 depot / 2 depots;
- ``cc``     Section 5.2 / Fig. 9: 2 depots, 3 ms access links, the backbone's delay varied with
  0.001 % loss on it, the depots' congestion control varied;
- ``loss``   Section 5.3 / Fig. 10: 10 ms, end-to-end loss 0.0001 %-0.1 % split by Eq. 4;
- ``size``   Section 5.4 / Fig. 11: 30 ms, files 100 MB-3 GB (scaled);
- ``buffer`` Section 5.5 / Fig. 12: direct, hosts' buffers by sysctl, 5/25/50 ms;
- ``trace``  Fig. 13: the sequence trace of the 8192 KB / 50 ms transfer (fatpipe-bulk's TCP_INFO
  samples on the testbed; the simulator's series);
- ``endcc``  the paper's remark that the depots' gain depends little on the end hosts' algorithm;
- ``func``   Figure 6: 0-3 depots on a longer line (targets F1-F4), testbed only.

Run from anywhere: ``python studies/augusto2008/make_sweeps.py``; the files are committed and
tests/test_augusto2008_study.py checks they are what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from fatpipe.toml_values import toml_value

HERE = Path(__file__).resolve().parent

# ---- the paper's numbers (seed note 002, §4) -------------------------------------------------

#: Link rate of the testbed (Gigabit Ethernet everywhere, §4.1).
PAPER_RATE_BPS = 1e9
#: Fig. 8's total RTTs (ms) and file (MB).
PAPER_RTTS_MS = (10, 20, 30, 40, 50, 60, 70, 80, 90)
PAPER_FILE_MB = 1000
#: Fig. 9: the access links' delay (ms, as a round trip: "3 ms") and the backbone's loss.
CC_ACCESS_RTT_MS = 3.0
CC_BACKBONE_LOSS = 1e-5
#: The depots' algorithms of Fig. 9 and those this kernel offers instead.
PAPER_DEPOT_CCS = ("reno", "cubic", "highspeed")
#: Fig. 10: total RTT and end-to-end loss probabilities (0.0001 % ... 0.1 %).
LOSS_RTT_MS = 10
PAPER_LOSSES = (1e-6, 1e-5, 1e-4, 1e-3)
#: Fig. 11: total RTT and files (MB).
SIZE_RTT_MS = 30
PAPER_SIZES_MB = (100, 200, 400, 1000, 2000, 3000)
#: Fig. 12: total RTTs (ms) and the hosts' buffers (KB; the paper names 512 and 8192, §5.5).
BUFFER_RTTS_MS = (5, 25, 50)
PAPER_BUFFERS_KB = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)
#: Fig. 13: the transfer traced.
TRACE_BUFFER_KB, TRACE_RTT_MS = 8192, 50
#: §5.5 states no file size. A transfer limited by a small window runs at window / RTT, so at the
#: paper's 100 MB (x 0.1) the 128 KB x 0.1 buffer at 50 ms would take 760 s per download (past
#: the 600 s cap) and the sweep 6-7 h of testbed time. Each buffer's file is therefore capped at
#: what its window-limited rate moves in this many seconds at the longest RTT (at least as many
#: RTTs as the window needs to open, so slow start stays ~1 % of the time); the larger buffers,
#: which fill the link and whose losses §5.5 is about, keep the full file.
BUFFER_TRANSFER_S = 30
#: Replications per configuration (§4.3) and the confidence level.
PAPER_REPS = 10

# ---- choices the paper leaves open (README: each with its reason) -----------------------------

#: Emulation scale: 100 Mb/s instead of 1 Gb/s (fatpipe-linkem holds one saturated 1 Gb/s link
#: on 2 cores, and a 2-depot path crosses 3 emulated links: 3 Gb/s of frames, above its ceiling;
#: docs/link-emulator.md). Files, queues and host buffers scale with it, so each transfer lasts
#: as many RTTs and each window is the same fraction of the BDP.
SCALE = 0.1
RATE = "100Mbps"
#: netem's default queue limit (1000 packets, the paper sets none) scaled: a DropTail per link
#: direction (netem's limit also counted packets in its delay line; a known difference).
QUEUE_PKTS = round(1000 * SCALE)
#: Fedora 8's Linux 2.6.23 defaults for a 4 GB host: tcp_rmem 4096 87380 4194304, tcp_wmem 4096
#: 16384 4194304 (the paper tunes nothing except in §5.5), the maxima scaled.
HOST_RMEM = (4096, 87380, round(4194304 * SCALE))
HOST_WMEM = (4096, 16384, round(4194304 * SCALE))
#: The end hosts' algorithm where the paper states none (§5.1, 5.3-5.5): Fedora 8's default.
END_HOST_CC = "cubic"
#: The 1-depot configuration's depot: d1 (client side). With half the RTT on each access link
#: (§5.1), d1 or d2 give the same two segments of RTT/2.
ONE_DEPOT = "d1"
#: The simulator's receive window for a host buffer maximum of M bytes: 0.6 M, what this kernel
#: (Linux 6.18, veth frames of 1500 bytes) advertises, measured: the full run's direct downloads
#: on the testbed are window-limited from 40 ms and move rate x RTT = 247-252 kB per RTT at 40-90
#: ms with M = 419 430 B (0.59-0.60 M; README). Linux 6.x sizes the window from M by the
#: payload/truesize ratio it observes; the first estimate here, 0.5 M (tcp_adv_win_scale = 1),
#: made every window-limited simulator transfer ~17 % slower than the testbed's. The paper's
#: 2.6.23 advertised 3/4 (tcp_adv_win_scale = 2).
SIM_RWND_FACTOR = 0.6
#: ``tcp.rwnd`` in the testbed's sweep files. The testbed ignores it (its kernel sizes the window
#: from ``testbed.rmem``), but it is part of every run's plan and so of its store key: it stays at
#: the first estimate, 0.5 M, with which the full run's testbed downloads are stored (0.6 M there
#: would re-key all of them: about 7 h of testbed time for no change on the testbed).
TESTBED_PLAN_RWND_FACTOR = 0.5
#: The simulator's segment size (Linux's 1448-byte payload with timestamps on a 1500-byte MTU).
SIM_MSS, SIM_HEADER = 1448, 52
#: How the buffers of §5.5 are set: tcp_rmem / tcp_wmem = 4096 X X on client and server (default
#: and maximum both X: "read and write buffers set by sysctl").
#: Loss: on every link, data direction only, p_link = 1 - (1 - p)^(1/3) (Eq. 4 over the three
#: physical links), so the end-to-end loss is p in every configuration.
#: RTT placement (§5.1): direct and 1 depot half on each access link; 2 depots a third per link.
#: The simulator's algorithms for the depots of Fig. 9: the paper's three (it has highspeed).
SIM_DEPOT_CCS = ("reno", "cubic", "highspeed")
#: The testbed's: what /proc/sys/net/ipv4/tcp_available_congestion_control lists here
#: (highspeed is absent: no module tree, modprobe fails; recorded per run).
TESTBED_DEPOT_CCS = ("reno", "cubic", "bbr")

MODES = {
    "full": dict(
        reps=PAPER_REPS, rtts=PAPER_RTTS_MS, file_mb=PAPER_FILE_MB * SCALE, cc_rtts=PAPER_RTTS_MS,
        losses=PAPER_LOSSES, sizes_mb=tuple(s * SCALE for s in PAPER_SIZES_MB), buffers_kb=PAPER_BUFFERS_KB,
        buffer_file_mb=PAPER_FILE_MB * SCALE, endcc_rtts=(30, 90), func_mb=20, sim_reps=PAPER_REPS,
        one_rep=PAPER_REPS,
    ),
    "quick": dict(
        reps=2, rtts=(10, 50, 90), file_mb=10, cc_rtts=(10, 50, 90), losses=(1e-6, 1e-4, 1e-3),
        sizes_mb=tuple(s * SCALE for s in PAPER_SIZES_MB[:3]), buffers_kb=(512, 2048, 8192),
        buffer_file_mb=10, endcc_rtts=(90,), func_mb=20, sim_reps=2, one_rep=1,
    ),
}


# ---- the settings as functions -----------------------------------------------------------------

def split_loss(p: float, n: int = 3) -> float:
    """Eq. 4: the per-link loss giving ``p`` end to end over ``n`` links."""
    return 1.0 - (1.0 - p) ** (1.0 / n)


def placement(depots: int, rtt_ms: float) -> tuple[float, float, float]:
    """One-way delays (ms) of server-d2, d2-d1, d1-client for a total RTT (§5.1)."""
    if depots == 2:
        return (rtt_ms / 6,) * 3
    return rtt_ms / 4, 0.0, rtt_ms / 4


def cc_placement(rtt_ms: float) -> tuple[float, float, float]:
    """§5.2: 3 ms round trip on each access link, the rest on the backbone."""
    a = CC_ACCESS_RTT_MS / 2
    return a, (rtt_ms - 2 * CC_ACCESS_RTT_MS) / 2, a


def scaled_buffer_bytes(kb: float, scale: float = SCALE) -> int:
    return round(kb * 1024 * scale)


def sim_rwnd(buffer_max: int, factor: float = SIM_RWND_FACTOR) -> str:
    return f"{round(factor * buffer_max)}B"


#: The window §5.5's file sizes assume: half the buffer, a round figure below the 0.6 measured
#: (SIM_RWND_FACTOR), so a transfer takes at most BUFFER_TRANSFER_S. The sizes are in every
#: run's plan (testbed and simulator alike, so both measure the same transfers) and so in its key.
BUFFER_FILE_WINDOW_FACTOR = 0.5


def buffer_file_mb(buffer_max: int, file_mb: float) -> float:
    """§5.5's file for a host buffer maximum of ``buffer_max`` bytes: ``file_mb``, or less when
    the window it allows (``BUFFER_FILE_WINDOW_FACTOR`` of it) at the longest RTT would take more
    than ``BUFFER_TRANSFER_S`` (see there); rounded to 0.1 MB."""
    window_limited_mb = (BUFFER_FILE_WINDOW_FACTOR * buffer_max / (max(BUFFER_RTTS_MS) / 1e3)
                         * BUFFER_TRANSFER_S / 1e6)
    return min(file_mb, round(window_limited_mb, 1))


def flows(depots: int, size_mb: float, ccs: tuple[str, ...] | None = None) -> list[dict]:
    """The download: a file flow (direct) or a relay through ``depots`` depots (data order)."""
    size = f"{size_mb:g}MB"
    if depots == 0:
        f = {"kind": "file", "src": "server", "dst": "client", "size": size}
        if ccs:
            f["tcp"] = {"cc": ccs[0]}
        return [f]
    chain = {1: [ONE_DEPOT], 2: ["d2", "d1"], 3: ["d3", "d2", "d1"]}[depots]
    f = {"kind": "relay", "src": "server", "dst": "client", "depots": chain, "size": size}
    if ccs:
        f["segments"] = [{"cc": c} for c in ccs]
    return [f]


def _toml(v) -> str:
    """A TOML literal, inline tables with bare keys (fatpipe.toml_values)."""
    return toml_value(v, quote_keys=False)


def _ms(x: float) -> str:
    return f"{round(x, 6):g}ms"


def _bytes(x: int) -> str:
    return f"{x}B"


def _sweep(name: str, desc: str, scenario: str, sets: list[str], vary: list[dict], reps: int,
           backend: str, comment: str = "") -> str:
    lines = [f"# {desc}", "# Generated by ../make_sweeps.py; edit that, not this file."]
    lines += [f"# {c}" for c in comment.splitlines() if comment]
    lines += [f'name = "{name}"', f"description = {_toml(desc)}", f'scenario = "../{scenario}"']
    if backend != "simulator":
        lines.append(f'backend = "{backend}"')
    lines.append("set = [")
    lines += [f"  {_toml(s)}," for s in sets]
    lines += ["]", f"replications = {reps}", 'metrics = ["aggregate_goodput_bps"]', ""]
    for g in vary:
        lines.append("[[vary]]")
        lines += [f"{_toml(k)} = {_toml(v)}" for k, v in g.items()]
        lines.append("")
    return "\n".join(lines)


def _host_sets(scale: float = SCALE, rwnd_factor: float = SIM_RWND_FACTOR) -> list[str]:
    """Every link's rate and queue, the hosts' buffers and TCP, at ``scale`` of the paper's rate;
    the simulator's receive window ``rwnd_factor`` x the buffer maximum."""
    rmem = (*HOST_RMEM[:2], round(HOST_RMEM[2] * scale / SCALE))
    wmem = (*HOST_WMEM[:2], round(HOST_WMEM[2] * scale / SCALE))
    links = [f for i in range(3) for f in (f'topology.links.{i}.rate="{PAPER_RATE_BPS * scale / 1e6:g}Mbps"',
                                           f'topology.links.{i}.queue.limit="{round(1000 * scale)}pkt"')]
    return [*links, f"testbed.rmem={_toml([_bytes(x) for x in rmem])}", f"testbed.wmem={_toml([_bytes(x) for x in wmem])}",
            f'tcp.cc="{END_HOST_CC}"', f'tcp.mss="{SIM_MSS}B"', f'tcp.header="{SIM_HEADER}B"',
            f'tcp.rwnd="{sim_rwnd(rmem[2], rwnd_factor)}"']


def _links(points: list[tuple[float, float, float]], losses: list[tuple[float, float, float]] | None = None) -> dict:
    g = {f"topology.links.{i}.delay": [_ms(p[i]) for p in points] for i in range(3)}
    if losses is not None:
        g.update({f"topology.links.{i}.loss": [l[i] for l in losses] for i in range(3)})
    return g


def _points(configs, xs, fn):
    """Zipped (config, x) points: every configuration at every x."""
    return [(c, x) for x in xs for c in configs] if fn is None else [fn(c, x) for x in xs for c in configs]


def experiments(mode: str, m: dict | None = None, scale: float = SCALE, rwnd_factor: float = SIM_RWND_FACTOR
                ) -> dict[str, tuple[str, str, list[str], list[dict], int, str]]:
    """role -> (description, scenario, sets, vary groups, replications, comment) without backend;
    ``m`` a mode's settings (default: MODES[mode], whose files are at SCALE); ``scale`` the rate
    as a fraction of the paper's 1 Gb/s (files and host buffers follow it)."""
    m = MODES[mode] if m is None else m
    k = scale / SCALE
    m = {**m, "file_mb": m["file_mb"] * k, "sizes_mb": tuple(x * k for x in m["sizes_mb"]),
         "buffer_file_mb": m["buffer_file_mb"] * k}
    reps, file_mb = m["reps"], m["file_mb"]
    base = [*_host_sets(scale, rwnd_factor), f"duration={m.get('duration_s', 600 if mode == 'full' else 120)}s"]
    out = {}
    pts = [(c, r) for r in m["rtts"] for c in (0, 1, 2)]
    out["delay"] = (
        f"Augusto et al. (2008) Fig. 8: RTT {m['rtts'][0]}-{m['rtts'][-1]} ms, direct / 1 depot / 2 depots, "
        f"{file_mb:g} MB", "chain.toml", base,
        [{"flows": [flows(c, file_mb) for c, _ in pts], **_links([placement(c, r) for c, r in pts])}], reps,
        f"{PAPER_FILE_MB} MB at 1 Gb/s in the paper; here {file_mb:g} MB at {PAPER_RATE_BPS * scale / 1e6:g} Mb/s.")
    out["cc"] = (
        "Augusto et al. (2008) Fig. 9: 2 depots running each algorithm, 3 ms access links, 0.001 % loss on the "
        "backbone", "chain.toml", [*base, f"topology.links.1.loss={CC_BACKBONE_LOSS!r}"],
        [{"flows": None}, _links([cc_placement(r) for r in m["cc_rtts"]])], reps, "")
    pts = [(c, p) for p in m["losses"] for c in (0, 1, 2)]
    out["loss"] = (
        f"Augusto et al. (2008) Fig. 10: {LOSS_RTT_MS} ms, end-to-end loss split over the links by Eq. 4, "
        "direct / 1 depot / 2 depots", "chain.toml", base,
        [{"flows": [flows(c, file_mb) for c, _ in pts],
          **_links([placement(c, LOSS_RTT_MS) for c, _ in pts], [(split_loss(p),) * 3 for _, p in pts])}], reps, "")
    pts = [(c, s) for s in m["sizes_mb"] for c in (0, 1, 2)]
    out["size"] = (
        f"Augusto et al. (2008) Fig. 11: {SIZE_RTT_MS} ms, files {PAPER_SIZES_MB[0]} MB-{PAPER_SIZES_MB[-1]} MB "
        f"x {scale:g}, direct / 1 depot / 2 depots", "chain.toml", base,
        [{"flows": [flows(c, s) for c, s in pts], **_links([placement(c, SIZE_RTT_MS) for c, _ in pts])}], reps, "")
    bufs = [scaled_buffer_bytes(kb, scale) for kb in m["buffers_kb"]]
    buf_files = [buffer_file_mb(b, m["buffer_file_mb"]) for b in bufs]
    out["buffer"] = (
        "Augusto et al. (2008) Fig. 12: direct, the hosts' read and write buffers by sysctl, "
        f"{'/'.join(map(str, BUFFER_RTTS_MS))} ms", "chain.toml",
        [s for s in base if not s.startswith(("testbed.rmem", "testbed.wmem", "tcp.rwnd"))],
        [{"flows": [flows(0, f) for f in buf_files],
          "testbed.rmem": [[_bytes(4096), _bytes(b), _bytes(b)] for b in bufs],
          "testbed.wmem": [[_bytes(4096), _bytes(b), _bytes(b)] for b in bufs],
          "tcp.rwnd": [sim_rwnd(b, rwnd_factor) for b in bufs]},
         _links([placement(0, r) for r in BUFFER_RTTS_MS])], m["one_rep"],
        f"Paper's buffers (KB) {', '.join(map(str, m['buffers_kb']))} x {scale:g}: tcp_rmem = tcp_wmem = 4096 X X.\n"
        f"Files (MB): {', '.join(f'{f:g}' for f in buf_files)}: "
        f"{m['buffer_file_mb']:g} MB, or what the window moves in {BUFFER_TRANSFER_S} s at {max(BUFFER_RTTS_MS)} ms.")
    tb = scaled_buffer_bytes(TRACE_BUFFER_KB, scale)
    out["trace"] = (
        f"Augusto et al. (2008) Fig. 13: the sequence trace of a direct transfer, {TRACE_BUFFER_KB} KB x {scale:g} "
        f"buffers, {TRACE_RTT_MS} ms", "chain.toml",
        [*[s for s in base if not s.startswith(("testbed.rmem", "testbed.wmem", "tcp.rwnd"))],
         "flows=" + _toml(flows(0, m["buffer_file_mb"])), f"testbed.rmem={_toml([_bytes(4096), _bytes(tb), _bytes(tb)])}",
         f"testbed.wmem={_toml([_bytes(4096), _bytes(tb), _bytes(tb)])}", f'tcp.rwnd="{sim_rwnd(tb, rwnd_factor)}"',
         'testbed.driver="fatpipe-bulk"', 'monitor.interval="10ms"',
         *[f"topology.links.{i}.delay={_toml(_ms(d))}" for i, d in enumerate(placement(0, TRACE_RTT_MS))]],
        [], 1, "fatpipe-bulk samples TCP_INFO every 10 ms: acknowledged bytes over time (the sequence trace).")
    pts = [(c, cc, r) for r in m["endcc_rtts"] for cc in ("reno", "cubic") for c in (0, 2)]
    out["endcc"] = (
        "Augusto et al. (2008) §5.2's remark: the depots' gain with Reno or CUBIC at the end hosts (every segment "
        "the same algorithm)", "chain.toml", base,
        [{"flows": [flows(c, file_mb, (cc,) * (c + 1)) for c, cc, _ in pts],
          **_links([placement(c, r) for c, _, r in pts])}], m["one_rep"], "")
    out["func"] = (
        "Augusto et al. (2008) Figure 6: 0, 1, 2 and 3 depots on the line of Figure 6 (functional targets F1-F4)",
        "chain3.toml", [*base, "topology.links.0.delay=\"2ms\"", "topology.links.3.delay=\"2ms\""],
        [{"flows": [_func_flows(c, m["func_mb"]) for c in (0, 1, 2, 3)]}], 1, "")
    return out


def _func_flows(depots: int, size_mb: float) -> list[dict]:
    """Figure 6's line: 0-3 depots (2 depots: d3 and d1, so each segment crosses one or two links)."""
    f = flows(0, size_mb)[0]
    if depots:
        f = {**f, "kind": "relay", "depots": {1: ["d2"], 2: ["d3", "d1"], 3: ["d3", "d2", "d1"]}[depots]}
    return [f]


def _cc_group(ccs, file_mb) -> dict:
    """Fig. 9: the end hosts' algorithm on the server's segment, ``cc`` on both depots'."""
    return {"flows": [flows(2, file_mb, (END_HOST_CC, cc, cc)) for cc in ccs]}


def sweeps(mode: str, m: dict | None = None) -> dict[str, str]:
    """role -> sweep file text: each experiment on the testbed and in the simulator at SCALE
    (``<exp>.testbed``, ``<exp>.sim``), and in the simulator at the paper's own 1 Gb/s with its
    files and buffers (``<exp>.sim1g``); func on the testbed only."""
    m = MODES[mode] if m is None else m
    out = {}
    for tag, backend, scale in (("testbed", "testbed", SCALE), ("sim", "simulator", SCALE), ("sim1g", "simulator", 1.0)):
        rwnd_factor = TESTBED_PLAN_RWND_FACTOR if backend == "testbed" else SIM_RWND_FACTOR
        for exp, (desc, scen, sets, vary, reps, comment) in experiments(mode, m, scale, rwnd_factor).items():
            if exp == "func" and backend == "simulator":
                continue  # HTTP, redirects and checksums: the real daemon's targets
            v = [dict(g) for g in vary]
            if exp == "cc":
                ccs = TESTBED_DEPOT_CCS if backend == "testbed" else SIM_DEPOT_CCS
                v[0] = _cc_group(ccs, m["file_mb"] * scale / SCALE)
            s = list(sets)
            if backend == "simulator":
                s = [x for x in s if not x.startswith("testbed.")]
            r = reps if backend == "testbed" else (m["sim_reps"] if reps > 1 else reps)
            where = {"testbed": "testbed", "sim": "simulator", "sim1g": "simulator at 1 Gb/s"}[tag]
            out[f"{exp}.{tag}"] = _sweep(f"augusto2008-{exp}-{tag}-{mode}", f"{desc} ({where})", scen, s, v, r,
                                         backend, comment)
    return out


def file_name(role: str, mode: str) -> str:
    return f"sweeps/{role}-{mode}.toml"


def all_files() -> dict[Path, str]:
    return {HERE / file_name(role, mode): text + "\n" for mode in MODES for role, text in sweeps(mode).items()}


def main() -> int:
    (HERE / "sweeps").mkdir(exist_ok=True)
    for path, text in all_files().items():
        path.write_text(text)
    print(f"wrote {len(all_files())} sweep files under {HERE / 'sweeps'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
