"""A study's consolidated outputs: ``study.parquet``, figures (PNG) and ``report.md``.

The table is built from the stored points only (never from in-memory results),
in the points' sorted axis order, so it is the same whether the points were
simulated now, reused from an interrupted run, or finished in any order. One
row per point and quantity: the axis columns (named by their study keys and
holding resolved values: SI numbers for quantities), ``run_hash``, then the
run's long form (component, quantity, value, unit).

A figure's ``y`` is ``component/quantity`` (split at the last ``/``), or
``energy/total``: the sum of every ``energy/*`` row of a point. The checks before
any point runs (``simulator.study.check_figure_quantities``) refuse a quantity no run
can have; one that only a run can tell (a stage's, an accelerator's) and that
no stored point has is left out of the report with a note.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from simulator.config.files import write_atomic
from simulator.plots import Panel, Series, format_value, line_panels, unit_of_key
from simulator.study_spec import MACHINES_FILE, ULIST_MACHINES_FILE, FigureSpec, Point, StudyOutcome, StudySpec

if TYPE_CHECKING:
    from simulator.roofline_check import MeasuredMachine

ENERGY_TOTAL = "energy/total"
DEFAULT_Y = ("system/simulated_time_s", ENERGY_TOTAL, "dram/bandwidth_bytes_per_s")
SUMMARY_Y = (("time", "system/simulated_time_s"), ("energy", ENERGY_TOTAL),
             ("DRAM bandwidth", "dram/bandwidth_bytes_per_s"))
#: the rows a study's ``crosscheck:`` adds per point, under component ``crosscheck/<model>``, by model:
#: (quantity, unit); an error is simulated / model - 1. The U-list model's ``ext_`` rows are its extended form.
_MODEL_ROWS = (("model_time_s", "s"), ("model_energy_j", "J"), ("time_error", "ratio"), ("energy_error", "ratio"))
CROSSCHECK_QUANTITIES = {"roofline": _MODEL_ROWS,
                         "ulist": _MODEL_ROWS + tuple((f"ext_{q}", unit) for q, unit in _MODEL_ROWS)}
#: the report's error columns by model: (column title, quantity)
REPORT_ERRORS = {"roofline": (("roofline time error", "time_error"), ("roofline energy error", "energy_error")),
                 "ulist": (("U-list time error", "time_error"), ("U-list energy error", "energy_error"),
                           ("extended time error", "ext_time_error"),
                           ("extended energy error", "ext_energy_error"))}


def _axis_column(values: list[Any]) -> pd.Series:
    """One axis column with a single type: numbers stay numbers, anything mixed becomes text."""
    if all(isinstance(v, bool) for v in values):
        return pd.Series(values, dtype="bool")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return pd.Series(values, dtype="int64")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return pd.Series(values, dtype="float64")
    return pd.Series([str(v) for v in values], dtype="object")


def consolidate(points: list[Point] | tuple[Point, ...], out_dir: str | Path) -> pd.DataFrame:
    """The long table of every stored point (failed ones left out), in the points' order."""
    frames = []
    kept: list[Point] = []
    seen: set[str] = set()
    for p in points:
        path = Path(out_dir) / "points" / p.run_hash / "results.parquet"
        if path.is_file() and p.run_hash not in seen:
            frames.append(pq.read_table(path))
            kept.append(p)
            seen.add(p.run_hash)
    if not points:
        return pd.DataFrame()
    keys = [k for k, _ in points[0].coords]
    if not frames:
        return pd.DataFrame(columns=[*keys, "run_hash", "component", "quantity", "value", "unit"])
    lengths = [f.num_rows for f in frames]
    table = pa.concat_tables(frames).to_pandas()
    cols: dict[str, Any] = {}
    for i, key in enumerate(keys):
        per_point = [p.coords[i][1] for p in kept]
        cols[key] = _axis_column([v for v, n in zip(per_point, lengths) for _ in range(n)])
    cols["run_hash"] = pd.Series([p.run_hash for p, n in zip(kept, lengths) for _ in range(n)], dtype="object")
    head = pd.DataFrame(cols)
    return pd.concat([head, table], axis=1)


def _stored_machines(path: Path) -> dict[str, MeasuredMachine]:
    """The roofline costs a previous run of the study measured, by system content hash; {} if ``path`` is
    missing or does not read back as such (it is then measured and written again)."""
    from simulator.roofline_check import MeasuredMachine

    try:
        raw = json.loads(path.read_text())
        return {h: MeasuredMachine(**{k: float(v) for k, v in costs.items()}) for h, costs in raw.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def crosscheck_table(study: StudySpec, points: list[Point] | tuple[Point, ...], table: pd.DataFrame,
                     out_dir: Path) -> pd.DataFrame:
    """The ``crosscheck/<model>`` rows of every stored point of ``table`` (its axis columns, run_hash,
    component, quantity, value, unit; ``CROSSCHECK_QUANTITIES``), for the study's model:

    - ``roofline``: the energy roofline's time and energy from the point's host flops and DRAM bytes,
      with costs measured once per distinct system (``roofline_check.measure_machine``);
    - ``ulist``: the U-list model's, printed and extended, with inputs measured once per distinct
      system, placement and layout (``ulist_run_check.measure_all``);

    and the errors of the simulated values. The measured inputs are kept in the study directory
    (``MACHINES_FILE``, ``ULIST_MACHINES_FILE``) for its next run."""
    if study.crosscheck is None or table.empty:
        return table.iloc[0:0]
    keys = [k for k, _ in points[0].coords]
    values = table.groupby(["run_hash", "component", "quantity"], sort=False)["value"].sum()
    energy = table[table["component"].str.startswith("energy/")].groupby("run_hash", sort=False)["value"].sum()
    distinct = [p for p in {p.run_hash: p for p in points}.values() if p.run_hash in energy.index]  # not failed
    measured = (_ulist_rows(distinct, values, energy, out_dir) if study.crosscheck == "ulist"
                else _roofline_rows(distinct, values, energy, out_dir))
    rows = [{**dict(p.coords), "run_hash": p.run_hash, "component": f"crosscheck/{study.crosscheck}",
             "quantity": quantity, "value": found[quantity], "unit": unit}
            for p, found in zip(distinct, measured) for quantity, unit in CROSSCHECK_QUANTITIES[study.crosscheck]]
    extra = pd.DataFrame(rows, columns=[*keys, "run_hash", "component", "quantity", "value", "unit"])
    return extra.astype(table.dtypes.to_dict())


def _error(row: Any) -> float:
    """A cross-check row's error, NaN where the model predicts 0."""
    return float("nan") if row.error is None else row.error


def _roofline_rows(points: list[Point], values: pd.Series, energy: pd.Series, out_dir: Path) -> list[dict]:
    """The roofline's quantities of each point (``crosscheck_table``), its costs measured once per system
    and kept in ``out_dir/MACHINES_FILE``."""
    from simulator.roofline_check import compared, measure_machine

    stored = _stored_machines(out_dir / MACHINES_FILE)
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
    if machines != stored:
        text = json.dumps({h: dataclasses.asdict(m) for h, m in sorted(machines.items())}, indent=2) + "\n"
        write_atomic(out_dir / MACHINES_FILE, lambda tmp: tmp.write_text(text))
    return found


def _stored_ulist_machines(path: Path) -> dict[str, Any]:
    """The U-list inputs a previous run of the study measured, by ``UListPoint.machine_key``; {} if
    ``path`` is missing or does not read back as such (they are then measured and written again)."""
    from simulator.ulist_run_check import Measured

    try:
        raw = json.loads(path.read_text())
        return {k: Measured(dict(v["machine"]), str(v["lap"])) for k, v in raw.items()}
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return {}


def _ulist_rows(points: list[Point], values: pd.Series, energy: pd.Series, out_dir: Path) -> list[dict]:
    """The U-list model's quantities of each point (``crosscheck_table``), its inputs measured once
    per system, placement and layout and kept in ``out_dir/ULIST_MACHINES_FILE``."""
    from simulator import ulist_run_check as urc

    stored = _stored_ulist_machines(out_dir / ULIST_MACHINES_FILE)
    machines = dict(stored)
    found = []
    models = [(p, urc.ulist_point(p.loaded, p.workload)) for p in points]
    wanted = {point.machine_key(p.loaded) for p, point in models} | set(machines)
    keys = []
    for p, point in models:
        # a measurement with the pipelined parts serves the other points of its system too
        pipelined = point.pipelined or point.machine_key(p.loaded, pipelined=True) in wanted
        keys.append(point.machine_key(p.loaded, pipelined))
    priced: dict[str, Any] = {}  # run hash -> both models, where a stored measurement serves
    for (p, point), key in zip(models, keys):
        try:
            priced[p.run_hash] = urc.priced(point, machines[key])
        except (KeyError, TypeError, ValueError):  # not stored, or a stored one that does not read back whole
            machines.pop(key, None)
    # what is missing, measured all at once, its parts spread over the cores
    todo = {}
    for (p, point), key in zip(models, keys):
        if key not in machines and key not in todo:
            todo[key] = urc.measurement(p.loaded, point, pipelined=key.endswith(urc.PIPELINED_KEY))
    if todo:
        machines.update(zip(todo, urc.measure_all(list(todo.values()))))
    for (p, point), key in zip(models, keys):
        model = priced[p.run_hash] if key not in todo else urc.priced(point, machines[key])
        time_s = urc.host_time_s(values[(p.run_hash, "system", "host_cycles")], p.loaded)
        printed_t, printed_e, ext_t, ext_e = urc.compared(time_s, energy[p.run_hash], model)
        found.append({"model_time_s": printed_t.model, "model_energy_j": printed_e.model,
                      "time_error": _error(printed_t), "energy_error": _error(printed_e),
                      "ext_model_time_s": ext_t.model, "ext_model_energy_j": ext_e.model,
                      "ext_time_error": _error(ext_t), "ext_energy_error": _error(ext_e)})
    if machines != stored:
        text = json.dumps({k: dataclasses.asdict(m) for k, m in sorted(machines.items())}, indent=2) + "\n"
        write_atomic(out_dir / ULIST_MACHINES_FILE, lambda tmp: tmp.write_text(text))
    return found


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write the consolidated table as Parquet, atomically (temp file, then rename; mode as under the umask)."""
    return write_atomic(path, lambda tmp: table.to_parquet(tmp, index=False))


def quantity_table(table: pd.DataFrame, axis_keys: list[str], y: str) -> tuple[pd.DataFrame, str]:
    """One row per point: run_hash, the axis columns and ``value`` of quantity ``y``; and y's unit.

    Raises KeyError if no point has ``y``.
    """
    if y == ENERGY_TOTAL:
        sel = table[table["component"].str.startswith("energy/")]
        unit = "J"
    else:
        component, quantity = y.rsplit("/", 1)
        sel = table[(table["component"] == component) & (table["quantity"] == quantity)]
        unit = str(sel["unit"].iloc[0]) if len(sel) else ""
    if sel.empty:
        raise KeyError(y)
    grouped = sel.groupby("run_hash", sort=False).agg({**{k: "first" for k in axis_keys}, "value": "sum"})
    return grouped.reset_index(), unit


def default_figures(study: StudySpec, table: pd.DataFrame) -> list[FigureSpec]:
    """Time, energy and DRAM bandwidth against the first axis, grouped by the second (if any)."""
    keys = list(study.axis_keys)
    numeric = [k for k in keys if k in table and pd.api.types.is_numeric_dtype(table[k])
               and table[k].nunique() > 1]
    x = numeric[0] if numeric else keys[0]
    others = [k for k in keys if k != x]
    group = others[0] if others else None
    errors = REPORT_ERRORS.get(study.crosscheck or "", ())
    ys = list(DEFAULT_Y) + [f"crosscheck/{study.crosscheck}/{q}" for _, q in errors if q.endswith("time_error")]
    return [FigureSpec(x=x, y=y, group=group, logx=None) for y in ys]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def _short(key: str) -> str:
    return key.split(".", 1)[1] if "." in key else key


def _label(key: str, value: Any) -> str:
    return format_value(value, unit_of_key(key))


def draw_figure(fig: FigureSpec, study: StudySpec, table: pd.DataFrame, fig_dir: Path) -> Path:
    """Draw one figure; KeyError if its quantity is not in the table."""
    keys = list(study.axis_keys)
    data, y_unit = quantity_table(table, keys, fig.y)
    rest = [k for k in keys if k not in (fig.x, fig.group) and data[k].nunique() > 1]
    panels = []
    for panel_key, pdata in (data.groupby(rest, sort=False) if rest else [((), data)]):
        panel_key = panel_key if isinstance(panel_key, tuple) else (panel_key,)
        title = ", ".join(f"{_short(k)} = {_label(k, v)}" for k, v in zip(rest, panel_key))
        series = []
        for gkey, gdata in (pdata.groupby(fig.group, sort=False) if fig.group else [(None, pdata)]):
            gdata = gdata.sort_values(fig.x, kind="stable")
            label = f"{_label(fig.group, gkey)}" if fig.group else ""
            series.append(Series(label=label, x=tuple(gdata[fig.x].tolist()), y=tuple(gdata["value"].tolist())))
        panels.append(Panel(title=title, series=tuple(series)))
    y_name = "total energy" if fig.y == ENERGY_TOTAL else fig.y
    name = f"{_slug(fig.y)}_vs_{_slug(_short(fig.x))}" + (f"_by_{_slug(_short(fig.group))}" if fig.group else "")
    x_unit = unit_of_key(fig.x)
    return line_panels(panels, fig_dir / f"{name}.png", xlabel=_short(fig.x) + (f" ({x_unit})" if x_unit else ""),
                       ylabel=y_name + (f" ({y_unit})" if y_unit else ""), x_unit=x_unit, y_unit=y_unit,
                       title=fig.title or f"{study.name}: {y_name}", legend_title=_short(fig.group or ""),
                       logx=fig.logx, logy=fig.logy)


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|")


def write_report(outcome: StudyOutcome, table: pd.DataFrame, figures: list[tuple[FigureSpec, Path | str]],
                 path: str | Path) -> Path:
    """Write report.md: the sweep, the counts, one summary row per point, the figures, the failures."""
    study = outcome.study
    out = Path(path)
    keys = list(study.axis_keys)
    columns = list(SUMMARY_Y) + [(title, f"crosscheck/{study.crosscheck}/{q}")
                                 for title, q in REPORT_ERRORS.get(study.crosscheck or "", ())]
    system_name = outcome.points[0].loaded.spec.name if outcome.points else ""
    workload_name = outcome.points[0].workload.name if outcome.points else ""
    stored = set(table["run_hash"]) if "run_hash" in table else set()
    lines = [f"# Study `{study.name}`", "",
             f"- study file: `{study.source}`",
             f"- system: {system_name} (`{study.system_path.name}`)",
             f"- workload: {workload_name} (`{study.workload_path.name}`)",
             f"- points: {len(outcome.points)} ({len(stored)} stored: {len(outcome.simulated)} simulated by this "
             f"run, {len(outcome.reused)} reused; {len(outcome.failed)} failed)",
             "- table: `study.parquet` (one row per point and quantity; axis values as columns)", "",
             "## Sweep", "", "| axis | kind | values |", "|---|---|---|"]
    for a in study.axes:
        lines.append(f"| `{a.key}` | {a.group} | {', '.join(_md_escape(v) for v in a.values)} |")
    lines += ["", "## Points", "",
              "| " + " | ".join([*(_short(k) for k in keys), *(n for n, _ in columns), "run"]) + " |",
              "|" + "---|" * (len(keys) + len(columns) + 1)]
    summaries: dict[str, dict[str, str]] = {}
    for name, y in columns:
        try:
            data, unit = quantity_table(table, keys, y)
        except KeyError:
            continue
        for h, v in zip(data["run_hash"].tolist(), data["value"].tolist()):
            summaries.setdefault(h, {})[name] = format_value(v, unit)
    for p in outcome.points:
        if p.run_hash in stored:
            cells = [*(_md_escape(_label(k, v)) for k, v in p.coords),
                     *(summaries.get(p.run_hash, {}).get(n, "") for n, _ in columns),
                     f"[`{p.run_hash}`](points/{p.run_hash}/summary.json)"]
        else:
            cells = [*(_md_escape(_label(k, v)) for k, v in p.coords), *("failed" for _ in columns),
                     f"[`{p.run_hash}`](failed/{p.run_hash}.json)"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Figures", ""]
    for fig, result in figures:
        if isinstance(result, Path):
            rel = result.relative_to(out.parent).as_posix()
            lines += [f"![{fig.y} against {fig.x}]({rel})", ""]
        else:
            lines += [f"- not drawn: y `{fig.y}` against `{fig.x}`: {result}", ""]
    failed = [p for p in outcome.points if p.run_hash not in stored]
    if failed:
        lines += ["## Failed points", ""]
        for p in failed:
            lines.append(f"- {_md_escape(p.label())}: see `failed/{p.run_hash}.json`")
        lines.append("")
    out.write_text("\n".join(lines).rstrip() + "\n")
    return out


def write_outputs(outcome: StudyOutcome) -> tuple[Path, Path]:
    """Write study.parquet, figures/*.png and report.md into the study directory; return table and report paths."""
    out = outcome.out_dir
    table = consolidate(outcome.points, out)
    if outcome.study.crosscheck:
        table = pd.concat([table, crosscheck_table(outcome.study, outcome.points, table, out)], ignore_index=True)
    table_path = write_table(table, out / "study.parquet")
    figures: list[tuple[FigureSpec, Path | str]] = []
    if len(table):
        specs = list(outcome.study.figures) or default_figures(outcome.study, table)
        for fig in specs:
            try:
                figures.append((fig, draw_figure(fig, outcome.study, table, out / "figures")))
            except KeyError:
                figures.append((fig, f"no quantity {fig.y!r} in the results (expected 'component/quantity' "
                                     "as in results.parquet, or 'energy/total')"))
    report_path = write_report(outcome, table, figures, out / "report.md")
    return table_path, report_path
