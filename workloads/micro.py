"""Micro workloads: STREAM-like kernels, random access, pointer chase, intensity sweep.

Each generator returns a validated operation trace (see :mod:`workloads.trace`)
and is deterministic given its arguments (and ``seed`` where it has one).
Arrays are placed by an :class:`~workloads.trace.AddressSpace`; pass ``space``
to place several workloads in one address space (allocation names are
``"<stage>.<array>"``), otherwise each call starts a fresh space at byte 0.

Memory work is emitted in blocks (``block_bytes`` per row for streams,
``row_elems`` addresses per gather row) so that the simulator can interleave
requesters; a block's flops ride on the block's last row.

``threads`` (``stream``, ``intensity``, ``compute_only``) runs the kernel on T
threads as an OpenMP ``parallel for`` with a static schedule does: thread t
takes the t-th of T contiguous slices of the elements (``thread_slices``) and
its rows carry ``thread = t``; the threads' blocks are interleaved in the
trace (block j of every thread, then block j + 1), and every thread ends each
pass with a ``barrier`` (the loop's implicit one). T = 1 is the serial trace,
without a barrier.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Literal, get_args

import numpy as np
import pyarrow as pa

from simulator.units import is_power_of_two
from workloads.trace import (MAX_ROW_FLOPS, MAX_TRACE_ADDRESSES, MAX_TRACE_ROWS, AddressSpace, TraceBuilder,
                             check_trace_limit, rows_why, thread_count)

#: Bytes of memory work per stream row (a chunk the simulator times as one event).
DEFAULT_BLOCK_BYTES = 64 * 1024
#: the largest Q and intensity ``intensity`` takes in blocks of DEFAULT_BLOCK_BYTES (a row per block, at most
#: MAX_TRACE_ROWS rows and MAX_ROW_FLOPS flops each): the bounds of a study that sweeps intensities
MAX_INTENSITY_BYTES = MAX_TRACE_ROWS * DEFAULT_BLOCK_BYTES
MAX_INTENSITY_FLOPS_PER_BYTE = MAX_ROW_FLOPS // DEFAULT_BLOCK_BYTES
#: Explicit addresses per gather row.
DEFAULT_ROW_ELEMS = 4096
#: Cache line size used to lay out the pointer chase; 64 B lines (003 Table 4, 003:L318).
DEFAULT_LINE_BYTES = 64
#: Bytes of one pointer in the chase.
POINTER_BYTES = 8

#: The STREAM kinds (``STREAM_KINDS`` says what each does).
StreamKind = Literal["read", "write", "copy", "scale", "add", "triad"]
#: Arrays read and written per element by each STREAM kind, and default flops per element.
STREAM_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]] = {
    "read": (("a",), (), 0),            # s += a[i] counted as pure load traffic
    "write": ((), ("a",), 0),           # a[i] = s
    "copy": (("b",), ("a",), 0),        # a[i] = b[i]
    "scale": (("b",), ("a",), 1),       # a[i] = s * b[i]
    "add": (("b", "c"), ("a",), 1),     # a[i] = b[i] + c[i]
    "triad": (("b", "c"), ("a",), 2),   # a[i] = b[i] + s * c[i]: one multiply, one add
}
RandomOp = Literal["read", "write", "update"]
_RANDOM_OPS: tuple[str, ...] = get_args(RandomOp)
_FLOPS_WHY = "a row holds at most 2**53 flops (workloads.trace.MAX_ROW_FLOPS)"


def _positive_int(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = "a whole number of bytes" if name.endswith("_bytes") else "an integer"
        raise ValueError(f"{name} must be {kind} >= {minimum}, got {value!r}")
    return int(value)


def _addresses_why(what: str) -> str:
    return f"a trace draws at most {MAX_TRACE_ADDRESSES:,} explicit addresses, one per {what}"


def _check_gather_rows(count_name: str, count: int, row_elems: int, what: str) -> None:
    """Refuse, before anything is built, ``count`` addresses (parameter ``count_name``; ``what`` they are, plural:
    "accesses") in gather rows of ``row_elems`` each that take more than MAX_TRACE_ROWS rows: ValueError naming
    row_elems and ``count_name``, with the fewest addresses per row that fit."""
    if -(-count // row_elems) > MAX_TRACE_ROWS:
        least = -(-count // MAX_TRACE_ROWS)
        raise ValueError(f"row_elems must be at least {least:,} for {count_name} = {count:,} (a trace holds at most "
                         f"{MAX_TRACE_ROWS:,} rows, a gather row of row_elems {what} each: {count_name} / row_elems "
                         f"rows, rounded up), got {row_elems!r}")


def _space(space: AddressSpace | None) -> AddressSpace:
    return AddressSpace() if space is None else space


def _blocks(total_bytes: int, block_bytes: int) -> list[tuple[int, int]]:
    """(offset_bytes, nbytes) of consecutive blocks covering ``total_bytes``."""
    return [(off, min(block_bytes, total_bytes - off)) for off in range(0, total_bytes, block_bytes)]


def thread_slices(n_elems: int, threads: int) -> list[tuple[int, int]]:
    """(first element, elements) of each of ``threads`` contiguous slices of ``n_elems`` elements, as even
    as whole elements allow (OpenMP's static schedule): slice t is [t n / T, (t + 1) n / T)."""
    threads = thread_count(threads)
    return [(n_elems * t // threads, n_elems * (t + 1) // threads - n_elems * t // threads) for t in range(threads)]


def _interleaved(per_thread: list[list[tuple[int, int]]]) -> list[tuple[int, int, int]]:
    """(thread, offset, bytes) of every thread's blocks, block j of every thread before block j + 1."""
    depth = max(len(blocks) for blocks in per_thread)
    return [(t, *blocks[j]) for j in range(depth) for t, blocks in enumerate(per_thread) if j < len(blocks)]


def _thread_blocks(array_bytes: int, elem_bytes: int, block_bytes: int, threads: int) -> list[tuple[int, int, int]]:
    """(thread, offset_bytes, nbytes) of the blocks of an array of ``array_bytes`` split over ``threads``
    (``thread_slices``, each slice cut into blocks of ``block_bytes``), interleaved (``_interleaved``)."""
    slices = thread_slices(array_bytes // elem_bytes, threads)
    return _interleaved([[(start * elem_bytes + off, nbytes) for off, nbytes in _blocks(n * elem_bytes, block_bytes)]
                         for start, n in slices])


def _pass_rows(n_bytes: int, elem_bytes: int, block_bytes: int, threads: int, per_block: int) -> int:
    """Rows of one pass over ``n_bytes`` on ``threads`` threads: ``per_block`` rows per block of every thread's
    slice (``_thread_blocks``; a slice ends with a partial block), and a barrier per thread (several threads)."""
    blocks = sum(-(-n * elem_bytes // block_bytes) for _, n in thread_slices(n_bytes // elem_bytes, threads))
    return blocks * per_block + (threads if threads > 1 else 0)


def _check_thread_rows(what: str, n_bytes: int, elem_bytes: int, block_bytes: int, threads: int,
                       per_block: int) -> None:
    """Refuse ``threads`` whose partial blocks and barriers take one pass over ``n_bytes`` (which fits the trace
    on one thread: checked before) beyond MAX_TRACE_ROWS rows, naming the most threads that fit."""
    if threads == 1 or _pass_rows(n_bytes, elem_bytes, block_bytes, threads, per_block) <= MAX_TRACE_ROWS:
        return
    most = next(t for t in range(threads - 1, 0, -1)
                if _pass_rows(n_bytes, elem_bytes, block_bytes, t, per_block) <= MAX_TRACE_ROWS)
    check_trace_limit("threads", threads, most, f"a trace holds at most {MAX_TRACE_ROWS:,} rows, {per_block} per block "
                      f"of block_bytes = {block_bytes} B of each thread's slice of {what} = {n_bytes:,} B, its last "
                      "block partial, and a barrier per thread")


def _barriers(b: TraceBuilder, threads: int, unit: str, stage: str) -> None:
    """The implicit barrier at the end of a parallel loop: one row per thread (none for one thread)."""
    if threads > 1:
        for t in range(threads):
            b.barrier(stage, thread=t)


def _check_array(array_bytes: int, elem_bytes: int, block_bytes: int, what: str) -> None:
    _positive_int("elem_bytes", elem_bytes)
    _positive_int(what, array_bytes)
    _positive_int("block_bytes", block_bytes)
    if array_bytes % elem_bytes:
        raise ValueError(f"{what} must be a multiple of elem_bytes ({elem_bytes}), got {array_bytes}")
    if block_bytes % elem_bytes:
        raise ValueError(f"block_bytes must be a multiple of elem_bytes ({elem_bytes}), "
                         f"got {block_bytes}")


def stream(kind: StreamKind, array_bytes: int, elem_bytes: int = 8, repeats: int = 1,
           flops_per_elem: int | None = None, threads: int = 1, *, block_bytes: int = DEFAULT_BLOCK_BYTES,
           unit: str = "host", stage: str = "stream", space: AddressSpace | None = None) -> pa.Table:
    """A STREAM-like kernel over arrays of ``array_bytes`` bytes each, ``repeats`` times, on ``threads`` threads.

    ``kind``: ``"read"`` (load a), ``"write"`` (store a), ``"copy"`` (a[i] = b[i]),
    ``"scale"`` (a[i] = s*b[i], 1 flop), ``"add"`` (a[i] = b[i] + c[i], 1 flop)
    or ``"triad"`` (a[i] = b[i] + s*c[i], 2 flops per element by default).
    ``flops_per_elem`` overrides the kind's default flops per element.
    Per block of ``block_bytes`` bytes: one read row per source array, then one
    write row per destination array; the block's flops are on its last row.
    Several threads: each its slice of every array, a barrier ending each repeat (module docstring).
    """
    if not isinstance(kind, str) or kind not in STREAM_KINDS:
        raise ValueError(f"kind must be one of {', '.join(STREAM_KINDS)}, got {kind!r}")
    _check_array(array_bytes, elem_bytes, block_bytes, "array_bytes")
    repeats = _positive_int("repeats", repeats)
    threads = thread_count(threads)
    sources, dests, default_flops = STREAM_KINDS[kind]
    per_block = len(sources) + len(dests)
    check_trace_limit("array_bytes", array_bytes, MAX_TRACE_ROWS // per_block * block_bytes,
                      rows_why(per_block, f"block of block_bytes = {block_bytes} B"))
    check_trace_limit("threads", threads, array_bytes // elem_bytes,
                      "each thread takes at least one element of the arrays")
    _check_thread_rows("array_bytes", array_bytes, elem_bytes, block_bytes, threads, per_block)
    per_repeat = _pass_rows(array_bytes, elem_bytes, block_bytes, threads, per_block)
    check_trace_limit("repeats", repeats, MAX_TRACE_ROWS // per_repeat, rows_why(per_repeat, "repeat"))
    fpe = default_flops if flops_per_elem is None else _positive_int(
        "flops_per_elem", flops_per_elem, minimum=0)
    check_trace_limit("flops_per_elem", fpe, MAX_ROW_FLOPS // (block_bytes // elem_bytes), _FLOPS_WHY)
    sp = _space(space)
    base = {name: sp.alloc(f"{stage}.{name}", array_bytes) for name in ("a", "b", "c")
            if name in sources or name in dests}
    rows = [(op, base[name]) for op, names in (("read", sources), ("write", dests)) for name in names]
    blocks = _thread_blocks(array_bytes, elem_bytes, block_bytes, threads)
    b = TraceBuilder()
    for _ in range(repeats):
        for t, off, nbytes in blocks:
            n = nbytes // elem_bytes
            for k, (op, addr) in enumerate(rows):
                flops = fpe * n if k == len(rows) - 1 else 0
                b.access(unit, stage, op, addr + off, elem_bytes, elem_bytes, n, flops=flops, thread=t)
        _barriers(b, threads, unit, stage)
    return b.to_table()


def random_access(n_accesses: int, footprint_bytes: int, elem_bytes: int = 8, seed: int = 0,
                  op: RandomOp = "read", *, row_elems: int = DEFAULT_ROW_ELEMS, unit: str = "host",
                  stage: str = "random", space: AddressSpace | None = None) -> pa.Table:
    """``n_accesses`` independent accesses to uniformly random elements of a footprint.

    Elements are ``elem_bytes``-aligned within ``footprint_bytes`` bytes;
    ``op`` is ``"read"``, ``"write"`` or ``"update"``. Gather rows of
    ``row_elems`` addresses each: ceil(n_accesses / row_elems) rows, at most MAX_TRACE_ROWS.
    """
    n_accesses = _positive_int("n_accesses", n_accesses, minimum=0)
    check_trace_limit("n_accesses", n_accesses, MAX_TRACE_ADDRESSES, _addresses_why("access"))
    elem_bytes = _positive_int("elem_bytes", elem_bytes)
    footprint_bytes = _positive_int("footprint_bytes", footprint_bytes, minimum=elem_bytes)
    if footprint_bytes % elem_bytes:
        raise ValueError(f"footprint_bytes must be a multiple of elem_bytes ({elem_bytes}), got {footprint_bytes}")
    row_elems = _positive_int("row_elems", row_elems)
    _check_gather_rows("n_accesses", n_accesses, row_elems, "accesses")
    if op not in _RANDOM_OPS:
        raise ValueError(f"op must be one of {', '.join(_RANDOM_OPS)}, got {op!r}")
    base = _space(space).alloc(f"{stage}.data", footprint_bytes)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, footprint_bytes // elem_bytes, size=n_accesses, dtype=np.int64)
    addrs = base + idx * elem_bytes
    b = TraceBuilder()
    for start in range(0, n_accesses, row_elems):
        b.gather(unit, stage, op, addrs[start:start + row_elems], elem_bytes)
    return b.to_table()


def chase_order(n_lines: int, seed: int = 0, stride_lines: int | None = None) -> np.ndarray:
    """The cyclic visiting order of ``n_lines`` lines (int64 line indices, length ``n_lines``).

    Random (default): a uniformly random permutation read as one cycle
    (order[k] -> order[k+1] -> ... -> order[0]). With ``stride_lines``: lines
    0, s, 2s, ... modulo ``n_lines``, which is one cycle only when
    gcd(s, n_lines) = 1 (required).
    """
    n_lines = _positive_int("n_lines", n_lines)
    if stride_lines is None:
        return np.random.default_rng(seed).permutation(n_lines).astype(np.int64)
    stride_lines = _positive_int("stride_lines", stride_lines)
    if math.gcd(stride_lines, n_lines) != 1:
        raise ValueError(f"stride_lines must be coprime with the {n_lines} lines of the footprint "
                         f"(so that one cycle visits every line), got {stride_lines}")
    return (np.arange(n_lines, dtype=np.int64) * stride_lines) % n_lines


def pointer_chase(n_hops: int, footprint_bytes: int, seed: int = 0,
                  stride_lines: int | None = None, *, line_bytes: int = DEFAULT_LINE_BYTES,
                  row_elems: int = DEFAULT_ROW_ELEMS, unit: str = "host", stage: str = "chase",
                  space: AddressSpace | None = None) -> pa.Table:
    """``n_hops`` dependent 8 B loads following a cycle through every line of the footprint.

    One pointer per line of ``line_bytes`` bytes (at the line's first byte);
    the order is :func:`chase_order` (random, or a fixed stride of
    ``stride_lines`` lines). Every consecutive ``footprint_bytes // line_bytes``
    hops visit every line exactly once. Rows are gathers of ``row_elems`` hops with ``dependent=True``:
    ceil(n_hops / row_elems) rows, at most MAX_TRACE_ROWS.
    """
    n_hops = _positive_int("n_hops", n_hops, minimum=0)
    check_trace_limit("n_hops", n_hops, MAX_TRACE_ADDRESSES, _addresses_why("hop"))
    line_bytes = _positive_int("line_bytes", line_bytes, minimum=POINTER_BYTES)
    if not is_power_of_two(line_bytes):  # a cache line, and the alignment of the nodes
        raise ValueError(f"line_bytes must be a power of two >= {POINTER_BYTES} B, got {line_bytes}")
    footprint_bytes = _positive_int("footprint_bytes", footprint_bytes, minimum=line_bytes)
    if footprint_bytes % line_bytes:
        raise ValueError(f"footprint_bytes must be a multiple of line_bytes ({line_bytes}), got {footprint_bytes}")
    # the visiting order holds one int64 per line of the footprint
    check_trace_limit("footprint_bytes", footprint_bytes, MAX_TRACE_ADDRESSES * line_bytes,
                      _addresses_why(f"line of line_bytes = {line_bytes} B"))
    row_elems = _positive_int("row_elems", row_elems)
    _check_gather_rows("n_hops", n_hops, row_elems, "hops")
    n_lines = footprint_bytes // line_bytes
    order = chase_order(n_lines, seed, stride_lines)
    base = _space(space).alloc(f"{stage}.nodes", n_lines * line_bytes, align=max(4096, line_bytes))
    addrs = base + order[np.arange(n_hops, dtype=np.int64) % n_lines] * line_bytes
    b = TraceBuilder()
    for start in range(0, n_hops, row_elems):
        b.gather(unit, stage, "read", addrs[start:start + row_elems], POINTER_BYTES, dependent=True)
    return b.to_table()


def intensity(flops_per_byte: float, total_bytes: int, elem_bytes: int = 8, threads: int = 1, *,
              block_bytes: int = DEFAULT_BLOCK_BYTES, unit: str = "host", stage: str = "intensity",
              space: AddressSpace | None = None) -> pa.Table:
    """Stream-read ``total_bytes`` bytes (Q) with W = round(I * Q) flops, I = ``flops_per_byte``.

    The flops are spread over the read rows in proportion to their bytes
    (integer flops per row, summing exactly to W): the intensity sweep used to
    calibrate the roofline. Several ``threads``: each reads its slice (module docstring).
    """
    if not (isinstance(flops_per_byte, numbers.Real) and math.isfinite(flops_per_byte)
            and flops_per_byte >= 0):
        raise ValueError(f"flops_per_byte must be a finite number >= 0, got {flops_per_byte!r}")
    _check_array(total_bytes, elem_bytes, block_bytes, "total_bytes")
    check_trace_limit("total_bytes", total_bytes, MAX_TRACE_ROWS * block_bytes,
                      rows_why(1, f"block of block_bytes = {block_bytes} B"))
    check_trace_limit("flops_per_byte", flops_per_byte, MAX_ROW_FLOPS // block_bytes, _FLOPS_WHY)
    threads = thread_count(threads)
    check_trace_limit("threads", threads, total_bytes // elem_bytes, "each thread reads at least one element")
    _check_thread_rows("total_bytes", total_bytes, elem_bytes, block_bytes, threads, 1)
    total_flops = round(flops_per_byte * total_bytes)
    addr = _space(space).alloc(f"{stage}.data", total_bytes)
    b = TraceBuilder()
    for t, off, nbytes in _thread_blocks(total_bytes, elem_bytes, block_bytes, threads):
        # the flops up to the block's end less those up to its start: exact integers, summing to W
        flops = total_flops * (off + nbytes) // total_bytes - total_flops * off // total_bytes
        b.access(unit, stage, "read", addr + off, elem_bytes, elem_bytes, nbytes // elem_bytes, flops=flops,
                 thread=t)
    _barriers(b, threads, unit, stage)
    return b.to_table()


def intensity_sweep(intensities: Sequence[float], total_bytes: int, elem_bytes: int = 8,
                    **kwargs: object) -> list[pa.Table]:
    """One :func:`intensity` trace per flops-per-byte value in ``intensities``."""
    if len(intensities) == 0:
        raise ValueError("intensities must hold at least one flops-per-byte value, got none")
    return [intensity(i, total_bytes, elem_bytes, **kwargs) for i in intensities]


def compute_only(flops: int, rows: int = 1, threads: int = 1, *, unit: str = "host",
                 stage: str = "compute") -> pa.Table:
    """``flops`` floating-point operations and no memory traffic, split evenly over ``rows`` rows; with several
    ``threads``, over ``rows`` rows of each thread (thread t the t-th slice of the flops, ``thread_slices``)."""
    flops = _positive_int("flops", flops, minimum=0)
    rows = _positive_int("rows", rows)
    threads = thread_count(threads)
    check_trace_limit("flops", flops, MAX_ROW_FLOPS * rows, f"{_FLOPS_WHY}, over rows = {rows:,}")
    barriers = threads if threads > 1 else 0
    check_trace_limit("rows", rows, (MAX_TRACE_ROWS - barriers) // threads,
                      f"a trace holds at most {MAX_TRACE_ROWS:,} rows"
                      + (f", rows for each of {threads} threads and a barrier each" if threads > 1 else ""))
    b = TraceBuilder()
    slices = thread_slices(flops, threads)
    for k in range(rows):
        for t, (_, share) in enumerate(slices):
            b.compute(unit, stage, flops=share * (k + 1) // rows - share * k // rows, thread=t)
    _barriers(b, threads, unit, stage)
    return b.to_table()


#: Generator name -> function, for the workload-config loader.
GENERATORS: dict[str, Callable[..., pa.Table]] = {
    "stream": stream,
    "random_access": random_access,
    "pointer_chase": pointer_chase,
    "intensity": intensity,
    "compute_only": compute_only,
}
