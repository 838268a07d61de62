"""Compiled expansion of element byte addresses into the cache lines they touch.

:func:`workloads.trace.element_lines` and :func:`workloads.trace.gather_lines` expand one row
(``lines_of_elements``); the replay expands a block of rows per call (``lines_of_rows``), since the
fixed cost of a call, not its work, dominates rows of a few hundred lines.
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit


@njit(cache=True)
def lines_of_elements(starts: np.ndarray, elem_bytes: int, line_bytes: int) -> np.ndarray:
    """Lines (byte address // ``line_bytes``) covered by elements of ``elem_bytes`` bytes starting at
    byte addresses ``starts`` (int64, >= 0), in access order: each element's lines low to high, a
    line equal to the one before it left out. Raises ValueError on a negative address."""
    total = 0
    for i in range(starts.size):
        if starts[i] < 0:
            raise ValueError("addrs must be byte addresses >= 0, got a negative one")
        total += (starts[i] + elem_bytes - 1) // line_bytes - starts[i] // line_bytes + 1
    out = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(starts.size):
        for line in range(starts[i] // line_bytes, (starts[i] + elem_bytes - 1) // line_bytes + 1):
            if k == 0 or out[k - 1] != line:
                out[k] = line
                k += 1
    return out[:k]



@njit(cache=True)
def _row_start(i: int, e: int, addr, stride, listed, offsets, values) -> int:
    """Byte address of row ``i``'s element (or listed run) ``e``."""
    if listed[i]:
        return values[offsets[i] + e]
    return addr[i] + stride[i] * e


@njit(cache=True)
def _contiguous(i: int, elem_bytes, stride, count, listed) -> bool:
    """Whether row ``i``'s elements lie back to back from its address up (stride = element size), so that its
    lines, each once in rising order, are the range from its first byte's line to its last byte's."""
    return not listed[i] and count[i] > 0 and elem_bytes[i] > 0 and stride[i] == elem_bytes[i]


@njit(cache=True)
def _repeats_one_line(i: int, elem_bytes, stride, count, listed, addr, line_bytes: int) -> bool:
    """Whether row ``i`` touches one element ``count`` times (stride 0) and that element lies in one line, so that
    its lines, a line equal to the one before it left out, are that line once: no walk per element."""
    return (not listed[i] and stride[i] == 0 and count[i] > 0
            and addr[i] // line_bytes == (addr[i] + max(elem_bytes[i], 1) - 1) // line_bytes)


@njit(cache=True)
def lines_of_rows(rows, addr, elem_bytes, stride, count, listed, offsets, values, line_bytes: int):
    """The lines of trace rows ``rows`` in one call: per row, what ``lines_of_elements`` gives for its
    elements (a listed row's addresses start runs of ``count // len(addrs)`` elements; another row's
    ``count`` elements lie ``stride`` bytes apart from ``addr``). Returns (lines, row offsets): row
    ``rows[j]``'s lines are ``lines[offsets[j]:offsets[j + 1]]``. The first pass counts the lines the
    second writes, so that the output is allocated at its size, whatever the rows' elements."""
    n = rows.size
    n_starts = np.empty(n, dtype=np.int64)
    run_bytes = np.empty(n, dtype=np.int64)
    total = 0
    for j in range(n):
        i = rows[j]
        if _contiguous(i, elem_bytes, stride, count, listed):  # its lines are one range: one run, no walk per element
            n_starts[j] = 1
            run_bytes[j] = count[i] * elem_bytes[i]
        elif _repeats_one_line(i, elem_bytes, stride, count, listed, addr, line_bytes):
            n_starts[j] = 1
            run_bytes[j] = elem_bytes[i]
        elif listed[i]:
            n_starts[j] = offsets[i + 1] - offsets[i]
            run_bytes[j] = (count[i] // max(1, n_starts[j])) * elem_bytes[i]
        else:
            n_starts[j] = count[i]
            run_bytes[j] = elem_bytes[i]
        row_total = 0
        previous = 0
        for e in range(n_starts[j]):
            s = _row_start(i, e, addr, stride, listed, offsets, values)
            for line in range(s // line_bytes, (s + run_bytes[j] - 1) // line_bytes + 1):
                if row_total == 0 or line != previous:
                    row_total += 1
                    previous = line
        total += row_total
    out = np.empty(total, dtype=np.int64)
    row_offsets = np.zeros(n + 1, dtype=np.int64)
    k = 0
    for j in range(n):
        i = rows[j]
        first = k
        for e in range(n_starts[j]):
            s = _row_start(i, e, addr, stride, listed, offsets, values)
            for line in range(s // line_bytes, (s + run_bytes[j] - 1) // line_bytes + 1):
                if k == first or out[k - 1] != line:
                    out[k] = line
                    k += 1
        row_offsets[j + 1] = k
    return out[:k], row_offsets
