"""The common part of every accelerator unit: command queue, worker, completion, busy time, energy.

A unit receives commands from the host through ``offload`` (a trace row
``offload`` with JSON params) and executes them one at a time in a SimPy
process. ``wait`` blocks the host thread until every command handed over so far
(by any thread) has completed, then runs the interface's after-completion work
(invalidations) for those of them no other wait has cleaned up; commands other
threads hand over while it waits are not waited for. Subclasses implement
``execute(command)`` as a SimPy generator using ``self.interface.access`` for
data and ``self.compute_ps`` for work, and count what they do in
``self.counts`` (names ending in their unit, e.g. ``flops``, ``bytes_read``).

Command params (JSON object): ``unit`` (target), ``op`` (the unit's operation),
``inputs`` and ``outputs`` (lists of ``[byte address, bytes]`` regions), and
operation arguments, as the kind's command schema declares them (``COMMAND``, a
dataclass of ``command_schema.command_field``s; ``offsim commands`` lists them).
``check_command`` parses a command against it, adds the unit's own checks
(``check_args``) and completes it with its defaults, its regions included
(``operand_regions``); ``checked_command`` also returns the parsed command, which
replay hands to ``offload`` with the params so that ``execute`` reads it without
parsing again (``Command.args``). An ``in_pipeline`` unit is synchronous: the host waits.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

import simpy

from simulator.accel.command_schema import CommandError, Regions, command_params, parse_command
from simulator.engine import ClockDomain
from simulator.interconnect.interface import Interface
from simulator.memory.power import priced
from simulator.units import PS_PER_S, seconds_to_ps


def check_within(regions: Regions, key: str, memory_bytes: int) -> None:
    """CommandError unless every ``[byte address, bytes]`` region of ``regions`` (named ``key``) ends
    within the ``memory_bytes`` of the system's memory (one beyond it would otherwise be expanded to
    lines before any check)."""
    for i, (addr, nbytes) in enumerate(regions):
        if addr + nbytes > memory_bytes:
            raise CommandError(f"{key}[{i}] = {[addr, nbytes]!r}: ends at byte {addr + nbytes}; expected it to end "
                               f"within the {memory_bytes} B of the system's memory")


@dataclass
class Command:
    """One offloaded command and its completion event. ``args``: the parsed command (the kind's
    ``COMMAND`` with its regions filled in) as ``checked_command`` made it; None for a unit's own
    sub-requests."""

    params: dict[str, Any]
    done: simpy.Event
    issued_ps: int
    started_ps: int = 0
    finished_ps: int = 0
    args: Any = None
    seq: int = 0  # the command's place among those handed to the unit (0 for the first)

    @property
    def inputs(self) -> list:
        return list(self.params.get("inputs", []))

    @property
    def outputs(self) -> list:
        return list(self.params.get("outputs", []))


@dataclass
class AcceleratorUnit:
    """Base class: queue, worker process, timing and energy bookkeeping (subclass: ``execute``)."""

    name: str
    env: simpy.Environment
    clock: ClockDomain
    interface: Interface
    static_power_w: float
    idle_power_w: float
    counts: dict[str, float] = field(default_factory=dict)
    busy_ps: int = 0
    commands_done: int = 0

    def __post_init__(self) -> None:
        self._queue: simpy.Store = simpy.Store(self.env)
        self._pending: list[Command] = []
        self._finished: list[Command] = []
        self._handed = 0  # commands handed over so far
        # each waiting host thread's event and the ids of the commands it waits for (those pending as it began)
        self._waiters: list[tuple[simpy.Event, set[int]]] = []
        self._idle = self.env.event().succeed()
        self._last_finish_ps = 0
        self.env.process(self._worker())

    # --- host side ------------------------------------------------------------------------------

    #: the kind's command schema: a dataclass of ``command_field``s, with ``inputs`` and ``outputs`` Regions
    COMMAND: ClassVar[type]

    def check_command(self, params: dict[str, Any]) -> dict[str, Any]:
        """``params`` completed with the command's defaults, its regions included, if this unit can run
        it (replay checks each command before the unit sees it); else CommandError naming the key:
        unknown, missing or bad for the schema (``COMMAND``), bad for this unit (``check_args``), or a
        region beyond the memory."""
        return self.checked_command(params)[0]

    def checked_command(self, params: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """(``check_command``'s completed params, the parsed ``COMMAND`` with those regions), the one
        parse of a command that replay and ``execute`` share; CommandError as ``check_command``."""
        try:
            cmd = parse_command(self.COMMAND, params)
            self.check_args(cmd)
            inputs, outputs = cmd.inputs, cmd.outputs
            if inputs is None or outputs is None:
                operand_in, operand_out = self.operand_regions(cmd)
                inputs = operand_in if inputs is None else inputs
                outputs = operand_out if outputs is None else outputs
            check_within(inputs, "inputs", self.memory_bytes)
            check_within(outputs, "outputs", self.memory_bytes)
        except CommandError as exc:
            raise CommandError(f"offload to {self.name}: {exc}") from None
        out = command_params(cmd, params)
        for key, regions in (("inputs", inputs), ("outputs", outputs)):
            if key not in out:
                out[key] = [list(r) for r in regions]
        return out, dataclasses.replace(cmd, inputs=tuple(map(tuple, inputs)), outputs=tuple(map(tuple, outputs)))

    def check_args(self, cmd: Any) -> None:
        """CommandError unless this unit can run the parsed command ``cmd`` (subclasses: their spec's limits)."""

    def operand_regions(self, cmd: Any) -> tuple[Regions, Regions]:
        """The input and output regions of ``cmd``'s operands, for the regions it does not give
        (the schema's ``operand_regions()``; a unit whose operands' extent depends on its spec overrides this)."""
        return cmd.operand_regions()

    @property
    def memory_bytes(self) -> int:
        """Bytes of the memory the unit works in, which its commands address (main memory, or its near memory), B."""
        return self.interface.home.capacity_bytes

    def offload(self, core, params: dict[str, Any], stage, args: Any = None):
        """SimPy generator run by the host: driver work, coherence, then enqueue the command (``params``
        and ``args`` as ``checked_command`` gave them)."""
        yield from self.interface.host_before(core, self.env, stage, list(params.get("inputs", [])),
                                              list(params.get("outputs", [])))
        cmd = Command(params=params, done=self.env.event(), issued_ps=self.env.now, args=args, seq=self._handed)
        self._handed += 1
        if self._idle.triggered:
            self._idle = self.env.event()
        self._pending.append(cmd)
        yield self._queue.put(cmd)
        if self.interface.core_waits:  # an instruction: the core waits for its result
            start = self.env.now
            yield cmd.done
            stage.stall_ps += self.env.now - start
            stage.busy_ps += self.env.now - start
            yield from self._after(core, stage, cmd.seq + 1)

    def wait(self, core, stage):
        """SimPy generator run by a host thread: wait for every command handed over so far, then clean up the
        host copies of their outputs."""
        start, handed = self.env.now, self._handed
        if self._pending:  # done when the commands pending now are: not those handed over meanwhile
            done = self.env.event()
            self._waiters.append((done, {id(cmd) for cmd in self._pending}))
            yield done
        else:
            yield self._idle  # the last command may have completed at this very time: after its completion
        stage.stall_ps += self.env.now - start
        stage.busy_ps += self.env.now - start
        stage.add_interval(start, self.env.now)
        yield from self._after(core, stage, handed)

    def _after(self, core, stage, handed: int):
        """SimPy generator: the interface's after-completion work for the completed commands among the first
        ``handed`` handed over that no other wait has taken."""
        finished = [cmd for cmd in self._finished if cmd.seq < handed]
        self._finished = [cmd for cmd in self._finished if cmd.seq >= handed]
        outputs = [r for cmd in finished for r in cmd.outputs]
        if outputs:
            yield from self.interface.host_after(core, self.env, stage, outputs)

    def idle_event(self) -> simpy.Event:
        """Fires when every command handed over so far has completed."""
        return self._idle

    # --- accelerator side -----------------------------------------------------------------------

    def _worker(self):
        while True:
            cmd: Command = yield self._queue.get()
            cmd.started_ps = self.env.now
            if self.interface.copies and cmd.inputs:
                yield self.env.timeout(max(0, self.interface.copy_in(cmd.inputs, self.env.now) - self.env.now))
            yield from self.execute(cmd)
            yield from self._complete(cmd)

    def _complete(self, cmd: Command):
        """SimPy generator: copy the outputs out (pcie), signal completion, account busy time."""
        if self.interface.copies and cmd.outputs:
            yield self.env.timeout(max(0, self.interface.copy_out(cmd.outputs, self.env.now) - self.env.now))
        latency = seconds_to_ps(self.interface.spec.completion_latency_s)
        if latency:
            yield self.env.timeout(latency)
        cmd.finished_ps = self.env.now
        # busy time is the union of command intervals: they overlap when a unit pipelines requests
        self.busy_ps += max(0, cmd.finished_ps - max(cmd.started_ps, self._last_finish_ps))
        self._last_finish_ps = cmd.finished_ps
        self.commands_done += 1
        self._pending.remove(cmd)
        self._finished.append(cmd)
        cmd.done.succeed()
        for waiter in list(self._waiters):
            done, waited = waiter
            if id(cmd) in waited:
                waited.discard(id(cmd))
                if not waited:
                    self._waiters.remove(waiter)
                    done.succeed()
        if not self._pending:
            self._idle.succeed()

    def execute(self, cmd: Command):
        """SimPy generator: carry out one command (subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} must implement execute()")

    def run_double_buffered(self, steps: Iterable, duration_ps: Callable[[Any], int],
                            computed: Callable[[Any], None]):
        """SimPy generator: run ``steps`` (at least one; made as they are needed) double-buffered through the
        interface. A step has ``reads`` and ``writes`` (line arrays) and ``partial`` (the lines of ``writes`` it
        covers in part, ``Interface.access``); the reads of step s+1 start when step s
        starts computing (for ``duration_ps(step)``), a step's writes start when its compute ends
        (``computed(step)`` is called then), and the command ends when the last write has arrived. Counts
        ``bytes_read``/``bytes_written``."""
        env, port = self.env, self.interface
        steps = iter(steps)
        step = next(steps)
        ready = port.access(step.reads, False, env.now)
        self._moved(step.reads, False)
        yield env.timeout(max(0, ready - env.now))
        written = env.now
        while step is not None:
            nxt = next(steps, None)
            if nxt is not None:  # the other buffer fills while this step computes
                ready = port.access(nxt.reads, False, env.now)
                self._moved(nxt.reads, False)
            yield env.timeout(duration_ps(step))
            computed(step)
            if len(step.writes):
                written = max(written, port.access(step.writes, True, env.now, step.partial))
                self._moved(step.writes, True)
            if nxt is not None:
                yield env.timeout(max(0, ready - env.now))
            step = nxt
        yield env.timeout(max(0, written - env.now))

    def _moved(self, lines, is_write: bool) -> None:
        self.count("bytes_written" if is_write else "bytes_read", len(lines) * self.interface.line_bytes)

    def count(self, name: str, value: float) -> None:
        """Add ``value`` to counter ``name``."""
        self.counts[name] = self.counts.get(name, 0) + value

    def compute_ps(self, cycles: float) -> int:
        """Duration of ``cycles`` of this unit's clock, ps."""
        return self.clock.cycles_to_ps(cycles)

    # --- reporting -------------------------------------------------------------------------------

    def dynamic_energy_j(self) -> dict[str, float]:
        """Dynamic energy by category from ``counts`` (subclasses)."""
        return {}

    def energy_j(self, end_ps: int) -> dict[str, float]:
        """Energy by category, J: dynamic (subclass), static (busy at static power, idle at idle power), link."""
        busy_s = self.busy_ps / PS_PER_S
        idle_s = max(0, end_ps - self.busy_ps) / PS_PER_S
        out = dict(self.dynamic_energy_j())
        out["static"] = priced(self.static_power_w, busy_s) + priced(self.idle_power_w, idle_s)
        out.update(self.interface.energy_j())
        return out

    def result_rows(self, end_ps: int) -> list[tuple[str, str, float, str]]:
        """Rows for Results: busy time, commands, and every counter."""
        comp = f"accel/{self.name}"
        rows = [(comp, "busy_s", self.busy_ps / PS_PER_S, "s"), (comp, "commands", self.commands_done, "count"),
                (comp, "link_bytes", self.interface.bytes_moved, "B")]
        rows += [(comp, k, v, counter_unit(k)) for k, v in sorted(self.counts.items())]
        return rows


_UNIT_WORDS = (("bytes", "B"), ("words", "words"), ("cycles", "cycles"), ("flops", "flop"))
_FLOP_COUNTERS = ("fadd", "fmul", "fother")  # operations of one kind, counted in flop


def counter_unit(counter: str) -> str:
    """Unit of an accelerator counter from the words of its name: ``bytes_read`` -> B, ``compute_s`` -> s,
    ``global_words`` -> words, ``work_host_cycles`` -> cycles, ``flops``/``fadd`` -> flop, else count."""
    words = counter.split("_")
    if len(words) > 1 and words[-1] == "s":
        return "s"
    for word, unit in _UNIT_WORDS:
        if word in words:
            return unit
    return "flop" if counter in _FLOP_COUNTERS else "count"
