"""Couplings of an accelerator to host and memory, as interfaces (not accelerator code).

An ``Interface`` does three things for an accelerator unit:
- host side, before an offload: the driver's overhead (host cycles) and the
  coherence work the coupling needs (clflush of inputs and outputs for the
  non-coherent ``dram``/``near_memory``/``pcie`` couplings, evict-to-LLC for
  ``llc``, nothing for the coherent ones);
- the accelerator's data path: ``read``/``write`` of line chunks, returning
  when the data has arrived (a link in series with DRAM, or the LLC port, or the
  device's own memory, or the host's L1 for an in-pipeline unit);
- host side, after completion: invalidating stale host copies of the outputs
  (``dram``/``near_memory``/``pcie``: every level; ``llc``: the levels above the
  LLC), and for ``pcie`` the copies in and out over the link.
What each coupling does is its strategy object (``simulator.interconnect.couplings``); the same
accelerator code therefore runs at any placement.

Requesters: the accelerator's data path counts its cache, DRAM and link work
for the unit's own name; the host-side coherence work and the pcie copies (the
driver and its DMA) for ``<unit>.driver`` (``driver_name``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from simulator.config.accelerators import InterfaceSpec
from simulator.interconnect.couplings import COUPLING_STRATEGIES, Coupling
from simulator.interconnect.link import Link
from simulator.memory.cache import CacheHierarchy
from simulator.memory.core_caches import CoherentStores
from simulator.memory.dram import DramSystem
from simulator.memory.memory_map import MemoryMap
from simulator.memory.port import CHUNK_LINES, MemoryPort
from simulator.units import seconds_to_ps

def driver_name(unit: str) -> str:
    """The requester name of ``unit``'s driver: its coherence work on the host and its DMA copies."""
    return f"{unit}.driver"


def region_runs(regions: list, line_bytes: int) -> list[tuple[int, int]]:
    """The lines covered by ``[[addr, nbytes], ...]`` byte regions as runs ``(first, end)`` of consecutive
    line numbers, in order of first appearance, each line once: a region's lines that no earlier region
    covered, ascending (a region that is both input and output is flushed once)."""
    runs = [(int(a) // line_bytes, (int(a) + int(n) - 1) // line_bytes + 1) for a, n in regions if int(n) > 0]
    if len(runs) < 2:
        return runs
    lo = np.array([r[0] for r in runs])
    hi = np.array([r[1] for r in runs])
    by_start = np.argsort(lo, kind="stable")
    if np.all(lo[by_start[1:]] >= hi[by_start[:-1]]):  # no two runs share a line: nothing to drop
        return runs
    starts: list[int] = []  # the lines seen so far, as disjoint runs sorted by start
    ends: list[int] = []
    out = []
    for first, end in runs:
        pos = first
        k = bisect.bisect_right(ends, first)  # the first seen run that ends after ``first``
        while k < len(starts) and starts[k] < end and pos < end:
            if starts[k] > pos:
                out.append((pos, starts[k]))
            pos = max(pos, ends[k])
            k += 1
        if pos < end:
            out.append((pos, end))
        i = bisect.bisect_left(ends, first)  # merge [first, end) into the seen runs it touches
        j = bisect.bisect_right(starts, end)
        if i < j:
            first, end = min(first, starts[i]), max(end, ends[j - 1])
        starts[i:j], ends[i:j] = [first], [end]
    return out


def partial_lines(starts: np.ndarray, ends: np.ndarray, line_bytes: int) -> np.ndarray:
    """Sorted distinct numbers of the lines that byte ranges [starts[i], ends[i]) cover only in part: the lines at
    the unaligned ends of the runs the ranges form together (ranges that touch or overlap join one run)."""
    lo = np.asarray(starts, dtype=np.int64)
    hi = np.asarray(ends, dtype=np.int64)
    if len(lo) > 1 and np.any(lo[1:] < lo[:-1]):  # a tile's rows come sorted: sort only what is not
        order = np.argsort(lo, kind="stable")
        lo, hi = lo[order], hi[order]
    keep = hi > lo
    lo, hi = lo[keep], hi[keep]
    if not len(lo):
        return np.zeros(0, dtype=np.int64)
    reach = np.maximum.accumulate(hi)  # a run goes on while a range starts at or before all before it reach
    new_run = np.ones(len(lo), dtype=bool)
    new_run[1:] = lo[1:] > reach[:-1]
    run_lo = lo[new_run]
    run_hi = reach[np.r_[np.flatnonzero(new_run)[1:] - 1, len(lo) - 1]]
    heads = run_lo[run_lo % line_bytes != 0] // line_bytes
    tails = (run_hi[run_hi % line_bytes != 0] - 1) // line_bytes
    return np.unique(np.concatenate((heads, tails)))


def span_partial_lines(addr: int, nbytes: int, line_bytes: int) -> np.ndarray:
    """``partial_lines`` of the one byte range [addr, addr + nbytes) in plain arithmetic (a stencil engine asks it
    of every burst): its first line where it starts off a line boundary, its last where it ends off one."""
    end = addr + nbytes
    if nbytes <= 0:
        return np.zeros(0, dtype=np.int64)
    ends = [addr // line_bytes] if addr % line_bytes else []
    if end % line_bytes and (end - 1) // line_bytes not in ends:
        ends.append((end - 1) // line_bytes)
    return np.array(ends, dtype=np.int64)


def region_partial_lines(regions: list, line_bytes: int) -> np.ndarray:
    """``partial_lines`` of ``[[addr, nbytes], ...]`` byte regions."""
    if not regions:
        return np.zeros(0, dtype=np.int64)
    if len(regions) == 1:
        return span_partial_lines(int(regions[0][0]), int(regions[0][1]), line_bytes)
    addrs = np.array([int(a) for a, _ in regions], dtype=np.int64)
    sizes = np.array([int(n) for _, n in regions], dtype=np.int64)
    return partial_lines(addrs, addrs + sizes, line_bytes)


def region_lines(regions: list, line_bytes: int) -> np.ndarray:
    """Line numbers covered by ``[[addr, nbytes], ...]`` byte regions, in order of first
    appearance, each once (``region_runs``)."""
    runs = region_runs(regions, line_bytes)
    if not runs:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.arange(first, end, dtype=np.int64) for first, end in runs])


def region_line_chunks(regions: list, line_bytes: int, chunk_lines: int) -> Iterator[np.ndarray]:
    """``region_lines(regions, line_bytes)`` in consecutive pieces of ``chunk_lines`` lines (the last may be
    shorter), made one at a time, so that a large region is never held whole."""
    piece: list[np.ndarray] = []
    held = 0
    for first, end in region_runs(regions, line_bytes):
        while first < end:
            take = min(end - first, chunk_lines - held)
            piece.append(np.arange(first, first + take, dtype=np.int64))
            held += take
            first += take
            if held == chunk_lines:
                yield piece[0] if len(piece) == 1 else np.concatenate(piece)
                piece, held = [], 0
    if held:
        yield piece[0] if len(piece) == 1 else np.concatenate(piece)


@dataclass
class Interface:
    """Runtime of one accelerator's coupling (see module docstring)."""

    name: str
    spec: InterfaceSpec
    caches: CacheHierarchy
    # the memory its data path reaches: main memory, or its near memory (spec.memory); once operands are placed
    # in near memories, the memory map that serves each line by the memory holding it (``serve_through``)
    dram: DramSystem | MemoryMap
    line_bytes: int
    home: DramSystem = field(init=False)  # ``dram`` as built: the memory the unit works in (its commands' addresses)
    _home_index: int = field(init=False, default=0)  # ``home``'s index in the memory map that serves it, if one does
    link: Link = field(init=False)
    link_out: Link = field(init=False)  # pcie copies out: ``link`` itself unless the spec is full duplex
    strategy: Coupling = field(init=False)
    device_memory: Link | None = field(init=False, default=None)
    offchip_exempt_bytes: int = field(init=False, default=0)  # DRAM bytes that never cross the off-chip interface
    # bytes its DMA moved at a memory controller or inside a memory (the unit's data path at dram or near_memory,
    # its driver's pcie copies), by requester: they cross neither the host's caches nor its memory path
    path_exempt_bytes: dict[str, int] = field(init=False, default_factory=dict)
    _ports: dict[int, MemoryPort] = field(init=False, default_factory=dict)  # ``through_caches``'s, by entry level

    def __post_init__(self) -> None:
        s = self.spec
        self.link = Link(f"{self.name}.link", s.bandwidth_bytes_per_s, seconds_to_ps(s.latency_s), s.energy_j_per_bit)
        self.link_out = (Link(f"{self.name}.link_out", s.bandwidth_bytes_per_s, seconds_to_ps(s.latency_s),
                              s.energy_j_per_bit) if s.full_duplex else self.link)
        self.strategy = COUPLING_STRATEGIES[s.coupling]
        self.home = self.dram
        if self.strategy.copies and s.device_memory_bandwidth_bytes_per_s > 0:
            self.device_memory = Link(f"{self.name}.device_memory", s.device_memory_bandwidth_bytes_per_s)
        self.llc_level = len(self.caches.levels) - 1
        self.driver = driver_name(self.name)

    @property
    def coupling(self) -> str:
        """The coupling name (InterfaceSpec.coupling)."""
        return self.spec.coupling

    @property
    def copies(self) -> bool:
        """Whether the device works on its own memory: inputs copied in, outputs out, over the link."""
        return self.strategy.copies

    @property
    def core_waits(self) -> bool:
        """Whether the core waits for each command as for an instruction."""
        return self.strategy.core_waits

    # --- host side --------------------------------------------------------------------------

    def host_before(self, core, env, stage, inputs: list, outputs: list):
        """SimPy generator run by the host before handing a command over: the driver's overhead, then the
        coupling's coherence work on the command's lines."""
        if self.spec.offload_overhead_cycles:
            start = env.now
            dt = core.clock.cycles_to_ps(self.spec.offload_overhead_cycles)
            stage.busy_ps += dt
            stage.compute_ps += dt
            yield env.timeout(dt)
            stage.add_interval(start, env.now)
        op = self.strategy.before_offload
        if op is not None:
            yield from core.run_maintenance_chunks(env, stage, region_line_chunks(inputs + outputs, self.line_bytes,
                                                                                  CHUNK_LINES), op, self.driver)

    def host_after(self, core, env, stage, outputs: list):
        """SimPy generator run by the host after completion: drop stale copies of the outputs."""
        after = self.strategy.after_offload
        if after == "none":
            return
        chunks = region_line_chunks(outputs, self.line_bytes, CHUNK_LINES)
        if after == "all":
            yield from core.run_maintenance_chunks(env, stage, chunks, "invalidate", self.driver)
        else:  # above_llc: the accelerator's writes are in the LLC already, and the coherence hardware drops the
            # copies above it as they land: untimed, for the waiting core and the others. Through its view:
            # its own levels probed, another core's only where it holds a line (``CoherentView.invalidate``)
            for lines in chunks:
                core.port.caches.invalidate(lines, levels=list(range(self.llc_level)), requester=self.driver)

    # --- accelerator data path ----------------------------------------------------------------

    def serve_through(self, memory_map: MemoryMap) -> None:
        """Have ``memory_map`` serve the unit's and its driver's memory traffic (DMA and the DRAM work of its
        accesses through the caches), so that each line is served by the memory that holds it: lines another
        unit keeps in its near memory there, the rest of the address space by main memory. The unit's home
        memory must be one of the map's. Called before the run, with the host's ports."""
        index = memory_map.index_of(self.home)
        if index is None:
            raise ValueError(f"{self.name}: its memory is not one of the memory map's; expected main memory or "
                             "a near memory that holds operands")
        self.dram = memory_map
        self._home_index = index
        self._ports.clear()

    def lines_at_home(self, lines: np.ndarray) -> int:
        """How many of ``lines`` the unit's home memory holds (all of them unless a memory map serves it)."""
        if self.dram is self.home:
            return len(lines)
        return int(np.count_nonzero(self.dram.owner_of(lines) == self._home_index))

    def dma(self, lines: np.ndarray, is_write: bool, now_ps: int, requester: str, bus_speedup: float = 1.0) -> int:
        """``requester`` moves ``lines`` by DMA at the memory controller (or inside the unit's own memory), past the
        host's caches and memory path: the memory serves them, and they are counted in ``path_exempt_bytes``.
        Returns the memory's completion, ps. Every DMA of a coupling or a driver goes through here."""
        self.path_exempt_bytes[requester] = self.path_exempt_bytes.get(requester, 0) + len(lines) * self.line_bytes
        if self.dram is not self.home:  # a memory map: the bus speedup is the home memory's
            return self.dram.service(lines, is_write, now_ps, bus_speedup, requester, home=self._home_index)
        return self.dram.service(lines, is_write, now_ps, bus_speedup=bus_speedup, requester=requester)

    def through_caches(self, lines: np.ndarray, is_write: bool, now_ps: int, level: int, done: int,
                       whole_lines: bool = False, partial: np.ndarray | None = None) -> int:
        """Access ``lines`` entering the host caches at ``level``; the DRAM work they cause is the unit's.
        With ``whole_lines`` a write of a whole line allocates it without reading memory, while a line the
        write covers in part (``partial``) is a store, read first where the caches lack it, as are all writes
        without ``whole_lines``. Returns the later of ``done`` and the DRAM work's completion, ps."""
        port = self._ports.get(level)
        if port is None:
            caches = CoherentStores(self.caches) if self.strategy.coherent_stores else self.caches
            port = self._ports[level] = MemoryPort(self.name, caches, self.dram, start_level=level)
        if not (is_write and whole_lines):
            last = port.access_apart(lines, is_write, now_ps)
            return done if last is None else max(done, last)
        if partial is None or not len(partial):
            last = port.write_whole_lines(lines, now_ps)
            return done if last is None else max(done, last)
        # partial is sorted and distinct (partial_lines): a binary search tells its lines apart
        at = np.minimum(np.searchsorted(partial, lines), len(partial) - 1)
        part = partial[at] == lines
        for chunk, whole in ((lines[~part], True), (lines[part], False)):
            if len(chunk):
                last = port.write_whole_lines(chunk, now_ps) if whole else port.access_apart(chunk, True, now_ps)
                done = done if last is None else max(done, last)
        return done

    def access(self, lines: np.ndarray, is_write: bool, now_ps: int, partial: np.ndarray | None = None) -> int:
        """Move ``lines`` between the accelerator and memory starting at ``now_ps``; return arrival, ps.
        ``partial``: the lines a write covers only in part, sorted and distinct (``partial_lines``; None: it covers
        every line whole), which a coupling through the caches reads before it writes them."""
        return self.strategy.access(self, np.asarray(lines, dtype=np.int64), is_write, now_ps, partial)

    def copy_in(self, regions: list, now_ps: int) -> int:
        """pcie: DMA the input regions from host DRAM over the link into device memory; arrival, ps."""
        lines = region_lines(regions, self.line_bytes)
        if not len(lines):
            return now_ps
        dram_done = self.dma(lines, False, now_ps, self.driver)
        return max(dram_done, self.link.transfer(len(lines) * self.line_bytes, now_ps, self.driver))

    def copy_out(self, regions: list, now_ps: int) -> int:
        """pcie: DMA the output regions over the link into host DRAM; arrival, ps."""
        lines = region_lines(regions, self.line_bytes)
        if not len(lines):
            return now_ps
        link_done = self.link_out.transfer(len(lines) * self.line_bytes, now_ps, self.driver)
        # DRAM takes requests in arrival order, so the writes are booked now and bounded by the link
        return max(link_done, self.dma(lines, True, now_ps, self.driver))

    @property
    def bytes_moved(self) -> int:
        """Bytes moved over the interface's link, both directions, B."""
        return self.link.bytes_moved + (self.link_out.bytes_moved if self.link_out is not self.link else 0)

    def link_bytes_by_requester(self) -> dict[str, int]:
        """Bytes moved over the interface's link, both directions, by requester (the unit, its driver), B."""
        out = dict(self.link.bytes_by_requester)
        if self.link_out is not self.link:
            for who, n in self.link_out.bytes_by_requester.items():
                out[who] = out.get(who, 0) + n
        return out

    def energy_j(self) -> dict[str, float]:
        """Energy of the interface's own link, both directions, J (DRAM's off-chip interface is charged by the
        DRAM model)."""
        out = self.link_out.energy_j() if self.link_out is not self.link else 0.0
        return {"link": self.link.energy_j() + out}
