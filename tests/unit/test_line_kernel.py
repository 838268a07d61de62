"""lines_of_rows: a block of trace rows expanded in one call gives each row the lines that
element_lines / gather_lines give it alone."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.line_kernel import lines_of_rows
from workloads.trace import element_lines, gather_lines

LINE_BYTES = 64

# (addr, elem_bytes, stride_bytes, count, listed addresses or None)
ROWS = [
    (0, 8, 8, 100, None),             # contiguous ascending
    (4096, 8, -8, 40, None),          # contiguous descending
    (4156, 8, -8, 9, None),           # descending, an element across a line boundary
    (1000, 16, 0, 5, None),           # the same element again and again, across a line boundary
    (128, 8, 0, 7, None),             # the same element within one line
    (7, 24, 200, 11, None),           # strided, some elements across a boundary
    (64, 8, 8, 0, None),              # no elements
    (0, 8, 8, 6, [0, 8, 64, 4096, 4100, 100]),   # a gather of single elements
    (0, 4, 4, 12, [60, 512, 40]),     # a gather of runs of 4 elements (16 B), one across a boundary
    (0, 8, 8, 1, None),
]


def _columns(rows):
    addr = np.array([r[0] for r in rows], dtype=np.int64)
    elem = np.array([r[1] for r in rows], dtype=np.int64)
    stride = np.array([r[2] for r in rows], dtype=np.int64)
    count = np.array([r[3] for r in rows], dtype=np.int64)
    listed = np.array([r[4] is not None for r in rows])
    lists = [r[4] or [] for r in rows]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    values = np.array([a for x in lists for a in x], dtype=np.int64)
    return addr, elem, stride, count, listed, offsets, values


def _alone(row):
    addr, elem, stride, count, listed = row
    if listed is not None:
        return gather_lines(np.array(listed), count // len(listed) * elem, LINE_BYTES)
    return element_lines(addr, elem, stride, count, LINE_BYTES)


@pytest.mark.parametrize("order", [list(range(len(ROWS))), [9, 3, 3, 0, 8, 6, 2]])
def test_block_matches_rows_alone(order):
    lines, offsets = lines_of_rows(np.array(order, dtype=np.int64), *_columns(ROWS), LINE_BYTES)
    assert offsets[0] == 0 and offsets[-1] == len(lines)
    for j, i in enumerate(order):
        np.testing.assert_array_equal(lines[offsets[j]:offsets[j + 1]], _alone(ROWS[i]), err_msg=f"row {i}")


def test_a_row_keeps_a_first_line_equal_to_the_last_of_the_row_before():
    lines, offsets = lines_of_rows(np.array([0, 0], dtype=np.int64), *_columns([(0, 8, 8, 8, None)]), LINE_BYTES)
    assert lines.tolist() == [0, 0] and offsets.tolist() == [0, 1, 2]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 80), st.sampled_from(["back to back", "down", "same", "apart"]),
                          st.integers(0, 60)), min_size=1, max_size=6))
def test_rows_of_any_shape_match_their_lines_alone(specs):
    """Back-to-back rows (one range of lines, without a walk per element) among the other shapes."""
    stride_of = {"back to back": lambda e: e, "down": lambda e: -e, "same": lambda e: 0, "apart": lambda e: 3 * e + 5}
    rows = [(addr + (count * elem if kind == "down" else 0), elem, stride_of[kind](elem), count, None)
            for addr, elem, kind, count in specs]
    order = np.arange(len(rows), dtype=np.int64)
    lines, offsets = lines_of_rows(order, *_columns(rows), LINE_BYTES)
    for j, row in enumerate(rows):
        np.testing.assert_array_equal(lines[offsets[j]:offsets[j + 1]], _alone(row), err_msg=f"row {row}")


def test_one_element_touched_again_and_again_within_a_line_is_one_line_without_a_walk():
    """Stride 0 and 2^40 elements of one line: one line at once (a walk per element would take minutes and its
    first pass, sized by elements, terabytes); across a boundary the element's two lines alternate."""
    lines, offsets = lines_of_rows(np.array([0], dtype=np.int64), *_columns([(128, 8, 0, 1 << 40, None)]), LINE_BYTES)
    assert lines.tolist() == [2] and offsets.tolist() == [0, 1]
    lines, _ = lines_of_rows(np.array([0], dtype=np.int64), *_columns([(60, 8, 0, 3, None)]), LINE_BYTES)
    assert lines.tolist() == [0, 1, 0, 1, 0, 1]


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5000), st.integers(1, 80), st.integers(-200, 200), st.integers(0, 60))
def test_the_run_limit_counts_at_least_the_lines_a_row_replays(addr, elem, stride, count):
    """``simulator.engine.limits.trace_lines`` bounds the lines the replay walks for a row of any stride: rising,
    falling, overlapping (back and forth over a boundary) or none."""
    from types import SimpleNamespace

    from simulator.engine.limits import trace_lines
    from workloads.trace import TraceBuilder

    addr += max(0, -stride) * count  # no element below address 0
    tb = TraceBuilder()
    tb.access("host", "s", "read", addr, elem, stride, count)
    row = (addr, elem, stride, count, None)
    lines, _ = lines_of_rows(np.array([0], dtype=np.int64), *_columns([row]), LINE_BYTES)
    spec = SimpleNamespace(caches=SimpleNamespace(line_bytes=LINE_BYTES))
    assert trace_lines(spec, tb.to_table()) >= len(lines)
