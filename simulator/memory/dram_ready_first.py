"""Compiled ready-first (FR-FCFS) controller: the order in which a chunk's requests are served,
chosen one request at a time from the whole transaction queue as the DRAM state evolves.

Per channel, reads wait in a read queue and writes in a write buffer, each ``queue_depth``
requests deep and filled in arrival order. Each step the controller serves the request of the
active queue whose column command could issue earliest given the banks, ranks, bank groups and
data bus as they are now (row hits first, as their column needs no ACT; ties go to the oldest),
so one request waiting on its bank does not hold back the others. Reads are served unless the
write buffer is full or no read is waiting; then the writes buffered at that moment are drained
(the write policy of DRAMSim3's ``Controller::ScheduleTransaction``: drain at a full buffer, down
to empty). The chosen request is then issued by ``dram_kernel.serve_request`` with every rule of that
kernel (queue lookahead, refresh, power-down, page policy); the choice itself leaves refresh and
power-down aside. Times are integer picoseconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.memory.dram_kernel import (B_ACT_READY, B_COL_READY, B_OPEN_ROW, B_PRE_READY, C_BUS_FREE, C_LAST_COL,
                                          C_QPOS,
                                          G_LAST_ACT, G_LAST_COL, G_LAST_WR_END, K_LAST_DONE, LAYOUT_ID, P_BG_MASK,
                                          P_CCD_L, P_CCD_S, P_CL, P_CWL, P_FAW, P_LAYOUT, P_RCD, P_RP, P_RRD_L, P_RRD_S,
                                          P_WTR_L, P_WTR_S, R_FAW0, R_FAW_POS, R_LAST_ACT, R_LAST_COL, R_LAST_WR_END,
                                          R_READY, STALE_LAYOUT, bus_ready, field, serve_request)


@njit(cache=True, inline='always')
def column_estimate(line, wr, frontier, decode, p, bk, rk, grp, ch):
    """Earliest column-command time (ps) of one request if it were served next, with its PRE and
    ACT where its bank needs them; refresh, power-down and adaptive closing are not foreseen."""
    n_banks = decode[2, 1]
    c = field(line, decode, 0)
    b = field(line, decode, 2)
    row = field(line, decode, 3)
    rank = c * decode[1, 1] + field(line, decode, 1)
    g = rank * n_banks + b
    gi = rank * (p[P_BG_MASK] + 1) + (b & p[P_BG_MASK])
    open_row = bk[g, B_OPEN_ROW]
    if open_row == row:
        t = max(frontier, bk[g, B_COL_READY])
    else:
        act_ready = bk[g, B_ACT_READY]
        if open_row >= 0:
            act_ready = max(act_ready, max(frontier, bk[g, B_PRE_READY]) + p[P_RP])
        t_act = max(frontier, act_ready, rk[rank, R_READY], rk[rank, R_LAST_ACT] + p[P_RRD_S],
                    grp[gi, G_LAST_ACT] + p[P_RRD_L], rk[rank, R_FAW0 + rk[rank, R_FAW_POS]] + p[P_FAW])
        t = t_act + p[P_RCD]
    t = max(t, ch[c, C_LAST_COL], rk[rank, R_LAST_COL] + p[P_CCD_S], grp[gi, G_LAST_COL] + p[P_CCD_L])
    lat = p[P_CWL] if wr else p[P_CL]
    if not wr:
        t = max(t, rk[rank, R_LAST_WR_END] + p[P_WTR_S], grp[gi, G_LAST_WR_END] + p[P_WTR_L])
    return max(t, bus_ready(ch, c, rank, wr, lat, p))


@njit(cache=True)
def serve_ready_first(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n):
    """Serve one chunk (all arriving at arrival_ps) in ready-first order; write each request's
    data-burst completion time (ps) to ``out`` (in the order of ``lines``) and return the latest."""
    if p[P_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(STALE_LAYOUT)
    n = lines.shape[0]
    qdepth = ring.shape[1]
    by_kind = np.empty((2, n), np.int64)  # per kind (0 read, 1 write): the channel's requests in arrival order
    queue = np.empty((2, qdepth), np.int64)  # per kind: positions in by_kind of the queued requests
    # requests to one bank that are all hits, or all not, have one estimate: only the oldest is estimated
    bank_of = ((lines // decode[0, 0]) % decode[0, 1]) * decode[1, 1] + ((lines // decode[1, 0]) % decode[1, 1])
    bank_of = bank_of * decode[2, 1] + ((lines // decode[2, 0]) % decode[2, 1])
    row_of = (lines // decode[3, 0]) % decode[3, 1]
    seen = np.full(2 * bk.shape[0], -1, np.int64)  # per (bank, hit): the step it was last estimated in
    step = 0
    last_done = -(1 << 62)
    for c in range(decode[0, 1]):
        count = np.zeros(2, np.int64)
        for i in range(n):
            if field(lines[i], decode, 0) == c:
                kind = 1 if is_write[i] != 0 else 0
                by_kind[kind, count[kind]] = i
                count[kind] += 1
        queued = np.zeros(2, np.int64)  # requests in each queue
        admitted = np.zeros(2, np.int64)  # requests of each kind that have entered their queue
        draining = 0
        while True:
            for kind in range(2):  # fill both queues in arrival order
                while queued[kind] < qdepth and admitted[kind] < count[kind]:
                    queue[kind, queued[kind]] = admitted[kind]
                    queued[kind] += 1
                    admitted[kind] += 1
            if queued[0] + queued[1] == 0:
                break
            if draining == 0 and queued[1] > 0 and (queued[1] >= qdepth or queued[0] == 0):
                draining = queued[1]
            kind = 1 if draining > 0 else 0
            frontier = max(arrival_ps, ring[c, ch[c, C_QPOS]])
            # no request of this kind can issue its column before `floor`: the scan, oldest first,
            # stops at the first request that can
            floor = max(frontier, ch[c, C_LAST_COL], ch[c, C_BUS_FREE] - (p[P_CWL] if kind == 1 else p[P_CL]))
            best = -1  # slot in the queue
            best_t = 0
            step += 1
            for slot in range(queued[kind]):
                i = by_kind[kind, queue[kind, slot]]
                g = bank_of[i]
                key = 2 * g + (1 if bk[g, B_OPEN_ROW] == row_of[i] else 0)
                if seen[key] == step:  # an older request of the same bank and kind was estimated
                    continue
                seen[key] = step
                t = column_estimate(lines[i], kind == 1, frontier, decode, p, bk, rk, grp, ch)
                if best < 0 or t < best_t:
                    best, best_t = slot, t
                    if t <= floor:
                        break
            i = by_kind[kind, queue[kind, best]]
            t_done = serve_request(i, lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr,
                                   log, log_n)
            out[i] = t_done
            last_done = max(last_done, t_done)
            queued[kind] -= 1
            for slot in range(best, queued[kind]):  # the queue stays in arrival order
                queue[kind, slot] = queue[kind, slot + 1]
            if kind == 1:
                draining -= 1
    if last_done > ctr[K_LAST_DONE]:
        ctr[K_LAST_DONE] = last_done
    return last_done
