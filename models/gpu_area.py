"""The die-area model of a Maxwell-family GPU (004 app. C.2, eqs. C.6-C.7).

A chip of n_SM streaming multiprocessors, each with n_V vector units, is priced block by block: each vector
unit's logic, its register file, the SM's shared memory, the L1 cache that a pair of SMs shares, the SM's slice
of the L2 cache and a common overhead (I/O pads, memory controllers, engines) proportional to n_SM. Each memory
block's area is linear in its size, slope x size + intercept, fitted to Cacti estimates (004:L3925-3937); the
logic and overhead areas are measured on a die photograph (004:L3957-3960). Areas in mm^2, sizes in KiB.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinearArea:
    """A memory block's area, slope x size + intercept (mm^2 per KiB, mm^2)."""

    slope_mm2_per_kib: float
    intercept_mm2: float

    def area_mm2(self, size_kib: float) -> float:
        """Area of one block of ``size_kib`` KiB (mm^2)."""
        if size_kib < 0:
            raise ValueError(f"a memory block's size must be >= 0 KiB, got {size_kib!r}")
        return self.slope_mm2_per_kib * size_kib + self.intercept_mm2


@dataclass(frozen=True)
class AreaCoefficients:
    """The calibrated constants of eq. C.6: per vector unit, per memory block, and the overhead per SM."""

    vector_unit_mm2: float
    register_file: LinearArea  # one vector unit's bank
    shared_memory: LinearArea  # one SM's
    l1_pair: LinearArea  # one pair of SMs'
    l2_slice: LinearArea  # one SM's share of the L2
    overhead_per_sm_mm2: float


@dataclass(frozen=True)
class GpuFloorplan:
    """What eq. C.6 counts on one chip: SMs, vector units per SM and the memory sizes (KiB)."""

    n_sm: int
    vector_units_per_sm: int
    register_file_kib_per_vu: float
    shared_kib_per_sm: float
    l1_kib_per_sm_pair: float
    l2_kib: float

    def __post_init__(self) -> None:
        if self.n_sm < 2 or self.n_sm % 2:
            raise ValueError(f"n_sm must be an even number >= 2 (the L1 is shared by SM pairs), got {self.n_sm!r}")
        if self.vector_units_per_sm < 1:
            raise ValueError(f"vector_units_per_sm must be >= 1, got {self.vector_units_per_sm!r}")


def l2_area_mm2(c: AreaCoefficients, gpu: GpuFloorplan) -> float:
    """The whole L2: n_SM slices of l2_kib / n_SM each (mm^2)."""
    return gpu.n_sm * c.l2_slice.area_mm2(gpu.l2_kib / gpu.n_sm)


def die_area_mm2(c: AreaCoefficients, gpu: GpuFloorplan) -> float:
    """Total die area of eq. C.6 (mm^2)."""
    per_sm = (gpu.vector_units_per_sm * (c.vector_unit_mm2 + c.register_file.area_mm2(gpu.register_file_kib_per_vu))
              + c.shared_memory.area_mm2(gpu.shared_kib_per_sm) + c.overhead_per_sm_mm2)
    return (gpu.n_sm * per_sm + gpu.n_sm / 2 * c.l1_pair.area_mm2(gpu.l1_kib_per_sm_pair)
            + l2_area_mm2(c, gpu))
