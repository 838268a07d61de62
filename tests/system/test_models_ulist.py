"""``offsim models ulist``: the U-list model priced from a study's measured inputs, without simulating."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from simulator.cli import main
from simulator.studies.fmm.model_eval import DEFAULT_MACHINE, load_machine, predict
from tests.conftest import ROOT, refused
from workloads import fmm_ulist


@pytest.fixture(scope="module")
def machine() -> dict:
    return load_machine(DEFAULT_MACHINE)


@pytest.mark.parametrize("q", [4, 8])
def test_the_study_points_are_priced_as_the_study_priced_them(machine: dict, q: int) -> None:
    """Same inputs, same rules (b by the LLC rule, pipelined b the model's fastest): the committed study's
    model columns to the last digit, for every placement and variant."""
    cross = pd.read_csv(ROOT / "results" / "fmm" / "crosscheck.csv")
    rows = cross[cross.q == q]
    assert len(rows) == 21  # CPU only and the LAP at DRAM, LLC, near memory and in the HBM stack
    for r in rows.itertuples():
        p = predict(machine, q, r.placement, r.variant, 240_000, "table2", 8 * 2**20)
        assert p.blocks == r.blocks
        assert (p.model.cycles / 1e6, p.model.ext_cycles / 1e6) == (r.model_mcycles, r.ext_mcycles)
        assert (p.model.energy_j, p.model.ext_energy_j) == (r.model_energy_j, r.ext_energy_j)


def test_a_point_the_study_did_not_run_gets_the_rules_b(machine: dict) -> None:
    p = predict(machine, 12, "lap-llc", "blocking", 240_000, "table2", 8 * 2**20)
    problem = fmm_ulist.build_problem(12, 240_000, "table2")
    assert p.n_q == 455 and p.blocks == len(fmm_ulist.variant_blocks(problem, "blocking", None, 8 * 2**20))
    assert p.model.ext_cycles > 0 and p.model.energy_j > 0
    given = predict(machine, 12, "lap-llc", "blocking", 240_000, "table2", 8 * 2**20, blocks=4)
    assert given.blocks == 4


def test_models_ulist_prints_and_writes_the_grid(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "u.csv"
    assert main(["models", "ulist", "--q", "6", "--placement", "cpu", "--placement", "lap-llc", "--variant",
                 "pipelining", "--out", str(out)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert "results/fmm/machine.json" in text[0] and text[-1] == f"written   {out}"
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["placement"], r["variant"]) for r in rows] == [("cpu", "orig"), ("lap-llc", "pipelining")]
    assert float(rows[1]["extended_s"]) == pytest.approx(float(rows[1]["extended_cycles"]) / 2e9)


def test_order_zero_is_priced_as_the_generator_builds_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """q = 0 (one point per leaf) is an order the fmm_ulist generator runs, so the model prices it too."""
    out = tmp_path / "u.csv"
    assert main(["models", "ulist", "--q", "0", "--n-points", "2000", "--placement", "cpu", "--out", str(out)]) == 0
    with out.open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["q"], row["n_q"]) == ("0", "1")


def test_the_figure_draws_both_models_against_q(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import simulator.studies.plots as plots
    from simulator.studies.fmm import model_eval as ulist_eval

    drawn, real = {}, plots.line_panels

    def spy(panels, path, **kw):  # note what is drawn, then draw it
        drawn.update({p.title: {s.label: (s.x, s.y) for s in p.series} for p in panels})
        return real(panels, path, **kw)

    monkeypatch.setattr(plots, "line_panels", spy)
    png = tmp_path / "u.png"
    assert main(["models", "ulist", "--q", "4", "--q", "6", "--placement", "cpu", "--placement", "lap-dram",
                 "--variant", "orig", "--variant", "pipelining", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.splitlines()[-1] == f"written   {png}"
    assert set(drawn) == {"cpu", "lap-dram"} and set(drawn["cpu"]) == {"orig, printed", "orig, extended"}
    machine = load_machine(DEFAULT_MACHINE)
    for q in (4, 6):
        p = ulist_eval.predict(machine, q, "lap-dram", "pipelining", 240_000, "table2", 8 * 2**20)
        i = drawn["lap-dram"]["pipelining, extended"][0].index(q)
        assert drawn["lap-dram"]["pipelining, extended"][1][i] == p.model.ext_cycles / 2e9
        assert drawn["lap-dram"]["pipelining, printed"][1][i] == p.model.cycles / 2e9


@pytest.mark.parametrize("argv, message", [
    (["--placement", "lap-pcie"], "--placement lap-pcie: not measured in this machine file"),
    (["--variant", "fast"], "--variant fast: unknown"),
    (["--density", "dense"], "--density dense: unknown"),
    (["--llc", "8"], "--llc '8': expected a size with a unit"),
    (["--n-points", "0"], "--n-points 0: expected an integer >= 1"),
    (["--n-points", "100000000000000"], "--n-points 100000000000000: expected at most 16,777,216"),
    (["--q", "-1"], "--q -1: expected an expansion order >= 0"),  # q = 0 runs, as the fmm_ulist generator's does
    (["--machine", "missing.json"], "--machine missing.json: file not found; expected an existing machine.json"),
    (["--machine", "/dev/zero"], "--machine /dev/zero: not a regular file"),
    (["--q", "4", "--llc", "4 KiB", "--placement", "lap-dram", "--variant", "pipelining"],
     "models ulist: an LLC of 4 KiB leaves a pipelined point 83,938 block counts to try (9,795 to 93,732); expected "
     "at most 3,000,000 blocks priced in all"),
])
def test_bad_ulist_input_is_refused_with_one_message(argv: list[str], message: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "u.csv"
    errors = refused(["models", "ulist", *argv, "--out", str(out)], capsys, out)
    assert len(errors) == 1 and message in errors[0]


def test_a_file_that_is_not_a_study_machine_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for text, message in (("{", "not JSON"), (json.dumps({"dims": {}}), "w_c_bytes_per_s, "),
                          ('{"w_c_bytes_per_s": ' + "9" * 5000 + "}", "a number of more than 4300 digits"),
                          ('{"dims": {}, "dims": {}}', "dims: named twice; expected each key once")):
        bad = tmp_path / "machine.json"
        bad.write_text(text)
        errors = refused(["models", "ulist", "--machine", str(bad)], capsys, tmp_path / "none")
        assert len(errors) == 1 and message in errors[0] and str(bad) in errors[0]


_ABSENT = object()  # the key left out of the machine file


@pytest.mark.parametrize("key, value, message", [
    ("w_c_bytes_per_s", "abc", 'w_c_bytes_per_s: expected a finite number, got "abc"'),
    ("f_c_flops_per_s", None, "f_c_flops_per_s: expected a finite number, got null"),
    ("f_c_flops_per_s", 10**400, "f_c_flops_per_s: expected a finite number, got 1000"),  # beyond a float
    ("llc_residency", [[0.9, 10**400]], "llc_residency: expected a list of one or more rows of 2 finite numbers"),
    ("llc_residency", [1], "llc_residency: expected a list of one or more rows of 2 finite numbers, got [1]"),
    ("llc_residency", [[0.9]], "llc_residency: expected a list of one or more rows of 2 finite numbers, got [[0.9]]"),
    ("lap-llc.pipelined_contention", [[35.0, 2.2]],
     "lap-llc.pipelined_contention: expected a list of one or more rows of 3"),
    # a study writes a curve or factors it measured, or leaves the key out: an empty list priced without them
    ("lap-llc.pipelined_contention", [], "lap-llc.pipelined_contention: expected a list of one or more rows of 3"),
    ("llc_residency", [], "llc_residency: expected a list of one or more rows of 2 finite numbers, got []"),
    ("lap-llc.w_l_bytes_per_s", None, "lap-llc.w_l_bytes_per_s: expected a finite number, got null"),
    ("dims", {"4": {"n_q": 35}}, "dims: expected, by q (digits 0-9, no leading zero), the counts n_q, n_oct and n_u"),
    # a q that str.isdigit takes and int refuses ("²") or reads as another q ("04", "٤")
    ("dims", {"²": {"n_q": 35, "n_oct": 6833, "n_u": 171395}}, "dims: expected, by q (digits 0-9, no leading zero)"),
    ("dims", {"04": {"n_q": 35, "n_oct": 6833, "n_u": 171395}}, "dims: expected, by q (digits 0-9, no leading zero)"),
    ("class_counts", {"٤": [1, 2]}, "class_counts: expected, by q (digits 0-9, no leading zero), a list"),
    ("lap-llc.coupling", 3, "lap-llc.coupling: expected a coupling name, got 3"),
    ("w_c_bytes_per_s", 0, "w_c_bytes_per_s: expected a value >= 1 MB/s, got 0"),
    ("eps_byte_dram_dma_j", -1e-10, "eps_byte_dram_dma_j: expected a finite number >= 0 (J or W), got -1e-10"),
    ("lap-llc.lap_static_power_w", -0.5, "lap-llc.lap_static_power_w: expected a finite number >= 0 (J or W)"),
    ("llc_residency", "[" * 100_000 + "]" * 100_000, "nested too deeply to read"),
    ("lap-llc.eps_flop_lap_j", _ABSENT, "lap-llc.eps_flop_lap_j missing; expected every figure the study measured "
                                        "for lap-llc"),
])
def test_a_machine_file_with_a_value_of_the_wrong_kind_is_named(key: str, value, message: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture) -> None:
    """Each entry of the machine file is checked before a model reads it; the message names the file."""
    machine = json.loads(DEFAULT_MACHINE.read_text())
    bad = tmp_path / "machine.json"
    if isinstance(value, str) and value.startswith("["):  # raw JSON text, nested deeper than the decoder goes
        bad.write_text(json.dumps(machine)[:-1] + f', "{key}x": {value}}}')
    elif value is _ABSENT:
        bad.write_text(json.dumps({k: v for k, v in machine.items() if k != key}))
    else:
        bad.write_text(json.dumps({**machine, key: value}))
    errors = refused(["models", "ulist", "--machine", str(bad), "--q", "4"], capsys, tmp_path / "none")
    assert len(errors) == 1 and message in errors[0] and str(bad) in errors[0]


@pytest.mark.parametrize("key, value, expected", [
    ("w_c_bytes_per_s", 1e-308, "expected a value >= 1 MB/s, got 1e-308"),
    ("lap-llc.w_l_bytes_per_s", 1e308, "expected a value <= 100 TB/s, got 1e+308"),
    ("f_c_flops_per_s", 1e-308, "expected a value >= 1 kflop/s, got 1e-308"),
    ("static_power_w", 1e308, "expected a value <= 1 MW, got 1e+308"),
    ("eps_flop_cpu_j", 1e308, "expected a value <= 1 uJ/flop, got 1e+308"),
    ("eps_byte_dram_j", 1e308, "expected a value <= 1 uJ/B, got 1e+308"),
    ("lap-llc.evict_cycles_per_line", 1e308, "expected a value <= 10000000000.0, got 1e+308"),
    ("access_rate_per_s", 1e-308, "expected a value >= 1000.0, got 1e-308"),
    ("dims", {}, "expected, by q (digits 0-9, no leading zero), the counts n_q, n_oct and n_u (whole numbers >= 1) "
                 "of one q or more, got {}"),
])
def test_a_machine_figure_outside_the_config_bounds_is_refused(key: str, value, expected: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    """A finite but absurd figure would price a point at an infinite time or energy; an empty dims leaves no q to
    price by default: each is refused naming the file and the key, before any file is written."""
    bad = tmp_path / "machine.json"
    bad.write_text(json.dumps({**json.loads(DEFAULT_MACHINE.read_text()), key: value}))
    out = tmp_path / "u.csv"
    argv = ["--placement", "cpu", "--placement", "lap-llc"] + ([] if key == "dims" else ["--q", "4"])
    errors = refused(["models", "ulist", "--machine", str(bad), *argv, "--out", str(out)], capsys, out)
    assert errors == [f"offsim: error: --machine {bad}: {key}: {expected}"]


def test_more_blocks_than_interactions_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """b above N_U would be cut to N_U without a word; the limit is N_U at the q asked for."""
    out = tmp_path / "u.csv"
    errors = refused(["models", "ulist", "--q", "4", "--placement", "lap-llc", "--variant", "blocking", "--blocks",
                      "100000000", "--out", str(out)], capsys, out)
    assert errors == ["offsim: error: --blocks 100000000: more blocks than the U-list has interactions at q = 4 "
                      "(N_U = 171,395); expected at most 171,395"]


def test_pipelined_points_beyond_the_measured_gemm_heights_are_flagged(capsys: pytest.CaptureFixture) -> None:
    machine = load_machine(DEFAULT_MACHINE)
    heights = [h for h, _, _ in machine["lap-llc.pipelined_contention"]]
    assert main(["models", "ulist", "--q", "8", "--q", "20", "--placement", "lap-llc", "--variant", "pipelining"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == [f"note: lap-llc pipelining at N_q = 1771: the contention of the host with the concurrent GEMMs "
                     f"was measured at N_q = {heights[0]:g}..{heights[-1]:g}; the extended model holds the nearest "
                     "measured value there"]
