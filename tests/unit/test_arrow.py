"""simulator.config.arrow: the same arrays as pyarrow's own conversions, and a run that never imports pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulator.config.arrow import arrow_array, arrow_scalar, list_lengths, string_array, to_numpy

ROOT = Path(__file__).resolve().parents[2]

INT64 = st.integers(-2**63, 2**63 - 1)


@pytest.mark.parametrize("values, type", [
    ([1, 2, 3], pa.int64()), ([], pa.int64()), (np.arange(5, dtype=np.int32), pa.int32()),
    (np.arange(5, dtype=np.int64), pa.int32()), ([1, 2.5], pa.float64()), ([1, 2], pa.float64()),
    ([True, False, True] * 5, pa.bool_()), (np.zeros(9, dtype=bool), pa.bool_()), ([], pa.bool_()),
    (["host", "", "lap", "é"], pa.string()), ([], pa.string()), ([np.int64(7), 8], pa.int64()),
    ([1.5], pa.int64()),  # pyarrow truncates a float into an int column; so does arrow_array (through it)
])
def test_arrow_array_equals_pyarrow(values, type):
    built = arrow_array(values, type)
    expected = pa.array(values, type=type)
    assert built.type == type and built.equals(expected) and built.null_count == 0


@pytest.mark.parametrize("values, type, error", [
    ([2**63], pa.int64(), OverflowError), ([2**31], pa.int32(), (OverflowError, pa.ArrowInvalid)),
    (["a", 1], pa.string(), pa.ArrowTypeError), ([True, 2], pa.int64(), pa.ArrowTypeError),
    ([0.5, 2**53 + 1], pa.float64(), pa.ArrowInvalid),
    ([1, "a"], pa.int64(), pa.ArrowInvalid),
])
def test_arrow_array_rejects_what_pyarrow_rejects(values, type, error):
    with pytest.raises(error):
        pa.array(values, type=type)
    with pytest.raises(error):
        arrow_array(values, type)


def test_arrow_array_keeps_pyarrows_nulls():
    assert arrow_array([1, None], pa.int64()).equals(pa.array([1, None], pa.int64()))
    assert arrow_array(["a", None], pa.string()).null_count == 1
    masked = np.ma.MaskedArray([1, 2, 3], mask=[False, True, False])
    assert arrow_array(masked, pa.int64()).to_pylist() == [1, None, 3]


def test_large_addresses_stay_on_the_buffer_path(monkeypatch):
    """Addresses up to 2**62 in an int64 column are exact integers: built from buffers, not handed to pyarrow."""
    values = [2**62 - 1, 0, 2**53 + 1]
    texts = ["host", "lap", "é"]

    def refused(*args, **kwargs):
        raise AssertionError("pyarrow.array called: the buffer path refused its input")

    monkeypatch.setattr(pa, "array", refused)
    assert arrow_array(values, pa.int64()).to_pylist() == values
    assert arrow_array([0.5, 2**53], pa.float64()).to_pylist() == [0.5, 2.0**53]
    assert arrow_array(texts, pa.string()).to_pylist() == texts
    assert to_numpy(pa.Array.from_buffers(pa.int64(), 0, [None, None])).shape == (0,)


@given(st.lists(INT64, max_size=40), st.integers(0, 5))
def test_arrow_array_and_to_numpy_round_trip(values, cut):
    built = arrow_array(values, pa.int64()).slice(min(cut, len(values)))
    assert to_numpy(built).tolist() == values[min(cut, len(values)):]


@pytest.mark.parametrize("values", [
    pa.array(np.arange(5)), pa.array(np.arange(5)).slice(2), pa.array(np.arange(5, dtype=np.int32)),
    pa.array([1.5, 2.0]), pa.chunked_array([pa.array([1, 2]), pa.array([3])]), pa.chunked_array([], pa.int64()),
    pa.chunked_array([], pa.string()),
    pa.chunked_array([pa.array([4, 5])]), pa.array([True, False, True] * 5).slice(3),
    pa.chunked_array([pa.array([True]), pa.array([False, True])]), pa.array([], pa.bool_()),
    pa.array(["a", "bc"]).slice(1), pa.chunked_array([pa.array(["x"]), pa.array(["y"])]), pa.array([1, None]),
])
def test_to_numpy_equals_pyarrow(values):
    """Same dtype, values and writability as pyarrow's ``to_numpy(zero_copy_only=False)``."""
    got = to_numpy(values)
    expected = values.to_numpy() if isinstance(values, pa.ChunkedArray) else values.to_numpy(zero_copy_only=False)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.flags.writeable == expected.flags.writeable
    same = (got == expected) | (got != got) if got.dtype.kind == "f" else got == expected
    assert bool(np.all(same))


def test_scalar_string_set_and_list_lengths():
    assert arrow_scalar(0, pa.int32()) == pa.scalar(0, pa.int32())
    assert string_array(("read", "write")).equals(pa.array(["read", "write"]))
    lists = pa.array([[1, 2], None, [], [3]], pa.list_(pa.int64()))
    assert to_numpy(pa.array([2, 0, 0, 1], pa.int32())).tolist() == list_lengths(lists).tolist()


_NO_PANDAS_RUN = """
import pathlib, sys, tempfile
from simulator.cli import main
from simulator.runner import load_system, simulate_trace
from workloads.fmm_ulist import fmm_ulist
simulate_trace(load_system("configs/systems/lap_dram.yaml"), fmm_ulist(1, 2000, "uniform", "orig", "lap"))
with tempfile.TemporaryDirectory() as tmp:  # a hand-written CSV trace, run as offsim run runs it
    csv = pathlib.Path(tmp) / "t.csv"
    csv.write_text("unit,stage,op,addr,elem_bytes,stride_bytes,count,addrs,flops,cycles,dependent,params\\n"
                   "host,s,read,0,8,8,64,,0,0,false,\\nhost,s,read,0,8,0,2,4096 8192,0,0,false,\\n"
                   "host,s,compute,0,0,0,0,,100,0,false,\\n")
    (pathlib.Path(tmp) / "w.yaml").write_text("trace: t.csv\\n")
    assert main(["run", "configs/systems/i7_920_ddr3.yaml", str(pathlib.Path(tmp) / "w.yaml"),
                 "--out", str(pathlib.Path(tmp) / "run")]) == 0
print("pandas" in sys.modules)
"""


def test_a_run_does_not_import_pandas():
    """pyarrow imports pandas on its first ``pa.array``, ``pa.scalar`` or ``to_numpy`` (0.2 to 0.4 s of a run's
    start-up): a generated trace simulated, and ``offsim run`` of a CSV trace with its run directory written."""
    out = subprocess.run([sys.executable, "-c", _NO_PANDAS_RUN], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=300)
    assert out.stdout.split()[-1] == "False"
