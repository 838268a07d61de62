"""Spec of the LAP (Linear Algebra Processor), a GEMM accelerator (003 section 3.2).

A LAP core is a ``pe_rows`` x ``pe_cols`` array of double-precision MAC units
(2 flop per cycle each) at ``frequency_hz``; GEMM runs at ``utilisation`` of
that peak. The LAP blocks C = A B into sub-blocks that fit its local memory
(003 eq. 7, 003:L228) and double-buffers them. Energies: ``energy_per_flop_j``
is the dynamic share of the LAP's GEMM efficiency (25 GFLOP/W, 003:L99) and
``local_memory_energy_j_per_byte`` prices data moved into and out of the local
memory; ``static_power_w`` is drawn while busy, ``idle_power_w`` while idle.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.fields import param

#: Floating-point operations of one multiply-accumulate.
FLOPS_PER_MAC = 2


@register_kind("lap")
@dataclass(frozen=True)
class LapSpec(AcceleratorSpec):
    """A LAP: PE array, clock, utilisation, local memory, energy and power."""

    frequency_hz: float = param(unit="frequency", positive=True, doc="LAP clock")
    local_memory_bytes: int = param(unit="size", positive=True,
                                    doc="local (scratchpad) memory shared by the cores")
    energy_per_flop_j: float = param(unit="energy_per_flop", min=0.0,
                                     doc="dynamic energy per flop of the PE array incl. its operand stores")
    local_memory_energy_j_per_byte: float = param(unit="energy_per_byte", min=0.0,
                                                  doc="energy per byte written into or read out of local memory")
    static_power_w: float = param(unit="power", min=0.0, doc="power while busy beyond the dynamic energy")
    idle_power_w: float = param(unit="power", min=0.0, doc="power while idle (leakage)")
    pe_rows: int = param(4, min=1, doc="rows of processing elements per core")
    pe_cols: int = param(4, min=1, doc="columns of processing elements per core")
    cores: int = param(1, min=1, doc="LAP cores (each a PE array) working on different sub-blocks")
    utilisation: float = param(0.9, positive=True, max=1.0,
                               doc="fraction of peak MAC throughput sustained on GEMM sub-blocks")
    elem_bytes: int = param(8, min=1, doc="bytes per matrix element (8: double precision)")

    @property
    def flops_per_cycle(self) -> int:
        """Peak flops per LAP cycle: PEs x cores x 2."""
        return self.pe_rows * self.pe_cols * self.cores * FLOPS_PER_MAC

    @property
    def gemm_flops_per_s(self) -> float:
        """Sustained GEMM rate f_L, flop/s: peak x utilisation."""
        return self.flops_per_cycle * self.frequency_hz * self.utilisation
