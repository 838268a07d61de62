"""Operation traces: the Arrow schema, a builder, validation and Parquet and CSV I/O.

A workload generator emits an *operation trace*: a ``pyarrow.Table`` with one
row per operation. The simulator replays each host thread's rows in row order; an accelerator runs the
commands of the ``offload`` rows that name it.

Columns of :data:`TRACE_SCHEMA` (all non-null except ``addrs``):

``unit`` (string)
    Who executes the row: ``"host"``, the only unit that runs trace rows (a run refuses
    an accelerator's name here, ``simulator.command_check``); for ``offload``/``wait``
    the issuer.
``stage`` (string, non-empty)
    Stage label for per-stage timelines (``"input_perm"``, ``"gemm"``, ...).
``op`` (string)
    One of :data:`OPS`. ``read`` loads every element, ``write`` stores,
    ``update`` loads then stores the same elements (read-modify-write),
    ``zero`` allocates the lines dirty and zero-filled without reading memory
    (dcbz / DC ZVA / CLZERO),
    ``flush``/``evict_llc``/``invalidate`` are cache maintenance of the lines
    covered, ``compute`` has no memory fields and carries flops and/or cycles,
    ``offload`` hands ``params`` to the unit named in ``params["unit"]``,
    ``wait`` blocks the issuer until ``params["unit"]`` has finished its commands,
    ``barrier`` holds its thread until every thread of the trace has reached its
    barrier of the same number, ``join`` holds its thread until the threads named
    in ``params["threads"]`` have run all their rows (both host rows, no memory
    fields, no work).
``addr`` (int64, bytes)
    Byte address of the first element for memory ops (>= 0), else 0.
``elem_bytes`` (int64, bytes)
    Bytes per element, >= 1 for memory ops, else 0.
``stride_bytes`` (int64, bytes)
    Byte distance between consecutive elements; 0 repeats the same element,
    negative walks downwards. 0 for non-memory ops.
``count`` (int64, elements)
    Number of elements (>= 0); 0 for non-memory ops.
``addrs`` (list<int64>, nullable, bytes)
    Explicit byte addresses (random access, gather). When not null it replaces
    ``addr``/``stride_bytes`` (both then 0). Each address starts a run of
    ``count / len(addrs)`` consecutive elements (``count`` a whole multiple of
    the length; 1 per address is a plain gather): a run is one vector that the
    code walks element by element, e.g. a leaf whose values a permutation
    reorders, so its lines are those of the run and its accesses count per
    element.
``flops`` (int64, floating-point operations)
    Work overlapped with this row's memory accesses (>= 0).
``cycles`` (float64, cycles of the executing unit)
    Other work: integer ops, fixed costs (>= 0, finite).
``dependent`` (bool)
    The accesses are serialised: each address depends on the previous load
    (pointer chasing).
``params`` (string, JSON)
    For ``offload`` a JSON object with ``"unit"`` (the target unit) and the command's
    fields; for ``wait`` exactly ``{"unit": ...}``; each key once; ``"{}"`` for ``barrier``; ``{"threads": [t, ...]}`` for ``join``
    (distinct threads that have rows, not the row's own); ``""`` for every other op.

One optional column (:data:`THREAD_FIELD`), after the others:

``thread`` (int64, >= 0)
    The host thread that runs the row; thread t runs on core t. A trace without
    the column is all thread 0. Each thread runs its rows in row order; rows of
    different threads run concurrently. Every thread with rows reaches the same
    number of barriers. :class:`TraceBuilder` writes the column only when some
    row has a thread other than 0.

A trace file may be written by any Arrow or pandas writer: :func:`read_trace`
takes Parquet (``.parquet``) or CSV (any other name; a header line with the
column names above, ``addrs`` as integers separated by spaces, empty for
null) and converts each column to the type above: the text columns from any
Arrow string type (string, large_string, or a dictionary of either), the
integer columns from any integer type whose values fit int64, ``cycles`` from
any integer or floating type, ``addrs`` from a list or large list of integers.
``workloads/examples/gemm_offload.py`` writes such a trace by hand: the host
produces two matrices and offloads their product to a LAP.

Size limits, checked before a trace is built or read (a file's row count and a
bound of its addresses from its metadata): :data:`MAX_TRACE_ROWS` rows,
:data:`MAX_TRACE_ADDRESSES` explicit addresses, :data:`MAX_TRACE_STAGES`
distinct (unit, stage) pairs, and per row :data:`MAX_ROW_FLOPS` flops,
:data:`MAX_ROW_CYCLES` cycles and labels of :data:`MAX_LABEL_CHARS` characters.

Every error is a :class:`TraceError` (a ``ValueError``) whose message names the
file (or ``"<memory>"``), the row, the column and what was expected.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from simulator.config.arrow import arrow_array, arrow_scalar, list_lengths, string_array, to_numpy
from simulator.errors import one_line, quoted
from simulator.config.files import write_atomic
from simulator.config.jsonio import RepeatedKey, loads_keys_once
from simulator.units import INT64_MAX, is_power_of_two
from workloads.line_kernel import lines_of_elements

OPS: tuple[str, ...] = (
    "compute", "read", "write", "update", "zero", "flush", "evict_llc", "invalidate", "offload",
    "wait", "barrier", "join",
)
#: Ops that carry memory fields (addr/elem_bytes/stride_bytes/count or addrs).
MEMORY_OPS: tuple[str, ...] = ("read", "write", "update", "zero", "flush", "evict_llc", "invalidate")
#: Ops whose ``params`` column holds a JSON command.
COMMAND_OPS: tuple[str, ...] = ("offload", "wait")
#: Ops that synchronise host threads (host rows, no memory fields, no work).
SYNC_OPS: tuple[str, ...] = ("barrier", "join")
#: Ops that move data (as opposed to cache maintenance).
DATA_OPS: tuple[str, ...] = ("read", "write", "update", "zero")

TRACE_SCHEMA: pa.Schema = pa.schema(
    [
        pa.field("unit", pa.string(), nullable=False),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("op", pa.string(), nullable=False),
        pa.field("addr", pa.int64(), nullable=False),
        pa.field("elem_bytes", pa.int64(), nullable=False),
        pa.field("stride_bytes", pa.int64(), nullable=False),
        pa.field("count", pa.int64(), nullable=False),
        # The list child is named "element" as Parquet names it, so that a
        # table read back from Parquet has exactly this schema.
        pa.field("addrs", pa.list_(pa.field("element", pa.int64())), nullable=True),
        pa.field("flops", pa.int64(), nullable=False),
        pa.field("cycles", pa.float64(), nullable=False),
        pa.field("dependent", pa.bool_(), nullable=False),
        pa.field("params", pa.string(), nullable=False),
    ],
    metadata={"offsim.trace.version": "1"},
)

#: The optional column naming each row's host thread (absent: every row is thread 0).
THREAD_FIELD: pa.Field = pa.field("thread", pa.int64(), nullable=False)
#: The schema of a trace with the ``thread`` column.
THREADED_TRACE_SCHEMA: pa.Schema = TRACE_SCHEMA.append(THREAD_FIELD)
#: Most host threads a trace may name (thread ids 0 .. MAX_THREADS - 1).
MAX_THREADS = 1024
#: ``params`` of a barrier row.
BARRIER_PARAMS = "{}"

MEMORY_SOURCE = "<memory>"
#: Largest byte address we accept (2**62): keeps address arithmetic inside int64.
MAX_ADDR = 1 << 62
#: Most rows in a trace. A :class:`TraceBuilder` holds some 450 B per row and builds about 130,000
#: rows a second, so this many take about 1 GB and 15 s to build, and some as long to replay;
#: generators refuse larger traces before building them, naming the parameter, the builder stops
#: at this count whatever the generator, and a trace file with more rows is refused before it is read.
MAX_TRACE_ROWS = 2_000_000
#: Most explicit addresses (gather elements, pointer-chase lines) in a trace: 128 MiB of int64;
#: drawing them peaks at some 0.8 GB and takes some 6 s (the format itself allows 2**31 - 2, the
#: int32 offsets of the ``addrs`` lists).
MAX_TRACE_ADDRESSES = 2**24
#: Most flops on one row: 2**53 (9.0e15), the integers that the float64 arithmetic timing them holds
#: exactly; at a host's 10 GFLOP/s that is already ten days of work.
MAX_ROW_FLOPS = 2**53
#: Most other cycles on one row, for the same reason.
MAX_ROW_CYCLES = float(2**53)
#: Longest unit name or stage label, characters: labels name results rows and figure bars.
MAX_LABEL_CHARS = 256
#: Most distinct (unit, stage) pairs in a trace: each is a record of some fifteen results rows.
MAX_TRACE_STAGES = 16_384
#: Largest CSV trace file read, bytes: MAX_TRACE_ROWS rows of some 100 characters, with room for the
#: addresses of the ``addrs`` column.
MAX_CSV_TRACE_BYTES = 1 << 30
#: Bytes of a CSV trace parsed as one block: a row must fit in one (an offload of many regions, or a gather of
#: many addresses, is one long row). The whole file when it is smaller.
CSV_BLOCK_BYTES = 1 << 26
#: Most entries (parts, requests) of one offload command: its JSON text stays below some 100 MB.
MAX_COMMAND_ITEMS = 1_000_000


class TraceError(ValueError):
    """An invalid trace, or a trace file that cannot be read.

    ``source`` is the file name (or ``"<memory>"``), ``row`` and ``column`` are
    ``None`` when the problem concerns the whole file or the whole column.
    """

    def __init__(self, source: str, expected: str, row: int | None = None,
                 column: str | None = None) -> None:
        self.source = str(source)
        self.row = row
        self.column = column
        self.expected = expected
        where = [f"row {row}"] if row is not None else []
        if column is not None:
            where.append(f"column '{column}'")
        prefix = f"{self.source}: {', '.join(where)}" if where else self.source
        super().__init__(f"{prefix}: {expected}")

    def __reduce__(self) -> tuple:
        # rebuilt from its fields, so that it crosses a process pool intact (its args hold the text alone)
        return type(self), (self.source, self.expected, self.row, self.column)


# --------------------------------------------------------------------------- size limits


def thread_count(value: Any) -> int:
    """``value`` (a generator's ``threads``) if it is a thread count a trace can carry, thread ids 0 .. MAX_THREADS
    - 1; ValueError naming the parameter otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_THREADS:
        raise ValueError(f"threads must be an integer from 1 to {MAX_THREADS}, got {value!r}")
    return int(value)


def check_trace_limit(name: str, value: int, maximum: int, why: str) -> None:
    """Refuse, before a trace is built, a parameter ``name`` above ``maximum`` (the largest value that
    keeps the trace within the limits above, ``why`` saying which): ValueError naming the parameter,
    so that a huge count fails at once rather than after filling the memory."""
    if value > maximum:
        unit = " B" if name.endswith("_bytes") else ""
        raise ValueError(f"{name} must be at most {max(maximum, 0):,}{unit} ({why}), got {value!r}")


def check_row_cycles(name: str, value: float, total: float, g_bytes: int, row_bytes: int, beta: float) -> None:
    """Refuse, before a trace is built, a cost of ``total`` = C g^beta cycles spread over rows of ``row_bytes``
    of a ``g_bytes`` buffer, row [start, end) taking ``total ((end/g)^beta - (start/g)^beta)``, whose largest row
    exceeds MAX_ROW_CYCLES: ValueError naming parameter ``name`` (its value ``value``, C or what scales it).
    The largest row is the first (beta < 1) or one of the last two (beta >= 1; the last may be shorter)."""
    n_rows = -(-g_bytes // row_bytes)
    starts = {0, max(0, n_rows - 2) * row_bytes, (n_rows - 1) * row_bytes}
    largest = max(total * ((min(g_bytes, s + row_bytes) / g_bytes) ** beta - (s / g_bytes) ** beta) for s in starts)
    if not largest <= MAX_ROW_CYCLES:
        limit = value * MAX_ROW_CYCLES / largest
        step = 10.0 ** (math.floor(math.log10(limit)) - 3) if limit > 0 else 1.0
        raise ValueError(f"{name} must be at most {math.floor(limit / step) * step:.4g} (a trace row holds at most "
                         f"2**53 cycles, workloads.trace.MAX_ROW_CYCLES: C g^{beta:g} = {total:.4g} cycles over g = "
                         f"{g_bytes:,} B puts {largest:.4g} on a row of {min(row_bytes, g_bytes):,} B), got {value!r}")


def rows_why(per: int, what: str) -> str:
    """The reason of a row-count limit: ``a trace holds at most N rows, <per> per <what>``."""
    return f"a trace holds at most {MAX_TRACE_ROWS:,} rows, {per:,} per {what}"


# --------------------------------------------------------------------------- builder


def _bad(row: int, column: str, expected: str) -> NoReturn:
    """Raise the builder's error for ``row``/``column`` (messages are formatted only on failure)."""
    raise TraceError(MEMORY_SOURCE, expected, row=row, column=column)


class TraceBuilder:
    """Append trace rows cheaply (one Python list per column), then :meth:`to_table`.

    Arguments are checked as rows are appended (a :class:`TraceError` names the
    row about to be added); :meth:`to_table` validates the whole table again.
    """

    def __init__(self) -> None:
        self._cols: dict[str, list[Any]] = {name: [] for name in THREADED_TRACE_SCHEMA.names}
        # the column lists in schema order, each row appended to them by ``_push``
        self._col_lists: tuple[list[Any], ...] = tuple(self._cols.values())
        self._threaded = False  # some row has a thread other than 0: the table gets the thread column

    def __len__(self) -> int:
        return len(self._cols["op"])

    # -- generic append
    @staticmethod
    def _check_row(row: int, unit: str, stage: str, op: str, flops: int, cycles: float, thread: int) -> None:
        """The checks every appended row passes (a :class:`TraceError` naming ``row``)."""
        if row >= MAX_TRACE_ROWS:  # a generator that did not foresee its size: stop before the memory fills
            raise TraceError(MEMORY_SOURCE, f"at most {MAX_TRACE_ROWS:,} rows in a trace (workloads.trace."
                             "MAX_TRACE_ROWS); expected smaller workload parameters", row=row)
        for column, value, what in (("unit", unit, "unit name"), ("stage", stage, "stage label")):
            if not (isinstance(value, str) and 0 < len(value) <= MAX_LABEL_CHARS):
                shown = repr(value[:40]) + "..." if isinstance(value, str) and len(value) > 40 else repr(value)
                _bad(row, column, f"a non-empty {what} (a string) of at most {MAX_LABEL_CHARS} characters, got "
                     f"{shown}")
        if op not in OPS:
            _bad(row, "op", f"one of {', '.join(OPS)}, got {op!r}")
        if not (int(flops) == flops and 0 <= flops <= MAX_ROW_FLOPS):
            _bad(row, "flops", f"an integer flop count in [0, 2**53] (workloads.trace.MAX_ROW_FLOPS), got {flops!r}")
        if not (math.isfinite(cycles) and 0 <= cycles <= MAX_ROW_CYCLES):
            _bad(row, "cycles", f"a cycle count in [0, 2**53] (workloads.trace.MAX_ROW_CYCLES), got {cycles!r}")
        if thread and (isinstance(thread, bool) or not isinstance(thread, (int, np.integer))
                       or not 0 < thread < MAX_THREADS):
            _bad(row, "thread", f"a thread id in [0, {MAX_THREADS}) (workloads.trace.MAX_THREADS), got {thread!r}")

    def _append(self, unit: str, stage: str, op: str, addr: int, elem_bytes: int,
                stride_bytes: int, count: int, addrs: np.ndarray | None, flops: int,
                cycles: float, dependent: bool, params: str, thread: int) -> None:
        self._check_row(len(self), unit, stage, op, flops, cycles, thread)
        self._push((unit, stage, op, int(addr), int(elem_bytes), int(stride_bytes), int(count), addrs, int(flops),
                    float(cycles), bool(dependent), params, int(thread)))

    def _push(self, values: tuple[Any, ...]) -> None:
        """Append one checked row: its column values in :data:`THREADED_TRACE_SCHEMA` order."""
        if values[-1]:
            self._threaded = True
        for column, value in zip(self._col_lists, values):
            column.append(value)

    # -- public row kinds
    def compute(self, unit: str, stage: str, flops: int = 0, cycles: float = 0.0, *, thread: int = 0) -> None:
        """Pure work: ``flops`` floating-point operations and ``cycles`` other cycles."""
        self._append(unit, stage, "compute", 0, 0, 0, 0, None, flops, cycles, False, "", thread)

    def access(self, unit: str, stage: str, op: str, addr: int, elem_bytes: int,
               stride_bytes: int, count: int, flops: int = 0, cycles: float = 0.0,
               dependent: bool = False, *, thread: int = 0) -> None:
        """A strided memory op: ``count`` elements of ``elem_bytes`` bytes from byte ``addr``."""
        row = len(self)
        if op not in MEMORY_OPS:
            _bad(row, "op", f"a memory op ({', '.join(MEMORY_OPS)}), got {op!r}")
        if elem_bytes < 1:
            _bad(row, "elem_bytes", f"elem_bytes >= 1, got {elem_bytes}")
        if count < 0:
            _bad(row, "count", f"count >= 0, got {count}")
        if addr < 0:
            _bad(row, "addr", f"a byte address >= 0, got {addr}")
        low = addr + min(0, stride_bytes * (count - 1)) if count > 0 else addr
        if low < 0:
            _bad(row, "stride_bytes",
                 f"elements at addresses >= 0, but element {count - 1} would be at byte {low}")
        self._append(unit, stage, op, addr, elem_bytes, stride_bytes, count, None, flops, cycles,
                     dependent, "", thread)

    def region(self, unit: str, stage: str, op: str, addr: int, nbytes: int, flops: int = 0,
               cycles: float = 0.0, *, thread: int = 0) -> None:
        """A contiguous region of ``nbytes`` bytes from byte ``addr`` (one 1-byte element per byte)."""
        row = len(self)
        if nbytes < 0:
            _bad(row, "count", f"nbytes >= 0, got {nbytes}")
        self.access(unit, stage, op, addr, 1, 1, nbytes, flops=flops, cycles=cycles, thread=thread)

    def gather(self, unit: str, stage: str, op: str, addrs: np.ndarray, elem_bytes: int,
               flops: int = 0, cycles: float = 0.0, dependent: bool = False, run: int = 1, *,
               thread: int = 0) -> None:
        """A memory op over explicit byte addresses ``addrs`` (copied).

        Each address starts ``run`` consecutive elements of ``elem_bytes`` bytes
        (the row's ``count`` is ``run * len(addrs)``).
        """
        row = len(self)
        _check_gather(row, op, elem_bytes, run)
        arr = np.array(addrs, dtype=np.int64, copy=True).reshape(-1)
        if not (arr.size == 0 or int(arr.min()) >= 0):
            _bad(row, "addrs", "byte addresses >= 0, got a negative one")
        self._append(unit, stage, op, 0, elem_bytes, 0, int(run) * arr.size, arr, flops, cycles, dependent, "",
                     thread)

    def gather_rows(self, unit: str, stage: str, op: str, elem_bytes: int, run: int = 1, *,
                    thread: int = 0) -> Callable[[np.ndarray, int], None]:
        """``add(addrs, flops)``, which appends the row ``gather(unit, stage, op, addrs, elem_bytes, flops,
        run=run, thread=thread)`` would, for a generator that emits many gathers alike: what the rows share is
        checked here, once. ``addrs`` (a one-dimensional int64 array of byte addresses) is kept as given, not
        copied, so the caller must not change it afterwards; its values are checked with the whole table by
        :meth:`to_table`."""
        row = len(self)
        _check_gather(row, op, elem_bytes, run)
        self._check_row(row, unit, stage, op, 0, 0.0, thread)
        run, elem_bytes, thread = int(run), int(elem_bytes), int(thread)
        ops, push = self._cols["op"], self._push

        def add(addrs: np.ndarray, flops: int) -> None:
            n = len(ops)
            if n >= MAX_TRACE_ROWS or not 0 <= flops <= MAX_ROW_FLOPS or int(flops) != flops:
                self._check_row(n, unit, stage, op, flops, 0.0, thread)
            push((unit, stage, op, 0, elem_bytes, 0, run * addrs.size, addrs, int(flops), 0.0, False, "", thread))

        return add

    def offload(self, unit: str, stage: str, target: str, *, thread: int = 0, **params: Any) -> None:
        """Hand a command with JSON-serialisable ``params`` to accelerator ``target``."""
        self._command("offload", unit, stage, target, params, thread)

    def wait(self, unit: str, stage: str, target: str, *, thread: int = 0) -> None:
        """Block ``unit`` until ``target`` has finished all commands issued to it."""
        self._command("wait", unit, stage, target, {}, thread)

    def barrier(self, stage: str = "barrier", *, thread: int = 0) -> None:
        """Hold ``thread`` until every thread of the trace has reached its barrier of this number."""
        self._append("host", stage, "barrier", 0, 0, 0, 0, None, 0, 0.0, False, BARRIER_PARAMS, thread)

    def join(self, threads: Collection[int], stage: str = "join", *, thread: int = 0) -> None:
        """Hold ``thread`` until each of ``threads`` has run all its rows (checked by :meth:`to_table`)."""
        named = list(threads)
        if not named or any(isinstance(t, bool) or not isinstance(t, (int, np.integer)) for t in named):
            _bad(len(self), "params", f"a non-empty list of thread ids to join, got {threads!r}")
        self._append("host", stage, "join", 0, 0, 0, 0, None, 0, 0.0, False,
                     json.dumps({"threads": [int(t) for t in named]}), thread)

    def _command(self, op: str, unit: str, stage: str, target: str, params: dict[str, Any], thread: int = 0) -> None:
        row = len(self)
        if not (isinstance(target, str) and target != ""):
            _bad(row, "params", f"a non-empty target unit name, got {target!r}")
        try:
            text = json.dumps({"unit": target, **params}, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TraceError(MEMORY_SOURCE, f"JSON-serialisable parameters ({exc})",
                             row=row, column="params") from None
        self._append(unit, stage, op, 0, 0, 0, 0, None, 0, 0.0, False, text, thread)

    def to_table(self, units: Collection[str] | None = None) -> pa.Table:
        """The rows as a validated table with :data:`TRACE_SCHEMA`, or :data:`THREADED_TRACE_SCHEMA`
        when some row has a thread other than 0."""
        cols = self._cols
        schema = THREADED_TRACE_SCHEMA if self._threaded else TRACE_SCHEMA
        arrays = []
        for field in schema:
            if field.name == "addrs":
                arrays.append(_list_array(cols["addrs"]))
            else:
                arrays.append(arrow_array(cols[field.name], field.type))
        table = pa.Table.from_arrays(arrays, schema=schema)
        validate_trace(table, MEMORY_SOURCE, units)
        return table


def _check_gather(row: int, op: str, elem_bytes: int, run: int) -> None:
    """The checks of a gather row's op, element size and run (a :class:`TraceError` naming ``row``)."""
    if op not in MEMORY_OPS:
        _bad(row, "op", f"a memory op ({', '.join(MEMORY_OPS)}), got {op!r}")
    if elem_bytes < 1:
        _bad(row, "elem_bytes", f"elem_bytes >= 1, got {elem_bytes}")
    if isinstance(run, bool) or int(run) != run or run < 1:
        _bad(row, "count", f"a run of >= 1 whole elements per address, got {run!r}")


def _list_array(items: list[np.ndarray | None]) -> pa.Array:
    """A list<int64> array from per-row arrays, ``None`` giving a null row."""
    lengths = np.fromiter((0 if a is None else a.size for a in items), dtype=np.int64,
                          count=len(items))
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2**31 - 1:
        raise TraceError(MEMORY_SOURCE, f"at most 2**31 - 2 explicit addresses in one trace, "
                         f"got {int(offsets[-1])}", column="addrs")
    present = [a for a in items if a is not None]
    values = np.concatenate(present) if present else np.zeros(0, dtype=np.int64)
    mask = np.fromiter((a is None for a in items), dtype=bool, count=len(items))
    return pa.ListArray.from_arrays(arrow_array(offsets.astype(np.int32), pa.int32()),
                                    arrow_array(values, pa.int64()),
                                    type=TRACE_SCHEMA.field("addrs").type, mask=arrow_array(mask, pa.bool_()))


# --------------------------------------------------------------------------- address space


@dataclass(frozen=True)
class Allocation:
    """One named allocation: ``addr`` (bytes) and ``nbytes`` (bytes)."""

    addr: int
    nbytes: int


class AddressSpace:
    """Deterministic bump allocator of byte addresses for workload arrays.

    ``base_addr`` is the first byte address handed out; ``capacity_bytes``
    (optional) bounds the highest address (exclusive) relative to 0.
    """

    def __init__(self, base_addr: int = 0, capacity_bytes: int | None = None) -> None:
        if base_addr < 0:
            raise ValueError(f"base_addr must be >= 0 bytes, got {base_addr}")
        if capacity_bytes is not None and capacity_bytes <= base_addr:
            raise ValueError(f"capacity_bytes must exceed base_addr ({base_addr}), "
                             f"got {capacity_bytes}")
        self._next = base_addr
        self._capacity = capacity_bytes
        self._allocs: dict[str, Allocation] = {}

    def alloc(self, name: str, nbytes: int, align: int = 4096) -> int:
        """Reserve ``nbytes`` bytes aligned to ``align`` bytes; returns the byte address."""
        if not name:
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        if name in self._allocs:
            raise ValueError(f"name {name!r} is already allocated")
        if nbytes < 0:
            raise ValueError(f"nbytes must be >= 0, got {nbytes} for {name!r}")
        if not is_power_of_two(align):
            raise ValueError(f"align must be a power of two >= 1 byte, got {align}")
        addr = -(-self._next // align) * align
        end = addr + nbytes
        if end > MAX_ADDR or (self._capacity is not None and end > self._capacity):
            limit = self._capacity if self._capacity is not None else MAX_ADDR
            raise ValueError(f"allocation {name!r} of {nbytes} bytes ends at byte {end}, "
                             f"beyond the capacity of {limit} bytes")
        self._allocs[name] = Allocation(addr, nbytes)
        self._next = end
        return addr

    def __getitem__(self, name: str) -> Allocation:
        return self._allocs[name]

    @property
    def end_addr(self) -> int:
        """First byte address after the last allocation."""
        return self._next

    def layout(self) -> dict[str, Allocation]:
        """Name -> :class:`Allocation`, in allocation order."""
        return dict(self._allocs)


# --------------------------------------------------------------------------- validation


def _fail(source: str, mask: np.ndarray, column: str, expected: str, offset: int = 0,
          table: pa.Table | None = None) -> None:
    """TraceError at the first row of ``mask`` (``offset`` added to its number), naming ``column`` and what was
    ``expected``; with the value ``table`` holds there ("-5; expected count >= 0") unless the text gives it."""
    bad = np.flatnonzero(mask)
    if bad.size:
        more = f" ({bad.size - 1} more rows like this)" if bad.size > 1 else ""
        if table is not None and ", got " not in expected:
            expected = f"{one_line(repr(table.column(column)[int(bad[0])].as_py()))}; expected {expected}"
        raise TraceError(source, expected + more, row=int(bad[0]) + offset, column=column)


def _np(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return to_numpy(col)


def _type_ok(name: str, actual: pa.DataType) -> bool:
    expected = THREADED_TRACE_SCHEMA.field(name).type
    if name in ("unit", "stage") and pa.types.is_dictionary(actual):
        return actual.value_type == pa.string()
    if name == "addrs":
        return pa.types.is_list(actual) and actual.value_type == pa.int64()
    return actual == expected


def _check_names(table: pa.Table, source: str) -> None:
    """Each column of :data:`TRACE_SCHEMA` exactly once, the optional ``thread`` at most once, and no other."""
    names = table.schema.names
    for name in names:
        if names.count(name) > 1:
            raise TraceError(source, "each column exactly once, but it appears "
                             f"{names.count(name)} times", column=name)
        if name not in THREADED_TRACE_SCHEMA.names:
            raise TraceError(source, f"no such column (expected only: "
                             f"{', '.join(THREADED_TRACE_SCHEMA.names)})", column=name)
    for field in TRACE_SCHEMA:
        if field.name not in names:
            raise TraceError(source, f"a column of type {field.type}, but it is missing",
                             column=field.name)


def trace_schema(table: pa.Table) -> pa.Schema:
    """The schema ``table`` is checked against: :data:`THREADED_TRACE_SCHEMA` if it has a ``thread``
    column, else :data:`TRACE_SCHEMA`."""
    return THREADED_TRACE_SCHEMA if THREAD_FIELD.name in table.schema.names else TRACE_SCHEMA


def _check_schema(table: pa.Table, source: str) -> None:
    _check_names(table, source)
    for field in trace_schema(table):
        actual = table.schema.field(field.name).type
        if not _type_ok(field.name, actual):
            raise TraceError(source, f"type {field.type}, got {actual}", column=field.name)


def validate_trace(table: pa.Table, source: str = MEMORY_SOURCE,
                   units: Collection[str] | None = None, row_offset: int = 0,
                   whole_trace: bool = True) -> dict[int, dict[str, Any]]:
    """Check ``table`` against :data:`TRACE_SCHEMA` and the row rules; raise :class:`TraceError`.

    ``units``: when given, every row's unit and every offload/wait target must
    be one of them. ``row_offset`` is added to reported row numbers (for
    validating a batch of a longer trace); ``whole_trace=False`` skips the rules
    that span threads (barrier counts, join targets), which a batch cannot satisfy
    alone. Returns the decoded ``params`` of the offload/wait rows by row index in
    ``table``, for a replay not to decode them again.
    """
    source = str(source)
    if not isinstance(table, pa.Table):
        raise TraceError(source, f"a pyarrow.Table, got {type(table).__name__}")
    _check_schema(table, source)

    def fail(mask: np.ndarray, column: str, expected: str) -> None:
        _fail(source, mask, column, expected, row_offset, table)

    for name in trace_schema(table).names:
        col = table.column(name)
        if name != "addrs" and col.null_count:
            fail(_np(pc.is_null(col)), name, "a value, got null")

    unit_col = table.column("unit")
    if pa.types.is_dictionary(unit_col.type):
        unit_col = unit_col.cast(pa.string())
    stage_col = table.column("stage")
    if pa.types.is_dictionary(stage_col.type):
        stage_col = stage_col.cast(pa.string())
    op_col = table.column("op")

    for column, col, what in (("unit", unit_col, "unit name"), ("stage", stage_col, "stage label")):
        chars = _np(pc.utf8_length(col))
        fail(chars == 0, column, f"a non-empty {what}")
        fail(chars > MAX_LABEL_CHARS, column,
             f"a {what} of at most {MAX_LABEL_CHARS} characters (workloads.trace.MAX_LABEL_CHARS)")
    if whole_trace:
        check_stage_count(distinct_stages(unit_col, stage_col), source)
    op_ok = _np(pc.is_in(op_col, value_set=string_array(OPS)))
    if not op_ok.all():
        bad = int(np.flatnonzero(~op_ok)[0])
        fail(~op_ok, "op", f"one of {', '.join(OPS)}, got {op_col[bad].as_py()!r}")

    is_mem = _np(pc.is_in(op_col, value_set=string_array(MEMORY_OPS)))
    is_cmd = _np(pc.is_in(op_col, value_set=string_array(COMMAND_OPS)))
    addr = _np(table.column("addr"))
    elem = _np(table.column("elem_bytes"))
    stride = _np(table.column("stride_bytes"))
    count = _np(table.column("count"))
    flops = _np(table.column("flops"))
    cycles = _np(table.column("cycles"))
    addrs_col = table.column("addrs")
    has_list = _np(pc.is_valid(addrs_col)) if len(table) else np.zeros(0, dtype=bool)

    non_mem = ~is_mem
    fail(non_mem & (addr != 0), "addr", "0 for a non-memory op")
    fail(non_mem & (elem != 0), "elem_bytes", "0 for a non-memory op")
    fail(non_mem & (stride != 0), "stride_bytes", "0 for a non-memory op")
    fail(non_mem & (count != 0), "count", "0 for a non-memory op")
    fail(non_mem & has_list, "addrs", "null for a non-memory op")

    fail(is_mem & (elem < 1), "elem_bytes", "elem_bytes >= 1 for a memory op")
    fail(is_mem & (elem >= MAX_ADDR), "elem_bytes", "an element below 2**62 bytes (the byte addresses' end)")
    fail(count < 0, "count", "count >= 0")
    fail((flops < 0) | (flops > MAX_ROW_FLOPS), "flops", "flops in [0, 2**53] (workloads.trace.MAX_ROW_FLOPS)")
    fail(~np.isfinite(cycles) | (cycles < 0) | (cycles > MAX_ROW_CYCLES), "cycles",
         "a cycle count in [0, 2**53] (workloads.trace.MAX_ROW_CYCLES)")

    strided = is_mem & ~has_list
    fail(strided & ((addr < 0) | (addr >= MAX_ADDR)), "addr",
         "a byte address in [0, 2**62) for a memory op")
    # Span check in float64 so that a huge stride * count cannot wrap around.
    walk_f = stride.astype(np.float64) * np.maximum(count - 1, 0)  # from the first element to the last
    last_f = addr.astype(np.float64) + walk_f
    fail(strided & (count > 0) & (last_f < 0), "stride_bytes",
         "every element at a byte address >= 0 (the stride walks below 0)")
    # the span's end, addr + stride_bytes x (count - 1) + elem_bytes, blamed on its largest term: addr, the
    # walk (on count where it outnumbers the stride, else on stride_bytes) or the element
    beyond = strided & (count > 0) & (last_f + elem >= MAX_ADDR)
    walk = np.abs(walk_f)
    at_addr = addr.astype(np.float64) >= np.maximum(walk, elem)
    at_walk = ~at_addr & (walk >= elem)
    span = "every element below byte 2**62 (addr + stride_bytes x (count - 1) + elem_bytes)"
    fail(beyond & at_addr, "addr", span)
    fail(beyond & at_walk & (count - 1 > np.abs(stride)), "count", span)
    fail(beyond & at_walk, "stride_bytes", span)
    fail(beyond, "elem_bytes", span)

    if has_list.any():
        fail(has_list & (addr != 0), "addr", "0 when explicit addrs are given")
        fail(has_list & (stride != 0), "stride_bytes", "0 when explicit addrs are given")
        lengths = list_lengths(addrs_col).astype(np.int64)
        if whole_trace:
            _check_addresses(int(lengths.sum()), source)
        # a whole multiple >= 1 of the address count (0 for an empty list)
        bad_len = has_list & np.where(lengths > 0, (count < lengths) | (count % np.maximum(lengths, 1) != 0),
                                      count != 0)
        if bad_len.any():
            i = int(np.flatnonzero(bad_len)[0])
            fail(bad_len, "count", f"count a whole multiple (>= 1) of len(addrs) = {lengths[i]}, "
                 f"got {count[i]}")
        flat = pc.list_flatten(addrs_col)
        if flat.null_count:
            parents = _np(pc.list_parent_indices(addrs_col))
            rows = np.zeros(len(table), dtype=bool)
            rows[parents[_np(pc.is_null(flat))]] = True
            fail(rows, "addrs", "no null addresses")
        values = _np(flat)
        bad_val = (values < 0) | (values >= MAX_ADDR)
        if bad_val.any():
            parents = _np(pc.list_parent_indices(addrs_col))
            rows = np.zeros(len(table), dtype=bool)
            rows[parents[bad_val]] = True
            fail(rows, "addrs", "byte addresses in [0, 2**62)")

    params = table.column("params")
    is_sync = _np(pc.is_in(op_col, value_set=string_array(SYNC_OPS)))
    fail(~is_cmd & ~is_sync & _np(pc.not_equal(params, arrow_scalar("", pa.string()))), "params",
         "'' for an op that is not offload/wait/barrier/join")
    if is_sync.any():
        _check_sync_rows(table, source, is_sync, unit_col, flops, cycles, row_offset, whole_trace)
    elif THREAD_FIELD.name in table.schema.names:
        _check_thread_ids(table, source, row_offset)
    units_set = None if units is None else set(units)
    if units_set is not None:
        ok = _np(pc.is_in(unit_col, value_set=string_array(sorted(units_set))))
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            _fail(source, ~ok, "unit", f"unit {unit_col[i].as_py()!r} is not in the system "  # names the value
                  f"(it has: {', '.join(sorted(units_set))})", row_offset)
    decoded: dict[int, dict[str, Any]] = {}
    for i in np.flatnonzero(is_cmd):
        row = int(i) + row_offset
        text = params[int(i)].as_py()
        try:
            obj = loads_keys_once(text)
        except RepeatedKey as exc:
            raise TraceError(source, f"a JSON object with each key once, got {exc.key!r} twice in "
                             f"{quoted(text)}", row=row, column="params") from None
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to decode
            raise TraceError(source, f"a JSON object, got {quoted(text)}", row=row, column="params") from None
        if not isinstance(obj, dict):
            raise TraceError(source, f"a JSON object, got {quoted(text)}", row=row, column="params")
        target = obj.get("unit")
        if not isinstance(target, str) or not target:
            raise TraceError(source, "a JSON object with a non-empty string \"unit\" (the target), "
                             f"got {quoted(text)}", row=row, column="params")
        if units_set is not None and target not in units_set:
            raise TraceError(source, f"target unit {target!r} is not in the system "
                             f"(it has: {', '.join(sorted(units_set))})", row=row, column="params")
        decoded[int(i)] = obj
    return decoded


def thread_ids(table: pa.Table) -> np.ndarray:
    """Each row's host thread (int64; all 0 for a trace without the ``thread`` column)."""
    if THREAD_FIELD.name not in table.schema.names:
        return np.zeros(len(table), dtype=np.int64)
    return _np(table.column(THREAD_FIELD.name)).astype(np.int64, copy=False)


def _check_thread_ids(table: pa.Table, source: str, row_offset: int) -> np.ndarray:
    """The ``thread`` column, each id in [0, MAX_THREADS); TraceError naming the first other."""
    threads = thread_ids(table)
    bad = (threads < 0) | (threads >= MAX_THREADS)
    if bad.any():
        _fail(source, bad, THREAD_FIELD.name, f"a thread id in [0, {MAX_THREADS}) (workloads.trace.MAX_THREADS), "
              f"got {int(threads[np.flatnonzero(bad)[0]])}", row_offset)
    return threads


def _check_sync_rows(table: pa.Table, source: str, is_sync: np.ndarray, unit_col: pa.ChunkedArray,
                     flops: np.ndarray, cycles: np.ndarray, row_offset: int, whole_trace: bool) -> None:
    """The rules of barrier and join rows: host rows without work, their ``params``, and (for a whole
    trace) as many barriers on every thread with rows, and joins of other threads that have rows."""
    def fail(mask: np.ndarray, column: str, expected: str) -> None:
        _fail(source, mask, column, expected, row_offset, table)

    threads = _check_thread_ids(table, source, row_offset)
    fail(is_sync & _np(pc.not_equal(unit_col, arrow_scalar("host", pa.string()))), "unit",
         "'host' for a barrier or join (host threads synchronise)")
    fail(is_sync & ((flops != 0) | (cycles != 0)), "flops" if (flops[is_sync] != 0).any() else "cycles",
         "0 for a barrier or join (they do no work)")
    ops = table.column("op").to_pylist()
    params = table.column("params")
    present = set(np.unique(threads).tolist())
    barriers: dict[int, list[int]] = {}
    for i in np.flatnonzero(is_sync):
        i = int(i)
        text = params[i].as_py()
        if ops[i] == "barrier":
            if text != BARRIER_PARAMS:
                raise TraceError(source, f"'{BARRIER_PARAMS}' for a barrier, got {quoted(text)}",
                                 row=i + row_offset, column="params")
            barriers.setdefault(int(threads[i]), []).append(i)
            continue
        try:
            obj = loads_keys_once(text)
        except (ValueError, RecursionError):  # RepeatedKey is a ValueError: refused below, as any bad join
            obj = None
        named = obj.get("threads") if isinstance(obj, dict) and set(obj) == {"threads"} else None
        if not (isinstance(named, list) and named and all(isinstance(t, int) and not isinstance(t, bool)
                                                          for t in named) and len(set(named)) == len(named)):
            raise TraceError(source, "a JSON object {\"threads\": [t, ...]} naming distinct thread ids to join, "
                             f"got {quoted(text)}", row=i + row_offset, column="params")
        if int(threads[i]) in named:
            raise TraceError(source, f"threads other than the row's own ({int(threads[i])}): a thread cannot "
                             f"join itself, got {quoted(text)}", row=i + row_offset, column="params")
        missing = sorted(set(named) - present) if whole_trace else []
        if missing:
            raise TraceError(source, f"threads that have rows in the trace; thread {missing[0]} has none "
                             f"(it has threads {', '.join(map(str, sorted(present)))})", row=i + row_offset,
                             column="params")
    if whole_trace:
        _check_balanced(source, present, barriers, row_offset)
        _check_no_deadlock(source, threads, np.flatnonzero(is_sync), ops, params, row_offset)


def _check_balanced(source: str, present: set[int], barriers: dict[int, list[int]], row_offset: int) -> None:
    """As many barriers on every thread with rows (TraceError at the first barrier some thread lacks)."""
    counts = {t: len(barriers.get(t, [])) for t in present}
    most = max(counts.values())
    short = [t for t in sorted(counts) if counts[t] < most]
    if short:
        t_most = max(sorted(counts), key=lambda t: counts[t])
        raise TraceError(source, f"as many barriers on every thread with rows: thread {t_most} reaches {most}, "
                         f"thread {short[0]} only {counts[short[0]]}",
                         row=barriers[t_most][counts[short[0]]] + row_offset, column="op")


def _check_no_deadlock(source: str, threads: np.ndarray, sync_rows: np.ndarray, ops: list[str],
                       params: pa.ChunkedArray, row_offset: int) -> None:
    """Play the threads' barriers and joins in order, without time: a barrier opens when every unfinished
    thread waits at one, a join when its threads have passed all their sync rows. TraceError at a join that
    never opens (a cycle of joins, or a join of a thread that waits at a barrier for the joiner)."""
    order: dict[int, list[tuple[int, list[int] | None]]] = {int(t): [] for t in np.unique(threads)}
    for i in sync_rows:
        named = json.loads(params[int(i)].as_py())["threads"] if ops[int(i)] == "join" else None
        order[int(threads[i])].append((int(i), named))
    at = dict.fromkeys(order, 0)
    while True:
        moved = False
        for t, rows in order.items():
            while at[t] < len(rows) and rows[at[t]][1] is not None \
                    and all(at[u] == len(order[u]) for u in rows[at[t]][1]):
                at[t] += 1
                moved = True
        waiting = [t for t in order if at[t] < len(order[t])]
        if not waiting:
            return
        if all(order[t][at[t]][1] is None for t in waiting):  # every unfinished thread is at a barrier
            for t in waiting:
                at[t] += 1
            continue
        if not moved:
            t = next(t for t in waiting if order[t][at[t]][1] is not None)
            row, named = order[t][at[t]]
            raise TraceError(source, f"joins that can end: thread {t} waits here for threads {named}, which never "
                             "finish (a cycle of joins, or a barrier that waits for the joining thread)",
                             row=row + row_offset, column="params")


# --------------------------------------------------------------------------- Parquet I/O


def write_trace(table: pa.Table, path: str | os.PathLike[str]) -> None:
    """Validate ``table`` and write it to ``path`` as Parquet, atomically (``write_atomic``: readers
    never see a partial file, and the file takes the umask's permissions)."""
    path = Path(path)
    validate_trace(table, str(path))
    write_atomic(path, lambda tmp: pq.write_table(table, tmp, row_group_size=65536))


def _checked_path(path: Path) -> Path:
    """``path`` if it is an existing regular file; else TraceError naming it (a device or a pipe
    would be read without end)."""
    try:
        exists = path.exists()
    except OSError as exc:  # a name too long for the file system, say
        raise TraceError(str(path), f"a trace file's path ({exc.strerror})") from None
    if not exists:
        raise TraceError(str(path), "an existing Parquet or CSV trace file, but there is no such file")
    if path.is_dir():
        raise TraceError(str(path), "a Parquet or CSV trace file, but it is a directory")
    if not path.is_file():
        raise TraceError(str(path), "a Parquet or CSV trace file, but it is not a regular file (a device, pipe "
                         "or socket)")
    return path


def _is_csv(path: Path) -> bool:
    """Whether ``path`` names a CSV trace (anything not called ``*.parquet``)."""
    return path.suffix.lower() != ".parquet"


def _check_rows(n_rows: int, source: str) -> None:
    if n_rows > MAX_TRACE_ROWS:
        raise TraceError(source, f"at most {MAX_TRACE_ROWS:,} rows (workloads.trace.MAX_TRACE_ROWS), got "
                         f"{n_rows:,}")


def distinct_stages(unit_col: Any, stage_col: Any) -> set[tuple[str, str]]:
    """The (unit, stage) pairs of a trace's (or a batch's) unit and stage columns."""
    strings = [c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c for c in (unit_col, stage_col)]
    # a NUL joins them (labels holding a NUL could merge two pairs into one); an Arrow scalar, as a Python one
    # would import pandas
    joined = pc.unique(pc.binary_join_element_wise(*strings, arrow_scalar("\x00", pa.string())))
    return {tuple(pair.split("\x00", 1)) for pair in joined.to_pylist()}


def check_stage_count(stages: Collection[tuple[str, str]], source: str) -> None:
    """TraceError unless a trace's distinct (unit, stage) pairs are within :data:`MAX_TRACE_STAGES`."""
    if len(stages) > MAX_TRACE_STAGES:
        raise TraceError(source, f"at most {MAX_TRACE_STAGES:,} distinct (unit, stage) pairs in a trace "
                         f"(workloads.trace.MAX_TRACE_STAGES), got {len(stages):,}", column="stage")


def _check_addresses(n_addresses: int, source: str, at_least: bool = False) -> None:
    """TraceError unless ``n_addresses`` (with ``at_least``: a lower bound of them) is within the limit."""
    if n_addresses > MAX_TRACE_ADDRESSES:
        raise TraceError(source, f"at most {MAX_TRACE_ADDRESSES:,} explicit addresses in a trace "
                         f"(workloads.trace.MAX_TRACE_ADDRESSES), got {'at least ' if at_least else ''}"
                         f"{n_addresses:,}", column="addrs")


def _open(path: Path) -> pq.ParquetFile:
    pf = None
    try:
        pf = pq.ParquetFile(_checked_path(path))
    except (pa.ArrowException, OSError) as exc:
        raise TraceError(str(path), f"a readable Parquet file ({one_line(exc)})") from None
    meta = pf.metadata
    _check_rows(meta.num_rows, str(path))  # before reading a single row
    # the addrs lists' leaf values, from the metadata: each row adds at most one entry that is not an address
    # (an empty or null list), so more than the limit plus the rows is more addresses than the limit
    leaves = [j for j in range(meta.num_columns) if meta.schema.column(j).path.split(".")[0] == "addrs"]
    entries = sum(meta.row_group(g).column(j).num_values for g in range(meta.num_row_groups) for j in leaves)
    if entries > MAX_TRACE_ADDRESSES + meta.num_rows:
        _check_addresses(entries - meta.num_rows, str(path), at_least=True)
    return pf


#: The type each column of a CSV trace is read as (``addrs`` as text: integers separated by spaces).
_CSV_TYPES = {field.name: (pa.string() if field.name == "addrs" else field.type) for field in THREADED_TRACE_SCHEMA}


def _read_csv(path: Path) -> pa.Table:
    """A CSV trace as a table of :data:`TRACE_SCHEMA` (before validation)."""
    source = str(_checked_path(path))
    size = path.stat().st_size
    if size > MAX_CSV_TRACE_BYTES:
        raise TraceError(source, f"a CSV trace of at most {MAX_CSV_TRACE_BYTES:,} B "
                         f"(workloads.trace.MAX_CSV_TRACE_BYTES), got {size:,} B")
    # only an empty field is null: pyarrow's default also takes "nan", "NULL", "N/A" and others for null, which
    # would then be reported as a missing value rather than as the value written
    convert = pcsv.ConvertOptions(column_types=_CSV_TYPES, strings_can_be_null=False, null_values=[""],
                                  quoted_strings_can_be_null=False, true_values=["true", "True", "1"],
                                  false_values=["false", "False", "0"])
    block = min(size + 1, CSV_BLOCK_BYTES)
    try:
        table = pcsv.read_csv(path, read_options=pcsv.ReadOptions(block_size=block), convert_options=convert)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        if "straddl" in str(exc):  # pyarrow's words for a row longer than a block
            raise TraceError(source, f"a CSV trace whose rows are each at most {block:,} B "
                             "(workloads.trace.CSV_BLOCK_BYTES)") from None
        text = one_line(exc)
        column = re.search(r"CSV column #(\d+)", text)
        names = _csv_header(path) if column else []  # pyarrow numbers the file's columns: name it from the header
        if column and int(column.group(1)) < len(names):
            name = names[int(column.group(1))]
            bad = _first_unconverted(path, name, block) if "conversion error" in text else None
            if bad is not None:
                row, value = bad
                raise TraceError(source, f"{_NUMBER_WORDS[_CSV_TYPES[name]]}, got {quoted(value)}", row=row,
                                 column=name) from None
            text = text.replace(column.group(0), f"{column.group(0)} ('{name}')")
        raise TraceError(source, "a readable CSV trace with a header line (a file not named *.parquet is read as "
                         f"CSV): {text}") from None
    _check_rows(len(table), source)
    if "addrs" in table.column_names and pa.types.is_string(table.schema.field("addrs").type):
        table = table.set_column(table.schema.get_field_index("addrs"), "addrs", _csv_addrs(table, source))
    return table


#: what a CSV trace's numeric column holds, by its type, for a message naming a value that is not one
_NUMBER_WORDS = {pa.int64(): "a whole number (64-bit)", pa.float64(): "a number"}


def _first_unconverted(path: Path, name: str, block: int) -> tuple[int, str] | None:
    """(row, text) of the first value of numeric column ``name`` of a CSV trace that does not convert to its type,
    found by halving the column read as text (each half converted at once); None for another column, or if the
    column cannot be read as text or every value converts."""
    if _CSV_TYPES.get(name) not in _NUMBER_WORDS:
        return None
    as_text = pcsv.ConvertOptions(include_columns=[name], column_types={name: pa.string()}, strings_can_be_null=False,
                                  null_values=[""], quoted_strings_can_be_null=False)
    try:
        column = pcsv.read_csv(path, read_options=pcsv.ReadOptions(block_size=block),
                               convert_options=as_text).column(name).combine_chunks()
    except (pa.ArrowException, OSError, UnicodeDecodeError):
        return None

    def converts(lo: int, hi: int) -> bool:
        try:
            column.slice(lo, hi - lo).cast(_CSV_TYPES[name])
        except pa.ArrowException:
            return False
        return True

    lo, hi = 0, len(column)
    if converts(lo, hi):
        return None
    while hi - lo > 1:  # the first failing value lies in [lo, hi)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if not converts(lo, mid) else (mid, hi)
    return lo, column[lo].as_py()


def _csv_header(path: Path) -> list[str]:
    """The column names of a CSV trace's first line (empty if it cannot be read as text)."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            return [name.strip().strip('"') for name in f.readline(1 << 16).rstrip("\r\n").split(",")]
    except (OSError, UnicodeDecodeError):
        return []


def _csv_addrs(table: pa.Table, source: str) -> pa.ChunkedArray:
    """The ``addrs`` text of a CSV trace ("4096 8192", or empty for null) as lists of int64."""
    text = pc.utf8_trim_whitespace(table.column("addrs"))
    empty = pc.equal(pc.utf8_length(text), arrow_scalar(0, pa.int32()))
    # the addresses are the separators plus one on each non-empty row: counted before the lists are built
    separators = pc.sum(pc.count_substring_regex(text, r"\s+")).as_py() or 0
    _check_addresses(int(separators) + len(text) - int(pc.sum(empty).as_py() or 0), source)
    pieces = pc.split_pattern_regex(pc.if_else(empty, pa.nulls(1, pa.string())[0], text), r"\s+")
    try:
        return pieces.cast(pa.list_(pa.int64()))
    except pa.ArrowException:
        bad = next((i for i, v in enumerate(pieces.to_pylist()) if v is not None and not all(map(_int64_text, v))),
                   None)
        shown = "" if bad is None else f", got {quoted(table.column('addrs')[bad].as_py())}"
        raise TraceError(source, "integer byte addresses (64-bit) separated by spaces (or nothing for none)"
                         + shown, row=bad, column="addrs") from None


def _int64_text(text: str) -> bool:
    """Whether ``text`` is a decimal integer that fits in 64 bits (signed)."""
    digits = text[1:] if text.startswith("-") else text
    return digits.isdigit() and len(digits) <= 19 and -INT64_MAX - 1 <= int(text) <= INT64_MAX


def _text_type(tp: pa.DataType) -> bool:
    """Any Arrow string type: string, large_string, or a dictionary of either."""
    if pa.types.is_dictionary(tp):
        tp = tp.value_type
    return pa.types.is_string(tp) or pa.types.is_large_string(tp)


def _convertible(name: str, tp: pa.DataType) -> bool:
    """Whether a column ``name`` of type ``tp`` may be converted to :data:`THREADED_TRACE_SCHEMA`'s type."""
    expected = THREADED_TRACE_SCHEMA.field(name).type
    if pa.types.is_string(expected):
        return _text_type(tp)
    if pa.types.is_integer(expected):
        return pa.types.is_integer(tp)
    if pa.types.is_floating(expected):
        return pa.types.is_integer(tp) or pa.types.is_floating(tp)
    if name == "addrs":
        return pa.types.is_null(tp) or ((pa.types.is_list(tp) or pa.types.is_large_list(tp))
                                        and pa.types.is_integer(tp.value_type))
    return tp == expected


def conform_trace(table: pa.Table, source: str = MEMORY_SOURCE) -> pa.Table:
    """``table`` with every column converted to its :data:`TRACE_SCHEMA` (or :data:`THREADED_TRACE_SCHEMA`) type (module docstring says
    which types convert); TraceError naming the column for a type that does not, or a value that
    does not fit (an unsigned integer beyond int64)."""
    _check_names(table, source)
    schema = trace_schema(table)
    for name in schema.names:
        index = table.schema.get_field_index(name)
        actual = table.schema.field(index).type
        field = schema.field(name)
        if actual == field.type:
            continue
        if not _convertible(name, actual):
            raise TraceError(source, f"type {field.type} (or one that converts to it), got {actual}", column=name)
        try:
            column = table.column(index).cast(field.type)
        except pa.ArrowException:
            raise TraceError(source, f"values that fit {field.type}, got {actual} values beyond it",
                             column=name) from None
        table = table.set_column(index, field, column)
    table = table.select(schema.names)
    if any(table.column(f.name).null_count for f in schema if not f.nullable):
        return table  # validate_trace names the first null
    return table.cast(schema)  # the schema's order, nullability, list item name and metadata


def read_trace(path: str | os.PathLike[str], units: Collection[str] | None = None) -> pa.Table:
    """Read, convert (``conform_trace``) and validate a Parquet or CSV trace; any problem is a
    :class:`TraceError` naming the file."""
    path = Path(path)
    if _is_csv(path):
        table = _read_csv(path)
    else:
        pf = _open(path)
        try:
            table = pf.read()
        except (pa.ArrowException, OSError) as exc:
            raise TraceError(str(path), f"a readable Parquet file ({one_line(exc)})") from None
    table = conform_trace(table, str(path))
    validate_trace(table, str(path), units)
    return table


def iter_trace(path: str | os.PathLike[str], batch_rows: int = 65536,
               units: Collection[str] | None = None) -> Iterator[pa.Table]:
    """Stream a Parquet trace as converted, validated tables of at most ``batch_rows`` rows.

    Memory use stays bounded by the batch size; reported rows count from the
    start of the file.
    """
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    path = Path(path)
    pf = _open(path)
    offset = 0
    stages: set[tuple[str, str]] = set()
    try:
        batches = pf.iter_batches(batch_size=batch_rows)
        for batch in batches:
            table = conform_trace(pa.Table.from_batches([batch]), str(path))
            validate_trace(table, str(path), units, row_offset=offset, whole_trace=False)
            stages |= distinct_stages(table.column("unit"), table.column("stage"))
            check_stage_count(stages, str(path))
            offset += len(table)
            yield table
    except (pa.ArrowException, OSError) as exc:
        raise TraceError(str(path), f"a readable Parquet file ({one_line(exc)})") from None


def write_trace_csv(table: pa.Table, path: str | os.PathLike[str]) -> None:
    """Validate ``table`` and write it to ``path`` as a CSV trace (``addrs`` as integers separated by
    spaces), atomically as ``write_trace``."""
    path = Path(path)
    validate_trace(table, str(path))
    addrs = [" ".join(map(str, a)) if a is not None else "" for a in table.column("addrs").to_pylist()]
    text = table.set_column(table.schema.get_field_index("addrs"), "addrs", pa.array(addrs, pa.string()))
    write_atomic(path, lambda tmp: pcsv.write_csv(text, tmp))


# --------------------------------------------------------------------------- line expansion


def _check_line_args(elem_bytes: int, line_bytes: int) -> None:
    if elem_bytes < 1:
        raise ValueError(f"elem_bytes must be >= 1, got {elem_bytes}")
    if line_bytes < 1:
        raise ValueError(f"line_bytes must be >= 1, got {line_bytes}")


def element_lines(addr: int, elem_bytes: int, stride_bytes: int, count: int,
                  line_bytes: int) -> np.ndarray:
    """Line numbers (byte address // ``line_bytes``) touched by a strided access, in access order.

    Element ``i`` covers bytes ``addr + i*stride_bytes`` .. ``+ elem_bytes - 1``;
    an element spanning two lines gives both. Consecutive duplicates are removed.
    Returns an int64 array.
    """
    _check_line_args(elem_bytes, line_bytes)
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if addr < 0:
        raise ValueError(f"addr must be a byte address >= 0, got {addr}")
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    if count > 1 and addr + stride_bytes * (count - 1) < 0:
        raise ValueError(f"stride_bytes {stride_bytes} walks below byte 0 within {count} elements "
                         f"from addr {addr}")
    if stride_bytes == elem_bytes or count == 1:
        # Contiguous ascending bytes: every line in the range, once.
        return np.arange(addr // line_bytes, (addr + elem_bytes * count - 1) // line_bytes + 1,
                         dtype=np.int64)
    if stride_bytes == -elem_bytes and line_bytes % elem_bytes == 0 and addr % elem_bytes == 0:
        # Contiguous descending elements, none across a line boundary (an element that straddles
        # two lines touches the lower one first, which the general path below orders right).
        low = addr - elem_bytes * (count - 1)
        return np.arange((addr + elem_bytes - 1) // line_bytes, low // line_bytes - 1, -1,
                         dtype=np.int64)
    if stride_bytes == 0:
        # The same element again and again: its lines, repeated (no consecutive
        # duplicates between repeats unless it lies within one line).
        one = np.arange(addr // line_bytes, (addr + elem_bytes - 1) // line_bytes + 1,
                        dtype=np.int64)
        return one if one.size == 1 else np.tile(one, count)
    starts = addr + stride_bytes * np.arange(count, dtype=np.int64)
    return lines_of_elements(starts, elem_bytes, line_bytes)


def gather_lines(addrs: np.ndarray, elem_bytes: int, line_bytes: int) -> np.ndarray:
    """Line numbers touched by elements at explicit byte addresses ``addrs``, in access order.

    Same rules as :func:`element_lines`; for runs pass the run's bytes as
    ``elem_bytes``. Returns an int64 array.
    """
    _check_line_args(elem_bytes, line_bytes)
    return lines_of_elements(np.asarray(addrs, dtype=np.int64).reshape(-1), elem_bytes, line_bytes)


# --------------------------------------------------------------------------- summary


def address_end_bytes(table: pa.Table, unit: str | None = "host", exact: bool = True) -> float:
    """One past the highest byte address the memory rows of ``unit`` (every unit if None) touch,
    bytes (0 if none): to check a trace against a memory's capacity before replaying it.
    ``exact=False`` returns a cheaper upper bound (the highest listed address plus the longest
    listed run). A float, so that absurd counts and strides cannot overflow."""
    rows, has_list, ends = _strided_ends(table, unit)
    with_list = rows & has_list
    if not with_list.any():
        return float(ends.max(initial=0.0))
    if exact:  # the largest run end, without the per-row scatter of row_end_bytes
        _, run_ends = _listed_ends(table, with_list)
        return max(float(ends.max(initial=0.0)), float(run_ends.max(initial=0.0)))
    rows_listed = table.filter(arrow_array(with_list, pa.bool_())).column("addrs")
    highest = pc.max(pc.list_flatten(rows_listed)).as_py()
    longest = float(_run_bytes(table)[with_list].max())
    return float(ends.max(initial=0.0)) if highest is None else max(float(ends.max()), float(highest) + longest)


def row_end_bytes(table: pa.Table, unit: str | None = "host") -> np.ndarray:
    """One past the highest byte address each row touches, bytes, for the memory rows of ``unit`` (every unit if
    None); 0 for any other row. Floats, so that absurd counts and strides cannot overflow."""
    rows, has_list, ends = _strided_ends(table, unit)
    with_list = rows & has_list
    if with_list.any():
        parents, run_ends = _listed_ends(table, with_list)
        np.maximum.at(ends, parents, run_ends)
    return ends


def _listed_ends(table: pa.Table, with_list: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the row of each listed address of the rows ``with_list``, one past the last byte of the run it starts,
    bytes): a listed address starts a run of count / len(addrs) elements."""
    listed = table.column("addrs").combine_chunks()
    values = _np(pc.list_flatten(listed)).astype(np.float64)
    parents = _np(pc.list_parent_indices(listed))
    keep = with_list[parents]
    return parents[keep], values[keep] + _run_bytes(table)[parents[keep]]


def _strided_ends(table: pa.Table, unit: str | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the memory rows of ``unit``, the rows with listed addresses, one past the last byte of each strided memory
    row of ``unit`` in bytes, 0 for any other row)."""
    rows = _np(pc.is_in(table.column("op"), value_set=string_array(MEMORY_OPS)))
    if unit is not None:
        units = table.column("unit")
        if pa.types.is_dictionary(units.type):
            units = units.cast(pa.string())
        rows &= _np(pc.equal(units, arrow_scalar(unit, pa.string())))
    count = _np(table.column("count")).astype(np.float64)
    has_list = _np(pc.is_valid(table.column("addrs")))
    plain = rows & ~has_list & (count > 0)
    ends = np.zeros(len(table))
    if plain.any():
        addr = _np(table.column("addr")).astype(np.float64)
        stride = _np(table.column("stride_bytes")).astype(np.float64)
        elem = _np(table.column("elem_bytes")).astype(np.float64)
        ends[plain] = (addr + (count - 1) * np.maximum(stride, 0) + elem)[plain]
    return rows, has_list, ends


def _run_bytes(table: pa.Table) -> np.ndarray:
    """Bytes of the run each listed address of a row starts (count / len(addrs) elements), per row."""
    count = _np(table.column("count")).astype(np.float64)
    elem = _np(table.column("elem_bytes")).astype(np.float64)
    return count / np.maximum(list_lengths(table.column("addrs")).astype(np.float64), 1) * elem


def _counts(col: pa.ChunkedArray) -> dict[str, int]:
    if pa.types.is_dictionary(col.type):
        col = col.cast(pa.string())
    vc = pc.value_counts(col)
    return {str(v["values"]): int(v["counts"]) for v in vc.to_pylist()}


def command_rows(table: pa.Table) -> int:
    """How many rows of ``table`` are accelerator commands (``COMMAND_OPS``: offload, wait)."""
    return sum(n for op, n in _counts(table.column("op")).items() if op in COMMAND_OPS)


def trace_summary(table: pa.Table) -> dict[str, Any]:
    """Totals of a trace.

    Keys: ``rows``; ``rows_per_op``/``rows_per_unit``/``rows_per_stage``
    (name -> rows); ``flops``; ``cycles``; ``bytes_read`` and
    ``bytes_written`` (element bytes; an update counts in both, a zero is
    written); ``bytes_touched`` (element bytes of read/write/update/zero rows,
    an update once); ``bytes_maintained`` (element bytes of flush/evict_llc/invalidate).
    """
    op = table.column("op")
    nbytes = _np(table.column("elem_bytes")) * _np(table.column("count"))

    def total(ops: tuple[str, ...]) -> int:
        mask = _np(pc.is_in(op, value_set=string_array(ops)))
        return int(nbytes[mask].sum())

    return {
        "rows": len(table),
        "rows_per_op": _counts(op),
        "rows_per_unit": _counts(table.column("unit")),
        "rows_per_stage": _counts(table.column("stage")),
        "flops": int(_np(table.column("flops")).sum()),
        "cycles": float(_np(table.column("cycles")).sum()),
        "bytes_read": total(("read", "update")),
        "bytes_written": total(("write", "update", "zero")),
        "bytes_touched": total(DATA_OPS),
        "bytes_maintained": total(("flush", "evict_llc", "invalidate")),
    }
