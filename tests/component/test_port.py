"""Memory port: the core waits for a chunk's DRAM reads; write-backs of evicted lines are posted."""

import numpy as np

from simulator.memory.cache import CacheGeometry, CacheHierarchy
from simulator.memory.dram import DramSystem
from simulator.memory.port import MemoryPort
from tests.conftest import ddr3_preset

TIMING, CURRENTS, GEOMETRY = ddr3_preset()
SETS = 16  # one direct-mapped 1 KiB level of 64 B lines
FAR = 1 << 20  # lines FAR apart share a set and a bank, in different rows


def make_port():
    caches = CacheHierarchy([CacheGeometry("L1D", SETS * 64, 1, 64)])
    dram = DramSystem(TIMING, CURRENTS, GEOMETRY)
    return MemoryPort("host", caches, dram), dram


def dirty_port():
    """A port whose cache holds SETS dirty lines, with DRAM idle again afterwards; (port, dram, t_ps)."""
    port, dram = make_port()
    res = port.access(np.arange(SETS), True, 0)  # write-allocate reads, lines left dirty
    return port, dram, res.dram_done_ps + 1_000_000


def test_store_chunk_waits_for_its_reads_not_for_the_write_backs():
    port, dram, t = dirty_port()
    victims = FAR + np.arange(SETS)  # same sets: every store evicts a dirty line
    res = port.access(victims, True, t)
    assert res.dram_lines == 2 * SETS
    assert dram.counters()["writes"] == SETS
    # the reads alone, on a twin memory in the same state, finish when the port says
    _, twin, _ = dirty_port()
    assert res.dram_done_ps == twin.service(victims, False, t)
    assert dram.last_completion_ps > res.dram_done_ps  # the write-backs are still being served


def test_zero_chunk_has_nothing_to_wait_for_but_its_write_backs_reach_dram():
    port, dram, t = dirty_port()
    res = port.zero(FAR + np.arange(SETS), t)
    assert res.dram_done_ps is None and res.dram_lines == SETS
    assert dram.counters()["writes"] == SETS and dram.last_completion_ps > t


def test_flush_waits_for_its_write_backs():
    port, dram, t = dirty_port()
    res = port.flush(np.arange(SETS), t)
    assert res.dram_lines == SETS and res.dram_done_ps == dram.last_completion_ps > t


def test_a_run_ends_when_its_last_posted_write_back_has_reached_dram():
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from simulator.replay import replay
    from simulator.system import build_system
    from tests.conftest import DEFAULT_SYSTEM
    from workloads.trace import TraceBuilder

    system = build_system(load_spec(DEFAULT_SYSTEM, SystemSpec).spec)
    tb = TraceBuilder()
    tb.access("host", "fill", "write", 0, 8, 8, (16 << 20) // 8)  # 16 MiB of dirty lines
    # zeroing 16 MiB more, a line per element, evicts them: 256 Ki posted write-backs and no read to wait for
    tb.access("host", "zero", "zero", 16 << 20, 64, 64, (16 << 20) // 64)
    end = replay(system, tb.to_table())
    # every line of the fill was evicted by 16 MiB of newer lines (the caches hold 8.3 MiB): all written back
    assert system.dram.counters()["writes"] >= (16 << 20) // 64
    core_end = system.host.stages["zero"].last_ps
    assert end == system.dram.last_completion_ps > core_end  # the run lasts until DRAM has taken them all
