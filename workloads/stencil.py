"""Stencil workloads: host sweeps (naive, blocked, time-tiled) and stencil-engine tile programs.

Grids are out-of-place (two arrays, ping-pong) with a halo of 1 on every side,
row-major with the last index fastest; one grid value is ``elem_bytes`` bytes
(a "word" of ``models.stencil``). Flops and words per point come from
``models.stencil.STENCILS``. Memory work is emitted in large rows: a 2D block
of segments is one strided row whose element is a whole segment, so a tile's
input is one trace row (2D) or one row per plane (3D).

Schedules (``models.stencil.dram_traffic_words`` counts the same schemes):

* ``naive``: one sweep per time step; per slice i of dimension 0 the three input
  slices i-1, i, i+1 are read (one row each) and the interior of output slice i written.
* ``blocked``: the dimensions after the first are cut into blocks; each block column
  (with its halo) is streamed along dimension 0: one read row and one write row per
  block and step (3D: one per plane of the column).
* ``time_tiled``: tiles of a ``models.stencil.TileShape`` are copied in, computed in a
  scratch buffer, copied out. Tile geometry is the model's, simplified honestly: every
  tile reads the box of its input footprint m_i (S1 extent ts1 + 2 tT for hexagons, ts + 2 tT
  for time skewing, times the sub-tile's ts2 (x ts3)) clipped to the grid, and writes the
  same box to the other array. Hexagonal kinds (hex_1d, hhc_2d, hhc_3d) run
  N_w = ``models.stencil.n_wavefronts`` wavefronts of ceil(S1 / pitch) tiles, odd
  wavefronts shifted by half a pitch; hhc sub-tiles walk S2 (x S3) in classic-skewed steps
  of ts2 (x ts3) starting tT before the grid (004's ceil((S_i + tT) / ts_i) sub-tiles).
  Time skewing 1D uses the exact tile set of ``models.stencil.wavefront_widths``. The
  scratch buffer is one region reused by every tile (it stays in the caches); its
  traffic per point is charged as one update of the buffer per tile.
  Every tile runs whole, as the model counts it: its flops are flops per point times
  ``TileShape.v_tile_points`` and its scratch update ``m_tile_words``, also for a tile that
  reaches past the grid's edges or the last step (only its grid boxes are clipped), so the
  trace holds more flops and scratch traffic than points x steps x flops per point.
* engine programs (:func:`engine_program`): the same tiles as commands to a stencil
  engine, one ``offload`` per wavefront (a kernel call) followed by a ``wait``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Iterator, Literal, Sequence, get_args

import pyarrow as pa

from models.stencil import TileKind, TileShape, n_wavefronts
from simulator.config.stencils import STENCILS, Stencil
from workloads.trace import (MAX_ADDR, MAX_COMMAND_ITEMS, MAX_ROW_FLOPS, MAX_TRACE_ROWS, AddressSpace, TraceBuilder,
                             check_trace_limit)

Scheme = Literal["naive", "blocked", "time_tiled"]
StencilName = Literal[tuple(sorted(STENCILS))]  # the stencils simulator.config.stencils defines
SCHEMES: tuple[str, ...] = get_args(Scheme)


@dataclass(frozen=True)
class GridLayout:
    """Two padded arrays (in, out) of ``grid`` interior points, ``elem_bytes`` per point.

    Every innermost row holds ``lead`` unused elements before padded index 0 and is
    ``row_elems`` elements long (0: just the padded row), so that rows can start on an
    alignment boundary (:func:`layout`).
    """

    grid: tuple[int, ...]
    elem_bytes: int
    base: tuple[int, int]
    lead: int = 0
    row_elems: int = 0

    @property
    def padded(self) -> tuple[int, ...]:
        return tuple(n + 2 for n in self.grid)

    @property
    def nbytes(self) -> int:
        """Bytes of one array."""
        return math.prod(self.padded[:-1]) * max(self.row_elems, self.lead + self.padded[-1]) * self.elem_bytes

    def strides_bytes(self) -> tuple[int, ...]:
        """Byte stride of each dimension (last fastest)."""
        out, s = [self.elem_bytes], self.elem_bytes * max(self.row_elems, self.lead + self.padded[-1])
        for n in reversed(self.padded[:-1]):
            out.append(s)
            s *= n
        return tuple(reversed(out))

    def box_rows(self, array: int, lo: Sequence[int], hi: Sequence[int]) -> Iterator[tuple[int, int, int, int]]:
        """Strided rows (addr, elem_bytes, stride_bytes, count) covering the box [lo, hi) of padded indices.

        The box is clipped to the padded array; an empty box yields nothing. The last
        dimension is one element (a segment); the one before it is the row's count; any
        outer dimension gives one row per index.
        """
        lo = [max(0, a) for a in lo]
        hi = [min(n, b) for n, b in zip(self.padded, hi)]
        if any(b <= a for a, b in zip(lo, hi)):
            return
        st = self.strides_bytes()
        seg = (hi[-1] - lo[-1]) * self.elem_bytes
        first = self.base[array] + (lo[-1] + self.lead) * st[-1]
        if len(self.grid) == 1:
            yield first, seg, seg, 1
            return
        outer = [range(a, b) for a, b in zip(lo[:-2], hi[:-2])]
        for idx in _product(outer):
            addr = first + sum(i * s for i, s in zip(idx, st)) + lo[-2] * st[-2]
            yield addr, seg, st[-2], hi[-2] - lo[-2]


def _product(ranges: list[range]) -> Iterator[tuple[int, ...]]:
    if not ranges:
        yield ()
        return
    for i in ranges[0]:
        for rest in _product(ranges[1:]):
            yield (i, *rest)


def layout(grid: Sequence[int], elem_bytes: int = 8, space: AddressSpace | None = None,
           stage: str = "stencil", align_bytes: int = 0, origin: int = 0) -> GridLayout:
    """Allocate the two padded arrays of ``grid`` (interior points) in ``space``.

    ``align_bytes`` > 0 pads every innermost row so that padded index ``origin`` (and every
    ``align_bytes`` from it) starts on an ``align_bytes`` boundary and rows are a whole number
    of ``align_bytes`` long; 0 packs the rows.
    """
    grid = tuple(int(n) for n in grid)
    if not 1 <= len(grid) <= 3 or any(n < 1 for n in grid):
        raise ValueError(f"grid must hold 1-3 sizes >= 1, got {grid!r}")
    if elem_bytes < 1:
        raise ValueError(f"elem_bytes must be >= 1, got {elem_bytes!r}")
    if align_bytes < 0 or (align_bytes and align_bytes % elem_bytes):
        raise ValueError(f"align_bytes must be 0 or a multiple of elem_bytes = {elem_bytes}, got {align_bytes!r}")
    lead = row = 0
    if align_bytes:
        per = align_bytes // elem_bytes
        lead = (-int(origin)) % per
        row = -(-(lead + grid[-1] + 2) // per) * per
    sp = space or AddressSpace()
    shape = GridLayout(grid, elem_bytes, (0, 0), lead, row)
    nbytes = shape.nbytes
    return GridLayout(grid, elem_bytes, (sp.alloc(f"{stage}.a", nbytes), sp.alloc(f"{stage}.b", nbytes)), lead, row)


def _count(name: str, value: Any) -> int:
    """``value`` as an integer >= 1; a ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        kind = "a whole number of bytes" if name.endswith("_bytes") else "an integer"
        raise ValueError(f"{name} must be {kind} >= 1, got {value!r}")
    return int(value)


def _sizes(name: str, value: Any, n: int, what: str) -> tuple[int, ...]:
    """``value`` as ``n`` integers >= 1 (``what`` they are); a ValueError naming ``name`` otherwise."""
    if not (isinstance(value, (list, tuple)) and len(value) == n and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 1 for v in value)):
        raise ValueError(f"{name} must be a list of {n} positive integers ({what}), got {value!r}")
    return tuple(int(v) for v in value)


def _stencil(name: str, grid: Sequence[int]) -> Stencil:
    if not isinstance(name, str) or name not in STENCILS:
        raise ValueError(f"stencil must be one of {', '.join(sorted(STENCILS))}, got {name!r}")
    st = STENCILS[name]
    _sizes("grid", grid, st.dims, f"the interior points along each dimension of stencil {name}")
    return st


def _emit_box(b: TraceBuilder, lay: GridLayout, unit: str, stage: str, op: str, array: int,
              lo: Sequence[int], hi: Sequence[int], flops: int = 0) -> None:
    rows = list(lay.box_rows(array, lo, hi))
    for k, (addr, seg, stride, count) in enumerate(rows):
        b.access(unit, stage, op, addr, seg, stride, count, flops=flops if k == len(rows) - 1 else 0)
    if not rows and flops:
        b.compute(unit, stage, flops=flops)


def naive_sweep(stencil: str, grid: Sequence[int], steps: int, elem_bytes: int = 8, *,
                unit: str = "host", stage: str = "stencil", chunk_points: int = 8192) -> pa.Table:
    """Naive out-of-place sweeps, one per time step (module docstring). 1D grids go in chunks."""
    st = _stencil(stencil, grid)
    _check_steps(steps)
    lay = layout(grid, elem_bytes, stage=stage)
    b = TraceBuilder()
    d = len(grid)
    flops_slice = st.flops_per_point * math.prod(grid[1:])
    for t in range(steps):
        src, dst = t % 2, 1 - t % 2
        if d == 1:
            for lo in range(1, grid[0] + 1, chunk_points):
                hi = min(grid[0] + 1, lo + chunk_points)
                _emit_box(b, lay, unit, stage, "read", src, [lo - 1], [hi + 1])
                _emit_box(b, lay, unit, stage, "write", dst, [lo], [hi], flops=st.flops_per_point * (hi - lo))
            continue
        for i in range(1, grid[0] + 1):
            for di in (-1, 0, 1):
                _emit_box(b, lay, unit, stage, "read", src, [i + di] + [0] * (d - 1),
                          [i + di + 1] + [n + 2 for n in grid[1:]])
            _emit_box(b, lay, unit, stage, "write", dst, [i] + [1] * (d - 1), [i + 1] + [n + 1 for n in grid[1:]],
                      flops=flops_slice)
    _flush_arrays(b, lay, unit, stage)
    return b.to_table()


def blocked_sweep(stencil: str, grid: Sequence[int], steps: int, block: Sequence[int], elem_bytes: int = 8, *,
                  unit: str = "host", stage: str = "stencil") -> pa.Table:
    """Spatially blocked sweeps: block columns of ``block`` (dims after the first) streamed along dim 0."""
    st = _stencil(stencil, grid)
    _check_steps(steps)
    if len(grid) < 2 or len(block) != len(grid) - 1 or any(x < 1 for x in block):
        raise ValueError(f"block must hold {len(grid) - 1} sizes >= 1 for a {len(grid)}D grid, got {block!r}")
    lay = layout(grid, elem_bytes, stage=stage)
    b = TraceBuilder()
    starts = [range(1, n + 1, bs) for n, bs in zip(grid[1:], block)]
    for t in range(steps):
        src, dst = t % 2, 1 - t % 2
        for corner in _product(starts):
            hi = [min(c + bs, n + 1) for c, bs, n in zip(corner, block, grid[1:])]
            pts = grid[0] * math.prod(h - c for h, c in zip(hi, corner))
            _emit_box(b, lay, unit, stage, "read", src, [0] + [c - 1 for c in corner],
                      [grid[0] + 2] + [h + 1 for h in hi])
            _emit_box(b, lay, unit, stage, "write", dst, [1, *corner], [grid[0] + 1, *hi],
                      flops=st.flops_per_point * pts)
    _flush_arrays(b, lay, unit, stage)
    return b.to_table()


@dataclass(frozen=True)
class Tile:
    """One tile: its input/output box (padded indices, [lo, hi)) and its work."""

    wavefront: int
    block: int
    lo: tuple[int, ...]
    hi: tuple[int, ...]
    points: int
    row_widths: tuple[int, ...]


def tiles(shape: TileShape, grid: Sequence[int], steps: int) -> list[Tile]:
    """The tiles of a time-tiled schedule in execution order (module docstring)."""
    grid = tuple(grid)
    _check_steps(steps)
    if len(grid) != len(shape.t_s):
        raise ValueError(f"grid must have {len(shape.t_s)} sizes for {shape.kind}, got {grid!r}")
    tt, ts1 = shape.t_t, shape.t_s[0]
    out: list[Tile] = []
    if not shape.hexagonal:  # time skewing: tile (a, b) covers i + t in [a ts, (a+1) ts), t in (b tT, (b+1) tT]
        for b in range(-(-steps // tt)):
            t_lo, t_hi = b * tt + 1, min((b + 1) * tt, steps)
            for a in range((1 + t_lo) // ts1, (grid[0] + t_hi) // ts1 + 1):
                i0 = a * ts1 - t_lo  # left end of the tile's base row (interior index, 1-based)
                out.append(Tile(a + b, a, (i0 - tt,), (i0 + ts1 + tt,), ts1 * (t_hi - t_lo + 1),
                                (ts1,) * (t_hi - t_lo + 1)))
        out.sort(key=lambda x: x.wavefront)
        return out
    pitch = shape.pitch
    half = ts1 // 2 + tt
    inner = shape.t_s[1:]
    sub_starts = [range(1 - tt, n + 1, s) for n, s in zip(grid[1:], inner)]
    for wf in range(n_wavefronts(shape, steps)):
        shift = (wf % 2) * (pitch // 2)
        for a in range(-(-grid[0] // pitch)):
            c = 1 + a * pitch + shift + ts1 // 2
            for corner in _product(sub_starts):
                # the base row [c - ts1 // 2, c - ts1 // 2 + ts1) and tT on each side: ts1 + 2 tT points
                hi = (c + half + ts1 % 2, *[x + s for x, s in zip(corner, inner)])
                out.append(Tile(wf, a, (c - half, *corner), hi, shape.v_tile_points,
                                tuple(w * math.prod(inner) for w in shape.row_widths())))
    return out


def tiles_per_wavefront(shape: TileShape, grid: Sequence[int]) -> int:
    """Tiles in each wavefront of a hexagonal schedule (``tiles``): ceil(S1 / pitch) hexagons, each a prism of
    the sub-tiles that walk the other dimensions from tT before the grid in steps of ts_i."""
    return -(-grid[0] // shape.pitch) * math.prod(
        len(range(1 - shape.t_t, n + 1, s)) for n, s in zip(grid[1:], shape.t_s[1:]))


def time_tiled_space(grid: Sequence[int], shape: TileShape, elem_bytes: int = 8,
                     stage: str = "stencil") -> tuple[AddressSpace, GridLayout, int]:
    """The memory ``time_tiled_sweep`` works in, laid out in a fresh address space: (the space, its two grids'
    ``layout``, the byte address of its scratch tile of ``shape.m_tile_words`` elements). A check of a sweep's
    reach reads ``end_addr`` of the space before building the trace."""
    sp = AddressSpace()
    lay = layout(grid, elem_bytes, sp, stage)
    return sp, lay, sp.alloc(f"{stage}.scratch", shape.m_tile_words * elem_bytes)


def time_tiled_sweep(stencil: str, grid: Sequence[int], steps: int, shape: TileShape, elem_bytes: int = 8, *,
                     unit: str = "host", stage: str = "stencil") -> pa.Table:
    """Time-tiled host schedule: per tile copy in, compute in a scratch buffer, copy out."""
    st = _stencil(stencil, grid)
    _, lay, scratch = time_tiled_space(grid, shape, elem_bytes, stage)
    b = TraceBuilder()
    for tile in tiles(shape, grid, steps):
        src = tile.wavefront % 2
        _emit_box(b, lay, unit, stage, "read", src, tile.lo, tile.hi)
        b.access(unit, stage, "update", scratch, elem_bytes, elem_bytes, shape.m_tile_words,
                 flops=st.flops_per_point * tile.points)
        _emit_box(b, lay, unit, stage, "write", 1 - src, tile.lo, tile.hi)
    _flush_arrays(b, lay, unit, stage)
    return b.to_table()


def _regions(lay: GridLayout, array: int, lo: Sequence[int], hi: Sequence[int]) -> list[list[int]]:
    """[[addr, nbytes], ...] regions (one per segment) of a box."""
    out = []
    for addr, seg, stride, count in lay.box_rows(array, lo, hi):
        out += [[addr + k * stride, seg] for k in range(count)]
    return out


def engine_program(stencil: str, grid: Sequence[int], steps: int, shape: TileShape, target: str = "stencil",
                   elem_bytes: int = 4, *, unit: str = "host", stage: str = "stencil",
                   align_bytes: int = 64) -> pa.Table:
    """Tile program for a stencil engine: one offload (a kernel call of one wavefront's tiles) and a wait each.

    The arrays are laid out with rows aligned (``layout(align_bytes=..., origin=1 - tT)``) so that
    the innermost tile edges, which start at padded index 1 - tT in steps of the innermost tile size,
    fall on ``align_bytes`` boundaries whenever that size is a whole number of them, and tile rows
    move as whole lines (004 keeps that size a multiple of 32 so that neighbouring threads fill
    complete warps, 004 A.32 at 004:L2565-2569). ``align_bytes=0`` packs the rows.

    Command params: ``op="stencil_tiles"``, ``stencil``, ``t_t``, ``m_tile_words``, ``tiles`` (per tile:
    ``block`` (the hexagon a prism of hhc sub-tiles belongs to; one threadblock runs it, 004 A.29),
    ``inputs``, ``outputs`` regions, ``points``, ``rows`` points per row), ``inputs``/``outputs`` the union.
    """
    st = _stencil(stencil, grid)
    problem = engine_program_problem(grid, steps, shape)
    if problem:
        raise ValueError(f"{problem[0]}: {problem[1]}")
    lay = layout(grid, elem_bytes, stage=stage, align_bytes=align_bytes, origin=1 - shape.t_t)
    by_wf: dict[int, list[Tile]] = {}
    for tile in tiles(shape, grid, steps):
        by_wf.setdefault(tile.wavefront, []).append(tile)
    b = TraceBuilder()
    for wf in sorted(by_wf):
        src = wf % 2
        cmd_tiles, ins, outs = [], [], []
        for tile in by_wf[wf]:
            i, o = _regions(lay, src, tile.lo, tile.hi), _regions(lay, 1 - src, tile.lo, tile.hi)
            cmd_tiles.append({"block": tile.block, "inputs": i, "outputs": o, "points": tile.points,
                              "rows": list(tile.row_widths)})
            ins += i
            outs += o
        b.offload(unit, stage, target, op="stencil_tiles", stencil=st.name, t_t=shape.t_t,
                  m_tile_words=shape.m_tile_words,
                  inputs=ins, outputs=outs, tiles=cmd_tiles)
        b.wait(unit, stage, target)
    return b.to_table()


#: Most tiles in one engine program: each is a dict of regions in its wavefront's command, and replaying 600,000
#: takes about a minute.
MAX_ENGINE_TILES = MAX_COMMAND_ITEMS


def engine_program_problem(grid: Sequence[int], steps: int, shape: TileShape) -> tuple[str, str] | None:
    """(``"grid"`` or ``"steps"``, why) if ``engine_program`` over ``grid`` for ``steps`` with hexagonal tiles
    ``shape`` would hold more than ``MAX_ENGINE_TILES`` tiles, or a command a list of more than
    ``MAX_COMMAND_ITEMS`` entries (its tiles; the union of its tiles' input regions, and of their output regions:
    one region per segment of a tile's box, at most as many as its unclipped box has: a count a little high where
    boxes are clipped at the grid's edges), counted without listing them; else None. The grid is named when one wavefront is too large, else the steps with the most that fit."""
    grid, steps = tuple(int(n) for n in grid), int(steps)
    if not shape.hexagonal or len(grid) != len(shape.t_s):
        return None  # engine_program's tiles() refuses these by itself, before listing anything
    per_wavefront = tiles_per_wavefront(shape, grid)
    # a box spans ts1 + 2 tT points of dimension 0 and t_s[i] of the others; a 1D box is one segment
    box_extents = (shape.t_s[0] + 2 * shape.t_t, *shape.t_s[1:])
    regions = per_wavefront * math.prod(box_extents[:-1])  # the union list of one command, inputs or outputs
    if per_wavefront > MAX_ENGINE_TILES or regions > MAX_COMMAND_ITEMS:
        return "grid", (f"{list(grid)}: one wavefront of tiles t_t {shape.t_t}, t_s {list(shape.t_s)} holds "
                        f"{per_wavefront:,} tiles of up to {regions:,} input regions in all; expected a grid whose "
                        f"wavefront holds at most {MAX_ENGINE_TILES:,} tiles and {MAX_COMMAND_ITEMS:,} regions (the "
                        "entries of one command's list)")
    most = 1  # the most steps whose wavefronts fit: n_wavefronts grows with the steps
    hi = steps
    while most < hi:
        mid = (most + hi + 1) // 2
        most, hi = (mid, hi) if n_wavefronts(shape, mid) * per_wavefront <= MAX_ENGINE_TILES else (most, mid - 1)
    if steps <= most:
        return None
    return "steps", (f"{steps}; expected at most {most:,} with tiles t_t {shape.t_t}, t_s {list(shape.t_s)} "
                     f"({per_wavefront:,} per wavefront over grid {list(grid)}; an engine program holds at most "
                     f"{MAX_ENGINE_TILES:,} tiles)")


def stencil_sweep(stencil: StencilName, grid: Sequence[int], steps: int, scheme: Scheme = "naive",
                  block: Sequence[int] | None = None, tile_kind: TileKind | None = None, t_t: int | None = None,
                  t_s: Sequence[int] | None = None, elem_bytes: int = 8) -> pa.Table:
    """Generator entry point (workload configs): one of ``SCHEMES`` on the host.

    Every argument is checked before the trace is built, including its size (at most
    ``MAX_TRACE_ROWS`` rows, and ``MAX_ROW_FLOPS`` flops on a tile's row), so that a bad value is
    refused at once, naming its parameter. A ``time_tiled`` tile fits the run: ``t_t`` at most
    ``steps`` and ``t_s`` at most ``grid`` along each dimension (tiles run whole: module docstring)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    _stencil(stencil, grid)  # checks the name and the grid
    grid, steps = tuple(int(n) for n in grid), _count("steps", steps)
    elem_bytes = _count("elem_bytes", elem_bytes)
    if 2 * math.prod(n + 2 for n in grid) * elem_bytes > MAX_ADDR:
        raise ValueError(f"grid and elem_bytes must be smaller: the two padded arrays exceed the 2**62 B of the "
                         f"trace's address space, got grid {list(grid)} of {elem_bytes} B elements")
    # each parameter given is checked as its scheme takes it, whichever scheme runs: a sweep over schemes keeps
    # one workload's values, and a mistyped value for another scheme is refused rather than ignored
    if block is not None:
        if len(grid) < 2:
            raise ValueError(f"block must be left out for the 1D stencil {stencil} (blocks cut the dimensions after "
                             f"the first), got {block!r}")
        block = _sizes("block", block, len(grid) - 1,
                       f"a block size along each dimension of stencil {stencil} after the first")
    if tile_kind is not None:
        kinds = [k for k in get_args(TileKind) if k.endswith(f"_{len(grid)}d")]  # the kinds name their dimensions
        if tile_kind not in kinds:
            raise ValueError(f"tile_kind must be one of {', '.join(kinds)} (the tiles of a {len(grid)}D stencil), "
                             f"got {tile_kind!r}")
    if t_s is not None:
        t_s = _sizes("t_s", t_s, len(grid), f"tile sizes in grid points along each dimension of stencil {stencil}")
    shape = None if None in (tile_kind, t_t, t_s) else TileShape(tile_kind, _count("t_t", t_t), t_s)
    if t_t is not None and shape is None:
        _count("t_t", t_t)
    if scheme == "blocked":
        if len(grid) < 2:
            raise ValueError(f"scheme must be naive or time_tiled for the 1D stencil {stencil}, got 'blocked'")
        if block is None:
            raise ValueError("block is required for scheme 'blocked'")
    if scheme == "time_tiled" and shape is None:
        raise ValueError("tile_kind, t_t and t_s are required for scheme 'time_tiled'")
    if scheme == "time_tiled" and (problem := tile_extent_problem(grid, steps, shape)):
        raise ValueError(problem)
    _check_trace_size(scheme, grid, steps, block, shape)
    if scheme == "time_tiled" and (problem := tile_flops_problem(stencil, shape)):
        raise ValueError(problem)
    if scheme == "naive":
        return naive_sweep(stencil, grid, steps, elem_bytes)
    if scheme == "blocked":
        return blocked_sweep(stencil, grid, steps, block, elem_bytes)
    return time_tiled_sweep(stencil, grid, steps, shape, elem_bytes)


def sweep_rows(scheme: str, grid: tuple[int, ...], steps: int, block: Sequence[int] | None = None,
               shape: TileShape | None = None, chunk_points: int = 8192) -> int:
    """Trace rows of a host sweep (an upper bound for ``time_tiled``), computed without building it."""
    d, g0 = len(grid), grid[0]
    if scheme == "naive":
        per_step = 2 * -(-g0 // chunk_points) if d == 1 else 4 * g0
        return steps * per_step + 2
    if scheme == "blocked":
        n_blocks = math.prod(-(-n // b) for n, b in zip(grid[1:], block))
        return steps * n_blocks * (2 if d == 2 else 2 * g0 + 2) + 2
    tt, ts1 = shape.t_t, shape.t_s[0]
    if not shape.hexagonal:  # time skewing: at most (S1 + tT) / ts + 2 tiles per band of tT steps, 3 rows each
        return 3 * -(-steps // tt) * ((g0 + tt) // ts1 + 2) + 2
    per_wavefront = tiles_per_wavefront(shape, grid)
    box_rows = 1 if d <= 2 else min(ts1 + 2 * tt, g0 + 2)  # 3D: a row per plane of the tile's box
    return n_wavefronts(shape, steps) * per_wavefront * (1 + 2 * box_rows) + 2


def sweep_size_problem(scheme: str, grid: Sequence[int], steps: int, shape: TileShape | None = None,
                       block: Sequence[int] | None = None) -> str | None:
    """Why a host sweep of ``scheme`` over ``grid`` for ``steps`` cannot be built (more trace rows than a trace
    holds: ``stencil_sweep``'s own check), or None; for a caller that checks its inputs before any run."""
    try:
        _check_trace_size(scheme, tuple(int(n) for n in grid), int(steps), block, shape)
    except ValueError as exc:
        return str(exc)
    return None


def _check_trace_size(scheme: str, grid: tuple[int, ...], steps: int, block: Sequence[int] | None,
                      shape: TileShape | None) -> None:
    """Refuse a sweep of more than ``MAX_TRACE_ROWS`` rows before building it: the grid (and tiles) if
    one time step is too many rows, else the steps."""
    one_step = sweep_rows(scheme, grid, 1, block, shape)
    if one_step > MAX_TRACE_ROWS and shape is not None and scheme == "time_tiled" and shape.t_t > max(grid):
        # the tiles start t_t points before the grid along each dimension: a t_t beyond the grid is the cause
        raise ValueError(f"t_t must be at most {max(grid):,}, the grid's longest side (with tiles of t_t = "
                         f"{shape.t_t:,} over grid {list(grid)} one time step takes {one_step:,} trace rows, above the "
                         f"{MAX_TRACE_ROWS:,} a trace may hold), got {shape.t_t}")
    if one_step > MAX_TRACE_ROWS:
        raise ValueError(f"grid must be smaller: one time step takes {one_step:,} trace rows with scheme {scheme}, "
                         f"above the {MAX_TRACE_ROWS:,} a trace may hold, got {list(grid)}")
    if sweep_rows(scheme, grid, steps, block, shape) <= MAX_TRACE_ROWS:
        return
    lo, hi = 1, steps  # the most steps that fit: rows grow with the steps
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if sweep_rows(scheme, grid, mid, block, shape) <= MAX_TRACE_ROWS else (lo, mid - 1)
    check_trace_limit("steps", steps, lo, f"a trace holds at most {MAX_TRACE_ROWS:,} rows, {one_step:,} for one "
                      f"step of this grid and scheme")


def tile_extent_problem(grid: Sequence[int], steps: int, shape: TileShape) -> str | None:
    """Why a time-tiled tile of ``shape`` does not fit a run of ``steps`` over ``grid``, starting with the parameter
    at fault (``t_t`` deeper than ``steps``, ``t_s`` wider than the grid along a dimension), or None: the sweep runs
    every tile whole, so such a tile would update points beyond the last step or the grid's edges."""
    if shape.t_t > steps:
        return (f"t_t must be at most steps = {steps} (a tile spans t_t time steps and runs whole: a deeper one "
                f"updates points beyond the last step), got {shape.t_t}")
    if any(ts > n for ts, n in zip(shape.t_s, grid)):
        return (f"t_s must be at most the grid {list(grid)} along each dimension (a tile spans t_s[i] points of "
                f"dimension i and runs whole: a wider one updates points beyond the grid's edges), got "
                f"{list(shape.t_s)}")
    return None


def tile_flops_problem(stencil: str, shape: TileShape) -> str | None:
    """Why a tile of ``shape`` holds too much work for one trace row (its flops, the stencil's flops per point
    times the tile's ``v_tile_points``, ride on its scratch update's row: at most MAX_ROW_FLOPS), or None."""
    flops = STENCILS[stencil].flops_per_point * shape.v_tile_points
    if flops <= MAX_ROW_FLOPS:
        return None
    return (f"t_t must be smaller with t_s = {list(shape.t_s)} (the tile updates {shape.v_tile_points:,} points, "
            f"{flops:,} flops of {stencil} on one trace row, which holds at most {MAX_ROW_FLOPS:,}: "
            f"workloads.trace.MAX_ROW_FLOPS), got {shape.t_t}")


def _flush_arrays(b: TraceBuilder, lay: GridLayout, unit: str, stage: str) -> None:
    """Write every dirty line of both arrays back (the results end in memory, as the model counts)."""
    nbytes = lay.nbytes
    for base in lay.base:
        b.access(unit, stage, "flush", base, nbytes, nbytes, 1)


def _check_steps(steps: int) -> None:
    _count("steps", steps)


#: Generator name -> function, for the workload-config loader.
GENERATORS = {"stencil": stencil_sweep}
