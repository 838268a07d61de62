"""Per-command DRAM energies from IDD/VDD (TN-41-01), checked by hand for DDR3-1600 MT41J256M4,
and validation of the DRAM parameter dataclasses."""

import dataclasses

import pytest

from simulator.memory import power
from simulator.memory.dram import DramSystem
from tests.conftest import ddr3_preset

# DDR3-1600 Micron MT41J256M4 (003 Table 4 at 003:L327-L328): the shipped preset, one rank
TIMING, CURRENTS, GEOMETRY = ddr3_preset()


def test_geometry_of_a_rank():
    assert GEOMETRY.devices_per_rank == 16
    assert GEOMETRY.row_bytes == 16 * 1024
    assert GEOMETRY.lines_per_row == 256
    assert GEOMETRY.capacity_lines * 64 == 2 * 1024**3  # 16 x 1 Gb devices = 2 GiB


def test_command_energies_by_hand():
    e = power.command_energies_j(TIMING, CURRENTS, GEOMETRY)
    # ACT+PRE: 1.5 V * (95*39 - (67*28 + 70*11)) mA*tCK = 1.5 * 1059 mA * 1.25 ns = 1.985625 nJ per device
    assert e["activate_precharge"] == pytest.approx(16 * 1.985625e-9, rel=1e-12)  # 31.77 nJ per rank
    # read burst: 1.5 V * (250 - 67) mA * 4 tCK (5 ns) = 1.3725 nJ per device
    assert e["read"] == pytest.approx(16 * 1.3725e-9, rel=1e-12)  # 21.96 nJ per 64 B
    assert e["write"] == pytest.approx(16 * 1.3725e-9, rel=1e-12)
    # refresh: 1.5 V * (260 - 67) mA * 88 * 1.25 ns = 31.845 nJ per device
    assert e["refresh"] == pytest.approx(16 * 31.845e-9, rel=1e-12)


def test_background_power_by_hand():
    bg = power.background_power_w(CURRENTS, GEOMETRY)
    assert bg["active"] == pytest.approx(1.5 * 0.067 * 16, rel=1e-12)
    assert bg["precharge"] == pytest.approx(1.5 * 0.070 * 16, rel=1e-12)


def test_energy_by_category_is_counts_times_energies():
    e = power.command_energies_j(TIMING, CURRENTS, GEOMETRY)
    out = power.energy_by_category_j(TIMING, CURRENTS, GEOMETRY, activates=3, reads=5, writes=7, refreshes=2,
                                      open_time_ps=1_000_000, precharged_time_ps=3_000_000)
    assert set(out) == set(power.CATEGORIES)
    assert out["activate_precharge"] == pytest.approx(3 * e["activate_precharge"])
    assert out["read"] == pytest.approx(5 * e["read"])
    assert out["write"] == pytest.approx(7 * e["write"])
    assert out["refresh"] == pytest.approx(2 * e["refresh"])
    assert out["background_active"] == pytest.approx(1.5 * 0.067 * 16 * 1e-6)
    assert out["background_precharge"] == pytest.approx(1.5 * 0.070 * 16 * 3e-6)
    with pytest.raises(ValueError, match="reads"):
        power.energy_by_category_j(TIMING, CURRENTS, GEOMETRY, activates=0, reads=-1, writes=0, refreshes=0,
                                   open_time_ps=0, precharged_time_ps=0)


def test_dynamic_energy_per_bit_is_in_the_published_range():
    # ~60 pJ/bit for DRAM activate + read/write (003:L211); a row-hit stream is cheaper, random lines dearer
    e = power.command_energies_j(TIMING, CURRENTS, GEOMETRY)
    stream = (e["read"] + e["activate_precharge"] / 256) / 512
    random = (e["read"] + e["activate_precharge"]) / 512
    assert 30e-12 < stream < 60e-12 < random < 120e-12


@pytest.mark.parametrize("field, value, message", [
    ("t_rc", 38, "t_rc"),
    ("tck_ps", 0, "tck_ps"),
    ("burst_length", 7, "burst_length"),
    ("t_ras", 10, "t_ras"),
    ("cwl", 12, "cwl"),
    ("t_refi_ps", 100_000, "t_refi_ps"),
    ("cl", 11.0, "cl"),
])
def test_timing_validation(field, value, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TIMING, **{field: value})


@pytest.mark.parametrize("field, value, message", [
    ("banks", 6, "banks"),
    ("mapping", "row:bank:channel:column", "mapping"),
    ("mapping", "row:rank:bank:bank:column", "mapping"),
    ("bus_width_bits", 66, "bus_width_bits"),
    ("channels", 0, "channels"),
])
def test_geometry_validation(field, value, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(GEOMETRY, **{field: value})


def test_currents_validation():
    with pytest.raises(ValueError, match="idd4r_ma"):
        dataclasses.replace(CURRENTS, idd4r_ma=10)
    with pytest.raises(ValueError, match="vdd_v"):
        dataclasses.replace(CURRENTS, vdd_v=0)


def test_system_validation():
    with pytest.raises(ValueError, match="page_policy"):
        DramSystem(TIMING, CURRENTS, GEOMETRY, page_policy="adaptive")
    with pytest.raises(ValueError, match="line_bytes"):
        DramSystem(TIMING, CURRENTS, dataclasses.replace(GEOMETRY, line_bytes=128))
    with pytest.raises(ValueError, match="queue_depth"):
        DramSystem(TIMING, CURRENTS, GEOMETRY, queue_depth=0)
