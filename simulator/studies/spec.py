"""A study's values: its axes, figures and points, and what a run of it did.

Built and validated by ``simulator.studies.sweep`` (``load_study``, ``prepare_points``);
read by ``simulator.studies.report`` to write the table, figures and report.
Also the load-time checks the paper studies' loaders share (``list_problems``,
``load_referenced_system``), so that a paper study file is refused whole before
its runner writes anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.errors import ConfigError
from simulator.config.fields import spec_to_dict
from simulator.config.loader import PROJECT_ROOT, LoadedConfig, load_spec
from simulator.config.schema import SystemSpec
from workloads.spec import WorkloadSpec
from simulator.config.yamlio import load_yaml


@dataclass(frozen=True)
class Axis:
    """One swept key and its values as written in the study file.

    key: ``set.<dotted system key>`` or ``param.<workload parameter>``.
    group: ``"product"`` or ``"zip"``.
    """

    key: str
    values: tuple[Any, ...]
    group: str

    @property
    def kind(self) -> str:
        """``"set"`` (system override) or ``"param"`` (workload parameter)."""
        return self.key.split(".", 1)[0]

    @property
    def target(self) -> str:
        """The key without its ``set.``/``param.`` prefix."""
        return self.key.split(".", 1)[1]


@dataclass(frozen=True)
class FigureSpec:
    """One standard figure: ``y`` ("component/quantity") against axis ``x``, one line per ``group`` value.

    logx/logy: True, False or None (automatic: log when the values span a wide range, see simulator.studies.plots).
    """

    x: str
    y: str
    group: str | None = None
    logx: bool | None = None
    logy: bool | None = False
    title: str | None = None

    @property
    def stem(self) -> str:
        """The name of the file the figure is drawn to, without its extension: y against x, by group."""
        by = f"_by_{slug(short_key(self.group))}" if self.group else ""
        return f"{slug(self.y)}_vs_{slug(short_key(self.x))}{by}"


def slug(text: str) -> str:
    """``text`` as a file-name part: runs of other characters than letters and digits made one ``_``, lower case."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def short_key(key: str) -> str:
    """An axis key without its ``set.`` or ``param.`` prefix."""
    return key.split(".", 1)[1] if "." in key else key


@dataclass(frozen=True)
class StudySpec:
    """A validated study file: paths resolved, axes in file order."""

    name: str
    source: str
    system_path: Path
    workload_path: Path
    axes: tuple[Axis, ...]
    figures: tuple[FigureSpec, ...] = ()
    crosscheck: str | None = None  # an analytical model to set beside every point (simulator.studies.crosschecks.CROSSCHECKS)

    @property
    def axis_keys(self) -> tuple[str, ...]:
        """The axis keys in file order (product axes first, then zip axes)."""
        return tuple(a.key for a in self.axes)


@dataclass(frozen=True)
class Point:
    """One point of a study, fully built and ready to simulate.

    values: axis key -> value as written in the study file.
    coords: axis key -> resolved value (SI number for quantities, as typed otherwise);
    these become the columns of the consolidated table.
    size: the declared size of its trace, (element bytes its memory rows touch, rows): the runner
    starts the largest points first.
    """

    values: tuple[tuple[str, Any], ...]
    coords: tuple[tuple[str, Any], ...]
    loaded: LoadedConfig
    workload: WorkloadSpec
    workload_source: str
    run_hash: str
    size: tuple[float, int] = (0.0, 0)

    def label(self) -> str:
        """``key=value, ...`` as written in the study file."""
        return ", ".join(f"{k}={v}" for k, v in self.values)


#: Most failed points ``failure_lines`` names one by one; the others are counted.
MAX_FAILURE_LINES = 5


def failure_lines(failures: list[tuple[str, str, Path]], folder: Path) -> list[str]:
    """What a study prints of its failed points: for each (label, error, details file), its label, the first
    line of its error and the file holding the rest, at most MAX_FAILURE_LINES of them, then how many more
    failed (their files are in ``folder``)."""
    lines = [f"failed    {label}: {(error.strip().splitlines() or ['(no message)'])[0]} (details: {path})"
             for label, error, path in failures[:MAX_FAILURE_LINES]]
    if len(failures) > MAX_FAILURE_LINES:
        lines.append(f"failed    and {len(failures) - MAX_FAILURE_LINES} more points (details: {folder})")
    return lines


@dataclass(frozen=True)
class StudyOutcome:
    """What one ``run_study`` call did.

    simulated/reused: run hashes. failed: run hash -> the error of each point that failed in this call
    (as ``plugin_run.PluginOutcome.failed``). sim_wall_s: run hash -> wall time (s) the worker spent
    generating and simulating that point (simulated points only).
    wall_s: wall time of the whole call (s), validation and report included.
    """

    study: StudySpec
    out_dir: Path
    points: tuple[Point, ...]
    simulated: tuple[str, ...]
    reused: tuple[str, ...]
    failed: dict[str, str]
    sim_wall_s: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    table_path: Path | None = None
    report_path: Path | None = None


# ---------------------------------------------------------------- paper study files


def _lists(node: Any, parts: list[str], key: str) -> Iterator[tuple[str, tuple]]:
    """(dotted key, list) of every list ``parts`` names under ``node``; ``*`` is every entry of a mapping."""
    if not parts:
        yield key, node
        return
    head, rest = parts[0], parts[1:]
    if head == "*":
        for name, sub in node.items():
            yield from _lists(sub, rest, f"{key}.{name}")
    else:
        yield from _lists(getattr(node, head), rest, f"{key}.{head}" if key else head)


def list_problems(spec: Any, source: str, keys: Sequence[str], may_be_empty: Sequence[str] = ()) -> list[str]:
    """What is wrong with the list-valued ``keys`` of a paper study's loaded ``spec``: each holds at least one
    value (unless named in ``may_be_empty``) and no value twice (compared after unit parsing, so ``1 MiB``
    repeats ``1048576 B``). A key is dotted (``quick.qs``); ``*`` stands for every entry of a mapping
    (``placements.*.variants``). One message per problem, naming ``source``, the key and what was expected."""
    errors = []
    for pattern in keys:
        for key, values in _lists(spec, pattern.split("."), ""):
            if not values and pattern not in may_be_empty:
                errors.append(f"{source}: {key}: []; expected a non-empty list")
            first: dict[Any, int] = {}
            for j, value in enumerate(values):
                i = first.setdefault(value, j)
                if i != j:
                    errors.append(f"{source}: {key}[{j}]: {spec_to_dict(value)!r} repeats {key}[{i}]; "
                                  "expected each value once")
    return errors


def load_referenced_system(source: str, key: str, value: str,
                           overrides: Sequence[str] = ()) -> tuple[LoadedConfig | None, list[str]]:
    """Load the system file that a paper study's ``key`` names (``value``, relative to the project root) as its
    runner will: (the config, no problems) or (None, one message per problem, naming the study file and key
    first). A file without a ``host`` section (a workload, say) gets one message, not one per missing section."""
    path = PROJECT_ROOT / value
    try:
        raw = load_yaml(path)
        if not isinstance(raw, dict) or "host" not in raw:
            return None, [f"{source}: {key}: {value!r} has no 'host' section, so it is not a system config; "
                          "expected a system file (host, caches, dram), e.g. configs/systems/i7_920_ddr3.yaml"]
        return load_spec(path, SystemSpec, overrides), []
    except ConfigError as exc:
        return None, [f"{source}: {key}: {m}" for m in exc.messages]
