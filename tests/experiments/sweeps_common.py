"""Small, fast sweeps shared by the experiment tests (10 Mb/s dumbbell, 3 s simulated)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "scenarios" / "dumbbell-reno.toml"
FAST = ["duration=3s", "topology.bottleneck.rate=10Mbps", "topology.pairs=2"]


def sweep_toml(scenario: Path = BASE, vary: str = '"topology.bottleneck.queue.limit" = ["20pkt", "60pkt"]',
               reps: int = 2, name: str = "t", extra: str = "") -> str:
    return (
        f'name = "{name}"\n'
        f'scenario = "{scenario.as_posix()}"\n'
        f"set = {FAST!r}\n".replace("'", '"')
        + f"replications = {reps}\n"
        + 'metrics = ["utilisation", "jain", "drops"]\n'
        + extra
        + f"[[vary]]\n{vary}\n"
    )


def write_sweep(tmp: Path, **kw) -> Path:
    p = tmp / "sweep.toml"
    p.write_text(sweep_toml(**kw))
    return p
