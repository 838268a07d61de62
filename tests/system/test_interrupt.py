"""Ctrl-C and kills of offsim commands, and where they may write.

Ctrl-C (SIGINT) during run, study and reproduce ends the command with exit code 130 within a
second and one line saying what was kept, never a traceback; a run killed outright leaves a hidden
temporary folder that the next run on the same --out removes; every command refuses an --out that is
a symbolic link, and writes nowhere but inside the directory its --out names.

The signal tests start offsim in a process of its own (a session, as a terminal's job) and send the
signal once the command is at work, shown by a file it writes (a marker the child touches, the
study's first stored point, the reproduce target's marker).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.runner import new_held_temp, remove_stale_temps
from tests.conftest import CONFIGS, DEFAULT_SYSTEM, ROOT

REACTION_S = 1.0  # the bound: Ctrl-C to the process's exit
START_TIMEOUT_S = 120.0  # for the command to reach the work the signal interrupts (imports on a loaded machine)

# A child that runs ``offsim ARGS`` as the console script does (main() without argv), after touching MARKER
# on entering the function named by PATCH (module:attribute), which it then calls as it was.
CHILD = textwrap.dedent("""
    import importlib, pathlib, sys
    marker, patch, *args = sys.argv[1:]
    module_name, attribute = patch.split(":")
    owner = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    def entered(*a, **k):
        pathlib.Path(marker).touch()
        return original(*a, **k)
    setattr(owner, name, entered)
    from simulator.cli import main
    sys.argv = ["offsim", *args]
    sys.exit(main())
""")


def _start(args: list[str], marker: Path, patch: str = "simulator.runner:replay") -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(marker), patch, *args], cwd=marker.parent, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _interrupt_when(proc: subprocess.Popen, ready: Callable[[], bool], settle_s: float = 0.3) -> tuple[int, str, float]:
    """Wait until ``ready()``, then send SIGINT to the process group as a terminal's Ctrl-C does; return
    (exit code, stderr, seconds from the signal to the exit)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        assert proc.poll() is None, f"ended before the signal: {proc.communicate()}"
        assert time.monotonic() < deadline, "the command never reached its work"
        time.sleep(0.02)
    time.sleep(settle_s)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=30)  # until every holder of its pipes (workers too) is gone
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        pytest.fail(f"still running 30 s after Ctrl-C; stderr: {err[-2000:]}")
    return proc.returncode, err, time.monotonic() - sent


def _interrupted_line(err: str) -> str:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1 and lines[0].startswith("offsim: interrupted; "), err
    return lines[0]


def test_ctrl_c_during_a_run_exits_130_within_a_second_and_writes_nothing(tmp_path):
    out = tmp_path / "run"
    proc = _start(["run", str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "stream_triad.yaml"),
                   "--param", "array_bytes=64 MiB", "--out", str(out)], tmp_path / "replaying")
    code, err, reaction_s = _interrupt_when(proc, (tmp_path / "replaying").exists)
    assert code == 130, err
    assert _interrupted_line(err) == "offsim: interrupted; nothing written"
    assert reaction_s < REACTION_S
    assert sorted(p.name for p in tmp_path.iterdir()) == ["replaying"]  # no run directory, no hidden folder


def test_ctrl_c_during_a_long_compiled_call_is_answered_by_the_watchdog(tmp_path):
    """The main thread stuck in compiled code that releases the GIL (as an LLVM pass does while numba compiles):
    Python cannot run its handler until the call returns, minutes here; the watchdog ends the process."""
    slow = tmp_path / "slow.py"
    slow.write_text("import hashlib\n\ndef simulate(*args, **kwargs):\n"
                    "    hashlib.pbkdf2_hmac('sha256', b'offsim', b'salt', 2**31 - 1)\n")
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}")
    marker = tmp_path / "compiling"
    child = CHILD.replace("setattr(owner, name, entered)",
                          "import slow; original = slow.simulate; setattr(owner, name, entered)")
    proc = subprocess.Popen([sys.executable, "-c", child, str(marker), "simulator.runner:simulate", "run",
                             str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "compute_only.yaml"), "--out",
                             str(tmp_path / "run")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    code, err, reaction_s = _interrupt_when(proc, marker.exists)
    assert code == 130, err
    assert _interrupted_line(err) == "offsim: interrupted; nothing written"
    assert reaction_s < REACTION_S
    assert not (tmp_path / "run").exists()


def _study_file(tmp_path: Path, sizes: list[str]) -> Path:
    study = tmp_path / "study.yaml"
    study.write_text(f"name: ctrl-c\nsystem: {DEFAULT_SYSTEM}\nworkload: {CONFIGS / 'workloads' / 'stream_read.yaml'}\n"
                     f"sweep:\n  product:\n    param.array_bytes: [{', '.join(repr(s) for s in sizes)}]\n")
    return study


def test_ctrl_c_during_a_study_ends_its_workers_and_keeps_the_stored_points(tmp_path):
    out = tmp_path / "out"
    study = _study_file(tmp_path, ["1 MiB", "32 MiB", "48 MiB", "64 MiB"])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "simulator.cli", "study", str(study), "--out", str(out),
                             "--workers", "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    points = out / "points"

    def a_point_stored() -> bool:
        return points.is_dir() and any(not p.name.startswith(".") for p in points.iterdir())

    code, err, reaction_s = _interrupt_when(proc, a_point_stored, settle_s=0.0)
    assert code == 130, err
    stored = [p for p in points.iterdir() if not p.name.startswith(".")]
    assert _interrupted_line(err) == (f"offsim: interrupted; kept {len(stored)} of 4 points in {points}; the same "
                                      "command resumes from them")
    assert 1 <= len(stored) < 4
    assert reaction_s < REACTION_S  # the workers were ended, not waited for: their points take seconds
    assert _left_in_group(proc.pid) == []  # its workers were ended with it (a killed one takes a moment to go)


def _left_in_group(pgid: int, within_s: float = 5.0) -> list[int]:
    """The processes of group ``pgid`` still running ``within_s`` after the command exited (a killed
    worker takes a moment to go); [] as soon as none is."""
    deadline = time.monotonic() + within_s
    while (live := _live_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return live


def _live_in_group(pgid: int) -> list[int]:
    """The processes of group ``pgid`` still running (not zombies waiting to be reaped), from /proc."""
    live = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            live.append(int(stat.parent.name))
    return live


def test_ctrl_c_during_reproduce_says_what_it_kept(tmp_path):
    out = tmp_path / "out"
    proc = _start(["reproduce", "choi-roofline", "--quick", "--out", str(out)], tmp_path / "measuring")
    code, err, reaction_s = _interrupt_when(proc, (tmp_path / "measuring").exists)
    assert code == 130, err
    files = sum(len(f) for _, _, f in os.walk(out))
    assert _interrupted_line(err) == (f"offsim: interrupted; kept {out} as it is now ({files} file"
                                      f"{'' if files == 1 else 's'}); the same command writes it again")
    assert reaction_s < REACTION_S
    assert not (out / "report.md").exists()


def test_the_next_run_removes_the_temporary_folder_of_a_run_killed_while_writing(tmp_path, capsys):
    """SIGKILL while the run directory is being written (held there by the child) leaves the hidden folder;
    the next run on the same --out removes it."""
    out = tmp_path / "run"
    workload = CONFIGS / "workloads" / "compute_only.yaml"
    marker = tmp_path / "writing"
    child = CHILD.replace("return original(*a, **k)", "import time; time.sleep(600)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", child, str(marker), "simulator.results:Results.summary_json",
                             "run", str(DEFAULT_SYSTEM), str(workload), "--out", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".run.tmp-")]
    assert len(left) == 1 and not out.exists()  # what the kill leaves
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "writing"]


def test_a_temporary_folder_a_live_run_holds_is_not_removed(tmp_path):
    out = tmp_path / "run"
    folder, held = new_held_temp(out, "tmp")
    try:
        remove_stale_temps(out)
        assert folder.is_dir()
    finally:
        os.close(held)
    remove_stale_temps(out)
    assert not folder.exists()


@pytest.mark.parametrize("command", ["run", "study"])
def test_run_and_study_refuse_a_symbolic_link_as_out_alike(tmp_path, capsys, command):
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    args = ([str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "compute_only.yaml")] if command == "run"
            else [str(_study_file(tmp_path, ["1 MiB"]))])
    assert main([command, *args, "--out", str(link)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: --out {link}: is a symbolic link (to {target}); expected a new path or a "
                   "directory, not a link to one: give the directory it points to"]
    assert list(target.iterdir()) == [] and link.is_symlink()


def _results_with_a_file(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    results.mkdir()
    (results / "precious.txt").write_text("keep me\n")
    return results


def test_a_paper_study_file_named_dots_does_not_write_into_results(tmp_path, capsys, monkeypatch):
    """``...yaml``'s stem is ``..``: its default --out results/studies/.. is results/ itself."""
    results = _results_with_a_file(tmp_path)
    study = tmp_path / "...yaml"
    study.write_text((CONFIGS / "studies" / "roofline.yaml").read_text().replace(
        "configs/systems/", f"{CONFIGS}/systems/"))
    monkeypatch.chdir(tmp_path)
    assert main(["study", str(study)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "...yaml: the file's name gives no study directory" in err[0] and "--out" in err[0]
    assert sorted(p.name for p in results.iterdir()) == ["precious.txt"]


def test_an_out_through_a_missing_directory_and_back_is_checked_where_it_leads(tmp_path, capsys, monkeypatch):
    """``results/new/..`` is ``results``: checked as such (it holds another file), not created and written into."""
    results = _results_with_a_file(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["study", str(_study_file(tmp_path, ["1 MiB"])), "--out", "results/new/.."]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out results/new/..: holds precious.txt, which is not a study's" in err[0], err
    assert sorted(p.name for p in results.iterdir()) == ["precious.txt"]


@pytest.mark.slow
def test_ctrl_c_during_a_dask_local_study_ends_its_workers_quietly(tmp_path):
    """The loopback cluster's workers ignore Ctrl-C (the driver kills them): no worker warnings about cancelled
    tasks, no traceback. Python's resource tracker may still say it cleaned up the cluster's semaphores."""
    pytest.importorskip("dask.distributed")
    out = tmp_path / "out"
    study = _study_file(tmp_path, ["1 MiB", "32 MiB", "48 MiB", "64 MiB"])
    proc = subprocess.Popen([sys.executable, "-m", "simulator.cli", "study", str(study), "--out", str(out),
                             "--dask-local", "2"], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    points = out / "points"
    code, err, reaction_s = _interrupt_when(
        proc, lambda: points.is_dir() and any(not p.name.startswith(".") for p in points.iterdir()), settle_s=0.0)
    assert code == 130, err
    assert _interrupted_line(err).startswith("offsim: interrupted; kept ")
    assert [line for line in err.splitlines() if "distributed." in line] == []
    assert reaction_s < REACTION_S
    assert _left_in_group(proc.pid) == []


def test_a_ctrl_c_that_compiled_code_wrapped_in_a_system_error_still_exits_130(monkeypatch, capsys):
    """numba's dispatcher turns a KeyboardInterrupt raised while it runs into a SystemError caused by it."""
    def wrapped(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("returned a result with an exception set") from exc

    def unrelated(args):
        raise SystemError("a genuine interpreter error")

    import simulator.cli as cli
    from simulator.studies import interruption
    monkeypatch.setattr(interruption, "_reported", __import__("threading").Lock())  # this process may report again
    for func, expected in ((wrapped, 130), (unrelated, None)):
        parser = cli.build_parser()
        monkeypatch.setattr(cli, "build_parser", lambda p=parser: p)
        args = parser.parse_args(["keys"])
        monkeypatch.setattr(parser, "parse_args", lambda argv, a=args: a)
        args.func = func
        if expected is None:
            with pytest.raises(SystemError):
                main(["keys"])
        else:
            assert main(["keys"]) == expected
            assert "interrupted" in capsys.readouterr().err
