"""The ``gemm`` command of the GEMM units (LAP, systolic array): its arguments and the lines of a tile.

Command params (JSON): ``m``, ``n``, ``k`` and the byte addresses ``a_addr``,
``b_addr``, ``c_addr`` of row-major matrices A (m x k), B (k x n) and C (m x n),
optional leading dimensions ``lda``/``ldb``/``ldc`` (elements; default k, n, n)
and ``accumulate`` (default true: C += A B). ``gemm_args`` checks them against
the system's memory and returns them; ``tile_lines`` lists the cache lines
(line numbers = byte address // line bytes) of a rectangle of a matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.accel.base import CommandError


def tile_lines(base: int, ld: int, r0: int, r1: int, c0: int, c1: int, elem_bytes: int,
               line_bytes: int) -> np.ndarray:
    """Sorted distinct line numbers of rows [r0, r1) x columns [c0, c1) of a row-major matrix at ``base``
    (bytes) with leading dimension ``ld`` (elements, >= 0)."""
    if ld < 0:
        raise ValueError(f"ld = {ld!r}: expected a leading dimension >= 0 elements")
    if r1 <= r0 or c1 <= c0:
        return np.zeros(0, dtype=np.int64)
    rows = np.arange(r0, r1, dtype=np.int64)
    first = (base + (rows * ld + c0) * elem_bytes) // line_bytes
    last = (base + (rows * ld + c1) * elem_bytes - 1) // line_bytes
    # Both ends grow with the row (ld >= 0), so a row's lines up to the previous row's last are
    # already listed: start each row after them, and the union comes out sorted without a sort.
    first[1:] = np.maximum(first[1:], last[:-1] + 1)
    counts = np.maximum(last - first + 1, 0)
    starts = np.cumsum(counts) - counts
    return np.repeat(first, counts) + (np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts))


def _int_arg(params: dict, name: str, default: int | None = None, minimum: int = 1, kind: str = "lap") -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CommandError(f"{kind} gemm command: {name} = {value!r}: expected an integer >= {minimum}")
    return value


@dataclass(frozen=True)
class GemmArgs:
    """A ``gemm`` command's arguments: C (m x n) += A (m x k) B (k x n), row-major at byte addresses
    a, b, c with leading dimensions (elements) lda, ldb, ldc; C is read first when ``accumulate``."""

    m: int
    n: int
    k: int
    a: int
    b: int
    c: int
    lda: int
    ldb: int
    ldc: int
    accumulate: bool


def gemm_args(params: dict, elem_bytes: int, memory_bytes: int, kind: str = "lap") -> GemmArgs:
    """The arguments of a ``gemm`` command whose matrices end within ``memory_bytes``; CommandError
    naming the first bad one (its message names the unit ``kind``)."""
    m, n, k = (_int_arg(params, x, kind=kind) for x in ("m", "n", "k"))
    a, b, c = (_int_arg(params, x, minimum=0, kind=kind) for x in ("a_addr", "b_addr", "c_addr"))
    lda = _int_arg(params, "lda", k, minimum=k, kind=kind)
    ldb = _int_arg(params, "ldb", n, minimum=n, kind=kind)
    ldc = _int_arg(params, "ldc", n, minimum=n, kind=kind)
    accumulate = params.get("accumulate", True)
    if not isinstance(accumulate, bool):
        raise CommandError(f"{kind} gemm command: accumulate = {accumulate!r}: expected true or false")
    for name, base, rows, cols, ld in (("a_addr", a, m, k, lda), ("b_addr", b, k, n, ldb), ("c_addr", c, m, n, ldc)):
        end = base + ((rows - 1) * ld + cols) * elem_bytes  # one past its last element
        if end > memory_bytes:
            raise CommandError(f"{kind} gemm command: {name} = {base}: the {rows} x {cols} matrix (leading dimension "
                               f"{ld}) ends at byte {end}; expected it to end within the {memory_bytes} B of the "
                               "system's memory")
    return GemmArgs(m, n, k, a, b, c, lda, ldb, ldc, accumulate)
