"""Extensions from installed packages: Python entry points, loaded once per group.

A separate package extends offsim without editing it by declaring entry points in its own
``pyproject.toml``, for example::

    [project.entry-points."offsim.accelerators"]
    my_array = "my_package.accel"            # a module that registers a kind's spec and builder
    [project.entry-points."offsim.workloads"]
    my_generator = "my_package.gen:generate"  # a generator function (name = the entry point's name)
    [project.entry-points."offsim.crosschecks"]
    my_model = "my_package.check:CHECK"      # a simulator.studies.crosschecks.Crosscheck

Entry points are read from the installed distributions' metadata (``importlib.metadata``), in name
order, so that the same installation always registers the same things in the same order.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any

from simulator.errors import InputError


class PluginError(InputError):
    """An installed package's entry point that cannot be loaded or is not what its group expects (exit 2)."""


@cache
def load_entry_points(group: str, expected: type | None = None) -> dict[str, Any]:
    """Entry-point name -> loaded object of ``group``, in name order; each object an instance of
    ``expected`` where given. Raises PluginError naming the entry point and its distribution."""
    loaded: dict[str, Any] = {}
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        where = f"entry point {ep.name!r} ({ep.value}) of group {group}"
        if ep.dist is not None:
            where += f" in package {ep.dist.name}"
        try:
            obj = ep.load()
        except Exception as exc:  # a broken extension is named, not a traceback from deep inside
            raise PluginError(f"{where}: cannot be loaded ({type(exc).__name__}: {exc})") from exc
        if expected is not None and not isinstance(obj, expected):
            raise PluginError(f"{where}: is a {type(obj).__name__}; expected a {expected.__name__}")
        loaded[ep.name] = obj
    return loaded
