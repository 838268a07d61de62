"""The kernel unit: a GPU-style throughput accelerator with a copy-in / compute / copy-out pipeline.

A command (``KernelCommand``; ``offsim commands kernel``: ``op`` one of gemm,
fft, radix_sort, binary_search) names its input and output regions (its
operands), ``host_cycles``, what the host would spend on it, and its device
work: ``flops`` and ``memory_bytes`` (the bytes the kernel moves in the memory
the device works in). After ``launch_latency_s`` the unit spends the roofline
time of that work on it (``KernelSpec.device_seconds``), or host_cycles / A
host cycles when the spec fixes A (``acceleration``), streaming its data in
chunks through the interface: it asks for chunk i+1 while it works on chunk i
and writes chunk i back when done, so the stream of its operands overlaps the
work.

Requests flow through three stages that run at once, like a GPU with copy
engines: copy-in (``pcie`` only: the inputs cross the link into device
memory), compute, copy-out (``pcie`` only) and completion. A command may
carry ``parts``, a list of ``{inputs, outputs, host_cycles, flops, memory_bytes}`` sub-requests
(a pipelined offload: the host paid its overhead once for the whole
command): the parts flow through the stages one behind the other, so the
copy-in of part i+1, the work on part i and the copy-out of part i-1 overlap,
and the command completes when its last part has been copied out; the
command's own regions default to the union of its parts'. Without
``parts`` the command is one request; separate commands pipeline the same
way. Copies in and out take turns on the link, or run at once on its two
directions when the interface is ``full_duplex``. ``memory_bytes`` set the
roofline time only: the traffic they stand for is neither simulated nor
priced, a pcie device's in its own memory and another coupling's beyond the
operand lines it streams (those go through the interface, timed and priced
as any requester's). Counters:
``requests`` (sub-requests run), ``work_host_cycles``, ``flops``,
``memory_bytes``, ``compute_s``, ``bytes_read``, ``bytes_written``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import simpy

from simulator.accel.base import AcceleratorUnit, Command
from simulator.accel.command_schema import CommandError, Regions, command_field, union_regions
from simulator.accel.registry import BuildContext, register_builder, register_command
from simulator.config.accel_kernel import KernelSpec
from simulator.engine import ClockDomain
from simulator.engine.limits import MAX_SIMULATED_S
from simulator.interconnect.interface import region_lines, region_partial_lines
from simulator.units import PS_PER_S, format_quantity, seconds_to_ps

OPS = ("gemm", "fft", "radix_sort", "binary_search")
MAX_CHUNKS = 64  # bounds the events per request on large buffers


@dataclass(frozen=True)
class KernelPart:
    """One sub-request of a pipelined kernel command."""

    host_cycles: float = command_field(unit="host cycles", min=0.0, doc="the part's work, as the host would spend it")
    flops: float = command_field(None, unit="flop", min=0.0, default_text="required unless the unit fixes A",
                                 doc="the part's arithmetic on the device")
    memory_bytes: float = command_field(None, unit="B", min=0.0, default_text="required unless the unit fixes A",
                                        doc="bytes the part moves in the device's memory")
    inputs: Regions = command_field((), default_text="none", doc="regions the part reads")
    outputs: Regions = command_field((), default_text="none", doc="regions the part writes")


def _not_empty(parts: tuple) -> str | None:
    return None if parts else "expected a non-empty list of {inputs, outputs, host_cycles} objects"


@register_command("kernel")
@dataclass(frozen=True)
class KernelCommand:
    """A kernel command: one request, or ``parts`` that flow through the pipeline one behind the other."""

    op: str = command_field(choices=OPS, doc="the kernel")
    host_cycles: float = command_field(None, unit="host cycles", min=0.0, default_text="required without parts",
                                       doc="the work, as the host would spend it (with parts: their sum)")
    inputs: Regions = command_field(None, default_text="the parts' inputs; required without parts",
                                    doc="regions the kernel reads (flushed or copied in before it starts)")
    outputs: Regions = command_field(None, default_text="the parts' outputs; required without parts",
                                     doc="regions the kernel writes (fresh for the host after its wait)")
    flops: float = command_field(None, unit="flop", min=0.0,
                                 default_text="required without parts unless the unit fixes A",
                                 doc="the kernel's arithmetic on the device (with parts: theirs)")
    memory_bytes: float = command_field(None, unit="B", min=0.0,
                                        default_text="required without parts unless the unit fixes A",
                                        doc="bytes the kernel moves in the device's memory (with parts: theirs)")
    parts: tuple[KernelPart, ...] = command_field(None, check=_not_empty, default_text="none: one request",
                                                  doc="pipelined sub-requests (the host pays its overhead once)")

    def __post_init__(self) -> None:
        if self.parts is None:
            for key in ("host_cycles", "inputs", "outputs"):
                if getattr(self, key) is None:
                    raise ValueError(f"{key}: missing; expected {_WITHOUT_PARTS[key]} (or parts)")
            return
        for key in ("host_cycles", "flops", "memory_bytes"):
            given = getattr(self, key)
            if given is None:
                continue
            values = [getattr(p, key) for p in self.parts]
            total = math.fsum(v for v in values if v is not None)
            if None in values or not math.isclose(given, total, rel_tol=1e-9):
                raise ValueError(f"{key} = {given!r}: expected the sum of the parts' {key}, {total:.10g} (given "
                                 f"for every part), or no {key} (the parts' work is what runs)")

    def operand_regions(self) -> tuple[Regions, Regions]:
        """The union of the parts' inputs and of their outputs."""
        return union_regions(self.parts, "inputs"), union_regions(self.parts, "outputs")


_WITHOUT_PARTS = {"host_cycles": "a number >= 0 (host cycles)", "inputs": "a list of [byte address, bytes] regions",
                  "outputs": "a list of [byte address, bytes] regions"}


class KernelUnit(AcceleratorUnit):
    """A kernel accelerator (see module docstring); its clock is the host's, so work is in host cycles."""

    COMMAND = KernelCommand

    def __init__(self, name: str, spec: KernelSpec, context: BuildContext) -> None:
        self.spec = spec
        super().__init__(name=name, env=context.env, clock=ClockDomain(name, context.host_frequency_hz),
                         interface=context.interface, static_power_w=spec.static_power_w,
                         idle_power_w=spec.idle_power_w)

    def check_args(self, cmd: KernelCommand) -> None:
        """CommandError unless every request of ``cmd`` declares its device work, when the unit derives its rate,
        and that work ends within a run's limit of simulated time (``MAX_SIMULATED_S``)."""
        requests = cmd.parts if cmd.parts is not None else (cmd,)
        for i, req in enumerate(requests):
            where = "" if cmd.parts is None else f"parts[{i}]."
            if self.spec.acceleration:
                given = f"host_cycles = {req.host_cycles:g}"
            else:
                for key in ("flops", "memory_bytes"):
                    if getattr(req, key) is None:
                        raise CommandError(f"{where}{key}: missing; expected a number >= 0: the unit has no fixed "
                                           "acceleration, so its time is the roofline of the request's flops and "
                                           "memory_bytes")
                given = f"flops = {req.flops:g} and memory_bytes = {req.memory_bytes:g}"
            seconds = self.work_ps(req.host_cycles, req.flops, req.memory_bytes) / PS_PER_S
            if not seconds <= MAX_SIMULATED_S:
                raise CommandError(f"{where}{given}: {format_quantity(seconds, 's')} of device time; expected a "
                                   f"request that ends within a run's {format_quantity(MAX_SIMULATED_S, 's')} of "
                                   "simulated time (simulator.engine.limits)")

    def work_ps(self, host_cycles: float, flops: float | None, memory_bytes: float | None) -> float:
        """A request's device time, ps, before rounding: host_cycles / A on the host's clock when the unit fixes A
        (as ``compute_ps`` rounds it), else the roofline of its flops and memory_bytes (as ``seconds_to_ps``)."""
        if self.spec.acceleration:
            return host_cycles / self.spec.acceleration * PS_PER_S / self.clock.frequency_hz
        return self.spec.device_seconds(flops, memory_bytes) * PS_PER_S

    # --- the three-stage pipeline ------------------------------------------------------------------

    def _worker(self):
        """Copy-in stage; starts the compute and copy-out stages."""
        to_compute: simpy.Store = simpy.Store(self.env)
        to_drain: simpy.Store = simpy.Store(self.env)
        self.env.process(self._compute_stage(to_compute, to_drain))
        self.env.process(self._drain_stage(to_drain))
        while True:
            cmd: Command = yield self._queue.get()
            cmd.started_ps = self.env.now
            parts = self._parts(cmd)
            for i, part in enumerate(parts):
                if self.interface.copies and part.inputs:
                    yield self.env.timeout(max(0, self.interface.copy_in(part.inputs, self.env.now) - self.env.now))
                yield to_compute.put((part, cmd, i == len(parts) - 1))

    def _parts(self, cmd: Command) -> list[Command]:
        """The sub-requests of ``cmd``: its ``parts`` (each with the command's op), or the command itself."""
        parts = cmd.params.get("parts")
        if parts is None:
            return [cmd]
        return [Command(params={"op": cmd.params.get("op"), **p}, done=self.env.event(), issued_ps=cmd.issued_ps)
                for p in parts]

    def _compute_stage(self, inbox: simpy.Store, outbox: simpy.Store):
        while True:
            part, cmd, last = yield inbox.get()
            yield from self.execute(part)
            yield outbox.put((part, cmd, last))

    def _drain_stage(self, inbox: simpy.Store):
        while True:
            part, cmd, last = yield inbox.get()
            if part is cmd:
                yield from self._complete(cmd)
                continue
            if self.interface.copies and part.outputs:
                yield self.env.timeout(max(0, self.interface.copy_out(part.outputs, self.env.now) - self.env.now))
            if last:
                yield from self._complete_copied(cmd)

    def _complete_copied(self, cmd: Command):
        """``_complete`` for a command whose parts have been copied out already: no second copy."""
        params, cmd.params = cmd.params, {k: v for k, v in cmd.params.items() if k != "outputs"}
        try:
            yield from self._complete(cmd)
        finally:
            cmd.params = params

    # --- one request's work ------------------------------------------------------------------------

    def execute(self, cmd: Command):
        """Launch, then stream the inputs in chunks while spending the request's device time, then write the outputs."""
        work = cmd.params["host_cycles"]  # checked by check_command before the run
        env, line = self.env, self.interface.line_bytes
        in_lines = region_lines(cmd.inputs, line)
        out_lines = region_lines(cmd.outputs, line)
        out_partial = region_partial_lines(cmd.outputs, line)  # lines the outputs cover in part
        self.count("requests", 1)
        launch = seconds_to_ps(self.spec.launch_latency_s)
        if launch:
            yield env.timeout(launch)
        total_bytes = max(len(in_lines), len(out_lines)) * line
        n_chunks = max(1, min(MAX_CHUNKS, math.ceil(max(total_bytes, 1) / self.spec.chunk_bytes)))
        in_parts = np.array_split(in_lines, n_chunks)
        out_parts = np.array_split(out_lines, n_chunks)
        flops, memory_bytes = cmd.params.get("flops"), cmd.params.get("memory_bytes")
        work_ps = int(round(self.work_ps(work, flops, memory_bytes)))
        if not self.spec.acceleration:
            self.count("flops", flops)
            self.count("memory_bytes", memory_bytes)
        work_parts = np.diff(np.linspace(0, work_ps, n_chunks + 1).round().astype(np.int64))
        arrival = self.interface.access(in_parts[0], False, env.now) if len(in_parts[0]) else env.now
        written = env.now
        for i in range(n_chunks):
            if arrival > env.now:
                yield env.timeout(arrival - env.now)
            if i + 1 < n_chunks and len(in_parts[i + 1]):  # fetch the next chunk while this one is worked on
                arrival = self.interface.access(in_parts[i + 1], False, env.now)
            if work_parts[i]:
                yield env.timeout(int(work_parts[i]))
            if len(out_parts[i]):
                written = max(written, self.interface.access(out_parts[i], True, env.now, out_partial))
        if written > env.now:
            yield env.timeout(written - env.now)
        self.count("work_host_cycles", work)
        self.count("compute_s", work_ps / PS_PER_S)
        self.count("bytes_read", len(in_lines) * line)
        self.count("bytes_written", len(out_lines) * line)

    def dynamic_energy_j(self) -> dict[str, float]:
        """Compute energy: time spent computing x active power, J."""
        return {"compute": self.counts.get("compute_s", 0.0) * self.spec.active_power_w}


@register_builder("kernel")
def build_kernel(name: str, spec: KernelSpec, context: BuildContext) -> KernelUnit:
    """Builder of ``kernel`` units."""
    return KernelUnit(name, spec, context)
