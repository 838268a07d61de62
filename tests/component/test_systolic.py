"""The systolic array unit in a system: closed-form counters, compute time, bandwidth stalls from the
coupling, accumulate, energy pricing, and its config checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import simulator
from simulator.accel.systolic_dataflow import FoldPlan, input_dram_words
from simulator.errors import ConfigError
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


def _reference_steps(g, spec, traffic, line_bytes):
    """The steps of ``systolic.gemm_steps`` from its docstrings, in plain numpy: a step's folds move, of each
    block they work on, the leading ceil(lines x largest words / block words) of its lines; reads are the
    three operands' lines made distinct, writes the output's, partial the output rows' partially covered
    lines (``interface.partial_lines``)."""
    from simulator.accel.gemm_command import tile_lines
    from simulator.accel.systolic import HALVES
    from simulator.accel.systolic_dataflow import OPERAND_DIMS
    from simulator.interconnect.interface import partial_lines

    plan = traffic.plan
    ranges = plan.ranges()
    matrices = {"input": (g.a_addr, g.lda), "weight": (g.b_addr, g.ldb), "output": (g.c_addr, g.ldc)}

    def block_of(op, f):  # (r0, r1, c0, c1) of fold f's block of operand op
        (rows, cols) = OPERAND_DIMS[op]
        return (int(ranges[rows][0][f]), int(ranges[rows][1][f]), int(ranges[cols][0][f]), int(ranges[cols][1][f]))

    def moved(op, folds, words):
        share = {}
        for f in folds:
            if words[f]:
                b = block_of(op, f)
                share[b] = max(share.get(b, 0.0), words[f] / plan.words(op)[f])
        out = []
        for (r0, r1, c0, c1), x in share.items():
            lines = tile_lines(matrices[op][0], matrices[op][1], r0, r1, c0, c1, spec.word_bytes, line_bytes)
            out.append(lines[:int(np.ceil(len(lines) * x))])
        return np.concatenate(out) if out else np.zeros(0, np.int64)

    # a step ends at the first fold by which any SRAM has filled (output: drained) half of its words
    cums = [np.cumsum(w) for w in (traffic.input_dram, traffic.weight_dram, traffic.output_dram_write)]
    halves = [max(1, spec.sram_words(op) // HALVES) for op in matrices]
    steps, start = [], 0
    while start < plan.folds:
        before = [int(c[start - 1]) if start else 0 for c in cums]
        end = min(min(int(np.searchsorted(c, b + h)) for c, b, h in zip(cums, before, halves)), plan.folds - 1)
        folds = range(start, end + 1)
        reads = np.unique(np.concatenate([moved("input", folds, traffic.input_dram),
                                          moved("weight", folds, traffic.weight_dram),
                                          moved("output", folds, traffic.output_dram_read)]))
        writes = np.unique(moved("output", folds, traffic.output_dram_write))
        rows = sorted({block_of("output", f) for f in folds if traffic.output_dram_write[f]})
        starts = [g.c_addr + (r * g.ldc + c0) * spec.word_bytes for r0, r1, c0, c1 in rows for r in range(r0, r1)]
        widths = [(c1 - c0) * spec.word_bytes for r0, r1, c0, c1 in rows for r in range(r0, r1)]
        partial = partial_lines(np.array(starts, np.int64), np.array(starts, np.int64) + widths, line_bytes)
        cycles = (end + 1 - start) * plan.fold_cycles - (1 if end == plan.folds - 1 else 0)
        steps.append((reads, writes, partial, cycles))
        start = end + 1
    return steps


@settings(max_examples=60, deadline=None)
@given(dataflow=st.sampled_from(["os", "ws", "is"]), rows=st.sampled_from([2, 3, 16]), cols=st.sampled_from([2, 5, 16]),
       sram=st.sampled_from([(100, 100, 100), (512, 1000, 128), (4096, 4096, 4096)]),
       mkn=st.tuples(*[st.integers(min_value=1, max_value=60)] * 3), pads=st.tuples(*[st.integers(0, 5)] * 3),
       addrs=st.tuples(*[st.integers(0, 300)] * 3), accumulate=st.booleans(), line_bytes=st.sampled_from([32, 64]))
@example(dataflow="os", rows=2, cols=2, sram=(100, 100, 100), mkn=(5, 20, 9), pads=(0, 0, 0), addrs=(0, 0, 0),
         accumulate=False, line_bytes=32)  # steps that move part of a block (its share of lines rounded up)
def test_the_compiled_steps_are_those_the_docstrings_define(dataflow, rows, cols, sram, mkn, pads, addrs, accumulate,
                                                             line_bytes):
    # the lines of every step (systolic_kernel.steps_lines) against a plain reading of the rules, on
    # ragged shapes, padded leading dimensions and unaligned matrices
    from dataclasses import replace

    from simulator.accel.gemm_command import GemmCommand
    from simulator.accel.systolic import gemm_steps, gemm_traffic, steps_lines_bound, steps_lines_estimate

    base = load_spec(SYSTEM, SystemSpec).spec.accelerators["systolic"]
    word = base.word_bytes
    spec = replace(base, dataflow=dataflow, rows=rows, cols=cols, input_sram_bytes=sram[0] * word,
                   weight_sram_bytes=sram[1] * word, output_sram_bytes=sram[2] * word)
    m, k, n = mkn
    g = GemmCommand(op="gemm", m=m, n=n, k=k, a_addr=addrs[0] * word, b_addr=(4096 + addrs[1]) * word,
                    c_addr=(8192 + addrs[2]) * word, lda=k + pads[0], ldb=n + pads[1], ldc=n + pads[2],
                    accumulate=accumulate)
    traffic = gemm_traffic(g, spec)
    got = gemm_steps(g, spec, traffic, line_bytes)
    want = _reference_steps(g, spec, traffic, line_bytes)
    assert len(got) == len(want) > 0
    held = sum(len(step.reads) + len(step.writes) + len(step.partial) for step in got)
    # the bounds check_args refuses by: the counted one, and the quick one that lets it skip the count
    assert held <= steps_lines_bound(g, spec, traffic, line_bytes) <= steps_lines_estimate(traffic, word, line_bytes)
    for step, (reads, writes, partial, cycles) in zip(got, want):
        for have, expected in ((step.reads, reads), (step.writes, writes), (step.partial, partial)):
            assert have.dtype == np.int64 and np.array_equal(have, expected)
        assert step.cycles == cycles


def test_a_command_whose_steps_would_hold_too_many_lines_is_refused_before_the_run():
    # 6000^3 in 2 B words on a 16 x 16 array: its steps would hold some 1.3e9 line numbers at once (about 10 GB);
    # refused when the command is checked, naming m, k, n; 2000^3 is accepted
    from simulator.accel.base import CommandError
    from simulator.system import build_system

    unit = build_system(load_spec(SYSTEM, SystemSpec).spec).units["systolic"]
    word = unit.spec.word_bytes

    def gemm(size: int) -> dict:
        return {"op": "gemm", "m": size, "n": size, "k": size, "a_addr": 0, "b_addr": size * size * word,
                "c_addr": 2 * size * size * word}

    with pytest.raises(CommandError, match=r"m, k, n = 6000, 6000, 6000: its steps move up to 1,272,375,000 DRAM "
                                           r"lines of 64 B, all held at once; expected at most 268,435,456"):
        unit.check_command(gemm(6000))
    assert unit.check_command(gemm(2000))["m"] == 2000
    # counted, not estimated: weight stationary 2400^3 holds 1.63e8 lines, under the limit (an estimate of
    # 3.25e8 refused it)
    ws = build_system(load_spec(SYSTEM, SystemSpec, ("accelerators.systolic.dataflow=ws",)).spec).units["systolic"]
    assert ws.check_command(gemm(2400))["m"] == 2400
