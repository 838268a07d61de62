"""The systolic array's closed forms against SCALE-Sim v3 run in the test (``scalesim`` 3.0.0).

For each dataflow and four arrays (4x4, 8x8, 16x16 and a non-square 8x4), on GEMM shapes that
leave partial folds, with SCALE-Sim's default SRAMs (every operand fetched once) and with 1-2 kB
SRAMs (the read buffers refill many times): compute cycles and SRAM and DRAM read words are
equal. Two counts differ by design, each checked exactly:
- output SRAM writes, os: SCALE-Sim adds R + C per fold to its count of written outputs
  (``systolic_compute_os.create_ofmap_demand_mat`` counts the padded fold's height plus width);
  offsim counts the outputs written;
- output DRAM writes: SCALE-Sim's write buffer closes a partly filled line of ``cols`` slots when a
  drain starts, and a drain counts the empty slots of every line but its last, so it may count a
  few words more than are written (within 1 %: 0.3 % at most on these cases); offsim counts the words written.
"""

from __future__ import annotations

import pytest

pytest.importorskip("scalesim")

from simulator.accel.systolic_dataflow import FoldPlan, input_dram_words  # noqa: E402
from tests.peers.scalesim_runner import run_gemm  # noqa: E402

KB_WORDS = 1024  # SCALE-Sim's kB of one-byte words
DEFAULT_KB = (256, 256, 128)
# (M, K, N, R, C, SRAM kB of input, weight and output)
CASES = [
    (24, 20, 28, 4, 4, DEFAULT_KB),
    (40, 24, 56, 8, 8, (1, 1, 1)),
    (64, 48, 72, 16, 16, DEFAULT_KB),
    (36, 20, 44, 8, 4, (2, 1, 1)),
]


def _id(case) -> str:
    m, k, n, r, c, kb = case
    return f"{m}x{k}x{n}-on-{r}x{c}-{'default' if kb == DEFAULT_KB else 'small'}-srams"


@pytest.fixture(scope="module", params=[(case, df) for case in CASES for df in ("os", "ws", "is")],
                ids=lambda p: f"{p[1]}-{_id(p[0])}")
def pair(request):
    """(offsim's fold plan, its DRAM read words per operand, SCALE-Sim's counts) for one case."""
    (m, k, n, r, c, kb), df = request.param
    plan = FoldPlan(df, r, c, m, k, n)
    dram = {op: int(input_dram_words(plan, op, size * KB_WORDS).sum()) for op, size in (("input", kb[0]),
                                                                                      ("weight", kb[1]))}
    return plan, dram, run_gemm(m, k, n, r, c, df, *kb)


def test_compute_cycles_equal(pair):
    plan, _, ss = pair
    assert ss.stall_cycles == 0
    assert plan.compute_cycles == ss.compute_cycles


def test_sram_words_equal(pair):
    plan, _, ss = pair
    assert int(plan.words("input").sum()) == ss.input_sram_read_words
    assert int(plan.words("weight").sum()) == ss.weight_sram_read_words
    extra = plan.folds * (plan.rows + plan.cols) if plan.dataflow == "os" else 0
    assert int(plan.words("output").sum()) + extra == ss.output_sram_write_words


def test_dram_read_words_equal(pair):
    _, dram, ss = pair
    assert dram["input"] == ss.input_dram_read_words
    assert dram["weight"] == ss.weight_dram_read_words


def test_dram_write_words_within_padding(pair):
    plan, _, ss = pair
    written = int(plan.words("output").sum())
    assert written <= ss.output_dram_write_words <= written * 1.01


def test_the_small_srams_refill():
    """The small-SRAM cases do exercise refills: an operand is fetched more than once."""
    plan = FoldPlan("os", 8, 8, 40, 24, 56)
    once = 40 * 24
    assert int(input_dram_words(plan, "input", KB_WORDS).sum()) > once
