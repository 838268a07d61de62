"""The tiled-stencil GPU model (004 apps. A, B), evaluated on its own: ``offsim models stencil``.

For a stencil of 004 Table A.4 on the GTX 980 (004 Tables A.2, A.3) it does what 004's tile-size
selection script does (004 section A.6): it evaluates T_alg (004 eqs. A.2-A.31) over the feasible
tile sizes of problem A.32 (shared memory per block and per SM, threads, tT even, the innermost
tile size a multiple of 32) and reports the optimum and every point within 10 % of it. Beside the
optimum it prices the largest tile that fits, 004's "conventional wisdom" (004 section A.7). Given
``--tile``, it evaluates those tiles instead, at their best thread count.

Energy uses 004's energy model (eqs. B.2-B.6) with its only published costs, the K20c's (004
Table B.2), at the GTX 980's predicted time: 004 gives no GTX 980 energy costs, so the energy is a
what-if, labelled so. The Titan X column of Table A.3 is not offered: its tau_sync prints with a
garbled leading digit.

Units: times in seconds, energies in joules, problem and tile sizes in grid points, global-memory
traffic in bytes (4 B words, 004 Table A.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from models.stencil import (C_ITER_GTX980_S, GTX980, K20C, TilePoint, TileSearchResult, TileShape, n_tiles,
                            search_tile_sizes)
from simulator.config.bounds import STENCIL_EXTENT
from simulator.errors import InputError, one_line
from simulator.config.stencils import STENCILS, Stencil
from simulator.studies.model_eval import Outputs, joined, listing_lines, positive_quantity, refuse_repeats
from simulator.units import ascii_integer, format_quantity

WORD_BYTES = 4  # 004 Table A.3 prices L per GB of 4-byte words
KIND_BY_DIMS = {1: "hex_1d", 2: "hhc_2d", 3: "hhc_3d"}
KINDS = ("time_skew_1d", "hex_1d", "hhc_2d", "hhc_3d")
#: default problems: 2D is 004 Figure A.6's (S1 = S2 = T = 8192, 004:L2665); 1D and 3D are ours
DEFAULT_SPACE = {1: (65536,), 2: (8192, 8192), 3: (512, 512, 512)}
DEFAULT_STEPS = {1: 8192, 2: 8192, 3: 512}
#: default search ranges (ours; 004 searched 18,000 points per stencil without printing the ranges, 004:L2632)
#: (time skewing's calls vary in width, so each of its points costs more: its default grid is coarser)
DEFAULT_T_T = {"time_skew_1d": "4:64:4", "hex_1d": "2:64:2", "hhc_2d": "2:32:2", "hhc_3d": "2:16:2"}
DEFAULT_T_S = {"time_skew_1d": ("64:1024:64",), "hex_1d": ("8:1024:8",), "hhc_2d": ("2:64:2", "32:256:32"),
               "hhc_3d": ("2:32:2", "2:32:2", "32:128:32")}
DEFAULT_THREADS = "32:1024:32"
#: tile candidates one search may price (eight times the largest default grid's 262,144: seconds and a few
#: hundred MiB; beyond it the ranges are refused, not searched for minutes in all memory)
MAX_CANDIDATES = 2_000_000
TOLERANCE = 0.10  # 004 keeps the points within 10 % of the predicted minimum (004:L2601)
#: the longest --c-iter taken, s: 2.7e7 times 004's 36.8 ns, and short enough that every time and energy stays finite
MAX_C_ITER_S = 1.0
LISTED_NEAR_BEST = 10
#: the GTX 980's DRAM bandwidth: 7 Gbit/s GDDR5 on a 256-bit interface (NVIDIA GeForce GTX 980 specifications)
GTX980_PEAK_BYTES_PER_S = 224e9
STENCIL_COLUMNS = ("stencil", "kind", "space", "steps", "c_iter_s", "rank", "within_tolerance", "t_t", "t_s",
                   "n_threads", "blocks_per_sm", "time_s", "gflop_per_s", "global_bytes", "energy_j",
                   "static_energy_j")


@dataclass(frozen=True)
class Problem:
    """One stencil on one problem: the tiling kind, the space (points per dimension) and the time steps."""

    stencil: Stencil
    kind: str
    space: tuple[int, ...]
    steps: int
    c_iter_s: float
    c_iter_source: str

    @property
    def flops(self) -> float:
        """Floating-point operations of the whole run (flop)."""
        n = float(self.steps * self.stencil.flops_per_point)
        for s in self.space:
            n *= s
        return n


@dataclass(frozen=True)
class StencilReport:
    """What ``offsim models stencil`` found for one problem: the points ranked by the objective (all
    feasible points of a search, or the given tiles), how many candidates were tried, the largest tile."""

    problem: Problem
    points: tuple[TilePoint, ...]
    n_candidates: int
    ranges: str
    largest: TilePoint | None
    searched: bool
    outside: int = 0  # feasible points left out: their traffic falls below reading and writing the grid once


# ---- parsing ----------------------------------------------------------------------------------------

def parse_range(text: str, option: str) -> tuple[int, ...]:
    """``N``, ``A:B`` or ``A:B:STEP`` (inclusive), or a comma list of those: positive integers."""
    values: list[int] = []
    for part in text.split(","):
        try:
            numbers = [int(v) for v in part.split(":")]
        except ValueError:
            numbers = []
        if not 1 <= len(numbers) <= 3 or min(numbers) < 1 or numbers[:2] != sorted(numbers[:2]):
            raise InputError(f"{option} {text!r}: expected positive integers as N, A:B or A:B:STEP (inclusive, "
                             "A <= B), or a comma list of those, e.g. 2:32:2")
        start, stop, step = (numbers + numbers[:1] + [1])[:3] if len(numbers) == 1 else (numbers + [1])[:3]
        if len(values) + (stop - start) // step + 1 > MAX_CANDIDATES:  # counted, not built (len(range) overflows)
            raise InputError(f"{option} {text!r}: more than {MAX_CANDIDATES:,} values; expected a range a search "
                             "can price (simulator.studies.stencil.model_eval.MAX_CANDIDATES)")
        values += range(start, stop + 1, step)
    return tuple(dict.fromkeys(values))


def parse_sizes(text: str, option: str, what: str) -> tuple[int, ...]:
    """``--space`` / ``--tile``: positive integers separated by commas."""
    try:
        sizes = tuple(ascii_integer(v) for v in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise InputError(f"{option} {text!r}: expected {what} as positive integers separated by commas, e.g. "
                         f"{'8192,8192' if option == '--space' else '8,16,64'}")
    if max(sizes) > STENCIL_EXTENT.high:
        raise InputError(f"{option} {one_line(text, 60)!r}: expected {what} of at most {STENCIL_EXTENT.high:,} each "
                         f"({STENCIL_EXTENT.why})")
    return sizes


def parse_c_iter(c_iter_text: str) -> float:
    """``--c-iter`` in seconds: a time per point update > 0 s and at most MAX_C_ITER_S; InputError otherwise."""
    value = positive_quantity(c_iter_text, "time", "--c-iter", "a time per point update > 0 s, e.g. '36.8 ns'")
    if value > MAX_C_ITER_S:
        raise InputError(f"--c-iter {c_iter_text!r}: expected a time per point update of at most "
                         f"{format_quantity(MAX_C_ITER_S, 's')} (004's GTX 980 takes 36.8 ns), e.g. '36.8 ns'")
    return value


def c_iter_of(stencil: Stencil, c_iter_text: str | None) -> tuple[float, str]:
    """C_iter in seconds and where it comes from: ``--c-iter``, else 004 Table A.4 (GTX 980)."""
    if c_iter_text is not None:
        return parse_c_iter(c_iter_text), "--c-iter"
    if stencil.name not in C_ITER_GTX980_S:
        raise InputError(f"{stencil.name}: 004 Table A.4 has no C_iter for it; expected --c-iter TIME (one point "
                         f"update per vector unit, e.g. '36.8 ns') or a stencil of: {', '.join(C_ITER_GTX980_S)}")
    return C_ITER_GTX980_S[stencil.name], "004 Table A.4, GTX 980"


def _check_options(space_text: str | None, steps: int | None, c_iter_text: str | None, tiles: Sequence[str] | None,
                   t_t_text: str | None, t_s_texts: Sequence[str] | None) -> None:
    """Refuse (InputError) the options that are wrong whatever the stencil: --space, --steps, --c-iter, and
    --tile given with a search range."""
    if space_text is not None:
        parse_sizes(space_text, "--space", "grid points")
    if steps is not None and steps < 1:
        raise InputError(f"--steps {steps}: expected time steps >= 1")
    if steps is not None and steps > STENCIL_EXTENT.high:
        raise InputError(f"--steps {one_line(steps, 60)}: expected time steps of at most {STENCIL_EXTENT.high:,} "
                         f"({STENCIL_EXTENT.why})")
    if c_iter_text is not None:
        parse_c_iter(c_iter_text)
    if tiles and (t_t_text or t_s_texts):
        raise InputError("--tile with --t-t or --t-s: expected either the tiles to evaluate or the ranges to search")


def problem_of(name: str, kind: str | None, space_text: str | None, steps: int | None,
               c_iter_text: str | None) -> Problem:
    """The problem of stencil ``name``: its tiling kind (by its dimensions unless given), space and steps."""
    if name not in STENCILS:
        raise InputError(f"{name!r}: not a stencil; expected one of: {', '.join(STENCILS)}")
    stencil = STENCILS[name]
    kind = kind or KIND_BY_DIMS[stencil.dims]
    kind_dims = 1 if kind.endswith("1d") else int(kind[-2])
    if kind_dims != stencil.dims:
        raise InputError(f"--kind {kind}: tiles {kind_dims}D iteration spaces; {name} is {stencil.dims}D, expected "
                         f"{' or '.join(k for k in KINDS if k.endswith(f'{stencil.dims}d'))}")
    space = DEFAULT_SPACE[stencil.dims] if space_text is None else parse_sizes(space_text, "--space", "grid points")
    if len(space) != stencil.dims:
        raise InputError(f"--space {space_text}: {len(space)} sizes; {name} is {stencil.dims}D, expected "
                         f"{stencil.dims} sizes (one stencil per dimensionality with --space)")
    steps = DEFAULT_STEPS[stencil.dims] if steps is None else steps
    return Problem(stencil, kind, space, steps, *c_iter_of(stencil, c_iter_text))


# ---- evaluation ---------------------------------------------------------------------------------------

def _search(problem: Problem, t_t: Sequence[int], t_s: Sequence[Sequence[int]], threads: Sequence[int],
            objective: str, warp_multiple: int) -> TileSearchResult:
    """The model's search over the given sizes; with the stencil and the K20c's costs given, every point
    carries its energy (E = P_stat T + N_tiles E_tile, 004 eqs. B.2-B.6, joules)."""
    return search_tile_sizes(problem.kind, problem.space, problem.steps,  # type: ignore[arg-type]
                             GTX980, problem.c_iter_s, t_t, t_s, threads, problem.stencil, K20C,
                             objective, TOLERANCE, warp_multiple)  # type: ignore[arg-type]


def search_report(problem: Problem, t_t_text: str | None, t_s_texts: Sequence[str] | None,
                  threads_text: str | None, objective: str) -> StencilReport:
    """Every feasible tile of the ranges (defaults by kind), ranked by ``objective``; and the largest tile."""
    t_s_texts = tuple(t_s_texts or DEFAULT_T_S[problem.kind])
    if len(t_s_texts) != len(problem.space):
        raise InputError(f"--t-s: given {len(t_s_texts)} times; {problem.kind} tiles {len(problem.space)} space "
                         f"dimensions, expected one --t-s range per dimension (S1 first)")
    t_t = parse_range(t_t_text or DEFAULT_T_T[problem.kind], "--t-t")
    t_s = [parse_range(text, "--t-s") for text in t_s_texts]
    threads = parse_range(threads_text or DEFAULT_THREADS, "--threads")
    n_candidates = len(t_t) * len(threads)
    for sizes in t_s:
        n_candidates *= len(sizes)
    ranges = "; ".join([f"tT {t_t_text or DEFAULT_T_T[problem.kind]}"]
                       + [f"ts{i + 1} {text}" for i, text in enumerate(t_s_texts)]
                       + [f"threads {threads_text or DEFAULT_THREADS}"])
    if n_candidates > MAX_CANDIDATES:
        raise InputError(f"--t-t, --t-s and --threads: {n_candidates:,} candidate tiles ({ranges}); expected at "
                         f"most {MAX_CANDIDATES:,} (simulator.studies.stencil.model_eval.MAX_CANDIDATES): narrower "
                         "ranges or coarser steps")
    try:
        result = _search(problem, t_t, t_s, threads, objective, 32)
    except ValueError as exc:
        raise InputError(f"{problem.stencil.name}: {exc}; expected ranges with at least one tile that fits "
                         f"({ranges})") from None
    least = compulsory_bytes(problem)
    points = tuple(pt for pt in result.points if global_bytes(problem, pt) >= least)
    if not points:
        raise InputError(f"{problem.stencil.name}: {outside_model(problem)}: every feasible tile of the ranges "
                         f"({ranges}) moves less; expected a larger --space or --steps, or smaller tiles")
    largest = max(points, key=lambda p: (p.shape.v_tile_points, -p.objective))
    return StencilReport(problem, points, n_candidates, ranges, largest, True, len(result.points) - len(points))


def tiles_report(problem: Problem, tiles: Sequence[str], threads_text: str | None, objective: str) -> StencilReport:
    """The given tiles ("tT,ts1[,ts2[,ts3]]"), each at its best thread count, ranked by ``objective``."""
    threads = parse_range(threads_text or DEFAULT_THREADS, "--threads")
    points = []
    for text in tiles:
        sizes = parse_sizes(text, "--tile", "tT then one tile size per space dimension")
        if len(sizes) != len(problem.space) + 1:
            raise InputError(f"--tile {text}: {len(sizes)} sizes; expected tT then {len(problem.space)} tile sizes "
                             f"for {problem.stencil.name} ({problem.kind})")
        try:
            TileShape(problem.kind, sizes[0], sizes[1:])  # type: ignore[arg-type]  # refuses an odd tT, with why
            # A.32's warp rule is a search constraint; a tile the user names is priced as it is
            best = _search(problem, (sizes[0],), [(s,) for s in sizes[1:]], threads, objective, 1).best
        except ValueError as exc:
            raise InputError(f"--tile {text}: {exc}; expected a tile that fits the GTX 980 at one of --threads "
                             f"{threads_text or DEFAULT_THREADS} ({GTX980.max_shared_words_per_block} words of "
                             "shared memory per block)") from None
        if global_bytes(problem, best) < compulsory_bytes(problem):
            raise InputError(f"--tile {text}: global memory {format_quantity(global_bytes(problem, best), 'B')}; "
                             f"{outside_model(problem)}; expected a tile smaller than the problem")
        points.append(best)
    return StencilReport(problem, tuple(sorted(points, key=lambda p: p.objective)), len(tiles) * len(threads),
                         f"{len(tiles)} given tiles; threads {threads_text or DEFAULT_THREADS}", None, False)


# ---- output -------------------------------------------------------------------------------------------

def global_bytes(problem: Problem, point: TilePoint) -> float:
    """Global-memory traffic of the run: N_tiles M_io words (004 B.3-B.5), bytes."""
    return n_tiles(point.shape, problem.space, problem.steps) * point.shape.m_io_words * WORD_BYTES


def compulsory_bytes(problem: Problem) -> int:
    """Global-memory traffic of reading the grid once and writing it once, bytes: no run moves less."""
    points = 1
    for s in problem.space:
        points *= s
    return 2 * points * WORD_BYTES


def outside_model(problem: Problem) -> str:
    """Why a point that moves less than :func:`compulsory_bytes` is no prediction: the tile counts of 004 B.5
    (continuous, as printed) hold for problems larger than a tile; a tile taller than the run or wider than the
    grid counts a fraction of a tile."""
    return (f"below the {format_quantity(compulsory_bytes(problem), 'B')} that reading the grid once and writing "
            f"it once take ({' x '.join(map(str, problem.space))} points of {WORD_BYTES} B), outside the model's "
            "range: its tile counts (004 B.5) hold for problems larger than a tile")


def bandwidth_note(problem: Problem, point: TilePoint) -> str:
    """A warning when the point moves global memory faster than the GTX 980 can (the model has no
    device-wide bandwidth limit: each SM pays L per word on its own, 004 eq. A.9); else ''."""
    rate = global_bytes(problem, point) / point.time_s
    if rate <= GTX980_PEAK_BYTES_PER_S:
        return ""
    return (f"  note: the best point moves global memory at {format_quantity(rate, 'B/s')}, above the GTX 980's "
            f"{format_quantity(GTX980_PEAK_BYTES_PER_S, 'B/s')} peak; the model charges each SM L per word (004 "
            "eq. A.9) with no device-wide limit, so this time is optimistic (004 section A.6.4 finds the "
            "predicted-minimum tiles slow in practice)")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _tile(point: TilePoint) -> str:
    return f"tT {point.shape.t_t}, ts {' x '.join(map(str, point.shape.t_s))}"


def _point_line(problem: Problem, point: TilePoint) -> str:
    return (f"{_tile(point)}, {point.n_threads} threads, {point.k} blocks/SM: T_alg "
            f"{format_quantity(point.time_s, 's')}, {problem.flops / point.time_s / 1e9:.1f} GFLOP/s, global memory "
            f"{format_quantity(global_bytes(problem, point), 'B')}, "
            f"energy {format_quantity(point.energy_j, 'J')}")  # type: ignore[arg-type]


def stencil_lines(report: StencilReport, objective: str) -> list[str]:
    """The text report of one problem."""
    p, best = report.problem, report.points[0]
    near = [pt for pt in report.points if pt.objective <= best.objective * (1 + TOLERANCE)]
    tiles: dict[TileShape, TilePoint] = {}
    for pt in near:  # ranked: a tile's first point is its best thread count
        tiles.setdefault(pt.shape, pt)
    lines = [f"{p.stencil.name} on the GTX 980 (004 Tables A.2, A.3): C_iter {format_quantity(p.c_iter_s, 's')} "
             f"({p.c_iter_source}); {' x '.join(map(str, p.space))} points, {p.steps} steps, {p.kind} tiles",
             f"  {'searched' if report.searched else 'evaluated'}: {len(report.points):,} feasible of "
             f"{report.n_candidates:,} candidates ({report.ranges}); ranked by {objective}"
             + (f"; {report.outside:,} feasible left out, their global memory {outside_model(p)}" if report.outside
                else ""),
             f"  best: {_point_line(p, best)}"]
    if report.searched:
        listed = list(tiles.values())[:LISTED_NEAR_BEST]
        lines.append(f"  within {TOLERANCE:.0%} of the best: {_count(len(near), 'point')}, {_count(len(tiles), 'tile')}"
                     + (f"; the first {len(listed)}" if len(tiles) > len(listed) else "")
                     + ", at their best thread counts:")
    else:
        listed = list(report.points)
        lines.append("  the given tiles, ranked, at their best thread counts:")
    lines += [f"    {i + 1:>3}. {_point_line(p, pt)}" for i, pt in enumerate(listed)]
    note = bandwidth_note(p, best)
    lines += [note] if note else []
    if report.largest is not None:
        slower = report.largest.objective / best.objective - 1
        lines.append(f"  largest tile that fits (004 A.7's conventional choice): {_point_line(p, report.largest)}; "
                     f"{slower:+.0%} {objective} against the best")
    lines.append("  energy: 004 eqs. B.2-B.6 with the K20c's costs (004 Table B.2) at the GTX 980's time; 004 "
                 "gives no GTX 980 energy costs")
    return lines


def stencil_rows(reports: Sequence[StencilReport]) -> list[dict[str, object]]:
    """One CSV row per point of every report, ranked."""
    rows = []
    for r in reports:
        p, best = r.problem, r.points[0]
        for rank, pt in enumerate(r.points, 1):
            rows.append({"stencil": p.stencil.name, "kind": p.kind, "space": " ".join(map(str, p.space)),
                         "steps": p.steps, "c_iter_s": p.c_iter_s, "rank": rank,
                         "within_tolerance": pt.objective <= best.objective * (1 + TOLERANCE),
                         "t_t": pt.shape.t_t, "t_s": " ".join(map(str, pt.shape.t_s)), "n_threads": pt.n_threads,
                         "blocks_per_sm": pt.k, "time_s": pt.time_s, "gflop_per_s": p.flops / pt.time_s / 1e9,
                         "global_bytes": global_bytes(p, pt), "energy_j": pt.energy_j,
                         "static_energy_j": K20C.p_stat_w * pt.time_s})
    return rows


def stencil_figure(reports: Sequence[StencilReport], path: str | Path) -> Path:
    """Draw, per problem, the best T_alg at each tT (over the tile sizes and thread counts), as a PNG:
    how much the time depends on the tile height, 004 Figure A.5's point."""
    from simulator.studies.plots import Panel, Series, line_panels

    series = []
    for r in reports:
        best_at: dict[int, float] = {}
        for pt in r.points:
            best_at[pt.shape.t_t] = min(pt.time_s, best_at.get(pt.shape.t_t, pt.time_s))
        t_t = tuple(sorted(best_at))
        series.append(Series(f"{r.problem.stencil.name}, {' x '.join(map(str, r.problem.space))} x {r.problem.steps}",
                             t_t, tuple(best_at[t] for t in t_t)))
    return line_panels([Panel("", tuple(series))], path, xlabel="tile height tT (time steps)",
                       ylabel="T_alg, best over tile sizes", x_unit="1", y_unit="s",
                       title="Stencil time model on the GTX 980 (004 eqs. A.2-A.31)", logx=False, logy=None)


def run_stencil(names: Sequence[str], kind: str | None, space_text: str | None, steps: int | None,
                c_iter_text: str | None, tiles: Sequence[str] | None, t_t_text: str | None,
                t_s_texts: Sequence[str] | None, threads_text: str | None, objective: str = "time",
                outputs: Outputs = Outputs()) -> list[str]:
    """``offsim models stencil``: the stencils when ``names`` is empty, else each stencil's report (text
    lines), then the files of ``outputs``."""
    outputs.check(listing=not names)
    _check_options(space_text, steps, c_iter_text, tiles, t_t_text, t_s_texts)  # even to list the stencils
    if not names:
        return listing_lines({name: f"{s.dims}D, {s.flops_per_point} flop per point update, C_iter "
                         + (format_quantity(C_ITER_GTX980_S[name], "s") + " (004 Table A.4, GTX 980)"
                            if name in C_ITER_GTX980_S else "not in 004 Table A.4 (give --c-iter)")
                         for name, s in STENCILS.items()})
    refuse_repeats("STENCIL", names)
    refuse_repeats("--tile", tiles, [parse_sizes(t, "--tile", "tT then one tile size per space dimension")
                                     for t in tiles or ()])
    problems = [problem_of(name, kind, space_text, steps, c_iter_text) for name in names]
    reports = [tiles_report(p, tiles, threads_text, objective) if tiles
               else search_report(p, t_t_text, t_s_texts, threads_text, objective) for p in problems]
    written = outputs.write(STENCIL_COLUMNS, stencil_rows(reports), lambda png: stencil_figure(reports, png))
    return joined([stencil_lines(r, objective) for r in reports]) + written
