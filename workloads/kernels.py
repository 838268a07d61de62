"""GPU-style kernels over a buffer of g bytes: GEMM, FFT, radix sort, binary search.

Both versions start with an ``init`` stage in which the host writes the input
buffer; the stage ``kernel`` is what is timed.

Host software (``kernel_host``): the whole buffer costs C g^beta host cycles
(LogCA T0, 000 eq. 4.1) with beta from 000 Table 4.2 (``BETA``) and C from the
platform (000 Table 4.3). GEMM, FFT and sort stream the buffer in rows of
``row_bytes`` (load the input, store the output) and row i carries the share
C (end_i^beta - start_i^beta) of the cycles, so the rows add up to C g^beta.
Binary search touches only the ~log2(elements) probe elements of one lookup
and stores one 8 B result.

Buffers (input g bytes): GEMM reads two matrices (g bytes together) and writes
one (g/2); FFT and sort write g bytes; binary search writes 8 B. Elements are
single precision (``ELEM_BYTES``): 4 B floats, 8 B complex floats, 32-bit keys. The buffer and the host's rows
are whole elements, in and out (GEMM: a multiple of 8 B).

Device work (``device_work``): the flops and the bytes the kernel moves in the
device's memory, from each kernel's standard count: GEMM of n x n matrices
2 n^3 flops (n^3 multiply-add pairs, the count BLAS rates are quoted in) over
3 n^2 elements (A and B read, C written once); FFT of N complex points
5 N log2 N flops (the count FFT benchmarks quote rates in: FFTW's benchFFT,
fftw.org/speed/method.html) over one read and one write of the points; radix
sort of 32-bit keys in passes of ``SORT_DIGIT_BITS`` bits, each pass reading
and writing every key (Satish, Harris and Garland, "Designing efficient sorting
algorithms for manycore GPUs", IPDPS 2009, sort 4 bits per pass), no flops;
binary search ~log2 N probes of one element and its 8 B result, no flops.

Offload (``kernel_offload``): the buffer goes to unit ``unit`` (default
``gpu``) as one command, then the host waits for it. With ``stages`` > 1 the
command carries ``parts``: ``stages`` sub-requests, part i covering its share
of the input and the output's whole elements it finishes (none: no output
region) and carrying ``host_cycles`` = its share of C g^beta and its share of
the device work (a part's share of the elements). The host pays the offload
overhead o and flushes the buffer once, as in 000's pipelined runs (one set-up, then the
stages streamed: speedup at o-dominated g is the same for every n, 000 Tables
4.5-4.7 at 000:L1050-1094); the unit pipelines the parts (copy-in of part
i+1, compute of part i and copy-out of part i-1 at once).
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import pyarrow as pa

from workloads.trace import (MAX_COMMAND_ITEMS, MAX_TRACE_ROWS, AddressSpace, TraceBuilder, check_row_cycles,
                             check_trace_limit, rows_why)

# 000 Table 4.2 (000:L752-755): complexity exponent in the granularity
BETA = {"gemm": 1.7, "fft": 1.2, "radix_sort": 0.94, "binary_search": 0.14}
Kernel = Literal["gemm", "fft", "radix_sort", "binary_search"]  # the kernels of BETA, a closed choice
KERNELS = get_args(Kernel)
if set(KERNELS) != set(BETA):
    raise AssertionError(f"workloads.kernels: Kernel {KERNELS} names other kernels than BETA {tuple(BETA)}")
ELEM_BYTES = {"gemm": 4, "fft": 8, "radix_sort": 4, "binary_search": 4}
RESULT_BYTES = 8  # binary search: one index
DEFAULT_ROW_BYTES = 256 * 1024
SORT_DIGIT_BITS = 4  # radix sort digit per pass (module docstring)
SORT_KEY_BITS = 32


def device_work(kernel: str, g_bytes: float) -> tuple[float, float]:
    """(flops, bytes moved in the device's memory) of ``kernel`` over an input of ``g_bytes`` (module docstring)."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    e = ELEM_BYTES[kernel]
    if kernel == "gemm":
        n = math.sqrt(g_bytes / (2 * e))  # two n x n input matrices
        return 2.0 * n ** 3, 3.0 * n * n * e
    if kernel == "fft":
        points = g_bytes / e
        return 5.0 * points * math.log2(max(points, 2.0)), 2.0 * g_bytes
    if kernel == "radix_sort":
        return 0.0, SORT_KEY_BITS / SORT_DIGIT_BITS * 2.0 * g_bytes
    probes = max(1, math.ceil(math.log2(max(g_bytes / e, 2.0))))
    return 0.0, float(probes * e + RESULT_BYTES)


def _whole_elements(kernel: str, name: str, nbytes: int) -> None:
    """Refuse a buffer (or row) ``name`` of ``nbytes`` that is not made of whole elements of ``kernel``, in and out
    (GEMM writes half its input: pairs of elements)."""
    unit = ELEM_BYTES[kernel] * (2 if kernel == "gemm" else 1)
    if nbytes % unit:
        why = (f"whole {ELEM_BYTES[kernel]} B elements read, and half as many written" if kernel == "gemm"
               else f"whole {unit} B elements of {kernel}")
        raise ValueError(f"{name} must be a multiple of {unit} B ({why}), got {nbytes}")


def _check(kernel: str, g_bytes: int) -> None:
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if isinstance(g_bytes, bool) or not isinstance(g_bytes, int) or g_bytes < 2 * ELEM_BYTES[kernel]:
        raise ValueError(f"g_bytes must be an integer >= {2 * ELEM_BYTES[kernel]} bytes, got {g_bytes!r}")
    _whole_elements(kernel, "g_bytes", g_bytes)


def buffer_problem(kernel: str, g_bytes: int) -> str | None:
    """Why ``kernel`` cannot run over a buffer of ``g_bytes`` (at least two elements, whole elements), or None."""
    try:
        _check(kernel, g_bytes)
    except ValueError as exc:
        return str(exc)
    return None


def output_bytes(kernel: str, g_bytes: int) -> int:
    """Bytes the kernel writes for an input of ``g_bytes``."""
    _check(kernel, g_bytes)
    if kernel == "gemm":
        return g_bytes // 2
    if kernel == "binary_search":
        return RESULT_BYTES
    return g_bytes


def host_cycles(kernel: str, g_bytes: float, c_cycles_per_byte_beta: float, row_bytes: int | None = None) -> float:
    """Host software cycles for a buffer of ``g_bytes``: C g^beta (beta of 000 Table 4.2); with ``row_bytes``,
    refused if the host rows of that many bytes it is spread over would take one above MAX_ROW_CYCLES."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if not c_cycles_per_byte_beta > 0:
        raise ValueError(f"c_cycles_per_byte_beta must be > 0 cycles/B^beta, got {c_cycles_per_byte_beta!r}")
    cycles = c_cycles_per_byte_beta * g_bytes ** BETA[kernel]
    if not math.isfinite(cycles):  # the trace's cycles column is finite
        raise ValueError(f"c_cycles_per_byte_beta must be a finite number small enough for a finite cycle count "
                         f"(C g^{BETA[kernel]} with g = {g_bytes} B), got {c_cycles_per_byte_beta!r}")
    if row_bytes is not None:
        check_row_cycles("c_cycles_per_byte_beta", c_cycles_per_byte_beta, cycles, g_bytes, row_bytes, BETA[kernel])
    return cycles


def _layout(tb: TraceBuilder, kernel: str, g_bytes: int) -> tuple[int, int, int]:
    space = AddressSpace()
    out = output_bytes(kernel, g_bytes)
    src = space.alloc(f"{kernel}.input", g_bytes)
    dst = space.alloc(f"{kernel}.output", out)
    tb.access("host", "init", "write", src, 8, 8, g_bytes // 8)
    if g_bytes % 8:  # a buffer of 4 B elements, not a multiple of 8 B: its last element
        tb.access("host", "init", "write", src + g_bytes // 8 * 8, g_bytes % 8, 0, 1)
    return src, dst, out


def _share(total: float, g_bytes: int, start: int, end: int, beta: float) -> float:
    """The part [start, end) of a C g^beta cost: total ((end/g)^beta - (start/g)^beta)."""
    return total * ((end / g_bytes) ** beta - (start / g_bytes) ** beta)


def kernel_host(kernel: Kernel, g_bytes: int, c_cycles_per_byte_beta: float,
                row_bytes: int = DEFAULT_ROW_BYTES) -> pa.Table:
    """Host software ``kernel`` over ``g_bytes`` (see module docstring)."""
    _check(kernel, g_bytes)
    if isinstance(row_bytes, bool) or not isinstance(row_bytes, int) or row_bytes < 64:
        raise ValueError(f"row_bytes must be an integer >= 64 bytes, got {row_bytes!r}")
    _whole_elements(kernel, "row_bytes", row_bytes)
    check_trace_limit("g_bytes", g_bytes, (MAX_TRACE_ROWS - 1) // 2 * row_bytes,
                      rows_why(2, f"row of row_bytes = {row_bytes} B"))
    tb = TraceBuilder()
    src, dst, out = _layout(tb, kernel, g_bytes)
    # binary search puts the whole cost on its first probe
    total = host_cycles(kernel, g_bytes, c_cycles_per_byte_beta, g_bytes if kernel == "binary_search" else row_bytes)
    beta, e = BETA[kernel], ELEM_BYTES[kernel]
    if kernel == "binary_search":
        n = g_bytes // e
        probes = max(1, math.ceil(math.log2(n)))
        lo, hi, addrs = 0, n - 1, []
        for _ in range(probes):  # search for the last element: the probes walk to the right
            mid = (lo + hi + 1) // 2
            addrs.append(src + mid * e)
            lo = mid
        tb.access("host", "kernel", "read", addrs[0], e, 0, 1, cycles=total)
        for a in addrs[1:]:
            tb.access("host", "kernel", "read", a, e, 0, 1, dependent=True)
        tb.access("host", "kernel", "write", dst, out, out, 1)
        return tb.to_table()
    out_ratio = out / g_bytes
    for off in range(0, g_bytes, row_bytes):
        n = min(row_bytes, g_bytes - off)
        tb.access("host", "kernel", "read", src + off, e, e, n // e, cycles=_share(total, g_bytes, off, off + n, beta))
        o_lo, o_hi = int(off * out_ratio), int((off + n) * out_ratio)
        if o_hi > o_lo:
            tb.access("host", "kernel", "write", dst + o_lo, e, e, max(1, (o_hi - o_lo) // e))
    return tb.to_table()


def kernel_offload(kernel: Kernel, g_bytes: int, c_cycles_per_byte_beta: float, unit: str = "gpu",
                   stages: int = 1) -> pa.Table:
    """``kernel`` over ``g_bytes`` on unit ``unit`` in ``stages`` pipelined sub-requests (see module docstring)."""
    _check(kernel, g_bytes)
    if isinstance(stages, bool) or not isinstance(stages, int) or not 1 <= stages <= g_bytes // ELEM_BYTES[kernel]:
        raise ValueError(f"stages must be an integer in 1..elements of the buffer, got {stages!r}")
    if kernel == "binary_search" and stages > 1:
        raise ValueError("stages must be 1 for binary_search: one lookup cannot be split into independent parts")
    check_trace_limit("stages", stages, MAX_COMMAND_ITEMS, f"an offload command holds at most {MAX_COMMAND_ITEMS:,} "
                      "parts")
    tb = TraceBuilder()
    src, dst, out = _layout(tb, kernel, g_bytes)
    total = host_cycles(kernel, g_bytes, c_cycles_per_byte_beta)
    flops, memory_bytes = device_work(kernel, g_bytes)
    beta, e = BETA[kernel], ELEM_BYTES[kernel]
    n_elems = g_bytes // e
    bounds = [round(n_elems * i / stages) * e for i in range(stages + 1)]
    bounds[-1] = g_bytes
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if kernel == "binary_search":
            o_lo, o_hi = 0, out
        else:  # cut at the output's whole elements
            o_lo, o_hi = int(lo * out / g_bytes) // e * e, int(hi * out / g_bytes) // e * e
        parts.append({"inputs": [[src + lo, hi - lo]], "outputs": [[dst + o_lo, o_hi - o_lo]] if o_hi > o_lo else [],
                      "host_cycles": _share(total, g_bytes, lo, hi, beta),
                      "flops": flops * (hi - lo) / g_bytes, "memory_bytes": memory_bytes * (hi - lo) / g_bytes})
    extra = {"parts": parts} if stages > 1 else {}
    tb.offload("host", "kernel", unit, op=kernel, inputs=[[src, g_bytes]], outputs=[[dst, out]],
               host_cycles=sum(p["host_cycles"] for p in parts), flops=math.fsum(p["flops"] for p in parts),
               memory_bytes=math.fsum(p["memory_bytes"] for p in parts), **extra)
    tb.wait("host", "kernel", unit)
    return tb.to_table(units=["host", unit])


GENERATORS = {"kernel_host": kernel_host, "kernel_offload": kernel_offload}
