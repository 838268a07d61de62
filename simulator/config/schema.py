"""The system spec: frozen dataclasses, one field = type + unit + default + doc.

Values are stored in SI units (Hz, s, B, B/s, J, J/B, J/bit, W, A, V); sizes
are integer bytes; cycle counts are plain integers. YAML gives every
dimensioned value as a string with its unit (see ``simulator.units``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Callable

from simulator.config.accelerators import AcceleratorSpec
from simulator.config.fields import param
from simulator.memory.dram_params import DramCurrents, DramGeometry, DramTiming, check_line_is_one_burst
from simulator.units import is_power_of_two, seconds_to_ps


#: what names a component in results (energy_j.<component>...) and a unit in traces and --set keys
COMPONENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: components every system has besides its cache levels and accelerators (``simulator.energy``)
RESERVED_COMPONENTS = ("host", "dram", "dram_interface", "memory_path")


@dataclass(frozen=True)
class HostSpec:
    """The trace-driven host core."""

    frequency_hz: float = param(unit="frequency", positive=True, doc="core clock")
    flops_per_cycle: float = param(positive=True, doc="peak floating-point operations per cycle (DP)")
    loads_per_cycle: float = param(positive=True, doc="memory instructions (elements) issued per cycle at most")
    max_outstanding_misses: int = param(min=1, doc="L1D miss buffers: misses to L2 and beyond in flight at once")
    memory_path_latency_s: float = param(
        unit="time", min=0.0, doc="load-to-use latency of a DRAM access outside the DRAM device: "
        "cache lookups on the way, on-chip network, memory controller queue and return"
    )
    energy_per_flop_j: float = param(unit="energy_per_flop", min=0.0, doc="dynamic energy per DP flop")
    static_power_w: float = param(unit="power", min=0.0, doc="constant power of the core and its uncore share")
    memory_path_energy_j_per_byte: float = param(
        unit="energy_per_byte", min=0.0, doc="host-side energy per byte served from DRAM (excluding the DRAM device)"
    )


@dataclass(frozen=True)
class CacheLevelSpec:
    """One cache level: geometry, hit latency and access energy."""

    name: str = param(doc="level name, e.g. L1D")
    # the simulator keeps 16 B of state per line (a stamp and use bits): 1 GiB at the largest size
    size_bytes: int = param(unit="size", positive=True, max=2**32, doc="capacity")
    ways: int = param(min=1, doc="associativity")
    latency_cycles: int = param(min=0, doc="load-to-use latency of a hit at this level, host cycles")
    read_energy_j: float = param(unit="energy", min=0.0,
                                 doc="energy per demand load reaching this level (its lookup, hit or miss, and the "
                                     "line's data), J per access (energy.model: actions)")
    write_energy_j: float = param(unit="energy", min=0.0,
                                  doc="energy per demand store reaching this level, J per access (energy.model: "
                                      "actions)")
    line_energy_j: float = param(unit="energy", min=0.0,
                                 doc="energy per line moved into or out of this level other than by a demand access: "
                                     "a fill from below, a write-back received or sent, a flush/invalidate/evict "
                                     "probe, J per line (energy.model: actions)")
    energy_j_per_byte: float = param(unit="energy_per_byte", min=0.0,
                                     doc="energy per byte the host finds at this level, the byte's whole path "
                                         "included (001 eq. 10; energy.model: inclusive_per_byte)")


@dataclass(frozen=True)
class PrefetcherSpec:
    """Stream prefetcher attached to one cache level."""

    enabled: bool = param(False, doc="switch the prefetcher on")
    level: str = param("L2", doc="name of the level the prefetcher fills")
    degree: int = param(4, min=1, max=64, doc="lines fetched ahead on each confirmed stream miss")
    streams: int = param(16, min=1, max=256, doc="stream table entries")


# Replacement policies and the use-bit way limit of the cache model (simulator.memory.cache_kernel
# REPLACEMENTS and MAX_MRU_BITS_WAYS; repeated so the config layer does not load the numba kernels,
# and a test keeps them equal).
CACHE_REPLACEMENTS = ("lru", "mru_bits")
MAX_MRU_BITS_WAYS = 63


@dataclass(frozen=True)
class CachesSpec:
    """The host cache hierarchy, top (L1D) to last level."""

    line_bytes: int = param(unit="size", power_of_two=True, doc="line size shared by all levels")
    levels: tuple[CacheLevelSpec, ...] = param(doc="levels from the core outwards")
    prefetcher: PrefetcherSpec = field(default_factory=PrefetcherSpec, metadata={"doc": "stream prefetcher"})
    replacement: str = param("lru", choices=CACHE_REPLACEMENTS,
                             doc="replacement policy of every level: exact LRU, or MARSSx86's pseudo-LRU of one "
                                 "use bit per way (victim: the lowest way not used since the bits were last reset)")

    def __post_init__(self) -> None:
        for i, lv in enumerate(self.levels):
            if not COMPONENT_NAME.fullmatch(lv.name) or lv.name in RESERVED_COMPONENTS:
                raise ValueError(f"levels[{i}].name: {lv.name!r}; expected a name of letters, digits, '_' and '-', "
                                 f"starting with a letter, other than {', '.join(RESERVED_COMPONENTS)}")
        if not self.levels:
            raise ValueError("levels: expected at least one cache level")
        names = [lv.name for lv in self.levels]
        if len(set(names)) != len(names):
            raise ValueError(f"levels: expected distinct names, got {names}")
        for i, lv in enumerate(self.levels):
            sets, rest = divmod(lv.size_bytes, lv.ways * self.line_bytes)
            if rest or not is_power_of_two(sets):
                raise ValueError(
                    f"levels[{i}] ({lv.name}): size {lv.size_bytes} B / ({lv.ways} ways x {self.line_bytes} B lines) "
                    f"= {lv.size_bytes / (lv.ways * self.line_bytes):g} sets; expected a power-of-two number of sets"
                )
        if self.replacement == "mru_bits":
            for i, lv in enumerate(self.levels):
                if lv.ways > MAX_MRU_BITS_WAYS:
                    raise ValueError(f"levels[{i}] ({lv.name}): {lv.ways} ways; the mru_bits replacement allows "
                                     f"at most {MAX_MRU_BITS_WAYS} (one 64-bit word of use bits per set); expected "
                                     "fewer ways or replacement: lru")
        if self.prefetcher.enabled and self.prefetcher.level not in names:
            raise ValueError(f"prefetcher.level: {self.prefetcher.level!r} is not a level; expected one of {names}")


@dataclass(frozen=True)
class DramTimingSpec:
    """DDR timing parameters; cycle counts are in tCK."""

    tck_s: float = param(unit="time", positive=True, doc="clock period tCK")
    cl: int = param(min=1, doc="CAS latency, tCK")
    t_rcd: int = param(min=1, doc="ACT to column command, tCK")
    t_rp: int = param(min=1, doc="precharge period, tCK")
    t_ras: int = param(min=1, doc="ACT to PRE minimum, tCK")
    t_rc: int = param(min=1, doc="ACT to ACT same bank, tCK")
    t_rrd: int = param(min=1, doc="ACT to ACT different banks, tCK")
    t_ccd: int = param(min=1, doc="column command to column command, tCK")
    t_wr: int = param(min=1, doc="write recovery, tCK")
    t_wtr: int = param(min=1, doc="write to read turnaround, tCK")
    t_rtp: int = param(min=1, doc="read to precharge, tCK")
    t_rfc: int = param(min=1, doc="refresh cycle time, tCK")
    t_faw: int = param(min=1, doc="four-activate window, tCK")
    burst_length: int = param(min=1, power_of_two=True, doc="burst length BL, beats")
    t_refi_s: float = param(unit="time", positive=True, doc="average refresh interval tREFI")
    t_xp: int = param(min=1, doc="power-down exit to the next command, tCK")
    t_cke: int = param(min=1, doc="shortest power-down (CKE low), tCK")
    cwl: int = param(min=1, doc="CAS write latency, write command to first data beat, tCK")
    t_rtrs: int = param(min=0, doc="data-bus turnaround between ranks, tCK")

    def __post_init__(self) -> None:
        _model_check(self.model)  # the DRAM model's orderings (t_ras >= t_rcd, cwl <= cl, ...), at load time

    def model(self) -> DramTiming:
        """The DRAM model's timing: counts in tCK, tCK and tREFI in ps; ValueError if it refuses them."""
        return DramTiming(
            tck_ps=seconds_to_ps(self.tck_s), cl=self.cl, t_rcd=self.t_rcd, t_rp=self.t_rp, t_ras=self.t_ras,
            t_rc=self.t_rc, t_rrd=self.t_rrd, t_ccd=self.t_ccd, t_wr=self.t_wr, t_wtr=self.t_wtr, t_rtp=self.t_rtp,
            t_rfc=self.t_rfc, t_faw=self.t_faw, burst_length=self.burst_length,
            t_refi_ps=seconds_to_ps(self.t_refi_s), t_xp=self.t_xp, t_cke=self.t_cke, cwl=self.cwl,
            t_rtrs=self.t_rtrs,
        )


@dataclass(frozen=True)
class DramCurrentsSpec:
    """Datasheet IDD currents (per device) and supply voltage."""

    idd0_a: float = param(unit="current", positive=True, doc="one-bank ACT-PRE current")
    idd1_a: float = param(unit="current", positive=True, doc="one-bank ACT-READ-PRE current")
    idd2p_a: float = param(unit="current", positive=True, doc="precharge power-down current")
    idd2q_a: float = param(unit="current", positive=True, doc="precharge quiet standby current")
    idd2n_a: float = param(unit="current", positive=True, doc="precharge standby current")
    idd3n_a: float = param(unit="current", positive=True, doc="active standby current")
    idd3p_a: float = param(unit="current", positive=True, doc="active power-down current")
    idd4r_a: float = param(unit="current", positive=True, doc="burst read current")
    idd4w_a: float = param(unit="current", positive=True, doc="burst write current")
    idd5_a: float = param(unit="current", positive=True, doc="burst refresh current")
    vdd_v: float = param(unit="voltage", positive=True, doc="supply voltage")

    def __post_init__(self) -> None:
        _model_check(self.model)  # the DRAM model's orderings (IDD0, IDD4R/W, IDD5 >= IDD3N), at load time

    def model(self) -> DramCurrents:
        """The DRAM model's currents, in mA; ValueError if it refuses them."""
        return DramCurrents(**{f"{f.name[:-2]}_ma": getattr(self, f.name) * 1e3 for f in fields(self)
                               if f.name.endswith("_a")}, vdd_v=self.vdd_v)


@dataclass(frozen=True)
class DramGeometrySpec:
    """Channels, ranks, banks and the address mapping."""

    channels: int = param(min=1, power_of_two=True, doc="independent channels")
    ranks_per_channel: int = param(min=1, power_of_two=True, doc="ranks on each channel")
    banks: int = param(min=1, power_of_two=True, doc="banks per device")
    rows: int = param(min=1, power_of_two=True, doc="rows per bank")
    columns: int = param(min=1, power_of_two=True, doc="columns per row (device)")
    device_width_bits: int = param(min=1, power_of_two=True, doc="data pins per device (x4, x8, x16)")
    bus_width_bits: int = param(min=8, power_of_two=True, doc="channel data bus width")
    mapping: str = param("row:rank:bank:channel:column", doc="address bit fields, most to least significant")
    page_policy: str = param("open", choices=("open", "open_adaptive", "closed"),
                             doc="row-buffer policy: open (rows stay open until a conflict or refresh), "
                                 "open_adaptive (a bank with no queued request to its row precharges, as "
                                 "DRAMSim2's open page), closed (auto-precharge)")
    scheduler: str = param("in_order", choices=("in_order", "frfcfs"),
                           doc="controller: column commands in arrival order, or first-ready (reads before "
                               "writes, row hits together, banks round-robin) within the transaction queue")
    queue_depth: int = param(32, min=1, doc="controller transaction queue, requests per channel")
    power_down: bool = param(False, doc="a rank with no pending request powers down (IDD2P / IDD3P) and "
                                        "pays tXP to wake, as DRAMSim2's USE_LOW_POWER")

    def __post_init__(self) -> None:
        fields = self.mapping.split(":")
        expected = {"row", "rank", "bank", "channel", "column"}
        if sorted(fields) != sorted(expected):
            raise ValueError(f"mapping: {self.mapping!r}; expected the five fields {sorted(expected)} separated by ':'")
        if self.bus_width_bits % self.device_width_bits:
            raise ValueError("bus_width_bits: expected a multiple of device_width_bits")


@dataclass(frozen=True)
class DramSpec:
    """Main memory: timing, currents, organisation and the off-chip interface."""

    timing: DramTimingSpec = param(doc="timing parameters")
    currents: DramCurrentsSpec = param(doc="IDD currents and VDD")
    geometry: DramGeometrySpec = param(doc="organisation and mapping")
    interface_energy_j_per_bit: float = param(
        unit="energy_per_bit", min=0.0, doc="off-chip interface (I/O, termination) energy per bit moved"
    )


#: how a run prices its actions (``simulator.energy``)
ENERGY_MODELS = ("actions", "inclusive_per_byte")


@dataclass(frozen=True)
class EnergySpec:
    """How the run's counted actions become energy."""

    model: str = param("actions", choices=ENERGY_MODELS,
                       doc="actions: every component's actions (cache reads, writes, fills, write-backs, probes; "
                           "DRAM commands; link and interface bytes) x its energy per action, for every requester; "
                           "inclusive_per_byte: 001's roofline costs, each byte the host uses charged once at the "
                           "level that served it (energy_j_per_byte), other cache work free")


@dataclass(frozen=True)
class SystemSpec:
    """A whole system: host core, caches, DRAM (accelerators are added by their specs)."""

    name: str = param(doc="system name used in reports",
                      check=lambda v: None if v.strip() and v.isprintable() else "expected a non-empty printable name")
    host: HostSpec = param(doc="host core")
    caches: CachesSpec = param(doc="cache hierarchy")
    dram: DramSpec = param(doc="main memory")
    accelerators: dict[str, AcceleratorSpec] = field(
        default_factory=dict, metadata={"doc": "accelerators by unit name (the name traces use)"})
    energy: EnergySpec = field(default_factory=EnergySpec, metadata={"doc": "energy model"})

    def __post_init__(self) -> None:
        levels = [lv.name for lv in self.caches.levels]
        for name in self.accelerators:
            if not COMPONENT_NAME.fullmatch(name):
                raise ValueError(f"accelerators: {name!r}: expected a unit name of letters, digits, '_' and '-', "
                                 "starting with a letter (it names trace units, --set keys and result columns)")
            if name in RESERVED_COMPONENTS or name in levels:
                taken = "the core's unit name" if name == "host" else "the name of another component's results"
                raise ValueError(f"accelerators.{name}: {name!r} is {taken}; expected another name (taken: "
                                 f"{', '.join(RESERVED_COMPONENTS + tuple(levels))})")
        _model_check(lambda: check_line_is_one_burst(self.dram.timing.model(), dram_geometry(self)))


_DRAM_KEY_OF = {"bus_width_bits": "dram.geometry.bus_width_bits", "burst_length": "dram.timing.burst_length"}


def _model_check(build: Callable[[], object]) -> None:
    """Run ``build`` (a DRAM model constructor) and give its refusal in config terms: the model says
    "DramTiming.t_ras = 1: expected ...", the config "t_ras = 1: expected ..." under its section (the
    model keeps timings in tCK or ps and currents in mA, as its field names say)."""
    try:
        build()
    except ValueError as exc:
        head, _, rest = str(exc).partition(".")
        if head == "DramGeometry":  # checked from SystemSpec, where messages need their section
            if rest.startswith("line_bytes "):  # the line-is-one-burst rule: name its other keys in full
                rest = "caches: " + re.sub(r"\b(bus_width_bits|burst_length)\b",
                                           lambda m: _DRAM_KEY_OF[m.group(1)], rest)
            else:
                rest = f"dram.geometry: {rest}"
        raise ValueError(rest if head.startswith("Dram") else str(exc)) from None


def dram_geometry(spec: SystemSpec) -> DramGeometry:
    """The DRAM model's organisation from ``spec.dram.geometry`` and the cache line size."""
    g = spec.dram.geometry
    return DramGeometry(
        channels=g.channels, ranks_per_channel=g.ranks_per_channel, banks=g.banks, rows=g.rows,
        columns=g.columns, device_width_bits=g.device_width_bits, bus_width_bits=g.bus_width_bits,
        line_bytes=spec.caches.line_bytes, mapping=g.mapping,
    )


def dram_parameters(spec: SystemSpec) -> tuple[DramTiming, DramCurrents, DramGeometry]:
    """The DRAM model's parameters of ``spec`` (timing in tCK and ps, currents in mA)."""
    return spec.dram.timing.model(), spec.dram.currents.model(), dram_geometry(spec)
