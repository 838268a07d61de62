"""Comparing runs: ``offsim compare RUN_DIR... [--png FILE]``.

Reads each run directory's ``summary.json`` (as ``offsim run`` writes it) and gives one row per run:
its label (the directory's name), system, workload, simulated time (s) and total energy (J), then its
energy by component (J; ``NOT_APPLICABLE`` for a component the run's system does not have, ``NOT_KNOWN`` for an
energy the run could not price, null in its summary.json: a memory that declares no currents). The figure
draws the same as grouped bars: the time of each run, and each run's energy stacked by component. Runs
are kept in the order given.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from simulator.errors import ConfigError, InputError, as_written, one_line
from simulator.config.jsonio import loads_keys_once
from simulator.config.yamlio import config_text
from simulator.units import NOT_KNOWN, finite_float, format_energy, format_quantity
from simulator.studies.plots import save_figure


@dataclass(frozen=True)
class RunSummary:
    """What a run directory's summary.json says of its time (s) and energy (J, by component)."""

    label: str
    system: str
    workload: str
    time_s: float
    energy_j: float
    energy_by_component_j: dict[str, float]


def read_run(path: str | Path) -> RunSummary:
    """The summary of run directory ``path``; InputError naming it (and the key at fault) if it is not one."""
    directory = Path(path)
    summary = directory / "summary.json"
    expected = "expected the summary.json offsim run writes"
    if directory.is_file():
        raise InputError(f"{directory}: a file; expected a run directory written by offsim run")
    if not summary.exists() and not summary.is_symlink():
        raise InputError(f"{directory}: no summary.json; expected a run directory written by offsim run")
    try:  # a regular file of at most MAX_CONFIG_BYTES: not a FIFO, which would block, nor /dev/zero
        data = loads_keys_once(config_text(summary, "summary.json offsim run writes"))
    except ConfigError as exc:
        raise InputError(exc.messages[0]) from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{summary}: unreadable ({type(exc).__name__}: {one_line(exc)}); {expected}") from None
    if not isinstance(data, dict):
        raise InputError(f"{summary}: a JSON {type(data).__name__}; {expected} (an object)")

    def field(key: str, kind: type | None = None) -> Any:
        """The value of ``key``, of type ``kind`` if given (numbers are checked by ``seconds_or_joules``)."""
        if key not in data:
            raise InputError(f"{summary}: {key}: missing; {expected}")
        value = data[key]
        if kind is not None and not isinstance(value, kind):
            raise InputError(f"{summary}: {key}: {one_line(as_written(value))}; expected a {kind.__name__}, as "
                             "offsim run writes it")
        return value

    def seconds_or_joules(key: str, value: Any, unit: str, unknown_allowed: bool) -> float:
        """``value`` of ``key`` as a float of ``unit`` (s or J), NaN for an unknown energy (null)."""
        number = finite_float(value)
        if value is None and unknown_allowed:
            return math.nan  # an energy the run could not price (a memory without currents): not known
        if number is None or number < 0:
            raise InputError(f"{summary}: {key}: {one_line(as_written(value))}; expected a finite number >= 0 of "
                             f"{unit}{' or null (not known)' if unknown_allowed else ''}, as offsim run writes it")
        return number

    system, workload = field("system_name", str), field("workload_name", str)
    time_s = seconds_or_joules("simulated_time_s", field("simulated_time_s"), "seconds", False)
    energy_j = seconds_or_joules("energy_total_j", field("energy_total_j"), "joules", True)
    by_component = {str(k): seconds_or_joules(f"energy_by_component_j.{k}", v, "joules", True)
                    for k, v in field("energy_by_component_j", dict).items()}
    if not math.isfinite(sum(v for v in by_component.values() if not math.isnan(v))):
        raise InputError(f"{summary}: energy_by_component_j: its energies add up to more than a float holds; "
                         f"{expected} (a run's energies add up to its total)")
    return RunSummary(directory.resolve().name, system, workload, time_s, energy_j, by_component)


def read_runs(paths: Sequence[str | Path]) -> list[RunSummary]:
    """The summaries of the run directories ``paths``, in order (``read_run``), each labelled by its directory's
    name, or by its path as given where two of the directories share a name, so that their rows and bars are told
    apart."""
    runs = [read_run(path) for path in paths]
    names = Counter(run.label for run in runs)
    return [replace(run, label=str(path)) if names[run.label] > 1 else run for run, path in zip(runs, paths)]


#: the cell of a component a run does not have (a LAP beside a run without one): not 0 J, which it did not spend
NOT_APPLICABLE = "-"


def comparison_table(runs: list[RunSummary]) -> list[tuple[str, ...]]:
    """Header and one row per run: label, system, workload, time, energy, then each component's energy
    (components in the order of the first run that has them; ``NOT_APPLICABLE`` where a run has none)."""
    components = list(dict.fromkeys(c for run in runs for c in run.energy_by_component_j))
    header = ("run", "system", "workload", "time", "energy", *components)
    rows = [(r.label, r.system, r.workload, format_quantity(r.time_s, "s"), format_energy(r.energy_j),
             *(format_energy(r.energy_by_component_j[c]) if c in r.energy_by_component_j else NOT_APPLICABLE
               for c in components)) for r in runs]
    return [header, *rows]


def comparison_png(runs: list[RunSummary], path: str | Path) -> Path:
    """Time per run and energy per run stacked by component, as bars side by side; returns the path."""
    fig = Figure(figsize=(4 + 1.2 * len(runs), 4.5))
    ax_time, ax_energy = fig.subplots(1, 2)
    x = range(len(runs))
    labels = [r.label + (f"\n(energy in part {NOT_KNOWN})" if math.isnan(r.energy_j) else "") for r in runs]
    ax_time.bar(x, [r.time_s for r in runs], color="#4c72b0")
    ax_time.set_ylabel("simulated time")
    ax_time.yaxis.set_major_formatter(EngFormatter(unit="s"))
    components = list(dict.fromkeys(c for run in runs for c in run.energy_by_component_j))
    bottom = [0.0] * len(runs)
    for component in components:
        values = [r.energy_by_component_j.get(component, 0.0) for r in runs]
        values = [0.0 if math.isnan(v) else v for v in values]  # not known: no bar (the tick label says so)
        if any(values):
            ax_energy.bar(x, values, bottom=bottom, label=component)
            bottom = [b + v for b, v in zip(bottom, values)]
    ax_energy.set_ylabel("energy")
    ax_energy.yaxis.set_major_formatter(EngFormatter(unit="J"))
    ax_energy.legend(fontsize=7)
    for ax in (ax_time, ax_energy):
        ax.set_xticks(list(x), labels, rotation=20, ha="right", fontsize=8)
        ax.set_ylim(bottom=0)  # bars start at zero: a 3 % difference looks like 3 %
    return save_figure(fig, path)
