"""Tiled GEMMs on the simulated i7-920: DRAM traffic vs the GEMM I/O closed forms (issue 4, 004 app. D.2).

The fast memory M of the closed forms is the last-level cache, in 8 B elements
(``caches.levels.LLC.size_bytes`` resized to 1 or 2 MiB; L1D and L2 are left at
32 KiB and 256 KiB). Simulated traffic is DRAM bytes read + written after the
trace's final flush of R, in elements.

The cache is write-allocate: the first store to each line of R reads it, a read
the closed forms do not count (they assume R starts at zero, 004:L4629-L4630). The
comparison is therefore with ``gemm_io(...).words + P0 P2``; the plain ratio is
also reported by :func:`_traffic` for the record. With ``zero_result`` the trace
zeroes each piece of R in the cache first (``zero`` rows: allocated dirty, not
read), as a real code would with dcbz / DC ZVA / CLZERO, and the simulated
traffic is compared with the plain closed form.
"""

from __future__ import annotations

import pytest

import simulator
from models.data_movement import gemm_io
from simulator.runner import load_system, simulate_trace
from tests.conftest import DEFAULT_SYSTEM
from workloads.gemm_tiled import (DEFAULT_RESERVE_WAYS, TiledGemmPlan, plan_tiled_gemm, resident_budget_elems,
                                  tiled_gemm, tiled_gemm_trace)
from workloads.registry import GENERATORS
from workloads.trace import TraceBuilder, trace_summary

MIB = 1 << 20
LLC_WAYS = 16   # 003 Table 4 (003:L322)
_SYSTEMS: dict[int, object] = {}


def _system(llc_bytes: int):
    if llc_bytes not in _SYSTEMS:
        _SYSTEMS[llc_bytes] = load_system(DEFAULT_SYSTEM, [f"caches.levels.LLC.size_bytes={llc_bytes} B"])
    return _SYSTEMS[llc_bytes]


def _traffic(plan: TiledGemmPlan, llc_bytes: int) -> dict[str, float]:
    """Simulated DRAM elements of ``plan`` and their ratios to the schedule's count and the closed form."""
    r = simulate_trace(_system(llc_bytes), tiled_gemm(plan))
    words = (r.value("dram", "bytes_read") + r.value("dram", "bytes_written")) / 8
    closed = gemm_io(plan.p0, plan.p1, plan.p2, llc_bytes // 8, plan.schedule).words
    return {"words": words, "vs_plan": words / plan.words(),
            "vs_closed_wa": words / (closed + plan.p0 * plan.p2), "vs_closed": words / closed}


@pytest.mark.parametrize("shape,llc_bytes", [((768, 512, 640), 1 * MIB), ((768, 512, 640), 2 * MIB)])
def test_output_on_chip_traffic_within_10_percent_of_d3(shape, llc_bytes):
    plan = plan_tiled_gemm(*shape, llc_bytes, LLC_WAYS, schedule="output")
    t = _traffic(plan, llc_bytes)
    # the layout keeps the R tile resident: the cache moves exactly what the schedule says
    assert t["vs_plan"] == pytest.approx(1.0, rel=0.01)
    assert t["vs_closed_wa"] == pytest.approx(1.0, rel=0.10)


def test_input_on_chip_traffic_within_10_percent_of_d5():
    shape, llc_bytes = (896, 512, 640), 1 * MIB
    plan = plan_tiled_gemm(*shape, llc_bytes, LLC_WAYS, schedule="input1")
    t = _traffic(plan, llc_bytes)
    assert t["vs_plan"] == pytest.approx(1.0, rel=0.01)
    assert t["vs_closed_wa"] == pytest.approx(1.0, rel=0.10)


@pytest.mark.parametrize("schedule,shape,llc_bytes", [
    ("output", (768, 512, 640), 1 * MIB),
    ("output", (768, 512, 640), 2 * MIB),
    ("input1", (896, 512, 640), 1 * MIB),
])
def test_zeroed_result_traffic_within_10_percent_of_plain_closed_form(schedule, shape, llc_bytes):
    # issue 4: with R zeroed in the cache (no read of R), D.3 (C on chip) and the
    # sqrt(2) form D.5 (input on chip) hold without the write-allocate term
    plan = plan_tiled_gemm(*shape, llc_bytes, LLC_WAYS, schedule=schedule, zero_result=True)
    t = _traffic(plan, llc_bytes)
    assert plan.words() == plan.words(write_allocate=False)
    assert t["vs_plan"] == pytest.approx(1.0, rel=0.01)
    assert t["vs_closed"] == pytest.approx(1.0, rel=0.10)
    # the same plan without zeroing reads R once more: P0 P2 more words
    plain = _traffic(plan_tiled_gemm(*shape, llc_bytes, LLC_WAYS, schedule=schedule), llc_bytes)
    assert plain["words"] - t["words"] == pytest.approx(shape[0] * shape[2], rel=0.01)


def test_zero_row_reads_nothing_and_flush_writes_every_line():
    lines = 4096
    tb = TraceBuilder()
    tb.access("host", "z", "zero", 0, 64, 64, lines)
    tb.access("host", "z", "flush", 0, 64, 64, lines)
    r = simulate_trace(_system(1 * MIB), tb.to_table())
    assert r.value("dram", "bytes_read") == 0
    assert r.value("dram", "bytes_written") == lines * 64


@pytest.mark.parametrize("schedule", ["output", "input1"])
def test_zeroed_result_trace_zeroes_every_line_of_r_once(schedule):
    p0, p1, p2 = 37, 29, 53
    plan = plan_tiled_gemm(p0, p1, p2, 8 * 1024, 8, schedule=schedule, zero_result=True)
    s = trace_summary(tiled_gemm(plan))
    plain = trace_summary(tiled_gemm(plan_tiled_gemm(p0, p1, p2, 8 * 1024, 8, schedule=schedule)))
    n_tiles_p0 = -(-p0 // plan.tile_rows)
    if schedule == "output":   # one zero row per R tile; R rows padded to whole lines
        assert s["rows_per_op"]["zero"] == n_tiles_p0 * -(-p2 // plan.tile_cols)
        r_bytes = p0 * -(-p2 // 8) * 64
    else:                      # one per R column segment; R columns padded to whole lines
        assert s["rows_per_op"]["zero"] == n_tiles_p0 * p2
        r_bytes = p2 * -(-p0 // 8) * 64
    assert s["bytes_written"] - plain["bytes_written"] == r_bytes
    assert s["flops"] == plain["flops"] == 2 * p0 * p1 * p2


def test_a_tile_filling_every_way_thrashes():
    # control: without a way left to the streamed panels the tile does not stay resident
    llc_bytes = 1 * MIB
    plan = plan_tiled_gemm(768, 512, 640, llc_bytes, LLC_WAYS, schedule="output", reserve_ways=0)
    assert _traffic(plan, llc_bytes)["vs_plan"] > 2.0


@pytest.mark.parametrize("schedule", ["output", "input1"])
def test_ragged_shapes_carry_exact_flops_and_touch_every_result(schedule):
    p0, p1, p2 = 37, 29, 53
    plan = plan_tiled_gemm(p0, p1, p2, 8 * 1024, 8, schedule=schedule)
    col_dim = p2 if schedule == "output" else p1
    assert plan.tile_rows < p0 or plan.tile_cols < col_dim  # several tiles, ragged edges
    s = trace_summary(tiled_gemm(plan))
    assert s["flops"] == 2 * p0 * p1 * p2
    assert s["rows_per_op"].get("flush", 0) == 1


def test_schedule_counts_equal_the_closed_forms_at_their_tile_sizes():
    # D.3 with x = y = sqrt(M); D.5 with x = sqrt(M/2), z = 2x (tiles dividing the dimensions)
    m = 65536
    out = TiledGemmPlan("output", 512, 256, 512, 256, 256, 1)
    assert out.words(write_allocate=False) == gemm_io(512, 256, 512, m, "output").words
    m = 131072
    inp = TiledGemmPlan("input1", 768, 1024, 640, 256, 512, 1)
    assert inp.words(write_allocate=False) == gemm_io(768, 1024, 640, m, "input1").words
    assert inp.words() == inp.words(write_allocate=False) + 768 * 640


def test_plan_respects_the_resident_budget():
    budget = resident_budget_elems(1 * MIB, LLC_WAYS, 1)
    assert budget == 15 * MIB // 16 // 8
    plan = plan_tiled_gemm(768, 512, 640, 1 * MIB, LLC_WAYS)
    assert plan.resident_elems <= budget
    assert plan.depth * (768 + 640) * 8 <= 1 * MIB // LLC_WAYS


@pytest.mark.parametrize("kwargs,name", [
    ({"schedule": "input2"}, "schedule"),
    ({"tile_rows": 0}, "tile_rows"),
    ({"tile_cols": 1000}, "tile_cols"),
    ({"line_bytes": 12}, "line_bytes"),
    ({"zero_result": 1}, "zero_result"),
    ({"schedule": "input1", "tile_rows": 12, "zero_result": True}, "tile_rows"),
])
def test_plan_rejects_bad_parameters(kwargs, name):
    args = {"schedule": "output", "p0": 64, "p1": 64, "p2": 64, "tile_rows": 16, "tile_cols": 16, "depth": 1}
    with pytest.raises(ValueError, match=name):
        TiledGemmPlan(**{**args, **kwargs})


@pytest.mark.parametrize("line_bytes", [3, 12, 0])
def test_the_planner_refuses_a_line_of_no_whole_elements_before_dividing_by_it(line_bytes):
    """A line of 3 B holds no element: the planner's step through the tile sides would be 0 elements."""
    with pytest.raises(ValueError, match=f"line_bytes must be .*, got {line_bytes}"):
        plan_tiled_gemm(16, 16, 16, 32 * 1024, 8, line_bytes=line_bytes)


def test_resident_budget_rejects_reserving_every_way():
    with pytest.raises(ValueError, match="reserve_ways"):
        resident_budget_elems(MIB, 16, 16)


@pytest.mark.parametrize("schedule, ways", [("output", 1), ("input1", 1), ("input1", 2)])
def test_too_few_ways_for_the_default_reserve_are_named_as_ways(schedule, ways):
    """reserve_ways left out is the schedule's default: a cache of no more ways is refused naming ways."""
    with pytest.raises(ValueError, match=rf"^ways must be at least {DEFAULT_RESERVE_WAYS[schedule] + 1} for schedule "
                       rf"{schedule} \(reserve_ways, left out, keeps {DEFAULT_RESERVE_WAYS[schedule]} "):
        plan_tiled_gemm(64, 64, 64, ways * 4096, ways, schedule=schedule)
    assert plan_tiled_gemm(64, 64, 64, ways * 4096, ways, schedule=schedule, reserve_ways=0).tile_rows >= 1


def test_registered_generator_runs_through_the_simulator():
    assert GENERATORS["gemm_tiled"] is tiled_gemm_trace
    params = {"p0": 128, "p1": 96, "p2": 160, "cache_bytes": "64 KiB", "ways": 16}
    res = simulator.run(DEFAULT_SYSTEM, {"generator": "gemm_tiled", "params": params},
                        ["caches.levels.LLC.size_bytes=64 KiB", "caches.levels.L2.size_bytes=16 KiB",
                         "caches.levels.L1D.size_bytes=4 KiB"])
    plan = plan_tiled_gemm(128, 96, 160, 64 * 1024, 16)
    words = (res.value("dram", "bytes_read") + res.value("dram", "bytes_written")) / 8
    assert words == pytest.approx(plan.words(), rel=0.02)
