"""Benchmark: a time-tiled 2D stencil of 4096^2 points x 64 steps on the host (target <= 20 s).

Prints trace generation and simulation wall times, trace rows, simulated time and the
DRAM traffic against models.stencil.dram_traffic_words. Run:
python tests/bench/bench_stencil.py
"""

from __future__ import annotations

import time

from models.stencil import STENCILS, TileShape, dram_traffic_words
from simulator.runner import load_system, simulate_trace
from simulator.config.loader import PROJECT_ROOT
from workloads.stencil import time_tiled_sweep

TARGET_S = 20.0


def main() -> None:
    grid, steps, shape = (4096, 4096), 64, TileShape("hhc_2d", 16, (64, 512))
    system = load_system(PROJECT_ROOT / "configs" / "systems" / "i7_920_ddr3.yaml")
    t0 = time.perf_counter()
    trace = time_tiled_sweep("jacobi_2d", grid, steps, shape)
    t1 = time.perf_counter()
    res = simulate_trace(system, trace)
    t2 = time.perf_counter()
    words = (res.value("dram", "bytes_read") + res.value("dram", "bytes_written")) / 8
    llc_words = system.spec.caches.levels[-1].size_bytes // 8
    model = dram_traffic_words(STENCILS["jacobi_2d"], grid, steps, "time_tiled", llc_words, shape=shape,
                               write_allocate=True).total_words
    total = t2 - t0
    print(f"trace rows {trace.num_rows}, generation {t1 - t0:.2f} s, simulation {t2 - t1:.2f} s, total {total:.2f} s")
    print(f"simulated time {res.value('system', 'simulated_time_s'):.4f} s; DRAM words {words:.0f}, "
          f"model {model}, ratio {words / model:.3f}")
    print(f"target <= {TARGET_S:.0f} s: {'OK' if total <= TARGET_S else 'MISSED'} ({total / TARGET_S:.2f} of budget)")


if __name__ == "__main__":
    main()
