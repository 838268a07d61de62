"""Tiled stencil models: time (004 app. A), energy (004 app. B) and DRAM traffic counts.

Units: times in seconds, energies in joules, volumes in words (one grid value, 4 B on the
GPUs of the seed), sizes in grid points. A stencil of ``dims`` space dimensions runs ``T``
time steps over a grid ``space = (S1, ..., Sd)``; S1 is the dimension that is tiled together
with time.

Tile shapes (``TileShape.kind``), all for first-order (radius 1) stencils:

* ``"time_skew_1d"``: parallelogram ts x tT after the skew (i, t) -> (i + t, t) (004 §B.4.2);
* ``"hex_1d"``: hexagons of base ts and height tT (tT even) (004 §A.4.1);
* ``"hhc_2d"``/``"hhc_3d"``: hybrid hexagonal-classic: hexagons in (t, S1), classic time
  skewing in S2 (and S3) cut into sub-tiles of length ts2 (x ts3) (004 §A.4.2-A.4.3).

Per tile (hex family; w_tile = ts1 + tT - 2, A.4):

* M_io = m_i + m_o = 2 (ts1 + 2 tT) x ts2 x ts3         (A.8, A.14, A.25, B.3)
* V_tile = tT (2 ts1 + tT - 2) / 2 x ts2 x ts3           (B.4, A.27)
* transfer m = M_io L + 2 tau_sync                        (A.9, A.15, A.26)
* compute c = 2 C_iter sum_{x = ts1, ts1+2, .., w_tile} ceil(x ts2 ts3 / n_par) + tT tau_sync (A.10, A.16, A.28)
* k tiles per SM: T_tile(k) = m + c + (k - 1) max(m, c)   (A.13)
* prism/slab of N_sub sub-tiles: T(1) = N_sub (m + c), T(k>1) = m + k N_sub max(m, c) (A.29, A.30)
* T_alg = sum over wavefronts of T_sync + the busiest SM's time (004:L2385): its
  n = ceil(w / N_SM) tiles in rounds of k = k_max (A.12), a round of j tiles taking
  T_unit(j); A.7, A.18, A.31 (N_w ceil(w / (k N_SM)) T_unit(k) + N_w T_sync) when k divides n

Energy (004 eqs. B.2-B.6): E = P_stat T + N_tiles (e_gs M_io + u_sr e_sr V_tile + E_iter V_tile),
E_iter = sum_j op_j e_j.

Readings of garbled seed text are stated where they are used (A.3 wavefront count, the
shared-memory footprint of a 3D sub-slab and of a time-skewed tile are our extensions).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, Literal, Sequence

import numpy as np

from simulator.config.stencils import STENCILS, Stencil  # noqa: F401 (re-exported: the stencil table)

TileKind = Literal["time_skew_1d", "hex_1d", "hhc_2d", "hhc_3d"]
_KIND_DIMS = {"time_skew_1d": 1, "hex_1d": 1, "hhc_2d": 2, "hhc_3d": 3}


# ---- stencil definitions -----------------------------------------------------------

# ---- machine parameters --------------------------------------------------------------

@dataclass(frozen=True)
class GpuParams:
    """GPU parameters of the time model (004 Table A.1).

    ``l_s_per_word`` time per word of global-memory access (L); ``tau_sync_s`` one
    threadblock barrier; ``t_sync_s`` one host-GPU synchronisation (kernel call);
    ``m_sm_words`` shared memory per SM; ``max_shared_words_per_block`` per threadblock.
    """

    n_sm: int
    n_v: int
    m_sm_words: int
    max_shared_words_per_block: int
    max_blocks_per_sm: int
    max_threads_per_sm: int
    max_threads_per_block: int
    l_s_per_word: float
    tau_sync_s: float
    t_sync_s: float
    name: str = ""

    def __post_init__(self) -> None:
        for f in ("n_sm", "n_v", "m_sm_words", "max_shared_words_per_block", "max_blocks_per_sm",
                  "max_threads_per_sm", "max_threads_per_block"):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{f} must be an integer >= 1, got {v!r}")
        for f in ("l_s_per_word", "tau_sync_s", "t_sync_s"):
            if not getattr(self, f) >= 0:
                raise ValueError(f"{f} must be >= 0 seconds, got {getattr(self, f)!r}")


# 004 Table A.2 (004:L2431-L2436): 16 SMs, 128 vector units, 96 KB shared memory per SM, 48 KB per
# threadblock (004:L2411), 32 blocks per SM. Table A.3 (004:L2442-L2444) L = 7.36e-3 s/GB (4-byte
# words), tau_sync = 7.96e-10 s, T_sync = 9.24e-7 s; the exponents are read from a garbled
# extraction (the Titan X column prints 9.00e-7 for T_sync). 2048 threads/SM and 1024 per
# block are the Maxwell limits (not in the seed).
GTX980 = GpuParams(16, 128, 96 * 1024 // 4, 48 * 1024 // 4, 32, 2048, 1024,
                   7.36e-3 * 4 / 1e9, 7.96e-10, 9.24e-7, "GTX 980")

# 004 Table A.4 (004:L2466-L2474): C_iter on the GTX 980 (s), exponents read as above.
C_ITER_GTX980_S: dict[str, float] = {
    "jacobi_2d": 3.39e-8, "heat_2d": 3.68e-8, "laplacian_2d": 3.11e-8,
    "gradient_2d": 6.09e-8, "heat_3d": 1.55e-7, "laplacian_3d": 1.36e-7,
}


@dataclass(frozen=True)
class StencilEnergyParams:
    """Energy-model parameters (004 Table B.1): W and J per word / per operation."""

    p_stat_w: float
    e_gs_j_per_word: float
    e_sr_j_per_word: float
    e_fadd_j: float
    e_fmul_j: float
    e_fother_j: float
    name: str = ""

    def __post_init__(self) -> None:
        for f in ("p_stat_w", "e_gs_j_per_word", "e_sr_j_per_word", "e_fadd_j", "e_fmul_j", "e_fother_j"):
            if not getattr(self, f) >= 0:
                raise ValueError(f"{f} must be >= 0, got {getattr(self, f)!r}")

    def e_iter_j(self, stencil: Stencil) -> float:
        """E_iter = sum_j op_j e_j (004 §B.6.2), J per point update."""
        return (stencil.fadd * self.e_fadd_j + stencil.fmul * self.e_fmul_j
                + stencil.fother * self.e_fother_j)


# 004 Table B.2 (004:L3387-L3398), micro-benchmark column ("Model A"), NVIDIA K20c: P_stat 48 W,
# e_gs 2.2e-9 J/word (printed exponent garbled; read as 2.2e-9), e_sr 2.23e-10 J/word,
# e_fadd 5.3e-11 J, e_fmul 3.7e-11 J. Other operations (sqrt, divide) have no value in the
# table; they are charged as multiplies (our assumption).
K20C = StencilEnergyParams(48.0, 2.2e-9, 2.23e-10, 5.3e-11, 3.7e-11, 3.7e-11, "K20c (004 Table B.2)")


# ---- tile shapes -----------------------------------------------------------------------

@dataclass(frozen=True)
class TileShape:
    """Tile sizes: ``t_t`` along time, ``t_s = (ts1[, ts2[, ts3]])`` along space."""

    kind: TileKind
    t_t: int
    t_s: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.kind not in _KIND_DIMS:
            raise ValueError(f"kind must be one of {sorted(_KIND_DIMS)}, got {self.kind!r}")
        if len(self.t_s) != _KIND_DIMS[self.kind]:
            raise ValueError(f"t_s must have {_KIND_DIMS[self.kind]} sizes for {self.kind}, got {self.t_s!r}")
        if any((not isinstance(v, int)) or v < 1 for v in self.t_s):
            raise ValueError(f"t_s must be integers >= 1, got {self.t_s!r}")
        if not isinstance(self.t_t, int) or self.t_t < 1:
            raise ValueError(f"t_t must be an integer >= 1, got {self.t_t!r}")
        if self.kind != "time_skew_1d" and self.t_t % 2:
            raise ValueError(f"t_t must be even for hexagonal tiles (004:L2047-L2048), got {self.t_t!r}")

    @property
    def hexagonal(self) -> bool:
        return self.kind != "time_skew_1d"

    @property
    def _inner(self) -> int:
        """Product of the classic-skewed sizes ts2 (x ts3); 1 for 1D."""
        return math.prod(self.t_s[1:])

    @property
    def w_tile(self) -> int:
        """Hexagon width ts1 + tT - 2 (A.4); ts for a parallelogram."""
        return self.t_s[0] + self.t_t - 2 if self.hexagonal else self.t_s[0]

    @property
    def pitch(self) -> int:
        """Distance between tiles of one wavefront along S1, w_tile + ts1 + 2 (A.5)."""
        return self.w_tile + self.t_s[0] + 2

    @property
    def m_in_words(self) -> int:
        """Input footprint m_i (A.8, A.14, A.25; 004:L3238 for time skewing)."""
        return (self.t_s[0] + 2 * self.t_t) * self._inner

    @property
    def m_out_words(self) -> int:
        """Output footprint m_o (equal to m_i for these first-order stencils)."""
        return self.m_in_words

    @property
    def m_io_words(self) -> int:
        """Global<->shared words per tile, M_io = m_i + m_o."""
        return self.m_in_words + self.m_out_words

    @property
    def v_tile_points(self) -> int:
        """Point updates per tile: hexagon area tT (2 ts1 + tT - 2) / 2 x inner (B.4, A.27)."""
        if not self.hexagonal:
            return self.t_s[0] * self.t_t
        return self.t_t * (2 * self.t_s[0] + self.t_t - 2) // 2 * self._inner

    @property
    def m_tile_words(self) -> int:
        """Shared memory per tile (words).

        hex_1d 2 (ts + tT) (004:L2123); hhc_2d 2 (ts1 + tT + 1)(ts2 + tT + 1) (A.20);
        hhc_3d 2 prod(ts_i + tT + 1) and time skewing 2 (ts + 2 tT) are our extensions, the latter its input and
        output footprints m_i = m_o = ts + 2 tT (004:L3238), which the tile holds as an engine program loads it.
        """
        if self.kind == "hex_1d":
            return 2 * (self.t_s[0] + self.t_t)
        if self.kind == "time_skew_1d":
            return 2 * (self.t_s[0] + 2 * self.t_t)
        return 2 * math.prod(ts + self.t_t + 1 for ts in self.t_s)

    def row_widths(self) -> list[int]:
        """Points of S1 per row of the tile, bottom to top (tT rows)."""
        if not self.hexagonal:
            return [self.t_s[0]] * self.t_t
        half = list(range(self.t_s[0], self.w_tile + 1, 2))
        return half + half[::-1]


# ---- geometry: tiles and wavefronts ----------------------------------------------------

def _check_problem(shape: TileShape, space: Sequence[int], steps: int) -> None:
    if len(space) != len(shape.t_s):
        raise ValueError(f"space must have {len(shape.t_s)} sizes for {shape.kind}, got {tuple(space)!r}")
    if any(s < 1 for s in space):
        raise ValueError(f"space sizes must be >= 1, got {tuple(space)!r}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps!r}")


def n_wavefronts(shape: TileShape, steps: int) -> int:
    """Kernel calls of hexagonal tiling, A.3: 2 floor(T / tT) + delta, at least 1.

    Our reading of the garbled A.3: delta = 0 when the remainder T - floor(T/tT) tT is
    below tT / 2, else 1.
    """
    n = steps // shape.t_t
    r = steps - n * shape.t_t
    return max(1, 2 * n + (0 if r < shape.t_t / 2 else 1))


def sub_tiles_per_unit(shape: TileShape, space: Sequence[int], steps: int) -> int:
    """Sub-tiles executed in sequence by one threadblock: ceil((S_i + tT) / ts_i) over i >= 2 (A.24)."""
    _check_problem(shape, space, steps)
    return math.prod(-(-(s + shape.t_t) // ts) for s, ts in zip(space[1:], shape.t_s[1:]))


def wavefront_widths(shape: TileShape, space: Sequence[int], steps: int) -> list[int]:
    """Tiles (threadblocks) per kernel call.

    Hexagonal kinds: N_w wavefronts of ceil(S1 / pitch) tiles each (A.3, A.6). Time
    skewing: the anti-diagonals a + b = const of the non-empty parallelogram tiles
    (tile (a, b) covers i + t in [a ts, (a+1) ts), t in [b tT + 1, (b+1) tT]).
    """
    _check_problem(shape, space, steps)
    if shape.hexagonal:
        return [-(-space[0] // shape.pitch)] * n_wavefronts(shape, steps)
    ts, tt, s = shape.t_s[0], shape.t_t, space[0]
    # band b of time steps holds tiles a_lo..a_hi, on diagonals d = a + b: count them with a difference array
    b = np.arange(-(-steps // tt), dtype=np.int64)
    t_lo, t_hi = b * tt + 1, np.minimum((b + 1) * tt, steps)
    d_lo, d_hi = (1 + t_lo) // ts + b, (s + t_hi) // ts + b
    first = int(d_lo.min())
    diff = np.zeros(int(d_hi.max()) - first + 2, dtype=np.int64)
    np.add.at(diff, d_lo - first, 1)
    np.add.at(diff, d_hi - first + 1, -1)
    counts = np.cumsum(diff[:-1])
    return [int(c) for c in counts[counts > 0]]


def wavefront_width_counts(shape: TileShape, space: Sequence[int], steps: int) -> dict[int, int]:
    """Kernel calls by width: {tiles per call: calls}, the histogram of :func:`wavefront_widths`."""
    _check_problem(shape, space, steps)
    if shape.hexagonal:  # one width for every call: no need to list the calls
        return {-(-space[0] // shape.pitch): n_wavefronts(shape, steps)}
    return dict(_time_skew_width_counts(shape, tuple(space), steps))


@lru_cache(maxsize=256)
def _time_skew_width_counts(shape: TileShape, space: tuple[int, ...], steps: int) -> tuple[tuple[int, int], ...]:
    """The histogram of a time-skewed tiling's call widths, kept for a search's thread counts of one shape."""
    return tuple(Counter(wavefront_widths(shape, space, steps)).items())


def n_tiles(shape: TileShape, space: Sequence[int], steps: int) -> float:
    """Number of tiles (sub-tiles for hhc) over the whole iteration space.

    Hexagonal kinds: B.5 generalised, 2 T / tT x S1 / (ts1 + w_tile) x prod (S_i + tT) / ts_i
    (continuous, as printed). Time skewing: the exact count of non-empty tiles.
    """
    _check_problem(shape, space, steps)
    if not shape.hexagonal:
        return float(sum(wavefront_widths(shape, space, steps)))
    n = 2 * steps / shape.t_t * space[0] / (shape.t_s[0] + shape.w_tile)
    for s, ts in zip(space[1:], shape.t_s[1:]):
        n *= (s + shape.t_t) / ts
    return n


# ---- time model (004 app. A) -------------------------------------------------------------

def tile_transfer_time_s(shape: TileShape, gpu: GpuParams) -> float:
    """m = M_io L + 2 tau_sync (A.9, A.15, A.26), seconds."""
    return shape.m_io_words * gpu.l_s_per_word + 2 * gpu.tau_sync_s


def tile_compute_time_s(shape: TileShape, gpu: GpuParams, c_iter_s: float, n_threads: int) -> float:
    """c = C_iter sum_rows ceil(row points / n_par) + tT tau_sync (A.10, A.16, A.28), seconds.

    n_par = min(n_threads, n_V): the threads of a block, at most one per vector unit
    (our reading of 004's n_V, the per-row parallelism of A.10).
    """
    if n_threads < 1:
        raise ValueError(f"n_threads must be >= 1, got {n_threads!r}")
    if not c_iter_s > 0:
        raise ValueError(f"c_iter_s must be > 0 seconds, got {c_iter_s!r}")
    inner = math.prod(shape.t_s[1:])
    n_par = min(n_threads, gpu.n_v)
    rows = sum(-(-(x * inner) // n_par) for x in shape.row_widths())
    return c_iter_s * rows + shape.t_t * gpu.tau_sync_s


def tile_time_s(m_s: float, c_s: float, k: int) -> float:
    """T_tile(k) = m + c + (k - 1) max(m, c) (A.13), seconds for k tiles on one SM."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    return m_s + c_s + (k - 1) * max(m_s, c_s)


def max_blocks_per_sm(shape: TileShape, gpu: GpuParams, n_threads: int) -> int:
    """Largest k: min(MTB_SM, floor(M_SM / M_tile), floor(threads per SM / n_threads)) (A.12); 0 if infeasible."""
    if shape.m_tile_words > gpu.max_shared_words_per_block or n_threads > gpu.max_threads_per_block:
        return 0
    return min(gpu.max_blocks_per_sm, gpu.m_sm_words // shape.m_tile_words,
               gpu.max_threads_per_sm // n_threads)


def _unit_time_s(shape: TileShape, n_sub: int, m_s: float, c_s: float, j: int) -> float:
    """Time of one round of j tiles (prisms/slabs for hhc) on one SM: A.13, A.29, A.30, seconds."""
    if shape.kind in ("hhc_2d", "hhc_3d"):
        return n_sub * (m_s + c_s) if j == 1 else m_s + j * n_sub * max(m_s, c_s)
    return tile_time_s(m_s, c_s, j)


def wavefront_time_s(shape: TileShape, width: int, n_sub: int, gpu: GpuParams, m_s: float, c_s: float,
                     k: int) -> float:
    """One kernel call of ``width`` tiles with k per SM, without T_sync, seconds.

    The call lasts as long as the SM with the most tiles, n = ceil(w / N_SM) (004:L2385-2387).
    That SM runs them in rounds of k, a round of j tiles taking T_tile(j) (A.13; A.29/A.30 for
    hhc prisms and slabs): ceil(n / k) rounds, the last holding n - (rounds - 1) k tiles.
    When k divides n this is A.7's ceil(w / (k N_SM)) T_tile(k); A.7 charges a last, partial
    round a full T_tile(k), as if the SM ran k tiles where it has fewer.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    n = -(-int(width) // gpu.n_sm)
    full, rest = divmod(n, k)
    t = full * _unit_time_s(shape, n_sub, m_s, c_s, k) if full else 0.0
    return t + (_unit_time_s(shape, n_sub, m_s, c_s, rest) if rest else 0.0)


def predict_time_s(shape: TileShape, space: Sequence[int], steps: int, gpu: GpuParams,
                   c_iter_s: float, n_threads: int, k: int | None = None) -> float:
    """Total execution time T_alg (A.2 / A.7 / A.18 / A.31), seconds.

    Each kernel call (wavefront) takes :func:`wavefront_time_s` plus T_sync. ``k``
    threadblocks per SM defaults to the resource limit :func:`max_blocks_per_sm` (A.12);
    an SM with fewer tiles than k simply holds fewer.
    """
    _check_problem(shape, space, steps)
    k_max = max_blocks_per_sm(shape, gpu, n_threads)
    if k is None:
        k = k_max
    if k < 1 or k > max(k_max, 0):
        raise ValueError(f"k must be in 1..{k_max} for this tile and GPU, got {k!r}")
    m = tile_transfer_time_s(shape, gpu)
    c = tile_compute_time_s(shape, gpu, c_iter_s, n_threads)
    n_sub = sub_tiles_per_unit(shape, space, steps) if shape.kind in ("hhc_2d", "hhc_3d") else 1
    # Kernel calls of one width take one time: price each width once (hexagonal tilings have a single
    # width over thousands of calls, which a tile-size search would otherwise price call by call).
    calls = wavefront_width_counts(shape, space, steps)
    return sum(n * (wavefront_time_s(shape, w, n_sub, gpu, m, c, k) + gpu.t_sync_s) for w, n in sorted(calls.items()))


# ---- energy model (004 app. B) -------------------------------------------------------------

def tile_energy_j(shape: TileShape, stencil: Stencil, energy: StencilEnergyParams) -> float:
    """E_tile = e_gs M_io + u_sr e_sr V_tile + E_iter V_tile (B.6), joules."""
    v = shape.v_tile_points
    return (energy.e_gs_j_per_word * shape.m_io_words + stencil.u_sr * energy.e_sr_j_per_word * v
            + energy.e_iter_j(stencil) * v)


def predict_energy_j(shape: TileShape, space: Sequence[int], steps: int, stencil: Stencil,
                     energy: StencilEnergyParams, time_s: float) -> float:
    """E = P_stat T + N_tiles E_tile (B.2-B.6), joules, for a run of ``time_s`` seconds."""
    if stencil.dims != len(shape.t_s):
        raise ValueError(f"stencil {stencil.name!r} has {stencil.dims} dims, tile shape {shape.kind} has {len(shape.t_s)}")
    if time_s < 0:
        raise ValueError(f"time_s must be >= 0, got {time_s!r}")
    return energy.p_stat_w * time_s + n_tiles(shape, space, steps) * tile_energy_j(shape, stencil, energy)


# ---- tile-size search (004 §A.6) --------------------------------------------------------------

@dataclass(frozen=True)
class TilePoint:
    """One feasible design point: tile shape, threads per block, blocks per SM and predictions."""

    shape: TileShape
    n_threads: int
    k: int
    time_s: float
    energy_j: float | None
    objective: float


@dataclass(frozen=True)
class TileSearchResult:
    """Optimum and every feasible point within ``tolerance`` of it (sorted by objective); ``points``
    holds every feasible point, sorted the same way (``near_best`` is its head)."""

    best: TilePoint
    near_best: tuple[TilePoint, ...]
    n_feasible: int
    tolerance: float = field(default=0.10)
    points: tuple[TilePoint, ...] = ()


def search_tile_sizes(
    kind: TileKind,
    space: Sequence[int],
    steps: int,
    gpu: GpuParams,
    c_iter_s: float,
    t_t_values: Iterable[int],
    t_s_values: Sequence[Iterable[int]],
    n_threads_values: Iterable[int],
    stencil: Stencil | None = None,
    energy: StencilEnergyParams | None = None,
    objective: Literal["time", "energy"] = "time",
    tolerance: float = 0.10,
    warp_multiple: int = 32,
) -> TileSearchResult:
    """Exhaustive search of the feasible tile space (A.32), keeping points within ``tolerance``.

    Feasible: tT even (hexagonal kinds), M_tile within the per-block and per-SM shared
    memory, k >= 1 (A.12), the innermost space size of hhc tiles a multiple of
    ``warp_multiple`` (A.32). ``objective="energy"`` needs ``stencil`` and ``energy``.
    """
    if objective not in ("time", "energy"):
        raise ValueError(f"objective must be 'time' or 'energy', got {objective!r}")
    if objective == "energy" and (stencil is None or energy is None):
        raise ValueError("objective='energy' needs both stencil and energy parameters")
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance!r}")
    t_s_lists = [list(v) for v in t_s_values]
    if len(t_s_lists) != _KIND_DIMS.get(kind, -1):
        raise ValueError(f"t_s_values must hold {_KIND_DIMS.get(kind)} ranges for {kind!r}, got {len(t_s_lists)}")
    threads = list(n_threads_values)
    points: list[TilePoint] = []
    for t_t in t_t_values:
        if kind != "time_skew_1d" and t_t % 2:
            continue
        for t_s in itertools.product(*t_s_lists):
            if kind in ("hhc_2d", "hhc_3d") and t_s[-1] % warp_multiple:
                continue
            shape = TileShape(kind, t_t, tuple(t_s))
            for n_thr in threads:
                k = max_blocks_per_sm(shape, gpu, n_thr)
                if k < 1:
                    continue
                t = predict_time_s(shape, space, steps, gpu, c_iter_s, n_thr, k)
                e = (predict_energy_j(shape, space, steps, stencil, energy, t)
                     if stencil is not None and energy is not None else None)
                points.append(TilePoint(shape, n_thr, k, t, e, t if objective == "time" else e))  # type: ignore[arg-type]
    if not points:
        raise ValueError("no feasible tile size in the given ranges (shared memory, threads, tT parity)")
    points.sort(key=lambda p: p.objective)
    best = points[0]
    near = tuple(p for p in points if p.objective <= best.objective * (1 + tolerance))
    return TileSearchResult(best, near, len(points), tolerance, tuple(points))


# ---- DRAM traffic counts ---------------------------------------------------------------------

@dataclass(frozen=True)
class Traffic:
    """Words moved between main memory and the fast memory."""

    read_words: int
    write_words: int

    @property
    def total_words(self) -> int:
        return self.read_words + self.write_words


def dram_traffic_words(
    stencil: Stencil,
    grid: Sequence[int],
    steps: int,
    scheme: Literal["naive", "blocked", "time_tiled"],
    fast_memory_words: int,
    block: Sequence[int] | None = None,
    shape: TileShape | None = None,
    write_allocate: bool = False,
) -> Traffic:
    """DRAM traffic of an out-of-place (two-array) radius-1 star stencil, words.

    ``grid`` is the interior (updated points); the input array carries a halo of 1 on
    every side that is read, never written. Sweeps are lexicographic, last index fastest.

    * ``"naive"``: one full sweep per time step. If both padded arrays fit in the fast
      memory, the input is read once and at most two arrays' worth of results are written
      back (min(steps, 2) x interior). Otherwise the sweep reuses neighbours along the
      outermost dimension j whose window, 3 slices of the padded inner dimensions,
      fits; each input word is then loaded 1 + 2 j times per step (once per distinct
      offset along the dimensions outside the reuse window).
    * ``"blocked"``: the dimensions after the first are cut into blocks ``block`` and
      each block column is streamed along the first dimension with its halo; per step
      the reads are (n1 + 2) x prod(n_i + 2 ceil(n_i / b_i)); the window 3 x prod(b_i + 2)
      must fit in the fast memory.
    * ``"time_tiled"``: tiles of ``shape`` each read m_i and write m_o words once
      (N_tiles x m_i, N_tiles x m_o, rounded to whole words); the shape's shared
      footprint must fit in the fast memory.

    ``write_allocate`` adds one read per written word (a write miss fetching its line).
    """
    if stencil.dims != len(grid):
        raise ValueError(f"grid must have {stencil.dims} sizes for {stencil.name}, got {tuple(grid)!r}")
    if any(n < 1 for n in grid) or steps < 1 or fast_memory_words < 1:
        raise ValueError(f"grid sizes, steps and fast_memory_words must be >= 1, got {tuple(grid)!r}, "
                         f"{steps!r}, {fast_memory_words!r}")
    interior = math.prod(grid)
    padded = math.prod(n + 2 for n in grid)
    if scheme == "naive":
        if 2 * padded <= fast_memory_words:
            reads, writes = padded, interior * min(steps, 2)
        else:
            d = len(grid)
            j_reuse = d  # no reuse at all: every neighbour offset loads its word
            for j in range(d):
                window = 3 * math.prod(n + 2 for n in grid[j + 1:])
                if window <= fast_memory_words:
                    j_reuse = j
                    break
            reads = steps * padded * (1 + 2 * j_reuse)
            writes = steps * interior
    elif scheme == "blocked":
        if block is None or len(block) != len(grid) - 1 or any(b < 1 for b in block):
            raise ValueError(f"block must hold {len(grid) - 1} sizes >= 1 for a blocked sweep, got {block!r}")
        window = 3 * math.prod(min(b, n) + 2 for b, n in zip(block, grid[1:]))
        if window > fast_memory_words:
            raise ValueError(f"block {tuple(block)!r} needs a window of {window} words; "
                             f"fast_memory_words is {fast_memory_words}")
        per_step = (grid[0] + 2) * math.prod(n + 2 * -(-n // b) for n, b in zip(grid[1:], block))
        reads, writes = steps * per_step, steps * interior
    elif scheme == "time_tiled":
        if shape is None:
            raise ValueError("shape is required for a time-tiled sweep")
        if shape.m_tile_words > fast_memory_words:
            raise ValueError(f"tile needs {shape.m_tile_words} words of fast memory; "
                             f"fast_memory_words is {fast_memory_words}")
        nt = n_tiles(shape, grid, steps)
        reads, writes = round(nt * shape.m_in_words), round(nt * shape.m_out_words)
    else:
        raise ValueError(f"scheme must be 'naive', 'blocked' or 'time_tiled', got {scheme!r}")
    if write_allocate:
        reads += writes
    return Traffic(int(reads), int(writes))
