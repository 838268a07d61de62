"""Compiled (numba) kernels of the exact cache hierarchy.

The hierarchy state lives in flat numpy arrays shared by all levels; level ``l``
owns the slots ``base[l] .. base[l] + n_sets[l] * ways[l]`` and set ``s`` of it
the ``ways[l]`` slots starting at ``base[l] + s * ways[l]``:

- ``tags``   int64 line number held by a slot, ``-1`` when the slot is invalid;
- ``stamps`` int64 LRU stamp (larger = more recently used), ``0`` when invalid,
  so the least recently used or an invalid slot is the one with the smallest stamp;
- ``dirty``  uint8 dirty bit.

``clock`` (int64[2]) holds the next LRU stamp of the caches (index 0) and of the
stream table (index 1).  ``counts`` (int64[n_levels, N_COUNTERS]) are the
cumulative per-level counters in the column order of ``COUNTER_NAMES`` in
``cache.py``; ``dram`` (int64[2]) the cumulative DRAM reads and writes (lines).

DRAM line streams are appended to the caller's buffers ``rd_buf``/``wr_buf``
with fill levels in ``pos`` (int64[2]).  A bulk call stops early, before an
access that might overflow them, and returns how many inputs it processed; the
caller empties the buffers and calls again.  The semantics are documented in
``cache.py`` and mirrored line by line by ``cache_reference.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Column indices into ``counts`` (order of cache.COUNTER_NAMES).
C_LOADS = 0
C_STORES = 1
C_HITS = 2
C_MISSES = 3
C_WB_OUT = 4
C_WB_IN = 5
C_PREFETCHES = 6
N_COUNTERS = 7


@njit(cache=True, inline="always")
def _find(tags, base, mask, ways, level, line):
    """Slot index holding ``line`` at ``level``, or -1."""
    start = base[level] + (line & mask[level]) * ways[level]
    for w in range(ways[level]):
        if tags[start + w] == line:
            return start + w
    return -1


@njit(cache=True, inline="always")
def _touch(stamps, clock, slot):
    """Make ``slot`` the most recently used of its set."""
    clock[0] += 1
    stamps[slot] = clock[0]


@njit(cache=True, inline="always")
def _insert(tags, stamps, dirty, base, mask, ways, clock, level, line, is_dirty):
    """Place ``line`` (known absent) at ``level``; return its dirty victim or -1."""
    start = base[level] + (line & mask[level]) * ways[level]
    slot = start
    best = stamps[start]
    for w in range(1, ways[level]):
        s = stamps[start + w]
        if s < best:
            best = s
            slot = start + w
    victim = tags[slot]
    victim_dirty = dirty[slot]
    tags[slot] = line
    dirty[slot] = is_dirty
    clock[0] += 1
    stamps[slot] = clock[0]
    if victim >= 0 and victim_dirty != 0:
        return victim
    return -1


@njit(cache=True, inline="always")
def _lookup(tags, stamps, base, mask, ways, level, line):
    """One scan of the set: the slot holding ``line`` (>= 0), else ``-2 - victim``.

    The victim is the first slot of smallest stamp: an invalid slot if any, else
    the least recently used one (the same choice as ``_insert``).
    """
    start = base[level] + (line & mask[level]) * ways[level]
    end = start + ways[level]
    for slot in range(start, end):
        if tags[slot] == line:
            return slot
    victim = start
    best = stamps[start]
    for slot in range(start + 1, end):
        if stamps[slot] < best:
            best = stamps[slot]
            victim = slot
    return -2 - victim


@njit(cache=True, inline="always")
def _place(tags, stamps, dirty, slot, line, is_dirty, now):
    """Put ``line`` in ``slot`` with stamp ``now``; return the dirty victim or -1."""
    victim = tags[slot]
    victim_dirty = dirty[slot]
    tags[slot] = line
    dirty[slot] = is_dirty
    stamps[slot] = now
    if victim >= 0 and victim_dirty != 0:
        return victim
    return -1


@njit(cache=True)
def _write_back(tags, stamps, dirty, base, mask, ways, clock, counts, dram,
                wr_buf, pos, level, line):
    """Write dirty ``line`` into ``level`` (DRAM when ``level == n_levels``), cascading.

    Used by the maintenance kernels; ``access_kernel`` carries its own copy of
    this loop (see there).
    """
    n_levels = base.shape[0]
    while level < n_levels:
        counts[level, C_WB_IN] += 1
        slot = _find(tags, base, mask, ways, level, line)
        if slot >= 0:
            dirty[slot] = 1
            _touch(stamps, clock, slot)
            break
        victim = _insert(tags, stamps, dirty, base, mask, ways, clock, level, line, 1)
        if victim < 0:
            break
        counts[level, C_WB_OUT] += 1
        line = victim
        level += 1
    if level == n_levels:
        wr_buf[pos[1]] = line
        pos[1] += 1
        dram[1] += 1


@njit(cache=True)
def access_kernel(lines, stores, store_mode, start, start_level,
                  tags, stamps, dirty, base, mask, ways, clock, counts, dram,
                  rd_buf, wr_buf, pos, served_by, pf_cfg, pf_last, pf_stamp):
    """Demand loads/stores of ``lines[start:]`` entering at ``start_level``.

    ``store_mode``: 0 all loads, 1 all stores, 2 per access from ``stores`` (uint8).
    Returns the index of the first access not processed (buffers nearly full).

    One function on purpose: calling (or letting numba inline) helpers that
    take many arrays and contain loops made the miss path several times slower,
    so the fill / write-back cascade and the stream prefetcher are written out
    here.  Each access runs as a series of "fill jobs": first the demand line,
    then each line the prefetcher issues, all through the same fill code.
    The lookup of a level remembers its victim slot (``vslot``) for the fill:
    between the two only deeper levels change, since fills go from the deepest
    level upwards and write-backs only downwards.  The LRU clock is a local
    (``now``) and is stored back into ``clock[0]`` on return.
    """
    n_levels = base.shape[0]
    pf_on = pf_cfg[0] != 0
    pf_level = pf_cfg[1]
    degree = pf_cfg[2]
    n_streams = pf_last.shape[0]
    per_access_reads = 1 + degree if pf_on else 1
    per_access_writes = n_levels * per_access_reads
    rd_cap = rd_buf.shape[0]
    wr_cap = wr_buf.shape[0]
    vslot = np.zeros(n_levels, dtype=np.int64)
    now = clock[0]
    k = start_level
    n = lines.shape[0]
    for j in range(start, n):
        if pos[0] + per_access_reads > rd_cap or pos[1] + per_access_writes > wr_cap:
            clock[0] = now
            return j
        x = lines[j]
        if store_mode == 2:
            is_store = stores[j] != 0
        else:
            is_store = store_mode == 1
        col = C_STORES if is_store else C_LOADS
        # Demand lookup, counted at every level it reaches.
        served = n_levels
        hit_slot = -1
        for i in range(k, n_levels):
            counts[i, col] += 1
            r = _lookup(tags, stamps, base, mask, ways, i, x)
            if r >= 0:
                counts[i, C_HITS] += 1
                now += 1
                stamps[r] = now
                served = i
                hit_slot = r
                break
            vslot[i] = -2 - r
            counts[i, C_MISSES] += 1
        if served == n_levels:
            rd_buf[pos[0]] = x
            pos[0] += 1
            dram[0] += 1
        job_line = x
        job_served = served
        job_top = k
        job_is_prefetch = False
        next_y = 0
        last_y = -1
        while True:
            # Fill job_line from level job_served - 1 up to job_top, cascading dirty victims.
            for i in range(job_served - 1, job_top - 1, -1):
                now += 1
                victim = _place(tags, stamps, dirty, vslot[i], job_line, 0, now)
                if job_is_prefetch:
                    counts[i, C_PREFETCHES] += 1
                if victim >= 0:
                    counts[i, C_WB_OUT] += 1
                    level = i + 1
                    line = victim
                    while level < n_levels:
                        counts[level, C_WB_IN] += 1
                        r = _lookup(tags, stamps, base, mask, ways, level, line)
                        now += 1
                        if r >= 0:
                            dirty[r] = 1
                            stamps[r] = now
                            break
                        victim = _place(tags, stamps, dirty, -2 - r, line, 1, now)
                        if victim < 0:
                            break
                        counts[level, C_WB_OUT] += 1
                        line = victim
                        level += 1
                    if level == n_levels:
                        wr_buf[pos[1]] = line
                        pos[1] += 1
                        dram[1] += 1
            if not job_is_prefetch:
                if is_store:
                    dirty[hit_slot if served == k else vslot[k]] = 1
                served_by[j] = served
                if pf_on and k <= pf_level and served > pf_level:
                    # Stream table: match the lowest slot expecting x, else replace the LRU slot.
                    match = -1
                    for e in range(n_streams):
                        if pf_stamp[e] > 0 and pf_last[e] + 1 == x:
                            match = e
                            break
                    clock[1] += 1
                    if match < 0:
                        victim_slot = 0
                        for e in range(1, n_streams):
                            if pf_stamp[e] < pf_stamp[victim_slot]:
                                victim_slot = e
                        pf_last[victim_slot] = x
                        pf_stamp[victim_slot] = clock[1]
                    else:
                        pf_last[match] = x + degree
                        pf_stamp[match] = clock[1]
                        next_y = x + 1
                        last_y = x + degree
            # Next prefetch job: a line of next_y..last_y absent at the prefetch level.
            found = False
            while next_y <= last_y:
                y = next_y
                next_y += 1
                r = _lookup(tags, stamps, base, mask, ways, pf_level, y)
                if r >= 0:
                    continue
                vslot[pf_level] = -2 - r
                job_served = n_levels
                for i in range(pf_level + 1, n_levels):
                    r = _lookup(tags, stamps, base, mask, ways, i, y)
                    if r >= 0:
                        now += 1
                        stamps[r] = now
                        job_served = i
                        break
                    vslot[i] = -2 - r
                if job_served == n_levels:
                    rd_buf[pos[0]] = y
                    pos[0] += 1
                    dram[0] += 1
                job_line = y
                job_top = pf_level
                job_is_prefetch = True
                found = True
                break
            if not found:
                break
    clock[0] = now
    return n


@njit(cache=True)
def flush_kernel(lines, start, tags, stamps, dirty, base, mask, ways, counts, dram,
                 wr_buf, pos):
    """clflush ``lines[start:]``; returns the index of the first line not processed."""
    n_levels = base.shape[0]
    cap = wr_buf.shape[0]
    n = lines.shape[0]
    for j in range(start, n):
        if pos[1] + 1 > cap:
            return j
        x = lines[j]
        top = -1
        for i in range(n_levels):
            slot = _find(tags, base, mask, ways, i, x)
            if slot >= 0:
                if dirty[slot] != 0 and top < 0:
                    top = i
                tags[slot] = -1
                stamps[slot] = 0
                dirty[slot] = 0
        if top >= 0:
            counts[top, C_WB_OUT] += 1
            wr_buf[pos[1]] = x
            pos[1] += 1
            dram[1] += 1
    return n


@njit(cache=True)
def evict_to_llc_kernel(lines, start, tags, stamps, dirty, base, mask, ways, clock,
                        counts, dram, wr_buf, pos):
    """Move dirty upper copies of ``lines[start:]`` into the last level; returns next index."""
    n_levels = base.shape[0]
    last = n_levels - 1
    cap = wr_buf.shape[0]
    n = lines.shape[0]
    for j in range(start, n):
        if pos[1] + 1 > cap:
            return j
        x = lines[j]
        top = -1
        for i in range(last):
            slot = _find(tags, base, mask, ways, i, x)
            if slot >= 0:
                if dirty[slot] != 0 and top < 0:
                    top = i
                tags[slot] = -1
                stamps[slot] = 0
                dirty[slot] = 0
        if top >= 0:
            counts[top, C_WB_OUT] += 1
            _write_back(tags, stamps, dirty, base, mask, ways, clock, counts, dram,
                        wr_buf, pos, last, x)
    return n


@njit(cache=True)
def invalidate_kernel(lines, level_mask, tags, stamps, dirty, base, mask, ways):
    """Drop ``lines`` without write-back from the levels with ``level_mask[l] != 0``."""
    n_levels = base.shape[0]
    for j in range(lines.shape[0]):
        x = lines[j]
        for i in range(n_levels):
            if level_mask[i] == 0:
                continue
            slot = _find(tags, base, mask, ways, i, x)
            if slot >= 0:
                tags[slot] = -1
                stamps[slot] = 0
                dirty[slot] = 0


def new_state(n_sets: np.ndarray, ways: np.ndarray) -> dict[str, np.ndarray]:
    """Empty state arrays for levels of ``n_sets[l]`` sets of ``ways[l]`` ways."""
    n_sets = np.asarray(n_sets, dtype=np.int64)
    ways = np.asarray(ways, dtype=np.int64)
    sizes = n_sets * ways
    base = np.zeros(len(sizes), dtype=np.int64)
    base[1:] = np.cumsum(sizes)[:-1]
    total = int(sizes.sum())
    return {
        "tags": np.full(total, -1, dtype=np.int64),
        "stamps": np.zeros(total, dtype=np.int64),
        "dirty": np.zeros(total, dtype=np.uint8),
        "base": base,
        "mask": n_sets - 1,
        "ways": ways.copy(),
        "clock": np.zeros(2, dtype=np.int64),
    }
