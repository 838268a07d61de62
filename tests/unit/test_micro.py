"""Tests of the micro workload generators: byte and flop totals, layout, determinism."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from workloads import micro
from workloads.micro import (
    GENERATORS,
    chase_order,
    compute_only,
    intensity,
    intensity_sweep,
    pointer_chase,
    random_access,
    stream,
    thread_slices,
)
from workloads.trace import MAX_TRACE_ROWS, AddressSpace, read_trace, trace_summary, validate_trace, write_trace

MIB = 1 << 20


def gathered(table: pa.Table) -> np.ndarray:
    """All explicit addresses of a trace, in row order."""
    return np.concatenate([np.asarray(a, dtype=np.int64) for a in table.column("addrs").to_pylist()])


# --------------------------------------------------------------------------- stream


@pytest.mark.parametrize(("kind", "reads", "writes", "flops_per_elem"), [
    ("read", 1, 0, 0), ("write", 0, 1, 0), ("copy", 1, 1, 0), ("scale", 1, 1, 1), ("add", 2, 1, 1),
    ("triad", 2, 1, 2),
])
def test_stream_byte_and_flop_totals(kind, reads, writes, flops_per_elem) -> None:
    array_bytes, repeats = 1 * MIB + 24, 3     # a partial last block
    s = trace_summary(stream(kind, array_bytes, repeats=repeats))
    assert s["bytes_read"] == reads * array_bytes * repeats
    assert s["bytes_written"] == writes * array_bytes * repeats
    assert s["flops"] == flops_per_elem * (array_bytes // 8) * repeats
    blocks = -(-array_bytes // (64 * 1024))
    assert s["rows"] == (reads + writes) * blocks * repeats
    assert s["rows_per_unit"] == {"host": s["rows"]}


def test_stream_flops_override_and_block_layout() -> None:
    table = stream("copy", 256 * 1024, elem_bytes=4, flops_per_elem=3, block_bytes=64 * 1024)
    rows = table.to_pylist()
    assert [r["op"] for r in rows] == ["read", "write"] * 4
    assert all(r["count"] == 16 * 1024 and r["elem_bytes"] == 4 == r["stride_bytes"] for r in rows)
    assert [r["flops"] for r in rows] == [0, 3 * 16 * 1024] * 4   # flops ride on the block's last row
    src = [r["addr"] for r in rows if r["op"] == "read"]
    dst = [r["addr"] for r in rows if r["op"] == "write"]
    assert np.diff(src).tolist() == [64 * 1024] * 3 == np.diff(dst).tolist()
    # Source and destination arrays do not overlap and are page aligned.
    assert abs(src[0] - dst[0]) >= 256 * 1024
    assert src[0] % 4096 == 0 == dst[0] % 4096


def test_stream_shares_an_address_space() -> None:
    sp = AddressSpace()
    stream("read", 8192, space=sp, stage="s1")
    t2 = stream("read", 8192, space=sp, stage="s2")
    assert t2.column("addr")[0].as_py() == sp["s2.a"].addr == 8192
    assert list(sp.layout()) == ["s1.a", "s2.a"]


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"kind": "stride", "array_bytes": 64}, "kind"),
    ({"kind": "read", "array_bytes": 64, "threads": 0}, "threads"),
    ({"kind": "read", "array_bytes": 60}, "array_bytes"),
    ({"kind": "read", "array_bytes": 0}, "array_bytes"),
    ({"kind": "read", "array_bytes": 64, "repeats": 0}, "repeats"),
    ({"kind": "read", "array_bytes": 64, "flops_per_elem": -1}, "flops_per_elem"),
    ({"kind": "read", "array_bytes": 64, "block_bytes": 12}, "block_bytes"),
])
def test_stream_rejects_bad_parameters(kwargs, name) -> None:
    with pytest.raises(ValueError, match=name):
        stream(**kwargs)


# --------------------------------------------------------------------------- random access


def test_random_access_addresses_and_totals() -> None:
    table = random_access(10_000, 1 * MIB, elem_bytes=8, seed=3)
    addrs = gathered(table)
    assert addrs.size == 10_000
    assert addrs.min() >= 0 and addrs.max() <= 1 * MIB - 8
    assert (addrs % 8 == 0).all()
    assert [len(a) for a in table.column("addrs").to_pylist()] == [4096, 4096, 1808]
    assert not any(table.column("dependent").to_pylist())
    s = trace_summary(table)
    assert (s["bytes_read"], s["bytes_written"], s["flops"]) == (80_000, 0, 0)
    # Uniform: each of 16 equal slices of the footprint gets its share (+-25 %).
    hist = np.bincount(addrs // (MIB // 16), minlength=16)
    assert (abs(hist - 10_000 / 16) < 0.25 * 10_000 / 16).all()


def test_random_access_update_reads_and_writes() -> None:
    s = trace_summary(random_access(100, 4096, elem_bytes=4, op="update"))
    assert (s["bytes_read"], s["bytes_written"], s["bytes_touched"]) == (400, 400, 400)
    with pytest.raises(ValueError, match="op"):
        random_access(100, 4096, op="flush")
    with pytest.raises(ValueError, match="footprint_bytes"):
        random_access(100, 4, elem_bytes=8)


def test_random_access_is_deterministic_by_seed() -> None:
    a = random_access(5000, MIB, seed=7)
    assert a.equals(random_access(5000, MIB, seed=7))
    assert not a.equals(random_access(5000, MIB, seed=8))


@pytest.mark.parametrize(("generator", "count", "what"), [
    (random_access, "n_accesses", "accesses"), (pointer_chase, "n_hops", "hops")])
def test_gather_rows_beyond_the_trace_limit_are_refused_before_anything_is_built(monkeypatch, generator, count,
                                                                                   what) -> None:
    """2**24 addresses one per row are 8 times the row limit: refused naming row_elems and the count, with the
    fewest addresses per row that fit, before the address space, the addresses or the trace exist."""
    def unbuilt(*args, **kwargs):
        raise AssertionError("built before the refusal")

    monkeypatch.setattr(micro, "AddressSpace", unbuilt)
    monkeypatch.setattr(micro, "TraceBuilder", unbuilt)
    monkeypatch.setattr(micro, "chase_order", unbuilt)
    least = -(-2**24 // MAX_TRACE_ROWS)
    with pytest.raises(ValueError, match=rf"^row_elems must be at least {least} for {count} = 16,777,216 \(a trace "
                       rf"holds at most {MAX_TRACE_ROWS:,} rows, a gather row of row_elems {what} each"):
        generator(2**24, MIB, row_elems=1)


@pytest.mark.parametrize("generator", [random_access, pointer_chase])
def test_gather_rows_at_the_trace_limit_are_built(monkeypatch, generator) -> None:
    monkeypatch.setattr(micro, "MAX_TRACE_ROWS", 10)
    assert generator(100, MIB, row_elems=10).num_rows == 10  # 10 rows: at the limit
    with pytest.raises(ValueError, match=r"^row_elems must be at least 10 for n_\w+ = 100 .*, got 9$"):
        generator(100, MIB, row_elems=9)  # 12 rows


# --------------------------------------------------------------------------- pointer chase


@pytest.mark.parametrize("stride_lines", [None, 5])
def test_pointer_chase_visits_every_line_once_per_cycle(stride_lines) -> None:
    footprint = 64 * 1024
    n_lines = footprint // 64
    table = pointer_chase(3 * n_lines + 17, footprint, seed=1, stride_lines=stride_lines)
    addrs = gathered(table)
    assert addrs.size == 3 * n_lines + 17
    assert all(table.column("dependent").to_pylist())
    assert set(table.column("elem_bytes").to_pylist()) == {8}
    assert (addrs % 64 == 0).all()
    lines = addrs // 64 - addrs.min() // 64
    for start in range(0, 3 * n_lines, n_lines):
        window = lines[start:start + n_lines]
        assert np.array_equal(np.sort(window), np.arange(n_lines))
    # Following the pointers is one cycle: the successor of each line is always the same.
    assert np.array_equal(lines[n_lines:2 * n_lines], lines[:n_lines])
    assert len({(a, b) for a, b in zip(lines[:-1], lines[1:])}) == n_lines


def test_pointer_chase_order_is_random_but_seeded() -> None:
    o1, o2 = chase_order(1000, seed=0), chase_order(1000, seed=1)
    assert np.array_equal(o1, chase_order(1000, seed=0))
    assert not np.array_equal(o1, o2)
    # Not a sequential walk: few successors are the next line.
    assert np.mean(np.diff(o1) == 1) < 0.05
    assert chase_order(7, stride_lines=3).tolist() == [0, 3, 6, 2, 5, 1, 4]
    with pytest.raises(ValueError, match="stride_lines must be coprime"):
        chase_order(8, stride_lines=2)
    assert pointer_chase(100, MIB, seed=4).equals(pointer_chase(100, MIB, seed=4))


# --------------------------------------------------------------------------- intensity sweep


@pytest.mark.parametrize("flops_per_byte", [0.0, 0.125, 1 / 3, 2.0, 16.0])
def test_intensity_totals_and_even_spread(flops_per_byte) -> None:
    total_bytes = 1 * MIB + 64 * 3
    table = intensity(flops_per_byte, total_bytes)
    s = trace_summary(table)
    assert s["bytes_read"] == total_bytes and s["bytes_written"] == 0
    assert s["flops"] == round(flops_per_byte * total_bytes)
    row_bytes = np.array(table.column("count").to_pylist()) * 8
    row_flops = np.array(table.column("flops").to_pylist())
    assert (abs(row_flops - flops_per_byte * row_bytes) <= 1).all()


def test_intensity_sweep_and_bad_intensity() -> None:
    tables = intensity_sweep([0.5, 1.0, 4.0], 64 * 1024)
    assert [trace_summary(t)["flops"] for t in tables] == [32 * 1024, 64 * 1024, 256 * 1024]
    with pytest.raises(ValueError, match="flops_per_byte"):
        intensity(-1.0, 4096)
    with pytest.raises(ValueError, match="flops_per_byte"):
        intensity(float("nan"), 4096)
    with pytest.raises(ValueError, match="intensities"):
        intensity_sweep([], 4096)


# --------------------------------------------------------------------------- compute only


def test_compute_only() -> None:
    table = compute_only(1001, rows=4)
    assert table.column("flops").to_pylist() == [250, 250, 250, 251]
    s = trace_summary(table)
    assert s["rows_per_op"] == {"compute": 4}
    assert s["bytes_touched"] == 0
    with pytest.raises(ValueError, match="rows"):
        compute_only(10, rows=0)
    with pytest.raises(ValueError, match="flops"):
        compute_only(-1)


# --------------------------------------------------------------------------- registry


def test_generators_registry_and_parquet_round_trip(tmp_path) -> None:
    assert GENERATORS == {"stream": stream, "random_access": random_access,
                          "pointer_chase": pointer_chase, "intensity": intensity,
                          "compute_only": compute_only}
    tables = {
        "stream": GENERATORS["stream"]("triad", 64 * 1024),
        "random_access": GENERATORS["random_access"](100, 4096),
        "pointer_chase": GENERATORS["pointer_chase"](100, 4096),
        "intensity": GENERATORS["intensity"](1.5, 4096),
        "compute_only": GENERATORS["compute_only"](10),
    }
    for name, table in tables.items():
        validate_trace(table, units={"host"})
        path = tmp_path / f"{name}.parquet"
        write_trace(table, path)
        assert read_trace(path).equals(table, check_metadata=True)


# --------------------------------------------------------------------------- threads


def covered_bytes(table: pa.Table, op: str, base: int, size: int) -> np.ndarray:
    """How many times each byte of [base, base + size) is touched by ``op`` rows (strided, stride = element)."""
    hits = np.zeros(size, dtype=np.int64)
    t = table.to_pydict()
    for o, addr, count, elem in zip(t["op"], t["addr"], t["count"], t["elem_bytes"]):
        if o == op and base <= addr < base + size:
            hits[addr - base:addr - base + count * elem] += 1
    return hits


def test_thread_slices_cover_the_elements_once_and_evenly() -> None:
    for n, threads in ((10, 3), (7, 7), (1 << 20, 4), (5, 8)):
        slices = thread_slices(n, threads)
        assert [start for start, _ in slices] == [sum(k for _, k in slices[:t]) for t in range(threads)]
        assert sum(k for _, k in slices) == n
        assert max(k for _, k in slices) - min(k for _, k in slices) <= 1
    with pytest.raises(ValueError, match="threads"):
        thread_slices(8, 0)


@pytest.mark.parametrize("kind", ["copy", "scale", "add", "triad"])
def test_threaded_stream_slices_cover_each_array_exactly_once(kind) -> None:
    array_bytes, threads, repeats = 1 * MIB + 24, 3, 2
    space = AddressSpace()
    table = stream(kind, array_bytes, repeats=repeats, threads=threads, space=space)
    serial = stream(kind, array_bytes, repeats=repeats)
    s, s1 = trace_summary(table), trace_summary(serial)
    assert (s["bytes_read"], s["bytes_written"], s["flops"]) == (s1["bytes_read"], s1["bytes_written"], s1["flops"])
    for name, alloc in space.layout().items():
        op = "write" if name.endswith(".a") else "read"
        assert np.all(covered_bytes(table, op, alloc.addr, array_bytes) == repeats), name
    t = table.to_pydict()
    for th in range(threads):  # each thread's rows stay inside its slice of every array
        start, n = thread_slices(array_bytes // 8, threads)[th]
        offs = [addr - space[f"stream.{'a' if op == 'write' else 'b'}"].addr for addr, op, x in
                zip(t["addr"], t["op"], t["thread"]) if x == th and op in ("read", "write")]
        if kind in ("copy", "scale"):
            assert min(offs) == start * 8 and max(offs) < (start + n) * 8
    # one barrier per thread and repeat, ending each repeat
    assert t["op"].count("barrier") == threads * repeats
    assert t["op"][-threads:] == ["barrier"] * threads and sorted(t["thread"][-threads:]) == list(range(threads))
    validate_trace(table)


def test_one_thread_is_the_serial_trace() -> None:
    for table in (stream("triad", 1 * MIB), intensity(0.5, 1 * MIB), compute_only(10**6, rows=4)):
        assert "thread" not in table.column_names
        assert "barrier" not in table.column("op").to_pylist()
    assert stream("triad", 1 * MIB, threads=1).equals(stream("triad", 1 * MIB))


def test_threaded_intensity_and_compute_only_keep_their_totals() -> None:
    table = intensity(1.5, 4 * MIB + 8, threads=4)
    s = trace_summary(table)
    assert (s["bytes_read"], s["flops"]) == (4 * MIB + 8, round(1.5 * (4 * MIB + 8)))
    assert sorted(set(table.column("thread").to_pylist())) == [0, 1, 2, 3]
    c = compute_only(10**6 + 3, rows=4, threads=4).to_pydict()
    per_thread = [sum(f for f, x, op in zip(c["flops"], c["thread"], c["op"]) if x == t and op == "compute")
                  for t in range(4)]
    assert sum(per_thread) == 10**6 + 3 and max(per_thread) - min(per_thread) <= 1
    with pytest.raises(ValueError, match="threads"):
        stream("copy", 64, threads=9)
