"""DRAM channels: bank/row-buffer timing, refresh, command counts and energy (DDR3, DDR4, DDR5, LPDDR5,
HBM2, HBM2E, HBM3).

``DramSystem`` serves chunks of 64 B line requests in arrival order (within a chunk, in
the order its controller chooses: as given, or first-ready) and returns when the last data
burst completes; the per-line work is the numba kernel in
``simulator.memory.dram_kernel`` (its docstring states the scheduling rules). Parameters
are plain typed values (cycle counts in tCK unless the name ends in ``_ps``); the
composition root builds them from the validated configuration.

Refresh: rank ``r`` receives its k-th refresh (k = 0, 1, ...) when due at ``first_r + k * tREFI``,
``first_r`` being tREFI for every rank (``refresh="simultaneous"``) or ``(r + 1) * tREFI / R`` for
rank r of the R of its channel (``"staggered"``, ``dram_params.first_refresh_ps``); all its banks
are precharged (as soon as tRAS/tRTP/tWR allow), then REF blocks the rank for tRFC. Under same-bank
refresh (``refresh_mode="same_bank"``, DDR5's REFsb, which JESD79-5 issues in its fine granularity mode,
tREFI2 = tREFI / 2) tREFI above is the interval between commands, tREFI / 2 / (banks per group):
each REFsb precharges and blocks for tRFCsb bank k of every bank group, k taking the values 0, 1,
... in turn, while the other banks work; under per-bank refresh (``"per_bank"``, HBM3's and LPDDR5's
REFpb) one command every tREFI / (banks / banks per command) blocks bank 0, 1, ... in turn for tRFCpb
(LPDDR5: banks k and k + banks / 2 together). Refreshes happen whether or not requests arrive, so up
to a time ``end_ps`` a rank has received the refreshes due strictly before ``end_ps`` (simultaneous:
``ceil(end_ps / tREFI) - 1``, e.g. ``floor(1 ms / 7.8 us) = 128`` over 1 ms).
"""

from __future__ import annotations

import math

import numpy as np

from simulator.memory import dram_kernel as k
from simulator.memory import dram_command_queues, dram_ready_first
from simulator.memory import power
from simulator.memory.array_kernel import value_range
from simulator.units import is_power_of_two
from simulator.memory.dram_params import (PAGE_POLICIES, REFRESH_POLICIES, SCHEDULERS, STANDARDS, DramCurrents,
                                          DramGeometry, DramTiming, check_geometry_standard, check_line_is_one_burst,
                                          bursts_per_line, check_refresh_mode, first_refresh_ps, pack_timing_ps,
                                          peak_bandwidth_bytes_per_s, refresh_command_interval_ps, refresh_sets)

#: the counters split by requester (``DramSystem.counters_by_requester``) and their kernel columns
ATTRIBUTED_COUNTERS = ("reads", "writes", "activates")
_ATTRIBUTED = (k.K_READS, k.K_WRITES, k.K_ACTS)


class AddressOutOfRange(ValueError):
    """A request for a line beyond the memory's capacity (a workload larger than the memory)."""


def _decode_table(geometry: DramGeometry) -> np.ndarray:
    """int64[4, 3] (divisor, count, shift) of channel, rank, bank, row within a line index: a field is
    (line // divisor) % count, the mapping read as a mixed-radix number (most significant field first),
    so a count need not be a power of two (three channels interleave lines modulo 3). ``shift`` is
    log2(divisor) where divisor and count are powers of two (the kernel then shifts and masks), else -1."""
    sizes = geometry.field_sizes()
    divisors: dict[str, int] = {}
    divisor = 1
    for name in reversed(geometry.mapping.split(":")):
        divisors[name] = divisor
        divisor *= sizes[name]
    fields = ("channel", "rank", "bank", "row")
    return np.array([[divisors[n], sizes[n], divisors[n].bit_length() - 1
                      if is_power_of_two(divisors[n]) and is_power_of_two(sizes[n]) else -1] for n in fields],
                    dtype=np.int64)


class DramSystem:
    """All DRAM channels of the memory; serves line requests and counts commands.

    page_policy: ``"open"`` (rows stay open until a conflict or refresh), ``"open_adaptive"``
    (a row stays open while the transaction queue holds a request to it, else the bank
    precharges as soon as it may: DRAMSim2's open-page controller) or ``"closed"``
    (auto-precharge after every column command). queue_depth: how many requests of a
    channel the controller may look ahead (a request issues no command before the column
    command of the request queue_depth places earlier). scheduler: ``"in_order"`` (column
    commands in arrival order) or ``"frfcfs"`` (each chunk is first put in the order a
    first-ready controller with a queue_depth-entry transaction queue would serve it:
    reads before writes, row hits together, banks round-robin; see
    ``dram_kernel.frfcfs_order``) or ``"ready_first"`` (each request chosen as the state evolves,
    from a read queue and a write buffer of queue_depth each; see ``dram_ready_first``).
    command_queue_depth: ready_first only; if > 0, per-bank command queues of that many requests
    stand between the transaction queues and the banks, as DRAMSim3's (see
    ``dram_command_queues``). power_down: a rank with no pending request powers down
    (active power-down, IDD3P, while a bank holds a row; precharge power-down, IDD2P,
    otherwise) and pays tXP to wake, as DRAMSim2 does with ``USE_LOW_POWER``; needs
    ``currents.idd3p_ma``. refresh: ``"simultaneous"`` or ``"staggered"`` (see the module
    docstring). arrival_to_command_cycles: the controller sees a request that many tCK after its
    arrival, so none of its commands issues earlier (its input pipeline; latencies still count from
    the arrival). refresh_mode: ``"all_bank"`` or, where the standard has it, ``"same_bank"`` or
    ``"per_bank"`` (see the module docstring). command_log_capacity: if > 0,
    the first that many commands are recorded for inspection (``command_log``).
    """

    def __init__(self, timing: DramTiming, currents: DramCurrents, geometry: DramGeometry,
                 page_policy: str = "open", queue_depth: int = 32, command_log_capacity: int = 0,
                 scheduler: str = "in_order", power_down: bool = False, refresh: str = "simultaneous",
                 command_queue_depth: int = 0, arrival_to_command_cycles: int = 0,
                 refresh_mode: str = "all_bank") -> None:
        if page_policy not in PAGE_POLICIES:
            raise ValueError(f"page_policy = {page_policy!r}: expected one of {PAGE_POLICIES}")
        if scheduler not in SCHEDULERS:
            raise ValueError(f"scheduler = {scheduler!r}: expected one of {SCHEDULERS}")
        if isinstance(queue_depth, bool) or not isinstance(queue_depth, int) or queue_depth < 1:
            raise ValueError(f"queue_depth = {queue_depth!r}: expected an integer >= 1")
        if isinstance(command_queue_depth, bool) or not isinstance(command_queue_depth, int) \
                or command_queue_depth < 0 or (command_queue_depth and scheduler != "ready_first"):
            raise ValueError(f"command_queue_depth = {command_queue_depth!r}: expected an integer >= 0, "
                             "and 0 unless scheduler is 'ready_first'")
        if isinstance(arrival_to_command_cycles, bool) or not isinstance(arrival_to_command_cycles, int) \
                or arrival_to_command_cycles < 0:
            raise ValueError(f"arrival_to_command_cycles = {arrival_to_command_cycles!r}: expected an integer >= 0")
        if isinstance(command_log_capacity, bool) or not isinstance(command_log_capacity, int) \
                or command_log_capacity < 0:
            raise ValueError(f"command_log_capacity = {command_log_capacity!r}: expected an integer >= 0")
        if refresh not in REFRESH_POLICIES:
            raise ValueError(f"refresh = {refresh!r}: expected one of {REFRESH_POLICIES}")
        if not isinstance(power_down, bool):
            raise ValueError(f"power_down = {power_down!r}: expected true or false")
        if power_down and currents.idd3p_ma is None:
            raise ValueError("power_down = True: expected currents.idd3p_ma (active power-down current)")
        check_line_is_one_burst(timing, geometry)
        check_geometry_standard(timing.standard, geometry.bank_groups, geometry.ranks_per_channel)
        check_refresh_mode(timing.standard, refresh_mode)
        if currents.standard != timing.standard:
            raise ValueError(f"currents.standard = {currents.standard!r}: expected timing's ({timing.standard!r})")
        self.timing = timing
        self.currents = currents
        self.geometry = geometry
        self.page_policy = page_policy
        self.scheduler = scheduler
        self._order_mode = k.order_mode(scheduler, page_policy)  # ``k.serve_ordered``'s, outside ready_first
        self.queue_depth = queue_depth
        self.command_queue_depth = command_queue_depth
        self.power_down = power_down
        self.refresh = refresh
        self.arrival_to_command_cycles = arrival_to_command_cycles
        self._pipeline_ps = arrival_to_command_cycles * timing.tck_ps
        self.refresh_mode = refresh_mode
        divisor, sets = refresh_sets(refresh_mode, geometry.banks, geometry.bank_groups,
                                     STANDARDS[timing.standard].banks_per_refresh)
        #: interval between the refresh commands of a rank, ps
        self.refresh_interval_ps = refresh_command_interval_ps(timing.t_refi_ps, sets, refresh_mode)
        p = pack_timing_ps(timing)
        p[k.P_REFI] = self.refresh_interval_ps
        p[k.P_REF_DIV] = divisor
        p[k.P_REF_SETS] = sets
        p[k.P_BURSTS] = bursts_per_line(timing, geometry)
        p[k.P_CLOSED_PAGE] = 1 if page_policy == "closed" else 0
        p[k.P_POWER_DOWN] = 1 if power_down else 0
        p[k.P_IDLE_CLOSE] = 1 if page_policy == "open_adaptive" else 0
        p[k.P_BG_MASK] = geometry.bank_groups - 1
        self._p = p
        self._decode = _decode_table(geometry)
        self._capacity_lines = geometry.capacity_lines
        n_ranks = geometry.channels * geometry.ranks_per_channel
        n_banks = n_ranks * geometry.banks
        self._bk = np.zeros((n_banks, k.N_BANK), dtype=np.int64)
        self._bk[:, k.B_OPEN_ROW] = -1
        self._rk = np.zeros((n_ranks, k.N_RANK), dtype=np.int64)
        self._rk[:, k.R_LAST_ACT] = k.NEG_INF
        self._rk[:, k.R_FAW0:k.R_FAW0 + 4] = k.NEG_INF
        self._rk[:, k.R_LAST_COL] = k.NEG_INF
        self._rk[:, k.R_LAST_WR_END] = k.NEG_INF
        # global rank index = channel * ranks_per_channel + rank within the channel
        ranks = geometry.ranks_per_channel
        self._first_refresh_ps = np.array([first_refresh_ps(refresh, self.refresh_interval_ps, r % ranks, ranks)
                                           for r in range(n_ranks)], dtype=np.int64)
        self._rk[:, k.R_NEXT_REF] = self._first_refresh_ps
        self._rk[:, k.R_PD_ENTRY] = -1
        self._rk[:, k.R_WAKE] = k.NEG_INF
        self._grp = np.full((n_ranks * geometry.bank_groups, k.N_GROUP), k.NEG_INF, dtype=np.int64)
        self._ch = np.zeros((geometry.channels, k.N_CHANNEL), dtype=np.int64)
        self._ch[:, k.C_LAST_RANK] = -1
        self._ring = np.zeros((geometry.channels, queue_depth), dtype=np.int64)
        # closed open-intervals awaiting accounting: a few per request in flight (transaction and command queues)
        in_flight = queue_depth + (queue_depth + command_queue_depth * geometry.banks if command_queue_depth else 0)
        self._pend = np.zeros((n_ranks, 4 * (in_flight + 2 * geometry.banks) + 64, 2), dtype=np.int64)
        self._tq_ring = dram_command_queues.transaction_queue_state(geometry.channels, queue_depth)
        self._bq_state = dram_command_queues.bank_queue_state(n_banks, max(command_queue_depth, 1))
        self._bus_gap = dram_command_queues.bus_gap_state(self._ch)
        self._act_hist = k.act_history(n_ranks)
        self._ctr = np.zeros(k.N_COUNTERS, dtype=np.int64)
        self._log = np.zeros((command_log_capacity, 5), dtype=np.int64)
        self._log_n = np.zeros(1, dtype=np.int64)
        self._min_arrival_ps = 0
        # requester -> [reads, writes, activates] caused by its chunks (refresh belongs to none)
        self._by_requester: dict[str, np.ndarray] = {}
        self._chunk_args: dict[str, tuple] = {}  # per requester: what ``chunk_state`` gives after the delay
        self._no_pool = np.zeros(1, dtype=np.int64)
        self._read_pool = self._no_pool  # the read entries shared by ``_pooled`` (``limit_reads``)
        self._pooled: frozenset[str] = frozenset()

    def limit_reads(self, entries: int, hold_ps: int, requesters: tuple[str, ...]) -> None:
        """Let the reads of ``requesters`` share ``entries`` outstanding-read entries upstream of the
        controller (an uncore read queue): a read issues no command before an entry is free and holds
        it from then until its data burst completes plus ``hold_ps`` (the return path to the requester
        and, before the entry reached the controller, the path there). Writes, and other requesters,
        are not limited. Needs the in_order or frfcfs scheduler, which serve a chunk in time order."""
        if isinstance(entries, bool) or not isinstance(entries, int) or entries < 1:
            raise ValueError(f"entries = {entries!r}: expected an integer >= 1")
        if isinstance(hold_ps, bool) or not isinstance(hold_ps, int) or hold_ps < 0:
            raise ValueError(f"hold_ps = {hold_ps!r}: expected an integer >= 0")
        if self.scheduler == "ready_first":
            raise ValueError("a read-entry limit needs the in_order or frfcfs scheduler: ready_first serves a chunk "
                             "channel by channel")
        self._read_pool = np.zeros(entries + 1, dtype=np.int64)
        self._read_pool[k.POOL_HOLD] = hold_ps
        self._pooled = frozenset(requesters)
        self._chunk_args.clear()

    # -- serving ---------------------------------------------------------------------------
    @property
    def capacity_bytes(self) -> int:
        """Bytes this memory holds (every channel and rank)."""
        return self.geometry.capacity_bytes

    @property
    def peak_bandwidth_bytes_per_s(self) -> float:
        """Peak data-bus bandwidth of all channels: one line per burst per channel, B/s."""
        return peak_bandwidth_bytes_per_s(self.timing, self.geometry)

    def service_lines(self, lines: np.ndarray, is_write: np.ndarray | bool, arrival_ps: int,
                      bus_speedup: float = 1, requester: str = "host") -> np.ndarray:
        """Serve one chunk of line requests (line indices = byte address // line_bytes), all
        arriving at arrival_ps, in the scheduler's order; return each request's data-burst
        completion time in ps (int64 array, in the order of ``lines``). Arrival times must not
        decrease from call to call.

        bus_speedup: for a requester inside the memory (near-memory accelerator) that reaches
        the banks over an internal path ``bus_speedup`` times wider than the channel (any real
        multiple, e.g. 1.4): the burst occupancy and tCCD (_S, _L and _L_WR) of this chunk are divided by it,
        to the picosecond (bank timing unchanged).
        requester: who sent the chunk; the reads, writes and activates it causes are also counted
        for that requester (``counters_by_requester``)."""
        if type(bus_speedup) is not int or bus_speedup != 1:  # the common case (exactly 1) needs no checks
            if isinstance(bus_speedup, bool) or not isinstance(bus_speedup, (int, float, np.integer, np.floating)) \
                    or not 1 <= bus_speedup < math.inf:
                raise ValueError(f"bus_speedup = {bus_speedup!r}: expected a finite number >= 1")
        if type(lines) is not np.ndarray or lines.dtype != np.int64 or not lines.flags.c_contiguous:
            given = np.asarray(lines)
            if given.size and given.dtype.kind not in "iu":
                raise ValueError(f"lines has dtype {given.dtype}: expected integer line indices")
            lines = np.ascontiguousarray(given, dtype=np.int64)
        if lines.ndim != 1:
            raise ValueError(f"lines has shape {lines.shape}: expected a 1-D array of line indices")
        if isinstance(is_write, (bool, np.bool_)):
            writes = np.full(lines.shape[0], 1 if is_write else 0, dtype=np.uint8)
        else:
            if type(is_write) is not np.ndarray or is_write.dtype != np.uint8 or not is_write.flags.c_contiguous:
                given = np.asarray(is_write)
                if given.size and given.dtype.kind not in "biu":
                    raise ValueError(f"is_write has dtype {given.dtype}: expected bools (or 0 and 1)")
                is_write = np.ascontiguousarray(given).astype(np.uint8, copy=False)
            writes = is_write
            if writes.shape != lines.shape:
                raise ValueError(f"is_write has shape {writes.shape}: expected a bool or shape {lines.shape}")
        arrival_ps = int(arrival_ps)
        if arrival_ps < self._min_arrival_ps:
            raise ValueError(f"arrival_ps = {arrival_ps}: expected >= {self._min_arrival_ps} (arrivals "
                             "must not go back in time)")
        if lines.size:
            lo, hi = value_range(lines)
            if lo < 0 or hi >= self._capacity_lines:
                raise self.out_of_range(lo, hi)
        self._min_arrival_ps = arrival_ps
        seen_ps = arrival_ps + self._pipeline_ps  # when the controller may act on the chunk
        out = np.empty(lines.shape[0], dtype=np.int64)
        if lines.size:
            before = self._ctr.tolist()
            pool = self._read_pool if requester in self._pooled else self._no_pool
            p = self._p
            if bus_speedup > 1:
                p = p.copy()
                p[k.P_BURST] = max(1, round(p[k.P_BURST] / bus_speedup))
                p[k.P_CCD_S] = max(1, round(p[k.P_CCD_S] / bus_speedup))
                p[k.P_CCD_L] = max(1, round(p[k.P_CCD_L] / bus_speedup))
                p[k.P_CCD_L_WR] = max(1, round(p[k.P_CCD_L_WR] / bus_speedup))
            if self.command_queue_depth:
                dram_command_queues.serve_command_queues(lines, writes, seen_ps, self._decode, p, self._bk,
                                                         self._rk, self._grp, self._ch, self._pend, self._ctr, out,
                                                         self._log, self._log_n, self._tq_ring, self._bq_state,
                                                         self._bus_gap, self._act_hist)
            elif self.scheduler == "ready_first" and lines.size > 1:
                dram_ready_first.serve_ready_first(lines, writes, seen_ps, self._decode, p, self._bk, self._rk,
                                                   self._grp, self._ch, self._ring, self._pend, self._ctr, out,
                                                   self._log, self._log_n)
            else:
                k.serve_ordered(lines, writes, seen_ps, self._order_mode, self.queue_depth, self._decode, p, self._bk,
                                self._rk, self._grp, self._ch, self._ring, self._pend, self._ctr, out, self._log,
                                self._log_n, pool)
            after = self._ctr.tolist()
            mine = self._attributed(requester)
            for j, column in enumerate(_ATTRIBUTED):
                mine[j] += after[column] - before[column]
        return out

    def out_of_range(self, lo: int, hi: int) -> AddressOutOfRange:
        """The error of a chunk whose lines span [lo, hi], beyond this memory."""
        return AddressOutOfRange(f"lines span [{lo}, {hi}]: expected indices in "
                                 f"[0, {self.geometry.capacity_lines}), the {self.capacity_bytes} B of this memory")

    def _attributed(self, requester: str) -> np.ndarray:
        """``requester``'s reads, writes and activates (int64[3], the order of ``ATTRIBUTED_COUNTERS``)."""
        mine = self._by_requester.get(requester)
        if mine is None:
            mine = self._by_requester[requester] = np.zeros(len(_ATTRIBUTED), dtype=np.int64)
        return mine

    def chunk_state(self, arrival_ps: int, requester: str) -> tuple[int, tuple] | None:
        """What ``chunk_kernel.access_and_serve`` takes of this memory for a chunk of ``requester`` arriving at
        ``arrival_ps`` at the channel's width: the pipeline delay the controller sees it after (ps, added to
        ``arrival_ps`` for the kernel's ``arrival_ps``) and the arguments after that one (``order_mode`` to
        ``mine_attributed``: one tuple, kept while the memory's arrays last); None under the ready_first
        scheduler, or for an arrival before the last (which ``service_lines`` refuses). A chunk that reaches
        DRAM is then ``chunk_served``."""
        if arrival_ps < self._min_arrival_ps or self.scheduler == "ready_first":
            return None
        args = self._chunk_args.get(requester)
        if args is None:
            pool = self._read_pool if requester in self._pooled else self._no_pool
            args = self._chunk_args[requester] = (
                self._order_mode, self.queue_depth, self._capacity_lines, self._decode,
                self._p, self._bk, self._rk, self._grp, self._ch, self._ring, self._pend, self._ctr, self._log,
                self._log_n, pool, self._attributed(requester))
        return self._pipeline_ps, args

    def chunk_served(self, arrival_ps: int) -> None:
        """Note that a chunk arriving at ``arrival_ps`` was served through ``chunk_state``: later ones must
        not arrive earlier."""
        self._min_arrival_ps = arrival_ps

    def service(self, lines: np.ndarray, is_write: np.ndarray | bool, arrival_ps: int,
                bus_speedup: float = 1, requester: str = "host") -> int:
        """Serve one chunk of line requests, in order, arriving together at arrival_ps; return
        the completion time in ps of the last data burst (arrival_ps for an empty chunk).
        Bank/row state, bus occupancy and refresh carry over between calls; ``bus_speedup``
        and ``requester`` as in ``service_lines``."""
        out = self.service_lines(lines, is_write, arrival_ps, bus_speedup, requester)
        return int(value_range(out)[1]) if out.size else int(arrival_ps)

    def idle_until(self, t_ps: int) -> None:
        """Perform the refreshes due before t_ps and account background time up to t_ps;
        later requests must arrive at or after t_ps."""
        t_ps = int(t_ps)
        if t_ps < self._min_arrival_ps:
            raise ValueError(f"t_ps = {t_ps}: expected >= {self._min_arrival_ps} (the last arrival)")
        self._min_arrival_ps = t_ps
        k.idle_until(t_ps, self.geometry.banks, self._p, self._bk, self._rk, self._pend, self._ctr,
                     self._log, self._log_n)

    # -- reporting ---------------------------------------------------------------------------
    def counters(self) -> dict[str, int]:
        """Command and request counts so far: reads, writes, activates, precharges (rows
        closed, for any reason), row_hits, row_misses (bank closed), row_conflicts (other
        row open), refreshes (performed so far), bytes_read, bytes_written."""
        c = self._ctr
        return {
            "reads": int(c[k.K_READS]),
            "writes": int(c[k.K_WRITES]),
            "activates": int(c[k.K_ACTS]),
            "precharges": int(c[k.K_PRES]),
            "row_hits": int(c[k.K_HITS]),
            "row_misses": int(c[k.K_MISSES]),
            "row_conflicts": int(c[k.K_CONFLICTS]),
            "refreshes": int(c[k.K_REFRESHES]),
            "bytes_read": int(c[k.K_READS]) * self.geometry.line_bytes,
            "bytes_written": int(c[k.K_WRITES]) * self.geometry.line_bytes,
        }

    def counters_by_requester(self) -> dict[str, dict[str, int]]:
        """reads, writes (data bursts, lines) and activates (commands) by the requester whose chunk
        caused them; refreshes and the precharges they force belong to no requester."""
        return {who: dict(zip(ATTRIBUTED_COUNTERS, c.tolist())) for who, c in self._by_requester.items()}

    @property
    def last_completion_ps(self) -> int:
        """Completion time in ps of the latest data burst served so far (0 before any)."""
        return max(int(self._ctr[k.K_LAST_DONE]), 0)

    def command_log(self) -> np.ndarray:
        """Recorded commands, int64[n, 5]: time_ps, command (dram_kernel.CMD_*), global rank,
        bank (-1 for REF), row (-1 for REF); in issue-decision order, not time order."""
        return self._log[: int(self._log_n[0])].copy()

    def _state_at(self, end_ps: int) -> tuple[np.ndarray, np.ndarray]:
        """Rank and counter arrays of a copy of the system idled until end_ps."""
        end_ps = int(end_ps)
        # commands already issued may lie anywhere up to the last completion, so the bank
        # states are final only from there on; the last arrival (of an empty chunk, say) and a
        # rank's accounting mark (moved on by idle_until) may lie later still
        earliest = max(self._min_arrival_ps, int(self._rk[:, k.R_ACC_MARK].max()), self.last_completion_ps)
        if end_ps < earliest:
            raise ValueError(f"end_ps = {end_ps}: expected >= {earliest} ps (the last completion, the last "
                             f"arrival and the time up to which background is already accounted)")
        bk, rk, pend, ctr = self._bk.copy(), self._rk.copy(), self._pend.copy(), self._ctr.copy()
        log, log_n = np.zeros((0, 5), dtype=np.int64), np.zeros(1, dtype=np.int64)
        k.idle_until(end_ps, self.geometry.banks, self._p, bk, rk, pend, ctr, log, log_n)
        return rk, ctr

    def background_times_ps(self, end_ps: int) -> dict[str, int]:
        """Rank-picoseconds in [0, end_ps), summed over ranks, with at least one bank open
        (``open``) and with all banks precharged (``precharged``), and the parts of those
        spent powered down (``power_down_open``, ``power_down_precharged``; 0 without
        power-down); plus ``refreshes``, the REF commands of all ranks due before end_ps
        (first_r + k * tREFI < end_ps, k >= 0; see the module docstring). end_ps may be any time
        from ``last_completion_ps`` on (and from the last arrival, if later)."""
        rk, _ = self._state_at(end_ps)
        open_ps = int(rk[:, k.R_ACC_OPEN].sum())
        # refreshes due strictly before end_ps: first + k * tREFI < end_ps, k >= 0
        due = (int(end_ps) - 1 - self._first_refresh_ps) // self.refresh_interval_ps + 1
        return {"open": open_ps, "precharged": int(end_ps) * rk.shape[0] - open_ps,
                "power_down_open": int(rk[:, k.R_ACC_PD_OPEN].sum()),
                "power_down_precharged": int(rk[:, k.R_ACC_PD_CLOSED].sum()),
                "refreshes": int(np.maximum(due, 0).sum())}

    def energy_j(self, end_ps: int, include_vpp: bool = True) -> dict[str, float]:
        """DRAM energy in J over [0, end_ps) by category (see ``simulator.memory.power``):
        background_active (IDD3N while a bank of the rank is open and the rank powered up),
        background_precharge (IDD2N while all banks are precharged and the rank powered up),
        background_power_down (IDD3P / IDD2P while powered down; 0 without power-down), refresh
        (REFs due before end_ps, above the active standby; REFsb under same-bank refresh), activate_precharge (per ACT), read and write (per
        burst, above IDD3N). include_vpp: False leaves out the VPP supply (DDR4), giving the VDD
        share alone."""
        times = self.background_times_ps(end_ps)
        c = self._ctr
        return power.energy_by_category_j(
            self.timing, self.currents, self.geometry,
            activates=int(c[k.K_ACTS]), reads=int(c[k.K_READS]), writes=int(c[k.K_WRITES]),
            refreshes=times["refreshes"], open_time_ps=times["open"], precharged_time_ps=times["precharged"],
            power_down_open_ps=times["power_down_open"], power_down_precharged_ps=times["power_down_precharged"],
            include_vpp=include_vpp, refresh_mode=self.refresh_mode)
