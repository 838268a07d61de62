"""Workload generators by name, for workload configs, studies and the CLI.

Each entry maps a generator name (the ``generator`` key of a workload YAML) to
a function returning an operation trace.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from workloads import aes, fmm_ulist, gemm, gemm_tiled, kernels, micro, stencil

GENERATORS: dict[str, Callable[..., pa.Table]] = {
    **micro.GENERATORS,
    **gemm.GENERATORS,
    **gemm_tiled.GENERATORS,
    **aes.GENERATORS,
    "stencil": stencil.stencil_sweep,
    **kernels.GENERATORS,
    **fmm_ulist.GENERATORS,
}
