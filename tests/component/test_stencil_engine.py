"""Stencil engine vs 004's tiled time model (eq. A.13, A.29-A.31) and its tile-size search.

The engine's model parameters come from its spec (units, lanes, scratchpad, clock,
interface bandwidth); the simulation contends for the interface and schedules blocks
on units itself, so agreement is a check, not a fit.

The grid is systematic: three 2D stencils x tT x ts1 x ts2 (hhc_2d), jacobi_1d (hex_1d)
and heat_3d (hhc_3d, on a narrower engine with the GTX 980's 96 KiB per SM so that 3D
tiles are compute-bound and fit two per unit). A shape is compute-bound when c > m and
every round on the busiest unit holds at least two tiles, so that each round takes
m + j c (A.13, A.30); a round of a single tile runs m + c (A.11, A.29) with its transfers
exposed. Those shapes are checked separately (the engine is faster there: edge tiles
are clipped to the grid, and a unit streaming while others compute, or alone in a last
round, gets more than the 1 / units share of the link that L assumes).
"""

from __future__ import annotations

import pytest

from models.stencil import (STENCILS, GpuParams, TileShape, max_blocks_per_sm, predict_time_s, search_tile_sizes,
                            tile_compute_time_s, tile_transfer_time_s, wavefront_widths)
from simulator.accel.stencil import cycles_per_point
from simulator.errors import ConfigError
from simulator.studies.stencil.study import model_params
from simulator.runner import load_system, simulate_trace
from tests.conftest import CONFIGS
from workloads import stencil as ws

NARROW = load_system(CONFIGS / "systems" / "stencil_narrow.yaml")
SPEC = NARROW.spec.accelerators["stencil"]
CALL_S = SPEC.interface.offload_overhead_cycles / NARROW.spec.host.frequency_hz
GPU = model_params(SPEC, SPEC.interface.bandwidth_bytes_per_s, CALL_S)
STENCIL = "gradient_2d"
C_ITER_S = cycles_per_point(SPEC, STENCIL) / SPEC.frequency_hz
# heat_3d: 4 lanes and 96 KiB of scratchpad (004 Table A.2, M_SM of the GTX 980, 004:L2433)
NARROW_3D = load_system(CONFIGS / "systems" / "stencil_narrow.yaml",
                        ["accelerators.stencil.lanes=4", "accelerators.stencil.scratchpad_bytes=96 KiB"])

GRID_2D, STEPS_2D = (512, 512), 16
GRID_1D, STEPS_1D = (65536,), 64
GRID_3D, STEPS_3D = (256, 32, 32), 8


def _problem(stencil, shape):
    if shape.kind == "hhc_2d":
        return NARROW, GRID_2D, STEPS_2D
    if shape.kind == "hex_1d":
        return NARROW, GRID_1D, STEPS_1D
    return NARROW_3D, GRID_3D, STEPS_3D


def _model(system, stencil, shape, grid, steps):
    """(m, c, rounds of the busiest unit per wavefront, predicted time) for this system."""
    spec = system.spec.accelerators["stencil"]
    gpu = model_params(spec, spec.interface.bandwidth_bytes_per_s,
                       spec.interface.offload_overhead_cycles / system.spec.host.frequency_hz)
    c_iter = cycles_per_point(spec, stencil) / spec.frequency_hz
    m = tile_transfer_time_s(shape, gpu)
    c = tile_compute_time_s(shape, gpu, c_iter, spec.lanes)
    k_max = max_blocks_per_sm(shape, gpu, spec.lanes)
    rounds = []
    for w in wavefront_widths(shape, grid, steps):
        n = -(-w // gpu.n_sm)
        rounds += [k_max] * (n // k_max) + ([n % k_max] if n % k_max else [])
    return m, c, rounds, predict_time_s(shape, grid, steps, gpu, c_iter, spec.lanes)


def _grid():
    """Every feasible shape of the systematic grid with c > m, split by its rounds (module docstring)."""
    shapes = [(st, TileShape("hhc_2d", tt, (a, b))) for st in ("jacobi_2d", "heat_2d", "gradient_2d")
              for tt in (4, 8, 16) for a in (8, 16, 32, 64) for b in (16, 32, 64)]
    shapes += [("jacobi_1d", TileShape("hex_1d", tt, (a,))) for tt in (8, 16) for a in (64, 128, 256, 512, 1024)]
    shapes += [("heat_3d", TileShape("hhc_3d", tt, (a, b, c))) for tt in (4, 8) for a in (8, 16, 32)
               for b in (1, 2, 4, 8) for c in (16, 32)]
    bound, exposed = [], []
    for st, shape in shapes:
        system, grid, steps = _problem(st, shape)
        spec = system.spec.accelerators["stencil"]
        gpu = model_params(spec, spec.interface.bandwidth_bytes_per_s, 0.0)
        if max_blocks_per_sm(shape, gpu, spec.lanes) < 1:
            continue
        m, c, rounds, _ = _model(system, st, shape, grid, steps)
        if c > m:
            (bound if min(rounds) >= 2 else exposed).append(pytest.param(st, shape, id=f"{st}-{shape.t_t}-{shape.t_s}"))
    return bound, exposed


COMPUTE_BOUND, EXPOSED = _grid()
FAST = {("gradient_2d", TileShape("hhc_2d", 16, (8, 32))), ("gradient_2d", TileShape("hhc_2d", 16, (32, 32))),
        ("gradient_2d", TileShape("hhc_2d", 8, (8, 64))), ("heat_2d", TileShape("hhc_2d", 16, (16, 32))),
        ("jacobi_1d", TileShape("hex_1d", 16, (512,))), ("heat_3d", TileShape("hhc_3d", 4, (16, 2, 16)))}


def _sim_time(shape, grid, steps, system=NARROW, stencil=STENCIL):
    return simulate_trace(system, ws.engine_program(stencil, grid, steps, shape)).value("system", "simulated_time_s")


def _deviation(stencil, shape):
    system, grid, steps = _problem(stencil, shape)
    *_, model = _model(system, stencil, shape, grid, steps)
    return _sim_time(shape, grid, steps, system, stencil) / model - 1.0


def test_the_grid_covers_every_kind_and_both_regimes():
    kinds = {p.values[1].kind for p in COMPUTE_BOUND}
    assert kinds == {"hhc_2d", "hex_1d", "hhc_3d"}
    assert {p.values[0] for p in COMPUTE_BOUND} >= {"jacobi_2d", "heat_2d", "gradient_2d", "jacobi_1d", "heat_3d"}
    assert len(COMPUTE_BOUND) >= 40 and EXPOSED
    assert FAST <= {tuple(p.values) for p in COMPUTE_BOUND}


@pytest.mark.parametrize("stencil,shape", [p for p in COMPUTE_BOUND if tuple(p.values) in FAST])
def test_compute_bound_tiles_follow_the_time_model(stencil, shape):
    assert abs(_deviation(stencil, shape)) < 0.15


@pytest.mark.slow
@pytest.mark.parametrize("stencil,shape", [p for p in COMPUTE_BOUND if tuple(p.values) not in FAST])
def test_compute_bound_grid_follows_the_time_model(stencil, shape):
    assert abs(_deviation(stencil, shape)) < 0.15


@pytest.mark.slow
@pytest.mark.parametrize("stencil,shape", EXPOSED)
def test_single_tile_rounds_lie_between_free_transfers_and_the_model(stencil, shape):
    """Rounds of one tile expose m (A.29): the engine, which moves less and streams faster there
    (module docstring), is no slower than the model and no faster than the model with free transfers."""
    system, grid, steps = _problem(stencil, shape)
    spec = system.spec.accelerators["stencil"]
    gpu = model_params(spec, spec.interface.bandwidth_bytes_per_s,
                       spec.interface.offload_overhead_cycles / system.spec.host.frequency_hz)
    c_iter = cycles_per_point(spec, stencil) / spec.frequency_hz
    free = GpuParams(**{**gpu.__dict__, "l_s_per_word": 0.0})
    sim = _sim_time(shape, grid, steps, system, stencil)
    assert predict_time_s(shape, grid, steps, free, c_iter, spec.lanes) <= sim
    assert sim <= 1.05 * predict_time_s(shape, grid, steps, gpu, c_iter, spec.lanes)


def test_tile_search_pick_is_within_10_percent_of_the_best_simulated():
    grid, steps = (256, 256), 16
    res = search_tile_sizes("hhc_2d", grid, steps, GPU, C_ITER_S, (4, 8, 16), [(8, 16, 32), (32, 64)],
                            [SPEC.lanes])
    shapes = {p.shape for p in sorted((p for p in res.near_best), key=lambda p: p.objective)}
    candidates = [TileShape("hhc_2d", tt, (a, b)) for tt in (4, 8, 16) for a in (8, 16, 32) for b in (32, 64)
                  if 2 * (a + tt + 1) * (b + tt + 1) <= GPU.m_sm_words]
    sims = {s: _sim_time(s, grid, steps) for s in candidates}
    best = min(sims.values())
    assert res.best.shape in sims and shapes
    assert sims[res.best.shape] <= 1.10 * best


def test_engine_counts_and_energy_follow_the_work():
    shape, grid, steps = TileShape("hhc_2d", 8, (16, 32)), (128, 128), 8
    r = simulate_trace(NARROW, ws.engine_program(STENCIL, grid, steps, shape))
    points = r.value("accel/stencil", "points")
    st = STENCILS[STENCIL]
    assert r.value("accel/stencil", "flops") == points * st.flops_per_point
    n_tiles = len(ws.tiles(shape, grid, steps))
    assert r.value("accel/stencil", "tiles") == n_tiles
    assert points == n_tiles * shape.v_tile_points
    e = {q: v for c, q, v, _ in r.rows if c == "energy/stencil"}
    assert e["compute"] == pytest.approx(points * (st.fadd * SPEC.energy_fadd_j + st.fmul * SPEC.energy_fmul_j
                                                   + st.fother * SPEC.energy_fother_j))
    assert e["scratchpad"] == pytest.approx(points * st.u_sr * SPEC.energy_scratchpad_j_per_word)
    assert e["static"] > 0


def test_more_tiles_in_flight_hide_transfers():
    wide = load_system(CONFIGS / "systems" / "stencil_shared.yaml")
    shape, grid, steps = TileShape("hhc_2d", 8, (16, 32)), (512, 256), 8
    t_wide = _sim_time(shape, grid, steps, wide)
    t_narrow = _sim_time(shape, grid, steps)
    assert t_wide < t_narrow  # four times the lanes: faster, though not 4x (transfers remain)
    assert t_wide > t_narrow / 4


def test_a_tile_larger_than_the_scratchpad_is_rejected():
    shape = TileShape("hhc_2d", 16, (512, 64))
    with pytest.raises(ConfigError, match=r"row 0, column 'params': offload to stencil: m_tile_words = 85698: "
                                          r"expected at most the 12288 words of the unit's scratchpad"):
        _sim_time(shape, (1024, 128), 16)  # refused as input, before the run


def test_a_program_of_more_tiles_than_it_may_hold_is_refused_before_its_tiles_are_listed():
    from models.stencil import TileShape
    from workloads.stencil import engine_program, engine_program_problem

    shape = TileShape("hhc_2d", 4, (8, 32))
    key, why = engine_program_problem((512, 512), 10**12, shape)
    most = int(why.split("at most ")[1].split(" ")[0].replace(",", ""))
    assert key == "steps" and engine_program_problem((512, 512), most, shape) is None
    assert engine_program_problem((512, 512), most + 1, shape) is not None  # the bound is the largest that fits
    with pytest.raises(ValueError, match=f"steps: 1000000000000; expected at most {most:,}"):
        engine_program("jacobi_2d", (512, 512), 10**12, shape)


@pytest.mark.parametrize("grid, kind, t_t, t_s", [((3000,), "hex_1d", 8, (64,)), ((1000, 400), "hhc_2d", 4, (8, 32)),
                                                  ((64, 40, 40), "hhc_3d", 2, (8, 8, 8))])
def test_the_size_check_refuses_a_program_whose_largest_list_passes_the_limit(monkeypatch, grid, kind, t_t, t_s):
    """engine_program_problem counts a command's lists without building them, from the unclipped boxes: a limit
    one below the largest list the program holds is refused, naming the grid; the boxes clipped at the grid's edges
    make the count high, by under a fifth on these small grids (0.4 % on the 2D one)."""
    import json

    from models.stencil import TileShape

    shape = TileShape(kind, t_t, t_s)
    stencil = {1: "jacobi_1d", 2: "jacobi_2d", 3: "heat_3d"}[len(grid)]
    commands = [json.loads(p) for p in ws.engine_program(stencil, grid, 2, shape).column("params").to_pylist()
                if p and "tiles" in p]
    largest = max(max(len(c["tiles"]), len(c["inputs"]), len(c["outputs"])) for c in commands)
    monkeypatch.setattr(ws, "MAX_COMMAND_ITEMS", largest - 1)
    assert ws.engine_program_problem(grid, 2, shape)[0] == "grid"
    monkeypatch.setattr(ws, "MAX_COMMAND_ITEMS", int(largest * 1.2))
    assert ws.engine_program_problem(grid, 2, shape) is None


@pytest.mark.parametrize("kind, t_t, t_s", [("time_skew_1d", 8, (4,)), ("hex_1d", 4, (8,)), ("hhc_2d", 4, (8, 32)),
                                            ("hhc_3d", 2, (4, 8, 8))])
def test_a_tile_holds_its_input_box_as_the_engine_loads_it(kind, t_t, t_s):
    """Shared memory per tile holds the input footprint m_i an engine program's box loads: a time-skewed tile of
    tT 8 over ts 4 reads 4 + 2 x 8 = 20 words, which 2 (ts + 2) = 12 words would not hold."""
    shape = TileShape(kind, t_t, t_s)
    assert shape.m_tile_words >= shape.m_in_words
    if kind == "time_skew_1d":
        r = simulate_trace(NARROW, ws.engine_program("jacobi_1d", [64], 8, shape))  # was refused: 20 > 12 words
        assert r.value("accel/stencil", "points") >= 64 * 8  # every point and step (edge tiles count in full)


@pytest.mark.parametrize("t_s", [7, 8])
def test_a_hexagon_box_spans_the_base_row_and_t_t_on_each_side(t_s):
    """A hexagon's box is ts1 + 2 tT points wide, centred on its base row, also for an odd ts1."""
    shape = TileShape("hex_1d", 2, (t_s,))
    boxes = {t.hi[0] - t.lo[0] for t in ws.tiles(shape, [30], 4)}
    assert boxes == {t_s + 2 * 2} == {shape.m_in_words}


def test_the_tiling_study_lays_the_engine_program_out_in_the_engines_words(monkeypatch):
    """The study's engine runs hand the program the engine's word size, as its model prices words of it: an
    engine of 8 B words gets regions of 8 B elements."""
    from dataclasses import replace

    from simulator.studies.stencil import study

    cfg = study.load_study(CONFIGS / "studies" / "stencil_tiling.yaml")
    cfg = replace(cfg, engine_grid=(64, 64), engine_steps=4)
    wide = load_system(CONFIGS / "systems" / "stencil_narrow.yaml", ["accelerators.stencil.word_bytes=8"])
    monkeypatch.setattr(study, "load_system", lambda path: wide)
    seen = []
    real = ws.engine_program
    monkeypatch.setattr(ws, "engine_program", lambda *a, **k: seen.append(k.get("elem_bytes")) or real(*a, **k))
    study.run_tiling_point(study.TilingRun(cfg, "engine", study.TileSpec(4, (8, 32))))
    assert seen == [8]


@pytest.mark.parametrize("word_bytes", [4, 8])
def test_an_engine_program_moves_the_hand_counted_words_in_the_engines_word(word_bytes):
    """jacobi_2d on 8 x 8 points for 2 steps, hhc_2d tiles tT 2 over 4 x 8, in elements of the engine's word: the
    engine moves the same words whatever their size, counted by hand over the boxes of the two wavefronts' tiles,
    clipped to the padded grid: 2 x 49 + 2 x 21 + 2 x 42 + 2 x 18 = 260."""
    engine = load_system(CONFIGS / "systems" / "stencil_narrow.yaml", [f"accelerators.stencil.word_bytes={word_bytes}"])
    program = ws.engine_program("jacobi_2d", (8, 8), 2, TileShape("hhc_2d", 2, (4, 8)), elem_bytes=word_bytes)
    assert simulate_trace(engine, program).value("accel/stencil", "global_words") == 260
