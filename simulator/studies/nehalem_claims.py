"""001's Nehalem microbenchmark figures measured on the simulated Core i7-950 (``configs/systems/i7_950_choi.yaml``).

001 Table 6's Nehalem row (001:L1185) prints, beside the costs the choi-roofline report already compares, the
L1 and L2 streaming bandwidths (GB/s) with their energies eps_L1 and eps_L2 (pJ/B), and the random-access rate
(Macc/s) with its energy eps_rand (nJ per access); section 3.3.2 (001:L647) prints the CPU microbenchmark's
bandwidths (GB/s) and fractions of the vendor's peaks (%). Each is measured here by a micro run on every core
of the simulated machine, one thread a core, as 001 ran its microbenchmarks:

* cache streams: each thread reads its slice of an array that fits half of its private level (16 KiB of the
  32 KiB L1-D, 128 KiB of the 256 KiB L2) over and over, with 16 B loads (Nehalem's load port takes one 128-bit
  load a cycle, what a hand-tuned SIMD stream issues). The first pass fills the level, so the figures are the
  difference of ``CACHE_REPEATS`` passes and one: bytes over time, and energy above pi_0 over bytes;
* random access: each thread reads 8 B elements at uniformly random places of a 256 MiB array, independent
  accesses (rate in accesses/s, energy above pi_0 per access);
* fractions of peak: the sustained rates of ``simulator.studies.roofline.measure_machine`` over the machine's
  peaks (cores x flops per cycle x clock; channels x bus width x transfer rate).

Energy above pi_0 is 001's definition of a cost (eq. 9: constant power is its own term, 001:L663), with pi_0
the measured constant power of the machine (``MeasuredMachine.pi0_w``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from simulator.config.loader import LoadedConfig
from simulator.runner import load_system, simulate_trace
from simulator.studies.roofline import MeasuredMachine, peak_dram_bytes_per_s
from workloads import micro
from workloads.trace import TraceBuilder

#: bytes each thread streams from a level: half of the i7-950's 32 KiB L1-D and 256 KiB L2 per core
CACHE_SLICE_BYTES = {"L1": 16 * 2**10, "L2": 128 * 2**10}
CACHE_LOAD_BYTES = 16  # one SSE load
CACHE_REPEATS = {"L1": 100, "L2": 20}
RANDOM_FOOTPRINT_BYTES = 256 * 2**20
RANDOM_ACCESSES_PER_THREAD = 50_000
RANDOM_ROW_ELEMS = 256
QUICK_DIVISOR = 5  # quick: a fifth of the passes and of the random accesses

TABLE6 = "001 Table 6 Nehalem"
SECTION = "001 §3.3.2"


@dataclass(frozen=True)
class Rate:
    """A measured rate (per second) and the energy above constant power of one unit of it (J)."""

    per_s: float
    energy_j: float


System = str | Path | LoadedConfig


def _run(loaded: LoadedConfig, trace: pa.Table, pi0_w: float) -> tuple[float, float]:
    """(time s, energy above pi_0 J) of one run of ``trace``."""
    r = simulate_trace(loaded, trace)
    t = r.value("system", "simulated_time_s")
    total = sum(v for c, _, v, _ in r.rows if c.startswith("energy/"))
    return t, total - pi0_w * t


def cache_stream(system: System, level: str, pi0_w: float, quick: bool = False) -> Rate:
    """Bytes per second a level serves to every core, and its energy per byte above pi_0 (J/B)."""
    loaded = load_system(system)
    cores = loaded.spec.host.cores
    repeats = max(2, CACHE_REPEATS[level] // (QUICK_DIVISOR if quick else 1))
    nbytes = CACHE_SLICE_BYTES[level] * cores

    def run(n: int) -> tuple[float, float]:
        return _run(loaded, micro.stream("read", nbytes, CACHE_LOAD_BYTES, repeats=n, threads=cores), pi0_w)

    (t1, e1), (tn, en) = run(1), run(repeats)
    warm_bytes = (repeats - 1) * nbytes
    return Rate(warm_bytes / (tn - t1), (en - e1) / warm_bytes)


def random_trace(threads: int, accesses_per_thread: int, seed: int = 1) -> pa.Table:
    """``threads`` threads, each reading ``accesses_per_thread`` random 8 B elements of one shared array."""
    rng = np.random.default_rng(seed)
    b = TraceBuilder()
    for t in range(threads):
        addrs = rng.integers(0, RANDOM_FOOTPRINT_BYTES // 8, size=accesses_per_thread, dtype=np.int64) * 8
        for start in range(0, accesses_per_thread, RANDOM_ROW_ELEMS):
            b.gather("host", "random", "read", addrs[start:start + RANDOM_ROW_ELEMS], 8, thread=t)
    return b.to_table()


def random_access(system: System, pi0_w: float, quick: bool = False) -> Rate:
    """Independent random 8 B reads on every core: accesses per second and energy per access above pi_0 (J)."""
    loaded = load_system(system)
    cores = loaded.spec.host.cores
    n = RANDOM_ACCESSES_PER_THREAD // (QUICK_DIVISOR if quick else 1)
    t, e = _run(loaded, random_trace(cores, n), pi0_w)
    return Rate(cores * n / t, e / (cores * n))


def peak_flops_per_s(loaded: LoadedConfig) -> float:
    """The host's peak: cores x flops per cycle x clock (flop/s)."""
    host = loaded.spec.host
    return host.cores * host.flops_per_cycle * host.frequency_hz


def claims(system: System, machine: MeasuredMachine, quick: bool = False) -> dict[tuple[str, str, str], tuple[float, str]]:
    """Ours for each entry of ``results/reference/choi_roofline.csv`` this module measures, keyed as there:
    (value, unit)."""
    loaded = load_system(system)
    l1, l2 = (cache_stream(loaded, level, machine.pi0_w, quick) for level in ("L1", "L2"))
    rnd = random_access(loaded, machine.pi0_w, quick)
    row = "i7-950"
    out = {(TABLE6, row, "eps_L1"): (l1.energy_j * 1e12, "pJ/B"),
           (TABLE6, row, "L1 bandwidth"): (l1.per_s / 1e9, "GB/s"),
           (TABLE6, row, "eps_L2"): (l2.energy_j * 1e12, "pJ/B"),
           (TABLE6, row, "L2 bandwidth"): (l2.per_s / 1e9, "GB/s"),
           (TABLE6, row, "eps_rand"): (rnd.energy_j * 1e9, "nJ/access"),
           (TABLE6, row, "random access rate"): (rnd.per_s / 1e6, "Macc/s")}
    bandwidth = 1 / machine.tau_mem_s_per_byte
    mem_share = 100 * bandwidth / peak_dram_bytes_per_s(loaded)
    flop_share = 100 / machine.tau_flop_s / peak_flops_per_s(loaded)
    bench = "i7-950 CPU microbenchmark"
    for precision in ("single", "double"):
        out[(SECTION, bench, f"{precision} precision memory bandwidth")] = (bandwidth / 1e9, "GB/s")
        out[(SECTION, bench, f"{precision} precision memory bandwidth, share of peak")] = (mem_share, "%")
    out[(SECTION, bench, "double precision flop rate, share of peak")] = (flop_share, "%")
    return out
