"""The config reference (``offsim keys`` and the key reference of configs/README.md) against the validator it
describes.

Each listed key is set through ``--set`` on a shipped system with that kind of entry: a value of
the wrong dimension must be refused naming the key, and a value just outside the listed bounds
must be refused too. A key the reference invents, a wrong unit or a bound it misstates fails here.
Values inside the listed bounds, at their edges, must either build a system or be refused as bad
input (a cross-key check), never fail inside the simulator.
The guide's key reference must be the schema's rendering, character for character.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from simulator.cli import main
from simulator.errors import ConfigError
from simulator.config.fields import describe_spec
from simulator.config.loader import load_spec
from simulator.config.reference import committed_reference, reference_markdown, update_guide
from simulator.config.schema import SystemSpec
from simulator.units import COUNT_UNITS, parse_quantity
from simulator.system import build_system

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "configs" / "README.md"
ROWS = describe_spec(SystemSpec)
# a shipped system for each accelerator kind, and the unit name it gives the accelerator
KIND_SYSTEMS = {"lap": ("configs/systems/lap_dram.yaml", "lap"),
                "crypto": ("configs/systems/logca_hifn_7955.yaml", "crypto"),
                "stencil": ("configs/systems/stencil_dram.yaml", "stencil"),
                "kernel": ("configs/systems/logca_gpu_discrete.yaml", "gpu"),
                "systolic": ("configs/systems/systolic_dram.yaml", "systolic")}


def _system_and_key(row) -> tuple[str, str]:
    """The system file to set ``row`` on and the concrete dotted key."""
    if row.key.startswith("near_memories.<name>."):
        return "configs/systems/lap_hbm_stack.yaml", row.key.replace("near_memories.<name>", "near_memories.hbm")
    kind = row.doc[1:row.doc.index("]")] if row.doc.startswith("[") else "lap"
    path, unit_name = KIND_SYSTEMS[kind]
    return path, row.key.replace("accelerators.<name>", f"accelerators.{unit_name}").replace(
        "caches.levels.<name>", "caches.levels.L2")


def _refusal(path: str, key: str, value: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_spec(path, SystemSpec, [f"{key}={value}"])
    return str(info.value)


def test_reference_lists_every_section_and_each_kind():
    keys = {r.key for r in ROWS}
    assert {"host.frequency_hz", "caches.levels.<name>.size_bytes", "dram.timing.t_rfc",
            "accelerators.<name>.interface.coupling"} <= keys
    kinds = {r.doc[1:r.doc.index("]")] for r in ROWS if r.doc.startswith("[")}
    assert kinds == set(KIND_SYSTEMS)
    assert all(r.doc for r in ROWS), [r.key for r in ROWS if not r.doc]


def _written_unit(row) -> str:
    """The unit a value of ``row`` is written with: none for a count (cycles, tCK, beats), a plain number."""
    return "" if row.unit in COUNT_UNITS else row.unit


@pytest.mark.parametrize("row", [r for r in ROWS if _written_unit(r)], ids=lambda r: f"{r.key}{r.doc[:9]}")
def test_a_value_of_another_dimension_is_refused_naming_the_key(row):
    path, key = _system_and_key(row)
    message = _refusal(path, key, "1 GHz" if row.unit == "s" else "1 s")  # a dimension not the key's own
    assert f"--set {key}=" in message and "unit" in message


@pytest.mark.parametrize("row", [r for r in ROWS if "> 0" in r.accepts or ">= 1" in r.accepts],
                         ids=lambda r: f"{r.key}{r.doc[:9]}")
def test_a_value_below_the_listed_bound_is_refused(row):
    path, key = _system_and_key(row)
    value = "0" if not _written_unit(row) else f"0 {row.unit}"
    message = _refusal(path, key, value)
    assert f"--set {key}=" in message and "expected" in message


def test_choices_and_kinds_listed_are_the_accepted_ones():
    by_key = {r.key: r for r in ROWS if not r.doc.startswith("[")}
    assert by_key["dram.geometry.page_policy"].accepts == "one of 'open', 'open_adaptive', 'closed'"
    assert by_key["accelerators.<name>.kind"].accepts == "one of 'crypto', 'kernel', 'lap', 'stencil', 'systolic'"
    message = _refusal("configs/systems/lap_dram.yaml", "dram.geometry.page_policy", "lazy")
    assert "'open_adaptive'" in message


def test_keys_command_prints_a_section(capsys):
    assert main(["keys", "dram.timing"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["key", "unit", "default", "accepts", "description"]
    assert all(line.startswith("dram.timing.") for line in lines[1:])
    assert len(lines) - 1 == sum(r.key.startswith("dram.timing.") for r in ROWS)
    tck = next(line for line in lines if line.startswith("dram.timing.tck_s "))
    assert tck.split()[1:6] == ["s", "required", ">=", "1e-11,", "<="]  # its bounds (simulator.config.bounds)


def test_keys_command_refuses_an_unknown_section(capsys):
    assert main(["keys", "dram.timings"]) == 2
    err = capsys.readouterr().err
    assert "'dram.timings'" in err and "dram holds: currents, geometry, interface_energy_j_per_bit, standard, timing " \
        "(did you mean timing?)" in err
    assert main(["keys", "drams"]) == 2
    assert "sections: accelerators, caches, dram, energy, host, name" in capsys.readouterr().err


def test_keys_command_takes_keys_as_set_names_them(capsys):
    """A cache level's or accelerator's name in place of the schema's <name>, as --set takes the key."""
    assert main(["keys", "caches.levels.L1D.size_bytes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[1:]] == [["caches.levels.L1D.size_bytes", "B"]]
    assert main(["keys", "accelerators.lap"]) == 0
    keys = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert "accelerators.lap.kind" in keys and "accelerators.lap.local_memory_bytes" in keys
    assert all(k.startswith("accelerators.lap.") for k in keys)
    assert main(["keys", "caches.levels.L1D.sizes"]) == 2
    err = capsys.readouterr().err
    assert "caches.levels.L1D holds: energy_j_per_byte, latency_cycles, line_energy_j, name" in err
    assert "size_bytes" in err and "Traceback" not in err
    # a system's effective keys take a level by its index too, as --set does
    system = str(Path(__file__).resolve().parents[2] / "configs" / "systems" / "i7_920_ddr3.yaml")
    assert main(["keys", "--system", system, "caches.levels.0.ways"]) == 0
    assert [line.split()[:2] for line in capsys.readouterr().out.splitlines()[1:]] == [["caches.levels.L1D.ways", "8"]]


def _edge_values(row) -> list[str]:
    """Values inside the row's listed bounds, at and far from their edges, with the row's unit."""
    unit = f" {row.unit}" if _written_unit(row) else ""
    if row.accepts.startswith("one of "):
        return [choice.strip(" '") for choice in row.accepts[len("one of "):].split(",")]
    if row.accepts == "true/false":
        return ["true", "false"]
    if row.accepts == "string":
        return []  # names and mappings: their own tests
    values = []
    if "> 0" in row.accepts:
        values += ["1", "1000000"] if "integer" in row.accepts else ["1e-12", "1e15"]
    if ">= 1" in row.accepts or "power of two" in row.accepts:
        values += ["1", "2", "4096", "1000000"]
    if ">= 0" in row.accepts:
        values += ["0", "1000000"] if "integer" in row.accepts else ["0", "1e12"]
    if "<= " in row.accepts:
        bound = row.accepts.split("<= ")[1].split(",")[0]  # a size with its unit (4 GiB), else a number
        high = parse_quantity(bound, "size") if row.unit == "B" else float(bound)
        values = [v for v in values if float(v) <= high]
    if "power of two" in row.accepts:
        values = [v for v in values if v != "1000000"]
    return [v + unit for v in values]


@pytest.mark.parametrize("row", [r for r in ROWS if _edge_values(r)], ids=lambda r: f"{r.key}{r.doc[:9]}")
def test_values_within_the_listed_bounds_build_or_are_refused_as_input(row):
    path, key = _system_and_key(row)
    for value in _edge_values(row):
        try:
            loaded = load_spec(path, SystemSpec, [f"{key}={value}"])
        except ConfigError:
            continue  # refused as input: exit 2 with a message
        build_system(loaded.spec)  # accepted: it must build; any exception fails the test


def test_keys_piped_into_a_reader_that_stops_early_is_not_an_error():
    import subprocess
    import sys

    # ``true`` exits without reading, long before the interpreter has started: the write meets a closed pipe
    proc = subprocess.run(f"set -o pipefail; '{sys.executable}' -m simulator.cli keys | true", shell=True,
                          capture_output=True, text=True, cwd=ROOT, executable="/bin/bash",
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (proc.returncode, proc.stderr) == (0, "")


def test_the_guide_key_reference_is_the_schema_rendering():
    committed = committed_reference(GUIDE.read_text(), str(GUIDE))
    assert committed == reference_markdown(), (
        "configs/README.md: the key reference differs from the schema; regenerate it with python -c "
        "\"from simulator.config.reference import update_guide; update_guide('configs/README.md')\"")


def test_the_rendering_has_one_table_row_per_key():
    lines = reference_markdown().splitlines()
    rows = [line for line in lines if line.startswith("| `")]
    assert len(rows) == len(ROWS)
    for line, row in zip(rows, ROWS):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert cells[:4] == [f"`{row.key}`", row.unit, row.default, row.accepts]
        assert row.doc.endswith(cells[4])
    kinds = {line[len("#### accelerators, kind "):].strip("`") for line in lines if ", kind " in line}
    assert kinds == set(KIND_SYSTEMS)


def test_a_stale_guide_is_detected_and_rewritten(tmp_path):
    from simulator.config.reference import BEGIN, END

    guide = tmp_path / "README.md"
    stale = reference_markdown().replace("`dram.timing.t_rfc`", "`dram.timing.t_rfc_old`")
    guide.write_text(f"# Configs\n\n{BEGIN}\n\n{stale}\n\n{END}\n\nAfter.\n")
    assert committed_reference(guide.read_text(), str(guide)) != reference_markdown()
    assert update_guide(guide) is True
    text = guide.read_text()
    assert committed_reference(text, str(guide)) == reference_markdown()
    assert text.startswith("# Configs\n\n") and text.endswith(f"{END}\n\nAfter.\n")
    assert update_guide(guide) is False
    guide.write_text("# Configs without markers\n")
    with pytest.raises(ValueError, match="expected one key reference"):
        committed_reference(guide.read_text(), str(guide))


def test_every_count_of_cycles_or_tck_carries_its_unit():
    counts = [r for r in ROWS if r.key.endswith(("_cycles", "_tck")) or "tCK" in r.doc.split("(bounds")[0]]
    assert counts and all(r.unit in COUNT_UNITS or r.unit == "s" for r in counts), \
        [r.key for r in counts if r.unit not in COUNT_UNITS and r.unit != "s"]
