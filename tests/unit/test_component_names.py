"""Unit and cache-level names: they name trace units, --set keys and result columns, so they must be
usable as such and must not take another component's name (an accelerator called 'dram' would
replace the DRAM's energy in the results)."""

from __future__ import annotations

import pytest
import yaml

from simulator.errors import ConfigError
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from tests.conftest import CONFIGS

LAP = {"preset": "accel/lap_4x4", "interface": {"coupling": "llc", "bandwidth_bytes_per_s": "12.8 GB/s"}}


def _system(tmp_path, accelerators=None, levels=None, name="x"):
    raw = {"name": name, "host": {"preset": "cpu/i7_920"}, "caches": {"preset": "caches/i7_920"},
           "dram": {"preset": "dram/ddr3_1600_mt41j256m4"}, "accelerators": accelerators or {}}
    if levels is not None:
        raw["caches"]["levels"] = levels
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize("name, says", [
    ("", "expected a unit name of letters"), (5, "keys [5]; expected names (strings)"),
    ("a/b", "expected a unit name of letters"), ("lap.x", "expected a unit name of letters"),
    ("dram", "the name of another component's results"), ("LLC", "the name of another component's results"),
    ("memory_path", "the name of another component's results"), ("host", "the core's unit name"),
    # its energy went into DRAM background's in the energy by requester
    ("background", "the requester of DRAM background and refresh energy"),
])
def test_bad_accelerator_names_are_refused(tmp_path, name, says):
    path = _system(tmp_path, accelerators={name: LAP})
    with pytest.raises(ConfigError) as err:
        load_spec(path, SystemSpec)
    (message,) = err.value.messages
    assert message.startswith(f"{path}: accelerators") and says in message and "expected" in message


def test_good_accelerator_names_build(tmp_path):
    path = _system(tmp_path, accelerators={"lap_2": LAP, "gemm-array": LAP})
    spec = load_spec(path, SystemSpec).spec
    assert set(spec.accelerators) == {"lap_2", "gemm-array"}


@pytest.mark.parametrize("name", ["dram", "host", "L 2", ""])
def test_bad_cache_level_names_are_refused(tmp_path, name):
    energies = {"read_energy_j": "1 nJ", "write_energy_j": "1 nJ", "line_energy_j": "1 nJ"}
    levels = [{"name": "L1D", "size_bytes": "32 KiB", "ways": 8, "latency_cycles": 4, "energy_j_per_byte": "1 pJ/B",
               **energies},
              {"name": name, "size_bytes": "256 KiB", "ways": 8, "latency_cycles": 10,
               "energy_j_per_byte": "2 pJ/B", **energies}]
    path = _system(tmp_path, levels=levels)
    with pytest.raises(ConfigError, match=r"levels\[1\]\.name: .*expected a name of letters"):
        load_spec(path, SystemSpec)


def test_a_kind_that_is_not_a_name_is_refused(tmp_path):
    path = _system(tmp_path, accelerators={"lap": {"kind": ["lap"]}})
    with pytest.raises(ConfigError, match=r"accelerators.lap.kind: \['lap'\]; expected one of: .*lap"):
        load_spec(path, SystemSpec)


@pytest.mark.parametrize("key", [None, True])
def test_a_yaml_null_or_boolean_key_is_not_a_unit_name(tmp_path, key):
    path = _system(tmp_path, accelerators={key: LAP})  # written as null: / true:, read back as None / True
    with pytest.raises(ConfigError, match=r"accelerators: keys \[(None|True)\]; expected names \(strings\)"):
        load_spec(path, SystemSpec)


@pytest.mark.parametrize("name", ["", "  ", "a\nb", "\u202e"])
def test_a_system_name_is_printable_and_not_empty(tmp_path, name):
    path = _system(tmp_path, name=name)
    with pytest.raises(ConfigError, match="name: .*expected a non-empty printable name"):
        load_spec(path, SystemSpec)


def test_an_integer_beyond_64_bits_is_refused():
    with pytest.raises(ConfigError, match=r"host.max_outstanding_misses: expected an integer within \+-9,223"):
        load_spec(CONFIGS / "systems" / "i7_920_ddr3.yaml", SystemSpec, ["host.max_outstanding_misses=" + "9" * 23])


def test_a_number_in_exponent_form_is_a_number():
    spec = load_spec(CONFIGS / "systems" / "lap_llc.yaml", SystemSpec, ["accelerators.lap.utilisation=9e-1"]).spec
    assert spec.accelerators["lap"].utilisation == 0.9
