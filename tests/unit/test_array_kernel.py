"""The compiled array helpers agree with the numpy expressions they stand in for, to the bit, and refuse
the inputs those expressions would refuse."""

import numpy as np
import pytest

from simulator.memory.array_kernel import add_scaled, count_levels, count_levels_by_kind, value_range


def test_value_range_is_min_and_max():
    values = np.array([7, -3, 12, 0, 12, -3], dtype=np.int64)
    assert value_range(values) == (-3, 12)
    assert value_range(np.array([5], dtype=np.int64)) == (5, 5)


def test_count_levels_matches_bincount():
    rng = np.random.default_rng(1)
    for n_levels in (1, 2, 4, 5):
        levels = rng.integers(0, n_levels, size=1000).astype(np.int8)
        expected = np.bincount(levels, minlength=n_levels)
        got = count_levels(levels, n_levels)
        assert got.dtype == np.int64
        assert np.array_equal(got, expected)
    # levels that never occur are counted as zero, an empty chunk as all zeros
    assert count_levels(np.array([3, 3], dtype=np.int8), 5).tolist() == [0, 0, 0, 2, 0]
    assert count_levels(np.zeros(0, dtype=np.int8), 3).tolist() == [0, 0, 0]


def test_count_levels_by_kind_matches_bincount_of_each_kind():
    rng = np.random.default_rng(3)
    for size in (0, 1, 3, 4, 5, 1001):  # around the partial tallies' period
        levels = rng.integers(0, 4, size=size).astype(np.int8)
        kinds = (rng.random(size) < 0.3).astype(np.uint8)
        got = count_levels_by_kind(levels, kinds, 2, 4)
        assert np.array_equal(got[0], np.bincount(levels[kinds == 0], minlength=4))
        assert np.array_equal(got[1], np.bincount(levels[kinds == 1], minlength=4))
        for mode in (0, 1):  # every entry of one kind: ``kinds`` is not read
            got = count_levels_by_kind(levels, kinds[:0], mode, 4)
            assert np.array_equal(got[mode], np.bincount(levels, minlength=4))
            assert not got[1 - mode].any()


def test_add_scaled_rounds_as_numpy_does():
    rng = np.random.default_rng(2)
    a = rng.random(5) * 1e6
    b = rng.random(5) * 1e3
    expected_a, expected_b = a.copy(), b.copy()
    for _ in range(200):
        counts = rng.integers(0, 9000, size=5).astype(np.int64)
        scale = float(rng.random() * 100 / 3)  # bytes per line of a row: rarely a whole number
        served = counts * scale
        expected_a += served
        expected_b += served
        add_scaled(counts, scale, a, b)
    assert a.tobytes() == expected_a.tobytes()
    assert b.tobytes() == expected_b.tobytes()


def test_count_levels_refuses_a_level_outside_its_range():
    for levels in ([0, 7], [-1, 0]):
        with pytest.raises(ValueError, match="outside 0..n-1"):
            count_levels(np.array(levels, dtype=np.int64), 3)


def test_add_scaled_refuses_arrays_of_differing_lengths():
    with pytest.raises(ValueError, match="differ in length"):
        add_scaled(np.ones(3, dtype=np.int64), 2.0, np.zeros(3), np.zeros(2))
