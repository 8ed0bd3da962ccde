"""The network the fluid models describe: N long-lived flows through one bottleneck queue.

Units follow the seed (de Santi, Fonseca, Lima, §3): windows and queues in packets, capacity in
packets per second, times in seconds. ``capacity_pkts(bits_per_s, packet_bytes)`` converts a
link rate: 1 Gb/s with 1500-byte packets is 83 333.3 packets/s.

>>> from fatpipe.models.network import Network, capacity_pkts
>>> round(capacity_pkts(1e9, 1500), 1)
83333.3
>>> Network(n_flows=0, capacity=1.0, prop_delay=0.1)
Traceback (most recent call last):
...
fatpipe.models.errors.DesignError: n_flows: must be > 0 (got 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fatpipe.models.errors import DesignError
from fatpipe.models.hstcp import Response, response

__all__ = ["Network", "capacity_pkts"]


def capacity_pkts(bits_per_s: float, packet_bytes: float = 1500.0) -> float:
    """Link capacity in packets per second."""
    if not bits_per_s > 0:
        raise DesignError("capacity", f"must be > 0 (got {bits_per_s})")
    if not packet_bytes > 0:
        raise DesignError("packet_bytes", f"must be > 0 (got {packet_bytes})")
    return bits_per_s / (8.0 * packet_bytes)


@dataclass(frozen=True)
class Network:
    """``n_flows`` flows of one AIMD law through a bottleneck.

    ``capacity`` C (packets/s), ``prop_delay`` T_p (s, the round-trip propagation delay: R = q/C +
    T_p, the seed's Eq. 5), ``buffer`` B (packets; the queue lives in [0, B], ``inf`` for none),
    ``response`` the AIMD law (``"hstcp"``, ``"hstcp-eq2"``, ``"reno"`` or a
    :class:`~fatpipe.models.hstcp.Response`). N is a real number: the fluid model does not need an
    integer.
    """

    n_flows: float
    capacity: float
    prop_delay: float
    buffer: float = math.inf
    response: str | Response = "hstcp"

    def __post_init__(self) -> None:
        for name in ("n_flows", "capacity", "prop_delay", "buffer"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise DesignError(name, f"must be a number (got {value!r})")
            if not value > 0 or math.isnan(value):
                raise DesignError(name, f"must be > 0 (got {value})")
        for name in ("n_flows", "capacity", "prop_delay"):
            if math.isinf(getattr(self, name)):
                raise DesignError(name, "must be finite")
        object.__setattr__(self, "response", response(self.response))

    @property
    def law(self) -> Response:
        """The AIMD law as a :class:`~fatpipe.models.hstcp.Response`."""
        assert isinstance(self.response, Response)
        return self.response

    @property
    def bdp(self) -> float:
        """Bandwidth-delay product C·T_p, packets."""
        return self.capacity * self.prop_delay

    def rtt(self, q: float) -> float:
        """R = q/C + T_p (seed Eq. 5)."""
        return q / self.capacity + self.prop_delay
