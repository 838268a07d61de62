"""Benchmark of DramSystem.service: wall time and lines/s on 1M-line streams and random lines.

Prints the kernel compilation (or cache load) time separately, then for each workload and
controller (in-order, first-ready, ready-first, ready-first with per-bank command queues of 8) the simulated bandwidth (GB/s) and the wall time of
serving it as one chunk and as 4096-line chunks. Target: 1M lines in well under 1 s of wall
time after compilation.

Run: python tests/bench/bench_dram.py
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import numpy as np

from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.memory.dram import DramSystem
from simulator.system import dram_parameters

ROOT = Path(__file__).resolve().parents[2]

# DDR3-1600 Micron MT41J256M4 (003 Table 4 at 003:L327-L328): the shipped preset, one rank
TIMING, CURRENTS, GEOMETRY = dram_parameters(
    load_spec(ROOT / "configs" / "systems" / "i7_920_ddr3.yaml", SystemSpec,
              ["dram.geometry.ranks_per_channel=1"]).spec)
N_LINES = 1 << 20
CHUNK = 4096


#: controller name -> DramSystem settings
CONTROLLERS = {"in_order": {}, "frfcfs": {"scheduler": "frfcfs"}, "ready_first": {"scheduler": "ready_first"},
               "ready_first_cq8": {"scheduler": "ready_first", "command_queue_depth": 8}}


def run(lines: np.ndarray, chunk: int, controller: str) -> tuple[float, int, DramSystem]:
    """Serve `lines` in chunks of `chunk`, each arriving when the previous one completed, under
    ``CONTROLLERS[controller]``; return wall seconds, simulated end time (ps) and the system."""
    d = DramSystem(TIMING, CURRENTS, GEOMETRY, **CONTROLLERS[controller])
    t_ps = 0
    start = time.perf_counter()
    for i in range(0, len(lines), chunk):
        t_ps = d.service(lines[i:i + chunk], False, t_ps)
    return time.perf_counter() - start, t_ps, d


def main() -> None:
    start = time.perf_counter()
    for settings in CONTROLLERS.values():
        DramSystem(TIMING, CURRENTS, GEOMETRY, **settings).service(np.arange(16), False, 0)
    DramSystem(TIMING, CURRENTS, GEOMETRY).idle_until(10**9)
    print(f"kernel compile/cache load: {time.perf_counter() - start:.2f} s")
    rng = np.random.default_rng(0)
    workloads = {
        "stream": np.arange(N_LINES, dtype=np.int64),
        "random (1 GiB)": rng.integers(0, (1 << 30) // 64, N_LINES),
    }
    for name, lines in workloads.items():
        for controller, chunk in itertools.product(CONTROLLERS, (N_LINES, CHUNK)):
            wall_s, end_ps, d = run(lines, chunk, controller)
            gb_s = len(lines) * 64 / (end_ps * 1e-12) / 1e9
            c = d.counters()
            print(f"{name:15s} {controller:15s} chunk {chunk:8d}: {len(lines) / wall_s / 1e6:6.2f} M lines/s, "
                  f"wall {wall_s:.3f} s, simulated {gb_s:5.2f} GB/s ({gb_s / 12.8:.0%} of 12.8), "
                  f"row hits {c['row_hits'] / c['reads']:.3f}")
        e = d.energy_j(d.last_completion_ps)
        total = sum(e.values())
        print(f"{'':15s} energy {total * 1e3:.2f} mJ, {total / (len(lines) * 512) * 1e12:.1f} pJ/bit, "
              f"background+refresh {(e['background_active'] + e['background_precharge'] + e['refresh']) / total:.0%}")


if __name__ == "__main__":
    main()
