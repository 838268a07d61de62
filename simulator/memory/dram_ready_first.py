"""Compiled ready-first (FR-FCFS) controller: the order in which a chunk's requests are served,
chosen one request at a time from the whole transaction queue as the DRAM state evolves.

Per channel, reads wait in a read queue and writes in a write buffer, each ``queue_depth``
requests deep. Requests enter them in arrival order, and one that finds its queue full holds back
every later request, as a memory controller's front end does (DRAMSim3's trace driver and Ramulator
2's ``LoadStoreTrace`` frontend retry the refused request before sending the next). Each step the controller serves the request of the
active queue whose column command could issue earliest given the banks, ranks, bank groups and
data bus as they are now (row hits first, as their column needs no ACT; ties go to the oldest),
so one request waiting on its bank does not hold back the others. Reads are served unless the
write buffer is full or no read is waiting; then the writes buffered at that moment are drained
(the write policy of DRAMSim3's ``Controller::ScheduleTransaction``: drain at a full buffer, down
to empty). The chosen request is then issued by ``dram_kernel.serve_request`` with every rule of that
kernel (queue lookahead, refresh, power-down, page policy); the choice itself leaves refresh and
power-down aside. An estimate splits into a bank-and-group part, kept until a request of that
rank is served, and a channel-and-rank part, recomputed each step. Times are integer picoseconds.
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit
from simulator.memory.array_kernel import borrowed
from simulator.memory.dram_kernel import (B_ACT_READY, B_COL_READY, B_OPEN_ROW, B_PRE_READY, C_BUS_FREE, C_LAST_COL,
                                          C_LAST_RANK, C_LAST_WRITE, C_QPOS, P_RTRS, P_RTW,
                                          G_LAST_ACT, G_LAST_COL, G_LAST_WR_COL, G_LAST_WR_END, K_LAST_DONE, LAYOUT_ID, P_BG_MASK,
                                          P_CCD_L, P_CCD_L_WR, P_CCD_S, P_CL, P_CWL, P_FAW, P_LAYOUT, P_RCD, P_RP, P_RRD_L, P_RRD_S,
                                          P_WTR_L, P_WTR_S, R_FAW0, R_FAW_POS, R_LAST_ACT, R_LAST_COL, R_LAST_WR_END,
                                          R_READY, STALE_LAYOUT, bus_bubble, field, no_act_history, serve_request)


@njit(cache=True, inline='always')
def rank_terms(c, wr, decode, p, rk, ch, rank_hit, rank_miss, row):
    """The parts of a column-command estimate (ps) that depend on the channel and a rank alone, for
    each rank r of channel c: ``rank_hit[row, r]`` for a row hit (the channel's last column command, the
    rank's tCCD_S, tWTR_S before a read, the data bus with its rank-switch or read-to-write gap) and
    ``rank_miss[row, r]`` for a request needing an ACT (that, and the ACT's refresh end, tRRD_S and tFAW
    plus tRCD). They change with every request served on the channel. (It calls no helper that takes
    arrays, and writes rows of 2-D arrays rather than taking views: either costs reference counting.)"""
    n_ranks = decode[1, 1]
    lat = p[P_CWL] if wr else p[P_CL]
    for r in range(n_ranks):
        rank = c * n_ranks + r
        bus = ch[c, C_BUS_FREE] + bus_bubble(ch[c, C_LAST_RANK], ch[c, C_LAST_WRITE] != 0, rank, wr, p[P_RTRS],
                                             p[P_RTW]) - lat
        hit = max(ch[c, C_LAST_COL], rk[rank, R_LAST_COL] + p[P_CCD_S], bus)
        if not wr:
            hit = max(hit, rk[rank, R_LAST_WR_END] + p[P_WTR_S])
        act = max(rk[rank, R_READY], rk[rank, R_LAST_ACT] + p[P_RRD_S],
                  rk[rank, R_FAW0 + rk[rank, R_FAW_POS]] + p[P_FAW])
        rank_hit[row, r] = hit
        rank_miss[row, r] = max(hit, act + p[P_RCD])


@njit(cache=True, inline='always')
def bank_term(g, gi, hit, wr, p, bk, grp):
    """The part of a column-command estimate (ps) that depends on bank g and its bank group gi alone:
    for a row hit, the bank's column readiness and the group's tCCD_L (and tCCD_L_WR before a write,
    tWTR_L before a read);
    for a miss, also its ACT: the bank's tRC/tRP (after a PRE no earlier than the bank allows, if
    a row is open), the group's tRRD_L, then tRCD. It changes only when a request of its rank is
    served (refresh, power-down and adaptive closing act on that rank alone)."""
    t = grp[gi, G_LAST_COL] + p[P_CCD_L]
    if wr:
        t = max(t, grp[gi, G_LAST_WR_COL] + p[P_CCD_L_WR])
    else:
        t = max(t, grp[gi, G_LAST_WR_END] + p[P_WTR_L])
    if hit:
        return max(t, bk[g, B_COL_READY])
    t = max(t, grp[gi, G_LAST_ACT] + p[P_RRD_L] + p[P_RCD])
    act_ready = bk[g, B_ACT_READY]
    if bk[g, B_OPEN_ROW] >= 0:
        act_ready = max(act_ready, bk[g, B_PRE_READY] + p[P_RP])
    return max(t, act_ready + p[P_RCD])


@njit(cache=True)
def serve_ready_first(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n):
    """Serve one chunk (all arriving at arrival_ps) in ready-first order; write each request's
    data-burst completion time (ps) to ``out`` (in the order of ``lines``) and return the latest."""
    rank_hit = np.empty((1, decode[1, 1]), np.int64)  # rank_terms of the channel being served
    no_pool = np.zeros(1, np.int64)  # no read-entry limit: this order serves a chunk channel by channel, not in time
    return _serve_ready_first(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log,
                              log_n, rank_hit, np.empty_like(rank_hit), no_pool, no_act_history())


@njit(cache=True)
def _serve_ready_first(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n,
                       rank_hit, rank_miss, no_pool, no_acts):
    """:func:`serve_ready_first` with the scratch arrays its loop hands to inlined helpers made by its caller,
    so that the loop borrows them too."""
    if p[P_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(STALE_LAYOUT)
    # the arrays of the per-request loop's helpers, borrowed (no reference counting in the loop)
    lines, is_write, decode, p, bk, rk = borrowed(lines), borrowed(is_write), borrowed(decode), borrowed(p), \
        borrowed(bk), borrowed(rk)
    grp, ch, ring, pend, ctr, log, log_n = borrowed(grp), borrowed(ch), borrowed(ring), borrowed(pend), \
        borrowed(ctr), borrowed(log), borrowed(log_n)
    rank_hit, rank_miss, no_pool, no_acts = borrowed(rank_hit), borrowed(rank_miss), borrowed(no_pool), \
        borrowed(no_acts)
    n = lines.shape[0]
    qdepth = ring.shape[1]
    by_kind = np.empty((2, n), np.int64)  # per kind (0 read, 1 write): the channel's requests in arrival order
    queue = np.empty((2, qdepth), np.int64)  # per kind: positions in by_kind of the queued requests
    # requests to one bank that are all hits, or all not, have one estimate: only the oldest is estimated
    rank_of = ((lines // decode[0, 0]) % decode[0, 1]) * decode[1, 1] + (lines // decode[1, 0]) % decode[1, 1]
    bank_in_rank = (lines // decode[2, 0]) % decode[2, 1]
    bank_of = rank_of * decode[2, 1] + bank_in_rank
    gi_of = rank_of * (p[P_BG_MASK] + 1) + (bank_in_rank & p[P_BG_MASK])
    local_rank_of = (lines // decode[1, 0]) % decode[1, 1]
    row_of = (lines // decode[3, 0]) % decode[3, 1]
    seen = np.full(4 * bk.shape[0], -1, np.int64)  # per (bank, kind, hit): the step it was last estimated in
    # bank_term per (bank, kind, hit), valid while its rank's count of served requests is the one noted
    cached = np.empty(4 * bk.shape[0], np.int64)
    cached_ver = np.full(4 * bk.shape[0], -1, np.int64)
    rank_ver = np.zeros(rk.shape[0], np.int64)
    step = 0
    last_done = -(1 << 62)
    arrivals = np.empty(n, np.int64)  # the channel's requests in arrival order, both kinds
    for c in range(decode[0, 1]):
        count = np.zeros(2, np.int64)
        n_arrivals = 0
        for i in range(n):
            if field(lines[i], decode, 0) == c:
                kind = 1 if is_write[i] != 0 else 0
                by_kind[kind, count[kind]] = i
                count[kind] += 1
                arrivals[n_arrivals] = i
                n_arrivals += 1
        queued = np.zeros(2, np.int64)  # requests in each queue
        admitted = np.zeros(2, np.int64)  # requests of each kind that have entered their queue
        next_arrival = 0
        draining = 0
        while True:
            # admit in arrival order; a request whose queue is full holds back every later one
            while next_arrival < n_arrivals:
                kind = 1 if is_write[arrivals[next_arrival]] != 0 else 0
                if queued[kind] >= qdepth:
                    break
                queue[kind, queued[kind]] = admitted[kind]
                queued[kind] += 1
                admitted[kind] += 1
                next_arrival += 1
            if queued[0] + queued[1] == 0:
                break
            if draining == 0 and queued[1] > 0 and (queued[1] >= qdepth or queued[0] == 0):
                draining = queued[1]
            kind = 1 if draining > 0 else 0
            frontier = max(arrival_ps, ring[c, ch[c, C_QPOS]])
            # no request of this kind can issue its column before `floor`: the scan, oldest first,
            # stops at the first request that can
            floor = max(frontier, ch[c, C_LAST_COL], ch[c, C_BUS_FREE] - (p[P_CWL] if kind == 1 else p[P_CL]))
            rank_terms(c, kind == 1, decode, p, rk, ch, rank_hit, rank_miss, 0)
            best = -1  # slot in the queue
            best_t = 0
            step += 1
            for slot in range(queued[kind]):
                i = by_kind[kind, queue[kind, slot]]
                g = bank_of[i]
                open_row = bk[g, B_OPEN_ROW]
                hit = open_row == row_of[i]
                key = 4 * g + 2 * kind + (1 if hit else 0)
                if seen[key] == step:  # an older request of the same bank and kind was estimated
                    continue
                seen[key] = step
                rank = rank_of[i]
                if cached_ver[key] != rank_ver[rank]:
                    cached[key] = bank_term(g, gi_of[i], hit, kind == 1, p, bk, grp)
                    cached_ver[key] = rank_ver[rank]
                # earliest column command: no command before the frontier, then PRE (tRP) and ACT (tRCD)
                # where the bank needs them; refresh, power-down and adaptive closing are not foreseen
                r = local_rank_of[i]
                if hit:
                    t = max(frontier, cached[key], rank_hit[0, r])
                else:
                    after = p[P_RP] + p[P_RCD] if open_row >= 0 else p[P_RCD]
                    t = max(frontier + after, cached[key], rank_miss[0, r])
                if best < 0 or t < best_t:
                    best, best_t = slot, t
                    if t <= floor:
                        break
            i = by_kind[kind, queue[kind, best]]
            t_done = serve_request(i, lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr,
                                   log, log_n, no_pool, no_acts)
            out[i] = t_done
            rank_ver[rank_of[i]] += 1
            last_done = max(last_done, t_done)
            queued[kind] -= 1
            for slot in range(best, queued[kind]):  # the queue stays in arrival order
                queue[kind, slot] = queue[kind, slot + 1]
            if kind == 1:
                draining -= 1
    if last_done > ctr[K_LAST_DONE]:
        ctr[K_LAST_DONE] = last_done
    return last_done
