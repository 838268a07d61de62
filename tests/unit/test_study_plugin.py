"""The paper-study interface on the sweep engine: a toy plug-in runs, stores each record, resumes,
runs its follow-up round, runs on the local pool, and records a failing point for the next run."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from simulator.errors import InputError
from simulator.studies.plugin import STUDY_KINDS, StudyPlugin, point_key, study_plugin
from simulator.studies.plugin_run import PluginJob, check_plugin_dir, run_plugin, run_plugins


@dataclass(frozen=True)
class Square:
    """A toy point: n squared (``follow``: a point of the second round)."""

    n: int
    follow: bool = False

    def key(self) -> str:
        return point_key("square", self.n, self.follow)

    def cost(self) -> tuple[float]:
        return (float(self.n),)


def run_square(point: Square) -> dict:
    if point.n < 0:
        raise ValueError(f"negative n {point.n}")
    return {"n": point.n, "square": point.n * point.n}


def squares(spec: dict, quick: bool) -> list[Square]:
    return [Square(n) for n in spec["ns"][: 2 if quick else None]]


def follow_up(spec: dict, quick: bool, records: dict) -> list[Square] | None:
    """Once every first-round point has its record: one point at the sum of their squares."""
    first = squares(spec, quick)
    if any(p not in records for p in first):
        return None
    return [Square(sum(records[p]["square"] for p in first), follow=True)]


def report(spec: dict, quick: bool, records: dict, out: Path) -> list[int]:
    values = [r["square"] for r in records.values()]
    (out / "squares.txt").write_text(" ".join(map(str, values)) + "\n")
    return values


TOY = StudyPlugin(title="the toy study", load=lambda path: {"ns": [1, 2, 3]}, points=squares, run_point=run_square,
                  report=report, outputs=("squares.txt",), follow_up=follow_up)


def test_a_toy_plugin_runs_stores_each_record_and_reports(tmp_path):
    out = tmp_path / "out"
    outcome = run_plugin(TOY, "toy", {"ns": [1, 2, 3]}, out, workers=1, progress=False)
    # the first round in planned order, then the follow-up point at 1 + 4 + 9
    assert outcome.result == [1, 4, 9, 196]
    assert (out / "squares.txt").read_text() == "1 4 9 196\n"
    stored = sorted(p.name for p in (out / "points").iterdir())
    assert stored == sorted(f"{p.key()}.json" for p in [Square(1), Square(2), Square(3), Square(14, True)])
    assert json.loads((out / "points" / f"{Square(2).key()}.json").read_text()) == {
        "key": Square(2).key(), "record": {"n": 2, "square": 4}}
    assert len(outcome.simulated) == 4 and not outcome.reused and not outcome.failed


def test_a_second_run_resumes_from_the_stored_records(tmp_path):
    out = tmp_path / "out"
    run_plugin(TOY, "toy", {"ns": [1, 2, 3]}, out, workers=1, progress=False)
    (out / "points" / f"{Square(3).key()}.json").unlink()  # as if the run had stopped before it
    (out / "points" / f"{Square(1).key()}.json").write_text("{trunc")  # a record that cannot be read
    outcome = run_plugin(TOY, "toy", {"ns": [1, 2, 3]}, out, workers=1, progress=False)
    assert sorted(outcome.simulated) == sorted([Square(1).key(), Square(3).key()])
    assert sorted(outcome.reused) == sorted([Square(2).key(), Square(14, True).key()])
    assert outcome.result == [1, 4, 9, 196]


def test_the_toy_plugin_runs_on_the_local_pool_and_the_quick_grid(tmp_path):
    outcome = run_plugin(TOY, "toy", {"ns": [5, 6, 7, 8]}, tmp_path / "out", quick=True, workers=2,
                         progress=False)
    assert outcome.result == [25, 36, 61 ** 2]


def test_a_failing_point_is_recorded_and_no_report_is_written(tmp_path):
    out = tmp_path / "out"
    outcome = run_plugin(TOY, "toy", {"ns": [2, -1]}, out, workers=1, progress=False)
    assert list(outcome.failed) == [Square(-1).key()] and "negative n -1" in outcome.failed[Square(-1).key()]
    assert (out / "failed" / f"{Square(-1).key()}.json").is_file()
    assert (out / "points" / f"{Square(2).key()}.json").is_file()  # the other point is kept
    assert not (out / "squares.txt").exists() and outcome.result is None


def test_two_studies_on_one_pool_each_report_their_own_points(tmp_path):
    """run_plugins: two studies' points in one queue, each study's follow-up from its own records, each
    report in its own directory with what a run of its own gives; one study failing leaves the other's."""
    jobs = [PluginJob(TOY, "toy", {"ns": [1, 2, 3]}, tmp_path / "a"),
            PluginJob(TOY, "toy", {"ns": [5, 6, 7, 8]}, tmp_path / "b", quick=True),
            PluginJob(TOY, "toy", {"ns": [4, -1]}, tmp_path / "c")]
    a, b, c = run_plugins(jobs, workers=2, progress=False)
    assert a.result == [1, 4, 9, 196] and (tmp_path / "a" / "squares.txt").read_text() == "1 4 9 196\n"
    assert b.result == [25, 36, 61 ** 2] and (tmp_path / "b" / "squares.txt").read_text() == "25 36 3721\n"
    assert c.result is None and list(c.failed) == [Square(-1).key()] and not (tmp_path / "c" / "squares.txt").exists()
    assert len(a.simulated) == 4 and len(b.simulated) == 3 and not a.failed and not b.failed
    again = run_plugins(jobs[:2], workers=1, progress=False)  # resumed from each directory's own records
    assert [o.result for o in again] == [a.result, b.result] and not any(o.simulated for o in again)


def test_select_keeps_only_the_points_it_accepts(tmp_path):
    outcome = run_plugin(TOY, "toy", {"ns": [1, 2, 3]}, tmp_path / "out", workers=1, progress=False,
                         select=lambda p: p.n != 2)
    assert outcome.result == [1, 9]  # the follow-up waits for a point that is not run: none


def test_the_output_directory_must_be_new_empty_or_the_studys(tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(InputError, match="holds notes.txt, which is not the toy study's"):
        run_plugin(TOY, "toy", {"ns": [1]}, tmp_path, workers=1, progress=False)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    out = tmp_path / "out"
    run_plugin(TOY, "toy", {"ns": [1]}, out, workers=1, progress=False)
    assert check_plugin_dir(out, TOY) == out  # a previous output: squares.txt, points/, the lock


def report_per_point(spec: dict, quick: bool, records: dict, out: Path) -> None:
    for record in records.values():
        (out / f"square_{record['n']}.txt").write_text(f"{record['square']}\n")


#: two studies that share an output folder share its globs, as the LogCA studies do
SHARED_OUTPUTS = ("square_*.txt", "squares.txt", "README.md")
PER_POINT = StudyPlugin(title="the per-point study", load=lambda path: {}, points=squares, run_point=run_square,
                        report=report_per_point, outputs=SHARED_OUTPUTS)


def test_a_run_removes_what_the_last_report_wrote_and_nothing_else(tmp_path):
    """A run removes the files its study's last report wrote before it runs a point: a report that writes fewer
    files, or none (a failed point), leaves no output of the earlier run; another study's outputs in the same
    folder, and a file no report wrote (the folder's guide), stay."""
    out = tmp_path / "out"
    run_plugin(PER_POINT, "per_point", {"ns": [1, 2, 3]}, out, workers=1, progress=False)
    # another study's report in the same folder
    run_plugin(replace(TOY, outputs=SHARED_OUTPUTS), "toy", {"ns": [4]}, out, workers=1, progress=False)
    (out / "README.md").write_text("the folder's guide\n")
    assert json.loads((out / ".outputs-per_point.json").read_text()) == [f"square_{n}.txt" for n in (1, 2, 3)]
    run_plugin(PER_POINT, "per_point", {"ns": [2]}, out, workers=1, progress=False)
    files = sorted(p.name for p in out.iterdir() if p.is_file() and not p.name.startswith("."))
    assert files == ["README.md", "square_2.txt", "squares.txt"]
    assert json.loads((out / ".outputs-per_point.json").read_text()) == ["square_2.txt"]
    outcome = run_plugin(PER_POINT, "per_point", {"ns": [2, -1]}, out, workers=1, progress=False)
    assert outcome.failed and not (out / "square_2.txt").exists() and not (out / ".outputs-per_point.json").exists()
    assert (out / "squares.txt").is_file() and (out / "README.md").is_file()
    assert check_plugin_dir(out, PER_POINT) == out  # its manifest is the engine's, not a foreign file


def test_every_registered_kind_is_a_plugin():
    for kind in STUDY_KINDS:
        plugin = study_plugin(kind)
        assert isinstance(plugin, StudyPlugin) and plugin.outputs and callable(plugin.run_point)


def test_an_interrupted_study_keeps_its_stored_points_and_the_next_run_reuses_them(tmp_path):
    def interrupted(*args):
        raise KeyboardInterrupt

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_plugin(replace(TOY, report=interrupted), "toy", {"ns": [1, 2]}, out, workers=1, progress=False)
    assert len(list((out / "points").iterdir())) == 3
    outcome = run_plugin(TOY, "toy", {"ns": [1, 2]}, out, workers=1, progress=False)
    assert len(outcome.reused) == 3 and not outcome.simulated and outcome.result == [1, 4, 25]


@dataclass(frozen=True)
class Marked:
    """A toy point that, after ``seconds``, leaves ``marker`` (a file path, "" for none)."""

    n: int
    marker: str = ""
    seconds: float = 0.0

    def key(self) -> str:
        return point_key("marked", self.n, self.marker)

    def cost(self) -> tuple[float]:
        return (float(self.n),)


def run_marked(point: Marked) -> dict:
    import time

    if point.marker:
        Path(point.marker + ".started").write_text("started\n")
    time.sleep(point.seconds)
    if point.marker:
        Path(point.marker).write_text("ran\n")
    return {"n": point.n}


def report_marked(spec: dict, quick: bool, records: dict, out: Path) -> bool:
    """Whether the file ``spec["wait_for"]`` (if any) appears while this report is being written (up to 20 s);
    then, with ``spec["fail"]``, raises."""
    import time

    wait_for = spec.get("wait_for")
    deadline = time.monotonic() + 20.0
    appeared = not wait_for or Path(wait_for).exists()
    while not appeared and time.monotonic() < deadline:
        time.sleep(0.02)
        appeared = Path(wait_for).exists()
    if spec.get("fail"):
        raise RuntimeError("the report failed")
    return appeared


MARKED = StudyPlugin(title="the marked study", load=lambda path: {},
                     points=lambda spec, quick: [Marked(*p) for p in spec["points"]], run_point=run_marked,
                     report=report_marked, outputs=())


def test_another_studys_point_runs_while_a_report_is_written(tmp_path):
    marker = tmp_path / "second-started"
    jobs = [PluginJob(MARKED, "marked", {"points": [(2,)], "wait_for": str(marker)}, tmp_path / "a"),
            PluginJob(MARKED, "marked", {"points": [(1, str(marker))]}, tmp_path / "b")]
    first, second = run_plugins(jobs, workers=1, progress=False)  # the longer point, the first study's, runs first
    assert first.result is True  # the one worker took the second study's point before the first report ended
    assert second.result is True


def test_a_failing_report_drops_the_points_not_started_and_keeps_those_that_ran(tmp_path, monkeypatch):
    """With a scheduler every point is handed over at once (no capacity); a report that raises cancels those
    its workers have not started, rather than leaving them to run while the error waits, and stores the
    records of those that were running."""
    from concurrent.futures import ThreadPoolExecutor

    from simulator.studies import plugin_run

    class OneThreadScheduler:
        def __init__(self, *options):
            self.executor = None

        def open(self):
            self.executor = self.executor or ThreadPoolExecutor(max_workers=1)
            return self.executor

        def capacity(self):
            return None

        def close(self):
            if self.executor is not None:
                self.executor.shutdown(wait=True)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

    monkeypatch.setattr(plugin_run, "PointPool", OneThreadScheduler)
    first, running, queued = (tmp_path / name for name in ("first", "running", "queued"))
    jobs = [PluginJob(MARKED, "marked", {"points": [(3, str(first))], "fail": True,  # once the next point runs
                                         "wait_for": str(running) + ".started"}, tmp_path / "a"),
            PluginJob(MARKED, "marked", {"points": [(2, str(running), 1.0), (1, str(queued))]}, tmp_path / "b")]
    with pytest.raises(RuntimeError, match="the report failed"):
        run_plugins(jobs, progress=False)
    assert first.exists()
    assert not queued.exists()  # queued behind the running point when the report failed: cancelled
    # the point that was running finished as the pool shut down: its record is stored, and the next run reuses it
    again = run_plugins(jobs[1:], progress=False)[0]
    assert again.reused == [Marked(2, str(running), 1.0).key()] and again.simulated == [Marked(1, str(queued)).key()]


def run_killed(point: Square) -> dict:
    """A point whose worker the kernel kills (as it does a process out of memory)."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def test_a_worker_killed_mid_point_is_one_message_with_exit_2(tmp_path, capsys):
    import argparse
    from concurrent.futures.process import BrokenProcessPool

    from simulator.cli import _run_command

    killed = replace(TOY, run_point=run_killed)
    with pytest.raises(BrokenProcessPool):
        run_plugin(killed, "toy", {"ns": [1, 2, 3]}, tmp_path / "out", workers=1, progress=False)

    def study(args):
        return run_plugin(killed, "toy", {"ns": [1, 2, 3]}, tmp_path / "again", workers=1, progress=False)

    assert _run_command(argparse.Namespace(func=study)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("offsim: error: a worker process ended abruptly while it ran a point")
