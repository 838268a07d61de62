"""The LAP at each coupling: flushes/invalidations, LLC traffic, near-memory bandwidth and energy, PCIe copies.

Also the near-memory DRAM option (a wider internal path) and the host GEMM baseline.
"""

from __future__ import annotations

import numpy as np
import pytest

import simulator
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import replay
from simulator.runner import collect
from simulator.system import build_system
from workloads.gemm import host_gemm, lap_gemm
from workloads.trace import AddressSpace

from tests.conftest import CONFIGS, DEFAULT_SYSTEM

SYSTEMS = {c: CONFIGS / "systems" / f"lap_{c}.yaml" for c in ("dram", "llc", "near_memory", "pcie")}
LINE = 64


def simulate(coupling: str, table):
    """Build the LAP system of ``coupling``, replay ``table``; return (system, Results)."""
    system = build_system(load_spec(SYSTEMS[coupling], SystemSpec).spec)
    end_ps = replay(system, table)
    return system, collect(system, end_ps, {})


def lines_of(space: AddressSpace, name: str) -> np.ndarray:
    a = space[name]
    return np.arange(a.addr // LINE, (a.addr + a.nbytes) // LINE)


def test_dram_coupling_flushes_dirty_inputs_and_invalidates_outputs():
    m = n = k = 64
    space = AddressSpace()
    table = lap_gemm(m, n, k, produce_inputs=True, space=space)
    system, res = simulate("dram", table)
    data_bytes = 8 * (m * k + k * n + m * n)
    dram = system.dram.counters()
    # the host's dirty A, B, C (96 KiB, all cache-resident) reach DRAM only through the flush; the LAP adds C
    assert dram["bytes_written"] == data_bytes + 8 * m * n
    for name in ("gemm.A", "gemm.B", "gemm.C"):
        assert not any(any(system.caches.contains(int(x))) for x in lines_of(space, name))
    # without the offload the same writes stay in the caches
    only = build_system(load_spec(SYSTEMS["dram"], SystemSpec).spec)
    produce = table.filter(np.array([s == "gemm_produce" for s in table.column("stage").to_pylist()]))
    replay(only, produce)
    assert only.dram.counters()["bytes_written"] == 0
    assert res.value("accel/lap", "flops") == 2 * m * n * k


def test_llc_coupling_evicts_to_llc_and_cuts_dram_traffic():
    m = n = k = 128
    space = AddressSpace()
    system, res = simulate("llc", lap_gemm(m, n, k, produce_inputs=True, consume_output=True, space=space))
    llc = len(system.caches.levels) - 1
    for x in lines_of(space, "gemm.C"):
        present = system.caches.contains(int(x))
        assert present[llc]  # the LAP wrote C into the LLC and the host read it from there
    dram_llc = system.dram.counters()
    _, res_dram = simulate("dram", lap_gemm(m, n, k, produce_inputs=True, consume_output=True))
    traffic = lambda r: r.value("dram", "bytes_read") + r.value("dram", "bytes_written")  # noqa: E731
    # only the host's write-allocate reads of A, B, C reach DRAM: the LAP's traffic stays in the LLC
    assert dram_llc["bytes_read"] + dram_llc["bytes_written"] <= 8 * (m * k + k * n + m * n)
    assert traffic(res) < 0.5 * traffic(res_dram)


def test_llc_coupling_leaves_no_dirty_lines_above_the_llc():
    space = AddressSpace()
    system, _ = simulate("llc", lap_gemm(64, 64, 64, produce_inputs=True, space=space))
    for name in ("gemm.A", "gemm.B", "gemm.C"):
        for x in lines_of(space, name):
            dirty = system.caches.is_dirty(int(x))
            assert not any(dirty[:-1])


def test_near_memory_is_faster_and_skips_the_offchip_interface():
    m, n, k = 35, 16491, 35  # the q = 4 U-list GEMM shape (003 Table 2): thin, bandwidth-bound on DRAM
    _, near = simulate("near_memory", lap_gemm(m, n, k))
    _, dram = simulate("dram", lap_gemm(m, n, k))
    assert near.value("accel/lap", "busy_s") < 0.9 * dram.value("accel/lap", "busy_s")
    # DRAM device activity is still counted ...
    assert near.value("dram", "bytes_read") >= 8 * (m * k + k * n + m * n)
    assert near.value("dram", "activates") > 0
    assert near.value("energy/dram", "read") > 0
    # ... but none of it crosses the off-chip interface (the host moved nothing here)
    assert near.value("energy/dram_interface", "transfer") == 0
    assert dram.value("energy/dram_interface", "transfer") > 0


def test_pcie_link_carries_inputs_plus_outputs():
    m, n, k = 64, 200, 96
    _, res = simulate("pcie", lap_gemm(m, n, k))
    inputs = 8 * (m * k + k * n + m * n)
    outputs = 8 * m * n
    assert res.value("accel/lap", "link_bytes") == inputs + outputs
    assert res.value("energy/lap", "link") == pytest.approx((inputs + outputs) * 8 * 5e-12)


def test_dram_bus_speedup_shortens_bursts_but_counts_the_same():
    def serve(speedup: int):
        system = build_system(load_spec(DEFAULT_SYSTEM, SystemSpec).spec)
        done = system.dram.service(np.arange(4096, dtype=np.int64), False, 0, bus_speedup=speedup)
        return done, system.dram.counters()
    t1, c1 = serve(1)
    t10, c10 = serve(10)
    for key in ("reads", "writes", "bytes_read", "bytes_written"):
        assert c1[key] == c10[key]
    assert c10["activates"] >= 4096 * LINE // (16 << 10)  # every 16 KiB rank row of the 256 KiB still opened
    assert t10 < t1 / 4
    assert 4096 * LINE / (t1 * 1e-12) < 12.8e9  # the channel bound holds without the option
    with pytest.raises(ValueError, match="bus_speedup"):
        serve(0)


def test_host_gemm_runs_near_peak():
    m, n, k = 128, 512, 128
    res = simulator.run(DEFAULT_SYSTEM, {"generator": "host_gemm", "params": {"m": m, "n": n, "k": k}})
    assert res.value("host", "flops") == 2 * m * n * k
    fraction = 2 * m * n * k / res.value("system", "simulated_time_s") / 8e9  # peak 8 GFLOP/s (003:L185)
    assert 0.6 < fraction <= 1.0


def test_host_gemm_flops_are_exact_on_ragged_shapes():
    table = host_gemm(37, 101, 300, mc=16, kc=64, nc=48)
    assert int(np.sum(table.column("flops").to_numpy())) == 2 * 37 * 101 * 300


def test_near_memory_bandwidth_is_honoured_at_a_fractional_multiple_of_the_channel():
    """w_L = 1.4 x the 12.8 GB/s channel: bursts 1/1.4 as long, so the run lies between 1x and 2x (a multiple
    rounded to a whole one would make 1.4x the 1x run)."""
    def seconds(multiple: float) -> float:
        loaded = load_spec(SYSTEMS["near_memory"], SystemSpec,
                           [f"accelerators.lap.interface.bandwidth_bytes_per_s={12.8e9 * multiple} B/s"])
        system = build_system(loaded.spec)
        return replay(system, lap_gemm(64, 1024, 64)) * 1e-12
    t1, t14, t2 = seconds(1.0), seconds(1.4), seconds(2.0)
    assert t2 < t14 < t1

    def served_ps(speedup: float) -> int:
        system = build_system(load_spec(DEFAULT_SYSTEM, SystemSpec).spec)
        return system.dram.service(np.arange(4096, dtype=np.int64), False, 0, bus_speedup=speedup)
    assert served_ps(2) < served_ps(1.4) < served_ps(1)
