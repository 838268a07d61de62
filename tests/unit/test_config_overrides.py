"""--set overrides on accelerator entries: kind-specific keys are accepted for that kind only."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.errors import ConfigError
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from tests.conftest import CONFIGS

LAP_LLC = CONFIGS / "systems" / "lap_llc.yaml"
T2 = CONFIGS / "systems" / "logca_ultrasparc_t2.yaml"


def test_kind_specific_key_of_the_entrys_kind_is_overridden():
    spec = load_spec(T2, SystemSpec, ["accelerators.crypto.sha_setup_cycles=123"]).spec
    assert spec.accelerators["crypto"].sha_setup_cycles == 123
    spec = load_spec(LAP_LLC, SystemSpec, ["accelerators.lap.frequency_hz=1 GHz"]).spec
    assert spec.accelerators["lap"].frequency_hz == 1e9


def test_interface_key_is_overridden_with_its_unit():
    spec = load_spec(LAP_LLC, SystemSpec, ["accelerators.lap.interface.bandwidth_bytes_per_s=25.6 GB/s"]).spec
    assert spec.accelerators["lap"].interface.bandwidth_bytes_per_s == 25.6e9


def test_key_of_another_kind_is_refused_naming_option_key_and_expectation():
    with pytest.raises(ConfigError) as err:
        load_spec(LAP_LLC, SystemSpec, ["accelerators.lap.sha_setup_cycles=1"])
    message = str(err.value)
    assert "--set accelerators.lap.sha_setup_cycles=1" in message and "unknown key" in message
    assert "frequency_hz" in message  # the LAP's keys are listed as what is expected


def test_a_cache_level_that_does_not_exist_is_refused_naming_those_that_do():
    with pytest.raises(ConfigError) as err:
        load_spec(LAP_LLC, SystemSpec, ["caches.levels.L4.size_bytes=1 MiB"])
    assert str(err.value) == ("--set caches.levels.L4.size_bytes=1 MiB: caches.levels.L4: no list item named 'L4'; "
                              "expected one of L1D, L2, LLC (or an index 0 to 2)")


def test_key_of_no_kind_is_refused_before_building():
    with pytest.raises(ConfigError, match="accelerators.lap.no_such_key: unknown key"):
        load_spec(LAP_LLC, SystemSpec, ["accelerators.lap.no_such_key=1"])


def test_mistyped_override_and_workload_parameter_get_a_did_you_mean():
    with pytest.raises(ConfigError, match=r"host.max_outstandng_misses: unknown key \(did you mean "
                                          r"max_outstanding_misses\?\)"):
        load_spec(LAP_LLC, SystemSpec, ["host.max_outstandng_misses=4"])
    from workloads.spec import build_workload

    with pytest.raises(ConfigError, match=r"params.arry_bytes: unknown parameter of stream \(did you mean array_bytes"):
        build_workload({"generator": "stream", "params": {"kind": "triad", "arry_bytes": "1 MiB"}}, "w.yaml", Path("."))


def test_dram_controller_keys_are_read_and_validated():
    spec = load_spec(LAP_LLC, SystemSpec).spec
    assert (spec.dram.geometry.scheduler, spec.dram.geometry.queue_depth) == ("frfcfs", 32)  # the DDR3 preset
    spec = load_spec(LAP_LLC, SystemSpec, ["dram.geometry.scheduler=in_order"]).spec
    assert spec.dram.geometry.scheduler == "in_order"
    with pytest.raises(ConfigError, match="scheduler") as err:
        load_spec(LAP_LLC, SystemSpec, ["dram.geometry.scheduler=fifo"])
    assert "frfcfs" in str(err.value)  # the expected values are named
    with pytest.raises(ConfigError, match="queue_depth"):
        load_spec(LAP_LLC, SystemSpec, ["dram.geometry.queue_depth=0"])


def test_dram_power_down_keys_are_read_and_validated():
    from simulator.system import build_dram

    spec = load_spec(LAP_LLC, SystemSpec).spec
    g, t = spec.dram.geometry, spec.dram.timing
    assert (g.power_down, t.t_xp, t.t_cke, spec.dram.currents.idd3p_a) == (True, 5, 4, pytest.approx(0.045))
    assert build_dram(spec).power_down
    off = load_spec(LAP_LLC, SystemSpec, ["dram.geometry.power_down=false"]).spec
    assert not build_dram(off).power_down
    with pytest.raises(ConfigError, match="power_down") as err:
        load_spec(LAP_LLC, SystemSpec, ["dram.geometry.power_down=sometimes"])
    assert "true or false" in str(err.value)
    with pytest.raises(ConfigError, match="t_xp"):
        load_spec(LAP_LLC, SystemSpec, ["dram.timing.t_xp=0"])


def test_dram_write_latency_and_rank_switch_are_read_and_validated():
    from simulator.system import dram_parameters

    spec = load_spec(LAP_LLC, SystemSpec, ["dram.timing.cwl=9", "dram.timing.t_rtrs=2"]).spec
    timing, _, _ = dram_parameters(spec)
    assert (timing.cwl, timing.t_rtrs) == (9, 2)
    assert dram_parameters(load_spec(LAP_LLC, SystemSpec).spec)[0].cwl == 8  # the DDR3 preset
    with pytest.raises(ConfigError, match="cwl") as err:
        load_spec(LAP_LLC, SystemSpec, ["dram.timing.cwl=12"])  # above CL = 11
    assert "--set dram.timing.cwl=12 (over " in str(err.value)
    assert "dram.timing.cwl: 12 tCK; expected <= cl (11 tCK)" in str(err.value)
    with pytest.raises(ConfigError, match="t_rtrs"):
        load_spec(LAP_LLC, SystemSpec, ["dram.timing.t_rtrs=-1"])


@pytest.mark.parametrize("override", ["dram.timing.burst_length=4", "dram.geometry.bus_width_bits=128",
                                      "caches.line_bytes=128 B"])
def test_a_rule_across_sections_names_the_option_that_broke_it(override):
    # a cache line must be one DRAM burst: caches.line_bytes against two keys of the dram section
    with pytest.raises(ConfigError) as err:
        load_spec(LAP_LLC, SystemSpec, [override])
    (message,) = err.value.messages
    assert f"--set {override} (over " in message and "expected one burst" in message
    assert "dram.geometry.bus_width_bits" in message and "dram.timing.burst_length" in message


@pytest.mark.parametrize("overrides", [["host.cores=1024", "caches.levels.L2.size_bytes=4 GiB"],
                                       ["caches.levels.L2.size_bytes=4 GiB", "host.cores=1024"]])
def test_caches_whose_state_over_every_core_outgrows_the_bound_are_refused_by_name(overrides):
    # 1,024 private L2s of 4 GiB would be 1 TiB of simulator state, refused before any array is made; the message
    # names the option that broke the rule, whichever of the two it was
    with pytest.raises(ConfigError) as err:
        load_spec(LAP_LLC, SystemSpec, overrides)
    (message,) = err.value.messages
    assert "host.cores: 1024 cores, each with its own L1D, L2: the caches hold 1024 GiB of simulator state" in message
    assert "expected at most 4 GiB" in message and message.startswith("--set ")
    assert load_spec(LAP_LLC, SystemSpec, ["host.cores=1024"]).spec.host.cores == 1024  # the shipped sizes fit


def test_levels_whose_state_outgrows_the_bound_on_one_core_are_named_not_the_cores():
    from dataclasses import replace

    from simulator.errors import FieldError
    from simulator.config.schema import _check_cache_state

    caches = load_spec(LAP_LLC, SystemSpec).spec.caches
    big = replace(caches.levels[-1], size_bytes=2**32)
    five = replace(caches, levels=tuple(replace(big, name=f"L{i}", shared=True) for i in range(5)))
    with pytest.raises(FieldError) as err:
        _check_cache_state(five, 1)
    assert err.value.key == "caches.levels" and "the levels hold 5 GiB of simulator state" in str(err.value)
    _check_cache_state(replace(five, levels=five.levels[:4]), 1)  # 4 GiB: at the bound


def test_command_queues_are_read_with_the_ready_first_scheduler_only():
    spec = load_spec(LAP_LLC, SystemSpec, ["dram.geometry.scheduler=ready_first",
                                           "dram.geometry.command_queue_depth=8"]).spec
    assert (spec.dram.geometry.scheduler, spec.dram.geometry.command_queue_depth) == ("ready_first", 8)
    assert load_spec(LAP_LLC, SystemSpec).spec.dram.geometry.command_queue_depth == 0  # none by default
    with pytest.raises(ConfigError, match=r"command_queue_depth: 8 with scheduler 'frfcfs'; expected 0, or "
                                          r"scheduler ready_first"):
        load_spec(LAP_LLC, SystemSpec, ["dram.geometry.command_queue_depth=8"])


def test_the_input_pipeline_reaches_the_memory_and_is_out_of_the_record_at_its_default():
    from simulator.config.fields import spec_to_dict
    from simulator.system import build_dram

    loaded = load_spec(LAP_LLC, SystemSpec, ["dram.geometry.arrival_to_command_cycles=2"])
    assert build_dram(loaded.spec).arrival_to_command_cycles == 2
    plain = load_spec(LAP_LLC, SystemSpec)
    assert "arrival_to_command_cycles" not in spec_to_dict(plain.spec)["dram"]["geometry"]  # hashes as before
    assert plain.spec.dram.geometry.arrival_to_command_cycles == 0
    with pytest.raises(ConfigError, match="arrival_to_command_cycles"):
        load_spec(LAP_LLC, SystemSpec, ["dram.geometry.arrival_to_command_cycles=-1"])


HBM_STACK = CONFIGS / "systems" / "lap_hbm_stack.yaml"


@pytest.mark.parametrize("system, override", [(LAP_LLC, "dram.standard=ddr4"),
                                              (HBM_STACK, "near_memories.hbm.standard=ddr3"),
                                              (T2, "accelerators.crypto.kind=lap")])
def test_a_kind_or_standard_changed_on_the_command_line_is_named_in_each_message(system, override, tmp_path,
                                                                               capsys):
    """The section's other keys (written for the file's standard or kind) break the new one's rules: every such
    message of ``offsim run`` names the option, not the valid file alone."""
    from simulator.cli import main

    assert main(["run", str(system), str(CONFIGS / "workloads" / "stream_read.yaml"), "--set", override,
                 "--out", str(tmp_path / "out")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines and all(f"--set {override} (over " in line for line in lines), lines


@pytest.mark.parametrize("section, override, words", [
    ("host: 5", "host.cores=2", ["host: expected a host section (a mapping of its parameters)", "got 5"]),
    ("caches: {preset: caches/i7_920, levels: 5}", "caches.levels.L1D.ways=4", ["caches.levels: expected a list"]),
    ("caches: foo", "caches.line_bytes=64", ["caches: expected a caches section (a mapping of its parameters)", "'foo'"]),
    ("accelerators: {lap: 5}", "accelerators.lap.kind=lap", ["accelerators.lap"]),
    ("host: [1, 2]", "host.cores=2", ["host: expected a host section (a mapping of its parameters)", "[1, 2]"]),
    ("caches: [1]", "caches.levels.L1D.ways=4", ["caches: expected a caches section (a mapping of its parameters)"]),
])
def test_an_override_into_a_section_the_file_gives_as_a_scalar_or_a_list_is_refused_in_the_files_words(
        tmp_path, section, override, words):
    """The override is not applied where the file has no mapping to put it in: the schema refuses the section as
    it does without the option (a ConfigError, not a TypeError from the override's walk)."""
    sections = {"host": "host: {preset: cpu/i7_920}", "caches": "caches: {preset: caches/i7_920}"}
    sections[section.split(":")[0]] = section
    path = Path(tmp_path) / "system.yaml"
    path.write_text("name: t\n" + "\n".join(sections.values()) + "\ndram: {preset: dram/ddr3_1600_mt41j256m4}\n")
    with pytest.raises(ConfigError) as err:
        load_spec(path, SystemSpec, [override])
    assert all(w in str(err.value) for w in words), str(err.value)


def test_an_override_that_renames_a_cache_level_badly_is_named_as_the_cause():
    """The option selects L1D by its name in the file; its empty new name is the option's fault, not the file's."""
    from tests.conftest import DEFAULT_SYSTEM

    with pytest.raises(ConfigError) as err:
        load_spec(DEFAULT_SYSTEM, SystemSpec, ["caches.levels.L1D.name="])
    assert str(err.value).startswith("--set caches.levels.L1D.name= (over ") and "caches.levels.L1D.name: ''" in \
        str(err.value)


def test_a_bad_value_given_through_a_level_name_an_earlier_option_set_is_named_as_the_options():
    from tests.conftest import DEFAULT_SYSTEM

    with pytest.raises(ConfigError) as err:
        load_spec(DEFAULT_SYSTEM, SystemSpec, ["caches.levels.L1D.name=X", "caches.levels.X.ways=0"])
    assert str(err.value).startswith("--set caches.levels.X.ways=0 (over "), str(err.value)


@pytest.mark.parametrize("first, second", [("host.max_outstanding_misses=4", "host.max_outstanding_misses=8"),
                                           ("caches.levels.LLC.size_bytes=4 MiB", "caches.levels.2.size_bytes=2 MiB")])
def test_a_key_set_twice_is_refused_naming_both_options(first, second):
    # the last one would win without a word; a list item named or indexed is the same key
    with pytest.raises(ConfigError) as err:
        load_spec(LAP_LLC, SystemSpec, [first, second])
    assert f"set twice (--set {first} and --set {second}); expected each key set once" in str(err.value)


def test_a_workload_parameter_set_twice_is_refused_naming_both_options():
    from workloads.spec import load_workload
    with pytest.raises(ConfigError, match=r"--param array_bytes=128 KiB: array_bytes set twice \(--param "
                                          r"array_bytes=64 KiB and --param array_bytes=128 KiB\)"):
        load_workload(CONFIGS / "workloads" / "stream_read.yaml", ["array_bytes=64 KiB", "array_bytes=128 KiB"])
