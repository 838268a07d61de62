"""Studies: end to end, resume after SIGKILL or over a corrupt point, Dask equals the local pool, bad study
files, bad parallel options and output directories, report figures, output permissions."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from simulator.cli import main
from simulator.errors import ConfigError, InputError
from simulator.runner import run
from simulator.studies.plugin import STUDY_KINDS, study_plugin
from simulator.studies.sweep import (LOCK_NAME, check_study_dir, load_study, prepare_points, study_identity,
                             run_study)
from tests.conftest import DEFAULT_SYSTEM, ROOT

POINT_FILES = ["config.resolved.yaml", "results.parquet", "summary.json"]


def _study(tmp_path: Path, sweep: str, *, name: str = "s", extra: str = "", kind: str = "read",
           file: str = "study.yaml") -> Path:
    (tmp_path / "w.yaml").write_text(f"name: w\ngenerator: stream\nparams: {{kind: {kind}, array_bytes: 256 KiB}}\n")
    path = tmp_path / file
    path.write_text(f"name: {name}\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n{sweep}{extra}")
    return path


SMALL = ("  product:\n    set.host.max_outstanding_misses: [10, 4]\n"
         "    param.array_bytes: [\"1 MiB\", \"256 KiB\"]\n")


def _stored(out: Path) -> dict[str, tuple[int, int]]:
    """Stored points: name -> (inode, mtime in ns) of results.parquet."""
    pts = out / "points"
    if not pts.is_dir():
        return {}
    found = {}
    for p in pts.iterdir():
        if not p.name.startswith(".") and (p / "results.parquet").is_file():
            st = (p / "results.parquet").stat()
            found[p.name] = (st.st_ino, st.st_mtime_ns)
    return found


def _table(out: Path) -> pd.DataFrame:
    return pq.read_table(out / "study.parquet").to_pandas()


def test_study_runs_end_to_end_and_a_rerun_simulates_nothing(tmp_path):
    study = _study(tmp_path, SMALL)
    out = tmp_path / "out"
    first = run_study(study, out, workers=2, progress=False)
    assert (len(first.points), len(first.simulated), len(first.reused), first.failed) == (4, 4, 0, {})
    assert sorted(p.name for p in (out / "points").iterdir()) == sorted(p.run_hash for p in first.points)
    for p in first.points:
        assert sorted(f.name for f in (out / "points" / p.run_hash).iterdir()) == POINT_FILES
    table = _table(out)
    keys = ["set.host.max_outstanding_misses", "param.array_bytes"]
    assert list(table.columns) == [*keys, "run_hash", "component", "quantity", "value", "unit"]
    # Sorted by the resolved axis values, not by the order written in the file.
    order = table.drop_duplicates("run_hash")[keys].values.tolist()
    assert order == [[4, 262144], [4, 1048576], [10, 262144], [10, 1048576]]
    # Each row belongs to the point its axis columns name: compare with an independent run.
    row = table[(table[keys[0]] == 4) & (table[keys[1]] == 1048576) & (table["quantity"] == "simulated_time_s")]
    direct = run(DEFAULT_SYSTEM, tmp_path / "w.yaml", ["host.max_outstanding_misses=4"], array_bytes="1 MiB")
    assert row["value"].tolist() == [direct.value("system", "simulated_time_s")]
    assert row["run_hash"].tolist() == [direct.meta["run_hash"]]
    # Fewer miss buffers: a slower stream (Little's law), so the table is not one point repeated.
    t = table[table["quantity"] == "simulated_time_s"].set_index(keys)["value"]
    assert t[(4, 1048576)] > t[(10, 1048576)]

    before = _stored(out)
    again = run_study(study, out, workers=2, progress=False)
    assert (again.simulated, len(again.reused)) == ((), 4)
    assert _stored(out) == before  # same files, untouched
    assert again.sim_wall_s == {}
    pd.testing.assert_frame_equal(_table(out), table)


def test_points_stored_with_large_string_text_are_read_with_the_others(tmp_path):
    """A point stored by another pandas or pyarrow may hold its text as large_string: reused all the same."""
    study = _study(tmp_path, SMALL)
    out = tmp_path / "out"
    run_study(study, out, workers=1, progress=False)
    table = _table(out)
    path = next((out / "points").iterdir()) / "results.parquet"
    stored = pq.read_table(path)
    pq.write_table(stored.cast(pa.schema([pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
                                          for f in stored.schema])), path)
    again = run_study(study, out, workers=1, progress=False)
    assert (again.simulated, len(again.reused)) == ((), 4)
    pd.testing.assert_frame_equal(_table(out), table)


def test_table_does_not_depend_on_the_order_axes_list_their_values(tmp_path):
    a = run_study(_study(tmp_path, SMALL, file="a.yaml"), tmp_path / "a", workers=2, progress=False)
    reverse = SMALL.replace("[10, 4]", "[4, 10]").replace('["1 MiB", "256 KiB"]', '["256 KiB", "1 MiB"]')
    b = run_study(_study(tmp_path, reverse, file="b.yaml"), tmp_path / "b", workers=1, progress=False)
    assert [p.run_hash for p in a.points] == [p.run_hash for p in b.points]
    assert pq.read_table(a.table_path).equals(pq.read_table(b.table_path))


def test_zip_axes_advance_together_times_the_product(tmp_path):
    sweep = ("  product:\n    param.kind: [read, copy]\n"
             "  zip:\n    set.host.max_outstanding_misses: [4, 8, 16]\n"
             "    param.array_bytes: [\"64 KiB\", \"128 KiB\", \"256 KiB\"]\n")
    points = prepare_points(load_study(_study(tmp_path, sweep)))
    pairs = sorted((dict(p.coords)["param.kind"], dict(p.coords)["set.host.max_outstanding_misses"],
                    dict(p.coords)["param.array_bytes"]) for p in points)
    assert pairs == sorted((k, m, b) for k in ("read", "copy")
                           for m, b in ((4, 65536), (8, 131072), (16, 262144)))
    assert len({p.run_hash for p in points}) == 6


def _fail_at(monkeypatch, array_bytes: int) -> None:
    """Make the simulation of the points with ``array_bytes`` raise, in this process and in the forked
    pool workers: a failure only a run can tell (the study checks every input before it runs)."""
    import simulator.runner

    simulate = simulator.runner.simulate

    def failing(loaded, workload, trace, source):
        if workload.params.get("array_bytes") == array_bytes:
            raise RuntimeError(f"injected failure at array_bytes={array_bytes}")
        return simulate(loaded, workload, trace, source)

    monkeypatch.setattr(simulator.runner, "simulate", failing)


def test_a_failing_point_is_recorded_and_the_others_finish(tmp_path, capsys, monkeypatch):
    _fail_at(monkeypatch, 96 * 1024)
    study = _study(tmp_path, "  product:\n    param.array_bytes: [\"64 KiB\", \"96 KiB\", \"128 KiB\"]\n")
    out = tmp_path / "out"
    assert main(["study", str(study), "--out", str(out), "--workers", "2"]) == 1
    failed = list((out / "failed").iterdir())
    assert len(failed) == 1
    text = failed[0].read_text()
    assert "96 KiB" in text and "injected failure" in text
    assert len(_stored(out)) == 2
    assert _table(out)["param.array_bytes"].unique().tolist() == [65536, 131072]
    assert "failed" in (out / "report.md").read_text()
    # the sweep without the failing value: its record goes with it, as the point is no longer the study's
    study.write_text(study.read_text().replace('"96 KiB", ', ""))
    assert main(["study", str(study), "--out", str(out), "--workers", "1"]) == 0
    assert list((out / "failed").iterdir()) == []


def test_report_references_only_figures_that_exist(tmp_path):
    extra = ("figures:\n  - {x: param.array_bytes, y: cache/L1D/misses, group: set.host.max_outstanding_misses}\n"
             "  - {x: set.host.max_outstanding_misses, y: energy/total}\n"
             "  - {x: set.host.max_outstanding_misses, y: stage/host/no_such_stage/busy_s}\n")
    outcome = run_study(_study(tmp_path, SMALL, extra=extra), tmp_path / "out", workers=2, progress=False)
    report = outcome.report_path.read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
    assert len(images) == 2
    for rel in images:
        png = outcome.out_dir / rel
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    links = re.findall(r"\]\((points/[^)]+)\)", report)
    assert len(links) == 4 and all((outcome.out_dir / rel).is_file() for rel in links)
    assert "stage/host/no_such_stage/busy_s" in report  # a stage only the run can tell: named as not drawn


def test_default_figures_are_drawn_when_none_are_asked_for(tmp_path):
    outcome = run_study(_study(tmp_path, SMALL), tmp_path / "out", workers=2, progress=False)
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", outcome.report_path.read_text())
    assert len(images) == 3 and all((outcome.out_dir / rel).is_file() for rel in images)


BAD_STUDIES = {
    "unknown top-level key": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nrepeat: 3\n", "repeat"),
    "unknown system key": ("  product:\n    set.host.max_outstanding_mises: [4]\n",
                           "sweep.product.set.host.max_outstanding_mises"),
    "unknown workload parameter": ("  product:\n    param.array_size: [\"64 KiB\"]\n", "sweep.product.param.array_size"),
    "axis without set/param": ("  product:\n    host.max_outstanding_misses: [4]\n",
                               "sweep.product.host.max_outstanding_misses"),
    "empty sweep": ("  product: {}\n", "sweep"),
    "zip lengths differ": ("  zip:\n    set.host.max_outstanding_misses: [4, 8]\n    param.array_bytes: [\"64 KiB\"]\n",
                           "sweep.zip"),
    "workload value of the wrong unit": ("  product:\n    param.array_bytes: [\"64 KiB\", \"2 GHz\"]\n",
                                         "sweep.product.param.array_bytes"),
    "system value of the wrong unit": ("  product:\n    set.host.frequency_hz: [\"2 GHz\", \"3 MiB\"]\n",
                                       "sweep.product.set.host.frequency_hz"),
    "system value out of bounds": ("  product:\n    set.host.max_outstanding_misses: [4, 0]\n",
                                   "sweep.product.set.host.max_outstanding_misses"),
    "figure on an unknown axis": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n  - {x: param.n, y: dram/reads}\n",
                                  "figures[0].x"),
    "figure of an unknown quantity": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                                      "  - {x: param.array_bytes, y: dram/reads}\n"
                                      "  - {x: param.array_bytes, y: dram/nonexistent_quantity}\n",
                                      "figures[1].y: 'dram/nonexistent_quantity': no quantity"),
    "figure of an unknown component": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                                       "  - {x: param.array_bytes, y: cache/L3/misses}\n",
                                       "figures[0].y: 'cache/L3/misses': no component 'cache/L3'"),
    "figure x that is not a key string": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                                          "  - {x: [param.array_bytes], y: dram/reads}\n",
                                          "figures[0].x: ['param.array_bytes']; expected a key string, one of the "
                                          "sweep's axis keys: param.array_bytes"),
    "figure group that is not a key string": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                                              "  - {x: param.array_bytes, y: dram/reads, group: {a: 1}}\n",
                                              "figures[0].group: {'a': 1}; expected a key string"),
    "figure asked for twice": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                               "  - {x: param.array_bytes, y: dram/reads}\n"
                               "  - {x: param.array_bytes, y: dram/reads, logy: true}\n",
                               "figures[1]: the file of figures[0] (dram_reads_vs_array_bytes.png), which it would "
                               "overwrite; expected each figure once"),
    "more figures than a study draws": ("  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                                        + "  - {x: param.array_bytes, y: dram/reads}\n" * 65,
                                        "figures: 65 figures; expected at most 64"),
    "axis value that is not a scalar": ("  product:\n    set.host.frequency_hz: [{a: 1}]\n",
                                        "sweep.product.set.host.frequency_hz: [{'a': 1}]; expected a list of scalar "
                                        "values"),
    # the figure's axis is named by the file: one error, not a second one saying the figure's x is no axis
    "figure over an axis whose values are refused": ("  product:\n    param.array_bytes: [[1, 2]]\nfigures:\n"
                                                     "  - {x: param.array_bytes, y: dram/reads}\n",
                                                     "sweep.product.param.array_bytes: [[1, 2]]; expected a list of "
                                                     "scalar values"),
    "size the generator refuses": ("  product:\n    param.array_bytes: [\"64 KiB\", \"-1 MiB\"]\n",
                                   "sweep.product.param.array_bytes: value '-1 MiB': the stream generator refuses it: "
                                   "params.array_bytes"),
    "kind outside the generator's choices": ("  product:\n    set.host.max_outstanding_misses: [4, 8]\n"
                                             "    param.kind: [read, bogus]\n",
                                             "sweep.product.param.kind: value 'bogus': params.kind: 'bogus'; "
                                             "expected one of read, write, copy, scale, add, triad"),
    # each value passes with the workload file's other parameters; 1000 B is not a whole number of 16 B elements
    "values the generator refuses together": ("  zip:\n    param.array_bytes: [\"64 KiB\", \"1000 B\"]\n"
                                              "    param.elem_bytes: [\"8 B\", \"16 B\"]\n",
                                              "sweep: point (param.array_bytes='1000 B', param.elem_bytes='16 B'): "
                                              "the stream generator refuses these values together: params."),
    "size beyond the DRAM": ("  product:\n    set.host.max_outstanding_misses: [4, 8]\n"
                             "    param.array_bytes: [\"64 KiB\", \"8 GiB\"]\n",
                             "sweep: point (set.host.max_outstanding_misses=4, param.array_bytes=8 GiB; and 1 more "
                             "point): "),
    "value repeated": ("  product:\n    set.host.max_outstanding_misses: [4, 8, 4]\n",
                       "sweep.product.set.host.max_outstanding_misses: value 4 repeats value [0]; expected each "
                       "value once"),
    "value repeated in other units": ("  product:\n    param.array_bytes: [\"1 MiB\", \"1048576 B\"]\n",
                                      "sweep.product.param.array_bytes: value '1048576 B' repeats value [0] "
                                      "('1 MiB', the same after parsing); expected each value once"),
    "zipped row repeated": ("  zip:\n    set.host.max_outstanding_misses: [4, 8, 4]\n"
                            "    param.array_bytes: [\"64 KiB\", \"64 KiB\", \"65536 B\"]\n",
                            "sweep.zip: value (set.host.max_outstanding_misses=4, param.array_bytes='65536 B') "
                            "repeats value [0]"),
    "one key set by two axes": ("  product:\n    set.caches.levels.L1D.ways: [4, 8]\n"
                                "    set.caches.levels.0.ways: [2, 16]\n",
                                "sweep.product.set.caches.levels.0.ways: sets caches.levels[0].ways, as axis "
                                "set.caches.levels.L1D.ways does; expected each key set by one axis"),
    # checked as offsim run checks a trace against its system, point by point
    "threads beyond the cores": ("  product:\n    param.threads: [1, 2]\n",
                                 "sweep: point (param.threads=2): "),
    "one problem of many points, said once": ("  product:\n    param.threads: [2]\n"
                                              "    set.host.max_outstanding_misses: [4, 8]\n",
                                              "sweep: point (param.threads=2, set.host.max_outstanding_misses=4; and 1 "
                                              "more point): "),
    "lines beyond the limit": ("  product:\n    param.array_bytes: [\"1 GiB\"]\n    param.repeats: [1, 20]\n",
                               "sweep: point (param.array_bytes=1 GiB, param.repeats=20): "),
    "a missing cache level renamed": ("  product:\n    set.caches.levels.5.name: [X]\n",
                                      "sweep.product.set.caches.levels.5.name: value 'X': caches.levels.5: no list "
                                      "item named '5'"),
    "a cache level renamed": ("  product:\n    set.caches.levels.L1D.name: [X]\n",
                              "sweep.product.set.caches.levels.L1D.name: renames the list item it selects "
                              "(caches.levels[0].name)"),
}


@pytest.mark.parametrize("case", sorted(BAD_STUDIES))
def test_bad_study_file_exits_2_before_any_point_runs(tmp_path, capsys, case):
    """offsim validate and offsim study refuse the file alike: exit 2, one message naming the file, the
    key and what was expected, and no output directory."""
    sweep, key = BAD_STUDIES[case]
    study = _study(tmp_path, sweep)
    out = tmp_path / "out"
    for argv in (["validate", str(study)], ["study", str(study), "--out", str(out)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{study}: {key}" in err[0], err
    assert not out.exists()


def test_a_system_path_that_is_a_directory_is_said_to_be_one(tmp_path, capsys):
    study = _study(tmp_path, SMALL)
    study.write_text(study.read_text().replace(f"system: {DEFAULT_SYSTEM}", "system: ."))
    assert main(["validate", str(study)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {study}: system: '.' is a directory (looked at {tmp_path}); expected an "
                   "existing system file"]


def test_a_workload_file_the_generator_refuses_is_named(tmp_path, capsys):
    study = _study(tmp_path, "  product:\n    set.host.max_outstanding_misses: [4, 8]\n", kind="bogus")
    assert main(["validate", str(study)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {study}: workload: {tmp_path / 'w.yaml'}: "), err
    assert "'bogus'" in err[0] and "read, write, copy, scale, add, triad" in err[0], err


def test_zipped_axes_may_repeat_a_value_in_distinct_rows(tmp_path):
    sweep = ("  zip:\n    set.host.max_outstanding_misses: [4, 4, 8]\n"
             "    param.array_bytes: [\"64 KiB\", \"128 KiB\", \"64 KiB\"]\n")
    assert len(prepare_points(load_study(_study(tmp_path, sweep)))) == 3


def test_missing_dask_is_a_clear_input_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    assert main(["study", str(_study(tmp_path, SMALL)), "--out", str(tmp_path / "o"), "--dask-local", "2"]) == 2
    assert "dask.distributed is not installed" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


KILL_SWEEP = ("  product:\n    set.host.max_outstanding_misses: [4, 6, 10, 16]\n"
              "    param.array_bytes: [\"16 MiB\", \"24 MiB\", \"32 MiB\"]\n")


def _study_cmd(study: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "simulator.cli", "study", str(study), "--out", str(out), "--workers", "1"]


def _group_gone(pgid: int, timeout_s: float) -> bool:
    """Wait until no process of group ``pgid`` (started by this test) is left; kill them if they stay."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    os.killpg(pgid, signal.SIGKILL)
    return False


@pytest.mark.slow
def test_sigkill_mid_study_then_rerun_reuses_every_finished_point(tmp_path):
    study = _study(tmp_path, KILL_SWEEP)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(_study_cmd(study, out), cwd=tmp_path, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(_stored(out)) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)  # the driver only: its pool worker must notice and exit by itself
    proc.wait()
    assert _group_gone(proc.pid, timeout_s=10), "a pool worker outlived the killed study"
    stored = _stored(out)
    assert 3 <= len(stored) < 12, "the study must be killed part way"
    for name in stored:
        assert sorted(f.name for f in (out / "points" / name).iterdir()) == POINT_FILES
    assert not (out / "study.parquet").exists()

    done = subprocess.run(_study_cmd(study, out), cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{12 - len(stored)} simulated, {len(stored)} reused, 0 failed" in done.stdout
    after = _stored(out)
    assert len(after) == 12
    assert {k: after[k] for k in stored} == stored  # every finished point reused as it was
    assert sorted(p.name for p in (out / "points").iterdir()) == sorted(after)  # no temp dirs left

    fresh = run_study(study, tmp_path / "fresh", workers=1, progress=False)
    assert pq.read_table(out / "study.parquet").equals(pq.read_table(fresh.table_path))


@pytest.mark.slow
def test_dask_cluster_gives_the_local_pool_table(tmp_path):
    dd = pytest.importorskip("dask.distributed")
    study = _study(tmp_path, SMALL)
    local = run_study(study, tmp_path / "local", workers=2, progress=False)
    with dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address=None) as cluster:
        remote = run_study(study, tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    assert (len(remote.simulated), remote.failed) == (4, {})
    assert pq.read_table(remote.table_path).equals(pq.read_table(local.table_path))
    assert main(["study", str(study), "--out", str(tmp_path / "dask-local"), "--dask-local", "2"]) == 0
    assert pq.read_table(tmp_path / "dask-local" / "study.parquet").equals(pq.read_table(local.table_path))


def test_a_specialised_study_file_is_refused_by_the_sweep_runner_with_the_command_that_runs_it(tmp_path):
    """Every study file of configs/studies with a ``study:`` kind is named in the plug-in registry, and the
    sweep runner refuses it in one message that names the command that runs it."""
    kinds = {}
    for path in sorted((ROOT / "configs" / "studies").glob("*.yaml")):
        kind = yaml.safe_load(path.read_text()).get("study")
        if kind is not None:
            kinds[path] = kind
    assert set(kinds.values()) == set(STUDY_KINDS)
    for path, kind in kinds.items():
        out = tmp_path / path.stem
        with pytest.raises(ConfigError) as exc:
            run_study(path, out)
        assert len(exc.value.messages) == 1
        msg = exc.value.messages[0]
        assert f"{path}: study: {kind!r}" in msg and "expected a sweep file" in msg
        assert f"Run it with: offsim study {path}" in msg
        assert not out.exists()


def test_offsim_study_hands_a_specialised_file_to_its_plugin(tmp_path, monkeypatch, capsys):
    """``offsim study`` runs a paper study file on the sweep engine with its kind's plug-in, its loaded spec,
    the output directory (default ``results/studies/<file stem>``) and the parallel options, and exits 1 if a
    point failed."""
    import simulator.studies.plugin_run as plugin_run

    calls = []

    def fake_run(plugin, kind, spec, out, **options):
        calls.append((plugin, kind, type(spec).__name__, out, options))
        return plugin_run.PluginOutcome(failed={"p": "boom"} if kind == "roofline" else {})

    for kind in ("fmm_placement", "roofline"):  # import the study modules first: one imported while run_plugin is
        study_plugin(kind)  # patched would keep the fake as its own run_plugin after the test
    monkeypatch.setattr(plugin_run, "run_plugin", fake_run)
    fmm = ROOT / "configs" / "studies" / "fmm_placement.yaml"
    assert main(["study", str(fmm), "--out", str(tmp_path / "a"), "--dask-local", "3"]) == 0
    assert calls[-1] == (study_plugin("fmm_placement"), "fmm_placement", "FmmStudySpec", tmp_path / "a",
                         {"workers": None, "scheduler": None, "dask_local": 3})
    roof = ROOT / "configs" / "studies" / "roofline.yaml"
    monkeypatch.chdir(tmp_path)
    assert main(["study", str(roof)]) == 1
    assert calls[-1][1:4] == ("roofline", "RooflineStudySpec", Path("results/studies/roofline"))
    assert "1 failed" in capsys.readouterr().out
    assert len(calls) == 2


def test_offsim_study_refuses_bad_parallel_options_for_a_paper_study(tmp_path, capsys):
    studies = ROOT / "configs" / "studies"
    cases = [(["study", str(studies / "fmm_placement.yaml"), "--scheduler", "tcp://x:1", "--dask-local", "2"],
              "both given"),
             (["study", str(studies / "logca_crypto.yaml"), "--workers", "0"], "--workers: 0")]
    for argv, expected in cases:
        assert main(argv + ["--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and expected in err[0], err
        assert not (tmp_path / "o").exists()


def test_figures_are_checked_against_the_quantities_runs_emit(tmp_path):
    """Every quantity of the shipped example and of the default figures passes; an accelerator's
    quantities are known only after a run, so only its name is checked before."""
    from simulator.studies.report import DEFAULT_Y, SUMMARY_Y

    prepare_points(load_study(ROOT / "configs" / "studies" / "micro_sweep.yaml"))
    ys = list(dict.fromkeys([*DEFAULT_Y, *(y for _, y in SUMMARY_Y), "energy/dram/refresh",
                             "host/bytes_served_by_DRAM", "stage/host/stream/busy_s"]))  # each figure once
    extra = "figures:\n" + "".join(f"  - {{x: param.array_bytes, y: {y}}}\n" for y in ys)
    prepare_points(load_study(_study(tmp_path, "  product:\n    param.array_bytes: [\"64 KiB\"]\n", extra=extra)))
    lap = tmp_path / "lap.yaml"
    lap.write_text(f"name: lap\nsystem: {ROOT / 'configs' / 'systems' / 'lap_llc.yaml'}\nworkload: w.yaml\n"
                   "sweep:\n  product:\n    param.array_bytes: [\"64 KiB\"]\nfigures:\n"
                   "  - {x: param.array_bytes, y: accel/lap/any_counter}\n"
                   "  - {x: param.array_bytes, y: energy/lap/any_category}\n"
                   "  - {x: param.array_bytes, y: accel/lapp/busy_s}\n")
    with pytest.raises(ConfigError) as exc:
        prepare_points(load_study(lap))
    assert exc.value.messages == [m for m in exc.value.messages if "figures[2].y: 'accel/lapp/busy_s'" in m]
    assert len(exc.value.messages) == 1 and "did you mean accel/lap?" in exc.value.messages[0]


@pytest.mark.parametrize("damage", ["truncated results.parquet", "missing summary.json"])
def test_a_stored_point_that_cannot_be_read_is_run_again(tmp_path, capsys, damage):
    study = _study(tmp_path, SMALL)
    out = tmp_path / "out"
    first = run_study(study, out, workers=2, progress=False)
    clean = _table(out)
    bad = first.points[1].run_hash
    if damage == "truncated results.parquet":
        with open(out / "points" / bad / "results.parquet", "r+b") as fh:
            fh.truncate(100)
    else:
        (out / "points" / bad / "summary.json").unlink()
    assert main(["study", str(study), "--out", str(out), "--workers", "2"]) == 0
    captured = capsys.readouterr()
    assert "1 simulated, 3 reused, 0 failed" in captured.out
    damaged = "results.parquet: cannot be read" if damage.startswith("truncated") else "summary.json missing"
    assert f"{out / 'points' / bad}" in captured.err and damaged in captured.err, captured.err
    assert sorted(f.name for f in (out / "points" / bad).iterdir()) == POINT_FILES
    pd.testing.assert_frame_equal(_table(out), clean)  # the point's results are deterministic


def test_parallel_options_are_one_way_of_running(tmp_path, capsys):
    """--workers with --dask-local or --scheduler would be ignored: refused before anything is written."""
    study = _study(tmp_path, SMALL)
    fmm = ROOT / "configs" / "studies" / "fmm_placement.yaml"
    for argv, other in (([str(study), "--dask-local", "2"], "--dask-local"),
                        ([str(study), "--scheduler", "tcp://127.0.0.1:1"], "--scheduler"),
                        ([str(fmm), "--dask-local", "2"], "--dask-local")):
        assert main(["study", *argv, "--workers", "2", "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--workers: cannot be combined with {other}" in err[0], err
        assert not (tmp_path / "o").exists()


def test_an_unreachable_scheduler_leaves_no_output(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask.distributed")
    import simulator.studies.executors

    monkeypatch.setattr(simulator.studies.executors, "SCHEDULER_CONNECT_TIMEOUT_S", 1.0)
    study = _study(tmp_path, SMALL)
    empty = tmp_path / "empty"
    empty.mkdir()
    fmm = ROOT / "configs" / "studies" / "fmm_placement.yaml"
    for file, out, address in ((study, tmp_path / "new" / "s", "notanaddress"), (study, empty, "tcp://127.0.0.1:1"),
                               (fmm, tmp_path / "fmm", "notanaddress")):
        assert main(["study", str(file), "--out", str(out), "--scheduler", address]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("offsim: error: --scheduler "
                                                   f"{address}: cannot connect ("), err
        assert "expected the address of a running dask.distributed scheduler" in err[0]
    assert not (tmp_path / "new").exists() and not (tmp_path / "fmm").exists()
    assert list(empty.iterdir()) == []  # an existing directory stays, and nothing is left in it

    # Resuming over a point that proves unreadable needs the scheduler only once the study is locked:
    # refused then too, leaving the previous study as it was (its lock and the unreadable point included).
    out = tmp_path / "done"
    run_study(study, out, workers=2, progress=False)
    (out / "points" / prepare_points(load_study(study))[0].run_hash / "results.parquet").write_bytes(b"x")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(["study", str(study), "--out", str(out), "--scheduler", "notanaddress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--scheduler notanaddress: cannot connect" in err[0], err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before

    # every point stored: the scheduler would do nothing, and is refused all the same, the study as it was
    run_study(study, out, workers=1, progress=False)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(["study", str(study), "--out", str(out), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler tcp://127.0.0.1:1: cannot connect" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_out_must_be_new_empty_or_the_same_studys_directory(tmp_path, capsys):
    study = _study(tmp_path, SMALL, name="s")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    assert main(["study", str(study), "--out", str(foreign)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--out {foreign}: holds notes.txt, which is not a study's" in err[0], err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]

    fmm = ROOT / "configs" / "studies" / "fmm_placement.yaml"
    assert main(["study", str(fmm), "--out", str(foreign)]) == 2
    assert f"--out {foreign}: holds notes.txt, which is not the FMM study's" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]

    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="exists and is not a directory"):
        check_study_dir(tmp_path / "file", "s")
    done = tmp_path / "done"
    run_study(study, done, workers=2, progress=False)
    identity = study_identity(load_study(study))
    assert identity == f"s (system {Path(DEFAULT_SYSTEM).resolve()}, workload {(tmp_path / 'w.yaml').resolve()})"
    assert (done / LOCK_NAME).read_text() == identity + "\n"
    assert check_study_dir(done, identity) == done  # resumed (test_study_runs_end_to_end... reruns one)
    (done / LOCK_NAME).write_text("s\n")  # a lock naming the study alone is the study's too
    assert check_study_dir(done, identity) == done
    (done / LOCK_NAME).write_text(identity + "\n")
    with pytest.raises(InputError, match=f"--out {done}: is the directory of study 's "):
        check_study_dir(done, "other")
    # another study of the same name, over another workload, does not take the directory over
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "w.yaml").write_text("name: w\ngenerator: stream\nparams: {kind: read, array_bytes: 1 MiB}\n")
    twin = tmp_path / "other" / "study.yaml"
    twin.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n{SMALL}")
    assert main(["study", str(twin), "--out", str(done)]) == 2
    assert f"--out {done}: is the directory of study {identity!r}" in capsys.readouterr().err
    (done / LOCK_NAME).write_text("")  # a lock from before locks named their study: any study's
    assert check_study_dir(done, "other") == done
    (done / LOCK_NAME).unlink()
    with pytest.raises(InputError, match=f"but no {LOCK_NAME}"):
        check_study_dir(done, "s")


def test_outputs_follow_the_umask(tmp_path, monkeypatch):
    """Tables, reports, failure records and directories get the modes an ordinary file would (not
    the private 0600 / 0700 of temporary files)."""
    _fail_at(monkeypatch, 96 * 1024)
    study = _study(tmp_path, "  product:\n    param.array_bytes: [\"64 KiB\", \"96 KiB\"]\n")
    old = os.umask(0o027)
    try:
        outcome = run_study(study, tmp_path / "out", workers=1, progress=False)
    finally:
        os.umask(old)
    out = outcome.out_dir
    assert len(outcome.failed) == 1
    files = [out / "study.parquet", out / "report.md", out / LOCK_NAME, *(out / "failed").iterdir(),
             *(out / "figures").iterdir()]
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: "0o640" for f in files}
    dirs = [out, out / "failed", out / "figures"]
    assert {d.name: oct(d.stat().st_mode & 0o777) for d in dirs} == {d.name: "0o750" for d in dirs}


def test_an_unknown_study_kind_is_one_message(tmp_path, capsys):
    from simulator.cli import main

    bad = tmp_path / "s.yaml"
    bad.write_text("study: bogus_kind\n")
    assert main(["study", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {bad}: study: 'bogus_kind' is not a paper study kind; expected one of: "
                   "fmm_placement, logca_crypto, logca_gpu, roofline, stencil_tiling (or a sweep file, without "
                   "'study:')"]
    assert not (tmp_path / "out").exists()


def test_every_paper_study_kind_loads_its_shipped_file():
    """Each plug-in's loader reads the shipped file of its kind (offsim validate relies on it)."""
    studies = ROOT / "configs" / "studies"
    for kind in STUDY_KINDS:
        assert study_plugin(kind).load(studies / f"{kind}.yaml") is not None


def test_the_paper_runners_write_only_into_their_own_output_directories(tmp_path, capsys):
    """The stencil and LogCA runners, like the FMM one, take a new path, an empty directory or a
    previous output (the committed results/logca passes both LogCA runners); a directory holding
    anything else is refused in one line before the study runs, and left as it was."""
    from simulator.studies.logca import gpu as logca_gpu_study
    from simulator.studies.logca import crypto as logca_study
    from simulator.studies.stencil import study as stencil_study
    from simulator.config.outputs import check_owned_output
    from simulator.studies.logca import OUTPUT_PATTERNS as LOGCA_OUTPUT_PATTERNS

    logca = ROOT / "results" / "logca"
    assert check_owned_output(logca, LOGCA_OUTPUT_PATTERNS, "the LogCA studies") == logca
    previous = tmp_path / "previous"
    previous.mkdir()
    for name in ("roofline_sweep.png", "stencil_tiling.png", "roofline_summary.json"):
        (previous / name).write_bytes(b"")
    assert check_owned_output(previous, stencil_study.OUTPUT_PATTERNS, "the stencil studies") == previous
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    (foreign / "gpu_figures.csv").write_text("")
    studies = ROOT / "configs" / "studies"
    runs = [("stencil_study", lambda: stencil_study.main([str(studies / "roofline.yaml"), "--out", str(foreign)]),
             "the energy roofline study", "gpu_figures.csv, notes.txt"),
            ("logca_study", lambda: logca_study.main(["--out", str(foreign)]), "the LogCA studies", "notes.txt"),
            ("logca_gpu_study", lambda: logca_gpu_study.main(["--out", str(foreign)]), "the LogCA studies",
             "notes.txt")]
    for program, run_main, command, holds in runs:
        assert run_main() == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(
            f"{program}: error: --out {foreign}: holds {holds}, which is not {command}'s; expected a new path, "
            f"an empty directory or a previous output of {command} (files named "), err
        assert sorted(p.name for p in foreign.iterdir()) == ["gpu_figures.csv", "notes.txt"]
    with pytest.raises(InputError, match="holds sub, which is not"):
        (previous / "sub").mkdir()  # a directory is not an output, whatever its name
        check_owned_output(previous, ("*",), "x")


LOGCA_BAD = {
    "crypto buffers beyond the DRAM": ("logca_crypto", {"max_granularity_bytes": "1000 TB"},
                                       "max_granularity_bytes: 1000 TB: the sweep's largest buffer, 512 TiB, "
                                       "and its output do not fit (hifn_7955: 1024 TiB in 4 GiB (dram.geometry of "
                                       "configs/systems/logca_hifn_7955.yaml);"),
    "multi-unit buffers beyond the DRAM": ("logca_crypto", {"multi_unit_max_bytes": "4 GiB"},
                                           "multi_unit_max_bytes: 4 GiB: the sweep's largest buffer, 4 GiB"),
    "multi-unit range upside down": ("logca_crypto", {"multi_unit_max_bytes": "8 B"},
                                     "multi_unit_max_bytes: expected >= min_granularity_bytes"),
    "SHA split over engines": ("logca_crypto", {"kernel": "sha", "platforms": ["ultrasparc_t2"]},
                               "multi_unit_engines: [2, 4, 8]: kernel 'sha' cannot use more than one engine per "
                               "request"),
    "a crypto platform twice": ("logca_crypto", {"platforms": ["ultrasparc_t2", "sparc_t3", "ultrasparc_t2"]},
                                "platforms[2]: 'ultrasparc_t2' repeats platforms[0]; expected each value once"),
    "a unit count twice": ("logca_crypto", {"multi_unit_engines": [2, 4, 2]},
                           "multi_unit_engines[2]: 2 repeats multi_unit_engines[0]; expected each value once"),
    "a platform without the kernel": ("logca_crypto", {"kernel": "sha", "platforms": ["hifn_7955", "ultrasparc_t2"],
                                                       "multi_unit_engines": []},
                                      "platforms[0]: platform 'hifn_7955' runs kernel 'aes' only"),
    "too few buffers to fit": ("logca_crypto", {"calibration_min_bytes": "64 MiB"},
                               "calibration_min_bytes: 67108864 B leaves 1 of the sweep's buffers (16 .. 67108864 B) "
                               "to the LogCA fit; expected at least 2"),
    "no stage count": ("logca_gpu", {"stages": []}, "stages: []; expected a non-empty list"),
    "a stage count twice": ("logca_gpu", {"stages": [1, 2, 2]},
                            "stages[2]: 2 repeats stages[1]; expected each value once"),
    "no GPU platform": ("logca_gpu", {"platforms": []}, "platforms: []; expected a non-empty list"),
    "a pipelined range upside down": ("logca_gpu", {"pipelined_min_bytes": "128 MiB"},
                                      "pipelined_min_bytes: 134217728 B; expected <= pipelined_max_bytes (67108864 B)"),
    "GPU buffers beyond the DRAM": ("logca_gpu", {"max_granularity_bytes": "1 TiB"},
                                    "max_granularity_bytes: the largest buffer and its output do not fit (discrete: "
                                    "1536 GiB in 4 GiB (dram.geometry of configs/systems/logca_gpu_discrete.yaml); "
                                    "apu: 1536 GiB in 4 GiB (dram.geometry of configs/systems/logca_gpu_apu.yaml); "
                                    "hsa: 1536 GiB in 4 GiB (dram.geometry of configs/systems/logca_gpu_hsa.yaml))"),
    "pipelined GPU buffers beyond the DRAM": ("logca_gpu", {"pipelined_max_bytes": "4 GiB"},
                                              "pipelined_max_bytes: the largest buffer and its output do not fit "
                                              "(discrete: "),
}


@pytest.mark.parametrize("case", sorted(LOGCA_BAD))
def test_a_logca_study_file_the_runner_cannot_run_is_refused_at_load(tmp_path, capsys, case):
    """Empty or repeated lists, platforms that cannot run the kernel and buffers the platforms' DRAM cannot
    hold are refused by offsim validate and by the runner, before it writes anything."""
    from simulator.studies.logca import gpu as logca_gpu_study
    from simulator.studies.logca import crypto as logca_study

    kind, changes, message = LOGCA_BAD[case]
    raw = yaml.safe_load((ROOT / "configs" / "studies" / f"{kind}.yaml").read_text())
    path = tmp_path / f"{kind}.yaml"
    path.write_text(yaml.safe_dump({**raw, **changes}, sort_keys=False))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {path}: {message}"), err
    out = tmp_path / "out"
    runner = logca_study if kind == "logca_crypto" else logca_gpu_study
    assert runner.main(["--study", str(path), "--out", str(out)]) == 2
    assert f"error: {path}: {message}" in capsys.readouterr().err
    assert not out.exists()


def test_a_bad_system_file_is_named_not_blamed_on_the_axis_values(tmp_path, capsys):
    """The study's system file is wrong where no axis sets it: one message per problem, naming the study's
    system key and the file, none per value of the axes; a key that a set. axis overrides is the axis's."""
    system = tmp_path / "sys.yaml"
    system.write_text(DEFAULT_SYSTEM.read_text() + "bogus_key: 3\n")
    workload = tmp_path / "w.yaml"
    workload.write_text("name: w\ngenerator: stream\nparams: {kind: read, array_bytes: 1 MiB}\n")
    study = tmp_path / "s.yaml"
    study.write_text(f"name: s\nsystem: {system}\nworkload: {workload}\nsweep:\n  product:\n"
                     "    set.host.max_outstanding_misses: [2, 4]\n")
    assert main(["study", str(study), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {study}: system: {system}: bogus_key: unknown key; expected one of: "
                   "accelerators, caches, dram, energy, host, name, near_memories"]
    assert not (tmp_path / "out").exists()
    system.write_text(DEFAULT_SYSTEM.read_text().replace("{preset: cpu/i7_920}",
                                                         "{preset: cpu/i7_920, frequency_hz: -3 GHz}"))
    assert main(["study", str(study), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[0].startswith(f"offsim: error: {study}: system: {system}: "
                                                                      "host.frequency_hz: expected a positive value")
    study.write_text(study.read_text().replace("max_outstanding_misses: [2, 4]", "frequency_hz: [1 GHz, 2 GHz]"))
    assert len(prepare_points(load_study(study))) == 2  # the axis sets what the file gets wrong


def test_a_rule_across_keys_of_the_system_file_is_the_axiss_only_where_the_axis_sets_a_key_it_reads(tmp_path, capsys):
    """The file's tRAS (5 tCK) is below its tRCD (11): an axis over t_ras or t_rcd may set that right, so the problem
    is left to the axis values; an axis over another key of the same section leaves it the file's."""
    system = tmp_path / "sys.yaml"
    system.write_text(DEFAULT_SYSTEM.read_text().replace("{preset: dram/ddr3_1600_mt41j256m4}",
                                                         "{preset: dram/ddr3_1600_mt41j256m4, timing: {t_ras: 5}}"))
    workload = tmp_path / "w.yaml"
    workload.write_text("name: w\ngenerator: stream\nparams: {kind: read, array_bytes: 1 MiB}\n")
    study = tmp_path / "s.yaml"
    for axis, values in (("t_ras", "[27, 28]"), ("t_rcd", "[4, 5]")):
        study.write_text(f"name: s\nsystem: {system}\nworkload: {workload}\nsweep:\n  product:\n"
                         f"    set.dram.timing.{axis}: {values}\n")
        assert len(prepare_points(load_study(study))) == 2
    study.write_text(f"name: s\nsystem: {system}\nworkload: {workload}\nsweep:\n  product:\n"
                     "    set.dram.timing.cwl: [7, 8]\n")
    assert main(["study", str(study), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"offsim: error: {study}: system: {system}: dram.timing.t_ras: 5 tCK; expected >= t_rcd (11 tCK)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_loopback_dask_cluster_shuts_down_without_warnings_or_tracebacks(tmp_path):
    """Dask's own close gives each worker process 4 s, then kills it with a warning (and a worker outliving the
    scheduler logs a failed heartbeat with a traceback); a worker that imported offsim takes longer on a busy
    machine. The study waits for its workers to close instead."""
    pytest.importorskip("dask.distributed")
    study = _study(tmp_path, SMALL)
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "study", str(study), "--out", str(tmp_path / "out"),
                           "--dask-local", "2"], env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    noise = [line for line in done.stderr.splitlines() if re.search(r"Traceback|WARNING|ERROR|Error", line)]
    assert noise == []


def test_the_report_names_the_system_as_its_file_does_and_the_keys_each_point_sets(tmp_path):
    """A sweep over the coupling runs points whose systems still carry the file's name ("... (DRAM coupling)");
    the report names the file's system once and says which of its keys each point sets."""
    (tmp_path / "w.yaml").write_text("name: w\ngenerator: stream\nparams: {kind: read, array_bytes: 64 KiB}\n")
    study = tmp_path / "study.yaml"
    study.write_text(f"name: s\nsystem: {ROOT / 'configs' / 'systems' / 'lap_dram.yaml'}\nworkload: w.yaml\n"
                     "sweep:\n  product:\n    set.accelerators.lap.interface.coupling: [dram, llc]\n")
    out = tmp_path / "out"
    run_study(study, out, workers=1, progress=False)
    line = next(x for x in (out / "report.md").read_text().splitlines() if x.startswith("- system: "))
    assert line == ("- system: i7-920 + DDR3-1600 + LAP (DRAM coupling) (`lap_dram.yaml`); "
                    "each point sets `accelerators.lap.interface.coupling` (see Sweep)")


def test_a_stored_trace_that_does_not_fit_a_points_system_is_named_by_its_file(tmp_path, capsys):
    """Thread 3 on a one-core point: refused before anything runs, naming the trace file as offsim run does."""
    from workloads.trace import TraceBuilder, write_trace

    tb = TraceBuilder()
    tb.compute("host", "a", 1, thread=0)
    tb.compute("host", "b", 1, thread=3)
    write_trace(tb.to_table(), tmp_path / "t.parquet")
    (tmp_path / "w.yaml").write_text("name: t\ntrace: t.parquet\n")
    study = tmp_path / "s.yaml"
    study.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n  product:\n"
                     "    set.host.cores: [1, 4]\n")
    assert main(["validate", str(study)]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert "sweep: point (set.host.cores=1): " in err and "t.parquet: row 1, column 'thread': thread 3" in err, err


def _write_stream_trace(path: Path, array_bytes: int) -> None:
    """A read-stream trace of ``array_bytes`` stored at ``path``."""
    from workloads.registry import GENERATORS
    from workloads.trace import write_trace

    write_trace(GENERATORS["stream"](kind="read", array_bytes=array_bytes), path)


def test_a_rerun_after_the_stored_trace_changed_simulates_its_points_again(tmp_path):
    """A trace workload's points are identified by the trace file's content: after the file changes (same path),
    a rerun into the same directory runs them again instead of reusing the old trace's results."""
    trace = tmp_path / "t.parquet"
    _write_stream_trace(trace, 64 * 1024)
    (tmp_path / "w.yaml").write_text("name: t\ntrace: t.parquet\n")
    study = tmp_path / "s.yaml"
    study.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n  product:\n"
                     "    set.host.max_outstanding_misses: [4, 10]\n")
    out = tmp_path / "out"
    first = run_study(study, out, workers=1, progress=False)
    _write_stream_trace(trace, 128 * 1024)
    second = run_study(study, out, workers=1, progress=False)
    assert (len(second.simulated), second.reused) == (2, ())
    assert not {p.run_hash for p in first.points} & {p.run_hash for p in second.points}
    reads = _table(out).query("component == 'dram' and quantity == 'bytes_read'")["value"]
    assert reads.min() >= 128 * 1024  # the table holds the new trace's runs, not the old one's


def test_how_the_study_file_is_named_changes_no_hash_and_no_table_byte(tmp_path, monkeypatch):
    """A trace workload's study named by a relative path, an absolute path, or from its own directory: the same
    points (run hashes) and a byte-identical study.parquet; the record names the trace by its absolute path."""
    (tmp_path / "t").mkdir()
    _write_stream_trace(tmp_path / "t" / "tr.parquet", 64 * 1024)
    (tmp_path / "t" / "w.yaml").write_text("name: t\ntrace: tr.parquet\n")
    (tmp_path / "t" / "s.yaml").write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n"
                                           "  product:\n    set.host.max_outstanding_misses: [4, 10]\n")
    monkeypatch.chdir(tmp_path)
    outcomes = [run_study(Path("t/s.yaml"), tmp_path / "rel", workers=1, progress=False),
                run_study(tmp_path / "t" / "s.yaml", tmp_path / "abs", workers=1, progress=False)]
    monkeypatch.chdir(tmp_path / "t")
    outcomes.append(run_study(Path("s.yaml"), tmp_path / "in", workers=1, progress=False))
    assert len({tuple(p.run_hash for p in o.points) for o in outcomes}) == 1
    assert len({o.table_path.read_bytes() for o in outcomes}) == 1
    record = yaml.safe_load((outcomes[0].out_dir / "points" / outcomes[0].points[0].run_hash
                             / "config.resolved.yaml").read_text())
    assert record["workload"]["trace_path"] == str(tmp_path.resolve() / "t" / "tr.parquet")


WORKLOAD_FILE_PROBLEMS = {
    "unknown parameter, set. axis": ("params: {kind: read, array_bytes: 64 KiB, bogus: 1}\n",
                                     "    set.host.max_outstanding_misses: [2, 4, 6, 8, 10, 12]\n",
                                     "params.bogus: unknown parameter of stream"),
    "unknown parameter, param. axis": ("params: {kind: read, array_bytes: 64 KiB, bogus: 1}\n",
                                       "    param.array_bytes: [64 KiB, 128 KiB]\n"
                                       "    set.host.max_outstanding_misses: [4, 8]\n",
                                       "params.bogus: unknown parameter of stream"),
    "unknown top-level key, param. axis": ("params: {kind: read, array_bytes: 64 KiB}\nfoo: 1\n",
                                           "    param.array_bytes: [64 KiB, 128 KiB]\n",
                                           "foo: unknown key; expected one of: name, generator, params"),
    "params not a mapping, param. axis": ("params: 5\n", "    param.array_bytes: [64 KiB, 128 KiB]\n",
                                          "params: expected a mapping"),
}


@pytest.mark.parametrize("case", sorted(WORKLOAD_FILE_PROBLEMS))
def test_a_problem_of_the_workload_file_is_said_once_naming_the_file_and_its_key(tmp_path, capsys, case):
    """A problem every point shares because the workload file has it: one message naming the study's workload key,
    the workload file and its key, not one per point nor one blamed on an axis value."""
    params, sweep, says = WORKLOAD_FILE_PROBLEMS[case]
    workload = tmp_path / "w.yaml"
    workload.write_text(f"name: w\ngenerator: stream\n{params}")
    study = tmp_path / "s.yaml"
    study.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n  product:\n{sweep}")
    for argv in (["validate", str(study)], ["study", str(study), "--out", str(tmp_path / "out")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"offsim: error: {study}: workload: {workload}: {says}"), err
    assert not (tmp_path / "out").exists()


def test_a_point_whose_dram_is_too_small_is_labelled_by_every_axis_value(tmp_path, capsys):
    """A trace beyond a point's DRAM is the point's set. values as much as its param. values: the message names both
    (here 2 rows per bank hold 512 KiB: the 1 MiB stream does not fit, the 256 KiB one does)."""
    study = _study(tmp_path, "  product:\n    set.dram.geometry.rows: [2, 65536]\n"
                             "    param.array_bytes: [\"256 KiB\", \"1 MiB\"]\n")
    assert main(["validate", str(study)]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert f"{study}: sweep: point (set.dram.geometry.rows=2, param.array_bytes=1 MiB): " in err, err
    assert "expected at most the 512 KiB of the system's DRAM" in err, err


def test_a_failed_point_is_printed_with_its_label_its_error_and_its_record(tmp_path, capsys, monkeypatch):
    """The summary of a study with a failed point names the point, its error (one line) and the file of its record."""
    _fail_at(monkeypatch, 96 * 1024)
    study = _study(tmp_path, "  product:\n    param.array_bytes: [\"64 KiB\", \"96 KiB\"]\n")
    out = tmp_path / "out"
    assert main(["study", str(study), "--out", str(out), "--workers", "1"]) == 1
    (record,) = (out / "failed").iterdir()
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("failed ")]
    assert lines == [f"failed    param.array_bytes=96 KiB: RuntimeError: injected failure at array_bytes=98304 "
                     f"(details: {record})"]


def test_a_rerun_removes_the_previous_runs_table_report_and_figures_before_it_runs(tmp_path, monkeypatch):
    """A study changed and run again into its directory, stopped before its end: none of the earlier study's table,
    report or figures is left to pass for its own; the stored points stay, to be reused."""
    import simulator.studies.sweep as sweep

    run_study(_study(tmp_path, SMALL), tmp_path / "out", workers=1, progress=False)
    points = _stored(tmp_path / "out")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep, "_execute", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_study(_study(tmp_path, SMALL.replace("[10, 4]", "[10, 4, 6]")), tmp_path / "out", workers=1,
                  progress=False)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [LOCK_NAME, "points"]
    assert _stored(tmp_path / "out") == points


def test_figures_the_study_no_longer_draws_are_not_left_in_figures(tmp_path):
    figures = ("figures:\n  - {x: param.array_bytes, y: cache/L1D/misses}\n"
               "  - {x: set.host.max_outstanding_misses, y: energy/total}\n")
    out = tmp_path / "out"
    run_study(_study(tmp_path, SMALL, extra=figures), out, workers=1, progress=False)
    assert len(list((out / "figures").iterdir())) == 2
    run_study(_study(tmp_path, SMALL, extra=figures.rsplit("  - ", 1)[0]), out, workers=1, progress=False)
    assert [p.name for p in (out / "figures").iterdir()] == ["cache_l1d_misses_vs_array_bytes.png"]


def test_a_parameter_the_workload_lacks_may_come_from_another_axis(tmp_path, capsys):
    """Each value of a ``param.`` axis is checked with the first value of the other ``param.`` axes, as every point
    has one of each: a workload without ``array_bytes`` under an ``array_bytes`` and an ``elem_bytes`` axis is
    valid (it was refused once per elem_bytes value as missing array_bytes); a bad value is still its axis's."""
    (tmp_path / "w.yaml").write_text("name: w\ngenerator: stream\nparams: {kind: read}\n")
    study = tmp_path / "study.yaml"
    axes = "  product:\n    param.array_bytes: [\"1 MiB\", \"2 MiB\"]\n    param.elem_bytes: [\"8 B\", {}]\n"
    study.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n" + axes.format('"16 B"'))
    assert main(["validate", str(study)]) == 0
    assert "4 points" in capsys.readouterr().out
    study.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n" + axes.format('"8 GHz"'))
    assert main(["validate", str(study)]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert "sweep.product.param.elem_bytes: value '8 GHz': " in err and "array_bytes" not in err, err


@pytest.mark.parametrize("params, axes, says", [
    # an unknown parameter of another axis does not cut this axis's values short
    ("{kind: read}", "    param.array_bytes: [\"1 MHz\", \"2 GHz\", \"1 MiB\"]\n    param.repeatz: [1, 2]\n",
     ["param.array_bytes: value '1 MHz': ", "param.array_bytes: value '2 GHz': ", "param.repeatz: value 1: "]),
    # a value the generator refuses is its axis's, once, though the file leaves kind to the other axis
    ("{}", "    param.kind: [read, write]\n    param.array_bytes: [\"1 MiB\", \"12 B\"]\n",
     ["param.array_bytes: value '12 B': the stream generator refuses it: "]),
])
def test_each_bad_axis_value_is_named_once_whatever_the_other_axes_give(tmp_path, capsys, params, axes, says):
    (tmp_path / "w.yaml").write_text(f"name: w\ngenerator: stream\nparams: {params}\n")
    study = tmp_path / "study.yaml"
    study.write_text(f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: w.yaml\nsweep:\n  product:\n{axes}")
    assert main(["validate", str(study)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == len(says) and all(f"{study}: sweep.product.{s}" in line for s, line in zip(says, err)), err


def test_axis_values_carry_the_units_of_their_keys(tmp_path):
    # from the schema and the generator, not guessed from a key's name: t_rrd counts tCK, and an
    # energy per flop is in J/flop
    study = _study(tmp_path, "  product:\n    set.dram.timing.t_rrd: [6]\n"
                             "    set.host.energy_per_flop_j: [\"100 pJ/flop\"]\n"
                             "    param.array_bytes: [\"256 KiB\"]\n")
    outcome = run_study(study, tmp_path / "out", workers=1, progress=False)
    points = [line for line in outcome.report_path.read_text().splitlines() if "](points/" in line]
    assert len(points) == 1 and points[0].startswith("| 6 tCK | 100 pJ/flop | 256 KiB | "), points


def test_a_default_study_directory_below_a_file_is_refused_in_its_own_words(tmp_path, capsys, monkeypatch):
    study = _study(tmp_path, SMALL)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").write_text("keep me\n")
    assert main(["study", str(study)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("offsim: error: the default output directory (no --out) results/studies/s: "), err
    assert (tmp_path / "results").read_text() == "keep me\n"
