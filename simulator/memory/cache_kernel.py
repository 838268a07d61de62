"""Compiled (numba) kernels of the exact cache hierarchy.

The state of all levels lives in one flat int64 array ``ts``, set-major: level
``l`` starts at ``base[l]``; set ``s`` of it occupies ``2 * ways[l]`` entries
starting at ``base[l] + s * 2 * ways[l]``: first the ``ways[l]`` tags (line
numbers, ``-1`` when the way is invalid), then the ``ways[l]`` meta words
``2 * stamp + dirty`` (``0`` when invalid).  Stamps come from one increasing LRU
clock and are unique, so the smallest meta word of a set is an invalid way if
there is one, else the least recently used way.  Keeping a set's tags and LRU
state side by side touches the fewest memory lines per lookup.

``clock`` (int64[2]) holds the last LRU stamp of the caches (index 0) and of the
stream table (index 1).  ``counts`` (int64[n_levels, N_COUNTERS]) are the
cumulative per-level counters in the column order of ``COUNTER_NAMES`` in
``cache.py``; ``dram`` (int64[2]) the cumulative DRAM reads and writes (lines).

DRAM line streams are appended to the caller's buffers ``rd_buf``/``wr_buf``
with fill levels in ``pos`` (int64[2]).  A bulk call stops early, before an
access that might overflow them, and returns how many inputs it processed; the
caller empties the buffers and calls again.  The semantics are documented in
``cache.py`` and mirrored by ``cache_reference.py``.
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
def _lookup(ts, base, mask, ways, level, line):
    """Tag index holding ``line`` at ``level`` (>= 0), else ``-2 - victim tag index``.

    The victim is the first way of smallest meta word: an invalid way if any,
    else the least recently used one.  The way's meta word is at tag index + ways.
    """
    w = ways[level]
    start = base[level] + (line & mask[level]) * 2 * w
    end = start + w
    for slot in range(start, end):
        if ts[slot] == line:
            return slot
    victim = start
    best = ts[start + w]
    for slot in range(start + 1, end):
        if ts[slot + w] < best:
            best = ts[slot + w]
            victim = slot
    return -2 - victim


@njit(cache=True, inline="always")
def _place(ts, slot, w, line, is_dirty, now):
    """Put ``line`` in tag index ``slot`` (set of ``w`` ways) at stamp ``now``; return its dirty victim or -1."""
    victim = ts[slot]
    victim_meta = ts[slot + w]
    ts[slot] = line
    ts[slot + w] = 2 * now + is_dirty
    if victim >= 0 and (victim_meta & 1) != 0:
        return victim
    return -1


@njit(cache=True, inline="always")
def _invalidate_slot(ts, slot, w):
    """Empty the way at tag index ``slot``; return 1 if it held a dirty line, else 0."""
    was_dirty = ts[slot + w] & 1
    ts[slot] = -1
    ts[slot + w] = 0
    return was_dirty


@njit(cache=True)
def _write_back(ts, base, mask, ways, clock, counts, dram, wr_buf, pos, level, line):
    """Write dirty ``line`` into ``level`` (DRAM when ``level == n_levels``), cascading.

    Used by the maintenance kernels; ``access_kernel`` carries its own copy of
    this loop (see there).
    """
    n_levels = base.shape[0]
    while level < n_levels:
        counts[level, C_WB_IN] += 1
        r = _lookup(ts, base, mask, ways, level, line)
        w = ways[level]
        clock[0] += 1
        if r >= 0:
            ts[r + w] = 2 * clock[0] + 1
            break
        victim = _place(ts, -2 - r, w, line, 1, clock[0])
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
                  ts, base, mask, ways, clock, counts, dram,
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
        # Demand lookup.  Its loads/stores/hits/misses counters follow from
        # served_by and are added by the caller (``demand_counts``).
        served = n_levels
        hit_slot = -1
        for i in range(k, n_levels):
            r = _lookup(ts, base, mask, ways, i, x)
            if r >= 0:
                now += 1
                ts[r + ways[i]] = 2 * now + (ts[r + ways[i]] & 1)
                served = i
                hit_slot = r
                break
            vslot[i] = -2 - r
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
                victim = _place(ts, vslot[i], ways[i], job_line, 0, now)
                if job_is_prefetch:
                    counts[i, C_PREFETCHES] += 1
                if victim >= 0:
                    counts[i, C_WB_OUT] += 1
                    level = i + 1
                    line = victim
                    while level < n_levels:
                        counts[level, C_WB_IN] += 1
                        r = _lookup(ts, base, mask, ways, level, line)
                        now += 1
                        if r >= 0:
                            ts[r + ways[level]] = 2 * now + 1
                            break
                        victim = _place(ts, -2 - r, ways[level], line, 1, now)
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
                    ts[(hit_slot if served == k else vslot[k]) + ways[k]] |= 1
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
                r = _lookup(ts, base, mask, ways, pf_level, y)
                if r >= 0:
                    continue
                vslot[pf_level] = -2 - r
                job_served = n_levels
                for i in range(pf_level + 1, n_levels):
                    r = _lookup(ts, base, mask, ways, i, y)
                    if r >= 0:
                        now += 1
                        ts[r + ways[i]] = 2 * now + (ts[r + ways[i]] & 1)
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
def flush_kernel(lines, start, ts, base, mask, ways, counts, dram, wr_buf, pos):
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
            r = _lookup(ts, base, mask, ways, i, x)
            if r >= 0:
                if _invalidate_slot(ts, r, ways[i]) != 0 and top < 0:
                    top = i
        if top >= 0:
            counts[top, C_WB_OUT] += 1
            wr_buf[pos[1]] = x
            pos[1] += 1
            dram[1] += 1
    return n


@njit(cache=True)
def evict_to_llc_kernel(lines, start, ts, base, mask, ways, clock, counts, dram, wr_buf, pos):
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
            r = _lookup(ts, base, mask, ways, i, x)
            if r >= 0:
                if _invalidate_slot(ts, r, ways[i]) != 0 and top < 0:
                    top = i
        if top >= 0:
            counts[top, C_WB_OUT] += 1
            _write_back(ts, base, mask, ways, clock, counts, dram, wr_buf, pos, last, x)
    return n


@njit(cache=True)
def invalidate_kernel(lines, level_mask, ts, base, mask, ways):
    """Drop ``lines`` without write-back from the levels with ``level_mask[l] != 0``."""
    n_levels = base.shape[0]
    for j in range(lines.shape[0]):
        x = lines[j]
        for i in range(n_levels):
            if level_mask[i] == 0:
                continue
            r = _lookup(ts, base, mask, ways, i, x)
            if r >= 0:
                _invalidate_slot(ts, r, ways[i])


@njit(cache=True)
def demand_counts(served_by, stores, store_mode, start_level, counts):
    """Add the demand counters (loads, stores, hits, misses) of one access call.

    An access served by level ``s`` (``n_levels`` = DRAM) that entered at
    ``start_level`` reached levels ``start_level .. min(s, n_levels - 1)``,
    missed in those above ``s`` and hit at ``s``.
    """
    n_levels = counts.shape[0]
    by_kind = np.zeros((2, n_levels + 1), dtype=np.int64)
    for j in range(served_by.shape[0]):
        if store_mode == 2:
            kind = 1 if stores[j] != 0 else 0
        else:
            kind = store_mode
        by_kind[kind, served_by[j]] += 1
    for kind in range(2):
        reached = 0
        for i in range(n_levels - 1, start_level - 1, -1):
            reached += by_kind[kind, i + 1] if i == n_levels - 1 else 0
            reached += by_kind[kind, i]
            counts[i, C_LOADS + kind] += reached
            counts[i, C_HITS] += by_kind[kind, i]
            counts[i, C_MISSES] += reached - by_kind[kind, i]


@njit(cache=True)
def way_state(ts, base, mask, ways, level, line):
    """-1 if ``line`` is absent at ``level``, else its dirty bit (0 or 1)."""
    r = _lookup(ts, base, mask, ways, level, line)
    if r < 0:
        return -1
    return ts[r + ways[level]] & 1


def new_state(n_sets: np.ndarray, ways: np.ndarray) -> dict[str, np.ndarray]:
    """Empty state arrays for levels of ``n_sets[l]`` sets of ``ways[l]`` ways."""
    n_sets = np.asarray(n_sets, dtype=np.int64)
    ways = np.asarray(ways, dtype=np.int64)
    sizes = 2 * n_sets * ways
    base = np.zeros(len(sizes), dtype=np.int64)
    base[1:] = np.cumsum(sizes)[:-1]
    ts = np.zeros(int(sizes.sum()), dtype=np.int64)
    for b, s, w in zip(base, n_sets, ways):
        ts[b:b + 2 * s * w].reshape(s, 2 * w)[:, :w] = -1
    return {"ts": ts, "base": base, "mask": n_sets - 1, "ways": ways.copy(),
            "clock": np.zeros(2, dtype=np.int64)}
