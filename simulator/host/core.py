"""The trace-driven host core.

The core replays its rows of an operation trace in order. A memory row is
expanded to line addresses and cut into chunks; each chunk goes through the
cache hierarchy and DRAM in one bulk call, and the core turns what happened
into a duration (cycles of ``frequency_hz``):

- issue: elements / ``loads_per_cycle``; an ``update`` row (read-modify-write)
  counts each element twice, its load and its store sharing the one rate;
- a ``zero`` row (full-line zeroing) is timed like a store: its lines are
  served by the core's own level and nothing is read from DRAM;
- compute: flops / ``flops_per_cycle`` + other cycles, overlapped with memory;
- independent accesses: lines served by L2/LLC cost their hit latency divided
  by the misses the core keeps in flight (``max_outstanding_misses``, Little's
  law); lines served by DRAM cost the load-to-use DRAM latency divided by the
  same number, and the chunk cannot end before DRAM has delivered its last
  line (plus the return path): contention with other requesters appears here.
  The write-backs of lines the chunk evicts are posted (``MemoryPort.access``):
  DRAM serves them after the chunk's reads, but the core does not wait for them;
  they delay whatever reaches DRAM next;
- dependent accesses (pointer chasing): every access pays its full latency in
  turn, and each DRAM access is served on its own.
- with the caches' stream prefetcher on, prefetched lines share the miss slots
  with demand misses, which go first (``simulator.host.prefetch_timing``): a
  chunk does not wait for the DRAM reads of its prefetches, and pays for a
  prefetched line it uses as for a miss unless an idle slot has issued it, in
  which case it waits for that line alone.

A chunk lasts max(issue, compute, memory). Busy time is split per stage into
compute and memory-stall time for the timeline.

Rows of one chunk of independent loads or stores (no prefetcher; stores only
where no other core's copy is to invalidate) run several to a compiled call
(``run_memory_rows``, ``simulator.memory.chunk_kernel.serve_rows``): the same
arithmetic in the same order, up to the first row that ends at or after the
next time another process can act, and one timeout for them.

On a multi-core host each core is one of these, on its own port (its view of
the caches, ``simulator.memory.core_caches``). A chunk whose stores (or whose
flush, evict or invalidate) removed lines from other cores' private caches pays,
for each, the hit latency of the first shared level
(``CoreTiming.snoop_latency_cycles``), overlapped as the misses are; a dependent
access pays it in full. Time a thread spends waiting
at a barrier or join is the core's ``sync_wait_ps``, not busy time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from simulator.engine import ClockDomain
from simulator.host.prefetch_timing import PrefetchSlots
from simulator.memory import chunk_kernel as ck
from simulator.memory.array_kernel import add_scaled, count_levels
from simulator.memory.port import CHUNK_LINES, MemoryPort, PortResult

STORE_OPS = ("write", "update")  # the memory rows whose accesses store
UPDATE_ISSUE_FACTOR = 2  # an update row issues a load and a store per element
RUN_OPS = ("read", "write", "update")  # the memory rows ``run_memory_rows`` may take
RUN_ROWS = 512  # rows handed to one ``serve_rows`` call at most (the stage records it loads grow with them)
NO_LIMIT_PS = 2**62  # ``serve_rows``'s limit when no other event is pending


@dataclass
class StageStats:
    """Accumulated work and time of one (unit, stage): times in ps, counts in units named."""

    busy_ps: int = 0
    compute_ps: int = 0
    stall_ps: int = 0
    flops: int = 0
    other_cycles: float = 0.0
    elements: int = 0
    bytes_touched: int = 0
    lines: int = 0
    first_ps: int | None = None
    last_ps: int = 0
    bytes_by_level: np.ndarray | None = None  # bytes its memory rows found at each level (last = DRAM), B

    def served_record(self, n_levels: int) -> np.ndarray:
        """The stage's bytes served per level (B, caches in order, then DRAM), zero-filled on first use,
        for a caller to add to in place."""
        if self.bytes_by_level is None:
            self.bytes_by_level = np.zeros(n_levels, dtype=np.float64)
        return self.bytes_by_level

    def add_served(self, served_bytes: np.ndarray) -> None:
        """Add ``served_bytes`` (B per level, caches in order, then DRAM) to the stage's record."""
        record = self.served_record(len(served_bytes))
        record += served_bytes

    def add_interval(self, start_ps: int, end_ps: int) -> None:
        """Record activity from start_ps to end_ps."""
        if self.first_ps is None:
            self.first_ps = start_ps
        self.last_ps = max(self.last_ps, end_ps)


def merged_stages(cores: list["HostCore"]) -> dict[str, StageStats]:
    """The stage records of ``cores`` added up by stage name (times and counts summed over the cores,
    first and last activity over all): the host's stages. One core's are its own records."""
    if len(cores) == 1:
        return cores[0].stages
    out: dict[str, StageStats] = {}
    for core in cores:
        for name, st in core.stages.items():
            into = out.setdefault(name, StageStats())
            for key in ("busy_ps", "compute_ps", "stall_ps", "flops", "other_cycles", "elements", "bytes_touched",
                        "lines"):
                setattr(into, key, getattr(into, key) + getattr(st, key))
            if st.bytes_by_level is not None:
                into.add_served(st.bytes_by_level)
            if st.first_ps is not None:
                into.first_ps = st.first_ps if into.first_ps is None else min(into.first_ps, st.first_ps)
            into.last_ps = max(into.last_ps, st.last_ps)
    return out


@dataclass
class StageArrays:
    """Stage records as ``chunk_kernel.serve_rows`` adds to them, one row per stage: its integer entries
    (``ck.S_*``), other cycles and bytes served per level (B); and the kernel's outcome (``ck.O_*``)."""

    ints: np.ndarray          # int64[stages, ck.N_STAGE_INTS]
    other_cycles: np.ndarray  # float64[stages]
    served: np.ndarray        # float64[stages, levels + 1], B
    out: np.ndarray           # int64[ck.N_OUT]

    @classmethod
    def zeros(cls, n_stages: int, n_out: int) -> "StageArrays":
        return cls(np.zeros((n_stages, ck.N_STAGE_INTS), dtype=np.int64), np.zeros(n_stages, dtype=np.float64),
                   np.zeros((n_stages, n_out), dtype=np.float64), np.zeros(ck.N_OUT, dtype=np.int64))

    def load(self, k: int, st: StageStats | None) -> None:
        """Row ``k`` := the record ``st`` (a new record's when None)."""
        st = st or StageStats()
        self.ints[k] = (st.compute_ps, st.stall_ps, st.lines, st.busy_ps, st.flops, st.elements, st.bytes_touched,
                        -1 if st.first_ps is None else st.first_ps, st.last_ps)
        self.other_cycles[k] = st.other_cycles
        if st.bytes_by_level is None:
            self.served[k] = 0.0
        else:
            self.served[k] = st.bytes_by_level

    def store(self, k: int, st: StageStats) -> None:
        """The record ``st`` := row ``k`` (its rows ran memory rows: it has bytes served)."""
        (st.compute_ps, st.stall_ps, st.lines, st.busy_ps, st.flops, st.elements, st.bytes_touched, first_ps,
         st.last_ps) = self.ints[k].tolist()
        st.first_ps = None if first_ps < 0 else first_ps
        st.other_cycles = float(self.other_cycles[k])
        st.served_record(len(self.served[k]))[:] = self.served[k]


@dataclass
class MemoryRows:
    """A host thread's rows as ``HostCore.run_memory_rows`` reads them, one entry per row in the thread's
    order: its stage (an index into ``stage_names``, numbered in order of first appearance), whether it
    stores, its trace numbers (elements, bytes, flops; cycles) and the op's issue factor; ``run_stop[j]``
    ends the run of rows from j on that ``run_memory_rows`` may take (j itself when it may not take row j)."""

    stage_names: list[str]
    stage_of: np.ndarray     # int64
    stores: np.ndarray       # uint8
    elements: np.ndarray     # int64
    n_bytes: np.ndarray      # int64, B
    flops: np.ndarray        # int64, flop
    cycles: np.ndarray       # float64, core cycles
    issue_factor: np.ndarray  # int64
    run_stop: np.ndarray     # int64
    stages_made: int = 0     # stage records made so far, in order of ``stage_names`` (``run_memory_rows``)
    window: int = 8          # rows handed to the next ``serve_rows`` call at most
    _work: "StageArrays | None" = None

    def work(self, n_out: int) -> "StageArrays":
        """The arrays ``serve_rows`` adds the rows' stage records to (``n_out`` levels served)."""
        if self._work is None:
            self._work = StageArrays.zeros(len(self.stage_names), n_out)
        return self._work

    @classmethod
    def of(cls, ops: list[str], stages: list[str], elements: list[int], n_bytes: list[int], flops: list[int],
           cycles: list[float], dependent: list[bool], stores_alone: bool) -> "MemoryRows":
        """The rows with these ops, stage names, trace numbers and dependence flags; ``stores_alone``: a
        chunk that stores can run without invalidating other cores' copies (``chunk_view(True)``)."""
        names = list(dict.fromkeys(stages))
        number = {name: k for k, name in enumerate(names)}
        stores = np.array([op in STORE_OPS for op in ops], dtype=np.uint8)
        takes = np.array([op in RUN_OPS for op in ops], dtype=bool) & ~np.array(dependent, dtype=bool)
        if not stores_alone:
            takes &= stores == 0
        n = len(ops)
        # run_stop[j]: the first row at or after j that it does not take
        refused = np.append(np.flatnonzero(~takes), n)
        run_stop = refused[np.searchsorted(refused, np.arange(n))]
        return cls(names, np.array([number[name] for name in stages], dtype=np.int64), stores,
                   np.array(elements, dtype=np.int64), np.array(n_bytes, dtype=np.int64),
                   np.array(flops, dtype=np.int64), np.array(cycles, dtype=np.float64),
                   np.array([UPDATE_ISSUE_FACTOR if op == "update" else 1 for op in ops], dtype=np.int64),
                   run_stop.astype(np.int64))


@dataclass
class CoreTiming:
    """Latencies of the core's memory path, in core cycles and ps."""

    level_latency_cycles: tuple[int, ...]  # hit latency per cache level
    dram_latency_ps: int                   # unloaded load-to-use DRAM latency (path + device)
    path_latency_ps: int                   # the part outside the DRAM device
    snoop_latency_cycles: int = 0          # round trip to the first shared level, per line a store invalidates


@dataclass
class HostCore:
    """A single trace-driven core attached to one memory port."""

    name: str
    clock: ClockDomain
    port: MemoryPort
    timing: CoreTiming
    flops_per_cycle: float
    loads_per_cycle: float
    max_outstanding_misses: int
    stages: dict[str, StageStats] = field(default_factory=dict)
    bytes_by_level: np.ndarray = field(init=False)  # bytes served per level (last entry = DRAM), B
    flops: int = field(init=False, default=0)  # floating-point operations executed, flop
    sync_wait_ps: int = field(init=False, default=0)  # time its thread waited at barriers and joins, ps

    prefetch: PrefetchSlots | None = field(init=False, default=None)  # set when the caches prefetch
    _paused: object = field(init=False, default=None, repr=False)  # the last timeout the core waited on

    def __post_init__(self) -> None:
        self.bytes_by_level = np.zeros(len(self.timing.level_latency_cycles) + 1, dtype=np.float64)
        # what ``chunk_kernel.serve_rows`` takes of the core
        self._latency_cycles = np.array(self.timing.level_latency_cycles, dtype=np.int64)
        self._rates = np.array([self.flops_per_cycle, self.loads_per_cycle, self.clock.frequency_hz],
                               dtype=np.float64)
        pf = getattr(self.port.caches, "prefetcher", None)
        if pf is not None and pf.enabled:
            g = self.port.caches.levels[pf.level]
            self.prefetch = PrefetchSlots(pf.level, self.timing.dram_latency_ps // self.max_outstanding_misses,
                                          self.timing.dram_latency_ps, 4 * g.size_bytes // g.line_bytes)

    def stage(self, name: str) -> StageStats:
        """The stats record of ``name``, created on first use."""
        if name not in self.stages:
            self.stages[name] = StageStats()
        return self.stages[name]

    # --- durations -------------------------------------------------------------------------

    def compute_ps(self, flops: float, cycles: float) -> int:
        """Duration of pure compute work, ps."""
        return self.clock.cycles_to_ps(flops / self.flops_per_cycle + cycles)

    def memory_ps(self, served_counts: np.ndarray, dram_done_ps: int | None, now_ps: int) -> int:
        """Duration of a chunk of independent accesses, ps (see module docstring)."""
        lat = self.timing.level_latency_cycles
        counts = served_counts.tolist()  # int64 -> int: Python arithmetic on a few numbers
        hidden = 0
        for i in range(1, len(lat)):
            hidden += counts[i] * lat[i]
        t = self.clock.cycles_to_ps(hidden / self.max_outstanding_misses)
        n_dram = counts[-1]
        t += (n_dram * self.timing.dram_latency_ps) // self.max_outstanding_misses
        if dram_done_ps is not None:
            t = max(t, dram_done_ps + self.timing.path_latency_ps - now_ps)
        return t

    def _prefetching_memory_ps(self, chunk: np.ndarray, res: PortResult, counts: np.ndarray, start_ps: int) -> int:
        """Duration of a chunk of independent accesses when the caches prefetch, ps: as
        ``memory_ps`` over the demand misses, plus the prefetched lines it uses before an idle
        miss slot has issued them, and no earlier than the lines in flight it uses
        (``simulator.host.prefetch_timing``)."""
        pf = self.prefetch
        pf.issue_idle(start_ps)
        served = res.cache.served_by
        dram_level = len(counts) - 1
        reads = res.cache.dram_reads
        demand_done = None
        if len(reads):
            demand = np.isin(reads, chunk[served == dram_level])
            pf.add(reads[~demand], res.read_done_ps[~demand] + self.timing.path_latency_ps)
            if demand.any():
                demand_done = int(res.read_done_ps[demand].max())
        promoted, latest_ps = pf.use(chunk[served == pf.level])
        misses = counts.copy()
        misses[-1] += promoted
        t = self.memory_ps(misses, demand_done, start_ps)
        slots_free = pf.commit(start_ps, int(counts[-1]) + promoted)
        return max(t, slots_free - start_ps, latest_ps - start_ps)

    def _access(self, lines: np.ndarray, op: str, now_ps: int):
        """One chunk of memory row ``op`` (read/write/update/zero) through the port."""
        if op == "zero":
            return self.port.zero(lines, now_ps)
        return self.port.access(lines, op in STORE_OPS, now_ps)

    def dependent_accesses(self, env, lines: np.ndarray, op: str, counts: np.ndarray):
        """SimPy generator: serialised accesses of memory row ``op``, each paying its full latency in turn.

        One event per access: the next address depends on this load, and DRAM
        serves requests in arrival order, so each access is issued at its own time.
        """
        lat = self.timing.level_latency_cycles
        n_levels = len(lat)
        for line in lines:
            now = env.now
            res = self._access(np.array([line], dtype=np.int64), op, now)
            level = int(res.cache.served_by[0])
            counts[level] += 1
            if level < n_levels:
                dt = self.clock.cycles_to_ps(lat[level])
            else:
                dt = res.dram_done_ps + self.timing.path_latency_ps - now
            if res.cache.snooped:
                dt += self.clock.cycles_to_ps(res.cache.snooped * self.timing.snoop_latency_cycles)
            yield self._pause(env, max(dt, 1))

    # --- replay ------------------------------------------------------------------------------

    def _pause(self, env, duration_ps: int):
        """The timeout of ``duration_ps`` the core's process waits on next, kept (``run_memory_rows``)."""
        self._paused = env.timeout(duration_ps)
        return self._paused

    def run_memory_row(self, env, stage: StageStats, lines: np.ndarray, n_elements: int, n_bytes: int,
                       flops: int, cycles: float, op: str, dependent: bool):
        """SimPy generator: replay one memory row (read/write/update/zero) chunk by chunk."""
        issue_factor = UPDATE_ISSUE_FACTOR if op == "update" else 1
        n_lines = len(lines)
        if n_lines == 0:
            yield from self.run_compute_row(env, stage, flops, cycles)
            return
        bytes_per_line = n_bytes / n_lines
        n_out = len(self.bytes_by_level)
        stage_served = stage.served_record(n_out)
        for lo in range(0, n_lines, CHUNK_LINES):
            chunk = lines[lo:lo + CHUNK_LINES]
            share = len(chunk) / n_lines
            c_flops, c_cycles = flops * share, cycles * share
            c_elems = n_elements * share
            start = env.now
            if dependent:
                counts = np.zeros(n_out, dtype=np.int64)
                yield from self.dependent_accesses(env, chunk, op, counts)
                mem_ps = env.now - start
            else:
                if op == "zero" or self.prefetch is not None:
                    res = self._access(chunk, op, start)
                    counts, snooped = count_levels(res.cache.served_by, n_out), res.cache.snooped
                    if op == "zero":
                        mem_ps = self.memory_ps(counts, res.dram_done_ps, start)
                    else:
                        mem_ps = self._prefetching_memory_ps(chunk, res, counts, start)
                else:  # what the timing needs of the chunk, without the rest of its result
                    counts, dram_done_ps, snooped = self.port.access_levels(chunk, op in STORE_OPS, start)
                    mem_ps = self.memory_ps(counts, dram_done_ps, start)
                if snooped:  # the invalidations of other cores' copies, in flight as misses are
                    mem_ps += self.clock.cycles_to_ps(snooped * self.timing.snoop_latency_cycles
                                                      / self.max_outstanding_misses)
            issue_ps = self.clock.cycles_to_ps(c_elems * issue_factor / self.loads_per_cycle)
            comp_ps = self.compute_ps(c_flops, c_cycles)
            busy = max(mem_ps, issue_ps, comp_ps, 1)
            add_scaled(counts, bytes_per_line, self.bytes_by_level, stage_served)  # B served per level
            stage.compute_ps += comp_ps
            stage.stall_ps += busy - comp_ps
            stage.lines += len(chunk)
            stage.busy_ps += busy
            # dependent chunks have already spent mem_ps; only the rest (compute/issue beyond it) remains
            yield self._pause(env, busy - mem_ps if dependent else busy)
            stage.add_interval(start, env.now)
        stage.flops += flops
        self.flops += flops
        stage.other_cycles += cycles
        stage.elements += n_elements * issue_factor
        stage.bytes_touched += n_bytes

    def run_memory_rows(self, env, rows: MemoryRows, first: int, stop: int, lines: np.ndarray,
                        offsets: np.ndarray, base: int = 0):
        """SimPy generator: run memory rows ``first``, ``first + 1``, ... (below ``stop``, taken: ``rows.run_stop``)
        as ``run_memory_row`` runs each, in compiled calls (``chunk_kernel.serve_rows``) of as many rows as end
        before another process next acts; return the first row not run (``first`` when it cannot run it: the
        caller then runs it row by row). Row j's lines are ``lines[offsets[j - base]:offsets[j - base + 1]]``.

        Between two such rows no other process acts (the next pending event is later), so one timeout for
        the rows leaves every event, state and number as one timeout per row does. It runs more than one only
        when the process was resumed by its own timeout: other processes resumed by the same event (a barrier,
        a join) would act at this time after it, and no pending event shows them."""
        process = env.active_process
        if self.prefetch is not None or process is None:
            return first
        stop = min(stop, int(rows.run_stop[first]))
        now = t = env.now
        peek = env.peek() if process.target is self._paused else now  # now: one row
        limit = NO_LIMIT_PS if peek >= NO_LIMIT_PS else int(peek)
        n_out = len(self.bytes_by_level)
        work = rows.work(n_out)
        out = work.out
        j = first
        while j < stop:
            # a window of rows per call: about twice what the last call ran, as the stage records it loads
            # and writes back grow with it
            hi = min(stop, j + rows.window)
            max_lines = int((offsets[j - base + 1:hi - base + 1] - offsets[j - base:hi - base]).max())
            args = self.port.rows_args(min(CHUNK_LINES, max(max_lines, 1)), t)
            if args is None:
                break
            pipeline_ps, state = args
            ids = rows.stage_of[j:hi]
            for k in set(ids.tolist()):
                work.load(k, self.stages.get(rows.stage_names[k]))
            ck.serve_rows(lines, offsets, j - base, hi - base, rows.stage_of[base:], rows.stores[base:],
                          rows.elements[base:], rows.n_bytes[base:], rows.flops[base:], rows.cycles[base:],
                          rows.issue_factor[base:], self._latency_cycles, self._rates, self.max_outstanding_misses,
                          self.timing.dram_latency_ps, self.timing.path_latency_ps, CHUNK_LINES, t, limit,
                          pipeline_ps, work.ints, work.other_cycles, work.served, self.bytes_by_level, *state, out)
            if out[ck.O_SERVED_PS] >= 0:
                self.port.rows_served(int(out[ck.O_SERVED_PS]))
            if out[ck.O_STATUS] == ck.OUT_OF_RANGE:
                raise self.port.dram.out_of_range(int(out[ck.O_LO]), int(out[ck.O_HI]))
            done = int(out[ck.O_NEXT]) + base
            if done > j:
                ran = ids[:done - j]
                newest = int(ran.max()) + 1
                for k in range(rows.stages_made, newest):  # records made in the order the rows reach them
                    self.stage(rows.stage_names[k])
                rows.stages_made = max(rows.stages_made, newest)
                for k in set(ran.tolist()):
                    work.store(k, self.stages[rows.stage_names[k]])
                self.flops += int(out[ck.O_FLOPS])
                t = int(out[ck.O_END_PS])
            rows.window = min(RUN_ROWS, max(8, 2 * (done - j)))
            if done < hi or t >= limit:
                j = done
                break
            j = done
        if j == first:
            return first
        yield self._pause(env, t - now)
        return j

    def run_compute_row(self, env, stage: StageStats, flops: int, cycles: float):
        """SimPy generator: pure compute."""
        start = env.now
        busy = self.compute_ps(flops, cycles)
        stage.flops += flops
        self.flops += flops
        stage.other_cycles += cycles
        stage.compute_ps += busy
        stage.busy_ps += busy
        if busy:
            yield self._pause(env, busy)
        stage.add_interval(start, env.now)

    def run_maintenance_row(self, env, stage: StageStats, lines: np.ndarray, op: str, requester: str | None = None):
        """SimPy generator: flush / evict_llc / invalidate of ``lines``, counted for ``requester``
        (default: the core's port; an offload's coherence work names its unit's driver).

        Each line is looked up like a load (issue rate, LLC latency hidden by the
        outstanding-miss limit); on a multi-core host each copy it removes from another
        core's private levels adds the snoop latency, overlapped as a demand chunk's
        invalidations are; dirty lines written to DRAM bound the time by DRAM's completion.
        """
        yield from self.run_maintenance_chunks(env, stage, (lines[lo:lo + CHUNK_LINES]
                                                            for lo in range(0, len(lines), CHUNK_LINES)), op, requester)

    def run_maintenance_chunks(self, env, stage: StageStats, chunks: Iterable[np.ndarray], op: str,
                               requester: str | None = None):
        """SimPy generator: ``run_maintenance_row`` over lines that come as ``chunks`` (each of at most
        CHUNK_LINES lines, timed as one)."""
        action = {"flush": self.port.flush, "evict_llc": self.port.evict_to_llc, "invalidate": self.port.invalidate}[op]
        llc_cycles = self.timing.level_latency_cycles[-1]
        for chunk in chunks:
            start = env.now
            res = action(chunk, start, requester)
            t = self.clock.cycles_to_ps(max(len(chunk) / self.loads_per_cycle,
                                            len(chunk) * llc_cycles / self.max_outstanding_misses))
            if res.dram_done_ps is not None:
                t = max(t, res.dram_done_ps - start)
            if res.cache.snooped:  # other cores' copies it removed, in flight as a demand chunk's invalidations are
                t += self.clock.cycles_to_ps(res.cache.snooped * self.timing.snoop_latency_cycles
                                             / self.max_outstanding_misses)
            t = max(t, 1)
            stage.stall_ps += t
            stage.busy_ps += t
            stage.lines += len(chunk)
            yield self._pause(env, t)
            stage.add_interval(start, env.now)
