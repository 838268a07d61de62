"""HBM3: on the 8 GiB stack preset of 32-bit pseudo-channels a 64 B line takes two 32 B bursts, per-bank refresh (REFpb) blocks one bank at a time, and the energy of a standard without
declared currents is unknown (NaN), not zero (test_dram_standards: it streams near its peak)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simulator.memory import dram_kernel as k
from simulator.memory.dram import DramSystem
from tests.component.test_dram_standards import preset_parameters

PRESET = "hbm3_8gb_6400"
TCK_PS = 625
BURST_PS = 2 * TCK_PS  # BL8 at four beats per tCK


@pytest.fixture(scope="module")
def hbm3(tmp_path_factory):
    return preset_parameters(tmp_path_factory, PRESET)


def line(channel, bank, column=0, row=0):
    """Line index under the preset's mapping row:rank:column:bank:channel (32 pseudo-channels, 16 banks,
    16 lines of a 1 KiB row)."""
    return ((row * 16 + column) * 16 + bank) * 32 + channel


def test_a_line_is_two_bursts_and_holds_its_bank_group_two_tccd_l(hbm3):
    timing, currents, geometry = hbm3
    d = DramSystem(timing, currents, geometry)
    out = d.service_lines(np.array([line(0, 0)]), np.array([False]), 0)
    assert out[0] == (31 + 20) * TCK_PS + 2 * BURST_PS  # tRCD + CL + two bursts back to back
    a = 10_000_000
    # banks 0 and 4 share group 0: the second line's column waits 2 x tCCD_L after the first's
    d2 = DramSystem(timing, currents, geometry)
    d2.service_lines(np.array([line(0, 0), line(0, 4)]), np.array([False, False]), 0)
    same = d2.service_lines(np.array([line(0, 0, 1), line(0, 4, 1)]), np.array([False, False]), a)
    assert same[1] - same[0] == 2 * 4 * TCK_PS  # the group held tCCD_L per burst of the first line
    other = DramSystem(timing, currents, geometry)  # banks 0 and 1: other groups, back to back on the bus
    other.service_lines(np.array([line(0, 0), line(0, 1)]), np.array([False, False]), 0)
    out = other.service_lines(np.array([line(0, 0, 1), line(0, 1, 1)]), np.array([False, False]), a)
    assert out[1] - out[0] == 2 * BURST_PS


def test_a_per_bank_refresh_blocks_one_bank_at_a_time(hbm3):
    timing, currents, geometry = hbm3
    d = DramSystem(timing, currents, geometry, refresh_mode="per_bank", command_log_capacity=256)
    interval = 3_900_000 // 16  # one REFpb every tREFI / 16 banks
    assert d.refresh_interval_ps == interval
    d.idle_until(3 * interval + 1)
    refs = d.command_log()
    refs = refs[refs[:, 2] == 0]  # pseudo-channel 0
    assert refs[:, 1].tolist() == [k.CMD_REF] * 3 and refs[:, 3].tolist() == [0, 1, 2]
    assert refs[:, 0].tolist() == [interval, 2 * interval, 3 * interval]
    t = 3 * interval + 1
    out = d.service_lines(np.array([line(0, 3), line(0, 2)]), np.array([False, False]), t)
    assert out[0] == t + (31 + 20) * TCK_PS + 2 * BURST_PS  # bank 3: not refreshed yet
    assert out[1] == 3 * interval + 320 * TCK_PS + (31 + 20) * TCK_PS + 2 * BURST_PS  # bank 2: after tRFCpb


def test_the_energy_of_a_standard_without_currents_is_unknown(hbm3):
    timing, currents, geometry = hbm3
    d = DramSystem(timing, currents, geometry)
    end = d.service(np.arange(64), False, 0)
    assert all(math.isnan(j) for j in d.energy_j(end).values())

