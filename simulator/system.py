"""Composition root: builds the components of a system from a validated SystemSpec and wires them.

The wiring is a networkx graph built from the spec (``system_graph``): components as nodes (the host
core, or ``core0``, ``core1``, ... with a copy of each private level apiece, each cache level, the memory
controller, each DRAM channel, each accelerator and its interface's link, each near memory), links as edges
carrying the hop's latency (s), bandwidth (B/s) and energy (J/B) where the spec gives them (the energy where
the energy model charges it per byte). A requester's route to memory is a path on it (``routes``); the build
checks that every requester reaches the memory controller and that no component lies on no route
(``check_wiring``); a near memory hangs off the link of
each accelerator that works in it. Components never import each other; this module is the only place that
knows how they connect.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx
import simpy

from simulator.accel.kinds import BUILDERS
from simulator.accel.registry import BuildContext
from simulator.config.plugins import PluginError
from simulator.config.schema import DramSpec, SystemSpec, dram_parameters, memory_parameters
from simulator.engine import ClockDomain, new_environment
from simulator.host.core import CoreTiming, HostCore, StageStats, merged_stages
from simulator.memory.cache import CacheGeometry, CacheHierarchy, StreamPrefetcher
from simulator.memory.core_caches import CoreCaches
from simulator.memory.dram import DramSystem
from simulator.memory.dram_params import STANDARDS as DRAM_STANDARDS, bursts_per_line, peak_bandwidth_bytes_per_s
from simulator.memory.memory_map import MemoryMap, line_ranges
from simulator.interconnect.couplings import COUPLING_STRATEGIES, FIRST_LEVEL, LAST_LEVEL, MEMORY_CONTROLLER
from simulator.interconnect.interface import Interface
from simulator.memory.port import MemoryPort
from simulator.units import seconds_to_ps


def build_dram(spec: SystemSpec) -> DramSystem:
    """The DRAM model of ``spec.dram``."""
    return build_memory(spec.dram, spec.caches.line_bytes)


def build_memory(dram: DramSpec, line_bytes: int) -> DramSystem:
    """The DRAM model of one memory (main memory or a near memory) with lines of ``line_bytes``."""
    g = dram.geometry
    return DramSystem(*memory_parameters(dram, line_bytes), page_policy=g.page_policy, queue_depth=g.queue_depth,
                      scheduler=g.scheduler, power_down=g.power_down, refresh=g.refresh,
                      command_queue_depth=g.command_queue_depth,
                      arrival_to_command_cycles=g.arrival_to_command_cycles, refresh_mode=g.refresh_mode)


def build_caches(spec: SystemSpec) -> CacheHierarchy | CoreCaches:
    """The host cache hierarchy of ``spec.caches``: one, or per-core views of private and shared levels
    when the host has several cores (``simulator.memory.core_caches``)."""
    cs = spec.caches
    levels = [CacheGeometry(lv.name, lv.size_bytes, lv.ways, cs.line_bytes) for lv in cs.levels]
    pf = cs.prefetcher
    prefetcher = None
    if pf.enabled:
        names = [lv.name for lv in cs.levels]
        prefetcher = StreamPrefetcher(level=names.index(pf.level), degree=pf.degree, n_streams=pf.streams, enabled=True)
    if spec.host.cores > 1:
        return CoreCaches(levels, cs.shared_levels(), spec.host.cores, prefetcher, cs.replacement)
    return CacheHierarchy(levels, prefetcher, cs.replacement)


def dram_unloaded_latency_ps(spec: SystemSpec) -> int:
    """DRAM device time of an isolated read to a closed bank: tRCD + CL + the line's bursts, back to back on the
    data bus as the DRAM model serves them (one burst, or several on a channel narrower than a line), ps."""
    t = spec.dram.timing
    timing, _, geometry = dram_parameters(spec)
    bursts = bursts_per_line(timing, geometry)
    return seconds_to_ps((t.t_rcd + t.cl + bursts * t.burst_length / DRAM_STANDARDS[spec.dram.standard].beats_per_tck)
                         * t.tck_s)


@dataclass
class System:
    """A built system: SimPy environment, clocks, memory, host cores and the wiring graph.

    ``cores[t]`` runs trace thread t; ``host`` is ``cores[0]`` (the only core of a single-core host)."""

    spec: SystemSpec
    env: simpy.Environment
    host_clock: ClockDomain
    caches: CacheHierarchy | CoreCaches
    dram: DramSystem
    host: HostCore
    graph: nx.DiGraph
    units: dict[str, object] = field(default_factory=dict)
    cores: list[HostCore] = field(default_factory=list)

    def host_flops(self) -> int:
        """Floating-point operations the host's cores executed, flop."""
        return sum(core.flops for core in self.cores) if len(self.cores) > 1 else self.host.flops

    def host_bytes_by_level(self):
        """Bytes the host's cores found at each cache level (last entry: DRAM), B (numpy array)."""
        return sum(core.bytes_by_level for core in self.cores) if len(self.cores) > 1 else self.host.bytes_by_level

    def host_stages(self) -> dict[str, StageStats]:
        """The host's stage records, summed over its cores by stage name (``merged_stages``)."""
        return merged_stages(self.cores)
    near_memories: dict[str, DramSystem] = field(default_factory=dict)  # by name (spec.near_memories)

    def unit_names(self) -> list[str]:
        """Units a trace may name: the host and every accelerator."""
        return ["host", *self.units]

    def place_operands(self, commands: Iterable[dict]) -> None:
        """Keep the operands of every accelerator that works in a near memory in that memory: the regions the
        offload ``commands`` (their checked params) name as inputs and outputs (a region two near memories claim
        stays in the first). The DRAM traffic of the cores and of every unit (and its driver) is then served by
        the memory that holds each line (``simulator.memory.memory_map``); without such operands the cores and
        the units in main memory keep main memory alone, and a unit in a near memory its own."""
        regions: dict[str, list] = {name: [] for name in self.near_memories}
        for params in commands:
            memory = self.spec.accelerators[params["unit"]].interface.memory
            if memory:
                regions[memory] += [*params.get("inputs", ()), *params.get("outputs", ())]
        line_bytes = self.spec.caches.line_bytes
        homes = [(self.near_memories[name], line_ranges(held, line_bytes)) for name, held in regions.items() if held]
        if homes:
            memory_map = MemoryMap(self.dram, homes)
            for core in self.cores:
                core.port.dram = memory_map
            for unit in self.units.values():  # a unit in a near memory that holds no operands has no traffic
                if memory_map.index_of(unit.interface.home) is not None:
                    unit.interface.serve_through(memory_map)

    @property
    def last_completion_ps(self) -> int:
        """The latest data burst any memory (main or near) has served so far, ps."""
        return max([self.dram.last_completion_ps, *(m.last_completion_ps for m in self.near_memories.values())])

    def memories_idle_until(self, t_ps: int) -> None:
        """Every memory's refreshes and background state up to ``t_ps`` (the end of the run), ps."""
        for memory in (self.dram, *self.near_memories.values()):
            memory.idle_until(t_ps)


def system_graph(spec: SystemSpec) -> nx.DiGraph:
    """The system's components and links (module docstring). Node attribute ``kind``: core, cache,
    memory_controller, channel, accelerator or link; edge attributes ``latency_s``, ``bandwidth_bytes_per_s``
    and ``energy_j_per_byte`` (None where the energy model charges no energy per byte on the hop: a cache level's
    per-byte cost is charged under ``inclusive_per_byte`` only, the ``actions`` model pricing each of its actions;
    a memory's edge carries its off-chip interface energy, charged on the bytes it moves, main memory's but a
    near-memory unit's, its commands priced apart)."""
    graph = nx.DiGraph()
    f = spec.host.frequency_hz
    per_byte_caches = spec.energy.model == "inclusive_per_byte"  # else the caches are priced per action
    levels = spec.caches.levels
    n_cores = spec.host.cores
    shared = spec.caches.shared_levels() if n_cores > 1 else (True,) * len(levels)
    for core in range(n_cores):
        previous = "host" if n_cores == 1 else core_name(core)
        graph.add_node(previous, kind="core")
        for lv, is_shared in zip(levels, shared):
            node = lv.name if is_shared else private_level_name(lv.name, core)
            graph.add_node(node, kind="cache", size_bytes=lv.size_bytes)
            graph.add_edge(previous, node, latency_s=lv.latency_cycles / f, bandwidth_bytes_per_s=None,
                           energy_j_per_byte=lv.energy_j_per_byte if per_byte_caches else None)
            previous = node
    graph.add_node(MEMORY_CONTROLLER, kind="memory_controller")
    graph.add_edge(previous, MEMORY_CONTROLLER, latency_s=spec.host.memory_path_latency_s,
                   bandwidth_bytes_per_s=None,
                   energy_j_per_byte=spec.host.memory_path_energy_j_per_byte)
    timing, _, geometry = dram_parameters(spec)
    for channel in range(geometry.channels):
        name = f"DRAM channel {channel}"
        graph.add_node(name, kind="channel")
        graph.add_edge(MEMORY_CONTROLLER, name, latency_s=dram_unloaded_latency_ps(spec) * 1e-12,
                       bandwidth_bytes_per_s=peak_bandwidth_bytes_per_s(timing, geometry) / geometry.channels,
                       energy_j_per_byte=8 * spec.dram.interface_energy_j_per_bit)  # its off-chip interface
    entry = {LAST_LEVEL: levels[-1].name,
             FIRST_LEVEL: levels[0].name if shared[0] else private_level_name(levels[0].name, 0)}
    for name, acc in spec.accelerators.items():
        link = f"{name} link ({acc.interface.coupling})"
        graph.add_node(name, kind="accelerator", accelerator_kind=acc.kind)
        graph.add_node(link, kind="link")
        graph.add_edge(name, link, latency_s=acc.interface.latency_s,
                       bandwidth_bytes_per_s=acc.interface.bandwidth_bytes_per_s,
                       energy_j_per_byte=acc.interface.energy_j_per_bit * 8)
        target = COUPLING_STRATEGIES[acc.interface.coupling].entry
        graph.add_edge(link, entry.get(target, target), latency_s=None, bandwidth_bytes_per_s=None,
                       energy_j_per_byte=None)
        if acc.interface.memory:  # its data path ends in its own memory
            graph.add_node(acc.interface.memory, kind="near_memory")
            graph.add_edge(link, acc.interface.memory, latency_s=None, bandwidth_bytes_per_s=None,
                           energy_j_per_byte=8 * spec.near_memories[acc.interface.memory].interface_energy_j_per_bit)
    for name in spec.near_memories:
        graph.add_node(name, kind="near_memory")  # one no accelerator names is reported by check_wiring
    return graph


def core_name(core: int) -> str:
    """The name of core ``core`` of a multi-core host (graph node, results component)."""
    return f"core{core}"


def private_level_name(level: str, core: int) -> str:
    """The graph node of core ``core``'s copy of private cache level ``level``."""
    return f"{level}.{core_name(core)}"


def requesters(graph: nx.DiGraph) -> list[str]:
    """The nodes that issue memory requests: the cores and the accelerators, in graph order."""
    return [n for n, kind in graph.nodes(data="kind") if kind in ("core", "accelerator")]


def routes(graph: nx.DiGraph) -> dict[str, list[str]]:
    """Each requester's route to the memory controller (the shortest path), or [] if it has none."""
    return {r: (nx.shortest_path(graph, r, MEMORY_CONTROLLER) if nx.has_path(graph, r, MEMORY_CONTROLLER) else [])
            for r in requesters(graph)}


def check_wiring(graph: nx.DiGraph) -> None:
    """Every requester reaches the memory controller, every channel hangs off it, and every other
    component lies on some requester's route (no dangling link); ValueError naming the node otherwise."""
    found = routes(graph)
    for requester, route in found.items():
        if not route:
            raise ValueError(f"system wiring: {requester!r} has no route to the {MEMORY_CONTROLLER}")
    on_route = {node for route in found.values() for node in route}
    for node, kind in graph.nodes(data="kind"):
        if kind == "near_memory":
            if not any(graph.nodes[p].get("kind") == "link" for p in graph.predecessors(node)):
                raise ValueError(f"system wiring: near memory {node!r} is reached by no accelerator's link")
        elif kind == "channel":
            if not graph.has_edge(MEMORY_CONTROLLER, node):
                raise ValueError(f"system wiring: {node!r} is not attached to the {MEMORY_CONTROLLER}")
        elif node not in on_route:
            raise ValueError(f"system wiring: {node!r} ({kind}) lies on no requester's route to memory")


def build_system(spec: SystemSpec) -> System:
    """Build every component of ``spec`` and wire host -> caches -> DRAM, and each accelerator through its interface."""
    graph = system_graph(spec)
    check_wiring(graph)
    env = new_environment()
    clock = ClockDomain("host", spec.host.frequency_hz)
    caches = build_caches(spec)
    dram = build_dram(spec)
    path_ps = seconds_to_ps(spec.host.memory_path_latency_s)
    if spec.host.uncore_read_entries is not None:  # every core's port is the requester "host" (below)
        dram.limit_reads(spec.host.uncore_read_entries, path_ps, ("host",))
    shared = spec.caches.shared_levels()
    first_shared = shared.index(True) if True in shared else None
    timing = CoreTiming(
        level_latency_cycles=tuple(lv.latency_cycles for lv in spec.caches.levels),
        dram_latency_ps=path_ps + dram_unloaded_latency_ps(spec),
        path_latency_ps=path_ps,
        snoop_latency_cycles=0 if first_shared is None else spec.caches.levels[first_shared].latency_cycles,
    )
    # every core's port is the requester "host": the caches and DRAM count the host's work as one
    views = caches.views if isinstance(caches, CoreCaches) else [caches]
    cores = [HostCore(name="host" if len(views) == 1 else core_name(k), clock=clock,
                      port=MemoryPort("host", view, dram, start_level=0), timing=timing,
                      flops_per_cycle=spec.host.flops_per_cycle, loads_per_cycle=spec.host.loads_per_cycle,
                      max_outstanding_misses=spec.host.max_outstanding_misses)
             for k, view in enumerate(views)]
    system = System(spec=spec, env=env, host_clock=clock, caches=caches, dram=dram, host=cores[0], graph=graph,
                    cores=cores)
    for name, memory in spec.near_memories.items():
        system.near_memories[name] = build_memory(memory, spec.caches.line_bytes)
    for name, acc in spec.accelerators.items():
        memory = system.near_memories.get(acc.interface.memory, dram)
        interface = Interface(name, acc.interface, caches, memory, spec.caches.line_bytes)
        unit = BUILDERS[acc.kind](name, acc, BuildContext(env, interface, spec.host.frequency_hz))
        if not isinstance(getattr(type(unit), "COMMAND", None), type):  # an installed kind may lack one
            raise PluginError(f"accelerator kind {acc.kind!r}: its unit class {type(unit).__name__} declares no "
                              "offload command (COMMAND); expected a command schema (simulator/README.md, "
                              "\"Accelerator commands\")")
        system.units[name] = unit
    return system
