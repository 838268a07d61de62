"""The system spec: frozen dataclasses, one field = type + unit + default + doc.

Values are stored in SI units (Hz, s, B, B/s, J, J/B, J/bit, W, A, V); sizes
are integer bytes; cycle counts are plain integers. YAML gives every
dimensioned value as a string with its unit (see ``simulator.units``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, make_dataclass
from types import SimpleNamespace

from simulator.config import accel_specs  # noqa: F401 -- registers the shipped accelerator kinds
from simulator.config.accelerators import AcceleratorSpec
from simulator.config.bounds import (CLOCK_HZ, COUNT, CYCLES, DRAM_TCK_COUNT, DRAM_TCK_S, DRAM_TREFI_S,
                                      LATENCY_S, PER_CYCLE_RATE)
from simulator.errors import FieldError
from simulator.config.fields import param
from simulator.memory.dram_params import PAGE_POLICIES as DRAM_PAGE_POLICIES
from simulator.memory.dram_params import REFRESH_MODES as DRAM_REFRESH_MODES
from simulator.memory.dram_params import REFRESH_POLICIES as DRAM_REFRESH_POLICIES
from simulator.memory.dram_params import SCHEDULERS as DRAM_SCHEDULERS
from simulator.memory.dram_params import STANDARDS as DRAM_STANDARDS
from simulator.memory.dram_params import (PARAMETER_BY_MODEL_NAME, DramCurrents, DramGeometry, DramParam, DramTiming,
                                          check_burst_clocks, check_current_orders, check_geometry_standard,
                                          check_line_is_one_burst, check_refresh_mode, check_standard,
                                          check_timing_orders, section_parameters)
from simulator.units import format_quantity, is_power_of_two, seconds_to_ps
from simulator.memory.power import command_current_floors_ma


#: what names a component in results (energy_j.<component>...) and a unit in traces and --set keys
COMPONENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
#: components every system has besides its cache levels and accelerators (``simulator.energy``)
RESERVED_COMPONENTS = ("host", "dram", "dram_interface", "memory_path")
#: the requester of the energy no request causes (DRAM background and refresh), beside the units in a run's energy
#: by requester (``simulator.energy``), so no unit may take its name
BACKGROUND_REQUESTER = "background"


#: Most host cores: the trace's most threads (``workloads.trace.MAX_THREADS``), one thread to a core.
MAX_CORES = 1024


@dataclass(frozen=True)
class HostSpec:
    """The trace-driven host: ``cores`` identical cores, each with the timing below."""

    frequency_hz: float = param(unit="frequency", positive=True, within=CLOCK_HZ, doc="core clock")
    flops_per_cycle: float = param(positive=True, within=PER_CYCLE_RATE,
                                   doc="peak floating-point operations per cycle (DP)")
    loads_per_cycle: float = param(positive=True, within=PER_CYCLE_RATE,
                                   doc="memory instructions (elements) issued per cycle at most")
    max_outstanding_misses: int = param(min=1, within=COUNT,
                                        doc="L1D miss buffers: misses to L2 and beyond in flight at once")
    memory_path_latency_s: float = param(
        unit="time", min=0.0, within=LATENCY_S, doc="load-to-use latency of a DRAM access outside the DRAM device: "
        "cache lookups on the way, on-chip network, memory controller queue and return"
    )
    energy_per_flop_j: float = param(unit="energy_per_flop", min=0.0, doc="dynamic energy per DP flop")
    static_power_w: float = param(unit="power", min=0.0, doc="constant power of the core and its uncore share")
    memory_path_energy_j_per_byte: float = param(
        unit="energy_per_byte", min=0.0, doc="host-side energy per byte the caches exchange with DRAM (excluding "
        "the DRAM device and the off-chip interface); DMA that joins the memory controller does not pay it"
    )
    cores: int = param(1, min=1, max=MAX_CORES, recorded_at_default=False,
                       doc="identical cores, each with the timing above and its own private cache levels; trace "
                           "thread t runs on core t (at most workloads.trace.MAX_THREADS); static_power_w is per core")
    uncore_read_entries: int = param(
        None, min=1, within=COUNT, recorded_at_default=False,
        doc="outstanding DRAM reads of all the cores together (an uncore read queue shared by the cores): a core's "
            "DRAM read waits for a free entry and holds it until its data is back, memory_path_latency_s "
            "included; needs dram.geometry.scheduler in_order or frfcfs; unset: no limit beyond each core's "
            "max_outstanding_misses")


@dataclass(frozen=True)
class CacheLevelSpec:
    """One cache level: geometry, hit latency and access energy."""

    name: str = param(doc="level name, e.g. L1D")
    # the simulator keeps 16 B of state per line (a stamp and use bits): 1 GiB at the largest size
    size_bytes: int = param(unit="size", positive=True, max=2**32, doc="capacity")
    ways: int = param(min=1, within=COUNT, doc="associativity")
    latency_cycles: int = param(min=0, within=CYCLES, doc="load-to-use latency of a hit at this level, host cycles")
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
    shared: bool = param(None, recorded_at_default=False,
                         doc="one cache for all host cores (true) or one per core (false); unset: the last level "
                             "is shared, every other private. Shared levels are the last ones")


PREFETCHER_DEFAULT_LEVEL = "L2"


@dataclass(frozen=True)
class PrefetcherSpec:
    """Stream prefetcher attached to one cache level."""

    enabled: bool = param(False, doc="switch the prefetcher on")
    level: str = param(PREFETCHER_DEFAULT_LEVEL, doc="name of the level the prefetcher fills (the default name, "
                       "L2, written or not, must name a level only while the prefetcher is on; another name always)")
    degree: int = param(4, min=1, max=64, doc="lines fetched ahead on each confirmed stream miss")
    streams: int = param(16, min=1, max=256, doc="stream table entries")


# Replacement policies, the use-bit way limit and the most levels of the cache model
# (simulator.memory.cache_kernel REPLACEMENTS, MAX_MRU_BITS_WAYS and MAX_CACHE_LEVELS; repeated so the
# config layer does not load the numba kernels, and a test keeps them equal).
CACHE_REPLACEMENTS = ("lru", "mru_bits")
MAX_MRU_BITS_WAYS = 63
MAX_CACHE_LEVELS = 126


@dataclass(frozen=True)
class CachesSpec:
    """The host cache hierarchy, top (L1D) to last level."""

    line_bytes: int = param(unit="size", power_of_two=True, doc="line size shared by all levels")
    levels: tuple[CacheLevelSpec, ...] = param(doc="levels from the core outwards (at most MAX_CACHE_LEVELS, 126)")
    prefetcher: PrefetcherSpec = field(default_factory=PrefetcherSpec, metadata={"doc": "stream prefetcher"})
    replacement: str = param("lru", choices=CACHE_REPLACEMENTS,
                             doc="replacement policy of every level: exact LRU, or MARSSx86's pseudo-LRU of one "
                                 "use bit per way (victim: the lowest way not used since the bits were last reset)")

    def __post_init__(self) -> None:
        for i, lv in enumerate(self.levels):
            if not COMPONENT_NAME.fullmatch(lv.name) or lv.name in RESERVED_COMPONENTS:
                raise FieldError(f"levels[{i}].name", f"{lv.name!r}; expected a name of letters, digits, '_' and "
                                 f"'-', starting with a letter, other than {', '.join(RESERVED_COMPONENTS)}")
        if not self.levels:
            raise FieldError("levels", "expected at least one cache level")
        if len(self.levels) > MAX_CACHE_LEVELS:
            raise FieldError("levels", f"{len(self.levels)} levels; expected at most {MAX_CACHE_LEVELS} (the cache "
                             "kernels record the level that served an access, or DRAM, in one signed byte)")
        names = [lv.name for lv in self.levels]
        if len(set(names)) != len(names):
            raise FieldError("levels", f"expected distinct names, got {names}")
        for i, lv in enumerate(self.levels):
            sets, rest = divmod(lv.size_bytes, lv.ways * self.line_bytes)
            if rest or not is_power_of_two(sets):
                raise FieldError(
                    f"levels[{i}].size_bytes", f"{lv.size_bytes} B / ({lv.ways} ways x {self.line_bytes} B lines) "
                    f"= {lv.size_bytes / (lv.ways * self.line_bytes):g} sets in {lv.name}; expected a power-of-two "
                    "number of sets", (f"levels[{i}].ways", "line_bytes"))
        if self.replacement == "mru_bits":
            for i, lv in enumerate(self.levels):
                if lv.ways > MAX_MRU_BITS_WAYS:
                    raise FieldError(f"levels[{i}].ways", f"{lv.ways} ways; the mru_bits replacement allows at most "
                                     f"{MAX_MRU_BITS_WAYS} (one 64-bit word of use bits per set); expected fewer ways "
                                     f"in {lv.name} or replacement: lru", ("replacement",))
        # A level name other than the default is checked while the prefetcher is off too; the default name (L2),
        # written or not, only when it is on, so that a hierarchy without an L2 need not name a level for a
        # prefetcher it does not use.
        pf = self.prefetcher
        if (pf.enabled or pf.level != PREFETCHER_DEFAULT_LEVEL) and pf.level not in names:
            raise FieldError("prefetcher.level", f"{pf.level!r} is not a level; expected one of {names}"
                             + ("" if pf.enabled else " (checked with the prefetcher off too)"), ("levels",))
        shared = self.shared_levels()
        for i in range(1, len(shared)):
            if shared[i - 1] and not shared[i]:
                raise FieldError(f"levels[{i - 1}].shared", f"true in {names[i - 1]}, above the private "
                                 f"{names[i]}; expected the shared levels to be the last ones (a private level "
                                 "sits between its core and the shared levels)", (f"levels[{i}].shared",))

    def shared_levels(self) -> tuple[bool, ...]:
        """Whether each level is one cache for all cores (``shared``; unset: only the last level)."""
        last = len(self.levels) - 1
        return tuple(i == last if lv.shared is None else lv.shared for i, lv in enumerate(self.levels))


_DIMENSION_OF_UNIT = {"tck": None, "beats": None, "time": "time", "current": "current", "voltage": "voltage"}
_TYPE_OF_UNIT = {"tck": int, "beats": int, "time": float, "current": float, "voltage": float}


def _dram_param_field(p: DramParam) -> tuple[str, type, object]:
    """The config field of one declared DRAM parameter: required when every standard requires it,
    else absent (None) unless given; the standard's own needs are checked by ``DramSpec``."""
    bounds: dict[str, object] = {"positive": True} if _DIMENSION_OF_UNIT[p.unit] else {"min": p.minimum}
    # ranges that keep a run finite (simulator.config.bounds): timings in tCK, tCK and tREFI themselves
    within = {"tck": DRAM_TCK_COUNT, "tck_s": DRAM_TCK_S, "t_refi_s": DRAM_TREFI_S}
    if within.get(p.key, within.get(p.unit)) is not None:
        bounds["within"] = within.get(p.key, within.get(p.unit))
    if p.unit == "beats":
        bounds["max"] = 1024
    default = MISSING if all(p.standards.get(s) for s in DRAM_STANDARDS) else None
    count = {"tck": "tCK", "beats": "beats"}.get(p.unit)
    return p.key, _TYPE_OF_UNIT[p.unit], param(default, unit=_DIMENSION_OF_UNIT[p.unit], doc=p.describe(),
                                               power_of_two=p.key == "burst_length", count=count, **bounds)


def _model_values(section_spec: object, section: str) -> dict[str, object]:
    """A config section's parameters in the model's names and units (tCK counts, ps, mA, V)."""
    out: dict[str, object] = {}
    for p in section_parameters(section):
        value = getattr(section_spec, p.key)
        if value is not None and p.unit == "time":
            value = seconds_to_ps(value)
        elif value is not None and p.unit == "current":
            value = value * 1e3
        out[p.model_name] = value
    return out


def _config_key(model_name: str) -> str:
    """The config key (within its section) of a DRAM model parameter: ``t_refi_ps`` -> ``t_refi_s``."""
    return PARAMETER_BY_MODEL_NAME[model_name].key


def _timing_post_init(self: object) -> None:
    # the DRAM model's orderings (t_ras >= t_rcd, cwl <= cl, t_ccd_l >= t_ccd_s, ...), at load time
    check_timing_orders(SimpleNamespace(**_model_values(self, "timing")), owner="", name=_config_key)


def _currents_post_init(self: object) -> None:
    # the DRAM model's orderings (IDD0, IDD4R/W, IDD5 >= IDD2N; IPP0, IPP5 >= IPP3N), at load time; those of
    # the standard (IDD3N instead of IDD2N for most) once it is known (DramSpec)
    check_current_orders(SimpleNamespace(**_model_values(self, "currents")), owner="", name=_config_key,
                         bankwise_standby=True, vpp_together=False)


def _given(section_spec: object, section: str) -> set[str]:
    return {p.key for p in section_parameters(section) if getattr(section_spec, p.key) is not None}


#: ``dram.timing``: one field per timing of ``simulator.memory.dram_params.PARAMETERS``; cycle counts in tCK.
DramTimingSpec = make_dataclass(
    "DramTimingSpec", [_dram_param_field(p) for p in section_parameters("timing")], frozen=True, kw_only=True,
    namespace={"__post_init__": _timing_post_init, "__module__": __name__,
               "__doc__": "DDR timing parameters of the memory's standard; cycle counts are in tCK."})

#: ``dram.currents``: one field per current and voltage of ``simulator.memory.dram_params.PARAMETERS``.
DramCurrentsSpec = make_dataclass(
    "DramCurrentsSpec", [_dram_param_field(p) for p in section_parameters("currents")], frozen=True,
    kw_only=True, namespace={"__post_init__": _currents_post_init, "__module__": __name__,
                             "__doc__": "Datasheet IDD (and IPP) currents per device and supply voltages."})


@dataclass(frozen=True)
class DramGeometrySpec:
    """Channels, ranks, banks and the address mapping."""

    # Bounds: twice or more the largest real parts (HBM3: 32 pseudo-channels a stack, 64 banks; DDR5: 2**17
    # rows; LRDIMMs: 8 ranks, two to a channel); the model keeps state per bank and per rank, and performs
    # every refresh of every rank (simulator.engine.limits bounds a run's refreshes).
    channels: int = param(min=1, max=256, doc="independent channels (any count: lines interleave modulo it)")
    ranks_per_channel: int = param(min=1, max=16, power_of_two=True, doc="ranks on each channel")
    banks: int = param(min=1, max=256, power_of_two=True, doc="banks per device")
    rows: int = param(min=1, max=2**24, power_of_two=True, doc="rows per bank")
    columns: int = param(min=1, max=2**16, power_of_two=True, doc="columns per row (device)")
    device_width_bits: int = param(min=1, max=1024, power_of_two=True, doc="data pins per device (x4, x8, x16)")
    bus_width_bits: int = param(min=8, max=4096, power_of_two=True, doc="channel data bus width")
    bank_groups: int = param(1, min=1, max=256, power_of_two=True,
                             doc="bank groups per device (ddr4, ddr5, lpddr5, hbm2, hbm2e, hbm3: 2 or more; ddr3: "
                                 "1); bank b is in group b mod bank_groups")
    mapping: str = param("row:rank:bank:channel:column", doc="address bit fields, most to least significant")
    page_policy: str = param("open", choices=DRAM_PAGE_POLICIES,
                             doc="row-buffer policy: open (rows stay open until a conflict or refresh), "
                                 "open_adaptive (a bank with no queued request to its row precharges, as "
                                 "DRAMSim2's open page), closed (auto-precharge)")
    scheduler: str = param("in_order", choices=DRAM_SCHEDULERS,
                           doc="controller: in_order (column commands in arrival order), frfcfs (first-ready "
                               "within blocks of the transaction queue: reads before writes, row hits together, "
                               "banks round-robin) or ready_first (the request whose column command can issue "
                               "earliest, from the whole read queue; writes drained from their own buffer when "
                               "it is full or no read waits)")
    queue_depth: int = param(32, min=1, within=COUNT, doc="controller transaction queue, requests per channel")
    command_queue_depth: int = param(0, min=0, max=1024,
                                     doc="ready_first only: per-bank command queues of this many requests between "
                                         "the transaction queues and the banks, as DRAMSim3's PER_BANK "
                                         "cmd_queue_size (each bank offers its oldest row hit, or its oldest "
                                         "request; reads and writes of a bank share its queue); 0: none, the "
                                         "controller picks from the whole read queue or write buffer")
    arrival_to_command_cycles: int = param(0, min=0, max=64, recorded_at_default=False, count="tCK",
                                           doc="controller clock cycles (tCK) from a request's arrival to the "
                                               "first cycle a command of it may issue: the controller's input "
                                               "pipeline (DRAMSim3 driven by its trace frontend: 2, one to take "
                                               "the request into its transaction queue, one to move it to its "
                                               "command queue); 0: a command may issue at the arrival")
    power_down: bool = param(False, doc="a rank with no pending request powers down (IDD2P / IDD3P) and "
                                        "pays tXP to wake, as DRAMSim2's USE_LOW_POWER")
    refresh: str = param("simultaneous", choices=DRAM_REFRESH_POLICIES,
                         doc="when the ranks of a channel refresh: simultaneous (every rank at k x tREFI) or "
                             "staggered (rank r of R at (r + 1) x tREFI / R + k x tREFI, one rank every "
                             "tREFI / R, as DRAMSim3's RANK_LEVEL_STAGGERED)")
    refresh_mode: str = param("all_bank", choices=DRAM_REFRESH_MODES,
                              doc="what a refresh command covers: all_bank (every bank of the rank, blocked for "
                                  "t_rfc, every tREFI), same_bank (ddr5's REFsb, of its fine granularity mode: "
                                  "bank k of every bank group, blocked for t_rfc_sb while the others work, one "
                                  "command every tREFI / 2 / (banks per group)) or per_bank (hbm2e's REFSB, "
                                  "hbm3's and lpddr5's REFpb: one bank, on lpddr5 a pair, blocked for t_rfc_pb, "
                                  "the sets in turn within tREFI); the standard decides which it has")

    def __post_init__(self) -> None:
        fields = self.mapping.split(":")
        expected = {"row", "rank", "bank", "channel", "column"}
        if sorted(fields) != sorted(expected):
            raise FieldError("mapping", f"{self.mapping!r}; expected the five fields {sorted(expected)} separated by "
                             "':'")
        if self.bus_width_bits % self.device_width_bits:
            raise FieldError("bus_width_bits", f"{self.bus_width_bits}; expected a multiple of device_width_bits "
                             f"({self.device_width_bits})", ("device_width_bits",))
        if self.command_queue_depth and self.scheduler != "ready_first":
            raise FieldError("command_queue_depth", f"{self.command_queue_depth} with scheduler {self.scheduler!r}; "
                             "expected 0, or scheduler ready_first", ("scheduler",))


@dataclass(frozen=True)
class DramSpec:
    """Main memory: its standard, timing, currents, organisation and the off-chip interface."""

    standard: str = param(choices=tuple(DRAM_STANDARDS),
                          doc="DRAM standard, which decides the timing and current keys the memory has ("
                              + "; ".join(f"{s.name}: {s.source}" for s in DRAM_STANDARDS.values()) + ")")
    timing: DramTimingSpec = param(doc="timing parameters")
    currents: DramCurrentsSpec = param(doc="IDD (and IPP) currents and supply voltages")
    geometry: DramGeometrySpec = param(doc="organisation and mapping")
    interface_energy_j_per_bit: float = param(
        unit="energy_per_bit", min=0.0, doc="off-chip interface (I/O, termination) energy per bit moved"
    )

    def __post_init__(self) -> None:
        for section in ("timing", "currents"):  # the standard's keys, all of them and no others
            try:
                check_standard(self.standard, section, _given(getattr(self, section), section), section)
            except FieldError as exc:
                raise exc.within(section) from None
        try:
            check_burst_clocks(self.standard, self.timing.burst_length, owner="", name=_config_key)
        except FieldError as exc:
            raise exc.within("timing") from None
        try:
            check_current_orders(SimpleNamespace(**_model_values(self.currents, "currents")), owner="",
                                 name=_config_key, bankwise_standby=DRAM_STANDARDS[self.standard].bankwise_standby)
        except FieldError as exc:
            raise exc.within("currents") from None
        try:
            check_geometry_standard(self.standard, self.geometry.bank_groups, self.geometry.ranks_per_channel)
            check_refresh_mode(self.standard, self.geometry.refresh_mode)
        except FieldError as exc:
            raise exc.within("geometry") from None
        if self.geometry.power_down and self.currents.idd3p_a is None:
            raise FieldError("currents.idd3p_a", "missing; geometry.power_down needs the active power-down current",
                             ("geometry.power_down",))


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
    near_memories: dict[str, DramSpec] = field(
        default_factory=dict, metadata={"doc": "memories beside main memory by name (e.g. an HBM stack), each "
                                                "a DRAM like dram; an accelerator coupled near_memory names one "
                                                "as interface.memory to work in it"})
    energy: EnergySpec = field(default_factory=EnergySpec, metadata={"doc": "energy model"})

    def __post_init__(self) -> None:
        levels = [lv.name for lv in self.caches.levels]
        for section, what, names in (("accelerators", "a unit name", self.accelerators),
                                     ("near_memories", "a memory name", self.near_memories)):
            for name in names:
                if not COMPONENT_NAME.fullmatch(name):
                    raise FieldError(section, f"{name!r}: expected {what} of letters, digits, '_' and '-', "
                                     "starting with a letter (it names trace units, --set keys and result columns)")
                reserved = (*RESERVED_COMPONENTS, BACKGROUND_REQUESTER, *levels)
                if name in reserved:
                    taken = ("the core's unit name" if name == "host" else "the requester of DRAM background and "
                             "refresh energy" if name == BACKGROUND_REQUESTER else
                             "the name of another component's results")
                    level = (f"caches.levels[{levels.index(name)}].name",) if name in levels else ()
                    raise FieldError(f"{section}.{name}", f"{name!r} is {taken}; expected another name (taken: "
                                     f"{', '.join(reserved)})", level)
        for name in self.near_memories:
            if name in self.accelerators:
                raise FieldError(f"near_memories.{name}", f"{name!r} is also an accelerator's name; expected another",
                                 (f"accelerators.{name}",))
        for name, acc in self.accelerators.items():
            memory = acc.interface.memory
            if memory and memory not in self.near_memories:
                known = ", ".join(self.near_memories) or "none"
                raise FieldError(f"accelerators.{name}.interface.memory", f"{memory!r}: expected the name of a "
                                 f"near_memories entry (given: {known})", ("near_memories",))
        used = {acc.interface.memory for acc in self.accelerators.values()}
        for name in self.near_memories:
            if name not in used:
                raise FieldError(f"near_memories.{name}", "no accelerator works in it; expected an accelerator "
                                 f"coupled near_memory with interface.memory: {name}", ("accelerators",))
        if self.host.uncore_read_entries is not None and self.dram.geometry.scheduler == "ready_first":
            raise FieldError("host.uncore_read_entries", "set with dram.geometry.scheduler ready_first; expected "
                             "scheduler in_order or frfcfs (ready_first serves a chunk channel by channel, not in "
                             "time order)", ("dram.geometry.scheduler",))
        _check_memory_line(self.dram, "dram", self.caches.line_bytes)
        for name, memory in self.near_memories.items():
            _check_memory_line(memory, f"near_memories.{name}", self.caches.line_bytes)
        if self.host.cores > 1 and not any(self.caches.shared_levels()):
            last = len(self.caches.levels) - 1
            raise FieldError(f"caches.levels[{last}].shared", f"false with host.cores {self.host.cores}: no level is "
                             "shared; expected at least the last level shared (the cores reach memory and keep "
                             "coherence through it)", ("host.cores",))
        _check_cache_state(self.caches, self.host.cores)


#: Bytes the simulator keeps per cache line of every level (simulator.memory.cache_kernel.new_state: a stamp and
#: its use bits, 8 B each)
CACHE_STATE_BYTES_PER_LINE = 16
#: Most cache state of one system, over each core's private levels and the shared ones: four of the largest level
#: (4 GiB of cache, 1 GiB of state), so that a many-core host with large private levels is refused by name instead
#: of running out of memory as it is built.
MAX_CACHE_STATE_BYTES = 4 * 2**30


def _check_cache_state(caches: CachesSpec, cores: int) -> None:
    """Refuse caches whose state, each private level once per core, exceeds ``MAX_CACHE_STATE_BYTES``: naming
    ``host.cores`` where one core's would fit, else the levels."""
    shared = caches.shared_levels()

    def state(n_cores: int) -> int:
        return sum(lv.size_bytes // caches.line_bytes * CACHE_STATE_BYTES_PER_LINE * (1 if sh else n_cores)
                   for lv, sh in zip(caches.levels, shared))

    held, most = state(cores), MAX_CACHE_STATE_BYTES
    if held <= most:
        return
    how = f"{held / 2**30:.4g} GiB of simulator state ({CACHE_STATE_BYTES_PER_LINE} B a line)"
    if state(1) > most:
        raise FieldError("caches.levels", f"{[lv.size_bytes for lv in caches.levels]} B: the levels hold {how} "
                         f"with one core; expected at most {most // 2**30} GiB (smaller caches or longer lines)",
                         ("caches.line_bytes", "host.cores"))
    private = [lv.name for lv, sh in zip(caches.levels, shared) if not sh]
    raise FieldError("host.cores", f"{cores} cores, each with its own {', '.join(private)}: the caches hold {how}; "
                     f"expected at most {most // 2**30} GiB (fewer cores or smaller private levels)",
                     ("caches.levels", "caches.line_bytes"))


def _check_memory_line(memory: DramSpec, at: str, line_bytes: int) -> None:
    """The DRAM model's rules across a memory (at key ``at`` of the system) and the cache line of
    ``line_bytes``: its organisation holds whole lines, and a line is one burst."""
    def name(model_name: str) -> str:  # a DRAM model field as the system's key
        if model_name == "line_bytes":
            return "caches.line_bytes"
        p = PARAMETER_BY_MODEL_NAME.get(model_name)
        return f"{at}.{p.section}.{p.key}" if p else f"{at}.geometry.{model_name}"

    try:
        geometry = memory_geometry(memory, line_bytes)
    except FieldError as exc:
        raise exc.renamed(name) from None
    timing = dram_timing(memory)
    check_line_is_one_burst(timing, geometry, name)
    _check_command_currents(timing, memory_currents(memory), geometry, name)


def _check_command_currents(timing: DramTiming, currents: DramCurrents, geometry: DramGeometry,
                            name: Callable[[str], str]) -> None:
    """FieldError unless each command current is at least the standby current its command's time would draw
    anyway (``power.command_current_floors_ma``): else the energy model would charge the command a negative
    energy. On a standard whose IDD3N holds every bank open this floor lies above IDD2N, the bound the
    currents' own check applies."""
    for model_name, floor in command_current_floors_ma(timing, currents, geometry).items():
        value = getattr(currents, model_name)
        if value is not None and value < floor * (1 - 1e-12):  # beyond the rounding of the floor's arithmetic
            why = ("the standby with a bank open over tRAS, IDD2N over the rest of tRC" if model_name == "idd0_ma"
                   else "the standby with a bank open")
            reads = ("idd2n_ma", "idd3n_ma", "banks", *(("t_ras", "t_rc") if model_name == "idd0_ma" else ()))
            raise FieldError(name(model_name), f"{format_quantity(value * 1e-3, 'A')}; expected at least "
                             f"{format_quantity(floor * 1e-3, 'A')}: a command draws at least the standby current "
                             f"its time would draw anyway ({why}), else its energy would be negative",
                             tuple(name(r) for r in reads), owner="")


def memory_geometry(dram: DramSpec, line_bytes: int) -> DramGeometry:
    """The DRAM model's organisation of ``dram.geometry`` with lines of ``line_bytes``."""
    g = dram.geometry
    return DramGeometry(
        channels=g.channels, ranks_per_channel=g.ranks_per_channel, banks=g.banks, rows=g.rows,
        columns=g.columns, device_width_bits=g.device_width_bits, bus_width_bits=g.bus_width_bits,
        line_bytes=line_bytes, mapping=g.mapping, bank_groups=g.bank_groups,
    )


def dram_geometry(spec: SystemSpec) -> DramGeometry:
    """The DRAM model's organisation from ``spec.dram.geometry`` and the cache line size."""
    return memory_geometry(spec.dram, spec.caches.line_bytes)


def dram_timing(spec: DramSpec) -> DramTiming:
    """The DRAM model's timing of ``spec``: counts in tCK, tCK and tREFI in ps."""
    return DramTiming(standard=spec.standard, **_model_values(spec.timing, "timing"))


def memory_parameters(dram: DramSpec, line_bytes: int) -> tuple[DramTiming, DramCurrents, DramGeometry]:
    """The DRAM model's parameters of ``dram`` (timing in tCK and ps, currents in mA) with lines of ``line_bytes``."""
    return dram_timing(dram), memory_currents(dram), memory_geometry(dram, line_bytes)


def memory_currents(dram: DramSpec) -> DramCurrents:
    """The DRAM model's currents of ``dram`` (mA)."""
    return DramCurrents(standard=dram.standard, **_model_values(dram.currents, "currents"))


def dram_parameters(spec: SystemSpec) -> tuple[DramTiming, DramCurrents, DramGeometry]:
    """The main memory's DRAM model parameters of ``spec`` (timing in tCK and ps, currents in mA)."""
    return memory_parameters(spec.dram, spec.caches.line_bytes)


def memories_without_currents(spec: SystemSpec) -> list[tuple[str, str]]:
    """(key, standard) of each memory of ``spec`` (``dram``, ``near_memories.<name>``) that declares no currents:
    its energy, and so a run's total, is not known (``simulator.memory.power``)."""
    memories = [("dram", spec.dram), *((f"near_memories.{name}", m) for name, m in spec.near_memories.items())]
    return [(key, m.standard) for key, m in memories if m.currents.vdd_v is None]
