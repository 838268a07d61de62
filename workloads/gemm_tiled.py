"""Explicitly tiled GEMM traces: the schedules behind the data-movement closed forms (004 app. D.2).

``R (P0 x P2) = A1 (P0 x P1) A2 (P1 x P2)`` on the host, double-precision elements,
R initialised by the product (no accumulation into old values). Two schedules:

``"output"`` (D.2/D.3, 004:L4560-L4567): an x-by-y tile of R stays in the fast memory
while, one step of ``depth`` k-indices at a time, the matching x-element column
segments of A1 and y-element row segments of A2 stream past it; the tile is
written back once. Streamed words: P1 (ceil(P2/y) P0 + ceil(P0/x) P2); with
x = y = sqrt(M) this is the cubic term 2 P0 P1 P2 / sqrt(M) of D.3.

``"input1"`` (D.4/D.5, 004:L4614): an x-by-z tile of A1 stays in the fast memory
(A1 read once) while, ``depth`` columns j at a time, the z-element segment of
column j of A2 is read and the x-element segment of column j of R is read (not on
the first k tile) and written. Words: P0 P1 + ceil(P0/x) P1 P2 +
(2 ceil(P1/z) - 1) P0 P2; with x = sqrt(M/2), z = 2x the D.5 form.

Layout (chosen so that an exact-LRU, set-associative last-level cache keeps the
resident tile; ``line_bytes`` is the cache line, ``S`` the number of sets):

* The resident matrix is stored *tile by tile*: every tile is one contiguous
  block, so its N lines spread over the sets as evenly as possible (floor or
  ceil of N / S lines per set). The plan keeps N <= (ways - reserve_ways) S, so
  every set keeps ``reserve_ways`` ways for streamed lines.
* The two streamed matrices are interleaved in one *stream store*, one row per
  step index: for "output" row k is [column k of A1 | row k of A2], for
  "input1" row j is [column j of A2 | column j of R] (each part padded to whole
  lines). One step reads ``depth`` consecutive rows; the plan picks ``depth`` so
  that they span at most ``S`` lines, so a step brings at most one new line into
  any set.
* Every step touches its streamed lines first and the resident tile last, so
  under LRU the stale streamed lines are always older than the tile. For "input1"
  the R segments are therefore updated before the A1 tile is read in the trace
  (the flops ride on the A1 tile row). R's dirty lines leave the private levels
  later and refresh their LLC recency, so one more way is reserved there
  (``reserve_ways`` = 2): a set then holds at most one such line and one new line.

With a write-allocate cache the first store to each R line reads it from DRAM
although the closed forms (which assume R starts at zero, 004:L4629-L4630) do not count
that read: :meth:`TiledGemmPlan.words` adds P0 P2 when ``write_allocate``.
With ``zero_result`` the first touch of each piece of R (the R tile in "output",
an R column segment in "input1") is a ``zero`` row, one element per line (one
dcbz / DC ZVA / CLZERO per line): the lines are allocated dirty without reading
memory, R does start at zero, and the count is the closed form's.
The trace ends with a ``flush`` of R (and of the stream store in "input1", whose
clean A2 lines cost nothing) so that every dirty line has reached DRAM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

import pyarrow as pa

from workloads.trace import MAX_TRACE_ROWS, AddressSpace, TraceBuilder

#: Bytes of one matrix element (double precision).
ELEM_BYTES = 8
#: Cache line of the default system, 64 B (003 Table 4, 003:L318).
DEFAULT_LINE_BYTES = 64

Schedule = Literal["output", "input1"]
SCHEDULES: tuple[str, ...] = get_args(Schedule)
#: Ways per set left to streamed lines by default, per schedule (module docstring).
DEFAULT_RESERVE_WAYS: dict[str, int] = {"output": 1, "input1": 2}


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return value


def _line_bytes(value: int) -> int:
    """``value`` if it is a cache line the layout can pad to: whole elements, at least one."""
    _positive("line_bytes", value)
    if value % ELEM_BYTES:
        raise ValueError(f"line_bytes must be a multiple of {ELEM_BYTES} B, got {value}")
    return value


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


@dataclass(frozen=True)
class TiledGemmPlan:
    """Shape, schedule and tiling of one tiled GEMM.

    ``tile_rows`` is x (rows of the resident tile of R or A1); ``tile_cols`` is y
    (columns of the R tile, "output") or z (columns of the A1 tile, "input1");
    ``depth`` is the k-indices ("output") or R columns ("input1") per step;
    ``line_bytes`` the cache line the layout pads to; ``zero_result`` zeroes
    each piece of R in the cache before its first store (module docstring).
    Dimensions in elements.
    """

    schedule: Schedule
    p0: int
    p1: int
    p2: int
    tile_rows: int
    tile_cols: int
    depth: int
    line_bytes: int = DEFAULT_LINE_BYTES
    zero_result: bool = False

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        for name in ("p0", "p1", "p2", "tile_rows", "tile_cols", "depth"):
            _positive(name, getattr(self, name))
        _line_bytes(self.line_bytes)
        if not isinstance(self.zero_result, bool):
            raise ValueError(f"zero_result must be a bool, got {self.zero_result!r}")
        col_dim = self.p2 if self.schedule == "output" else self.p1
        if (self.zero_result and self.schedule == "input1" and self.tile_rows < self.p0
                and self.tile_rows % self.line_elems):
            # the R column segments must start on a line, or zeroing one would clear its neighbour
            raise ValueError(f"tile_rows must be a multiple of {self.line_elems} elements (one line) or p0"
                             f" with zero_result, got {self.tile_rows}")
        if self.tile_rows > self.p0:
            raise ValueError(f"tile_rows must be <= p0 = {self.p0}, got {self.tile_rows}")
        if self.tile_cols > col_dim:
            raise ValueError(f"tile_cols must be <= {col_dim} ({'p2' if self.schedule == 'output' else 'p1'}), "
                             f"got {self.tile_cols}")

    @property
    def line_elems(self) -> int:
        """Elements per cache line."""
        return self.line_bytes // ELEM_BYTES

    @property
    def resident_elems(self) -> int:
        """Elements of one full resident tile as stored (columns padded to whole lines)."""
        return self.tile_rows * _round_up(self.tile_cols, self.line_elems)

    def words(self, write_allocate: bool = True) -> int:
        """Elements this schedule moves between DRAM and the fast memory when the tile stays resident.

        Counts every element once per transfer (the line padding of the layout is
        not counted); ``write_allocate`` adds the read of R before its first store,
        unless ``zero_result`` (R is then allocated in the cache without a read).
        """
        p0, p1, p2, x, c = self.p0, self.p1, self.p2, self.tile_rows, self.tile_cols
        if self.schedule == "output":
            moved = p1 * (_ceil_div(p2, c) * p0 + _ceil_div(p0, x) * p2) + p0 * p2
        else:
            moved = p0 * p1 + _ceil_div(p0, x) * p1 * p2 + (2 * _ceil_div(p1, c) - 1) * p0 * p2
        return moved + (p0 * p2 if write_allocate and not self.zero_result else 0)


def resident_budget_elems(cache_bytes: int, ways: int, reserve_ways: int) -> int:
    """Elements a resident tile may hold: the ``ways - reserve_ways`` ways not left to streamed lines."""
    _positive("cache_bytes", cache_bytes)
    _positive("ways", ways)
    if isinstance(reserve_ways, bool) or not isinstance(reserve_ways, int) or not 0 <= reserve_ways < ways:
        raise ValueError(f"reserve_ways must be an integer in [0, ways = {ways}), got {reserve_ways!r}")
    if cache_bytes % ways:
        raise ValueError(f"cache_bytes must be a multiple of ways ({ways}), got {cache_bytes}")
    return cache_bytes // ways * (ways - reserve_ways) // ELEM_BYTES


def _best_tile(schedule: Schedule, p0: int, p1: int, p2: int, budget: int, le: int,
               col_dim: int) -> tuple[int, int, int, int] | None:
    """(words, -tile elems, x, c) of the tiling with the fewest words, ties to the larger tile then the
    smaller x, or None if no tile of one line fits: x a whole number of lines or p0, c = the most columns of
    whole lines (or col_dim) that fit ``budget`` beside x rows. The words fall as x grows while c stays, so
    only the largest x of each run of equal c (and x = p0) is weighed: as many candidates as values of c."""
    n = _ceil_div(p0, le)  # x = i le for i < n, x = p0 for i = n
    quotient = budget // (le * le)  # c = min(col_dim, le (quotient // i)) for x = i le
    lines = _ceil_div(col_dim, le)  # c = col_dim while quotient // i >= lines

    def key(x: int, c: int) -> tuple[int, int, int, int]:
        words = TiledGemmPlan(schedule, p0, p1, p2, x, c, 1, le * ELEM_BYTES).words()
        return (words, -x * c, x, c)

    best, i = None, 1
    while i < n:
        f = quotient // i
        if f == 0:  # c < 1 from here on
            return best
        last = min(n - 1, quotient // lines if f >= lines else quotient // f)
        found = key(last * le, min(col_dim, le * f))
        best = found if best is None or found < best else best
        i = last + 1
    c = min(col_dim, budget // p0 // le * le)
    if c >= 1:
        found = key(p0, c)
        best = found if best is None or found < best else best
    return best


def plan_tiled_gemm(p0: int, p1: int, p2: int, cache_bytes: int, ways: int, *,
                    schedule: Schedule = "output", line_bytes: int = DEFAULT_LINE_BYTES,
                    reserve_ways: int | None = None, zero_result: bool = False) -> TiledGemmPlan:
    """The tiling of ``schedule`` that moves the fewest words through a ``cache_bytes``, ``ways``-way cache.

    Tile sides are whole lines (or the whole dimension); the resident tile fits in
    :func:`resident_budget_elems`; among those the one with the fewest
    :meth:`TiledGemmPlan.words` is taken (ties: the larger tile). ``depth`` is the
    most stream-store rows spanning at most one way (``cache_bytes / ways``), at least 1.
    ``zero_result`` is passed to the plan (zero each piece of R before its first store).
    ``reserve_ways`` (ways per set left to streamed lines) is below ``ways``; left out, it is the schedule's
    ``DEFAULT_RESERVE_WAYS`` (1 for "output", 2 for "input1"), and ``ways`` must exceed that.
    ``cache_bytes`` is a whole number of sets (``ways`` lines of ``line_bytes``); a shape whose
    trace would exceed ``MAX_TRACE_ROWS`` rows with a single tile is refused before planning.
    """
    for name, v in (("p0", p0), ("p1", p1), ("p2", p2)):
        _positive(name, v)
    _line_bytes(line_bytes)
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    reserve = DEFAULT_RESERVE_WAYS[schedule] if reserve_ways is None else reserve_ways
    _positive("ways", ways)
    if reserve_ways is None and reserve >= ways:  # the default reserve, not written by the caller, leaves no way
        raise ValueError(f"ways must be at least {reserve + 1} for schedule {schedule} (reserve_ways, left out, "
                         f"keeps {reserve} of each set's ways for streamed lines by default, and the resident tile "
                         f"needs one more; or give reserve_ways below ways), got {ways!r}")
    budget = resident_budget_elems(cache_bytes, ways, reserve)
    if cache_bytes % (ways * line_bytes):
        raise ValueError(f"cache_bytes must be a whole number of sets of ways x line_bytes = {ways} x {line_bytes} B "
                         f"= {ways * line_bytes} B, got {cache_bytes}")
    steps = p1 if schedule == "output" else p2
    # one resident tile already takes 3 rows a step index and one more (trace_rows): refuse before planning
    if 3 * steps + 2 > MAX_TRACE_ROWS:
        name = "p1" if schedule == "output" else "p2"
        raise ValueError(f"{name} must be at most {(MAX_TRACE_ROWS - 2) // 3:,} (a trace holds at most "
                         f"{MAX_TRACE_ROWS:,} rows, 3 per step index of schedule {schedule}), got {steps}")
    le = line_bytes // ELEM_BYTES
    col_dim = p2 if schedule == "output" else p1
    best = _best_tile(schedule, p0, p1, p2, budget, le, col_dim)
    if best is None:
        raise ValueError(f"cache_bytes {cache_bytes} with {ways} ways leaves no room for a "
                         f"{le}-element tile (reserve_ways = {reserve})")
    store_row_elems = (_round_up(p0, le) + _round_up(p2, le) if schedule == "output"
                       else _round_up(p1, le) + _round_up(p0, le))
    depth = max(1, (cache_bytes // ways) // (store_row_elems * ELEM_BYTES))
    return TiledGemmPlan(schedule, p0, p1, p2, best[2], best[3], min(depth, steps), line_bytes,
                         zero_result)


def tiled_gemm(plan: TiledGemmPlan, *, unit: str = "host", stage: str = "gemm_tiled",
               space: AddressSpace | None = None, flush: bool = True) -> pa.Table:
    """Trace of ``plan`` (module docstring): 2 P0 P1 P2 flops; ends with a ``flush`` of R if ``flush``."""
    if not isinstance(plan, TiledGemmPlan):
        raise ValueError(f"plan must be a TiledGemmPlan, got {type(plan).__name__}")
    sp = AddressSpace() if space is None else space
    tb = TraceBuilder()
    if plan.schedule == "output":
        _output_schedule(plan, tb, sp, unit, stage, flush)
    else:
        _input1_schedule(plan, tb, sp, unit, stage, flush)
    return tb.to_table()


def _blocked(space: AddressSpace, name: str, rows: int, cols: int, tr: int, tc: int,
             le: int) -> dict[tuple[int, int], int]:
    """Allocate a rows x cols matrix stored tile by tile (tr x tc tiles, row-major inside,
    columns padded to whole lines); returns the byte address of each tile (by tile start)."""
    offsets: dict[tuple[int, int], int] = {}
    total = 0
    for r0 in range(0, rows, tr):
        for c0 in range(0, cols, tc):
            offsets[(r0, c0)] = total
            total += min(tr, rows - r0) * _round_up(min(tc, cols - c0), le) * ELEM_BYTES
    base = space.alloc(name, total)
    return {key: base + off for key, off in offsets.items()}


def _zero(tb: TraceBuilder, unit: str, stage: str, addr: int, n_elems: int, line_bytes: int) -> None:
    """A ``zero`` row over the lines of ``n_elems`` elements from line-aligned byte ``addr``, one element a line.

    The layout pads every piece of R to whole lines, so no other data shares them.
    """
    tb.access(unit, stage, "zero", addr, line_bytes, line_bytes,
              _ceil_div(n_elems * ELEM_BYTES, line_bytes))


def _output_schedule(plan: TiledGemmPlan, tb: TraceBuilder, sp: AddressSpace, unit: str, stage: str,
                     flush: bool) -> None:
    p0, p1, p2, x, y, kd, le = plan.p0, plan.p1, plan.p2, plan.tile_rows, plan.tile_cols, plan.depth, plan.line_elems
    a_part = _round_up(p0, le)
    row_elems = a_part + _round_up(p2, le)
    store = sp.alloc(f"{stage}.A1T_A2", p1 * row_elems * ELEM_BYTES)
    tiles = _blocked(sp, f"{stage}.R", p0, p2, x, y, le)
    e = ELEM_BYTES
    for (i0, j0), tile in tiles.items():
        xb, yb = min(x, p0 - i0), min(y, p2 - j0)
        tile_elems = xb * _round_up(yb, le)
        for k0 in range(0, p1, kd):
            kb = min(kd, p1 - k0)
            for k in range(k0, k0 + kb):
                tb.access(unit, stage, "read", store + (k * row_elems + i0) * e, e, e, xb)
            for k in range(k0, k0 + kb):
                tb.access(unit, stage, "read", store + (k * row_elems + a_part + j0) * e, e, e, yb)
            if k0 == 0 and plan.zero_result:
                _zero(tb, unit, stage, tile, tile_elems, plan.line_bytes)
            tb.access(unit, stage, "write" if k0 == 0 else "update", tile, e, e, tile_elems,
                      flops=2 * xb * yb * kb)
    if flush:
        r = sp[f"{stage}.R"]
        tb.access(unit, stage, "flush", r.addr, e, e, r.nbytes // e)


def _input1_schedule(plan: TiledGemmPlan, tb: TraceBuilder, sp: AddressSpace, unit: str, stage: str,
                     flush: bool) -> None:
    p0, p1, p2, x, z, jd, le = plan.p0, plan.p1, plan.p2, plan.tile_rows, plan.tile_cols, plan.depth, plan.line_elems
    b_part = _round_up(p1, le)
    row_elems = b_part + _round_up(p0, le)
    tiles = _blocked(sp, f"{stage}.A1", p0, p1, x, z, le)
    store = sp.alloc(f"{stage}.A2T_RT", p2 * row_elems * ELEM_BYTES)
    e = ELEM_BYTES
    for (i0, k0), tile in tiles.items():
        xb, zb = min(x, p0 - i0), min(z, p1 - k0)
        tile_elems = xb * _round_up(zb, le)
        for j0 in range(0, p2, jd):
            jb = min(jd, p2 - j0)
            for j in range(j0, j0 + jb):
                tb.access(unit, stage, "read", store + (j * row_elems + k0) * e, e, e, zb)
            for j in range(j0, j0 + jb):
                segment = store + (j * row_elems + b_part + i0) * e
                if k0 == 0 and plan.zero_result:
                    _zero(tb, unit, stage, segment, xb, plan.line_bytes)
                tb.access(unit, stage, "write" if k0 == 0 else "update", segment, e, e, xb)
            tb.access(unit, stage, "read", tile, e, e, tile_elems, flops=2 * xb * zb * jb)
    if flush:
        tb.access(unit, stage, "flush", store, e, e, p2 * row_elems)


def tiled_gemm_trace(p0: int, p1: int, p2: int, cache_bytes: int, ways: int, *,
                     schedule: Schedule = "output", line_bytes: int = DEFAULT_LINE_BYTES,
                     reserve_ways: int | None = None, zero_result: bool = False, unit: str = "host",
                     stage: str = "gemm_tiled", space: AddressSpace | None = None) -> pa.Table:
    """Generator form: plan with :func:`plan_tiled_gemm` for the given cache, then :func:`tiled_gemm`
    (refused before it is built if its trace would exceed ``MAX_TRACE_ROWS`` rows)."""
    plan = plan_tiled_gemm(p0, p1, p2, cache_bytes, ways, schedule=schedule, line_bytes=line_bytes,
                           reserve_ways=reserve_ways, zero_result=zero_result)
    rows = trace_rows(plan)
    if rows > MAX_TRACE_ROWS:
        raise ValueError(f"p0, p1 and p2 must be smaller for this cache: the trace of the planned tiling would take "
                         f"about {rows:,} rows, above the {MAX_TRACE_ROWS:,} a trace may hold, got p0 = {p0}, "
                         f"p1 = {p1}, p2 = {p2}")
    return tiled_gemm(plan, unit=unit, stage=stage, space=space)


def trace_rows(plan: TiledGemmPlan) -> int:
    """Rows of :func:`tiled_gemm`'s trace of ``plan``, at most (counted without building it): per resident
    tile, per step index a streamed read or two and a zero, plus the tile's row per step of ``depth``."""
    col_dim = plan.p2 if plan.schedule == "output" else plan.p1
    steps = plan.p1 if plan.schedule == "output" else plan.p2
    tiles = _ceil_div(plan.p0, plan.tile_rows) * _ceil_div(col_dim, plan.tile_cols)
    return tiles * (3 * steps + _ceil_div(steps, plan.depth)) + 1


GENERATORS: dict[str, Callable[..., pa.Table]] = {"gemm_tiled": tiled_gemm_trace}
