"""Comparing runs: ``offsim compare RUN_DIR... [--png FILE]``.

Reads each run directory's ``summary.json`` (as ``offsim run`` writes it) and gives one row per run:
its label (the directory's name), system, workload, simulated time (s) and total energy (J), then its
energy by component (J). The figure draws the same as grouped bars: the time of each run, and each
run's energy stacked by component. Runs are kept in the order given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

from simulator.config.errors import InputError
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
    """The summary of run directory ``path``; InputError naming it if it is not one."""
    directory = Path(path)
    summary = directory / "summary.json"
    try:
        data = json.loads(summary.read_text())
        return RunSummary(directory.resolve().name, str(data["system_name"]), str(data["workload_name"]),
                          float(data["simulated_time_s"]), float(data["energy_total_j"]),
                          {str(k): float(v) for k, v in data["energy_by_component_j"].items()})
    except FileNotFoundError:
        raise InputError(f"{directory}: no summary.json; expected a run directory written by offsim run") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{summary}: unreadable ({type(exc).__name__}: {exc}); expected the summary.json "
                         "offsim run writes") from None


def comparison_table(runs: list[RunSummary]) -> list[tuple[str, ...]]:
    """Header and one row per run: label, system, workload, time, energy, then each component's energy
    (components in the order of the first run that has them)."""
    components = list(dict.fromkeys(c for run in runs for c in run.energy_by_component_j))
    header = ("run", "system", "workload", "time", "energy", *components)
    rows = [(r.label, r.system, r.workload, format_quantity(r.time_s, "s"), format_quantity(r.energy_j, "J"),
             *(format_quantity(r.energy_by_component_j.get(c, 0.0), "J") for c in components)) for r in runs]
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
