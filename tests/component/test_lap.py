"""The LAP unit on its own: rate, bandwidth bound, flop and sub-block counts, blocking helpers, energy."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import simulator
from simulator.accel.lap import LapUnit, tile_lines
from simulator.config.accel_lap import block_size, k_slice, sub_block_count
from simulator.config.accel_lap import LapSpec
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import replay
from simulator.system import build_system
from workloads.trace import TraceBuilder

from tests.conftest import CONFIGS

LLC_SYSTEM = CONFIGS / "systems" / "lap_llc.yaml"
F_L = 4 * 4 * 2 * 1.4e9 * 0.9  # 003 section 3.2 (003:L99-L101): 40.3 GFLOP/s


def run_gemm(m: int, n: int, k: int, overrides: tuple[str, ...] = (), **params):
    loaded = load_spec(LLC_SYSTEM, SystemSpec, overrides)
    return simulator.run(loaded, {"generator": "lap_gemm", "params": {"m": m, "n": n, "k": k, **params}})


def test_preset_rate_is_40_gflops():
    spec = load_spec(LLC_SYSTEM, SystemSpec).spec.accelerators["lap"]
    assert isinstance(spec, LapSpec)
    assert spec.gemm_flops_per_s == pytest.approx(40.32e9)
    # 25 GFLOP/W at full rate (003:L99): dynamic + static power over the flop rate
    watts = spec.gemm_flops_per_s * spec.energy_per_flop_j + spec.static_power_w
    assert spec.gemm_flops_per_s / watts == pytest.approx(25e9, rel=0.01)


def test_compute_bound_gemm_runs_at_f_l():
    m = n = k = 512
    res = run_gemm(m, n, k)
    busy_s = res.value("accel/lap", "busy_s")
    assert 2 * m * n * k / busy_s == pytest.approx(F_L, rel=0.05)
    assert 2 * m * n * k / busy_s <= F_L * 1.0001  # never faster than the sustained rate


def test_thin_gemm_is_bound_by_the_interface_bandwidth():
    bw = 1e9
    res = run_gemm(16, 65536, 16, (f"accelerators.lap.interface.bandwidth_bytes_per_s={bw / 1e9:g} GB/s",))
    moved = res.value("accel/lap", "bytes_read") + res.value("accel/lap", "bytes_written")
    busy_s = res.value("accel/lap", "busy_s")
    assert moved / busy_s == pytest.approx(bw, rel=0.05)
    assert 2 * 16 * 65536 * 16 / busy_s < 0.2 * F_L  # far from compute-bound


@pytest.mark.parametrize("m,n,k", [(35, 16491, 35), (286, 2013, 286), (300, 77, 513), (1, 1, 1)])
def test_flops_and_sub_blocks_counted_exactly(m, n, k):
    res = run_gemm(m, n, k)
    assert res.value("accel/lap", "flops") == 2 * m * n * k
    m_c, n_c = min(max(m, 64), 256), min(max(n, 64), 256)  # 003 eq. 7 (003:L240)
    assert res.value("accel/lap", "sub_blocks") == math.ceil(n / n_c) * math.ceil(m / m_c)  # r, 003 eq. 6
    # every element of A, B and C crosses the port at least once; C is read and written
    assert res.value("accel/lap", "bytes_read") >= 8 * (m * k + k * n + m * n)
    assert res.value("accel/lap", "bytes_written") >= 8 * m * n
    assert res.value("accel/lap", "local_memory_bytes") >= 8 * (m * k + k * n + 2 * m * n)


def test_reading_c_is_optional():
    with_c = run_gemm(64, 64, 64)
    without = run_gemm(64, 64, 64, accumulate=False)
    diff = with_c.value("accel/lap", "bytes_read") - without.value("accel/lap", "bytes_read")
    assert diff == 64 * 64 * 8


@pytest.mark.parametrize("system", ["lap_dram.yaml", "lap_llc.yaml"])
def test_an_unaccumulated_c_is_written_without_reading_it_from_dram(system):
    # C = A B (64^3 doubles): DRAM reads only A and B (2 x 32 KiB = 1,024 lines), however the LAP is coupled;
    # through the LLC each C line is allocated there dirty without a read (the unit writes whole lines)
    loaded = load_spec(CONFIGS / "systems" / system, SystemSpec)
    res = simulator.run(loaded, {"generator": "lap_gemm", "params": {"m": 64, "n": 64, "k": 64,
                                                                     "accumulate": False}})
    assert res.value("dram", "reads") == 2 * 64 * 64 * 8 // 64
    if system == "lap_llc.yaml":
        llc = res.summary()["caches"]["LLC"]
        assert llc["fills"] == 1024 and llc["allocations"] == 1024 + 512  # A and B filled, C allocated


def test_block_helpers():
    assert [block_size(x) for x in (1, 64, 100, 256, 1000)] == [64, 64, 100, 256, 256]
    assert sub_block_count(286, 2013) == 2 * 8
    assert sub_block_count(35, 16491) == 65
    # two 256 x 256 C blocks take 1 MiB of 2 MiB; the other 1 MiB (131072 doubles) holds two slices
    # of (256 + 256) x ks doubles: ks = 131072 / 1024 = 128
    assert k_slice(10_000, 256, 256, 2 << 20, 8) == 128
    assert k_slice(35, 64, 256, 2 << 20, 8) == 35
    with pytest.raises(ValueError, match="local_memory_bytes"):
        k_slice(1, 256, 256, 1 << 20, 8)


@pytest.mark.parametrize("base, ld, c0, c1, eb", [
    (4096 + 24, 37, 5, 29, 8),   # rows of several lines, apart
    (4096 + 24, 3, 0, 2, 8),     # rows of 2 elements 24 B apart: successive rows share lines
    (100, 5, 1, 5, 4),           # elements straddle no line, rows overlap partly
    (60, 40, 0, 40, 8),          # dense matrix (ld = width) starting mid-line
    (0, 8, 3, 4, 8),             # one element per row, one row per line
])
def test_tile_lines_match_brute_force(base, ld, c0, c1, eb):
    lb = 64
    got = tile_lines(base, ld, 3, 11, c0, c1, eb, lb)
    want = sorted({(base + (r * ld + c) * eb + b) // lb for r in range(3, 11) for c in range(c0, c1)
                   for b in (0, eb - 1)})
    assert got.tolist() == want
    assert tile_lines(base, ld, 3, 3, 0, 5, eb, lb).size == 0


def test_tile_lines_refuses_negative_leading_dimension():
    # the rows' line ranges must grow with the row for the union to come out sorted
    with pytest.raises(ValueError, match="ld = -8: expected a leading dimension >= 0"):
        tile_lines(4096, -8, 0, 4, 0, 8, 8, 64)


def test_energy_counts_flops_and_local_memory():
    res = run_gemm(128, 128, 128)
    spec = load_spec(LLC_SYSTEM, SystemSpec).spec.accelerators["lap"]
    assert res.value("energy/lap", "compute") == pytest.approx(2 * 128 ** 3 * spec.energy_per_flop_j)
    assert res.value("energy/lap", "local_memory") == pytest.approx(
        res.value("accel/lap", "local_memory_bytes") * spec.local_memory_energy_j_per_byte)
    assert res.value("energy/lap", "static") > 0


def test_unknown_op_and_bad_arguments_are_rejected():
    loaded = load_spec(LLC_SYSTEM, SystemSpec)
    for params, match in (({"op": "conv", "m": 1, "n": 1, "k": 1}, "op"),
                          ({"op": "gemm", "m": 0, "n": 1, "k": 1, "a_addr": 0, "b_addr": 0, "c_addr": 0}, "m: expected a value >= 1")):
        system = build_system(loaded.spec)
        tb = TraceBuilder()
        tb.offload("host", "g", "lap", **params)
        tb.wait("host", "g", "lap")
        with pytest.raises(ValueError, match=match):
            replay(system, tb.to_table())


def test_spec_rejects_bad_values():
    spec = load_spec(LLC_SYSTEM, SystemSpec).spec.accelerators["lap"]
    with pytest.raises(ValueError, match="local_memory_bytes: 1048576 B; expected room for two 256 x 256"):
        dataclasses.replace(spec, local_memory_bytes=1 << 20)  # the spec itself refuses it
    with pytest.raises(ValueError, match="spec"):
        LapUnit(name="lap", env=None, clock=None, interface=None, static_power_w=0.0, idle_power_w=0.0)
    assert np.isfinite(spec.gemm_flops_per_s)
