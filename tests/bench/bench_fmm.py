"""Speed and memory of one FMM U-list point (q = 4, N = 2.4e5, Table 2 tree).

Targets (issue 3): one q = 4 point, generated and simulated, in <= 5 s of wall time, peaking at
<= 2 GiB. Each point runs REPEATS times, each in a fresh process; prints the median seconds per
phase, the median and slowest whole point, the largest peak resident memory, and their ratios
to the targets for the LAP-DRAM Orig, LAP-LLC pipelined and CPU-only points. Beside each run it
measures a yardstick of the machine's Python speed (``sum(range(10**6))``, best of 5) and prints
the median of each run's time over its yardstick, so that figures from machines of differing
speed, or from one machine whose speed drifts, can be compared.

Start-up (issue 43): the LAP-DRAM Orig point as whole ``offsim run`` processes and ``offsim validate`` of
its two files, each REPEATS times, their median wall and CPU seconds (the point against a 1 s target);
and, in fresh processes, the import of the modules ``offsim run`` loads before it generates (median, s)
and the first-use overhead of a run: a tiny FMM point (q = 1, 4,000 points) simulated twice in one
process, the first time less the second (compiled kernels loaded from their on-disk cache, and the
libraries they and pyarrow load on first use); imports and first use against a 0.3 s target. These processes
may write and read Python's bytecode cache, as a user's do (``PYTHONDONTWRITEBYTECODE`` is left out of their
environment), and one untimed run of each kind goes first, so that no timed run compiles a module.
Run: python tests/bench/bench_fmm.py [--startup-only]
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

TARGET_S = 5.0
REPEATS = 3
TARGET_PEAK_BYTES = 2 * 2**30
POINT_PROCESS_TARGET_S = 1.0  # a whole fresh ``offsim run`` of the q = 4 point (issue 43)
STARTUP_TARGET_S = 0.3  # a run's imports and kernel loading together (issue 43)
ROOT = Path(__file__).resolve().parents[2]
START_SYSTEM = "configs/systems/lap_dram.yaml"
START_WORKLOAD = "configs/workloads/fmm_ulist_q4.yaml"
#: a fresh process: the import of what ``offsim run`` loads before it generates, then a tiny FMM point twice
_STARTUP_PROBE = """
import json, time
t0 = time.perf_counter()
import simulator.cli, workloads.spec, simulator.runner, workloads.registry, workloads.fmm_ulist
t1 = time.perf_counter()
from simulator.runner import load_system, simulate_trace
from workloads.fmm_ulist import fmm_ulist
system = load_system("configs/systems/lap_dram.yaml")
times = []
for _ in range(2):
    t = time.perf_counter()
    simulate_trace(system, fmm_ulist(1, 4000, "uniform", "orig", "lap"))
    times.append(time.perf_counter() - t)
print(json.dumps({"imports_s": t1 - t0, "first_use_s": times[0] - times[1]}))
"""


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


#: the start-up processes' environment: this one's, with Python's bytecode cache allowed (module docstring)
_USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def process_s(argv: list[str]) -> tuple[float, float]:
    """(wall s, CPU s) of ``python -m simulator.cli ARGV`` as a process of its own, from the project root."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "simulator.cli", *argv], cwd=ROOT, check=True, capture_output=True,
                   env=_USER_ENV)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup() -> None:
    """The start-up figures of the module docstring."""
    with tempfile.TemporaryDirectory() as tmp:  # the first run of each kind untimed: it may compile modules
        runs = [process_s(["run", START_SYSTEM, START_WORKLOAD, "--out", str(Path(tmp) / f"run{i}")])
                for i in range(REPEATS + 1)][1:]
    checks = [process_s(["validate", START_SYSTEM, START_WORKLOAD]) for _ in range(REPEATS + 1)][1:]
    probes = [json.loads(subprocess.run([sys.executable, "-c", _STARTUP_PROBE], cwd=ROOT, check=True, env=_USER_ENV,
                                        capture_output=True, text=True).stdout.splitlines()[-1])
              for _ in range(REPEATS + 1)][1:]
    for what, figures, target in (("offsim run (q = 4 point)", runs, POINT_PROCESS_TARGET_S),
                                  ("offsim validate", checks, None)):
        wall, cpu = statistics.median(f[0] for f in figures), statistics.median(f[1] for f in figures)
        ratio = f"; / target {target} s: {wall / target:.2f}" if target else ""
        print(f"{what:<25} wall {wall:5.2f} s  CPU {cpu:5.2f} s  (median of {REPEATS}{ratio})")
    imports = statistics.median(p["imports_s"] for p in probes)
    first_use = statistics.median(p["first_use_s"] for p in probes)
    print(f"{'run imports':<25} {imports:5.2f} s  first use (kernels loaded) {first_use:5.2f} s  together "
          f"{imports + first_use:5.2f} s (/ target {STARTUP_TARGET_S} s: {(imports + first_use) / STARTUP_TARGET_S:.2f})")


if __name__ == "__main__":
    if "--startup-only" not in sys.argv[1:]:
        main()
    startup()
