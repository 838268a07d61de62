"""Hand-computable cases of the cache hierarchy semantics.

Every case runs on the pure-Python reference and on the compiled hierarchy.
Tiny caches (64 B lines): L1 4 sets x 2 ways, L2 8 sets x 2 ways, L3 16 sets x 2
ways, so line x lives in L1 set x % 4, L2 set x % 8, L3 set x % 16.
"""

from __future__ import annotations

import numpy as np
import pytest

from simulator.memory.cache import (
    COUNTER_NAMES, CacheGeometry, CacheHierarchy, StreamPrefetcher,
)
from simulator.memory.cache_reference import ReferenceHierarchy

LINE = 64
IMPLS = [ReferenceHierarchy, CacheHierarchy]


def geom(name: str, n_sets: int, ways: int) -> CacheGeometry:
    return CacheGeometry(name, n_sets * ways * LINE, ways, LINE)


L1, L2, L3 = geom("L1", 4, 2), geom("L2", 8, 2), geom("L3", 16, 2)


def col(name: str) -> int:
    return COUNTER_NAMES.index(name)


@pytest.fixture(params=IMPLS, ids=["reference", "kernel"])
def impl(request):
    return request.param


def test_load_miss_then_hit(impl):
    h = impl([L1, L2, L3])
    r = h.access([0])
    assert r.served_by.tolist() == [3]
    assert r.dram_reads.tolist() == [0]
    assert r.dram_writes.tolist() == []
    assert r.level_counts[:, col("loads")].tolist() == [1, 1, 1]
    assert r.level_counts[:, col("misses")].tolist() == [1, 1, 1]
    assert h.contains(0) == [True, True, True]
    r = h.access([0])
    assert r.served_by.tolist() == [0]
    assert r.level_counts[:, col("hits")].tolist() == [1, 0, 0]
    assert r.level_counts[:, col("loads")].tolist() == [1, 0, 0]
    assert r.dram_reads.size == 0


def test_lru_order_and_non_inclusive_fill(impl):
    h = impl([L1, L2, L3])
    h.access([0, 4, 0, 8])           # L1 set 0: 8 evicts 4 (the LRU), not 0
    assert h.contains(0)[0] and h.contains(8)[0] and not h.contains(4)[0]
    r = h.access([4])                # L1 miss, L2 hit (L2 set 4 still holds 4)
    assert r.served_by.tolist() == [1]
    assert r.level_counts[:, col("hits")].tolist() == [0, 1, 0]
    assert h.contains(4) == [True, True, True]
    assert not h.contains(0)[0]      # 4 evicted 0 from L1; L2/L3 keep it
    assert h.contains(0)[1:] == [True, True]


def test_store_dirty_in_requesting_level_and_updates_lru(impl):
    h = impl([L1, L2, L3])
    r = h.access([0], True)
    assert r.level_counts[:, col("stores")].tolist() == [1, 1, 1]
    assert r.dram_reads.tolist() == [0]     # write-allocate reads the line
    assert h.is_dirty(0) == [True, False, False]
    h.access([4])
    h.access([0], True)              # store hit: 0 becomes most recent
    h.access([8])                    # evicts 4, not 0
    assert h.contains(0)[0] and not h.contains(4)[0]
    assert h.is_dirty(0)[0]


def test_mixed_is_store_array(impl):
    h = impl([L1])
    r = h.access([0, 0, 1], np.array([False, True, False]))
    assert r.level_counts[0, col("loads")] == 2
    assert r.level_counts[0, col("stores")] == 1
    assert h.is_dirty(0) == [True] and h.is_dirty(1) == [False]


def test_cascaded_write_back_allocates_without_read(impl):
    a, b = geom("A", 4, 2), geom("B", 4, 2)
    h = impl([a, b])
    h.access([0, 4], True)           # A set 0: {0D, 4D}; B set 0: {0, 4} clean
    h.invalidate([0, 4], [1])        # drop B's copies
    r = h.access([8])                # A victim 0D is allocated dirty in B, no read
    assert r.dram_reads.tolist() == [8]
    assert r.dram_writes.tolist() == []
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 0]
    assert r.level_counts[:, col("writebacks_in")].tolist() == [0, 1]
    assert h.is_dirty(0) == [False, True]
    r = h.access([12])
    # B fill of 12 drops clean 8; A victim 4D is allocated in B and evicts 0D -> DRAM.
    assert r.dram_reads.tolist() == [12]
    assert r.dram_writes.tolist() == [0]
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 1]
    assert r.level_counts[:, col("writebacks_in")].tolist() == [0, 1]
    assert h.contains(0) == [False, False]
    assert h.is_dirty(4) == [False, True]
    assert h.contains(8) == [True, False]
    assert h.counters()["DRAM"] == {"dram_reads": 4, "dram_writes": 1}


def test_write_back_into_holding_level_updates_lru(impl):
    a, b = geom("A", 4, 2), geom("B", 8, 2)
    h = impl([a, b])
    h.access([0], True)
    h.access([4, 8])                 # A victim 0D -> B holds 0: dirty, most recent
    assert h.is_dirty(0) == [False, True]
    r = h.access([16])               # B set 0 {8, 0}: 8 is the LRU victim
    assert h.contains(0) == [False, True] and h.contains(8) == [True, False]
    assert r.dram_writes.size == 0


def test_last_level_dirty_victim_goes_to_dram(impl):
    h = impl([geom("A", 1, 1)])
    r = h.access([3, 5], np.array([True, False]))
    assert r.dram_reads.tolist() == [3, 5]
    assert r.dram_writes.tolist() == [3]
    assert r.level_counts[0, col("writebacks_out")] == 1


def test_flush_writes_newest_copy_once(impl):
    a, b = geom("A", 4, 1), geom("B", 4, 2)
    h = impl([a, b])
    h.access([0], True)
    h.access([4])                    # A victim 0D -> B dirty
    h.access([0], True)              # B hit, A dirty again: dirty in both levels
    assert h.is_dirty(0) == [True, True]
    r = h.flush([0, 4, 99])
    assert r.dram_writes.tolist() == [0]
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 0]
    assert h.contains(0) == [False, False] and h.contains(4) == [False, False]
    assert r.served_by.size == 0 and r.dram_reads.size == 0


def test_evict_to_llc(impl):
    h = impl([L1, L2, L3])
    h.access([0], True)
    h.access([4])
    r = h.evict_to_llc([0, 4])
    assert h.contains(0) == [False, False, True]
    assert h.is_dirty(0) == [False, False, True]
    assert h.contains(4) == [False, False, True]
    assert h.is_dirty(4) == [False, False, False]
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 0, 0]
    assert r.level_counts[:, col("writebacks_in")].tolist() == [0, 0, 1]
    assert r.dram_writes.size == 0


def test_evict_to_llc_allocates_and_cascades_to_dram(impl):
    a, b = geom("A", 4, 2), geom("B", 1, 1)
    h = impl([a, b])
    h.access([0], True)              # A {0D}, B {0}
    h.access([1], True)              # A {0D, 1D}(sets 0, 1), B {1}
    r = h.evict_to_llc([0])          # B allocates 0 dirty, drops clean 1
    assert r.dram_writes.size == 0
    assert h.is_dirty(0) == [False, True] and h.contains(1) == [True, False]
    r = h.evict_to_llc([1])          # B allocates 1 dirty, evicts 0D -> DRAM
    assert r.dram_writes.tolist() == [0]
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 1]
    assert h.is_dirty(1) == [False, True]


def test_invalidate_drops_without_write_back(impl):
    h = impl([L1, L2, L3])
    h.access([0], True)
    r = h.invalidate([0], [0])
    assert h.contains(0) == [False, True, True]
    assert r.dram_writes.size == 0
    # the only work counted: one probe of L1 and the line it dropped there
    expected = np.zeros_like(r.level_counts)
    expected[0, [col("probes"), col("invalidations")]] = 1
    assert r.level_counts.tolist() == expected.tolist()
    h.access([0], True)
    h.invalidate([0])
    assert h.contains(0) == [False, False, False]
    assert h.counters()["DRAM"]["dram_writes"] == 0


def test_start_level_skips_upper_levels(impl):
    h = impl([L1, L2, L3])
    r = h.access([0], start_level=2)
    assert r.served_by.tolist() == [3]
    assert h.contains(0) == [False, False, True]
    assert r.level_counts[:2].sum() == 0
    h.access([1])                            # host copy in all levels
    h.access([1], True, start_level=2)       # accelerator writes at the LLC port
    assert h.is_dirty(1) == [False, False, True]
    assert h.contains(1) == [True, True, True]   # host copies are now stale
    r = h.access([1], start_level=2)
    assert r.served_by.tolist() == [2]


def test_stream_prefetcher(impl):
    pf = StreamPrefetcher(level=1, degree=2, n_streams=2)
    h = impl([L1, L2, L3], pf)
    r = h.access(np.arange(7))
    # 0 allocates a stream; 1 matches: prefetch 2, 3; 4 matches: prefetch 5, 6.
    assert r.dram_reads.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert r.served_by.tolist() == [3, 3, 1, 1, 3, 1, 1]
    assert r.level_counts[:, col("misses")].tolist() == [7, 3, 3]
    assert r.level_counts[:, col("hits")].tolist() == [0, 4, 0]
    assert r.level_counts[:, col("prefetches")].tolist() == [0, 4, 4]
    assert r.level_counts[:, col("loads")].tolist() == [7, 7, 3]


def test_prefetcher_disabled_and_stream_table_replacement(impl):
    off = impl([L1, L2, L3], StreamPrefetcher(level=1, degree=2, enabled=False))
    r = off.access(np.arange(7))
    assert r.level_counts[1, col("misses")] == 7
    one = impl([L1, L2, L3], StreamPrefetcher(level=1, degree=2, n_streams=1))
    r = one.access([0, 100, 1, 101])          # each stream evicts the other
    assert r.level_counts[:, col("prefetches")].sum() == 0
    two = impl([L1, L2, L3], StreamPrefetcher(level=1, degree=2, n_streams=2))
    r = two.access([0, 100, 1, 101])
    assert r.dram_reads.tolist() == [0, 100, 1, 2, 3, 101, 102, 103]
    assert r.level_counts[1, col("prefetches")] == 4


def test_prefetch_skips_present_lines_and_fills_only_below(impl):
    h = impl([L1, L2, L3], StreamPrefetcher(level=1, degree=2, n_streams=1))
    h.access([2], start_level=1)              # 2 already in L2 (and L3)
    h.access([0])
    r = h.access([1])                          # prefetch 3 only
    assert r.dram_reads.tolist() == [1, 3]
    assert h.contains(3) == [False, True, True]
    assert r.level_counts[:, col("prefetches")].tolist() == [0, 1, 1]


def test_counters_cumulative(impl):
    h = impl([L1, L2])
    h.access([0, 1, 0])
    c = h.counters()
    assert c["L1"]["loads"] == 3 and c["L1"]["hits"] == 1 and c["L1"]["misses"] == 2
    assert c["L2"]["loads"] == 2 and c["DRAM"] == {"dram_reads": 2, "dram_writes": 0}


# -- zero (full-line write without reading memory) ------------------------------------

def test_zero_allocates_dirty_without_reading(impl):
    h = impl([L1, L2, L3])
    r = h.zero([0, 1])
    assert r.dram_reads.size == 0 and r.dram_writes.size == 0
    assert r.served_by.tolist() == [0, 0]
    assert r.level_counts[:, col("stores")].tolist() == [2, 0, 0]
    assert r.level_counts[:, col("misses")].tolist() == [2, 0, 0]
    assert r.level_counts[:, col("loads")].sum() == 0
    assert h.contains(0) == [True, False, False]
    assert h.is_dirty(0) == [True, False, False]
    assert h.counters()["DRAM"] == {"dram_reads": 0, "dram_writes": 0}
    r = h.flush([0])                  # the zeroed line reaches DRAM once
    assert r.dram_writes.tolist() == [0]


def test_zero_hit_marks_dirty_and_updates_lru(impl):
    h = impl([L1, L2, L3])
    h.access([0, 4])                  # L1 set 0: 4 most recent, 0 the LRU
    r = h.zero([0])
    assert r.level_counts[:, col("hits")].tolist() == [1, 0, 0]
    assert r.level_counts[:, col("stores")].tolist() == [1, 0, 0]
    assert h.is_dirty(0) == [True, False, False]
    h.access([8])                     # evicts 4, not the zeroed 0
    assert h.contains(0)[0] and not h.contains(4)[0]


def test_zero_dirty_victims_cascade(impl):
    a, b = geom("A", 1, 1), geom("B", 1, 1)
    h = impl([a, b])
    h.access([0], True)               # A {0D}, B {0}
    r = h.zero([1])                   # A victim 0D is written into B (present: dirty)
    assert r.dram_reads.size == 0 and r.dram_writes.size == 0
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 0]
    assert r.level_counts[:, col("writebacks_in")].tolist() == [0, 1]
    assert h.is_dirty(0) == [False, True] and h.is_dirty(1) == [True, False]
    r = h.zero([2])                   # A victim 1D allocated in B, evicting 0D to DRAM
    assert r.dram_reads.size == 0
    assert r.dram_writes.tolist() == [0]
    assert r.level_counts[:, col("writebacks_out")].tolist() == [1, 1]
    assert h.is_dirty(1) == [False, True] and h.is_dirty(2) == [True, False]


def test_zero_at_a_lower_level_ignores_the_others(impl):
    h = impl([L1, L2, L3])
    h.access([0, 16], start_level=2)  # L3 set 0: {16, 0}, 0 the LRU
    r = h.zero([0], start_level=1)    # L2 misses: allocated dirty there, L3 not looked up
    assert r.level_counts[:, col("misses")].tolist() == [0, 1, 0]
    assert r.served_by.tolist() == [1]
    assert h.contains(0) == [False, True, True]
    assert h.is_dirty(0) == [False, True, False]
    h.access([32], start_level=2)     # L3's LRU was not refreshed by the zero: 0 leaves L3
    assert h.contains(0) == [False, True, False]
    assert h.contains(16)[2]
