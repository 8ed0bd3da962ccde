#!/usr/bin/env python3
"""Where the engine's instructions go: a callgrind profile split by what the code does.

Usage (the reference dumbbell, 10 simulated seconds; about 10 s under valgrind):

    make ipp                      # (needs valgrind and llvm-addr2line) or, by hand:
    cargo build --release -p fatpipe-scenario --example run_file
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
        target/release/examples/run_file scenarios/reference-dumbbell.toml duration=10s
    python3 tools/callgrind_breakdown.py cg.out target/release/examples/run_file DELIVERED

The release build inlines most of the hot path into a few functions, so callgrind's own
per-function table says little. Here every instruction's cost (``--dump-instr=yes``) is given to
the innermost *project* frame of its inline chain (``llvm-addr2line --inlining``): code inlined
from the standard library (VecDeque, Vec, slices) counts for the project function that used it.
That function's file and name select a category (``CATEGORIES``, first match wins). Costs
outside the binary (libc's memcpy, the allocator) are listed under their own names.
DELIVERED (data packets delivered, printed by run_file) turns counts into instructions per
packet.
"""
from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict

# (category, file substring, function regex); the first match wins. Order matters: the specific
# sender pieces before the sender as a whole.
CATEGORIES: list[tuple[str, str, str]] = [
    ("event queue", "fatpipe-core/src/event.rs", ""),
    ("SACK scoreboard", "tcp/scoreboard.rs", ""),
    ("SACK scoreboard", "tcp/sender.rs", r"process_sack"),
    ("TCP sender: sending segments", "tcp/sender.rs", r"send_segment|send_new|transmit|data_flags|seg_len|jitter"),
    ("TCP sender: RTT/RTO", "tcp/rtt.rs", ""),
    ("TCP sender: congestion control", "transport/src/cc/", ""),
    ("TCP sender: ACK processing", "tcp/sender.rs", ""),
    ("TCP receiver (ACK generation)", "tcp/receiver.rs", ""),
    ("link: DropTail queue", "fatpipe-net/src/link.rs", r"admit|prune|waiting_at_offer|len_at"),
    ("link: transmitter and pipe", "fatpipe-net/src/link.rs", ""),
    ("link: queue disciplines", "fatpipe-net/src/queue/", ""),
    ("routing lookup", "fatpipe-net/src/routing.rs", ""),
    ("sampling", "fatpipe-sim/src/monitor.rs", ""),
    ("sampling", "fatpipe-sim/src/simulation.rs", r"::sample$|AdvanceLog"),
    ("engine: data-side merge (ACK line, releases, timers ahead)", "fatpipe-sim/src/simulation",
     r"drain_line|release_data|timer_in_advance|data_merge_free|refresh_sender_host|MinTree"),
    ("engine: in-advance shortcuts", "fatpipe-sim/src/simulation.rs",
     r"in_advance|can_go_early|sender_free_until|drain_acks"),
    ("engine: event loop and dispatch", "fatpipe-sim/src/simulation.rs", r"run_chunk|dispatch|^.*::run$"),
    ("engine: forwarding and emit", "fatpipe-sim/src/simulation.rs", ""),
    ("results assembly", "fatpipe-sim/src/", ""),
    ("scenario loading and planning", "fatpipe-scenario/", ""),
    ("other project code", "/crates/", ""),
]

POS = re.compile(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+(\S+)\s+(\d+)")


def parse(path: str) -> tuple[dict[str, dict[int, int]], int]:
    """Self cost per (object, instruction address); callees' inclusive lines are skipped."""
    costs: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    names: dict[str, str] = {}
    ob = ""
    addr = 0
    skip_next = False
    total = 0
    with open(path) as fh:
        for line in fh:
            if line.startswith(("ob=", "cob=")):
                # "ob=(id) name" defines an id and switches to it; "cob=" only defines.
                m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if m and line.startswith("ob="):
                    ob = names[m.group(1)]
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            m = POS.match(line)
            if not m:
                continue
            a = m.group(1)
            if a.startswith("0x"):
                addr = int(a, 16)
            elif a != "*":
                addr += int(a)
            if skip_next:
                skip_next = False
                continue
            c = int(m.group(3))
            costs[ob][addr] += c
            total += c
    return costs, total


def frames(binary: str, addrs: list[int]) -> dict[int, list[tuple[str, str]]]:
    """Inline chain (function, file), innermost first, of each address."""
    out: dict[int, list[tuple[str, str]]] = {}
    inp = "".join(f"0x{a:x}\n" for a in addrs)
    res = subprocess.run(
        ["llvm-addr2line", "--inlining", "--functions", "--demangle", "--output-style=GNU",
         "--addresses", "-e", binary],
        input=inp, capture_output=True, text=True, check=True,
    )
    cur: list[tuple[str, str]] | None = None
    fn = None
    for line in res.stdout.splitlines():
        if line.startswith("0x"):
            cur = out.setdefault(int(line, 16), [])
            fn = None
        elif fn is None:
            fn = line
        else:
            assert cur is not None
            cur.append((re.sub(r"::h[0-9a-f]{16}$", "", fn), line.rsplit(":", 1)[0]))
            fn = None
    return out


def classify(chain: list[tuple[str, str]]) -> tuple[str, str]:
    for fn, file in chain:
        if "/crates/" not in file:
            continue
        short = file.split("/crates/", 1)[1]
        for cat, fsub, fre in CATEGORIES:
            if fsub in file and (not fre or re.search(fre, fn)):
                return cat, f"{short}: {fn}"
        return "other project code", f"{short}: {fn}"
    fn, file = chain[0] if chain else ("?", "?")
    return "std outside project frames", f"{file}: {fn}"


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    cg, binary, delivered = sys.argv[1], sys.argv[2], int(sys.argv[3])
    costs, total = parse(cg)
    by_cat: dict[str, int] = defaultdict(int)
    by_fn: dict[tuple[str, str], int] = defaultdict(int)
    for ob, per in costs.items():
        if ob.endswith(binary.rsplit("/", 1)[-1]):
            ch = frames(binary, sorted(per))
            for a, c in per.items():
                cat, fn = classify(ch.get(a, []))
                by_cat[cat] += c
                by_fn[(cat, fn)] += c
        else:
            name = "libc/ld.so: memcpy, allocator, start-up (" + ob.rsplit("/", 1)[-1] + ")"
            by_cat[name] += sum(per.values())
    print(f"total {total:,} instructions, {delivered:,} packets delivered: "
          f"{total / delivered:.1f} per packet\n")
    print(f"{'category':44s} {'per packet':>10s} {'share':>7s}")
    for cat, c in sorted(by_cat.items(), key=lambda kv: -kv[1]):
        print(f"{cat:44s} {c / delivered:10.1f} {100 * c / total:6.1f}%")
    print("\nlargest project functions (instructions per packet):")
    for (cat, fn), c in sorted(by_fn.items(), key=lambda kv: -kv[1])[:40]:
        print(f"{c / delivered:8.1f}  [{cat}] {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
