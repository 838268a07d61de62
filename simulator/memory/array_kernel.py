"""Compiled helpers over plain int64 arrays, shared by the memory models and the host core.

The cache and DRAM models check every chunk of line numbers they are handed, and the core
tallies where each chunk's lines were served. Chunks are mostly short (a trace row is often
tens of lines), where numpy's ``min()`` and ``max()`` cost about 1.4 us each in call overhead
(``bincount`` and a scale-and-add more); one compiled pass costs about 0.3 us.
"""

from __future__ import annotations

import numpy as np

from simulator.config.kernel_cache import njit


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


@njit(cache=True)
def count_levels(levels: np.ndarray, n: int) -> np.ndarray:
    """How many entries of ``levels`` (integers in 0..n-1) equal 0, 1, ..., n-1: int64[n]."""
    out = np.zeros(n, dtype=np.int64)
    for i in range(levels.size):
        level = levels[i]
        if level < 0 or level >= n:  # compiled code does not bound-check: refuse, as bincount would
            raise ValueError("count_levels: a level outside 0..n-1")
        out[level] += 1
    return out


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
