"""HBM2E: on the 16 GiB stack preset of 64-bit pseudo-channels a 64 B line takes two 32 B BL4 bursts, per-bank
refresh (REFSB) blocks one of 32 banks at a time, random reads of both controllers against their activate bound, the
energy of a standard without declared currents (unknown where spent, 0 J where nothing was done) and the
LAP system beside an HBM2E stack (test_dram_standards: it streams near its peak, and its refusals)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from simulator.cli import main
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import replay
from simulator.memory.dram import DramSystem
from simulator.system import build_system
from tests.component.test_dram_standards import (check_per_bank_refresh, check_two_burst_lines,
                                                column_bank_channel_line, preset_parameters)
from tests.conftest import CONFIGS
from workloads.gemm import lap_gemm

PRESET = "hbm2e_16gb_3200"
TCK_PS = 625
BURST_PS = 2 * TCK_PS  # BL4 at two beats per tCK


@pytest.fixture(scope="module")
def hbm2e(tmp_path_factory):
    return preset_parameters(tmp_path_factory, PRESET)


line = column_bank_channel_line(channels=16, banks=32, lines_per_row=16)  # 1 KiB rows of 64 B lines


def test_a_line_is_two_bursts_and_holds_its_bank_group_two_tccd_l(hbm2e):
    timing, currents, geometry = hbm2e
    assert (geometry.channels, geometry.banks, geometry.bank_groups, geometry.capacity_bytes) == (16, 32, 8, 16 << 30)
    # tRCD + CL + two bursts; banks 0 and 8 share group 0 (b mod 8), held tCCD_L (5 tCK) per burst
    check_two_burst_lines(*hbm2e, line, same_group_bank=8, first_ps=(20 + 28) * TCK_PS + 2 * BURST_PS,
                          same_group_gap_ps=2 * 5 * TCK_PS)


def test_a_per_bank_refresh_blocks_one_of_32_banks_at_a_time(hbm2e):
    # one REFSB every tREFI / 32 banks, each blocking its bank for tRFCSB (256 tCK)
    check_per_bank_refresh(*hbm2e, line, banks=32, t_rfc_pb_ps=256 * TCK_PS,
                           access_ps=(20 + 28) * TCK_PS + 2 * BURST_PS)


def test_random_reads_are_bound_by_the_activates_and_ready_first_serves_nearer_the_bound(hbm2e):
    """32 Ki reads over the 16 GiB, queued at once: nearly every one a row miss, so a pseudo-channel moves at
    most one line per tRRD_S (7 tCK; tFAW allows 4 per 26): 16 x 64 B / 4.375 ns = 234 GB/s, 57 % of the
    peak. ready_first serves around the busy banks and comes near that bound; frfcfs, first-ready within
    blocks of the queue, stays further from it."""
    timing, currents, geometry = hbm2e
    activate_bound = 16 * 64 * 1e12 / (7 * TCK_PS)
    lines = np.random.default_rng(1).integers(0, geometry.capacity_lines, 1 << 15)
    achieved = {}
    for scheduler in ("ready_first", "frfcfs"):
        d = DramSystem(timing, currents, geometry, scheduler=scheduler, refresh_mode="per_bank")
        achieved[scheduler] = len(lines) * 64 / (d.service(lines, False, 0) * 1e-12)
    assert 0.8 * activate_bound <= achieved["ready_first"] <= activate_bound
    assert achieved["frfcfs"] < achieved["ready_first"]


def test_energy_without_currents_is_unknown_where_spent_and_zero_where_nothing_was_done(hbm2e):
    timing, currents, geometry = hbm2e
    d = DramSystem(timing, currents, geometry)
    end = d.service(np.arange(64), False, 0)  # 4 lines to each pseudo-channel, its first ACT at 0
    energy = d.energy_j(end)
    assert all(math.isnan(energy[c]) for c in ("background_active", "activate_precharge", "read"))
    # no write, no refresh due before tREFI, never all banks precharged after 0, never powered down
    nothing = ("write", "refresh", "background_precharge", "background_power_down")
    assert end < 3_900_000 and all(energy[c] == 0.0 for c in nothing)
    assert math.isnan(sum(energy.values()))


def test_the_lap_works_in_the_hbm2e_stack(tmp_path):
    """The shipped system of the LAP beside an HBM2E stack: the LAP's operands are served by the stack, whose
    energy is unknown; a host workload that leaves the stack idle runs too (its unused commands cost 0 J)."""
    path = CONFIGS / "systems" / "lap_hbm2e_stack.yaml"
    system = build_system(load_spec(path, SystemSpec).spec)
    replay(system, lap_gemm(35, 200, 35, produce_inputs=True, consume_output=True))
    stack = system.near_memories["hbm"].counters_by_requester()
    assert stack["lap"]["reads"] * 64 >= 8 * (35 * 35 + 35 * 200 + 35 * 200)  # A, B and C read from the stack
    assert "lap" not in system.dram.counters_by_requester()
    workload = tmp_path / "stream.yaml"
    workload.write_text("name: stream\ngenerator: stream\nparams: {kind: read, array_bytes: 1 MiB}\n")
    assert main(["run", str(path), str(workload), "--out", str(tmp_path / "run")]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["energy_by_component_j"]["hbm"] is None and summary["energy_total_j"] is None
    assert summary["energy_j"]["hbm"]["read"] == 0.0 and summary["energy_j"]["dram"]["read"] > 0


def test_offsim_keys_dram_lists_the_standard_and_its_per_bank_refresh(capsys):
    assert main(["keys", "dram"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "'hbm2e'" in rows["dram.standard"] and "JESD235C/D" in rows["dram.standard"]
    assert "[required by hbm2e, hbm3, lpddr5]" in rows["dram.timing.t_rfc_pb"]
    assert "hbm2e" not in rows["dram.currents.idd0_a"].split("[")[1]  # no currents
