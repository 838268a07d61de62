"""Workload generators by name, for workload configs and the CLI.

Each entry maps a generator name (the ``generator`` key of a workload YAML) to
a function returning an operation trace. Later workloads (FMM U-list, AES,
stencils) add themselves here.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from workloads import micro

GENERATORS: dict[str, Callable[..., pa.Table]] = dict(micro.GENERATORS)
from workloads import gemm  # noqa: E402
GENERATORS.update(gemm.GENERATORS)
from workloads import aes  # noqa: E402
GENERATORS.update(aes.GENERATORS)
from workloads import stencil  # noqa: E402
GENERATORS["stencil"] = stencil.stencil_sweep
from workloads import kernels  # noqa: E402
GENERATORS.update(kernels.GENERATORS)
from workloads import fmm_ulist  # noqa: E402
GENERATORS.update(fmm_ulist.GENERATORS)
from workloads import gemm_tiled  # noqa: E402
GENERATORS.update(gemm_tiled.GENERATORS)
