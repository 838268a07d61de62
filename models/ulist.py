"""Analytical time and energy model of the FMM U-list (003 §4.2, §5.3, §6.3, eqs. 2-12).

The paper writes its equations in *elements* (8-byte doubles): every traffic
term below is an element count multiplied by :data:`ELEMENT_BYTES` and divided
by a bandwidth in bytes/s; every compute term is a flop count divided by a rate
in flop/s.  Seconds are turned into cycles with the host clock (2 GHz, 003
Table 4).  Stages: T1 input permutation (CPU), T2 GEMM (CPU or LAP), T3 output
permutation (CPU).

One deliberate generalisation, which reduces to the printed equation when the
two bandwidths are equal: the output permutation (eq. 4) reads and writes the
leaf-node data (2 N_oct N_q elements) at ``w_c_irregular_bytes_per_s`` and reads
C (N_U N_q elements) at ``w_c_bytes_per_s``.  The paper applies "a reduced
average CPU bandwidth of 0.32 GB/s in our output permutation model" (003:L185)
without saying to which part; the scattered leaf-node accesses are the
irregular ones.

Which parameter values reproduce the printed Table 5 model columns (003:L373-377)
is an analysis, not a calibration used anywhere: with the stated w_C = 3 GB/s,
f_L = 40 GFLOP/s and w_L = 12.8 GB/s only LAP-DRAM Orig at q = 10 and 14 comes
out (within 10 %); a least-squares w_C of 2.05 GB/s brings the whole Orig column
within 8 %, w_C = 0.95 GB/s the Blocked column (b from the LLC rule) within 6 %,
and b = ceil(N_U/N_oct), w_C = 1.85 GB/s, f_L = 34.5 GFLOP/s the Pipeline column
within 5 %. These values were fitted to the printed columns, so no test asserts them.

Costs the printed blocked and pipelined equations (8-12) omit, found by measuring
the simulated runs stage by stage, are added by a separate *extended* model at the
end of this module (``extended_stages``):
the host's writes of B into and reads of C from the LLC, the LAP port bound of the
block GEMMs, the driver's eviction of B and C before each offload, the cold start
of every GEMM call, and leaf data / K-M records fetched about once per run instead
of min(N_oct, N_U/b) leaves per block. For the CPU-only point (``cpu_extended_stages``)
the host GEMM's memory time adds to its compute time instead of overlapping it (eq. 5's
max). The printed functions are unchanged.

Energy follows the roofline form of 001 (eq. 10): E = sum over stages of
W eps_flop + sum_l Q_l eps_l + pi_0 T, with the work W (flop) and traffic Q
(bytes per memory level) of each stage and the energy costs passed in. The unblocked
equations (2-7) assume every stage streams from memory, so all their traffic is DRAM's;
the blocked ones (8-12) keep B and C in the LLC, so their exchange is the LLC's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Mapping, get_args

from simulator.config.accel_lap import BLOCK_MAX, BLOCK_MIN, block_size

ELEMENT_BYTES = 8  # double precision (003 §4.2)
N_GEMMS = 10  # precomputed matrices Â_j (003:L89)

Engine = Literal["cpu", "lap"]


def _positive(name: str, value: float) -> None:
    if not (value > 0) or math.isinf(value):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")


@dataclass(frozen=True)
class UListDims:
    """Problem dimensions (003 Table 1): points per leaf ``n_q``, leaf boxes ``n_oct``,
    U-list interactions ``n_u``."""

    n_q: int
    n_oct: int
    n_u: int

    def __post_init__(self) -> None:
        for name in ("n_q", "n_oct", "n_u"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")


@dataclass(frozen=True)
class UListMachine:
    """Machine parameters of the model (003 Table 1).

    ``w_c_bytes_per_s``: CPU memory bandwidth; ``w_c_irregular_bytes_per_s``: CPU
    bandwidth for the scattered leaf-node accesses of the output permutation;
    ``f_c_flops_per_s`` / ``f_l_flops_per_s``: CPU / LAP GEMM rate;
    ``w_l_bytes_per_s``: LAP memory bandwidth; ``clock_hz``: host clock for cycles.
    """

    w_c_bytes_per_s: float
    w_c_irregular_bytes_per_s: float
    f_c_flops_per_s: float
    f_l_flops_per_s: float
    w_l_bytes_per_s: float
    clock_hz: float = 2e9

    def __post_init__(self) -> None:
        for name in (
            "w_c_bytes_per_s",
            "w_c_irregular_bytes_per_s",
            "f_c_flops_per_s",
            "f_l_flops_per_s",
            "w_l_bytes_per_s",
            "clock_hz",
        ):
            _positive(name, getattr(self, name))

    def cycles(self, seconds: float) -> float:
        """Host cycles in ``seconds``."""
        return seconds * self.clock_hz


# --------------------------------------------------------------------------- element counts


def t1_elements(d: UListDims) -> int:
    """Elements moved by the input permutation: write-allocate and write B, read leaves (eq. 3)."""
    return 2 * d.n_u * d.n_q + d.n_oct * d.n_q


def t3_leaf_elements(d: UListDims) -> int:
    """Leaf-node elements read and written by the output permutation (eq. 4, first term)."""
    return 2 * d.n_oct * d.n_q


def t3_c_elements(d: UListDims) -> int:
    """Elements of C read by the output permutation (eq. 4, second term)."""
    return d.n_u * d.n_q


def gemm_flops(d: UListDims) -> int:
    """Flops of the ten GEMMs C_j = Â_j B_j: one multiply and one add per term (eq. 5)."""
    return 2 * d.n_u * d.n_q**2


def t2_cpu_elements(d: UListDims) -> int:
    """Elements moved by the GEMMs on the CPU: read A, read B, write-allocate and write C (eq. 5)."""
    return d.n_q * (N_GEMMS * d.n_q + 3 * d.n_u)


@dataclass(frozen=True)
class LapBlocking:
    """LAP sub-blocking of one GEMM m x k x n (003 eqs. 6-7): block ``m_c`` x ``n_c``,
    ``r`` sub-blocks."""

    m: int
    n: float
    m_c: float
    n_c: float
    r: int


def lap_block_edges(m: int, n: float) -> tuple[int, float]:
    """Sub-block edges m_c = min(max(m, 64), 256) and n_c = min(max(n, 64), 256) (003 eq. 7), the LAP's
    own rule (``simulator.config.accel_lap``); n, the columns of one GEMM, may be an average (float)."""
    return block_size(m), min(max(n, float(BLOCK_MIN)), float(BLOCK_MAX))


def lap_blocking(d: UListDims) -> LapBlocking:
    """Blocking of each of the ten GEMMs m = k = N_q, n = N_U / 10:
    m_c = min(max(m, 64), 256), n_c = min(max(n, 64), 256), r = ceil(n/n_c) ceil(m/m_c)."""
    m, n = d.n_q, d.n_u / N_GEMMS
    m_c, n_c = lap_block_edges(m, n)
    r = math.ceil(n / n_c) * math.ceil(m / m_c)
    return LapBlocking(m, n, m_c, n_c, r)


def t2_lap_elements(d: UListDims) -> float:
    """Elements moved by the LAP: per sub-block read and write C (m_c n_c each) and read
    the A and B panels (m_c k + k n_c), for r sub-blocks of ten GEMMs (eq. 7)."""
    b = lap_blocking(d)
    return N_GEMMS * b.r * (2 * b.m_c * b.n_c + d.n_q * (b.m_c + b.n_c))


# --------------------------------------------------------------------------- times (cycles)


def t1_cycles(d: UListDims, mc: UListMachine) -> float:
    """Input permutation T1 = (2 N_U N_q + N_oct N_q) / w_C (eq. 3), cycles."""
    return mc.cycles(t1_elements(d) * ELEMENT_BYTES / mc.w_c_bytes_per_s)


def t3_cycles(d: UListDims, mc: UListMachine) -> float:
    """Output permutation T3 = 2 N_oct N_q / w_irr + N_U N_q / w_C (eq. 4 with the
    leaf accesses at the irregular bandwidth; eq. 4 as printed when w_irr = w_C), cycles."""
    s = (
        t3_leaf_elements(d) * ELEMENT_BYTES / mc.w_c_irregular_bytes_per_s
        + t3_c_elements(d) * ELEMENT_BYTES / mc.w_c_bytes_per_s
    )
    return mc.cycles(s)


def t2_cpu_cycles(d: UListDims, mc: UListMachine) -> float:
    """GEMMs on the CPU T2 = max(2 N_U N_q^2 / f_C, N_q (10 N_q + 3 N_U) / w_C) (eq. 5), cycles."""
    return mc.cycles(
        max(
            gemm_flops(d) / mc.f_c_flops_per_s,
            t2_cpu_elements(d) * ELEMENT_BYTES / mc.w_c_bytes_per_s,
        )
    )


def t2_lap_cycles(d: UListDims, mc: UListMachine) -> float:
    """GEMMs on the LAP T2 = max(2 N_U N_q^2 / f_L, 10 r (2 m_c n_c + N_q (m_c + n_c)) / w_L)
    (eq. 7), cycles."""
    return mc.cycles(
        max(
            gemm_flops(d) / mc.f_l_flops_per_s,
            t2_lap_elements(d) * ELEMENT_BYTES / mc.w_l_bytes_per_s,
        )
    )


def t2_cycles(d: UListDims, mc: UListMachine, engine: Engine) -> float:
    """GEMM stage on ``engine`` ("cpu": eq. 5, "lap": eq. 7), cycles."""
    if engine == "cpu":
        return t2_cpu_cycles(d, mc)
    if engine == "lap":
        return t2_lap_cycles(d, mc)
    raise ValueError(f"engine must be 'cpu' or 'lap', got {engine!r}")


def total_cycles(d: UListDims, mc: UListMachine, engine: Engine) -> float:
    """T = T1 + T2 + T3 (eq. 2), cycles; the unblocked ("Orig") variant."""
    return t1_cycles(d, mc) + t2_cycles(d, mc, engine) + t3_cycles(d, mc)


def _check_blocks(b: int) -> None:
    if not isinstance(b, int) or isinstance(b, bool) or b < 1:
        raise ValueError(f"b (number of blocks) must be a positive integer, got {b!r}")


def block_leaf_elements(d: UListDims, b: int) -> float:
    """Leaf-node elements touched per block, min(N_oct, N_U / b) N_q (eqs. 9, 11)."""
    _check_blocks(b)
    return min(d.n_oct, d.n_u / b) * d.n_q


def blocked_stage_cycles(d: UListDims, mc: UListMachine, b: int) -> tuple[float, float, float]:
    """Per-block (T1, T2, T3) of the LLC-blocked variant with the GEMM on the LAP:
    T1 = 2 min(N_oct, N_U/b) N_q / w_C, T2 = 2 N_U N_q^2 / (b f_L),
    T3 = min(N_oct, N_U/b) N_q / w_C (eqs. 9-11), cycles."""
    leaf = block_leaf_elements(d, b) * ELEMENT_BYTES
    return (
        mc.cycles(2 * leaf / mc.w_c_bytes_per_s),
        mc.cycles(gemm_flops(d) / (b * mc.f_l_flops_per_s)),
        mc.cycles(leaf / mc.w_c_bytes_per_s),
    )


def blocked_cycles(d: UListDims, mc: UListMachine, b: int) -> float:
    """T = b (T1 + T2 + T3) (eq. 8), cycles."""
    return b * sum(blocked_stage_cycles(d, mc, b))


def pipelined_cycles(d: UListDims, mc: UListMachine, b: int) -> float:
    """T = b max(2 N_U N_q^2 / (b f_L), 3 min(N_oct, N_U/b) N_q / w_C) (eq. 12), cycles;
    pipeline fill and drain ignored, as in the paper."""
    t1, t2, t3 = blocked_stage_cycles(d, mc, b)
    return b * max(t2, t1 + t3)


def llc_blocks(d: UListDims, llc_bytes: float) -> int:
    """Smallest b for which one block of B and C (2 N_q N_U / b elements) fits ``llc_bytes`` (003 §6.1)."""
    _positive("llc_bytes", llc_bytes)
    return max(1, math.ceil(2 * d.n_q * d.n_u * ELEMENT_BYTES / llc_bytes))


# --------------------------------------------------------------------------- work, traffic, energy


#: the memory levels whose bytes are DRAM's: the host's and a cache-coupled LAP's (``dram``), and a DRAM- or
#: near-memory-coupled LAP's DMA (``dram_dma``, priced apart: it crosses neither the caches nor the memory path)
DRAM_LEVELS = ("dram", "dram_dma")


@dataclass(frozen=True)
class StageCost:
    """Work and traffic of one stage: ``flops`` on ``engine``, bytes per memory level
    (``traffic_bytes``, e.g. {"dram": ...}) and duration ``cycles``."""

    name: str
    engine: Engine
    flops: float
    traffic_bytes: Mapping[str, float] = field(default_factory=dict)
    cycles: float = 0.0


def stage_costs(d: UListDims, mc: UListMachine, engine: Engine) -> tuple[StageCost, ...]:
    """Work and DRAM traffic of the unblocked variant, stage by stage.

    Work: the input permutation scales every element of B once (N_U N_q flop),
    the GEMMs do 2 N_U N_q^2, the output permutation scales and accumulates every
    element of C (2 N_U N_q).  Traffic: the element counts of eqs. 3-5 / 7 x 8 B,
    all served by DRAM (the model's assumption that nothing stays cached).
    """
    t2_el = t2_cpu_elements(d) if engine == "cpu" else t2_lap_elements(d)
    return (
        StageCost("input", "cpu", d.n_u * d.n_q, {"dram": t1_elements(d) * ELEMENT_BYTES}, t1_cycles(d, mc)),
        StageCost("gemm", engine, gemm_flops(d), {"dram": t2_el * ELEMENT_BYTES}, t2_cycles(d, mc, engine)),
        StageCost(
            "output",
            "cpu",
            2 * d.n_u * d.n_q,
            {"dram": (t3_leaf_elements(d) + t3_c_elements(d)) * ELEMENT_BYTES},
            t3_cycles(d, mc),
        ),
    )


def blocked_stage_costs(d: UListDims, mc: UListMachine, b: int) -> tuple[StageCost, ...]:
    """Work and traffic of the LLC-blocked variant (all b blocks): B and C stay in the LLC, so
    DRAM sees only the leaf-node data of eqs. 9 and 11 and the GEMM none (eq. 10), while the
    exchange of B and C (N_U N_q elements each) is served by the LLC: the host writes B, the LAP
    reads B and C and writes C (C += A B, as eq. 7 counts it), the host reads C."""
    leaf = block_leaf_elements(d, b) * ELEMENT_BYTES
    bc = d.n_u * d.n_q * ELEMENT_BYTES
    t1, t2, t3 = blocked_stage_cycles(d, mc, b)
    return (
        StageCost("input", "cpu", d.n_u * d.n_q, {"dram": b * 2 * leaf, "llc": bc}, b * t1),
        StageCost("gemm", "lap", gemm_flops(d), {"dram": 0.0, "llc": 3 * bc}, b * t2),
        StageCost("output", "cpu", 2 * d.n_u * d.n_q, {"dram": b * leaf, "llc": bc}, b * t3),
    )


@dataclass(frozen=True)
class EnergyParams:
    """Energy costs: joules per flop on each engine, joules per byte served by each
    memory level, and constant (static) power in watts over the whole run."""

    eps_flop_cpu_j: float
    eps_flop_lap_j: float
    eps_byte_j: Mapping[str, float]
    static_power_w: float

    def __post_init__(self) -> None:
        for name in ("eps_flop_cpu_j", "eps_flop_lap_j", "static_power_w"):
            v = getattr(self, name)
            if not (v >= 0) or math.isinf(v):
                raise ValueError(f"{name} must be a finite non-negative number, got {v!r}")
        for level, v in self.eps_byte_j.items():
            if not (v >= 0) or math.isinf(v):
                raise ValueError(f"eps_byte_j[{level!r}] must be finite and non-negative, got {v!r}")


def energy_j(
    stages: tuple[StageCost, ...], params: EnergyParams, total_cycles_: float, clock_hz: float
) -> float:
    """E = sum W eps_flop + sum_l Q_l eps_l + pi_0 T (001 eq. 10 form), joules, with T =
    ``total_cycles_`` / ``clock_hz`` (the stage sum, or the pipelined time)."""
    _positive("clock_hz", clock_hz)
    e = 0.0
    for s in stages:
        e += s.flops * (params.eps_flop_cpu_j if s.engine == "cpu" else params.eps_flop_lap_j)
        for level, q in s.traffic_bytes.items():
            if level not in params.eps_byte_j:
                raise ValueError(f"no energy per byte for memory level {level!r}")
            e += q * params.eps_byte_j[level]
    return e + params.static_power_w * total_cycles_ / clock_hz


# --------------------------------------------------------------------------- extended model (not in 003)
#
# Eqs. 8-12 treat the blocked exchange of B and C through the LLC as free and the
# blocked GEMM as compute-bound. Measured per stage on the simulated LAP-LLC system
# (DRAM lines and busy cycles per stage, ``simulator.studies.fmm.placement``), four costs are
# real but missing from the printed equations; the functions below add them, beside
# the printed ones, and are compared with both in ``crosscheck.csv``:
#
# 1. the host still writes B into, and reads C from, the LLC: 2 N_U N_q elements at
#    the host's LLC bandwidth ``w_llc`` (eqs. 9 and 11 count only leaf data);
# 2. the LAP reaches B and C through its port: the block's ten GEMMs (n = N_U / (10 b))
#    move their traffic at w_L, so T2 = max(compute, traffic / w_L) (eq. 10 keeps only
#    the compute term; at small q the port is the bound). The real traffic, not eq. 7's
#    whole-block count, which charges m_c = 64 rows for m = 35 (q = 4);
# 3. before every offload the driver evicts the GEMM's B and C lines to the LLC
#    (003 §5.2): a per-line host cost, serial with the GEMM, pipelined too: the host
#    offloads gemm(i + 1), and so evicts its lines, only after it has waited for
#    gemm(i), so the LAP idles while it does; a DRAM or
#    near-memory coupling flushes them instead, and the dirty B lines the caches still
#    hold cost a DRAM write each;
# 4. leaf data and the per-interaction K/M records come from DRAM about once per
#    run: blocks are cut in target order, so neighbouring blocks share their halo
#    leaves in the LLC; eqs. 9/11 charge min(N_oct, N_U/b) leaves per block, an
#    upper bound that grows with b, and ignore the records.
# 5. every GEMM call starts cold: the LAP loads its first A panel, B panel and C block
#    before it computes, and writes its last C block after, unoverlapped (eq. 7 assumes
#    perfect overlap); 10 b calls, so this grows with b (q = 10, b = 45: ~60 MCycles).
# Pipelined (eq. 12 ignores filling and draining): in(0), then gemm(i) beside in(i + 1) and
# out(i - 1), then out(b - 1), each block Tm first (ExtendedStages.pipelined_cycles).


@dataclass(frozen=True)
class ExtendedParams:
    """Costs of the extended blocked/pipelined model, measured on the simulated machine.

    ``w_llc_bytes_per_s``: host bandwidth for lines served by the LLC, bytes/s;
    ``evict_cycles_per_line``: host cycles per line evicted to the LLC before an
    offload; ``meta_bytes_per_interaction``: bytes of one K (or M) record;
    ``line_bytes``: cache line, bytes; ``access_rate_per_s``: loads and stores the host
    issues per second when they hit (inf: issue never limits a row); ``residency_curve``:
    the LLC residency of a reused exchange measured on the simulated LLC, pairs of (working
    set / LLC capacity, dimensionless; share of lines kept, 0..1) with increasing ratios
    (:func:`llc_residency`; empty: all or nothing, 1 up to a ratio of 1 and 0 above);
    ``pipelined_b_curve`` / ``pipelined_c_curve``: the same for the B lines and for the C lines
    of the double-buffered (pipelined) exchange, measured separately (empty: the pipelined
    points use ``residency_curve`` for both); ``pipelined_contention``: triples (GEMM height
    N_q, strictly increasing; input factor; output factor), how many times longer the host's
    DRAM-bound B writes and C reads take while the LAP runs the concurrent GEMMs of that height
    in a pipeline than alone (dimensionless, > 0), measured on the coupling's own system and
    read at the point's N_q by :func:`pipelined_contention_at` (empty: no contention);
    ``dirty_flush_cycles_per_line``: host cycles per dirty line a non-coherent coupling's
    driver flushes to DRAM before an offload (0: no more than an eviction); the model charges it,
    beyond ``evict_cycles_per_line``, on what the caches can still hold of each block's B (at
    most the LLC), which the host has just written.
    """

    w_llc_bytes_per_s: float
    evict_cycles_per_line: float
    meta_bytes_per_interaction: float
    line_bytes: int = 64
    access_rate_per_s: float = math.inf
    residency_curve: tuple[tuple[float, float], ...] = ()
    pipelined_b_curve: tuple[tuple[float, float], ...] = ()
    pipelined_c_curve: tuple[tuple[float, float], ...] = ()
    pipelined_contention: tuple[tuple[float, float, float], ...] = ()
    dirty_flush_cycles_per_line: float = 0.0

    def __post_init__(self) -> None:
        _positive("w_llc_bytes_per_s", self.w_llc_bytes_per_s)
        for name in ("evict_cycles_per_line", "meta_bytes_per_interaction", "dirty_flush_cycles_per_line"):
            v = getattr(self, name)
            if not (v >= 0) or math.isinf(v):
                raise ValueError(f"{name} must be a finite non-negative number, got {v!r}")
        if not isinstance(self.line_bytes, int) or isinstance(self.line_bytes, bool) or self.line_bytes < 1:
            raise ValueError(f"line_bytes must be a positive integer, got {self.line_bytes!r}")
        if not self.access_rate_per_s > 0:
            raise ValueError(f"access_rate_per_s must be > 0 (inf allowed), got {self.access_rate_per_s!r}")
        check_residency_curve(self.residency_curve)
        check_residency_curve(self.pipelined_b_curve)
        check_residency_curve(self.pipelined_c_curve)
        check_contention_curve(self.pipelined_contention)
        if bool(self.pipelined_b_curve) != bool(self.pipelined_c_curve):
            raise ValueError("pipelined_b_curve and pipelined_c_curve must be given together, got "
                             f"{len(self.pipelined_b_curve)} and {len(self.pipelined_c_curve)} points")


# --------------------------------------------------------------------------- extended model, all variants
#
# ``extended_stages`` prices every
# LAP point (orig, blocked, pipelined; B and C exchanged through the LLC or through DRAM) from
# the U-list dimensions and per-line costs measured by micro runs on the simulated machine,
# and returns the work and traffic of each stage so that the energy uses the same time:
#
# * host stages are sums of trace rows, each lasting max(issue, compute, its own memory), so
#   only the leaf gather overlaps the scaling flops; the index loads, the B writes (input) and
#   C reads (output) and the K/M records are separate rows and add:
#   T1 = N_U N_q / a + max(N_U N_q / a, N_U N_q / f_C, N_U l_leaf c_x)
#   + max(N_U N_q / a, N_U N_q 8 / w_x) + N_U rec / w_C, T3 likewise with 2 N_U N_q flops and
#   2 N_U N_q accesses for the read-modify-write of the targets, where a = the host's access
#   rate (every element of a permutation is one load or store: the indexed copy does not
#   vectorise), l_leaf = lines one leaf of N_q doubles spans and w_x / c_x is the exchange
#   level's bandwidth / cycles per line (the LLC when B and C fit it, else DRAM at w_C);
# * the leaf gather lines are charged at the LLC cost (the leaf arrays, 2 N_oct N_q 8 B,
#   stay in the LLC; reuse in L2 is ignored: an upper bound); the input gathers one source
#   leaf per interaction (N_U l_leaf lines), the output walks each class's columns in target
#   order, so it touches each target leaf about once per class (min(N_U, 10 N_oct) l_leaf lines);
# * blocks (``order``, as ``workloads.fmm_ulist.split_blocks`` cuts them): "class" cuts B's own
#   column order (class by class) into b runs of N_U / b columns, so a block holds one or two
#   classes, a GEMM call per class piece (b + 9 calls at most, not 10 b) and reads only those
#   Â_j, but spans 10 / b of every target leaf per class it holds (all leaves when b <= 10);
#   "target" gives every block N_U / (10 b) columns of each class (10 b calls, all ten Â_j per
#   block) and 1 / b of the leaves;
# * each GEMM call costs first read + max(compute, rest of traffic / w_L) +
#   last write (the LAP double-buffers its steps but each call starts and ends alone),
#   with the real class sizes when given (``class_counts``), else N_U / 10 each;
# * the driver's eviction of B and C before each offload (per line, measured);
# * residency of the LLC exchange (:func:`llc_residency`): a block's working set W is every
#   line it brings through the LLC between two uses of a B or C line: the live B and C buffers
#   (``sets`` x 2 N_q N_U 8 / b bytes), the A_j its calls read (on average; N_q^2 8 B each), its
#   share of the leaf data (2 N_oct N_q 8 B times the share above) and of the K and M records
#   (2 N_U rec / b B). A share h(W / LLC) of
#   the B and C exchange and of the leaf gathers is served by the LLC, the rest by DRAM (B and C
#   at w_C, leaf lines at the measured random-access cost per line); h is measured on the
#   simulated LLC (``residency_curve``), so it falls with the overflow instead of jumping from 1
#   to 0 at W = LLC: orig (b = 1, W = 12.6 LLC at q = 4) gets h ~ 0; q = 4, b = 12 with class-
#   ordered blocks (W = 1.23 LLC) keeps about a third of B and C with LRU caches, 57 % with
#   MARSSx86's use-bit replacement (the MARSSx86-like systems).
# * pipelined points (``sets`` = 2) with measured pipelined curves: B and C get separate shares,
#   h_B and h_C, read at the same W / LLC from curves measured on a double-buffered exchange
#   (``simulator.studies.fmm.crosscheck.measure_pipelined_residency``). Rule: every B term (the host's B
#   writes in T1 and their traffic, the LAP's B reads) uses h_B, every C term (the host's C reads
#   in T3 and their traffic, the LAP's C read and write) uses h_C; the leaf gathers keep h.
#   Reason: with two sets the reuse distances of B and C differ. B(i + 1) is written by in(i + 1)
#   while gemm(i) runs and read by gemm(i + 1) soon after (short distance); C(i - 1) is written
#   by gemm(i - 1) and read by out(i - 1) only after gemm(i) has swept the other set and
#   in(i + 1) has rewritten B of its own set (about three quarters of W). One h for both, read off
#   the blocked curve, averages the two: it priced the simulated output permutation near LLC
#   speed while it ran near DRAM speed (MARSSx86-like host, q = 4..8). The shares also depend on
#   the host's speed (how much of gemm(i) overlaps in(i + 1)), so they are measured on each
#   study's own system. Without pipelined curves, or when blocked, h_B = h_C = h.
# * pipelined points: the host's B writes and C reads that go to DRAM run while the LAP runs
#   gemm(i) and competes for the DRAM (and, LLC-coupled, the LLC); their time is multiplied by
#   the measured contention factors (``pipelined_contention``, input and output: host stage
#   time beside the GEMMs / alone, on a double-buffered exchange whose B and C miss the LLC;
#   ``simulator.studies.fmm.crosscheck.measure_pipelined_contention``). The leaf gathers keep w_irr.
#   The factors are measured per GEMM height and read at the point's N_q: a thin GEMM moves
#   more bytes per flop, so it presses the DRAM harder (default LAP-DRAM system, input factor
#   2.25 at N_q = 35 and 1.27 at N_q = 286).


def _check_curve_points(curve: tuple[tuple[float, ...], ...], name: str, fields: tuple[str, ...]) -> None:
    """ValueError unless every point of ``curve`` has the ``fields`` and its first value is finite,
    > 0 and above the previous point's."""
    last = 0.0
    for i, point in enumerate(curve):
        if len(point) != len(fields):
            kind = {2: "pair", 3: "triple"}.get(len(fields), "point")
            raise ValueError(f"{name}[{i}] must be a ({', '.join(fields)}) {kind}, got {point!r}")
        if not (point[0] > last) or math.isinf(point[0]):
            raise ValueError(f"{name}[{i}] {fields[0]} must be finite and above the previous one "
                             f"({last}), got {point[0]!r}")
        last = point[0]


def check_contention_curve(curve: tuple[tuple[float, float, float], ...]) -> None:
    """ValueError unless ``curve`` is triples (height > 0, strictly increasing; input and output
    factors finite and > 0)."""
    _check_curve_points(curve, "pipelined_contention", ("height", "input", "output"))
    for i, (_, k_in, k_out) in enumerate(curve):
        if not (0 < k_in < math.inf and 0 < k_out < math.inf):
            raise ValueError(f"pipelined_contention[{i}] factors must be finite and > 0, got {(k_in, k_out)!r}")


def pipelined_contention_at(curve: tuple[tuple[float, float, float], ...], n_q: float) -> tuple[float, float]:
    """(input, output) contention factors at GEMM height ``n_q``: linear between the measured
    heights of ``curve``, the nearest end's outside them, (1, 1) for an empty curve."""
    if not curve:
        return 1.0, 1.0
    if n_q <= curve[0][0]:
        return float(curve[0][1]), float(curve[0][2])
    for (h0, i0, o0), (h1, i1, o1) in zip(curve, curve[1:]):
        if n_q <= h1:
            w = (n_q - h0) / (h1 - h0)
            return float(i0 + w * (i1 - i0)), float(o0 + w * (o1 - o0))
    return float(curve[-1][1]), float(curve[-1][2])


def check_residency_curve(curve: tuple[tuple[float, float], ...]) -> None:
    """ValueError unless ``curve`` is pairs (ratio > 0, strictly increasing; residency in [0, 1])."""
    _check_curve_points(curve, "residency_curve", ("ratio", "residency"))
    for i, (_, h) in enumerate(curve):
        if not 0 <= h <= 1:
            raise ValueError(f"residency_curve[{i}] residency must be in [0, 1], got {h!r}")


def llc_residency(working_set_bytes: float, llc_bytes: float,
                  curve: tuple[tuple[float, float], ...] = ()) -> float:
    """Share of a reused exchange's lines the LLC still serves (0..1), for a working set of
    ``working_set_bytes`` reused once per block in an LLC of ``llc_bytes``.

    Rule: h = ``curve`` at the ratio x = working set / LLC capacity, linear between its points,
    its first residency below its first ratio and its last beyond its last (a measured curve
    starts where everything stays, 1, and ends where nothing does, 0); without a curve, the
    all-or-nothing premise (1 for x <= 1, else 0). The curve is measured, not derived in
    closed form (``simulator.studies.fmm.crosscheck.measure_llc_residency``): the simulated LLC is
    set-associative with exact LRU, non-inclusive, and the LAP reads B and C in panel order
    while the host writes B and reads C in row order, so the reuse distances of B and C lines
    spread between about W / 2 and W instead of all being W (a cyclic sweep, where one line
    over the capacity loses every hit). Lines whose reuse distance in their set stays within
    the ways keep hitting; the share of them falls gradually as x grows past 1 (measured on
    the 8 MiB 16-way LLC: about 0.9 at x = 1.0, 0.55 at 1.1, 0.25 at 1.3, 0.1 at 1.8, 0 at 3-4).
    """
    _positive("llc_bytes", llc_bytes)
    if not working_set_bytes >= 0 or math.isinf(working_set_bytes):
        raise ValueError(f"working_set_bytes must be a finite non-negative number, got {working_set_bytes!r}")
    x = working_set_bytes / llc_bytes
    if not curve:
        return 1.0 if x <= 1 else 0.0
    check_residency_curve(curve)
    ratios, shares = zip(*curve)
    if x <= ratios[0]:
        return float(shares[0])
    for (x0, h0), (x1, h1) in zip(curve[:-1], curve[1:]):
        if x <= x1:
            return float(h0 + (h1 - h0) * (x - x0) / (x1 - x0))
    return float(shares[-1])


def leaf_lines(n_q: int, line_bytes: int = 64) -> float:
    """Mean number of cache lines one leaf (N_q doubles at offset i N_q 8 B) spans, over i."""
    if not isinstance(n_q, int) or n_q < 1:
        raise ValueError(f"n_q must be a positive integer, got {n_q!r}")
    size = n_q * ELEMENT_BYTES
    period = line_bytes // math.gcd(size, line_bytes)
    total = sum((i * size + size - 1) // line_bytes - (i * size) // line_bytes + 1 for i in range(period))
    return total / period


def lap_call_cycles(n_q: int, n: float, mc: UListMachine) -> float:
    """One LAP GEMM call m = k = N_q, n columns (C += A B), cycles: the first step's reads
    (A panel, B panel, C block) and the last C block's write are not overlapped; the rest of
    the traffic overlaps the compute: fill / w_L + max(2 N_q^2 n / f_L, (moved - fill) / w_L)."""
    if n <= 0:
        return 0.0
    m = n_q
    m_c, n_c = lap_block_edges(m, n)
    rows, cols0 = min(m, m_c), min(n, n_c)
    cols_last = n - (math.ceil(n / n_c) - 1) * n_c
    fill = (rows * n_q + n_q * cols0 + rows * cols0 + rows * cols_last) * ELEMENT_BYTES
    moved = (math.ceil(n / n_c) * m * m + math.ceil(m / m_c) * m * n + 2 * m * n) * ELEMENT_BYTES
    return mc.cycles(fill / mc.w_l_bytes_per_s
                     + max(2 * m * m * n / mc.f_l_flops_per_s, max(0.0, moved - fill) / mc.w_l_bytes_per_s))


@dataclass(frozen=True)
class ExtendedStages:
    """Per-block cycles of the extended model (``t1`` input, ``t2`` GEMM calls, ``t3`` output,
    ``tm`` eviction), the number of blocks ``b``, the LLC residency of the block's working set
    (``residency``, 0..1: the share of leaf gathers the LLC serves), the shares of the B and of
    the C exchange the LLC serves (``b_llc_share``, ``c_llc_share``, 0..1: the residency, or the
    pipelined B / C residency, with the LLC coupling; else 0) and the whole run's work and
    traffic ``stages`` (bytes per level)."""

    t1: float
    t2: float
    t3: float
    tm: float
    b: int
    residency: float
    b_llc_share: float
    c_llc_share: float
    stages: tuple[StageCost, ...]

    @property
    def bc_llc_share(self) -> float:
        """Share of the B and C exchange the LLC serves (0..1; B and C are equal in size)."""
        return (self.b_llc_share + self.c_llc_share) / 2

    @property
    def via_llc(self) -> bool:
        """Whether the LLC serves any of the B and C exchange."""
        return self.bc_llc_share > 0

    def blocked_cycles(self) -> float:
        """b (T1 + Tm + T2 + T3), cycles (eq. 8 with the extended stages; orig: b = 1)."""
        return self.b * (self.t1 + self.tm + self.t2 + self.t3)

    def pipelined_cycles(self) -> float:
        """Eq. 12 with fill and drain, cycles, as the pipelined trace runs (003 Fig. 6): in(0);
        then per block i, gemm(i) beside in(i + 1) (all but the last block) and out(i - 1) (all
        but the first); then out(b - 1). So T1 + [Tm + max(T2, T1)] + (b - 2) (Tm + max(T2,
        T1 + T3)) + [Tm + max(T2, T3)] + T3 for b >= 2, each permutation b times; for b = 1,
        T1 + Tm + T2 + T3. Per block the host evicts (or flushes) the next block's B and C when
        it offloads it, after waiting for the running GEMM, so Tm is serial with both sides."""
        t1, t2, t3, tm, b = self.t1, self.t2, self.t3, self.tm, self.b
        if b == 1:
            return t1 + tm + t2 + t3
        return (t1 + (tm + max(t2, t1)) + (b - 2) * (tm + max(t2, t1 + t3))
                + (tm + max(t2, t3)) + t3)


BlockOrder = Literal["class", "target"]  # how blocks cut the U-list (workloads.fmm_ulist.split_blocks)
BLOCK_ORDERS = get_args(BlockOrder)


def check_block_order(order: str) -> str:
    """``order`` if it is one of :data:`BLOCK_ORDERS`, else ValueError naming them."""
    if order not in BLOCK_ORDERS:
        raise ValueError(f"order must be one of {BLOCK_ORDERS}, got {order!r}")
    return order


def block_pieces(counts: tuple[float, ...], b: int, order: str = "class") -> list[list[float]]:
    """Columns of each class in each of ``b`` blocks (``counts``: columns per class).
    "class": B's columns class by class cut into b equal runs; "target": every block gets
    counts / b of every class (target-ordered blocks)."""
    _check_blocks(b)
    if check_block_order(order) == "target":
        return [[c / b for c in counts]] * b
    edges = [float(sum(counts)) * i / b for i in range(b + 1)]
    starts = [float(sum(counts[:j])) for j in range(len(counts))]
    return [[max(0.0, min(hi, s + c) - max(lo, s)) for s, c in zip(starts, counts)]
            for lo, hi in zip(edges[:-1], edges[1:])]


def extended_stages(d: UListDims, mc: UListMachine, ext: ExtendedParams, b: int, *, llc_bytes: float,
                    sets: int = 1, coupling: str = "llc",
                    class_counts: tuple[int, ...] | None = None, order: str = "class") -> ExtendedStages:
    """The extended model of one LAP point (comment above). ``llc_bytes``: LLC capacity, B;
    ``sets``: live B/C buffer sets (2 when pipelined); ``coupling``: "llc" (the LAP reads B and C through the
    LLC) or "dram"/"near-memory" (the LAP reads memory by DMA, so B and C always cross DRAM, and the GEMM
    stage's DRAM bytes are level ``dram_dma``, priced apart from the host's: DMA crosses neither the caches nor
    the host's memory path); ``class_counts``: interactions per class (default N_U / 10 each); ``order``: how
    blocks cut the columns (:func:`block_pieces`)."""
    _check_blocks(b)
    _positive("llc_bytes", llc_bytes)
    if sets not in (1, 2):
        raise ValueError(f"sets must be 1 or 2, got {sets!r}")
    if coupling not in ("llc", "dram", "near-memory"):
        raise ValueError(f"coupling must be 'llc', 'dram' or 'near-memory', got {coupling!r}")
    counts = class_counts if class_counts is not None else (d.n_u / N_GEMMS,) * N_GEMMS
    if any(c < 0 for c in counts) or abs(sum(counts) - d.n_u) > 0.5:
        raise ValueError(f"class_counts must be non-negative and sum to n_u = {d.n_u}, got {class_counts!r}")
    eb, line = ELEMENT_BYTES, ext.line_bytes
    bc = d.n_u * d.n_q * eb  # bytes of B (and of C), whole run
    pieces = block_pieces(counts, b, order)
    calls = [n for blk in pieces for n in blk if n > 0]  # one GEMM call per class piece
    if order == "target":
        leaf_share = 1 / b
    else:  # a block spans its classes' share of every target (and nearby source) leaf
        leaf_share = sum(min(1.0, sum(n / c for n, c in zip(blk, counts) if c > 0)) for blk in pieces) / b
    working_set = (sets * 2 * bc / b + len(calls) / b * d.n_q ** 2 * eb + 2 * d.n_oct * d.n_q * eb * leaf_share
                   + 2 * d.n_u * ext.meta_bytes_per_interaction / b)
    h = llc_residency(working_set, llc_bytes, ext.residency_curve)  # leaf gathers served by the LLC
    h_b = h_c = h
    if sets == 2 and ext.pipelined_b_curve:  # double-buffered: B and C have their own residency
        h_b = llc_residency(working_set, llc_bytes, ext.pipelined_b_curve)
        h_c = llc_residency(working_set, llc_bytes, ext.pipelined_c_curve)
    if coupling != "llc":  # the LAP reads memory: B and C cross DRAM
        h_b = h_c = 0.0
    # host seconds per byte of B and of C, and per gathered leaf line (LLC hit, or a random DRAM
    # access: w_irr counts 8 B per access)
    # (pipelined: the DRAM part runs beside the concurrent GEMM, slowed by the measured contention)
    k_in, k_out = pipelined_contention_at(ext.pipelined_contention, d.n_q) if sets == 2 else (1.0, 1.0)
    s_b = h_b / ext.w_llc_bytes_per_s + k_in * (1 - h_b) / mc.w_c_bytes_per_s
    s_c = h_c / ext.w_llc_bytes_per_s + k_out * (1 - h_c) / mc.w_c_bytes_per_s
    c_leaf = h * line / ext.w_llc_bytes_per_s + (1 - h) * ELEMENT_BYTES / mc.w_c_irregular_bytes_per_s
    l_leaf = leaf_lines(d.n_q, line)
    in_lines = d.n_u * l_leaf
    out_lines = min(d.n_u, N_GEMMS * d.n_oct) * l_leaf
    meta = d.n_u * ext.meta_bytes_per_interaction / mc.w_c_bytes_per_s
    elems, rate = d.n_u * d.n_q, ext.access_rate_per_s  # permuted elements per stage; accesses / s
    t1 = (elems / rate + max(elems / rate, elems / mc.f_c_flops_per_s, in_lines * c_leaf)
          + max(elems / rate, bc * s_b) + meta)
    t3 = (elems / rate + max(2 * elems / rate, 2 * elems / mc.f_c_flops_per_s, out_lines * c_leaf)
          + max(elems / rate, bc * s_c) + meta)
    t2 = sum(lap_call_cycles(d.n_q, n, mc) for n in calls) / b  # per block (on average), cycles
    tm = 2 * bc / line * ext.evict_cycles_per_line / mc.clock_hz
    if coupling != "llc":  # the flush writes back what the host's caches still hold of each block's B
        dirty = b * min(bc / b, llc_bytes) / line
        tm += dirty * max(0.0, ext.dirty_flush_cycles_per_line - ext.evict_cycles_per_line) / mc.clock_hz
    # traffic (bytes per level), whole run: records from DRAM once; A once per call; resident
    # leaf data from DRAM once (source and target read, target written back) and its gathers
    # from the LLC, the rest gathered from DRAM; B at the LLC for the share h_b and C for h_c,
    # else DRAM (B written and C read by the host, B and C read and C written by the LAP)
    a_bytes = len(calls) * d.n_q ** 2 * eb
    leaf_dram = 3 * d.n_oct * d.n_q * eb
    meta_dram = 2 * d.n_u * ext.meta_bytes_per_interaction
    g_in, g_out = in_lines * line, out_lines * line  # gathered leaf bytes

    def host(leaf_once: float, gathered: float, hx: float) -> dict[str, float]:
        return {"dram": meta_dram / 2 + (1 - hx) * bc + h * leaf_once + (1 - h) * gathered,
                "llc": hx * bc + h * gathered}

    inp, out = host(leaf_dram * 2 / 3, g_in, h_b), host(leaf_dram / 3, g_out, h_c)
    lap_dram = "dram" if coupling == "llc" else "dram_dma"  # through the caches, or DMA
    gem = {lap_dram: a_bytes + (1 - h_b) * bc + (1 - h_c) * 2 * bc, "llc": h_b * bc + h_c * 2 * bc}
    stages = (
        StageCost("input", "cpu", d.n_u * d.n_q, inp, mc.cycles(t1)),
        StageCost("gemm", "lap", gemm_flops(d), gem, b * t2 + mc.cycles(tm)),
        StageCost("output", "cpu", 2 * d.n_u * d.n_q, out, mc.cycles(t3)),
    )
    return ExtendedStages(mc.cycles(t1) / b, t2, mc.cycles(t3) / b, mc.cycles(tm) / b, b, h, h_b, h_c, stages)


@dataclass(frozen=True)
class HostGemmBlocking:
    """Packing of the host GEMM (GotoBLAS): B is packed in ``k_c``-deep, ``n_c``-wide panels
    (elements) and every k_c slice updates the C panel once."""

    k_c: int
    n_c: int

    def __post_init__(self) -> None:
        for name in ("k_c", "n_c"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")


def host_gemm_elements(d: UListDims, blocking: HostGemmBlocking, llc_bytes: float,
                       class_counts: tuple[int, ...] | None = None) -> float:
    """Elements the ten host GEMMs (m = k = N_q, n = the class widths: the ``rows`` layout of B
    and C) move to and from DRAM:
    the ten Â_j once, B once, and C read and written once per k_c slice whose C panel
    (N_q x n_c) does not stay in the LLC beside the packed B panel (k_c x n_c), else once.
    With N_q <= k_c (one slice) this is eq. 5's count, N_q (10 N_q + 3 N_U)."""
    _positive("llc_bytes", llc_bytes)
    counts = class_counts if class_counts is not None else (d.n_u / N_GEMMS,) * N_GEMMS
    slices = math.ceil(d.n_q / blocking.k_c)
    total = N_GEMMS * d.n_q ** 2
    for n in counts:
        width = min(float(blocking.n_c), n)
        panels = (d.n_q + min(blocking.k_c, d.n_q)) * width * ELEMENT_BYTES
        passes = slices if panels > llc_bytes else 1
        total += d.n_q * n * (1 + 2 * passes)
    return total


def cpu_extended_stages(d: UListDims, mc: UListMachine, ext: ExtendedParams, blocking: HostGemmBlocking, *,
                        llc_bytes: float, class_counts: tuple[int, ...] | None = None) -> ExtendedStages:
    """The extended model of the CPU-only point: the host stages of the unblocked DRAM exchange
    (:func:`extended_stages`, b = 1) and the GEMMs on the host, whose packing and C-update
    passes stream memory while the micro-kernel waits, so that T2 = 2 N_U N_q^2 / f_C +
    :func:`host_gemm_elements` 8 B / w_C (eq. 5 takes the max of the two). No offload: no
    eviction."""
    base = extended_stages(d, mc, ext, 1, llc_bytes=llc_bytes, coupling="dram", class_counts=class_counts)
    moved = host_gemm_elements(d, blocking, llc_bytes, class_counts) * ELEMENT_BYTES
    t2 = mc.cycles(gemm_flops(d) / mc.f_c_flops_per_s + moved / mc.w_c_bytes_per_s)
    inp, _, out = base.stages
    stages = (inp, StageCost("gemm", "cpu", gemm_flops(d), {"dram": moved}, t2), out)
    return ExtendedStages(base.t1, t2, base.t3, 0.0, 1, base.residency, 0.0, 0.0, stages)


def fastest_pipelined_blocks(d: UListDims, mc: UListMachine, ext: ExtendedParams, b_min: int, b_max: int, *,
                             llc_bytes: float, coupling: str = "llc",
                             class_counts: tuple[int, ...] | None = None, order: str = "class") -> int:
    """The block count in [b_min, b_max] whose pipeline the extended model predicts fastest
    (:meth:`ExtendedStages.pipelined_cycles`, two buffer sets); the smallest such b on a tie.
    Arguments as :func:`extended_stages`; b_min <= b_max, both >= 1."""
    _check_blocks(b_min)
    _check_blocks(b_max)
    if b_min > b_max:
        raise ValueError(f"b_min must be <= b_max, got {b_min} > {b_max}")
    return min(range(b_min, b_max + 1),
               key=lambda b: (extended_stages(d, mc, ext, b, llc_bytes=llc_bytes, sets=2, coupling=coupling,
                                              class_counts=class_counts, order=order).pipelined_cycles(), b))
