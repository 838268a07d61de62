"""Builders of accelerator units by kind.

Each accelerator module registers a builder with ``register_builder(kind)``:
a function ``(name, spec, context) -> AcceleratorUnit``, and its command schema
(``simulator.accel.command_schema``) with ``register_command(kind)``, for
``offsim commands``. ``BuildContext`` carries what a unit may be connected to;
only ``system.py`` calls builders. The shipped kinds register when ``simulator.accel.kinds`` imports
their modules: read ``BUILDERS`` and ``COMMANDS`` from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import simpy

from simulator.config.plugins import PluginError
from simulator.interconnect.interface import Interface


@dataclass(frozen=True)
class BuildContext:
    """What the composition root hands an accelerator builder."""

    env: simpy.Environment
    interface: Interface
    host_frequency_hz: float


BUILDERS: dict[str, Callable] = {}
#: kind -> the dataclass declaring its offload command (``command_schema``)
COMMANDS: dict[str, type] = {}


def register_builder(kind: str):
    """Decorator: register ``fn(name, spec, context)`` as the builder of ``kind`` units."""
    def deco(fn: Callable) -> Callable:
        if BUILDERS.get(kind, fn) is not fn:
            raise PluginError(f"accelerator kind {kind!r} has a builder already (in {BUILDERS[kind].__module__}); "
                              "expected a new kind name")
        BUILDERS[kind] = fn
        return fn
    return deco


def register_command(kind: str):
    """Class decorator: register a command schema (a dataclass of ``command_field``s) as ``kind``'s."""
    def deco(cls: type) -> type:
        COMMANDS[kind] = cls
        return cls
    return deco

