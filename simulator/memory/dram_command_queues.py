"""Compiled ready-first controller with per-bank command queues: the order and the earliest command
time of a chunk's requests, the two-level queue structure of DRAMSim3's controller
(``Controller::ScheduleTransaction`` and ``CommandQueue``, github.com/umd-memsys/DRAMSim3). Times
are integer picoseconds.

Per channel, requests enter a read queue or a write buffer (``queue_depth`` each) in arrival order;
a request whose queue is full holds back every later one. From the active transaction queue the
oldest request whose bank's command queue (``command_queue_depth`` entries) has room moves there;
only requests in command queues can be served, of either kind. Reads move unless the write buffer
is full, or no read waits in the read queue or any command queue while writes wait; then the writes
buffered at that moment move, and reads move again once the last of them has.

Each bank offers one request: the oldest one hitting its open row while fewer than four column
commands have gone to that row since its ACT (a precharge waits for them); past four, that hit only
if its column command would come before the precharge its queue's oldest request needs; otherwise
the oldest request (its PRE, if another row is open, then ACT). Among the banks' offers the
controller serves the one whose column command could issue earliest (``dram_ready_first``'s
estimate), with every rule of ``dram_kernel.issue_request`` and none of its commands before the
request entered its command queue. Ties go round-robin: to the first of the tied banks after the
bank served last (``C_LAST_QUEUE``, kept between chunks; bank 0 before any, so the first tie goes to
bank 1), in DRAMSim3's order of its per-bank queues (rank, then bank group, then bank within the
group: ``CommandQueue::GetQueueIndex``, where offsim's bank index has the group in its low bits), as
``CommandQueue::GetCommandToIssue`` (``src/command_queue.cc``) visits the queues from the one after
the queue it issued from last, whatever the age of their requests. Being blind to age, the
round-robin lets the banks' backlogs drift apart: the read queue fills with requests to banks whose
command queues are full while the other banks' queues run dry, so fewer banks have an ACT ready
(offsim / DRAMSim3 run time on DDR4's 1M random reads, ``tests/peers``: 0.968, against 0.908 with ties
served oldest first). DRAMSim3 moves its turn at every command it issues, an ACT or PRE included;
offsim at every request served. A served request's ACT goes at the earliest time its bank, the rank's
refresh and the tRRD_S, tRRD_L and tFAW of the rank's other ACTs allow, which may fall before ACTs of
requests served earlier (``dram_kernel.backfill_act``, over the rank's last ``ACT_HISTORY`` ACTs): DRAMSim3
issues an ACT once it is ready, while its column command waits on the data bus behind other banks'. An ACT
placed after every ACT served before it would keep a bank precharged early waiting behind the turn's later
banks, and the ranks would spend more time with every bank precharged (background_precharge on DDR3's 1M
random reads: 1.156 of DRAMSim3's that way, 0.986 this way). The column-command estimates that pick the request
to serve still take a miss's ACT after the rank's latest ACT, so they may put it later than it is placed.

A rank's refresh goes first once it falls due: when the request to serve next belongs to a rank whose
refresh is due at or before that request's column-command estimate, the rank's banks are precharged and
refreshed first, and the request (re-opening its row) follows, as DRAMSim3's controller issues a due
refresh's precharges and REF before any other command of the rank (``Controller::ClockTick``,
``CommandQueue::FinishRefresh``). Before that, each bank of the rank whose oldest queued request needs
another row opens it if its PRE and ACT could issue before the due time: DRAMSim3 issues a ready ACT at once,
whatever the column command behind it waits for, so such a row is opened, closed by the refresh and opened
again after it. A chunk of one request is served as it comes, its rank refreshed first only
if the refresh fell due by its entry to the command queue.

A request enters its transaction queue no earlier than its arrival, the previous request's entry
and the move of the request ``queue_depth`` places earlier in that queue; it enters its command
queue no earlier than that, the service of the request ``command_queue_depth`` places earlier in
that bank's queue, and, for a write, the start of its drain (for a read, the end of the last drain).
These times and each bank's column commands since its ACT carry over between chunks (``tq_ring``,
``bq_state``).

Column commands of a channel issue in service order, except that a chunk of one request may take
the gap its channel's latest column command left on the data bus: when that command waited (on a
refresh of its rank, say) past the bus's earlier free time, a later request whose data burst, with
the rank-switch or read-to-write bubble on either side, ends before that command's burst begins is
served there, as DRAMSim3's command queues issue a ready command of any bank while another bank's
waits (``CommandQueue::GetCommandToIssue``). The bus before the latest column command is kept per
channel (``bus_gap``).
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit
from simulator.memory.array_kernel import borrowed
from simulator.memory.dram_kernel import (B_ACT_READY, B_COL_READY, B_OPEN_ROW, B_PRE_READY, C_LAST_COL, C_LAST_QUEUE,
                                          C_LAST_RANK, C_LAST_WRITE, CMD_ACT, G_LAST_ACT, G_LAST_COL, G_LAST_WR_COL,
                                          G_LAST_WR_END, K_ACTS, K_LAST_DONE, K_REFRESHES, LAYOUT_ID, NEG_INF,
                                          P_BG_MASK, P_BURST, P_CCD_L, P_CCD_L_WR, P_CL, P_CWL, P_IDLE_CLOSE, P_LAYOUT,
                                          P_RCD, P_RP, P_RRD_L, P_RTRS, P_RTW, P_WTR_L, R_NEXT_REF, R_PEND, R_WAKE,
                                          STALE_LAYOUT, _advance_open, _close_bank, _log, _refresh_until,
                                          backfill_act, bus_bubble, field, issue_request, place_act)
from simulator.memory.dram_ready_first import rank_terms

#: column commands to an open row after which a queued request to another row may precharge it
#: (DRAMSim3 ``CommandQueue::ArbitratePrecharge``)
ROW_HIT_LIMIT = 4
NO_CANDIDATE = "DRAM command queues: no request can be served (a queue structure error)"


def bank_queue_state(n_banks: int, depth: int) -> np.ndarray:
    """Per bank: the service times (ps) of its last ``depth`` command-queue entries (a ring), the
    ring position of the next one (the same for the next entry: between chunks, every entry has been
    served), and the column commands since its ACT."""
    return np.zeros((n_banks, depth + 2), dtype=np.int64)


def bus_gap_state(channel_state: np.ndarray) -> np.ndarray:
    """Per channel: the data-bus columns of ``channel_state`` (``dram_kernel``'s C_* columns) as they were
    before its latest column command; a copy of the state itself before any."""
    return channel_state.copy()


def transaction_queue_state(channels: int, depth: int) -> np.ndarray:
    """Per channel and kind (0 read, 1 write): the times (ps) the last ``depth`` requests moved to a
    command queue (a ring), and the ring position of the next one (the same for the next request to enter:
    between chunks, every request that entered its transaction queue has moved on)."""
    return np.zeros((channels, 2, depth + 1), dtype=np.int64)


@njit(cache=True)
def bank_set(rows: int, n_banks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``rows`` empty sets of bank indices below ``n_banks``: per row, its members (the first ``size[row]``
    entries, in no set order), each member's place among them, and the row's size."""
    return np.empty((rows, n_banks), np.int64), np.empty((rows, n_banks), np.int64), np.zeros(rows, np.int64)


@njit(cache=True, inline='always')
def _set_add(members, place, size, row, b):
    """Add bank b, not a member, to set ``row`` of a ``bank_set``."""
    place[row, b] = size[row]
    members[row, size[row]] = b
    size[row] += 1


@njit(cache=True, inline='always')
def _set_remove(members, place, size, row, b):
    """Remove member b from set ``row`` of a ``bank_set`` (the last member takes its place)."""
    size[row] -= 1
    last = members[row, size[row]]
    members[row, place[row, b]] = last
    place[row, last] = place[row, b]


@njit(cache=True, inline='always')
def _next_pos(pos, depth):
    """The ring position after ``pos`` in a ring of ``depth`` entries."""
    return pos + 1 if pos + 1 < depth else 0


@njit(cache=True, inline='always')
def _group_terms(c, kind, decode, p, grp, group_hit, group_miss):
    """The parts of a column-command estimate (ps) of a request of ``kind`` (0 read, 1 write) on channel c
    that depend on its bank group alone, per group of the channel: its tCCD_L (and tCCD_L_WR before a
    write, tWTR_L before a read) for a row hit, and also its tRRD_L plus tRCD for a request needing an ACT."""
    gi0 = c * decode[1, 1] * (p[P_BG_MASK] + 1)
    for j in range(group_hit.shape[1]):
        gi = gi0 + j
        t = grp[gi, G_LAST_COL] + p[P_CCD_L]
        if kind == 1:
            t = max(t, grp[gi, G_LAST_WR_COL] + p[P_CCD_L_WR])
        else:
            t = max(t, grp[gi, G_LAST_WR_END] + p[P_WTR_L])
        group_hit[kind, j] = t
        group_miss[kind, j] = max(t, grp[gi, G_LAST_ACT] + p[P_RRD_L] + p[P_RCD])


@njit(cache=True, inline='always')
def _bank_part(g, frontier, hit, p, bk):
    """The part of a column-command estimate (ps) that depends on bank g alone and the request's
    frontier: for a row hit, the bank's tRCD; otherwise its PRE (if a row is open) and ACT
    readiness plus tRCD, no earlier than those commands after the frontier."""
    if hit:
        return max(frontier, bk[g, B_COL_READY])
    act_ready = bk[g, B_ACT_READY]
    after = p[P_RCD]
    if bk[g, B_OPEN_ROW] >= 0:
        act_ready = max(act_ready, bk[g, B_PRE_READY] + p[P_RP])
        after += p[P_RP]
    return max(frontier + after, act_ready + p[P_RCD])


@njit(cache=True, inline='always')
def _note_served(bq_state, g, activated, t_col):
    """Bank g served a request of its command queue, its column command at t_col (ps): note the
    service time in the ring, and the column commands since its ACT."""
    depth = bq_state.shape[1] - 2
    bq_state[g, depth + 1] = 1 if activated else bq_state[g, depth + 1] + 1
    bq_state[g, bq_state[g, depth]] = t_col
    bq_state[g, depth] = _next_pos(bq_state[g, depth], depth)


@njit(cache=True)
def _issue_in_gap(line_i, t_move, lines, is_write, decode, p, bk, rk, grp, ch, pend, ctr, log, log_n, bus_gap, c,
                  act_hist):
    """Serve request ``line_i`` on the data bus as it was before channel c's latest column command
    (``bus_gap``) if its burst ends, with the bubble between them, before that command's burst begins;
    return its completion time (ps), or NEG_INF with every state array as it was."""
    latest_rank = ch[c, C_LAST_RANK]
    latest_write = ch[c, C_LAST_WRITE] != 0
    latest_data = ch[c, C_LAST_COL] + (p[P_CWL] if latest_write else p[P_CL])
    wr = is_write[line_i] != 0
    rank = c * decode[1, 1] + field(lines[line_i], decode, 1)
    soonest = t_move + (p[P_CWL] if wr else p[P_CL]) + p[P_BURST]
    if latest_rank < 0 or rank == latest_rank or \
            soonest + bus_bubble(rank, wr, latest_rank, latest_write, p[P_RTRS], p[P_RTW]) > latest_data:
        return NEG_INF  # no gap it could fit (one rank's column commands keep their order: tCCD)
    n_banks = decode[2, 1]
    groups = p[P_BG_MASK] + 1
    banks = bk[rank * n_banks:(rank + 1) * n_banks].copy()
    ranks = rk[rank].copy()
    group_rows = grp[rank * groups:(rank + 1) * groups].copy()
    intervals = pend[rank].copy()
    counters = ctr.copy()
    latest = ch[c].copy()
    logged = log_n[0]
    history = act_hist[rank].copy()
    ch[c] = bus_gap[c]
    t_done = issue_request(line_i, t_move, lines, is_write, decode, p, bk, rk, grp, ch, pend, ctr, log, log_n, act_hist)
    if t_done + bus_bubble(rank, wr, latest_rank, latest_write, p[P_RTRS], p[P_RTW]) <= latest_data:
        bus_gap[c] = ch[c]  # the gap now begins after this burst
        ch[c] = latest
        return t_done
    bk[rank * n_banks:(rank + 1) * n_banks] = banks
    rk[rank] = ranks
    grp[rank * groups:(rank + 1) * groups] = group_rows
    pend[rank] = intervals
    ctr[:] = counters
    ch[c] = latest
    log_n[0] = logged
    act_hist[rank] = history
    return NEG_INF


@njit(cache=True)
def _serve_one(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, pend, ctr, out, log, log_n, tq_ring, bq_state,
               bus_gap, act_hist):
    """``serve_command_queues`` for a chunk of one request: it enters its transaction queue and its
    command queue as soon as both have room (a write also waits for the channel's last column
    command, as a drain started by no read waiting), then is served, in the gap before the channel's
    latest column command if it fits there (``_issue_in_gap``)."""
    tq_depth = tq_ring.shape[2] - 1
    bq_depth = bq_state.shape[1] - 2
    line = lines[0]
    c = field(line, decode, 0)
    g = (c * decode[1, 1] + field(line, decode, 1)) * decode[2, 1] + field(line, decode, 2)
    kind = 1 if is_write[0] != 0 else 0
    pos = tq_ring[c, kind, tq_depth]
    t_move = max(arrival_ps, tq_ring[c, kind, pos], bq_state[g, bq_state[g, bq_depth]])
    if kind == 1:
        t_move = max(t_move, ch[c, C_LAST_COL])
    tq_ring[c, kind, pos] = t_move
    tq_ring[c, kind, tq_depth] = _next_pos(pos, tq_depth)
    acts = ctr[K_ACTS]
    t_done = _issue_in_gap(0, t_move, lines, is_write, decode, p, bk, rk, grp, ch, pend, ctr, log, log_n, bus_gap, c,
                           act_hist)
    if t_done != NEG_INF:
        t_col = bus_gap[c, C_LAST_COL]
    else:
        bus_gap[c] = ch[c]
        t_done = issue_request(0, t_move, lines, is_write, decode, p, bk, rk, grp, ch, pend, ctr, log, log_n, act_hist)
        t_col = ch[c, C_LAST_COL]
    _note_served(bq_state, g, ctr[K_ACTS] != acts, t_col)
    ch[c, C_LAST_QUEUE] = g - c * decode[1, 1] * decode[2, 1]
    out[0] = t_done
    if t_done > ctr[K_LAST_DONE]:
        ctr[K_LAST_DONE] = t_done
    return t_done


@njit(cache=True)
def _open_rows_before_refresh(c, r, due, decode, p, bk, rk, grp, pend, ctr, log, log_n, bq, bq_time, bq_len, lines,
                              act_hist):
    """Rank r of channel c is about to be refreshed, due at ``due`` (ps): each bank of the rank whose oldest
    queued request needs another row opens it first if its PRE (when a row is open) and ACT could issue
    before ``due`` (oldest request first), as DRAMSim3 issues any ready ACT at once, whatever its column
    command waits for; the refresh then closes the row again, and the request re-opens it after the REF."""
    n_banks = decode[2, 1]
    rank = c * decode[1, 1] + r
    groups = p[P_BG_MASK] + 1
    base = rank * n_banks
    if rk[rank, R_PEND] + 2 * n_banks > pend.shape[1]:  # room for these precharges and the refresh's
        watermark = due
        for b in range(n_banks):
            if bq_len[r * n_banks + b] > 0 and bq_time[r * n_banks + b, 0] < watermark:
                watermark = bq_time[r * n_banks + b, 0]
        _advance_open(rk, rank, bk[base:base + n_banks], pend, watermark)
    tried = np.zeros(n_banks, np.bool_)
    while True:
        b = -1  # the untried bank whose oldest request entered its queue first
        for j in range(n_banks):
            lb = r * n_banks + j
            if not tried[j] and bq_len[lb] > 0 and field(lines[bq[lb, 0]], decode, 3) != bk[base + j, B_OPEN_ROW] and (
                    b < 0 or bq_time[lb, 0] < bq_time[r * n_banks + b, 0]):
                b = j
        if b < 0:
            return
        tried[b] = True
        g = base + b
        gi = rank * groups + (b & p[P_BG_MASK])
        start = max(bq_time[r * n_banks + b, 0], rk[rank, R_WAKE])
        t_pre = max(start, bk[g, B_PRE_READY])
        ready = t_pre + p[P_RP] if bk[g, B_OPEN_ROW] >= 0 else start
        t_act = backfill_act(act_hist[rank], bk, rk, rank, g, gi, ready, p)
        if t_act >= due:
            continue
        if bk[g, B_OPEN_ROW] >= 0:
            _close_bank(bk, rk, rank, g, pend, t_pre, p, ctr, log, log_n, b)
        row = field(lines[bq[r * n_banks + b, 0]], decode, 3)
        t_act = place_act(act_hist, bk, rk, grp, ctr, rank, g, gi, row, ready, p)
        if log_n[0] < log.shape[0]:
            _log(log, log_n, t_act, CMD_ACT, rank, b, row)


@njit(cache=True)
def serve_command_queues(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, pend, ctr, out, log, log_n,
                         tq_ring, bq_state, bus_gap, act_hist):
    """Serve one chunk (all arriving at arrival_ps) through the transaction and command queues;
    write each request's data-burst completion time (ps) to ``out`` and return the latest."""
    if p[P_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(STALE_LAYOUT)
    n = lines.shape[0]
    if n == 1:  # (no queue arrays to set up)
        return _serve_one(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, pend, ctr, out, log, log_n, tq_ring,
                          bq_state, bus_gap, act_hist)
    per_channel = decode[1, 1] * decode[2, 1]
    waiting, waiting_at, n_waiting = bank_set(2, per_channel)  # the banks whose transaction lists hold a request
    busy, busy_at, n_busy = bank_set(1, per_channel)  # the banks whose command queues hold a request
    rank_hit = np.empty((2, decode[1, 1]), np.int64)  # rank_terms per kind
    group_hit = np.empty((2, decode[1, 1] * (p[P_BG_MASK] + 1)), np.int64)  # _group_terms per kind
    return _serve_queued(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, pend, ctr, out, log, log_n, tq_ring,
                         bq_state, bus_gap, act_hist, waiting, waiting_at, n_waiting, busy, busy_at, n_busy, rank_hit,
                         np.empty_like(rank_hit), group_hit, np.empty_like(group_hit))


@njit(cache=True)
def _serve_queued(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, pend, ctr, out, log, log_n, tq_ring,
                  bq_state, bus_gap, act_hist, waiting, waiting_at, n_waiting, busy, busy_at, n_busy, rank_hit,
                  rank_miss, group_hit, group_miss):
    """:func:`serve_command_queues` of a chunk of several requests, with the scratch arrays its loop hands to
    inlined helpers made by its caller, so that the loop borrows them too."""
    # the arrays of the per-request loop's helpers, borrowed (no reference counting in the loop)
    lines, is_write, decode, p, bk, rk = borrowed(lines), borrowed(is_write), borrowed(decode), borrowed(p), \
        borrowed(bk), borrowed(rk)
    grp, ch, pend, ctr, log, log_n = borrowed(grp), borrowed(ch), borrowed(pend), borrowed(ctr), borrowed(log), \
        borrowed(log_n)
    bq_state, act_hist = borrowed(bq_state), borrowed(act_hist)
    waiting, waiting_at, n_waiting = borrowed(waiting), borrowed(waiting_at), borrowed(n_waiting)
    busy, busy_at, n_busy = borrowed(busy), borrowed(busy_at), borrowed(n_busy)
    rank_hit, rank_miss = borrowed(rank_hit), borrowed(rank_miss)
    group_hit, group_miss = borrowed(group_hit), borrowed(group_miss)
    n = lines.shape[0]
    tq_depth = tq_ring.shape[2] - 1
    bq_depth = bq_state.shape[1] - 2
    n_ranks = decode[1, 1]
    n_banks = decode[2, 1]
    per_channel = n_ranks * n_banks
    # the transaction queue of each kind, as one list per bank of the channel of its requests to that bank, oldest
    # first (a request's index is its age: the chunk's requests enter in index order), in the entries of a pool
    # (each a request, its entry time and the list's next entry, -1 at its end; a stack of the free ones): each
    # list's first and last entry (-1: empty); the banks whose lists hold a request are ``waiting``
    pool_request = np.empty(2 * tq_depth, np.int64)
    pool_entry_ps = np.empty(2 * tq_depth, np.int64)
    pool_next = np.empty(2 * tq_depth, np.int64)
    free = np.arange(2 * tq_depth)
    n_free = 2 * tq_depth
    tq_first = np.full((2, per_channel), -1, np.int64)
    tq_last = np.empty((2, per_channel), np.int64)
    bq = np.empty((per_channel, bq_depth), np.int64)  # per bank of the channel: its command queue
    bq_time = np.empty((per_channel, bq_depth), np.int64)
    bq_len = np.zeros(per_channel, np.int64)
    # per bank of the channel, kept until its queue or state changes: its oldest row hit's slot (-1: none) and
    # bank part, its oldest request's bank part, and the time that request's PRE may issue past the row-hit
    # limit (NEG_INF: not past it)
    dirty = np.ones(per_channel, np.bool_)
    hit_slot = np.empty(per_channel, np.int64)
    hit_part = np.empty(per_channel, np.int64)
    head_part = np.empty(per_channel, np.int64)
    head_pre = np.empty(per_channel, np.int64)
    # and the kind of each of its two requests, and the lesser bank part of the offers it can make (no offer of
    # the bank comes earlier)
    hit_kind = np.empty(per_channel, np.int64)
    head_kind = np.empty(per_channel, np.int64)
    lower = np.empty(per_channel, np.int64)
    terms_ready = np.zeros(2, np.bool_)
    # per bank of the channel: its rank's index in rank_hit / rank_miss and its group's in group_hit / group_miss
    rank_in_channel = np.arange(per_channel) // n_banks
    # per bank of the channel: its place in the round-robin, DRAMSim3's queue index (rank, group, bank in group)
    bank_in_rank = np.arange(per_channel) % n_banks
    groups = p[P_BG_MASK] + 1
    queue_index = rank_in_channel * n_banks + (bank_in_rank & p[P_BG_MASK]) * (n_banks // groups) + \
        bank_in_rank // groups
    group_in_channel = rank_in_channel * (p[P_BG_MASK] + 1) + (np.arange(per_channel) % n_banks & p[P_BG_MASK])
    last_done = NEG_INF
    for c in range(decode[0, 1]):
        m = 0  # the channel's requests
        for i in range(n):
            if field(lines[i], decode, 0) == c:
                m += 1
        bank0 = c * per_channel
        dirty[:] = True
        tq_len = np.zeros(2, np.int64)
        # per kind: the ring positions of the next request to enter and of the next to move to a command queue
        enter_pos = np.array([tq_ring[c, 0, tq_depth], tq_ring[c, 1, tq_depth]])
        move_pos = enter_pos.copy()
        bq_pos = bq_state[bank0:bank0 + per_channel, bq_depth].copy()  # per bank: its ring position of the next entry
        in_bq = 0
        last_entry = arrival_ps
        draining = 0  # writes of the current drain still to move
        drain_start = NEG_INF
        drain_end = NEG_INF
        admitted = 0  # the chunk's requests up to this one have entered (or belong to another channel)
        served = 0
        last_served = ch[c, C_LAST_QUEUE]  # the bank of the channel served last: ties go round-robin after it
        while served < m:
            progress = True
            while progress:
                progress = False
                while admitted < n:  # enter the transaction queues in arrival order
                    i = admitted
                    if field(lines[i], decode, 0) != c:
                        admitted += 1
                        continue
                    kind = 1 if is_write[i] != 0 else 0
                    if tq_len[kind] >= tq_depth:
                        break
                    last_entry = max(last_entry, tq_ring[c, kind, enter_pos[kind]])
                    enter_pos[kind] = _next_pos(enter_pos[kind], tq_depth)
                    n_free -= 1
                    e = free[n_free]
                    pool_request[e] = i
                    pool_entry_ps[e] = last_entry
                    pool_next[e] = -1
                    lb = field(lines[i], decode, 1) * n_banks + field(lines[i], decode, 2)
                    if tq_first[kind, lb] < 0:
                        tq_first[kind, lb] = e
                        _set_add(waiting, waiting_at, n_waiting, kind, lb)
                    else:
                        pool_next[tq_last[kind, lb]] = e
                    tq_last[kind, lb] = e
                    tq_len[kind] += 1
                    admitted += 1
                if draining == 0 and tq_len[1] > 0 and (
                        tq_len[1] >= tq_depth or (tq_len[0] == 0 and in_bq == 0)):
                    draining = tq_len[1]
                    youngest = NEG_INF  # the entry of the youngest write queued (entries do not decrease with age)
                    for w in range(n_waiting[1]):
                        youngest = max(youngest, pool_entry_ps[tq_last[1, waiting[1, w]]])
                    drain_start = max(youngest, drain_end)
                    if in_bq == 0:
                        drain_start = max(drain_start, ch[c, C_LAST_COL])
                kind = 1 if draining > 0 else 0
                gate = drain_start if kind == 1 else drain_end
                while True:  # the oldest request whose command queue has room moves, until none can
                    lb = -1
                    i = n
                    for w in range(n_waiting[kind]):  # (a bank's requests move oldest first)
                        b = waiting[kind, w]
                        if bq_len[b] < bq_depth and pool_request[tq_first[kind, b]] < i:
                            lb = b
                            i = pool_request[tq_first[kind, b]]
                    if lb < 0:
                        break
                    e = tq_first[kind, lb]
                    t_move = max(pool_entry_ps[e], gate, bq_state[bank0 + lb, bq_pos[lb]])
                    bq_pos[lb] = _next_pos(bq_pos[lb], bq_depth)
                    if bq_len[lb] == 0:
                        _set_add(busy, busy_at, n_busy, 0, lb)
                    bq[lb, bq_len[lb]] = i
                    bq_time[lb, bq_len[lb]] = t_move
                    bq_len[lb] += 1
                    dirty[lb] = True
                    in_bq += 1
                    tq_ring[c, kind, move_pos[kind]] = t_move
                    move_pos[kind] = _next_pos(move_pos[kind], tq_depth)
                    tq_first[kind, lb] = pool_next[e]
                    if pool_next[e] < 0:
                        _set_remove(waiting, waiting_at, n_waiting, kind, lb)
                    free[n_free] = e
                    n_free += 1
                    tq_len[kind] -= 1
                    progress = True
                    if kind == 1:
                        draining -= 1
                        if draining == 0:
                            drain_end = t_move
                            break
            terms_ready[0] = False  # rank and group terms of a kind, computed when a bank first needs them
            terms_ready[1] = False
            best_lb = -1
            best_slot = 0
            best_t = 0
            best_i = 0
            best_turn = 0
            for w in range(n_busy[0]):  # (ties go by turn, so the order of the banks here does not matter)
                lb = busy[0, w]
                g = bank0 + lb
                if dirty[lb]:  # the bank's offer: its oldest row hit and its oldest request, bank parts
                    dirty[lb] = False
                    hit = -1
                    open_row = bk[g, B_OPEN_ROW]
                    if open_row >= 0:
                        for s in range(bq_len[lb]):
                            if field(lines[bq[lb, s]], decode, 3) == open_row:
                                hit = s
                                break
                    hit_slot[lb] = hit
                    bound = NEG_INF
                    if hit >= 0:
                        hit_part[lb] = _bank_part(g, bq_time[lb, hit], True, p, bk)
                        hit_kind[lb] = 1 if is_write[bq[lb, hit]] != 0 else 0
                        bound = hit_part[lb]
                    if hit != 0:
                        head_part[lb] = _bank_part(g, bq_time[lb, 0], False, p, bk)
                        head_kind[lb] = 1 if is_write[bq[lb, 0]] != 0 else 0
                        bound = head_part[lb] if hit < 0 else min(bound, head_part[lb])
                    lower[lb] = bound
                    # past the row-hit limit, the oldest request's PRE goes when it may, unless a hit comes first
                    head_pre[lb] = max(bq_time[lb, 0], bk[g, B_PRE_READY]) \
                        if hit > 0 and bq_state[g, bq_depth + 1] >= ROW_HIT_LIMIT else NEG_INF
                if best_lb >= 0 and lower[lb] > best_t:
                    continue  # its offer comes after the best so far: no tie to break
                r = rank_in_channel[lb]
                j = group_in_channel[lb]
                slot = hit_slot[lb]
                if slot >= 0:
                    kind = hit_kind[lb]
                    if not terms_ready[kind]:
                        rank_terms(c, kind == 1, decode, p, rk, ch, rank_hit, rank_miss, kind)
                        _group_terms(c, kind, decode, p, grp, group_hit, group_miss)
                        terms_ready[kind] = True
                    t = max(hit_part[lb], group_hit[kind, j], rank_hit[kind, r])
                    if t >= head_pre[lb] > NEG_INF:
                        slot = -1
                if slot < 0:
                    slot = 0
                    kind = head_kind[lb]
                    if not terms_ready[kind]:
                        rank_terms(c, kind == 1, decode, p, rk, ch, rank_hit, rank_miss, kind)
                        _group_terms(c, kind, decode, p, grp, group_hit, group_miss)
                        terms_ready[kind] = True
                    t = max(head_part[lb], group_miss[kind, j], rank_miss[kind, r])
                i = bq[lb, slot]
                turn = queue_index[lb] - queue_index[last_served] - 1  # round-robin: after the bank served last
                if turn < 0:
                    turn += per_channel
                if best_lb < 0 or t < best_t or (t == best_t and turn < best_turn):
                    best_lb, best_slot, best_t, best_i, best_turn = lb, slot, t, i, turn
            if best_lb < 0:
                raise RuntimeError(NO_CANDIDATE)
            rank = c * n_ranks + best_lb // n_banks
            if best_t >= rk[rank, R_NEXT_REF]:  # the rank's refresh falls due first: it goes before the request
                _open_rows_before_refresh(c, best_lb // n_banks, rk[rank, R_NEXT_REF], decode, p, bk, rk, grp, pend,
                                          ctr, log, log_n, bq, bq_time, bq_len, lines, act_hist)
                _refresh_until(bk, rk, rank, n_banks, pend, rk[rank, R_NEXT_REF], True, p, ctr, log, log_n)
                r0 = (best_lb // n_banks) * n_banks
                dirty[r0:r0 + n_banks] = True
                continue
            i = best_i
            g = bank0 + best_lb
            acts = ctr[K_ACTS]
            refreshes = ctr[K_REFRESHES]
            for k in range(ch.shape[1]):  # (a loop: a row copy costs reference counting)
                bus_gap[c, k] = ch[c, k]
            t_done = issue_request(i, bq_time[best_lb, best_slot], lines, is_write, decode, p, bk, rk, grp, ch, pend,
                                   ctr, log, log_n, act_hist)
            out[i] = t_done
            last_done = max(last_done, t_done)
            _note_served(bq_state, g, ctr[K_ACTS] != acts, ch[c, C_LAST_COL])
            bq_len[best_lb] -= 1
            if bq_len[best_lb] == 0:
                _set_remove(busy, busy_at, n_busy, 0, best_lb)
            for s in range(best_slot, bq_len[best_lb]):
                bq[best_lb, s] = bq[best_lb, s + 1]
                bq_time[best_lb, s] = bq_time[best_lb, s + 1]
            in_bq -= 1
            served += 1
            last_served = best_lb
            dirty[best_lb] = True
            if ctr[K_REFRESHES] != refreshes or p[P_IDLE_CLOSE] != 0:  # other banks of the rank changed too
                r0 = (best_lb // n_banks) * n_banks
                dirty[r0:r0 + n_banks] = True
        tq_ring[c, 0, tq_depth] = enter_pos[0]
        tq_ring[c, 1, tq_depth] = enter_pos[1]
        ch[c, C_LAST_QUEUE] = last_served
    if last_done > ctr[K_LAST_DONE]:
        ctr[K_LAST_DONE] = last_done
    return last_done
