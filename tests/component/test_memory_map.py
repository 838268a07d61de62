"""The memory map: which memory holds a line (main memory, or a near memory holding operands), and a chunk
split between them served as each memory alone would serve its part."""

import numpy as np

from simulator.memory.dram import DramSystem
from simulator.memory.memory_map import MemoryMap, line_ranges
from tests.conftest import ddr3_preset

TIMING, CURRENTS, GEOMETRY = ddr3_preset()


def test_regions_become_sorted_disjoint_line_ranges():
    # bytes [100, 200) -> lines 1..3; [192, 256) touches line 3 again; [1024, 1088) is line 16; empty: nothing
    ranges = line_ranges([(1024, 64), (192, 64), (100, 100), (4096, 0)], 64)
    assert ranges.tolist() == [[1, 4], [16, 17]]
    assert line_ranges([(0, 64), (64, 64)], 64).tolist() == [[0, 2]]  # adjacent ranges merge
    assert line_ranges([], 64).shape == (0, 2)


def test_each_line_belongs_to_the_first_memory_that_claims_it():
    main, a, b = (DramSystem(TIMING, CURRENTS, GEOMETRY) for _ in range(3))
    mm = MemoryMap(main, [(a, np.array([[10, 20]])), (b, np.array([[15, 30], [40, 41]]))])
    lines = np.array([0, 9, 10, 15, 19, 20, 29, 30, 40, 41])
    assert mm.owner_of(lines).tolist() == [0, 0, 1, 1, 1, 2, 2, 0, 2, 0]
    assert MemoryMap(main, []).owner_of(lines).tolist() == [0] * len(lines)


def test_a_split_chunk_is_served_as_each_memory_alone_serves_its_part():
    rng = np.random.default_rng(1)
    lines = rng.integers(0, 1 << 16, 400)
    writes = rng.random(400) < 0.3
    held = np.array([[1 << 14, 1 << 15]])
    main, near = DramSystem(TIMING, CURRENTS, GEOMETRY), DramSystem(TIMING, CURRENTS, GEOMETRY)
    done = MemoryMap(main, [(near, held)]).service_lines(lines, writes, 5_000, requester="host")
    inside = (lines >= held[0, 0]) & (lines < held[0, 1])
    assert 0 < inside.sum() < len(lines)
    alone_main, alone_near = DramSystem(TIMING, CURRENTS, GEOMETRY), DramSystem(TIMING, CURRENTS, GEOMETRY)
    assert done[~inside].tolist() == alone_main.service_lines(lines[~inside], writes[~inside], 5_000).tolist()
    assert done[inside].tolist() == alone_near.service_lines(lines[inside], writes[inside], 5_000).tolist()
    assert near.counters_by_requester()["host"]["reads"] == int((inside & ~writes).sum())
    assert main.counters()["writes"] == int((~inside & writes).sum())


def test_a_chunk_outside_every_near_memory_is_main_memorys_alone():
    main, near = DramSystem(TIMING, CURRENTS, GEOMETRY), DramSystem(TIMING, CURRENTS, GEOMETRY)
    mm = MemoryMap(main, [(near, np.array([[100, 200]]))])
    assert mm.service(np.arange(10), False, 0) == DramSystem(TIMING, CURRENTS, GEOMETRY).service(np.arange(10), False, 0)
    assert near.counters()["reads"] == 0
    assert mm.service(np.zeros(0, dtype=np.int64), False, 7) == 7


def test_an_inverted_range_holds_nothing():
    main, near = DramSystem(TIMING, CURRENTS, GEOMETRY), DramSystem(TIMING, CURRENTS, GEOMETRY)
    assert MemoryMap(main, [(near, np.array([[5, 3]]))]).owner_of(np.arange(10)).tolist() == [0] * 10


def test_a_near_memory_units_bus_speedup_applies_to_main_memorys_lines_only():
    """A unit inside main memory reaches its banks over a wider path; a near memory's lines it reaches over
    that memory's own channel."""
    lines = np.arange(0, 512)
    main, near = DramSystem(TIMING, CURRENTS, GEOMETRY), DramSystem(TIMING, CURRENTS, GEOMETRY)
    done = MemoryMap(main, [(near, np.array([[256, 512]]))]).service_lines(lines, False, 0, 4.0, requester="unit")
    alone_main, alone_near = DramSystem(TIMING, CURRENTS, GEOMETRY), DramSystem(TIMING, CURRENTS, GEOMETRY)
    assert done[:256].tolist() == alone_main.service_lines(lines[:256], False, 0, 4.0).tolist()
    assert done[256:].tolist() == alone_near.service_lines(lines[256:], False, 0).tolist()
    assert done[:256].tolist() != DramSystem(TIMING, CURRENTS, GEOMETRY).service_lines(lines[:256], False, 0).tolist()
