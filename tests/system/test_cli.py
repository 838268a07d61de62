"""The offsim CLI: run directories, determinism, and bad input (exit 2, one message, nothing written)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from simulator.cli import main
from tests.conftest import CONFIGS, DEFAULT_SYSTEM, ROOT, refused
from workloads import micro
from workloads.trace import TraceBuilder, write_trace

SMALL_STREAM = "params:\n  kind: triad\n  array_bytes: 1 MiB\n"
#: the energies every cache level declares (values irrelevant to the tests that use it)
LEVEL_ENERGIES = "read_energy_j: 1 nJ, write_energy_j: 1 nJ, line_energy_j: 1 nJ, energy_j_per_byte: 1 pJ/B"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def workload(tmp_path: Path) -> Path:
    return _write(tmp_path / "w.yaml", "name: small\ngenerator: stream\n" + SMALL_STREAM)


def _system_with(tmp_path: Path, extra: str) -> Path:
    name = f"sys{len(list(tmp_path.glob('sys*.yaml')))}.yaml"
    return _write(tmp_path / name, "name: t\nhost: {preset: cpu/i7_920}\n"
                  "dram: {preset: dram/ddr3_1600_mt41j256m4}\n" + extra)


def test_run_writes_a_complete_run_directory(tmp_path, workload, capsys):
    out = tmp_path / "run"
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["config.resolved.yaml", "results.parquet", "summary.json"]
    s = json.loads((out / "summary.json").read_text())
    for key in ("simulated_time_s", "host_cycles", "energy_total_j", "energy_by_component_j", "caches", "dram"):
        assert key in s
    for level in ("L1D", "L2", "LLC"):
        assert {"accesses", "hits", "misses", "writebacks"} <= set(s["caches"][level])
    assert {"reads", "writes", "activates", "row_hits", "energy_j"} <= set(s["dram"])
    assert "energy" in capsys.readouterr().out
    table = pq.read_table(out / "results.parquet").to_pandas()
    units = dict(zip(table.loc[table.component == "dram", "quantity"], table.loc[table.component == "dram", "unit"]))
    assert (units["reads"], units["activates"], units["row_conflicts"], units["bytes_read"]) == (
        "lines", "commands", "requests", "B")
    assert "" not in set(table.unit) and "count" not in set(table.loc[table.component.str.startswith("cache"), "unit"])
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_memory_without_currents_shows_its_energy_as_not_known(tmp_path, workload, capsys):
    # the HBM3 preset declares no currents: its energy and the total are NaN, printed as "not known" and last
    system = _write(tmp_path / "hbm3.yaml", "name: t\nhost: {preset: cpu/i7_920}\ncaches: {preset: caches/i7_920}\n"
                    "dram: {preset: dram/hbm3_8gb_6400, interface_energy_j_per_bit: 0 pJ/bit}\n")
    assert main(["run", str(system), str(workload), "--out", str(tmp_path / "run")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert next(l for l in lines if l.startswith("energy ")).split() == ["energy", "not", "known"]
    components = [l.split(maxsplit=1) for l in lines if l.startswith("  ") and not l.startswith("   ")]
    assert components[-1] == ["dram", "not known"] and "nan" not in "\n".join(lines).lower()
    assert all(text != "not known" for _, text in components[:-1])


def test_same_inputs_give_identical_results(tmp_path, workload):
    for name in ("a", "b"):
        assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(tmp_path / name)]) == 0
    a = pq.read_table(tmp_path / "a" / "results.parquet")
    b = pq.read_table(tmp_path / "b" / "results.parquet")
    assert a.equals(b)
    assert (tmp_path / "a" / "summary.json").read_text() == (tmp_path / "b" / "summary.json").read_text()


def test_out_replaces_a_previous_run_but_never_a_file_or_other_data(tmp_path, workload, capsys):
    run_dir = tmp_path / "run"
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(run_dir)]) == 0
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(run_dir)]) == 0  # a rerun replaces it
    capsys.readouterr()
    a_file = _write(tmp_path / "notes.txt", "keep me\n")
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    _write(data_dir / "precious.csv", "1,2\n")
    for out, words in ((a_file, ["is not a directory"]), (data_dir, ["precious.csv", "not a run's"])):
        assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"--out {out}" in err[0] and "expected" in err[0], err
        assert all(w in err[0] for w in words), err
    assert a_file.read_text() == "keep me\n"
    assert sorted(p.name for p in data_dir.iterdir()) == ["precious.csv"]
    assert sorted(p.name for p in run_dir.iterdir()) == ["config.resolved.yaml", "results.parquet", "summary.json"]


def test_set_override_changes_the_resolved_config(tmp_path, workload):
    out = tmp_path / "run"
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(out),
                 "--set", "caches.levels.L2.size_bytes=512 KiB"]) == 0
    assert "512 KiB" in (out / "config.resolved.yaml").read_text()


def _bad_system_cases(tmp_path: Path) -> dict[str, tuple[Path, list[str]]]:
    caches = "caches:\n  preset: caches/i7_920\n"
    return {
        "unknown key": (_system_with(tmp_path, caches + "  line_bytez: 64 B\n"), ["line_bytez", "unknown key"]),
        "duplicate key": (_system_with(tmp_path, caches + "dram: {}\n"), ["dram", "duplicate key"]),
        "bad unit": (_system_with(tmp_path, caches + "  line_bytes: 64 GHz\n"), ["caches.line_bytes", "size"]),
        "negative size": (_system_with(tmp_path, caches + "  levels:\n    - {name: L1D, size_bytes: -32 KiB, ways: 8,"
                                       " latency_cycles: 4, " + LEVEL_ENERGIES + "}\n"),
                          ["caches.levels[0].size_bytes", "positive"]),
        "zero size": (_system_with(tmp_path, caches + "  levels:\n    - {name: L1D, size_bytes: 0 KiB, ways: 8,"
                                   " latency_cycles: 4, " + LEVEL_ENERGIES + "}\n"),
                      ["caches.levels[0].size_bytes", "positive"]),
        "non-power-of-two sets": (_system_with(tmp_path, caches + "  levels:\n    - {name: L1D, size_bytes: 48 KiB, "
                                               "ways: 8, latency_cycles: 4, " + LEVEL_ENERGIES + "}\n"),
                                  ["caches", "power-of-two number of sets"]),
        "unknown replacement": (_system_with(tmp_path, caches + "  replacement: plru\n"),
                                ["caches.replacement", "'lru', 'mru_bits'"]),
        "too many ways for use bits": (_system_with(tmp_path, caches + "  replacement: mru_bits\n  levels:\n"
                                                    "    - {name: L1D, size_bytes: 256 KiB, ways: 64, latency_cycles: 4,"
                                                    " " + LEVEL_ENERGIES + "}\n"),
                                       ["caches", "64 ways; the mru_bits replacement allows at most 63"]),
        "cache beyond the simulator's bound": (_system_with(tmp_path, caches + "  levels:\n    - {name: L1D, size_bytes: "
                                                             "1024 TiB, ways: 8, latency_cycles: 4, "
                                                             + LEVEL_ENERGIES + "}\n"),
                                               ["caches.levels[0].size_bytes", "<= 4 GiB, got 1024 TiB"]),
        "missing file": (tmp_path / "nope.yaml", ["nope.yaml", "file not found"]),
    }


@pytest.mark.parametrize("case", ["unknown key", "duplicate key", "bad unit", "negative size", "zero size",
                                  "non-power-of-two sets", "unknown replacement", "too many ways for use bits",
                                  "cache beyond the simulator's bound", "missing file"])
def test_bad_system_config_exits_2_and_writes_nothing(tmp_path, workload, capsys, case):
    path, expected = _bad_system_cases(tmp_path)[case]
    out = tmp_path / "run"
    assert main(["run", str(path), str(workload), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(path.name) in err[0]
    for word in expected:
        assert word in err[0]
    assert "expected" in err[0]
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_bad_set_override_names_the_option(tmp_path, workload, capsys):
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(tmp_path / "r"),
                 "--set", "host.frequency_hz=2 GB"]) == 2
    err = capsys.readouterr().err
    assert "--set host.frequency_hz=2 GB" in err and "frequency" in err
    assert not (tmp_path / "r").exists()


def test_bad_workload_parameter_unit(tmp_path, capsys):
    w = _write(tmp_path / "w.yaml", "generator: stream\nparams: {kind: read, array_bytes: 3 GHz}\n")
    assert main(["run", str(DEFAULT_SYSTEM), str(w), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "w.yaml: params.array_bytes" in err and "size" in err
    assert not (tmp_path / "r").exists()


def test_corrupt_parquet_trace_exits_2(tmp_path, capsys):
    trace = tmp_path / "t.parquet"
    write_trace(micro.stream("read", 1 << 20), trace)
    data = trace.read_bytes()
    trace.write_bytes(data[: len(data) // 2])
    w = _write(tmp_path / "w.yaml", "name: corrupt\ntrace: t.parquet\n")
    assert main(["run", str(DEFAULT_SYSTEM), str(w), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "t.parquet" in err
    assert not (tmp_path / "r").exists()
    assert main(["validate", str(trace)]) == 2


def test_workload_with_a_control_character_exits_2(tmp_path, capsys):
    """Valid UTF-8 that YAML refuses (a NUL byte, as in a truncated or binary file): the YAML
    reader's error is reported like any other bad input, in one line."""
    w = tmp_path / "w.yaml"
    w.write_bytes(b"name: small\x00\ngenerator: stream\n")
    assert main(["run", str(DEFAULT_SYSTEM), str(w), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "w.yaml: invalid YAML: character #x0000 at offset 11" in err[0] and "expected" in err[0]
    assert not (tmp_path / "r").exists()


def test_trace_naming_a_unit_the_system_lacks_exits_2(tmp_path, capsys):
    trace = tmp_path / "t.parquet"
    write_trace(micro.compute_only(1000, unit="lap"), trace)
    w = _write(tmp_path / "w.yaml", "name: lap-trace\ntrace: t.parquet\n")
    assert main(["run", str(DEFAULT_SYSTEM), str(w), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "t.parquet" in err[0] and "unit" in err[0] and "lap" in err[0] and "host" in err[0]
    assert not (tmp_path / "r").exists()


def test_validate_accepts_the_shipped_configs(capsys):
    """Each shipped workload beside a system that runs it: checked against that system, rows and commands."""
    accelerated = {"fmm_ulist_q4.yaml": "lap_llc.yaml", "systolic_gemm.yaml": "systolic_dram.yaml"}
    host_workloads = sorted(str(p) for p in (CONFIGS / "workloads").glob("*.yaml") if p.name not in accelerated)
    pairs = [[str(DEFAULT_SYSTEM), *host_workloads]]
    pairs += [[str(CONFIGS / "systems" / system), str(CONFIGS / "workloads" / workload)]
              for workload, system in accelerated.items()]
    for files in pairs:
        assert main(["validate", *files]) == 0
        out = capsys.readouterr().out
        assert out.count(": ok") == len(files) and out.count("its rows and commands fit") == len(files) - 1


@pytest.mark.parametrize("argv", [["study", str(ROOT / "configs" / "studies" / "micro_sweep.yaml")],
                                  ["reproduce", "choi-roofline", "--quick"]])
def test_out_naming_a_file_exits_2_before_any_work(tmp_path, capsys, argv):
    a_file = _write(tmp_path / "notes.txt", "keep me\n")
    assert main([*argv, "--out", str(a_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--out {a_file}: exists and is not a directory" in err[0], err
    assert a_file.read_text() == "keep me\n"


@pytest.mark.parametrize("command", [["run", str(DEFAULT_SYSTEM), "WORKLOAD"],
                                     ["study", str(ROOT / "configs" / "studies" / "micro_sweep.yaml")],
                                     ["reproduce", "choi-roofline", "--quick"]])
@pytest.mark.parametrize("out, says", [("", "--out '': empty; expected a directory path"),
                                       ("b" * 300, "a part of 300 bytes (bbbbbbbbbbbbbbbbbbbb...); expected at "
                                                   "most 255 bytes per file name"),
                                       ("x/" + "b" * 300 + "/y", "a part of 300 bytes")])
def test_out_the_system_cannot_name_exits_2_before_any_work(tmp_path, workload, capsys, monkeypatch, command, out,
                                                           says):
    monkeypatch.chdir(tmp_path)  # a relative --out lands here, if anything is written
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [str(workload) if a == "WORKLOAD" else a for a in command]
    assert main([*argv, "--out", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_workload_larger_than_the_dram_exits_2_before_running(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["run", str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "random_access.yaml"),
            "--param", "footprint_bytes=8 GiB", "--param", "n_accesses=1000", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ("random_access.yaml (with --param footprint_bytes=8 GiB --param n_accesses=1000): row 0: "
                              "the host's accesses reach 7.992 GiB of memory") in err[0], err
    assert "4 GiB of the system's DRAM" in err[0] and "Traceback" not in err[0]
    assert list(tmp_path.iterdir()) == []


def test_out_below_a_file_or_in_an_unwritable_place_exits_2_before_the_run(tmp_path, workload, capsys):
    a_file = _write(tmp_path / "notes.txt", "keep me\n")
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(a_file / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: --out {a_file / 'run'}: {a_file} is a file; expected a path whose parents "
                   "are directories"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "w.yaml"]


def test_a_default_output_directory_below_a_file_exits_2_before_the_run(tmp_path, workload, capsys, monkeypatch):
    # without --out the run goes to results/runs/<name>-<hash>: checked before the run, and named as the default
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "results", "keep me\n")
    calls = []
    monkeypatch.setattr("workloads.spec.generate_trace", lambda *a: calls.append(a))
    assert main(["run", str(DEFAULT_SYSTEM), str(workload)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("offsim: error: the default output directory (no --out) results/runs/small-")
    assert err.endswith(": results is a file; expected a path whose parents are directories")
    assert not calls and sorted(p.name for p in tmp_path.iterdir()) == ["results", "w.yaml"]


def test_run_directory_gets_the_permissions_of_the_umask(tmp_path, workload):
    old = os.umask(0o022)
    try:
        assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(tmp_path / "run")]) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "run").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "run" / "summary.json").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("param, expected", [
    ("n_hop=3", "--param n_hop=3: unknown parameter of pointer_chase (did you mean n_hops?)"),
    ("n_hops", "--param n_hops: expected key=value, e.g. --param array_bytes='8 MiB'"),
    ("footprint_bytes=1 GHz", "--param footprint_bytes=1 GHz (over {w}): params.footprint_bytes: expected a size"),
    ("seed=-1", "--param seed=-1 (over {w}): params.seed: expected a non-negative integer, got -1"),
    ("seed=abc", "--param seed=abc (over {w}): params.seed: expected an integer, got 'abc'"),
    ("n_hops=-3", "--param n_hops=-3 (over {w}): params.n_hops: "),  # the generator's own refusal, named too
])
def test_bad_param_option_is_named_in_the_message(tmp_path, capsys, param, expected):
    argv = ["run", str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "pointer_chase.yaml"), "--param", param,
            "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    expected = expected.format(w=CONFIGS / "workloads" / "pointer_chase.yaml")
    assert len(err) == 1 and err[0].startswith(f"offsim: error: {expected}"), err
    assert not (tmp_path / "r").exists()


def test_a_trace_the_system_refuses_names_the_params_that_made_it(tmp_path, capsys):
    """The trace's rows are checked against the system after generation: the refusal names the --param too."""
    argv = ["run", str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "stream_triad.yaml"), "--param", "threads=2",
            "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"offsim: error: {CONFIGS / 'workloads' / 'stream_triad.yaml'} (with --param threads=2): row 3, column "
        "'thread': thread 1, but the system has 1 core"), err
    assert not (tmp_path / "r").exists()


def test_validate_names_the_trace_file_of_a_row_the_system_refuses_as_run_does(tmp_path, capsys):
    b = TraceBuilder()
    b.compute("host", "a", flops=10, thread=7)
    write_trace(b.to_table(), tmp_path / "t.parquet")
    w = _write(tmp_path / "w.yaml", "name: t\ntrace: t.parquet\n")
    messages = []
    for argv in (["validate", str(DEFAULT_SYSTEM), str(w)], ["run", str(DEFAULT_SYSTEM), str(w), "--out",
                                                               str(tmp_path / "r")]):
        assert main(argv) == 2
        messages.append(capsys.readouterr().err.strip().splitlines()[-1])
    assert messages[0] == messages[1] and messages[0].startswith(f"offsim: error: {tmp_path / 't.parquet'}: row 0, "
                                                                 "column 'thread': thread 7"), messages


def test_param_option_on_a_trace_workload_is_refused(tmp_path, capsys):
    write_trace(micro.stream("read", 1 << 16), tmp_path / "t.parquet")
    w = _write(tmp_path / "w.yaml", "name: t\ntrace: t.parquet\n")
    argv = ["run", str(DEFAULT_SYSTEM), str(w), "--param", "array_bytes=1 MiB", "--out", str(tmp_path / "r")]
    assert refused(argv, capsys, tmp_path / "r") == [
        f"offsim: error: --param array_bytes=1 MiB: {w} replays a trace file; expected no workload parameters"]


def test_swapped_run_arguments_give_one_message(tmp_path, workload, capsys):
    assert main(["run", str(workload), str(DEFAULT_SYSTEM), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {workload}: is a workload (the two files are swapped); expected a system "
                   "config first: offsim run SYSTEM.yaml WORKLOAD.yaml"]


def test_a_null_or_a_flag_is_quoted_as_the_file_writes_it(tmp_path, capsys):
    """name: null reads "got null" (not Python's None); a section given as a number names the section."""
    system = _write(tmp_path / "s.yaml", "name: null\nhost: 5\ncaches: {preset: caches/i7_920}\n"
                    "dram: {preset: dram/ddr3_1600_mt41j256m4}\n")
    assert main(["validate", str(system)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {system}: name: expected a string, got null",
                   f"offsim: error: {system}: host: expected a host section (a mapping of its parameters), got 5"]


def test_missing_section_is_named_without_python_class_names(tmp_path, capsys):
    system = _write(tmp_path / "s.yaml", "name: t\nhost: {preset: cpu/i7_920}\ncaches: {preset: caches/i7_920}\n")
    assert main(["validate", str(system)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {system}: dram: missing; expected a dram section (a mapping of its parameters)"]
    # with its article: "an interface section"
    _write(system, system.read_text() + "dram: {preset: dram/ddr3_1600_mt41j256m4}\n"
           "accelerators:\n  lap: {preset: accel/lap_4x4}\n")
    assert main(["validate", str(system)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {system}: accelerators.lap.interface: missing; expected an interface section "
                   "(a mapping of its parameters)"]


@pytest.mark.parametrize("system, override, expected", [
    ("lap_llc", "accelerators.lap.aes_cycles_per_block=5", "accelerators.lap.aes_cycles_per_block: unknown key of a "
                                                           "'lap' entry; expected one of: cores, elem_bytes"),
    ("lap_llc", "accelerators.lapp.frequency_hz=1 GHz", "accelerators.lapp: no such entry in the system; expected "
                                                        "one of: lap"),
    ("i7_920_ddr3", "accelerators.lap.frequency_hz=1 GHz", "accelerators.lap: no such entry in the system; expected "
                                                           "one of: (none: the system has no accelerators)"),
])
def test_accelerator_override_names_the_entry_and_its_kinds_keys(tmp_path, workload, capsys, system, override,
                                                                 expected):
    argv = ["run", str(CONFIGS / "systems" / f"{system}.yaml"), str(workload), "--set", override,
            "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"offsim: error: --set {override}: {expected}"), err
    assert "KINDS" not in err[0] and not (tmp_path / "r").exists()


def test_validate_checks_studies_and_generates_workloads(tmp_path, capsys):
    studies = sorted(str(p) for p in (ROOT / "configs" / "studies").glob("*.yaml"))
    assert main(["validate", *studies]) == 0
    out = capsys.readouterr().out
    assert out.count(": ok") == len(studies) and "micro-sweep', 15 points" in out
    bogus = _write(tmp_path / "w.yaml", "name: w\ngenerator: stream\nparams: {kind: bogus, array_bytes: 1 MiB}\n")
    no_trace = _write(tmp_path / "t.yaml", "name: t\ntrace: missing.parquet\n")
    bad_study = _write(tmp_path / "s.yaml", "study: bogus_kind\n")
    assert main(["validate", str(bogus), str(no_trace), str(bad_study)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3, err
    assert "w.yaml: params.kind: 'bogus'; expected one of read, write, copy, scale, add, triad" in err[0]
    assert "missing.parquet" in err[1]
    assert f"{bad_study}: study: 'bogus_kind' is not a paper study kind; expected one of: fmm_placement" in err[2]


def test_out_of_memory_is_reported_as_too_large_an_input(tmp_path, workload, capsys, monkeypatch):
    import workloads.spec as wl

    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 745. GiB")

    monkeypatch.setattr(wl, "generate_trace", exhausted)
    assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("offsim: error: out of memory (Unable to allocate 745. GiB)"), err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("kind, expected", [
    ("fmm_placement", "qs: missing; expected a list, each item an integer"),
    ("logca_gpu", "platforms: missing; expected a list, each item one of 'discrete', 'apu', 'hsa'"),
    ("roofline", "intensities: missing; expected a list, each item a number"),
    ("stencil_tiling", "host_tile: missing; expected a host tile section (a mapping of its parameters)"),
])
def test_a_paper_study_run_by_offsim_reports_under_offsim_and_describes_lists(tmp_path, capsys, kind, expected):
    study = _write(tmp_path / "s.yaml", f"study: {kind}\nfoo: 1\n")
    err = refused(["study", str(study), "--out", str(tmp_path / "out")], capsys, tmp_path / "out")
    # every line under offsim's name, as its other commands report, not the paper runner's module name
    assert err and all(line.startswith(f"offsim: error: {study}: ") for line in err), err
    assert f"offsim: error: {study}: foo: unknown key" in err[0]
    assert f"offsim: error: {study}: {expected}" in err


def test_version_names_the_installed_distribution(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"offsim {version('offsim')}"


def _crosscheck(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="") as fh:
        return {row["quantity"]: row for row in csv.DictReader(fh)}


def test_crosscheck_writes_the_roofline_beside_the_run(tmp_path, capsys):
    from simulator.studies.roofline import CROSSCHECK_COLUMNS

    stream = _write(tmp_path / "triad.yaml", "name: triad\ngenerator: stream\n" + SMALL_STREAM)
    out = tmp_path / "r"
    assert main(["run", str(DEFAULT_SYSTEM), str(stream), "--out", str(out), "--crosscheck"]) == 0
    printed = capsys.readouterr().out
    assert "roofline  time" in printed and "roofline  energy" in printed
    with (out / "crosscheck.csv").open(newline="") as fh:
        assert tuple(next(csv.reader(fh))) == CROSSCHECK_COLUMNS
    rows = _crosscheck(out / "crosscheck.csv")
    value = {k: float(r["simulated"]) for k, r in rows.items()}
    summary = json.loads((out / "summary.json").read_text())
    # the inputs are the run's own: its flops and its DRAM bytes, and its simulated time and energy
    assert value["DRAM traffic Q"] == summary["dram"]["bytes_read"] + summary["dram"]["bytes_written"]
    assert value["time"] == summary["simulated_time_s"] and value["energy"] == pytest.approx(summary["energy_total_j"])
    # the prediction is the roofline of those inputs: T = max(W tau_flop, Q tau_mem), E = W eps + Q eps + pi0 T
    t = max(value["work W"] * value["tau_flop"], value["DRAM traffic Q"] * value["tau_mem"])
    e = value["work W"] * value["eps_flop"] + value["DRAM traffic Q"] * value["eps_mem"] + value["pi_0"] * t
    assert float(rows["time"]["model"]) == pytest.approx(t, rel=1e-12)
    assert float(rows["energy"]["model"]) == pytest.approx(e, rel=1e-12)
    assert float(rows["time"]["error"]) == pytest.approx(value["time"] / t - 1, rel=1e-9)
    # same inputs, same bytes
    again = tmp_path / "again"
    assert main(["run", str(DEFAULT_SYSTEM), str(stream), "--out", str(again), "--crosscheck"]) == 0
    assert (again / "crosscheck.csv").read_bytes() == (out / "crosscheck.csv").read_bytes()


def test_crosscheck_holds_where_the_roofline_does_and_says_where_it_does_not(tmp_path):
    # compute-bound with 1/100 of the calibration run's flops: the model's own regime, not the fitted run
    compute = _write(tmp_path / "c.yaml", "name: c\ngenerator: compute_only\nparams: {flops: 1000000}\n")
    # dependent misses: the roofline has no latency term, so it predicts a small fraction of the time
    chase = _write(tmp_path / "p.yaml", "name: p\ngenerator: pointer_chase\n"
                   "params: {n_hops: 2000, footprint_bytes: 16 MiB, seed: 1}\n")
    errors = {}
    for name, workload in (("compute", compute), ("chase", chase)):
        assert main(["run", str(DEFAULT_SYSTEM), str(workload), "--out", str(tmp_path / name), "--crosscheck"]) == 0
        errors[name] = float(_crosscheck(tmp_path / name / "crosscheck.csv")["time"]["error"])
    assert abs(errors["compute"]) < 0.01
    assert errors["chase"] > 3.0


def test_crosscheck_refuses_an_offloading_workload_before_running(tmp_path, capsys):
    # a LAP GEMM: the roofline describes the host alone, and no other model is set beside it
    gemm = _write(tmp_path / "g.yaml", "name: g\ngenerator: lap_gemm\nparams: {m: 64, n: 64, k: 64}\n")
    out = tmp_path / "r"
    argv = ["run", str(CONFIGS / "systems" / "lap_dram.yaml"), str(gemm), "--out", str(out), "--crosscheck"]
    err = refused(argv, capsys, out)
    assert len(err) == 1 and err[0].startswith("offsim: error: --crosscheck: ") and "accelerator command rows" in err[0]


def test_crosscheck_refuses_an_fmm_run_on_a_placement_the_u_list_model_does_not_describe(tmp_path, capsys):
    # the U-list model prices the host and 003's LAP; GEMMs on a systolic array are refused, not a traceback
    fmm = _write(tmp_path / "f.yaml", "name: f\ngenerator: fmm_ulist\n"
                                      "params: {q: 2, n_points: 2000, placement: systolic, variant: orig}\n")
    out = tmp_path / "r"
    argv = ["run", str(CONFIGS / "systems" / "systolic_fp64_llc.yaml"), str(fmm), "--out", str(out), "--crosscheck"]
    err = refused(argv, capsys, out)
    assert err == [f"offsim: error: --crosscheck: {fmm} offloads its GEMMs to placement 'systolic'; expected 'cpu' "
                   "or 'lap', the placements the U-list model describes (003's host and its LAP)"]


def _study_crosscheck_row(placement: str, variant: str, q: int = 4) -> dict[str, str]:
    """The committed default FMM study's cross-check row of one point (``results/fmm/crosscheck.csv``)."""
    with (ROOT / "results" / "fmm" / "crosscheck.csv").open(newline="") as fh:
        return next(r for r in csv.DictReader(fh)
                    if (int(r["q"]), r["placement"], r["variant"]) == (q, placement, variant))


@pytest.mark.parametrize(("system", "placement", "study_placement"),
                         [("lap_dram.yaml", "lap", "lap-dram"), ("i7_920_ddr3.yaml", "cpu", "cpu")])
def test_crosscheck_of_an_fmm_run_is_the_study_s_u_list_model(tmp_path, capsys, system, placement, study_placement):
    # the same point as the default study's (N = 2.4e5, Table 2 tree), measured on its own system
    out = tmp_path / "r"
    argv = ["run", str(CONFIGS / "systems" / system), str(CONFIGS / "workloads" / "fmm_ulist_q4.yaml"),
            "--param", f"placement={placement}", "--out", str(out), "--crosscheck"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "ulist     time" in printed and "ulist-ext energy" in printed and "roofline" not in printed
    with (out / "crosscheck.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    inputs = {r["quantity"]: float(r["simulated"]) for r in rows if not r["model"]}
    assert (inputs["N_q"], inputs["N_U"], inputs["blocks b"]) == (35, 171395, 1)
    models = {(r["model_name"].split(",")[1].split()[0], r["quantity"]): r for r in rows if r["model"]}
    assert set(models) == {(m, k) for m in ("printed", "extended") for k in ("time", "energy")}
    study = _study_crosscheck_row(study_placement, "orig")
    summary = json.loads((out / "summary.json").read_text())
    assert float(models["printed", "time"]["simulated"]) == pytest.approx(float(study["sim_mcycles"]) * 1e6 / 2e9,
                                                                          rel=1e-12)
    assert float(models["printed", "energy"]["simulated"]) == pytest.approx(summary["energy_total_j"], rel=1e-12)
    # the model of the single run is the study's: the same micro runs on the same system, the same equations
    for model, prefix in (("printed", ""), ("extended", "ext_")):
        assert float(models[model, "time"]["model"]) * 2e9 / 1e6 == pytest.approx(
            float(study[f"{prefix}mcycles" if prefix else "model_mcycles"]), rel=1e-12)
        assert float(models[model, "energy"]["model"]) == pytest.approx(float(study[f"{prefix or 'model_'}energy_j"]),
                                                                        rel=1e-12)
        assert float(models[model, "time"]["error"]) == pytest.approx(
            float(study[f"{prefix}time_dev" if prefix else "time_dev"]), rel=1e-9)


def test_the_host_alone_of_a_system_with_a_near_memory_drops_the_memory_with_its_accelerator():
    """--crosscheck measures the host's figures on the system without its accelerators; a near memory only an
    accelerator works in goes with them (the HBM-stack LAP system raised a config error here)."""
    from simulator.runner import load_system
    from simulator.studies.fmm.crosscheck import host_alone
    from simulator.system import build_system

    loaded = load_system(str(CONFIGS / "systems" / "lap_hbm_stack.yaml"))
    assert loaded.spec.near_memories and loaded.spec.accelerators  # the case under test
    alone = host_alone(loaded)
    assert not alone.spec.accelerators and not alone.spec.near_memories
    assert (alone.spec.host, alone.spec.caches, alone.spec.dram) == (loaded.spec.host, loaded.spec.caches,
                                                                      loaded.spec.dram)
    assert not build_system(alone.spec).near_memories


def test_crosscheck_refuses_an_fmm_run_on_a_coupling_the_u_list_model_lacks(tmp_path, capsys):
    out = tmp_path / "r"
    argv = ["run", str(CONFIGS / "systems" / "lap_pcie.yaml"), str(CONFIGS / "workloads" / "fmm_ulist_q4.yaml"),
            "--param", "n_points=2000", "--out", str(out), "--crosscheck"]
    err = refused(argv, capsys, out)
    assert len(err) == 1 and err[0].startswith("offsim: error: --crosscheck: "), err
    assert "lap_pcie.yaml has its LAP coupled to 'pcie'" in err[0] and "'llc'" in err[0], err
    small = ["run", str(CONFIGS / "systems" / "lap_dram.yaml"), str(CONFIGS / "workloads" / "fmm_ulist_q4.yaml"),
             "--param", "n_points=2000", "--set", "dram.geometry.rows=512", "--out", str(out), "--crosscheck"]
    err = refused(small, capsys, out)
    assert len(err) == 1 and err[0].startswith("offsim: error: --crosscheck: the U-list model's inputs are measured "
                                               "with micro runs over 256 MiB, more than the 128 MiB"), err
    # a unit named 'lap' that is no LAP; no unit 'lap' at all, which the run itself refuses, as without --crosscheck
    crypto = _write(tmp_path / "crypto.yaml", (CONFIGS / "systems" / "i7_920_ddr3.yaml").read_text() + (
        "accelerators:\n  lap: {preset: accel/hifn_7955_crypto, interface: {coupling: pcie, "
        "bandwidth_bytes_per_s: 1 GB/s}}\n"))
    err = refused([*small[:1], str(crypto), *small[2:5], "--out", str(out), "--crosscheck"], capsys, out)
    assert len(err) == 1 and f"{crypto} has a unit 'lap' of kind 'crypto', not a LAP; expected a LAP" in err[0], err
    host_only = ["run", str(DEFAULT_SYSTEM), *small[2:5], "--out", str(out)]
    assert refused([*host_only, "--crosscheck"], capsys, out) == refused(host_only, capsys, out)


def test_plot_draws_the_run_and_a_rerun_replaces_it(tmp_path):
    from simulator.studies.run_figure import energy_by_category_j, stage_times_s
    from simulator.runner import run

    workload = CONFIGS / "workloads" / "fmm_ulist_q4.yaml"
    argv = ["run", str(CONFIGS / "systems" / "lap_dram.yaml"), str(workload), "--param", "n_points=2000",
            "--out", str(tmp_path / "r"), "--plot"]
    assert main(argv) == 0
    png = (tmp_path / "r" / "run.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert main(argv) == 0  # the previous run directory, with its figure, is replaced
    assert (tmp_path / "r" / "run.png").read_bytes() == png  # same inputs, same bytes
    # what it draws: each host stage's compute and stall add up to its busy time; the accelerator's busy time;
    # the energy categories add up to the run's total
    results = run(CONFIGS / "systems" / "lap_dram.yaml", workload, n_points=2000)
    stages = {name: (compute, stall) for name, compute, stall in stage_times_s(results)}
    assert list(stages) == ["host/input_perm", "host/gemm", "host/output_perm", "lap busy"]
    for name in ("input_perm", "gemm", "output_perm"):
        assert sum(stages[f"host/{name}"]) == pytest.approx(results.value(f"stage/host/{name}", "busy_s"))
    assert stages["lap busy"] == (results.value("accel/lap", "busy_s"), 0.0)
    energy = energy_by_category_j(results)
    assert energy["dram"]["refresh"] > 0 and energy["lap"]["compute"] > 0
    assert sum(sum(c.values()) for c in energy.values()) == pytest.approx(results.summary()["energy_total_j"])


def test_crosscheck_refuses_a_dram_too_small_for_its_calibration_stream(tmp_path, capsys):
    compute = _write(tmp_path / "c.yaml", "name: c\ngenerator: compute_only\nparams: {flops: 1000}\n")
    out = tmp_path / "r"
    argv = ["run", str(DEFAULT_SYSTEM), str(compute), "--set", "dram.geometry.rows=64", "--out", str(out)]
    err = refused([*argv, "--crosscheck"], capsys, out)
    assert len(err) == 1 and err[0].startswith("offsim: error: --crosscheck: the roofline's costs are measured "
                                               "with a 32 MiB read stream, more than the 16 MiB"), err
    assert main(argv) == 0  # the run alone fits


def test_the_roofline_refuses_a_memory_whose_energy_is_not_known(tmp_path, capsys):
    """The roofline's energy costs are measured on the system: on a memory that declares no currents (HBM3) both
    ``run --crosscheck`` and ``models roofline --system`` refuse, naming the memory (they raised a ValueError on
    the NaN costs)."""
    system = _write(tmp_path / "h3.yaml", "name: h3\nhost: {preset: cpu/i7_920}\ncaches: {preset: caches/i7_920}\n"
                    "dram: {preset: dram/hbm3_8gb_6400, interface_energy_j_per_bit: 1 pJ/bit}\n")
    compute = _write(tmp_path / "c.yaml", "name: c\ngenerator: compute_only\nparams: {flops: 1000}\n")
    out = tmp_path / "r"
    why = (f"the roofline's energy costs are measured on the system, and its memory dram (hbm3) declares no "
           f"currents, so its energy is not known ({system}: dram.currents); expected memories with declared currents")
    err = refused(["run", str(system), str(compute), "--out", str(out), "--crosscheck"], capsys, out)
    assert err == [f"offsim: error: --crosscheck: {why}"]
    assert refused(["models", "roofline", "--system", str(system)], capsys, out) == [
        f"offsim: error: --system {system}: {why}"]


def test_a_crosscheck_says_a_simulated_energy_it_does_not_know(tmp_path, capsys):
    """An HBM2E stack declares no currents, so the run's energy is not known: the U-list cross-check prints it
    as not known, with no error, where it printed nan J and +nan%."""
    out = tmp_path / "r"
    argv = ["run", str(CONFIGS / "systems" / "lap_hbm2e_stack.yaml"), str(CONFIGS / "workloads" / "fmm_ulist_q4.yaml"),
            "--param", "n_points=2000", "--out", str(out), "--crosscheck"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    energy = [line for line in printed.splitlines() if line.startswith(("ulist     energy", "ulist-ext energy"))]
    assert len(energy) == 2 and "nan" not in printed
    assert all("simulated    not known  model " in line and line.endswith("(n/a: the simulated value is not known)")
               for line in energy), energy


def test_a_process_of_its_own_ends_with_the_commands_output_and_exit_code(tmp_path, workload):
    """``offsim run`` as its own process ends without the interpreter's teardown (``ENDS_WITHOUT_TEARDOWN``):
    its printed summary, its run directory and its exit code are whole; bad input still exits 2 with its
    message."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "simulator.cli", "run", str(DEFAULT_SYSTEM), str(workload), "--out"]
    done = subprocess.run(command + [str(out)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"written   {out}"
    assert {p.name for p in out.iterdir()} == {"config.resolved.yaml", "results.parquet", "summary.json"}
    bad = subprocess.run(command + [str(tmp_path / "other"), "--param", "array_bytes=-1"], cwd=ROOT,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "array_bytes" in bad.stderr and not (tmp_path / "other").exists()


def test_commands_that_end_without_teardown_are_commands_that_start_no_processes():
    # the list names real subcommands, none of those that start worker processes, and the simulator README
    # names each of them
    import argparse

    from simulator.cli import ENDS_WITHOUT_TEARDOWN, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert ENDS_WITHOUT_TEARDOWN <= set(sub.choices)
    assert not ENDS_WITHOUT_TEARDOWN & {"study", "reproduce", "bench"}
    readme = (Path(__file__).resolve().parents[2] / "simulator" / "README.md").read_text()
    listed = readme[readme.index("A command that starts no processes"):readme.index("cli.ENDS_WITHOUT_TEARDOWN")]
    assert {name for name in sub.choices if f"`{name}`" in listed} == ENDS_WITHOUT_TEARDOWN


@pytest.mark.parametrize("command", [
    ["show", str(CONFIGS / "systems" / "i7_920_ddr3.yaml"), "--png"],
    ["models", "logca", "sparc_t3_aes", "--plot"],
    ["models", "logca", "sparc_t3_aes", "--out"],
])
@pytest.mark.parametrize("where, says", [
    ("a_file/x{suffix}", "{root}/a_file is a file; expected a path whose parents are directories"),
    ("x.txt", "expected a file name ending in"),
    ("folder", "is a directory; expected a"),
])
def test_an_output_file_that_cannot_be_written_is_refused_before_any_work(command, where, says, tmp_path, capsys):
    """The one file a command writes (--png, --plot, --out FILE.csv): refused with exit 2 and one message naming the
    option, before anything is computed or written."""
    (tmp_path / "a_file").write_text("")
    (tmp_path / "folder").mkdir()
    target = tmp_path / where.format(suffix=".csv" if command[-1] == "--out" else ".png")
    errors = refused([*command, str(target)], capsys, tmp_path / "none")
    assert len(errors) == 1 and f"{command[-1]} {target}: " in errors[0] and says.format(root=tmp_path) in errors[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file", "folder"] and not any((tmp_path / "folder").iterdir())
