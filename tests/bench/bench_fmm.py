"""Speed of one FMM U-list point (q = 4, N = 2.4e5, Table 2 tree): trace generation and simulation.

Target (issue 3): one q = 4 point simulates in <= 5 s. Prints seconds per phase and the ratio
to the target for the CPU-only and the LAP-DRAM Orig points. Run: python tests/bench/bench_fmm.py
"""

from __future__ import annotations

import time

from simulator.stencil_study import simulate_trace
from workloads.fmm_ulist import fmm_ulist

TARGET_S = 5.0


def main() -> None:
    for system, placement, variant in (("configs/systems/lap_dram.yaml", "lap", "orig"),
                                       ("configs/systems/lap_llc.yaml", "lap", "pipelining"),
                                       ("configs/systems/i7_920_ddr3.yaml", "cpu", "orig")):
        t0 = time.perf_counter()
        trace = fmm_ulist(4, 240_000, "table2", variant, placement)
        t1 = time.perf_counter()
        simulate_trace(system, trace)
        t2 = time.perf_counter()
        print(f"{placement:4s} {variant:11s} rows {trace.num_rows:7d}  generate {t1 - t0:5.2f} s  "
              f"simulate {t2 - t1:5.2f} s  (simulate / target {((t2 - t1) / TARGET_S):.2f})")


if __name__ == "__main__":
    main()
