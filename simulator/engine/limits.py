"""Limits that keep one run's wall time reasonable: a cap on simulated time, checked twice.

The DRAM model performs every refresh of every rank one by one (some 5.6 million a
second on a 2 GHz core), so a run's wall time grows with its simulated time
times ``channels x ranks / tREFI``, whatever the workload does meanwhile. A run
may simulate at most ``simulated_limit_s`` of its system: ``MAX_SIMULATED_S``,
or less where the DRAM would perform more than ``MAX_REFRESHES`` refreshes in
that time (some 90 s of wall time). It is checked

* before the run, against a lower bound of the host's time: its rows' (its busiest thread's) flops at
  ``host.flops_per_cycle``, their other cycles, and their elements at
  ``host.loads_per_cycle``, at ``host.frequency_hz`` (``host_time_problem``); a trace that arrives in
  batches (``workloads.trace_stream``) is checked on the sum of its batches so far, as each arrives;
* during the run, by a process that stops the simulation at the limit
  (``start_watchdog``): memory stalls, accelerators and latencies are not in
  the bound above, and this catches what they add.

The caches and the DRAM take some 1.2 million lines a second, so a trace may also
touch at most ``MAX_TRACE_LINES`` cache lines (counted from above, before the
run: ``trace_lines_problem``; a stream's batches summed as they arrive), some four minutes of wall time.

Each refusal is bad input (the workload is too large for one run), named by the
workload and the system's keys.
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from simulator.config.arrow import arrow_scalar, list_lengths, string_array, to_numpy
from simulator.config.schema import SystemSpec
from simulator.units import PS_PER_S, format_quantity
from workloads.trace import MAX_THREADS, MEMORY_OPS, THREAD_FIELD, thread_ids

#: Longest simulated time of one run, s: a quarter of an hour of the machine, some thousand times the
#: shipped workloads' longest; the picosecond time base itself would hold 107 days.
MAX_SIMULATED_S = 1000.0
#: Most DRAM refreshes one run may perform (all ranks): some 90 s of wall time at 5.6 million a second.
MAX_REFRESHES = 5e8
#: Most cache lines the memory rows of one trace may touch (an upper bound, each row counted alone): a
#: 16 GiB stream of 64 B lines, some four minutes of wall time at 1.2 million lines a second.
MAX_TRACE_LINES = 2**28


class SimulatedTimeLimit(Exception):
    """The simulation reached its limit of simulated time (``args[0]``: the limit, s)."""


def simulated_limit_s(spec: SystemSpec) -> float:
    """The simulated time a run of ``spec`` may reach, s (module docstring)."""
    g = spec.dram.geometry
    refreshes_per_s = g.channels * g.ranks_per_channel / spec.dram.timing.t_refi_s
    return min(MAX_SIMULATED_S, MAX_REFRESHES / refreshes_per_s)


def _why(limit_s: float) -> str:
    return (f"{format_quantity(limit_s, 's')} of simulated time (simulator.engine.limits: at most "
            f"{format_quantity(MAX_SIMULATED_S, 's')}, and at most {MAX_REFRESHES:.0e} DRAM refreshes of "
            "dram.geometry's channels x ranks every dram.timing.t_refi_s)")


def host_time_problem(spec: SystemSpec, trace: pa.Table, source: str, system_source: str) -> str | None:
    """Why ``trace`` (of workload ``source``) cannot run within the limit on ``spec`` (of ``system_source``):
    the host's rows alone (of its busiest thread) take longer than ``simulated_limit_s``; or None."""
    work = host_work_cycles(spec, trace)
    return None if work is None else host_time_message(spec, work, source, system_source)


def host_work_cycles(spec: SystemSpec, trace: pa.Table) -> np.ndarray | None:
    """A lower bound of the cycles each host thread's rows of ``trace`` take on ``spec`` (index: thread id;
    one entry for a trace without threads): flops, other cycles and elements at the host's rates; None for a
    table that is not a trace. The bounds of a trace's parts add up (``add_work``)."""
    try:
        units = trace.column("unit")
        named = units.cast(pa.string()) if pa.types.is_dictionary(units.type) else units
        host = np.asarray(to_numpy(pc.equal(named, arrow_scalar("host", pa.string()))), dtype=bool)
        flops = to_numpy(trace.column("flops")).astype(np.float64)[host]
        cycles = to_numpy(trace.column("cycles")).astype(np.float64)[host]
        elements = to_numpy(trace.column("count")).astype(np.float64)[host]
        threads = None
        if THREAD_FIELD.name in trace.schema.names:  # ids beyond the valid ones are refused by the validation
            threads = np.clip(thread_ids(trace)[host], 0, MAX_THREADS)
    except (KeyError, pa.ArrowException, TypeError, ValueError):
        return None  # not a trace: the replay's validation names what is wrong
    h = spec.host
    per_row = np.maximum(flops / h.flops_per_cycle + cycles, elements / h.loads_per_cycle)
    if threads is not None:  # threads run side by side: the busiest one bounds the time
        return np.bincount(threads, weights=per_row) if threads.size else np.zeros(1)
    return np.array([np.sum(per_row)])


def add_work(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The per-thread cycles of two parts of a trace together (``host_work_cycles``)."""
    out = np.zeros(max(a.size, b.size))
    out[:a.size] += a
    out[:b.size] += b
    return out


def host_time_message(spec: SystemSpec, work_cycles: np.ndarray, source: str, system_source: str) -> str | None:
    """Why host rows of ``work_cycles`` per thread (``host_work_cycles``) cannot run within the limit, or None."""
    limit = simulated_limit_s(spec)
    h = spec.host
    seconds = float(work_cycles.max(initial=0.0)) / h.frequency_hz
    if seconds <= limit:
        return None
    return (f"{source}: the host's rows take at least {format_quantity(seconds, 's')} at {system_source}'s "
            f"host.frequency_hz = {format_quantity(h.frequency_hz, 'Hz')}, host.flops_per_cycle = "
            f"{h.flops_per_cycle:g} and host.loads_per_cycle = {h.loads_per_cycle:g}; expected a workload that "
            f"ends within {_why(limit)}")


def _column(trace: pa.Table, name: str) -> np.ndarray:
    return to_numpy(trace.column(name)).astype(np.float64)


def trace_lines_problem(spec: SystemSpec, trace: pa.Table, source: str, system_source: str) -> str | None:
    """Why ``trace`` (of workload ``source``) touches too many cache lines of ``spec`` (of ``system_source``)
    for one run: more than MAX_TRACE_LINES, counted from above; or None."""
    lines = trace_lines(spec, trace)
    return None if lines is None else trace_lines_message(spec, lines, source, system_source)


def trace_lines(spec: SystemSpec, trace: pa.Table) -> float | None:
    """An upper bound of the cache lines of ``spec`` that ``trace``'s memory rows touch, each row counted
    alone (so the bounds of a trace's parts add up); None for a table that is not a trace."""
    line = spec.caches.line_bytes
    try:
        memory = np.asarray(to_numpy(pc.is_in(trace.column("op"), value_set=string_array(MEMORY_OPS))), dtype=bool)
        count, elem = _column(trace, "count")[memory], _column(trace, "elem_bytes")[memory]
        stride = _column(trace, "stride_bytes")[memory]
        addr = _column(trace, "addr")[memory]
        runs = list_lengths(trace.column("addrs")).astype(np.float64)[memory]
    except (KeyError, pa.ArrowException, TypeError, ValueError):
        return None  # not a trace: the replay's validation names what is wrong
    per_element = count * (elem // line + 2)  # each element's lines, apart
    # A strided row's lines lie in the range of its elements. Its elements rising one after another (stride >=
    # element) visit them once each; falling, a line at most three times (an element straddling into it from
    # above, those within it, one straddling out of it below); overlapping ones (0 < |stride| < element) may go
    # back and forth over a line boundary, and one element touched again and again (stride 0) repeats its
    # lines unless it lies in one line: those are bounded by their elements' lines alone.
    span = (np.abs(stride) * np.maximum(count - 1, 0) + elem) // line + 2
    strided = np.where(stride >= elem, span, np.where(-stride >= elem, 3 * span, per_element))
    one_line = (stride == 0) & (addr // line == (addr + np.maximum(elem, 1) - 1) // line)
    strided = np.where(one_line & (count > 0), 1.0, strided)
    per_run = runs * ((count / np.maximum(runs, 1) * elem) // line + 2)  # each listed address starts a run
    return float(np.sum(np.minimum(per_element, np.where(runs > 0, per_run, strided))))


def trace_lines_message(spec: SystemSpec, lines: float, source: str, system_source: str) -> str | None:
    """Why a trace whose memory rows touch up to ``lines`` lines (``trace_lines``) is too large, or None."""
    if lines <= MAX_TRACE_LINES:
        return None
    return (f"{source}: the trace's memory rows touch up to {lines:,.0f} lines of {spec.caches.line_bytes} B "
            f"({system_source}: caches.line_bytes); expected at most {MAX_TRACE_LINES:,} "
            "(simulator.engine.limits.MAX_TRACE_LINES: some four minutes of simulation)")


def start_watchdog(env, spec: SystemSpec) -> None:
    """Have ``env`` raise SimulatedTimeLimit when its clock reaches the run's limit (``simulated_limit_s``)."""
    env.process(_watch(env, simulated_limit_s(spec)))


def _watch(env, limit_s: float) -> Generator:
    yield env.timeout(int(limit_s * PS_PER_S))
    raise SimulatedTimeLimit(limit_s)


def watchdog_message(limit_s: float, source: str, system_source: str) -> str:
    """The refusal of a run that the watchdog stopped."""
    return (f"{source}: the run on {system_source} reaches {format_quantity(limit_s, 's')} of simulated time and "
            f"is stopped there; expected a workload that ends within {_why(limit_s)}")
