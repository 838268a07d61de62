"""Workload generators by name, for workload configs, studies and the CLI.

Each entry maps a generator name (the ``generator`` key of a workload YAML) to
a function returning an operation trace: the shipped generators, then those an
installed package adds through the entry-point group ``offsim.workloads`` (the
entry point's name is the generator's; a name already taken is refused).
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from simulator.config.plugins import PluginError, load_entry_points

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
ENTRY_POINT_GROUP = "offsim.workloads"

for _name, _generate in load_entry_points(ENTRY_POINT_GROUP).items():
    if _name in GENERATORS:
        raise PluginError(f"entry point {_name!r} of group {ENTRY_POINT_GROUP}: generator {_name!r} exists already; "
                          "expected a new name")
    if not callable(_generate):
        raise PluginError(f"entry point {_name!r} of group {ENTRY_POINT_GROUP}: is a {type(_generate).__name__}; "
                          "expected a generator function")
    GENERATORS[_name] = _generate
