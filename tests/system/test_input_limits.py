"""Inputs that crashed, hung or filled the memory are refused from the command line at once.

Each case as a new user meets it (``offsim validate``, ``run`` or ``study``): exit code 2, one
message naming the file (or option), the key and what was expected, no traceback, and nothing
left behind in the output's folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from simulator.engine import limits as run_limits
from simulator.cli import main
from tests.conftest import CONFIGS, DEFAULT_SYSTEM
from workloads.trace import TRACE_SCHEMA, TraceBuilder

LAP_SYSTEM = CONFIGS / "systems" / "lap_dram.yaml"
SYSTOLIC_SYSTEM = CONFIGS / "systems" / "systolic_dram.yaml"
PCIE_SYSTEM = CONFIGS / "systems" / "lap_pcie.yaml"
STREAM = CONFIGS / "workloads" / "stream_read.yaml"
#: 9 anchors each naming a list of 9 aliases of the one before: some 30 nodes written, 9^9 expanded.
ALIAS_BOMB = "".join(f"{name}: &{name} [{', '.join([f'*{prev}' if prev else '1'] * 9)}]\n"
                     for prev, name in zip([""] + list("abcdefgh"), "abcdefghi"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _refused(argv: list[str], capsys, tmp_path: Path, *says: str, expected: str = "expected") -> str:
    """Run ``offsim argv`` (``run`` and ``study`` with ``--out`` in ``tmp_path``): exit 2, one message holding each of ``says`` and
    ``expected`` (trace errors state the expectation after the row and column, without the word), no
    traceback, no output and no hidden leftovers. Returns the message."""
    out = tmp_path / "out"
    entries = sorted(p.name for p in tmp_path.iterdir())
    assert main(argv + (["--out", str(out)] if argv[0] in ("run", "study") else [])) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in err
    for word in (*says, expected):
        assert word in lines[0], lines[0]
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == entries  # nothing left behind, hidden or not
    return lines[0]


def _study(tmp_path: Path, sweep: str, name: str = "s.yaml") -> Path:
    return _write(tmp_path / name, f"name: s\nsystem: {DEFAULT_SYSTEM}\nworkload: {STREAM}\nsweep:\n{sweep}")


# ------------------------------------------------------------------------------------ YAML files


def test_alias_bomb_is_refused_by_validate_run_and_study(tmp_path, capsys):
    assert len(ALIAS_BOMB) < 700
    system = _write(tmp_path / "bomb_system.yaml", ALIAS_BOMB.replace("i: &i", "host: &i"))
    workload = _write(tmp_path / "bomb_workload.yaml", "name: w\ngenerator: stream\n" + ALIAS_BOMB.replace(
        "i: &i", "params: &i"))
    study = _write(tmp_path / "bomb_study.yaml", ALIAS_BOMB.replace("i: &i", "sweep: &i"))
    for argv, path in ((["validate", str(system)], system), (["run", str(system), str(STREAM)], system),
                       (["run", str(DEFAULT_SYSTEM), str(workload)], workload), (["study", str(study)], study)):
        message = _refused(argv, capsys, tmp_path, f"{path}: invalid YAML: aliases expand ")
        assert " nodes to 490,329,0" in message and "at most 10,000 nodes added by aliases" in message


@pytest.mark.parametrize("text", ["name: &a [*a]\n", "host: &a {x: *a}\n"])
def test_recursive_alias_is_refused(tmp_path, capsys, text):
    path = _write(tmp_path / "r.yaml", text)
    for argv in (["validate", str(path)], ["run", str(path), str(STREAM)], ["study", str(path)]):
        _refused(argv, capsys, tmp_path, f"{path}: invalid YAML: recursive alias: the anchor at line 1")


def test_recursive_alias_in_a_set_option_is_refused(tmp_path, capsys):
    _refused(["run", str(DEFAULT_SYSTEM), str(STREAM), "--set", "host.frequency_hz=&a [*a]"], capsys, tmp_path,
             "--set host.frequency_hz=&a [*a]: invalid YAML: recursive alias")


def test_a_device_as_a_config_is_refused_at_once_naming_it(tmp_path, capsys):
    for argv in (["validate", "/dev/zero"], ["run", "/dev/zero", str(STREAM)],
                 ["run", str(DEFAULT_SYSTEM), "/dev/zero"], ["study", "/dev/zero"]):
        _refused(argv, capsys, tmp_path, "/dev/zero: not a regular file (a device, pipe or socket)")


def test_a_pipe_as_a_config_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    _refused(["validate", str(fifo)], capsys, tmp_path, f"{fifo}: not a regular file")


def test_a_config_beyond_the_size_cap_is_refused(tmp_path, capsys):
    path = _write(tmp_path / "huge.yaml", "name: x\nnotes: " + "a" * (1 << 20) + "\n")
    _refused(["validate", str(path)], capsys, tmp_path, f"{path}: ", "config file of at most 1,048,576 B")


# ------------------------------------------------------------------------------ system parameters


@pytest.mark.parametrize("system, override, says", [
    (DEFAULT_SYSTEM, "host.frequency_hz=1e-300 Hz", "host.frequency_hz: expected a value >= 1 MHz"),
    (DEFAULT_SYSTEM, "host.frequency_hz=1 Hz", "host.frequency_hz: expected a value >= 1 MHz, got 1 Hz"),
    (DEFAULT_SYSTEM, "host.flops_per_cycle=1e-300", "host.flops_per_cycle: expected a value >= 0.001"),
    (DEFAULT_SYSTEM, "dram.timing.tck_s=1e300 s", "dram.timing.tck_s: expected a value <= 1 us"),
    (DEFAULT_SYSTEM, "host.memory_path_latency_s=1e6 s", "host.memory_path_latency_s: expected a value <= 10 ms"),
    (DEFAULT_SYSTEM, "dram.timing.cl=1000000000000", "dram.timing.cl: expected a value <= 65535"),
    (DEFAULT_SYSTEM, "dram.timing.t_refi_s=1 ns", "dram.timing.t_refi_s: expected a value >= 1 us"),
    # x4 devices of one column: a rank row of 0 B, a memory of no line (refused as a workload too large before)
    (DEFAULT_SYSTEM, "dram.geometry.columns=1", "dram.geometry.columns: 1; expected a rank row of at least one 64 B line"),
    (LAP_SYSTEM, "accelerators.lap.frequency_hz=1e-300 Hz", "accelerators.lap.frequency_hz: expected a value >= 1 MHz"),
    (LAP_SYSTEM, "accelerators.lap.frequency_hz=1e300 Hz", "accelerators.lap.frequency_hz: expected a value <= 100 GHz"),
    (LAP_SYSTEM, "accelerators.lap.interface.bandwidth_bytes_per_s=1e-300 B/s",
     "accelerators.lap.interface.bandwidth_bytes_per_s: expected a value >= 1 MB/s"),
    (LAP_SYSTEM, "accelerators.lap.interface.bandwidth_bytes_per_s=1e300 B/s",
     "accelerators.lap.interface.bandwidth_bytes_per_s: expected a value <= 100 TB/s"),
    (LAP_SYSTEM, "accelerators.lap.interface.latency_s=1e300 s",
     "accelerators.lap.interface.latency_s: expected a value <= 10 ms"),
    (LAP_SYSTEM, "accelerators.lap.utilisation=1e-300", "accelerators.lap.utilisation: expected a value >= 0.001"),
    (SYSTOLIC_SYSTEM, "accelerators.systolic.frequency_hz=1e-300 Hz",
     "accelerators.systolic.frequency_hz: expected a value >= 1 MHz"),
    (SYSTOLIC_SYSTEM, "accelerators.systolic.frequency_hz=1e300 Hz",
     "accelerators.systolic.frequency_hz: expected a value <= 100 GHz"),
    (SYSTOLIC_SYSTEM, "accelerators.systolic.rows=1000000", "accelerators.systolic.rows: expected a value <= 65536"),
    (SYSTOLIC_SYSTEM, "accelerators.systolic.word_bytes=1000", "accelerators.systolic.word_bytes: expected a value <= 64"),
    (PCIE_SYSTEM, "accelerators.lap.interface.device_memory_bandwidth_bytes_per_s=1e-300 B/s",
     "accelerators.lap.interface.device_memory_bandwidth_bytes_per_s: 1e-300 B/s; expected 0 (not limiting) or at "
     "least 1e+06 B/s"),
    (LAP_SYSTEM, "accelerators.lap.interface.device_memory_bandwidth_bytes_per_s=1 GB/s",
     "accelerators.lap.interface.device_memory_bandwidth_bytes_per_s: 1e+09 B/s: only the pcie coupling's device "
     "has a memory of its own, got coupling 'dram'; expected 0"),
])
def test_extreme_parameters_are_refused_naming_the_option_and_the_bound(tmp_path, capsys, system, override, says):
    _refused(["run", str(system), str(STREAM), "--set", override], capsys, tmp_path,
             f"--set {override} (over {system}): {says}")


# ---------------------------------------------------------------------------------- trace rows


def _trace_workload(tmp_path: Path, flops: int, cycles: float) -> Path:
    """A workload replaying a one-row Parquet trace of ``flops`` and ``cycles`` (written past the builder's checks)."""
    table = TraceBuilder()
    table.compute("host", "work", flops=1)
    good = table.to_table()
    row = good.set_column(good.schema.get_field_index("flops"), TRACE_SCHEMA.field("flops"), pa.array([flops]))
    row = row.set_column(row.schema.get_field_index("cycles"), TRACE_SCHEMA.field("cycles"), pa.array([cycles]))
    import pyarrow.parquet as pq

    pq.write_table(row, tmp_path / "t.parquet")
    return _write(tmp_path / "w.yaml", "name: w\ntrace: t.parquet\n")


@pytest.mark.parametrize("flops, cycles, column", [(2**62, 0.0, "flops"), (0, 1e308, "cycles")])
def test_a_row_of_absurd_work_is_refused_by_validate_and_run(tmp_path, capsys, flops, cycles, column):
    workload = _trace_workload(tmp_path, flops, cycles)
    says = f"{tmp_path / 't.parquet'}: row 0, column '{column}': "
    expected = f"in [0, 2**53] (workloads.trace.MAX_ROW_{column.upper()})"
    for argv in (["validate", str(workload)], ["validate", str(tmp_path / "t.parquet")],
                 ["run", str(DEFAULT_SYSTEM), str(workload)]):
        _refused(argv, capsys, tmp_path, says, expected=expected)


def test_1e16_flops_are_refused_before_anything_is_built(tmp_path, capsys):
    workload = _write(tmp_path / "w.yaml", "name: w\ngenerator: compute_only\nparams: {flops: 10000000000000000}\n")
    for argv in (["validate", str(workload)], ["run", str(DEFAULT_SYSTEM), str(workload)]):
        _refused(argv, capsys, tmp_path, f"{workload}: params.flops: 10000000000000000; expected at most "
                 "9,007,199,254,740,992 (a row holds at most 2**53 flops")


def test_host_work_beyond_the_simulated_time_limit_is_refused_before_the_run(tmp_path, capsys):
    workload = _write(tmp_path / "w.yaml", "name: w\ngenerator: compute_only\nparams: {flops: 9000000000000000}\n")
    _refused(["run", str(DEFAULT_SYSTEM), str(workload)], capsys, tmp_path,
             f"{workload}: the host's rows take at least 1.125 Ms", "host.frequency_hz = 2 GHz",
             "host.flops_per_cycle = 4", "ends within 1 ks of simulated time")


def test_a_run_is_stopped_at_the_simulated_time_limit(tmp_path, capsys, monkeypatch):
    # 20,000 dependent loads of 10 ms each: 200 s of memory stalls that the host's work (10 us) does not show
    monkeypatch.setattr(run_limits, "MAX_SIMULATED_S", 1e-3)
    chase = CONFIGS / "workloads" / "pointer_chase.yaml"
    _refused(["run", str(DEFAULT_SYSTEM), str(chase), "--set", "host.memory_path_latency_s=10 ms"], capsys, tmp_path,
             f"{chase}: the run on {DEFAULT_SYSTEM} reaches 1 ms of simulated time and is stopped there",
             "ends within 1 ms of simulated time")


# --------------------------------------------------------------------------------- trace sizes


@pytest.mark.parametrize("params, says", [
    ("{kind: read, array_bytes: 512 GiB}", "params.array_bytes: '512 GiB'; expected at most 131,072,000,000 B"),
    ("{kind: triad, array_bytes: 16 MiB, repeats: 100000000}", "params.repeats: 100000000; expected at most"),
])
def test_a_stream_too_large_to_build_is_refused_by_validate(tmp_path, capsys, params, says):
    workload = _write(tmp_path / "w.yaml", f"name: w\ngenerator: stream\nparams: {params}\n")
    _refused(["validate", str(workload)], capsys, tmp_path, f"{workload}: {says}")


def test_2_to_the_28_random_accesses_are_refused_by_validate(tmp_path, capsys):
    workload = _write(tmp_path / "w.yaml", "name: w\ngenerator: random_access\n"
                      f"params: {{n_accesses: {2**28}, footprint_bytes: 1 GiB}}\n")
    _refused(["validate", str(workload)], capsys, tmp_path,
             f"{workload}: params.n_accesses: {2**28}; expected at most 16,777,216 (a trace draws at most")


# --------------------------------------------------------------------------------- study sizes


def test_a_million_point_study_is_refused_at_once(tmp_path, capsys):
    axis = "[" + ", ".join(str(i) for i in range(1, 1001)) + "]"
    study = _study(tmp_path, f"  product:\n    set.host.max_outstanding_misses: {axis}\n    param.repeats: {axis}\n")
    for argv in (["validate", str(study)], ["study", str(study)]):
        _refused(argv, capsys, tmp_path, f"{study}: sweep: 1,000,000 points; expected at most 10,000",
                 "--max-points N")


def test_max_points_option_sets_the_study_size_limit(tmp_path, capsys):
    study = _study(tmp_path, "  product:\n    set.host.max_outstanding_misses: [2, 4]\n"
                   "  zip:\n    param.array_bytes: [64 KiB, 128 KiB]\n    param.repeats: [1, 2]\n")
    _refused(["study", str(study), "--max-points", "3"], capsys, tmp_path,
             f"{study}: sweep: 4 points; expected at most 3")
    assert main(["study", str(study), "--max-points", "4", "--workers", "1", "--out", str(tmp_path / "o")]) == 0


def _roofline_study(tmp_path: Path, n: int) -> Path:
    """A roofline paper study file of ``n`` intensities: ``n`` + 1 points (one more measures the machine)."""
    intensities = ", ".join(str(0.25 * (i + 1)) for i in range(n))
    return _write(tmp_path / "roof.yaml", "study: roofline\nsystem: configs/systems/i7_950_choi.yaml\n"
                  f"total_bytes: 1 MiB\nintensities: [{intensities}]\n")


def test_a_paper_study_takes_the_sweeps_point_limit_and_option(tmp_path, capsys):
    """A paper study file is held to the sweeps' limit (refused at once, nothing run or written), and
    ``--max-points`` sets it for them too."""
    study = _roofline_study(tmp_path, 10_000)
    for argv in (["validate", str(study)], ["study", str(study)]):
        _refused(argv, capsys, tmp_path, f"{study}: 10,001 points; expected at most 10,000", "--max-points N")
    study = _roofline_study(tmp_path, 3)
    _refused(["study", str(study), "--max-points", "3"], capsys, tmp_path, f"{study}: 4 points; expected at most 3")
    assert main(["validate", str(study)]) == 0
    # validate takes the option too, so that a study run with a higher limit can be checked
    _refused(["validate", str(study), "--max-points", "3"], capsys, tmp_path, f"{study}: 4 points; expected at most 3")
    big = _roofline_study(tmp_path, 10_000)
    assert main(["validate", str(big), "--max-points", "10001"]) == 0
    for bad in ("0", "-1"):
        for command in ("validate", "study"):
            _refused([command, str(study), "--max-points", bad], capsys, tmp_path,
                     f"--max-points: {bad}; expected a positive number of points")
    # the option is checked once, whatever the files validate is given
    for files in ([str(study), str(big)], [str(DEFAULT_SYSTEM)]):
        _refused(["validate", *files, "--max-points", "0"], capsys, tmp_path,
                 "--max-points: 0; expected a positive number of points")


def test_a_trace_touching_more_lines_than_a_run_takes_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(run_limits, "MAX_TRACE_LINES", 1_000_000)  # the 64 MiB stream touches 1,048,576 lines
    _refused(["run", str(DEFAULT_SYSTEM), str(STREAM)], capsys, tmp_path,
             f"{STREAM}: the trace's memory rows touch up to 1,050,624 lines of 64 B ({DEFAULT_SYSTEM}: "
             "caches.line_bytes); expected at most 1,000,000 (simulator.engine.limits.MAX_TRACE_LINES")


@pytest.mark.parametrize("model, option", [("logca", "--table"), ("roofline", "--table"), ("ulist", "--machine")])
def test_model_inputs_are_refused_like_configs(tmp_path, capsys, model, option):
    bomb = _write(tmp_path / "bomb.yaml", ALIAS_BOMB)
    _refused(["models", model, option, "/dev/zero"], capsys, tmp_path, "/dev/zero: not a regular file")
    if option == "--table":
        _refused(["models", model, option, str(bomb)], capsys, tmp_path, f"{bomb}: invalid YAML: aliases expand")
