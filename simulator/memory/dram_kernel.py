"""Compiled per-line DRAM scheduling kernel (numba) over plain numpy state arrays.

The kernel serves line requests in order on a bank/row-buffer model of DDR channels (with
bank groups where the standard has them). All
times are integer picoseconds. State lives in a handful of int64 arrays owned by
``simulator.memory.dram.DramSystem``; the column layouts are the module constants below.

Scheduling rules (per request, in the order given; a first-ready controller first puts each
chunk in its service order with :func:`frfcfs_order`):

* a request may not issue any command before its *frontier* ``F = max(arrival,
  column time of the request queue_depth places earlier on the same channel)`` (a finite
  transaction queue: requests look ahead at most ``queue_depth`` places; with per-bank command
  queues, ``simulator.memory.dram_command_queues`` gives ``issue_request`` the time the request
  entered its bank's queue instead), and a read of a requester with a read-entry pool not before
  the entry it takes is free (:func:`take_read_entry`);
* refreshes of the request's rank that are due at or before ``F`` are performed first (all-bank:
  the rank blocked for tRFC; same-bank: the banks of one refresh set blocked for tRFCsb);
* row hit: column command as soon as the bank (tRCD), the rank (tCCD_S, tWTR_S), the bank
  group (tCCD_L, tCCD_L_WR between writes, tWTR_L) and the data bus (burst occupancy, read-to-write bubble, rank
  switch) allow;
* bank closed: ACT (tRC, tRP of the bank; tRRD_S, tFAW and refresh of the rank; tRRD_L of
  the bank group), column command tRCD later; the ACT comes after the rank's ACTs issued before
  it, or, with the per-bank command queues' ACT history (:func:`place_act`), at the earliest time
  those rules allow among them;
* other row open: PRE (tRAS after ACT, tRTP after a read, tWR after write data), tRP,
  then as for a closed bank;
* column commands, and hence data bursts, of one channel issue in that order; a line of several
  bursts (a pseudo-channel narrower than a line) takes the data bus for them back to back, as if
  interleaved with the next lines' bursts (a real controller does so across bank groups; an isolated
  line's later bursts come (bursts - 1) x (tCCD_L - burst) early), and holds its bank group for
  tCCD_L per burst;
* closed-page policy: every column command is followed by an auto-precharge at the
  earliest legal time.
* adaptive open-page policy (DRAMSim2's ``OpenPage``: when nothing else can issue,
  ``CommandQueue::pop`` precharges an open bank that has no queued access to its row): a row
  stays open while a request to it is in the transaction queue; a bank whose next request
  enters the queue (its frontier) after the bank's earliest precharge was precharged then.
  Frontiers do not decrease along a channel (arrivals do not go back in time, column times
  do not either), so at each request every bank of its rank whose earliest precharge lies
  before the frontier is closed at that time, before refreshes and power-down are accounted.
* power-down (optional, as DRAMSim2's ``USE_LOW_POWER``): a rank with no pending request,
  from the end of its last data burst (tWR later after a write, a tCK after a read: JEDEC's
  tWRPDEN and tRDPDEN; under closed page no sooner than its precharge's end) or refresh up to
  the next request's frontier, is
  powered down, in active power-down while a bank holds a row and in precharge power-down
  otherwise; the rank's next command waits tXP after the exit, which is no earlier than
  tCKE after the entry. A refresh falling due while powered down wakes the rank likewise.

Open-bank time (a rank counts as *open* while at least one of its banks holds a row) is
accumulated exactly: closed intervals ``[ACT, PRE)`` wait in a small per-rank buffer
until every later command is known to lie after them (all later commands of a rank are
at or after ``min(F, next refresh)``), then their union is added up.
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit
from simulator.memory.array_kernel import borrowed
from simulator.memory.dram_params import KERNEL_SLOTS, LAYOUT_ID, SLOT_INDEX

# Parameter vector (int64, picoseconds except the flags): its layout is declared with the DRAM
# parameters (simulator.memory.dram_params.KERNEL_SLOTS); a slot _S applies between banks of
# different bank groups, _L within one group (equal on a standard without bank groups).
P_TCK = SLOT_INDEX["tck"]
P_CL = SLOT_INDEX["cl"]
P_CWL = SLOT_INDEX["cwl"]
P_RCD = SLOT_INDEX["rcd"]
P_RP = SLOT_INDEX["rp"]
P_RAS = SLOT_INDEX["ras"]
P_RC = SLOT_INDEX["rc"]
P_RRD_S = SLOT_INDEX["rrd_s"]
P_RRD_L = SLOT_INDEX["rrd_l"]
P_CCD_S = SLOT_INDEX["ccd_s"]
P_CCD_L = SLOT_INDEX["ccd_l"]
P_CCD_L_WR = SLOT_INDEX["ccd_l_wr"]  # write to write, same bank group (tCCD_L where the standard has no own)
P_WR = SLOT_INDEX["wr"]
P_WTR_S = SLOT_INDEX["wtr_s"]
P_WTR_L = SLOT_INDEX["wtr_l"]
P_RTP = SLOT_INDEX["rtp"]
P_RFC = SLOT_INDEX["rfc"]
P_RFC_PART = SLOT_INDEX["rfc_part"]  # refresh cycle of a partial refresh (tRFCsb, tRFCpb)
P_REF_DIV = SLOT_INDEX["refresh_set_div"]  # 0: all-bank refresh; else bank b is in set (b // this) % sets
P_REF_SETS = SLOT_INDEX["refresh_sets"]  # refresh sets of a rank, refreshed in turn
P_FAW = SLOT_INDEX["faw"]
P_BURST = SLOT_INDEX["burst"]  # data-bus occupancy of one burst, BL/2 tCK (BL/4 at four beats per tCK)
P_BURSTS = SLOT_INDEX["bursts_per_line"]  # bursts of one line: back to back, its bank group held tCCD_L each
P_REFI = SLOT_INDEX["refi"]  # interval between the refresh commands of a rank
P_RTRS = SLOT_INDEX["rtrs"]  # rank-to-rank data-bus switch
P_RTW = SLOT_INDEX["rtw"]  # read-to-write data-bus bubble
P_CLOSED_PAGE = SLOT_INDEX["closed_page"]  # 1 for closed-page policy (a flag, not a time)
P_POWER_DOWN = SLOT_INDEX["power_down"]  # 1: a rank with no pending request powers down (a flag)
P_XP = SLOT_INDEX["xp"]  # power-down exit to the next command (tXP)
P_CKE = SLOT_INDEX["cke"]  # shortest power-down (tCKE)
P_IDLE_CLOSE = SLOT_INDEX["idle_close"]  # 1: adaptive open page, a bank with no queued request to its row precharges
P_BG_MASK = SLOT_INDEX["bank_group_mask"]  # bank groups - 1: a bank's group is its index & this
P_LAYOUT = SLOT_INDEX["layout"]
N_PARAMS = len(KERNEL_SLOTS)
STALE_LAYOUT = ("DRAM kernel: parameter layout differs from the compiled one (a stale numba cache); "
                "delete simulator/__pycache__/kernels-* and simulator/memory/__pycache__")

# Per-bank state columns.
B_OPEN_ROW = 0  # -1 when precharged
B_OPEN_SINCE = 1  # time of the ACT that opened the current row
B_PRE_READY = 2  # earliest PRE (tRAS, tRTP, tWR)
B_ACT_READY = 3  # earliest ACT (tRC, tRP, refresh)
B_COL_READY = 4  # earliest column command (tRCD)
B_PRE_DONE = 5  # last PRE + tRP
N_BANK = 6

# Per-rank state columns.
R_LAST_ACT = 0
R_FAW0 = 1  # ring of the last four ACT times: columns 1..4
R_FAW_POS = 5
R_READY = 6  # end of the last refresh (no ACT before)
R_LAST_COL = 7
R_LAST_WR_END = 8  # end of the last write data burst (tWTR)
R_NEXT_REF = 9
R_ACC_OPEN = 10  # open time accumulated up to R_ACC_MARK
R_ACC_MARK = 11
R_PEND = 12  # number of buffered closed intervals
R_IDLE_FROM = 13  # the rank has had nothing to do since then (power-down time accounted up to it)
R_ACC_PD_OPEN = 14  # power-down time accumulated with a bank open (active power-down)
R_ACC_PD_CLOSED = 15  # power-down time accumulated with all banks precharged
R_PD_ENTRY = 16  # entry time of the current power-down, -1 when powered up
R_WAKE = 17  # earliest command after the last power-down exit (tXP)
R_REF_SET = 18  # refresh set the rank's next refresh covers (partial refresh modes)
N_RANK = 19

# Per-bank-group state columns (a rank's groups are rows rank * groups .. rank * groups + groups - 1).
G_LAST_ACT = 0
G_LAST_COL = 1
G_LAST_WR_END = 2  # end of the group's last write data burst (tWTR_L)
G_LAST_WR_COL = 3  # the group's last write command (tCCD_L_WR)
N_GROUP = 4

# Per-channel state columns.
C_BUS_FREE = 0
C_LAST_WRITE = 1  # 1 if the last data burst was a write
C_LAST_RANK = 2  # rank of the last data burst, -1 before any
C_LAST_COL = 3
C_QPOS = 4
C_LAST_QUEUE = 5  # the bank (index within the channel) whose command queue was served last
N_CHANNEL = 6

# Counter indices.
K_READS = 0
K_WRITES = 1
K_ACTS = 2
K_PRES = 3
K_HITS = 4
K_MISSES = 5
K_CONFLICTS = 6
K_REFRESHES = 7
K_LAST_DONE = 8  # latest completion time seen (ps)
N_COUNTERS = 9

# Command-log codes.
CMD_ACT = 0
CMD_PRE = 1
CMD_RD = 2
CMD_WR = 3
CMD_REF = 4

# Read-entry pool (``take_read_entry``): slot 0 holds the hold time, slots 1.. the entries' free times.
POOL_HOLD = 0

NEG_INF = -(1 << 60)
PEND_OVERFLOW = "DRAM kernel: open-interval buffer overflow"


@njit(cache=True, inline='always')
def _log(log, log_n, t_ps, cmd, rank, bank, row):
    """Append one command to the log if it has room (log rows: time, cmd, rank, bank, row).

    Callers test ``log_n[0] < log.shape[0]`` first: in the per-request loop even a call that
    logs nothing costs, in reference counting of the arrays it takes."""
    n = log_n[0]
    if n < log.shape[0]:
        log[n, 0] = t_ps
        log[n, 1] = cmd
        log[n, 2] = rank
        log[n, 3] = bank
        log[n, 4] = row
        log_n[0] = n + 1


@njit(cache=True)
def _advance_open(rk, rank, banks, pend, watermark):
    """Add to the rank's accumulated open time the union of open intervals in [mark, watermark)."""
    mark = rk[rank, R_ACC_MARK]
    if watermark <= mark:
        return
    npend = rk[rank, R_PEND]
    starts = np.empty(npend + banks.shape[0], np.int64)
    ends = np.empty(npend + banks.shape[0], np.int64)
    m = 0
    for i in range(npend):
        s = max(pend[rank, i, 0], mark)
        e = min(pend[rank, i, 1], watermark)
        if e > s:
            starts[m] = s
            ends[m] = e
            m += 1
    for j in range(banks.shape[0]):
        if banks[j, B_OPEN_ROW] >= 0:
            s = max(banks[j, B_OPEN_SINCE], mark)
            if watermark > s:
                starts[m] = s
                ends[m] = watermark
                m += 1
    # insertion sort by start (m is small and nearly sorted)
    for i in range(1, m):
        s = starts[i]
        e = ends[i]
        k = i - 1
        while k >= 0 and starts[k] > s:
            starts[k + 1] = starts[k]
            ends[k + 1] = ends[k]
            k -= 1
        starts[k + 1] = s
        ends[k + 1] = e
    total = 0
    covered = NEG_INF
    for i in range(m):
        s = starts[i]
        e = ends[i]
        if s >= covered:
            total += e - s
            covered = e
        elif e > covered:
            total += e - covered
            covered = e
    rk[rank, R_ACC_OPEN] += total
    rk[rank, R_ACC_MARK] = watermark
    keep = 0
    for i in range(npend):
        if pend[rank, i, 1] > watermark:
            pend[rank, keep, 0] = pend[rank, i, 0]
            pend[rank, keep, 1] = pend[rank, i, 1]
            keep += 1
    rk[rank, R_PEND] = keep


@njit(cache=True, inline='always')
def _precharge(bk, rk, pend, ctr, rank, bank_row, t_pre, t_rp):
    """Precharge one open bank at t_pre: count it, record its open interval, update its readiness.
    The caller makes sure the interval buffer has room, and logs the command.

    Kept to four arrays and no raise: in the per-request loop of ``serve`` each array an
    inlined helper takes costs reference counting, and a raise inside it more still (with
    the room check and the log inside, a row conflict took about three times as long)."""
    ctr[K_PRES] += 1
    n = rk[rank, R_PEND]
    pend[rank, n, 0] = bk[bank_row, B_OPEN_SINCE]
    pend[rank, n, 1] = t_pre
    rk[rank, R_PEND] = n + 1
    bk[bank_row, B_OPEN_ROW] = -1
    done = t_pre + t_rp
    bk[bank_row, B_PRE_DONE] = done
    if done > bk[bank_row, B_ACT_READY]:
        bk[bank_row, B_ACT_READY] = done


@njit(cache=True)
def _close_bank(bk, rk, rank, bank_row, pend, t_pre, p, ctr, log, log_n, bank_idx):
    """Precharge one open bank at t_pre, counted and logged, its interval's room checked. For the
    refresh and adaptive-close paths; ``serve`` checks the room once per request instead."""
    if rk[rank, R_PEND] >= pend.shape[1]:
        raise RuntimeError(PEND_OVERFLOW)
    if log_n[0] < log.shape[0]:
        _log(log, log_n, t_pre, CMD_PRE, rank, bank_idx, bk[bank_row, B_OPEN_ROW])
    _precharge(bk, rk, pend, ctr, rank, bank_row, t_pre, p[P_RP])


@njit(cache=True)
def _close_idle_banks(bk, rk, rank, n_banks, pend, t_ps, p, ctr, log, log_n):
    """Adaptive open page: precharge, at its earliest legal time, every open bank of ``rank``
    whose earliest precharge lies before t_ps (no request to its row was queued then). A
    precharge ending after the rank's last work delays its power-down."""
    base = rank * n_banks
    earliest = t_ps
    n = 0
    for b in range(n_banks):
        if bk[base + b, B_OPEN_ROW] >= 0 and bk[base + b, B_PRE_READY] < t_ps:
            n += 1
            if bk[base + b, B_PRE_READY] < earliest:
                earliest = bk[base + b, B_PRE_READY]
    if n == 0:
        return
    if rk[rank, R_PEND] + n > pend.shape[1]:  # room for the new intervals; none closes before `earliest`
        wm = earliest
        if rk[rank, R_NEXT_REF] < wm:
            wm = rk[rank, R_NEXT_REF]
        _advance_open(rk, rank, bk[base:base + n_banks], pend, wm)
    for b in range(n_banks):
        g = base + b
        if bk[g, B_OPEN_ROW] >= 0 and bk[g, B_PRE_READY] < t_ps:
            _close_bank(bk, rk, rank, g, pend, bk[g, B_PRE_READY], p, ctr, log, log_n, b)
            if bk[g, B_PRE_DONE] > rk[rank, R_IDLE_FROM]:
                rk[rank, R_IDLE_FROM] = bk[g, B_PRE_DONE]


@njit(cache=True, inline='always')
def _power_down_until(bk, rk, rank, n_banks, t_ps, p):
    """Power-down policy: a rank with no pending request is powered down from the end of its
    last work (``R_IDLE_FROM``) up to t_ps; add that time to its active (a bank open) or
    precharge (all banks closed) power-down total. Nothing when the policy is off."""
    if p[P_POWER_DOWN] == 0:
        return
    start = rk[rank, R_IDLE_FROM]
    if t_ps <= start:
        return
    base = rank * n_banks
    any_open = False
    for b in range(n_banks):
        if bk[base + b, B_OPEN_ROW] >= 0:
            any_open = True
            break
    if any_open:
        rk[rank, R_ACC_PD_OPEN] += t_ps - start
    else:
        rk[rank, R_ACC_PD_CLOSED] += t_ps - start
    if rk[rank, R_PD_ENTRY] < 0:
        rk[rank, R_PD_ENTRY] = start
    rk[rank, R_IDLE_FROM] = t_ps


@njit(cache=True, inline='always')
def _power_up(rk, rank, t_ps, p):
    """Work arrives at t_ps: return the earliest time of the rank's next command. A powered-down
    rank exits (no earlier than tCKE after the entry) and its next command waits tXP; a rank
    already up still honours the tXP of its last exit."""
    entry = rk[rank, R_PD_ENTRY]
    if entry >= 0:
        rk[rank, R_PD_ENTRY] = -1
        rk[rank, R_WAKE] = max(t_ps, entry + p[P_CKE]) + p[P_XP]
    return max(t_ps, rk[rank, R_WAKE])


@njit(cache=True)
def _refresh_until(bk, rk, rank, n_banks, pend, limit_ps, inclusive, p, ctr, log, log_n):
    """Perform every refresh of `rank` due before limit_ps (at or before when inclusive). An all-bank
    refresh precharges every open bank and blocks the rank for tRFC; a same-bank or per-bank refresh
    (``P_REF_DIV`` > 0) precharges and blocks for tRFCsb / tRFCpb only the banks of the rank's next
    refresh set, the others working on."""
    div = p[P_REF_DIV]
    n_sets = p[P_REF_SETS]
    while True:
        t_ref = rk[rank, R_NEXT_REF]
        if inclusive:
            if t_ref > limit_ps:
                return
        elif t_ref >= limit_ps:
            return
        base = rank * n_banks
        ref_set = rk[rank, R_REF_SET]
        _power_down_until(bk, rk, rank, n_banks, t_ref, p)
        t_pre = _power_up(rk, rank, t_ref, p)
        n_open = 0
        for b in range(n_banks):
            if bk[base + b, B_OPEN_ROW] >= 0 and (div == 0 or (b // div) % n_sets == ref_set):
                n_open += 1
                if bk[base + b, B_PRE_READY] > t_pre:
                    t_pre = bk[base + b, B_PRE_READY]
        if n_open > 0:
            # keep the interval buffer bounded before adding up to n_banks intervals
            if rk[rank, R_PEND] + n_banks > pend.shape[1]:
                _advance_open(rk, rank, bk[base:base + n_banks], pend, t_ref)
            for b in range(n_banks):
                if bk[base + b, B_OPEN_ROW] >= 0 and (div == 0 or (b // div) % n_sets == ref_set):
                    _close_bank(bk, rk, rank, base + b, pend, t_pre, p, ctr, log, log_n, b)
        t_start = t_pre
        for b in range(n_banks):
            if div == 0 or (b // div) % n_sets == ref_set:
                if bk[base + b, B_PRE_DONE] > t_start:
                    t_start = bk[base + b, B_PRE_DONE]
                # a partial refresh waits for its banks' tRC and tRP, as an ACT would
                if div > 0 and bk[base + b, B_ACT_READY] > t_start:
                    t_start = bk[base + b, B_ACT_READY]
        t_end = t_start + (p[P_RFC] if div == 0 else p[P_RFC_PART])
        if log_n[0] < log.shape[0]:
            _log(log, log_n, t_start, CMD_REF, rank, -1 if div == 0 else ref_set, -1)
        for b in range(n_banks):
            if (div == 0 or (b // div) % n_sets == ref_set) and bk[base + b, B_ACT_READY] < t_end:
                bk[base + b, B_ACT_READY] = t_end
        if div == 0:
            rk[rank, R_READY] = t_end
        else:
            rk[rank, R_REF_SET] = ref_set + 1 if ref_set + 1 < n_sets else 0
        if t_end > rk[rank, R_IDLE_FROM]:
            rk[rank, R_IDLE_FROM] = t_end
        rk[rank, R_NEXT_REF] = t_ref + p[P_REFI]
        ctr[K_REFRESHES] += 1


@njit(cache=True, inline='always')
def bus_bubble(last_rank, last_write, rank, wr, t_rtrs, t_rtw):
    """Idle data-bus time (ps) a burst of ``rank`` (a write if ``wr``) needs after one of ``last_rank``
    (a write if ``last_write``; -1: no burst yet): the rank switch tRTRS, or the read-to-write bubble
    if longer. Scalars only: a helper taking arrays costs reference counting in the callers' loops."""
    gap = 0
    if last_rank >= 0:
        if last_rank != rank:
            gap = t_rtrs
        if wr and not last_write and t_rtw > gap:
            gap = t_rtw
    return gap


@njit(cache=True, inline='always')
def field(line, decode, i):
    """Field ``i`` (channel, rank, bank, row) of a line index: (line // divisor) % count, by shift and mask
    when the table gives a shift (divisor and count powers of two, ``decode[i, 2]`` >= 0)."""
    if decode[i, 2] >= 0:
        return (line >> decode[i, 2]) & (decode[i, 1] - 1)
    return (line // decode[i, 0]) % decode[i, 1]


@njit(cache=True, inline='always')
def take_read_entry(pool):
    """The entry of ``pool`` a read takes: the one that frees first (lowest index among equals).

    An outstanding-read limit shared by requesters upstream of the controller (an uncore read
    queue): ``pool[POOL_HOLD]`` is how long an entry stays held beyond the read's data burst (ps),
    ``pool[1:]`` the time each entry frees (ps). A read may issue no command before the entry it
    takes is free, and holds it until its data burst completes plus the hold time; requests take
    entries in service order."""
    best = 1
    for e in range(2, pool.shape[0]):
        if pool[e] < pool[best]:
            best = e
    return best


@njit(cache=True, inline='always')
def serve_request(i, lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, log, log_n, pool,
                  no_acts):
    """Serve request i of `lines`, arriving at arrival_ps, next on its channel; return its
    data-burst completion time (ps). The per-request step of :func:`serve`: the frontier is the
    arrival or the column time of the request queue_depth places earlier (``ring``), and for a read
    with a read-entry pool (``pool``, see :func:`take_read_entry`; of length 1, no limit) not before
    the entry it takes is free. no_acts: ``no_act_history()``, made once by the caller."""
    c = field(lines[i], decode, 0)
    qpos = ch[c, C_QPOS]
    frontier = arrival_ps
    if ring[c, qpos] > frontier:
        frontier = ring[c, qpos]
    entry = 0
    if is_write[i] == 0 and pool.shape[0] > 1:
        entry = take_read_entry(pool)
        if pool[entry] > frontier:
            frontier = pool[entry]
    t_done = issue_request(i, frontier, lines, is_write, decode, p, bk, rk, grp, ch, pend, ctr, log, log_n,
                           no_acts)
    ring[c, qpos] = ch[c, C_LAST_COL]
    ch[c, C_QPOS] = qpos + 1 if qpos + 1 < ring.shape[1] else 0
    if entry > 0:  # the entry frees when the data is back with the requester
        pool[entry] = t_done + pool[POOL_HOLD]
    return t_done


@njit(cache=True, inline='always')
def earliest_act(bk, rk, grp, rank, g, gi, ready, p):
    """Earliest ACT (ps) of bank g (rank ``rank``, bank-group row gi) no earlier than ``ready``: the bank's
    tRC and tRP, the rank's refresh end, tRRD_S and tFAW, the group's tRRD_L."""
    t_act = max(ready, bk[g, B_ACT_READY])
    t_act = max(t_act, rk[rank, R_READY])
    t_act = max(t_act, rk[rank, R_LAST_ACT] + p[P_RRD_S])
    t_act = max(t_act, grp[gi, G_LAST_ACT] + p[P_RRD_L])
    return max(t_act, rk[rank, R_FAW0 + rk[rank, R_FAW_POS]] + p[P_FAW])


@njit(cache=True, inline='always')
def record_act(bk, rk, grp, ctr, rank, g, gi, row, t_act, p):
    """Bank g opens ``row`` at t_act (ps): the rank's tFAW window and last ACT, the group's last ACT, the
    bank's open row and its tRC, tRAS and tRCD readiness, and the ACT count. The caller logs it."""
    fpos = rk[rank, R_FAW_POS]
    rk[rank, R_FAW0 + fpos] = t_act
    rk[rank, R_FAW_POS] = (fpos + 1) & 3
    rk[rank, R_LAST_ACT] = t_act
    grp[gi, G_LAST_ACT] = t_act
    bk[g, B_OPEN_ROW] = row
    bk[g, B_OPEN_SINCE] = t_act
    bk[g, B_ACT_READY] = t_act + p[P_RC]
    bk[g, B_PRE_READY] = t_act + p[P_RAS]
    bk[g, B_COL_READY] = t_act + p[P_RCD]
    ctr[K_ACTS] += 1


#: ACTs per rank the command-queue controller remembers (``act_history``): an ACT may fall among the
#: latest twelve, every tFAW window it can fall in within the history
ACT_HISTORY = 16


@njit(cache=True, inline='always')
def no_act_history():
    """The ACT history of a controller that places every ACT after the ones placed before it (empty)."""
    return np.zeros((0, ACT_HISTORY, 2), dtype=np.int64)


def act_history(n_ranks: int) -> np.ndarray:
    """Per rank, its latest ``ACT_HISTORY`` ACTs in time order, oldest first: time (ps; NEG_INF while
    empty) and bank-group row."""
    h = np.zeros((n_ranks, ACT_HISTORY, 2), dtype=np.int64)
    h[:, :, 0] = NEG_INF
    return h


@njit(cache=True, inline='always')
def _with(h, q, t, x):
    """Element x of the rank's ACT times with t inserted at position q."""
    if x < q:
        return h[x, 0]
    if x == q:
        return t
    return h[x - 1, 0]


@njit(cache=True)
def backfill_act(h, bk, rk, rank, g, gi, ready, p):
    """Earliest ACT (ps) of bank g no earlier than ``ready``, the bank's tRC and tRP and the rank's
    refresh end, that keeps tRRD_S (tRRD_L within its bank group) from every ACT of the rank's history
    ``h`` and no five ACTs within a tFAW: it may fall before ACTs placed earlier, as a controller that
    issues each command when it is ready (DRAMSim3's) issues an ACT whose column command waits behind
    other banks' before their ACTs."""
    t = max(ready, bk[g, B_ACT_READY], rk[rank, R_READY])
    first = 0  # the history's oldest real entry
    while first < ACT_HISTORY and h[first, 0] == NEG_INF:
        first += 1
    if first == 0:  # ACTs older than the history bound it too: keep every tFAW window it can fall in within it
        t = max(t, h[3, 0])
    n = ACT_HISTORY - first
    for _ in range(4 * ACT_HISTORY + 4):
        moved = False
        for k in range(first, ACT_HISTORY):
            a = h[k, 0]
            d = p[P_RRD_L] if h[k, 1] == gi else p[P_RRD_S]
            if a - d < t < a + d:
                t = a + d
                moved = True
        q = 0  # t's place among the history's times
        while q < n and h[first + q, 0] <= t:
            q += 1
        for j in range(max(q - 4, 0), q + 1):  # the windows of five ACTs that hold t
            if j + 4 > n:
                break
            if _with(h[first:], q, t, j + 4) - _with(h[first:], q, t, j) < p[P_FAW]:
                t = _with(h[first:], q, t, j) + p[P_FAW] if j < q else h[first + q, 0] + 1
                moved = True
                break
        if not moved:
            return t
    # (not reached: each round moves t past a bound it cannot fall back behind) after every ACT of the history,
    # whatever its bank group, and tFAW after the fourth latest
    return max(t, h[ACT_HISTORY - 1, 0] + max(p[P_RRD_S], p[P_RRD_L]), h[ACT_HISTORY - 4, 0] + p[P_FAW])


@njit(cache=True, inline='always')
def place_act(acts, bk, rk, grp, ctr, rank, g, gi, row, ready, p):
    """Open ``row`` in bank g at its earliest ACT no earlier than ``ready`` and record it; return the ACT
    time (ps). Without a history (``no_act_history``) the ACT comes after the rank's ACTs placed before;
    with one (``acts``, see ``act_history``), it may fall between them (``backfill_act``), and the rank's
    and group's latest ACT and tFAW ring stay those of the latest in time."""
    if acts.shape[0] == 0:
        t_act = earliest_act(bk, rk, grp, rank, g, gi, ready, p)
        record_act(bk, rk, grp, ctr, rank, g, gi, row, t_act, p)
        return t_act
    h = acts[rank]
    t_act = backfill_act(h, bk, rk, rank, g, gi, ready, p)
    group_last = grp[gi, G_LAST_ACT]
    record_act(bk, rk, grp, ctr, rank, g, gi, row, t_act, p)
    grp[gi, G_LAST_ACT] = max(group_last, t_act)
    if t_act >= h[0, 0]:  # (never older than the history: backfill_act)
        q = 0
        while q + 1 < ACT_HISTORY and h[q + 1, 0] <= t_act:
            h[q, 0] = h[q + 1, 0]
            h[q, 1] = h[q + 1, 1]
            q += 1
        h[q, 0] = t_act
        h[q, 1] = gi
    rk[rank, R_LAST_ACT] = h[ACT_HISTORY - 1, 0]
    for k in range(4):
        rk[rank, R_FAW0 + k] = h[ACT_HISTORY - 4 + k, 0]
    rk[rank, R_FAW_POS] = 0
    return t_act


@njit(cache=True, inline='always')
def issue_request(i, frontier, lines, is_write, decode, p, bk, rk, grp, ch, pend, ctr, log, log_n, acts):
    """Issue the commands of request i of `lines`, next on its channel, none before ``frontier``
    (ps); return its data-burst completion time (ps). acts: the ranks' ACT histories of a controller
    that places an ACT among those placed before it, or an empty one (``no_act_history``; ``place_act``)."""
    bg_mask = p[P_BG_MASK]
    n_banks = decode[2, 1]
    n_ranks_per_ch = decode[1, 1]
    pend_room = pend.shape[1]
    t_rp = p[P_RP]
    closed_page = p[P_CLOSED_PAGE] != 0
    line = lines[i]
    c = field(line, decode, 0)
    r_local = field(line, decode, 1)
    b = field(line, decode, 2)
    row = field(line, decode, 3)
    rank = c * n_ranks_per_ch + r_local
    g = rank * n_banks + b
    gi = rank * (bg_mask + 1) + (b & bg_mask)
    wr = is_write[i] != 0

    if p[P_IDLE_CLOSE] != 0:
        _close_idle_banks(bk, rk, rank, n_banks, pend, frontier, p, ctr, log, log_n)
    if rk[rank, R_NEXT_REF] <= frontier:  # (test here: the call is not inlined)
        _refresh_until(bk, rk, rank, n_banks, pend, frontier, True, p, ctr, log, log_n)
    if rk[rank, R_PEND] + 2 > pend_room // 2:
        wm = frontier
        if rk[rank, R_NEXT_REF] < wm:
            wm = rk[rank, R_NEXT_REF]
        if acts.shape[0] > 0:  # a later ACT may fall before this frontier, but not before its history's fourth
            wm = min(wm, acts[rank, 3, 0] if acts[rank, 0, 0] != NEG_INF else NEG_INF)  # entry (backfill_act)
        _advance_open(rk, rank, bk[rank * n_banks:(rank + 1) * n_banks], pend, wm)
        if rk[rank, R_PEND] + 2 > pend_room:  # room for this request's two precharges at most
            raise RuntimeError(PEND_OVERFLOW)
    # a rank with nothing pending until this request was powered down; it wakes for it (the
    # tests skip the calls where they would change nothing: a call costs, as for _log)
    if rk[rank, R_IDLE_FROM] < frontier:
        _power_down_until(bk, rk, rank, n_banks, frontier, p)
    if rk[rank, R_PD_ENTRY] >= 0 or rk[rank, R_WAKE] > frontier:
        ready = _power_up(rk, rank, frontier, p)
    else:
        ready = frontier

    open_row = bk[g, B_OPEN_ROW]
    if open_row == row:
        ctr[K_HITS] += 1
        col_earliest = max(ready, bk[g, B_COL_READY])
    else:
        if open_row >= 0:
            ctr[K_CONFLICTS] += 1
            t_pre = max(ready, bk[g, B_PRE_READY])
            if log_n[0] < log.shape[0]:
                _log(log, log_n, t_pre, CMD_PRE, rank, b, open_row)
            _precharge(bk, rk, pend, ctr, rank, g, t_pre, t_rp)
        else:
            ctr[K_MISSES] += 1
        t_act = place_act(acts, bk, rk, grp, ctr, rank, g, gi, row, ready, p)
        if log_n[0] < log.shape[0]:
            _log(log, log_n, t_act, CMD_ACT, rank, b, row)
        col_earliest = t_act + p[P_RCD]

    # column command: bank, channel order, tCCD / tWTR of the rank (_S) and bank group (_L), data bus
    t_col = max(col_earliest, ch[c, C_LAST_COL])
    t_col = max(t_col, rk[rank, R_LAST_COL] + p[P_CCD_S])
    t_col = max(t_col, grp[gi, G_LAST_COL] + p[P_CCD_L])
    lat = p[P_CWL] if wr else p[P_CL]
    if wr:
        t_col = max(t_col, grp[gi, G_LAST_WR_COL] + p[P_CCD_L_WR])
    else:
        t_col = max(t_col, rk[rank, R_LAST_WR_END] + p[P_WTR_S])
        t_col = max(t_col, grp[gi, G_LAST_WR_END] + p[P_WTR_L])
    t_col = max(t_col, ch[c, C_BUS_FREE] + bus_bubble(ch[c, C_LAST_RANK], ch[c, C_LAST_WRITE] != 0, rank, wr,
                                                      p[P_RTRS], p[P_RTW]) - lat)  # the data bus
    # a line of several bursts (a pseudo-channel narrower than a line): its bursts take the data bus back to
    # back, as when a controller interleaves them with the next lines' (t_last: the last burst's command
    # slot), while its bank group is held tCCD_L (_WR) per burst (t_group: when it could issue the last)
    t_last = t_col
    t_group = t_col
    if p[P_BURSTS] > 1:
        t_last += (p[P_BURSTS] - 1) * p[P_BURST]
        t_group += (p[P_BURSTS] - 1) * max(p[P_BURST], p[P_CCD_L_WR] if wr else p[P_CCD_L])
    t_done = t_last + lat + p[P_BURST]

    ch[c, C_BUS_FREE] = t_done
    ch[c, C_LAST_WRITE] = 1 if wr else 0
    ch[c, C_LAST_RANK] = rank
    ch[c, C_LAST_COL] = t_last
    rk[rank, R_LAST_COL] = t_last
    grp[gi, G_LAST_COL] = t_group
    if wr:
        rk[rank, R_LAST_WR_END] = t_done
        grp[gi, G_LAST_WR_END] = t_done
        grp[gi, G_LAST_WR_COL] = t_group
        bk[g, B_PRE_READY] = max(bk[g, B_PRE_READY], t_done + p[P_WR])
        ctr[K_WRITES] += 1
        if log_n[0] < log.shape[0]:
            _log(log, log_n, t_col, CMD_WR, rank, b, row)
    else:
        bk[g, B_PRE_READY] = max(bk[g, B_PRE_READY], t_group + p[P_RTP])
        ctr[K_READS] += 1
        if log_n[0] < log.shape[0]:
            _log(log, log_n, t_col, CMD_RD, rank, b, row)

    if closed_page:  # auto-precharge
        if log_n[0] < log.shape[0]:
            _log(log, log_n, bk[g, B_PRE_READY], CMD_PRE, rank, b, row)
        _precharge(bk, rk, pend, ctr, rank, g, bk[g, B_PRE_READY], t_rp)
    # power-down entry no sooner than JEDEC's tWRPDEN (WL + BL/2 + tWR: tWR after a write's data) or tRDPDEN
    # (RL + BL/2 + 1: a tCK after a read's), nor under closed page before the auto-precharge ends
    busy = t_done + (p[P_WR] if wr else p[P_TCK])
    if closed_page:
        busy = max(busy, bk[g, B_PRE_DONE])
    if busy > rk[rank, R_IDLE_FROM]:
        rk[rank, R_IDLE_FROM] = busy
    return t_done


@njit(cache=True)
def serve(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n, pool):
    """Serve `lines` (line indices) in order, all arriving at arrival_ps; write each
    request's data-burst completion time (ps) to `out` and return the latest one.

    decode: int64[4, 3] (divisor, count, shift or -1) for channel, rank, bank, row of a line index.
    pool: the requester's read-entry pool (:func:`take_read_entry`), int64[1] for none.
    """
    return _serve_in_order(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n,
                           pool, no_act_history())


@njit(cache=True)
def _serve_in_order(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n, pool,
                    no_acts):
    """:func:`serve` with the empty ACT history ``no_acts`` made by its caller, so that the loop borrows it too
    (an array the function made itself would be counted at every inlined call that takes it)."""
    if p[P_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(STALE_LAYOUT)
    # the arrays of the per-request step, borrowed (no reference counting in the loop)
    lines, is_write, decode, p, bk, rk = borrowed(lines), borrowed(is_write), borrowed(decode), borrowed(p), \
        borrowed(bk), borrowed(rk)
    grp, ch, ring, pend, ctr, log, log_n, pool = borrowed(grp), borrowed(ch), borrowed(ring), borrowed(pend), \
        borrowed(ctr), borrowed(log), borrowed(log_n), borrowed(pool)
    no_acts = borrowed(no_acts)
    last_done = NEG_INF
    for i in range(lines.shape[0]):
        t_done = serve_request(i, lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, log,
                               log_n, pool, no_acts)
        out[i] = t_done
        if t_done > last_done:
            last_done = t_done
    if last_done > ctr[K_LAST_DONE]:
        ctr[K_LAST_DONE] = last_done
    return last_done


# How a controller without queues of its own orders a chunk (``serve_ordered``): as it arrives, or first-ready
# (``frfcfs_order``) against the rows the banks hold open (all precharged under the closed-page policy; under
# the adaptive open-page policy, a row whose earliest precharge lies before the chunk is seen is closed by then)
IN_ORDER = 0
FRFCFS_OPEN = 1
FRFCFS_CLOSED = 2
FRFCFS_ADAPTIVE = 3


def order_mode(scheduler: str, page_policy: str) -> int:
    """The ``serve_ordered`` mode of a DRAM model with ``scheduler`` and ``page_policy`` (IN_ORDER for any
    scheduler but frfcfs)."""
    if scheduler != "frfcfs":
        return IN_ORDER
    return {"open": FRFCFS_OPEN, "closed": FRFCFS_CLOSED, "open_adaptive": FRFCFS_ADAPTIVE}[page_policy]


@njit(cache=True)
def serve_ordered(lines, is_write, arrival_ps, mode, window, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log,
                  log_n, pool):
    """``serve`` a chunk in the order of ``mode`` (IN_ORDER, FRFCFS_*; ``frfcfs_order`` sees ``window``
    requests at a time); write each request's completion time (ps) to ``out`` in the order of ``lines`` and
    return the latest."""
    m = lines.shape[0]
    if mode == IN_ORDER or m < 2:
        return serve(lines, is_write, arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, out, log, log_n, pool)
    open_row = bk[:, B_OPEN_ROW].copy()
    if mode == FRFCFS_CLOSED:
        open_row[:] = -1
    elif mode == FRFCFS_ADAPTIVE:
        for b in range(open_row.shape[0]):
            if bk[b, B_PRE_READY] < arrival_ps:
                open_row[b] = -1
    order = frfcfs_order(lines, is_write, decode, window, open_row)
    served = np.empty(m, np.int64)
    last_done = serve(lines[order], is_write[order], arrival_ps, decode, p, bk, rk, grp, ch, ring, pend, ctr, served,
                      log, log_n, pool)
    for a in range(m):
        out[order[a]] = served[a]
    return last_done


@njit(cache=True)
def idle_until(t_ps, n_banks, p, bk, rk, pend, ctr, log, log_n):
    """Perform every refresh due before t_ps on every rank and accumulate open time up to
    t_ps (and power-down time, under that policy). Callers guarantee no command will later be
    issued before t_ps."""
    if p[P_LAYOUT] != LAYOUT_ID:
        raise RuntimeError(STALE_LAYOUT)
    for rank in range(rk.shape[0]):
        if p[P_IDLE_CLOSE] != 0:
            _close_idle_banks(bk, rk, rank, n_banks, pend, t_ps, p, ctr, log, log_n)
        _refresh_until(bk, rk, rank, n_banks, pend, t_ps, False, p, ctr, log, log_n)
        _power_down_until(bk, rk, rank, n_banks, t_ps, p)
        _advance_open(rk, rank, bk[rank * n_banks:(rank + 1) * n_banks], pend, t_ps)


@njit(cache=True)
def frfcfs_order(lines, is_write, decode, window, open_row):
    """Service order of one chunk under a first-ready (FR-FCFS-like) controller: int64 indices.

    The chunk's requests arrive together; the controller sees them ``window`` at a time (its
    transaction queue) and, within each window, serves reads before writes (writes wait in
    the write queue); within each kind, the requests to the row a bank holds open first (row
    hits), then the other rows of every bank round-robin, the k-th row of each bank before
    the (k+1)-th of any, banks in index order (rank-major), so that one bank's precharge and
    activate overlap the others' data bursts. The requests to one row are served back to
    back, in arrival order.

    open_row: int64[banks of all ranks and channels], the row each bank holds open (-1:
    precharged) before the chunk; updated in place to the row each bank is left with (pass
    a scratch array of -1 for a closed-page controller). Refreshes due during the chunk,
    which close every row, are not foreseen.
    """
    n = lines.shape[0]
    n_banks = decode[1, 1] * decode[2, 1]
    n_bank_ids = decode[0, 1] * n_banks
    order = np.empty(n, np.int64)
    g = np.empty(window, np.int64)
    row = np.empty(window, np.int64)
    wr = np.empty(window, np.int64)
    rnd = np.empty(window, np.int64)
    key = np.empty(window, np.int64)
    # A (kind, bank, row) of a window is a group, served back to back in arrival order; its first request
    # is its leader. The rounds and the sort work on the leaders alone (a window of one row: one leader).
    by_kind = np.empty((2, window), np.int64)  # the leaders of each kind, in arrival order
    n_kind = np.zeros(2, np.int64)
    next_member = np.empty(window, np.int64)  # per request: the next request of its group, or -1
    last_member = np.empty(window, np.int64)  # per leader: the last request of its group so far
    next_round = np.zeros(n_bank_ids, np.int64)  # per bank: the round its next non-hit row gets
    last_leader = np.full(n_bank_ids, -1, np.int64)  # per bank: its latest leader in the window
    prev_leader = np.empty(window, np.int64)  # per leader: the bank's leader before it, or -1
    for s in range(0, n, window):
        m = min(n, s + window) - s
        n_kind[0] = 0
        n_kind[1] = 0
        for a in range(m):
            line = lines[s + a]
            ga = field(line, decode, 0) * n_banks + field(line, decode, 1) * decode[2, 1] + field(line, decode, 2)
            ra = field(line, decode, 3)
            k = 1 if is_write[s + a] != 0 else 0
            g[a] = ga
            row[a] = ra
            wr[a] = k
            next_member[a] = -1
            o = last_leader[ga]  # the bank's leaders, latest first: one per kind and row
            while o >= 0 and (wr[o] != k or row[o] != ra):
                o = prev_leader[o]
            if o >= 0:
                next_member[last_member[o]] = a
                last_member[o] = a
            else:
                last_member[a] = a
                prev_leader[a] = last_leader[ga]
                last_leader[ga] = a
                by_kind[k, n_kind[k]] = a
                n_kind[k] += 1
        for a in range(m):
            last_leader[g[a]] = -1
        for kind in range(2):  # reads, then writes, each against the rows the previous left open
            nk = n_kind[kind]
            for j in range(nk):  # a bank whose open row is hit serves that row in round 0, the others after
                a = by_kind[kind, j]
                if row[a] == open_row[g[a]]:
                    next_round[g[a]] = 1
            for j in range(nk):
                a = by_kind[kind, j]
                if row[a] == open_row[g[a]]:
                    rnd[a] = 0
                else:
                    rnd[a] = next_round[g[a]]
                    next_round[g[a]] += 1
            for j in range(nk):  # each bank is left with the row of its last round
                a = by_kind[kind, j]
                if rnd[a] == next_round[g[a]] - 1:
                    open_row[g[a]] = row[a]
            for j in range(nk):
                next_round[g[by_kind[kind, j]]] = 0
        # groups in the order (kind, round, bank): the keys are distinct (a bank has one group per kind and
        # round), and the last term, the leader, keeps them so; insertion sort in place, as the window is short,
        # instead of an argsort that allocates each time
        n_groups = 0
        for kind in range(2):
            for j in range(n_kind[kind]):
                a = by_kind[kind, j]
                key[n_groups] = ((kind * window + rnd[a]) * n_bank_ids + g[a]) * window + a
                n_groups += 1
        for a in range(1, n_groups):
            x = key[a]
            o = a - 1
            while o >= 0 and key[o] > x:
                key[o + 1] = key[o]
                o -= 1
            key[o + 1] = x
        t = s
        for j in range(n_groups):
            a = key[j] % window
            while a >= 0:
                order[t] = s + a
                t += 1
                a = next_member[a]
    return order
