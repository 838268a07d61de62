"""DDR5: the DDR5-4800 16 Gb x8 preset streams at its peak less refresh, tCCD_L_WR spaces two writes of
one bank group, same-bank refresh (REFsb, at its fine granularity rate) blocks one bank of each group and
stalls a random stream about as much as all-bank refresh (test_dram_standards refuses DDR5's keys and modes
where they do not belong)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simulator.memory import dram_kernel as k
from simulator.memory.dram import DramSystem
from tests.component.test_dram_standards import preset_parameters

PRESET = "ddr5_4800_mt60b2g8"
TCK_PS = 416


@pytest.fixture(scope="module")
def ddr5(tmp_path_factory):
    return preset_parameters(tmp_path_factory, PRESET)


def test_sequential_reads_run_at_the_peak_less_all_bank_refresh(ddr5):
    timing, currents, geometry = ddr5
    d = DramSystem(timing, currents, geometry, scheduler="frfcfs")
    peak = 2 * 64 / (8 * TCK_PS * 1e-12)  # two 32-bit sub-channels, one 64 B BL16 burst per 8 tCK: 38.46 GB/s
    assert d.peak_bandwidth_bytes_per_s == pytest.approx(peak)
    n = 1 << 16
    end = d.service(np.arange(n), False, 0)
    refresh_free = peak * (1 - 710 * TCK_PS / 3_900_000)  # tRFC1 of every tREFI lost: 35.54 GB/s
    assert 0.97 * refresh_free <= n * 64 / (end * 1e-12) <= refresh_free


def test_two_writes_in_one_bank_group_are_spaced_by_tccd_l_wr(ddr5):
    timing, currents, geometry = ddr5
    d = DramSystem(timing, currents, geometry)
    # mapping row:rank:column:bank:channel: line = ((row * 64 + column) * 32 + bank) * 2 + channel
    same_group = [0, (0 * 32 + 8) * 2]  # banks 0 and 8: group 0 both
    d.service_lines(np.array(same_group), np.array([True, True]), 0)  # open both rows
    a = 10_000_000
    out = d.service_lines(np.array([(1 * 32 + 0) * 2, (1 * 32 + 8) * 2]), np.array([True, True]), a)
    assert out[1] - out[0] == 48 * TCK_PS  # tCCD_L_WR, not tCCD_L (12 tCK)
    out = d.service_lines(np.array([(2 * 32 + 0) * 2, (2 * 32 + 8) * 2]), np.array([False, False]), 2 * a)
    assert out[1] - out[0] == 12 * TCK_PS  # two reads: tCCD_L


def test_a_same_bank_refresh_blocks_bank_k_of_every_group_and_lets_the_others_work(ddr5):
    timing, currents, geometry = ddr5
    d = DramSystem(timing, currents, geometry, refresh_mode="same_bank", command_log_capacity=64)
    interval = 3_900_000 // 2 // 4  # REFsb in fine granularity mode (tREFI2 = tREFI / 2), four banks per group
    assert d.refresh_interval_ps == interval
    d.idle_until(2 * interval + 1)  # REFsb of bank 0 (at 1 interval) and bank 1 (at 2) of each group
    refs = d.command_log()
    refs = refs[refs[:, 2] == 0]  # the rank of sub-channel 0
    assert refs[:, 1].tolist() == [k.CMD_REF] * 2 and refs[:, 0].tolist() == [interval, 2 * interval]
    assert refs[:, 3].tolist() == [0, 1]  # the refresh set: bank index 0, then 1, within the groups
    # bank 8 + 1 = 9 is bank 1 of group 1, blocked until 2 x interval + tRFCsb; bank 2 of group 0 is free
    blocked, free = (0 * 32 + 9) * 2, (0 * 32 + 2) * 2
    out = d.service_lines(np.array([free, blocked]), np.array([False, False]), 2 * interval + 1)
    assert out[0] == 2 * interval + 1 + (34 + 34 + 8) * TCK_PS  # ACT at once: tRCD + CL + BL/2
    assert out[1] == 2 * interval + 313 * TCK_PS + (34 + 34 + 8) * TCK_PS  # ACT after tRFCsb


def test_same_bank_refresh_stalls_a_random_stream_about_as_much_as_all_bank_refresh(ddr5):
    timing, currents, geometry = ddr5
    lines = np.random.default_rng(7).integers(0, geometry.capacity_lines, 1 << 15)
    ends, refreshes = {}, {}
    for name, t, mode in (("none", dataclasses.replace(timing, t_refi_ps=10**12), "all_bank"),
                          ("all_bank", timing, "all_bank"), ("same_bank", timing, "same_bank")):
        d = DramSystem(t, currents, geometry, scheduler="ready_first", refresh_mode=mode)
        ends[name] = d.service(lines, False, 0)
        refreshes[name] = d.counters()["refreshes"]
    assert refreshes["none"] == 0
    stall_ab = ends["all_bank"] - ends["none"]
    stall_sb = ends["same_bank"] - ends["none"]
    # an all-bank refresh idles its sub-channel for tRFC1 (less the data of commands issued before it), and
    # no longer than tRFC1 + tRC (a bank's ACT-to-PRE and precharge before it)
    per_channel = refreshes["all_bank"] / geometry.channels
    assert 0.8 * per_channel * 710 * TCK_PS <= stall_ab <= per_channel * (710 + 111) * TCK_PS
    # REFsb blocks 8 of 32 banks for tRFCsb (130 ns) every tREFI2 / 4 = 487.5 ns: 6.7 % of bank time, against
    # REFab's 7.6 % (tRFC1 295 ns every 3.9 us); a ready-first controller serves the other banks meanwhile, and
    # the two stall the stream about alike
    # one REFsb every tREFI / 8 against one REFab every tREFI: eight times the commands over about the same run
    assert 7.5 < refreshes["same_bank"] / refreshes["all_bank"] < 8.5
    assert 0.75 * stall_ab < stall_sb < 1.25 * stall_ab

