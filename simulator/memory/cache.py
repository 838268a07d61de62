"""Exact set-associative cache hierarchy, updated in bulk (numba kernels).

Addresses are **line numbers** (int64, byte address // line_bytes); all levels
share one line size.  Level 0 is the one nearest the requester (L1D); DRAM is
below the last level.  Every level is set-associative, write-back,
write-allocate and **non-inclusive**, and replaces by exact LRU or, for the whole
hierarchy (``replacement="mru_bits"``), by MARSSx86's pseudo-LRU of one use bit
per way (described in ``cache_kernel``); "LRU" below means the policy in use:

- load at level i: a hit updates LRU; a miss goes to level i+1 (DRAM below the
  last level) and then fills the line here, evicting the LRU victim.  Fills
  therefore happen from the deepest missing level upwards.
- store: like a load (a store miss reads the line from below) and then marks the
  line dirty in the requesting level only.
- a dirty victim of level i is written into level i+1: if present there it
  becomes dirty (LRU updated); if absent it is allocated there dirty without
  reading from below (full-line write), possibly evicting a victim in turn
  (cascade).  Dirty victims of the last level are DRAM writes; clean victims are
  dropped.  No back-invalidation anywhere.
- ``flush``: clflush; a line dirty in any level is written to DRAM once (counted
  as ``writebacks_out`` of the nearest level holding it dirty) and invalidated
  everywhere.
- ``evict_to_llc``: dirty copies above the last level are written into the last
  level (as one write-back from the nearest dirty level); the upper copies are
  removed, the last level keeps (or allocates) the line.
- ``invalidate``: drop lines from chosen levels, no write-back.
- ``zero``: full-line zeroing write (dcbz / DC ZVA / CLZERO) at the requesting
  level only: a present line becomes dirty (LRU updated, a store hit); an
  absent one is allocated there dirty without reading from below (a store miss;
  lower levels are not looked up, no DRAM read), its dirty victim cascading as
  above.  ``served_by`` is the requesting level; the prefetcher does not see it.
- ``access(start_level=k)``: requests enter at level k; levels above k are
  neither looked up nor filled.
- stream prefetcher at one level p (default the L2): on a demand miss at p to
  line x, if a stream entry has ``last + 1 == x`` (lowest slot first) the entry
  advances to ``last = x + degree`` and lines x+1..x+degree absent at p are
  loaded from below into p and the levels between (counted as ``prefetches`` of
  each level filled, never as loads/hits/misses); otherwise a new entry
  ``last = x`` replaces the least recently used one of ``n_streams``.  The
  prefetch runs after the demand access has completed (filled and marked dirty).

Counters per level (cumulative, int64, names in ``COUNTER_NAMES``): ``loads``
and ``stores`` (demand accesses reaching the level), ``hits``, ``misses``,
``writebacks_out`` (dirty lines leaving the level), ``writebacks_in`` (dirty
lines received from the level above), ``prefetches`` (lines prefetched into the
level), ``fills`` (lines installed from the level below or DRAM, demand or
prefetch), ``evictions`` (valid lines replaced by any allocation, clean or
dirty), ``invalidations`` (lines dropped by flush / evict_to_llc / invalidate)
``probes`` (the lookups those maintenance operations make, one per line and
level examined) and ``allocations`` (lines placed in the level: fills,
write-backs received while absent, zero misses); for the hierarchy
``dram_reads`` and ``dram_writes`` (lines). A level's allocations minus its
evictions and invalidations equal the lines it holds (lines in = lines out).

Every operation takes a ``requester`` name (the host core, an accelerator, a
driver's coherence work); the counters of each call are also added to that
requester's table (``counters_by_requester``), one array addition per call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from simulator.memory import cache_kernel as ck
from simulator.memory.array_kernel import value_range
from simulator.units import is_power_of_two

COUNTER_NAMES: tuple[str, ...] = (
    "loads", "stores", "hits", "misses", "writebacks_out", "writebacks_in", "prefetches",
    "fills", "evictions", "invalidations", "probes", "allocations",
)
DRAM_NAME = "DRAM"
MAX_LINE = 2 ** 62   # the kernels store 2 * line + dirty in an int64


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@dataclass(frozen=True)
class CacheGeometry:
    """One cache level: ``size_bytes`` = n_sets * ways * line_bytes, n_sets a power of two."""

    name: str
    size_bytes: int
    ways: int
    line_bytes: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"CacheGeometry.name: {self.name!r} is not a non-empty string")
        n = self.name
        for key in ("size_bytes", "ways", "line_bytes"):
            value = getattr(self, key)
            if not _is_int(value) or value < 1:
                raise ValueError(f"{n}.{key}: {value!r} is not a positive integer")
        if not is_power_of_two(self.line_bytes):
            raise ValueError(f"{n}.line_bytes: {self.line_bytes} is not a power of two")
        way_bytes = self.ways * self.line_bytes
        if self.size_bytes % way_bytes != 0:
            raise ValueError(
                f"{n}.size_bytes: {self.size_bytes} is not a multiple of ways * line_bytes"
                f" = {self.ways} * {self.line_bytes} = {way_bytes}")
        if not is_power_of_two(self.size_bytes // way_bytes):
            raise ValueError(
                f"{n}.size_bytes: {self.size_bytes} does not give a power-of-two number of sets"
                f" ({self.size_bytes} / ({self.ways} ways * {self.line_bytes} B)"
                f" = {self.size_bytes // way_bytes})")

    @property
    def n_sets(self) -> int:
        """Number of sets."""
        return self.size_bytes // (self.ways * self.line_bytes)


@dataclass(frozen=True)
class StreamPrefetcher:
    """Stream prefetcher attached to level ``level``: ``degree`` lines ahead, ``n_streams`` entries."""

    level: int = 1
    degree: int = 4
    n_streams: int = 16
    enabled: bool = True

    def __post_init__(self) -> None:
        if not _is_int(self.level) or self.level < 0:
            raise ValueError(f"StreamPrefetcher.level: {self.level!r} is not an integer >= 0")
        for key in ("degree", "n_streams"):
            value = getattr(self, key)
            if not _is_int(value) or value < 1:
                raise ValueError(f"StreamPrefetcher.{key}: {value!r} is not an integer >= 1")
        if not isinstance(self.enabled, (bool, np.bool_)):
            raise ValueError(f"StreamPrefetcher.enabled: {self.enabled!r} is not a bool")


@dataclass(frozen=True)
class ChunkResult:
    """What one bulk call did (deltas, not cumulative).

    ``level_counts``: (n_levels, len(COUNTER_NAMES)) int64; ``dram_reads`` /
    ``dram_writes``: int64 line numbers in order (demand and prefetch reads);
    ``served_by``: int8 per input access, the level that served it (n_levels =
    DRAM; the requesting level for zero); empty for flush / evict_to_llc / invalidate.
    ``snooped``: lines of other cores' private levels the call invalidated (multi-core
    coherence, ``simulator.memory.core_caches``; their write-backs are in ``dram_writes``
    where they reached DRAM).
    """

    level_counts: np.ndarray
    dram_reads: np.ndarray
    dram_writes: np.ndarray
    served_by: np.ndarray
    snooped: int = 0


def validate_hierarchy(levels: Sequence[CacheGeometry], prefetcher: StreamPrefetcher | None,
                       replacement: str = "lru") -> tuple[CacheGeometry, ...]:
    """Check the level list, prefetcher and replacement policy against each other; return the
    levels as a tuple."""
    if replacement not in ck.REPLACEMENTS:
        raise ValueError(f"replacement: {replacement!r}; expected one of {', '.join(ck.REPLACEMENTS)}")
    levels = tuple(levels)
    if not levels:
        raise ValueError("levels: empty; expected at least one CacheGeometry")
    if len(levels) > ck.MAX_CACHE_LEVELS:
        raise ValueError(f"levels: {len(levels)} levels; expected at most {ck.MAX_CACHE_LEVELS}")
    seen: set[str] = set()
    for geom in levels:
        if not isinstance(geom, CacheGeometry):
            raise ValueError(f"levels: {geom!r} is not a CacheGeometry")
        if geom.name in seen or geom.name == DRAM_NAME:
            raise ValueError(f"{geom.name}.name: {geom.name!r} is repeated or reserved;"
                             f" expected unique names other than {DRAM_NAME!r}")
        seen.add(geom.name)
        if geom.line_bytes != levels[0].line_bytes:
            raise ValueError(
                f"{geom.name}.line_bytes: {geom.line_bytes} differs from"
                f" {levels[0].name}.line_bytes {levels[0].line_bytes}; all levels share one line size")
        if replacement == "mru_bits" and geom.ways > ck.MAX_MRU_BITS_WAYS:
            raise ValueError(f"{geom.name}.ways: {geom.ways}; the mru_bits replacement allows at most "
                             f"{ck.MAX_MRU_BITS_WAYS} ways")
    if prefetcher is not None:
        if not isinstance(prefetcher, StreamPrefetcher):
            raise ValueError(f"prefetcher: {prefetcher!r} is not a StreamPrefetcher or None")
        if prefetcher.level >= len(levels):
            raise ValueError(f"StreamPrefetcher.level: {prefetcher.level} is not a level index"
                             f" (expected 0..{len(levels) - 1})")
    return levels


def as_lines(lines: object, what: str = "lines") -> np.ndarray:
    """``lines`` as a contiguous int64 array of non-negative line numbers."""
    if type(lines) is np.ndarray and lines.dtype == np.int64 and lines.ndim == 1 and lines.flags.c_contiguous:
        arr = lines  # what the replay hands over: skip the conversions below
    else:
        arr = np.asarray(lines)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim != 1:
            raise ValueError(f"{what}: shape {arr.shape}; expected a 1-D sequence of line numbers")
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{what}: dtype {arr.dtype}; expected integer line numbers")
        arr = np.ascontiguousarray(arr, dtype=np.int64)
    if arr.size:
        lo, hi = value_range(arr)
        if lo < 0:
            raise ValueError(f"{what}: minimum {lo}; expected line numbers >= 0")
        if hi >= MAX_LINE:
            raise ValueError(f"{what}: maximum {hi}; expected line numbers < 2**62")
    return arr


def check_start_level(start_level: int, n_levels: int) -> None:
    """Raise ValueError unless ``0 <= start_level < n_levels``."""
    if type(start_level) is int and 0 <= start_level < n_levels:
        return  # the common case, without the slower checks below
    if not _is_int(start_level) or not 0 <= start_level < n_levels:
        raise ValueError(f"start_level: {start_level!r}; expected an integer in 0..{n_levels - 1}")


def check_levels_arg(levels: Sequence[int] | None, n_levels: int) -> list[int]:
    """Validated level indices for ``invalidate`` (all levels when None)."""
    if levels is None:
        return list(range(n_levels))
    out = []
    for lv in levels:
        if not _is_int(lv) or not 0 <= lv < n_levels:
            raise ValueError(f"levels: {lv!r}; expected level indices in 0..{n_levels - 1}")
        out.append(int(lv))
    return out


class CacheHierarchy:
    """Exact write-back non-inclusive hierarchy over line numbers (compiled kernels).

    ``replacement``: "lru" (exact LRU) or "mru_bits" (MARSSx86's use-bit pseudo-LRU), every level.
    ``state``: the kernel state to work on (``cache_kernel.core_states``: one core's view of levels
    some of which other hierarchies share); a fresh one of its own when None.
    """

    def __init__(self, levels: Sequence[CacheGeometry],
                 prefetcher: StreamPrefetcher | None = None, replacement: str = "lru",
                 state: dict[str, np.ndarray] | None = None) -> None:
        self.levels = validate_hierarchy(levels, prefetcher, replacement)
        self.prefetcher = prefetcher
        self.replacement = replacement
        n = len(self.levels)
        self._st = state if state is not None else ck.new_state(np.array([g.n_sets for g in self.levels]),
                                                                np.array([g.ways for g in self.levels]))
        # None under LRU: the kernels are then compiled without the use-bit code
        self._mru = self._st["mru"] if replacement == "mru_bits" else None
        self._counts = np.zeros((n, ck.N_COUNTERS), dtype=np.int64)
        self._dram = np.zeros(2, dtype=np.int64)
        pf = prefetcher
        on = pf is not None and pf.enabled
        self._pf_cfg = np.array([1 if on else 0, pf.level if pf else 0,
                                 pf.degree if pf else 0, 0], dtype=np.int64)
        n_streams = pf.n_streams if pf is not None else 1
        self._pf_last = np.zeros(n_streams, dtype=np.int64)
        self._pf_stamp = np.zeros(n_streams, dtype=np.int64)
        self._pos = np.zeros(2, dtype=np.int64)
        self._rd = np.empty(0, dtype=np.int64)
        self._wr = np.empty(0, dtype=np.int64)
        self._no_stores = np.zeros(1, dtype=np.uint8)
        # room a kernel keeps in the DRAM buffers beyond two per input: one access's reads and cascading writes
        self._reserve_extra = n * (1 + (pf.degree if on else 0)) + 1024
        # per requester: the level counters, and [DRAM reads, DRAM writes] (lines)
        self._by_requester: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._chunk_args: dict[str, tuple] = {}  # per requester: what ``chunk_args`` gives, while the buffers last

    @property
    def n_levels(self) -> int:
        """Number of cache levels."""
        return len(self.levels)

    # -- buffers ---------------------------------------------------------------
    def _reserve(self, n_inputs: int) -> None:
        # Bounded: a call that fills the buffers is resumed after draining them.
        self._grow_buffers(min(2 * n_inputs, 1 << 20) + self._reserve_extra)

    def _grow_buffers(self, want: int) -> None:
        if self._rd.shape[0] < want:
            self._rd = np.empty(want, dtype=np.int64)
            self._wr = np.empty(want, dtype=np.int64)
            self._chunk_args.clear()

    def _drain(self, reads: list, writes: list) -> None:
        pos = self._pos
        n_reads, n_writes = pos.tolist()
        reads.append(self._rd[:n_reads].copy())
        writes.append(self._wr[:n_writes].copy())
        pos.fill(0)

    def _run(self, n_inputs: int, step) -> tuple[np.ndarray, np.ndarray]:
        """Run a resumable kernel over ``n_inputs`` lines: ``step(done) -> next index``; return the
        DRAM reads and writes it made, in order.

        A kernel stops early when the DRAM read/write buffers are full; the
        buffers are drained and the kernel is resumed.
        """
        self._reserve(n_inputs)
        reads: list = []
        writes: list = []
        done = 0
        while True:
            done = step(done)
            self._drain(reads, writes)
            if done >= n_inputs:
                if len(reads) == 1:  # the common case: one pass
                    return reads[0], writes[0]
                return np.concatenate(reads), np.concatenate(writes)

    def _result(self, before: np.ndarray, reads: np.ndarray, writes: np.ndarray,
                served: np.ndarray, requester: str) -> ChunkResult:
        """The call's result: the counters since ``before`` (a copy taken for the call, reused for the
        difference), added to ``requester``'s table too."""
        delta = np.subtract(self._counts, before, out=before)
        levels, dram = self._requester_tables(requester)
        levels += delta
        dram[0] += len(reads)
        dram[1] += len(writes)
        return ChunkResult(delta, reads, writes, served)

    def _requester_tables(self, requester: str) -> tuple[np.ndarray, np.ndarray]:
        """``requester``'s level counters (int64[n_levels, N_COUNTERS]) and [DRAM reads, DRAM writes] (lines)."""
        mine = self._by_requester.get(requester)
        if mine is None:
            mine = self._by_requester[requester] = (np.zeros((self.n_levels, ck.N_COUNTERS), dtype=np.int64),
                                                    np.zeros(2, dtype=np.int64))
        return mine

    def chunk_args(self, n_inputs: int, requester: str) -> tuple | None:
        """The state ``chunk_kernel.access_and_serve`` works on for ``n_inputs`` demand accesses counted for
        ``requester`` (its arguments from ``ts`` to ``mine_dram``), with DRAM buffers that hold the whole chunk;
        None when the prefetcher is on (the core's timing then needs each DRAM read)."""
        if self._pf_cfg[0]:
            return None
        if self._wr.shape[0] < n_inputs * self.n_levels:
            self._grow_buffers(n_inputs * self.n_levels)
        args = self._chunk_args.get(requester)
        if args is None:
            st = self._st
            args = self._chunk_args[requester] = (
                st["ts"], st["base"], st["mask"], st["ways"], self._mru, st["clock"], self._counts, self._dram,
                self._rd, self._wr, self._pos, self._pf_cfg, self._pf_last, self._pf_stamp,
                *self._requester_tables(requester))
        return args

    def chunk_view(self, is_store: bool) -> "CacheHierarchy":
        """The hierarchy a chunk of demand accesses works on alone (``chunk_kernel``): this one."""
        return self

    # -- operations -------------------------------------------------------------
    def access(self, lines: np.ndarray, is_store: np.ndarray | bool = False,
               start_level: int = 0, requester: str = "host") -> ChunkResult:
        """Demand loads/stores of ``lines`` (line numbers) entering at ``start_level``."""
        arr = as_lines(lines)
        check_start_level(start_level, self.n_levels)
        if isinstance(is_store, (bool, np.bool_)):
            mode, stores = (1 if is_store else 0), self._no_stores
        else:
            stores = np.asarray(is_store)
            if stores.shape != arr.shape:
                raise ValueError(f"is_store: shape {stores.shape}; expected a bool or shape {arr.shape}")
            mode, stores = 2, np.ascontiguousarray(stores, dtype=np.uint8)
        before = self._counts.copy()
        served = np.empty(arr.shape[0], dtype=np.int8)
        st = self._st
        reads, writes = self._run(arr.shape[0], lambda done: ck.access_kernel(
            arr, stores, mode, done, start_level, st["ts"], st["base"], st["mask"], st["ways"], self._mru,
            st["clock"], self._counts, self._dram, self._rd, self._wr, self._pos, served,
            self._pf_cfg, self._pf_last, self._pf_stamp))
        ck.demand_counts(served, stores, mode, start_level, self._counts)
        return self._result(before, reads, writes, served, requester)

    def zero(self, lines, start_level: int = 0, requester: str = "host") -> ChunkResult:
        """Allocate ``lines`` dirty (zero-filled) at ``start_level`` without reading memory."""
        arr = as_lines(lines)
        check_start_level(start_level, self.n_levels)
        before = self._counts.copy()
        served = np.empty(arr.shape[0], dtype=np.int8)
        st = self._st
        reads, writes = self._run(arr.shape[0], lambda done: ck.zero_kernel(
            arr, done, start_level, st["ts"], st["base"], st["mask"], st["ways"], self._mru, self._counts,
            self._dram, self._wr, self._pos, served))
        return self._result(before, reads, writes, served, requester)

    def flush(self, lines, requester: str = "host") -> ChunkResult:
        """clflush ``lines``: dirty data to DRAM once, line invalidated in every level."""
        arr = as_lines(lines)
        before = self._counts.copy()
        st = self._st
        reads, writes = self._run(arr.shape[0], lambda done: ck.flush_kernel(
            arr, done, st["ts"], st["base"], st["mask"], st["ways"], self._mru, self._counts, self._dram,
            self._wr, self._pos))
        return self._result(before, reads, writes, np.empty(0, dtype=np.int8), requester)

    def evict_to_llc(self, lines, requester: str = "host") -> ChunkResult:
        """Write dirty upper-level copies of ``lines`` into the last level and drop them above."""
        arr = as_lines(lines)
        before = self._counts.copy()
        st = self._st
        reads, writes = self._run(arr.shape[0], lambda done: ck.evict_down_kernel(
            arr, done, self.n_levels - 1, True, ck.DIRTY_INTO_TARGET, st["ts"], st["base"], st["mask"], st["ways"],
            self._mru, self._counts, self._dram, self._wr, self._pos, np.zeros(1, dtype=np.int64)))
        return self._result(before, reads, writes, np.empty(0, dtype=np.int8), requester)

    def snoop_invalidate(self, lines, target: int, requester: str = "host",
                         dirty_mode: int = ck.DIRTY_INTO_TARGET) -> ChunkResult:
        """Another requester writes ``lines`` (another core, ``target`` the first shared level; a coherent
        accelerator, ``target`` its entry level, ``snoop_above``): drop them from levels 0..target-1, a dirty
        copy written into level ``target``, or, with ``dirty_mode`` (``cache_kernel.DIRTY_*``), merged where a
        level from ``target`` down holds the line, else written to DRAM (another core's flush), or discarded
        (its invalidate); only the levels holding a line are probed (``cache_kernel.evict_down_kernel``). The
        result's ``snooped`` counts the lines some level held."""
        arr = as_lines(lines)
        check_start_level(target, self.n_levels)
        before = self._counts.copy()
        st = self._st
        found = np.zeros(1, dtype=np.int64)
        reads, writes = self._run(arr.shape[0], lambda done: ck.evict_down_kernel(
            arr, done, target, False, dirty_mode, st["ts"], st["base"], st["mask"], st["ways"], self._mru,
            self._counts, self._dram, self._wr, self._pos, found))
        result = self._result(before, reads, writes, np.empty(0, dtype=np.int8), requester)
        return dataclasses.replace(result, snooped=int(found[0]))

    def snoop_above(self, lines, start_level: int, requester: str = "host") -> list[ChunkResult]:
        """A coherent accelerator entering at ``start_level`` stores ``lines``: the core's copies above that
        level removed first, a dirty one written into it (``snoop_invalidate``); none at level 0."""
        return [self.snoop_invalidate(lines, start_level, requester)] if start_level > 0 else []

    def invalidate(self, lines, levels: Sequence[int] | None = None, requester: str = "host") -> ChunkResult:
        """Drop ``lines`` without write-back from level indices ``levels`` (all when None)."""
        arr = as_lines(lines)
        chosen = check_levels_arg(levels, self.n_levels)
        level_mask = np.zeros(self.n_levels, dtype=np.uint8)
        level_mask[chosen] = 1
        before = self._counts.copy()
        st = self._st
        ck.invalidate_kernel(arr, level_mask, st["ts"], st["base"], st["mask"], st["ways"], self._mru,
                             self._counts)
        empty = np.empty(0, dtype=np.int64)
        return self._result(before, empty, empty, np.empty(0, dtype=np.int8), requester)

    # -- inspection -------------------------------------------------------------
    def counters(self) -> dict[str, dict[str, int]]:
        """Cumulative counters per level name, plus ``DRAM``: dram_reads, dram_writes (lines)."""
        out = {g.name: {c: int(self._counts[i, j]) for j, c in enumerate(COUNTER_NAMES)}
               for i, g in enumerate(self.levels)}
        out[DRAM_NAME] = {"dram_reads": int(self._dram[0]), "dram_writes": int(self._dram[1])}
        return out

    def counters_by_requester(self) -> dict[str, dict[str, dict[str, int]]]:
        """The counters of ``counters()`` split by requester: requester -> level name (and ``DRAM``) -> counter."""
        out = {}
        for who, (table, dram) in self._by_requester.items():
            mine = {g.name: {c: int(table[i, j]) for j, c in enumerate(COUNTER_NAMES)}
                    for i, g in enumerate(self.levels)}
            mine[DRAM_NAME] = {"dram_reads": int(dram[0]), "dram_writes": int(dram[1])}
            out[who] = mine
        return out

    def resident_lines(self) -> dict[str, int]:
        """Valid lines each level holds now, by level name."""
        ts = self._st["ts"]
        base = self._st["base"]
        ends = base + (self._st["mask"] + 1) * self._st["ways"]  # a level's words: n_sets x ways
        return {g.name: int(np.count_nonzero(ts[int(b):int(e)] >= 0)) for g, b, e in zip(self.levels, base, ends)}

    def _way_states(self, line: int) -> list[int]:
        st = self._st
        return [int(ck.way_state(st["ts"], st["base"], st["mask"], st["ways"], i, int(line)))
                for i in range(self.n_levels)]

    def contains(self, line: int) -> list[bool]:
        """Whether each level holds ``line``."""
        return [state >= 0 for state in self._way_states(line)]

    def is_dirty(self, line: int) -> list[bool]:
        """Whether each level holds ``line`` dirty."""
        return [state == 1 for state in self._way_states(line)]
