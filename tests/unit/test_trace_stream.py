"""Traces streamed in batches: the FMM generator's batches, their replay, and the offload lines made in chunks."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from simulator.errors import ConfigError
from simulator.config.loader import PROJECT_ROOT
from simulator.interconnect.interface import region_line_chunks, region_lines
from simulator.runner import simulate_trace
from workloads.fmm_ulist import build_problem, split_blocks, ulist_stream, ulist_trace
from workloads.trace import TraceBuilder
from workloads.trace_stream import TraceStream

SYSTEMS = {"lap": PROJECT_ROOT / "configs" / "systems" / "lap_dram.yaml",
           "cpu": PROJECT_ROOT / "configs" / "systems" / "i7_920_ddr3.yaml"}


@pytest.fixture(scope="module")
def problem():
    return build_problem(4, n_points=6000, density="uniform")


@pytest.mark.parametrize("variant, placement, blocks", [("orig", "cpu", 1), ("pipelining", "lap", 3)])
def test_the_stream_is_the_trace_in_small_batches_and_replays_to_the_same_results(problem, variant, placement,
                                                                                 blocks) -> None:
    stream = ulist_stream(problem, variant, placement, split_blocks(problem, blocks), batch_rows=100)
    batches = list(stream)
    table = ulist_trace(problem, variant, placement, split_blocks(problem, blocks))
    assert len(batches) > 3 and stream.rows == table.num_rows
    assert max(b.num_rows for b in batches[:-1]) < 300  # a batch ends after the group that reaches 100 rows
    assert pa.concat_tables(batches).equals(table)
    streamed = simulate_trace(SYSTEMS[placement],
                              ulist_stream(problem, variant, placement, split_blocks(problem, blocks), batch_rows=100))
    assert streamed.rows == simulate_trace(SYSTEMS[placement], table).rows


def _batch(rows: list[tuple[int, int]]) -> pa.Table:
    tb = TraceBuilder()
    for addr, count in rows:
        tb.access("host", "s", "read", addr, 8, 8, count)
    return tb.to_table()


def test_a_bad_row_of_a_later_batch_is_named_by_its_row_in_the_stream() -> None:
    bad = _batch([(0, 4), (0, 4)]).to_pydict()
    bad["unit"][1] = "nowhere"
    stream = TraceStream([_batch([(0, 4)] * 3), pa.Table.from_pydict(bad, schema=_batch([]).schema)])
    with pytest.raises(ConfigError, match=r"<memory>: row 4, column 'unit': unit 'nowhere' is not in the system"):
        simulate_trace(SYSTEMS["cpu"], stream)


def test_the_size_limits_of_a_stream_are_checked_on_its_batches_so_far(monkeypatch) -> None:
    monkeypatch.setattr("simulator.engine.limits.MAX_TRACE_LINES", 100)
    ran = []
    stream = TraceStream(ran.append(k) or _batch([(0, 8 * 40)]) for k in range(5))  # some 42 lines a batch
    with pytest.raises(ConfigError, match=r"touch up to 1\d\d lines of 64 B .* expected at most 100"):
        simulate_trace(SYSTEMS["cpu"], stream)
    assert ran == [0, 1, 2]  # stopped at the batch that went beyond


def _first_appearance(regions: list[list[int]], line_bytes: int) -> np.ndarray:
    lines = [line for a, n in regions if n > 0 for line in range(a // line_bytes, (a + n - 1) // line_bytes + 1)]
    return np.array(list(dict.fromkeys(lines)), dtype=np.int64)


def test_region_lines_come_once_in_order_of_first_appearance_and_in_chunks_of_the_same_order() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        regions = [[int(rng.integers(0, 4000)), int(rng.integers(0, 900))] for _ in range(rng.integers(0, 6))]
        regions += regions[:1]  # an input that is also an output
        want = _first_appearance(regions, 64)
        assert np.array_equal(region_lines(regions, 64), want)
        chunks = list(region_line_chunks(regions, 64, 5))
        assert all(len(c) == 5 for c in chunks[:-1])
        assert np.array_equal(np.concatenate(chunks) if chunks else np.zeros(0, np.int64), want)
