"""GEMM workloads: a blocked host GEMM (CPU-only baseline) and a LAP GEMM offload.

Matrices are row-major doubles: A is m x k, B is k x n, C is m x n, and the
kernel computes C += A B.

``host_gemm`` follows the GotoBLAS loop nest: for each n_c-wide column panel
and k_c-deep slice, pack the k_c x n_c panel of B (it lives in the LLC), then
for each m_c-row block pack the m_c x k_c block of A (it lives in L2) and run
the micro-kernel over n_r-wide slivers of the packed B (each in L1), updating
an m_c x n_r panel of C. One trace row per sliver reads the packed A block and
carries the sliver's 2 m_b n_r k_b flops; packed reads are 16 B SSE loads
(one element per load instruction). ``lap_gemm`` lays out A, B and C, has the
host hand one ``gemm`` command to the LAP (inputs A, B, C; output C) and wait;
optionally the host first writes the inputs (so they are dirty in its caches)
and afterwards reads C.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from workloads.trace import MAX_ADDR, MAX_TRACE_ADDRESSES, MAX_TRACE_ROWS, AddressSpace, TraceBuilder

#: Bytes of one matrix element (double precision).
ELEM_BYTES = 8
#: Bytes of one SSE vector load/store: two doubles.
VECTOR_BYTES = 16
#: GotoBLAS-like blocking for a Nehalem core (32 KiB L1D, 256 KiB L2, 8 MiB LLC, 003 Table 4):
#: a 96 x 256 packed A block (192 KiB) stays in L2, a 256 x 4 packed B sliver (8 KiB) in L1, and a
#: 256 x 2048 packed B panel (4 MiB) in the LLC.
HOST_MC, HOST_KC, HOST_NC, HOST_MR, HOST_NR = 96, 256, 2048, 4, 4
# slivers timed together as one chunk (a trace-size choice, not a machine parameter)
HOST_SLIVERS_PER_ROW = 16


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _check_matrices(m: int, n: int, k: int, elem_bytes: int = ELEM_BYTES) -> None:
    """Refuse matrices of ``elem_bytes`` elements that do not fit the trace's address space (2**62 B)."""
    total = (m * k + k * n + m * n) * elem_bytes
    if total > MAX_ADDR:
        raise ValueError(f"m, n and k must be smaller: A, B and C take {total:,} B, above the 2**62 B of the trace's "
                         f"address space, got m = {m}, n = {n}, k = {k}")


def _check_host_trace(m: int, n: int, k: int, mc: int, kc: int, nc: int, nr: int, group: int) -> None:
    """Refuse, before building it, a host GEMM trace beyond MAX_TRACE_ROWS rows or MAX_TRACE_ADDRESSES
    gathered addresses (counted as :func:`host_gemm` emits them, at most)."""
    n_j, n_p, n_i = -(-n // nc), -(-k // kc), -(-m // mc)
    n_s = -(-min(nc, n) // (nr * group))  # sliver groups of one panel
    rows = n_j * n_p * (2 + n_i * (2 + 3 * n_s))
    addresses = n_j * n_p * (min(kc, k) + n_i * (min(mc, m) + n_s * (group + min(mc, m))))
    if rows > MAX_TRACE_ROWS or addresses > MAX_TRACE_ADDRESSES:
        raise ValueError(f"m, n and k must be smaller for this blocking (mc {mc}, kc {kc}, nc {nc}, nr {nr}, "
                         f"slivers_per_row {group}): the trace would take {rows:,} rows and {addresses:,} gathered "
                         f"addresses, above its {MAX_TRACE_ROWS:,} and {MAX_TRACE_ADDRESSES:,}, got m = {m}, n = {n}, "
                         f"k = {k}")


def _tile_rows(base: int, ld: int, r0: int, r1: int, c0: int, c1: int, step_bytes: int) -> tuple[np.ndarray, int]:
    """Rows [r0, r1) x columns [c0, c1) as a gather of runs: (row start addresses, ``step_bytes``
    pieces per row); the last piece of a row may reach past column c1 (a full vector access)."""
    row_starts = base + (np.arange(r0, r1, dtype=np.int64) * ld + c0) * ELEM_BYTES
    return row_starts, -(-(c1 - c0) * ELEM_BYTES // step_bytes)


def _gather_tile(tb: TraceBuilder, unit: str, stage: str, op: str, base: int, ld: int, r0: int, r1: int,
                 c0: int, c1: int, step_bytes: int) -> None:
    """One row of ``op``: the ``step_bytes`` pieces of a tile, row by row (one access per piece)."""
    starts, run = _tile_rows(base, ld, r0, r1, c0, c1, step_bytes)
    tb.gather(unit, stage, op, starts, step_bytes, run=run)


def host_gemm(m: int, n: int, k: int, *, mc: int = HOST_MC, kc: int = HOST_KC, nc: int = HOST_NC,
              nr: int = HOST_NR, slivers_per_row: int = HOST_SLIVERS_PER_ROW, unit: str = "host",
              stage: str = "gemm", space: AddressSpace | None = None) -> pa.Table:
    """Trace of C += A B on the host with GotoBLAS blocking (module docstring); 2 m n k flops in all.

    ``slivers_per_row`` consecutive nr-column slivers of packed B share one set of trace rows
    (their B slivers, the passes over packed A, and the C tile they update): the same
    addresses and flops as one row set per sliver, in far fewer rows, so the simulator
    times them as one chunk.
    """
    panels = host_gemm_panels(m, n, k, mc=mc, kc=kc, nc=nc, nr=nr, slivers_per_row=slivers_per_row, unit=unit,
                              stage=stage, space=space)
    return pa.concat_tables(list(panels)).combine_chunks()


def host_gemm_panels(m: int, n: int, k: int, *, mc: int = HOST_MC, kc: int = HOST_KC, nc: int = HOST_NC,
                     nr: int = HOST_NR, slivers_per_row: int = HOST_SLIVERS_PER_ROW, unit: str = "host",
                     stage: str = "gemm", space: AddressSpace | None = None) -> Iterator[pa.Table]:
    """The trace of :func:`host_gemm` as one table per n_c-wide column panel, made as they are iterated;
    the arguments are checked and the matrices allocated in ``space`` at the call."""
    m, n, k = _positive("m", m), _positive("n", n), _positive("k", k)
    mc, kc, nc, nr = _positive("mc", mc), _positive("kc", kc), _positive("nc", nc), _positive("nr", nr)
    group = _positive("slivers_per_row", slivers_per_row)
    _check_matrices(m, n, k)
    _check_host_trace(m, n, k, mc, kc, nc, nr, group)
    sp = AddressSpace() if space is None else space
    a = sp.alloc(f"{stage}.A", m * k * ELEM_BYTES)
    b = sp.alloc(f"{stage}.B", k * n * ELEM_BYTES)
    c = sp.alloc(f"{stage}.C", m * n * ELEM_BYTES)
    ap = sp.alloc(f"{stage}.A_packed", min(mc, m) * min(kc, k) * ELEM_BYTES)
    bp = sp.alloc(f"{stage}.B_packed", min(kc, k) * min(nc, n) * ELEM_BYTES)
    v = VECTOR_BYTES

    def panels() -> Iterator[pa.Table]:
        for j0 in range(0, n, nc):
            tb = TraceBuilder()
            nb = min(nc, n - j0)
            for p0 in range(0, k, kc):
                kb = min(kc, k - p0)
                # pack B[p0:p0+kb, j0:j0+nb] into sliver-major order
                _gather_tile(tb, unit, stage, "read", b, n, p0, p0 + kb, j0, j0 + nb, v)
                tb.access(unit, stage, "write", bp, v, v, -(-kb * nb * ELEM_BYTES // v))
                for i0 in range(0, m, mc):
                    mb = min(mc, m - i0)
                    _gather_tile(tb, unit, stage, "read", a, k, i0, i0 + mb, p0, p0 + kb, v)
                    a_vectors = -(-mb * kb * ELEM_BYTES // v)  # the packed A block, in vector loads
                    tb.access(unit, stage, "write", ap, v, v, a_vectors)
                    for s0 in range(0, nb, nr * group):
                        gw = min(nr * group, nb - s0)  # columns of this group of slivers
                        n_slivers = -(-gw // nr)
                        # slivers are consecutive in sliver-major packed B
                        tb.access(unit, stage, "read", bp + s0 * kb * ELEM_BYTES, v, v,
                                  -(-kb * gw * ELEM_BYTES // v))
                        # each sliver streams the whole packed A block once
                        tb.gather(unit, stage, "read", np.full(n_slivers, ap, dtype=np.int64), v, run=a_vectors,
                                  flops=2 * mb * gw * kb)
                        piece = min(v, min(nr, gw) * ELEM_BYTES)
                        _gather_tile(tb, unit, stage, "update", c, n, i0, i0 + mb, j0 + s0, j0 + s0 + gw, piece)
            yield tb.to_table()

    return panels()


def lap_gemm(m: int, n: int, k: int, *, target: str = "lap", accumulate: bool = True,
             produce_inputs: bool = False, consume_output: bool = False, stage: str = "gemm",
             space: AddressSpace | None = None, elem_bytes: int = ELEM_BYTES) -> pa.Table:
    """Trace: the host offloads one C (+)= A B to ``target`` (a LAP or a systolic array) and waits;
    coupling-agnostic. ``elem_bytes``: bytes per element, the target's element or word size (the command says it,
    and the target refuses another).

    ``produce_inputs``: the host first writes A, B and C (dirty lines the coupling must
    flush or evict); ``consume_output``: the host reads C afterwards.
    """
    m, n, k = _positive("m", m), _positive("n", n), _positive("k", k)
    eb = _positive("elem_bytes", elem_bytes)
    _check_matrices(m, n, k, eb)
    sp = AddressSpace() if space is None else space
    sizes = {"A": m * k * eb, "B": k * n * eb, "C": m * n * eb}
    addr = {name: sp.alloc(f"{stage}.{name}", nbytes) for name, nbytes in sizes.items()}
    tb = TraceBuilder()
    if produce_inputs:
        for name in ("A", "B", "C"):
            tb.access("host", f"{stage}_produce", "write", addr[name], eb, eb, sizes[name] // eb)
    inputs = [[addr[x], sizes[x]] for x in ("A", "B", "C")] if accumulate else \
        [[addr[x], sizes[x]] for x in ("A", "B")]
    tb.offload("host", stage, target, op="gemm", m=m, n=n, k=k, a_addr=addr["A"], b_addr=addr["B"],
               c_addr=addr["C"], accumulate=accumulate, elem_bytes=eb, inputs=inputs,
               outputs=[[addr["C"], sizes["C"]]])
    tb.wait("host", stage, target)
    if consume_output:
        tb.access("host", f"{stage}_consume", "read", addr["C"], eb, eb, sizes["C"] // eb)
    return tb.to_table()


GENERATORS: dict[str, Callable[..., pa.Table]] = {"host_gemm": host_gemm, "lap_gemm": lap_gemm}
