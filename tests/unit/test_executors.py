"""Where a study's points run: the local pool and a loopback Dask cluster give the same answers; bad
parallel options, an unreachable scheduler and a foreign output directory are refused before the FMM
study writes anything."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest

import simulator.studies.executors
from simulator.errors import InputError
from simulator.studies.executors import LOCAL_WORKERS_PER_CPU, check_parallel_options, point_executor
from simulator.studies.fmm.placement import OUTPUT_FILES, check_out_dir, main as fmm_main
from tests.conftest import ROOT


def _factorials(pool) -> list[int]:
    futures = [pool.submit(math.factorial, n) for n in range(12)]
    return [f.result() for f in futures]


def test_local_pool_and_dask_cluster_run_the_same_tasks():
    pytest.importorskip("dask.distributed")
    with point_executor(workers=2) as pool:
        local = _factorials(pool)
    with point_executor(dask_local=2) as pool:
        remote = _factorials(pool)
    assert local == remote == [math.factorial(n) for n in range(12)]


@pytest.mark.parametrize("workers, scheduler, dask_local, expected", [
    (None, "tcp://127.0.0.1:8786", 2, "both given"),
    (0, None, None, "--workers: 0; expected a number of processes from 1 to "),
    (None, None, 0, "--dask-local: 0; expected a number of processes from 1 to "),
    (100_000, None, None, rf"--workers: 100000; expected a number of processes from 1 to \d+ \("
                          rf"{LOCAL_WORKERS_PER_CPU} per CPU"),
    (None, None, 100_000, "--dask-local: 100000; expected a number of processes from 1 to "),
    (2, None, 2, "--workers: cannot be combined with --dask-local"),
    (4, "tcp://127.0.0.1:8786", None, "--workers: cannot be combined with --scheduler"),
])
def test_bad_parallel_options_are_one_clear_message(workers, scheduler, dask_local, expected):
    with pytest.raises(InputError, match=expected):
        check_parallel_options(workers, scheduler, dask_local)
    with pytest.raises(InputError, match=expected):  # before any pool or cluster starts
        with point_executor(workers, scheduler, dask_local):
            pass


def test_a_missing_dask_is_refused_before_the_fmm_study_writes_anything(tmp_path, monkeypatch, capsys):
    main = fmm_main
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(InputError, match="dask.distributed is not installed"):
        check_parallel_options(None, None, 2)
    assert main(["--out", str(tmp_path / "out"), "--dask-local", "2"]) == 2
    assert "dask.distributed is not installed" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("address", ["notanaddress", "tcp://127.0.0.1:1"])
def test_an_unreachable_scheduler_is_one_clear_message(address, monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(simulator.studies.executors, "SCHEDULER_CONNECT_TIMEOUT_S", 1.0)
    start = time.monotonic()
    with pytest.raises(InputError) as exc:
        with point_executor(scheduler=address):
            pass
    assert time.monotonic() - start < 10  # our timeout, not dask's 30 s
    (message,) = exc.value.messages
    assert message.startswith(f"--scheduler {address}: cannot connect (")
    assert message.endswith("); expected the address of a running dask.distributed scheduler, e.g. tcp://host:8786")


def test_the_fmm_study_refuses_bad_parallel_options_and_scheduler_before_writing(tmp_path, monkeypatch, capsys):
    pytest.importorskip("dask.distributed")
    monkeypatch.setattr(simulator.studies.executors, "SCHEDULER_CONNECT_TIMEOUT_S", 1.0)
    out = tmp_path / "out"
    for options, expected in ((["--workers", "2", "--dask-local", "2"], "--workers: cannot be combined with"),
                              (["--scheduler", "notanaddress"], "--scheduler notanaddress: cannot connect"),
                              (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler tcp://127.0.0.1:1: cannot connect")):
        assert fmm_main(["--quick", "--out", str(out), *options]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"fmm_study: error: {expected}"), err
        assert not out.exists()


def test_the_fmm_study_writes_only_into_its_own_output_directory(tmp_path, capsys):
    """A new path, an empty directory or a previous output (like the committed results/fmm) is
    taken; a directory holding anything else is refused before any point runs."""
    for committed in ("fmm", "fmm_marssx86"):
        d = ROOT / "results" / committed
        # OUTPUT_FILES names all it writes; a guide beside them is the folder's, not the study's
        assert sorted(p.name for p in d.iterdir() if p.name != "README.md") == sorted(OUTPUT_FILES)
        assert check_out_dir(d) == d
    assert check_out_dir(tmp_path) == tmp_path and check_out_dir(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "notes.txt").write_text("mine\n")
    assert fmm_main(["--quick", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fmm_study: error: --out {tmp_path}: holds notes.txt, which is not the FMM study's; expected a "
                   "new path, an empty directory or a previous output of the FMM study (files named table*.csv, "
                   "findings.csv, crosscheck*.csv, machine.json, fig*.png, README.md, and points, failed, .study.lock)"]
    assert [p.name for p in Path(tmp_path).iterdir()] == ["notes.txt"]
