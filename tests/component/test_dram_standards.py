"""DRAM standards declared once: bank-group timings (_S between groups, _L within one) by hand,
the VPP currents in the energy, the shipped DDR4 and HBM2 presets, refusals of wrong combinations (DDR5's,
HBM2E's, HBM3's and LPDDR5's too; test_dram_ddr5, _hbm2e, _hbm3 and _lpddr5 check their timings, refresh
modes and presets),
and the declaration table driving the schema, the reference and the kernel's layout."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from simulator.errors import ConfigError
from simulator.config.fields import describe_spec
from simulator.config.loader import load_spec
from simulator.config.schema import DramCurrentsSpec, DramTimingSpec, SystemSpec, dram_parameters
from simulator.memory import dram_kernel as k
from simulator.memory import dram_params, power
from simulator.memory.dram import DramSystem
from tests.component.test_dram import check_protocol, random_chunks
from tests.conftest import DEFAULT_SYSTEM, refused

INTERFACE = {"ddr3_1600_mt41j256m4": "", "ddr4_3200_mt40a1g8": "", "ddr5_4800_mt60b2g8": "",
             "hbm2_8gb_x128": ", interface_energy_j_per_bit: 4 pJ/bit",
             "hbm2e_16gb_3200": ", interface_energy_j_per_bit: 4 pJ/bit",
             "hbm3_8gb_6400": ", interface_energy_j_per_bit: 4 pJ/bit",
             "lpddr5_6400_16gb_x16": ", interface_energy_j_per_bit: 4 pJ/bit"}


def system_file(directory: Path, preset: str) -> Path:
    """A system of the i7-920 host and caches with the DRAM preset ``preset``."""
    path = directory / f"{preset}.yaml"
    path.write_text(f"name: test {preset}\nhost: {{preset: cpu/i7_920}}\ncaches: {{preset: caches/i7_920}}\n"
                    f"dram: {{preset: dram/{preset}{INTERFACE[preset]}}}\n")
    return path


def preset_parameters(tmp_path_factory, preset: str, overrides: tuple[str, ...] = ()):
    """(DramTiming, DramCurrents, DramGeometry) of the DRAM preset ``preset`` in a system of the i7-920."""
    path = system_file(tmp_path_factory.mktemp(preset), preset)
    return dram_parameters(load_spec(path, SystemSpec, list(overrides)).spec)


def column_bank_channel_line(channels: int, banks: int, lines_per_row: int):
    """line(channel, bank, column=0, row=0): the line index under the mapping row:rank:column:bank:channel of
    one rank (consecutive lines alternate channels, then banks)."""
    def line(channel: int, bank: int, column: int = 0, row: int = 0) -> int:
        return ((row * lines_per_row + column) * banks + bank) * channels + channel
    return line


def check_two_burst_lines(timing, currents, geometry, line, same_group_bank: int, first_ps: int,
                          same_group_gap_ps: int) -> None:
    """A 64 B line of two bursts on a pseudo-channel (``line(channel, bank, column)``): the first read of an idle
    memory ends ``first_ps`` after its arrival (tRCD + CL + two bursts back to back); between two row hits,
    a line of ``same_group_bank`` (bank 0's group) ends ``same_group_gap_ps`` (2 x tCCD_L) after bank 0's, and
    one of bank 1 (another group) two bursts after it."""
    d = DramSystem(timing, currents, geometry)
    assert d.service_lines(np.array([line(0, 0)]), np.array([False]), 0)[0] == first_ps
    a = 1_000_000  # the rows opened at 0 are still open: the first refresh is due at tREFI
    for bank, gap_ps in ((same_group_bank, same_group_gap_ps), (1, 2 * timing.burst_ps)):
        d = DramSystem(timing, currents, geometry)
        d.service_lines(np.array([line(0, 0), line(0, bank)]), np.array([False, False]), 0)
        out = d.service_lines(np.array([line(0, 0, 1), line(0, bank, 1)]), np.array([False, False]), a)
        assert out[1] - out[0] == gap_ps


def check_per_bank_refresh(timing, currents, geometry, line, banks: int, t_rfc_pb_ps: int, access_ps: int) -> None:
    """Per-bank refresh of a memory of ``banks`` banks: one command every tREFI / banks to bank 0, 1, 2 in
    turn; then a read of bank 3 (not refreshed yet) takes ``access_ps`` (tRCD + CL + its bursts) and one of
    bank 2 waits for the end of its refresh, ``t_rfc_pb_ps`` after the command."""
    d = DramSystem(timing, currents, geometry, refresh_mode="per_bank", command_log_capacity=256)
    interval = timing.t_refi_ps // banks
    assert d.refresh_interval_ps == interval
    d.idle_until(3 * interval + 1)
    refs = d.command_log()
    refs = refs[refs[:, 2] == 0]  # channel 0
    assert refs[:, 1].tolist() == [k.CMD_REF] * 3 and refs[:, 3].tolist() == [0, 1, 2]
    assert refs[:, 0].tolist() == [interval, 2 * interval, 3 * interval]
    t = 3 * interval + 1
    out = d.service_lines(np.array([line(0, 3), line(0, 2)]), np.array([False, False]), t)
    assert out[0] == t + access_ps
    assert out[1] == 3 * interval + t_rfc_pb_ps + access_ps


@pytest.fixture(scope="module")
def ddr4(tmp_path_factory):
    """(DramTiming, DramCurrents, DramGeometry) of the DDR4-3200 preset, one rank."""
    path = system_file(tmp_path_factory.mktemp("ddr4"), "ddr4_3200_mt40a1g8")
    return dram_parameters(load_spec(path, SystemSpec, ["dram.geometry.ranks_per_channel=1"]).spec)


LINES_PER_ROW = 128  # DDR4 preset: 1024 columns x 8 B x 8 devices = 8 KiB rows of 64 B lines


def line(row, bank, col=0):
    """Line index under the DDR4 preset's mapping row:rank:bank:channel:column, one rank and channel."""
    return (row * 16 + bank) * LINES_PER_ROW + col


def served(d, lines, writes, arrival):
    return d.service_lines(np.array(lines), np.array(writes), arrival)


# -- bank-group timings by hand (DDR4-3200: tCCD_S 4, tCCD_L 8, tRRD_S 4, tRRD_L 8, tWTR_S 4, tWTR_L 12 tCK)
@pytest.mark.parametrize("other_bank, spacing_tck", [(4, 8), (1, 4)])  # bank 4: group 0 as bank 0; bank 1: group 1
def test_two_row_hits_are_spaced_by_tccd_l_in_one_group_and_tccd_s_across(ddr4, other_bank, spacing_tck):
    timing, currents, geometry = ddr4
    d = DramSystem(timing, currents, geometry)
    served(d, [line(0, 0), line(0, other_bank)], [False, False], 0)  # open both rows
    a = 1_000_000
    out = served(d, [line(0, 0, 1), line(0, other_bank, 1)], [False, False], a)
    assert out[0] == a + (22 + 4) * timing.tck_ps  # CL + BL/2
    assert out[1] - out[0] == spacing_tck * timing.tck_ps


@pytest.mark.parametrize("other_bank, spacing_tck", [(4, 8), (1, 4)])
def test_two_activates_are_spaced_by_trrd_l_in_one_group_and_trrd_s_across(ddr4, other_bank, spacing_tck):
    timing, currents, geometry = ddr4
    d = DramSystem(timing, currents, geometry, command_log_capacity=16)
    served(d, [line(0, 0), line(0, other_bank)], [False, False], 0)
    acts = d.command_log()
    acts = acts[acts[:, 1] == k.CMD_ACT]
    assert acts[:, 0].tolist() == [0, spacing_tck * timing.tck_ps]


@pytest.mark.parametrize("other_bank, wtr_tck", [(4, 12), (1, 4)])
def test_read_after_write_waits_twtr_l_in_one_group_and_twtr_s_across(ddr4, other_bank, wtr_tck):
    timing, currents, geometry = ddr4
    d = DramSystem(timing, currents, geometry)
    served(d, [line(0, 0), line(0, other_bank)], [False, False], 0)
    a = 1_000_000
    out = served(d, [line(0, 0, 1), line(0, other_bank, 1)], [True, False], a)
    assert out[0] == a + (16 + 4) * timing.tck_ps  # CWL + BL/2
    # the read command waits tWTR after the write data, then CL and its burst
    assert out[1] == out[0] + (wtr_tck + 22 + 4) * timing.tck_ps


def test_a_stream_in_one_bank_group_runs_at_burst_over_tccd_l_of_peak(ddr4):
    timing, currents, geometry = ddr4
    d = DramSystem(timing, currents, geometry)
    n = LINES_PER_ROW  # one row: every column command in one bank group, tCCD_L = 8 tCK apart
    end = d.service(np.arange(n), False, 0)
    first = (22 + 22 + 4) * timing.tck_ps  # tRCD + CL + BL/2
    assert end == first + (n - 1) * 8 * timing.tck_ps


@pytest.mark.parametrize("scheduler,power_down,command_queue_depth", [
    ("in_order", False, 0), ("frfcfs", True, 0), ("ready_first", True, 0), ("ready_first", False, 8)])
def test_ddr4_command_log_obeys_the_rank_and_bank_group_rules(ddr4, scheduler, power_down, command_queue_depth):
    timing, currents, geometry = ddr4
    g = dataclasses.replace(geometry, ranks_per_channel=2)
    d = DramSystem(timing, currents, g, command_log_capacity=200_000, scheduler=scheduler, power_down=power_down,
                   command_queue_depth=command_queue_depth)
    for arrival, lines, wr in random_chunks(5):
        d.service_lines(lines % g.capacity_lines, wr, arrival)
    log = d.command_log()
    # the rank-wide rules with the short (other-group) spacings
    short = SimpleNamespace(**{**dataclasses.asdict(timing), "t_ccd": timing.t_ccd_s, "t_rrd": timing.t_rrd_s,
                               "t_wtr": timing.t_wtr_s}, burst_ps=timing.burst_ps)
    assert check_protocol(log, short, 2) == len(log)
    # within each bank group, the long spacings
    order = np.lexsort((np.arange(len(log)), log[:, 0]))
    tck, checks = timing.tck_ps, 0
    last: dict[tuple, dict] = {}
    for time, cmd, rank, bank, _ in log[order].tolist():
        if cmd == k.CMD_REF:
            continue
        s = last.setdefault((rank, bank % g.bank_groups), {"act": -10**15, "col": -10**15, "wr_end": -10**15})
        if cmd == k.CMD_ACT:
            assert time >= s["act"] + timing.t_rrd_l * tck
            s["act"] = time
            checks += 1
        elif cmd in (k.CMD_RD, k.CMD_WR):
            assert time >= s["col"] + timing.t_ccd_l * tck
            if cmd == k.CMD_RD:
                assert time >= s["wr_end"] + timing.t_wtr_l * tck
            else:
                s["wr_end"] = time + (timing.cwl + timing.burst_length // 2) * tck
            s["col"] = time
            checks += 1
    assert checks > 1000


# -- energy with VPP ------------------------------------------------------------------------------
def test_vpp_currents_add_to_activate_refresh_and_background_energy(ddr4):
    timing, currents, geometry = ddr4
    n_dev, tck_s = 8, 0.625e-9
    e = power.command_energies_j(timing, currents, geometry)
    # VPP x (IPP0 - IPP3N) x tRC = 0 here (IPP0 = IPP3N = 3 mA): the VDD part alone
    t_rc, t_ras = 74 * tck_s, 52 * tck_s
    e_act = 1.2 * (0.057 * t_rc - (0.052 * t_ras + 0.037 * (t_rc - t_ras)))
    assert e["activate_precharge"] == pytest.approx(e_act * n_dev, rel=1e-12)
    e_ref = (1.2 * (0.250 - 0.052) + 2.5 * (0.028 - 0.003)) * 560 * tck_s
    assert e["refresh"] == pytest.approx(e_ref * n_dev, rel=1e-12)
    assert e["read"] == pytest.approx(1.2 * (0.168 - 0.052) * 4 * tck_s * n_dev, rel=1e-12)
    bg = power.background_power_w(currents, geometry)
    assert bg["active"] == pytest.approx((1.2 * 0.052 + 2.5 * 0.003) * n_dev, rel=1e-12)
    assert bg["precharge_power_down"] == pytest.approx((1.2 * 0.025 + 2.5 * 0.003) * n_dev, rel=1e-12)


def test_vdd_share_alone_leaves_every_vpp_term_out(ddr4):
    timing, currents, geometry = ddr4
    n_dev, tck_s = 8, 0.625e-9
    e = power.command_energies_j(timing, currents, geometry, include_vpp=False)
    assert e["refresh"] == pytest.approx(1.2 * (0.250 - 0.052) * 560 * tck_s * n_dev, rel=1e-12)
    bg = power.background_power_w(currents, geometry, include_vpp=False)
    assert bg["active"] == pytest.approx(1.2 * 0.052 * n_dev, rel=1e-12)
    d = DramSystem(timing, currents, geometry)
    end = d.service(np.arange(4096), False, 0)
    both, vdd = d.energy_j(end), d.energy_j(end, include_vpp=False)
    assert vdd["read"] == both["read"] and vdd["activate_precharge"] == both["activate_precharge"]  # IPP0 = IPP3N
    vpp_background_w = 2.5 * 0.003 * n_dev  # IPP3N in every state of the one rank, over [0, end)
    background = ("background_active", "background_precharge", "background_power_down")
    assert sum(both[c] - vdd[c] for c in background) == pytest.approx(vpp_background_w * end * 1e-12, rel=1e-9)


# -- presets and refusals --------------------------------------------------------------------------
def test_hbm2_stack_streams_near_its_peak(tmp_path):
    spec = load_spec(system_file(tmp_path, "hbm2_8gb_x128"), SystemSpec).spec
    timing, currents, geometry = dram_parameters(spec)
    d = DramSystem(timing, currents, geometry)
    assert d.peak_bandwidth_bytes_per_s == pytest.approx(256e9)  # 8 channels x 64 B per 2 tCK of 1 ns
    n = 1 << 16
    end = d.service(np.arange(n), False, 0)
    assert 0.85 * d.peak_bandwidth_bytes_per_s <= n * 64 / (end * 1e-12) <= d.peak_bandwidth_bytes_per_s


@pytest.mark.parametrize("preset, override, words", [
    ("ddr3_1600_mt41j256m4", "dram.timing.t_ccd_l=6", ["dram.timing.t_ccd_l: ddr3 has no t_ccd_l"]),
    ("ddr3_1600_mt41j256m4", "dram.geometry.bank_groups=2", ["geometry.bank_groups", "ddr3 has no bank groups"]),
    ("ddr3_1600_mt41j256m4", "dram.currents.ipp0_a=3 mA", ["currents.ipp0_a", "ddr3 has no ipp0_a"]),
    ("ddr4_3200_mt40a1g8", "dram.timing.t_ccd_l=3", ["dram.timing.t_ccd_l: 3 tCK; expected >= t_ccd_s (4 tCK)"]),
    ("ddr4_3200_mt40a1g8", "dram.timing.t_wtr_l=2", ["dram.timing.t_wtr_l: 2 tCK; expected >= t_wtr_s (4 tCK)"]),
    ("ddr4_3200_mt40a1g8", "dram.timing.t_ccd=4", ["timing.t_ccd", "ddr4 has no t_ccd"]),
    ("ddr4_3200_mt40a1g8", "dram.geometry.bank_groups=1", ["geometry.bank_groups", "expected 2 or more"]),
    ("ddr4_3200_mt40a1g8", "dram.geometry.bank_groups=32", ["bank_groups", "expected to divide banks (16)"]),
    ("ddr4_3200_mt40a1g8", "dram.standard=ddr3", ["timing.t_rrd", "missing; ddr3 requires it"]),
    ("hbm2_8gb_x128", "dram.geometry.ranks_per_channel=2", ["ranks_per_channel", "one rank"]),
    ("ddr3_1600_mt41j256m4", "dram.geometry.refresh_mode=same_bank",
     ["geometry.refresh_mode", "ddr3 refreshes all_bank"]),
    ("ddr4_3200_mt40a1g8", "dram.timing.t_ccd_l_wr=16", ["timing.t_ccd_l_wr", "ddr4 has no t_ccd_l_wr"]),
    ("ddr3_1600_mt41j256m4", "dram.timing.t_rfc_sb=40", ["timing.t_rfc_sb", "ddr3 has no t_rfc_sb"]),
    ("ddr5_4800_mt60b2g8", "dram.timing.t_ccd_l_wr=10",
     ["dram.timing.t_ccd_l_wr: 10 tCK; expected >= t_ccd_l (12 tCK)"]),
    ("ddr5_4800_mt60b2g8", "dram.timing.t_ccd_l=6", ["dram.timing.t_ccd_l: 6 tCK; expected >= t_ccd_s (8 tCK)"]),
    ("ddr5_4800_mt60b2g8", "dram.timing.t_rfc_sb=800",
     ["dram.timing.t_rfc_sb: 800 tCK; expected <= t_rfc (710 tCK)"]),
    ("ddr5_4800_mt60b2g8", "dram.timing.t_cke=8", ["timing.t_cke", "ddr5 has no t_cke"]),
    ("ddr5_4800_mt60b2g8", "dram.currents.vpp_v=1.8 V", ["currents.ipp0_a", "expected every VPP key"]),
    ("ddr5_4800_mt60b2g8", "dram.currents.idd5sb_a=80 mA", ["currents.idd5sb_a", "expected >= idd2n_a"]),
    ("ddr5_4800_mt60b2g8", "dram.geometry.bank_groups=1", ["geometry.bank_groups", "expected 2 or more"]),
    ("ddr5_4800_mt60b2g8", "dram.geometry.refresh_mode=per_bank",
     ["geometry.refresh_mode", "ddr5 refreshes all_bank or same_bank"]),
    ("ddr5_4800_mt60b2g8", "dram.timing.t_rfc_pb=100", ["timing.t_rfc_pb", "ddr5 has no t_rfc_pb"]),
    ("hbm3_8gb_6400", "dram.currents.idd0_a=60 mA", ["currents.idd0_a", "hbm3 has no idd0_a"]),
    ("hbm3_8gb_6400", "dram.geometry.refresh_mode=same_bank", ["geometry.refresh_mode", "hbm3 refreshes"]),
    ("hbm3_8gb_6400", "dram.geometry.power_down=true", ["currents.idd3p_a", "power_down"]),
    ("lpddr5_6400_16gb_x16", "dram.geometry.refresh_mode=same_bank", ["geometry.refresh_mode", "lpddr5 refreshes"]),
    ("lpddr5_6400_16gb_x16", "dram.timing.t_rfc_pb=300", ["dram.timing.t_rfc_pb: 300 tCK; expected <= t_rfc (224 tCK)"]),
    ("hbm3_8gb_6400", "dram.geometry.bus_width_bits=128",
     ["caches.line_bytes: 64 B; expected a power-of-two number of bursts", "128 B each"]),
    ("hbm2e_16gb_3200", "dram.geometry.refresh_mode=same_bank",
     ["geometry.refresh_mode", "hbm2e refreshes all_bank or per_bank"]),
    ("hbm2e_16gb_3200", "dram.timing.t_ccd_l=1", ["dram.timing.t_ccd_l: 1 tCK; expected >= t_ccd_s (2 tCK)"]),
    ("hbm2e_16gb_3200", "dram.timing.t_rfc_pb=600", ["dram.timing.t_rfc_pb: 600 tCK; expected <= t_rfc (560 tCK)"]),
    ("hbm2e_16gb_3200", "dram.timing.t_rc=60", ["dram.timing.t_rc: 60 tCK; expected >= t_ras + t_rp (68 tCK)"]),
    ("hbm2e_16gb_3200", "dram.currents.idd0_a=60 mA", ["currents.idd0_a", "hbm2e has no idd0_a"]),
    ("hbm2e_16gb_3200", "dram.timing.t_cke=8", ["timing.t_cke", "hbm2e has no t_cke"]),
    ("hbm2e_16gb_3200", "dram.geometry.ranks_per_channel=2", ["ranks_per_channel", "one rank"]),
    ("hbm2e_16gb_3200", "dram.geometry.power_down=true", ["currents.idd3p_a", "power_down"]),
    ("hbm2e_16gb_3200", "dram.standard=hbm2", ["timing.t_rfc_pb", "hbm2 has no t_rfc_pb"]),
    ("hbm2e_16gb_3200", "dram.geometry.bus_width_bits=256",
     ["caches.line_bytes: 64 B; expected a power-of-two number of bursts", "128 B each"]),
])
def test_a_wrong_combination_is_refused_with_exit_2_naming_file_and_key(tmp_path, capsys, preset, override, words):
    system = system_file(tmp_path, preset)
    out = tmp_path / "run"
    errors = refused(["run", str(system), "configs/workloads/stream_read.yaml", "--set", override, "--out", str(out)],
                     capsys, out)
    assert len(errors) == 1
    assert str(system) in errors[0] and all(w in errors[0] for w in words), errors[0]


# peak by hand: channels x one burst (bus width x BL) per BL / (beats per tCK) tCK
@pytest.mark.parametrize("preset, peak_bytes_per_s", [
    ("hbm3_8gb_6400", 32 * 32 / 1.25e-9),  # 32 pseudo-channels x 32 B per 2 tCK of 0.625 ns: 819.2 GB/s
    ("hbm2e_16gb_3200", 16 * 32 / 1.25e-9),  # 16 pseudo-channels x 32 B (BL4 x 64 bits) per 2 tCK of 0.625 ns: 409.6
    ("lpddr5_6400_16gb_x16", 4 * 32 / 2.5e-9),  # 4 x16 channels x 32 B per 2 tCK of 1.25 ns: 51.2 GB/s
])
def test_sequential_reads_of_a_preset_with_two_bursts_a_line_run_near_its_peak(tmp_path_factory, preset,
                                                                               peak_bytes_per_s):
    timing, currents, geometry = preset_parameters(tmp_path_factory, preset)
    d = DramSystem(timing, currents, geometry, scheduler="ready_first", refresh_mode="per_bank")
    assert d.peak_bandwidth_bytes_per_s == pytest.approx(peak_bytes_per_s)
    n = 1 << 16
    end = d.service(np.arange(n), False, 0)
    assert 0.95 * peak_bytes_per_s <= n * 64 / (end * 1e-12) <= peak_bytes_per_s


@pytest.mark.parametrize("preset", ["ddr5_4800_mt60b2g8", "hbm2e_16gb_3200", "hbm3_8gb_6400",
                                    "lpddr5_6400_16gb_x16"])
def test_a_preset_runs_a_stream_workload(tmp_path, preset):
    from simulator.cli import main

    out = tmp_path / "run"
    assert main(["run", str(system_file(tmp_path, preset)), "configs/workloads/stream_read.yaml", "--out", str(out)]) == 0
    assert (out / "summary.json").exists()


def test_a_missing_timing_of_the_standard_is_refused(tmp_path):
    path = tmp_path / "sys.yaml"
    text = system_file(tmp_path, "ddr4_3200_mt40a1g8").read_text()
    path.write_text(text.replace("{preset: dram/ddr4_3200_mt40a1g8}",
                                 "{preset: dram/ddr4_3200_mt40a1g8, standard: hbm2}"))
    with pytest.raises(ConfigError, match=r"dram.timing.t_rtrs: hbm2 has no t_rtrs"):
        load_spec(path, SystemSpec)


def test_unused_currents_are_not_parameters():
    names = {p.key for p in dram_params.PARAMETERS}
    assert not {"idd1_a", "idd2q_a"} & names
    with pytest.raises(ConfigError, match="idd1_a: unknown key"):
        load_spec(DEFAULT_SYSTEM, SystemSpec, ["dram.currents.idd1_a=115 mA"])


# -- the table drives the schema, the reference and the kernel --------------------------------------
def test_schema_sections_are_the_declared_parameters():
    timing = [f.name for f in dataclasses.fields(DramTimingSpec)]
    currents = [f.name for f in dataclasses.fields(DramCurrentsSpec)]
    assert timing == [p.key for p in dram_params.section_parameters("timing")]
    assert currents == [p.key for p in dram_params.section_parameters("currents")]


def test_keys_reference_documents_each_standards_parameters():
    rows = {r.key: r for r in describe_spec(SystemSpec)}
    assert rows["dram.standard"].accepts == "one of 'ddr3', 'ddr4', 'hbm2', 'hbm2e', 'ddr5', 'hbm3', 'lpddr5'"
    assert "[required by ddr4, hbm2, hbm2e, ddr5, hbm3, lpddr5]" in rows["dram.timing.t_ccd_l"].doc
    assert "[required by hbm2e, hbm3, lpddr5]" in rows["dram.timing.t_rfc_pb"].doc
    assert "[required by ddr5]" in rows["dram.timing.t_rfc_sb"].doc and "[required by ddr5]" in rows[
        "dram.currents.idd5sb_a"].doc
    assert "one of 'all_bank', 'same_bank', 'per_bank'" == rows["dram.geometry.refresh_mode"].accepts
    assert "[required by ddr3]" in rows["dram.timing.t_ccd"].doc
    assert "[required by ddr4; optional in ddr5]" in rows["dram.currents.ipp3n_a"].doc and rows["dram.currents.ipp3n_a"].unit == "A"
    assert "[optional in ddr3, ddr4, hbm2, ddr5]" in rows["dram.currents.idd3p_a"].doc
    assert rows["dram.timing.tck_s"].default == "required"
    assert "[required by ddr3, ddr4, hbm2, ddr5]" in rows["dram.currents.idd0_a"].doc


def test_kernel_layout_is_the_declared_one_and_a_stale_layout_is_refused(ddr4):
    assert k.N_PARAMS == len(dram_params.KERNEL_SLOTS)
    assert (k.P_CCD_S, k.P_CCD_L, k.P_LAYOUT) == tuple(dram_params.SLOT_INDEX[s] for s in ("ccd_s", "ccd_l", "layout"))
    timing, currents, geometry = ddr4
    d = DramSystem(timing, currents, geometry)
    p = d._p
    assert p[k.P_CCD_L] == 8 * timing.tck_ps and p[k.P_RRD_S] == 4 * timing.tck_ps and p[k.P_BG_MASK] == 3
    d._p = p.copy()
    d._p[k.P_LAYOUT] += 1
    with pytest.raises(RuntimeError, match="stale"):
        d.service(np.array([1]), False, 0)


def test_the_table_is_consistent():
    params = dram_params.PARAMETERS
    assert all(set(p.standards) <= set(dram_params.STANDARDS) for p in params)
    assert len({p.key for p in params}) == len({p.model_name for p in params}) == len(params)
    # a standard has either the single or the _S/_L form of each bank-group timing, by its feature
    for name, standard in dram_params.STANDARDS.items():
        for single in ("t_ccd", "t_rrd", "t_wtr"):
            pair = (dram_params.PARAMETER_BY_KEY[f"{single}_s"], dram_params.PARAMETER_BY_KEY[f"{single}_l"])
            assert (name in dram_params.PARAMETER_BY_KEY[single].standards) != standard.bank_groups
            assert all((name in p.standards) == standard.bank_groups for p in pair)
        assert all((name in p.standards) == standard.vpp for p in params if p.key.startswith(("vpp", "ipp")))


def test_ready_first_interleaves_bank_groups_that_in_order_serves_back_to_back(ddr4):
    timing, currents, geometry = ddr4
    tck = timing.tck_ps
    a = 1_000_000
    chunk = [line(0, 0, 1), line(0, 4, 1), line(0, 1, 1)]  # row hits: bank 0, bank 4 (group 0), bank 1 (group 1)
    done = {}
    for scheduler in ("in_order", "ready_first"):
        d = DramSystem(timing, currents, geometry, scheduler=scheduler)
        served(d, [line(0, 0), line(0, 4), line(0, 1)], [False] * 3, 0)  # open the three rows
        done[scheduler] = served(d, chunk, [False] * 3, a).tolist()
    first = a + (22 + 4) * tck  # CL + BL/2
    # in order: bank 4 waits tCCD_L (8) after bank 0, bank 1 tCCD_S (4) after bank 4
    assert done["in_order"] == [first, first + 8 * tck, first + 12 * tck]
    # ready first: bank 1 (other group, tCCD_S) before bank 4, which still waits tCCD_L after bank 0
    assert done["ready_first"] == [first, first + 8 * tck, first + 4 * tck]


def test_through_the_command_queues_tied_banks_take_turns_in_dramsim3s_queue_order(ddr4):
    # DRAMSim3 numbers its per-bank queues by rank, bank group, then bank within the group; offsim's bank index has
    # the group in its low bits (bank 4 is group 0's second bank, bank 1 group 1's first). After bank 0, its next
    # queue is bank 4's: of two row hits ready at once, bank 4's goes first though bank 1's is older.
    timing, currents, geometry = ddr4
    d = DramSystem(timing, currents, geometry, scheduler="ready_first", command_queue_depth=8,
                   command_log_capacity=64)
    for bank in (1, 4, 0):  # open row 1 in banks 1, 4 and 0, bank 0 served last
        served(d, [line(1, bank)], [False], 0)
    before = len(d.command_log())
    served(d, [line(1, 1, 1), line(1, 4, 1)], [False, False], 1_000_000)
    log = d.command_log()[before:]
    assert log[:, 1].tolist() == [k.CMD_RD] * 2
    assert log[:, 3].tolist() == [4, 1]
