"""Readable pure-Python model of the cache hierarchy, for tests only.

Same API and semantics as ``simulator.memory.cache.CacheHierarchy`` (see that
module's docstring); each LRU set is an ``OrderedDict`` line -> dirty flag
ordered from least to most recently used, each MRU-bits set a list of ways and
their use bits.  Slow (one Python step per line), exact.  It takes the ``requester``
argument of every operation but keeps no split by requester.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Sequence

import numpy as np

from simulator.memory.cache import (
    COUNTER_NAMES, DRAM_NAME, CacheGeometry, ChunkResult, StreamPrefetcher, as_lines,
    check_levels_arg, check_start_level, validate_hierarchy,
)

_COL = {name: i for i, name in enumerate(COUNTER_NAMES)}


class _Level:
    """One set-associative LRU level."""

    def __init__(self, geom: CacheGeometry) -> None:
        self.n_sets = geom.n_sets
        self.ways = geom.ways
        self.sets = [self._new_set() for _ in range(self.n_sets)]

    def _new_set(self):
        return OrderedDict()

    def set_of(self, line: int) -> OrderedDict:
        return self.sets[line % self.n_sets]

    def has(self, line: int) -> bool:
        return line in self.set_of(line)

    def touch(self, line: int) -> None:
        self.set_of(line).move_to_end(line)

    def insert(self, line: int, dirty: bool) -> tuple[int, bool] | None:
        """Insert absent ``line`` as most recent; return the evicted (line, dirty) if any."""
        s = self.set_of(line)
        victim = s.popitem(last=False) if len(s) == self.ways else None
        s[line] = dirty
        return victim


class _MruBitsSet:
    """One set replaced like MARSSx86's ``FullyAssociativeTags``: a use bit per way.

    Supports the mapping operations the hierarchy uses on a set: ``in``, setting
    the dirty flag of a present line, ``get`` and ``pop``.
    """

    def __init__(self, ways: int) -> None:
        self.lines: list[int | None] = [None] * ways
        self.dirty = [False] * ways
        self.used = [False] * ways

    def __contains__(self, line: int) -> bool:
        return line in self.lines

    def __setitem__(self, line: int, dirty: bool) -> None:
        self.dirty[self.lines.index(line)] = dirty

    def get(self, line: int, default=None):
        return self.dirty[self.lines.index(line)] if line in self.lines else default

    def pop(self, line: int, *default):
        if line not in self.lines:
            if default:
                return default[0]
            raise KeyError(line)
        way = self.lines.index(line)
        dirty = self.dirty[way]
        self.lines[way], self.dirty[way], self.used[way] = None, False, False
        return dirty

    def use(self, line: int) -> None:
        self.used[self.lines.index(line)] = True

    def insert(self, line: int, dirty: bool) -> tuple[int, bool] | None:
        if all(self.used):
            self.used = [False] * len(self.used)
        way = self.used.index(False)   # the lowest way not used since the last reset
        victim = None if self.lines[way] is None else (self.lines[way], self.dirty[way])
        self.lines[way], self.dirty[way], self.used[way] = line, dirty, True
        if all(self.used):
            self.used = [False] * len(self.used)
            self.used[way] = True
        return victim


class _MruBitsLevel(_Level):
    """One set-associative level with MARSSx86's use-bit pseudo-LRU."""

    def _new_set(self) -> _MruBitsSet:
        return _MruBitsSet(self.ways)

    def touch(self, line: int) -> None:
        self.set_of(line).use(line)

    def insert(self, line: int, dirty: bool) -> tuple[int, bool] | None:
        return self.set_of(line).insert(line, dirty)


class ReferenceHierarchy:
    """Pure-Python twin of ``CacheHierarchy``."""

    def __init__(self, levels: Sequence[CacheGeometry],
                 prefetcher: StreamPrefetcher | None = None, replacement: str = "lru") -> None:
        self.levels = validate_hierarchy(levels, prefetcher, replacement)
        self.prefetcher = prefetcher
        self.replacement = replacement
        level = _MruBitsLevel if replacement == "mru_bits" else _Level
        self._lv = [level(g) for g in self.levels]
        self._counts = np.zeros((len(self.levels), len(COUNTER_NAMES)), dtype=np.int64)
        self._dram_reads = 0
        self._dram_writes = 0
        self._pf_on = prefetcher is not None and prefetcher.enabled
        # Stream table slots: [last line, LRU stamp]; stamp 0 = empty slot.
        n_streams = prefetcher.n_streams if prefetcher is not None else 1
        self._streams = [[0, 0] for _ in range(n_streams)]
        self._stream_clock = 0

    @property
    def n_levels(self) -> int:
        """Number of cache levels."""
        return len(self.levels)

    def _count(self, level: int, name: str) -> None:
        self._counts[level, _COL[name]] += 1

    # -- building blocks ------------------------------------------------------
    def _write_back(self, level: int, line: int, writes: list) -> None:
        """Dirty ``line`` arrives at ``level`` (DRAM below the last level)."""
        if level == self.n_levels:
            writes.append(line)
            self._dram_writes += 1
            return
        self._count(level, "writebacks_in")
        lv = self._lv[level]
        if lv.has(line):
            lv.set_of(line)[line] = True
            lv.touch(line)
            return
        self._allocate(level, line, True, writes)

    def _allocate(self, level: int, line: int, dirty: bool, writes: list) -> None:
        """Insert absent ``line`` at ``level``; a valid victim is an eviction, a dirty one written below."""
        victim = self._lv[level].insert(line, dirty=dirty)
        self._count(level, "allocations")
        if victim is not None:
            self._count(level, "evictions")
        if victim is not None and victim[1]:
            self._count(level, "writebacks_out")
            self._write_back(level + 1, victim[0], writes)

    def _fill(self, level: int, line: int, writes: list) -> None:
        self._count(level, "fills")
        self._allocate(level, line, False, writes)

    def _prefetch_line(self, level: int, line: int, reads: list, writes: list) -> None:
        served = self.n_levels
        for i in range(level + 1, self.n_levels):
            if self._lv[i].has(line):
                self._lv[i].touch(line)
                served = i
                break
        if served == self.n_levels:
            reads.append(line)
            self._dram_reads += 1
        for i in range(served - 1, level - 1, -1):
            self._fill(i, line, writes)
            self._count(i, "prefetches")

    def _stream_miss(self, line: int, reads: list, writes: list) -> None:
        pf = self.prefetcher
        self._stream_clock += 1
        for entry in self._streams:
            if entry[1] > 0 and entry[0] + 1 == line:
                entry[0] = line + pf.degree
                entry[1] = self._stream_clock
                for y in range(line + 1, line + pf.degree + 1):
                    if not self._lv[pf.level].has(y):
                        self._prefetch_line(pf.level, y, reads, writes)
                return
        oldest = min(range(len(self._streams)), key=lambda e: self._streams[e][1])
        self._streams[oldest] = [line, self._stream_clock]

    def _one_access(self, line: int, store: bool, k: int, reads: list, writes: list) -> int:
        name = "stores" if store else "loads"
        served = self.n_levels
        for i in range(k, self.n_levels):
            self._count(i, name)
            if self._lv[i].has(line):
                self._count(i, "hits")
                self._lv[i].touch(line)
                served = i
                break
            self._count(i, "misses")
        if served == self.n_levels:
            reads.append(line)
            self._dram_reads += 1
        for i in range(served - 1, k - 1, -1):
            self._fill(i, line, writes)
        if store:
            self._lv[k].set_of(line)[line] = True
        pf = self.prefetcher
        if self._pf_on and k <= pf.level < served:
            self._stream_miss(line, reads, writes)
        return served

    def _remove(self, line: int, levels) -> int | None:
        """Drop ``line`` from ``levels`` (a probe of each, an invalidation where present); return the
        nearest of them that held it dirty, or None."""
        top = None
        for i in levels:
            self._count(i, "probes")
            s = self._lv[i].set_of(line)
            if line in s:
                self._count(i, "invalidations")
                if s.pop(line) and top is None:
                    top = i
        return top

    def _result(self, before: np.ndarray, reads: list, writes: list, served: list) -> ChunkResult:
        return ChunkResult(self._counts - before, np.array(reads, dtype=np.int64),
                           np.array(writes, dtype=np.int64), np.array(served, dtype=np.int8))

    # -- public API -----------------------------------------------------------
    def access(self, lines, is_store=False, start_level: int = 0, requester: str = "host") -> ChunkResult:
        """Demand loads/stores of ``lines`` entering at ``start_level``."""
        arr = as_lines(lines)
        check_start_level(start_level, self.n_levels)
        if isinstance(is_store, (bool, np.bool_)):
            stores = [bool(is_store)] * arr.shape[0]
        else:
            st = np.asarray(is_store)
            if st.shape != arr.shape:
                raise ValueError(f"is_store: shape {st.shape}; expected a bool or shape {arr.shape}")
            stores = [bool(s) for s in st]
        before = self._counts.copy()
        reads: list = []
        writes: list = []
        served = [self._one_access(int(x), s, start_level, reads, writes)
                  for x, s in zip(arr.tolist(), stores)]
        return self._result(before, reads, writes, served)

    def zero(self, lines, start_level: int = 0, requester: str = "host") -> ChunkResult:
        """Allocate ``lines`` dirty at ``start_level`` without reading from below."""
        arr = as_lines(lines)
        check_start_level(start_level, self.n_levels)
        before = self._counts.copy()
        writes: list = []
        k = start_level
        lv = self._lv[k]
        for x in arr.tolist():
            self._count(k, "stores")
            if lv.has(x):
                self._count(k, "hits")
                lv.set_of(x)[x] = True
                lv.touch(x)
                continue
            self._count(k, "misses")
            self._allocate(k, x, True, writes)
        return self._result(before, [], writes, [k] * arr.shape[0])

    def flush(self, lines, requester: str = "host") -> ChunkResult:
        """clflush ``lines``."""
        before = self._counts.copy()
        writes: list = []
        for x in as_lines(lines).tolist():
            top = self._remove(x, range(self.n_levels))
            if top is not None:
                self._count(top, "writebacks_out")
                writes.append(x)
                self._dram_writes += 1
        return self._result(before, [], writes, [])

    def evict_to_llc(self, lines, requester: str = "host") -> ChunkResult:
        """Dirty upper copies into the last level; upper copies removed."""
        before = self._counts.copy()
        writes: list = []
        last = self.n_levels - 1
        for x in as_lines(lines).tolist():
            top = self._remove(x, range(last))
            if top is not None:
                self._count(top, "writebacks_out")
                self._write_back(last, x, writes)
        return self._result(before, [], writes, [])

    def invalidate(self, lines, levels: Sequence[int] | None = None, requester: str = "host") -> ChunkResult:
        """Drop ``lines`` from the given levels without write-back."""
        chosen = check_levels_arg(levels, self.n_levels)
        before = self._counts.copy()
        for x in as_lines(lines).tolist():
            self._remove(x, chosen)
        return self._result(before, [], [], [])

    def counters(self) -> dict[str, dict[str, int]]:
        """Cumulative counters per level name, plus ``DRAM``."""
        out = {g.name: {c: int(self._counts[i, j]) for j, c in enumerate(COUNTER_NAMES)}
               for i, g in enumerate(self.levels)}
        out[DRAM_NAME] = {"dram_reads": self._dram_reads, "dram_writes": self._dram_writes}
        return out

    def contains(self, line: int) -> list[bool]:
        """Whether each level holds ``line``."""
        return [lv.has(int(line)) for lv in self._lv]

    def is_dirty(self, line: int) -> list[bool]:
        """Whether each level holds ``line`` dirty."""
        return [bool(lv.set_of(int(line)).get(int(line), False)) for lv in self._lv]
