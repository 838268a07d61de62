"""Replaying an operation trace on a built system.

The host's rows run in order as one SimPy process. Memory rows are expanded
to line addresses, a block of rows per compiled call
(``workloads.line_kernel.lines_of_rows``, the lines ``workloads.trace.element_lines``
and ``gather_lines`` give each row), and handed to the host core (runs of loads and stores several rows per call,
``HostCore.run_memory_rows``); ``offload``/``wait`` rows hand commands to the
accelerator units the system has and wait for their completion. Every row and
command of a table is checked against the system before the run starts
(``simulator.command_check``); a stream's (``workloads.trace_stream``) batch by batch, each as it
arrives, so that the run holds one batch at a time.

A trace with a ``thread`` column runs one process per thread, thread t on
core t (a trace with more threads than ``host.cores`` is refused). A barrier
is one SimPy event per barrier number, fired when the last thread with rows
reaches it; a join waits for the named threads' processes to end. The
threads' sync rows were checked for deadlock with the trace
(``workloads.trace``). A trace without the column runs as one process on the
host's first core.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from simulator.command_check import check_commands
from simulator.accel.command_schema import TARGET_KEY
from simulator.config.arrow import to_numpy
from simulator.host.core import MemoryRows
from simulator.interconnect.couplings import COUPLING_STRATEGIES, FIRST_LEVEL
from simulator.system import System
from workloads.line_kernel import lines_of_rows
from workloads.trace import THREAD_FIELD, TraceError, thread_ids, validate_trace
from workloads.trace_stream import TraceStream


MEMORY_ROW_OPS = ("read", "write", "update", "zero")
MAINTENANCE_ROW_OPS = ("flush", "evict_llc", "invalidate")
LINE_ROW_OPS = MEMORY_ROW_OPS + MAINTENANCE_ROW_OPS  # the rows that touch cache lines
LINE_BLOCK_LINES = 1 << 20  # lines expanded per call at most (8 MiB of line numbers), unless one row has more
LINE_BLOCK_ROWS = 4096      # rows expanded per call at most


class _Columns:
    """The trace's columns as numpy arrays and Python lists, read once; the per-row numbers the
    replay reads row by row are Python lists (a list item costs less than a numpy scalar)."""

    def __init__(self, table: pa.Table, commands: dict[int, tuple[dict, Any]] | None = None):
        def col(name):
            return table.column(name).combine_chunks()

        self.n = table.num_rows
        self._commands = commands or {}  # row -> (params, parsed command), as checked (taken once)
        self.unit = col("unit").to_pylist()
        self.stage = col("stage").to_pylist()
        self.op = col("op").to_pylist()
        self.addr = to_numpy(col("addr"))
        self.elem_bytes = to_numpy(col("elem_bytes"))
        self.stride = to_numpy(col("stride_bytes"))
        self.count = to_numpy(col("count"))
        self.flops = to_numpy(col("flops"))
        self.cycles = to_numpy(col("cycles"))
        self.dependent = to_numpy(col("dependent"))
        self.count_list = self.count.tolist()
        self.bytes_list = (self.count * self.elem_bytes).tolist()
        self.flops_list = self.flops.tolist()
        self.cycles_list = self.cycles.astype(np.float64).tolist()
        self.dependent_list = self.dependent.astype(bool).tolist()
        self.params = col("params").to_pylist()
        addrs = col("addrs")
        if isinstance(addrs, pa.ChunkedArray):
            addrs = pa.concat_arrays(addrs.chunks) if addrs.num_chunks else pa.nulls(0, pa.list_(pa.int64()))
        self.addrs_valid = to_numpy(addrs.is_valid()) if len(addrs) else np.zeros(0, bool)
        self.addrs_offsets = to_numpy(addrs.offsets) if len(addrs) else np.zeros(1, np.int32)
        self.addrs_values = to_numpy(addrs.values) if len(addrs) else np.zeros(0, np.int64)

    def command(self, i: int) -> tuple[dict, Any]:
        """(params, parsed command) of offload/wait row ``i`` as ``check_commands`` made them, handed over once."""
        return self._commands.pop(i)

    def line_bound(self, rows: np.ndarray, line_bytes: int) -> np.ndarray:
        """An upper bound of the lines each of ``rows`` touches (float, so that no product overflows)."""
        count = self.count[rows].astype(np.float64)
        elem = self.elem_bytes[rows].astype(np.float64)
        n_starts = count
        if self.addrs_valid.size:
            listed = self.addrs_valid[rows]
            lengths = (self.addrs_offsets[rows + 1] - self.addrs_offsets[rows]).astype(np.float64)
            n_starts = np.where(listed, lengths, count)
            elem = np.where(listed, np.floor(count / np.maximum(lengths, 1)) * elem, elem)
        return n_starts * (np.ceil(elem / line_bytes) + 1)

    def line_blocks(self, rows: list[int], line_bytes: int):
        """The lines of ``rows`` a block at a time, expanded a block per compiled call
        (``workloads.line_kernel.lines_of_rows``): (p0, p1, lines, offsets), in order, row ``rows[p]`` for
        p0 <= p < p1 touching ``lines[offsets[p - p0]:offsets[p - p0 + 1]]`` (none for a row of no lines)."""
        n = len(rows)
        at = np.array([p for p, i in enumerate(rows) if self.op[i] in LINE_ROW_OPS], dtype=np.int64)
        touching = np.array(rows, dtype=np.int64)[at] if len(at) else np.zeros(0, dtype=np.int64)
        bound = self.line_bound(touching, line_bytes)
        listed = self.addrs_valid if self.addrs_valid.size else np.zeros(self.n, dtype=np.bool_)
        p0 = start = 0
        while start < len(touching):
            stop = start + 1
            total = bound[start]
            while (stop < len(touching) and stop - start < LINE_BLOCK_ROWS
                   and total + bound[stop] <= LINE_BLOCK_LINES):
                total += bound[stop]
                stop += 1
            lines, offsets = lines_of_rows(touching[start:stop], self.addr, self.elem_bytes, self.stride, self.count,
                                           listed, self.addrs_offsets, self.addrs_values, line_bytes)
            p1 = n if stop == len(touching) else int(at[stop])  # up to the next block's first row of lines
            per_row = np.zeros(p1 - p0 + 1, dtype=np.int64)
            per_row[at[start:stop] - p0 + 1] = np.diff(offsets)
            yield p0, p1, lines, np.cumsum(per_row)
            p0, start = p1, stop
        if p0 < n:
            yield p0, n, np.zeros(0, dtype=np.int64), np.zeros(n - p0 + 1, dtype=np.int64)


class _Sync:
    """The barriers and joins of a threaded replay (module docstring)."""

    def __init__(self, env, threads: list[int]) -> None:
        self.env = env
        self.n_threads = len(threads)
        self.arrived: dict[int, int] = {}   # barrier number -> threads that have reached it
        self.barriers: dict[int, object] = {}
        self.passed: dict[int, int] = dict.fromkeys(threads, 0)  # barriers each thread has passed
        self.done: dict[int, object] = {}   # thread -> its process

    def barrier(self, thread: int):
        """The event of ``thread``'s next barrier, fired when every thread has reached it."""
        k = self.passed[thread]
        self.passed[thread] = k + 1
        event = self.barriers.setdefault(k, self.env.event())
        self.arrived[k] = self.arrived.get(k, 0) + 1
        if self.arrived[k] == self.n_threads:
            event.succeed()
            del self.barriers[k], self.arrived[k]
        return event

    def join(self, threads: list[int]):
        """The event fired when each of ``threads`` has run all its rows."""
        return self.env.all_of([self.done[t] for t in threads])


def host_process(system: System, cols: _Columns, rows: np.ndarray, core=None, sync: _Sync | None = None,
                 thread: int = 0):
    """SimPy process: a host thread replays its rows in order on ``core`` (default: the host's first)
    (checked: ``check_commands``)."""
    env = system.env
    core = core or system.host
    rows = rows.tolist()
    ops, stage_names = cols.op, cols.stage
    counts, n_bytes, flops, cycles, dependent = (cols.count_list, cols.bytes_list, cols.flops_list,
                                                 cols.cycles_list, cols.dependent_list)
    stages = core.stages
    # the memory rows the core may run several at a time (``HostCore.run_memory_rows``)
    runs = MemoryRows.of([ops[i] for i in rows], [stage_names[i] for i in rows], [counts[i] for i in rows],
                         [n_bytes[i] for i in rows], [flops[i] for i in rows], [cycles[i] for i in rows],
                         [dependent[i] for i in rows], core.port.stores_alone())
    run_stop = runs.run_stop.tolist()
    p = 0
    for p0, p1, block, offsets in cols.line_blocks(rows, system.spec.caches.line_bytes):
        while p < p1:
            if run_stop[p] > p:
                taken = yield from core.run_memory_rows(env, runs, p, p1, block, offsets, p0)
                if taken > p:
                    p = taken
                    continue
            i = rows[p]
            op = ops[i]
            lines = block[offsets[p - p0]:offsets[p - p0 + 1]] if op in LINE_ROW_OPS else None
            p += 1
            stage = stages.get(stage_names[i]) or core.stage(stage_names[i])
            if lines is not None and op in MEMORY_ROW_OPS:
                yield from core.run_memory_row(env, stage, lines, counts[i], n_bytes[i], flops[i], cycles[i], op,
                                               dependent[i])
            elif lines is not None:
                yield from core.run_maintenance_row(env, stage, lines, op)
            elif op == "compute":
                yield from core.run_compute_row(env, stage, flops[i], cycles[i])
            elif op == "offload":
                params, args = cols.command(i)
                yield from system.units[params["unit"]].offload(core, params, stage, args)
            elif op == "wait":
                yield from system.units[cols.command(i)[0]["unit"]].wait(core, stage)
            elif sync is not None:  # barrier, join: a single thread's barrier waits for no one
                start = env.now
                yield sync.barrier(thread) if op == "barrier" else sync.join(json.loads(cols.params[i])["threads"])
                core.sync_wait_ps += env.now - start


def check_trace(system: System, table: pa.Table, source: str = "<memory>", row_offset: int = 0,
                whole_trace: bool = True) -> dict[int, tuple[dict, Any]]:
    """Validate ``table`` against ``system``: its units, rows, threads and commands (TraceError naming
    ``source``); return the (params, parsed command) of its offload/wait rows as the units run them
    (``check_commands``). ``row_offset`` and ``whole_trace``: a batch of a longer trace (``validate_trace``)."""
    decoded = validate_trace(table, source, units=system.unit_names(), row_offset=row_offset,
                             whole_trace=whole_trace)
    if THREAD_FIELD.name in table.schema.names and len(table):
        threads = thread_ids(table)
        cores = len(system.cores)
        beyond = np.flatnonzero(threads >= cores)
        if beyond.size:
            raise TraceError(source, f"thread {int(threads[beyond[0]])}, but the system has {cores} "
                             f"core{'s' if cores > 1 else ''} (host.cores; thread t runs on core t): expected "
                             f"threads 0..{cores - 1}", row=int(beyond[0]) + row_offset, column=THREAD_FIELD.name)
    commands = check_commands(system, table, source, decoded, row_offset)
    if len(system.cores) > 1 and THREAD_FIELD.name in table.schema.names and len(table):
        _check_first_level_offloads(system, commands, thread_ids(table), source, row_offset)
    return commands


def _check_first_level_offloads(system: System, commands: dict[int, tuple[dict, Any]], threads: np.ndarray,
                                source: str, row_offset: int) -> None:
    """Refuse an offload or wait from a thread other than 0 to a unit that works in the first cache level (in the
    pipeline) where that level is private: it is then core 0's, so the unit would read and write core 0's copies,
    not those of the core that offloads."""
    if system.spec.caches.shared_levels()[0]:  # one first level for all the cores: the unit's is every core's
        return
    for i, (params, parsed) in sorted(commands.items()):
        unit = params[TARGET_KEY]
        coupling = system.spec.accelerators[unit].interface.coupling
        if threads[i] != 0 and COUPLING_STRATEGIES[coupling].entry == FIRST_LEVEL:
            what = "waits on" if parsed is None else "offloads to"
            raise TraceError(source, f"thread {int(threads[i])} {what} {unit!r}, coupled {coupling}: such a unit "
                             "works in core 0's private first cache level; expected its offloads and waits on "
                             "thread 0",
                             row=i + row_offset, column=THREAD_FIELD.name)


def _run_threads(system: System, cols: _Columns, threads: np.ndarray) -> None:
    """Run each thread's rows as its own process on its core until all have ended."""
    env = system.env
    present = np.unique(threads).tolist()
    sync = _Sync(env, present)
    for t in present:
        sync.done[t] = env.process(host_process(system, cols, np.flatnonzero(threads == t), system.cores[t],
                                                sync, t))
    env.run(until=env.all_of(list(sync.done.values())))


def _host_rows(cols: _Columns) -> np.ndarray:
    """The rows of ``cols`` the host runs (checked: every row)."""
    return np.flatnonzero(np.array(cols.unit, dtype=object) == "host")


def _checked(system: System, table: pa.Table, source: str, offset: int = 0, whole_trace: bool = True) -> _Columns:
    """``table`` checked against the system (``check_trace``), with the operands its commands name placed
    in the memories their units work in (``System.place_operands``)."""
    commands = check_trace(system, table, source, offset, whole_trace=whole_trace)
    system.place_operands(params for params, command in commands.values() if command is not None)
    return _Columns(table, commands)


def _stream_process(system: System, stream: TraceStream, source: str):
    """SimPy process: the host replays a stream's batches one after another, each checked (``check_trace``,
    rows numbered from the stream's first) as it arrives and dropped once run."""
    offset = 0
    for batch in stream:
        cols = _checked(system, batch, source, offset, whole_trace=False)
        yield from host_process(system, cols, _host_rows(cols))
        offset += batch.num_rows


def replay(system: System, trace: pa.Table | TraceStream, source: str = "<memory>") -> int:
    """Validate ``trace`` against the system (``check_trace``), replay it, return the end time in ps.

    A table is checked whole before it runs; a stream batch by batch as it runs, so that the run holds one
    batch at a time. A threaded stream is gathered into one table first (its threads' rows interleave
    across batches), and so is any stream on a system with near memories (the operands its commands name
    must be placed in their memory before the host first writes them)."""
    if isinstance(trace, TraceStream) and (trace.threaded or system.near_memories):
        trace = trace.to_table()
    if isinstance(trace, TraceStream):
        system.env.run(until=system.env.process(_stream_process(system, trace, source)))
    elif THREAD_FIELD.name in trace.schema.names:
        _run_threads(system, _checked(system, trace, source), thread_ids(trace))
    else:
        cols = _checked(system, trace, source)
        system.env.run(until=system.env.process(host_process(system, cols, _host_rows(cols))))
    for unit in system.units.values():  # accelerators finish their queued commands
        system.env.run(until=unit.idle_event())
    # the run ends when the last posted write-back has reached its memory too
    end_ps = max(int(system.env.now), system.last_completion_ps)
    system.memories_idle_until(end_ps)  # refreshes and background state up to the end of the run
    return end_ps
