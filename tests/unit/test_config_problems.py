"""Rules across keys report the key they refuse as data: a ``Problem`` carries the file, the dotted key,
the detail and the other keys the rule reads, so that reports and ``--set`` attribution never read keys
back out of message text."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from simulator.errors import ConfigError, FieldError, Problem
from simulator.config.loader import load_spec, resolve_presets
from simulator.config.schema import SystemSpec
from simulator.config.yamlio import load_yaml
from tests.conftest import CONFIGS, DEFAULT_SYSTEM, ddr3_preset

HBM_STACK = CONFIGS / "systems" / "lap_hbm_stack.yaml"


def _system_with(tmp_path: Path, base: Path, section: tuple[str, ...], changes: dict) -> Path:
    """``base`` resolved, with ``changes`` written into the section at ``section``, as a file of its own."""
    raw = resolve_presets(load_yaml(base), str(base))
    node = raw
    for part in section:
        node = node[part]
    node.update(changes)
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _only_problem(path: Path, overrides: tuple[str, ...] = ()) -> Problem:
    with pytest.raises(ConfigError) as err:
        load_spec(path, SystemSpec, overrides)
    (problem,) = err.value.problems
    assert err.value.messages == [str(problem)]
    return problem


def test_a_dram_timing_order_names_its_key_and_the_keys_it_reads(tmp_path):
    # tRAS below tRCD: the row would close before its column command (JESD79-3F: tRAS >= tRCD)
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("dram", "timing"), {"t_ras": 5, "t_rcd": 11})
    problem = _only_problem(path)
    assert (problem.source, problem.key, problem.related) == (str(path), "dram.timing.t_ras", ("dram.timing.t_rcd",))
    assert problem.detail == "5 tCK; expected >= t_rcd (11 tCK)"
    assert str(problem) == f"{path}: dram.timing.t_ras: 5 tCK; expected >= t_rcd (11 tCK)"


def test_a_sum_rule_reads_each_of_its_terms(tmp_path):
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("dram", "timing"), {"t_rc": 20, "t_ras": 28, "t_rp": 11})
    problem = _only_problem(path)
    assert problem.key == "dram.timing.t_rc"
    assert problem.related == ("dram.timing.t_ras", "dram.timing.t_rp")
    assert "expected >= t_ras + t_rp (39 tCK)" in problem.detail


def test_a_current_order_is_keyed_and_shown_in_the_configs_units(tmp_path):
    # the model keeps currents in mA under other names (idd0_ma); the problem names the config's keys. IDD0 is
    # above the preset's IDD2N (70 mA), the floor of every standard, and below IDD3N, DDR3's own floor
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("dram", "currents"), {"idd0_a": "80 mA", "idd3n_a": "90 mA"})
    problem = _only_problem(path)
    assert (problem.key, problem.related) == ("dram.currents.idd0_a", ("dram.currents.idd3n_a",))
    assert problem.detail.startswith("80 mA; expected >= idd3n_a (90 mA)")


def test_a_current_below_every_standards_floor_names_idd2n(tmp_path):
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("dram", "currents"), {"idd0_a": "30 mA"})
    problem = _only_problem(path)
    assert (problem.key, problem.related) == ("dram.currents.idd0_a", ("dram.currents.idd2n_a",))
    assert problem.detail.startswith("30 mA; expected >= idd2n_a (70 mA)")


def _default_system_with_dram(tmp_path: Path, preset: str, section: str, changes: dict) -> Path:
    """The default system with the DRAM preset ``preset``, ``changes`` written into its ``section``."""
    raw = resolve_presets(load_yaml(DEFAULT_SYSTEM), str(DEFAULT_SYSTEM))
    raw["dram"] = resolve_presets({"dram": {"preset": preset}}, str(DEFAULT_SYSTEM))["dram"]
    raw["dram"].setdefault("interface_energy_j_per_bit", "4 pJ/bit")  # a stack's preset leaves it to the system
    raw["dram"][section].update(changes)
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_a_command_current_below_the_standby_its_time_draws_is_refused(tmp_path):
    # DDR5's IDD3N holds every bank open: an ACT's standby is IDD2N + (IDD3N - IDD2N) / banks over tRAS and IDD2N
    # over the rest of tRC, above the IDD2N (92 mA) the currents' own check applies; 93 mA would price the ACT
    # below zero
    path = _default_system_with_dram(tmp_path, "dram/ddr5_4800_mt60b2g8", "currents", {"idd0_a": "93 mA"})
    problem = _only_problem(path)
    assert problem.key == "dram.currents.idd0_a" and "dram.timing.t_ras" in problem.related
    assert problem.detail.startswith("93 mA; expected at least 93.08 mA: a command draws at least the standby")


@pytest.mark.parametrize("key, value, ceiling", [("idd2p_a", "71 mA", "idd2n_a (70 mA)"),
                                                 ("idd3p_a", "68 mA", "idd3n_a (67 mA)")])
def test_a_power_down_current_above_its_standby_is_refused(tmp_path, key, value, ceiling):
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("dram", "currents"), {key: value})
    problem = _only_problem(path)
    assert problem.key == f"dram.currents.{key}" and problem.detail.startswith(f"{value}; expected <= {ceiling}")


@pytest.mark.parametrize("preset, burst_length, beats", [("dram/lpddr5_6400_16gb_x16", 4, 8),
                                                         ("dram/hbm3_8gb_6400", 2, 4)])
def test_a_burst_shorter_than_a_clock_is_refused(tmp_path, preset, burst_length, beats):
    path = _default_system_with_dram(tmp_path, preset, "timing", {"burst_length": burst_length})
    problem = _only_problem(path)
    assert problem.key == "dram.timing.burst_length"
    assert problem.detail.startswith(f"{burst_length} beats; expected a multiple of {beats}")


def test_a_refresh_interval_rule_names_config_keys_not_model_fields(tmp_path):
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("dram", "timing"), {"t_refi_s": "1 us", "t_rfc": 1000})
    problem = _only_problem(path)
    assert problem.key == "dram.timing.t_refi_s"
    assert problem.related == ("dram.timing.t_rfc", "dram.timing.tck_s")
    assert "_ps" not in str(problem) and problem.detail.startswith("1 us; expected > t_rfc x tck_s (1.25 us)")


def test_a_near_memorys_rule_is_keyed_under_that_memory(tmp_path):
    path = _system_with(tmp_path, HBM_STACK, ("near_memories", "hbm", "timing"), {"t_ras": 1})
    problem = _only_problem(path)
    assert problem.key == "near_memories.hbm.timing.t_ras"
    assert problem.related == ("near_memories.hbm.timing.t_rcd",)


@pytest.mark.parametrize("system, override, memory", [
    (DEFAULT_SYSTEM, "caches.line_bytes=256 B", "dram"),
    (HBM_STACK, "near_memories.hbm.timing.burst_length=8", "near_memories.hbm"),  # only the stack's rule breaks
])
def test_the_line_is_one_burst_rule_reads_keys_of_two_sections(system, override, memory):
    problem = _only_problem(system, (override,))
    assert (problem.key, problem.option) == ("caches.line_bytes", f"--set {override}")
    assert problem.related == (f"{memory}.geometry.bus_width_bits", f"{memory}.timing.burst_length")
    assert f"{memory}.geometry.bus_width_bits" in problem.detail and "expected one burst" in problem.detail


def test_an_override_of_a_key_the_rule_reads_is_named_as_the_cause():
    # raising tRCD above the file's tRAS breaks the rule on t_ras: the --set that did it is named
    problem = _only_problem(DEFAULT_SYSTEM, ("dram.timing.t_rcd=40",))
    assert problem.option == "--set dram.timing.t_rcd=40"
    assert problem.key == "dram.timing.t_ras" and problem.related == ("dram.timing.t_rcd",)
    assert str(problem) == (f"--set dram.timing.t_rcd=40 (over {DEFAULT_SYSTEM}): dram.timing.t_ras: "
                            f"{problem.detail}")


def test_an_override_of_the_refused_key_is_named_in_its_own_spelling():
    problem = _only_problem(CONFIGS / "systems" / "lap_llc.yaml", ("caches.levels.L2.ways=7",))
    assert problem.option == "--set caches.levels.L2.ways=7"
    assert problem.key == "caches.levels[1].size_bytes"  # the rule is about the set count, which ways changed
    assert "caches.levels[1].ways" in problem.related


def test_the_dram_model_raises_the_same_structured_error():
    timing, _, geometry = ddr3_preset()
    with pytest.raises(FieldError) as err:
        dataclasses.replace(timing, t_ras=timing.t_rcd - 1)
    assert (err.value.key, err.value.related) == ("t_ras", ("t_rcd",))
    assert str(err.value).startswith("DramTiming.t_ras: ")
    with pytest.raises(FieldError) as err:
        dataclasses.replace(geometry, bank_groups=geometry.banks * 2)
    assert (err.value.key, err.value.related) == ("bank_groups", ("banks",))


def test_more_cache_levels_than_the_kernels_can_name_are_refused_at_load(tmp_path):
    raw = resolve_presets(load_yaml(DEFAULT_SYSTEM), str(DEFAULT_SYSTEM))
    first = raw["caches"]["levels"][0]
    raw["caches"]["levels"] = [{**first, "name": f"L{i}"} for i in range(127)]
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(raw))
    problem = _only_problem(path)
    assert problem.key == "caches.levels" and "127 levels; expected at most 126" in str(problem)


@pytest.mark.parametrize("enabled", [True, False])
def test_a_prefetcher_level_that_names_no_level_is_refused_with_the_prefetcher_on_or_off(tmp_path, enabled):
    path = _system_with(tmp_path, DEFAULT_SYSTEM, ("caches", "prefetcher"), {"enabled": enabled, "level": "L7"})
    problem = _only_problem(path)
    assert (problem.key, problem.related) == ("caches.prefetcher.level", ("caches.levels",))
    assert problem.detail.startswith("'L7' is not a level; expected one of ['L1D', 'L2', 'LLC']")
    assert ("checked with the prefetcher off too" in problem.detail) is not enabled


def test_the_default_prefetcher_level_need_name_a_level_only_with_the_prefetcher_on(tmp_path):
    # a hierarchy without an L2 and its prefetcher off loads without naming a level; on, the default is refused
    raw = resolve_presets(load_yaml(DEFAULT_SYSTEM), str(DEFAULT_SYSTEM))
    raw["caches"]["levels"][1]["name"] = "MLC"
    del raw["caches"]["prefetcher"]["level"]
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert load_spec(path, SystemSpec).spec.caches.prefetcher.level == "L2"
    problem = _only_problem(path, ("caches.prefetcher.enabled=true",))
    assert problem.key == "caches.prefetcher.level" and problem.detail.startswith("'L2' is not a level")


@pytest.mark.parametrize("text, key", [
    ("1" + "0" * 400, "host.flops_per_cycle"),  # a whole number beyond a float: no OverflowError
    (".inf", "host.flops_per_cycle"),
    ("1" + "0" * 400, "accelerators.lap.interface.offload_overhead_cycles"),
])
def test_a_number_beyond_the_float_range_is_refused_as_not_finite(tmp_path, text, key):
    raw = load_yaml(CONFIGS / "systems" / "lap_dram.yaml")
    path = tmp_path / "system.yaml"
    path.write_text(yaml.safe_dump(raw) + "\n")
    problem = _only_problem(path, (f"{key}={text}",))
    assert problem.key == key and problem.detail.startswith("expected a finite number, got ")
    assert len(str(problem)) < 600  # the value quoted is cut (as_written), not its 400 digits


def test_an_option_quoted_in_a_message_is_one_line_and_cut():
    problem = _only_problem(DEFAULT_SYSTEM, ("host.flops_per_cycle=" + "9" * 5000,))
    message = str(problem)
    assert "\n" not in message and len(message) < 600 and message.startswith("--set host.flops_per_cycle=999")


def test_a_cache_level_renamed_onto_an_accelerator_names_the_option():
    # the rule is the accelerator's name, but the --set that made it collide renamed a cache level
    problem = _only_problem(CONFIGS / "systems" / "lap_llc.yaml", ("caches.levels.L2.name=lap",))
    assert problem.option == "--set caches.levels.L2.name=lap"
    assert problem.key == "accelerators.lap" and problem.related == ("caches.levels[1].name",)


def test_a_value_a_preset_wrote_names_that_preset(tmp_path):
    """The key is the system's, but the refused value is written in a preset: the message names that file too."""
    text = (CONFIGS / "presets" / "cpu" / "i7_920.yaml").read_text()
    (tmp_path / "my_cpu.yaml").write_text("\n".join("max_outstanding_misses: zero" if line.startswith(
        "max_outstanding_misses:") else line for line in text.split("\n")))
    system = tmp_path / "system.yaml"
    system.write_text((CONFIGS / "systems" / "i7_920_ddr3.yaml").read_text().replace("{preset: cpu/i7_920}",
                                                                                      "{preset: my_cpu.yaml}"))
    problem = _only_problem(system)
    assert problem.key == "host.max_outstanding_misses" and problem.source == str(system)
    assert problem.detail == f"expected an integer, got 'zero' (written in preset {tmp_path / 'my_cpu.yaml'})"
    # a value the system file itself writes over the preset is the system file's alone
    system.write_text(system.read_text().replace("{preset: my_cpu.yaml}",
                                                 "{preset: my_cpu.yaml, max_outstanding_misses: none}"))
    assert _only_problem(system).detail == "expected an integer, got 'none'"


def test_a_preset_path_that_is_a_directory_is_said_to_be_one(tmp_path):
    (tmp_path / "cpu.yaml").mkdir()
    system = tmp_path / "system.yaml"
    system.write_text((CONFIGS / "systems" / "i7_920_ddr3.yaml").read_text().replace("{preset: cpu/i7_920}",
                                                                                      "{preset: cpu.yaml}"))
    with pytest.raises(ConfigError) as err:
        load_spec(system, SystemSpec)
    assert err.value.messages == [f"{system}: host.preset: a directory, not a file: '{tmp_path / 'cpu.yaml'}'; "
                                  "expected a preset file (a path relative to the file that names it, or absolute)"]


def test_a_rule_broken_by_the_system_files_own_value_does_not_blame_a_preset(tmp_path):
    # the cache line (the caches preset's) is one DRAM burst no more because the system file widened the bus
    system = tmp_path / "system.yaml"
    system.write_text((CONFIGS / "systems" / "i7_920_ddr3.yaml").read_text().replace(
        "dram: {preset: dram/ddr3_1600_mt41j256m4}",
        "dram: {preset: dram/ddr3_1600_mt41j256m4, geometry: {bus_width_bits: 128}}"))
    problem = _only_problem(system)
    assert problem.key == "caches.line_bytes" and "dram.geometry.bus_width_bits" in problem.related
    assert "preset" not in problem.detail
