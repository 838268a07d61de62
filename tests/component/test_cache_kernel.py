"""Compiled cache hierarchy: validation, i7-920 geometry, and exact equality with the reference.

The property tests drive ``CacheHierarchy`` (numba) and ``ReferenceHierarchy``
(pure Python) with the same random small geometries and the same random
sequences of operations (streaming, strided, random and mixed load/store
chunks, interleaved with flush / evict_to_llc / invalidate / zero and
lower-level accesses, prefetcher on and off) and require identical per-level counters,
DRAM read/write streams, served_by and final cache contents.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simulator.memory.cache import (
    COUNTER_NAMES, CacheGeometry, CacheHierarchy, StreamPrefetcher,
)
from simulator.memory.cache_reference import ReferenceHierarchy

LINE = 64


def geom(name: str, n_sets: int, ways: int) -> CacheGeometry:
    return CacheGeometry(name, n_sets * ways * LINE, ways, LINE)


def i7_920() -> list[CacheGeometry]:
    # 003 Table 4 (003:L318-L322): 64 B lines, L1D 32 KiB 8-way,
    # L2 256 KiB 8-way, LLC 8 MiB 16-way.
    return [CacheGeometry("L1D", 32 * 1024, 8, 64), CacheGeometry("L2", 256 * 1024, 8, 64),
            CacheGeometry("LLC", 8 * 1024 * 1024, 16, 64)]


# -- validation --------------------------------------------------------------------

@pytest.mark.parametrize("args, fragment", [
    (("L2", 300000, 8, 64), "L2.size_bytes: 300000"),
    (("L2", 3 * 8 * 64, 8, 64), "does not give a power-of-two number of sets"),
    (("L1", 512, 0, 64), "L1.ways: 0"),
    (("L1", 512, 2, 48), "L1.line_bytes: 48"),
    (("L1", 512.0, 2, 64), "L1.size_bytes"),
    (("L1", 512, True, 64), "L1.ways"),
    (("", 512, 2, 64), "name"),
])
def test_geometry_rejects(args, fragment):
    with pytest.raises(ValueError, match=fragment):
        CacheGeometry(*args)


def test_geometry_sets():
    assert [g.n_sets for g in i7_920()] == [64, 512, 8192]


@pytest.mark.parametrize("kwargs, fragment", [
    ({"level": -1}, "StreamPrefetcher.level"),
    ({"degree": 0}, "StreamPrefetcher.degree"),
    ({"n_streams": 0}, "StreamPrefetcher.n_streams"),
    ({"enabled": 1}, "StreamPrefetcher.enabled"),
])
def test_prefetcher_rejects(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        StreamPrefetcher(**kwargs)


@pytest.mark.parametrize("impl", [CacheHierarchy, ReferenceHierarchy])
def test_hierarchy_rejects(impl):
    a = geom("A", 4, 2)
    with pytest.raises(ValueError, match="levels: empty"):
        impl([])
    with pytest.raises(ValueError, match="B.line_bytes: 128"):
        impl([a, CacheGeometry("B", 1024, 2, 128)])
    with pytest.raises(ValueError, match="A.name"):
        impl([a, a])
    with pytest.raises(ValueError, match="StreamPrefetcher.level: 1"):
        impl([a], StreamPrefetcher(level=1))
    h = impl([a])
    with pytest.raises(ValueError, match="start_level: 1"):
        h.access([0], start_level=1)
    with pytest.raises(ValueError, match="lines: minimum -1"):
        h.access([0, -1])
    with pytest.raises(ValueError, match="lines: maximum"):
        h.access([2**62])
    # int64 arrays, as the replay passes them, take a shorter path through the same checks
    with pytest.raises(ValueError, match="lines: minimum -1"):
        h.access(np.array([5, -1, 3], dtype=np.int64))
    with pytest.raises(ValueError, match=f"lines: maximum {2**62}"):
        h.access(np.array([5, 2**62, 3], dtype=np.int64))
    with pytest.raises(ValueError, match="lines: shape"):
        h.access(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="lines: dtype float64"):
        h.access([0.5])
    with pytest.raises(ValueError, match="is_store: shape"):
        h.access([0, 1], np.array([True]))
    with pytest.raises(ValueError, match="levels: 3"):
        h.invalidate([0], [3])


# -- i7-920 geometry -------------------------------------------------------------------

def test_i7_920_capacity_stream():
    h = CacheHierarchy(i7_920())
    llc_lines = 8 * 1024 * 1024 // 64
    lines = np.arange(llc_lines, dtype=np.int64)
    h.access(lines)
    r = h.access(lines)   # exactly the LLC capacity: second pass hits only in the LLC
    assert r.level_counts[:, COUNTER_NAMES.index("misses")].tolist() == [llc_lines, llc_lines, 0]
    assert r.level_counts[2, COUNTER_NAMES.index("hits")] == llc_lines
    r = h.access(lines[-512:])   # the last 32 KiB are in the L1D
    assert r.level_counts[0, COUNTER_NAMES.index("hits")] == 512
    r = h.access(np.arange(llc_lines, llc_lines + 10), True)
    assert (r.served_by == 3).all() and r.dram_writes.size == 0


def test_i7_920_matches_reference_on_mixed_trace():
    rng = np.random.default_rng(3)
    n = 30000
    lines = np.where(rng.random(n) < 0.5, np.arange(n), 100000 + rng.integers(0, 20000, n))
    stores = rng.random(n) < 0.3
    pf = StreamPrefetcher()
    a, b = CacheHierarchy(i7_920(), pf), ReferenceHierarchy(i7_920(), pf)
    assert_same(a.access(lines, stores), b.access(lines, stores))
    assert_same(a.flush(lines[:5000]), b.flush(lines[:5000]))
    assert a.counters() == b.counters()


# -- MARSSx86 use-bit replacement -------------------------------------------------------

def test_config_layer_knows_the_kernels_policies():
    from simulator.config import schema
    from simulator.memory import cache_kernel
    assert schema.CACHE_REPLACEMENTS == cache_kernel.REPLACEMENTS
    assert schema.MAX_MRU_BITS_WAYS == cache_kernel.MAX_MRU_BITS_WAYS
    assert schema.MAX_CACHE_LEVELS == cache_kernel.MAX_CACHE_LEVELS


def test_the_config_layer_prices_the_state_the_kernels_keep_per_line():
    """schema.CACHE_STATE_BYTES_PER_LINE, which bounds a system's caches, is what new_state allocates per line."""
    from simulator.config import schema
    from simulator.memory import cache_kernel
    state = cache_kernel.new_state(np.array([64, 128]), np.array([8, 16]))
    lines = 64 * 8 + 128 * 16
    per_line = sum(a.nbytes for a in state.values() if a.shape == (lines,))
    assert per_line == schema.CACHE_STATE_BYTES_PER_LINE * lines


@pytest.mark.parametrize("impl", [CacheHierarchy, ReferenceHierarchy])
@pytest.mark.parametrize("levels, replacement, fragment", [
    ([geom("A", 1, 4)], "plru", "replacement: 'plru'; expected one of lru, mru_bits"),
    ([geom("A", 1, 64)], "mru_bits", "A.ways: 64; the mru_bits replacement allows at most 63 ways"),
])
def test_replacement_rejects(impl, levels, replacement, fragment):
    with pytest.raises(ValueError, match=fragment):
        impl(levels, replacement=replacement)


@pytest.mark.parametrize("impl", [CacheHierarchy, ReferenceHierarchy])
def test_mru_bits_victims_by_hand(impl):
    """One 4-way set, worked by hand from MARSSx86's ``FullyAssociativeTags.select``."""
    h = impl([geom("A", 1, 4)], replacement="mru_bits")
    h.access([0, 1, 2])          # ways 0, 1, 2 used: bits 0111
    h.access([3])                # fills way 3, all bits set -> only way 3's kept: 1000
    h.access([0])                # hit: way 0 used again: 1001
    r = h.access([4])            # victim: lowest clear bit = way 1 (line 1); bits 1011
    assert r.served_by.tolist() == [1]
    assert [h.contains(x)[0] for x in range(5)] == [True, False, True, True, True]
    h.access([5])                # victim way 2 (line 2); all set -> only way 2's kept: 0100
    assert [h.contains(x)[0] for x in range(6)] == [True, False, False, True, True, True]
    h.access([6])                # victim way 0 (line 0): 0101
    assert [h.contains(x)[0] for x in (0, 3, 4, 5, 6)] == [False, True, True, True, True]


def test_mru_bits_keeps_part_of_a_cyclic_sweep_that_lru_loses():
    """A cyclic sweep over 17 lines of a 16-way set: LRU misses every time, the use bits do not."""
    sweep = np.tile(np.arange(17, dtype=np.int64), 200)
    misses = {}
    for policy in ("lru", "mru_bits"):
        h = CacheHierarchy([geom("A", 1, 16)], replacement=policy)
        r = h.access(sweep)
        misses[policy] = int(r.level_counts[0, COUNTER_NAMES.index("misses")])
    assert misses["lru"] == sweep.size
    assert 0.5 * sweep.size < misses["mru_bits"] < 0.6 * sweep.size


@pytest.mark.parametrize("impl", [CacheHierarchy, ReferenceHierarchy])
def test_mru_bits_refills_an_invalidated_way_only_when_lowest(impl):
    h = impl([geom("A", 1, 4)], replacement="mru_bits")
    h.access([0, 1, 2])          # bits 0111
    h.invalidate([1])            # way 1 empty, bit clear: 0101
    h.access([3])                # lowest clear bit is way 1: the empty way is filled, nothing evicted
    assert [h.contains(x)[0] for x in range(4)] == [True, False, True, True]


# -- kernel == reference -------------------------------------------------------------

def assert_same(ra, rb) -> None:
    assert np.array_equal(ra.level_counts, rb.level_counts)
    assert ra.dram_reads.tolist() == rb.dram_reads.tolist()
    assert ra.dram_writes.tolist() == rb.dram_writes.tolist()
    assert ra.served_by.tolist() == rb.served_by.tolist()
    assert ra.served_by.dtype == np.int8 and ra.dram_reads.dtype == np.int64


@st.composite
def hierarchies(draw):
    n_levels = draw(st.integers(1, 3))
    levels = [geom(f"L{i}", draw(st.sampled_from([1, 2, 4, 8])), draw(st.integers(1, 4)))
              for i in range(n_levels)]
    pf = None
    if draw(st.booleans()):
        pf = StreamPrefetcher(level=draw(st.integers(0, n_levels - 1)),
                            degree=draw(st.integers(1, 4)),
                            n_streams=draw(st.integers(1, 4)),
                            enabled=draw(st.booleans()))
    return levels, pf, draw(st.sampled_from(["lru", "mru_bits"]))


def chunk(rng: np.random.Generator, universe: int) -> tuple[np.ndarray, np.ndarray]:
    """A random access chunk: stream, strided, random or mixed, with a store mix."""
    n = int(rng.integers(1, 80))
    kind = int(rng.integers(0, 4))
    start = int(rng.integers(0, universe))
    if kind == 0:
        lines = start + np.arange(n)
    elif kind == 1:
        lines = start + int(rng.integers(2, 9)) * np.arange(n)
    elif kind == 2:
        lines = rng.integers(0, universe, n)
    else:
        lines = np.where(rng.random(n) < 0.5, start + np.arange(n), rng.integers(0, universe, n))
    store_p = float(rng.choice([0.0, 0.3, 1.0]))
    return lines.astype(np.int64), rng.random(n) < store_p


def run_both(levels, pf, seed: int, n_ops: int, small_buffers: bool = False, replacement: str = "lru") -> None:
    rng = np.random.default_rng(seed)
    a, b = CacheHierarchy(levels, pf, replacement), ReferenceHierarchy(levels, pf, replacement)
    if small_buffers:   # force the kernel's early return and resume path
        per = len(levels) * (1 + (pf.degree if pf else 0))
        a._reserve = lambda n: None
        a._rd = np.empty(per + 3, dtype=np.int64)
        a._wr = np.empty(per + 3, dtype=np.int64)
    universe = int(rng.integers(8, 200))
    for _ in range(n_ops):
        op = int(rng.integers(0, 12))
        lines, stores = chunk(rng, universe)
        if op >= 10:   # full-line zeroing, at the top level or a random one
            k = int(rng.integers(0, len(levels))) if op == 11 else 0
            ra, rb = a.zero(lines, start_level=k), b.zero(lines, start_level=k)
        elif op == 0:
            ra, rb = a.flush(lines), b.flush(lines)
        elif op == 1:
            ra, rb = a.evict_to_llc(lines), b.evict_to_llc(lines)
        elif op == 2:
            lv = sorted(set(rng.integers(0, len(levels), 2).tolist()))
            ra, rb = a.invalidate(lines, lv), b.invalidate(lines, lv)
        else:
            k = int(rng.integers(0, len(levels))) if op == 3 else 0
            flags = bool(stores[0]) if op == 4 else stores
            ra, rb = a.access(lines, flags, start_level=k), b.access(lines, flags, start_level=k)
        assert_same(ra, rb)
    assert a.counters() == b.counters()
    for x in range(universe + 600):
        assert a.contains(x) == b.contains(x)
        assert a.is_dirty(x) == b.is_dirty(x)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hierarchies(), st.integers(0, 2**32 - 1))
def test_kernel_equals_reference(hier, seed):
    levels, pf, replacement = hier
    run_both(levels, pf, seed, n_ops=25, replacement=replacement)


@settings(max_examples=30, deadline=None)
@given(hierarchies(), st.integers(0, 2**32 - 1))
def test_kernel_equals_reference_with_tiny_buffers(hier, seed):
    levels, pf, replacement = hier
    run_both(levels, pf, seed, n_ops=15, small_buffers=True, replacement=replacement)


def test_zero_rejects_bad_arguments():
    for impl in (CacheHierarchy, ReferenceHierarchy):
        h = impl([geom("A", 4, 2)])
        with pytest.raises(ValueError, match="start_level: 1"):
            h.zero([0], start_level=1)
        with pytest.raises(ValueError, match="lines: minimum -1"):
            h.zero([0, -1])


def test_i7_920_zero_then_store_stream_matches_reference():
    # zeroing a region larger than the LLC: every line is allocated dirty with no DRAM read,
    # and the dirty victims stream out to DRAM exactly as the reference says
    a, b = CacheHierarchy(i7_920(), StreamPrefetcher()), ReferenceHierarchy(i7_920(), StreamPrefetcher())
    n = 3 * 8 * 1024 * 1024 // 64 // 2
    lines = np.arange(n, dtype=np.int64)
    ra, rb = a.zero(lines), b.zero(lines)
    assert_same(ra, rb)
    assert ra.dram_reads.size == 0
    assert (ra.served_by == 0).all()
    assert_same(a.access(lines[::7], True), b.access(lines[::7], True))
    assert a.counters() == b.counters()


def test_prefetcher_on_long_stream_equals_reference():
    levels = [geom("A", 4, 2), geom("B", 16, 4), geom("C", 64, 4)]
    for pf in (StreamPrefetcher(level=1, degree=4, n_streams=4),
               StreamPrefetcher(level=0, degree=3, n_streams=2),
               StreamPrefetcher(level=2, degree=8, n_streams=1)):
        a, b = CacheHierarchy(levels, pf), ReferenceHierarchy(levels, pf)
        lines = np.concatenate([np.arange(2000), np.arange(5000, 5400, 2), np.arange(300)])
        stores = (np.arange(lines.size) % 5) == 0
        assert_same(a.access(lines, stores), b.access(lines, stores))
        assert a.counters() == b.counters()
