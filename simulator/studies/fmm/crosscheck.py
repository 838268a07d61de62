"""The FMM study's analytical cross-check: model parameters measured on the simulated systems, and
:mod:`models.ulist` evaluated for every simulated point (time and energy), beside the simulation.

The parameters are measured the way 003 measured its simulator (003 §7): micro runs on the
same simulated systems (``measure_machine``), never fitted to the FMM points themselves.
``recompute`` rebuilds the cross-check of a study directory, ``crosscheck_summary`` gives the
mean absolute deviation per 003 Table 5 column; ``main([DIR])`` prints both for a study directory.

Extended model (``ulist.extended_stages``, ``ulist.cpu_extended_stages``): the printed equations
plus these costs, measured on the same systems and never fitted to the FMM points (figures:
``crosscheck_summary.csv`` of each study, and results/fmm/README.md):

- LLC residency (:func:`measure_llc_residency`): the share of a block's B and C still in the LLC
  when it is read again, as a function of how much of the LLC the block fills. 003's printed eqs.
  8 and 12 assume all of it (all or nothing); under the whole-LLC rule the blocks at q = 4..8 are
  about the LLC's size, where the LLC keeps only part of them (a third under LRU at q = 4, 57 % under
  the MARSSx86-like systems' use-bit replacement).
- Pipelined points: separate residencies for B and C (:func:`measure_pipelined_residency`). With two
  block sets in flight, C of block i - 1 is read after gemm(i) has swept the other set and
  in(i + 1) the same one (long reuse distance), while B is read right after it is written (short).
- Pipelined points: the host's slowdown beside the concurrent GEMMs
  (:func:`measure_pipelined_contention`, B writes and C reads of a double-buffered exchange that
  misses the LLC, with and without the GEMMs). The LAP's traffic shares the DRAM queues (and,
  LLC-coupled, the LLC) with the host's misses; near memory, the LAP reaches the banks over its
  own path. The factors are measured per GEMM height and kept in ``machine.json``
  (``<placement>.pipelined_contention``); the model reads them at each point's N_q.
- DRAM and near-memory couplings: the driver's flush of each block's dirty B lines, one DRAM write
  each (:func:`measure_dirty_flush`).
- CPU only: the host GEMM's memory time (packing B, updating C per k_c slice) adds to its compute
  time; counted from the trace's blocking (``HOST_GEMM_BLOCKING``), not measured.

q = 14 (N_q = 680, N_oct = 365, N_U = 8531) lies outside the q = 4..10 error bars and is reported on
its own rows of ``crosscheck_summary.csv``. There the GEMMs dominate: 2 N_U N_q^2 = 7.9 GFLOP, about
200 ms at the LAP's 39-40 GFLOP/s, 68-78 % of every LAP point's host cycles on the MARSSx86-like
host and 85-90 % on the default one. The extended model is within 5.4 % (time) and 6.0 % (energy) on
the three Table 5 columns in both studies, the printed one within 6.7 % (time) and 10.0 % (energy)
except in one place: the blocked LLC points, whose premise breaks. One Â_j is 680^2 x 8 B = 3.7 MB,
and a class-ordered block needs one or two of them beside its B and C (7.7 MB at 003's b = 12, 4.0
MB at b = 23 with half the LLC), so the block overflows the 8 MiB LLC and only 8.5 % (b = 12) or 26 %
(b = 23) of B and C is measured resident. The printed model still prices all of it at the LLC and
misses LAP-LLC Blocking by 20 % (time) and 22 % (energy) on the MARSSx86-like host, whose 5
outstanding misses make the DRAM share slow. The extended model prices the rest at DRAM; on the
default host it then predicts 486 MCycles against 460 simulated (its largest q = 14 miss, 5.4 %).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from models import ulist
from simulator.errors import InputError
from simulator.config.fields import spec_to_dict
from simulator.config.loader import LoadedConfig, content_hash
from workloads.spec import build_workload, generate_trace
from simulator.units import format_bytes
from simulator.interconnect.couplings import COUPLING_STRATEGIES
from simulator.replay import replay
from simulator.runner import energy_split_j, load_system, simulate_trace
from simulator.results import Results
from simulator.system import build_system
from workloads import fmm_ulist
from workloads.gemm import HOST_KC, HOST_NC, lap_gemm
from workloads.trace import AddressSpace, TraceBuilder
from workloads.trace_stream import TraceStream

CLOCK_HZ = 2e9  # host clock (003 Table 4)
#: the host's micro runs (``_measure_host``): a read stream, and random 8 B reads over a footprint, B;
#: the system's DRAM must hold the larger
STREAM_BYTES = 64 * 2**20
IRREGULAR_FOOTPRINT_BYTES = 256 * 2**20
#: The packing of the host GEMM the CPU-only traces run (``workloads.gemm.host_gemm``).
HOST_GEMM_BLOCKING = ulist.HostGemmBlocking(HOST_KC, HOST_NC)


def stage_quantity(df: pd.DataFrame, component: str, quantity: str) -> float:
    """Sum of ``quantity`` of ``component`` in a results table (its unit is the quantity's)."""
    s = df[(df.component == component) & (df.quantity == quantity)].value
    return float(s.sum())


#: A system of the micro runs: a config path, or the config loaded. Every function that runs several
#: simulations loads its system once (``load_system``) and hands the loaded config on.
SystemArg = str | LoadedConfig


def _simulate_workload(system: SystemArg, raw: dict) -> Results:
    spec = build_workload(raw, "<micro>", Path.cwd())
    return simulate_trace(system, generate_trace(spec, "<micro>"))


def _run_workload(system: SystemArg, raw: dict) -> pd.DataFrame:
    return _simulate_workload(system, raw).to_pandas()


def _region_run(system: SystemArg, nbytes: int, steps: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """The results of one host pass per (stage, op) of ``steps``, in order, over a region of
    ``nbytes`` at address 0, one 64 B access per line."""
    tb = TraceBuilder()
    for stage, op in steps:
        tb.access("host", stage, op, 0, 64, 64, nbytes // 64)
    return simulate_trace(system, tb.to_table()).to_pandas()


def measure_llc_exchange(system: SystemArg, nbytes: int = 2 * 1024 * 1024) -> tuple[float, float]:
    """(host bandwidth for lines the LLC serves, bytes/s; host cycles per line evicted to the LLC).

    A region larger than L2 and smaller than the LLC is written once (warm-up), then read
    in 64 B elements as the FMM trace reads C (bandwidth = bytes / busy time of that
    stage), written again and evicted to the LLC (cycles / line of the eviction stage).
    """
    df = _region_run(system, nbytes, (("warm", "write"), ("llc_read", "read"), ("warm", "write"),
                                      ("evict", "evict_llc")))
    read_s = stage_quantity(df, "stage/host/llc_read", "busy_s")
    evict_cycles = stage_quantity(df, "stage/host/evict", "busy_s") * CLOCK_HZ
    return nbytes / read_s, evict_cycles / (nbytes // 64)


def measure_dirty_flush(system: SystemArg, nbytes: int = 2 * 1024 * 1024) -> float:
    """Host cycles per dirty line flushed to DRAM (the driver's flush before an offload on a
    non-coherent coupling): a region larger than L2 and smaller than the LLC is written, then
    flushed; cycles of the flush stage / lines."""
    df = _region_run(system, nbytes, (("warm", "write"), ("flush", "flush")))
    return stage_quantity(df, "stage/host/flush", "busy_s") * CLOCK_HZ / (nbytes // 64)


def measure_llc_energy(system: SystemArg, nbytes: int = 2 * 1024 * 1024) -> float:
    """Energy per byte of LLC traffic, J/B: a region larger than L2 and smaller than the LLC is
    written, then read twice; the LLC's energy (every category of the system's energy model) over its
    accesses x 64 B."""
    df = _region_run(system, nbytes, (("warm", "write"), ("llc_read", "read"), ("llc_read", "read")))
    llc_j = float(df.loc[df.component == "energy/LLC", "value"].sum())
    return llc_j / (stage_quantity(df, "cache/LLC", "accesses") * 64)


def measure_access_rate(system: SystemArg, n_leaves: int = 64, n_q: int = 35, repeats: int = 50) -> float:
    """Loads the host issues per second when they hit L1: a gather of runs (``n_leaves``
    vectors of ``n_q`` doubles, 18 KiB, read ``repeats`` times, one load per element)."""
    tb = TraceBuilder()
    eb = fmm_ulist.ELEM_BYTES
    leaves = np.arange(n_leaves, dtype=np.int64) * n_q * eb
    tb.access("host", "warm", "read", 0, eb, eb, n_leaves * n_q)
    for _ in range(repeats):
        tb.gather("host", "issue", "read", leaves, eb, run=n_q)
    df = simulate_trace(system, tb.to_table()).to_pandas()
    return repeats * n_leaves * n_q / stage_quantity(df, "stage/host/issue", "busy_s")


#: Working set / LLC capacity at which :func:`measure_llc_residency` measures (dimensionless);
#: the last is far enough past the capacity that the LLC keeps nothing of a reused exchange.
RESIDENCY_RATIOS = (0.9, 1.0, 1.05, 1.1, 1.15, 1.2, 1.3, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0, 4.0)
#: GEMM heights m = k of the residency micro runs: N_q of the orders q = 4, 6, 8, 10
#: (averaged, so the curve does not hang on one layout's alignment with the LLC sets).
RESIDENCY_HEIGHTS = (35, 84, 165, 286)


def _exchange_trace(n_q: int, n: int, rounds: int, bc_layout: str = "rows") -> pa.Table:
    """``rounds`` exchanges through reused buffers: the host writes B (n_q x n doubles), the LAP computes
    C += A B (n_q x n_q A; B and C in ``bc_layout``, ``fmm_ulist.BC_LAYOUTS``), the host reads C."""
    sp = AddressSpace()
    eb = fmm_ulist.ELEM_BYTES
    nbytes, a_bytes = n_q * n * eb, n_q * n_q * eb
    a, b, c = sp.alloc("A", a_bytes), sp.alloc("B", nbytes), sp.alloc("C", nbytes)
    tb = TraceBuilder()
    for _ in range(rounds):
        tb.access("host", "in", "write", b, 64, 64, nbytes // 64)
        fmm_ulist.offload_class_gemm(tb, a, b, c, n_q, n, bc_layout)
        tb.wait("host", "gemm", "lap")
        tb.access("host", "out", "read", c, 64, 64, nbytes // 64)
    return tb.to_table()


def _exchange_dram_lines(system: SystemArg, n_q: int, n: int, rounds: int, bc_layout: str = "rows") -> float:
    """DRAM lines (reads + writes) of ``rounds`` exchanges (:func:`_exchange_trace`) on a fresh ``system``."""
    df = simulate_trace(system, _exchange_trace(n_q, n, rounds, bc_layout)).to_pandas()
    return stage_quantity(df, "dram", "reads") + stage_quantity(df, "dram", "writes")


def _dram_lines(sim: Any) -> float:
    """DRAM lines (reads + writes) a built system's main memory has served so far."""
    counters = sim.dram.counters()
    return float(counters["reads"]) + float(counters["writes"])


def _exchange_dram_lines_1_3(system: SystemArg, n_q: int, n: int, bc_layout: str = "rows") -> tuple[float, float]:
    """(D_1, D_3): the DRAM lines of one exchange and of three (:func:`_exchange_dram_lines`), from one run of
    three: the rounds are one stream (``TraceStream``) of three batches, and D_1 is read when the host asks
    for the second, its first round replayed. Up to there the run is the one-round run row for row, and
    the lines a round sends DRAM are counted as it runs (its write-backs as they are posted), so D_1 is
    that run's count. A system with near memories gathers a stream whole before its replay: there the
    rounds run apart."""
    loaded = load_system(system)
    sim = build_system(loaded.spec)
    if sim.near_memories:
        return (_exchange_dram_lines(loaded, n_q, n, 1, bc_layout), _exchange_dram_lines(loaded, n_q, n, 3, bc_layout))
    one_round = _exchange_trace(n_q, n, 1, bc_layout)
    after_first: list[float] = []

    def rounds() -> Iterator[pa.Table]:
        yield one_round
        after_first.append(_dram_lines(sim))
        yield one_round
        yield one_round

    replay(sim, TraceStream(rounds()), "<micro>")
    return after_first[0], _dram_lines(sim)


def measure_llc_residency(system: SystemArg, ratios: tuple[float, ...] = RESIDENCY_RATIOS,
                          heights: tuple[int, ...] = RESIDENCY_HEIGHTS,
                          bc_layout: str = "rows") -> list[list[float]]:
    """LLC residency of a reused B / C exchange on ``system`` (a LAP behind the LLC), as
    [[working set / LLC capacity, share of lines kept], ...] for ``ratios`` (dimensionless).

    Per ratio x and height m: B and C of m x n doubles with 2 m n 8 B = x LLC are exchanged
    as the blocked FMM exchanges them (host writes B, LAP C += A B through the LLC, host reads
    C), once and three times; the DRAM lines of a steady round, d(x) = (D_3 - D_1) / 2 per
    line of B, against those of the last ratio (where nothing stays) give the share kept,
    1 - d(x) / d(x_last), clipped to [0, 1] and averaged over ``heights``. B and C are stored in
    ``bc_layout`` (``fmm_ulist.BC_LAYOUTS``), which decides the order the LAP sweeps them in. Not fitted
    to anything: a property of the simulated LLC (geometry, LRU, non-inclusion) and port.
    """
    system = load_system(system)
    return _residency_curve(ratios, [_llc_residency_shares(system, m, ratios, bc_layout) for m in heights])


def _llc_residency_shares(system: SystemArg, m: int, ratios: tuple[float, ...], bc_layout: str) -> list[float]:
    """:func:`measure_llc_residency`'s shares kept at height ``m``, one per ratio (dimensionless)."""
    system = load_system(system)
    llc = system.spec.caches.levels[-1].size_bytes
    per_line = []
    for x in ratios:
        n = max(8, int(x * llc / (2 * m * fmm_ulist.ELEM_BYTES)) // 8 * 8)
        lines = m * n * fmm_ulist.ELEM_BYTES / 64
        d1, d3 = _exchange_dram_lines_1_3(system, m, n, bc_layout)
        per_line.append((d3 - d1) / 2 / lines)
    return [float(h) for h in np.clip(1 - np.array(per_line) / per_line[-1], 0.0, 1.0)]


def _residency_curve(ratios: tuple[float, ...], per_height: list[list[float]]) -> list[list[float]]:
    """[[ratio, share averaged over the heights], ...] from one list of shares per height (summed in
    height order, so that measuring the heights apart gives the same bits as one after another)."""
    total = np.zeros(len(ratios))
    for shares in per_height:
        total += np.array(shares)
    return [[float(x), float(h)] for x, h in zip(ratios, total / len(per_height))]


#: Working set / LLC capacity at which :func:`measure_pipelined_residency` measures: fewer than
#: :data:`RESIDENCY_RATIOS` to keep the run short (both shares are 0 from 3x on, measured).
PIPELINED_RATIOS = (0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.6, 2.0, 3.0)
#: Blocks of the double-buffered micro run of :func:`measure_pipelined_residency`: blocks 0 and 1
#: fill the two sets; the input of blocks 2.. and the output of blocks 1 .. n - 3 are steady.
#: Ten, not five: under MARSSx86's use-bit replacement what the LLC keeps of B builds up over
#: several blocks (at 1.2x the LLC, height 35: 0.29 of B's writes served on-chip over blocks 2-4,
#: 0.74 over blocks 2-9), and the pipelined FMM points run 23 blocks. The contention factors
#: (:func:`measure_pipelined_contention`, same length) converge too: default LAP-DRAM system, input
#: factor averaged over the four heights 1.89 / 1.63 / 1.56 over 5 / 10 / 20 blocks. Under LRU the
#: residency curves move by at most 5 points; the default study's per-column errors by at most 0.03
#: points, but its LAP-DRAM and near-memory pipelined points at q = 4 and 6 (no Table 5 column) by
#: 4 to 6 points, to 13-22 % with one averaged factor (6-8 % now, with the factors per height and
#: the dirty flush).
PIPELINED_BLOCKS = 10
#: Working set / LLC capacity of :func:`measure_pipelined_contention`: B and C mostly miss the LLC
#: there (pipelined shares at 2x, measured: B 0.04 and C 0.002 on the MARSSx86-like host, B 0.15
#: and C 0 on the default one), so the host's exchange is DRAM-bound.
CONTENTION_RATIO = 2.0


def _host_stages(system: SystemArg, table: Any) -> dict[str, Any]:
    """The host's stage records (``StageStats``: busy time, bytes each level served, ...) per
    stage label of ``table``, replayed on a fresh ``system``."""
    sim = build_system(load_system(system).spec)
    replay(sim, table, "<micro>")
    return dict(sim.host.stages)


def _pipelined_exchange_trace(n_q: int, n_class: int, blocks: int = PIPELINED_BLOCKS,
                              bc_layout: str = "rows") -> Any:
    """The double-buffered exchange of a pipeline, as a trace (stage labels in0.., out0..).

    Per block, ten classes of N_q x ``n_class`` doubles (stored in ``bc_layout``, as the FMM trace
    lays out B_j and C_j); two buffer sets used alternately; the order of 003 Fig. 6 as the pipelined
    trace issues it: in(0), then per block i offload the ten gemm(i) (C += A_j B_j through the
    LAP's coupling), in(i + 1), out(i - 1), wait; out(last). The host writes B and reads C column
    group by column group (``fmm_ulist.GROUP`` columns), as the permutations do."""
    sp, eb = AddressSpace(), fmm_ulist.ELEM_BYTES
    cb, a_bytes = n_q * n_class * eb, n_q * n_q * eb
    a = [sp.alloc(f"A{j}", a_bytes) for j in range(ulist.N_GEMMS)]
    b_set = [sp.alloc(f"B{s}", ulist.N_GEMMS * cb) for s in range(2)]
    c_set = [sp.alloc(f"C{s}", ulist.N_GEMMS * cb) for s in range(2)]
    tb = TraceBuilder()

    def columns(base: int, op: str, stage: str) -> None:
        for j in range(ulist.N_GEMMS):
            fmm_ulist.matrix_columns_access(tb, stage, op, base + j * cb, n_q, n_class, bc_layout)

    columns(b_set[0], "write", "in0")
    for i in range(blocks):
        for j in range(ulist.N_GEMMS):
            bj, cj = b_set[i % 2] + j * cb, c_set[i % 2] + j * cb
            fmm_ulist.offload_class_gemm(tb, a[j], bj, cj, n_q, n_class, bc_layout)
        if i + 1 < blocks:
            columns(b_set[(i + 1) % 2], "write", f"in{i + 1}")
        if i > 0:
            columns(c_set[(i - 1) % 2], "read", f"out{i - 1}")
        tb.wait("host", "gemm", "lap")
    columns(c_set[(blocks - 1) % 2], "read", f"out{blocks - 1}")
    return tb.to_table()


def _pipelined_class_width(ratio: float, llc_bytes: int, n_q: int) -> int:
    """Columns per class (a multiple of 8, at least 8) for which the two sets of B and C of the
    exchange of :func:`_pipelined_exchange_trace` (2 x 2 x 10 x n_q x n_class doubles) are
    ``ratio`` x ``llc_bytes``."""
    return max(8, int(ratio * llc_bytes / (4 * ulist.N_GEMMS * n_q * fmm_ulist.ELEM_BYTES)) // 8 * 8)


def _steady_stages(blocks: int) -> tuple[list[str], list[str]]:
    """Stage labels of the steady inputs (blocks 2..) and outputs (blocks 1 .. n - 3) of the
    exchange of :func:`_pipelined_exchange_trace`."""
    return [f"in{i}" for i in range(2, blocks)], [f"out{i}" for i in range(1, blocks - 2)]


def _steady_shares(served: dict[str, Any], blocks: int) -> tuple[float, float]:
    """(share of the host's B writes, share of its C reads the LLC or a nearer cache serves) in the steady
    blocks of the double-buffered exchange of :func:`_pipelined_exchange_trace`, from the host's stage
    records ``served`` of it, dimensionless."""

    def share(stages: list[str]) -> float:
        total = sum(served[s].bytes_by_level for s in stages)
        return float(1 - total[-1] / total.sum())

    return tuple(share(st) for st in _steady_stages(blocks))


def _steady_busy_ps(served: dict[str, Any], blocks: int) -> tuple[float, float]:
    """(busy time of the steady inputs, of the steady outputs) of the exchange of
    :func:`_pipelined_exchange_trace` from the host's stage records ``served``, ps."""
    return tuple(sum(served[x].busy_ps for x in st) for st in _steady_stages(blocks))


def _host_rows(table: pa.Table) -> pa.Table:
    """The rows of ``table`` without its offloads and waits: the host's alone, same addresses, same order."""
    return table.filter(pc.invert(pc.is_in(table["op"], value_set=pa.array(["offload", "wait"]))))


def _exchange_busy(system: SystemArg, heights: tuple[int, ...], ratio: float, blocks: int, bc_layout: str,
                   host_only: bool) -> list[list[float]]:
    """[[height, busy time of the steady inputs, of the steady outputs (ps)], ...] of the double-buffered
    exchange at working set / LLC = ``ratio`` on ``system``, per GEMM height; ``host_only``: its host rows
    alone (:func:`_host_rows`)."""
    system = load_system(system)
    llc = system.spec.caches.levels[-1].size_bytes
    busy = []
    for m in heights:
        table = _pipelined_exchange_trace(m, _pipelined_class_width(ratio, llc, m), blocks, bc_layout)
        busy.append([m, *_steady_busy_ps(_host_stages(system, _host_rows(table) if host_only else table), blocks)])
    return busy


def _contention_factors(with_lap: list[list[float]], alone: list[list[float]]) -> list[list[float]]:
    """[[height, input, output], ...]: the busy times of :func:`_exchange_busy` with the LAP over those alone."""
    if [row[0] for row in with_lap] != [row[0] for row in alone]:
        raise ValueError(f"busy times of other heights: {[row[0] for row in with_lap]} against "
                         f"{[row[0] for row in alone]}")
    return [[float(m), w_in / a_in, w_out / a_out] for (m, w_in, w_out), (_, a_in, a_out) in zip(with_lap, alone)]


def measure_pipelined_contention(system: SystemArg, ratio: float = CONTENTION_RATIO,
                                 heights: tuple[int, ...] = RESIDENCY_HEIGHTS,
                                 blocks: int = PIPELINED_BLOCKS, bc_layout: str = "rows"
                                 ) -> list[list[float]]:
    """[[height, input, output], ...] per GEMM height: how many times longer the host's steady B
    writes and C reads of a pipelined exchange take beside the LAP's GEMMs than alone on
    ``system`` (dimensionless).

    The exchange of :func:`_pipelined_exchange_trace` at working set / LLC = ``ratio``, where
    B and C miss the LLC, replayed twice: as is, and without its offloads and waits (the host
    rows alone, same addresses, same order). Stage time with / without, summed over the
    steady stages, for each of the GEMM ``heights`` (thin GEMMs move more bytes per flop and
    press the DRAM harder; the model reads the factors at its N_q). Not fitted:
    it measures how much the GEMM's memory traffic (through the coupling's DRAM and, LLC-coupled,
    the LLC) delays a host whose misses wait in the same queues."""
    system = load_system(system)
    return _contention_factors(_exchange_busy(system, heights, ratio, blocks, bc_layout, host_only=False),
                               _exchange_busy(system, heights, ratio, blocks, bc_layout, host_only=True))


def measure_pipelined_residency(system: SystemArg, ratios: tuple[float, ...] = PIPELINED_RATIOS,
                                heights: tuple[int, ...] = RESIDENCY_HEIGHTS, bc_layout: str = "rows"
                                ) -> tuple[list[list[float]], list[list[float]]]:
    """LLC residency of B and of C in the pipelined (double-buffered) exchange on ``system``:
    ([[working set / LLC, share of B lines kept], ...], [[..., share of C lines kept], ...]).

    Per ratio x and height m, two sets of B and C with 2 x 2 x 10 x m x n_class x 8 B = x LLC are
    exchanged as the pipelined FMM exchanges them (:func:`_steady_shares`); the
    shares of the steady blocks' B writes and C reads that do not go to DRAM are averaged over
    ``heights``. Unlike :func:`measure_llc_residency` no far-overflow reference is needed: the
    host's own counter says which level served each line. Not fitted to anything: the order of
    the two sets' uses gives B and C different reuse distances on the simulated LLC (B is read
    by the LAP right after the host writes it, C of block i - 1 only after gemm(i) and in(i + 1)
    have swept the cache), and the curves measure what that does.
    """
    system = load_system(system)
    per_height = [_pipelined_residency_shares(system, m, ratios, bc_layout) for m in heights]
    return (_residency_curve(ratios, [b for b, _ in per_height]),
            _residency_curve(ratios, [c for _, c in per_height]))


def _pipelined_residency_part(system: SystemArg, m: int, ratios: tuple[float, ...], bc_layout: str
                              ) -> dict[str, Any]:
    """A part of :func:`machine_parts`: :func:`_pipelined_residency_shares` (``shares``), and from the same run at
    :data:`CONTENTION_RATIO` the busy times of the exchange beside the LAP that the contention factors need
    (``with_lap``: [m, inputs, outputs] as :func:`_exchange_busy`; None when ``ratios`` lacks that ratio)."""
    system = load_system(system)
    llc = system.spec.caches.levels[-1].size_bytes
    b_shares, c_shares, with_lap = [], [], None
    for x in ratios:
        served = _host_stages(system, _pipelined_exchange_trace(m, _pipelined_class_width(x, llc, m),
                                                                PIPELINED_BLOCKS, bc_layout))
        b, c = _steady_shares(served, PIPELINED_BLOCKS)
        b_shares.append(float(b))
        c_shares.append(float(c))
        if x == CONTENTION_RATIO:
            with_lap = [m, *_steady_busy_ps(served, PIPELINED_BLOCKS)]
    return {"shares": (b_shares, c_shares), "with_lap": with_lap}


def _pipelined_residency_shares(system: SystemArg, m: int, ratios: tuple[float, ...], bc_layout: str
                                ) -> tuple[list[float], list[float]]:
    """:func:`measure_pipelined_residency`'s shares of B and of C kept at height ``m``, one per ratio."""
    return _pipelined_residency_part(system, m, ratios, bc_layout)["shares"]


def measure_machine(cpu_system: str, lap_systems: dict[str, str], bc_layout: str = "rows") -> dict[str, Any]:
    """Model parameters measured on the simulated systems (bytes/s, flop/s, J, W).

    w_C: single-core read stream over 64 MiB; w_C irregular: random 8 B reads (bytes
    used / time); the access rate (accesses/s): :func:`measure_access_rate`; f_C:
    compute-only run; per LAP system f_L from a compute-bound 256 x 256 x 1024 GEMM
    and w_L from a bandwidth-bound 64 x 8192 x 1 GEMM (interface
    bytes / busy time).  Energies: eps_flop_cpu and pi_0 (constant power) from the
    compute-only run (an idle memory: powered down when its DRAM powers down), eps_byte_dram =
    (energy of the stream - pi_0 x its time) / bytes, so that it carries what a busy memory
    draws above its idle background,
    eps_flop_lap = LAP compute energy / flops, the LAP's static power = its static energy / run
    time of that GEMM, eps_byte_llc from :func:`measure_llc_energy`. ``llc_residency``: the
    residency curve of :func:`measure_llc_residency` on the first LLC-coupled LAP system (all
    systems of a study share one cache hierarchy); ``llc_residency_pipelined_b`` / ``_c``: the
    B and C curves of :func:`measure_pipelined_residency` on the same system; absent without one.
    ``{lap}.pipelined_contention``: the [height, input, output] factors of
    :func:`measure_pipelined_contention` on each LAP system (the host rows alone measured on the system
    without its accelerators, ``machine_parts``); ``{lap}.dirty_flush_cycles_per_line``
    (:func:`measure_dirty_flush`) on each system whose LAP is coupled without coherence (DRAM, near
    memory, PCIe). The exchange micro runs store B and C in ``bc_layout``, as the study's traces do.
    """
    parts = machine_parts(cpu_system, lap_systems, bc_layout)
    return assemble_machine(parts, [part.run() for part in parts])


@dataclass(frozen=True)
class MachinePart:
    """One independent share of :func:`measure_machine`'s micro runs: ``fn(*args)``, to run in any
    process (``fn`` is a module-level function, ``args`` plain values), in any order."""

    kind: str   # "cpu", "llc_residency", "pipelined_residency", "contention_with_lap", "contention_alone" or "lap"
    fn: Callable[..., Any]
    args: tuple

    def run(self) -> Any:
        """The part's result (what :func:`assemble_machine` expects for its kind)."""
        return self.fn(*self.args)


def machine_parts(cpu_system: str | LoadedConfig, lap_systems: dict[str, str | LoadedConfig],
                  bc_layout: str = "rows", pipelined: bool = True) -> list[MachinePart]:
    """:func:`measure_machine`'s micro runs as independent parts, so that a study can spread them
    over its workers (:func:`assemble_machine` puts the results together): each height of the two
    LLC residency curves on the first LLC-coupled LAP system (``residency_system``), then the runs of
    the contention factors, then each LAP system's other runs, then the host's runs (0.3 s) last.

    The contention factors divide busy times beside the LAP by the same host rows' alone: each LAP
    system's runs beside its LAP, except the residency system's, whose run at :data:`CONTENTION_RATIO` is
    one of its pipelined residency runs; and the host rows alone once per distinct host
    (:func:`host_key`: LAP systems that differ only in their accelerators and the near memories they work in
    share them), on the system without those (:func:`host_alone`; the host rows never reach them). ``pipelined`` False
    leaves out what only pipelined points read: the pipelined residency curves and the contention
    factors."""
    parts = []
    at_llc = residency_system(lap_systems)
    if at_llc is not None:
        parts += [MachinePart("llc_residency", _llc_residency_shares,
                              (lap_systems[at_llc], m, RESIDENCY_RATIOS, bc_layout)) for m in RESIDENCY_HEIGHTS]
        if pipelined:
            parts += [MachinePart("pipelined_residency", _pipelined_residency_part,
                                  (lap_systems[at_llc], m, PIPELINED_RATIOS, bc_layout)) for m in RESIDENCY_HEIGHTS]
    if pipelined:
        shared = _residency_run_has_contention(at_llc)
        parts += [MachinePart("contention_with_lap", _busy_beside_lap, (name, sysf, bc_layout))
                  for name, sysf in lap_systems.items() if not (shared and name == at_llc)]
        hosts = {}
        for sysf in lap_systems.values():
            hosts.setdefault(host_key(sysf), sysf)
        parts += [MachinePart("contention_alone", _busy_alone, (host_alone(load_system(sysf)), bc_layout))
                  for sysf in hosts.values()]
    parts += [MachinePart("lap", _measure_lap_system,
                          (name, sysf, any(COUPLING_STRATEGIES[c].before_offload == "flush" for c in _couplings(sysf))))
              for name, sysf in lap_systems.items()]
    parts.append(MachinePart("cpu", _measure_host, (cpu_system,)))
    return parts


def _residency_run_has_contention(at_llc: str | None) -> bool:
    """Whether the pipelined residency runs on the LAP system ``at_llc`` give its busy times beside the LAP."""
    return at_llc is not None and CONTENTION_RATIO in PIPELINED_RATIOS


def _couplings(sysf: SystemArg) -> set[str]:
    """The couplings of the accelerators of the system ``sysf``."""
    return {a.interface.coupling for a in load_system(sysf).spec.accelerators.values()}


def residency_system(lap_systems: Mapping[str, SystemArg]) -> str | None:
    """The name of the LAP system of ``lap_systems`` that :func:`machine_parts` measures the LLC residency
    curves on: the first with an accelerator at the LLC; None without one."""
    return next((name for name, sysf in lap_systems.items() if "llc" in _couplings(sysf)), None)


def host_alone(loaded: LoadedConfig) -> LoadedConfig:
    """``loaded``'s system without its accelerators and the near memories they work in: the host's
    figures are measured on it, as a study measures them on its CPU-only system, so that an idle LAP's
    static power, or its memory's background, does not count as the host's (constant power, and
    energy per flop and per DRAM byte)."""
    resolved = {k: v for k, v in loaded.resolved.items() if k not in ("accelerators", "near_memories")}
    return LoadedConfig(replace(loaded.spec, accelerators={}, near_memories={}), resolved, loaded.source)


def host_key(sysf: SystemArg) -> str:
    """What host rows alone depend on in the system ``sysf``: the content hash of its :func:`host_alone`,
    whatever its name."""
    return content_hash({**spec_to_dict(host_alone(load_system(sysf)).spec), "name": ""})


def assemble_machine(parts: list[MachinePart], results: list[Any]) -> dict[str, Any]:
    """The dict of :func:`measure_machine` from ``parts`` (:func:`machine_parts`) and their results,
    in the same order: the host's figures, the residency curves, then each LAP system's figures (its
    contention factors before its f_L, where :func:`measure_machine` has always put them)."""
    by_kind: dict[str, list[tuple[MachinePart, Any]]] = {}
    for part, result in zip(parts, results, strict=True):
        by_kind.setdefault(part.kind, []).append((part, result))
    m: dict[str, Any] = dict(by_kind["cpu"][0][1])
    if "llc_residency" in by_kind:
        m["llc_residency"] = _residency_curve(RESIDENCY_RATIOS, [r for _, r in by_kind["llc_residency"]])
    if "pipelined_residency" in by_kind:
        pipelined = [r["shares"] for _, r in by_kind["pipelined_residency"]]
        m["llc_residency_pipelined_b"] = _residency_curve(PIPELINED_RATIOS, [b for b, _ in pipelined])
        m["llc_residency_pipelined_c"] = _residency_curve(PIPELINED_RATIOS, [c for _, c in pipelined])
    contention = _contention_by_lap(by_kind)
    for part, lap in by_kind.get("lap", []):
        name = part.args[0]
        for key, value in lap.items():
            if key == f"{name}.f_l_flops_per_s" and name in contention:
                m[f"{name}.pipelined_contention"] = contention[name]
            m[key] = value
    return m


def _contention_by_lap(by_kind: dict[str, list[tuple[MachinePart, Any]]]) -> dict[str, list[list[float]]]:
    """The contention factors of each LAP system (``{lap}.pipelined_contention``) from the parts of
    :func:`machine_parts` by kind; empty without them."""
    if "contention_alone" not in by_kind:
        return {}
    laps = {part.args[0]: part.args[1] for part, _ in by_kind["lap"]}
    with_lap = {part.args[0]: result for part, result in by_kind.get("contention_with_lap", [])}
    at_llc = residency_system(laps)
    if at_llc not in with_lap and _residency_run_has_contention(at_llc):
        with_lap[at_llc] = [result["with_lap"] for _, result in by_kind["pipelined_residency"]]
    alone = {host_key(part.args[0]): result for part, result in by_kind["contention_alone"]}
    return {name: _contention_factors(with_lap[name], alone[host_key(sysf)]) for name, sysf in laps.items()}


def _busy_beside_lap(name: str, sysf: SystemArg, bc_layout: str) -> list[list[float]]:
    """A part of :func:`machine_parts`: the busy times of the LAP system ``name``'s exchange at
    :data:`CONTENTION_RATIO` beside its LAP, per height (:func:`_exchange_busy`)."""
    return _exchange_busy(sysf, RESIDENCY_HEIGHTS, CONTENTION_RATIO, PIPELINED_BLOCKS, bc_layout, host_only=False)


def _busy_alone(alone: LoadedConfig, bc_layout: str) -> list[list[float]]:
    """A part of :func:`machine_parts`: the busy times of the same exchange's host rows alone on the system
    ``alone`` (a :func:`host_alone`), per height."""
    return _exchange_busy(alone, RESIDENCY_HEIGHTS, CONTENTION_RATIO, PIPELINED_BLOCKS, bc_layout, host_only=True)


def _measure_host(cpu_system: SystemArg) -> dict[str, float]:
    """The host's part of :func:`measure_machine`: w_C (regular, irregular), f_C, the access rate,
    pi_0, eps_byte_dram and eps_flop_cpu, measured on the system without accelerators (:func:`host_alone`), so
    that an idle unit's power or its near memory's background is not the host's."""
    cpu_system = host_alone(load_system(cpu_system))
    m: dict[str, float] = {}
    nbytes = STREAM_BYTES
    s = _run_workload(cpu_system, {"generator": "stream", "params": {"kind": "read", "array_bytes": f"{nbytes} B"}})
    t_s = stage_quantity(s, "system", "simulated_time_s")
    m["w_c_bytes_per_s"] = nbytes / t_s
    r = _run_workload(cpu_system, {"generator": "random_access", "params": {
        "n_accesses": 200000, "footprint_bytes": f"{IRREGULAR_FOOTPRINT_BYTES} B", "seed": 1}})
    m["w_c_irregular_bytes_per_s"] = 200000 * 8 / stage_quantity(r, "system", "simulated_time_s")
    c_results = _simulate_workload(cpu_system, {"generator": "compute_only", "params": {"flops": 1_000_000_000}})
    c = c_results.to_pandas()
    tc = stage_quantity(c, "system", "simulated_time_s")
    m["f_c_flops_per_s"] = 1e9 / tc
    m["access_rate_per_s"] = measure_access_rate(cpu_system)
    c_const = energy_split_j(c_results)[1]
    m["static_power_w"] = c_const / tc
    energy = s[s.component.str.startswith("energy/")]
    total = float(energy.value.sum())
    m["eps_byte_dram_j"] = (total - m["static_power_w"] * t_s) / nbytes
    # what a byte moved by DMA at the memory controller does not pay of it: the caches' actions and the memory
    # path; inside the memory (near memory), the off-chip interface too (simulator/README.md, "Energy models")
    part = {c.removeprefix("energy/"): float(v) / nbytes for c, v in energy.groupby("component").value.sum().items()}
    cache_names = [lv.name for lv in cpu_system.spec.caches.levels]
    m["eps_byte_dram_dma_j"] = (m["eps_byte_dram_j"] - sum(part.get(n, 0.0) for n in cache_names)
                                - part.get("memory_path", 0.0))
    m["eps_byte_dram_near_j"] = m["eps_byte_dram_dma_j"] - part.get("dram_interface", 0.0)
    m["eps_flop_cpu_j"] = (float(c[c.component.str.startswith("energy/")].value.sum()) - c_const) / 1e9
    return m


def _measure_lap_system(name: str, sysf: str | LoadedConfig, non_coherent: bool) -> dict[str, Any]:
    """One LAP system's part of :func:`measure_machine` but its contention factors (parts of their own,
    ``machine_parts``), its keys prefixed with ``name``."""
    sysf = load_system(sysf)
    m: dict[str, Any] = {f"{name}.coupling": lap_coupling(sysf)}
    m[f"{name}.w_llc_bytes_per_s"], m[f"{name}.evict_cycles_per_line"] = measure_llc_exchange(sysf)
    if non_coherent:
        m[f"{name}.dirty_flush_cycles_per_line"] = measure_dirty_flush(sysf)
    g = simulate_trace(sysf, lap_gemm(256, 1024, 256)).to_pandas()
    m[f"{name}.f_l_flops_per_s"] = stage_quantity(g, "accel/lap", "flops") / stage_quantity(g, "accel/lap", "busy_s")
    m[f"{name}.eps_flop_lap_j"] = stage_quantity(g, "energy/lap", "compute") / stage_quantity(g, "accel/lap", "flops")
    m[f"{name}.lap_static_power_w"] = (stage_quantity(g, "energy/lap", "static")
                                       / stage_quantity(g, "system", "simulated_time_s"))
    m[f"{name}.eps_byte_llc_j"] = measure_llc_energy(sysf)
    b = simulate_trace(sysf, lap_gemm(64, 8192, 1)).to_pandas()
    moved = stage_quantity(b, "accel/lap", "bytes_read") + stage_quantity(b, "accel/lap", "bytes_written")
    m[f"{name}.w_l_bytes_per_s"] = moved / stage_quantity(b, "accel/lap", "busy_s")
    return m


def lap_coupling(sysf: str | LoadedConfig) -> str:
    """The U-list model's coupling ('llc', 'dram' or 'near-memory') of the LAP named "lap" in the system
    ``sysf``."""
    return load_system(sysf).spec.accelerators["lap"].interface.coupling.replace("_", "-")


def model_coupling(machine: dict[str, Any], lap: str) -> str:
    """The U-list model's coupling of the LAP placement ``lap``: its system's, as its micro runs recorded it
    (``{lap}.coupling``), or for a machine without that record the one its name "lap-<coupling>" says."""
    return machine.get(f"{lap}.coupling", lap.removeprefix("lap-"))


def _machine(machine: dict[str, Any], lap: str) -> ulist.UListMachine:
    return ulist.UListMachine(machine["w_c_bytes_per_s"], machine["w_c_irregular_bytes_per_s"],
                              machine["f_c_flops_per_s"], machine[f"{lap}.f_l_flops_per_s"],
                              machine[f"{lap}.w_l_bytes_per_s"], CLOCK_HZ)


#: the extended model's price of the DRAM bytes a LAP moves by DMA (``dram_dma``), by its coupling: the host
#: stream's energy per DRAM byte less what DMA at the controller does not cross (measured by ``_measure_host``);
#: a machine file without these figures prices them as the host's bytes
DMA_EPS_KEYS = {"dram": "eps_byte_dram_dma_j", "near-memory": "eps_byte_dram_near_j"}


def _energy_params(machine: dict[str, Any], lap: str, has_lap: bool, coupling: str = "") -> ulist.EnergyParams:
    """Energy costs of one point; the LAP's static power only where the system has a LAP; ``coupling`` (the
    LAP's: "dram", "llc" or "near-memory") prices the LAP's DMA bytes (``dram_dma``)."""
    eps = {"dram": machine["eps_byte_dram_j"], "llc": machine.get(f"{lap}.eps_byte_llc_j", 0.0)}
    eps["dram_dma"] = machine.get(DMA_EPS_KEYS.get(coupling, ""), machine["eps_byte_dram_j"])
    lap_w = machine.get(f"{lap}.lap_static_power_w", 0.0) if has_lap else 0.0
    return ulist.EnergyParams(machine["eps_flop_cpu_j"], machine[f"{lap}.eps_flop_lap_j"], eps,
                              machine["static_power_w"] + lap_w)


def _curve(machine: dict[str, Any], key: str) -> tuple[tuple[float, float], ...]:
    """A measured residency curve of ``machine`` as (ratio, share) pairs; empty when absent."""
    return tuple((float(x), float(h)) for x, h in machine.get(key, ()))


def _contention(machine: dict[str, Any], lap: str) -> tuple[tuple[float, float, float], ...]:
    """The measured contention curve of ``lap`` as (height, input, output) triples; a study
    directory written before the factors were kept per height holds one (input, output) pair,
    which applies at every height."""
    stored = machine.get(f"{lap}.pipelined_contention", ())
    if len(stored) == 2 and all(isinstance(v, (int, float)) for v in stored):
        return ((1.0, float(stored[0]), float(stored[1])),)
    return tuple((float(h), float(i), float(o)) for h, i, o in stored)


def extended_params(machine: dict[str, Any], lap: str) -> ulist.ExtendedParams:
    """The extended model's measured costs for the LAP placement ``lap`` of ``machine``."""
    return ulist.ExtendedParams(machine[f"{lap}.w_llc_bytes_per_s"], machine[f"{lap}.evict_cycles_per_line"],
                                fmm_ulist.META_BYTES, access_rate_per_s=machine["access_rate_per_s"],
                                residency_curve=_curve(machine, "llc_residency"),
                                pipelined_b_curve=_curve(machine, "llc_residency_pipelined_b"),
                                pipelined_c_curve=_curve(machine, "llc_residency_pipelined_c"),
                                pipelined_contention=_contention(machine, lap),
                                dirty_flush_cycles_per_line=machine.get(f"{lap}.dirty_flush_cycles_per_line", 0.0))


#: The GEMM placements the U-list model prices (a flop-rate LAP or the host).
MODELLED_GEMMS = ("cpu", "lap")


#: the blocks (summed over the block counts tried) the search of a pipelined point's b may price, some 15 us
#: each: a few tens of seconds at most. Default LLCs try one block count; an LLC of a few tens of KiB widens
#: the range to thousands of counts of some 10,000 blocks each.
MAX_PIPELINE_SEARCH_BLOCKS = 3_000_000


def pipelined_search_range(problem: fmm_ulist.UListProblem, llc_bytes: int, llc_share: float,
                           order: str = "class") -> tuple[int, int]:
    """The block counts :func:`pipelined_blocks` tries (``fmm_ulist.block_range``'s, first and last); ValueError if
    they would price more than MAX_PIPELINE_SEARCH_BLOCKS blocks in all."""
    b_min, b_max = fmm_ulist.block_range(problem, llc_bytes, "pipelining", llc_share, order)
    priced = (b_min + b_max) * (b_max - b_min + 1) // 2
    if priced > MAX_PIPELINE_SEARCH_BLOCKS:
        raise ValueError(f"an LLC of {format_bytes(llc_bytes)} leaves a pipelined point {b_max - b_min + 1:,} block "
                         f"counts to try ({b_min:,} to {b_max:,}); expected at most {MAX_PIPELINE_SEARCH_BLOCKS:,} "
                         "blocks priced in all (simulator.studies.fmm.crosscheck.MAX_PIPELINE_SEARCH_BLOCKS), from "
                         "a larger LLC or a block count given")
    return b_min, b_max


def pipelined_blocks(machine: dict[str, Any], placement: str, problem: fmm_ulist.UListProblem, llc_bytes: int,
                     llc_share: float, order: str = "class") -> int:
    """b of a pipelined LAP point: the fastest pipeline the extended model predicts with the
    measured ``machine`` among the block counts of ``fmm_ulist.block_range`` (from the LLC
    rule bounded by the Â_j re-reads up to the LLC rule alone) for blocks cut in ``order``.
    ValueError if that search would price more than MAX_PIPELINE_SEARCH_BLOCKS blocks."""
    b_min, b_max = pipelined_search_range(problem, llc_bytes, llc_share, order)
    return ulist.fastest_pipelined_blocks(problem.dims(), _machine(machine, placement),
                                          extended_params(machine, placement), b_min, b_max,
                                          llc_bytes=float(llc_bytes), coupling=model_coupling(machine, placement),
                                          class_counts=class_counts(problem), order=order)


#: The columns of :func:`model_rows` (``crosscheck.csv``).
CROSSCHECK_COLUMNS = ("q", "placement", "variant", "blocks", "sim_mcycles", "model_mcycles", "time_dev", "ext_mcycles",
                      "ext_time_dev", "sim_energy_j", "model_energy_j", "energy_dev", "ext_energy_j", "ext_energy_dev",
                      "ext_bc_llc_share", "ext_b_llc_share", "ext_c_llc_share")


def model_rows(table: pd.DataFrame, machine: dict[str, Any], dims: dict[int, ulist.UListDims],
               class_counts: dict[int, tuple[int, ...]] | None = None) -> pd.DataFrame:
    """Model cycles and energy for every simulated point (LAP variants: orig/pref -> eq. 2 with
    eq. 7, blocking -> eq. 8, pipelining -> eq. 12; CPU: eq. 2 with eq. 5), with b the number
    of blocks the simulated trace used.

    ``ext_mcycles`` / ``ext_energy_j``: the extended model (``ulist.extended_stages``) for every
    LAP point (orig as one block), its energy from its own time and its own work and traffic
    (DRAM and LLC bytes, 001 eq. 10 form); for the CPU-only points ``ulist.cpu_extended_stages``
    (the host GEMM's memory time adds to its compute time). ``ext_bc_llc_share``: the share of
    the B and C exchange the extended model has the LLC serve (its residency rule, 0 unless LLC-coupled);
    ``ext_b_llc_share`` / ``ext_c_llc_share``: the same for B and for C (they differ only for
    pipelined points with measured pipelined curves). ``class_counts``: interactions per class and q (a
    dimension of the U-list; None: built from the table's n_points and density; {}: N_U / 10
    each). Points of other accelerators (a systolic array) have no model here and get no row."""
    table = table[table.gemm.isin(MODELLED_GEMMS)]
    if class_counts is None:
        class_counts = {int(q): class_counts_of(int(q), int(g.n_points.iloc[0]), str(g.density.iloc[0]))
                        for q, g in table.groupby("q")}
    # a CPU-only point takes the host's LLC costs from a LAP system: every system of a study has the
    # same host and caches
    first_lap = next(k.split(".")[0] for k in machine if ".f_l" in k)
    rows = []
    for _, r in table.iterrows():
        q = int(r.q)
        lap = r.placement if r.gemm == "lap" else first_lap
        m = point_model(machine, lap, dims[q], class_counts.get(q), gemm=r.gemm, variant=r.variant,
                        placement=r.placement, blocks=int(r.blocks), llc_bytes=float(r.llc_bytes),
                        block_order=str(r.block_order))
        rows.append({"q": r.q, "placement": r.placement, "variant": r.variant,
                     "blocks": int(r.blocks), "sim_mcycles": r.cycles / 1e6, "model_mcycles": m.cycles / 1e6,
                     "time_dev": r.cycles / m.cycles - 1, "ext_mcycles": m.ext_cycles / 1e6,
                     "ext_time_dev": r.cycles / m.ext_cycles - 1,
                     "sim_energy_j": r.energy_total_j, "model_energy_j": m.energy_j,
                     "energy_dev": r.energy_total_j / m.energy_j - 1, "ext_energy_j": m.ext_energy_j,
                     "ext_energy_dev": r.energy_total_j / m.ext_energy_j - 1, "ext_bc_llc_share": m.bc_llc_share,
                     "ext_b_llc_share": m.b_llc_share, "ext_c_llc_share": m.c_llc_share})
    return pd.DataFrame(rows, columns=CROSSCHECK_COLUMNS)  # the columns even without a modelled point


@dataclass(frozen=True)
class PointModel:
    """The printed and the extended model of one point: host cycles, energy (J), and the shares of
    the B and C exchange the extended model has the LLC serve (NaN for a CPU-only point)."""

    cycles: float
    energy_j: float
    ext_cycles: float
    ext_energy_j: float
    bc_llc_share: float
    b_llc_share: float
    c_llc_share: float


def point_model(machine: dict[str, Any], lap: str, d: ulist.UListDims, class_counts: tuple[int, ...] | None, *,
                gemm: str, variant: str, placement: str, blocks: int, llc_bytes: float,
                block_order: str) -> PointModel:
    """Both models of one point (:func:`model_rows`): ``machine`` as measured, ``lap`` the prefix of
    the LAP figures it reads, ``gemm`` "cpu" or "lap", ``placement`` "cpu" or "lap-<coupling>",
    ``blocks`` the b the trace used, ``llc_bytes`` the LLC capacity (B)."""
    mc = _machine(machine, lap)
    coupling = model_coupling(machine, placement) if gemm == "lap" else ""
    ep = _energy_params(machine, lap, gemm == "lap", coupling)
    b = blocks
    if gemm == "cpu":
        cyc, stages = ulist.total_cycles(d, mc, "cpu"), ulist.stage_costs(d, mc, "cpu")
    elif variant in ("orig", "orig_pref"):
        cyc, stages = ulist.total_cycles(d, mc, "lap"), ulist.stage_costs(d, mc, "lap")
    elif variant == "pipelining":
        cyc, stages = ulist.pipelined_cycles(d, mc, b), ulist.blocked_stage_costs(d, mc, b)
    else:
        cyc, stages = ulist.blocked_cycles(d, mc, b), ulist.blocked_stage_costs(d, mc, b)
    e = ulist.energy_j(stages, ep, cyc, CLOCK_HZ)
    bc_share = b_share = c_share = float("nan")
    xp = extended_params(machine, lap)
    if gemm == "cpu":
        es = ulist.cpu_extended_stages(d, mc, xp, HOST_GEMM_BLOCKING, llc_bytes=llc_bytes, class_counts=class_counts)
        ext = es.blocked_cycles()
    else:
        es = ulist.extended_stages(d, mc, xp, b, llc_bytes=llc_bytes, sets=fmm_ulist.exchange_buffers(variant),
                                   coupling=coupling, class_counts=class_counts,
                                   order=block_order)
        ext = es.pipelined_cycles() if variant == "pipelining" else es.blocked_cycles()
        bc_share, b_share, c_share = es.bc_llc_share, es.b_llc_share, es.c_llc_share
    return PointModel(cyc, e, ext, ulist.energy_j(es.stages, ep, ext, CLOCK_HZ), bc_share, b_share, c_share)


#: The 003 Table 5 columns and CPU-only: (label, placement, variant).
SUMMARY_COLUMNS = (("LAP-DRAM Orig", "lap-dram", "orig"), ("LAP-LLC Blocking", "lap-llc", "blocking"),
                   ("LAP-LLC Pipelining", "lap-llc", "pipelining"), ("CPU only", "cpu", "orig"))


def crosscheck_summary(cross: pd.DataFrame, qs: tuple[int, ...] = (4, 6, 8, 10),
                       columns: tuple[tuple[str, str, str], ...] = SUMMARY_COLUMNS) -> pd.DataFrame:
    """Mean absolute relative error (model vs simulation, |sim / model - 1|) per column over ``qs``:
    time and energy, printed and extended model; one row per column, NaN where no point."""
    rows = []
    for label, pl, v in columns:
        c = cross[(cross.placement == pl) & (cross.variant == v) & cross.q.isin(qs)]
        row: dict[str, Any] = {"column": label, "points": len(c)}
        for key, dev in (("time_printed", "time_dev"), ("time_extended", "ext_time_dev"),
                         ("energy_printed", "energy_dev"), ("energy_extended", "ext_energy_dev")):
            row[f"mae_{key}"] = float(c[dev].abs().mean()) if dev in c and len(c) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def class_counts(problem: fmm_ulist.UListProblem) -> tuple[int, ...]:
    """Interactions per class of a U-list problem (a problem dimension, like N_U)."""
    return tuple(int(x) for x in np.bincount(problem.class_id, minlength=fmm_ulist.N_CLASSES))


def class_counts_of(q: int, n_points: int, density: str) -> tuple[int, ...]:
    """Interactions per class of the study's U-list of order ``q`` (builds the problem)."""
    return class_counts(fmm_ulist.build_problem(q, n_points, density))


#: The columns of a study's table.csv that :func:`model_rows` reads.
TABLE_COLUMNS = ("q", "placement", "gemm", "variant", "n_points", "density", "llc_bytes", "blocks", "block_order",
                 "cycles", "energy_total_j")


def recompute(study_dir: str | Path, machine: dict[str, Any] | None = None,
              with_classes: bool = True) -> pd.DataFrame:
    """The cross-check recomputed from a study directory's ``table.csv`` and ``machine.json``
    (``machine``: measured parameters to use instead, e.g. from a new ``measure_machine``).
    InputError naming the file when one is missing or the table lacks a column of :data:`TABLE_COLUMNS`."""
    d = Path(study_dir)
    for name in ("table.csv",) + (() if machine is not None else ("machine.json",)):
        if not (d / name).is_file():
            raise InputError(f"{d / name}: missing; expected a study directory written by simulator.studies.fmm.placement")
    table = pd.read_csv(d / "table.csv")
    missing = [c for c in TABLE_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"{d / 'table.csv'}: columns {', '.join(missing)} missing; expected a table.csv "
                         "written by simulator.studies.fmm.placement")
    m = machine if machine is not None else json.loads((d / "machine.json").read_text())
    dims = {int(q): ulist.UListDims(**v) for q, v in m["dims"].items()}
    counts = ({int(q): tuple(v) for q, v in m["class_counts"].items()} if "class_counts" in m else None)
    return model_rows(table, m, dims, counts if with_classes else {})


def main(argv: list[str] | None = None) -> int:
    """Print the MAE table and per-q deviations of a study directory (default results/fmm)."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    try:
        cross = recompute(args[0] if args else "results/fmm", with_classes="--uniform-classes" not in args)
    except InputError as exc:
        print(f"fmm_crosscheck: error: {exc}", file=sys.stderr)
        return 2
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(crosscheck_summary(cross).round(4).to_string(index=False))
        print(crosscheck_summary(cross, qs=(14,)).round(4).to_string(index=False))
    return 0
