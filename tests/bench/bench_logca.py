"""Benchmark: the full 16 B - 64 MiB AES sweep of one platform (target <= 20 s), with the calibration it feeds."""

from __future__ import annotations

import time

from simulator.studies.logca.crypto import calibrate, granularities, load_platform, sweep

TARGET_S = 20.0


def main() -> None:
    for name in ("ultrasparc_t2", "sparc_t4_instructions"):
        platform = load_platform(name, "aes")
        start = time.perf_counter()
        points = sweep(platform, granularities(16, 64 * 2**20))
        elapsed = time.perf_counter() - start
        fit = calibrate(platform, points)
        print(f"{name}: {len(points)} granularities in {elapsed:.2f} s (target {TARGET_S} s, ratio "
              f"{elapsed / TARGET_S:.2f}); fitted o={fit.params.overhead_cycles:.0f} A={fit.params.acceleration:.2f}")


if __name__ == "__main__":
    main()
