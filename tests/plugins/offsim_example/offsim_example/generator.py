"""Generator ``filter_stream``: the host writes a buffer, offloads it to a ``filter`` unit, waits, reads the result."""

from __future__ import annotations

import pyarrow as pa

from workloads.trace import AddressSpace, TraceBuilder


def filter_stream(buffer_bytes: int = 1 << 20, unit: str = "filter") -> pa.Table:
    """Trace: write ``buffer_bytes`` (B) of input, filter it on accelerator ``unit`` into an output
    buffer of the same size, read the output back."""
    if isinstance(buffer_bytes, bool) or not isinstance(buffer_bytes, int) or buffer_bytes <= 0:
        raise ValueError(f"buffer_bytes must be a positive integer, got {buffer_bytes!r}")
    space = AddressSpace()
    src, dst = space.alloc("in", buffer_bytes), space.alloc("out", buffer_bytes)
    t = TraceBuilder()
    t.region("host", "produce", "write", src, buffer_bytes)
    t.offload("host", "filter", unit, op="filter", inputs=[[src, buffer_bytes]], outputs=[[dst, buffer_bytes]])
    t.wait("host", "filter", unit)
    t.region("host", "consume", "read", dst, buffer_bytes)
    return t.to_table()
