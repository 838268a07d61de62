"""Benchmark: a 100-point study of tiny points on 1 and 2 local workers.

Prints the wall time of each run (validation, pool, storing, table, figures and
report included), the speedup of 2 workers over 1, the runner's overhead per
point (wall time minus the sum of the points' own simulation times, divided by
the number of points), the driver process's own CPU time per point (which does
not depend on other load on the machine) and the time of a re-run that finds
every point stored.

Run: python tests/bench/bench_study.py [--points-per-axis 10]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from simulator.studies.sweep import run_study

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = ROOT / "configs" / "systems" / "i7_920_ddr3.yaml"


def write_study(directory: Path, per_axis: int, base_kib: int = 16) -> Path:
    """A per_axis x per_axis study of read streams of base_kib x (1..per_axis) KiB over 1..per_axis miss buffers."""
    (directory / "tiny.yaml").write_text("name: tiny\ngenerator: stream\nparams: {kind: read, array_bytes: 16 KiB}\n")
    sizes = ", ".join(f'"{base_kib * (i + 1)} KiB"' for i in range(per_axis))
    misses = ", ".join(str(i + 1) for i in range(per_axis))
    path = directory / "bench_study.yaml"
    path.write_text(f"name: bench\nsystem: {SYSTEM}\nworkload: tiny.yaml\nsweep:\n  product:\n"
                    f"    set.host.max_outstanding_misses: [{misses}]\n    param.array_bytes: [{sizes}]\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points-per-axis", type=int, default=10)
    parser.add_argument("--base-kib", type=int, default=16,
                        help="stream size step in KiB: 16 gives tiny points (runner overhead), "
                             "1024 gives points of tens of ms (parallel speedup)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        study = write_study(Path(tmp), args.points_per_axis, args.base_kib)
        n = args.points_per_axis ** 2
        print(f"study: {n} points (read streams of {args.base_kib}-{args.base_kib * args.points_per_axis} KiB), "
              f"{os.cpu_count()} CPUs")
        (Path(tmp) / "warm").mkdir()  # imports, compiled kernels and matplotlib loaded once, not timed
        run_study(write_study(Path(tmp) / "warm", 2), Path(tmp) / "warm" / "out", workers=1, progress=False)
        walls = {}
        for workers in (1, 2):
            out = Path(tmp) / f"w{workers}"
            cpu0 = time.process_time()
            outcome = run_study(study, out, workers=workers, progress=False)
            driver_cpu_s = time.process_time() - cpu0
            assert len(outcome.simulated) == n and not outcome.failed
            sim_s = sum(outcome.sim_wall_s.values())
            walls[workers] = outcome.wall_s
            print(f"workers={workers}: wall {outcome.wall_s:.2f} s, sum of point simulation times {sim_s:.2f} s "
                  f"({1e3 * sim_s / n:.1f} ms/point), overhead (wall - sum) / points "
                  f"{1e3 * (outcome.wall_s - sim_s) / n:.1f} ms, per worker-slot (wall x workers - sum) / points "
                  f"{1e3 * (outcome.wall_s * workers - sim_s) / n:.1f} ms, driver CPU {1e3 * driver_cpu_s / n:.1f} ms")
        print(f"speedup 2 workers / 1 worker: {walls[1] / walls[2]:.2f}x")
        t0 = time.perf_counter()
        again = run_study(study, Path(tmp) / "w2", workers=2, progress=False)
        assert len(again.reused) == n and not again.simulated
        print(f"re-run, all {n} points stored: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
