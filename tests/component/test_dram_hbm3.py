"""HBM3: on the 8 GiB stack preset of 32-bit pseudo-channels a 64 B line takes two 32 B bursts, per-bank refresh (REFpb) blocks one bank at a time, and the energy of a standard without
declared currents is unknown (NaN), not zero, where it spent any (test_dram_standards: it streams near its peak)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simulator.memory.dram import DramSystem
from tests.component.test_dram_standards import (check_per_bank_refresh, check_two_burst_lines,
                                                column_bank_channel_line, preset_parameters)

PRESET = "hbm3_8gb_6400"
TCK_PS = 625
BURST_PS = 2 * TCK_PS  # BL8 at four beats per tCK


@pytest.fixture(scope="module")
def hbm3(tmp_path_factory):
    return preset_parameters(tmp_path_factory, PRESET)


line = column_bank_channel_line(channels=32, banks=16, lines_per_row=16)  # 1 KiB rows of 64 B lines


def test_a_line_is_two_bursts_and_holds_its_bank_group_two_tccd_l(hbm3):
    # tRCD + CL + two bursts; banks 0 and 4 share group 0, which the first line holds tCCD_L (4 tCK) per burst
    check_two_burst_lines(*hbm3, line, same_group_bank=4, first_ps=(31 + 20) * TCK_PS + 2 * BURST_PS,
                          same_group_gap_ps=2 * 4 * TCK_PS)


def test_a_per_bank_refresh_blocks_one_bank_at_a_time(hbm3):
    # one REFpb every tREFI / 16 banks, each blocking its bank for tRFCpb (320 tCK)
    check_per_bank_refresh(*hbm3, line, banks=16, t_rfc_pb_ps=320 * TCK_PS,
                           access_ps=(31 + 20) * TCK_PS + 2 * BURST_PS)


def test_the_energy_of_a_standard_without_currents_is_unknown(hbm3):
    timing, currents, geometry = hbm3
    d = DramSystem(timing, currents, geometry)
    end = d.service(np.arange(64), False, 0)
    energy = d.energy_j(end)
    assert math.isnan(energy["read"]) and math.isnan(sum(energy.values()))
    assert energy["write"] == 0.0  # no write issued: none costs 0 J, known even without currents

