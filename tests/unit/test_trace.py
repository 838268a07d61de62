"""Tests of the operation-trace schema, builder, validation, Parquet I/O and line expansion."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.trace import (
    OPS,
    TRACE_SCHEMA,
    AddressSpace,
    TraceBuilder,
    TraceError,
    element_lines,
    gather_lines,
    iter_trace,
    read_trace,
    trace_summary,
    validate_trace,
    write_trace,
    write_trace_csv,
)


def sample_table() -> pa.Table:
    """One row of every op kind (row numbers are used by the tests below)."""
    b = TraceBuilder()
    b.compute("host", "setup", flops=12, cycles=0.1 + 0.2)            # 0
    b.access("host", "stream", "read", 4096, 8, 8, 100, flops=200)    # 1
    b.access("host", "stream", "write", 8192, 8, -16, 10)             # 2
    b.access("host", "stream", "update", 1000, 4, 0, 3, cycles=7.5)   # 3
    b.gather("host", "rand", "read", np.array([64, 8, 4096]), 8, dependent=True)  # 4
    b.region("host", "copy", "flush", 0, 4096)                        # 5
    b.access("host", "copy", "evict_llc", 0, 64, 64, 2)               # 6
    b.access("host", "copy", "invalidate", 0, 64, 64, 2)              # 7
    b.offload("host", "gemm", "lap", m=64, n=64, k=64, a_addr=4096)   # 8
    b.wait("host", "gemm", "lap")                                     # 9
    b.access("lap", "gemm", "read", 4096, 8, 8, 512, flops=1024)      # 10
    return b.to_table()


def replace(table: pa.Table, column: str, row: int, value: object) -> pa.Table:
    """``table`` with one cell changed (no validation)."""
    values = table.column(column).to_pylist()
    values[row] = value
    idx = table.schema.get_field_index(column)
    field = table.schema.field(column).with_nullable(True)
    return table.set_column(idx, field, pa.array(values, type=field.type))


# --------------------------------------------------------------------------- schema and round trip


def test_schema_columns_and_ops() -> None:
    assert TRACE_SCHEMA.names == ["unit", "stage", "op", "addr", "elem_bytes", "stride_bytes",
                                  "count", "addrs", "flops", "cycles", "dependent", "params"]
    assert TRACE_SCHEMA.field("addrs").type == pa.list_(pa.field("element", pa.int64()))
    assert TRACE_SCHEMA.field("cycles").type == pa.float64()
    assert OPS == ("compute", "read", "write", "update", "zero", "flush", "evict_llc", "invalidate",
                   "offload", "wait", "barrier", "join")
    assert sample_table().schema.equals(TRACE_SCHEMA, check_metadata=True)


def test_parquet_round_trip_is_bit_identical(tmp_path) -> None:
    table = sample_table()
    path = tmp_path / "trace.parquet"
    write_trace(table, path)
    back = read_trace(path)
    assert back.equals(table, check_metadata=True)
    assert back.column("cycles")[0].as_py() == 0.1 + 0.2
    assert back.column("addrs")[4].as_py() == [64, 8, 4096]
    assert back.column("addrs")[1].as_py() is None
    # Writing the re-read table gives the same bytes.
    path2 = tmp_path / "again.parquet"
    write_trace(back, path2)
    assert path.read_bytes() == path2.read_bytes()


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path) -> None:
    path = tmp_path / "trace.parquet"
    write_trace(sample_table(), path)
    before = path.read_bytes()
    bad = replace(sample_table(), "flops", 0, -1)
    with pytest.raises(TraceError):
        write_trace(bad, path)
    assert path.read_bytes() == before
    write_trace(TraceBuilder().to_table(), path)      # overwrite with an empty trace
    assert len(read_trace(path)) == 0
    assert os.listdir(tmp_path) == ["trace.parquet"]


def test_a_written_trace_takes_the_umasks_permissions(tmp_path) -> None:
    """0640 under umask 027, as an ordinary file would be, not a temporary file's private 0600."""
    old = os.umask(0o027)
    try:
        write_trace(sample_table(), tmp_path / "trace.parquet")
    finally:
        os.umask(old)
    assert oct((tmp_path / "trace.parquet").stat().st_mode & 0o777) == "0o640"


def test_iter_trace_streams_batches_with_file_row_numbers(tmp_path) -> None:
    table = sample_table()
    path = tmp_path / "trace.parquet"
    write_trace(table, path)
    batches = list(iter_trace(path, batch_rows=4))
    assert [len(t) for t in batches] == [4, 4, 3]
    assert pa.concat_tables(batches).equals(table)
    pq.write_table(replace(table, "count", 9, 5), path)
    with pytest.raises(TraceError, match=r"row 9, column 'count'"):
        list(iter_trace(path, batch_rows=4))


def test_dictionary_unit_is_accepted() -> None:
    table = sample_table()
    idx = table.schema.get_field_index("unit")
    enc = table.set_column(idx, pa.field("unit", pa.dictionary(pa.int32(), pa.string())),
                           table.column("unit").dictionary_encode())
    validate_trace(enc, units={"host", "lap"})


# --------------------------------------------------------------------------- validation errors

ROW_CASES = [
    # (column, row, new value, expectation fragment)
    ("op", 1, "load", "one of compute, read"),
    ("unit", 2, None, "a value, got null"),
    ("stage", 3, "", "non-empty stage"),
    ("elem_bytes", 1, 0, "0; expected elem_bytes >= 1"),
    ("count", 2, -1, "-1; expected count >= 0"),
    ("count", 4, 2, "whole multiple (>= 1) of len(addrs) = 3"),
    ("count", 4, 7, "whole multiple (>= 1) of len(addrs) = 3"),
    ("flops", 1, -5, "-5; expected flops in [0, 2**53]"),
    ("flops", 1, 2**62, "flops in [0, 2**53]"),  # beyond what the float64 timing holds exactly
    ("cycles", 3, float("nan"), "a cycle count in [0, 2**53]"),
    ("cycles", 0, -1.0, "a cycle count in [0, 2**53]"),
    ("cycles", 0, 1e308, "a cycle count in [0, 2**53]"),
    ("addr", 1, -64, "-64; expected a byte address in [0, 2**62)"),
    ("stride_bytes", 2, -2000, "walks below 0"),
    ("stride_bytes", 1, 2**61, "2305843009213693952; expected every element below byte 2**62"),
    ("count", 1, 10**18, "1000000000000000000; expected every element below byte 2**62"),  # a long run of elements
    ("elem_bytes", 1, 2**62, "4611686018427387904; expected an element below 2**62 bytes"),
    ("addr", 1, 2**62 - 8, "4611686018427387896; expected every element below byte 2**62"),  # its end passes it
    ("count", 0, 3, "3; expected 0 for a non-memory op"),
    ("elem_bytes", 9, 8, "0 for a non-memory op"),
    ("addrs", 0, [1, 2], "null for a non-memory op"),
    ("addrs", 4, [64, -8, 0], "byte addresses in [0, 2**62)"),
    ("addr", 4, 64, "0 when explicit addrs are given"),
    ("params", 1, "{}", "'' for an op that is not offload/wait"),
    ("params", 8, "{bad json", "a JSON object"),
    ("params", 8, "[1, 2]", "a JSON object"),
    ("params", 8, "[" * 5000 + "]" * 5000, "a JSON object, got '[[[["),  # deeper than the decoder goes
    ("params", 8, '{"unit": "lap", "m": 64, "m": 65}', "a JSON object with each key once, got 'm' twice"),
    ("params", 9, '{"m": 1}', 'non-empty string "unit"'),
]


@pytest.mark.parametrize(("column", "row", "value", "expected"), ROW_CASES)
def test_each_row_error_names_file_row_column_and_expectation(tmp_path, column, row, value,
                                                              expected) -> None:
    path = tmp_path / "trace.parquet"
    pq.write_table(replace(sample_table(), column, row, value), path)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    err = info.value
    msg = str(err)
    assert msg.startswith(f"{path}: row {row}, column '{column}': ")
    assert expected in msg
    assert (err.source, err.row, err.column) == (str(path), row, column)
    # The same error in memory names "<memory>".
    with pytest.raises(TraceError, match=rf"^<memory>: row {row}, column '{column}'"):
        validate_trace(replace(sample_table(), column, row, value))


def test_unknown_unit_message_matches_the_documented_form() -> None:
    b = TraceBuilder()
    for _ in range(17):
        b.compute("host", "s", flops=1)
    b.access("lap", "gemm", "read", 0, 8, 8, 4)
    table = b.to_table()
    with pytest.raises(TraceError) as info:
        validate_trace(table, "trace.parquet", units=["host"])
    assert str(info.value) == ("trace.parquet: row 17, column 'unit': unit 'lap' is not in the "
                               "system (it has: host)")


def test_offload_target_must_be_in_the_system() -> None:
    with pytest.raises(TraceError, match=r"row 8, column 'params': target unit 'lap' is not in"):
        validate_trace(sample_table().slice(0, 10), units=["host", "crypto"])
    validate_trace(sample_table(), units=["host", "lap"])


def test_error_counts_further_bad_rows() -> None:
    table = replace(replace(sample_table(), "flops", 1, -1), "flops", 10, -2)
    with pytest.raises(TraceError, match=r"row 1, column 'flops': -1; expected flops in \[0, 2\*\*53\] \(workloads.trace.MAX_ROW_FLOPS\) \(1 more rows"):
        validate_trace(table)


@pytest.mark.parametrize(("change", "column", "expected"), [
    (lambda t: t.drop_columns(["flops"]), "flops", "missing"),
    (lambda t: t.append_column("extra", pa.array([0] * len(t))), "extra", "no such column"),
    (lambda t: t.set_column(t.schema.get_field_index("flops"), "flops",
                            t.column("flops").cast(pa.float64())), "flops", "type int64 (or one that converts to "
                                                                        "it), got double"),
    (lambda t: t.set_column(t.schema.get_field_index("addrs"), "addrs",
                            t.column("addrs").cast(pa.list_(pa.float64()))), "addrs", "type list"),
    (lambda t: t.set_column(t.schema.get_field_index("addr"), "addr",
                            pa.array([2**63] * len(t), pa.uint64())), "addr", "values that fit int64, got uint64"),
])
def test_schema_errors_name_file_and_column(tmp_path, change, column, expected) -> None:
    path = tmp_path / "trace.parquet"
    pq.write_table(change(sample_table()), path)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    assert str(info.value).startswith(f"{path}: column '{column}': ")
    assert expected in str(info.value)
    assert info.value.row is None


def test_not_a_table_is_rejected() -> None:
    with pytest.raises(TraceError, match="a pyarrow.Table"):
        validate_trace({"op": ["read"]})  # type: ignore[arg-type]


# --------------------------------------------------------------------------- unreadable files


def test_missing_file_and_directory(tmp_path) -> None:
    with pytest.raises(TraceError, match=r"nope\.parquet: an existing Parquet or CSV trace file"):
        read_trace(tmp_path / "nope.parquet")
    with pytest.raises(TraceError, match="it is a directory"):
        read_trace(tmp_path)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "bad_tail"])
def test_corrupt_files_raise_trace_error_naming_the_file(tmp_path, damage) -> None:
    path = tmp_path / "trace.parquet"
    write_trace(sample_table(), path)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(bytes(range(256)) * 8)
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # the footer length points outside the file
        path.write_bytes(data[:-8] + (2**31 - 1).to_bytes(4, "little") + b"PAR1")
    with pytest.raises(TraceError) as info:
        read_trace(path)
    assert str(info.value).startswith(f"{path}: ")
    with pytest.raises(TraceError):
        list(iter_trace(path))


# --------------------------------------------------------------------------- builder


def test_builder_rejects_bad_rows_with_row_numbers() -> None:
    b = TraceBuilder()
    b.compute("host", "s", flops=1)
    with pytest.raises(TraceError, match=r"<memory>: row 1, column 'op'"):
        b.access("host", "s", "compute", 0, 8, 8, 1)
    with pytest.raises(TraceError, match=r"row 1, column 'elem_bytes'"):
        b.access("host", "s", "read", 0, 0, 8, 1)
    with pytest.raises(TraceError, match=r"row 1, column 'stride_bytes'"):
        b.access("host", "s", "read", 16, 8, -8, 4)
    with pytest.raises(TraceError, match=r"row 1, column 'addrs'"):
        b.gather("host", "s", "read", np.array([8, -8]), 8)
    with pytest.raises(TraceError, match=r"row 1, column 'params': JSON-serialisable"):
        b.offload("host", "s", "lap", blob=object())
    with pytest.raises(TraceError, match=r"row 1, column 'unit'"):
        b.compute("", "s")
    with pytest.raises(TraceError, match=r"row 1, column 'cycles'"):
        b.compute("host", "s", cycles=float("inf"))
    assert len(b) == 1


def test_gather_copies_its_addresses() -> None:
    addrs = np.array([0, 64, 128])
    b = TraceBuilder()
    b.gather("host", "s", "read", addrs, 8)
    addrs[0] = 999
    assert b.to_table().column("addrs")[0].as_py() == [0, 64, 128]


def test_gather_of_runs_counts_every_element_and_touches_the_runs_lines() -> None:
    b = TraceBuilder()
    b.gather("host", "s", "read", np.array([0, 1000]), 8, run=35)  # two leaves of 35 doubles (280 B)
    table = b.to_table()
    validate_trace(table, "runs")
    assert table.column("count")[0].as_py() == 70
    assert trace_summary(table)["bytes_read"] == 70 * 8
    # lines of [0, 280) then [1000, 1280): 0..4 and 15..19
    assert gather_lines(np.array([0, 1000]), 35 * 8, 64).tolist() == [0, 1, 2, 3, 4, 15, 16, 17, 18, 19]
    for bad in (0, 1.5, True):
        with pytest.raises(TraceError, match=r"column 'count'.*run of >= 1 whole elements"):
            b.gather("host", "s", "read", np.array([0]), 8, run=bad)


def test_gather_rows_append_what_gather_appends_and_check_what_they_share() -> None:
    by_gather, by_rows = TraceBuilder(), TraceBuilder()
    rows = [(np.array([0, 4096], dtype=np.int64), 6), (np.array([64], dtype=np.int64), 0)]
    add = by_rows.gather_rows("host", "perm", "update", 8, run=3, thread=2)
    for addrs, flops in rows:
        by_gather.gather("host", "perm", "update", addrs, 8, flops, run=3, thread=2)
        add(addrs, flops)
    assert by_rows.to_table().equals(by_gather.to_table())
    b = TraceBuilder()
    b.compute("host", "s")
    with pytest.raises(TraceError, match=r"row 1, column 'op'"):
        b.gather_rows("host", "s", "compute", 8)
    with pytest.raises(TraceError, match=r"row 1, column 'stage'"):
        b.gather_rows("host", "", "read", 8)
    with pytest.raises(TraceError, match=r"row 1, column 'count'"):
        b.gather_rows("host", "s", "read", 8, run=0)
    add = b.gather_rows("host", "s", "read", 8)
    for flops in (-1, 1.5):
        with pytest.raises(TraceError, match=r"row 1, column 'flops'"):
            add(np.array([0], dtype=np.int64), flops)
    add(np.array([-64], dtype=np.int64), 0)  # its addresses are checked with the table
    with pytest.raises(TraceError, match=r"row 1, column 'addrs'"):
        b.to_table()


def test_summary_totals() -> None:
    s = trace_summary(sample_table())
    assert s["rows"] == 11
    assert s["rows_per_op"] == {"compute": 1, "read": 3, "write": 1, "update": 1, "flush": 1,
                                "evict_llc": 1, "invalidate": 1, "offload": 1, "wait": 1}
    assert s["rows_per_unit"] == {"host": 10, "lap": 1}
    assert s["rows_per_stage"]["stream"] == 3
    assert s["flops"] == 12 + 200 + 1024
    assert s["cycles"] == pytest.approx(0.3 + 7.5)
    assert s["bytes_read"] == 800 + 12 + 24 + 4096
    assert s["bytes_written"] == 80 + 12
    assert s["bytes_touched"] == 800 + 80 + 12 + 24 + 4096
    assert s["bytes_maintained"] == 4096 + 128 + 128


# --------------------------------------------------------------------------- address space


def test_address_space_is_aligned_and_deterministic() -> None:
    def build() -> AddressSpace:
        sp = AddressSpace(base_addr=100)
        sp.alloc("a", 10)
        sp.alloc("b", 5000, align=64)
        sp.alloc("c", 1, align=1)
        return sp

    sp = build()
    assert [(k, v.addr, v.nbytes) for k, v in sp.layout().items()] == [
        ("a", 4096, 10), ("b", 4160, 5000), ("c", 9160, 1)]
    assert sp.end_addr == 9161
    assert build().layout() == sp.layout()
    with pytest.raises(ValueError, match="already allocated"):
        sp.alloc("a", 1)
    with pytest.raises(ValueError, match="align must be a power of two"):
        sp.alloc("d", 1, align=48)
    with pytest.raises(ValueError, match="nbytes must be >= 0"):
        sp.alloc("d", -1)
    with pytest.raises(ValueError, match="beyond the capacity"):
        AddressSpace(capacity_bytes=8192).alloc("big", 8193)
    with pytest.raises(ValueError, match="base_addr"):
        AddressSpace(base_addr=-1)


# --------------------------------------------------------------------------- line expansion


def reference_lines(starts: list[int], elem_bytes: int, line_bytes: int) -> list[int]:
    """Readable per-element reference for element_lines/gather_lines."""
    out: list[int] = []
    for s in starts:
        for line in range(s // line_bytes, (s + elem_bytes - 1) // line_bytes + 1):
            if not out or out[-1] != line:
                out.append(line)
    return out


@pytest.mark.parametrize(("args", "expected"), [
    ((0, 8, 8, 16, 64), [0, 1]),                    # contiguous, aligned
    ((60, 8, 8, 1, 64), [0, 1]),                    # one unaligned element spans two lines
    ((60, 8, 8, 2, 64), [0, 1]),
    ((4, 8, 16, 8, 64), [0, 1]),                    # stride < line
    ((60, 8, 16, 3, 64), [0, 1]),                   # stride < line, first element spans
    ((0, 8, 200, 4, 64), [0, 3, 6, 9]),             # stride > line
    ((60, 8, 200, 3, 64), [0, 1, 4, 7]),            # stride > line, element spans
    ((200, 8, -64, 4, 64), [3, 2, 1, 0]),           # negative stride
    ((64, 8, -8, 3, 64), [1, 0]),                   # negative contiguous
    ((124, 8, -64, 2, 64), [1, 2, 0, 1]),           # negative, spanning elements
    ((8, 8, 0, 5, 64), [0]),                        # zero stride within a line
    ((60, 8, 0, 3, 64), [0, 1, 0, 1, 0, 1]),        # zero stride, spanning element
    ((32, 200, 256, 2, 64), list(range(8))),        # elements larger than a line
    ((0, 128, 64, 2, 64), [0, 1, 2]),               # overlapping large elements
    ((0, 8, 8, 10, 48), [0, 1]),                    # line size not a power of two
    ((0, 8, 8, 0, 64), []),                         # no elements
])
def test_element_lines_hand_cases(args, expected) -> None:
    got = element_lines(*args)
    assert got.dtype == np.int64
    assert got.tolist() == expected


@settings(max_examples=300, deadline=None)
@given(addr=st.integers(0, 5000), elem=st.integers(1, 300), stride=st.integers(-300, 300),
       count=st.integers(0, 40), line=st.sampled_from([16, 48, 64, 128]))
def test_element_lines_matches_reference(addr, elem, stride, count, line) -> None:
    starts = [addr + i * stride for i in range(count)]
    if starts and min(starts) < 0:
        with pytest.raises(ValueError, match="stride_bytes"):
            element_lines(addr, elem, stride, count, line)
        return
    assert element_lines(addr, elem, stride, count, line).tolist() == \
        reference_lines(starts, elem, line)


@settings(max_examples=200, deadline=None)
@given(addrs=st.lists(st.integers(0, 10_000), max_size=50), elem=st.integers(1, 200),
       line=st.sampled_from([32, 64, 100]))
def test_gather_lines_matches_reference(addrs, elem, line) -> None:
    assert gather_lines(np.array(addrs, dtype=np.int64), elem, line).tolist() == \
        reference_lines(addrs, elem, line)


def test_gather_lines_hand_case() -> None:
    assert gather_lines(np.array([0, 8, 130, 60, 4]), 8, 64).tolist() == [0, 2, 0, 1, 0]


def test_line_expansion_scales_to_a_million_elements() -> None:
    n = 1_000_000
    assert element_lines(0, 8, 8, n, 64).size == n // 8
    assert element_lines(0, 64, 64, n, 64).tolist()[-1] == n - 1
    assert element_lines(0, 8, 4096, n, 64).size == n
    assert element_lines(n * 8, 8, -8, n, 64).size == n // 8 + 1


@pytest.mark.parametrize(("args", "name"), [
    ((0, 0, 8, 1, 64), "elem_bytes"), ((0, 8, 8, 1, 0), "line_bytes"),
    ((0, 8, 8, -1, 64), "count"), ((-8, 8, 8, 1, 64), "addr"), ((8, 8, -16, 2, 64), "stride_bytes"),
])
def test_element_lines_rejects_bad_arguments(args, name) -> None:
    with pytest.raises(ValueError, match=name):
        element_lines(*args)
    with pytest.raises(ValueError, match="addrs"):
        gather_lines(np.array([-1]), 8, 64)


def test_address_end_bytes_covers_strided_rows_and_listed_runs():
    from workloads.trace import address_end_bytes

    b = TraceBuilder()
    b.compute("host", "s", flops=1)
    b.access("host", "s", "read", 4096, 8, 8, 100)        # up to byte 4096 + 99 * 8 + 8 = 4896
    b.access("host", "s", "write", 8192, 8, -16, 10)      # walks down from 8192: ends at 8200
    b.access("host", "s", "read", 1 << 40, 8, 8, 0)       # no elements: touches nothing
    b.gather("host", "s", "read", np.array([100, 9000, 50]), 8, run=4)  # 9000 + 4 * 8 = 9032
    b.access("lap", "s", "read", 1 << 20, 8, 8, 2)        # another unit's row
    table = b.to_table()
    assert address_end_bytes(table) == 9032
    assert address_end_bytes(table, unit=None) == (1 << 20) + 16
    assert address_end_bytes(table, exact=False) >= 9032
    assert address_end_bytes(TraceBuilder().to_table()) == 0


def test_reader_errors_are_reported_on_one_bounded_line():
    from simulator.errors import one_line as _one_line

    assert _one_line(OSError("Couldn't deserialize thrift:\n  TProtocolException:\n Invalid data\n")) == (
        "Couldn't deserialize thrift: TProtocolException: Invalid data")
    assert len(_one_line(ValueError("x" * 500))) == 200


def test_descending_elements_across_a_line_boundary_touch_the_lower_line_first() -> None:
    # element 0 covers bytes 12..16 (lines 0 then 1), element 1 bytes 7..11 (line 0)
    assert element_lines(12, 5, -5, 2, 16).tolist() == [0, 1, 0]
    assert element_lines(64 * 8, 8, -8, 16, 64).tolist() == [8, 7, 6]


# --------------------------------------------------------------------------- column types and CSV


def _retyped(table: pa.Table, types: dict[str, object]) -> pa.Table:
    """``table`` with the columns named in ``types`` converted (a type, or "dictionary")."""
    for name, tp in types.items():
        column = table.column(name)
        column = column.dictionary_encode() if tp == "dictionary" else column.cast(tp)
        table = table.set_column(table.schema.get_field_index(name), name, column)
    return table


@pytest.mark.parametrize("types", [
    {"unit": pa.large_string(), "stage": pa.large_string(), "op": pa.large_string(), "params": pa.large_string()},
    {"unit": "dictionary", "stage": "dictionary", "op": "dictionary", "params": "dictionary"},
    {"addr": pa.uint32(), "elem_bytes": pa.uint8(), "stride_bytes": pa.int16(), "count": pa.int32(),
     "flops": pa.uint64(), "cycles": pa.float32(), "addrs": pa.large_list(pa.uint16())},
    {"cycles": pa.int64(), "addrs": pa.list_(pa.int32())},
])
def test_any_string_type_and_any_fitting_integer_width_reads_as_the_schema(tmp_path, types) -> None:
    table = sample_table()
    cycles = [0.25, 0, 0, 7.5, 0, 0, 0, 0, 0, 0, 0] if types.get("cycles") == pa.float32() else \
        [0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]  # values float32 or an integer column holds exactly
    table = table.set_column(table.schema.get_field_index("cycles"), TRACE_SCHEMA.field("cycles"),
                             pa.array(cycles, pa.float64()))
    written = _retyped(table, {"unit": pa.large_string()}) if types.get("unit") == "dictionary" else table
    path = tmp_path / "trace.parquet"  # (a dictionary of large strings too)
    pq.write_table(_retyped(written, types), path)
    back = read_trace(path)
    assert back.schema.equals(TRACE_SCHEMA, check_metadata=True)
    assert back.equals(table)
    assert pa.concat_tables(iter_trace(path, batch_rows=4)).equals(table)


def test_a_trace_written_by_pandas_reads_as_written(tmp_path) -> None:
    path = tmp_path / "trace.parquet"
    sample_table().to_pandas().to_parquet(path)
    assert read_trace(path).equals(sample_table())


def test_csv_trace_round_trip_is_identical(tmp_path) -> None:
    path = tmp_path / "trace.csv"
    write_trace_csv(sample_table(), path)
    back = read_trace(path)
    assert back.schema.equals(TRACE_SCHEMA, check_metadata=True)
    assert back.equals(sample_table())


HEADER = "unit,stage,op,addr,elem_bytes,stride_bytes,count,addrs,flops,cycles,dependent,params\n"


def test_hand_written_csv_trace_reads(tmp_path) -> None:
    path = _text(tmp_path / "t.csv", HEADER + 'host,s,read,0,8,8,4,,0,0,false,\n'
                                      'host,s,read,0,8,0,2, 64  128 ,0,0,true,\n'
                                      'host,s,compute,0,0,0,0,,100,2.5,false,\n')
    table = read_trace(path)
    assert table.column("addrs").to_pylist() == [None, [64, 128], None]
    assert table.column("dependent").to_pylist() == [False, True, False]


def test_a_csv_row_longer_than_arrows_default_block_reads(tmp_path, monkeypatch) -> None:
    """A gather of 400,000 addresses after a short row is a row of 3.4 MB, which straddles the 1 MiB blocks
    pyarrow parses by default; a row beyond the block the trace is read in is refused naming that block."""
    import workloads.trace as trace

    addrs = " ".join(str(64 * i) for i in range(400_000))
    path = _text(tmp_path / "t.csv", HEADER + "host,s,compute,0,0,0,0,,1,0,false,\n"
                 f"host,s,read,0,8,0,400000,{addrs},0,0,false,\n")
    assert len(read_trace(path).column("addrs")[1].as_py()) == 400_000
    monkeypatch.setattr(trace, "CSV_BLOCK_BYTES", 1 << 20)
    with pytest.raises(TraceError, match=r"t\.csv: .*a CSV trace whose rows are each at most 1,048,576 B"):
        read_trace(path)


def _text(path, text: str):
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, says", [
    ('host,s,read,0,8,0,2,64 x,0,0,false,\n', "row 0, column 'addrs': integer byte addresses (64-bit) separated"),
    ('host,s,read,0,8,0,1,,0,0,false,\nhost,s,read,0,8,0,1,99999999999999999999,0,0,false,\n',
     "row 1, column 'addrs': integer byte addresses (64-bit) separated by spaces (or nothing for none), got "
     "'99999999999999999999'"),
    ('host,s,read,zero,8,8,4,,0,0,false,\n', "row 0, column 'addr': a whole number (64-bit), got 'zero'"),
    ('host,s,compute,0,0,0,0,,1,0,false,\n' * 5 + 'host,s,compute,0,0,0,0,,1.5,0,false,\n' + 'host,s,compute,0,0,0,0,,x,0,false,\n',
     "row 5, column 'flops': a whole number (64-bit), got '1.5'"),
    ('host,s,compute,0,0,0,0,,1,0,false,\n' + 'host,s,compute,0,0,0,0,,1,1 cycle,false,\n',
     "row 1, column 'cycles': a number, got '1 cycle'"),
    ('host,s,compute,0,0,0,0,,1,0,yes,\n', "a readable CSV trace with a header line"),
    ('host,s,compute,0,0,0,0,,,0,false,\n', "row 0, column 'flops': a value, got null"),
    ('host,s,compute,0,0,0,0,,100,1e308,false,\n', "row 0, column 'cycles': 1e+308; expected a cycle count in [0, 2**53]"),
])
def test_bad_csv_trace_names_file_row_and_column(tmp_path, body, says) -> None:
    path = _text(tmp_path / "t.csv", HEADER + body)
    with pytest.raises(TraceError) as info:
        read_trace(path)
    assert str(info.value).startswith(f"{path}: ") and says in str(info.value)


def test_csv_trace_with_a_missing_column_is_refused(tmp_path) -> None:
    path = _text(tmp_path / "t.csv", HEADER.replace(",params", "") + "host,s,compute,0,0,0,0,,1,0,false\n")
    with pytest.raises(TraceError, match=r"t\.csv: column 'params': a column of type string, but it is missing"):
        read_trace(path)


def test_trace_files_beyond_the_row_limit_are_refused_before_reading(tmp_path, monkeypatch) -> None:
    import workloads.trace as trace

    parquet, csv = tmp_path / "t.parquet", tmp_path / "t.csv"
    write_trace(sample_table(), parquet)
    write_trace_csv(sample_table(), csv)
    monkeypatch.setattr(trace, "MAX_TRACE_ROWS", 10)
    for path in (parquet, csv):
        with pytest.raises(TraceError, match=r"at most 10 rows \(workloads.trace.MAX_TRACE_ROWS\), got 11"):
            read_trace(path)


def test_trace_files_beyond_the_address_limit_are_refused_before_their_lists_are_built(tmp_path, monkeypatch) -> None:
    """A gather of 40 addresses against a limit of 32: Parquet from its metadata (before reading), CSV from its
    separators (before splitting), and a table in memory by the lists' lengths; 32 addresses pass."""
    import workloads.trace as trace

    sources = {}
    for n in (32, 40):
        tb = TraceBuilder()
        tb.gather("host", "g", "read", np.arange(n) * 64, 8)
        table = tb.to_table()
        write_trace_csv(table, tmp_path / f"{n}.csv")
        write_trace(table, tmp_path / f"{n}.parquet")
        sources[n] = (tmp_path / f"{n}.parquet", tmp_path / f"{n}.csv", table)
    monkeypatch.setattr(trace, "MAX_TRACE_ADDRESSES", 32)

    def read(source):
        return validate_trace(source, "<memory>") if isinstance(source, pa.Table) else read_trace(source)

    for source in sources[32]:
        read(source)
    expected = r"column 'addrs': at most 32 explicit addresses in a trace \(workloads.trace.MAX_TRACE_ADDRESSES\), got "
    parquet, csv, table = sources[40]
    with pytest.raises(TraceError, match=expected + "at least 39$"):  # the metadata's bound: nothing read yet
        read(parquet)

    def no_split(*args, **kwargs):
        raise AssertionError("the CSV addresses were split before their count was checked")

    with monkeypatch.context() as m:
        m.setattr(trace.pc, "split_pattern_regex", no_split)
        with pytest.raises(TraceError, match=expected + "40$"):
            read(csv)
    with pytest.raises(TraceError, match=expected + "40$"):
        read(table)


def test_a_device_as_a_trace_is_refused_at_once() -> None:
    for path in ("/dev/zero", "/dev/null"):
        with pytest.raises(TraceError, match="not a regular file"):
            read_trace(path)


def test_labels_beyond_their_length_and_stages_beyond_their_count_are_refused(tmp_path, monkeypatch) -> None:
    """A unit name or stage label of 257 characters is refused by the builder and in a table; more distinct
    (unit, stage) pairs than MAX_TRACE_STAGES in a table, and in a file read whole or streamed."""
    import workloads.trace as trace

    with pytest.raises(TraceError, match=r"row 0, column 'stage': a non-empty stage label \(a string\) of at most "
                                         r"256 characters, got 'sss.*'\.\.\."):
        TraceBuilder().compute("host", "s" * 257, 1)
    for unit, stage, column, got in ((5, "s", "unit", "5"), ("host", None, "stage", "None")):
        with pytest.raises(TraceError, match=rf"column '{column}': .* got {got}$"):
            TraceBuilder().compute(unit, stage, 1)
    tb = TraceBuilder()
    tb.compute("host", "s" * 256, 1)
    long_label = tb.to_table()
    long_label = long_label.set_column(long_label.schema.get_field_index("stage"), "stage",
                                       pa.array(["s" * 257], pa.string()))
    with pytest.raises(TraceError, match=r"column 'stage': 's+\.\.\.; expected a stage label of at most 256 characters"):
        validate_trace(long_label, "<memory>")
    tb = TraceBuilder()
    for i in range(12):
        tb.compute("host", f"s{i % 6}", 1)
    table = tb.to_table()
    write_trace(table, tmp_path / "t.parquet")
    validate_trace(table, "<memory>")
    monkeypatch.setattr(trace, "MAX_TRACE_STAGES", 5)
    message = r"at most 5 distinct \(unit, stage\) pairs in a trace \(workloads.trace.MAX_TRACE_STAGES\), got 6"
    with pytest.raises(TraceError, match=message):
        validate_trace(table, "<memory>")
    with pytest.raises(TraceError, match=message):
        read_trace(tmp_path / "t.parquet")
    with pytest.raises(TraceError, match=message):
        list(iter_trace(tmp_path / "t.parquet", batch_rows=4))


def test_a_csv_nan_is_read_as_written_and_a_binary_file_is_quoted_in_escapes(tmp_path) -> None:
    """pyarrow would take "nan" for a missing value; only an empty field is one. A binary file's bytes, which
    the CSV reader quotes, reach the message as escapes, not as raw bytes."""
    path = _text(tmp_path / "t.csv", HEADER + "host,s,compute,0,0,0,0,,1,nan,false,\n")
    with pytest.raises(TraceError, match=r"row 0, column 'cycles': nan; expected a cycle count in \[0, 2\*\*53\]"):
        read_trace(path)
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(1, 256)) * 4)
    with pytest.raises(TraceError) as err:
        read_trace(binary)
    assert str(err.value).isprintable() and "\\x0e" in str(err.value)


def test_a_csv_value_pyarrow_cannot_convert_is_named_by_its_row_and_column(tmp_path) -> None:
    path = _text(tmp_path / "t.csv", HEADER + "host,s,compute,0,0,0,0,,NA,1,false,\n")
    with pytest.raises(TraceError, match=r"row 0, column 'flops': a whole number \(64-bit\), got 'NA'$"):
        read_trace(path)
    path = _text(tmp_path / "t.csv", HEADER + "host,s,compute,0,0,0,0,,1,1,nope,\n")  # not a number: its column
    with pytest.raises(TraceError, match=r"CSV column #10 \('dependent'\): CSV conversion error to bool"):
        read_trace(path)


def test_a_params_text_with_a_control_character_is_quoted_once(tmp_path) -> None:
    path = _text(tmp_path / "t.csv", HEADER + 'host,s,offload,0,0,0,0,,0,0,false,"\x01{x"\n')
    with pytest.raises(TraceError, match=r"column 'params': a JSON object, got '\\x01\{x'$"):
        read_trace(path)
