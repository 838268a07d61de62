"""``offsim bench``: the benchmark scripts listed, and run in fresh processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.studies import benchmarks
from simulator.cli import main
from simulator.errors import InputError


def test_offsim_bench_lists_every_script_with_what_it_measures(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench"]) == 0
    lines = capsys.readouterr().out.splitlines()
    scripts = sorted(benchmarks.BENCH_DIR.glob("bench_*.py"))
    assert [line.split()[0] for line in lines] == [p.stem.removeprefix("bench_") for p in scripts]
    assert all(len(line.split()) > 1 for line in lines)  # each with its docstring's first line


@pytest.fixture
def bench_dir(tmp_path: Path) -> Path:
    d = tmp_path / "tests" / "bench"
    d.mkdir(parents=True)
    (d / "bench_ok.py").write_text('"""Prints where it runs."""\nimport os\nprint("cwd", os.getcwd())\n')
    (d / "bench_fails.py").write_text('"""Exits 3."""\nraise SystemExit(3)\n')
    return d


def test_run_streams_each_script_from_the_project_root_and_reports_failures(
        bench_dir: Path, capfd: pytest.CaptureFixture) -> None:
    assert benchmarks.run(["ok"], bench_dir) == 0
    out = capfd.readouterr().out
    assert "=== ok: Prints where it runs." in out and f"cwd {bench_dir.parents[1]}" in out
    assert benchmarks.run(["fails", "ok"], bench_dir) == 3  # the rest still run
    out = capfd.readouterr().out
    assert "=== fails: exit code 3" in out and "=== ok:" in out


def test_unknown_names_and_a_missing_directory_are_refused(bench_dir: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(InputError, match="'nope': no such benchmark; expected one of: fails, ok"):
        benchmarks.run(["ok", "nope"], bench_dir)
    with pytest.raises(InputError, match="expected offsim installed from a source checkout"):
        benchmarks.available(tmp_path / "none" / "tests" / "bench")
    assert main(["bench", "nope"]) == 2
    assert "no such benchmark" in capsys.readouterr().err
