"""The systolic array unit in a system: closed-form counters, compute time, bandwidth stalls from the
coupling, accumulate, energy pricing, and its config checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simulator
from simulator.accel.systolic_dataflow import FoldPlan, input_dram_words
from simulator.config.errors import ConfigError
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec

from tests.conftest import CONFIGS

SYSTEM = CONFIGS / "systems" / "systolic_dram.yaml"
UNIT = "accel/systolic"


def run_gemm(m: int, k: int, n: int, overrides: tuple[str, ...] = (), accumulate: bool = False):
    loaded = load_spec(SYSTEM, SystemSpec, overrides)
    word = loaded.spec.accelerators["systolic"].word_bytes
    return loaded.spec.accelerators["systolic"], simulator.run(loaded, {"generator": "lap_gemm", "params": {
        "m": m, "n": n, "k": k, "target": "systolic", "elem_bytes": f"{word} B", "accumulate": accumulate}})


@pytest.mark.parametrize("dataflow", ["os", "ws", "is"])
def test_counters_are_the_closed_forms(dataflow):
    spec, res = run_gemm(50, 40, 70, (f"accelerators.systolic.dataflow={dataflow}",))
    plan = FoldPlan(dataflow, spec.rows, spec.cols, 50, 40, 70)
    assert res.value(UNIT, "compute_cycles") == plan.compute_cycles
    assert res.value(UNIT, "macs") == 50 * 40 * 70
    assert res.value(UNIT, "folds") == plan.folds
    for op in ("input", "weight"):
        assert res.value(UNIT, f"{op}_sram_read_words") == plan.words(op).sum()
        assert res.value(UNIT, f"{op}_dram_read_words") == input_dram_words(plan, op, spec.sram_words(op)).sum()
    assert res.value(UNIT, "output_dram_write_words") == plan.words("output").sum()
    assert res.value(UNIT, "output_dram_read_words") == 0
    # busy for at least the compute cycles at the array clock
    assert res.value(UNIT, "busy_s") >= plan.compute_cycles / spec.frequency_hz


def test_a_narrow_link_stalls_the_array():
    spec, fast = run_gemm(64, 64, 2048)
    _, slow = run_gemm(64, 64, 2048, ("accelerators.systolic.interface.bandwidth_bytes_per_s=0.1 GB/s",))
    compute_s = fast.value(UNIT, "compute_cycles") / spec.frequency_hz
    moved = slow.value(UNIT, "bytes_read") + slow.value(UNIT, "bytes_written")
    assert slow.value(UNIT, "busy_s") == pytest.approx(moved / 0.1e9, rel=0.05)  # bound by the link
    assert compute_s <= fast.value(UNIT, "busy_s") < slow.value(UNIT, "busy_s") / 10
    assert slow.value(UNIT, "compute_cycles") == fast.value(UNIT, "compute_cycles")


def test_accumulate_reads_each_output_block_once():
    _, res = run_gemm(40, 70, 30, ("accelerators.systolic.dataflow=ws",), accumulate=True)
    assert res.value(UNIT, "output_dram_read_words") == 40 * 30
    assert res.value(UNIT, "output_dram_write_words") == 40 * 30 * -(-70 // 16)  # partial sums per K-fold


@pytest.mark.parametrize("dataflow", ["os", "ws"])
def test_energy_prices_the_counts(dataflow):
    # the DRAM transfer is priced on the words the coupling moved: under ws the closed form writes every
    # K-fold's partial sums (40 x 30 words, 5 folds), while a step merges them and writes each line once
    spec, res = run_gemm(40, 70, 30, (f"accelerators.systolic.dataflow={dataflow}",))
    assert res.value("energy/systolic", "compute") == pytest.approx(40 * 70 * 30 * spec.energy_per_mac_j)
    sram = sum(res.value(UNIT, f"{x}_words") for x in ("input_sram_read", "weight_sram_read", "output_sram_write"))
    assert res.value("energy/systolic", "sram") == pytest.approx(sram * spec.sram_energy_j_per_word)
    moved = (res.value(UNIT, "bytes_read") + res.value(UNIT, "bytes_written")) / spec.word_bytes
    assert res.value("energy/systolic", "dram_transfer") == pytest.approx(moved * spec.dram_energy_j_per_word)
    closed = sum(res.value(UNIT, f"{x}_words") for x in ("input_dram_read", "weight_dram_read", "output_dram_write"))
    assert (moved < closed) == (dataflow == "ws")


@pytest.mark.parametrize("override, says", [
    ("accelerators.systolic.dataflow=rs", "dataflow"),
    ("accelerators.systolic.rows=0", "rows"),
    ("accelerators.systolic.output_sram_bytes=64 B", "output_sram_bytes"),
])
def test_a_bad_array_is_refused_naming_the_key(override, says):
    with pytest.raises(ConfigError, match=says):
        load_spec(SYSTEM, SystemSpec, [override])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(min_value=0, max_value=50), max_size=30), max_size=4))
def test_the_distinct_lines_of_a_step_are_numpys_unique(parts):
    from simulator.accel.systolic import _distinct, _distinct_and_where

    arrays = [np.array(p, dtype=np.int64) for p in parts]
    got = _distinct(arrays)
    want = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.int64)
    assert got.dtype == np.int64 and np.array_equal(got, want)
    values = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    distinct, where = _distinct_and_where(values)
    want_distinct, want_where = np.unique(values, return_inverse=True)
    assert np.array_equal(distinct, want_distinct) and np.array_equal(where, want_where)
    assert where.dtype == want_where.dtype and where.shape == values.shape
