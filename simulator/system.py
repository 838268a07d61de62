"""Composition root: builds the components of a system from a validated SystemSpec and wires them.

The wiring is kept as a networkx graph (components as nodes, links as edges)
so that a run can report and check its topology: every requester must reach
DRAM. Components never import each other; this module is the only place that
knows how they connect.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import simpy

from simulator.accel.registry import BUILDERS, BuildContext
from simulator.config.schema import SystemSpec, dram_parameters
from simulator.engine import ClockDomain, new_environment
from simulator.host.core import CoreTiming, HostCore
from simulator.memory.cache import CacheGeometry, CacheHierarchy, PrefetcherSpec
from simulator.memory.dram import DramSystem
from simulator.interconnect.interface import Interface
from simulator.memory.port import MemoryPort
from simulator.config.units import seconds_to_ps


def build_dram(spec: SystemSpec) -> DramSystem:
    """The DRAM model of ``spec.dram``."""
    g = spec.dram.geometry
    return DramSystem(*dram_parameters(spec), page_policy=g.page_policy, queue_depth=g.queue_depth,
                      scheduler=g.scheduler, power_down=g.power_down)


def build_caches(spec: SystemSpec) -> CacheHierarchy:
    """The host cache hierarchy of ``spec.caches``."""
    cs = spec.caches
    levels = [CacheGeometry(lv.name, lv.size_bytes, lv.ways, cs.line_bytes) for lv in cs.levels]
    pf = cs.prefetcher
    prefetcher = None
    if pf.enabled:
        names = [lv.name for lv in cs.levels]
        prefetcher = PrefetcherSpec(level=names.index(pf.level), degree=pf.degree, n_streams=pf.streams, enabled=True)
    return CacheHierarchy(levels, prefetcher, cs.replacement)


def dram_unloaded_latency_ps(spec: SystemSpec) -> int:
    """DRAM device time of an isolated read to a closed bank: tRCD + CL + burst, ps."""
    t = spec.dram.timing
    return seconds_to_ps((t.t_rcd + t.cl + t.burst_length / 2) * t.tck_s)


@dataclass
class System:
    """A built system: SimPy environment, clocks, memory, host core and the wiring graph."""

    spec: SystemSpec
    env: simpy.Environment
    host_clock: ClockDomain
    caches: CacheHierarchy
    dram: DramSystem
    host: HostCore
    graph: nx.DiGraph
    units: dict[str, object] = field(default_factory=dict)

    def unit_names(self) -> list[str]:
        """Units a trace may name: the host and every accelerator."""
        return ["host", *self.units]


def build_system(spec: SystemSpec) -> System:
    """Build every component of ``spec`` and wire host -> caches -> DRAM."""
    env = new_environment()
    clock = ClockDomain("host", spec.host.frequency_hz)
    caches = build_caches(spec)
    dram = build_dram(spec)
    port = MemoryPort("host", caches, dram, start_level=0)
    path_ps = seconds_to_ps(spec.host.memory_path_latency_s)
    timing = CoreTiming(
        level_latency_cycles=tuple(lv.latency_cycles for lv in spec.caches.levels),
        dram_latency_ps=path_ps + dram_unloaded_latency_ps(spec),
        path_latency_ps=path_ps,
    )
    host = HostCore(
        name="host", clock=clock, port=port, timing=timing, flops_per_cycle=spec.host.flops_per_cycle,
        loads_per_cycle=spec.host.loads_per_cycle, max_outstanding_misses=spec.host.max_outstanding_misses,
    )
    graph = nx.DiGraph()
    chain = ["host", *(lv.name for lv in spec.caches.levels), "DRAM"]
    graph.add_nodes_from(chain)
    for a, b in zip(chain, chain[1:]):
        graph.add_edge(a, b, kind="cache" if b != "DRAM" else "memory_bus")
    system = System(spec=spec, env=env, host_clock=clock, caches=caches, dram=dram, host=host, graph=graph)
    for name, acc in spec.accelerators.items():
        interface = Interface(name, acc.interface, caches, dram, spec.caches.line_bytes)
        system.units[name] = BUILDERS[acc.kind](name, acc, BuildContext(env, interface, spec.host.frequency_hz))
        attach = {"dram": "DRAM", "near_memory": "DRAM", "pcie": "DRAM", "in_pipeline": "host"}.get(
            acc.interface.coupling, spec.caches.levels[-1].name)
        graph.add_node(name)
        graph.add_edge(name, attach, kind=acc.interface.coupling)
    check_wiring(system)
    return system


def check_wiring(system: System) -> None:
    """Every unit must reach DRAM through the graph."""
    for unit in system.unit_names():
        if unit not in system.graph or not nx.has_path(system.graph, unit, "DRAM"):
            raise ValueError(f"system wiring: unit {unit!r} has no path to DRAM")
