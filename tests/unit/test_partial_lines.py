"""The lines a write covers only in part (``interface.partial_lines``): read before written through the caches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.accel.gemm_command import tile_lines, tile_partial_lines
from simulator.interconnect.interface import partial_lines, region_partial_lines, span_partial_lines


def _brute(ranges: list[tuple[int, int]], line: int) -> list[int]:
    """The lines some range touches that hold a byte no range covers, byte by byte."""
    bytes_ = {byte for a, b in ranges for byte in range(a, b)}
    lines = {byte // line for byte in bytes_}
    return sorted(n for n in lines if any(b not in bytes_ for b in range(n * line, (n + 1) * line)))


@pytest.mark.parametrize("regions, expected", [
    ([[0, 64]], []), ([[8, 16]], [0]), ([[8, 64]], [0, 1]), ([[0, 64], [64, 64]], []),
    ([[0, 40], [40, 24]], []),  # two writes that together cover the line whole
    ([[0, 40], [48, 16]], [0]), ([[100, 0]], []), ([], []), ([[64, 200], [0, 70]], [4]),
])
def test_the_unaligned_ends_of_the_runs_are_partial(regions, expected):
    assert region_partial_lines(regions, 64).tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 600), st.integers(0, 200)), max_size=6), st.sampled_from([16, 64]))
def test_partial_lines_are_those_with_a_byte_no_range_covers(pairs, line):
    ranges = [(a, a + n) for a, n in pairs]
    starts = np.array([a for a, _ in ranges], dtype=np.int64)
    ends = np.array([b for _, b in ranges], dtype=np.int64)
    assert partial_lines(starts, ends, line).tolist() == _brute(ranges, line)


@pytest.mark.parametrize("base, ld, r0, r1, c0, c1", [(0, 64, 0, 4, 0, 64), (0, 37, 0, 5, 0, 37),
                                                      (4096, 301, 2, 9, 13, 200), (8, 8, 0, 3, 0, 8)])
def test_a_tiles_partial_lines_are_among_its_lines_and_match_the_byte_count(base, ld, r0, r1, c0, c1):
    partial = tile_partial_lines(base, ld, r0, r1, c0, c1, 8, 64)
    ranges = [(base + (r * ld + c0) * 8, base + (r * ld + c1) * 8) for r in range(r0, r1)]
    assert partial.tolist() == _brute(ranges, 64)
    assert set(partial.tolist()) <= set(tile_lines(base, ld, r0, r1, c0, c1, 8, 64).tolist())


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 600), st.integers(0, 200), st.sampled_from([16, 64]))
def test_one_spans_partial_lines_in_plain_arithmetic_are_the_general_ones(addr, nbytes, line):
    assert span_partial_lines(addr, nbytes, line).tolist() == _brute([(addr, addr + nbytes)], line)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 300), st.integers(0, 40), st.integers(0, 6), st.integers(1, 6), st.integers(0, 30),
       st.integers(1, 30), st.sampled_from([1, 4, 8]), st.sampled_from([16, 64]))
def test_a_tiles_partial_lines_are_those_with_a_byte_no_row_covers(base, ld, r0, rows, c0, cols, elem, line):
    r1, c1 = r0 + rows, c0 + cols
    ranges = [(base + (r * ld + c0) * elem, base + (r * ld + c1) * elem) for r in range(r0, r1)]
    assert tile_partial_lines(base, ld, r0, r1, c0, c1, elem, line).tolist() == _brute(ranges, line)
