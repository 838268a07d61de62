"""Benchmark: offsim beside every peer simulator installed here, in one run, with speed ratios.

- Caches: the mixed trace of ``bench_cache.py`` (1M accesses by default) through offsim's hierarchy
  and pycachesim's (its C core), CPU seconds, best of 3; the ratio is pycachesim's time / offsim's.
- DRAM: the streams of ``tests/peers`` served by offsim, beside the DRAMSim3 and Ramulator 2 reference
  tables (simulated time and bandwidth, as ratios offsim / peer); the tables hold no run time of the
  peers, so a speed ratio against DRAMSim3 needs ``dramsim3main`` (its plain build, on PATH), which is
  then run on the saturating streams (``tests/peers/dram_peer_tables.py`` writes its inputs).
- Systolic array: one U-list GEMM shape on a 16x16 array, output stationary, offsim's whole run against
  SCALE-Sim v3 in a fresh process (CPU seconds; SCALE-Sim stopped after ``--limit-s`` of wall time).
A peer that is not installed is named and skipped.

Run: python tests/bench/bench_peers.py [--accesses N] [--gemm MxKxN] [--limit-s S]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the peers' harnesses live in tests/peers and tests/bench

REPEATS = 3


def caches(n_accesses: int) -> None:
    from tests.bench.bench_cache import build_pycachesim, i7_920_levels, make_trace, pycachesim_pairs, run_offsim

    from simulator.memory.cache import CacheHierarchy

    lines, stores = make_trace(n_accesses)
    CacheHierarchy(i7_920_levels()).access(lines[:1000], stores[:1000])  # compile or load the kernels first
    ours = min(run_offsim(lines, stores)[0] for _ in range(REPEATS))
    line = f"caches   offsim {ours:.3f} s CPU for {n_accesses:,} accesses ({n_accesses / ours / 1e6:.2f} M/s)"
    if importlib.util.find_spec("cachesim") is None:
        print(f"{line}; pycachesim not installed: no ratio")
        return
    pairs = pycachesim_pairs(lines, stores)
    theirs = float("inf")
    for _ in range(REPEATS):
        sim, _levels = build_pycachesim()
        t0 = time.process_time()
        sim.loadstore(pairs, length=8)
        theirs = min(theirs, time.process_time() - t0)
    print(f"{line}; pycachesim {theirs:.3f} s: offsim is {theirs / ours:.2f}x as fast")


def dram() -> None:
    from tests.peers.dram_compare import HERE, PEER_SETUPS, offsim_figures, peer_dram, peer_streams, read_table

    for setup, peer in PEER_SETUPS.items():
        paths = {"DRAMSim3": HERE / f"dramsim3_{peer.config}.csv", "Ramulator 2": HERE / f"ramulator2_{peer.config}.csv"}
        tables = {name: read_table(path) for name, path in paths.items() if path.exists()}
        streams = [ours for _, ours in peer_streams(setup)]
        peer_dram(setup).service_lines(streams[0].lines[:64], streams[0].is_write[:64], 0)  # kernels first
        for stream in streams:
            dram_system = peer_dram(setup)
            start = time.process_time()
            ours = offsim_figures(dram_system, stream)
            cpu_s = time.process_time() - start
            beside = [f"{name} time x{ours['time_ns'] / float(t[stream.name]['time_ns']):.4f}"
                      for name, t in tables.items() if stream.name in t]
            print(f"dram     {setup:<16} {stream.name:<18} offsim {cpu_s:.3f} s CPU, {ours['bandwidth_gb_s']:.3f} "
                  f"GB/s; simulated time offsim/peer: {', '.join(beside) or 'no reference row'}")
    if shutil.which("dramsim3main") is None:
        print("dram     DRAMSim3 not installed (no dramsim3main on PATH): the tables give its results, not its "
              "speed; no speed ratio")
    else:
        print("dram     dramsim3main found: time it with tests/peers/dram_peer_tables.py, which writes its inputs "
              "and runs it on the same streams")


def systolic(shape: tuple[int, int, int], limit_s: float) -> None:
    if importlib.util.find_spec("scalesim") is None:
        print("systolic SCALE-Sim not installed: no ratio")
        return
    from tests.bench.bench_systolic import offsim_point, scalesim_point

    m, k, n = shape
    offsim_point(m, k, n, 16, 16, "os")  # compile or load the kernels first
    _, ours_cpu, _, _, _ = offsim_point(m, k, n, 16, 16, "os")
    wall_s, theirs_cpu, _ = scalesim_point(m, k, n, 16, 16, "os", limit_s)
    if theirs_cpu is None:
        print(f"systolic {m}x{k}x{n} on 16x16 os: offsim {ours_cpu:.3f} s CPU; SCALE-Sim stopped after "
              f"{limit_s:.0f} s wall: offsim at least {limit_s / ours_cpu:.0f}x as fast (by wall time)")
        return
    print(f"systolic {m}x{k}x{n} on 16x16 os: offsim {ours_cpu:.3f} s CPU, SCALE-Sim {theirs_cpu:.2f} s CPU "
          f"({wall_s:.1f} s wall): offsim is {theirs_cpu / ours_cpu:.0f}x as fast")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accesses", type=int, default=1_000_000)
    parser.add_argument("--gemm", default="35x35x2048", help="the systolic GEMM shape MxKxN")
    parser.add_argument("--limit-s", type=float, default=120.0, help="give SCALE-Sim up after this many seconds")
    args = parser.parse_args()
    caches(args.accesses)
    dram()
    systolic(tuple(int(x) for x in args.gemm.split("x")), args.limit_s)


if __name__ == "__main__":
    main()
