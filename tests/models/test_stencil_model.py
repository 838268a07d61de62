"""Tests of the tiled stencil time/energy models and DRAM traffic counts (models.stencil)."""

from __future__ import annotations

import math

import pytest

from models.stencil import (
    C_ITER_GTX980_S,
    GTX980,
    K20C,
    STENCILS,
    GpuParams,
    TileShape,
    dram_traffic_words,
    max_blocks_per_sm,
    n_tiles,
    n_wavefronts,
    predict_energy_j,
    predict_time_s,
    search_tile_sizes,
    tile_compute_time_s,
    tile_time_s,
    sub_tiles_per_unit,
    tile_transfer_time_s,
    wavefront_time_s,
    wavefront_width_counts,
    wavefront_widths,
)

TOY = GpuParams(n_sm=2, n_v=4, m_sm_words=1000, max_shared_words_per_block=500, max_blocks_per_sm=4,
                max_threads_per_sm=64, max_threads_per_block=32, l_s_per_word=1.0, tau_sync_s=0.5,
                t_sync_s=10.0)


def test_stencil_table():
    assert set(STENCILS) == {"jacobi_1d", "jacobi_2d", "jacobi_3d", "heat_2d", "heat_3d", "laplacian_2d",
                             "laplacian_3d", "gradient_2d"}
    j1, j2 = STENCILS["jacobi_1d"], STENCILS["jacobi_2d"]
    assert (j1.points, j1.flops_per_point) == (3, 3)  # 1/3 (a + b + c): 2 adds, 1 multiply (004 B.3.2)
    assert (j2.points, j2.flops_per_point, j2.u_sr) == (5, 5, 6)  # 004 B.3.3, u_sr = 6 (004:L3290)
    assert STENCILS["heat_3d"].dims == 3 and STENCILS["heat_3d"].points == 7


def test_hexagon_geometry_by_hand():
    sh = TileShape("hex_1d", 4, (6,))
    assert sh.w_tile == 8                       # ts + tT - 2 (A.4)
    assert sh.pitch == 16                       # w_tile + ts + 2 (A.5)
    assert sh.m_io_words == 2 * (6 + 8)         # A.8
    assert sh.m_tile_words == 2 * (6 + 4)
    assert sh.row_widths() == [6, 8, 8, 6]      # tT rows
    assert sh.v_tile_points == sum(sh.row_widths()) == 4 * (12 + 4 - 2) // 2  # B.4 area
    sh2 = TileShape("hhc_2d", 4, (6, 32))
    assert sh2.m_io_words == 2 * 32 * (6 + 8)   # B.3
    assert sh2.v_tile_points == 32 * 28         # B.4
    assert sh2.m_tile_words == 2 * 11 * 37      # A.20
    sh3 = TileShape("hhc_3d", 2, (4, 8, 32))
    assert sh3.m_io_words == 2 * 8 * 32 * (4 + 4)  # A.25
    assert sh3.v_tile_points == 8 * 32 * 2 * (4 + 4) // 2  # A.27
    with pytest.raises(ValueError, match="even"):
        TileShape("hex_1d", 3, (6,))
    with pytest.raises(ValueError, match="t_s"):
        TileShape("hhc_2d", 4, (6,))


def test_wavefront_count_and_tile_time_by_hand():
    sh = TileShape("hex_1d", 4, (6,))
    assert n_wavefronts(sh, 16) == 8            # 2 floor(16/4) + 0
    assert n_wavefronts(sh, 19) == 9            # remainder 3 >= tT/2
    assert n_wavefronts(sh, 17) == 8
    assert wavefront_widths(sh, (100,), 16) == [7] * 8  # ceil(100 / 16)
    # TOY: n_par = min(8 threads, 4 vector units) = 4; rows 6,8,8,6 -> 2+2+2+2 = 8 C_iter
    c = tile_compute_time_s(sh, TOY, c_iter_s=1.0, n_threads=8)
    assert c == 8 + 4 * 0.5
    m = sh.m_io_words * 1.0 + 2 * 0.5
    assert tile_time_s(m, c, 1) == m + c
    assert tile_time_s(m, c, 3) == m + c + 2 * max(m, c)
    # k = min(4 blocks, 1000 // 20, 64 // 8) = 4; each wavefront: ceil(7 / (4*2)) = 1 unit
    assert max_blocks_per_sm(sh, TOY, 8) == 4
    t = predict_time_s(sh, (100,), 16, TOY, 1.0, 8)
    assert t == pytest.approx(8 * (tile_time_s(m, c, 4) + 10.0))


def test_time_skew_tiles_cover_the_domain():
    s, steps = 97, 23
    for ts, tt in [(8, 4), (5, 7), (32, 23), (1, 1)]:
        sh = TileShape("time_skew_1d", tt, (ts,))
        widths = wavefront_widths(sh, (s,), steps)
        # brute force: tiles containing at least one (i, t) point after the skew
        tiles = {((i + t) // ts, (t - 1) // tt) for i in range(1, s + 1) for t in range(1, steps + 1)}
        assert sum(widths) == len(tiles) == n_tiles(sh, (s,), steps)
        assert len(widths) == max(a + b for a, b in tiles) - min(a + b for a, b in tiles) + 1


@pytest.mark.parametrize("shape, space, steps", [
    (TileShape("hex_1d", 4, (6,)), (1000,), 77),
    (TileShape("time_skew_1d", 5, (7,)), (300,), 41),
    (TileShape("hhc_2d", 8, (16, 64)), (7680, 2048), 515),
    (TileShape("hhc_3d", 2, (4, 8, 32)), (200, 150, 130), 33),
])
def test_calls_of_one_width_are_priced_once(shape, space, steps):
    """T_alg sums the calls by width (``wavefront_width_counts``); call by call gives the same time."""
    counts = wavefront_width_counts(shape, space, steps)
    widths = wavefront_widths(shape, space, steps)
    assert sum(counts.values()) == len(widths) and all(counts[w] == widths.count(w) for w in set(widths))
    c_iter, threads = C_ITER_GTX980_S["heat_2d"], 64
    k = max_blocks_per_sm(shape, GTX980, threads)
    m, c = tile_transfer_time_s(shape, GTX980), tile_compute_time_s(shape, GTX980, c_iter, threads)
    n_sub = sub_tiles_per_unit(shape, space, steps) if shape.kind.startswith("hhc") else 1
    call_by_call = sum(wavefront_time_s(shape, w, n_sub, GTX980, m, c, k) + GTX980.t_sync_s for w in widths)
    assert predict_time_s(shape, space, steps, GTX980, c_iter, threads) == pytest.approx(call_by_call, rel=1e-12)


def test_time_monotone_in_problem_size_and_sync_cost():
    sh = TileShape("hhc_2d", 8, (16, 64))
    c_iter = C_ITER_GTX980_S["heat_2d"]
    t1 = predict_time_s(sh, (2048, 2048), 512, GTX980, c_iter, 128)
    assert predict_time_s(sh, (4096, 2048), 512, GTX980, c_iter, 128) > t1
    assert predict_time_s(sh, (2048, 4096), 512, GTX980, c_iter, 128) > t1
    assert predict_time_s(sh, (2048, 2048), 1024, GTX980, c_iter, 128) > t1
    slow_sync = GpuParams(**{**GTX980.__dict__, "t_sync_s": GTX980.t_sync_s * 10})
    assert predict_time_s(sh, (2048, 2048), 512, slow_sync, c_iter, 128) > t1
    # hyper-threading overlaps transfers with compute (A.30) when the wavefront fills all
    # k x N_SM slots: 7680 / pitch 40 = 192 tiles = 2 x (6 x 16)
    k_max = max_blocks_per_sm(sh, GTX980, 128)
    assert k_max == 6
    assert predict_time_s(sh, (7680, 2048), 512, GTX980, c_iter, 128, k=k_max) < \
        predict_time_s(sh, (7680, 2048), 512, GTX980, c_iter, 128, k=1)
    # ... and with too few tiles per wavefront (2048 / 40 -> 52 tiles, 4 per SM) an SM holds
    # only the 4 it has: k = k_max predicts what k = 4 does
    assert predict_time_s(sh, (2048, 2048), 512, GTX980, c_iter, 128, k=k_max) == \
        predict_time_s(sh, (2048, 2048), 512, GTX980, c_iter, 128, k=4)


def test_partial_last_round_is_charged_the_tiles_it_holds():
    """The busiest SM (004:L2385) runs its ceil(w / N_SM) tiles in rounds of k (A.13 per round)."""
    sh = TileShape("hex_1d", 4, (6,))
    m, c = 3.0, 5.0
    # TOY has 2 SMs: 7 tiles -> 4 on the busiest SM; k = 3 -> rounds of 3 and 1
    assert wavefront_time_s(sh, 7, 1, TOY, m, c, 3) == tile_time_s(m, c, 3) + tile_time_s(m, c, 1)
    # k divides n: A.7's ceil(w / (k N_SM)) T_tile(k)
    assert wavefront_time_s(sh, 8, 1, TOY, m, c, 2) == 2 * tile_time_s(m, c, 2)
    # hhc prisms of 5 sub-tiles: a round of 1 is A.29, a round of 2 is A.30
    hh = TileShape("hhc_2d", 4, (6, 32))
    assert wavefront_time_s(hh, 5, 5, TOY, m, c, 2) == (m + 2 * 5 * c) + 5 * (m + c)
    # never above A.7, which charges every round k tiles
    for w in range(1, 20):
        for k in (1, 2, 3, 4):
            assert wavefront_time_s(sh, w, 1, TOY, m, c, k) <= -(-w // (k * TOY.n_sm)) * tile_time_s(m, c, k)
    with pytest.raises(ValueError, match="k must be"):
        wavefront_time_s(sh, 7, 1, TOY, m, c, 0)


def test_energy_model_by_hand_and_k20c_preset():
    assert (K20C.p_stat_w, K20C.e_gs_j_per_word, K20C.e_sr_j_per_word) == (48.0, 2.2e-9, 2.23e-10)  # Table B.2
    j2 = STENCILS["jacobi_2d"]
    assert K20C.e_iter_j(j2) == pytest.approx(4 * 5.3e-11 + 3.7e-11)
    sh = TileShape("hhc_2d", 4, (6, 32))
    space, steps = (1000, 1000), 100
    # B.5: 2T/tT x S1/(ts1 + w_tile) x (S2 + tT)/ts2
    nt = 2 * 100 / 4 * 1000 / (6 + 8) * (1000 + 4) / 32
    assert n_tiles(sh, space, steps) == pytest.approx(nt)
    e_tile = 2.2e-9 * sh.m_io_words + 6 * 2.23e-10 * sh.v_tile_points + K20C.e_iter_j(j2) * sh.v_tile_points
    assert predict_energy_j(sh, space, steps, j2, K20C, 2.0) == pytest.approx(48.0 * 2.0 + nt * e_tile)
    # the tiles cover the iteration space: N_tiles V_tile ~ S1 S2 T (up to the (S2 + tT)/S2 skew)
    assert n_tiles(sh, space, steps) * sh.v_tile_points == pytest.approx(1000 * 1004 * 100, rel=1e-9)


def test_tile_search_keeps_points_within_ten_percent():
    c_iter = C_ITER_GTX980_S["heat_2d"]
    res = search_tile_sizes("hhc_2d", (4096, 4096), 1024, GTX980, c_iter, range(2, 17, 2),
                            [range(2, 33, 2), range(32, 257, 32)], [64, 128, 256])
    assert res.n_feasible > 100
    assert res.best == res.near_best[0]
    assert all(p.time_s <= 1.1 * res.best.time_s for p in res.near_best)
    assert all(p.shape.t_s[1] % 32 == 0 and p.shape.t_t % 2 == 0 for p in res.near_best)
    for p in res.near_best:
        assert p.shape.m_tile_words <= GTX980.max_shared_words_per_block
        assert p.k * p.shape.m_tile_words <= GTX980.m_sm_words
    # energy objective on the K20c parameters
    res_e = search_tile_sizes("hhc_2d", (2048, 2048), 512, GTX980, c_iter, range(2, 17, 2),
                              [range(2, 33, 4), range(32, 129, 32)], [128], stencil=STENCILS["heat_2d"],
                              energy=K20C, objective="energy")
    assert all(p.energy_j <= 1.1 * res_e.best.energy_j for p in res_e.near_best)
    with pytest.raises(ValueError, match="no feasible"):
        search_tile_sizes("hhc_2d", (64, 64), 8, GTX980, c_iter, [2], [[4000], [32]], [128])


def test_gradient_2d_prediction_is_optimistic_against_measured_best():
    """004 §A.6.4 (004:L2651-L2655): Gradient-2D, S = 8192^2, T = 8192 on the GTX 980 took 16.5 s
    with the model's tile sizes. The model is deliberately optimistic (004:L1656): its
    optimum must not exceed the measurement, and should be of the same order."""
    res = search_tile_sizes("hhc_2d", (8192, 8192), 8192, GTX980, C_ITER_GTX980_S["gradient_2d"],
                            range(2, 33, 2), [range(1, 65), range(32, 513, 32)], [64, 128, 256, 512])
    assert 16.5 / 3 < res.best.time_s <= 16.5


# ---- DRAM traffic counts ------------------------------------------------------------------

def test_naive_traffic_by_hand():
    j2 = STENCILS["jacobi_2d"]
    grid, steps = (100, 200), 5
    padded = 102 * 202
    fits_all = dram_traffic_words(j2, grid, steps, "naive", 2 * padded)
    assert fits_all.read_words == padded and fits_all.write_words == 2 * 100 * 200
    rows_fit = dram_traffic_words(j2, grid, steps, "naive", 3 * 202)
    assert rows_fit.read_words == steps * padded and rows_fit.write_words == steps * 20000
    nothing_fits = dram_traffic_words(j2, grid, steps, "naive", 3 * 202 - 1)
    assert nothing_fits.read_words == 3 * steps * padded
    wa = dram_traffic_words(j2, grid, steps, "naive", 3 * 202, write_allocate=True)
    assert wa.read_words == rows_fit.read_words + rows_fit.write_words
    j3 = STENCILS["jacobi_3d"]
    planes = dram_traffic_words(j3, (10, 20, 30), 2, "naive", 3 * 22 * 32)
    rows = dram_traffic_words(j3, (10, 20, 30), 2, "naive", 3 * 32)
    assert rows.read_words == 3 * planes.read_words


def test_blocked_traffic_by_hand_and_limits():
    j2 = STENCILS["jacobi_2d"]
    grid, steps = (100, 200), 3
    t = dram_traffic_words(j2, grid, steps, "blocked", 400, block=(50,))
    assert t.read_words == steps * 102 * (200 + 2 * 4)  # 4 block columns, 2 halo columns each
    whole = dram_traffic_words(j2, grid, steps, "blocked", 3 * 202, block=(200,))
    naive = dram_traffic_words(j2, grid, steps, "naive", 3 * 202)
    assert whole == naive
    finer = dram_traffic_words(j2, grid, steps, "blocked", 400, block=(25,))
    assert finer.read_words > t.read_words  # smaller blocks: more halo
    with pytest.raises(ValueError, match="window"):
        dram_traffic_words(j2, grid, steps, "blocked", 100, block=(50,))


def test_time_tiled_traffic_consistent_with_tile_sizes():
    j1 = STENCILS["jacobi_1d"]
    s, steps = 4096, 512
    prev = None
    for tt in (2, 4, 8, 16, 32):
        sh = TileShape("hex_1d", tt, (64,))
        t = dram_traffic_words(j1, (s,), steps, "time_tiled", 10_000, shape=sh)
        assert t.read_words == round(n_tiles(sh, (s,), steps) * sh.m_in_words)
        if prev is not None:
            assert t.total_words < prev  # taller tiles: fewer words per update
        prev = t.total_words
    # against the naive sweep: time tiling by tT cuts traffic roughly tT-fold
    naive = dram_traffic_words(j1, (s,), steps, "naive", 16)
    tiled = dram_traffic_words(j1, (s,), steps, "time_tiled", 10_000, shape=TileShape("hex_1d", 32, (256,)))
    assert naive.total_words / tiled.total_words > 8
    skew = TileShape("time_skew_1d", 16, (64,))
    t = dram_traffic_words(j1, (s,), steps, "time_tiled", 10_000, shape=skew)
    assert t.read_words == n_tiles(skew, (s,), steps) * (64 + 32)
    with pytest.raises(ValueError, match="fast memory"):
        dram_traffic_words(j1, (s,), steps, "time_tiled", 10, shape=skew)
    with pytest.raises(ValueError, match="scheme"):
        dram_traffic_words(j1, (s,), steps, "bogus", 10)
    assert math.isfinite(t.total_words)
