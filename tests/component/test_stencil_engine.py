"""Stencil engine vs 004's tiled time model (eq. A.13, A.29-A.31) and its tile-size search.

The engine's model parameters come from its spec (units, lanes, scratchpad, clock,
interface bandwidth); the simulation contends for the interface and schedules blocks
on units itself, so agreement is a check, not a fit.
"""

from __future__ import annotations

import pytest

from models.stencil import (STENCILS, TileShape, predict_time_s, search_tile_sizes, tile_compute_time_s,
                            tile_transfer_time_s)
from simulator.accel.stencil import cycles_per_point
from simulator.stencil_study import model_params
from simulator.stencil_study import load_system, simulate_trace
from tests.conftest import CONFIGS
from workloads import stencil as ws

NARROW = load_system(CONFIGS / "systems" / "stencil_narrow.yaml")
SPEC = NARROW.spec.accelerators["stencil"]
CALL_S = SPEC.interface.offload_overhead_cycles / NARROW.spec.host.frequency_hz
GPU = model_params(SPEC, SPEC.interface.bandwidth_bytes_per_s, CALL_S)
STENCIL = "gradient_2d"
C_ITER_S = cycles_per_point(SPEC, STENCIL) / SPEC.frequency_hz


def _sim_time(shape, grid, steps, system=NARROW):
    return simulate_trace(system, ws.engine_program(STENCIL, grid, steps, shape)).value("system", "simulated_time_s")


@pytest.mark.parametrize("shape", [TileShape("hhc_2d", 16, (8, 32)), TileShape("hhc_2d", 16, (32, 32)),
                                   TileShape("hhc_2d", 8, (32, 32))])
def test_compute_bound_tiles_follow_the_time_model(shape):
    grid, steps = (512, 512), 16
    assert tile_compute_time_s(shape, GPU, C_ITER_S, SPEC.lanes) > tile_transfer_time_s(shape, GPU)  # c > m
    model = predict_time_s(shape, grid, steps, GPU, C_ITER_S, SPEC.lanes)
    assert _sim_time(shape, grid, steps) == pytest.approx(model, rel=0.15)


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
    with pytest.raises(ValueError, match="scratchpad"):
        _sim_time(shape, (1024, 128), 16)
