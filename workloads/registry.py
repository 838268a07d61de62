"""Workload generators by name, for workload configs, studies and the CLI.

``GENERATORS`` maps a generator name (the ``generator`` key of a workload YAML) to a function
returning an operation trace: the shipped generators (``SHIPPED``), then those an installed package
adds through the entry-point group ``offsim.workloads`` (the entry point's name is the generator's; a
name already taken is refused). It imports a shipped generator's module when the generator is first
looked up, and loads the installed ones when a name is not a shipped one or when every name is
listed, so that a workload imports only the code it runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any

from simulator.config.plugins import PluginError, load_entry_points

#: the shipped generators, in listing order: name -> the module whose ``GENERATORS`` holds it
SHIPPED: dict[str, str] = {
    "stream": "workloads.micro",
    "random_access": "workloads.micro",
    "pointer_chase": "workloads.micro",
    "intensity": "workloads.micro",
    "compute_only": "workloads.micro",
    "host_gemm": "workloads.gemm",
    "lap_gemm": "workloads.gemm",
    "gemm_tiled": "workloads.gemm_tiled",
    "crypto_host": "workloads.aes",
    "crypto_offload": "workloads.aes",
    "stencil": "workloads.stencil",
    "kernel_host": "workloads.kernels",
    "kernel_offload": "workloads.kernels",
    "fmm_ulist": "workloads.fmm_ulist",
}
ENTRY_POINT_GROUP = "offsim.workloads"


def installed() -> dict[str, Callable[..., Any]]:
    """The generators installed packages add (entry-point name -> function); PluginError for a name
    already taken or an object that is not a function (the entry points are loaded once, their error kept)."""
    found, error = _load_installed()
    if error is not None:
        raise error
    return found


@cache
def _load_installed() -> tuple[dict[str, Callable[..., Any]], PluginError | None]:
    """:func:`installed`'s generators, or the PluginError that refuses them."""
    try:
        found = load_entry_points(ENTRY_POINT_GROUP)
    except PluginError as exc:
        return {}, exc
    for name, generate in found.items():
        if name in SHIPPED:
            return {}, PluginError(f"entry point {name!r} of group {ENTRY_POINT_GROUP}: generator {name!r} exists "
                                   "already; expected a new name")
        if not callable(generate):
            return {}, PluginError(f"entry point {name!r} of group {ENTRY_POINT_GROUP}: is a "
                                   f"{type(generate).__name__}; expected a generator function")
    return found, None


class _Generators(Mapping[str, Callable[..., Any]]):
    """Name -> generator function, importing each shipped one on first use (module docstring)."""

    def __getitem__(self, name: str) -> Callable[..., Any]:
        if name in SHIPPED:
            return importlib.import_module(SHIPPED[name]).GENERATORS[name]
        return installed()[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and (name in SHIPPED or name in installed())

    def __iter__(self) -> Iterator[str]:
        yield from SHIPPED
        yield from installed()

    def __len__(self) -> int:
        return len(SHIPPED) + len(installed())


GENERATORS: Mapping[str, Callable[..., Any]] = _Generators()
