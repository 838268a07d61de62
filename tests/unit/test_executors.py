"""Where a study's points run: the local pool and a loopback Dask cluster give the same answers."""

from __future__ import annotations

import math

import pytest

from simulator.config.errors import InputError
from simulator.executors import check_parallel_options, point_executor


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
    (0, None, None, "--workers: 0; expected a positive number"),
    (None, None, 0, "--dask-local: 0; expected a positive number"),
])
def test_bad_parallel_options_are_one_clear_message(workers, scheduler, dask_local, expected):
    with pytest.raises(InputError, match=expected):
        check_parallel_options(workers, scheduler, dask_local)
    with pytest.raises(InputError, match=expected):  # before any pool or cluster starts
        with point_executor(workers, scheduler, dask_local):
            pass


def test_a_missing_dask_is_refused_before_the_fmm_study_writes_anything(tmp_path, monkeypatch, capsys):
    import sys

    from simulator.fmm_study import main

    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(InputError, match="dask.distributed is not installed"):
        check_parallel_options(None, None, 2)
    assert main(["--out", str(tmp_path / "out"), "--dask-local", "2"]) == 2
    assert "dask.distributed is not installed" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
