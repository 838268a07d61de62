"""A near memory of its own: the LAP coupled near_memory works in an HBM2 stack beside the DDR3 main
memory; the stack holds the LAP's operands, so their traffic (the LAP's and the host's) reaches the stack, not
main memory, with the stack's energy; wrong set-ups are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from simulator.errors import ConfigError
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import replay
from simulator.runner import collect
from simulator.system import build_system
from workloads.gemm import lap_gemm
from workloads.trace import AddressSpace, TraceBuilder

from tests.conftest import CONFIGS

LAP = "lap: {preset: accel/lap_4x4, interface: {coupling: near_memory, bandwidth_bytes_per_s: 128 GB/s%s}}"
HBM = "hbm: {preset: dram/hbm2_8gb_x128, interface_energy_j_per_bit: 0 pJ/bit}"


def system_file(directory: Path, memory: str = ", memory: hbm", memories: str = HBM) -> Path:
    path = directory / "system.yaml"
    path.write_text("name: LAP beside an HBM2 stack\nhost: {preset: cpu/i7_920}\ncaches: {preset: caches/i7_920}\n"
                    "dram: {preset: dram/ddr3_1600_mt41j256m4}\n"
                    + (f"near_memories:\n  {memories}\n" if memories else "")
                    + "accelerators:\n  " + LAP % memory + "\n")
    return path


def simulate(path: Path, table, *overrides: str):
    system = build_system(load_spec(path, SystemSpec, list(overrides)).spec)
    end_ps = replay(system, table)
    return system, collect(system, end_ps, {})


def test_the_accelerators_operands_live_in_its_stack_and_the_rest_in_main_memory(tmp_path):
    """The stack holds the LAP's operands: the LAP's traffic, the host's production of A, B and C, the
    driver's flush and the host's read of C all reach it; the host's other data stays in main memory."""
    m, n, k = 35, 2000, 35
    space = AddressSpace()
    other = space.alloc("other", 1 << 20)  # 1 MiB the host writes beside the GEMM: 16384 lines
    tb = TraceBuilder()
    tb.access("host", "other", "write", other, 8, 8, (1 << 20) // 8)
    table = pa.concat_tables([tb.to_table(), lap_gemm(m, n, k, produce_inputs=True, consume_output=True,
                                                      space=space)])
    system, res = simulate(system_file(tmp_path), table, "near_memories.hbm.interface_energy_j_per_bit=4 pJ/bit")
    stack = system.near_memories["hbm"].counters_by_requester()
    main = system.dram.counters_by_requester()
    operand_lines = -(-8 * m * k // 64) + -(-8 * k * n // 64) + -(-8 * m * n // 64)
    assert "lap" not in main and "lap.driver" not in main and set(stack) == {"host", "lap", "lap.driver"}
    assert main["host"]["reads"] == (1 << 20) // 64  # the other data's lines, read for ownership, and no more
    # the host reads each operand line for ownership and, after the LAP's run, C again
    assert stack["host"]["reads"] == operand_lines + -(-8 * m * n // 64)
    assert stack["lap"]["reads"] * 64 >= 8 * (m * k + k * n + m * n)  # A, B and C read from the stack
    assert stack["lap.driver"]["writes"] > 0  # the flush of what the host produced lands in the stack
    assert res.value("near_memory/hbm", "bytes_read") == sum(c["reads"] for c in stack.values()) * 64
    assert res.value("energy/hbm", "read") > 0 and res.value("energy/hbm", "refresh") > 0
    stack_bytes = sum(c["reads"] + c["writes"] for c in stack.values()) * 64  # each pays the stack's interface
    assert res.value("energy/hbm", "interface") == pytest.approx(stack_bytes * 8 * 4e-12)
    # main memory's off-chip interface carries exactly main memory's bytes
    main_bytes = res.value("dram", "bytes_read") + res.value("dram", "bytes_written")
    assert res.value("energy/dram_interface", "transfer") == pytest.approx(main_bytes * 8 * 20e-12)


def test_without_operands_in_the_stack_the_host_keeps_main_memory(tmp_path):
    """A trace that offloads nothing to the stack's LAP leaves every host access in main memory."""
    tb = TraceBuilder()
    tb.access("host", "other", "write", 0, 8, 8, (1 << 20) // 8)
    system, _ = simulate(system_file(tmp_path), tb.to_table())
    assert system.near_memories["hbm"].counters_by_requester() == {}
    assert system.dram.counters_by_requester()["host"]["reads"] == (1 << 20) // 64


def test_the_stack_serves_the_lap_faster_than_main_memory_over_the_dram_coupling(tmp_path):
    table = lap_gemm(35, 16491, 35)  # thin, bandwidth-bound (the q = 4 U-list GEMM of 003 Table 2)
    busy = {}
    for name, path in (("stack", system_file(tmp_path)), ("dram", CONFIGS / "systems" / "lap_dram.yaml"),
                       ("near_main", CONFIGS / "systems" / "lap_near_memory.yaml")):
        busy[name] = simulate(path, table)[1].value("accel/lap", "busy_s")
    assert busy["stack"] < 0.9 * busy["dram"]
    # the 256 GB/s stack and main memory's near-memory path (10 x 12.8 GB/s) both outrun the LAP's 128 GB/s
    # data path, which then sets the pace
    assert busy["stack"] == pytest.approx(busy["near_main"], rel=0.02)


@pytest.mark.parametrize("memory, memories, words", [
    (", memory: ssd", HBM, ["accelerators.lap.interface.memory", "'ssd'", "near_memories entry"]),
    ("", HBM, ["near_memories.hbm", "no accelerator works in it"]),
    (", memory: hbm", "", ["accelerators.lap.interface.memory", "'hbm'", "given: none"]),
    (", memory: hbm", "lap: {preset: dram/hbm2_8gb_x128, interface_energy_j_per_bit: 0 pJ/bit}",
     ["near_memories", "lap"]),
])
def test_wrong_near_memory_set_ups_are_refused(tmp_path, memory, memories, words):
    with pytest.raises(ConfigError) as err:
        load_spec(system_file(tmp_path, memory, memories), SystemSpec)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_only_the_near_memory_coupling_works_in_a_memory_of_its_own(tmp_path):
    path = system_file(tmp_path)
    path.write_text(path.read_text().replace("coupling: near_memory", "coupling: dram"))
    with pytest.raises(ConfigError) as err:
        load_spec(path, SystemSpec)
    assert "only the near_memory coupling" in str(err.value)


def test_a_near_memorys_background_and_refresh_count_as_constant_energy(tmp_path):
    """The stack's background and refresh energy are spent whatever it serves: part of the run's constant
    energy, as main memory's are (and the LAP's static energy, its power while it works on no command)."""
    from simulator.runner import CONSTANT_CATEGORIES, energy_split_j

    _, res = simulate(system_file(tmp_path), lap_gemm(35, 2000, 35))
    stack = sum(res.value("energy/hbm", q) for q in ("background_active", "background_precharge",
                                                     "background_power_down", "refresh"))
    main = sum(res.value(f"energy/{c}", q) for c, q in CONSTANT_CATEGORIES)
    lap_static = res.value("energy/lap", "static")
    assert stack > 0 and lap_static > 0
    assert energy_split_j(res)[1] == pytest.approx(main + stack + lap_static, rel=1e-12)


@pytest.mark.parametrize("coupling", ["dram", "near_memory", "llc", "pcie"])
def test_a_second_units_traffic_to_the_stacks_operands_is_served_by_the_stack(tmp_path, coupling):
    """A second LAP that works in main memory, run on the same matrices after the stack's LAP: its lines (and
    its driver's flushes and copies) are the stack's operands, so the stack serves them, not main memory;
    a near-memory unit in main memory reaches them over the stack's interface, not main memory's."""
    m, n, k = 35, 2000, 35
    path = system_file(tmp_path)
    bandwidth = "128 GB/s" if coupling == "near_memory" else "12.8 GB/s"
    path.write_text(path.read_text() + f"  lap2: {{preset: accel/lap_4x4, interface: {{coupling: {coupling}, "
                    f"bandwidth_bytes_per_s: {bandwidth}}}}}\n")
    table = pa.concat_tables([lap_gemm(m, n, k, target=target, produce_inputs=target == "lap",
                                       space=AddressSpace()) for target in ("lap", "lap2")])
    system, res = simulate(path, table)
    stack = system.near_memories["hbm"].counters_by_requester()
    main = system.dram.counters_by_requester()
    second = {"pcie": "lap2.driver"}.get(coupling, "lap2")
    assert second in stack and stack[second]["reads"] > 0
    assert not {"lap2", "lap2.driver"} & set(main)  # every line the second unit or its driver touched is in the stack
    assert res.value("energy/dram_interface", "transfer") == pytest.approx(
        (res.value("dram", "bytes_read") + res.value("dram", "bytes_written")) * 8 * 20e-12)



def test_a_unit_in_a_second_stack_reaches_the_first_stacks_operands_there(tmp_path):
    """Two LAPs, each in a stack of its own, on the same matrices: the matrices stay in the first stack, which
    serves the second LAP's reads and writes of them; the second stack, holding nothing else, serves nothing."""
    m, n, k = 35, 2000, 35
    path = tmp_path / "system.yaml"
    path.write_text("name: two stacks\nhost: {preset: cpu/i7_920}\ncaches: {preset: caches/i7_920}\n"
                    "dram: {preset: dram/ddr3_1600_mt41j256m4}\n"
                    f"near_memories:\n  {HBM}\n  {HBM.replace('hbm:', 'hbm2:')}\n"
                    "accelerators:\n  " + LAP % ", memory: hbm" + "\n  "
                    + (LAP % ", memory: hbm2").replace("lap:", "lap2:") + "\n")
    table = pa.concat_tables([lap_gemm(m, n, k, target=target, produce_inputs=target == "lap",
                                       space=AddressSpace()) for target in ("lap", "lap2")])
    system, _ = simulate(path, table)
    first = system.near_memories["hbm"].counters_by_requester()
    assert first["lap2"]["reads"] * 64 >= 8 * (m * k + k * n + m * n) and first["lap2"]["writes"] > 0
    assert system.near_memories["hbm2"].counters_by_requester() == {}
    assert "lap2" not in system.dram.counters_by_requester()


def test_a_near_memory_unit_in_main_memory_is_exempt_from_its_interface_for_main_memorys_lines_only(tmp_path):
    """A near-memory LAP in main memory multiplies A and B, which the stack's LAP keeps in the stack, into a C of
    its own in main memory: the stack serves A and B, main memory C, and main memory's off-chip interface prices
    none of the unit's bytes (C never leaves main memory; A and B cross the stack's own interface)."""
    m, n, k = 35, 2000, 35
    path = system_file(tmp_path)
    path.write_text(path.read_text() + "  lap2: {preset: accel/lap_4x4, interface: {coupling: near_memory, "
                    "bandwidth_bytes_per_s: 128 GB/s}}\n")
    space = AddressSpace()
    first = lap_gemm(m, n, k, produce_inputs=True, space=space)
    own_c = space.alloc("C2", 8 * m * n)  # past the first GEMM's A, B and C
    params = json.loads(first.filter(pc.equal(first["op"], "offload"))["params"][0].as_py())
    tb = TraceBuilder()
    tb.offload("host", "gemm2", "lap2", op="gemm", m=m, n=n, k=k, a_addr=params["a_addr"], b_addr=params["b_addr"],
               c_addr=own_c, accumulate=True, inputs=[[params["a_addr"], 8 * m * k], [params["b_addr"], 8 * k * n],
                                                      [own_c, 8 * m * n]], outputs=[[own_c, 8 * m * n]])
    tb.wait("host", "gemm2", "lap2")
    system, res = simulate(path, pa.concat_tables([first, tb.to_table()]))
    stack = system.near_memories["hbm"].counters_by_requester()["lap2"]
    main = system.dram.counters_by_requester()["lap2"]
    assert stack["reads"] * 64 >= 8 * (m * k + k * n) and stack["writes"] == 0  # A and B, read only
    assert main["reads"] * 64 >= 8 * m * n and main["writes"] * 64 >= 8 * m * n  # C, read and written
    main_bytes = res.value("dram", "bytes_read") + res.value("dram", "bytes_written")
    lap2_main = (main["reads"] + main["writes"]) * 64
    # main memory's interface carries every main-memory byte but the near-memory unit's
    assert res.value("energy/dram_interface", "transfer") == pytest.approx((main_bytes - lap2_main) * 8 * 20e-12)
