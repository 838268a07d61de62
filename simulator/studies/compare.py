"""Comparing runs: ``offsim compare RUN_DIR... [--png FILE]``.

Reads each run directory's ``summary.json`` (as ``offsim run`` writes it) and gives one row per run:
its label (the directory's name), system, workload, simulated time (s) and total energy (J), then its
energy by component (J; ``NOT_APPLICABLE`` for a component the run's system does not have). The figure
draws the same as grouped bars: the time of each run, and each run's energy stacked by component. Runs
are kept in the order given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from simulator.config.errors import InputError, as_written, one_line
from simulator.config.jsonio import loads_keys_once
from simulator.config.units import format_quantity
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
    try:
        data = loads_keys_once(summary.read_text())
    except FileNotFoundError:
        raise InputError(f"{directory}: no summary.json; expected a run directory written by offsim run") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"{summary}: unreadable ({type(exc).__name__}: {one_line(exc)}); {expected}") from None
    if not isinstance(data, dict):
        raise InputError(f"{summary}: a JSON {type(data).__name__}; {expected} (an object)")

    def field(key: str, kind: type) -> Any:
        if key not in data:
            raise InputError(f"{summary}: {key}: missing; {expected}")
        value = data[key]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if (kind is float and not number) or (kind is not float and not isinstance(value, kind)):
            raise InputError(f"{summary}: {key}: {one_line(as_written(value))}; expected a "
                             f"{'number' if kind is float else kind.__name__}, as offsim run writes it")
        return value

    system, workload = field("system_name", str), field("workload_name", str)
    time_s, energy_j = float(field("simulated_time_s", float)), float(field("energy_total_j", float))
    by_component = field("energy_by_component_j", dict)
    bad = next((k for k, v in by_component.items() if not isinstance(v, (int, float)) or isinstance(v, bool)), None)
    if bad is not None:
        raise InputError(f"{summary}: energy_by_component_j.{bad}: {one_line(as_written(by_component[bad]))}; "
                         "expected a number of joules")
    return RunSummary(directory.resolve().name, system, workload, time_s, energy_j,
                      {str(k): float(v) for k, v in by_component.items()})


#: the cell of a component a run does not have (a LAP beside a run without one): not 0 J, which it did not spend
NOT_APPLICABLE = "-"


def comparison_table(runs: list[RunSummary]) -> list[tuple[str, ...]]:
    """Header and one row per run: label, system, workload, time, energy, then each component's energy
    (components in the order of the first run that has them; ``NOT_APPLICABLE`` where a run has none)."""
    components = list(dict.fromkeys(c for run in runs for c in run.energy_by_component_j))
    header = ("run", "system", "workload", "time", "energy", *components)
    rows = [(r.label, r.system, r.workload, format_quantity(r.time_s, "s"), format_quantity(r.energy_j, "J"),
             *(format_quantity(r.energy_by_component_j[c], "J") if c in r.energy_by_component_j else NOT_APPLICABLE
               for c in components)) for r in runs]
    return [header, *rows]


def comparison_png(runs: list[RunSummary], path: str | Path) -> Path:
    """Time per run and energy per run stacked by component, as bars side by side; returns the path."""
    fig = Figure(figsize=(4 + 1.2 * len(runs), 4.5))
    ax_time, ax_energy = fig.subplots(1, 2)
    x = range(len(runs))
    labels = [r.label for r in runs]
    ax_time.bar(x, [r.time_s for r in runs], color="#4c72b0")
    ax_time.set_ylabel("simulated time")
    ax_time.yaxis.set_major_formatter(EngFormatter(unit="s"))
    components = list(dict.fromkeys(c for run in runs for c in run.energy_by_component_j))
    bottom = [0.0] * len(runs)
    for component in components:
        values = [r.energy_by_component_j.get(component, 0.0) for r in runs]
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
