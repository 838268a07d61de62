"""Cross-checks: an analytical model beside simulated runs of the workloads it describes, in one registry.

A ``Crosscheck`` says which workloads its model describes (by generator name; none: any host-only
workload, the fallback) and how it prices one run (``offsim run --crosscheck``) and every stored
point of a sweep (a sweep file's ``crosscheck:``). ``crosscheck_for(workload)`` picks the one of a
run; ``CROSSCHECKS`` holds the shipped ones:

- ``roofline``: the energy roofline's time and energy from the point's host flops and DRAM bytes, its
  costs measured once per distinct system (``simulator.studies.roofline.measure_machine``);
- ``ulist``: the U-list model's, printed and extended, its inputs measured once per distinct system,
  placement and layout (``simulator.studies.fmm.run_check.measure_all``);

and any that an installed package adds through the entry-point group ``offsim.crosschecks`` (each
entry point a ``Crosscheck``). A sweep's rows carry the errors of the simulated values. What was
measured is kept in the study directory (``Crosscheck.machine_file``), so that the study's next run
measures it no more.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from simulator.config.files import write_atomic
from simulator.config.plugins import PluginError, load_entry_points
from simulator.studies.spec import Point, StudySpec

#: the rows a study's ``crosscheck:`` adds per point, under component ``crosscheck/<model>``: (quantity, unit);
#: an error is simulated / model - 1. The U-list model's ``ext_`` rows are its extended form.
_MODEL_ROWS = (("model_time_s", "s"), ("model_energy_j", "J"), ("time_error", "ratio"), ("energy_error", "ratio"))
ENTRY_POINT_GROUP = "offsim.crosschecks"


@dataclass(frozen=True)
class Crosscheck:
    """An analytical model set beside simulated runs.

    name: what a sweep file's ``crosscheck:`` names. generators: the workload generators whose runs
    ``offsim run --crosscheck`` sets it beside (empty: every workload no other cross-check claims).
    quantities: the (quantity, unit) rows a sweep point gets. report_errors: the report's error columns,
    (title, quantity). machine_file: where a study directory keeps what the model's inputs measured.
    run_problem(loaded, workload, trace, label): why it cannot price a run (None: it can).
    run_rows(results, loaded, workload): the run's rows (``CrosscheckRow``) for crosscheck.csv.
    study_problem(loaded, workload, offload_rows, label): why it cannot price a sweep's point.
    study_rows(points, values, energy, machine_path): each point's quantities (dicts).
    """

    name: str
    generators: tuple[str, ...]
    quantities: tuple[tuple[str, str], ...]
    report_errors: tuple[tuple[str, str], ...]
    machine_file: str
    run_problem: Callable[..., str | None]
    run_rows: Callable[..., list]
    study_problem: Callable[..., str | None]
    study_rows: Callable[..., list[dict]]


def _roofline_run_problem(loaded: Any, workload: Any, trace: Any, label: str) -> str | None:
    from simulator.studies.roofline import crosscheck_problem
    from workloads.trace import command_rows

    return crosscheck_problem(loaded, command_rows(trace), label)


def _roofline_run_rows(results: Any, loaded: Any, workload: Any) -> list:
    from simulator.studies.roofline import measure_machine, roofline_crosscheck

    return roofline_crosscheck(results, measure_machine(loaded))


def _roofline_study_problem(loaded: Any, workload: Any, offload_rows: int, label: str) -> str | None:
    from simulator.studies.roofline import crosscheck_problem

    return crosscheck_problem(loaded, offload_rows, label)


def _ulist_run_problem(loaded: Any, workload: Any, trace: Any, label: str) -> str | None:
    from simulator.studies.fmm.run_check import crosscheck_problem

    return crosscheck_problem(loaded, workload, label)


def _ulist_run_rows(results: Any, loaded: Any, workload: Any) -> list:
    from simulator.studies.fmm.run_check import ulist_crosscheck

    return ulist_crosscheck(results, loaded, workload)


def _ulist_study_problem(loaded: Any, workload: Any, offload_rows: int, label: str) -> str | None:
    from simulator.studies.fmm.run_check import study_problem

    return study_problem(loaded, workload, label)


def crosscheck_table(study: StudySpec, points: list[Point] | tuple[Point, ...], table: pd.DataFrame,
                     out_dir: Path) -> pd.DataFrame:
    """The ``crosscheck/<model>`` rows of every stored point of ``table`` (its axis columns, run_hash,
    component, quantity, value, unit; ``Crosscheck.quantities``) for ``study.crosscheck`` (module
    docstring); none without one."""
    if study.crosscheck is None or table.empty:
        return table.iloc[0:0]
    keys = [k for k, _ in points[0].coords]
    values = table.groupby(["run_hash", "component", "quantity"], sort=False)["value"].sum()
    energy = table[table["component"].str.startswith("energy/")].groupby("run_hash", sort=False)["value"].sum()
    distinct = [p for p in {p.run_hash: p for p in points}.values() if p.run_hash in energy.index]  # not failed
    check = CROSSCHECKS[study.crosscheck]
    measured = check.study_rows(distinct, values, energy, out_dir / check.machine_file)
    rows = [{**dict(p.coords), "run_hash": p.run_hash, "component": f"crosscheck/{study.crosscheck}",
             "quantity": quantity, "value": found[quantity], "unit": unit}
            for p, found in zip(distinct, measured) for quantity, unit in check.quantities]
    extra = pd.DataFrame(rows, columns=[*keys, "run_hash", "component", "quantity", "value", "unit"])
    return extra.astype(table.dtypes.to_dict())


def _error(row: Any) -> float:
    """A cross-check row's error, NaN where the model predicts 0."""
    return float("nan") if row.error is None else row.error


def _stored(path: Path, build: Callable[[Any], Any]) -> dict[str, Any]:
    """What a previous run of the study measured, each entry read back with ``build``; {} if ``path`` is
    missing or does not read back as such (it is then measured and written again)."""
    try:
        return {key: build(entry) for key, entry in json.loads(path.read_text()).items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return {}


def _keep(path: Path, machines: dict[str, Any], stored: dict[str, Any]) -> None:
    """Write ``machines`` (dataclasses) to ``path`` atomically, unless they are what it holds."""
    if machines != stored:
        text = json.dumps({k: dataclasses.asdict(m) for k, m in sorted(machines.items())}, indent=2) + "\n"
        write_atomic(path, lambda tmp: tmp.write_text(text))


def _roofline_rows(points: list[Point], values: pd.Series, energy: pd.Series, path: Path) -> list[dict]:
    """The roofline's quantities of each point (``crosscheck_table``), its costs measured once per system
    and kept in ``path``."""
    from simulator.studies.roofline import MeasuredMachine, compared, measure_machine

    stored = _stored(path, lambda costs: MeasuredMachine(**{k: float(v) for k, v in costs.items()}))
    machines = dict(stored)
    found = []
    for p in points:
        if p.loaded.content_hash not in machines:  # one pair of micro runs per distinct system
            machines[p.loaded.content_hash] = measure_machine(p.loaded)
        machine = machines[p.loaded.content_hash]
        w = values[(p.run_hash, "host", "flops")]
        q = values[(p.run_hash, "dram", "bytes_read")] + values[(p.run_hash, "dram", "bytes_written")]
        time, energy_row = compared(machine, w, q, values[(p.run_hash, "system", "simulated_time_s")],
                                    energy[p.run_hash])
        found.append({"model_time_s": time.model, "model_energy_j": energy_row.model,
                      "time_error": _error(time), "energy_error": _error(energy_row)})
    _keep(path, machines, stored)
    return found


def _ulist_rows(points: list[Point], values: pd.Series, energy: pd.Series, path: Path) -> list[dict]:
    """The U-list model's quantities of each point (``crosscheck_table``), its inputs measured once per
    system, placement and layout, all the measurements' micro runs spread over the cores together, and
    kept in ``path``."""
    from simulator.studies.fmm import run_check as urc

    stored = _stored(path, lambda entry: urc.Measured(dict(entry["machine"]), str(entry["lap"])))
    machines = dict(stored)
    models = [(p, urc.ulist_point(p.loaded, p.workload)) for p in points]
    wanted = {point.machine_key(p.loaded) for p, point in models} | set(machines)
    plans = []  # (machine key, with the pipelined parts) of each point
    for p, point in models:
        # a measurement with the pipelined parts serves the other points of its system too
        pipelined = point.pipelined or point.machine_key(p.loaded, pipelined=True) in wanted
        plans.append((point.machine_key(p.loaded, pipelined), pipelined))
    todo = {}
    for (p, point), (key, pipelined) in zip(models, plans):
        if key not in todo and not _serves(point, machines.get(key)):
            todo[key] = urc.measurement(p.loaded, point, pipelined)
    if todo:
        machines.update(zip(todo, urc.measure_all(list(todo.values()))))
    found = []
    for (p, point), (key, _) in zip(models, plans):
        time_s = urc.host_time_s(values[(p.run_hash, "system", "host_cycles")], p.loaded)
        model = urc.priced(point, machines[key])
        printed_t, printed_e, ext_t, ext_e = urc.compared(time_s, energy[p.run_hash], model)
        found.append({"model_time_s": printed_t.model, "model_energy_j": printed_e.model,
                      "time_error": _error(printed_t), "energy_error": _error(printed_e),
                      "ext_model_time_s": ext_t.model, "ext_model_energy_j": ext_e.model,
                      "ext_time_error": _error(ext_t), "ext_energy_error": _error(ext_e)})
    _keep(path, machines, stored)
    return found


def _serves(point: Any, measured: Any) -> bool:
    """Whether ``measured`` (None: nothing stored) prices the U-list ``point``: a stored measurement may
    not read back whole."""
    from simulator.studies.fmm.run_check import priced

    if measured is None:
        return False
    try:
        priced(point, measured)
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _shipped() -> dict[str, Crosscheck]:
    roofline = Crosscheck("roofline", (), _MODEL_ROWS,
                          (("roofline time error", "time_error"), ("roofline energy error", "energy_error")),
                          "roofline_machines.json", _roofline_run_problem, _roofline_run_rows,
                          _roofline_study_problem, _roofline_rows)
    ulist = Crosscheck("ulist", ("fmm_ulist",), _MODEL_ROWS + tuple((f"ext_{q}", unit) for q, unit in _MODEL_ROWS),
                       (("U-list time error", "time_error"), ("U-list energy error", "energy_error"),
                        ("extended time error", "ext_time_error"), ("extended energy error", "ext_energy_error")),
                       "ulist_machines.json", _ulist_run_problem, _ulist_run_rows, _ulist_study_problem, _ulist_rows)
    return {c.name: c for c in (roofline, ulist)}


def _registry() -> dict[str, Crosscheck]:
    """The shipped cross-checks, then those of installed packages (a name already taken is refused)."""
    found = _shipped()
    for name, check in load_entry_points(ENTRY_POINT_GROUP, Crosscheck).items():
        if check.name in found:
            raise PluginError(f"entry point {name!r} of group {ENTRY_POINT_GROUP}: cross-check {check.name!r} "
                              "exists already; expected a new name")
        found[check.name] = check
    return found


CROSSCHECKS: dict[str, Crosscheck] = _registry()
#: the models a sweep file's ``crosscheck:`` may name
CROSSCHECK_MODELS = tuple(CROSSCHECKS)
#: where a study directory keeps what each model's cross-check measured, by model
MACHINE_FILES = {name: check.machine_file for name, check in CROSSCHECKS.items()}


def crosscheck_for(workload: Any) -> Crosscheck:
    """The cross-check of a run of ``workload``: the one that names its generator, else the fallback."""
    fallback = None
    for check in CROSSCHECKS.values():
        if workload.generator is not None and workload.generator in check.generators:
            return check
        if not check.generators and fallback is None:
            fallback = check
    assert fallback is not None  # the roofline is shipped
    return fallback
