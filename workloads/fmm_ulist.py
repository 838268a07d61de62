"""FMM U-list operation traces: input permutation, ten GEMMs, output permutation (003 §3-4, §6).

The tree, the U-lists and the 10 interaction classes come from
:mod:`workloads.fmm_tree`.  Memory layout (one :class:`AddressSpace`, doubles of
8 B unless noted):

* ``leaf.src``: source data, N_oct x N_q; ``leaf.tgt``: target data, N_oct x N_q;
* ``A.c<j>``: the class matrices Â_j, N_q x N_q each (10 of them);
* ``B.s<s>`` / ``C.s<s>``: the B and C buffers of one block (LAP placement),
  reused by every block: class j of block i is an N_q x n_ij matrix at a
  line-aligned offset in buffer set s = i mod (number of sets), its columns the
  block's interactions of class j sorted by target leaf, stored as ``bc_layout``
  says (:data:`BC_LAYOUTS`): ``"rows"`` (the default) row by row, so 8 columns
  of a row share a line; ``"interactions"`` column by column, an interaction's
  N_q values contiguous, as PVFMM lays out its GEMM buffers (``FMM_Pts::EvalList``
  in its ``fmm_pts.txx``: the input permutation writes each interaction's vector
  to consecutive doubles, class after class, and the GEMM multiplies that
  n_ij x N_q row-major matrix by the precomputed matrix on the right). Blocked code works
  on "smaller, blocked versions of matrix B and C" (003 §6.1), so a block
  overwrites the lines the previous one left in the LLC instead of streaming
  fresh memory (fresh buffers per block would make every B and C line a
  write-back and every C line a DRAM read). ``pipelining`` double-buffers (two
  sets: gemm(i) uses one while in(i+1) and out(i-1) use the other); the other
  variants have one set (unblocked: one block, so the whole N_q x N_U);
* ``meta.in`` / ``meta.out``: per interaction a 16 B record (leaf index, scale)
  for K and for M; ``perm.in`` / ``perm.out``: per relative position (139 kinds)
  an N_q vector of int32 indices (the permutation of K and M).

Rows are coarse so that a point simulates quickly: interactions are handled in
groups of :data:`GROUP` columns; per group the input permutation reads, per
interaction, its kind's permutation vector (N_q int32 indices) and its source
leaf (N_q doubles), then the next group's K records, then writes the group's
columns of B (row layout: line-group by line-group, 8 columns of one row of B
sharing a 64 B line, a line group the group covers in part holding only the
covered columns; interaction layout: one contiguous run). The records are
read one group ahead, before the group's stores, because the real loop's loads
do not wait for its stores: x86 lets a load pass older stores to other
addresses, which sit in the store buffer while their lines are fetched. Read
after the stores, the records' DRAM reads would queue behind the write-backs
those stores cause (each group's B lines are read for ownership and evict dirty
B lines), which in the real loop drain while the next gathers hit the caches.
The order is the trace's to set: the host core replays rows one after another
and reorders nothing between them. Vectors are gathers of runs
(``TraceBuilder.gather(run=...)``): the permutation reorders values inside a
leaf and so touches the same lines, but the code cannot vectorise an indexed
copy, so every element is its own load or store (one index load, one source
load, one store to B per element of the input; one index load, one C load and a
read-modify-write of the target per element of the output). The output
permutation reads M records (one group ahead, before the updates of the target
leaves) and the C columns in the same way. Flops: N_q per interaction for the
scale of K, 2 N_q for the scale-and-accumulate of M, 2 N_q^2 per column for the
GEMM.

GEMM placement ``"cpu"``: ``workloads.gemm.host_gemm`` on this layout's
matrices; ``"lap"`` or ``"systolic"``: one ``gemm`` command per class to the unit
of that name (inputs A_j, B_j, C_j; output C_j; C += A B as eq. 7 counts it; a
systolic array takes the LAP's command), then a wait.  Both take
the row-major view of the layout: C_j = Â_j B_j (m = k = N_q, n = n_ij) for rows,
PVFMM's C_j^T += B_j^T Â_j^T (m = n_ij, n = k = N_q) for interactions. The LAP's
m_c / n_c blocking is symmetric in m and n, so its sub-blocks, panel traffic and
flops are the same; the layout only decides which lines a panel is.

Variants (003 §6, §8.1): ``orig``; ``orig_pref`` (between each offload and its
wait the host reads the class's M records and permutation vectors, so they are
cached when the output permutation needs them); ``blocking`` (B's columns, class
by class and by target within a class, cut into b runs, or b = ``blocks``
(:func:`split_blocks`); in, gemm, out per block); ``blocking_pref``;
``pipelining`` (003 Fig. 6: offload gemm(i), then in(i+1) and out(i-1) on the
host, then wait).  Stage labels: ``input_perm``, ``gemm``, ``out_prefetch``,
``output_perm``.

Threads (``threads`` = T > 1): the permutations run in parallel over target leaves, as PVFMM's run under
OpenMP: the leaves are cut into T contiguous ranges holding about N_U / T interactions each
(:func:`target_ranges`), and thread t permutes, in every class, the interactions whose target leaf is in its
range (a run of the class's columns, which are sorted by target), so no two threads update one target leaf.
Each stage of a block ends at a barrier of every thread. The GEMMs: offloaded by thread 0 (``lap``; thread 0
also issues the prefetches and the waits), or on the cores (``cpu``), the block's class GEMMs dealt to the
threads in turn. One thread is the serial trace.

Block size: 003 §6.1 blocks B and C so that their "total size is equal or smaller
than the LLC capacity" (003:L253).  The default b is the smallest for which the live B
and C buffers (one set, two when pipelined) fill at most a share ``llc_share`` of
``llc_bytes`` (dimensionless, 0 < share <= 1): 1 is 003's literal rule, the default
:data:`DEFAULT_LLC_SHARE` = 1/2 leaves room for what the stages touch beside B and C.
Filling the whole LLC leaves no room for the leaf data, the Â_j and the K/M records that
the stages touch at the same time, and a cyclic sweep over a working set just above
an LRU cache's capacity misses on every line: measured on the 8 MiB 16-way LLC
at q = 4 (LAP-LLC blocking, class-ordered blocks, reused buffers; lines the caches
exchanged with DRAM), B + C = 95 % of the LLC (b = 12) gives 3.14 M, 82 % (b = 14)
1.95 M, 72 % (b = 16) 1.05 M and 48 % (b = 24) 0.65 M (LAP-DRAM Orig: 5.20 M).  Finer
blocks cost elsewhere: every cut adds a GEMM call, which reads its Â_j again and starts by
loading its first panels unoverlapped, so b is also kept <= :func:`reread_cap` (class
order: 1 + 2 N_U / N_q, where the extra Â_j reads would exceed the B and C traffic
blocking saves; with an 8 MiB LLC it binds only on pipelined points at q = 14 with
share 1/2, whose range then starts at 26 instead of 45).  Studies
choose the share with the study-file key ``block_llc_share`` (:mod:`simulator.studies.fmm.placement`).
For a pipeline the bound trades differently (more blocks hide more of the permutations), so
:func:`block_range` returns both ends and a study may pick b in between
(:mod:`simulator.studies.fmm.placement` lets the U-list model choose).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from models.ulist import BLOCK_ORDERS, BlockOrder, UListDims, check_block_order, llc_blocks
from simulator.config.arrow import arrow_array
from workloads import fmm_tree
from workloads.gemm import host_gemm_panels
from workloads.trace import (MAX_TRACE_ADDRESSES, MAX_TRACE_ROWS, THREAD_FIELD, TRACE_SCHEMA, AddressSpace,
                             TraceBuilder, check_trace_limit, thread_count)
from workloads.trace_stream import BATCH_ROWS, TraceStream

ELEM_BYTES = 8  # double precision
META_BYTES = 16  # per interaction: leaf index (int64) and scale (double)
PERM_ELEM_BYTES = 4  # int32 permutation index
LINE_BYTES = 64
COLS_PER_LINE = LINE_BYTES // ELEM_BYTES
GROUP = 64  # interactions per trace-row group (a multiple of COLS_PER_LINE)
SPAN_GROUPS = 64  # groups whose addresses a permutation makes at once: bounded, so memory stays flat in N
BcLayout = Literal["rows", "interactions"]  # how B_j and C_j are stored (module docstring)
BC_LAYOUTS = get_args(BcLayout)
DEFAULT_LLC_SHARE = 0.5  # default share of the LLC the live B and C block buffers may fill (module docstring)
N_CLASSES = len(fmm_tree.CLASS_KEYS)
Variant = Literal["orig", "orig_pref", "blocking", "blocking_pref", "pipelining"]
#: the variants that cut the interactions into ``blocks``
BLOCKED_VARIANTS: tuple[str, ...] = ("blocking", "blocking_pref", "pipelining")
Placement = Literal["cpu", "lap", "systolic"]  # "cpu", or the accelerator unit the GEMMs offload to
DensityName = Literal["uniform", "plummer", "gaussian", "table2"]
VARIANTS: tuple[str, ...] = get_args(Variant)
PLACEMENTS: tuple[str, ...] = get_args(Placement)
DENSITIES: tuple[str, ...] = get_args(DensityName)


@dataclass(frozen=True)
class UListProblem:
    """A tree's U-list, sorted by target leaf: ``n_q`` points per leaf, ``n_oct`` leaves and
    parallel arrays ``target``, ``source``, ``kind``, ``class_id`` (int32, one entry per interaction)."""

    n_q: int
    n_oct: int
    target: np.ndarray
    source: np.ndarray
    kind: np.ndarray
    class_id: np.ndarray

    @property
    def n_u(self) -> int:
        """Number of U-list interactions N_U."""
        return int(self.target.size)

    def dims(self) -> UListDims:
        """Dimensions for :mod:`models.ulist`."""
        return UListDims(self.n_q, self.n_oct, self.n_u)


def order_problem(q: int, n_points: int) -> str | None:
    """Why order ``q`` cannot build a tree of ``n_points`` points (a leaf box would hold more than all of them),
    or None. (``fmm_tree.leaf_points`` checks q.)"""
    if fmm_tree.leaf_points(q) <= n_points:
        return None
    q_max = next(i for i in range(int(q)) if fmm_tree.leaf_points(i + 1) > n_points)
    return (f"q must be at most {q_max} for n_points = {n_points} (a leaf box holds (q+1)(q+2)(q+3)/6 points, at "
            f"most all of them), got {q!r}")


def build_problem(q: int, n_points: int = 240_000, density: str = "uniform", seed: int = 0,
                  periodic: bool | None = None, budget: str = "rows") -> UListProblem:
    """The U-list of the volume FMM tree of order ``q`` for ``n_points`` points.

    ``density``: "uniform", "plummer", "gaussian" (one cluster, the default scale of
    :class:`fmm_tree.Density`) or "table2" (the density and domain that reproduce 003
    Table 2).  ``periodic``: domain; default: periodic for "table2", free otherwise.
    ``budget``: the trace limit the problem must fit (:data:`INTERACTION_BUDGETS`): "rows" for any trace of it
    (a stream, a model point), "addresses" for a trace built whole (its explicit addresses are counted over the
    whole table); a problem beyond it is refused naming ``n_points``, as soon as its tree search or its U-list
    listing shows it. The problem is the same for the same arguments, so the last few are kept
    (:data:`PROBLEM_CACHE_SIZE`) and shared; their arrays are read-only.
    """
    if density not in DENSITIES:
        raise ValueError(f"density must be one of {', '.join(DENSITIES)}, got {density!r}")
    if isinstance(n_points, bool) or int(n_points) != n_points or n_points < 1:
        raise ValueError(f"n_points must be a positive integer, got {n_points!r}")
    # the tree holds every point's code: refused before they are drawn
    check_trace_limit("n_points", n_points, MAX_TRACE_ADDRESSES, f"at most {MAX_TRACE_ADDRESSES:,} points, "
                      "as many as the explicit addresses of a trace")
    problem = order_problem(q, n_points)
    if problem:
        raise ValueError(problem)
    if periodic is None:
        periodic = fmm_tree.TABLE2_PERIODIC if density == "table2" else False
    if budget not in INTERACTION_BUDGETS:
        raise ValueError(f"budget must be one of {', '.join(INTERACTION_BUDGETS)}, got {budget!r}")
    most, why = INTERACTION_BUDGETS[budget]
    key = (int(q), int(n_points), density, seed, bool(periodic))
    with _PROBLEMS_LOCK:
        held = _PROBLEMS.pop(key, None)
        if held is not None:
            _PROBLEMS[key] = held  # now the most recently used
    try:
        if held is None:
            held = _build_problem(*key, most)  # (built outside the lock: another thread may build it too)
            with _PROBLEMS_LOCK:
                _PROBLEMS[key] = held
                while len(_PROBLEMS) > PROBLEM_CACHE_SIZE:
                    del _PROBLEMS[next(iter(_PROBLEMS))]  # the least recently used
        elif held.n_u > most:
            raise fmm_tree.TooManyInteractions(most)
    except (fmm_tree.TooManyLeaves, fmm_tree.TooManyInteractions):
        raise ValueError(f"n_points must be fewer for q = {q}: the tree of {n_points:,} points would hold more than "
                         f"{most:,} U-list interactions (at least 8 per leaf), {why} "
                         f"(workloads.fmm_ulist.INTERACTION_BUDGETS), got {n_points}") from None
    return held


#: Problems :func:`build_problem` keeps: every order q of an FMM study (five), so that a worker builds each
#: once, though it meets every q twice (the CPU-only points go first, then the LAP points q by q) and the
#: driver asks for them again for the pipelined points' b and for each study's report. A problem takes
#: about 0.3 s to build at q = 4 (N = 2.4e5; 0.65 s as a process's first), against about 0.25 s for the
#: trace itself, and holds about 3 MB of arrays.
PROBLEM_CACHE_SIZE = 8
#: the problems kept, least recently used first, by their arguments (a budget decides only whether one is refused)
_PROBLEMS: dict[tuple, UListProblem] = {}
_PROBLEMS_LOCK = threading.Lock()  # a worker of several threads (a dask worker's) shares the problems kept

#: Most U-list interactions of a problem whose trace is to fit, by budget (``build_problem``): (interactions,
#: why). Each interaction puts at least four explicit addresses in a trace (its permutation vector and its leaf,
#: in the input and in the output permutation), which a table counts against MAX_TRACE_ADDRESSES; and each group
#: of GROUP interactions of a class at least one row in each permutation, against MAX_TRACE_ROWS. A tree of
#: N_oct >= 2 leaves has at least 8 N_oct interactions (each leaf, itself and its parent box's seven other
#: octants, each holding a leaf that touches it).
INTERACTION_BUDGETS: dict[str, tuple[int, str]] = {
    "addresses": (MAX_TRACE_ADDRESSES // 4, f"each at least 4 of the {MAX_TRACE_ADDRESSES:,} explicit addresses a "
                                            "trace table may hold"),
    "rows": (MAX_TRACE_ROWS * GROUP // 2, f"every {GROUP} of them at least 2 of the {MAX_TRACE_ROWS:,} rows a "
                                          "trace may hold"),
}


def _build_problem(q: int, n_points: int, density: str, seed: int, periodic: bool,
                   max_interactions: int) -> UListProblem:
    """:func:`build_problem` on checked arguments; TooManyLeaves or TooManyInteractions past ``max_interactions``."""
    n_q = fmm_tree.leaf_points(q)
    dens = fmm_tree.TABLE2_DENSITY if density == "table2" else fmm_tree.Density(density)
    codes = fmm_tree.sample_codes(n_points, dens, seed)  # the points themselves are not kept
    tree, _ = fmm_tree.volume_fmm_tree_of_codes(codes, n_q, n_points, periodic=periodic,
                                                max_leaves=max_interactions // 8)
    del codes
    if tree.n_leaves > 1 and 8 * tree.n_leaves > max_interactions:
        raise fmm_tree.TooManyLeaves(max_interactions // 8)
    ul = fmm_tree.u_lists(tree, periodic, max_interactions)  # sorted by target, then source
    arrays = [ul.target, ul.source, ul.kind, ul.class_id]
    for a in arrays:
        a.setflags(write=False)  # shared by every caller of the cache
    return UListProblem(n_q, tree.n_leaves, *arrays)


def exchange_buffers(variant: str) -> int:
    """Sets of B and C block buffers live at once: two for ``pipelining`` (gemm(i) reads one
    set while in(i+1) and out(i-1) use the other), one otherwise."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    return 2 if variant == "pipelining" else 1


def check_llc_share(llc_share: float) -> float:
    """``llc_share`` as a float; ValueError unless it is a number with 0 < share <= 1."""
    if isinstance(llc_share, bool) or not isinstance(llc_share, (int, float, np.floating)) \
            or not 0 < llc_share <= 1:
        raise ValueError(f"llc_share must be a number with 0 < llc_share <= 1 (share of the LLC the live "
                         f"B and C block buffers may fill), got {llc_share!r}")
    return float(llc_share)


def reread_cap(problem: UListProblem, order: str = "class") -> int:
    """The most blocks whose extra Â_j reads (N_q^2 doubles each) stay within the B and C
    exchange blocking keeps out of DRAM (2 N_q N_U doubles). Class order: each cut adds at
    most one GEMM call, (b - 1) N_q^2 <= 2 N_q N_U, so b <= 1 + 2 N_U / N_q. Target order:
    every block reads all ten Â_j, 10 b N_q^2 <= 2 N_q N_U, so b <= N_U / (5 N_q)."""
    check_block_order(order)
    d = problem.dims()
    return max(1, 1 + 2 * d.n_u // d.n_q if order == "class" else d.n_u // (5 * d.n_q))


def block_range(problem: UListProblem, llc_bytes: int, variant: str = "blocking",
                llc_share: float = DEFAULT_LLC_SHARE, order: str = "class") -> tuple[int, int]:
    """(b_min, b_fit), block counts. b_fit: the smallest b for which the live B and C block
    buffers (:func:`exchange_buffers` sets of 2 N_q N_U / b doubles) take at most
    ``llc_share`` (dimensionless, 0 < share <= 1; 1 is 003's rule, 003:L253) of
    ``llc_bytes`` (module docstring: a block of the whole LLC thrashes it). b_min: b_fit, but
    at most :func:`reread_cap` of the block ``order``. A pipeline may do better anywhere in
    [b_min, b_fit]: more blocks hide more of the permutations (its fill and drain shrink as
    1/b) at the price of the Â_j re-reads."""
    share = check_llc_share(llc_share)
    fit = llc_blocks(problem.dims(), llc_bytes * share / exchange_buffers(variant))
    return min(fit, reread_cap(problem, order)), fit


def choose_blocks(problem: UListProblem, llc_bytes: int, variant: str = "blocking",
                  llc_share: float = DEFAULT_LLC_SHARE, order: str = "class") -> int:
    """The default b: b_min of :func:`block_range` (the LLC rule, bounded by the Â_j re-reads)."""
    return block_range(problem, llc_bytes, variant, llc_share, order)[0]


def split_blocks(problem: UListProblem, b: int, order: str = "class") -> list[np.ndarray]:
    """Interaction indices of ``b`` blocks of about N_U / b interactions each.

    ``order="class"`` (the default): contiguous runs of B's own column order, class by class
    and by target leaf within a class. B is the ten B_j side by side (C_j = Â_j B_j, 003 eq. 1
    and Fig. 4), so a "smaller, blocked version of matrix B" (003 §6.1) is a run of its columns:
    a block holds one or two classes and its GEMMs need only their Â_j.
    ``order="target"``: contiguous ranges in target order cut at leaf boundaries; every block
    then holds all ten classes and its GEMMs read all ten Â_j again."""
    if isinstance(b, bool) or int(b) != b or b < 1:
        raise ValueError(f"blocks must be a positive integer, got {b!r}")
    if b > problem.n_u:
        raise ValueError(f"blocks must be at most N_U = {problem.n_u:,} (the interactions: a block holds at least "
                         f"one), got {b!r}")
    check_block_order(order)
    if order == "class":
        columns = np.argsort(problem.class_id, kind="stable").astype(np.int32)  # target order kept within a class
        return [c for c in np.array_split(columns, int(b)) if c.size]
    b = min(int(b), problem.n_oct)
    n = problem.n_u
    cuts = [0]
    for i in range(1, b):
        pos = int(round(i * n / b))
        leaf = problem.target[min(pos, n - 1)]
        pos = int(np.searchsorted(problem.target, leaf, side="left"))  # leaf boundary
        if pos > cuts[-1]:
            cuts.append(pos)
    cuts.append(n)
    return [np.arange(lo, hi, dtype=np.int32) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]


@dataclass(frozen=True)
class _Class:
    """One GEMM of one block: class ``j``, the interactions (columns) and matrix addresses."""

    j: int
    cols: np.ndarray
    a_addr: int
    b_addr: int
    c_addr: int

    @property
    def n(self) -> int:
        return int(self.cols.size)


def check_bc_layout(layout: str) -> str:
    """``layout`` if it is one of :data:`BC_LAYOUTS`, else ValueError naming them."""
    if layout not in BC_LAYOUTS:
        raise ValueError(f"bc_layout must be one of {', '.join(BC_LAYOUTS)}, got {layout!r}")
    return layout


def column_lines(base: int, n_rows: int, ld: int, c0: int, c1: int) -> np.ndarray:
    """Start addresses of the pieces of columns [c0, c1) of a row-major n_rows x ld matrix,
    one per (line group of 8 columns, row), line group major."""
    groups = np.arange(c0 - c0 % COLS_PER_LINE, c1, COLS_PER_LINE, dtype=np.int64)
    groups = np.maximum(groups, c0)
    rows = np.arange(n_rows, dtype=np.int64) * ld
    return (base + (groups[:, None] + rows[None, :]) * ELEM_BYTES).reshape(-1)


def group_column_lines(base: int, n_rows: int, ld: int, lo: int, hi: int) -> list[np.ndarray]:
    """:func:`column_lines` of each group of :data:`GROUP` columns from ``lo`` to ``hi`` ([lo, lo + GROUP), ...):
    computed at once, as views of one array, where ``lo`` starts a line (the groups then share no line group),
    else group by group."""
    bounds = list(range(lo, hi, GROUP)) + [hi]
    if lo % COLS_PER_LINE:
        return [column_lines(base, n_rows, ld, c0, c1) for c0, c1 in zip(bounds[:-1], bounds[1:])]
    lines = column_lines(base, n_rows, ld, lo, hi)  # line group major: a group's pieces are one run of it
    cuts = [-(-(c - lo) // COLS_PER_LINE) * n_rows for c in bounds]
    return [lines[a:b] for a, b in zip(cuts[:-1], cuts[1:])]


def piece_runs(lines: np.ndarray, n_rows: int, c0: int, c1: int) -> list[tuple[np.ndarray, int]]:
    """The line-group pieces of columns [c0, c1) (``lines``: their :func:`column_lines`, ``n_rows`` per line
    group) cut where the pieces' width changes, as (pieces, width in columns) in access order: a piece of a
    line group the columns only partly cover (at either end) holds only the covered columns, so it neither
    spills into the next row's line nor touches another span's columns."""
    first = min(COLS_PER_LINE - c0 % COLS_PER_LINE, c1 - c0)
    whole, tail = divmod(c1 - c0 - first, COLS_PER_LINE)
    widths = [first] + [COLS_PER_LINE] * whole + ([tail] if tail else [])
    runs: list[tuple[np.ndarray, int]] = []
    start = 0  # the first line group of the current width
    for g in range(1, len(widths) + 1):
        if g == len(widths) or widths[g] != widths[start]:
            runs.append((lines[start * n_rows:g * n_rows], widths[start]))
            start = g
    return runs


def columns_access(tb: TraceBuilder, stage: str, op: str, base: int, n_q: int, n: int, c0: int, c1: int,
                   layout: str, thread: int = 0, lines: np.ndarray | None = None,
                   whole_lines: Callable[[np.ndarray, int], None] | None = None) -> None:
    """The host rows (of ``thread``) touching columns [c0, c1) of the N_q x ``n`` matrix at ``base`` stored in
    ``layout``, one access per double: gathers of line-group pieces, one row per run of pieces of one width
    (rows, :func:`piece_runs`; ``lines``: their :func:`column_lines` where the caller has them;
    ``whole_lines``: the ``TraceBuilder.gather_rows`` of the whole-line rows, where the caller has one), or
    one run (interactions)."""
    if check_bc_layout(layout) == "rows":
        lines = column_lines(base, n_q, n, c0, c1) if lines is None else lines
        for pieces, width in piece_runs(lines, n_q, c0, c1):
            if width == COLS_PER_LINE and whole_lines is not None:
                whole_lines(pieces, 0)
            else:
                tb.gather("host", stage, op, pieces, ELEM_BYTES, run=width, thread=thread)
    else:
        tb.access("host", stage, op, base + c0 * n_q * ELEM_BYTES, ELEM_BYTES, ELEM_BYTES, (c1 - c0) * n_q,
                  thread=thread)


def matrix_columns_access(tb: TraceBuilder, stage: str, op: str, base: int, n_q: int, n: int, layout: str,
                          thread: int = 0) -> None:
    """The host rows of :func:`columns_access` for each group of :data:`GROUP` columns of the N_q x ``n`` matrix
    at ``base``, in column order: the same rows, with the row layout's line-group pieces made for the whole
    matrix at once (``group_column_lines``) and appended through one ``TraceBuilder.gather_rows``."""
    bounds = list(range(0, n, GROUP)) + [n]
    if check_bc_layout(layout) != "rows":
        for c0, c1 in zip(bounds[:-1], bounds[1:]):
            columns_access(tb, stage, op, base, n_q, n, c0, c1, layout, thread)
        return
    whole_lines = tb.gather_rows("host", stage, op, ELEM_BYTES, run=COLS_PER_LINE, thread=thread)
    for c0, c1, lines in zip(bounds[:-1], bounds[1:], group_column_lines(base, n_q, n, 0, n)):
        columns_access(tb, stage, op, base, n_q, n, c0, c1, layout, thread, lines, whole_lines)


def offload_class_gemm(tb: TraceBuilder, a_addr: int, b_addr: int, c_addr: int, n_q: int, n: int,
                       layout: str, unit: str = "lap") -> None:
    """Offload C_j += Â_j B_j of one class to accelerator ``unit``: Â_j (N_q x N_q) at ``a_addr``, B_j and
    C_j (N_q x ``n``, stored in ``layout``) at ``b_addr`` and ``c_addr``, in the row-major view of the
    layout (module docstring); the caller issues the wait."""
    a_bytes, bc_bytes = n_q * n_q * ELEM_BYTES, n_q * n * ELEM_BYTES
    if check_bc_layout(layout) == "rows":
        dims = {"m": n_q, "n": n, "k": n_q, "a_addr": a_addr, "b_addr": b_addr}
    else:  # C_j^T += B_j^T Â_j^T: B_j is the left operand
        dims = {"m": n, "n": n_q, "k": n_q, "a_addr": b_addr, "b_addr": a_addr}
    tb.offload("host", "gemm", unit, op="gemm", **dims, c_addr=c_addr, accumulate=True,
               inputs=[[a_addr, a_bytes], [b_addr, bc_bytes], [c_addr, bc_bytes]], outputs=[[c_addr, bc_bytes]])


class _Writer:
    """Emits the rows of the FMM stages for one layout into ``tb`` (which the caller may replace between
    groups of rows: a stream hands out the rows so far as a batch and starts a new builder)."""

    def __init__(self, problem: UListProblem, tb: TraceBuilder, sp: AddressSpace, layout: str) -> None:
        self.p, self.tb, self.layout = problem, tb, layout
        nq, noct, nu = problem.n_q, problem.n_oct, problem.n_u
        self.src = sp.alloc("leaf.src", noct * nq * ELEM_BYTES)
        self.tgt = sp.alloc("leaf.tgt", noct * nq * ELEM_BYTES)
        self.meta_in = sp.alloc("meta.in", nu * META_BYTES)
        self.meta_out = sp.alloc("meta.out", nu * META_BYTES)
        n_kinds = len(fmm_tree.KINDS)
        self.perm_in = sp.alloc("perm.in", n_kinds * nq * PERM_ELEM_BYTES)
        self.perm_out = sp.alloc("perm.out", n_kinds * nq * PERM_ELEM_BYTES)
        self.thread = 0  # the host thread the rows are for

    def _leaf(self, base: int, leaves: np.ndarray) -> np.ndarray:
        return base + leaves.astype(np.int64) * (self.p.n_q * ELEM_BYTES)

    def _perm(self, base: int, kinds: np.ndarray) -> np.ndarray:
        """Start addresses of the permutation vectors of ``kinds`` (one per entry, repeats kept)."""
        return base + kinds.astype(np.int64) * (self.p.n_q * PERM_ELEM_BYTES)

    def _meta(self, stage: str, base: int, idx: np.ndarray) -> None:
        # idx is a contiguous run of interaction indices
        self.tb.access("host", stage, "read", base + int(idx[0]) * META_BYTES, META_BYTES, META_BYTES, idx.size,
                       thread=self.thread)

    def input_perm(self, cls: _Class, stage: str = "input_perm", lo: int = 0,
                   hi: int | None = None) -> Iterator[None]:
        """Gather source leaves (apply K), write columns [lo, hi) of B (default: all); K records one group
        ahead. Yields after each group's rows."""
        return self._permutation(cls, stage, lo, cls.n if hi is None else hi, inward=True)

    def output_perm(self, cls: _Class, stage: str = "output_perm", lo: int = 0,
                    hi: int | None = None) -> Iterator[None]:
        """Read columns [lo, hi) of C (default: all; apply M), scatter-accumulate into the target leaves; M
        records one group ahead. Yields after each group's rows."""
        return self._permutation(cls, stage, lo, cls.n if hi is None else hi, inward=False)

    def _permutation(self, cls: _Class, stage: str, lo: int, hi: int, inward: bool) -> Iterator[None]:
        """The rows of :meth:`input_perm` (``inward``) or :meth:`output_perm`, group by group; each group's
        addresses are slices of arrays made for :data:`SPAN_GROUPS` groups at once."""
        p, nq, th = self.p, self.p.n_q, self.thread
        if inward:  # K: a source leaf read and scaled (N_q flops per interaction), a column of B written
            perm_base, meta_base, matrix, leaf_op, flops_per_column = self.perm_in, self.meta_in, cls.b_addr, "read", nq
            leaf_base, leaf_of = self.src, p.source
        else:  # M: a column of C read, scaled and added into a target leaf (2 N_q flops per interaction)
            perm_base, meta_base, matrix, leaf_op = self.perm_out, self.meta_out, cls.c_addr, "update"
            flops_per_column = 2 * nq
            leaf_base, leaf_of = self.tgt, p.target
        column_op = "write" if inward else "read"
        tb = None
        span_lo = span_hi = lo  # the columns whose addresses are made
        for c0 in range(lo, hi, GROUP):
            if c0 >= span_hi:
                span_lo, span_hi = c0, min(hi, c0 + SPAN_GROUPS * GROUP)
                idx = cls.cols[span_lo:min(hi, span_hi + GROUP)]  # and the next group's, for its records
                leaves = self._leaf(leaf_base, leaf_of[idx[:span_hi - span_lo]])
                perms = self._perm(perm_base, p.kind[idx[:span_hi - span_lo]])
                records = self._records(meta_base, idx)
                lines = self._column_groups(matrix, cls.n, span_lo, span_hi)
                if span_lo == lo:
                    self._meta_records(stage, meta_base, idx[:GROUP], records[:GROUP])
            k = (c0 - span_lo) // GROUP
            a, b, c = c0 - span_lo, min(hi, c0 + GROUP) - span_lo, min(hi, c0 + 2 * GROUP) - span_lo
            if tb is not self.tb:  # at the start, and after a stream handed out the rows so far
                tb = self.tb
                read_perm = tb.gather_rows("host", stage, "read", PERM_ELEM_BYTES, run=nq, thread=th)
                leaf_rows = tb.gather_rows("host", stage, leaf_op, ELEM_BYTES, run=nq, thread=th)
                record_rows = tb.gather_rows("host", stage, "read", META_BYTES, thread=th)
                column_rows = tb.gather_rows("host", stage, column_op, ELEM_BYTES, run=COLS_PER_LINE, thread=th)
            read_perm(perms[a:b], 0)
            if inward:
                leaf_rows(leaves[a:b], (b - a) * flops_per_column)
                # the next group's records, before the stores
                self._meta_records(stage, meta_base, idx[b:c], records[b:c], record_rows)
            columns_access(tb, stage, column_op, matrix, nq, cls.n, c0, span_lo + b, self.layout, th, lines[k],
                           column_rows)
            if not inward:
                # the next group's records, before the updates
                self._meta_records(stage, meta_base, idx[b:c], records[b:c], record_rows)
                leaf_rows(leaves[a:b], (b - a) * flops_per_column)
            yield

    def _column_groups(self, base: int, n: int, lo: int, hi: int) -> list[np.ndarray | None]:
        """The line-group pieces of each group's columns of the N_q x ``n`` matrix at ``base`` (row layout;
        ``group_column_lines``), or None per group (interaction layout: one run each)."""
        if self.layout == "rows":
            return group_column_lines(base, self.p.n_q, n, lo, hi)
        return [None] * len(range(lo, hi, GROUP))

    def prefetch_out(self, cls: _Class, stage: str = "out_prefetch") -> None:
        """Read the M records and permutation vectors the output permutation of ``cls`` will use."""
        for c0 in range(0, cls.n, 8 * GROUP):
            idx = cls.cols[c0:c0 + 8 * GROUP]
            self._meta_records(stage, self.meta_out, idx)
        self.tb.gather("host", stage, "read", self._perm(self.perm_out, np.unique(self.p.kind[cls.cols])),
                       self.p.n_q * PERM_ELEM_BYTES, thread=self.thread)

    def _records(self, base: int, idx: np.ndarray) -> np.ndarray:
        """Byte addresses of the records of interactions ``idx`` in the table at ``base``."""
        return base + idx.astype(np.int64) * META_BYTES

    def _meta_records(self, stage: str, base: int, idx: np.ndarray, records: np.ndarray | None = None,
                      gather: Callable[[np.ndarray, int], None] | None = None) -> None:
        """Read the records of interactions ``idx`` (``records``: their addresses, where the caller has them):
        one strided row where ``idx`` is a run of consecutive interactions, else a gather (through ``gather``,
        the ``TraceBuilder.gather_rows`` of these rows, where the caller has one, and ``records``)."""
        if not idx.size:
            return
        if int(idx[-1]) - int(idx[0]) == idx.size - 1:
            self._meta(stage, base, idx)
        elif gather is not None:
            gather(records, 0)
        else:
            self.tb.gather("host", stage, "read", self._records(base, idx) if records is None else records,
                           META_BYTES, thread=self.thread)


def target_ranges(problem: UListProblem, threads: int) -> np.ndarray:
    """Leaf boundaries (int64, ``threads`` + 1 of them, from 0 to N_oct) cutting the target leaves into
    ``threads`` contiguous ranges of about N_U / ``threads`` interactions each: thread t permutes the
    interactions whose target leaf is in [bounds[t], bounds[t + 1])."""
    threads = thread_count(threads)
    n = problem.n_u
    inner = [int(problem.target[min(n - 1, n * t // threads)]) for t in range(1, int(threads))]
    return np.array([0, *inner, problem.n_oct], dtype=np.int64)


def thread_spans(problem: UListProblem, cols: np.ndarray, bounds: np.ndarray) -> list[tuple[int, int]]:
    """(lo, hi) of each thread's run of ``cols`` (interaction indices sorted by target leaf): the columns whose
    target leaf lies in the thread's range of ``bounds`` (:func:`target_ranges`)."""
    cuts = np.searchsorted(problem.target[cols], bounds, side="left")
    return [(int(cuts[t]), int(cuts[t + 1])) for t in range(bounds.size - 1)]


def _with_thread(table: pa.Table, thread: int) -> pa.Table:
    """``table`` with a ``thread`` column (all ``thread`` when it has none)."""
    if THREAD_FIELD.name in table.column_names:
        return table
    return table.append_column(THREAD_FIELD, arrow_array(np.full(table.num_rows, thread, dtype=np.int64), pa.int64()))


def _append_table(tables: list[pa.Table], tb: TraceBuilder) -> TraceBuilder:
    if len(tb):
        tables.append(tb.to_table())
    return TraceBuilder()


def fmm_ulist(q: int, n_points: int = 240_000, density: DensityName = "uniform", variant: Variant = "orig",
              placement: Placement = "lap", blocks: int | None = None, seed: int = 0,
              llc_bytes: int = 8 * 1024 * 1024, periodic: bool | None = None,
              llc_share: float = DEFAULT_LLC_SHARE, block_order: BlockOrder = "class", bc_layout: BcLayout = "rows",
              threads: int = 1) -> pa.Table:
    """Trace of the FMM U-list of order ``q`` over ``n_points`` points (module docstring).

    ``variant``: one of :data:`VARIANTS`; ``placement``: "cpu" (host GEMM), "lap" or "systolic"
    (offload to the unit of that name; needed by every variant but "orig"); ``blocks``: b for the
    blocked and pipelined variants (default: :func:`choose_blocks` with ``llc_bytes`` and
    ``llc_share``, the share of the LLC the live B and C buffers may fill); ``block_order``:
    how blocks cut the interactions (:func:`split_blocks`); ``bc_layout``: how B and C are stored
    (:data:`BC_LAYOUTS`, module docstring); ``threads``: host threads the permutations run on (module
    docstring); ``density``/``seed``/``periodic``: the point sample (:func:`build_problem`).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if placement == "cpu" and variant != "orig":
        raise ValueError(f"variant {variant!r} needs an accelerator placement (the CPU runs only 'orig'), got 'cpu'")
    if blocks is not None and (isinstance(blocks, bool) or int(blocks) != blocks or blocks < 1):
        raise ValueError(f"blocks must be a positive integer or null, got {blocks!r}")
    if blocks is not None and variant not in BLOCKED_VARIANTS:
        raise ValueError(f"blocks must be null for variant {variant} (only {', '.join(BLOCKED_VARIANTS)} cut the "
                         f"interactions into blocks), got {blocks!r}")
    if not (isinstance(llc_bytes, (int, np.integer)) and llc_bytes > 0):
        raise ValueError(f"llc_bytes must be a positive integer number of bytes, got {llc_bytes!r}")
    check_llc_share(llc_share)
    if block_order not in BLOCK_ORDERS:  # named as the generator's parameter (check_block_order says "order")
        raise ValueError(f"block_order must be one of {', '.join(BLOCK_ORDERS)}, got {block_order!r}")
    check_bc_layout(bc_layout)
    threads = thread_count(threads)
    problem = build_problem(q, n_points, density, seed, periodic, budget="addresses")
    return ulist_trace(problem, variant, placement,
                       variant_blocks(problem, variant, blocks, int(llc_bytes), llc_share, block_order), bc_layout,
                       int(threads), blame="blocks" if blocks is not None else "n_points")


def variant_blocks(problem: UListProblem, variant: str, blocks: int | None = None,
                   llc_bytes: int = 8 * 1024 * 1024, llc_share: float = DEFAULT_LLC_SHARE,
                   order: str = "class") -> list[np.ndarray]:
    """The blocks (index arrays) a trace of ``variant`` cuts the interactions into: one for the
    unblocked variants; else ``blocks`` of them, or by default :func:`choose_blocks` with
    ``llc_bytes`` (B) and ``llc_share``, cut in ``order`` (:func:`split_blocks`)."""
    if variant not in ("blocking", "blocking_pref", "pipelining"):
        return split_blocks(problem, 1, order)
    b = int(blocks) if blocks is not None else choose_blocks(problem, llc_bytes, variant, llc_share, order)
    return split_blocks(problem, b, order)


def ulist_trace(problem: UListProblem, variant: str, placement: str, blocks: list[np.ndarray],
                bc_layout: str = "rows", threads: int = 1, blame: str | None = None) -> pa.Table:
    """The trace of ``problem`` for interactions cut into ``blocks`` (index arrays), B and C
    stored in ``bc_layout``, the permutations on ``threads`` host threads (module docstring): the
    batches of :func:`ulist_stream` as one table (``blame`` as it takes it)."""
    return ulist_stream(problem, variant, placement, blocks, bc_layout, threads, blame=blame).to_table()


def ulist_stream(problem: UListProblem, variant: str, placement: str, blocks: list[np.ndarray],
                 bc_layout: str = "rows", threads: int = 1, batch_rows: int = BATCH_ROWS,
                 blame: str | None = None) -> TraceStream:
    """The trace of :func:`ulist_trace` as a :class:`TraceStream` of tables of about ``batch_rows`` rows (a
    batch ends after the group of rows that reaches it), made as the stream is read: the addresses are laid
    out at the call, the rows come as they are replayed. Past ``MAX_TRACE_ROWS`` rows it raises ValueError
    naming ``blame`` ("blocks" or "n_points"; None: blocks where there are several, else n_points)."""
    check_bc_layout(bc_layout)
    bounds = target_ranges(problem, threads)
    nq = problem.n_q
    sp = AddressSpace()
    w = _Writer(problem, TraceBuilder(), sp, bc_layout)
    gemm_panels: dict[tuple[int, int], Iterator[pa.Table]] = {}
    a_addr: dict[int, int] = {}
    plan: list[list[_Class]] = []
    if placement != "cpu":  # B and C buffers of one block, reused by every block (module docstring)
        n_slots = min(len(blocks), 2 if variant == "pipelining" else 1)
        slot_bytes = nq * max(b.size for b in blocks) * ELEM_BYTES + N_CLASSES * LINE_BYTES  # + line padding
        b_slots = [sp.alloc(f"B.s{s}", slot_bytes) for s in range(n_slots)]
        c_slots = [sp.alloc(f"C.s{s}", slot_bytes) for s in range(n_slots)]
    for i, idx in enumerate(blocks):
        classes = []
        offset = 0  # bytes into this block's B and C buffers
        for j in range(N_CLASSES):
            cols = _class_columns(problem, idx, j)
            if cols.size == 0:
                continue
            if placement == "cpu":
                name = f"gemm.b{i}.c{j}"
                rows = bc_layout == "rows"  # else PVFMM's C_j^T += B_j^T Â_j^T: host_gemm's A is B_j
                gemm_panels[(i, j)] = host_gemm_panels(*((nq, int(cols.size)) if rows else (int(cols.size), nq)), nq,
                                                       space=sp, stage=name)
                a_name, b_name = ("A", "B") if rows else ("B", "A")
                classes.append(_Class(j, cols, sp[f"{name}.{a_name}"].addr, sp[f"{name}.{b_name}"].addr,
                                      sp[f"{name}.C"].addr))
            else:
                if j not in a_addr:
                    a_addr[j] = sp.alloc(f"A.c{j}", nq * nq * ELEM_BYTES)
                slot = i % n_slots
                classes.append(_Class(j, cols, a_addr[j], b_slots[slot] + offset, c_slots[slot] + offset))
                offset += -(-nq * int(cols.size) * ELEM_BYTES // LINE_BYTES) * LINE_BYTES
        plan.append(classes)
    pref = variant in ("orig_pref", "blocking_pref")
    done: list[pa.Table] = []  # tables finished and not yet handed out

    def barrier(stage: str) -> None:
        """The implicit barrier ending a parallel loop (none on one thread)."""
        if threads > 1:
            for t in range(threads):
                w.tb.barrier(stage, thread=t)

    def emit_perm(i: int, perm: Callable[..., Iterator[None]], stage: str) -> Iterator[None]:
        """One permutation stage of block ``i``: each class's columns split by target range over the threads."""
        for cls in plan[i]:
            if threads == 1:
                yield from perm(cls)
                continue
            for t, (lo, hi) in enumerate(thread_spans(problem, cls.cols, bounds)):
                w.thread = t
                if hi > lo:
                    yield from perm(cls, lo=lo, hi=hi)
            w.thread = 0
        barrier(stage)

    def emit_gemm(i: int, wait: bool) -> Iterator[None]:
        for k, cls in enumerate(plan[i]):
            if placement == "cpu":
                w.tb = _append_table(done, w.tb)
                stage = f"gemm.b{i}.c{cls.j}"
                for panel in gemm_panels.pop((i, cls.j)):  # its rows staged "gemm" (the unique name laid it out)
                    panel = panel.set_column(panel.schema.get_field_index("stage"), TRACE_SCHEMA.field("stage"),
                                             pc.replace_substring(panel.column("stage"), stage, "gemm"))
                    done.append(panel if threads == 1 else _with_thread(panel, k % threads))  # dealt in turn
                    yield
                continue
            offload_class_gemm(w.tb, cls.a_addr, cls.b_addr, cls.c_addr, nq, cls.n, bc_layout, placement)
            if pref:
                w.prefetch_out(cls)
            if wait:
                w.tb.wait("host", "gemm", placement)
        if wait:
            barrier("gemm")

    def emit_all() -> Iterator[None]:
        if variant == "pipelining":
            yield from emit_perm(0, w.input_perm, "input_perm")
            for i in range(len(plan)):
                yield from emit_gemm(i, wait=False)
                if i + 1 < len(plan):
                    yield from emit_perm(i + 1, w.input_perm, "input_perm")
                if i > 0:
                    yield from emit_perm(i - 1, w.output_perm, "output_perm")
                w.tb.wait("host", "gemm", placement)
                barrier("gemm")
            yield from emit_perm(len(plan) - 1, w.output_perm, "output_perm")
        else:
            for i in range(len(plan)):
                yield from emit_perm(i, w.input_perm, "input_perm")
                yield from emit_gemm(i, wait=True)
                yield from emit_perm(i, w.output_perm, "output_perm")

    handed = 0  # rows handed out so far

    def counted(table: pa.Table) -> pa.Table:
        """``table``, its rows counted against the limit of a trace (a stream is one trace, whatever its batches)."""
        nonlocal handed
        handed += table.num_rows
        if handed > MAX_TRACE_ROWS:
            blocked = (blame or ("blocks" if len(blocks) > 1 else "n_points")) == "blocks"
            cause, given = ((f"blocks must be fewer: the trace of {len(blocks):,} blocks", len(blocks)) if blocked
                            else (f"n_points must be fewer: the trace of the tree's {problem.n_u:,} interactions "
                                  f"in {len(blocks):,} blocks", problem.n_oct * problem.n_q))
            raise ValueError(f"{cause} passes the {MAX_TRACE_ROWS:,} rows a trace may hold "
                             f"(workloads.trace.MAX_TRACE_ROWS), got {given}")
        return table

    def batches() -> Iterator[pa.Table]:
        for _ in emit_all():
            if len(w.tb) >= batch_rows:
                w.tb = _append_table(done, w.tb)
            while done:
                yield counted(done.pop(0))
        w.tb = _append_table(done, w.tb)
        yield from map(counted, done)

    if threads == 1:
        return TraceStream(batches())
    # one schema for all: the builder's tables of thread 0 alone and the GEMMs have no thread column
    return TraceStream((_with_thread(t, 0) for t in batches()), threaded=True)


def _class_columns(problem: UListProblem, idx: np.ndarray, j: int) -> np.ndarray:
    """The interactions of class ``j`` in block ``idx``, in block order: a view where they are one run of it
    (blocks cut class by class), else a copy."""
    where = np.flatnonzero(problem.class_id[idx] == j)
    if where.size and int(where[-1]) - int(where[0]) + 1 == where.size:
        return idx[int(where[0]):int(where[-1]) + 1]
    return idx[where]


GENERATORS: dict[str, Callable[..., pa.Table]] = {"fmm_ulist": fmm_ulist}
