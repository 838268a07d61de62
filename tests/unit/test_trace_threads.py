"""Tests of the trace's optional ``thread`` column and its barrier and join rows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from workloads.trace import (
    THREADED_TRACE_SCHEMA,
    TRACE_SCHEMA,
    TraceBuilder,
    TraceError,
    iter_trace,
    read_trace,
    thread_ids,
    validate_trace,
    write_trace,
    write_trace_csv,
)


def two_threads() -> TraceBuilder:
    """Thread 0 and thread 1 each read, meet at a barrier, then thread 0 joins thread 1."""
    b = TraceBuilder()
    b.access("host", "load", "read", 0, 8, 8, 64, thread=0)          # 0
    b.access("host", "load", "read", 4096, 8, 8, 64, thread=1)       # 1
    b.barrier(thread=0)                                              # 2
    b.barrier(thread=1)                                              # 3
    b.compute("host", "work", flops=100, thread=1)                   # 4
    b.join([1], thread=0)                                            # 5
    return b


def replace(table: pa.Table, column: str, row: int, value: object) -> pa.Table:
    values = table.column(column).to_pylist()
    values[row] = value
    idx = table.schema.get_field_index(column)
    return table.set_column(idx, table.schema.field(column), pa.array(values, type=table.schema.field(column).type))


def test_a_builder_without_threads_writes_no_thread_column() -> None:
    b = TraceBuilder()
    b.compute("host", "a", flops=1)
    b.barrier()  # one thread: a barrier it alone reaches
    table = b.to_table()
    assert table.schema.equals(TRACE_SCHEMA, check_metadata=True)
    assert thread_ids(table).tolist() == [0, 0]


def test_a_threaded_trace_has_the_column_and_round_trips(tmp_path) -> None:
    table = two_threads().to_table()
    assert table.schema.equals(THREADED_TRACE_SCHEMA, check_metadata=True)
    assert thread_ids(table).tolist() == [0, 1, 0, 1, 1, 0]
    assert table.column("params").to_pylist()[2:6:3] == ["{}", '{"threads": [1]}']
    for name, write in (("t.parquet", write_trace), ("t.csv", write_trace_csv)):
        write(table, tmp_path / name)
        assert read_trace(tmp_path / name).equals(table)


def test_a_hand_written_csv_with_threads_reads(tmp_path) -> None:
    path = tmp_path / "t.csv"
    header = "unit,stage,op,addr,elem_bytes,stride_bytes,count,addrs,flops,cycles,dependent,params,thread\n"
    path.write_text(header + "host,a,compute,0,0,0,0,,5,0,false,,0\n" + "host,a,compute,0,0,0,0,,5,0,false,,2\n")
    assert thread_ids(read_trace(path)).tolist() == [0, 2]


def test_unbalanced_barriers_name_the_excess_barrier_row() -> None:
    b = two_threads()
    b.barrier(thread=1)  # row 6: thread 1's second barrier, thread 0 has one
    with pytest.raises(TraceError, match=r"^<memory>: row 6, column 'op': as many barriers on every thread with "
                                         r"rows: thread 1 reaches 2, thread 0 only 1$"):
        b.to_table()


def test_a_thread_without_barriers_is_unbalanced_too() -> None:
    b = TraceBuilder()
    b.compute("host", "a", thread=0)
    b.compute("host", "a", thread=1)
    b.barrier(thread=0)
    with pytest.raises(TraceError, match=r"row 2, column 'op': .*thread 0 reaches 1, thread 1 only 0"):
        b.to_table()


@pytest.mark.parametrize("threads, thread, says", [
    ([0], 0, r"row 1, column 'params': threads other than the row's own \(0\): a thread cannot join itself"),
    ([3], 0, r"row 1, column 'params': threads that have rows in the trace; thread 3 has none"),
])
def test_bad_joins_are_refused(threads, thread, says) -> None:
    b = TraceBuilder()
    b.compute("host", "a", thread=1)
    b.join(threads, thread=thread)
    with pytest.raises(TraceError, match=says):
        b.to_table()


@pytest.mark.parametrize("row, column, value, says", [
    (5, "params", '{"threads": []}', r"row 5, column 'params': a JSON object \{\"threads\""),
    (5, "params", '{"threads": [1, 1]}', r"row 5, column 'params': a JSON object"),
    (5, "params", '{"threads": [1], "x": 1}', r"row 5, column 'params': a JSON object"),
    (5, "params", "[" * 5000 + "]" * 5000, r"row 5, column 'params': a JSON object"),
    (5, "params", '{"threads": [1], "threads": [2]}', r"row 5, column 'params': a JSON object"),  # a key twice
    (2, "params", '{"unit": "lap"}', r"row 2, column 'params': '\{\}' for a barrier"),
    (2, "unit", "lap", r"row 2, column 'unit': 'lap'; expected 'host' for a barrier or join"),
    (2, "flops", 3, r"row 2, column 'flops': 3; expected 0 for a barrier or join"),
    (1, "thread", -1, r"row 1, column 'thread': a thread id in \[0, 1024\)"),
    (4, "thread", 5000, r"row 4, column 'thread': a thread id in \[0, 1024\)"),
])
def test_bad_sync_rows_name_row_and_column(row, column, value, says) -> None:
    table = replace(two_threads().to_table(), column, row, value)
    with pytest.raises(TraceError, match=says):
        validate_trace(table, "t.parquet", units=["host", "lap"])


def test_builder_refuses_a_bad_thread_id() -> None:
    b = TraceBuilder()
    with pytest.raises(TraceError, match=r"row 0, column 'thread': a thread id in \[0, 1024\)"):
        b.compute("host", "a", thread=-2)
    with pytest.raises(TraceError, match=r"row 0, column 'params': a non-empty list of thread ids"):
        b.join([])


def test_streamed_batches_skip_the_rules_that_span_threads(tmp_path) -> None:
    path = tmp_path / "t.parquet"
    write_trace(two_threads().to_table(), path)
    batches = list(iter_trace(path, batch_rows=3))  # the first batch holds one barrier of two
    assert [len(b) for b in batches] == [3, 3]


def test_a_cycle_of_joins_is_a_deadlock() -> None:
    b = TraceBuilder()
    b.join([1], thread=0)   # row 0
    b.join([0], thread=1)   # row 1
    with pytest.raises(TraceError, match=r"row 0, column 'params': joins that can end: thread 0 waits here for "
                                         r"threads \[1\]"):
        b.to_table()


def test_a_join_of_a_thread_at_a_barrier_is_a_deadlock() -> None:
    b = TraceBuilder()
    b.join([1], thread=0)   # row 0: thread 1 cannot finish, its barrier waits for thread 0
    b.barrier(thread=0)     # row 1
    b.barrier(thread=1)     # row 2
    with pytest.raises(TraceError, match=r"row 0, column 'params': joins that can end"):
        b.to_table()


def test_joins_after_barriers_and_chains_of_joins_are_fine() -> None:
    b = TraceBuilder()
    for t in range(3):
        b.barrier(thread=t)
    b.join([2], thread=1)
    b.join([1], thread=0)
    assert len(b.to_table()) == 5
