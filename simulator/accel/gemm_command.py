"""The ``gemm`` command of the GEMM units (LAP, systolic array), declared once, and the lines of a tile.

``GemmCommand`` (``offsim commands lap``): ``m``, ``n``, ``k`` and the byte addresses ``a_addr``,
``b_addr``, ``c_addr`` of row-major matrices A (m x k), B (k x n) and C (m x n), optional
leading dimensions ``lda``/``ldb``/``ldc`` (elements; default k, n, n), ``accumulate`` (default
true: C += A B) and the ``inputs``/``outputs`` regions, which default to the operands.
``check_gemm_command`` checks a command against the system's memory and its regions against
the operands; ``tile_lines`` lists the cache lines (line numbers = byte address // line bytes)
of a rectangle of a matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator.accel.base import CommandError
from simulator.accel.command_schema import Regions, command_field, first_uncovered_byte
from simulator.kernel_cache import njit


def tile_lines(base: int, ld: int, r0: int, r1: int, c0: int, c1: int, elem_bytes: int,
               line_bytes: int) -> np.ndarray:
    """Sorted distinct line numbers of rows [r0, r1) x columns [c0, c1) of a row-major matrix at ``base``
    (bytes) with leading dimension ``ld`` (elements, >= 0)."""
    if ld < 0:
        raise ValueError(f"ld = {ld!r}: expected a leading dimension >= 0 elements")
    if r1 <= r0 or c1 <= c0:
        return np.zeros(0, dtype=np.int64)
    return _tile_lines(base, ld, r0, r1, c0, c1, elem_bytes, line_bytes)


def tile_partial_lines(base: int, ld: int, r0: int, r1: int, c0: int, c1: int, elem_bytes: int,
                       line_bytes: int) -> np.ndarray:
    """The lines of ``tile_lines`` that rows [r0, r1) x columns [c0, c1) cover only in part (sorted, distinct):
    those at the unaligned ends of the tile's runs of bytes (``interface.partial_lines``)."""
    if ld < 0:
        raise ValueError(f"ld = {ld!r}: expected a leading dimension >= 0 elements")
    if r1 <= r0 or c1 <= c0:
        return np.zeros(0, dtype=np.int64)
    return _tile_partial_lines(base, ld, r0, r1, c0, c1, elem_bytes, line_bytes)


@njit(cache=True)
def _tile_lines(base, ld, r0, r1, c0, c1, elem_bytes, line_bytes):
    """``tile_lines`` of a non-empty rectangle, in one compiled pass instead of a dozen numpy calls (a GEMM
    command lists its tiles once per block and k slice)."""
    first = np.empty(r1 - r0, np.int64)
    count = np.empty(r1 - r0, np.int64)
    total = 0
    listed = 0  # the last line of the rows before (row r0 has none)
    for i in range(r1 - r0):
        row = r0 + i
        last = (base + (row * ld + c1) * elem_bytes - 1) // line_bytes
        # Both ends grow with the row (ld >= 0), so a row's lines up to the previous row's last are
        # already listed: start each row after them, and the union comes out sorted without a sort.
        first[i] = (base + (row * ld + c0) * elem_bytes) // line_bytes
        if i > 0 and first[i] <= listed:
            first[i] = listed + 1
        count[i] = max(last - first[i] + 1, 0)
        total += count[i]
        listed = last
    out = np.empty(total, np.int64)
    j = 0
    for i in range(r1 - r0):
        for line in range(first[i], first[i] + count[i]):
            out[j] = line
            j += 1
    return out


@njit(cache=True)
def _tile_partial_lines(base, ld, r0, r1, c0, c1, elem_bytes, line_bytes):
    """``tile_partial_lines`` of a non-empty rectangle in one compiled pass (a LAP asks it of every output tile).

    Row starts and ends both grow with the row (ld >= 0), so the rows join into runs in row order (a row that
    starts at or before the run's end extends it), and the runs' unaligned ends come out in ascending order: each
    is kept unless it repeats the last one kept (a run's head on the line of the run before's tail)."""
    width = (c1 - c0) * elem_bytes
    out = np.empty(2 * (r1 - r0), np.int64)
    n = 0
    run_lo = base + (r0 * ld + c0) * elem_bytes
    run_hi = run_lo + width
    for row in range(r0 + 1, r1 + 1):
        start = base + (row * ld + c0) * elem_bytes
        if row < r1 and start <= run_hi:
            run_hi = start + width
            continue
        for end, line in ((run_lo, run_lo // line_bytes), (run_hi, (run_hi - 1) // line_bytes)):
            if end % line_bytes != 0 and (n == 0 or out[n - 1] != line):
                out[n] = line
                n += 1
        run_lo, run_hi = start, start + width
    return out[:n].copy()


@dataclass(frozen=True)
class GemmCommand:
    """A LAP command: C (m x n) (+)= A (m x k) B (k x n), row-major at byte addresses a_addr, b_addr,
    c_addr with leading dimensions (elements) lda, ldb, ldc; C is read first when ``accumulate``."""

    op: str = command_field(choices=("gemm",), doc="the operation: C (+)= A B")
    m: int = command_field(unit="elements", min=1, doc="rows of A and C")
    n: int = command_field(unit="elements", min=1, doc="columns of B and C")
    k: int = command_field(unit="elements", min=1, doc="columns of A, rows of B")
    a_addr: int = command_field(unit="B", min=0, doc="byte address of A's first element")
    b_addr: int = command_field(unit="B", min=0, doc="byte address of B's first element")
    c_addr: int = command_field(unit="B", min=0, doc="byte address of C's first element")
    lda: int = command_field(None, unit="elements", min=1, default_text="k", doc="leading dimension of A (>= k)")
    ldb: int = command_field(None, unit="elements", min=1, default_text="n", doc="leading dimension of B (>= n)")
    ldc: int = command_field(None, unit="elements", min=1, default_text="n", doc="leading dimension of C (>= n)")
    accumulate: bool = command_field(True, doc="C += A B (C is read, then written); false: C = A B")
    elem_bytes: int = command_field(None, unit="B", min=1, default_text="the unit's",
                                    doc="bytes per element the matrices are laid out in; given, the unit's own")
    inputs: Regions = command_field(None, default_text="A, B (and C if accumulate)",
                                    doc="regions the coupling makes visible to the unit before it starts")
    outputs: Regions = command_field(None, default_text="C", doc="regions the host sees fresh after its wait")

    def __post_init__(self) -> None:
        for name, cols in (("lda", self.k), ("ldb", self.n), ("ldc", self.n)):
            value = getattr(self, name)
            if value is None:
                object.__setattr__(self, name, cols)
            elif value < cols:
                raise ValueError(f"{name} = {value!r}: expected a leading dimension >= {cols} "
                                 f"(the matrix's columns)")

    def operands(self, elem_bytes: int) -> dict[str, tuple[int, int, int, int]]:
        """Name -> (byte address, rows, bytes per row, bytes between rows) of A, B and C."""
        return {"A": (self.a_addr, self.m, self.k * elem_bytes, self.lda * elem_bytes),
                "B": (self.b_addr, self.k, self.n * elem_bytes, self.ldb * elem_bytes),
                "C": (self.c_addr, self.m, self.n * elem_bytes, self.ldc * elem_bytes)}

    def matrices(self, elem_bytes: int) -> list[tuple[str, int, int]]:
        """(address key, byte address, bytes from it to one past the last element) of A, B and C."""
        return [(name, base, ((rows - 1) * ld + cols) * elem_bytes) for name, base, rows, cols, ld in
                (("a_addr", self.a_addr, self.m, self.k, self.lda), ("b_addr", self.b_addr, self.k, self.n, self.ldb),
                 ("c_addr", self.c_addr, self.m, self.n, self.ldc))]

    def operand_regions(self, elem_bytes: int) -> tuple[Regions, Regions]:
        """The GEMM's operands as regions: inputs A, B (and C if accumulating), output C."""
        (_, a, a_bytes), (_, b, b_bytes), (_, c, c_bytes) = self.matrices(elem_bytes)
        inputs = ((a, a_bytes), (b, b_bytes)) + (((c, c_bytes),) if self.accumulate else ())
        return inputs, ((c, c_bytes),)


def check_gemm_command(cmd: GemmCommand, elem_bytes: int, memory_bytes: int) -> None:
    """The matrices are laid out in the unit's ``elem_bytes`` (where the command says), every matrix of ``cmd``
    ends within the system's ``memory_bytes``, and regions given cover the operands: inputs A, B (and C if
    accumulating), outputs C, so that the coupling's flushes and invalidations reach them all; CommandError
    naming the key otherwise."""
    if cmd.elem_bytes is not None and cmd.elem_bytes != elem_bytes:
        raise CommandError(f"elem_bytes = {cmd.elem_bytes}: the matrices are laid out in {cmd.elem_bytes} B elements; "
                           f"expected the unit's {elem_bytes} B")
    for name, base, nbytes in cmd.matrices(elem_bytes):
        if base + nbytes > memory_bytes:
            raise CommandError(f"{name} = {base}: the matrix ends at byte {base + nbytes}; expected it to end "
                               f"within the {memory_bytes} B of the system's memory")
    operands = cmd.operands(elem_bytes)
    for key, regions, names in (("inputs", cmd.inputs, "AB" + ("C" if cmd.accumulate else "")),
                                ("outputs", cmd.outputs, "C")):
        for name in names if regions is not None else ():
            byte = first_uncovered_byte(regions, *operands[name])
            if byte is not None:
                raise CommandError(f"{key}: byte {byte} of {name} is in no region; expected regions covering "
                                   f"{_listed(names)} (or no {key}: they default to them)")


def _listed(names: str) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return names if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
