"""Accelerator kind ``filter``: streams its input region, spends ``cycles_per_byte`` of its own clock on
each input byte, and writes its output region. Registers its spec and its builder on import.

Command (``FilterCommand``; ``offsim commands filter``): ``op`` = ``"filter"``, ``inputs`` and ``outputs``
(``[byte address, bytes]`` regions). Counters: ``bytes_read``, ``bytes_written``, ``compute_cycles``.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.accel.base import AcceleratorUnit, Command
from simulator.accel.command_schema import Regions, command_field
from simulator.accel.registry import BuildContext, register_builder, register_command
from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.fields import param
from simulator.engine import ClockDomain
from simulator.interconnect.interface import region_lines, region_partial_lines


@register_kind("filter")
@dataclass(frozen=True)
class FilterSpec(AcceleratorSpec):
    """A fixed-rate filter: its clock, work per input byte and power."""

    frequency_hz: float = param(unit="frequency", positive=True, doc="clock of the filter")
    cycles_per_byte: float = param(1.0, positive=True, doc="filter cycles per input byte")
    static_power_w: float = param(0.0, unit="power", min=0.0, doc="power while busy")
    idle_power_w: float = param(0.0, unit="power", min=0.0, doc="power while idle")


@register_command("filter")
@dataclass(frozen=True)
class FilterCommand:
    """A filter command: read the input regions, filter them into the output regions."""

    op: str = command_field(choices=("filter",), doc="the operation")
    inputs: Regions = command_field(doc="the regions to filter")
    outputs: Regions = command_field(doc="where the filtered data goes")


class FilterUnit(AcceleratorUnit):
    """Reads the inputs, works, writes the outputs: one command at a time."""

    COMMAND = FilterCommand

    def __init__(self, name: str, spec: FilterSpec, context: BuildContext) -> None:
        self.spec = spec
        super().__init__(name=name, env=context.env, clock=ClockDomain(name, spec.frequency_hz),
                         interface=context.interface, static_power_w=spec.static_power_w,
                         idle_power_w=spec.idle_power_w)

    def execute(self, cmd: Command):
        line = self.interface.line_bytes
        in_lines, out_lines = region_lines(cmd.inputs, line), region_lines(cmd.outputs, line)
        arrival = self.interface.access(in_lines, False, self.env.now) if len(in_lines) else self.env.now
        yield self.env.timeout(max(0, arrival - self.env.now))
        cycles = sum(n for _, n in cmd.inputs) * self.spec.cycles_per_byte
        yield self.env.timeout(self.compute_ps(cycles))
        partial = region_partial_lines(cmd.outputs, line)  # lines the outputs cover in part: read before written
        written = self.interface.access(out_lines, True, self.env.now, partial) if len(out_lines) else self.env.now
        yield self.env.timeout(max(0, written - self.env.now))
        self.count("bytes_read", len(in_lines) * line)
        self.count("bytes_written", len(out_lines) * line)
        self.count("compute_cycles", cycles)


@register_builder("filter")
def build_filter(name: str, spec: FilterSpec, context: BuildContext) -> FilterUnit:
    """Builder of ``filter`` units."""
    return FilterUnit(name, spec, context)
