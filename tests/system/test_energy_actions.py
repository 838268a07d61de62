"""Energy by actions: hand-computable counts x energies on a 4-set cache, requesters, and conservation.

The system has one direct-mapped level of 4 sets (4 x 64 B lines), so every count below follows from
the line numbers by hand: lines x and x + 4 share a set.
"""

from __future__ import annotations

import numpy as np
import pytest

from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.energy import ConservationError, energy_account
from simulator.memory import dram as dram_module
from simulator.memory.cache import CacheHierarchy
from simulator.memory.power import command_energies_j
from simulator.config.schema import dram_parameters
from simulator.replay import replay
from simulator.runner import simulate_trace
from simulator.system import build_system
from workloads.trace import TraceBuilder

READ_J, WRITE_J, LINE_J, PER_BYTE_J = 1e-9, 2e-9, 1e-10, 1e-12

SYSTEM_YAML = f"""
name: four-set test system
host: {{preset: cpu/i7_920}}
caches:
  line_bytes: 64 B
  levels:
    - {{name: L1D, size_bytes: 256 B, ways: 1, latency_cycles: 4, read_energy_j: {READ_J * 1e9} nJ,
       write_energy_j: {WRITE_J * 1e9} nJ, line_energy_j: {LINE_J * 1e12} pJ, energy_j_per_byte: 1 pJ/B}}
dram: {{preset: dram/ddr3_1600_mt41j256m4}}
"""


def four_set_system(tmp_path, overrides=()):
    path = tmp_path / "four_sets.yaml"
    path.write_text(SYSTEM_YAML)
    return build_system(load_spec(path, SystemSpec, list(overrides)).spec)


def drive(system) -> int:
    """Loads of lines 0..7, stores to 0..3, then a driver's flush of 0..7; return the end time, ps."""
    port = system.host.port
    t = port.access(np.arange(8), False, 0).dram_done_ps
    t = max(t, port.access(np.arange(4), True, t).dram_done_ps or t)
    res = port.flush(np.arange(8), t, requester="lap.driver")
    return max(t, res.dram_done_ps or t, system.dram.last_completion_ps) + 1


def test_four_set_cache_counts_and_prices_every_action(tmp_path):
    system = four_set_system(tmp_path)
    acc = energy_account(system, drive(system))
    host = acc.actions["L1D"]["host"]
    # 8 loads: all miss, fill; 0..3 are evicted by 4..7. 4 stores: miss, fill, evict clean 4..7.
    assert {k: host[k] for k in ("loads", "stores", "fills", "evictions", "allocations", "writebacks_out")} == {
        "loads": 8, "stores": 4, "fills": 12, "evictions": 8, "allocations": 12, "writebacks_out": 0}
    driver = acc.actions["L1D"]["lap.driver"]
    # the flush probes 8 lines, drops the 4 resident (dirty) ones and writes them to DRAM
    assert {k: driver[k] for k in ("probes", "invalidations", "writebacks_out", "fills")} == {
        "probes": 8, "invalidations": 4, "writebacks_out": 4, "fills": 0}
    assert acc.energy_j["L1D"]["host"] == pytest.approx(
        {"read": 8 * READ_J, "write": 4 * WRITE_J, "fill": 12 * LINE_J, "writeback_in": 0.0,
         "writeback_out": 0.0, "probe": 0.0})
    assert sum(acc.energy_j["L1D"]["lap.driver"].values()) == pytest.approx((8 + 4) * LINE_J)
    assert sum(acc.by_component()["L1D"].values()) == pytest.approx(
        8 * READ_J + 4 * WRITE_J + (12 + 4 + 8) * LINE_J)
    # DRAM: 12 line reads by the host, 4 line writes by the driver, each priced per burst
    dram = acc.actions["dram"]
    assert (dram["host"]["reads"], dram["host"]["writes"]) == (12, 0)
    assert (dram["lap.driver"]["reads"], dram["lap.driver"]["writes"]) == (0, 4)
    per_cmd = command_energies_j(*dram_parameters(system.spec))
    assert acc.energy_j["dram"]["lap.driver"]["write"] == pytest.approx(4 * per_cmd["write"])
    path_j = system.spec.host.memory_path_energy_j_per_byte
    assert acc.energy_j["memory_path"]["lap.driver"]["access"] == pytest.approx(4 * 64 * path_j)


def test_inclusive_per_byte_charges_only_the_bytes_served_to_the_host(tmp_path):
    system = four_set_system(tmp_path, ["energy.model=inclusive_per_byte"])
    acc = energy_account(system, drive(system))
    # every load and store missed: the L1 served none of the 12 lines, and the flush is free
    assert acc.by_component()["L1D"] == {"access": 0.0}
    system = four_set_system(tmp_path, ["energy.model=inclusive_per_byte"])
    trace = TraceBuilder()
    for _ in range(2):  # the second pass hits: 256 B served by the L1
        trace.region("host", "read", "read", 0, 256)
    acc = energy_account(system, replay(system, trace.to_table()))
    assert acc.by_component()["L1D"]["access"] == pytest.approx(256 * PER_BYTE_J)


def test_conservation_fails_when_a_requester_is_dropped(tmp_path, monkeypatch):
    system = four_set_system(tmp_path)
    end = drive(system)
    energy_account(system, end)  # the true counts pass
    real = CacheHierarchy.counters_by_requester
    monkeypatch.setattr(CacheHierarchy, "counters_by_requester",
                        lambda self: {k: v for k, v in real(self).items() if k != "lap.driver"})
    with pytest.raises(ConservationError, match="summed over requesters"):
        energy_account(system, end)


def test_conservation_fails_when_an_eviction_is_not_counted(tmp_path):
    system = four_set_system(tmp_path)
    end = drive(system)
    system.caches._counts[0, list(system.caches.counters()["L1D"]).index("evictions")] -= 1
    with pytest.raises(ConservationError, match="lines in"):
        energy_account(system, end)


def test_conservation_fails_when_a_dram_command_is_not_attributed(tmp_path, monkeypatch):
    system = four_set_system(tmp_path)
    end = drive(system)
    real = dram_module.DramSystem.counters_by_requester
    monkeypatch.setattr(dram_module.DramSystem, "counters_by_requester",
                        lambda self: {k: {**v, "activates": max(0, v["activates"] - 1)} for k, v in real(self).items()})
    with pytest.raises(ConservationError, match="dram.activates"):
        energy_account(system, end)


def test_results_carry_actions_and_energy_by_requester(tmp_path):
    path = tmp_path / "four_sets.yaml"
    path.write_text(SYSTEM_YAML)
    trace = TraceBuilder()
    trace.region("host", "write", "write", 0, 512)
    results = simulate_trace(str(path), trace.to_table())
    summary = results.summary()
    assert summary["energy_model"] == "actions"
    # 8 stores: 8 write-allocate fills, the last 4 evicting the first 4 (dirty) lines
    assert summary["actions"]["L1D"]["host"]["stores"] == 8
    assert summary["actions"]["L1D"]["host"]["writebacks_out"] == 4
    assert summary["energy_j"]["L1D"]["write"] == pytest.approx(8 * WRITE_J)
    assert sum(summary["energy_total_by_requester_j"].values()) == pytest.approx(summary["energy_total_j"])
    table = results.to_pandas()
    rows = table[table.component == "actions/L1D/host"].set_index("quantity")
    assert rows.loc["stores", "unit"] == "lines" and rows.loc["probes", "unit"] == "lookups"


def test_conservation_fails_when_a_unit_claims_exempt_bytes_it_never_moved():
    """A near-memory unit's main-memory bytes skip the off-chip interface; a count of them above the bytes the
    DRAM served for the unit (or below zero) is refused, not priced as negative interface energy."""
    from tests.conftest import CONFIGS

    system = build_system(load_spec(CONFIGS / "systems" / "lap_near_memory.yaml", SystemSpec).spec)
    energy_account(system, 1)  # nothing moved, nothing exempt: passes
    for wrong in (64, -64):
        system.units["lap"].interface.offchip_exempt_bytes = wrong
        with pytest.raises(ConservationError, match=f"lap: {wrong} B exempt from the off-chip interface, of 0 B"):
            energy_account(system, 1)


@pytest.mark.parametrize("system_file, copies", [("lap_dram.yaml", False), ("lap_near_memory.yaml", False),
                                                  ("lap_llc.yaml", False), ("lap_pcie.yaml", True)])
def test_the_memory_path_prices_the_caches_dram_bytes_not_dma_at_the_memory_controller(system_file, copies):
    """The host writes A, B and C of a 32 x 32 x 32 GEMM (8 KiB each, 384 lines), offloads it and reads C back.
    The memory path (the hop from the LLC to the memory controller) prices every DRAM byte of the host and of
    the driver's flushes, and of an LLC-coupled unit, whose misses cross it; none of a DRAM or near-memory unit's
    DMA or of the PCIe driver's copies (A, B, C in and C out: 512 lines), which join the memory controller. The
    off-chip interface prices them all but a near-memory unit's."""
    from tests.conftest import CONFIGS

    from workloads.gemm import lap_gemm

    system = build_system(load_spec(CONFIGS / "systems" / system_file, SystemSpec).spec)
    end = replay(system, lap_gemm(32, 32, 32, produce_inputs=True, consume_output=True))
    acc = energy_account(system, end)
    path_j = system.spec.host.memory_path_energy_j_per_byte
    bit_j = system.spec.dram.interface_energy_j_per_bit
    dram = acc.actions["dram"]
    dram_bytes = {who: (c["reads"] + c["writes"]) * 64 for who, c in dram.items() if who != "background"}
    coupling = system_file.removeprefix("lap_").removesuffix(".yaml")
    dma = {"dram": {"lap": dram_bytes.get("lap", 0)}, "near_memory": {"lap": dram_bytes.get("lap", 0)},
           "llc": {}, "pcie": {"lap.driver": 512 * 64}}[coupling]
    assert (coupling in ("llc", "pcie")) or dram_bytes["lap"] > 0  # the case under test: the unit reached DRAM
    for who, nbytes in dram_bytes.items():
        on_path = nbytes - dma.get(who, 0)
        assert acc.actions["memory_path"][who]["bytes"] == on_path
        assert acc.energy_j["memory_path"][who]["access"] == pytest.approx(on_path * path_j, rel=1e-12)
        crossing = 0 if (coupling == "near_memory" and who == "lap") else nbytes
        assert acc.energy_j["dram_interface"][who]["transfer"] == pytest.approx(crossing * 8 * bit_j, rel=1e-12)
    if coupling != "llc":  # (the LLC coupling's driver evicts to the LLC: no DRAM bytes)
        assert dram_bytes["lap.driver"] - dma.get("lap.driver", 0) > 0  # the flushed lines cross the path
    if copies:
        assert system.units["lap"].interface.path_exempt_bytes == {"lap.driver": 512 * 64}


def test_the_memory_path_prices_the_hosts_lines_to_a_near_memory_and_not_the_units_work_inside_it():
    """The LAP in an HBM stack of its own, the GEMM's operands in the stack: the host's and the driver's lines to
    and from the stack cross the memory path as their main-memory lines do; the LAP's own accesses stay inside
    the stack. None of the stack's bytes cross main memory's off-chip interface."""
    from tests.conftest import CONFIGS

    from workloads.gemm import lap_gemm

    system = build_system(load_spec(CONFIGS / "systems" / "lap_hbm_stack.yaml", SystemSpec).spec)
    end = replay(system, lap_gemm(32, 32, 32, produce_inputs=True, consume_output=True))
    acc = energy_account(system, end)
    stack = next(iter(system.near_memories))

    def lines(component: str, who: str) -> int:
        counts = acc.actions[component].get(who, {"reads": 0, "writes": 0})
        return counts["reads"] + counts["writes"]

    assert lines(stack, "host") > 0 and lines(stack, "lap") > 0 and lines(stack, "lap.driver") > 0  # the case
    path = acc.actions["memory_path"]
    for who in ("host", "lap.driver"):
        assert path[who]["bytes"] == 64 * (lines("dram", who) + lines(stack, who))
    assert path.get("lap", {"bytes": 0})["bytes"] == 0
    interface = acc.actions.get("dram_interface", {}).get("host", {"bytes": 0})["bytes"]
    assert interface == 64 * lines("dram", "host")


def test_conservation_fails_when_dma_claims_bytes_past_the_memory_path_it_never_moved():
    """A requester's bytes past the memory path above the bytes the DRAM served for it (or below zero) are
    refused, not priced as negative memory path energy."""
    from tests.conftest import CONFIGS

    system = build_system(load_spec(CONFIGS / "systems" / "lap_pcie.yaml", SystemSpec).spec)
    energy_account(system, 1)
    for wrong in (64, -64):
        system.units["lap"].interface.path_exempt_bytes["lap.driver"] = wrong
        with pytest.raises(ConservationError, match=f"lap.driver: {wrong} B past the memory path, of 0 B"):
            energy_account(system, 1)


def test_conservation_fails_on_an_energy_below_zero(tmp_path, monkeypatch):
    system = four_set_system(tmp_path)
    end = drive(system)
    real = dram_module.DramSystem.energy_j
    monkeypatch.setattr(dram_module.DramSystem, "energy_j",
                        lambda self, *a, **k: {**real(self, *a, **k), "refresh": -1e-6})
    with pytest.raises(ConservationError, match=r"energy below zero: dram.refresh \(-1e-06 J\)"):
        energy_account(system, end)


@pytest.mark.parametrize("level", ["L1D", "L2"])
def test_the_prefetchers_lookups_are_priced_as_demand_loads_would_be(level):
    """A 4 MiB array read twice: with the stream prefetcher at ``level``, the lines come from DRAM as often as
    without it, and every level below the prefetcher is reached as often (a demand load or a prefetch lookup,
    hit or miss, to within the prefetcher's degree of lines fetched past the array's end), each priced at the
    level's read energy; the prefetcher moves reads from demand loads to prefetch lookups and changes no level's
    read energy by more than those few lines'."""
    from tests.conftest import DEFAULT_SYSTEM

    b = TraceBuilder()
    for _ in range(2):
        b.access("host", "read", "read", 1 << 20, 8, 8, (4 << 20) // 8)
    runs = {}
    for on in (False, True):
        loaded = load_spec(DEFAULT_SYSTEM, SystemSpec, [f"caches.prefetcher.enabled={str(on).lower()}",
                                                       f"caches.prefetcher.level={level}"])
        runs[on] = {(c, q): x for c, q, x, _ in simulate_trace(loaded, b.to_table()).rows}
    spec = loaded.spec
    degree = spec.caches.prefetcher.degree
    off, on = runs[False], runs[True]
    assert on[("dram", "reads")] - off[("dram", "reads")] <= degree
    names = [lv.name for lv in spec.caches.levels]
    below = names[names.index(level) + 1:]
    assert below and sum(on[("actions/" + n + "/host", "prefetch_reads")] for n in below) > 0
    for lv in spec.caches.levels[names.index(level) + 1:]:
        reached_on = on[(f"cache/{lv.name}", "loads")] + on[(f"actions/{lv.name}/host", "prefetch_reads")]
        assert 0 <= reached_on - off[(f"cache/{lv.name}", "loads")] <= degree
        assert on[(f"energy/{lv.name}", "read")] + on[(f"energy/{lv.name}", "prefetch_read")] == pytest.approx(
            reached_on * lv.read_energy_j, rel=1e-12)
    assert ("energy/LLC", "prefetch_read") not in off  # no prefetcher: no such category


def test_a_busy_gpu_draws_at_least_its_idle_power_and_its_board_power_while_computing():
    """The discrete GPU (the C2070 preset: 30 W whenever on, 238 W of board power while computing) over a run with
    one FFT offload: its static energy is 30 W over the whole run, busy (launch, copies) or idle, and its compute
    energy 208 W over its compute time, so that computing it draws 238 W in all."""
    from tests.conftest import CONFIGS

    b = TraceBuilder()
    b.offload("host", "fft", "gpu", op="fft", inputs=[[0, 1 << 20]], outputs=[[1 << 24, 1 << 20]], host_cycles=1e6,
              flops=5e7, memory_bytes=2 << 20)
    b.wait("host", "fft", "gpu")
    res = simulate_trace(load_spec(CONFIGS / "systems" / "logca_gpu_discrete.yaml", SystemSpec),
                         b.to_table(units=["host", "gpu"]))
    v = {(c, q): x for c, q, x, _ in res.rows}
    end_s = v[("system", "simulated_time_s")]
    assert 0 < v[("accel/gpu", "compute_s")] < v[("accel/gpu", "busy_s")] < end_s  # busy longer than computing
    assert v[("energy/gpu", "static")] == pytest.approx(30.0 * end_s, rel=1e-9)
    assert v[("energy/gpu", "compute")] == pytest.approx(208.0 * v[("accel/gpu", "compute_s")], rel=1e-9)
