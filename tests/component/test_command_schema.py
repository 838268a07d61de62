"""Offload commands declared once per accelerator kind: unknown keys refused, regions defaulting to the
operands, rows addressed to an accelerator refused, ``offsim validate SYSTEM TRACE`` and
``offsim commands`` (each case of issue 39's commands part, from the command line where a user meets it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from simulator.accel.command_schema import CommandError, Regions, command_field, describe_command, parse_command
from simulator.accel.kinds import COMMANDS
from simulator.cli import main
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import check_trace, replay
from simulator.system import build_system
from tests.conftest import CONFIGS, offload_trace, refused
from workloads.trace import TraceBuilder, TraceError, write_trace

LAP_DRAM = CONFIGS / "systems" / "lap_dram.yaml"
CRYPTO = CONFIGS / "systems" / "logca_ultrasparc_t2.yaml"  # unit 'crypto'
KERNEL = CONFIGS / "systems" / "logca_gpu_discrete.yaml"  # unit 'gpu'
STENCIL = CONFIGS / "systems" / "stencil_dram.yaml"  # unit 'stencil'

N, E = 128, 8  # a 128 x 128 double GEMM: three 128 KiB matrices
A, B, C = 0, N * N * E, 2 * N * N * E
GEMM = {"op": "gemm", "m": N, "n": N, "k": N, "a_addr": A, "b_addr": B, "c_addr": C}
EXPLICIT = {"inputs": [[A, N * N * E], [B, N * N * E], [C, N * N * E]], "outputs": [[C, N * N * E]]}
TILE = {"inputs": [[0, 512]], "outputs": [[1 << 20, 512]], "points": 64, "rows": [8] * 8}
GOOD = {  # a good command of every kind, on a system that has a unit of it
    "lap": (LAP_DRAM, "lap", GEMM),
    "crypto": (CRYPTO, "crypto", {"op": "aes128", "inputs": [[0, 4096]], "outputs": [[1 << 20, 4096]]}),
    "kernel": (KERNEL, "gpu", {"op": "fft", "inputs": [[0, 4096]], "outputs": [[1 << 20, 4096]], "host_cycles": 1e4,
                               "flops": 1e5, "memory_bytes": 8192}),
    "stencil": (STENCIL, "stencil", {"op": "stencil_tiles", "stencil": "jacobi_2d", "t_t": 2, "m_tile_words": 256,
                                     "tiles": [TILE]}),
}


def _gemm_trace(params: dict):
    """The host writes A, B and C, offloads ``params`` to the LAP, waits, and reads C."""
    tb = TraceBuilder()
    for base in (A, B, C):
        tb.access("host", "produce", "write", base, E, E, N * N)
    tb.offload("host", "gemm", "lap", **params)
    tb.wait("host", "gemm", "lap")
    tb.access("host", "consume", "read", C, E, E, N * N)
    return tb.to_table()


def _system(path: Path, overrides: tuple[str, ...] = ()):
    return build_system(load_spec(path, SystemSpec, list(overrides)).spec)


def _trace_workload(tmp_path: Path, table, name: str = "t") -> Path:
    write_trace(table, tmp_path / f"{name}.parquet")
    workload = tmp_path / f"{name}.yaml"
    workload.write_text(f"name: {name}\ntrace: {name}.parquet\n")
    return workload


# --- unknown keys -------------------------------------------------------------------------------------


def test_a_misspelt_gemm_key_is_refused_from_the_cli_with_did_you_mean(tmp_path, capsys):
    workload = _trace_workload(tmp_path, _gemm_trace(GEMM | {"acumulate": False}))
    err = refused(["run", str(LAP_DRAM), str(workload), "--out", str(tmp_path / "r")], capsys, tmp_path / "r")
    assert len(err) == 1
    assert err[0].startswith(f"offsim: error: {tmp_path / 't.parquet'}: row 3, column 'params': offload to lap: "
                             "acumulate: unknown key (did you mean accumulate?); expected one of: a_addr, accumulate")


@pytest.mark.parametrize("kind", sorted(GOOD))
def test_every_kind_refuses_an_unknown_key_and_runs_its_good_command(kind):
    system, target, params = GOOD[kind]
    assert replay(_system(system), offload_trace(target, params)) > 0
    typo = sorted(k for k in params if k != "op")[0]
    bad = {**params, typo + "s": params[typo]}
    with pytest.raises(TraceError, match=rf"row 1, column 'params': offload to {target}: {typo}s: unknown key "
                                         rf"\(did you mean {typo}\b"):
        replay(_system(system), offload_trace(target, bad), "t.parquet")


def test_an_unknown_key_inside_a_tile_is_refused_naming_the_tile():
    system, target, params = GOOD["stencil"]
    bad = {**params, "tiles": [TILE, {**TILE, "point": 64}]}
    with pytest.raises(TraceError, match=r"offload to stencil: tiles\[1\]\.point: unknown key \(did you mean "
                                         r"points\?\)"):
        replay(_system(system), offload_trace(target, bad))


def test_a_wait_takes_no_arguments():
    tb = TraceBuilder()
    tb.offload("host", "g", "lap", **GEMM)
    tb._command("wait", "host", "g", "lap", {"all": True})
    with pytest.raises(TraceError, match=r"row 1, column 'params': wait: all: unknown key; expected only \"unit\""):
        check_trace(_system(LAP_DRAM), tb.to_table())


# --- regions default to the operands ------------------------------------------------------------------


def _time_s(system: Path, params: dict) -> float:
    return replay(_system(system), _gemm_trace(params)) / 1e12


@pytest.mark.parametrize("system", ["lap_dram", "lap_llc", "lap_pcie"])
def test_a_gemm_without_regions_does_the_coherence_work_of_its_operands(system):
    path = CONFIGS / "systems" / f"{system}.yaml"
    assert _time_s(path, GEMM) == _time_s(path, GEMM | EXPLICIT)



def test_the_default_regions_of_a_gemm_are_its_operands():
    unit = _system(LAP_DRAM).units["lap"]
    resolved = unit.check_command({"unit": "lap", **GEMM, "lda": 2 * N})
    a_bytes = ((N - 1) * 2 * N + N) * E  # rows apart by lda elements
    assert resolved["inputs"] == [[A, a_bytes], [B, N * N * E], [C, N * N * E]]
    assert resolved["outputs"] == [[C, N * N * E]]
    assert unit.check_command({"unit": "lap", **GEMM, "accumulate": False})["inputs"] == [[A, N * N * E],
                                                                                          [B, N * N * E]]
    given = unit.check_command({"unit": "lap", **GEMM, "inputs": [[B, 2 * N * N * E], [A, N * N * E]]})
    assert given["inputs"] == [[B, 2 * N * N * E], [A, N * N * E]] and given["outputs"] == [[C, N * N * E]]


PART = {"inputs": [[0, 64]], "outputs": [[4096, 64]], "host_cycles": 1e4, "flops": 1e3, "memory_bytes": 128}
OTHER_REGIONS = {  # GOOD's commands with their regions given the other way: explicit, or from parts or tiles
    "lap": GEMM | EXPLICIT,
    "kernel": {"op": "fft", "parts": [PART, PART | {"inputs": [[64, 64]]}]},
    "stencil": {k: v for k, v in GOOD["stencil"][2].items() if k not in ("inputs", "outputs")},
}


@pytest.mark.parametrize("kind, params", [(k, p) for k, (_, _, p) in sorted(GOOD.items())]
                         + sorted(OTHER_REGIONS.items()))
def test_the_parsed_command_replay_hands_over_is_the_parse_of_the_completed_params(kind, params):
    # execute reads the command parsed once at the check: it is what parsing the params the unit receives
    # (defaults and regions filled in) gives
    system, unit_name, _ = GOOD[kind]
    unit = _system(system).units[unit_name]
    out, args = unit.checked_command({"unit": unit_name, **params})
    assert out == unit.check_command({"unit": unit_name, **params})
    assert args == parse_command(unit.COMMAND, out)
    assert [list(r) for r in args.inputs] == out["inputs"] and [list(r) for r in args.outputs] == out["outputs"]


@pytest.mark.parametrize("regions, says", [
    ({"inputs": [[A, 2 * N * N * E]]}, f"inputs: byte {C} of C is in no region; expected regions covering A, B and "
                                       "C (or no inputs: they default to them)"),
    ({"inputs": [[A, N * N * E - 8], [B, 2 * N * N * E]]}, f"inputs: byte {B - 8} of A is in no region"),
    ({"outputs": []}, f"outputs: byte {C} of C is in no region; expected regions covering C (or no outputs"),
    ({"inputs": [], "outputs": []}, f"inputs: byte {A} of A is in no region"),
])
def test_gemm_regions_given_must_cover_its_operands(regions, says):
    with pytest.raises(CommandError) as err:
        _system(LAP_DRAM).units["lap"].check_command({"unit": "lap", **GEMM, **regions})
    assert says in str(err.value)


def test_regions_given_row_by_row_cover_a_matrix_with_a_wider_leading_dimension():
    unit = _system(LAP_DRAM).units["lap"]
    rows = [[A + r * 2 * N * E, N * E] for r in range(N)]  # A's rows, 2N elements apart; the gaps are not A's
    params = {"unit": "lap", **GEMM, "lda": 2 * N, "a_addr": A, "b_addr": 2 * B, "c_addr": 3 * B}
    regions = {"inputs": rows + [[2 * B, 2 * N * N * E]], "outputs": [[3 * B, N * N * E]]}
    assert unit.check_command(params | regions)["inputs"] == regions["inputs"]
    with pytest.raises(CommandError, match=f"inputs: byte {A + 5 * 2 * N * E} of A is in no region"):
        unit.check_command(params | regions | {"inputs": rows[:5] + rows[6:] + [[2 * B, 2 * N * N * E]]})


def test_kernel_and_stencil_regions_default_to_their_parts_and_tiles():
    work = {"flops": 10, "memory_bytes": 64}
    parts = [{"inputs": [[0, 64]], "outputs": [[4096, 64]], "host_cycles": 10} | work,
             {"inputs": [[64, 64]], "host_cycles": 5} | work]
    gpu = _system(KERNEL).units["gpu"]
    resolved = gpu.check_command({"unit": "gpu", "op": "fft", "parts": parts})
    assert resolved["inputs"] == [[0, 64], [64, 64]] and resolved["outputs"] == [[4096, 64]]
    _, _, cmd = GOOD["stencil"]
    tiles = [TILE, {**TILE, "inputs": [[512, 512]], "outputs": [[(1 << 20) + 512, 512]]}]
    resolved = _system(STENCIL).units["stencil"].check_command({"unit": "stencil", **cmd, "tiles": tiles})
    assert resolved["inputs"] == [[0, 512], [512, 512]]
    assert resolved["outputs"] == [[1 << 20, 512], [(1 << 20) + 512, 512]]


def test_a_kernel_command_needs_its_regions_or_parts_and_consistent_work():
    gpu = _system(KERNEL).units["gpu"]
    with pytest.raises(CommandError, match=r"offload to gpu: inputs: missing; expected a list of \[byte address, "
                                           r"bytes\] regions \(or parts\)"):
        gpu.check_command({"unit": "gpu", "op": "fft", "host_cycles": 10, "outputs": []})
    parts = [{"inputs": [[0, 64]], "host_cycles": 10, "flops": 8, "memory_bytes": 64},
             {"inputs": [[64, 64]], "host_cycles": 5, "flops": 8, "memory_bytes": 64}]
    with pytest.raises(CommandError, match=r"host_cycles = 16.0: expected the sum of the parts' host_cycles, 15"):
        gpu.check_command({"unit": "gpu", "op": "fft", "host_cycles": 16, "parts": parts})
    with pytest.raises(CommandError, match=r"flops = 17.0: expected the sum of the parts' flops, 16"):
        gpu.check_command({"unit": "gpu", "op": "fft", "flops": 17, "parts": parts})
    assert gpu.check_command({"unit": "gpu", "op": "fft", "host_cycles": 15, "parts": parts})["host_cycles"] == 15


def test_a_kernel_command_declares_its_device_work_unless_the_unit_fixes_a():
    """A device whose rate is its roofline needs each request's flops and memory_bytes; one with a fixed A
    does not."""
    regions = {"unit": "gpu", "op": "fft", "inputs": [[0, 64]], "outputs": [[4096, 64]], "host_cycles": 10}
    roofline = _system(KERNEL, ("accelerators.gpu.acceleration=0",)).units["gpu"]  # the preset's A removed
    with pytest.raises(CommandError, match=r"offload to gpu: flops: missing; expected a number >= 0: the unit has "
                                           r"no fixed acceleration"):
        roofline.check_command(regions)
    parts = [{"inputs": [[0, 64]], "host_cycles": 10, "flops": 8, "memory_bytes": 64},
             {"inputs": [[64, 64]], "host_cycles": 5, "flops": 8}]
    with pytest.raises(CommandError, match=r"parts\[1\]\.memory_bytes: missing"):
        roofline.check_command({"unit": "gpu", "op": "fft", "parts": parts})
    fixed = _system(KERNEL).units["gpu"]  # the preset fixes 000 Table 4.3's A = 30
    assert fixed.spec.acceleration == 30 and fixed.check_command(regions)["host_cycles"] == 10


# --- trace rows addressed to an accelerator ------------------------------------------------------------


def test_rows_addressed_to_an_accelerator_are_refused_not_dropped(tmp_path, capsys):
    tb = TraceBuilder()
    tb.compute("host", "init", cycles=10)
    tb.access("lap", "ghost", "read", 0, 8, 8, (64 << 20) // 8)
    tb.compute("lap", "ghost", flops=10**9)
    workload = _trace_workload(tmp_path, tb.to_table())
    err = refused(["run", str(LAP_DRAM), str(workload), "--out", str(tmp_path / "r")], capsys, tmp_path / "r")
    assert err == [f"offsim: error: {tmp_path / 't.parquet'}: row 1, column 'unit': unit 'lap' is a lap "
                   "accelerator, which runs offload commands, not trace rows; expected unit 'host' (the host issues "
                   "every row; lap's work goes in an offload command: offsim commands lap)"]


# --- offsim validate SYSTEM TRACE ----------------------------------------------------------------------


def test_validate_checks_a_traces_commands_against_the_system(tmp_path, capsys):
    bad = _trace_workload(tmp_path, _gemm_trace(GEMM | {"m": 0}), "bad")
    good = _trace_workload(tmp_path, _gemm_trace(GEMM), "good")
    assert main(["validate", str(bad.with_suffix(".parquet"))]) == 0  # alone: only its format is checked
    capsys.readouterr()
    assert main(["validate", str(LAP_DRAM), str(bad.with_suffix(".parquet")), str(bad), str(good)]) == 2
    captured = capsys.readouterr()
    # the trace named directly and through its workload file: one problem of one file, said once, as run names it
    assert captured.err.splitlines() == [
        f"offsim: error: {bad.with_suffix('.parquet')}: row 3, column 'params': offload to lap: m: expected a value "
        ">= 1, got 0"]
    assert f"{good}: ok (workload 'good', 6 trace rows; its rows and commands fit {LAP_DRAM})" in captured.out
    i7 = CONFIGS / "systems" / "i7_920_ddr3.yaml"
    assert main(["validate", str(i7), str(good)]) == 2
    assert "target unit 'lap' is not in the system (it has: host)" in capsys.readouterr().err


def test_validate_checks_the_memory_a_trace_reaches(tmp_path, capsys):
    """The message names the first row beyond the memory, as every trace message names its row."""
    tb = TraceBuilder()
    tb.access("host", "s", "read", 0, 8, 8, 1)
    tb.access("host", "s", "read", 1 << 40, 8, 8, 1)
    tb.access("host", "s", "read", 1 << 41, 8, 8, 1)
    far = _trace_workload(tmp_path, tb.to_table(), "far")
    assert main(["validate", str(LAP_DRAM), str(far)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {far.with_suffix('.parquet')}: row 1 (1 more rows "
                                               "like this): the host's "
                                               "accesses reach ") and (
        f"expected at most the 4 GiB of the system's DRAM ({LAP_DRAM}: dram.geometry)" in err[0]), err


# --- offsim commands ----------------------------------------------------------------------------------


def test_offsim_commands_lists_every_key_of_every_kind(capsys):
    assert main(["commands"]) == 0
    out = capsys.readouterr().out
    for kind, schema in COMMANDS.items():
        assert f"{kind}: offload params" in out
        for row in describe_command(schema):
            assert any(line.split()[:1] == [row.key] and row.doc in line for line in out.splitlines()), row.key
    assert main(["commands", "lap"]) == 0
    lap = capsys.readouterr().out.splitlines()
    assert lap[0].startswith("lap: offload params") and len(lap) == 2 + len(describe_command(COMMANDS["lap"]))
    line = next(x for x in lap if x.split()[0] == "lda")
    assert line.split()[1:5] == ["integer", "elements", "k", ">="]


def test_offsim_commands_refuses_an_unknown_kind(capsys):
    assert main(["commands", "lapp"]) == 2
    assert capsys.readouterr().err.strip() == ("offsim: error: commands: kind 'lapp' (did you mean lap?); expected "
                                               "one of: crypto, kernel, lap, stencil, systolic")


# --- the mechanism, as a new kind adopts it -----------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    length: int = command_field(unit="elements", min=1, doc="a row's length")


@dataclass(frozen=True)
class _Toy:
    op: str = command_field(choices=("run",), doc="the operation")
    rows: tuple[_Row, ...] = command_field(doc="the rows")
    size: int = command_field(4, unit="B", min=1, max=64, doc="bytes per item")
    widths: tuple[int, ...] = command_field((), unit="elements", min=0, doc="widths")
    inputs: Regions = command_field(None, default_text="the rows", doc="what is read")


@pytest.mark.parametrize("params, says", [
    ({"op": "run", "rows": [], "sise": 4}, "sise: unknown key (did you mean size?); expected one of: inputs, op, "
                                           "rows, size, widths"),
    ({"op": "run"}, "rows: missing; expected a list of objects of length"),
    ({"op": "walk", "rows": []}, "op: expected one of 'run', got 'walk'"),
    ({"op": "run", "rows": [], "size": 65}, "size: expected a value <= 64, got 65"),
    ({"op": "run", "rows": [], "size": True}, "size: expected an integer, got true"),
    ({"op": "run", "rows": [{"length": 0}]}, "rows[0].length: expected a value >= 1, got 0"),
    ({"op": "run", "rows": [{"length": 1, "unit": "x"}]}, "rows[0].unit: unknown key"),
    ({"op": "run", "rows": [], "widths": [1, -1]}, "widths[1]: expected a value >= 0, got -1"),
    ({"op": "run", "rows": [], "inputs": [[0, 8, 1]]}, "inputs[0] = [0, 8, 1]: expected [byte address, bytes]"),
    ({"op": "run", "rows": [], "inputs": [[2**64, 8]]}, "two integers >= 0 and below 2**62"),
    ("run", "'run': expected an object of inputs, op, rows, size, widths"),
])
def test_a_declared_schema_refuses_what_it_does_not_declare(params, says):
    with pytest.raises(CommandError) as err:
        parse_command(_Toy, params)
    assert says in str(err.value)


def test_a_declared_schema_fills_its_defaults():
    cmd = parse_command(_Toy, {"unit": "toy", "op": "run", "rows": [{"length": 3}], "widths": [2]})
    assert (cmd.size, cmd.rows, cmd.widths, cmd.inputs) == (4, (_Row(3),), (2,), None)


def test_the_guide_excerpt_of_offsim_commands_is_what_it_prints(capsys):
    from tests.conftest import ROOT

    text = (ROOT / "simulator" / "README.md").read_text()
    excerpt = text.split("`offsim commands lap` prints it:\n\n```\n", 1)[1].split("```", 1)[0].splitlines()
    assert main(["commands", "lap"]) == 0
    printed = capsys.readouterr().out.splitlines()
    shown = [line for line in excerpt if line.strip() != "..."]
    assert len(shown) >= 5 and all(line in printed for line in shown), set(shown) - set(printed)
