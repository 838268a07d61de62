"""Compiled helpers over plain int64 arrays, shared by the memory models and the host core.

The cache and DRAM models check every chunk of line numbers they are handed, and the core
tallies where each chunk's lines were served. Chunks are mostly short (a trace row is often
tens of lines), where numpy's ``min()`` and ``max()`` cost about 1.4 us each in call overhead
(``bincount`` and a scale-and-add more); one compiled pass costs about 0.3 us.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import intrinsic

from simulator.kernel_cache import njit


@njit(cache=True)
def value_range(values: np.ndarray) -> tuple[int, int]:
    """(smallest, largest) of a non-empty 1-D int64 array."""
    lo = values[0]
    hi = values[0]
    for i in range(1, values.size):
        v = values[i]
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


#: partial tallies of ``count_levels`` and ``count_levels_by_kind``: consecutive entries add into different
#: words, so that a run of equal entries (most lines of a chunk served by one level) is not one chain of
#: increments of one memory word, each waiting for the one before (about 5 cycles an entry instead of 1)
N_PARTIAL_TALLIES = 4  # a power of two


@njit(cache=True)
def count_levels_by_kind(levels: np.ndarray, kinds: np.ndarray, kind_mode: int, n: int) -> np.ndarray:
    """How many entries of ``levels`` (integers in 0..n-1) of each kind equal 0, 1, ..., n-1: int64[2, n].
    ``kind_mode`` 0 or 1: every entry is of that kind (``kinds`` is not read); 2: entry i is of kind 1 where
    ``kinds[i]`` is not 0, else of kind 0."""
    part = np.zeros((N_PARTIAL_TALLIES, 2, n), dtype=np.int64)
    for i in range(levels.size):
        level = levels[i]
        if level < 0 or level >= n:  # compiled code does not bound-check: refuse, as bincount would
            raise ValueError("count_levels: a level outside 0..n-1")
        if kind_mode == 2:
            kind = 1 if kinds[i] != 0 else 0
        else:
            kind = kind_mode
        part[i & (N_PARTIAL_TALLIES - 1), kind, level] += 1
    out = np.zeros((2, n), dtype=np.int64)
    for t in range(N_PARTIAL_TALLIES):
        for kind in range(2):
            for level in range(n):
                out[kind, level] += part[t, kind, level]
    return out


@njit(cache=True)
def count_levels(levels: np.ndarray, n: int) -> np.ndarray:
    """How many entries of ``levels`` (integers in 0..n-1) equal 0, 1, ..., n-1: int64[n]."""
    return count_levels_by_kind(levels, levels, 0, n)[0]


@njit(cache=True)
def add_scaled(counts: np.ndarray, scale: float, into_a: np.ndarray, into_b: np.ndarray) -> None:
    """``into_a += counts * scale`` and ``into_b += counts * scale`` (float64), rounded as numpy rounds them.
    The three arrays must have one length (ValueError otherwise, as numpy's broadcasting would raise)."""
    if into_a.size != counts.size or into_b.size != counts.size:  # compiled code does not bound-check
        raise ValueError("add_scaled: counts, into_a and into_b differ in length")
    for i in range(counts.size):
        x = counts[i] * scale
        into_a[i] += x
        into_b[i] += x


@intrinsic
def borrowed(typingctx, array):
    """A view of ``array`` (the same data, shape and strides) that holds no reference to it, for a kernel's
    per-line or per-request loop: the caller keeps ``array`` alive for the whole call.

    Each array an inlined helper takes is reference counted (an atomic increment and decrement at every
    call), and numba's pruning of those counts gives up in a function that calls others that may raise; a
    view without an owner has no count to keep. (On a long stream the counts cost about a third of the command-queue
    controller's time, and a scratch array counted at each DRAM request a tenth of the FMM main job's CPU time, by
    sampling profiles.) A scratch array a loop hands to inlined helpers is therefore made by the caller and passed
    in. Only a function's arguments may be borrowed: numba frees an array it allocated after the array's last use,
    which a borrowed view does not count as one. And the function that borrows them must not be ``inline='always'``,
    so that its caller's temporaries (such as an array built in the call's argument list) live until it returns; no
    borrowed view may be returned or stored."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        source = context.make_array(array)(context, builder, args[0])
        view = context.make_array(array)(context, builder)
        context.populate_array(view, data=source.data, shape=source.shape, strides=source.strides,
                               itemsize=source.itemsize, meminfo=None)
        return view._getvalue()

    return array(array), codegen
