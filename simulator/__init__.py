"""offsim: a cycle-approximate discrete-event simulator of a host, its caches, DRAM, interfaces and accelerators.

``simulator.run(system, workload, overrides=(), **params)`` simulates one workload on one
system (``overrides``: ``--set``-style strings; ``params``: workload parameters) and returns a
``Results`` (``.summary()``, ``.to_pandas()``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["run"]


def run(system: Any, workload: Any, overrides: tuple[str, ...] | list[str] = (), **param_overrides: Any):
    """Simulate ``workload`` on ``system``; see ``simulator.runner.run``."""
    from simulator.runner import run as _run

    return _run(system, workload, overrides, **param_overrides)
