"""A study's values: its axes, figures and points, and what a run of it did.

Built and validated by ``simulator.study`` (``load_study``, ``prepare_points``);
read by ``simulator.study_report`` to write the table, figures and report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.config.loader import LoadedConfig
from simulator.config.workload import WorkloadSpec


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

    logx/logy: True, False or None (automatic: log when the values span a wide range, see simulator.plots).
    """

    x: str
    y: str
    group: str | None = None
    logx: bool | None = None
    logy: bool | None = False
    title: str | None = None


@dataclass(frozen=True)
class StudySpec:
    """A validated study file: paths resolved, axes in file order."""

    name: str
    source: str
    system_path: Path
    workload_path: Path
    axes: tuple[Axis, ...]
    figures: tuple[FigureSpec, ...] = ()

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
    """

    values: tuple[tuple[str, Any], ...]
    coords: tuple[tuple[str, Any], ...]
    loaded: LoadedConfig
    workload: WorkloadSpec
    workload_source: str
    run_hash: str

    def label(self) -> str:
        """``key=value, ...`` as written in the study file."""
        return ", ".join(f"{k}={v}" for k, v in self.values)


@dataclass(frozen=True)
class StudyOutcome:
    """What one ``run_study`` call did.

    simulated/reused/failed: run hashes. sim_wall_s: run hash -> wall time (s) the
    worker spent generating and simulating that point (simulated points only).
    wall_s: wall time of the whole call (s), validation and report included.
    """

    study: StudySpec
    out_dir: Path
    points: tuple[Point, ...]
    simulated: tuple[str, ...]
    reused: tuple[str, ...]
    failed: tuple[str, ...]
    sim_wall_s: dict[str, float] = field(default_factory=dict)
    wall_s: float = 0.0
    table_path: Path | None = None
    report_path: Path | None = None
