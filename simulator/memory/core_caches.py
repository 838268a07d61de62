"""The caches of a multi-core host: private levels per core, shared last levels, write-invalidate coherence.

Each core sees an ordinary ``CacheHierarchy`` (its view): levels 0..p-1 are its own
copies, levels p.. are the one copy all cores share (``CachesSpec.shared_levels``). The
views work on one kernel state (``cache_kernel.core_states``), so a line a core brings
into the shared LLC is there for every other core, and the cores compete for its ways;
the counters of each view are its core's.

Coherence is a documented simplification of MESI, write-invalidate with an ideal
directory:

- a store, a full-line zero or a cache-maintenance op by core c first removes the lines
  from every other core's private levels: for a store, a zero or an ``evict_llc``
  (``CacheHierarchy.snoop_invalidate``) a dirty copy is written into the first shared level
  (the other core's write-back, cascading as any write-back); for a ``flush`` it is merged
  into the shared levels' copy, which the flush then writes to DRAM, or written to DRAM
  where they hold none, allocating nothing; for an ``invalidate`` it is discarded, as the
  core's own. A clean copy is dropped. Only the cores that hold a line are probed
  (the directory knows the sharers); each probe and invalidation is counted at the level
  where the line was found, in that core's snoop counters (requester ``host``), and the
  energy model prices them as any probe (``line_energy_j``). The storing core pays the
  round trip to the shared level for every line it invalidated (``HostCore.memory_ps``);
- loads do not snoop: a line another core holds dirty is read as the shared levels and
  DRAM hold it, and stays dirty with its owner until evicted or invalidated.

Accelerators reach the caches through one more view (the private levels of core 0: an
in-pipeline unit sits in core 0's pipeline; an LLC coupling enters at the shared level);
a driver's ``invalidate`` of host copies runs on the view of the core whose thread waits for the
command: its own levels probed, another core's only where it holds a line.
A coherent coupling's stores (``CoherentStores``) first remove the host's copies above the
unit's entry (``snoop_above``), as a core's store removes the other cores'.
Totals (``counters``, ``counters_by_requester``, ``resident_lines``) add the views up, so
the energy model and its conservation checks see one hierarchy.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from simulator.memory import cache_kernel as ck
from simulator.memory.cache import CacheGeometry, CacheHierarchy, ChunkResult, StreamPrefetcher


def _merge_writes(snoops: list[ChunkResult], own: ChunkResult) -> ChunkResult:
    """``own`` with the snoops' DRAM write-backs before its own, and the lines they invalidated as ``snooped``."""
    if not snoops:
        return own
    writes = [s.dram_writes for s in snoops if len(s.dram_writes)]
    snooped = sum(s.snooped for s in snoops)
    if writes:
        writes.append(own.dram_writes)
        return ChunkResult(own.level_counts, own.dram_reads, np.concatenate(writes), own.served_by, snooped)
    return ChunkResult(own.level_counts, own.dram_reads, own.dram_writes, own.served_by, snooped)


def _stored_lines(lines: np.ndarray, is_store: np.ndarray | bool) -> np.ndarray:
    """The lines of an access call that are stores (``is_store``: one flag for all, or one per line); ValueError
    for flags of another shape, as ``CacheHierarchy.access`` words it."""
    arr = np.asarray(lines)
    if isinstance(is_store, (bool, np.bool_)):
        return arr if is_store else arr[:0]
    flags = np.asarray(is_store, dtype=bool)
    if flags.shape != arr.shape:
        raise ValueError(f"is_store: shape {flags.shape}; expected a bool or shape {arr.shape}")
    return arr[flags]


class CoherentView:
    """One core's path into the caches (what its ``MemoryPort`` calls): its own hierarchy, and the
    snoop hierarchies of the other cores that its writes invalidate (module docstring)."""

    def __init__(self, own: CacheHierarchy, others: list[CacheHierarchy], n_private: int) -> None:
        self.own = own
        self.others = others if n_private else []
        self.n_private = n_private
        self.levels = own.levels
        self.prefetcher = own.prefetcher

    @property
    def n_levels(self) -> int:
        """Number of cache levels."""
        return self.own.n_levels

    def _snoop(self, lines: np.ndarray, requester: str, dirty_mode: int = ck.DIRTY_INTO_TARGET) -> list[ChunkResult]:
        return [other.snoop_invalidate(lines, self.n_private, requester, dirty_mode) for other in self.others]

    def access(self, lines: np.ndarray, is_store: np.ndarray | bool = False, start_level: int = 0,
               requester: str = "host") -> ChunkResult:
        """Demand loads/stores; stores invalidate the other cores' private copies first."""
        written = _stored_lines(lines, is_store)
        snoops = self._snoop(written, requester) if len(written) else []
        return _merge_writes(snoops, self.own.access(lines, is_store, start_level, requester))

    def chunk_view(self, is_store: bool) -> CacheHierarchy | None:
        """The hierarchy a chunk of demand accesses works on alone (``chunk_kernel``): the core's own, unless
        the chunk stores and other cores have private copies to invalidate (None)."""
        return None if is_store and self.others else self.own

    def zero(self, lines: np.ndarray, start_level: int = 0, requester: str = "host") -> ChunkResult:
        """Full-line zeroing writes, after invalidating the other cores' private copies."""
        snoops = self._snoop(lines, requester)
        return _merge_writes(snoops, self.own.zero(lines, start_level, requester))

    def flush(self, lines: np.ndarray, requester: str = "host") -> ChunkResult:
        """clflush, coherent: the other cores' copies dropped, a dirty one merged into the shared level's copy
        (which this flush writes to DRAM) or, where the shared level has none, written to DRAM itself; nothing
        is allocated on the way."""
        snoops = self._snoop(lines, requester, ck.DIRTY_MERGED)
        return _merge_writes(snoops, self.own.flush(lines, requester))

    def evict_to_llc(self, lines: np.ndarray, requester: str = "host") -> ChunkResult:
        """Dropped above the last level, dirty copies written into it: another core's private dirty copy first
        into the first shared level (where, with more than one shared level, its allocation may push out another
        line), then on to the last with this core's own copies."""
        snoops = self._snoop(lines, requester)
        return _merge_writes(snoops, self.own.evict_to_llc(lines, requester))

    def invalidate(self, lines: np.ndarray, levels: Sequence[int] | None = None,
                   requester: str = "host") -> ChunkResult:
        """Drop the lines from this core's levels ``levels`` (all when None) and every other core's private ones,
        without write-back, a dirty copy of another core's included."""
        snoops = self._snoop(lines, requester, ck.DIRTY_DISCARDED)
        return _merge_writes(snoops, self.own.invalidate(lines, levels, requester))


class CoherentStores:
    """A coherent accelerator's path into the host caches (``couplings.Coupling.coherent_stores``): its stores
    entering at ``start_level`` first remove the lines from the host's copies above that level (``snoop_above``:
    a dirty copy written into the entry level, or, for another core's copies of a unit in core 0's L1, into the
    first shared level), as a core's store removes the other cores' copies; its loads do not snoop, as a core's
    do not. The probes and invalidations are counted for the unit (only the levels holding
    a line are probed); the unit's time does not include them. ``caches`` is a ``CacheHierarchy`` or
    ``CoreCaches``."""

    def __init__(self, caches: CacheHierarchy | CoreCaches) -> None:
        self.caches = caches
        self.levels = caches.levels

    @property
    def n_levels(self) -> int:
        """Number of cache levels."""
        return self.caches.n_levels

    def chunk_view(self, is_store: bool) -> CacheHierarchy | None:
        """The hierarchy a chunk of loads works on alone (``chunk_kernel``); None for stores, which snoop."""
        view = getattr(self.caches, "chunk_view", None)
        return None if is_store or view is None else view(False)

    def access(self, lines: np.ndarray, is_store: np.ndarray | bool = False, start_level: int = 0,
               requester: str = "host") -> ChunkResult:
        """The unit's loads/stores entering at ``start_level``, the stores' lines snooped first."""
        written = _stored_lines(lines, is_store)
        snoops = self.caches.snoop_above(written, start_level, requester) if len(written) else []
        return _merge_writes(snoops, self.caches.access(lines, is_store, start_level, requester))

    def zero(self, lines: np.ndarray, start_level: int = 0, requester: str = "host") -> ChunkResult:
        """The unit's whole-line writes entering at ``start_level`` (allocated without a read), the lines
        snooped first as its stores' are."""
        snoops = self.caches.snoop_above(lines, start_level, requester) if len(lines) else []
        return _merge_writes(snoops, self.caches.zero(lines, start_level, requester))


class CoreCaches:
    """The caches of ``n_cores`` cores: ``shared[l]`` says which levels all cores share (the last ones)."""

    def __init__(self, levels: Sequence[CacheGeometry], shared: Sequence[bool], n_cores: int,
                 prefetcher: StreamPrefetcher | None = None, replacement: str = "lru") -> None:
        levels = tuple(levels)
        self.n_private = sum(1 for s in shared if not s)
        if list(shared) != [False] * self.n_private + [True] * (len(levels) - self.n_private):
            raise ValueError(f"shared: {list(shared)}; expected the shared levels to be the last ones")
        states = ck.core_states(np.array([g.n_sets for g in levels]), np.array([g.ways for g in levels]),
                                np.array([1 if s else 0 for s in shared]), n_cores)
        self.cores = [CacheHierarchy(levels, prefetcher, replacement, state=st) for st in states]
        self.snoops = [CacheHierarchy(levels, None, replacement, state=st) for st in states]
        self.accelerators = CacheHierarchy(levels, None, replacement, state=states[0])
        self.views = [CoherentView(own, [s for j, s in enumerate(self.snoops) if j != k], self.n_private)
                      for k, own in enumerate(self.cores)]
        self.levels = self.cores[0].levels
        self.prefetcher = prefetcher
        self.replacement = replacement

    @property
    def n_levels(self) -> int:
        """Number of cache levels."""
        return len(self.levels)

    def _all(self) -> list[CacheHierarchy]:
        return [*self.cores, *self.snoops, self.accelerators]

    # -- what the accelerators' interfaces call ------------------------------------------
    def access(self, lines: np.ndarray, is_store: np.ndarray | bool = False, start_level: int = 0,
               requester: str = "host") -> ChunkResult:
        """An accelerator's loads/stores entering at ``start_level`` (module docstring)."""
        return self.accelerators.access(lines, is_store, start_level, requester)

    def zero(self, lines: np.ndarray, start_level: int = 0, requester: str = "host") -> ChunkResult:
        """An accelerator's whole-line writes entering at ``start_level``, allocated without a read
        (``CacheHierarchy.zero``)."""
        return self.accelerators.zero(lines, start_level, requester)

    def snoop_above(self, lines: np.ndarray, start_level: int, requester: str = "host") -> list[ChunkResult]:
        """A coherent accelerator entering at ``start_level`` stores ``lines``: every other core's copies above
        the entry removed first, a dirty one written into the first shared level at or below the entry, then
        core 0's levels above the entry (a dirty copy written into the entry level). A unit in core 0's L1
        (level 0) works on core 0's copies as core 0 does. Each core's invalidations are counted in its snoop
        counters (``snoop_counters``)."""
        target = max(self.n_private, start_level)
        out = [snoop.snoop_invalidate(lines, target, requester) for snoop in self.snoops[1:]]
        if start_level > 0:
            out.append(self.snoops[0].snoop_invalidate(lines, start_level, requester))
        return out

    # -- inspection ------------------------------------------------------------------------
    def counters(self) -> dict[str, dict[str, int]]:
        """Cumulative counters per level name over every core (and ``DRAM``), as ``CacheHierarchy.counters``."""
        return _add([h.counters() for h in self._all()])

    def counters_by_requester(self) -> dict[str, dict[str, dict[str, int]]]:
        """The counters split by requester, over every core."""
        out: dict[str, list] = {}
        for h in self._all():
            for who, table in h.counters_by_requester().items():
                out.setdefault(who, []).append(table)
        return {who: _add(tables) for who, tables in out.items()}

    def core_counters(self, core: int) -> dict[str, dict[str, int]]:
        """Core ``core``'s own counters of its private levels (its demand accesses and what they caused)."""
        mine = self.cores[core].counters()
        return {lv.name: mine[lv.name] for lv in self.levels[:self.n_private]}

    def snoop_counters(self, core: int) -> dict[str, dict[str, int]]:
        """What other cores' writes (and drivers' invalidations) did to core ``core``'s private levels."""
        theirs = self.snoops[core].counters()
        return {lv.name: theirs[lv.name] for lv in self.levels[:self.n_private]}

    def resident_lines(self) -> dict[str, int]:
        """Valid lines each level holds now, over every core's copy of a private level."""
        out = dict.fromkeys((g.name for g in self.levels), 0)
        for k, h in enumerate(self.cores):
            for name, n in h.resident_lines().items():
                if k == 0 or name in (g.name for g in self.levels[:self.n_private]):
                    out[name] += n
        return out


def _add(tables: list[dict[str, dict[str, int]]]) -> dict[str, dict[str, int]]:
    """Counter tables (level -> counter -> value) added up."""
    out = {name: dict(values) for name, values in tables[0].items()}
    for table in tables[1:]:
        for name, values in table.items():
            for key, value in values.items():
                out[name][key] += value
    return out
