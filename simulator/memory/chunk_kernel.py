"""One compiled call for a chunk of demand accesses: through the caches, then on to DRAM.

A host core's chunk of loads or stores (``MemoryPort.access_levels``) is the cache hierarchy's
``cache_kernel.access_kernel`` and ``demand_counts``, then the chunk's DRAM stream (its reads, then its
write-backs, all arriving together) in the controller's order through ``dram_kernel.serve_ordered``,
then the tally of the level that served each line. ``access_and_serve`` makes
these steps in one call, on the same state arrays and in the same order as ``CacheHierarchy.access``
and ``DramSystem.service_lines`` make them one by one, so every number is the same; a chunk costs one
call's argument handling instead of about ten calls' and the numpy work between them. An accelerator's
chunk through the caches (``MemoryPort.access_apart``, ``Interface.through_caches``) is the same with
its reads and its write-backs served as two chunks, as the interface hands them to the memory.

It covers the common case. The steps serve, one by one, a chunk with: a stream prefetcher (its timing
needs each DRAM read); stores while another core holds a private copy of a line (they invalidate it);
the ready_first scheduler; a memory that is not one ``DramSystem`` (a near memory's ``MemoryMap``);
lines that are not one contiguous int64 array; an arrival before the memory's last; a bus other than
the channel's width (``MemoryPort._chunk_args``, the caches' ``chunk_args`` and the memory's ``chunk_state``
decide). Times are integer ps.

``serve_rows`` runs a host core's consecutive rows of one such chunk each, back to back, with the core's
timing of each (``host.core.HostCore.run_memory_rows``: the same arithmetic as ``memory_ps`` and
``run_memory_row``, in the same order), until a row ends at or after the next time another process acts.

Its compiled copy holds the kernels it calls, inlined; ``simulator.kernel_cache`` keeps it
apart for each version of their source. ``tests/component/test_chunk_kernel.py`` compares it with the
steps made one by one.
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit
from simulator.memory.array_kernel import value_range
from simulator.memory.cache_kernel import access_kernel, demand_counts
from simulator.memory.dram_kernel import K_ACTS, K_READS, K_WRITES, serve_ordered

# ``result`` after the per-level tally (its first n_levels + 1 entries): the outcome
R_STATUS = 0     # OK, BAD_LINES or OUT_OF_RANGE
R_DRAM_DONE = 1  # completion of the chunk's last DRAM read (with ``apart``: read or write-back), ps; NO_READS if none
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
                     log, log_n, pool, mine_attributed, result, apart):
    """Demand loads/stores of ``lines`` entering the caches at ``start_level``, their DRAM stream served
    at ``arrival_ps`` (the time the controller sees it, ps): reads and write-backs as one chunk, or, with
    ``apart``, the reads as one chunk and then the write-backs as another, as ``Interface.through_caches``
    hands them to the memory (R_DRAM_DONE is then the last completion of either).

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
    by_level = demand_counts(served, stores, store_mode, start_level, counts)
    for i in range(counts.shape[0]):
        for j in range(counts.shape[1]):
            mine_levels[i, j] += counts[i, j] - before[i, j]
    n_reads = pos[0]
    n_writes = pos[1]
    pos[0] = 0
    pos[1] = 0
    mine_dram[0] += n_reads
    mine_dram[1] += n_writes
    result[:n_out] = by_level
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
    done = np.empty(m, np.int64)
    cut = n_reads if apart and n_reads and n_writes else m  # the first chunk: apart, the reads alone
    a = 0
    while a < m:
        b = cut if a == 0 else m
        lo, hi = value_range(stream[a:b])
        if lo < 0 or hi >= capacity_lines:
            result[status] = OUT_OF_RANGE
            result[n_out + R_LO] = lo
            result[n_out + R_HI] = hi
            return
        attributed_before = (ctr[K_READS], ctr[K_WRITES], ctr[K_ACTS])
        serve_ordered(stream[a:b], writes[a:b], arrival_ps, order_mode, window, decode, p, bk, rk, grp, ch, ring,
                      pend, ctr, done[a:b], log, log_n, pool)
        mine_attributed[0] += ctr[K_READS] - attributed_before[0]
        mine_attributed[1] += ctr[K_WRITES] - attributed_before[1]
        mine_attributed[2] += ctr[K_ACTS] - attributed_before[2]
        a = b
    if apart:
        result[n_out + R_DRAM_DONE] = value_range(done)[1]
    elif n_reads:
        result[n_out + R_DRAM_DONE] = value_range(done[:n_reads])[1]


# ``serve_rows``'s per-stage integer record (a row of ``stage_ints``), as ``host.core.StageStats`` keeps it
S_COMPUTE_PS = 0
S_STALL_PS = 1
S_LINES = 2
S_BUSY_PS = 3
S_FLOPS = 4
S_ELEMENTS = 5
S_BYTES = 6
S_FIRST_PS = 7   # -1 before the stage's first activity
S_LAST_PS = 8
N_STAGE_INTS = 9

# ``serve_rows``'s outcome (its ``out``)
O_NEXT = 0        # the first row it did not run
O_END_PS = 1      # the end of the last row it ran, ps
O_SERVED_PS = 2   # the start of its last row that reached DRAM, ps (-1 without one)
O_STATUS = 3      # OK, OUT_OF_RANGE, or ROW_REFUSED: row O_NEXT is not one it runs
O_LO = 4          # OUT_OF_RANGE: as R_LO, R_HI
O_HI = 5
O_FLOPS = 6       # the flops of the rows it ran
N_OUT = 7

ROW_REFUSED = 3


@njit(cache=True)
def _cycles_to_ps(cycles, frequency_hz):
    """``engine.ClockDomain.cycles_to_ps``, the same operations in the same order."""
    return int(round(cycles * 1e12 / frequency_hz))


@njit(cache=True)
def serve_rows(lines, offsets, first, stop, stage_of, stores, elements, n_bytes, flops, cycles, issue_factor,
               level_latency_cycles, core_rates, max_outstanding, dram_latency_ps, path_latency_ps, chunk_lines,
               start_ps, limit_ps, pipeline_ps, stage_ints, stage_other, stage_served, core_served,
               start_level, max_line, ts, base, mask, ways, mru, clock, counts, cache_dram, rd_buf, wr_buf, pos,
               pf_cfg, pf_last, pf_stamp, mine_levels, mine_dram,
               order_mode, window, capacity_lines, decode, p, bk, rk, grp, ch, ring, pend, ctr, log, log_n, pool,
               mine_attributed, out):
    """A host core's memory rows ``first``, ``first + 1``, ... run back to back from ``start_ps``, each as
    ``HostCore.run_memory_row`` runs a row of one chunk of independent loads or stores through
    ``access_and_serve``: the same steps and arithmetic, in the same order, on the same state.

    Row r touches ``lines[offsets[r]:offsets[r + 1]]``, is a store when ``stores[r]``, and carries the trace's
    ``elements``, ``n_bytes``, ``flops`` and ``cycles`` and the op's ``issue_factor``; ``stage_of[r]`` is its
    row in ``stage_ints`` (N_STAGE_INTS entries), ``stage_other`` (other cycles) and ``stage_served`` (B per
    level, as ``core_served``), which it adds to. ``core_rates`` = (flops, loads per cycle, clock Hz).

    It stops after the first row that ends at or after ``limit_ps`` (the next time another process acts:
    up to it, no other process can see the state in between), before a row of no lines, of more than
    ``chunk_lines`` lines or of a line outside [0, max_line) (ROW_REFUSED: the caller runs it), at ``stop``,
    or at a chunk whose DRAM stream leaves the memory (OUT_OF_RANGE). Writes ``out`` (O_* entries)."""
    n_out = base.shape[0] + 1
    n_levels = n_out - 1
    result = np.empty(n_out + N_RESULT, np.int64)
    flops_per_cycle = core_rates[0]
    loads_per_cycle = core_rates[1]
    frequency_hz = core_rates[2]
    t = start_ps
    served_ps = -1
    all_flops = 0
    status = OK
    r = first
    while r < stop:
        lo = offsets[r]
        hi = offsets[r + 1]
        n_lines = hi - lo
        if n_lines == 0 or n_lines > chunk_lines:
            status = ROW_REFUSED
            break
        chunk = lines[lo:hi]
        line_lo, line_hi = value_range(chunk)
        if line_lo < 0 or line_hi >= max_line:
            status = ROW_REFUSED
            break
        store_mode = 1 if stores[r] else 0
        access_and_serve(chunk, stores[r:r + 1], store_mode, start_level, max_line, ts, base, mask, ways, mru,
                         clock, counts, cache_dram, rd_buf, wr_buf, pos, pf_cfg, pf_last, pf_stamp, mine_levels,
                         mine_dram, t + pipeline_ps, order_mode, window, capacity_lines, decode, p, bk, rk, grp, ch,
                         ring, pend, ctr, log, log_n, pool, mine_attributed, result, False)
        if result[n_out + R_STATUS] == OUT_OF_RANGE:
            status = OUT_OF_RANGE
            out[O_LO] = result[n_out + R_LO]
            out[O_HI] = result[n_out + R_HI]
            break
        if result[n_out + R_DRAM_LINES]:
            served_ps = t
        # HostCore.memory_ps
        hidden = 0
        for level in range(1, n_levels):
            hidden += result[level] * level_latency_cycles[level]
        mem_ps = _cycles_to_ps(hidden / max_outstanding, frequency_hz)
        mem_ps += (result[n_levels] * dram_latency_ps) // max_outstanding
        dram_done = result[n_out + R_DRAM_DONE]
        if dram_done != NO_READS:
            mem_ps = max(mem_ps, dram_done + path_latency_ps - t)
        # HostCore.run_memory_row, one chunk: its share of the row is 1.0, kept as a factor so that the
        # products below are the floats run_memory_row computes
        share = n_lines / n_lines
        c_flops = flops[r] * share
        c_cycles = cycles[r] * share
        c_elems = elements[r] * share
        issue_ps = _cycles_to_ps(c_elems * issue_factor[r] / loads_per_cycle, frequency_hz)
        comp_ps = _cycles_to_ps(c_flops / flops_per_cycle + c_cycles, frequency_hz)
        busy = max(mem_ps, issue_ps, comp_ps, 1)
        s = stage_of[r]
        bytes_per_line = n_bytes[r] / n_lines
        for level in range(n_out):
            x = result[level] * bytes_per_line
            core_served[level] += x
            stage_served[s, level] += x
        stage_ints[s, S_COMPUTE_PS] += comp_ps
        stage_ints[s, S_STALL_PS] += busy - comp_ps
        stage_ints[s, S_LINES] += n_lines
        stage_ints[s, S_BUSY_PS] += busy
        if stage_ints[s, S_FIRST_PS] < 0:
            stage_ints[s, S_FIRST_PS] = t
        t += busy
        stage_ints[s, S_LAST_PS] = max(stage_ints[s, S_LAST_PS], t)
        stage_ints[s, S_FLOPS] += flops[r]
        all_flops += flops[r]
        stage_other[s] += cycles[r]
        stage_ints[s, S_ELEMENTS] += elements[r] * issue_factor[r]
        stage_ints[s, S_BYTES] += n_bytes[r]
        r += 1
        if t >= limit_ps:
            break
    out[O_NEXT] = r
    out[O_END_PS] = t
    out[O_SERVED_PS] = served_ps
    out[O_STATUS] = status
    out[O_FLOPS] = all_flops
