"""001's Nehalem microbenchmark figures measured on the simulated i7-950 (simulator/studies/nehalem_claims.py)."""

from __future__ import annotations

import pytest

from simulator.runner import load_system
from simulator.studies.nehalem_claims import cache_stream, peak_flops_per_s, random_trace

SYSTEM = "configs/systems/i7_950_choi.yaml"


def test_peak_is_cores_times_flops_per_cycle_times_clock():
    # 4 cores x 4 DP flops a cycle x 3.33 GHz, 001 Table 6's 53.3 GFLOP/s
    assert peak_flops_per_s(load_system(SYSTEM)) == pytest.approx(4 * 4 * 3.33e9, rel=1e-12)


def test_a_warm_l1_stream_runs_at_the_load_ports():
    # every load hits the L1 once the first pass has filled it: one 16 B load a cycle on each of the 4 cores
    rate = cache_stream(SYSTEM, "L1", pi0_w=0.0, quick=True)
    assert rate.per_s == pytest.approx(4 * 16 * 3.33e9, rel=1e-3)
    # the energy of a byte served by the L1 is the preset's L1 read of a 64 B line over 64 (135 pJ/B, 001's eps_L1)
    # plus the cores' static power over the bytes they stream a second
    static_j_per_byte = 4 * 30.5 / rate.per_s
    assert rate.energy_j == pytest.approx(135e-12 + static_j_per_byte, rel=0.05)


def test_random_trace_gives_each_thread_its_reads():
    table = random_trace(threads=3, accesses_per_thread=600)
    counts = table.group_by("thread").aggregate([("count", "sum")]).to_pydict()
    assert sorted(counts["count_sum"]) == [600, 600, 600]
