"""Compiled helpers over plain int64 arrays, shared by the memory models.

The cache and DRAM models check every chunk of line numbers they are handed. Chunks are
mostly short (a trace row is often tens of lines), where numpy's ``min()`` and ``max()``
cost about 1.4 us each in call overhead; one compiled pass costs about 0.3 us.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
