"""Benchmark: offsim CacheHierarchy against pycachesim on the same trace.

Run: ``python tests/bench/bench_cache.py [n_accesses]`` from the repository root.

Trace (default 4M accesses, seeded): each access is, with probability 1/2, the
next line of a stream sweeping 64 MiB (1M lines, wrapping) and otherwise a
uniformly random line of a separate 16 MiB region; 20 % of accesses are stores.
Hierarchy: i7-920 geometry (64 B lines, L1D 32 KiB 8-way, L2 256 KiB 8-way,
LLC 8 MiB 16-way), prefetcher off, in both simulators.

What is timed:
- offsim: ``CacheHierarchy.access(lines, is_store)`` over the whole trace in
  chunks of 65536 accesses (numpy arrays prepared beforehand).  numba compile
  time is excluded: a warm-up call on a separate hierarchy compiles (or loads
  the cached) kernels first.
- pycachesim: the single ``CacheSimulator.loadstore(pairs, length=8)`` call only.
  Building ``pairs`` (runs of consecutive loads or stores as Python lists of
  byte addresses, order preserved) is excluded, as preparing the numpy arrays is
  excluded for offsim; the per-element iteration inside loadstore is included,
  since that is pycachesim's bulk interface.
Also timed: a 64 MiB pure load stream (1M lines) through CacheHierarchy alone, and
the mixed trace through a hierarchy with MARSSx86's use-bit replacement
(``replacement="mru_bits"``), as a ratio to the LRU time.
Times are CPU seconds of this process (``time.process_time``), each the best
of ``REPEATS`` runs (fresh hierarchies, the two simulators alternating), to damp
noise from other processes sharing the machine; both simulators run
single-threaded in this process.
The two simulators differ on stores (see tests/component/test_cache_vs_pycachesim.py),
so only the load-trace miss counts are printed side by side as a sanity check.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from simulator.memory.cache import CacheGeometry, CacheHierarchy

LINE_BYTES = 64
CHUNK = 65536
REPEATS = 3


def i7_920_levels() -> list[CacheGeometry]:
    """003 Table 4 (003:L318-L322): 64 B lines, 32 KiB/8, 256 KiB/8, 8 MiB/16."""
    return [CacheGeometry("L1D", 32 * 1024, 8, LINE_BYTES),
            CacheGeometry("L2", 256 * 1024, 8, LINE_BYTES),
            CacheGeometry("LLC", 8 * 1024 * 1024, 16, LINE_BYTES)]


def make_trace(n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Mixed stream (64 MiB) / random (16 MiB) line trace and its store mask."""
    rng = np.random.default_rng(seed)
    stream_lines = 64 * 1024 * 1024 // LINE_BYTES
    random_lines = 16 * 1024 * 1024 // LINE_BYTES
    is_stream = rng.random(n) < 0.5
    stream_pos = (np.cumsum(is_stream) - 1) % stream_lines
    rand = stream_lines + rng.integers(0, random_lines, size=n)
    lines = np.where(is_stream, stream_pos, rand).astype(np.int64)
    stores = rng.random(n) < 0.2
    return lines, stores


def run_offsim(lines: np.ndarray, stores: np.ndarray, replacement: str = "lru") -> tuple[float, CacheHierarchy]:
    """Seconds to push the trace through a fresh CacheHierarchy."""
    h = CacheHierarchy(i7_920_levels(), replacement=replacement)
    t0 = time.process_time()
    for i in range(0, lines.shape[0], CHUNK):
        h.access(lines[i:i + CHUNK], stores[i:i + CHUNK])
    return time.process_time() - t0, h


def pycachesim_pairs(lines: np.ndarray, stores: np.ndarray) -> list:
    """Runs of consecutive loads / stores as (loads, stores) pairs of byte addresses."""
    addrs = (lines * LINE_BYTES).tolist()
    flags = stores.tolist()
    pairs = []
    start = 0
    n = len(addrs)
    while start < n:
        end = start + 1
        while end < n and flags[end] == flags[start]:
            end += 1
        run = addrs[start:end]
        pairs.append(([], run) if flags[start] else (run, []))
        start = end
    return pairs


def build_pycachesim():
    """pycachesim hierarchy with the i7-920 geometry, LRU, write-back, write-allocate."""
    import cachesim
    mem = cachesim.MainMemory()
    llc = cachesim.Cache("LLC", 8192, 16, LINE_BYTES, "LRU")
    mem.load_to(llc)
    mem.store_from(llc)
    l2 = cachesim.Cache("L2", 512, 8, LINE_BYTES, "LRU", store_to=llc, load_from=llc)
    l1 = cachesim.Cache("L1D", 64, 8, LINE_BYTES, "LRU", store_to=l2, load_from=l2)
    return cachesim.CacheSimulator(l1, mem), (l1, l2, llc)


def main(n: int = 4_000_000) -> None:
    lines, stores = make_trace(n)
    t0 = time.process_time()
    CacheHierarchy(i7_920_levels()).access(lines[:1000], stores[:1000])
    print(f"warm-up (numba compile or cache load, excluded): {time.process_time() - t0:.2f} s")

    try:
        build_pycachesim()
        pairs = pycachesim_pairs(lines, stores)
    except ImportError:
        pairs = None
    t_ours = t_pcs = float("inf")
    for _ in range(REPEATS):
        t_ours = min(t_ours, run_offsim(lines, stores)[0])
        if pairs is not None:
            sim, _levels = build_pycachesim()
            t0 = time.process_time()
            sim.loadstore(pairs, length=8)
            t_pcs = min(t_pcs, time.process_time() - t0)
    print(f"offsim     : {n} accesses in {t_ours:.3f} s = {n / t_ours / 1e6:.2f} M accesses/s")
    CacheHierarchy(i7_920_levels(), replacement="mru_bits").access(lines[:1000], stores[:1000])
    t_mru = min(run_offsim(lines, stores, "mru_bits")[0] for _ in range(REPEATS))
    print(f"offsim, MARSSx86 use-bit replacement: {t_mru:.3f} s = {n / t_mru / 1e6:.2f} M accesses/s"
          f" ({t_mru / t_ours:.2f}x the LRU time)")
    if pairs is None:
        print("pycachesim not installed: no comparison")
        return
    print(f"pycachesim : {n} accesses in {t_pcs:.3f} s = {n / t_pcs / 1e6:.2f} M accesses/s"
          f" ({len(pairs)} load/store runs)")
    print(f"ratio ours/pycachesim (accesses/s): {t_pcs / t_ours:.2f}  (target >= 1.0)")

    load_lines = lines[~stores]
    h2 = CacheHierarchy(i7_920_levels())
    h2.access(load_lines)
    sim2, levels2 = build_pycachesim()
    sim2.loadstore([((load_lines * LINE_BYTES).tolist(), [])], length=8)
    ours = [h2.counters()[g.name]["misses"] for g in h2.levels]
    theirs = [lv.backend.MISS_count for lv in levels2]
    print(f"load-only sub-trace misses per level: offsim {ours}, pycachesim {theirs}")

    stream = np.arange(64 * 1024 * 1024 // LINE_BYTES, dtype=np.int64)
    t_stream = float("inf")
    for _ in range(REPEATS):
        hs = CacheHierarchy(i7_920_levels())
        t0 = time.process_time()
        for i in range(0, stream.shape[0], CHUNK):
            hs.access(stream[i:i + CHUNK])
        t_stream = min(t_stream, time.process_time() - t0)
    print(f"64 MiB pure stream ({stream.shape[0]} lines): {t_stream:.3f} s"
          f" = {stream.shape[0] / t_stream / 1e6:.2f} M lines/s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000)
