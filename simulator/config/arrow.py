"""Arrow arrays built from their buffers and read back into numpy, without pandas.

``pyarrow.array``, ``pyarrow.scalar`` and ``to_numpy`` ask pandas whether their input is a pandas object, and
so import pandas (0.2 to 0.4 s) the first time one is called in a process, even for a numpy array or a list of
``str``. ``offsim run`` builds and reads its trace tables and results with the functions here instead, which
make the same arrays from numpy buffers; it imports no pandas (a study's figures and tables do). Input they
do not cover exactly (nulls, a value of another type, a number out of the column's range) goes to pyarrow's
own conversion, which converts or rejects it. Here, below ``simulator.config``, so that the workload
generators can use it too.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: the numpy dtype of each fixed-width Arrow type: built from (``arrow_array``) and read straight from
#: (``to_numpy``) its data buffer
_VIEWABLE: dict[pa.DataType, np.dtype] = {
    t: np.dtype(n) for t, n in ((pa.int8(), "i1"), (pa.int16(), "i2"), (pa.int32(), "i4"), (pa.int64(), "i8"),
                                (pa.uint8(), "u1"), (pa.uint16(), "u2"), (pa.uint32(), "u4"), (pa.uint64(), "u8"),
                                (pa.float32(), "f4"), (pa.float64(), "f8"))}
#: the numpy kinds a column of each Arrow type takes as is (others go through pyarrow.array)
_KINDS_OF: dict[pa.DataType, str] = {pa.int64(): "iu", pa.int32(): "iu", pa.float64(): "fiu", pa.bool_(): "b"}


def arrow_array(values: Sequence[Any] | np.ndarray, type: pa.DataType) -> pa.Array:
    """``values`` (a sequence or a 1-D numpy array) as an Arrow array of ``type``, equal to
    ``pyarrow.array(values, type=type)``: built from buffers for int64, int32, float64, bool and string
    values without nulls, through ``pyarrow.array`` otherwise."""
    if type == pa.string():
        built = _string_array(values)
    elif type in _KINDS_OF:
        built = _fixed_width_array(values, type)
    else:
        built = None
    return pa.array(values, type=type) if built is None else built


def _fixed_width_array(values: Sequence[Any] | np.ndarray, type: pa.DataType) -> pa.Array | None:
    """An int, float or bool array from a numpy copy of ``values``, or None if numpy would change a value
    (a bool among numbers, an integer a float64 cannot hold exactly, a masked array's nulls)."""
    if isinstance(values, np.ma.MaskedArray):
        return None
    if not isinstance(values, np.ndarray) and type != pa.bool_():
        kinds = set(map(builtins.type, values))  # one C-level pass; the value checks below only when needed
        if bool in kinds or (type == pa.float64() and int in kinds
                             and not all(-2**53 <= v <= 2**53 for v in values if builtins.type(v) is int)):
            return None  # numpy would make a bool a number, or round an integer a float64 cannot hold
    try:
        data = values if isinstance(values, np.ndarray) else np.array(values)
    except (OverflowError, ValueError):
        return None
    if data.ndim != 1 or (data.size and data.dtype.kind not in _KINDS_OF[type]):
        return None
    if type == pa.bool_():
        packed = np.packbits(data.astype(bool, copy=False), bitorder="little")
        return pa.Array.from_buffers(type, data.size, [None, pa.py_buffer(packed)])
    dtype = _VIEWABLE[type]
    if data.dtype != dtype:
        if data.size and data.dtype.kind in "iu" and not _fits(data, dtype):
            return None  # out of the column's range: pyarrow.array says so
        data = data.astype(dtype)
    return pa.Array.from_buffers(type, data.size, [None, pa.py_buffer(np.ascontiguousarray(data))])


def _fits(data: np.ndarray, dtype: np.dtype) -> bool:
    """Whether every integer of ``data`` is exactly representable in ``dtype``."""
    if dtype.kind == "f":
        return bool(data.min() >= -2**53 and data.max() <= 2**53)
    info = np.iinfo(dtype)
    return bool(data.min() >= info.min and data.max() <= info.max)


def _string_array(values: Sequence[Any] | np.ndarray) -> pa.Array | None:
    """A string array from the UTF-8 bytes of ``values``, or None if some value is not a ``str``."""
    items = list(values)
    if not set(map(type, items)) <= {str}:
        return None
    joined = "".join(items)
    if joined.isascii():  # a character is a byte: lengths and bytes without encoding each item
        data, sized = joined.encode("ascii"), items
    else:
        sized = [v.encode() for v in items]
        data = b"".join(sized)
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, sized), dtype=np.int64, count=len(items)), out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        return None  # beyond a string array's offsets: pyarrow.array says so
    return pa.Array.from_buffers(pa.string(), len(items),
                                 [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def string_array(values: Sequence[str]) -> pa.Array:
    """``values`` as a string array (a value set for ``pyarrow.compute.is_in``, for one)."""
    return arrow_array(list(values), pa.string())


def arrow_scalar(value: Any, type: pa.DataType) -> pa.Scalar:
    """``value`` as an Arrow scalar of ``type``, equal to ``pyarrow.scalar(value, type)`` (which, like
    ``pyarrow.array``, imports pandas); for a compute function's operand."""
    return arrow_array([value], type)[0]


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """``values`` as a numpy array, equal to ``values.to_numpy(zero_copy_only=False)`` (which imports
    pandas): a read-only view of a number array's buffer (one chunk, no nulls), a fresh array otherwise
    (several chunks; bool; string, as Python objects). Other types and nulls go through ``to_numpy``."""
    dtype = _numpy_dtype(values.type)
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            return to_numpy(values.chunk(0))
        if values.null_count or dtype is None:
            return values.to_numpy()
        return np.concatenate([to_numpy(chunk) for chunk in values.chunks]) if values.num_chunks else np.empty(0, dtype)
    if values.null_count or dtype is None:
        return values.to_numpy(zero_copy_only=False)
    if not len(values):  # its data buffer may be absent
        return np.empty(0, dtype)
    if values.type == pa.bool_():
        bits = np.frombuffer(values.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, count=values.offset + len(values), bitorder="little")[values.offset:].astype(bool)
    if values.type == pa.string():
        return np.array(values.to_pylist(), dtype=object)
    view = np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize)
    view.flags.writeable = False  # Arrow's memory: read-only, as pyarrow's own view is
    return view


def _numpy_dtype(type: pa.DataType) -> np.dtype | None:
    """The numpy dtype :func:`to_numpy` gives an array of ``type`` without pyarrow's help (None: none)."""
    if type == pa.bool_():
        return np.dtype(bool)
    return np.dtype(object) if type == pa.string() else _VIEWABLE.get(type)


def list_lengths(lists: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The number of items of each list of ``lists``, 0 for a null list (numpy array of integers)."""
    lengths = pc.list_value_length(lists)
    return to_numpy(pc.fill_null(lengths, arrow_scalar(0, lengths.type)))
