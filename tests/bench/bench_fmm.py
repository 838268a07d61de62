"""Speed and memory of one FMM U-list point (q = 4, N = 2.4e5, Table 2 tree).

Targets (issue 3): one q = 4 point, generated and simulated, in <= 5 s of wall time, peaking at
<= 2 GiB. Each point runs REPEATS times, each in a fresh process; prints the median seconds per
phase, the median and slowest whole point, the largest peak resident memory, and their ratios
to the targets for the LAP-DRAM Orig, LAP-LLC pipelined and CPU-only points. Beside each run it
measures a yardstick of the machine's Python speed (``sum(range(10**6))``, best of 5) and prints
the median of each run's time over its yardstick, so that figures from machines of differing
speed, or from one machine whose speed drifts, can be compared.
Run: python tests/bench/bench_fmm.py
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import time
import timeit

TARGET_S = 5.0
REPEATS = 3
TARGET_PEAK_BYTES = 2 * 2**30


def one_point(args: tuple[str, str, str]) -> tuple[int, float, float, int]:
    """(trace rows, generate s, simulate s, peak resident bytes of this process)."""
    from simulator.runner import simulate_trace
    from workloads.fmm_ulist import fmm_ulist

    system, placement, variant = args
    t0 = time.perf_counter()
    trace = fmm_ulist(4, 240_000, "table2", variant, placement)
    t1 = time.perf_counter()
    simulate_trace(system, trace)
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    return trace.num_rows, t1 - t0, t2 - t1, peak


def yardstick_s() -> float:
    """Seconds of ``sum(range(10**6))``, the best of 5: the machine's plain Python speed."""
    return min(timeit.repeat("sum(range(10**6))", number=10, repeat=5)) / 10


def main() -> None:
    ctx = multiprocessing.get_context("spawn")
    for point in (("configs/systems/lap_dram.yaml", "lap", "orig"),
                  ("configs/systems/lap_llc.yaml", "lap", "pipelining"),
                  ("configs/systems/i7_920_ddr3.yaml", "cpu", "orig")):
        runs, yards = [], []
        for _ in range(REPEATS):
            yards.append(yardstick_s())  # beside each run: the machine's speed may drift between runs
            with ctx.Pool(1) as pool:
                runs.append(pool.apply(one_point, (point,)))
        rows = runs[0][0]
        gen_s = statistics.median(r[1] for r in runs)
        sim_s = statistics.median(r[2] for r in runs)
        totals = [r[1] + r[2] for r in runs]
        total_s, slowest_s = statistics.median(totals), max(totals)
        in_yards = statistics.median(t / y for t, y in zip(totals, yards))
        peak = max(r[3] for r in runs)
        _, placement, variant = point
        print(f"{placement:4s} {variant:11s} rows {rows:7d}  generate {gen_s:5.2f} s  simulate {sim_s:5.2f} s  "
              f"point {total_s:5.2f} s (/ target {total_s / TARGET_S:.2f}; slowest of {REPEATS} "
              f"{slowest_s:5.2f} s, {slowest_s / TARGET_S:.2f})  {in_yards:.0f} yardsticks "
              f"(yardstick {min(yards) * 1e3:.1f} to {max(yards) * 1e3:.1f} ms)  peak {peak / 2**20:6.0f} MiB "
              f"(/ target {peak / TARGET_PEAK_BYTES:.2f})")


if __name__ == "__main__":
    main()
