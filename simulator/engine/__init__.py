"""The discrete-event engine: a SimPy environment on integer picoseconds, and clock domains.

Beside them in this package: ``limits`` keeps a run finite (simulated time and trace size, checked before
and during it). ``simulator.replay`` runs a trace's rows on a built system as SimPy processes.

All simulated time is an integer number of picoseconds (``env.now``). A clock
domain converts a component's cycles to picoseconds and back; conversions
round to the nearest picosecond, once per duration, so that a run is exact
and repeatable.
"""

from __future__ import annotations

from dataclasses import dataclass

import simpy

from simulator.units import PS_PER_S


@dataclass(frozen=True)
class ClockDomain:
    """A clock of ``frequency_hz``; converts cycles <-> integer picoseconds."""

    name: str
    frequency_hz: float

    def __post_init__(self) -> None:
        if not self.frequency_hz > 0:
            raise ValueError(f"{self.name}: frequency_hz must be positive, got {self.frequency_hz!r}")

    @property
    def period_ps(self) -> float:
        """Clock period in picoseconds (may be fractional, e.g. 714.29 ps at 1.4 GHz)."""
        return PS_PER_S / self.frequency_hz

    def cycles_to_ps(self, cycles: float) -> int:
        """Duration of ``cycles`` in integer picoseconds (rounded to nearest)."""
        return int(round(cycles * PS_PER_S / self.frequency_hz))

    def ps_to_cycles(self, ps: float) -> float:
        """Picoseconds -> cycles of this clock."""
        return ps * self.frequency_hz / PS_PER_S


def new_environment() -> simpy.Environment:
    """A fresh SimPy environment whose time unit is one picosecond, starting at 0."""
    return simpy.Environment(initial_time=0)
