"""Peak memory of one FMM U-list point at N = 6e4, 2.4e5 and 9.6e5: flat in the length of its trace.

Target (issue 43): the peak resident memory of a q = 4 point at N = 9.6e5 within 10 % of the one at
N = 6e4. Each point runs as the FMM study runs it (``simulator.studies.fmm.placement.run_point``: the tree,
the trace streamed in batches into the replay), each in a fresh process; prints, per N, the trace's rows,
the peak resident memory of the process, its ratio to the N = 6e4 peak and to the target, and the CPU
seconds of the point. A process that only imports the same modules gives the floor beside them.
Run: python tests/bench/bench_fmm_memory.py [PLACEMENT VARIANT]   (default: lap-dram orig)
"""

from __future__ import annotations

import multiprocessing
import resource
import sys
import time

SIZES = (60_000, 240_000, 960_000)
TARGET_RATIO = 1.10
SYSTEMS = {"cpu": "configs/systems/i7_920_ddr3.yaml", "lap-dram": "configs/systems/lap_dram.yaml",
           "lap-llc": "configs/systems/lap_llc.yaml", "lap-near-memory": "configs/systems/lap_near_memory.yaml"}


def peak_bytes() -> int:
    """Peak resident memory of this process, B (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def imports_only(_: object) -> int:
    """Peak resident bytes of a process that imports the point's modules and runs nothing."""
    import simulator.studies.fmm.placement  # noqa: F401
    return peak_bytes()


def one_point(args: tuple[int, str, str]) -> tuple[int, int, float]:
    """(trace rows, peak resident bytes, CPU s) of one q = 4 point of ``n_points`` in this process."""
    from simulator.studies.fmm.placement import PlacementPoint, run_point

    n_points, placement, variant = args
    point = PlacementPoint(4, placement, SYSTEMS[placement], "cpu" if placement == "cpu" else "lap", variant,
                           n_points, "table2", 8 * 2**20, 0.5)
    start = time.process_time()
    record = run_point(point)
    return record["rows"], peak_bytes(), time.process_time() - start


def main(argv: list[str]) -> None:
    placement, variant = argv if argv else ("lap-dram", "orig")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        floor = pool.apply(imports_only, (None,))
    print(f"{placement} {variant}, q = 4: imports alone peak at {floor / 2**20:.0f} MiB")
    base = None
    for n in SIZES:
        with ctx.Pool(1) as pool:  # a fresh process per point: the peak is that point's
            rows, peak, cpu_s = pool.apply(one_point, ((n, placement, variant),))
        base = base or peak
        ratio = peak / base
        print(f"N = {n:9,d}  rows {rows:7d}  peak {peak / 2**20:5.0f} MiB  / N = {SIZES[0]:,}: {ratio:.3f} "
              f"(/ target {ratio / TARGET_RATIO:.2f})  above imports {(peak - floor) / 2**20:5.0f} MiB  "
              f"CPU {cpu_s:6.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
