"""``offsim keys --system`` (a system's effective values and their origin) and ``offsim generators``."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.cli import main
from tests.conftest import parse_refused

ROOT = Path(__file__).resolve().parents[2]
LAP_LLC = ROOT / "configs" / "systems" / "lap_llc.yaml"


def _rows(text: str) -> dict[str, tuple[str, str]]:
    """key -> (value, origin) of a printed ``keys --system`` table (columns split on two spaces)."""
    out = {}
    for line in text.splitlines()[1:]:
        cells = [c for c in line.split("  ") if c.strip()]
        out[cells[0].strip()] = (cells[1].strip(), cells[-1].strip())
    return out


def test_keys_of_a_system_name_each_values_origin(capsys):
    assert main(["keys", "--system", str(LAP_LLC), "--set", "host.frequency_hz=3 GHz"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["host.frequency_hz"] == ("3 GHz", "--set")
    assert rows["host.max_outstanding_misses"] == ("10", "preset cpu/i7_920")
    assert rows["accelerators.lap.interface.coupling"] == ("llc", "file")
    assert rows["accelerators.lap.interface.latency_s"] == ("0 s", "default")
    assert rows["caches.levels.L2.size_bytes"][1] == "preset caches/i7_920"
    assert rows["dram.timing.tck_s"] == ("1.25 ns", "preset dram/ddr3_1600_mt41j256m4")


def test_keys_of_a_system_spell_flags_and_unset_keys_in_words(capsys):
    """Not Python's None, True and False: a key left unset reads "not set", a flag true or false."""
    assert main(["keys", "--system", str(LAP_LLC), "--set", "caches.levels.LLC.shared=true"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["caches.levels.L1D.shared"] == ("not set", "default")
    assert rows["caches.levels.LLC.shared"] == ("true", "--set")
    assert rows["accelerators.lap.interface.full_duplex"] == ("false", "default")
    assert rows["accelerators.lap.interface.memory"] == ("not set", "default")


def test_a_cache_level_set_by_its_index_is_listed_as_set(capsys):
    """``--set caches.levels.0.size_bytes`` selects the first level by index; the table names it by its name and
    says the value came from --set, not from the preset it replaced."""
    assert main(["keys", "--system", str(LAP_LLC), "--set", "caches.levels.0.size_bytes=64 KiB"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["caches.levels.L1D.size_bytes"][1] == "--set"
    assert rows["caches.levels.L2.size_bytes"][1] == "preset caches/i7_920"


def test_keys_refuses_set_without_a_system_and_a_prefix_the_system_lacks(capsys):
    assert main(["keys", "--set", "host.frequency_hz=3 GHz"]) == 2
    assert "expected --system FILE" in capsys.readouterr().err
    assert main(["keys", "nothing.here", "--system", str(LAP_LLC)]) == 2
    assert "no key of" in capsys.readouterr().err
    assert main(["keys", "caches.levels.L4", "--system", str(LAP_LLC)]) == 2
    assert "caches.levels holds: L1D, L2, LLC" in capsys.readouterr().err


def test_generators_lists_each_parameter_with_its_unit_and_default(capsys):
    assert main(["generators", "stream"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("stream: ")
    cells = {line.split()[0]: line.split() for line in lines[2:]}
    assert cells["array_bytes"][1:3] == ["B", "required"]
    assert cells["block_bytes"][1:4] == ["B", "64", "KiB"]
    assert cells["repeats"][1] == "1"


def test_generators_list_accepted_choices_and_types_in_plain_words(capsys):
    """Closed choices are listed (not "a string"), sequences and nulls in words, not Python type names."""
    assert main(["generators", "stream", "fmm_ulist", "stencil", "gemm_tiled"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert rows["kind"].endswith("required  one of read, write, copy, scale, add, triad")
    assert rows["density"].endswith("one of uniform, plummer, gaussian, table2")
    assert rows["variant"].endswith("one of orig, orig_pref, blocking, blocking_pref, pipelining")
    assert rows["placement"].endswith("one of cpu, lap, systolic")
    assert rows["scheme"].endswith("one of naive, blocked, time_tiled")
    assert rows["schedule"].endswith("one of output, input1")
    assert rows["grid"].endswith("a list of integers")
    assert rows["t_s"].endswith("not set   a list of integers or null")
    assert rows["llc_bytes"].split()[1:] == ["B", "8", "MiB", "a", "size", "with", "a", "unit"]
    for python in ("Sequence", "Schedule", "None", "'", "a string"):
        assert python not in "\n".join(rows[k] for k in ("kind", "grid", "t_s", "schedule", "blocks")), python


def test_generators_refuses_an_unknown_name_with_a_suggestion(capsys):
    assert main(["generators", "strem"]) == 2
    err = capsys.readouterr().err
    assert "'strem' is not a workload generator (did you mean stream?)" in err and "Traceback" not in err


def test_generators_refuses_a_name_given_twice(capsys):
    assert main(["generators", "stream", "stream"]) == 2
    assert "generators 'stream': given twice; expected each value once" in capsys.readouterr().err


def test_a_model_file_option_given_empty_is_refused_not_taken_for_its_default(tmp_path, capsys):
    for argv in (["models", "ulist", "--machine", ""], ["models", "logca", "--table", ""],
                 ["models", "roofline", "--table", ""]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "file not found" in err and argv[2] in err


@pytest.mark.parametrize("argv, option", [
    (["run", "s.yaml", "w.yaml", "--out", "o1", "--out", "o2"], "--out"),
    (["models", "logca", "--table", "a.yaml", "--table", "b.yaml"], "--table"),
    (["keys", "--system", "a.yaml", "--system", "b.yaml"], "--system"),
])
def test_an_option_of_one_value_given_twice_is_refused_naming_it(argv, option, capsys):
    """argparse would keep the last value without a word (the run written to o2 only)."""
    assert f"argument {option}: given twice (" in parse_refused(argv, capsys)


@pytest.mark.parametrize("program", ["simulator.studies.fmm.placement", "simulator.studies.logca.crypto",
                                     "simulator.studies.logca.gpu"])
def test_the_study_programs_refuse_an_option_given_twice_too(program, capsys):
    import importlib

    main_of = importlib.import_module(program).main
    assert "argument --out: given twice (" in parse_refused(["--out", "a", "--out", "b"], capsys, main_of)


def test_a_repeatable_option_still_takes_every_value(capsys):
    assert main(["generators", "stream"]) == 0  # a positional, once
    capsys.readouterr()
    assert main(["keys", "--system", str(LAP_LLC), "--set", "host.frequency_hz=2 GHz", "--set",
                 "host.flops_per_cycle=4", "host"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["host.frequency_hz"] == ("2 GHz", "--set") and rows["host.flops_per_cycle"] == ("4.0", "--set")


def test_keys_show_sizes_in_binary_units_that_read_back_exactly(capsys):
    """A size is printed as a whole number of KiB/MiB/GiB (32 KiB, not 32.77 kB): pasted back into --set, it
    gives the same size."""
    assert main(["keys", "--system", str(LAP_LLC)]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["caches.levels.L1D.size_bytes"][0] == "32 KiB"
    assert rows["caches.levels.LLC.size_bytes"][0] == "8 MiB"
    assert rows["accelerators.lap.local_memory_bytes"][0] == "2 MiB"
    assert main(["keys", "--system", str(LAP_LLC), "--set", "caches.levels.LLC.size_bytes=8 GiB"]) == 2
    assert "expected a value <= 4 GiB, got 8 GiB" in capsys.readouterr().err
    assert main(["keys", "caches.levels"]) == 0
    assert "> 0, <= 4 GiB" in capsys.readouterr().out
