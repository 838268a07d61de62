"""offsim's cache hierarchy against pycachesim 0.3.1 (``import cachesim``), an independent LRU simulator.

Both are built with the same geometry (LRU, write-back, write-allocate; every
pycachesim level loads from and stores to the next, main memory below the last)
and fed the same line trace (byte address = line * 64, ``loadstore(..., length=8)``).

Where they agree by construction, and what is compared exactly here:

(a) load-only traces, any geometry: per level LOAD/HIT/MISS_count equal offsim's
    loads/hits/misses, EVICT_count is 0, and main memory LOAD_count equals
    offsim's DRAM reads.
(b) read-modify-write traces (every store immediately follows a load of the same
    line, so a store always hits the most recent line of the first level):
    the first level's state evolves identically, so its misses, EVICT_count
    (= offsim writebacks_out) and hits (offsim hits = HIT_count + stores) agree
    on any geometry; for a single level also the DRAM reads and writes, and,
    after ``force_write_back()`` against offsim's ``flush`` of every line, the
    total DRAM writes.
(c) read-modify-write traces on multi-level hierarchies whose levels below the
    first never evict (the footprint fits every set): every level's counters
    agree (writebacks_in = STORE_count below the first level) and so do the
    total DRAM writes after force_write_back / flush.

Where they differ (each difference is demonstrated by a test below, measured on
pycachesim 0.3.1, whose C source ``cachesim/backend.c`` shows the cause):

1. Store hit: pycachesim marks the line dirty but neither counts a hit
   (HIT_count counts load hits only) nor updates LRU (``Cache__store`` does not
   reorder the set); offsim counts a hit and makes the line most recent.  On a
   general mixed trace the two therefore evict different lines.
2. Store miss: pycachesim handles it as a load at that level (LOAD_count and
   MISS_count + 1, besides STORE_count + 1) and forwards a *load* to the next
   level; offsim counts one store and one miss at every level it reaches.
3. A dirty victim written into a lower level that still holds the line: pycachesim
   marks it dirty without updating LRU; offsim makes it most recent.
4. A dirty victim written into a lower level that does not hold the line:
   pycachesim write-allocates through a load (LOAD_count and MISS_count + 1 at
   that level, and a read from below, possibly from memory); offsim allocates it
   dirty without reading (full-line write), so it has fewer misses and DRAM reads.
5. Memory writes: pycachesim counts only last-level dirty evictions (main memory
   STORE_count = last level EVICT_count); dirty lines still cached are written by
   ``force_write_back()``, which leaves them cached and clean, while offsim's
   ``flush`` writes each dirty line once and invalidates it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.memory.cache import CacheGeometry, CacheHierarchy

cachesim = pytest.importorskip("cachesim")

LINE = 64


def geom(name: str, n_sets: int, ways: int) -> CacheGeometry:
    return CacheGeometry(name, n_sets * ways * LINE, ways, LINE)


def build_pcs(levels: list[CacheGeometry]):
    """pycachesim hierarchy equal to ``levels``: (simulator, caches top first, main memory)."""
    mem = cachesim.MainMemory()
    below = None
    caches = []
    for g in reversed(levels):
        c = cachesim.Cache(g.name, g.n_sets, g.ways, g.line_bytes, "LRU",
                           store_to=below, load_from=below)
        if below is None:
            mem.load_to(c)
            mem.store_from(c)
        caches.insert(0, c)
        below = c
    return cachesim.CacheSimulator(caches[0], mem), caches, mem


def pcs_run(sim, lines: np.ndarray, stores: np.ndarray | None = None) -> None:
    """Feed the trace in order: runs of loads / stores as (loads, stores) pairs."""
    addrs = (np.asarray(lines, dtype=np.int64) * LINE).tolist()
    flags = [False] * len(addrs) if stores is None else np.asarray(stores).tolist()
    pairs = []
    i = 0
    while i < len(addrs):
        j = i + 1
        while j < len(addrs) and flags[j] == flags[i]:
            j += 1
        pairs.append(([], addrs[i:j]) if flags[i] else (addrs[i:j], []))
        i = j
    sim.loadstore(pairs, length=8)


def pcs_stats(cache) -> dict[str, int]:
    return {k: getattr(cache.backend, k)
            for k in ("LOAD_count", "STORE_count", "HIT_count", "MISS_count", "EVICT_count")}


def pcs_lines(cache) -> set[int]:
    return {a // LINE for a in cache.backend.cached}


def ours(h: CacheHierarchy, level: int, name: str) -> int:
    return h.counters()[h.levels[level].name][name]


# -- trace generators -------------------------------------------------------------

def base_trace(rng: np.random.Generator, n: int, universe: int) -> np.ndarray:
    kind = int(rng.integers(0, 4))
    start = int(rng.integers(0, universe))
    if kind == 0:
        lines = (start + np.arange(n)) % universe
    elif kind == 1:
        lines = (start + int(rng.integers(2, 17)) * np.arange(n)) % universe
    elif kind == 2:
        lines = rng.integers(0, universe, n)
    else:
        seq = (start + np.arange(n)) % universe
        lines = np.where(rng.random(n) < 0.5, seq, rng.integers(0, universe, n))
    return lines.astype(np.int64)


def rmw_trace(rng: np.random.Generator, n: int, universe: int):
    """Loads, some of them followed at once by a store to the same line."""
    base = base_trace(rng, n, universe)
    rmw = rng.random(n) < 0.4
    reps = np.where(rmw, 2, 1)
    lines = np.repeat(base, reps)
    stores = np.zeros(lines.size, dtype=bool)
    stores[np.cumsum(reps)[rmw] - 1] = True
    return lines, stores


@st.composite
def geometries(draw, max_levels: int = 4):
    n = draw(st.integers(1, max_levels))
    return [geom(f"L{i}", draw(st.sampled_from([1, 2, 4, 8, 16, 64])), draw(st.integers(1, 8)))
            for i in range(n)]


# -- (a) load-only traces ---------------------------------------------------------

@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(geometries(), st.integers(0, 2**32 - 1))
def test_load_only_traces_match_exactly(levels, seed):
    rng = np.random.default_rng(seed)
    lines = np.concatenate([base_trace(rng, int(rng.integers(50, 800)), int(rng.integers(4, 3000)))
                            for _ in range(4)])
    h = CacheHierarchy(levels)
    h.access(lines)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines)
    for i, c in enumerate(caches):
        s = pcs_stats(c)
        assert (ours(h, i, "loads"), ours(h, i, "hits"), ours(h, i, "misses")) == \
            (s["LOAD_count"], s["HIT_count"], s["MISS_count"])
        assert s["EVICT_count"] == 0 == ours(h, i, "writebacks_out")
        assert pcs_lines(c) == {x for x in set(lines.tolist()) if h.contains(x)[i]}
    assert mem.stats()["LOAD_count"] == h.counters()["DRAM"]["dram_reads"]


def test_i7_920_load_trace_matches_exactly():
    # 003 Table 4 (003:L320-L322): L1D 32 KiB 8-way, L2 256 KiB 8-way, LLC 8 MiB 16-way.
    levels = [CacheGeometry("L1D", 32 * 1024, 8, 64), CacheGeometry("L2", 256 * 1024, 8, 64),
              CacheGeometry("LLC", 8 * 1024 * 1024, 16, 64)]
    rng = np.random.default_rng(11)
    n = 300_000
    stream = np.cumsum(rng.random(n) < 0.5) % (1 << 20)
    lines = np.where(rng.random(n) < 0.5, stream, (1 << 20) + rng.integers(0, 1 << 18, n))
    h = CacheHierarchy(levels)
    h.access(lines)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines)
    got = [(ours(h, i, "hits"), ours(h, i, "misses")) for i in range(3)]
    want = [(c.backend.HIT_count, c.backend.MISS_count) for c in caches]
    assert got == want
    assert got[2][1] > 100_000   # the trace does exercise the LLC


# -- (b) read-modify-write traces: first level, and single-level caches ------------

@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(geometries(), st.integers(0, 2**32 - 1))
def test_rmw_traces_first_level_matches(levels, seed):
    rng = np.random.default_rng(seed)
    lines, stores = rmw_trace(rng, int(rng.integers(100, 1500)), int(rng.integers(4, 2000)))
    h = CacheHierarchy(levels)
    h.access(lines, stores)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines, stores)
    s = pcs_stats(caches[0])
    n_stores = int(stores.sum())
    assert ours(h, 0, "misses") == s["MISS_count"]
    assert ours(h, 0, "hits") == s["HIT_count"] + n_stores
    assert ours(h, 0, "loads") == s["LOAD_count"]
    assert ours(h, 0, "writebacks_out") == s["EVICT_count"]
    assert pcs_lines(caches[0]) == {x for x in set(lines.tolist()) if h.contains(x)[0]}
    if len(levels) == 1:
        dram = h.counters()["DRAM"]
        assert dram["dram_reads"] == mem.stats()["LOAD_count"]
        assert dram["dram_writes"] == mem.stats()["STORE_count"]
        sim.force_write_back()
        h.flush(np.unique(lines))
        assert h.counters()["DRAM"]["dram_writes"] == mem.stats()["STORE_count"]


# -- (c) read-modify-write traces, lower levels that never evict -------------------

@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(geometries(max_levels=3), st.integers(0, 2**32 - 1))
def test_rmw_traces_with_non_evicting_lower_levels_match(upper, seed):
    rng = np.random.default_rng(seed)
    first = upper[0]
    universe = int(rng.integers(first.n_sets * first.ways + 1, 4 * first.n_sets * first.ways + 8))
    # Lower levels hold the whole footprint 0..universe-1 (evenly spread over their sets).
    lower = [geom(f"M{i}", 16, -(-universe // 16) + int(rng.integers(0, 3)))
             for i in range(len(upper) - 1)]
    levels = [first] + lower
    lines, stores = rmw_trace(rng, int(rng.integers(200, 1500)), universe)
    h = CacheHierarchy(levels)
    h.access(lines, stores)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines, stores)
    for i, c in enumerate(caches):
        s = pcs_stats(c)
        assert ours(h, i, "misses") == s["MISS_count"]
        assert ours(h, i, "writebacks_out") == s["EVICT_count"]
        if i > 0:
            assert ours(h, i, "loads") == s["LOAD_count"]
            assert ours(h, i, "hits") == s["HIT_count"]
            assert ours(h, i, "writebacks_in") == s["STORE_count"]
    assert h.counters()["DRAM"]["dram_reads"] == mem.stats()["LOAD_count"]
    sim.force_write_back()
    h.flush(np.arange(universe))
    assert h.counters()["DRAM"]["dram_writes"] == mem.stats()["STORE_count"]


# -- the documented differences, each shown on a tiny trace ------------------------

def test_difference_store_hit_does_not_update_lru_in_pycachesim():
    levels = [geom("A", 1, 2)]
    lines, stores = np.array([0, 1, 0, 2]), np.array([False, False, True, False])
    h = CacheHierarchy(levels)
    h.access(lines, stores)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines, stores)
    assert [x for x in range(3) if h.contains(x)[0]] == [0, 2]   # 1 was the LRU line
    assert pcs_lines(caches[0]) == {1, 2}                        # pycachesim evicted 0
    assert mem.stats()["STORE_count"] == 1 and h.counters()["DRAM"]["dram_writes"] == 0


def test_difference_store_counting():
    levels = [geom("A", 1, 2)]
    h = CacheHierarchy(levels)
    h.access([0, 0], True)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, np.array([0, 0]), np.array([True, True]))
    assert pcs_stats(caches[0]) == {"LOAD_count": 1, "STORE_count": 2, "HIT_count": 0,
                                    "MISS_count": 1, "EVICT_count": 0}
    c = h.counters()["A"]
    assert (c["loads"], c["stores"], c["hits"], c["misses"]) == (0, 2, 1, 1)


def test_difference_write_back_into_absent_line_reads_in_pycachesim():
    levels = [geom("A", 1, 1), geom("B", 1, 1)]
    lines, stores = np.array([0, 1]), np.array([True, False])
    h = CacheHierarchy(levels)
    h.access(lines, stores)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines, stores)
    # B dropped clean 0 when filling 1; A's dirty victim 0 then arrives at B.
    assert pcs_stats(caches[1])["MISS_count"] == 3 and mem.stats()["LOAD_count"] == 3
    assert ours(h, 1, "misses") == 2 and h.counters()["DRAM"]["dram_reads"] == 2
    assert h.is_dirty(0) == [False, True] and pcs_lines(caches[1]) == {0}


def test_difference_write_back_into_held_line_does_not_update_lru_in_pycachesim():
    levels = [geom("A", 1, 1), geom("B", 1, 2)]
    lines, stores = np.array([0, 1, 2]), np.array([True, False, False])
    h = CacheHierarchy(levels)
    h.access(lines, stores)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, lines, stores)
    assert pcs_lines(caches[1]) == {1, 2} and mem.stats()["STORE_count"] == 1
    assert h.contains(0) == [False, True] and h.is_dirty(0)[1]
    assert h.counters()["DRAM"]["dram_writes"] == 0


def test_difference_force_write_back_keeps_lines():
    levels = [geom("A", 2, 2)]
    h = CacheHierarchy(levels)
    h.access([0, 1], True)
    sim, caches, mem = build_pcs(levels)
    pcs_run(sim, np.array([0, 1]), np.array([True, True]))
    assert mem.stats()["STORE_count"] == 0 == h.counters()["DRAM"]["dram_writes"]
    sim.force_write_back()
    r = h.flush([0, 1])
    assert mem.stats()["STORE_count"] == 2 == r.dram_writes.size
    assert pcs_lines(caches[0]) == {0, 1} and h.contains(0) == [False]
