"""The paper-study interface: what a study is to the sweep engine, and the one registry of study kinds.

A paper study file names its kind with a top-level ``study:`` key (``fmm_placement``, ``logca_crypto``,
...). Its kind maps, in ``STUDY_KINDS``, to a ``StudyPlugin``: four functions the engine
(``simulator.studies.plugin_run``) calls, and nothing else a study has to provide:

* ``load(path) -> spec``: the study file read and checked; ConfigError naming the file and the key.
* ``points(spec, quick) -> [point]``: the points to run (``quick``: the study's reduced grid). A point
  is a frozen, picklable object with ``key() -> str``, stable across runs and processes (it names
  the point's stored record, ``point_key``), and ``cost() -> tuple[float, ...]``, its estimated
  work: larger runs first (``simulator.studies.schedule``).
* ``run_point(point) -> record``: one point run; a module-level function (the pools pickle it) whose
  record is a JSON-able dict, stored as it arrives.
* ``report(spec, quick, records, out_dir)``: the tables, cross-check rows and figures, from every
  point's record (``records``: point -> record, in the order the points were planned); what it
  returns (the study's fits, say) is handed back to the caller of the engine.

A study whose points need checks beyond its file's (FMM placement: a pipelined point's block-count search,
which needs the problem's tree) gives ``before_run(spec, quick)``: called when a run starts, after
``points`` and before anything is written or any worker starts; an InputError refuses the run. ``load`` and
``points`` stay light, as ``offsim validate`` calls them. It checks the whole study, also the points a selection
(``--only``) leaves out.

A study whose later points depend on earlier records (FMM placement: the pipelined points take
the block count the model fitted on the micro runs predicts) gives ``follow_up(spec, quick, records)``:
None while it cannot tell yet, else the further points (asked again after each record until it
answers).

To add a study: write its module with those functions and a ``StudyPlugin``, name it in
``STUDY_KINDS``, and give its study file a ``study: <kind>`` key.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from simulator.config.loader import PROJECT_ROOT, content_hash


class StudyPoint(Protocol):
    """One unit of a study's work, run by ``StudyPlugin.run_point`` in any process."""

    def key(self) -> str:
        """Stable name of the point's stored record (``point_key``)."""

    def cost(self) -> tuple[float, ...]:
        """Estimated work, compared in order; larger points run first."""


Record = dict[str, Any]


@dataclass(frozen=True)
class StudyPlugin:
    """A paper study as the sweep engine runs it (module docstring).

    outputs: shell globs of the files ``report`` writes; an output directory holding only those
    (and the engine's own entries) is a previous output of the study, which a run may reuse.
    title: the study in messages and on the progress bar.
    """

    title: str
    load: Callable[[str | Path], Any]
    points: Callable[[Any, bool], list[Any]]
    run_point: Callable[[Any], Record]
    report: Callable[[Any, bool, Mapping[Any, Record], Path], Any]
    outputs: tuple[str, ...]
    follow_up: Callable[[Any, bool, Mapping[Any, Record]], list[Any] | None] | None = None
    before_run: Callable[[Any, bool], None] | None = None


@functools.lru_cache(maxsize=None)
def system_hash(system: str | Path, overrides: tuple[str, ...] = ()) -> str:
    """Content hash of a system file (relative to the project root, or absolute) loaded with ``overrides``:
    its resolved values, so that a stored record follows an edit of the system or of its presets."""
    from simulator.runner import load_system

    return load_system(PROJECT_ROOT / system, overrides).content_hash


def point_key(kind: str, *parts: Any) -> str:
    """A point's storage key: ``<kind>-<hash>``, the hash of ``parts`` as canonical JSON (include
    what the record depends on: the point's fields and its systems' resolved content)."""
    return f"{kind}-{content_hash(list(parts))}"


# kind -> "module:attribute" of its StudyPlugin, imported on first use (the engine imports no study)
STUDY_KINDS = {
    "fmm_placement": "simulator.studies.fmm.placement:PLUGIN",
    "logca_crypto": "simulator.studies.logca.crypto:PLUGIN",
    "logca_gpu": "simulator.studies.logca.gpu:PLUGIN",
    "roofline": "simulator.studies.stencil.study:ROOFLINE_PLUGIN",
    "stencil_tiling": "simulator.studies.stencil.study:TILING_PLUGIN",
}


def study_plugin(kind: str) -> StudyPlugin:
    """The plug-in of study ``kind`` (a key of ``STUDY_KINDS``)."""
    module, attribute = STUDY_KINDS[kind].split(":")
    return getattr(importlib.import_module(module), attribute)
