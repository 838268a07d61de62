"""A chunk of demand accesses in one compiled call (``MemoryPort.access_levels``) gives the numbers the steps
give one by one (``MemoryPort.access``): per chunk, and in every counter and state array afterwards."""

import numpy as np
import pytest

from simulator.memory.array_kernel import count_levels
from simulator.memory.cache import CacheGeometry, CacheHierarchy
from simulator.memory.core_caches import CoreCaches
from simulator.memory.dram import AddressOutOfRange, DramSystem
from simulator.memory.port import MemoryPort
from tests.conftest import ddr3_preset

TIMING, CURRENTS, GEOMETRY = ddr3_preset()
LEVELS = [CacheGeometry("L1D", 2 * 1024, 2, 64), CacheGeometry("L2", 8 * 1024, 4, 64)]


def twin_ports(scheduler="frfcfs", page_policy="open", replacement="lru", cores=1, pool=False, pipeline_cycles=0):
    """Two ports on caches and memories in one state: the first is timed by ``access_levels``, the second by
    ``access``."""
    ports = []
    for _ in range(2):
        dram = DramSystem(TIMING, CURRENTS, GEOMETRY, scheduler=scheduler, page_policy=page_policy, queue_depth=8,
                          command_log_capacity=100_000, arrival_to_command_cycles=pipeline_cycles)
        if pool:
            dram.limit_reads(4, 5_000, ("host",))
        if cores == 1:
            views = [CacheHierarchy(LEVELS, None, replacement)]
        else:
            views = CoreCaches(LEVELS, [False, True], cores, None, replacement).views
        ports.append([MemoryPort("host", view, dram) for view in views])
    return ports


def chunks(seed, n_chunks=60):
    """(core, lines, is_store) of random chunks: runs of lines and scattered ones over a span larger than the caches."""
    rng = np.random.default_rng(seed)
    for _ in range(n_chunks):
        if rng.random() < 0.5:
            lines = rng.integers(0, 1 << 14) + np.arange(rng.integers(1, 300), dtype=np.int64)
        else:
            lines = rng.integers(0, 1 << 16, rng.integers(1, 300)).astype(np.int64)
        yield int(rng.integers(0, 4)), lines, bool(rng.random() < 0.4)


def state(port):
    dram, caches = port.dram, getattr(port.caches, "own", port.caches)  # a core's view: its own hierarchy
    return (caches.counters(), caches.counters_by_requester(),
            dram.counters(), dram.counters_by_requester(), dram.command_log().tolist(), dram.last_completion_ps,
            dram.background_times_ps(dram.last_completion_ps + 1))


@pytest.mark.parametrize("scheduler, page_policy, replacement, cores, pool, pipeline_cycles", [
    ("frfcfs", "open", "lru", 1, False, 0),
    ("frfcfs", "closed", "mru_bits", 1, False, 0),
    ("frfcfs", "open_adaptive", "lru", 1, False, 2),
    ("in_order", "open", "lru", 1, True, 0),
    ("frfcfs", "open", "lru", 2, False, 0),   # loads in one call; stores snoop the other core, step by step
])
def test_one_call_gives_the_numbers_of_the_steps(scheduler, page_policy, replacement, cores, pool, pipeline_cycles):
    fused, steps = twin_ports(scheduler, page_policy, replacement, cores, pool, pipeline_cycles)
    t = 0
    n_out = len(LEVELS) + 1
    in_one_call = 0
    for k, (core, lines, is_store) in enumerate(chunks(seed=len(page_policy) + cores)):
        core %= cores
        in_one_call += fused[core]._chunk_args(lines, is_store, t) is not None
        got = fused[core].access_levels(lines, is_store, t)
        res = steps[core].access(lines, is_store, t)
        want = (count_levels(res.cache.served_by, n_out).tolist(), res.dram_done_ps, res.cache.snooped)
        assert (got[0].tolist(), got[1], got[2]) == want, f"chunk {k}"
        t += 40_000 if k % 3 else 0  # some chunks arrive together
    for a, b in zip(fused, steps):
        assert state(a) == state(b)
    assert in_one_call >= 20  # the chunks were served in one call (of 60; the 2-core stores take the steps)


def test_the_cases_the_one_call_does_not_cover_take_the_steps():
    lines = np.arange(4, dtype=np.int64)
    (ready_first,), _ = twin_ports(scheduler="ready_first")
    assert ready_first._chunk_args(lines, False, 0) is None
    two_cores, _ = twin_ports(cores=2)
    two_cores[1].access(lines, False, 0)  # core 1 holds the lines: a store of core 0 must invalidate them
    assert two_cores[0]._chunk_args(lines, False, 0) is not None
    assert two_cores[0]._chunk_args(lines, True, 0) is None
    (port,), _ = twin_ports()
    assert port._chunk_args(lines[::2], False, 0) is None  # not contiguous
    assert port._chunk_args(lines.astype(np.int32), False, 0) is None


def test_lines_outside_the_caches_or_the_memory_are_refused_as_by_the_steps():
    (fused,), (steps,) = twin_ports()
    with pytest.raises(ValueError, match="minimum -1"):
        fused.access_levels(np.array([3, -1], dtype=np.int64), False, 0)
    beyond = np.array([GEOMETRY.capacity_lines + 5], dtype=np.int64)
    with pytest.raises(AddressOutOfRange) as fused_error:
        fused.access_levels(beyond, False, 0)
    with pytest.raises(AddressOutOfRange) as steps_error:
        steps.access(beyond, False, 0)
    assert str(fused_error.value) == str(steps_error.value)


@pytest.mark.parametrize("scheduler, page_policy", [("frfcfs", "open"), ("in_order", "closed")])
def test_reads_and_write_backs_apart_in_one_call_give_the_numbers_of_the_steps(scheduler, page_policy):
    """An accelerator's chunks entering at the last level (``access_apart``) against what its interface did one
    step at a time: the caches, then DRAM's service of the reads, then of the write-backs."""
    (host, *_), _ = twin_ports(scheduler, page_policy)
    (ref_host, *_), _ = twin_ports(scheduler, page_policy)
    fused = MemoryPort("lap", host.caches, host.dram, start_level=len(LEVELS) - 1)
    t = 0
    in_one_call = 0
    for k, (_, lines, is_store) in enumerate(chunks(seed=7)):
        in_one_call += fused._chunk_args(lines, is_store, t) is not None
        got = fused.access_apart(lines, is_store, t)
        res = ref_host.caches.access(lines, is_store, len(LEVELS) - 1, requester="lap")
        want = None
        for arr, is_write in ((res.dram_reads, False), (res.dram_writes, True)):
            if len(arr):
                done = ref_host.dram.service(arr.astype(np.int64), is_write, t, requester="lap")
                want = done if want is None else max(want, done)
        assert got == want, f"chunk {k}"
        t += 40_000 if k % 3 else 0
    assert state(host) == state(ref_host)
    assert in_one_call == 60
