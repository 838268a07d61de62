"""DRAM parameters: timing (tCK and ps), IDD currents (mA) and geometry of a DDR-class memory.

Plain validated values, shared by the DRAM model (``simulator.memory.dram``) and its energy
accounting (``simulator.memory.power``); the composition root builds them from the
configuration (``simulator.system.dram_parameters``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from simulator.config.units import is_power_of_two

MAPPING_FIELDS = ("row", "rank", "bank", "channel", "column")
#: Longest timing the DRAM model takes, ps: 2**62, so sums of a few timings stay within int64.
MAX_TIMING_PS = 2**62


def _require_int(obj: object, name: str, minimum: int) -> None:
    value = getattr(obj, name)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{type(obj).__name__}.{name} = {value!r}: expected an integer >= {minimum}")


@dataclass(frozen=True)
class DramTiming:
    """DDR timing parameters; counts in clock cycles (tCK) unless the name ends in _ps.

    ``cwl`` (CAS write latency, tCK), ``t_rtrs`` (rank-to-rank data-bus switch, tCK),
    ``t_xp`` (power-down exit to the next command, tCK) and ``t_cke`` (shortest power-down,
    tCK) default to DDR3-1600 values (CWL 8 per the MT41J256M4 speed-bin table; one-cycle rank
    switch, tXP 5 and tCKE 4 as in DRAMSim2's DDR3_micron_32M_8B_x4_sg125 ini).
    """

    tck_ps: int
    cl: int
    t_rcd: int
    t_rp: int
    t_ras: int
    t_rc: int
    t_rrd: int
    t_ccd: int
    t_wr: int
    t_wtr: int
    t_rtp: int
    t_rfc: int
    t_faw: int
    burst_length: int
    t_refi_ps: int
    cwl: int = 8
    t_rtrs: int = 1
    t_xp: int = 5
    t_cke: int = 4

    def __post_init__(self) -> None:
        for f in fields(self):
            _require_int(self, f.name, 0 if f.name == "t_rtrs" else 1)
        if self.burst_length % 2:
            raise ValueError(f"DramTiming.burst_length = {self.burst_length!r}: expected an even number of beats")
        if self.t_ras < self.t_rcd:
            raise ValueError(f"DramTiming.t_ras = {self.t_ras!r}: expected >= t_rcd ({self.t_rcd})")
        if self.t_rc < self.t_ras + self.t_rp:
            raise ValueError(
                f"DramTiming.t_rc = {self.t_rc!r}: expected >= t_ras + t_rp ({self.t_ras + self.t_rp})")
        if self.t_faw < self.t_rrd:
            raise ValueError(f"DramTiming.t_faw = {self.t_faw!r}: expected >= t_rrd ({self.t_rrd})")
        if self.cwl > self.cl:
            raise ValueError(f"DramTiming.cwl = {self.cwl!r}: expected <= cl ({self.cl})")
        if self.t_refi_ps <= self.t_rfc * self.tck_ps:
            raise ValueError(
                f"DramTiming.t_refi_ps = {self.t_refi_ps!r}: expected > t_rfc * tck_ps ({self.t_rfc * self.tck_ps})")
        for f in fields(self):  # the DRAM kernel keeps every timing in int64 picoseconds
            in_ps = f.name.endswith("_ps")
            ps = getattr(self, f.name) * (1 if in_ps else self.tck_ps)
            if ps > MAX_TIMING_PS:
                raise ValueError(f"DramTiming.{f.name} = {getattr(self, f.name)!r}{'' if in_ps else f' ({ps} ps)'}: "
                                 f"expected at most {MAX_TIMING_PS} ps, the picosecond clock's range")

    @property
    def burst_ps(self) -> int:
        """Data-bus occupancy of one burst, BL/2 tCK, in ps."""
        return self.burst_length // 2 * self.tck_ps


@dataclass(frozen=True)
class DramCurrents:
    """Datasheet supply currents of one device in mA, and its supply voltage in V.

    ``idd3p_ma`` (active power-down) is needed only by a DramSystem with power-down; None
    otherwise."""

    idd0_ma: float
    idd1_ma: float
    idd2p_ma: float
    idd2q_ma: float
    idd2n_ma: float
    idd3n_ma: float
    idd4r_ma: float
    idd4w_ma: float
    idd5_ma: float
    vdd_v: float
    idd3p_ma: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "idd3p_ma" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"DramCurrents.{f.name} = {value!r}: expected a positive number")
        for name in ("idd0_ma", "idd4r_ma", "idd4w_ma", "idd5_ma"):
            if getattr(self, name) < self.idd3n_ma:
                raise ValueError(
                    f"DramCurrents.{name} = {getattr(self, name)!r}: expected >= idd3n_ma ({self.idd3n_ma})")


@dataclass(frozen=True)
class DramGeometry:
    """Organisation of the memory: channels x ranks x banks x rows x columns of devices.

    ``mapping`` orders the line-address fields from most to least significant, e.g.
    ``"row:rank:bank:channel:column"``; ``column`` there counts lines within a rank row.
    """

    channels: int
    ranks_per_channel: int
    banks: int
    rows: int
    columns: int
    device_width_bits: int
    bus_width_bits: int
    line_bytes: int
    mapping: str = "row:rank:bank:channel:column"

    def __post_init__(self) -> None:
        for name in ("channels", "ranks_per_channel", "banks", "rows", "columns", "device_width_bits",
                     "bus_width_bits", "line_bytes"):
            _require_int(self, name, 1)
        for name in ("channels", "ranks_per_channel", "banks", "rows", "columns", "line_bytes"):
            if not is_power_of_two(getattr(self, name)):
                raise ValueError(f"DramGeometry.{name} = {getattr(self, name)!r}: expected a power of two")
        if self.bus_width_bits % self.device_width_bits:
            raise ValueError(f"DramGeometry.bus_width_bits = {self.bus_width_bits!r}: expected a multiple of "
                             f"device_width_bits ({self.device_width_bits})")
        if self.bus_width_bits % 8 or self.line_bytes % (self.bus_width_bits // 8):
            raise ValueError(f"DramGeometry.line_bytes = {self.line_bytes!r}: expected a multiple of the bus "
                             f"width in bytes ({self.bus_width_bits / 8})")
        if self.row_bytes % self.line_bytes:
            raise ValueError(f"DramGeometry.line_bytes = {self.line_bytes!r}: expected to divide the rank row "
                             f"({self.row_bytes} B)")
        parts = self.mapping.split(":") if isinstance(self.mapping, str) else None
        if parts is None or sorted(parts) != sorted(MAPPING_FIELDS):
            raise ValueError(f"DramGeometry.mapping = {self.mapping!r}: expected each of {MAPPING_FIELDS} "
                             "exactly once, separated by ':'")

    @property
    def devices_per_rank(self) -> int:
        """Devices side by side on the bus in one rank."""
        return self.bus_width_bits // self.device_width_bits

    @property
    def row_bytes(self) -> int:
        """Bytes in one row of a rank (all its devices)."""
        return self.columns * self.device_width_bits // 8 * self.devices_per_rank

    @property
    def lines_per_row(self) -> int:
        """Lines in one rank row."""
        return self.row_bytes // self.line_bytes

    @property
    def capacity_lines(self) -> int:
        """Lines addressable in the whole memory."""
        return self.channels * self.ranks_per_channel * self.banks * self.rows * self.lines_per_row

    @property
    def capacity_bytes(self) -> int:
        """Bytes the whole memory holds, B."""
        return self.capacity_lines * self.line_bytes

    def field_sizes(self) -> dict[str, int]:
        """Number of values of each mapping field."""
        return {"row": self.rows, "rank": self.ranks_per_channel, "bank": self.banks,
                "channel": self.channels, "column": self.lines_per_row}


def check_line_is_one_burst(timing: DramTiming, geometry: DramGeometry) -> None:
    """Raise ValueError unless a cache line is exactly one burst: bus width x burst length bytes."""
    burst_bytes = geometry.bus_width_bits // 8 * timing.burst_length
    if burst_bytes != geometry.line_bytes:
        raise ValueError(f"DramGeometry.line_bytes = {geometry.line_bytes!r}: expected one burst "
                         f"(bus_width_bits {geometry.bus_width_bits} / 8 x burst_length "
                         f"{timing.burst_length} = {burst_bytes} B)")
