"""``offsim models``: LogCA and the energy roofline evaluated on their own, for rows of a table."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from models.logca import g1, speedup
from simulator.cli import main
from simulator.studies.model_eval import (
    DEFAULT_GRANULARITIES,
    LOGCA_TABLE,
    ROOFLINE_TABLE,
    load_logca_table,
    load_roofline_table,
    logca_report,
    roofline_report,
    system_roofline_report,
)
from tests.conftest import refused

# o = 100 cycles, L = 0, C = 1 cycle/B, beta = 1, A = 4: T0 = g, T1 = 100 + g/4, so the speedup is 1 at
# g = 100 + g/4 (g1 = 400/3 B) and A/2 = 2 at g = 200 + g/2 (g_A/2 = 400 B, where T1 = 200 cycles).
HAND_TABLE = """\
description: a hand-computable LogCA row
platforms:
  toy:
    platform: Toy
    kernel: copy
    host_frequency_hz: 1.0e+9
    latency: 0.0
    latency_per_byte: false
    overhead_cycles: 100.0
    c_cycles_per_byte_beta: 1.0
    acceleration: 4.0
    beta: 1.0
    source: "hand-computed"
"""


@pytest.fixture
def hand_table(tmp_path: Path) -> Path:
    path = tmp_path / "toy.yaml"
    path.write_text(HAND_TABLE)
    return path


def test_logca_report_of_a_hand_computable_row(hand_table: Path) -> None:
    report = logca_report(load_logca_table(hand_table)["toy"], [400.0, 4096.0])
    assert report.g1_bytes == pytest.approx(400 / 3, rel=1e-9)
    assert report.g_half_bytes == pytest.approx(400.0, rel=1e-9)
    assert report.g1_printed_bytes == pytest.approx(400 / 3, rel=1e-12)  # exact for a fixed latency
    at_400 = report.points[0]
    assert (at_400.t0_cycles, at_400.t1_cycles, at_400.speedup) == pytest.approx((400.0, 200.0, 2.0))
    # at 4 KiB, T1 = 100 + 1024 cycles: A tenfold makes it 202.4 (a gain of 5.6), o tenfold 1034 (1.09)
    assert report.points[1].bottlenecks == "A"


def test_logca_report_of_table_4_3_follows_the_model_functions() -> None:
    entry = load_logca_table(LOGCA_TABLE)["sparc_t4_engine_aes"]
    report = logca_report(entry)
    assert [pt.g_bytes for pt in report.points] == list(DEFAULT_GRANULARITIES)
    assert report.g1_bytes == g1(entry.params)
    assert [pt.speedup for pt in report.points] == [speedup(entry.params, g) for g in DEFAULT_GRANULARITIES]
    # small offloads pay o and L, large ones are limited by A alone (000 Fig. 6.4)
    assert "o" in report.points[0].bottlenecks and report.points[-1].bottlenecks == "A"


def test_roofline_report_of_nehalem_matches_table_6_by_hand() -> None:
    row = load_roofline_table(ROOFLINE_TABLE)["nehalem_cpu"]
    report = roofline_report("nehalem_cpu", row, [0.25, 64.0])
    # 001 Table 6: 53.3 GFLOP/s double, 25.6 GB/s, 670 pJ/flop, 795 pJ/B, pi_0 = 122 W
    assert report.balance.b_tau == pytest.approx(53.3 / 25.6)
    low, high = report.points
    assert low.bound == "memory" and low.gflop_per_s == pytest.approx(0.25 * 25.6)
    e_per_flop = 670e-12 + 795e-12 / 0.25 + 122 / (0.25 * 25.6e9)
    assert low.gflop_per_j == pytest.approx(1e-9 / e_per_flop)
    assert high.bound == "compute" and high.gflop_per_s == pytest.approx(53.3)
    capped = roofline_report("nehalem_cpu", row, [3.0], power_cap=True)
    # the cap (pi_0 + 44.2 W) binds between B_tau- and B_tau+ around B_tau = 2.08 flop/B
    assert capped.points[0].bound == "power" and capped.points[0].power_w == pytest.approx(122 + 44.2)


def test_models_logca_prints_the_report_and_writes_the_csv(hand_table: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "sub" / "toy.csv"
    assert main(["models", "logca", "toy", "--table", str(hand_table), "--g", "400 B", "--g", "1 KiB",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "g1 (speedup 1) 133 B; g_A/2 (speedup 2) 400 B" in text
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["g_bytes"]) for r in rows] == [400.0, 1024.0]
    assert float(rows[0]["t1_cycles"]) == 200.0 and float(rows[0]["t1_s"]) == pytest.approx(200e-9)
    assert float(rows[1]["speedup"]) == pytest.approx(1024 / (100 + 256))


def test_models_without_entries_list_the_rows(capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "logca"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(load_logca_table(LOGCA_TABLE))
    assert main(["models", "roofline"]) == 0
    assert "nehalem_cpu" in capsys.readouterr().out


def test_models_roofline_prints_every_intensity(capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "roofline", "gtx680_kepler", "--intensity", "0.5", "--intensity", "8 flop/B",
                 "--power-cap"]) == 0
    text = capsys.readouterr().out
    assert "never reached" in text  # 001 Table 6: pi_flop + pi_mem = 122.6 W < delta_pi = 145 W
    assert len([line for line in text.splitlines() if line.strip().startswith(("0.5 ", "8 "))]) == 2


@pytest.mark.parametrize("argv, message", [
    (["models", "logca", "nope"], "'nope': not a row of configs/presets/platforms/logca_table_4_3.yaml"),
    (["models", "logca", "sparc_t3_aes", "--g", "0 B"], "--g '0 B': expected a granularity > 0 B"),
    (["models", "logca", "sparc_t3_aes", "--g", "3"], "(no unit)"),
    (["models", "logca", "sparc_t3_aes", "--g", "3 GHz"], "'GHz' is a frequency unit"),
    (["models", "logca", "sparc_t3_aes", "--improve", "o=0.5"], "--improve 'o=0.5': expected PARAMETER=FACTOR"),
    (["models", "logca", "sparc_t3_aes", "--improve", "beta=2"], "--improve 'beta=2': expected PARAMETER=FACTOR"),
    (["models", "roofline", "nehalem_cpu", "--intensity", "-1"], "expected an arithmetic intensity from 1e-09 to "
                                                                  "1e+09 flop/B"),
    (["models", "roofline", "nehalem_cpu", "--intensity", "nan"], "expected an arithmetic intensity from 1e-09"),
    # beyond the range the roofline's per-byte terms overflow (a nan power row, exit 0, before)
    (["models", "roofline", "nehalem_cpu", "--intensity", "1e-320"], "expected an arithmetic intensity from 1e-09"),
    (["models", "roofline", "hd4000_nuc_gpu"], "no double-precision data"),
    (["models", "logca", "toy", "--table", "missing.yaml"], "missing.yaml: file not found"),
    (["models", "roofline", "toy", "--table", "missing.yaml"], "missing.yaml: file not found"),
    (["models", "roofline"], "given without an ENTRY"),
])
def test_bad_models_input_is_refused_with_one_message(argv: list[str], message: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "m.csv"
    errors = refused(argv + ["--out", str(out)], capsys, out)
    assert len(errors) == 1 and message in errors[0]


@pytest.mark.parametrize("argv, message", [
    (["models", "roofline", "--intensity", "1e10"], "--intensity '1e10': expected an arithmetic intensity from 1e-09"),
    (["models", "logca", "--g", "0"], "--g '0': expected a size with a unit"),
    (["models", "logca", "--g", "0 B"], "--g '0 B': expected a granularity > 0 B"),
    (["models", "logca", "--improve", "o=0.5"], "--improve 'o=0.5': expected PARAMETER=FACTOR"),
    (["models", "stencil", "--steps", "0"], "--steps 0: expected time steps >= 1"),
    (["models", "stencil", "--c-iter", "-1 ns"], "--c-iter '-1 ns': expected a time per point update > 0 s"),
])
def test_bad_options_are_refused_without_an_entry_too(argv: list[str], message: str,
                                                      capsys: pytest.CaptureFixture) -> None:
    """Without an ENTRY the command lists the table's rows, but an option it would use is still checked."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and len(captured.err.splitlines()) == 1


def test_a_bad_table_row_is_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "bad.yaml"
    table.write_text(HAND_TABLE.replace("acceleration: 4.0", "acceleration: fast"))
    errors = refused(["models", "logca", "--table", str(table)], capsys, tmp_path / "none")
    assert len(errors) == 1 and "platforms.toy.acceleration: expected a number, got 'fast'" in errors[0]


@pytest.mark.parametrize("key, value, expected", [
    ("host_frequency_hz", "1.0e-308", "expected a value >= 1 MHz, got 1e-308"),
    ("host_frequency_hz", "1.0e+308", "expected a value <= 100 GHz, got 1e+308"),
    ("overhead_cycles", "1.0e+308", "expected a value <= 10000000000.0, got 1e+308"),
    ("latency", "1.0e+308", "expected a value <= 10000000000.0, got 1e+308"),
    ("acceleration", "1.0e+308", "expected a value <= 1000000.0, got 1e+308"),
])
def test_a_table_value_outside_the_config_bounds_is_refused(key: str, value: str, expected: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    """A row is checked against the config bounds of the same quantities (a host clock, cycles, an acceleration),
    beyond which T1 would be inf s or g1 a wrong "never"."""
    table = tmp_path / "toy.yaml"
    table.write_text("\n".join(f"    {key}: {value}" if line.startswith(f"    {key}:") else line
                               for line in HAND_TABLE.splitlines()) + "\n")
    out = tmp_path / "l.csv"
    errors = refused(["models", "logca", "--table", str(table), "toy", "--out", str(out)], capsys, out)
    assert errors == [f"offsim: error: --table: {table}: platforms.toy.{key}: {expected}"]


def test_a_granularity_beyond_an_address_space_is_refused_naming_g(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """A granularity beyond the bound is refused naming --g, not the table's C and beta whose T0 it overflows."""
    out = tmp_path / "l.csv"
    errors = refused(["models", "logca", "sparc_t4_engine_aes", "--g", "1e308 B", "--out", str(out)], capsys, out)
    assert errors == ["offsim: error: --g '1e308 B': expected a granularity > 0 B and at most 2**64 B (16 EiB): a "
                      "64-bit address space holds no more"]


def test_a_table_takes_units_and_exponents_as_a_config_does(tmp_path: Path) -> None:
    """host_frequency_hz: 1 GHz and overhead_cycles: 1e2 (a string to YAML 1.1) read as 1e9 Hz and 100 cycles, as
    the bare numbers of the shipped tables do."""
    table = tmp_path / "units.yaml"
    table.write_text(HAND_TABLE.replace("1.0e+9", "1 GHz").replace("overhead_cycles: 100.0", "overhead_cycles: 1e2"))
    entry = load_logca_table(table)["toy"]
    assert entry.host_frequency_hz == 1e9 and entry.params.overhead_cycles == 100.0


def test_each_problem_of_a_table_is_a_line_of_its_own(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "bad.yaml"
    table.write_text(HAND_TABLE.replace("acceleration: 4.0", "acceleration: fast").replace("1.0e+9", "1 GB"))
    errors = refused(["models", "logca", "--table", str(table)], capsys, tmp_path / "none")
    assert len(errors) == 2 and all(";" not in e.split("expected")[0] for e in errors), errors
    assert "platforms.toy.host_frequency_hz: expected a frequency with a unit" in errors[0]
    assert "'GB' is a size unit" in errors[0] and "platforms.toy.acceleration: expected a number" in errors[1]


def _nehalem_row(**values: str) -> str:
    """A roofline table of the shipped nehalem_cpu row with ``values`` (key -> text) written over its own."""
    lines = ROOFLINE_TABLE.read_text().split("  ivy_bridge_nuc_cpu:")[0].splitlines()
    return "\n".join(next((f"    {k}: {v}" for k, v in values.items() if line.startswith(f"    {k}:")), line)
                     for line in lines) + "\n"


def test_a_roofline_table_takes_units_and_exponents_as_a_config_does(tmp_path: Path) -> None:
    """107 GFLOP/s, 122 W, 795 pJ/B, 108 nJ as 108000 pJ and 1.49e2 (a string to YAML 1.1) read as the bare numbers
    of the shipped table do, in the unit each key's name gives."""
    table = tmp_path / "units.yaml"
    table.write_text(_nehalem_row(peak_sp_gflop_per_s="107 GFLOP/s", pi0_w="122 W", eps_mem_pj_per_byte="795 pJ/B",
                                  eps_rand_nj_per_access="108000 pJ", rand_macc_per_s="1.49e2",
                                  peak_mem_gb_per_s="25.6 GB/s"))
    assert load_roofline_table(table)["nehalem_cpu"] == load_roofline_table(ROOFLINE_TABLE)["nehalem_cpu"]


def test_a_roofline_platform_named_by_a_number_is_listed_and_picked(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    """YAML reads a key ``7:`` as a number: the platform is named "7", as a LogCA table names it (it raised a
    TypeError in the listing and in the pick)."""
    table = tmp_path / "numbered.yaml"
    table.write_text(_nehalem_row().replace("  nehalem_cpu:", "  7:"))
    assert main(["models", "roofline", "--table", str(table)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("7 ")
    assert main(["models", "roofline", "7", "--table", str(table)]) == 0
    assert capsys.readouterr().out.startswith("7: Desktop CPU Nehalem")


def test_each_problem_of_a_roofline_table_is_a_line_of_its_own(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "bad.yaml"
    table.write_text(_nehalem_row(peak_mem_gb_per_s="25.6 GHz", delta_pi_w="-1", idle_w="fast", label="null"))
    errors = refused(["models", "roofline", "nehalem_cpu", "--table", str(table)], capsys, tmp_path / "none")
    where = f"offsim: error: --table: {table}: platforms.nehalem_cpu"
    assert errors == [
        f"{where}.label: expected a string, got null",
        f"{where}.peak_mem_gb_per_s: expected a bandwidth with a unit (B/s, kB/s, KB/s, MB/s, GB/s, TB/s, ...), got "
        "'25.6 GHz': 'GHz' is a frequency unit",
        f"{where}.idle_w: expected a power with a unit (W, mW, uW, µW, nW, pW, ...), got 'fast'",
        f"{where}.delta_pi_w: expected a positive value, got -1",
    ], errors


@pytest.mark.parametrize("key, value, expected, options", [
    ("peak_dp_gflop_per_s", "0", "expected a value >= 1 kflop/s, got 0", []),
    ("peak_mem_gb_per_s", "0", "expected a value >= 1 MB/s, got 0", []),
    ("eps_d_pj_per_flop", "0", "expected a positive value, got 0", []),
    ("delta_pi_w", "0", "expected a positive value, got 0", ["--power-cap"]),
    ("eps_d_pj_per_flop", "1.0e+308", "expected a value <= 1 uJ/flop, got 1e+308", []),
    ("pi0_w", "1.0e+308", "expected a value <= 1 MW, got 1e+308", []),
    ("peak_dp_gflop_per_s", "1.0e+308", "expected a value <= 1e+06 Tflop/s, got 1e+308", []),
])
def test_a_roofline_table_value_outside_the_config_bounds_is_refused(key: str, value: str, expected: str,
                                                                     options: list[str], tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture) -> None:
    """A zero or huge rate or cost is refused naming the table, the row and the key (not the model's internal
    name, tau_flop_s, nor with advice to change --precision)."""
    table = tmp_path / "bad.yaml"
    table.write_text(_nehalem_row(**{key: value}))
    out = tmp_path / "r.csv"
    errors = refused(["models", "roofline", "nehalem_cpu", "--table", str(table), *options, "--out", str(out)],
                     capsys, out)
    assert errors == [f"offsim: error: --table: {table}: platforms.nehalem_cpu.{key}: {expected}"]


def test_a_row_whose_t0_overflows_is_refused_naming_the_table_and_row(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "toy.yaml"
    table.write_text(HAND_TABLE.replace("\n    beta: 1.0", "\n    beta: 1000.0"))
    errors = refused(["models", "logca", "--table", str(table), "toy"], capsys, tmp_path / "none")
    assert errors == [f"offsim: error: {table}: toy: T0 = C g^beta overflows at g = 64 MiB (C 1, beta 1000); "
                      "expected C and beta whose T0 stays a finite number of cycles over the granularities asked for"]


def test_a_row_whose_closed_forms_overflow_and_an_improvement_beyond_a_float_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    table = tmp_path / "toy.yaml"
    table.write_text(HAND_TABLE.replace("\n    beta: 1.0", "\n    beta: 1.0e-300"))
    errors = refused(["models", "logca", "--table", str(table), "toy"], capsys, tmp_path / "none")
    assert errors == [f"offsim: error: {table}: toy: 000's closed forms of g1 and g_A/2 overflow (C 1, beta 1e-300); "
                      "expected C and beta of a kernel, such as 000 Table 4.3's"]
    errors = refused(["models", "logca", "sparc_t3_aes", "--improve", "C=1e308"], capsys, tmp_path / "none")
    assert len(errors) == 1 and errors[0].startswith("offsim: error: --improve C x1e+308: ")


@pytest.mark.parametrize("option, kind", [("--out", "CSV"), ("--plot", "PNG")])
def test_an_output_naming_a_directory_is_refused(option: str, kind: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    assert main(["models", "logca", "sparc_t3_aes", option, str(tmp_path)]) == 2
    assert f"is a directory; expected a .{kind.lower()} file path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_plots_are_drawn_for_both_models(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for argv, name in ((["logca", "sparc_t4_engine_aes", "apu_aes"], "l.png"),
                       (["roofline", "nehalem_cpu", "gtx680_kepler"], "r.png")):
        assert main(["models", *argv, "--plot", str(tmp_path / name)]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == f"written   {tmp_path / name}"
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")


def test_never_reached_granularities_read_never(tmp_path: Path) -> None:
    table = tmp_path / "slow.yaml"
    table.write_text(HAND_TABLE.replace("acceleration: 4.0", "acceleration: 1.0"))  # A = 1: never faster
    report = logca_report(load_logca_table(table)["toy"], [64.0])
    assert math.isinf(report.g1_bytes) and report.points[0].speedup < 1


def test_a_simulated_system_gets_the_roofline_measured_on_it(capsys: pytest.CaptureFixture) -> None:
    from simulator.studies.roofline import measure_machine
    from tests.conftest import DEFAULT_SYSTEM

    assert main(["models", "roofline", "nehalem_cpu", "--system", str(DEFAULT_SYSTEM), "--intensity", "64"]) == 0
    text = capsys.readouterr().out
    assert f"{DEFAULT_SYSTEM.stem}: i7-920 + DDR3-1600 (simulated)" in text and "nehalem_cpu: Desktop CPU" in text
    report = system_roofline_report(DEFAULT_SYSTEM, [64.0])
    measured = measure_machine(DEFAULT_SYSTEM)
    assert report.balance.b_tau == measured.tau_mem_s_per_byte / measured.tau_flop_s
    # far above the balance, the simulated host runs at its measured flop rate (8 GFLOP/s: 4 flop/cycle at 2 GHz)
    assert report.points[0].bound == "compute"
    assert report.points[0].gflop_per_s == pytest.approx(1e-9 / measured.tau_flop_s)
    assert report.points[0].gflop_per_s == pytest.approx(8.0, rel=0.01)


def test_a_system_whose_dram_cannot_hold_the_read_stream_is_refused(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    from tests.conftest import DEFAULT_SYSTEM

    small = tmp_path / "small.yaml"
    small.write_text(DEFAULT_SYSTEM.read_text().replace("dram: {preset: dram/ddr3_1600_mt41j256m4}",
                                                        "dram: {preset: dram/ddr3_1600_mt41j256m4, geometry: {rows: 64}}"))
    errors = refused(["models", "roofline", "--system", str(small), "--out", str(tmp_path / "r.csv")], capsys,
                     tmp_path / "r.csv")
    assert len(errors) == 1 and "read stream, more than" in errors[0] and str(small) in errors[0]


def test_improvements_price_accelerometer_s_what_if(hand_table: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    # at g = 400 B: T0 = 400; o/10 gives T1 = 10 + 100 = 110 cycles; A -> inf leaves T1 = o = 100 cycles
    out = tmp_path / "i.csv"
    assert main(["models", "logca", "toy", "--table", str(hand_table), "--g", "400 B", "--improve", "o=10",
                 "--improve", "A=inf", "--out", str(out), "--plot", str(tmp_path / "i.png")]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("g "))
    assert "o/10" in header and "A -> inf" in header
    with out.open() as fh:
        row = next(csv.DictReader(fh))
    assert float(row["speedup_o_10x"]) == pytest.approx(400 / 110)
    assert float(row["speedup_A_infx"]) == pytest.approx(4.0)
    assert (tmp_path / "i.png").read_bytes().startswith(b"\x89PNG")


def test_the_guide_names_the_models_that_draw_a_figure() -> None:
    """models/README.md says which subcommands of offsim models take --plot: those whose parser has it."""
    import argparse
    import re

    from simulator.cli import build_parser

    def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
        return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices

    models = subparsers(subparsers(build_parser())["models"])
    drawing = {name for name, p in models.items() if any("--plot" in a.option_strings for a in p._actions)}
    guide = (Path(__file__).resolve().parents[2] / "models" / "README.md").read_text()
    said = re.search(r"`--plot FILE.png` draws them \(([^;]+);", " ".join(guide.split()))
    assert said is not None and set(re.findall(r"`(\w+)`", said.group(1))) == drawing


@pytest.mark.parametrize("argv, message", [
    (["logca", "sparc_t4_engine_aes", "--improve", "o=10", "--improve", "o=10.0"],
     "--improve 'o=10.0': given twice (as 'o=10' before); expected each value once"),
    (["logca", "sparc_t4_engine_aes", "sparc_t4_engine_aes"],
     "ENTRY 'sparc_t4_engine_aes': given twice; expected each value once"),
    (["logca", "sparc_t4_engine_aes", "--g", "4 KiB", "--g", "4096 B"],
     "--g '4096 B': given twice (as '4 KiB' before); expected each value once"),
    (["roofline", "nehalem_cpu", "--intensity", "1", "--intensity", "1.0"],
     "--intensity '1.0': given twice (as '1' before); expected each value once"),
    (["stencil", "heat_2d", "--tile", "2,2,192", "--tile", "2,2,192"],
     "--tile '2,2,192': given twice; expected each value once"),
    (["stencil", "heat_2d", "heat_2d"], "STENCIL 'heat_2d': given twice; expected each value once"),
    (["ulist", "--q", "4", "--q", "4"], "--q 4: given twice; expected each value once"),
])
def test_a_value_given_twice_is_refused(argv: list[str], message: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture) -> None:
    """A repeated entry or option value is refused: it would print its rows (or a CSV column) twice."""
    out = tmp_path / "m.csv"
    errors = refused(["models", *argv, "--out", str(out)], capsys, out)
    assert errors == [f"offsim: error: {message}"]
