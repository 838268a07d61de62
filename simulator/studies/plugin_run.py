"""The sweep engine for paper studies: run a ``StudyPlugin``'s points, store each record, resume, report.

``run_plugin`` expands the plug-in's points (``points``, then ``follow_up`` as records arrive), skips
those already stored in the output directory, runs the rest longest first on the chosen executor
(a local process pool, or dask.distributed: ``simulator.studies.executors``, the options of a
generic sweep), stores each record as it arrives, and once every point has a record calls the
plug-in's ``report``. ``run_plugins`` runs several studies so on one executor: their points share one
queue, and each study's report is written while the others' points still run.

The output directory holds the plug-in's outputs (its ``outputs`` globs) beside the engine's own
entries: ``points/<key>.json`` (one per point: ``{"key": ..., "record": ...}``, written whole and
renamed into place, so an interrupted study keeps what it finished), ``failed/<key>.json`` (a point
that raised, retried on the next run), the lock ``.study.lock`` and ``.outputs-<kind>.json``, the names of the
files the study's last report wrote there. A run removes those files before it runs any point (the stored
points stay), so that a run stopped before its report, or one whose report writes fewer files, leaves no output
of an earlier run that would pass for its own; the outputs of another study in the same folder stay, as do
files no report wrote (a folder's own guide). A record is kept as long as its
key names the same point: a key hashes what the point depends on (``plugin.point_key``), not the
code, so a change to the simulator calls for a new directory. A stored record that cannot be read
is said on stderr and run again.

A new path, an empty directory or a previous output of the same study may be named; anything else
is refused (InputError) before anything is written, and the executor is started (a scheduler
connected) before the directory is made, so a bad scheduler address leaves nothing behind.
"""

from __future__ import annotations

import fnmatch
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simulator.errors import InputError
from workloads.spec import name_error
from simulator.config.yamlio import load_yaml
from simulator.config.files import write_atomic
from simulator.config.outputs import check_output_target, check_path_name, listing
from simulator.studies import interruption
from simulator.studies.executors import check_parallel_options
from simulator.studies.plugin import STUDY_KINDS, Record, StudyPlugin, study_plugin
from simulator.studies.schedule import LongestFirst
from simulator.studies.spec import failure_lines
from simulator.studies.sweep import (DEFAULT_MAX_POINTS, DEFAULT_STUDIES_DIR, LOCK_NAME, PointPool, acquire_study_dir,
                                     check_point_count, is_temp_name)

ENGINE_ENTRIES = ("points", "failed", LOCK_NAME)
#: the file naming what a study's last report wrote into its output directory (module docstring)
MANIFEST_NAME = ".outputs-{kind}.json"


def is_manifest_name(name: str) -> bool:
    """Whether ``name`` is a study's list of the files its last report wrote (``MANIFEST_NAME``)."""
    return name.startswith(".outputs-") and name.endswith(".json")


def _is_output(name: str, patterns: tuple[str, ...]) -> bool:
    """Whether file ``name`` matches one of a plug-in's output globs."""
    return any(fnmatch.fnmatchcase(name, pat) for pat in patterns)


def _remove_previous_outputs(out: Path, kind: str, patterns: tuple[str, ...]) -> None:
    """Remove the files study ``kind``'s last report wrote into ``out`` (its manifest's names that match its output
    globs ``patterns``), then the manifest; an unreadable manifest removes nothing but itself."""
    manifest = out / MANIFEST_NAME.format(kind=kind)
    try:
        names = json.loads(manifest.read_text())
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        names = []
    for name in names if isinstance(names, list) else []:
        if isinstance(name, str) and Path(name).name == name and _is_output(name, patterns):
            (out / name).unlink(missing_ok=True)
    manifest.unlink(missing_ok=True)


def _file_states(out: Path) -> dict[str, tuple[int, int, int]]:
    """(inode, modification time in ns, size in B) of each file directly in ``out``: a file a report writes,
    in place or renamed into place, changes at least one of them."""
    states = {}
    for path in out.iterdir():
        with suppress(OSError):  # gone since the listing: not a file the report wrote
            if path.is_file():
                st = path.stat()
                states[path.name] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return states


def _write_manifest(out: Path, kind: str, patterns: tuple[str, ...], before: dict[str, tuple[int, int, int]]) -> None:
    """Name in study ``kind``'s manifest the files of ``out`` matching its output globs that are new or changed
    since ``before`` (``_file_states`` taken before its report)."""
    written = sorted(name for name, state in _file_states(out).items()
                     if before.get(name) != state and _is_output(name, patterns))

    def dump(tmp: Path) -> None:
        tmp.write_text(json.dumps(written) + "\n")

    write_atomic(out / MANIFEST_NAME.format(kind=kind), dump)


@dataclass
class PluginOutcome:
    """What a run of a plug-in did: records by point (planned order), which ran now, which failed (key -> error)."""

    records: dict[Any, Record] = field(default_factory=dict)
    simulated: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    result: Any = None  # what the plug-in's report returned


def check_plugin_dir(path: str | Path, plugin: StudyPlugin) -> Path:
    """``path`` as a Path if ``plugin`` may write there: a new path, an empty directory or one holding only
    its outputs and the engine's entries; InputError naming --out otherwise. Creates nothing."""
    def foreign(out: Path) -> str | None:
        other = [p.name for p in out.iterdir() if not is_temp_name(p.name) and not (
            (p.is_dir() and p.name in ENGINE_ENTRIES[:2])
            or (p.is_file() and (p.name == LOCK_NAME or is_manifest_name(p.name)
                                 or _is_output(p.name, plugin.outputs))))]
        return f"holds {listing(other)}, which is not {plugin.title}'s" if other else None

    return check_output_target(path, foreign, f"a previous output of {plugin.title} (files named "
                               f"{', '.join(plugin.outputs)}, and {', '.join(ENGINE_ENTRIES)})")


def record_path(out: Path, key: str) -> Path:
    """Where the record of point ``key`` is stored."""
    return out / "points" / f"{key}.json"


def read_record(out: Path, key: str) -> Record | None:
    """The stored record of point ``key``, or None if there is none; a stored file that does not read
    back as that point's record is said on stderr and removed (the point runs again)."""
    path = record_path(out, key)
    if not path.is_file():
        return None
    try:
        stored = json.loads(path.read_text())
        if stored["key"] == key and isinstance(stored["record"], dict):
            return stored["record"]
        problem = f"holds the record of {stored['key']!r}"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        problem = f"cannot be read ({type(exc).__name__}: {exc})"
    print(f"offsim: warning: {path}: {problem}; running the point again", file=sys.stderr)
    path.unlink(missing_ok=True)
    return None


def _store(out: Path, key: str, data: dict[str, Any], folder: str = "points") -> None:
    """Write ``data`` to ``<out>/<folder>/<key>.json`` whole (a temp file renamed into place)."""
    def dump(tmp: Path) -> None:
        tmp.write_text(json.dumps(data) + "\n")

    write_atomic(out / folder / f"{key}.json", dump)


def _kept(out: Path, outcome: PluginOutcome, planned: Callable[[], int]) -> str:
    """What an interrupted run kept: its stored records."""
    n = len(outcome.records)
    return f"kept {n} of {planned()} points in {out / 'points'}; the same command resumes from them"


@contextmanager
def _locked_output(out: Path, kind: str, patterns: tuple[str, ...], pool: PointPool,
                   open_pool: bool) -> Iterator[None]:
    """Start ``pool`` if ``open_pool`` (before anything is written), create and lock ``out``
    (``acquire_study_dir``: undone on an InputError), remove the half-written files of an interrupted
    run and the outputs of study ``kind``'s last report (``_remove_previous_outputs``, output globs
    ``patterns``). The lock is released on exit."""
    def clean() -> None:
        for d in (out, out / "points", out / "failed"):
            for p in d.iterdir() if d.is_dir() else ():
                if is_temp_name(p.name):
                    p.unlink(missing_ok=True)
        _remove_previous_outputs(out, kind, patterns)

    if open_pool:
        pool.open()
    lock, _ = acquire_study_dir(out, kind, clean)
    try:
        yield
    finally:
        lock.release()


@dataclass
class PluginJob:
    """One study for ``run_plugins``: ``plugin``'s points for ``spec`` into ``out_dir`` (``kind`` names the study
    in its lock; ``quick``, ``select`` and ``owned`` as ``run_plugin`` takes them)."""

    plugin: StudyPlugin
    kind: str
    spec: Any
    out_dir: str | Path
    quick: bool = False
    select: Callable[[Any], bool] | None = None
    owned: bool = False


@dataclass(eq=False)
class _Running:
    """A job's state while ``run_plugins`` runs it: its output directory, its points (planned order), what
    they gave, its tasks on the queue and whether its follow-up points are known."""

    job: PluginJob
    out: Path
    planned: list[Any]
    outcome: PluginOutcome = field(default_factory=PluginOutcome)
    pending: int = 0
    followed: bool = False
    reported: bool = False

    def keep(self, point: Any) -> bool:
        """Whether the job runs ``point`` (its ``select``)."""
        return self.job.select is None or self.job.select(point)


def run_plugin(plugin: StudyPlugin, kind: str, spec: Any, out_dir: str | Path, *, quick: bool = False,
               select: Callable[[Any], bool] | None = None, workers: int | None = None,
               scheduler: str | None = None, dask_local: int | None = None,
               progress: bool | None = None, owned: bool = False) -> PluginOutcome:
    """Run ``plugin``'s points for ``spec`` into ``out_dir`` (module docstring) and write its report.

    select: keep only the points it accepts (of ``points`` and of ``follow_up``). workers, scheduler,
    dask_local: the executor (``simulator.studies.executors.point_executor``). progress: a progress
    bar (None: on a terminal only). owned: ``out_dir`` is the caller's own, checked by it (a reproduce
    target's directory), so its other files are no reason to refuse it. Returns what ran; the report is
    written only if no point failed.
    Bad options or output directory raise InputError before anything is written.
    """
    return run_plugins([PluginJob(plugin, kind, spec, out_dir, quick, select, owned)], workers=workers,
                       scheduler=scheduler, dask_local=dask_local, progress=progress)[0]


def run_plugins(jobs: list[PluginJob], *, workers: int | None = None, scheduler: str | None = None,
                dask_local: int | None = None, progress: bool | None = None) -> list[PluginOutcome]:
    """Run several studies (``run_plugin``'s, each into its own directory) on one executor: their points share
    one queue, longest first, and a study's report is written as soon as its own points are done, while the
    other studies' points run on. Returns each job's outcome, in order."""
    from tqdm import tqdm

    check_parallel_options(workers, scheduler, dask_local)
    runs = []
    for job in jobs:
        out = Path(job.out_dir) if job.owned else check_plugin_dir(job.out_dir, job.plugin)
        runs.append(_Running(job, out, []))
        runs[-1].planned = _unique([p for p in job.plugin.points(job.spec, job.quick) if runs[-1].keep(p)])
        if job.plugin.before_run is not None:  # before any worker starts or anything is written
            job.plugin.before_run(job.spec, job.quick)
    interruption.keep(lambda: "; ".join(_kept(r.out, r.outcome, lambda r=r: len(r.planned)) for r in runs))
    missing = [any(not record_path(r.out, p.key()).is_file() for p in r.planned) for r in runs]
    titles = list(dict.fromkeys(r.job.plugin.title for r in runs))
    with PointPool(workers, scheduler, dask_local) as pool, ExitStack() as locks, \
            tqdm(total=sum(len(r.planned) for r in runs), desc=" and ".join(titles), unit="pt",
                 disable=None if progress is None else not progress, dynamic_ncols=True) as bar:
        for r, open_pool in zip(runs, missing):
            locks.enter_context(_locked_output(r.out, r.job.kind, r.job.plugin.outputs, pool, open_pool))
        queue: LongestFirst | None = None
        tasks: dict[Any, tuple[_Running, Any]] = {}

        def plan(r: _Running, points: list[Any]) -> None:
            """Take each point's stored record, or queue it."""
            nonlocal queue
            for point in points:
                record = read_record(r.out, point.key())
                if record is not None:
                    r.outcome.records[point] = record
                    r.outcome.reused.append(point.key())
                    bar.update()
                    continue
                if queue is None:
                    queue = LongestFirst(pool.open(), pool.capacity())
                tasks[queue.submit(point.cost(), r.job.plugin.run_point, point)] = (r, point)
                r.pending += 1

        def follow(r: _Running) -> bool:
            """Plan the job's follow-up points once its plug-in can tell them; True once it has."""
            job = r.job
            more = job.plugin.follow_up(job.spec, job.quick, dict(r.outcome.records)) if job.plugin.follow_up else []
            if more is None:
                return False
            known = {p.key() for p in r.planned}
            more = [p for p in _unique([p for p in more if r.keep(p)]) if p.key() not in known]
            r.planned.extend(more)
            bar.total = sum(len(x.planned) for x in runs)
            plan(r, more)
            return True

        def settle(r: _Running) -> None:
            """Once the job has no point left to run: its follow-ups, and when none remain its report."""
            if not r.followed and (r.pending == 0 or follow(r)):
                r.followed = follow(r) or True if r.pending == 0 and not r.followed else True
            if r.followed and r.pending == 0 and not r.reported:
                r.reported = True
                if queue is not None:
                    queue.start_waiting()  # the other jobs' points run while this one's report is written
                r.outcome.records = {p: r.outcome.records[p] for p in r.planned if p in r.outcome.records}
                if not r.outcome.failed:
                    before = _file_states(r.out)
                    r.outcome.result = r.job.plugin.report(r.job.spec, r.job.quick, r.outcome.records, r.out)
                    _write_manifest(r.out, r.job.kind, r.job.plugin.outputs, before)

        def take(task: Any) -> _Running:
            """Store a completed task's record (or its error) in its job's directory."""
            r, point = tasks.pop(task)
            r.pending -= 1
            key = point.key()
            try:
                record = task.result()
            except Exception as exc:  # noqa: BLE001 -- the point's error is recorded, the others run on
                r.outcome.failed[key] = f"{type(exc).__name__}: {exc}"
                _store(r.out, key, {"key": key, "point": repr(point), "error": r.outcome.failed[key]}, "failed")
            else:
                _store(r.out, key, {"key": key, "record": record})
                (r.out / "failed" / f"{key}.json").unlink(missing_ok=True)
                r.outcome.records[point] = record
                r.outcome.simulated.append(key)
            bar.update()
            return r

        try:
            for r in runs:
                plan(r, r.planned)
            for r in runs:
                settle(r)
            while queue is not None and tasks:
                for task in queue.completed():
                    settle(take(task))
        except BaseException as exc:
            # on any exception (a report, a store, Ctrl-C) the points not yet started are dropped, not waited for;
            # the records of those that ran are stored, so that the next run reuses them (after an interrupt, only
            # of those already done)
            if queue is not None:
                queue.cancel()
                for task in queue.drain(finish_running=not interruption.caused_by_interrupt(exc)):
                    if task.succeeded():
                        with suppress(Exception):  # a record that cannot be stored: the exception in hand is reported
                            take(task)
            raise
        pool.close()
    return [r.outcome for r in runs]


def _unique(points: list[Any]) -> list[Any]:
    """``points`` without repeats (by key), in order."""
    seen: dict[str, Any] = {}
    for p in points:
        seen.setdefault(p.key(), p)
    return list(seen.values())


def finished(outcome: PluginOutcome, out: str | Path, wall_s: float) -> int:
    """Print what a run did (one line) and return its exit status: 1 if a point failed, else 0."""
    failed = f", {len(outcome.failed)} failed (in {Path(out) / 'failed'}; the same command retries them)" \
        if outcome.failed else ""
    print(f"{len(outcome.records) + len(outcome.failed)} points: {len(outcome.simulated)} run, "
          f"{len(outcome.reused)} reused from {Path(out) / 'points'}{failed}; {wall_s:.1f} s")
    for line in failure_lines([(key, error, Path(out) / "failed" / f"{key}.json")
                               for key, error in outcome.failed.items()], Path(out) / "failed"):
        print(line)
    return 1 if outcome.failed else 0


def specialised_kind(path: str | Path) -> str | None:
    """The ``study:`` kind of a paper study file (a key of ``plugin.STUDY_KINDS``), or None for a sweep file
    (or a file of no known kind, which ``load_study`` rejects)."""
    try:
        raw = load_yaml(path)
    except InputError:
        return None
    kind = raw.get("study") if isinstance(raw, dict) else None
    return kind if isinstance(kind, str) and kind in STUDY_KINDS else None


def load_specialised(path: str | Path, kind: str, max_points: int = DEFAULT_MAX_POINTS) -> tuple[StudyPlugin, Any]:
    """The plug-in of ``kind`` and the paper study file ``path`` loaded by it; ConfigError if the file is bad or
    plans more than ``max_points`` points (``sweep.check_point_count``; follow-up points, which only earlier
    records tell, are not counted)."""
    plugin = study_plugin(kind)
    spec = plugin.load(path)
    check_point_count(str(path), len(_unique(plugin.points(spec, False))), max_points)
    return plugin, spec


def run_specialised(path: str | Path, kind: str, out_dir: str | Path | None = None, *, workers: int | None = None,
                    scheduler: str | None = None, dask_local: int | None = None,
                    max_points: int = DEFAULT_MAX_POINTS) -> int:
    """Run a paper study file of ``kind`` (``specialised_kind``) on its plug-in (``plugin_run.run_plugin``);
    return the exit status (1 if a point failed).

    out_dir: default ``results/studies/<file stem>``. max_points: the most points the file may plan
    (``load_specialised``). Bad input raises InputError before anything is written.
    """
    source = str(path)
    check_parallel_options(workers, scheduler, dask_local)
    if out_dir is None and name_error(Path(source).stem, source) is not None:  # '...yaml': results/studies/..
        raise InputError(f"{source}: the file's name gives no study directory (the default --out is "
                         f"{DEFAULT_STUDIES_DIR}/<file stem>, here {Path(source).stem!r}); expected --out DIR, or "
                         "a file name usable as a directory name (not starting with '.')")
    out = check_path_name(out_dir if out_dir is not None else DEFAULT_STUDIES_DIR / Path(source).stem)
    t0 = time.perf_counter()
    plugin, spec = load_specialised(source, kind, max_points)
    outcome = run_plugin(plugin, kind, spec, out, workers=workers, scheduler=scheduler, dask_local=dask_local)
    return finished(outcome, out, time.perf_counter() - t0)
