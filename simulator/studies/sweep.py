"""Studies: expand a sweep file into points, run them in parallel, store each point once.

A study file (YAML) names a system config, a workload and a sweep::

    name: micro-sweep
    system: ../systems/i7_920_ddr3.yaml     # relative to the study file
    workload: ../workloads/stream_read.yaml
    sweep:
      product:                               # cartesian product of these axes
        set.host.max_outstanding_misses: [4, 8, 10, 16]   # a system --set key
        param.array_bytes: ["4 MiB", "16 MiB"]            # a workload parameter
      zip:                                   # axes advanced together (equal lengths)
        ...
    figures:                                 # optional; see simulator.studies.report
      - {x: set.host.max_outstanding_misses, y: dram/bandwidth_bytes_per_s, group: param.array_bytes}

With both ``product`` and ``zip``, the points are the product grid times the
zipped sequence. Everything is checked before any point runs or anything is
written: top-level and sweep keys, axis keys (against the system schema and the
workload generator's signature), list lengths, repeated values (after unit
parsing: ``1 MiB`` repeats ``1048576 B``; over the zip axes, repeated rows),
every point's system and workload (units, bounds, and the generator's own
checks, by generating each distinct workload's trace once, as ``offsim run``
does), each figure's ``x``/``group`` (axis keys) and ``y``. Problems raise
``ConfigError`` naming the study file and the key; a problem of the system or
workload file at a key no axis sets is said once, naming that file and its key
(``_check_system_file``, ``_check_workload_file``), not per point or axis value.

A figure's ``y`` is checked against the quantities a run on the points' systems
emits (``run_quantities``: system, host, cache/<level>, dram and energy/...
rows, read from a freshly built system), or is ``energy/total``. Two kinds of
rows only a run can tell: ``stage/...`` (named by the trace's stages) and an
accelerator's quantities (``accel/<name>``, ``energy/<name>``: counters appear
as they count); for those only the accelerator's name is checked, and a
quantity no point has is left out of the report with a note.

The output directory (``--out``, default ``results/studies/<name>``) may be a
new path, an empty directory or a previous directory of the same study, which
is resumed: one holding only a study's entries (``STUDY_ENTRIES``) and its lock
file ``.study.lock``, which names the study that last ran there (``study_identity``: its name, system and
workload files). Anything else
is refused before any work. A run removes the previous run's table, report and
figures before it runs a point, and writes them anew from every stored point at
its end: a run stopped before then leaves none that would pass for its own. A
point whose stored files cannot be read (a truncated ``results.parquet``, say)
is not done: it is said on stderr, removed and run again.

Each point's identity is its run hash: the hash of the resolved system spec and
the workload spec (a stored trace's by its file's digest, not its path: an
edited trace is run again, another spelling of its path is not), the same
``run_hash`` that ``runner.simulate`` records. A point is stored atomically
under ``points/<hash>/`` (``runner.write_run_dir``); stored points are skipped,
so an interrupted study resumes where it stopped. A point that raises is
recorded in ``failed/<hash>.json`` and retried on the next run (a run removes the records of points its
sweep does not hold). Points run on a
local process pool, whose workers also store their points (in parallel), or on
dask.distributed (a scheduler address, or a local cluster of N worker
processes), whose workers return Results for the driver to store, so that remote
workers need no shared filesystem. The executor is started (a scheduler
connected) before the study writes anything, so a bad scheduler address leaves
no output behind.
"""

from __future__ import annotations

import copy
import fcntl
import itertools
import json
import math
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from concurrent.futures import Executor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from simulator.studies import interruption
from simulator.errors import ConfigError, InputError, Problem, overlaps
from simulator.config.fields import build_spec, did_you_mean, spec_to_dict
from simulator.config.loader import (LoadedConfig, apply_overrides, content_hash, indexed_key, list_item,
                                     resolve_presets)
from simulator.config.schema import SystemSpec, dram_geometry
from workloads.spec import WorkloadSpec, build_workload, name_error, run_hash
from simulator.config.yamlio import load_yaml
from simulator.studies.executors import check_parallel_options, point_executor, tasks_per_worker
from simulator.studies.schedule import LongestFirst
from simulator.config.files import write_atomic
from simulator.config.outputs import check_output_target, first_missing, listing, make_output_dir, remove_created
from simulator.results import Results
from simulator.studies.crosschecks import CROSSCHECK_MODELS, CROSSCHECKS, MACHINE_FILES
from simulator.studies.plugin import STUDY_KINDS
from simulator.studies.spec import Axis, FigureSpec, Point, StudyOutcome, StudySpec

STUDY_KEYS = ("name", "system", "workload", "sweep", "figures", "crosscheck", "source", "notes")


SWEEP_GROUPS = ("product", "zip")
AXIS_KINDS = ("set", "param")
FIGURE_KEYS = ("x", "y", "group", "logx", "logy", "title")
DEFAULT_STUDIES_DIR = Path("results") / "studies"
LOCK_WAIT_S = 5.0
LOCK_NAME = ".study.lock"
#: What a study writes from its stored points once they have run (``report.write_outputs``): removed when a run
#: starts, so that a run stopped before its end leaves no table, report or figure of an earlier run looking current.
CONSOLIDATED_OUTPUTS = ("figures", "study.parquet", "report.md")
# what a study directory holds (besides hidden temporary files of interrupted writes)
STUDY_ENTRIES = ("points", "failed", *CONSOLIDATED_OUTPUTS, *MACHINE_FILES.values(), LOCK_NAME)
RESULTS_COLUMNS = ["component", "quantity", "value", "unit"]


# ---------------------------------------------------------------- study file


def load_study(path: str | Path) -> StudySpec:
    """Read and validate a study file's structure; raise ConfigError naming the file and key.

    Axis keys and values are checked against the system and workload by ``prepare_points``.
    """
    source = str(path)
    raw = load_yaml(path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: expected a mapping with name, system, workload and sweep")
    kind = raw.get("study")
    if isinstance(kind, str) and kind in STUDY_KINDS:
        raise ConfigError(f"{source}: study: {kind!r} is a specialised study that the sweep runner does not run; "
                          f"expected a sweep file (keys {', '.join(STUDY_KEYS)}). Run it with: offsim study {source}")
    if "study" in raw:  # a paper's study file of a kind no runner has: one message, not every sweep key
        raise ConfigError(f"{source}: study: {kind!r} is not a paper study kind; expected one of: "
                          f"{', '.join(sorted(STUDY_KINDS))} (or a sweep file, without 'study:')")
    errors = [f"{source}: {k}: unknown key; expected one of: {', '.join(STUDY_KEYS)}"
              for k in raw if k not in STUDY_KEYS]
    name = raw.get("name", Path(source).stem)
    problem = name_error(name, source)  # the run directories' rule: the study directory is named after it
    if problem:
        errors.append(problem)
    base = Path(path).parent
    paths: dict[str, Path] = {}
    for key in ("system", "workload"):
        value = raw.get(key)
        if not isinstance(value, str) or not value:
            errors.append(f"{source}: {key}: {'missing' if value is None else repr(value)}; "
                          f"expected the path of a {key} YAML file (relative to the study file)")
            continue
        p = Path(value)
        p = p if p.is_absolute() else base / p
        if not p.is_file():
            found = "is a directory" if p.is_dir() else "not found"
            errors.append(f"{source}: {key}: {value!r} {found} (looked at {p}); expected an existing {key} file")
        paths[key] = p
    axes = _parse_sweep(raw.get("sweep"), source, errors)
    # every axis the file names, its values refused or not: a figure over a refused axis is not a second error
    figures = _parse_figures(raw.get("figures"), {a.key for a in axes} | _named_axes(raw.get("sweep")), source,
                             errors)
    crosscheck = raw.get("crosscheck")
    if crosscheck is not None and crosscheck not in CROSSCHECK_MODELS:
        errors.append(f"{source}: crosscheck: {crosscheck!r}; expected one of: {', '.join(CROSSCHECK_MODELS)} "
                      "(or no crosscheck key)")
    if errors:
        raise ConfigError(errors)
    return StudySpec(name=str(name), source=source, system_path=paths["system"],
                     workload_path=paths["workload"], axes=tuple(axes), figures=tuple(figures),
                     crosscheck=crosscheck)


def _named_axes(sweep: Any) -> set[str]:
    """The axis keys a study file's ``sweep`` names under its groups, whatever their values."""
    if not isinstance(sweep, dict):
        return set()
    return {str(key) for group in SWEEP_GROUPS if isinstance(sweep.get(group), dict) for key in sweep[group]}


def _parse_sweep(sweep: Any, source: str, errors: list[str]) -> list[Axis]:
    if sweep is None:
        errors.append(f"{source}: sweep: missing; expected a mapping with 'product' and/or 'zip' axes")
        return []
    if not isinstance(sweep, dict):
        errors.append(f"{source}: sweep: {sweep!r}; expected a mapping with 'product' and/or 'zip' axes")
        return []
    axes: list[Axis] = []
    for group in sweep:
        if group not in SWEEP_GROUPS:
            errors.append(f"{source}: sweep.{group}: unknown key; expected one of: {', '.join(SWEEP_GROUPS)}")
    seen: set[str] = set()
    for group in SWEEP_GROUPS:
        body = sweep.get(group)
        if body is None:
            continue
        if not isinstance(body, dict):
            errors.append(f"{source}: sweep.{group}: {body!r}; expected a mapping of axis key -> list of values")
            continue
        for key, values in body.items():
            where = f"{source}: sweep.{group}.{key}"
            kind = str(key).split(".", 1)[0]
            if kind not in AXIS_KINDS or "." not in str(key) or not str(key).split(".", 1)[1]:
                errors.append(f"{where}: unknown axis key; expected 'set.<system key>' or 'param.<workload parameter>'")
                continue
            if key in seen:
                errors.append(f"{where}: axis given twice; expected each axis once, in product or in zip")
                continue
            seen.add(key)
            if not isinstance(values, list) or not values:
                errors.append(f"{where}: {values!r}; expected a non-empty list of values")
                continue
            if not all(isinstance(v, (str, int, float)) for v in values):  # bool is an int
                errors.append(f"{where}: {values!r}; expected a list of scalar values (numbers, strings, booleans)")
                continue
            axes.append(Axis(key=str(key), values=tuple(values), group=group))
    zipped = [a for a in axes if a.group == "zip"]
    if len({len(a.values) for a in zipped}) > 1:
        lengths = ", ".join(f"{a.key}: {len(a.values)}" for a in zipped)
        errors.append(f"{source}: sweep.zip: axes of different lengths ({lengths}); expected equal lengths")
    if not axes and not any(e.startswith(f"{source}: sweep") for e in errors):
        errors.append(f"{source}: sweep: empty; expected at least one axis under 'product' or 'zip'")
    return axes


#: Most figures a study may ask for: each takes a fraction of a second to draw after the points have run.
MAX_FIGURES = 64


def _parse_figures(raw: Any, axis_keys: set[str], source: str, errors: list[str]) -> list[FigureSpec]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(f"{source}: figures: {raw!r}; expected a list of {{x, y, group}} mappings")
        return []
    if len(raw) > MAX_FIGURES:
        errors.append(f"{source}: figures: {len(raw)} figures; expected at most {MAX_FIGURES} "
                      "(simulator.studies.sweep.MAX_FIGURES)")
        return []
    figures = []
    first_of: dict[str, int] = {}  # figures by the file they are drawn to (FigureSpec.stem)
    for i, item in enumerate(raw):
        where = f"{source}: figures[{i}]"
        if not isinstance(item, dict):
            errors.append(f"{where}: {item!r}; expected a mapping with x, y and optionally group")
            continue
        bad = [k for k in item if k not in FIGURE_KEYS]
        for k in bad:
            errors.append(f"{where}.{k}: unknown key; expected one of: {', '.join(FIGURE_KEYS)}")
        for k in ("x", "group"):
            v = item.get(k)
            if (k == "x" or v is not None) and not (isinstance(v, str) and v in axis_keys):
                errors.append(f"{where}.{k}: {v!r}; expected a key string, one of the sweep's axis keys: "
                              f"{', '.join(sorted(axis_keys))}")
        if item.get("group") is not None and item.get("group") == item.get("x"):
            errors.append(f"{where}.group: {item['group']!r} is also x; expected a different axis")
        y = item.get("y")
        if not isinstance(y, str) or "/" not in y or y.startswith("/") or y.endswith("/"):
            errors.append(f"{where}.y: {y!r}; expected 'component/quantity', e.g. 'dram/bandwidth_bytes_per_s', "
                          "'cache/L1D/misses' or 'energy/total'")
        for k in ("logx", "logy"):
            if k in item and not isinstance(item[k], bool):
                errors.append(f"{where}.{k}: {item[k]!r}; expected true or false")
        if "title" in item and not isinstance(item["title"], str):
            errors.append(f"{where}.title: {item['title']!r}; expected a string")
        if not bad:
            figure = FigureSpec(x=item.get("x"), y=y, group=item.get("group"), logx=item.get("logx"),
                                logy=item.get("logy", False), title=item.get("title"))
            named = all(isinstance(v, str) for v in (figure.x, figure.y, figure.group or ""))
            seen = first_of.setdefault(figure.stem, i) if named else i  # (other values are refused above)
            if seen != i:
                errors.append(f"{where}: the file of figures[{seen}] ({figure.stem}.png), which it would overwrite; "
                              "expected each figure once")
            figures.append(figure)
    return figures


#: Most points a study may have unless ``offsim study --max-points N`` raises it. Every point's system
#: and workload are built and checked before anything runs (some 1.5 ms and 10 kB a point: 10^5 points
#: took 155 s and 1 GB), so that a mistyped axis of a million values is refused at once instead.
DEFAULT_MAX_POINTS = 10_000


def check_max_points(max_points: int) -> None:
    """Raise ConfigError naming ``--max-points`` unless ``max_points`` is a positive number of points."""
    if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 1:
        raise ConfigError(f"--max-points: {max_points}; expected a positive number of points")


def check_point_count(where: str, count: int, max_points: int) -> None:
    """Raise ConfigError at ``where`` (the file, and the key that makes the points) if a study of ``count``
    points has more than ``max_points``: the limit of every ``offsim study``, sweep or paper study
    (``check_max_points``)."""
    check_max_points(max_points)
    if count > max_points:
        raise ConfigError(f"{where}: {count:,} points; expected at most {max_points:,} "
                          "(--max-points N of offsim study and offsim validate allows more)")


def point_count(study: StudySpec) -> int:
    """How many points ``study`` has: the product grid's size times the zipped sequence's length."""
    count = math.prod(len(a.values) for a in study.axes if a.group == "product")
    zipped = [len(a.values) for a in study.axes if a.group == "zip"]
    return count * (zipped[0] if zipped else 1)


def expand(study: StudySpec) -> list[tuple[tuple[str, Any], ...]]:
    """The points' axis values (as written), in sweep order: product grid x zipped sequence."""
    product = [a for a in study.axes if a.group == "product"]
    zipped = [a for a in study.axes if a.group == "zip"]
    grid = list(itertools.product(*[[(a.key, v) for v in a.values] for a in product]))
    seq = list(zip(*[[(a.key, v) for v in a.values] for a in zipped])) if zipped else [()]
    return [tuple(g) + tuple(z) for g in grid for z in seq]


# ---------------------------------------------------------------- building points


def _override_text(target: str, value: Any) -> str:
    """A ``--set`` string whose value YAML-parses back to ``value`` (JSON is YAML)."""
    return f"{target}={json.dumps(value)}"


def _without_file(entry: Problem | str, section: str = "") -> str:
    """A problem as a study message quotes it under its own key (an axis value, a point): its key and
    detail without the file or option (the key too when it is ``section``); unkeyed text as it is."""
    if not isinstance(entry, Problem):
        return entry
    return entry.detail if entry.key in ("", section) else f"{entry.key}: {entry.detail}"


class _Builder:
    """Builds systems and workloads for points, caching by the overrides that apply."""

    def __init__(self, study: StudySpec):
        self.study = study
        self.system_source = str(study.system_path)
        raw = load_yaml(study.system_path)
        if not isinstance(raw, dict):
            raise ConfigError(f"{self.system_source}: expected a mapping at the top level, got {type(raw).__name__}")
        self.system_raw = resolve_presets(raw, self.system_source)
        self.workload_source = str(study.workload_path)
        self.workload_raw = load_yaml(study.workload_path)
        self._systems: dict[tuple, LoadedConfig] = {}
        self._workloads: dict[tuple, WorkloadSpec] = {}
        self._trace_problems: dict[tuple, str | None] = {}
        self._trace_ends: dict[tuple, float] = {}  # where each trace's host accesses end, B
        self._offload_rows: dict[tuple, int] = {}  # how many accelerator commands each trace holds
        self._trace_sizes: dict[tuple, tuple[float, int]] = {}  # each trace's bytes touched and rows
        self._last_trace: tuple[tuple, Any] | None = None  # the last trace made: (params, table)
        self._system_problems: dict[tuple, str | None] = {}  # by params and what the check reads of a system

    def system(self, overrides: tuple[tuple[str, Any], ...]) -> LoadedConfig:
        """The system with ``(target, value)`` overrides applied; ConfigError if invalid."""
        if overrides not in self._systems:
            texts = [_override_text(t, v) for t, v in overrides]
            resolved = apply_overrides(self.system_raw, texts, SystemSpec)
            errors: list[str] = []
            spec = build_spec(SystemSpec, resolved, self.system_source, "", errors)
            if errors:
                raise ConfigError(errors)
            self._systems[overrides] = LoadedConfig(spec=spec, resolved=resolved, source=self.system_source)
        return self._systems[overrides]

    def workload(self, params: tuple[tuple[str, Any], ...]) -> WorkloadSpec:
        """The workload with ``(parameter, value)`` overrides applied; ConfigError if invalid."""
        if params not in self._workloads:
            raw = copy.deepcopy(self.workload_raw)
            if isinstance(raw, dict) and params:
                if "trace" in raw:
                    raise ConfigError(f"{self.workload_source}: params: the workload is a stored trace; "
                                      "expected a generator workload for param. axes")
                if not isinstance(raw.get("params") or {}, dict):
                    raise ConfigError(f"{self.workload_source}: params: expected a mapping")
                raw["params"] = {**(raw.get("params") or {}), **dict(params)}
            self._workloads[params] = build_workload(raw, self.workload_source, self.study.workload_path.parent)
        return self._workloads[params]

    def resolved(self, axis: Axis, value: Any) -> Any:
        """The value ``axis`` takes at ``value`` after parsing (``_resolved_value``, the workload ``filled``);
        ConfigError if invalid."""
        if axis.kind == "set":
            return _resolved_value(self.system(((axis.target, value),)), None, axis)
        return self.workload(self.filled(((axis.target, value),))).params[axis.target]

    def filled(self, params: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
        """``params`` (workload parameter, value) with the first value of each other ``param.`` axis whose
        parameter the workload file lacks: every point has a value of each axis, so the file may leave out
        what an axis gives, and a value checked on its own is checked with one."""
        raw = self.workload_raw.get("params") if isinstance(self.workload_raw, dict) else None
        given = {*(k for k, _ in params), *(raw if isinstance(raw, dict) else ())}
        return params + tuple((a.target, a.values[0]) for a in self.study.axes
                              if a.kind == "param" and a.target not in given)

    def trace_problem(self, params: tuple[tuple[str, Any], ...]) -> str | None:
        """Why the workload with ``params`` cannot make its trace (the generator's message, without the
        workload file's name), or None. The trace is generated as ``offsim run`` does, since only the
        generator knows its rules (value ranges, parameters that must agree); it is not kept (the worker
        makes it again), and each parameter set is generated once. Where its host accesses end is kept
        (``trace_end_bytes``), to check it against each point's DRAM."""
        from workloads.spec import generate_trace
        from workloads.trace import address_end_bytes, command_rows, trace_summary

        if params not in self._trace_problems:
            problem = None
            try:
                self._last_trace = None  # dropped before the next is made: one trace in memory at a time
                trace = generate_trace(self.workload(params), self.workload_source)
                self._last_trace = (params, trace)
                self._trace_ends[params] = address_end_bytes(trace)
                self._offload_rows[params] = command_rows(trace)
                summary = trace_summary(trace)
                self._trace_sizes[params] = (float(summary["bytes_touched"]), int(summary["rows"]))
            except ConfigError as exc:
                problem = "; ".join(_without_file(e, "params") for e in exc.entries)
            self._trace_problems[params] = problem
        return self._trace_problems[params]

    def system_problem(self, loaded: LoadedConfig, params: tuple[tuple[str, Any], ...]) -> str | None:
        """Why the trace of ``params`` (after ``trace_problem`` found none) cannot run on ``loaded``'s system, as
        ``offsim run`` checks it before replaying (its units and commands, threads, host time, lines), or None.
        The last trace made is kept for it: points of one workload are checked one after another."""
        from workloads.spec import generate_trace
        from simulator.engine.limits import simulated_limit_s
        from simulator.runner import check_trace_on_system

        spec = loaded.spec  # what the check reads of the system: points that agree on it share its outcome
        host = {k: getattr(spec.host, k) for k in ("cores", "frequency_hz", "flops_per_cycle", "loads_per_cycle")}
        key = (params, content_hash({"host": host, "line_bytes": spec.caches.line_bytes,
                                     "accelerators": {n: spec_to_dict(a) for n, a in spec.accelerators.items()},
                                     "near_memories": {n: spec_to_dict(m) for n, m in spec.near_memories.items()},
                                     "capacity_bytes": dram_geometry(spec).capacity_bytes,
                                     "limit_s": simulated_limit_s(spec), "source": loaded.source}))
        if key not in self._system_problems:
            if self._last_trace is None or self._last_trace[0] != params:
                self._last_trace = None
                self._last_trace = (params, generate_trace(self.workload(params), self.workload_source))
            try:  # a stored trace is named by its file, as offsim run names it
                check_trace_on_system(loaded, self._last_trace[1],
                                      str(self.workload(params).trace_path or self.workload_source))
                self._system_problems[key] = None
            except ConfigError as exc:
                self._system_problems[key] = "; ".join(_without_file(e, "") for e in exc.entries)
        return self._system_problems[key]

    def trace_end_bytes(self, params: tuple[tuple[str, Any], ...]) -> float:
        """Where the host accesses of the workload with ``params`` end, B (after ``trace_problem`` found none)."""
        return self._trace_ends[params]

    def trace_size(self, params: tuple[tuple[str, Any], ...]) -> tuple[float, int]:
        """The trace of ``params``: element bytes its memory rows touch and its rows (after ``trace_problem``
        found none)."""
        return self._trace_sizes[params]

    def trace_offload_rows(self, params: tuple[tuple[str, Any], ...]) -> int:
        """How many accelerator command rows the trace of ``params`` holds (after ``trace_problem`` found none)."""
        return self._offload_rows[params]


def _axis_where(study: StudySpec, axis: Axis) -> str:
    return f"{study.source}: sweep.{axis.group}.{axis.key}"


def _file_problems(entries: list[Problem | str], targets: list[str]) -> list[Problem | str]:
    """The problems among ``entries`` that are a study file's own: not about a key in ``targets`` (the keys the
    axes set), nor under a rule that reads one; those are the axis's, checked value by value."""
    return [e for e in entries
            if not (isinstance(e, Problem) and any(overlaps(k, t) for k in (e.key, *e.related) for t in targets))]


def _check_system_file(study: StudySpec, builder: _Builder) -> None:
    """Raise ConfigError naming the study's ``system`` key and file if that file is wrong where no ``set.``
    axis overrides it (rather than one message per axis value, which would blame the values)."""
    try:
        builder.system(())
    except ConfigError as exc:
        own = _file_problems(exc.entries, [indexed_key(builder.system_raw, a.target)
                                           for a in study.axes if a.kind == "set"])
        if own:
            raise ConfigError([f"{study.source}: system: {m}" for m in own]) from None


def _check_workload_file(study: StudySpec, builder: _Builder) -> None:
    """Raise ConfigError naming the study's ``workload`` key and file if that file is wrong where no ``param.``
    axis sets it: an unknown key or parameter, a bad value of a parameter no axis sets, a stored trace or a
    ``params`` that is not a mapping under ``param.`` axes. Each problem is said once, as every point shares
    it, rather than once per point or per axis value. The workload is built with the first ``param.`` axis's
    first value (``_Builder.filled``), so that the file is taken as the points take it."""
    axes = [a for a in study.axes if a.kind == "param"]
    try:
        builder.workload(builder.filled(((axes[0].target, axes[0].values[0]),) if axes else ()))
    except ConfigError as exc:
        own = _file_problems(exc.entries, [f"params.{a.target}" for a in axes])
        if own:
            raise ConfigError([f"{study.source}: workload: {m}" for m in own]) from None


def _check_axes(study: StudySpec, builder: _Builder) -> None:
    """Each axis key exists, each of its values is valid (``_axis_values``), and no value (or, over the zip axes,
    no row of values) is given twice, compared after parsing: ``1 MiB`` repeats ``1048576 B``."""
    errors, refused = _axis_keys(study, builder)
    resolved: dict[str, list[Any]] = {}
    for axis in study.axes:
        if axis.key in refused:
            continue
        axis_errors, values = _axis_values(study, builder, axis)
        errors += axis_errors
        if not axis_errors:
            resolved[axis.key] = values
            if axis.group == "product":
                errors += _repeats(_axis_where(study, axis), [repr(v) for v in axis.values], [(v,) for v in values])
    zipped = [a for a in study.axes if a.group == "zip"]
    if zipped and all(a.key in resolved for a in zipped):  # zipped axes may repeat values, not whole rows
        rows = ["(" + ", ".join(f"{a.key}={v!r}" for a, v in zip(zipped, row)) + ")"
                for row in zip(*[a.values for a in zipped])]
        errors += _repeats(f"{study.source}: sweep.zip", rows, list(zip(*[resolved[a.key] for a in zipped])))
    if errors:
        raise ConfigError(errors)


def _axis_keys(study: StudySpec, builder: _Builder) -> tuple[list[str], set[str]]:
    """Problems of the ``set.`` axes' keys as the system spells them (a cache level by its index): two axes that
    set one key (``caches.levels.L1D.ways`` and ``caches.levels.0.ways``), and an axis that renames the list
    item its key selects (a level's name is how keys select it); and the axes refused (``Axis.key``)."""
    errors: list[str] = []
    refused: set[str] = set()
    first: dict[str, Axis] = {}
    for axis in study.axes:
        if axis.kind != "set":
            continue
        key = indexed_key(builder.system_raw, axis.target)
        if key.endswith("].name") and _names_an_item(builder.system_raw, axis.target):  # else: no such item
            refused.add(axis.key)
            errors.append(f"{_axis_where(study, axis)}: renames the list item it selects ({key}); expected a "
                          "parameter of the item: its name is how keys and results select it")
        earlier = first.setdefault(key, axis)
        if earlier is not axis:
            refused.add(axis.key)
            errors.append(f"{_axis_where(study, axis)}: sets {key}, as axis {earlier.key} does; expected each key "
                          "set by one axis, so that no point is run twice under two labels")
    return errors, refused


def _names_an_item(raw: Any, target: str) -> bool:
    """Whether the item holding the key ``target`` sets (a cache level, selected by name or index) is in ``raw``."""
    node = raw
    for part in target.split(".")[:-1]:
        node = list_item(node, part) if isinstance(node, list) else node.get(part) if isinstance(node, dict) else None
    return node is not None


def _axis_values(study: StudySpec, builder: _Builder, axis: Axis) -> tuple[list[str], list[Any]]:
    """(problems, the parsed values) of one axis, each value applied to the study's system or workload
    (``_Builder.resolved``). A problem of another ``param.`` axis's key, or of a rule that reads one, is that
    axis's or its points' (checked there), not this value's; a value refused for such problems alone is
    kept as written."""
    where = _axis_where(study, axis)
    others = [f"params.{a.target}" for a in study.axes if a.kind == "param" and a is not axis]
    errors: list[str] = []
    values = []
    for value in axis.values:
        try:
            values.append(builder.resolved(axis, value))
        except ConfigError as exc:
            own = _file_problems(exc.entries, others)
            if not own:
                values.append(value)
                continue
            errors += [f"{where}: value {value!r}: {_without_file(e)}" for e in own]
            if any("unknown key" in _without_file(e) or "unknown parameter" in _without_file(e) for e in own):
                break  # an unknown key fails for every value: say it once
    return errors, values


def _repeats(where: str, written: list[str], parsed: list[tuple]) -> list[str]:
    """A message for each row of ``parsed`` equal to an earlier one; ``written``: the rows as the file gives
    them. A flag is not the number 1 (True == 1 in Python); 1 and 1.0 are the same value."""
    first: dict[tuple, int] = {}
    errors = []
    for j, row in enumerate(parsed):
        i = first.setdefault(tuple((type(v) is bool, v) for v in row), j)
        if i != j:
            same = "" if written[i] == written[j] else f" ({written[i]}, the same after parsing)"
            errors.append(f"{where}: value {written[j]} repeats value [{i}]{same}; "
                          "expected each value once, so that no point is run twice")
    return errors


def _resolved_value(loaded: LoadedConfig, workload: WorkloadSpec | None, axis: Axis) -> Any:
    """The value a point's axis takes after parsing (SI numbers), for tables and figures."""
    if axis.kind == "param":
        return workload.params[axis.target]
    node: Any = loaded.spec
    for part in axis.target.split("."):
        if isinstance(node, tuple):
            node = node[int(part)] if part.isdigit() else next(x for x in node if getattr(x, "name", None) == part)
        elif isinstance(node, dict):
            node = node[part]
        else:
            node = getattr(node, part)
    return node


def _sort_key(coords: tuple[tuple[str, Any], ...]) -> tuple:
    out = []
    for _, v in coords:
        if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
            out.append((0, float(v), ""))
        else:
            out.append((1, 0.0, str(v)))
    return tuple(out)


def prepare_points(study: StudySpec, max_points: int = DEFAULT_MAX_POINTS) -> list[Point]:
    """Build every point's system and workload before anything runs; sorted by resolved axis values.

    Raises ConfigError naming the study file and the axis key (or the point) on any problem, and the
    sweep if it has more than ``max_points`` points (checked before any is built).
    """
    check_point_count(f"{study.source}: sweep", point_count(study), max_points)
    from simulator.runner import memory_reach_problem

    builder = _Builder(study)
    _check_system_file(study, builder)
    _check_workload_file(study, builder)
    _check_axes(study, builder)
    by_key = {a.key: a for a in study.axes}
    points: list[Point] = []
    errors: list[str] = []
    by_workload: dict[tuple, list] = {}  # the points of one workload one after another (``system_problem``)
    on_system: dict[str, list[str]] = {}  # a trace's problem on its point's system: the points that have it (labels)
    for values in expand(study):
        by_workload.setdefault(tuple((by_key[k].target, v) for k, v in values if by_key[k].kind == "param"),
                               []).append(values)
    for params, values in ((params, values) for params, group in by_workload.items() for values in group):
        sets = tuple((by_key[k].target, v) for k, v in values if by_key[k].kind == "set")
        try:
            loaded = builder.system(sets)
            workload = builder.workload(params)
        except ConfigError as exc:
            label = ", ".join(f"{k}={v}" for k, v in values)
            errors.extend(f"{study.source}: sweep: point ({label}): {m}" for m in exc.messages)
            continue
        if builder.trace_problem(params) is not None:
            errors += _trace_messages(study, builder, values)
            continue
        point_label = ", ".join(f"{k}={v}" for k, v in values) or "every point"
        reach = memory_reach_problem(builder.trace_end_bytes(params), dram_geometry(loaded.spec).capacity_bytes,
                                     builder.workload_source, builder.system_source)
        if reach:  # the trace's reach against the point's DRAM: its set. values may be the cause
            on_system.setdefault(reach, []).append(point_label)
            continue
        # the workload's problems are labelled by its values: points that differ only in set. values say it once
        label = ", ".join(f"{k}={v}" for k, v in values if by_key[k].kind == "param") or "every point"
        problem = study.crosscheck and CROSSCHECKS[study.crosscheck].study_problem(
            loaded, workload, builder.trace_offload_rows(params), f"the workload ({label})")
        if problem:
            errors.append(f"{study.source}: crosscheck: {problem}")
            continue
        problem = builder.system_problem(loaded, params)
        if problem:  # said once, with the first point that has it and how many more do
            on_system.setdefault(problem, []).append(point_label)
            continue
        coords = tuple((k, _resolved_value(loaded, workload, by_key[k])) for k, _ in values)
        points.append(Point(values=tuple(values), coords=coords, loaded=loaded, workload=workload,
                            workload_source=builder.workload_source, run_hash=run_hash(loaded.content_hash, workload),
                            size=builder.trace_size(params)))
    errors += [f"{study.source}: sweep: point ({labels[0]}"
               + (f"; and {len(labels) - 1} more point{'s' if len(labels) > 2 else ''}" if len(labels) > 1 else "")
               + f"): {problem}" for problem, labels in on_system.items()]
    if errors:
        raise ConfigError(list(dict.fromkeys(errors)))  # points that differ only in set. values: said once
    check_figure_quantities(study, points)
    points.sort(key=lambda p: _sort_key(p.coords))
    return points


def _trace_messages(study: StudySpec, builder: _Builder, values: tuple[tuple[str, Any], ...]) -> list[str]:
    """Messages for a point whose workload the generator refuses (``_Builder.trace_problem``): naming each
    param. axis whose value alone (over the workload file's parameters, ``_Builder.filled``) is refused for the
    same reason, else the point's param. values together, else (no param. axis) the study's workload."""
    by_key = {a.key: a for a in study.axes}
    named = [(by_key[k], v) for k, v in values if by_key[k].kind == "param"]
    params = tuple((a.target, v) for a, v in named)
    problem = builder.trace_problem(params)
    generator = builder.workload(params).generator
    alone = [(a, v) for a, v in named if builder.trace_problem(builder.filled(((a.target, v),))) == problem]
    if alone:
        return [f"{_axis_where(study, a)}: value {v!r}: the {generator} generator refuses it: {problem}"
                for a, v in alone]
    if named:
        label = ", ".join(f"{a.key}={v!r}" for a, v in named)
        return [f"{study.source}: sweep: point ({label}): the {generator} generator refuses these values "
                f"together: {problem}"]
    return [f"{study.source}: workload: {builder.workload_source}: {problem}"]


def run_quantities(loaded: LoadedConfig) -> tuple[set[tuple[str, str]], set[str]]:
    """What a run on ``loaded``'s system emits that is known before it runs: the (component, quantity)
    pairs of its results, read with ``runner.collect`` from a freshly built system (the same rows
    every run has, whatever its trace, besides its stages), and the accelerator components
    (``accel/<name>``, ``energy/<name>``) whose quantities only a run tells."""
    from simulator.runner import collect
    from simulator.system import build_system

    system = build_system(loaded.spec)
    rows = {(c, q) for c, q, _, _ in collect(system, 0, {}).rows}
    return rows, {f"{prefix}/{name}" for name in system.units for prefix in ("accel", "energy")}


def check_figure_quantities(study: StudySpec, points: list[Point]) -> None:
    """Raise ConfigError naming ``figures[i].y`` for each figure whose quantity no point's run emits
    (see the module docstring for what can be checked before running)."""
    from simulator.studies.report import ENERGY_TOTAL

    if not study.figures:
        return
    known: set[tuple[str, str]] = set()
    accelerators: set[str] = set()
    for loaded in {p.loaded.content_hash: p.loaded for p in points}.values():
        rows, accel = run_quantities(loaded)
        known |= rows
        accelerators |= accel
    if study.crosscheck:
        known |= {(f"crosscheck/{study.crosscheck}", q) for q, _unit in CROSSCHECKS[study.crosscheck].quantities}
    components = {c for c, _ in known} | accelerators
    errors = []
    for i, fig in enumerate(study.figures):
        component, quantity = fig.y.rsplit("/", 1)
        if fig.y == ENERGY_TOTAL or component.startswith("stage/") or component in accelerators \
                or (component, quantity) in known:
            continue
        where = f"{study.source}: figures[{i}].y: {fig.y!r}"
        if component in components:
            names = sorted(q for c, q in known if c == component)
            errors.append(f"{where}: no quantity {quantity!r} in component {component!r}"
                          f"{did_you_mean(quantity, names)}; expected one of: {', '.join(names)}")
        else:
            errors.append(f"{where}: no component {component!r} in the study's runs"
                          f"{did_you_mean(component, components)}; "
                          f"expected one of: {', '.join(sorted(components))} (then '/<quantity>'), "
                          f"'stage/<stage>/<quantity>' or '{ENERGY_TOTAL}'")
    if errors:
        raise ConfigError(errors)


# ---------------------------------------------------------------- running


def simulate_point(loaded: LoadedConfig, workload: WorkloadSpec, source: str,
                   points_dir: str | None = None) -> tuple[str, Any, float]:
    """Worker task: generate the trace and simulate one point; store it too if ``points_dir`` is given.

    Returns ("ok", Results, seconds) without ``points_dir``; ("stored", run hash, seconds)
    once the point is written atomically under ``points_dir/<run hash>``; or
    ("failed", error text, seconds). seconds: wall time of trace generation and
    simulation only. Never raises for a point's error, so one bad point cannot
    take a pool or a Dask worker down with it.
    """
    from workloads.spec import generate_trace
    from simulator.runner import simulate, write_run_dir

    t0 = time.perf_counter()
    try:
        trace = generate_trace(workload, source)
        results = simulate(loaded, workload, trace, workload.trace_path or source)
    except Exception as exc:  # noqa: BLE001 -- recorded per point, see docstring
        return "failed", f"{type(exc).__name__}: {exc}", time.perf_counter() - t0
    seconds = time.perf_counter() - t0
    if points_dir is None:
        return "ok", results, seconds
    try:
        write_run_dir(results, Path(points_dir) / results.meta["run_hash"], loaded, workload)
    except OSError as exc:
        return "failed", f"storing the point: {type(exc).__name__}: {exc}", seconds
    return "stored", results.meta["run_hash"], seconds


def stored_problem(out_dir: Path, run_hash: str) -> str | None:
    """Why point ``run_hash`` of study directory ``out_dir`` is not done (None: it is): missing
    (a point is renamed into place only when whole), incomplete, or a ``results.parquet`` that does
    not read back as a results table (a truncated file, say). The message names the file."""
    from simulator.runner import RUN_DIR_FILES

    point = out_dir / "points" / run_hash
    if not point.exists():
        return f"{point}: not stored"
    missing = [f for f in RUN_DIR_FILES if not (point / f).is_file()]
    if missing:
        return f"{point}: {', '.join(missing)} missing"
    path = point / "results.parquet"
    try:
        columns = pq.read_table(path).column_names
    except (OSError, ValueError, pa.ArrowException) as exc:  # ArrowInvalid is a ValueError
        return f"{path}: cannot be read ({exc})"
    if columns != RESULTS_COLUMNS:
        return f"{path}: columns {', '.join(columns)}; expected {', '.join(RESULTS_COLUMNS)}"
    return None


def is_stored(out_dir: Path, run_hash: str) -> bool:
    """Whether point ``run_hash`` is complete and readable in ``out_dir`` (``stored_problem``)."""
    return stored_problem(out_dir, run_hash) is None


def is_temp_name(name: str) -> bool:
    """A hidden temporary file or folder of an interrupted write (``.<name>.tmp-*``, ``.<name>.old-*``)."""
    return name.startswith(".") and (".tmp-" in name or ".old-" in name)


def _remove(path: Path) -> None:
    """Remove a file or a directory tree (gone already: nothing)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _discard_foreign_failures(out_dir: Path, unique: dict[str, Point]) -> None:
    """Remove the failure records of points the sweep does not hold (a sweep run before with other values): a
    failed point is run again by every sweep that holds it, so ``failed/`` tells this sweep's failures alone."""
    failed = out_dir / "failed"
    for record in failed.glob("*.json") if failed.is_dir() else ():
        if record.stem not in unique:
            _remove(record)


def _clean_stale_temps(out_dir: Path) -> None:
    """Remove half-written files and point directories left by an interrupted run (hidden temps)."""
    for d in (out_dir, out_dir / "points", out_dir / "failed"):
        if not d.is_dir():
            continue
        for p in d.iterdir():
            if is_temp_name(p.name):
                _remove(p)


def _write_json_atomic(path: Path, data: Any) -> None:
    def dump(tmp: Path) -> None:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")

    write_atomic(path, dump)


def _not_a_study_dir(out_dir: Path, name: str) -> str | None:
    """What keeps non-empty ``out_dir`` from being resumed by study ``name`` (None: nothing)."""
    entries = [p.name for p in out_dir.iterdir()]
    other = [e for e in entries if e not in STUDY_ENTRIES and not is_temp_name(e)]
    if other:
        return f"holds {listing(other)}, which is not a study's"
    lock = out_dir / LOCK_NAME
    if not lock.is_file():
        return f"holds {listing(entries)} but no {LOCK_NAME}, so no study ran there"
    owner = lock.read_text().strip()
    # an empty lock, or one holding the study's name alone (no files named), is taken for the study's own
    if owner and owner != name and not name.startswith(f"{owner} (system "):
        return f"is the directory of study {owner!r} (named in its {LOCK_NAME})"
    return None


def study_identity(spec: StudySpec) -> str:
    """What marks a study's output directory as its own (written into its lock file): its name and the absolute
    paths of its system and workload files, so that another study of the same name, over other files, does not
    take the directory over (a study whose files moved is refused too, naming the study it finds)."""
    return f"{spec.name} (system {spec.system_path.resolve()}, workload {spec.workload_path.resolve()})"


def check_study_dir(path: str | Path, name: str, option: str = "--out") -> Path:
    """``path`` as a Path if study ``name`` (its ``study_identity``) may write there (a new path, an empty directory
    or a previous directory of the same study, see the module docstring), creating nothing; else InputError naming
    ``option``."""
    return check_output_target(path, lambda d: _not_a_study_dir(d, name),
                               f"a previous directory of study {name!r} (holding {', '.join(STUDY_ENTRIES)})", option)


class StudyLock:
    """Exclusive lock on a study directory (released by the OS if the process dies). The lock file
    stays, naming the study: it marks the directory as that study's (``check_study_dir``)."""

    def __init__(self, out_dir: Path, name: str):
        self.path = out_dir / LOCK_NAME
        self.name = name
        self.fh: Any = None
        self.created = False

    def acquire(self) -> None:
        """Wait up to LOCK_WAIT_S for the lock, then write the study's name into the lock file."""
        self.created = not self.path.exists()
        self.fh = open(self.path, "a")  # not "w": a run waiting here must not blank the holder's name
        deadline = time.monotonic() + LOCK_WAIT_S  # workers of a killed run exit within a second
        while True:
            try:
                fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.fh.close()
                    self.created = False  # the run holding it made it too, in a race: not ours to remove
                    raise InputError(f"{self.path.parent}: another offsim study is running in this directory; "
                                     "expected it to finish first") from None
                time.sleep(0.1)
        self.fh.truncate(0)
        self.fh.write(self.name + "\n")
        self.fh.flush()

    def release(self) -> None:
        """Unlock and close (the file stays)."""
        if self.fh is not None and not self.fh.closed:
            fcntl.flock(self.fh, fcntl.LOCK_UN)
            self.fh.close()


class PointPool:
    """The executor of a study's points: started by the first ``open`` (a scheduler connected, a
    local cluster started), shut down by ``close`` or on leaving the ``with`` block."""

    def __init__(self, workers: int | None, scheduler: str | None, dask_local: int | None):
        self.options = (workers, scheduler, dask_local)
        self.executor: Executor | None = None
        self._stack = ExitStack()

    def open(self) -> Executor:
        """The executor, started if it is not yet; InputError if a scheduler cannot be reached."""
        if self.executor is None:
            self.executor = self._stack.enter_context(point_executor(*self.options))
        return self.executor

    def capacity(self) -> int | None:
        """Points to keep on the executor at once: one per worker (``tasks_per_worker``), None (all) for a
        scheduler whose workers are not known here."""
        return tasks_per_worker(*self.options)

    def close(self) -> None:
        """Shut the executor down (waiting for its workers)."""
        self._stack.close()
        self.executor = None

    def __enter__(self) -> PointPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.__exit__(*exc)  # the executor sees an interrupt, to end its workers rather than wait for them
        self.executor = None


def _points_to_run(out: Path, unique: dict[str, Point]) -> list[tuple[Point, str]]:
    """The points not done in ``out``, each with why (``stored_problem``)."""
    todo = []
    for run_hash, point in unique.items():
        problem = stored_problem(out, run_hash)
        if problem is not None:
            todo.append((point, problem))
    return todo


def _discard_unreadable(out: Path, todo: list[tuple[Point, str]]) -> None:
    """Say on stderr which of ``todo`` are stored but cannot be read (naming the file) and remove them,
    to be run again: a point's results are deterministic."""
    for point, problem in todo:
        stored = out / "points" / point.run_hash
        if stored.exists():
            print(f"offsim: warning: {problem}; running point ({point.label()}) again", file=sys.stderr)
            _remove(stored)


def acquire_study_dir(out: Path, name: str, setup: Callable[[], Any] = lambda: None) -> tuple[StudyLock, Any]:
    """Create ``out`` if missing, lock it for study ``name`` and run ``setup()`` under the lock; return the
    lock (the caller releases it) and what ``setup`` returned. If this fails on input (another run holds
    the lock, the scheduler cannot be reached), what it created is removed again: the directory, or the
    lock file of a directory that existed; never anything that was there before."""
    top = first_missing(out)
    make_output_dir(out)
    lock = StudyLock(out, name)
    try:
        lock.acquire()
        try:
            return lock, setup()
        except BaseException:
            lock.release()
            raise
    except InputError:
        if lock.created:
            lock.path.unlink(missing_ok=True)
        remove_created(top)
        raise


@contextmanager
def _locked_study_dir(out: Path, name: str, unique: dict[str, Point], pool: PointPool) -> Iterator[list[Point]]:
    """Create ``out`` if missing, lock it, remove the previous run's table, report and figures
    (``CONSOLIDATED_OUTPUTS``; the stored points stay) and yield the points to run, with ``pool`` open if
    there are any; unlock on exit (``acquire_study_dir``)."""
    def setup() -> list[tuple[Point, str]]:
        todo = _points_to_run(out, unique)
        if todo:
            pool.open()  # normally open already (run_study); here if a stored point proved unreadable
        _clean_stale_temps(out)
        _discard_foreign_failures(out, unique)
        _discard_unreadable(out, todo)
        for name in CONSOLIDATED_OUTPUTS:
            _remove(out / name)
        return todo

    lock, todo = acquire_study_dir(out, name, setup)
    try:
        yield [point for point, _ in todo]
    finally:
        lock.release()


Outcome = tuple[str, Any, float]
Submit = Callable[[list[Point]], Iterator[tuple[Point, Outcome]]]


def _run(pool: PointPool, points_dir: Path) -> Submit:
    """Run points on ``pool``. Local workers also store their points (same filesystem), in parallel;
    dask workers return Results and the driver stores them (no shared filesystem needed)."""
    _, scheduler, dask_local = pool.options
    store = str(points_dir) if scheduler is None and dask_local is None else None

    def go(todo: list[Point]) -> Iterator[tuple[Point, Outcome]]:
        queue = LongestFirst(pool.open(), pool.capacity())  # the largest points first
        tasks = {queue.submit(p.size, simulate_point, p.loaded, p.workload, p.workload_source, store): p
                 for p in todo}
        try:
            for task in queue.completed():
                try:
                    outcome = task.result()
                except Exception as exc:  # noqa: BLE001 -- a worker died or the task was lost
                    outcome = ("failed", f"{type(exc).__name__}: {exc}", 0.0)
                yield tasks[task], outcome
        finally:
            queue.cancel()
    return go


def run_study(study: str | Path | StudySpec, out_dir: str | Path | None = None, *, workers: int | None = None,
              scheduler: str | None = None, dask_local: int | None = None, progress: bool = True,
              max_points: int = DEFAULT_MAX_POINTS) -> StudyOutcome:
    """Run every point of ``study`` not yet stored in ``out_dir``, then write table, figures and report.

    out_dir: default ``results/studies/<name>`` (relative to the working directory); a new path, an
    empty directory or a previous directory of the same study (``check_study_dir``).
    workers: local process-pool size (default os.cpu_count()). scheduler: a dask.distributed
    scheduler address; dask_local: start a loopback Dask cluster of that many worker processes.
    max_points: the most points the study may have (``prepare_points``).
    Bad input (study file, options, output directory, an unreachable scheduler) raises InputError
    before anything runs or is written.
    """
    from simulator.studies.report import write_outputs

    t0 = time.perf_counter()
    spec = study if isinstance(study, StudySpec) else load_study(study)
    check_parallel_options(workers, scheduler, dask_local)  # before any output: a missing dask writes nothing
    points = prepare_points(spec, max_points)
    identity = study_identity(spec)
    out = (check_study_dir(out_dir, identity) if out_dir is not None else
           check_study_dir(DEFAULT_STUDIES_DIR / spec.name, identity, "the default output directory (no --out)"))
    unique: dict[str, Point] = {}
    for p in points:
        unique.setdefault(p.run_hash, p)
    interruption.keep(lambda: _kept_points(out, unique))
    with PointPool(workers, scheduler, dask_local) as pool:
        if scheduler is not None or any(not (out / "points" / h / "results.parquet").is_file() for h in unique):
            # connect before writing anything: an unreachable scheduler leaves no output, and is refused even
            # where every point is stored already (local workers start only where a point is missing)
            pool.open()
        with _locked_study_dir(out, identity, unique, pool) as todo:
            to_run = {p.run_hash for p in todo}
            reused = [h for h in unique if h not in to_run]
            simulated, failed, sim_s = _execute(_run(pool, out / "points"), todo, out, len(unique), len(reused),
                                                spec.name, progress)
            pool.close()
            outcome = StudyOutcome(study=spec, out_dir=out, points=tuple(points), simulated=tuple(simulated),
                                   reused=tuple(reused), failed=failed, sim_wall_s=sim_s)
            table_path, report_path = write_outputs(outcome)
    return replace(outcome, wall_s=time.perf_counter() - t0, table_path=table_path, report_path=report_path)


def study_failures(outcome: StudyOutcome) -> list[tuple[str, str, Path]]:
    """The points that failed in ``outcome``'s run, in the points' order: (label, error, the file with its record)."""
    failed = {p.run_hash: p for p in outcome.points if p.run_hash in outcome.failed}
    return [(p.label(), outcome.failed[h], outcome.out_dir / "failed" / f"{h}.json") for h, p in failed.items()]


def _kept_points(out: Path, unique: dict[str, Point]) -> str:
    """What an interrupted study kept: its stored points (each renamed into place only when whole)."""
    n = sum((out / "points" / h / "results.parquet").is_file() for h in unique)
    return f"kept {n} of {len(unique)} points in {out / 'points'}; the same command resumes from them"


def _execute(submit: Submit, todo: list[Point], out: Path, total: int, reused: int, name: str,
             progress: bool) -> tuple[list[str], dict[str, str], dict[str, float]]:
    """Run ``todo`` through ``submit``; store each finished point as it arrives. Returns the run hashes of the
    points simulated, each failed point's error (by run hash) and each simulated point's wall time, s."""
    from tqdm import tqdm

    from simulator.runner import write_run_dir

    simulated: list[str] = []
    failed: dict[str, str] = {}
    sim_s: dict[str, float] = {}
    if not todo:
        return simulated, failed, sim_s
    bar = tqdm(total=total, initial=reused, desc=name, unit="pt", disable=not progress, dynamic_ncols=True)
    try:
        for point, (status, payload, seconds) in submit(todo):
            record = out / "failed" / f"{point.run_hash}.json"
            if status in ("ok", "stored"):
                got = payload.meta.get("run_hash") if status == "ok" else payload
                if got != point.run_hash:
                    status, payload = "failed", f"run hash mismatch: simulated {got}, expected {point.run_hash}"
                else:
                    if status == "ok":
                        results: Results = payload
                        write_run_dir(results, out / "points" / point.run_hash, point.loaded, point.workload)
                    record.unlink(missing_ok=True)
                    simulated.append(point.run_hash)
                    sim_s[point.run_hash] = seconds
            if status not in ("ok", "stored"):
                _write_json_atomic(record, {"run_hash": point.run_hash, "values": dict(point.values),
                                            "error": str(payload)})
                failed[point.run_hash] = str(payload)
            bar.set_postfix(done=reused + len(simulated), failed=len(failed),
                            left=total - reused - len(simulated) - len(failed), refresh=False)
            bar.update(1)
    finally:
        bar.close()
    return simulated, failed, sim_s
