"""Host stencil sweeps on the simulated i7-920: DRAM traffic vs models.stencil (issue 4).

The simulated traffic comes from the exact cache hierarchy replaying the sweep's
accesses (write-allocate, write-back, with a final flush); the model counts words
from the schedule's geometry. Words are 8 B values.
"""

from __future__ import annotations

import pytest

from models.stencil import STENCILS, TileShape, dram_traffic_words
from simulator.runner import load_system, simulate_trace
from tests.conftest import DEFAULT_SYSTEM
from workloads import stencil as ws

SYSTEM = load_system(DEFAULT_SYSTEM)
LLC_WORDS = SYSTEM.spec.caches.levels[-1].size_bytes // 8
GRID = (512, 2048)   # each array 8 MiB: the pair does not fit the 8 MiB LLC
STEPS = 8


def _dram_words(trace):
    r = simulate_trace(SYSTEM, trace)
    return (r.value("dram", "bytes_read") + r.value("dram", "bytes_written")) / 8, r


@pytest.fixture(scope="module")
def naive():
    return _dram_words(ws.naive_sweep("jacobi_2d", GRID, STEPS))[0]


@pytest.fixture(scope="module")
def tiled():
    shape = TileShape("hhc_2d", 8, (32, 256))
    return shape, _dram_words(ws.time_tiled_sweep("jacobi_2d", GRID, STEPS, shape))[0]


def test_naive_sweep_traffic_matches_the_model(naive):
    m = dram_traffic_words(STENCILS["jacobi_2d"], GRID, STEPS, "naive", LLC_WORDS, write_allocate=True)
    assert naive == pytest.approx(m.total_words, rel=0.05)


def test_blocked_sweep_traffic_matches_the_model():
    words, _ = _dram_words(ws.blocked_sweep("heat_2d", GRID, 2, [256]))
    m = dram_traffic_words(STENCILS["heat_2d"], GRID, 2, "blocked", LLC_WORDS, block=[256], write_allocate=True)
    assert words == pytest.approx(m.total_words, rel=0.05)


def test_time_tiled_traffic_within_10_percent_of_the_model(tiled):
    shape, words = tiled
    m = dram_traffic_words(STENCILS["jacobi_2d"], GRID, STEPS, "time_tiled", LLC_WORDS, shape=shape,
                           write_allocate=True)
    assert words == pytest.approx(m.total_words, rel=0.10)


def test_time_tiling_reduction_within_15_percent_of_the_model(naive, tiled):
    shape, words = tiled
    st = STENCILS["jacobi_2d"]
    m_naive = dram_traffic_words(st, GRID, STEPS, "naive", LLC_WORDS, write_allocate=True).total_words
    m_tiled = dram_traffic_words(st, GRID, STEPS, "time_tiled", LLC_WORDS, shape=shape,
                                 write_allocate=True).total_words
    sim_ratio, model_ratio = naive / words, m_naive / m_tiled
    assert sim_ratio > 3  # time tiling really saves traffic
    assert sim_ratio == pytest.approx(model_ratio, rel=0.15)


@pytest.mark.parametrize("kind,grid,t_t,t_s", [("time_skew_1d", (200_000,), 16, (2048,)),
                                                ("hex_1d", (200_000,), 16, (2048,)),
                                                ("hhc_3d", (128, 128, 128), 4, (16, 16, 64))])
def test_other_time_tilings_traffic_within_10_percent(kind, grid, t_t, t_s):
    name = {1: "jacobi_1d", 3: "heat_3d"}[len(grid)]
    shape = TileShape(kind, t_t, t_s)
    words, _ = _dram_words(ws.time_tiled_sweep(name, grid, 16, shape))
    m = dram_traffic_words(STENCILS[name], grid, 16, "time_tiled", LLC_WORDS, shape=shape, write_allocate=True)
    assert words == pytest.approx(m.total_words, rel=0.10)


def test_flops_of_a_sweep_are_points_times_steps_times_flops_per_point():
    _, r = _dram_words(ws.naive_sweep("gradient_2d", (64, 64), 3))
    assert r.value("host", "flops") == 64 * 64 * 3 * STENCILS["gradient_2d"].flops_per_point


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="grid"):
        ws.naive_sweep("jacobi_2d", (10,), 1)
    with pytest.raises(ValueError, match="stencil"):
        ws.naive_sweep("nope", (10, 10), 1)
    with pytest.raises(ValueError, match="steps"):
        ws.naive_sweep("jacobi_2d", (10, 10), 0)
