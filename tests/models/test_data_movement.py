"""Tests of the GEMM / matrix-chain data-movement models (models.data_movement, 004 app. D)."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from models.data_movement import (
    compulsory_words,
    fused_data_movement,
    fused_left_io,
    fused_right_io,
    gemm_io,
    min_op_count,
    unfused_data_movement,
)

# Worked example, 004 §D.7: P = {936, ..., 544} (004:L5302); sqrt(M) = 256, the unfused tile of Fig. D.11 (004:L5313)
EXAMPLE = (936, 1008, 552, 368, 1016, 616, 544)
M_EXAMPLE = 256 * 256


def test_worked_example_exact():
    order = min_op_count(EXAMPLE)
    assert order.op_count == 1092977664
    assert order.tree() == "((A1(A2A3))((A4A5)A6))"
    assert unfused_data_movement(order, M_EXAMPLE) == 10_190_344
    plan = fused_data_movement(order, M_EXAMPLE)
    assert plan.total_words == 8_392_058
    assert plan.nodes[(1, 6)].f_best == 7_882_874  # "7,882,874 + 509,184" (004:L5330)
    assert 1 - plan.total_words / 10_190_344 == pytest.approx(0.176, abs=0.001)  # "17.6%"
    # Fig. D.12: three kernels; T3 = A1(A2A3) right-fused, T4 = (A4A5)A6 left-fused
    assert plan.kernels() == [((1, 6), "none"), ((1, 3), "right"), ((4, 6), "left")]


def test_worked_example_fig_d11_table():
    """Fig. D.11 (004:L5311-L5319): h0, h_l, h_r, F0, F_l, F_r per node, printed rounded.

    The caption says multiples of 10^4 but the printed values are multiples of 10^5
    (e.g. F of the root 79 for 7,882,874); we compare at 10^5.
    """
    plan = fused_data_movement(min_op_count(EXAMPLE), M_EXAMPLE)
    expect = {  # node: (h0, hl, hr, F0, Fl, Fr)
        (2, 3): (16, None, None, 16, None, None),
        (4, 5): (18, None, None, 18, None, None),
        (1, 3): (31, None, 31, 47, None, 31),
        (4, 6): (12, 28, None, 30, 28, None),
        (1, 6): (20, 44, 40, 79, 88, 89),
    }
    for key, vals in expect.items():
        n = plan.nodes[key]
        got = (n.h_none, n.h_left, n.h_right, n.f_none, n.f_left, n.f_right)
        for g, e in zip(got, vals):
            assert (g is None) == (e is None), key
            if e is not None:
                assert round(g / 1e5) == e, (key, g, e)
    # tile sizes printed in Fig. D.11: T3 (312, 210), T4 (220, 296), others (256, 256)
    t3, t4, t5 = plan.nodes[(1, 3)], plan.nodes[(4, 6)], plan.nodes[(1, 6)]
    assert (round(t3.tile_x), round(t3.tile_y)) == (312, 210)
    assert round(t4.tile_x) == 220
    assert abs(t4.tile_y - 296) < 2  # sqrt(M alpha') = 297.3; 004 prints 296
    assert (t5.tile_x, t5.tile_y) == (256.0, 256.0)


def test_other_readings_of_the_ratios_do_not_reproduce():
    order = min_op_count(EXAMPLE)
    assert fused_data_movement(order, M_EXAMPLE, alpha_mode="printed").total_words != 8_392_058
    assert fused_data_movement(order, M_EXAMPLE, beta_mode="derived").total_words != 8_392_058


def _all_trees_cost(dims, i, j):
    if i == j:
        return 0
    return min(_all_trees_cost(dims, i, k) + _all_trees_cost(dims, k + 1, j) + dims[i - 1] * dims[k] * dims[j]
               for k in range(i, j))


def test_min_op_count_matches_exhaustive_search():
    rng = random.Random(7)
    for _ in range(30):
        n = rng.randint(1, 6)
        dims = [rng.randint(1, 50) for _ in range(n + 1)]
        assert min_op_count(dims).op_count == _all_trees_cost(dims, 1, n)


def _blocked_gemm_count(p0, p1, p2, x, y, z, on_chip):
    """Count words moved by explicitly walking the blocks of a 3D-blocked GEMM."""
    words = 0
    for _bi, _bj in itertools.product(range(p0 // x), range(p2 // y)):
        for _bk in range(p1 // z):
            if on_chip == "output":
                words += x * z + z * y          # A1 and A2 patches; R stays
            elif on_chip == "input1":
                words += z * y + 2 * x * y      # A2 patch; R patch read and written
    if on_chip == "output":
        words += p0 * p2                        # R written once
    elif on_chip == "input1":
        words += p0 * p1 - p0 * p2              # A1 read once; first read of R not needed
    return words


def test_gemm_output_stationary_matches_block_walk():
    p0, p1, p2, m = 64, 96, 128, 256  # x = y = 16
    assert gemm_io(p0, p1, p2, m).words == _blocked_gemm_count(p0, p1, p2, 16, 16, 8, "output")
    assert gemm_io(p0, p1, p2, m).words == 2 * p0 * p1 * p2 // 16 + p0 * p2


def test_gemm_input_stationary_matches_block_walk():
    p0, p1, p2, m = 64, 96, 128, 128  # x = sqrt(M/2) = 8, z = 2x = 16
    io = gemm_io(p0, p1, p2, m, "input1")
    assert (io.tile_x, io.tile_y) == pytest.approx((8, 16))
    assert io.words == _blocked_gemm_count(p0, p1, p2, 8, 8, 16, "input1")
    # keeping an input costs sqrt(2) more in the cubic term
    out = gemm_io(p0, p1, p2, m)
    cubic_out = out.words - p0 * p2
    cubic_in = io.words - (p0 * p1 - p0 * p2)
    assert cubic_in / cubic_out == pytest.approx(math.sqrt(2), rel=1e-4)  # floors
    io2 = gemm_io(p0, p1, p2, m, "input2")
    assert io2.words - (p1 * p2 - p0 * p2) == cubic_in


def _fused_left_general(p0, p1, p2, p3, x, y):
    # D.7: P0P1P2 (x + y)/(xy) + P0P2P3 (2x + y)/(xy) - P0P3
    return p0 * p1 * p2 * (x + y) / (x * y) + p0 * p2 * p3 * (2 * x + y) / (x * y) - p0 * p3


def _fused_right_general(p0, p1, p2, p3, x, y):
    # D.11 regrouped as in D.12: P1P2P3 (x + y)/(xy) + P0P1P3 (x + 2y)/(xy) - P0P3
    return p1 * p2 * p3 * (x + y) / (x * y) + p0 * p1 * p3 * (x + 2 * y) / (x * y) - p0 * p3


@pytest.mark.parametrize("dims", [(900, 700, 500, 300), (300, 1000, 800, 1200), (512, 512, 512, 512)])
def test_fused_closed_forms_are_minima_on_the_capacity_hyperbola(dims):
    m = 4096
    xs = np.linspace(8, 512, 20001)
    ys = m / xs
    left = fused_left_io(*dims, m)
    num_left = _fused_left_general(*dims, xs, ys)
    assert left.words == pytest.approx(num_left.min(), rel=1e-6)
    assert left.tile_x == pytest.approx(xs[num_left.argmin()], rel=1e-2)
    right = fused_right_io(*dims, m)
    num_right = _fused_right_general(*dims, xs, ys)
    assert right.words == pytest.approx(num_right.min(), rel=1e-6)
    assert right.tile_x == pytest.approx(xs[num_right.argmin()], rel=1e-2)


def test_three_matrix_chain_uses_the_two_mm_forms():
    dims = (600, 900, 400, 700)
    m = 1024
    order = min_op_count(dims)
    plan = fused_data_movement(order, m)
    k = order.split[(1, 3)]
    fused = fused_left_io(*dims, m) if k == 2 else fused_right_io(*dims, m)
    assert plan.total_words == min(unfused_data_movement(order, m), fused.words)


def test_fusion_never_worse_than_unfused():
    rng = random.Random(3)
    for _ in range(40):
        n = rng.randint(2, 9)
        dims = [rng.randrange(300, 1200, 8) for _ in range(n + 1)]
        order = min_op_count(dims)
        s = unfused_data_movement(order, M_EXAMPLE)
        f = fused_data_movement(order, M_EXAMPLE).total_words
        assert f <= s
        assert f > 0
        assert f >= compulsory_words(dims)  # matrices above the tiles: within the model's range


def test_compulsory_words_read_each_input_and_write_the_result_once():
    assert compulsory_words((2, 3, 4)) == 2 * 3 + 3 * 4 + 2 * 4
    assert compulsory_words(EXAMPLE) == sum(p * q for p, q in zip(EXAMPLE, EXAMPLE[1:])) + 936 * 544
    # the worked example moves more than that: tiles of 256 elements fit inside its matrices
    assert unfused_data_movement(min_op_count(EXAMPLE), M_EXAMPLE) > compulsory_words(EXAMPLE)


def test_validation():
    with pytest.raises(ValueError, match="m_elems"):
        gemm_io(10, 10, 10, 0)
    with pytest.raises(ValueError, match="on_chip"):
        gemm_io(10, 10, 10, 16, "bogus")
    with pytest.raises(ValueError, match=r"dims\[1\]"):
        min_op_count([3, 0, 4])
    with pytest.raises(ValueError, match="beta_mode"):
        fused_data_movement(min_op_count(EXAMPLE), M_EXAMPLE, beta_mode="x")
