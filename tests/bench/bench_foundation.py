"""Benchmark: a 64 MiB read stream through host core, caches and DRAM (target: < 2 s wall).

Prints the wall time of the simulation itself (after one warm-up run that
compiles the numba kernels and fills their on-disk cache), the wall time of a
whole fresh ``offsim run`` process for the same workload (imports and cached
kernel loading included), and the simulated bandwidth. Run:
    python tests/bench/bench_foundation.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = ROOT / "configs" / "systems" / "i7_920_ddr3.yaml"
WORKLOAD = {"generator": "stream", "params": {"kind": "read", "array_bytes": "64 MiB"}}
TARGET_S = 2.0


def main() -> None:
    import simulator

    simulator.run(SYSTEM, {"generator": "stream", "params": {"kind": "read", "array_bytes": "1 MiB"}})  # warm-up
    walls = []
    for _ in range(3):
        t0 = time.perf_counter()
        s = simulator.run(SYSTEM, WORKLOAD).summary()
        walls.append(time.perf_counter() - t0)
    sim_bw = 64 * 2**20 / s["simulated_time_s"]
    lines = s["caches"]["L1D"]["accesses"]
    med = statistics.median(walls)
    print(f"64 MiB read stream: {lines:,} line accesses, simulated {s['simulated_time_s'] * 1e3:.3f} ms "
          f"({sim_bw / 1e9:.2f} GB/s)")
    print(f"in-process wall: median {med:.3f} s of {len(walls)} (min {min(walls):.3f}, max {max(walls):.3f}); "
          f"{lines / med / 1e6:.2f} M lines/s; target < {TARGET_S} s: ratio {med / TARGET_S:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        wl = Path(tmp) / "w.yaml"
        wl.write_text("name: stream64\ngenerator: stream\nparams: {kind: read, array_bytes: 64 MiB}\n")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "simulator.cli", "run", str(SYSTEM), str(wl), "--out",
                        str(Path(tmp) / "run")], check=True, capture_output=True)
        cold = time.perf_counter() - t0
    print(f"whole 'offsim run' process (imports, cached kernels, writing the run directory): {cold:.3f} s")


if __name__ == "__main__":
    main()
