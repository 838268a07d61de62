"""A study's consolidated outputs: ``study.parquet``, figures (PNG) and ``report.md``.

The table is built from the stored points only (never from in-memory results),
in the points' sorted axis order, so it is the same whether the points were
simulated now, reused from an interrupted run, or finished in any order. One
row per point and quantity: the axis columns (named by their study keys and
holding resolved values: SI numbers for quantities), ``run_hash``, then the
run's long form (component, quantity, value, unit).

A figure's ``y`` is ``component/quantity`` (split at the last ``/``), or
``energy/total``: the sum of every ``energy/*`` row of a point. The checks before
any point runs (``simulator.studies.sweep.check_figure_quantities``) refuse a quantity no run
can have; one that only a run can tell (a stage's, an accelerator's) and that
no stored point has is left out of the report with a note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from simulator.errors import ConfigError
from simulator.config.files import write_atomic
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.studies.plots import Panel, Series, format_value, line_panels
from simulator.studies.crosschecks import CROSSCHECKS, crosscheck_table
from simulator.studies.spec import FigureSpec, Point, StudyOutcome, StudySpec, short_key

ENERGY_TOTAL = "energy/total"
DEFAULT_Y = ("system/simulated_time_s", ENERGY_TOTAL, "dram/bandwidth_bytes_per_s")
SUMMARY_Y = (("time", "system/simulated_time_s"), ("energy", ENERGY_TOTAL),
             ("DRAM bandwidth", "dram/bandwidth_bytes_per_s"))


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
    # permissive: points stored by another pyarrow or pandas may hold their text as string or large_string
    table = pa.concat_tables(frames, promote_options="permissive").to_pandas()
    cols: dict[str, Any] = {}
    for i, key in enumerate(keys):
        per_point = [p.coords[i][1] for p in kept]
        cols[key] = _axis_column([v for v, n in zip(per_point, lengths) for _ in range(n)])
    cols["run_hash"] = pd.Series([p.run_hash for p, n in zip(kept, lengths) for _ in range(n)], dtype="object")
    head = pd.DataFrame(cols)
    return pd.concat([head, table], axis=1)


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write the consolidated table as Parquet, atomically (temp file, then rename; mode as under the umask)."""
    return write_atomic(path, lambda tmp: table.to_parquet(tmp, index=False))


def quantity_table(table: pd.DataFrame, axis_keys: list[str], y: str) -> tuple[pd.DataFrame, str]:
    """One row per point: run_hash, the axis columns and ``value`` of quantity ``y`` (NaN where a part of it is
    not known); and y's unit.

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
    # a sum with a part not known (NaN: an energy no declared figure prices) is not known either
    unknown = sel["value"].isna().groupby(sel["run_hash"], sort=False).any()
    grouped.loc[unknown[unknown].index, "value"] = float("nan")
    return grouped.reset_index(), unit


def default_figures(study: StudySpec, table: pd.DataFrame) -> list[FigureSpec]:
    """Time, energy and DRAM bandwidth against the first axis, grouped by the second (if any)."""
    keys = list(study.axis_keys)
    numeric = [k for k in keys if k in table and pd.api.types.is_numeric_dtype(table[k])
               and table[k].nunique() > 1]
    x = numeric[0] if numeric else keys[0]
    others = [k for k in keys if k != x]
    group = others[0] if others else None
    errors = (CROSSCHECKS[study.crosscheck].report_errors if study.crosscheck else ())
    ys = list(DEFAULT_Y) + [f"crosscheck/{study.crosscheck}/{q}" for _, q in errors if q.endswith("time_error")]
    return [FigureSpec(x=x, y=y, group=group, logx=None) for y in ys]


def axis_units(study: StudySpec) -> dict[str, str]:
    """The unit of each axis of ``study`` ("" for none): a ``set.`` axis's from the system schema, a ``param.``
    axis's from its generator's parameters (as ``offsim keys`` and ``offsim generators`` print them)."""
    from simulator.config.effective import key_unit
    from workloads.spec import describe_generator, load_workload

    try:
        generator = load_workload(study.workload_path).generator
    except (ConfigError, OSError):
        generator = None
    params = {p.name: p.unit for p in describe_generator(generator)[1]} if generator else {}
    return {key: key_unit(key.split(".", 1)[1]) if key.startswith("set.") else params.get(short_key(key), "")
            for key in study.axis_keys}


def _label(units: dict[str, str], key: str, value: Any) -> str:
    return format_value(value, units.get(key, ""))


def draw_figure(fig: FigureSpec, study: StudySpec, table: pd.DataFrame, fig_dir: Path,
                units: dict[str, str] | None = None) -> Path:
    """Draw one figure (``units``: ``axis_units(study)``, where the caller has them); KeyError if its quantity is
    not in the table."""
    keys = list(study.axis_keys)
    units = axis_units(study) if units is None else units
    data, y_unit = quantity_table(table, keys, fig.y)
    rest = [k for k in keys if k not in (fig.x, fig.group) and data[k].nunique() > 1]
    panels = []
    for panel_key, pdata in (data.groupby(rest, sort=False) if rest else [((), data)]):
        panel_key = panel_key if isinstance(panel_key, tuple) else (panel_key,)
        title = ", ".join(f"{short_key(k)} = {_label(units, k, v)}" for k, v in zip(rest, panel_key))
        series = []
        for gkey, gdata in (pdata.groupby(fig.group, sort=False) if fig.group else [(None, pdata)]):
            gdata = gdata.sort_values(fig.x, kind="stable")
            label = f"{_label(units, fig.group, gkey)}" if fig.group else ""
            series.append(Series(label=label, x=tuple(gdata[fig.x].tolist()), y=tuple(gdata["value"].tolist())))
        panels.append(Panel(title=title, series=tuple(series)))
    y_name = "total energy" if fig.y == ENERGY_TOTAL else fig.y
    x_unit = units.get(fig.x, "")
    xlabel = short_key(fig.x) + (f" ({x_unit})" if x_unit else "")
    return line_panels(panels, fig_dir / f"{fig.stem}.png", xlabel=xlabel,
                       ylabel=y_name + (f" ({y_unit})" if y_unit else ""), x_unit=x_unit, y_unit=y_unit,
                       title=fig.title or f"{study.name}: {y_name}", legend_title=short_key(fig.group or ""),
                       logx=fig.logx, logy=fig.logy)


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|")


def _system_name(study: StudySpec, outcome: StudyOutcome) -> str:
    """The study's system as its file names it, before any point's overrides (a point that sets the coupling
    runs on a system whose name still says the file's coupling)."""
    try:
        return load_spec(study.system_path, SystemSpec).spec.name
    except (ConfigError, OSError):
        return outcome.points[0].loaded.spec.name if outcome.points else ""


def write_report(outcome: StudyOutcome, table: pd.DataFrame, figures: list[tuple[FigureSpec, Path | str]],
                 path: str | Path, units: dict[str, str] | None = None) -> Path:
    """Write report.md atomically (temp file, then rename): the sweep, the counts, one summary row per point, the
    figures, the failures (``units``: ``axis_units`` of the study, where the caller has them)."""
    study = outcome.study
    out = Path(path)
    keys = list(study.axis_keys)
    units = axis_units(study) if units is None else units
    columns = list(SUMMARY_Y) + [(title, f"crosscheck/{study.crosscheck}/{q}")
                                 for title, q in (CROSSCHECKS[study.crosscheck].report_errors if study.crosscheck else ())]
    system_name = _system_name(study, outcome)
    swept = [f"`{a.target}`" for a in study.axes if a.kind == "set"]
    workload_name = outcome.points[0].workload.name if outcome.points else ""
    stored = set(table["run_hash"]) if "run_hash" in table else set()
    lines = [f"# Study `{study.name}`", "",
             f"- study file: `{study.source}`",
             f"- system: {system_name} (`{study.system_path.name}`)"
             + (f"; each point sets {', '.join(swept)} (see Sweep)" if swept else ""),
             f"- workload: {workload_name} (`{study.workload_path.name}`)",
             f"- points: {len(outcome.points)} ({len(stored)} stored: {len(outcome.simulated)} simulated by this "
             f"run, {len(outcome.reused)} reused; {len(outcome.failed)} failed)",
             "- table: `study.parquet` (one row per point and quantity; axis values as columns)", "",
             "## Sweep", "", "| axis | kind | values |", "|---|---|---|"]
    for a in study.axes:
        lines.append(f"| `{a.key}` | {a.group} | {', '.join(_md_escape(v) for v in a.values)} |")
    lines += ["", "## Points", "",
              "| " + " | ".join([*(short_key(k) for k in keys), *(n for n, _ in columns), "run"]) + " |",
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
            cells = [*(_md_escape(_label(units, k, v)) for k, v in p.coords),
                     *(summaries.get(p.run_hash, {}).get(n, "") for n, _ in columns),
                     f"[`{p.run_hash}`](points/{p.run_hash}/summary.json)"]
        else:
            cells = [*(_md_escape(_label(units, k, v)) for k, v in p.coords), *("failed" for _ in columns),
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
    text = "\n".join(lines).rstrip() + "\n"
    return write_atomic(out, lambda tmp: tmp.write_text(text))


def write_outputs(outcome: StudyOutcome) -> tuple[Path, Path]:
    """Write study.parquet, figures/*.png and report.md into the study directory; return table and report paths."""
    out = outcome.out_dir
    table = consolidate(outcome.points, out)
    if outcome.study.crosscheck:
        table = pd.concat([table, crosscheck_table(outcome.study, outcome.points, table, out)], ignore_index=True)
    table_path = write_table(table, out / "study.parquet")
    units = axis_units(outcome.study)
    figures: list[tuple[FigureSpec, Path | str]] = []
    if len(table):
        specs = list(outcome.study.figures) or default_figures(outcome.study, table)
        for fig in specs:
            try:
                figures.append((fig, draw_figure(fig, outcome.study, table, out / "figures", units)))
            except KeyError:
                figures.append((fig, f"no quantity {fig.y!r} in the results (expected 'component/quantity' "
                                     "as in results.parquet, or 'energy/total')"))
    report_path = write_report(outcome, table, figures, out / "report.md", units)
    return table_path, report_path
