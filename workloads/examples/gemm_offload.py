"""A trace written by hand: the host fills A and B, offloads C = A B to a LAP, waits, then reads C.

The rows, in the columns of ``workloads.trace.TRACE_SCHEMA`` (byte addresses,
8 B doubles, row-major matrices of ``M x K``, ``K x N`` and ``M x N``):

====  =====  =========  =======  ========================================================
unit  stage  op         memory   other columns
====  =====  =========  =======  ========================================================
host  fill   write      A        ``M*K`` elements of 8 B from ``A_ADDR``, stride 8 B
host  fill   write      B        ``K*N`` elements of 8 B from ``B_ADDR``, stride 8 B
host  gemm   offload    -        ``params``: the LAP's ``gemm`` command (JSON, below)
host  gemm   wait       -        ``params``: ``{"unit": "lap"}``
host  use    read       C        ``M*N`` elements of 8 B from ``C_ADDR``, stride 8 B
====  =====  =========  =======  ========================================================

The command names its target unit, the matrices' shapes and addresses, that C
is overwritten rather than accumulated, and the regions the coupling must make
coherent: A and B are ``inputs`` (a DRAM-coupled LAP has the host flush them
from its caches first), C is an ``output`` (invalidated in the host's caches
afterwards, so the host's read of C misses to DRAM)::

    {"unit": "lap", "op": "gemm", "m": 256, "n": 256, "k": 256,
     "a_addr": 0, "b_addr": 524288, "c_addr": 1048576, "accumulate": false,
     "inputs": [[0, 524288], [524288, 524288]], "outputs": [[1048576, 524288]]}

Run ``python -m workloads.examples.gemm_offload DIR``: it writes the trace as
``DIR/gemm_offload.parquet`` and, row for row the same, ``DIR/gemm_offload.csv``,
and a workload file for each (``gemm_offload.yaml``, ``gemm_offload_csv.yaml``)
that ``offsim validate`` checks and ``offsim run configs/systems/lap_dram.yaml
DIR/gemm_offload.yaml`` simulates. Any writer of the same columns will do:
pandas' ``DataFrame.to_parquet`` or ``to_csv`` (``addrs`` empty, ``params``
empty for rows other than offload and wait) give a trace that reads the same.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa

from simulator.config.files import write_atomic
from workloads.trace import TraceBuilder, write_trace, write_trace_csv

#: Matrix shapes, elements: C (M x N) = A (M x K) B (K x N).
M = N = K = 256
#: Bytes per element (double precision).
ELEM_BYTES = 8
#: Byte addresses of the three matrices, one after the other.
A_ADDR = 0
B_ADDR = A_ADDR + M * K * ELEM_BYTES
C_ADDR = B_ADDR + K * N * ELEM_BYTES


def gemm_offload_trace() -> pa.Table:
    """The five rows of the module docstring, as a validated trace."""
    a_bytes, b_bytes, c_bytes = M * K * ELEM_BYTES, K * N * ELEM_BYTES, M * N * ELEM_BYTES
    trace = TraceBuilder()
    trace.access("host", "fill", "write", A_ADDR, ELEM_BYTES, ELEM_BYTES, M * K)
    trace.access("host", "fill", "write", B_ADDR, ELEM_BYTES, ELEM_BYTES, K * N)
    trace.offload("host", "gemm", "lap", op="gemm", m=M, n=N, k=K, a_addr=A_ADDR, b_addr=B_ADDR, c_addr=C_ADDR,
                  accumulate=False, inputs=[[A_ADDR, a_bytes], [B_ADDR, b_bytes]], outputs=[[C_ADDR, c_bytes]])
    trace.wait("host", "gemm", "lap")
    trace.access("host", "use", "read", C_ADDR, ELEM_BYTES, ELEM_BYTES, M * N)
    return trace.to_table()


def write_example(out_dir: str | Path) -> dict[str, Path]:
    """Write the trace (Parquet and CSV) and a workload file for each into ``out_dir``; return the paths."""
    out = Path(out_dir)
    table = gemm_offload_trace()
    paths = {"parquet": out / "gemm_offload.parquet", "csv": out / "gemm_offload.csv",
             "workload": out / "gemm_offload.yaml", "workload_csv": out / "gemm_offload_csv.yaml"}
    write_trace(table, paths["parquet"])
    write_trace_csv(table, paths["csv"])
    for key, name, trace in (("workload", "gemm-offload", "gemm_offload.parquet"),
                             ("workload_csv", "gemm-offload-csv", "gemm_offload.csv")):
        text = f"# A hand-written trace: the host offloads C = A B to a LAP.\nname: {name}\ntrace: {trace}\n"
        write_atomic(paths[key], lambda tmp, text=text: tmp.write_text(text))
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m workloads.examples.gemm_offload DIR")
    for path in write_example(sys.argv[1]).values():
        print(f"written   {path}")
