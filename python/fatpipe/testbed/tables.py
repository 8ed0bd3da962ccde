"""The testbed's result tables, with the simulator's columns (docs/plan-and-results.md), so a
testbed run and a simulated run of one scenario are read, stored and compared alike.

Quantities the kernel does not report per connection are null (timeouts, fast recoveries: counts
have no NaN) or NaN, and per-flow drops are 0 (drops are the emulator's, per link, in ``queues``).
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa

__all__ = ["SCHEMAS", "flows_table", "flow_series_table", "empty"]

_I, _F, _S, _B = pa.int64(), pa.float64(), pa.string(), pa.bool_()

SCHEMAS: dict[str, pa.Schema] = {
    "flows": pa.schema([
        ("flow_id", _I), ("src", _S), ("dst", _S), ("cc", _S), ("kind", _S), ("role", _S), ("start_s", _F),
        ("end_s", _F), ("bytes_sent", _I), ("bytes_delivered", _I), ("goodput_bps", _F), ("throughput_bps", _F),
        ("data_packets_sent", _I), ("retransmits", _I), ("timeouts", _I), ("fast_recoveries", _I),
        ("rtt_min_s", _F), ("rtt_mean_s", _F), ("rtt_max_s", _F), ("completion_s", _F), ("rwnd_limited", _B),
        ("objects", _I), ("transfer_time_mean_s", _F), ("bytes_offered", _I), ("conn_goodput_mean_bps", _F),
        ("conn_throughput_mean_bps", _F), ("conn_cwnd_mean_pkts", _F), ("conn_rtt_mean_s", _F),
        ("conn_timeouts_mean", _F), ("delay_mean_s", _F), ("jitter_s", _F), ("app_packets", _I),
        ("app_discards", _I), ("packets_delivered", _I), ("packets_dropped", _I), ("loss_event_rate", _F),
    ]),
    "flow_series": pa.schema([("t_s", _F), ("flow_id", _I), ("cwnd_pkts", _I), ("ssthresh_pkts", _I),
                              ("srtt_s", _F), ("bytes_delivered", _I), ("goodput_bps", _F)]),
    "queues": pa.schema([("link", _S), ("kind", _S), ("enqueued", _I), ("dequeued", _I), ("drops_tail", _I),
                         ("drops_aqm_early", _I), ("drops_aqm_forced", _I), ("drops_random", _I), ("marks_aqm_early", _I),
                         ("marks_aqm_forced", _I), ("dropped_bytes", _I), ("max_len_pkts", _I),
                         ("mean_len_pkts", _F)]),
    "queue_series": pa.schema([("t_s", _F), ("link", _S), ("len_pkts", _I), ("len_bytes", _I), ("avg_pkts", _F),
                               ("prob", _F)]),
    "links": pa.schema([("link", _S), ("from", _S), ("to", _S), ("rate_bps", _I), ("delay_s", _F),
                        ("tx_bytes", _I), ("tx_packets", _I), ("utilisation", _F)]),
}

#: An integer column the kernel does not give per connection: null in the table.
NOT_MEASURED = None


def empty(name: str) -> pa.Table:
    return SCHEMAS[name].empty_table()


def _table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    schema = SCHEMAS[name]
    cols = {f.name: [r.get(f.name) for r in rows] for f in schema}
    return pa.table(cols, schema=schema)


def flow_row(flow: dict[str, Any], send: dict[str, Any], recv: dict[str, Any] | None, t0: float,
             run_end_s: float) -> dict[str, Any]:
    """One flows-table row from the plan flow and the sender's and receiver's reports."""
    start = send["t_start"] - t0
    finite = flow.get("size_bytes") is not None
    # A timed flow counts what arrived by its end (bytes_until), as the simulator does; a finite
    # transfer counts everything.
    delivered = int(recv["bytes"] if finite else recv.get("bytes_until", recv["bytes"])) if recv else 0
    last = (recv["t_last"] - t0) if recv and recv["bytes"] else math.nan
    stop = (flow["stop_ns"] * 1e-9) if flow.get("stop_ns") else run_end_s
    end = last if finite and not math.isnan(last) else min(stop, run_end_s)
    span = max(end - start, 1e-9)
    rtts = [s["rtt_s"] for s in send["samples"] if s["rtt_s"] > 0]
    mss = max(int(send.get("snd_mss") or flow["mss"]), 1)
    return {
        "flow_id": int(flow["id"]), "src": flow["src"], "dst": flow["dst"], "cc": flow["cc"], "kind": flow["kind"],
        "role": flow["role"], "start_s": start, "end_s": end, "bytes_sent": int(send["bytes_sent"]),
        "bytes_delivered": delivered, "goodput_bps": delivered * 8 / span,
        "throughput_bps": int(send["bytes_sent"]) * 8 / span,
        "data_packets_sent": None if send.get("data_segs_out") is None else int(send["data_segs_out"]),
        "retransmits": int(send["total_retrans"]), "timeouts": NOT_MEASURED, "fast_recoveries": NOT_MEASURED,
        "rtt_min_s": min(rtts) if rtts else math.nan, "rtt_mean_s": sum(rtts) / len(rtts) if rtts else math.nan,
        "rtt_max_s": max(rtts) if rtts else math.nan,
        "completion_s": last if finite and delivered >= int(flow["size_bytes"]) else math.nan,
        "rwnd_limited": False, "objects": 1 if finite and delivered >= int(flow.get("size_bytes") or 0) else 0,
        "transfer_time_mean_s": (last - start) if finite and not math.isnan(last) else math.nan,
        "bytes_offered": 0, "conn_goodput_mean_bps": math.nan, "conn_throughput_mean_bps": math.nan,
        "conn_cwnd_mean_pkts": math.nan, "conn_rtt_mean_s": math.nan, "conn_timeouts_mean": math.nan,
        "delay_mean_s": math.nan, "jitter_s": math.nan, "app_packets": 0, "app_discards": 0,
        "packets_delivered": delivered // mss, "packets_dropped": 0, "loss_event_rate": math.nan,
    }


def flows_table(rows: list[dict[str, Any]]) -> pa.Table:
    return _table("flows", rows)


def flow_series_table(flow_id: int, samples: list[dict[str, Any]], t0: float) -> list[dict[str, Any]]:
    """Sampled cwnd, ssthresh, smoothed RTT and acknowledged bytes, on the run's time axis."""
    rows, prev = [], None
    for s in samples:
        t = s["t"] - t0
        acked = max(int(s["bytes_acked"]) - 1, 0)
        rate = math.nan if prev is None or t <= prev[0] else (acked - prev[1]) * 8 / (t - prev[0])
        rows.append({"t_s": t, "flow_id": flow_id, "cwnd_pkts": int(s["cwnd"]),
                     "ssthresh_pkts": None if s["ssthresh"] is None else int(min(s["ssthresh"], 2**31 - 1)), "srtt_s": s["rtt_s"],
                     "bytes_delivered": acked, "goodput_bps": rate})
        prev = (t, acked)
    return rows


def series_table(rows: list[dict[str, Any]]) -> pa.Table:
    return _table("flow_series", rows)
