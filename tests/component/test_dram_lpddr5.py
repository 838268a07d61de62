"""LPDDR5 (bank-group mode, WCK:CK 4:1) on the 16 Gb x16 preset: a per-bank refresh covers a pair of banks
(k and k + 8) every tREFI / 8, and per-bank refresh stalls a random stream less than all-bank refresh
under the ready-first controller (test_dram_standards: it streams near its peak)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simulator.memory.dram import DramSystem
from tests.component.test_dram_standards import preset_parameters

PRESET = "lpddr5_6400_16gb_x16"
TCK_PS = 1250
BURST_PS = 2 * TCK_PS  # BL16 at eight beats per tCK


@pytest.fixture(scope="module")
def lpddr5(tmp_path_factory):
    return preset_parameters(tmp_path_factory, PRESET)


def test_a_per_bank_refresh_blocks_a_pair_of_banks(lpddr5):
    timing, currents, geometry = lpddr5
    d = DramSystem(timing, currents, geometry, refresh_mode="per_bank", command_log_capacity=64)
    interval = 3_906_000 // 8  # eight pairs of banks refreshed in turn within tREFI: 488.25 ns
    assert d.refresh_interval_ps == interval
    d.idle_until(interval + 1)
    refs = d.command_log()
    assert refs[refs[:, 2] == 0][:, 3].tolist() == [0]  # channel 0's first REFpb: pair 0
    t = interval + 1
    # mapping row:rank:column:bank:channel with 4 channels: line = (... * 16 + bank) * 4 + channel
    out = d.service_lines(np.array([1 * 4, 8 * 4]), np.array([False, False]), t)  # banks 1 and 8 (pair 0)
    assert out[0] == t + (15 + 17) * TCK_PS + 2 * BURST_PS  # bank 1 works: ACT at once
    assert out[1] == interval + 112 * TCK_PS + (15 + 17) * TCK_PS + 2 * BURST_PS  # bank 8: ACT after tRFCpb


def test_per_bank_refresh_stalls_a_random_stream_less_than_all_bank_refresh(lpddr5):
    timing, currents, geometry = lpddr5
    lines = np.random.default_rng(7).integers(0, geometry.capacity_lines, 1 << 15)
    ends = {}
    for name, t, mode in (("none", dataclasses.replace(timing, t_refi_ps=10**12), "all_bank"),
                          ("all_bank", timing, "all_bank"), ("per_bank", timing, "per_bank")):
        ends[name] = DramSystem(t, currents, geometry, scheduler="ready_first", refresh_mode=mode).service(
            lines, False, 0)
    # REFab blocks all 16 banks for 280 ns every 3.906 us (7.2 % of bank time); REFpb 2 of 16 for 140 ns
    # every 488 ns (3.6 %)
    assert 0 < ends["per_bank"] - ends["none"] < ends["all_bank"] - ends["none"]
