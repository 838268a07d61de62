"""Compiled (numba) kernels of the exact cache hierarchy.

The state of all levels lives in one flat int64 array ``ts``.  Level ``l``
starts at ``base[l]``; set ``s`` of it is the ``ways[l]`` words starting at
``base[l] + s * ways[l]``, kept in LRU order: most recently used first.  A word
is ``2 * line + dirty`` for a valid way and ``-1`` for an invalid one; invalid
ways are always at the end of the set, so the last word of a set is the victim
of a fill (an invalid way if there is one, else the least recently used line).
A hit moves its word to the front; a fill shifts the set by one and puts the new
word in front.  No LRU stamps are needed, and a 16-way set is two memory lines.

The hierarchy may instead replace like MARSSx86's caches (``"mru_bits"``; its
``FullyAssociativeTags`` in ptlsim/lib/logic.h, the "MRU bit vector" pseudo-LRU of
Al-Zoubi et al.), at every level: the words stay in their ways, and ``mru``
(uint64, one per word of ``ts``; the set starting at word ``s`` uses ``mru[s]``)
holds a bit per way, set when the way is used.  The victim of a fill is the
lowest way whose bit is clear (way 0 when all are set, which clears them); when a
fill sets the last clear bit, all bits but the filled way's are cleared.  A hit
sets its bit and clears none.  An invalidated way is -1 with its bit clear, and
is refilled only when it is the lowest clear way.  Under LRU the kernels get
``mru = None``, and numba compiles them without the use-bit code (a policy test
per access made the LRU kernels 2.5x slower).

``clock`` (int64[2]): index 1 is the LRU clock of the prefetcher's stream table.
``counts`` (int64[n_levels, N_COUNTERS]) are the cumulative per-level counters in
the column order of ``COUNTER_NAMES`` in ``cache.py``; ``dram`` (int64[2]) the
cumulative DRAM reads and writes (lines).

DRAM line streams are appended to the caller's buffers ``rd_buf``/``wr_buf``
with fill levels in ``pos`` (int64[2]).  A bulk call stops early, before an
access that might overflow them, and returns how many inputs it processed; the
caller empties the buffers and calls again.  The semantics are documented in
``cache.py`` and mirrored by ``cache_reference.py``.

The maintenance kernels and ``_write_back`` borrow their array arguments
(``array_kernel.borrowed``), so that the inlined helpers they call for each line
count no references; all but ``mru``, which is None under LRU (numba prunes the
use-bit code on an argument that is None, not on a borrowed local).
"""

from __future__ import annotations

import numpy as np

from simulator.kernel_cache import njit
from simulator.memory.array_kernel import borrowed, count_levels_by_kind

# Column indices into ``counts`` (order of cache.COUNTER_NAMES).
C_LOADS = 0
C_STORES = 1
C_HITS = 2
C_MISSES = 3
C_WB_OUT = 4
C_WB_IN = 5
C_PREFETCHES = 6
C_FILLS = 7
C_EVICTIONS = 8
C_INVALIDATIONS = 9
C_PROBES = 10
C_ALLOCATIONS = 11
N_COUNTERS = 12

REPLACEMENTS = ("lru", "mru_bits")   # replacement policies of a hierarchy
MAX_MRU_BITS_WAYS = 63   # one uint64 of use bits per set (a shift by 64 is undefined)
MAX_CACHE_LEVELS = 126   # levels of a hierarchy: the int8 served-by codes hold each level and DRAM


# Set indices are unsigned: numba then skips the negative-index (wraparound)
# handling on every array access, which nearly halves the cost of a set scan.
# Mixed signed/unsigned arithmetic would turn into floats, hence the casts.
_U1 = np.uint64(1)


@njit(cache=True, inline="always")
def _set_start(base, mask, ways, level, line):
    """Index (uint64) of the first (most recent) word of ``line``'s set at ``level``."""
    return np.uint64(base[level] + (line & mask[level]) * ways[level])


@njit(cache=True, inline="always")
def _find(ts, start, w, line):
    """Position (0 = most recent) of ``line`` in the set at ``start`` of ``w`` ways, or -1.

    The most recent way first (a run of hits to one line), then a scan of the whole set without an early exit,
    which the compiler turns into vector compares (a miss, the costly case, then costs a few instructions
    instead of one branch per way), and only on a hit the scan for its position."""
    key = 2 * line + 1
    if (ts[start] | 1) == key:
        return np.int64(0)
    hit = False
    for q in range(start, start + np.uint64(w)):
        hit |= (ts[q] | 1) == key
    if not hit:
        return -1
    for q in range(start + _U1, start + np.uint64(w)):
        if (ts[q] | 1) == key:
            return np.int64(q - start)
    return -1


@njit(cache=True, inline="always")
def _to_front(ts, start, p, word):
    """Move the word at position ``p`` to the front, replacing it by ``word``."""
    q = start + np.uint64(p)
    while q > start:
        ts[q] = ts[q - _U1]
        q -= _U1
    ts[start] = word


@njit(cache=True, inline="always")
def _push_front(ts, start, w, word):
    """Insert ``word`` in front, dropping the last word; return the dropped word."""
    q = start + np.uint64(w) - _U1
    last = ts[q]
    while q > start:
        ts[q] = ts[q - _U1]
        q -= _U1
    ts[start] = word
    return last


@njit(cache=True, inline="always")
def _remove(ts, start, w, p):
    """Remove the word at position ``p`` (an invalid way goes to the end); return it."""
    q = start + np.uint64(p)
    word = ts[q]
    end = start + np.uint64(w) - _U1
    while q < end:
        ts[q] = ts[q + _U1]
        q += _U1
    ts[end] = -1
    return word


@njit(cache=True, inline="always")
def _touch(ts, mru, start, p, word):
    """Use the way at position ``p`` of the set at ``start`` (a hit), storing ``word`` there."""
    if mru is None:
        _to_front(ts, start, p, word)
    else:
        ts[start + np.uint64(p)] = word
        mru[start] |= np.uint64(1) << np.uint64(p)


# The index of a word's only set bit by a de Bruijn sequence: the top six bits of the product are distinct for
# each of the 64 powers of two, so one multiply and one lookup replace a loop over the bits.
_DE_BRUIJN = 0x03F79D71B4CB0A89
_DE_BRUIJN_INDEX = np.zeros(64, np.uint64)
for _i in range(64):
    _DE_BRUIJN_INDEX[((_DE_BRUIJN << _i) % 2**64) >> 58] = _i


@njit(cache=True, inline="always")
def _lowest_bit_index(x):
    """Index (uint64) of the only set bit of ``x`` (a power of two, uint64)."""
    return _DE_BRUIJN_INDEX[(x * np.uint64(_DE_BRUIJN)) >> np.uint64(58)]


@njit(cache=True, inline="always")
def _insert(ts, mru, start, w, word):
    """Put ``word`` (of a line absent from the set at ``start``) in the set, evicting the victim;
    return the victim's word (-1: an invalid way)."""
    if mru is None:
        return _push_front(ts, start, w, word)
    bits = mru[start]
    full = (np.uint64(1) << np.uint64(w)) - _U1
    v = np.uint64(0)
    if bits == full:
        bits = np.uint64(0)
    else:
        v = _lowest_bit_index(~bits & (bits + _U1))  # the lowest clear bit
    q = start + v
    dropped = ts[q]
    ts[q] = word
    bits |= _U1 << v
    if bits == full:
        bits = _U1 << v
    mru[start] = bits
    return dropped


@njit(cache=True, inline="always")
def _drop(ts, mru, start, w, p):
    """Invalidate the way at position ``p`` of the set at ``start``; return its word."""
    if mru is None:
        return _remove(ts, start, w, p)
    q = start + np.uint64(p)
    word = ts[q]
    ts[q] = -1
    mru[start] &= ~(_U1 << np.uint64(p))
    return word


@njit(cache=True, inline="always")
def _position(ts, mru, w, line, start):
    """Position of ``line``, just used or filled, in the set at ``start``: the front under LRU."""
    if mru is None:
        return np.int64(0)
    return _find(ts, start, w, line)


@njit(cache=True)
def _write_back(ts, base, mask, ways, mru, counts, dram, wr_buf, pos, level, line):
    """Write dirty ``line`` into ``level`` (DRAM when ``level == n_levels``), cascading.

    Used by the maintenance kernels; ``access_kernel`` carries its own copy of
    this loop (see there).
    """
    ts, base, mask, ways, counts = borrowed(ts), borrowed(base), borrowed(mask), borrowed(ways), borrowed(counts)
    dram, wr_buf, pos = borrowed(dram), borrowed(wr_buf), borrowed(pos)
    n_levels = base.shape[0]
    while level < n_levels:
        counts[level, C_WB_IN] += 1
        w = ways[level]
        start = _set_start(base, mask, ways, level, line)
        p = _find(ts, start, w, line)
        if p >= 0:
            _touch(ts, mru, start, p, 2 * line + 1)
            break
        word = _insert(ts, mru, start, w, 2 * line + 1)
        counts[level, C_ALLOCATIONS] += 1
        if word >= 0:
            counts[level, C_EVICTIONS] += 1
        if word < 0 or (word & 1) == 0:
            break
        counts[level, C_WB_OUT] += 1
        line = word >> 1
        level += 1
    if level == n_levels:
        wr_buf[pos[1]] = line
        pos[1] += 1
        dram[1] += 1


@njit(cache=True)
def access_kernel(lines, stores, store_mode, start, start_level,
                  ts, base, mask, ways, mru, clock, counts, dram,
                  rd_buf, wr_buf, pos, served_by, pf_cfg, pf_last, pf_stamp):
    """Demand loads/stores of ``lines[start:]`` entering at ``start_level``.

    ``store_mode``: 0 all loads, 1 all stores, 2 per access from ``stores`` (uint8).
    Returns the index of the first access not processed (buffers nearly full).
    The demand counters (loads, stores, hits, misses) are added afterwards by
    ``demand_counts`` from ``served_by``.

    One function on purpose: calling (or letting numba inline) helpers that
    take many arrays and contain loops made the miss path several times slower,
    so the fill / write-back cascade and the stream prefetcher are written out
    here.  Each access runs as a series of "fill jobs": first the demand line,
    then each line the prefetcher issues, all through the same fill code.
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
    k = start_level
    n = lines.shape[0]
    for j in range(start, n):
        if pos[0] + per_access_reads > rd_cap or pos[1] + per_access_writes > wr_cap:
            return j
        x = lines[j]
        if store_mode == 2:
            is_store = stores[j] != 0
        else:
            is_store = store_mode == 1
        served = n_levels
        for i in range(k, n_levels):
            st = _set_start(base, mask, ways, i, x)
            p = _find(ts, st, ways[i], x)
            if p >= 0:
                _touch(ts, mru, st, p, ts[st + np.uint64(p)])
                served = i
                break
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
                st = _set_start(base, mask, ways, i, job_line)
                word = _insert(ts, mru, st, ways[i], 2 * job_line)
                counts[i, C_FILLS] += 1
                counts[i, C_ALLOCATIONS] += 1
                if job_is_prefetch:
                    counts[i, C_PREFETCHES] += 1
                if word >= 0:
                    counts[i, C_EVICTIONS] += 1
                if word >= 0 and (word & 1) != 0:
                    counts[i, C_WB_OUT] += 1
                    level = i + 1
                    line = word >> 1
                    while level < n_levels:
                        counts[level, C_WB_IN] += 1
                        st = _set_start(base, mask, ways, level, line)
                        p = _find(ts, st, ways[level], line)
                        if p >= 0:
                            _touch(ts, mru, st, p, 2 * line + 1)
                            break
                        word = _insert(ts, mru, st, ways[level], 2 * line + 1)
                        counts[level, C_ALLOCATIONS] += 1
                        if word >= 0:
                            counts[level, C_EVICTIONS] += 1
                        if word < 0 or (word & 1) == 0:
                            break
                        counts[level, C_WB_OUT] += 1
                        line = word >> 1
                        level += 1
                    if level == n_levels:
                        wr_buf[pos[1]] = line
                        pos[1] += 1
                        dram[1] += 1
            if not job_is_prefetch:
                if is_store:
                    # x was just used or filled at level k
                    st = _set_start(base, mask, ways, k, x)
                    ts[st + np.uint64(_position(ts, mru, ways[k], x, st))] |= 1
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
                st = _set_start(base, mask, ways, pf_level, y)
                if _find(ts, st, ways[pf_level], y) >= 0:
                    continue
                job_served = n_levels
                for i in range(pf_level + 1, n_levels):
                    st = _set_start(base, mask, ways, i, y)
                    p = _find(ts, st, ways[i], y)
                    if p >= 0:
                        _touch(ts, mru, st, p, ts[st + np.uint64(p)])
                        job_served = i
                        break
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
    return n


@njit(cache=True)
def _remove_from_levels(ts, base, mask, ways, mru, counts, x, n_upto, probe_absent=True):
    """Drop line ``x`` from levels 0..n_upto-1 (a probe of each, or only of those that hold it unless
    ``probe_absent``; an invalidation where present); return the nearest level that held it dirty, -1
    if none did, or -2 (with ``probe_absent`` off) if no level held it."""
    ts, base, mask, ways, counts = borrowed(ts), borrowed(base), borrowed(mask), borrowed(ways), borrowed(counts)
    top = -1 if probe_absent else -2
    for i in range(n_upto):
        if probe_absent:
            counts[i, C_PROBES] += 1
        st = _set_start(base, mask, ways, i, x)
        p = _find(ts, st, ways[i], x)
        if p >= 0:
            if not probe_absent:
                counts[i, C_PROBES] += 1
                top = -1 if top == -2 else top
            counts[i, C_INVALIDATIONS] += 1
            if (_drop(ts, mru, st, ways[i], p) & 1) != 0 and top < 0:
                top = i
    return top


@njit(cache=True)
def flush_kernel(lines, start, ts, base, mask, ways, mru, counts, dram, wr_buf, pos):
    """clflush ``lines[start:]``; returns the index of the first line not processed."""
    lines, ts, base, mask, ways = borrowed(lines), borrowed(ts), borrowed(base), borrowed(mask), borrowed(ways)
    counts, dram, wr_buf, pos = borrowed(counts), borrowed(dram), borrowed(wr_buf), borrowed(pos)
    n_levels = base.shape[0]
    cap = wr_buf.shape[0]
    n = lines.shape[0]
    for j in range(start, n):
        if pos[1] + 1 > cap:
            return j
        x = lines[j]
        top = _remove_from_levels(ts, base, mask, ways, mru, counts, x, n_levels)
        if top >= 0:
            counts[top, C_WB_OUT] += 1
            wr_buf[pos[1]] = x
            pos[1] += 1
            dram[1] += 1
    return n


# what ``evict_down_kernel`` does with a dirty copy it drops
DIRTY_INTO_TARGET = 0  # written into ``target``, allocated there if absent (cascading as ``_write_back``)
DIRTY_MERGED = 1       # merged into the first level from ``target`` down that holds the line, else written to DRAM
DIRTY_DISCARDED = 2    # dropped without write-back


@njit(cache=True)
def evict_down_kernel(lines, start, target, probe_absent, dirty_mode, ts, base, mask, ways, mru, counts, dram,
                      wr_buf, pos, found):
    """Drop ``lines[start:]`` from the levels above ``target``, a dirty copy handled as ``dirty_mode`` says
    (DIRTY_*); returns the next index.

    ``evict_to_llc``: ``target`` is the last level, every level above it is probed, and a dirty copy goes into
    it. Another core's write, zero or evict_llc (``snoop_invalidate``): ``target`` is the first shared level,
    only the private levels that hold a line are probed (a directory knows the sharers), and ``found[0]``
    counts the lines some level held; another core's flush merges a dirty copy so that nothing is allocated
    (no other line is pushed out; the flush then writes the shared copy to DRAM once), and its invalidate
    discards it."""
    lines, ts, base, mask, ways = borrowed(lines), borrowed(ts), borrowed(base), borrowed(mask), borrowed(ways)
    counts, dram, wr_buf, pos = borrowed(counts), borrowed(dram), borrowed(wr_buf), borrowed(pos)
    found = borrowed(found)
    n_levels = base.shape[0]
    cap = wr_buf.shape[0]
    n = lines.shape[0]
    for j in range(start, n):
        if pos[1] + 1 > cap:
            return j
        x = lines[j]
        top = _remove_from_levels(ts, base, mask, ways, mru, counts, x, target, probe_absent)
        if top > -2:
            found[0] += 1
        if top >= 0 and dirty_mode != DIRTY_DISCARDED:
            counts[top, C_WB_OUT] += 1
            level = target
            if dirty_mode == DIRTY_MERGED:  # the first level from target down holding the line, else DRAM
                while level < n_levels and _find(ts, _set_start(base, mask, ways, level, x), ways[level], x) < 0:
                    level += 1
            _write_back(ts, base, mask, ways, mru, counts, dram, wr_buf, pos, level, x)
    return n


@njit(cache=True)
def zero_kernel(lines, start, start_level, ts, base, mask, ways, mru, counts, dram, wr_buf, pos,
                served_by):
    """Full-line zeroing writes of ``lines[start:]`` at ``start_level``; returns the next index.

    Present at ``start_level``: the line becomes dirty and most recent (a store
    hit).  Absent: it is allocated there dirty without reading from below (a
    store miss; no lower level is looked up), and a dirty victim cascades down
    as in ``_write_back``.  ``served_by`` is ``start_level`` for every line.
    """
    lines, ts, base, mask, ways = borrowed(lines), borrowed(ts), borrowed(base), borrowed(mask), borrowed(ways)
    counts, dram, wr_buf, pos = borrowed(counts), borrowed(dram), borrowed(wr_buf), borrowed(pos)
    served_by = borrowed(served_by)
    cap = wr_buf.shape[0]
    k = start_level
    w = ways[k]
    n = lines.shape[0]
    for j in range(start, n):
        if pos[1] + 1 > cap:
            return j
        x = lines[j]
        counts[k, C_STORES] += 1
        served_by[j] = k
        st = _set_start(base, mask, ways, k, x)
        p = _find(ts, st, w, x)
        if p >= 0:
            counts[k, C_HITS] += 1
            _touch(ts, mru, st, p, 2 * x + 1)
            continue
        counts[k, C_MISSES] += 1
        word = _insert(ts, mru, st, w, 2 * x + 1)
        counts[k, C_ALLOCATIONS] += 1
        if word >= 0:
            counts[k, C_EVICTIONS] += 1
        if word >= 0 and (word & 1) != 0:
            counts[k, C_WB_OUT] += 1
            _write_back(ts, base, mask, ways, mru, counts, dram, wr_buf, pos, k + 1, word >> 1)
    return n


@njit(cache=True)
def invalidate_kernel(lines, level_mask, ts, base, mask, ways, mru, counts):
    """Drop ``lines`` without write-back from the levels with ``level_mask[l] != 0``."""
    lines, level_mask, ts, base = borrowed(lines), borrowed(level_mask), borrowed(ts), borrowed(base)
    mask, ways, counts = borrowed(mask), borrowed(ways), borrowed(counts)
    n_levels = base.shape[0]
    for j in range(lines.shape[0]):
        x = lines[j]
        for i in range(n_levels):
            if level_mask[i] == 0:
                continue
            counts[i, C_PROBES] += 1
            st = _set_start(base, mask, ways, i, x)
            p = _find(ts, st, ways[i], x)
            if p >= 0:
                counts[i, C_INVALIDATIONS] += 1
                _drop(ts, mru, st, ways[i], p)


@njit(cache=True)
def demand_counts(served_by, stores, store_mode, start_level, counts):
    """Add the demand counters (loads, stores, hits, misses) of one access call; return the accesses
    served by each level and by DRAM (int64[n_levels + 1]).

    An access served by level ``s`` (``n_levels`` = DRAM) that entered at
    ``start_level`` reached levels ``start_level .. min(s, n_levels - 1)``,
    missed in those above ``s`` and hit at ``s``.
    """
    n_levels = counts.shape[0]
    by_kind = count_levels_by_kind(served_by, stores, store_mode, n_levels + 1)
    for kind in range(2):
        reached = 0
        for i in range(n_levels - 1, start_level - 1, -1):
            reached += by_kind[kind, i + 1] if i == n_levels - 1 else 0
            reached += by_kind[kind, i]
            counts[i, C_LOADS + kind] += reached
            counts[i, C_HITS] += by_kind[kind, i]
            counts[i, C_MISSES] += reached - by_kind[kind, i]
    return by_kind[0] + by_kind[1]


@njit(cache=True)
def way_state(ts, base, mask, ways, level, line):
    """-1 if ``line`` is absent at ``level``, else its dirty bit (0 or 1)."""
    st = _set_start(base, mask, ways, level, line)
    p = _find(ts, st, ways[level], line)
    if p < 0:
        return -1
    return ts[st + np.uint64(p)] & 1


def core_states(n_sets: np.ndarray, ways: np.ndarray, shared: np.ndarray, n_cores: int) -> list[dict[str, np.ndarray]]:
    """The states of ``n_cores`` cores' hierarchies over one array ``ts``: each core has its own copy of
    the levels with ``shared[l] == 0`` and all cores the one copy of the others (the last levels).
    A core's ``base`` points at its copies; ``ts``, ``mru`` and ``mask``/``ways`` are the same arrays
    for all, ``clock`` is the core's own."""
    n_sets = np.asarray(n_sets, dtype=np.int64)
    ways = np.asarray(ways, dtype=np.int64)
    n_private = int(np.count_nonzero(np.asarray(shared) == 0))
    sizes = n_sets * ways
    private_words = int(sizes[:n_private].sum())
    total = n_cores * private_words + int(sizes[n_private:].sum())
    ts = np.full(total, -1, dtype=np.int64)
    mru = np.zeros(total, dtype=np.uint64)
    offsets = np.zeros(len(sizes), dtype=np.int64)
    offsets[1:] = np.cumsum(sizes)[:-1]
    states = []
    for core in range(n_cores):
        base = offsets.copy()
        base[:n_private] += core * private_words
        base[n_private:] += (n_cores - 1) * private_words
        states.append({"ts": ts, "base": base, "mask": n_sets - 1, "ways": ways, "mru": mru,
                       "clock": np.zeros(2, dtype=np.int64)})
    return states


def new_state(n_sets: np.ndarray, ways: np.ndarray) -> dict[str, np.ndarray]:
    """Empty state arrays for levels of ``n_sets[l]`` sets of ``ways[l]`` ways (``mru``: the
    use bits of the "mru_bits" policy, unused under LRU)."""
    n_sets = np.asarray(n_sets, dtype=np.int64)
    ways = np.asarray(ways, dtype=np.int64)
    sizes = n_sets * ways
    base = np.zeros(len(sizes), dtype=np.int64)
    base[1:] = np.cumsum(sizes)[:-1]
    return {"ts": np.full(int(sizes.sum()), -1, dtype=np.int64), "base": base,
            "mask": n_sets - 1, "ways": ways.copy(), "mru": np.zeros(int(sizes.sum()), dtype=np.uint64),
            "clock": np.zeros(2, dtype=np.int64)}
