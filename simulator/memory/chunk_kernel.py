"""One compiled call for a chunk of demand accesses: through the caches, then on to DRAM.

A host core's chunk of loads or stores (``MemoryPort.access_levels``) is the cache hierarchy's
``cache_kernel.access_kernel`` and ``demand_counts``, then the chunk's DRAM stream (its reads, then its
write-backs, all arriving together) in the controller's order through ``dram_kernel.serve_ordered``,
then the tally of the level that served each line. ``access_and_serve`` makes
these steps in one call, on the same state arrays and in the same order as ``CacheHierarchy.access``
and ``DramSystem.service_lines`` make them one by one, so every number is the same; a chunk costs one
call's argument handling instead of about ten calls' and the numpy work between them.

It covers the common case. The steps serve, one by one, a chunk with: a stream prefetcher (its timing
needs each DRAM read); stores while another core holds a private copy of a line (they invalidate it);
the ready_first scheduler; a memory that is not one ``DramSystem`` (a near memory's ``MemoryMap``);
lines that are not one contiguous int64 array; an arrival before the memory's last; a bus other than
the channel's width (``MemoryPort._chunk_args`` and the ``chunk_args`` of the caches and the memory
decide). Times are integer ps.

Its compiled copy holds the kernels it calls, inlined; ``simulator.config.kernel_cache`` keeps it
apart for each version of their source. ``tests/component/test_chunk_kernel.py`` compares it with the
steps made one by one.
"""

from __future__ import annotations

import numpy as np

from simulator.config.kernel_cache import njit
from simulator.memory.array_kernel import count_levels, value_range
from simulator.memory.cache_kernel import access_kernel, demand_counts
from simulator.memory.dram_kernel import K_ACTS, K_READS, K_WRITES, serve_ordered

# ``result`` after the per-level tally (its first n_levels + 1 entries): the outcome
R_STATUS = 0     # OK, BAD_LINES or OUT_OF_RANGE
R_DRAM_DONE = 1  # completion of the chunk's last DRAM read, ps (NO_READS if it has none)
R_DRAM_LINES = 2  # DRAM requests of the chunk (reads and write-backs)
R_LO = 3         # OUT_OF_RANGE: the smallest and largest line of the DRAM stream
R_HI = 4
N_RESULT = 5

OK = 0
BAD_LINES = 1      # a line number below 0 or at least ``max_line``: nothing was done
OUT_OF_RANGE = 2   # the DRAM stream leaves the memory: the caches were updated, DRAM was not
NO_READS = -1


@njit(cache=True)
def access_and_serve(lines, stores, store_mode, start_level, max_line,
                     ts, base, mask, ways, mru, clock, counts, cache_dram, rd_buf, wr_buf, pos,
                     pf_cfg, pf_last, pf_stamp, mine_levels, mine_dram,
                     arrival_ps, order_mode, window, capacity_lines, decode, p, bk, rk, grp, ch, ring, pend, ctr,
                     log, log_n, pool, mine_attributed, result):
    """Demand loads/stores of ``lines`` entering the caches at ``start_level``, their DRAM stream served
    at ``arrival_ps`` (the time the controller sees it, ps).

    Cache arguments as ``access_kernel`` takes them (``rd_buf`` and ``wr_buf`` must hold a whole chunk's
    reads and write-backs: one and ``len(base)`` per access); ``mine_levels`` and ``mine_dram`` are the
    requester's level counters and [DRAM reads, writes]. DRAM arguments as ``serve`` takes them, with
    ``order_mode`` (``dram_kernel.serve_ordered``'s mode) and ``window`` (the transaction queue) for it;
    ``mine_attributed`` the requester's reads, writes and activates. Writes into ``result`` (int64[n_levels
    + 1 + N_RESULT]) the accesses served by each level (the last: DRAM), then the R_* entries."""
    n = lines.shape[0]
    n_out = base.shape[0] + 1
    status = n_out + R_STATUS
    if n:
        lo, hi = value_range(lines)
        if lo < 0 or hi >= max_line:
            result[status] = BAD_LINES
            return
    before = counts.copy()
    served = np.empty(n, np.int8)
    if access_kernel(lines, stores, store_mode, 0, start_level, ts, base, mask, ways, mru, clock, counts,
                     cache_dram, rd_buf, wr_buf, pos, served, pf_cfg, pf_last, pf_stamp) != n:
        raise RuntimeError("access_and_serve: the DRAM buffers do not hold the chunk")
    demand_counts(served, stores, store_mode, start_level, counts)
    for i in range(counts.shape[0]):
        for j in range(counts.shape[1]):
            mine_levels[i, j] += counts[i, j] - before[i, j]
    n_reads = pos[0]
    n_writes = pos[1]
    pos[0] = 0
    pos[1] = 0
    mine_dram[0] += n_reads
    mine_dram[1] += n_writes
    result[:n_out] = count_levels(served, n_out)
    result[status] = OK
    result[n_out + R_DRAM_DONE] = NO_READS
    m = n_reads + n_writes
    result[n_out + R_DRAM_LINES] = m
    if m == 0:
        return
    stream = np.empty(m, np.int64)
    writes = np.zeros(m, np.uint8)
    stream[:n_reads] = rd_buf[:n_reads]
    stream[n_reads:] = wr_buf[:n_writes]
    writes[n_reads:] = 1
    lo, hi = value_range(stream)
    if lo < 0 or hi >= capacity_lines:
        result[status] = OUT_OF_RANGE
        result[n_out + R_LO] = lo
        result[n_out + R_HI] = hi
        return
    done = np.empty(m, np.int64)
    attributed_before = (ctr[K_READS], ctr[K_WRITES], ctr[K_ACTS])
    serve_ordered(stream, writes, arrival_ps, order_mode, window, decode, p, bk, rk, grp, ch, ring, pend, ctr, done,
                  log, log_n, pool)
    mine_attributed[0] += ctr[K_READS] - attributed_before[0]
    mine_attributed[1] += ctr[K_WRITES] - attributed_before[1]
    mine_attributed[2] += ctr[K_ACTS] - attributed_before[2]
    if n_reads:
        result[n_out + R_DRAM_DONE] = value_range(done[:n_reads])[1]
