"""A link: latency, bandwidth and energy per bit, with occupancy.

Time lives on links (SST's ``Link.connect((a, port, "1000ps"), ...)``): a
transfer of ``n`` bytes that starts at ``t`` on an idle link ends at
``t + latency + n / bandwidth``; transfers queue behind each other in the
order they are asked for (the link serialises them). The link counts bytes
and transfers, also by the requester that asked for each transfer; its energy is
bytes x 8 x energy per bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from simulator.units import PS_PER_S


@dataclass
class Link:
    """A point-to-point data path."""

    name: str
    bandwidth_bytes_per_s: float
    latency_ps: int = 0
    energy_j_per_bit: float = 0.0
    busy_until_ps: int = 0
    bytes_moved: int = field(default=0)
    transfers: int = field(default=0)
    bytes_by_requester: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.bandwidth_bytes_per_s > 0:
            raise ValueError(f"link {self.name}: bandwidth_bytes_per_s must be positive, got {self.bandwidth_bytes_per_s!r}")
        if self.latency_ps < 0:
            raise ValueError(f"link {self.name}: latency_ps must be >= 0, got {self.latency_ps!r}")

    def serialisation_ps(self, nbytes: int) -> int:
        """Time the link is occupied by ``nbytes``, ps."""
        return int(round(nbytes * PS_PER_S / self.bandwidth_bytes_per_s))

    def transfer(self, nbytes: int, start_ps: int, requester: str = "host") -> int:
        """Book a transfer of ``nbytes`` asked for at ``start_ps`` by ``requester``; return its arrival time, ps."""
        begin = max(start_ps, self.busy_until_ps)
        self.busy_until_ps = begin + self.serialisation_ps(nbytes)
        self.bytes_moved += int(nbytes)
        self.transfers += 1
        self.bytes_by_requester[requester] = self.bytes_by_requester.get(requester, 0) + int(nbytes)
        return self.busy_until_ps + self.latency_ps

    def energy_j(self) -> float:
        """Energy of every byte moved so far, J."""
        return self.bytes_moved * 8 * self.energy_j_per_bit
