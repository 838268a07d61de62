"""Spec of the LAP (Linear Algebra Processor), a GEMM accelerator (003 section 3.2).

A LAP core is a ``pe_rows`` x ``pe_cols`` array of double-precision MAC units
(2 flop per cycle each) at ``frequency_hz``; GEMM runs at ``utilisation`` of
that peak. The LAP blocks C = A B into sub-blocks that fit its local memory
(003 eq. 7, 003:L240) and double-buffers them. Energies: ``energy_per_flop_j``
is the dynamic share of the LAP's GEMM efficiency (25 GFLOP/W, 003:L99) and
``local_memory_energy_j_per_byte`` prices data moved into and out of the local
memory; ``static_power_w`` is drawn while busy, ``idle_power_w`` while idle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.bounds import CLOCK_HZ, COUNT, UTILISATION
from simulator.errors import FieldError
from simulator.config.fields import param

#: Floating-point operations of one multiply-accumulate.
FLOPS_PER_MAC = 2

#: Smallest and largest sub-block edge, elements (003 eq. 7, 003:L240).
BLOCK_MIN = 64
BLOCK_MAX = 256


def block_size(extent: int) -> int:
    """Sub-block edge for a matrix dimension: min(max(extent, 64), 256) (003 eq. 7)."""
    return min(max(int(extent), BLOCK_MIN), BLOCK_MAX)


def sub_block_count(m: int, n: int) -> int:
    """r = ceil(n / n_c) ceil(m / m_c), the number of C sub-blocks (003 eq. 6)."""
    return math.ceil(n / block_size(n)) * math.ceil(m / block_size(m))


def k_slice(k: int, m_c: int, n_c: int, local_memory_bytes: int, elem_bytes: int) -> int:
    """Columns of the A/B panels per step so that two C blocks and two panel slices fit, elements."""
    free = local_memory_bytes // elem_bytes - 2 * m_c * n_c
    ks = free // (2 * (m_c + n_c))
    if ks < 1:
        raise FieldError("local_memory_bytes", f"{local_memory_bytes} B; expected room for two {m_c} x {n_c} C "
                         f"blocks and two panel columns ({(2 * m_c * n_c + 2 * (m_c + n_c)) * elem_bytes} B)",
                         ("elem_bytes",))
    return min(int(k), int(ks))


@register_kind("lap")
@dataclass(frozen=True)
class LapSpec(AcceleratorSpec):
    """A LAP: PE array, clock, utilisation, local memory, energy and power."""

    frequency_hz: float = param(unit="frequency", positive=True, within=CLOCK_HZ, doc="LAP clock")
    local_memory_bytes: int = param(unit="size", positive=True,
                                    doc="local (scratchpad) memory shared by the cores")
    energy_per_flop_j: float = param(unit="energy_per_flop", min=0.0,
                                     doc="dynamic energy per flop of the PE array incl. its operand stores")
    local_memory_energy_j_per_byte: float = param(unit="energy_per_byte", min=0.0,
                                                  doc="energy per byte written into or read out of local memory")
    static_power_w: float = param(unit="power", min=0.0, doc="power while busy beyond the dynamic energy")
    idle_power_w: float = param(unit="power", min=0.0, doc="power while idle (leakage)")
    pe_rows: int = param(4, min=1, within=COUNT, doc="rows of processing elements per core")
    pe_cols: int = param(4, min=1, within=COUNT, doc="columns of processing elements per core")
    cores: int = param(1, min=1, within=COUNT,
                       doc="LAP cores (each a PE array) sharing the local memory; they compute every step together, "
                           "so the rate is cores x PEs however few sub-blocks a command has (sub-blocks are not "
                           "dealt to cores)")
    utilisation: float = param(0.9, positive=True, within=UTILISATION,
                               doc="fraction of peak MAC throughput sustained on GEMM sub-blocks")
    elem_bytes: int = param(8, min=1, max=64, doc="bytes per matrix element (8: double precision)")

    def __post_init__(self) -> None:
        k_slice(1, BLOCK_MAX, BLOCK_MAX, self.local_memory_bytes, self.elem_bytes)  # the largest blocks fit

    @property
    def flops_per_cycle(self) -> int:
        """Peak flops per LAP cycle: PEs x cores x 2."""
        return self.pe_rows * self.pe_cols * self.cores * FLOPS_PER_MAC

    @property
    def gemm_flops_per_s(self) -> float:
        """Sustained GEMM rate f_L, flop/s: peak x utilisation."""
        return self.flops_per_cycle * self.frequency_hz * self.utilisation
