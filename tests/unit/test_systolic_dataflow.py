"""The systolic array's fold arithmetic on cases worked by hand, and its DRAM read model against a
word-by-word replay of SCALE-Sim's refilling read buffer (``simulator.accel.systolic_dataflow``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.accel.systolic_dataflow import FoldPlan, dram_read_words, epoch_words, first_visits


def test_output_stationary_folds_worked_by_hand():
    # M = 5 over 2 rows: 3 folds; N = 7 over 2 columns: 4 folds; K = 3 streamed: 3 + 2 + 2 - 2 cycles each
    plan = FoldPlan("os", 2, 2, m=5, k=3, n=7)
    assert (plan.row_folds, plan.col_folds, plan.fold_cycles) == (3, 4, 5)
    assert plan.compute_cycles == 12 * 5 - 1
    assert plan.words("input").tolist() == [6, 6, 3] * 4  # A rows (2, 2, 1) x all 3 of K, column fold outer
    assert plan.words("weight").tolist() == [6] * 9 + [3] * 3  # all of K x N columns (2, 2, 2, 1)
    assert int(plan.words("output").sum()) == 5 * 7
    assert plan.macs == 5 * 3 * 7


@pytest.mark.parametrize("dataflow, row_dim, col_dim, time", [("ws", 3, 7, 5), ("is", 3, 5, 7)])
def test_stationary_dataflows_load_r_more_cycles_per_fold(dataflow, row_dim, col_dim, time):
    plan = FoldPlan(dataflow, 2, 2, m=5, k=3, n=7)
    folds = -(-row_dim // 2) * -(-col_dim // 2)
    assert plan.folds == folds
    assert plan.fold_cycles == time + 2 * 2 + 2 - 2
    assert plan.compute_cycles == folds * plan.fold_cycles - 1
    # the stationary operand is read once; the streamed one once per fold over the other array dimension
    streamed, stationary = ("input", "weight") if dataflow == "ws" else ("weight", "input")
    assert int(plan.words(stationary).sum()) == 3 * (7 if dataflow == "ws" else 5)
    assert int(plan.words(streamed).sum()) == 3 * (5 if dataflow == "ws" else 7) * -(-col_dim // 2)
    assert int(plan.words("output").sum()) == 5 * 7 * -(-3 // 2)  # partial sums written per K-fold


def test_epoch_is_half_of_the_sram_in_whole_sets():
    assert epoch_words(262144) == 50 * 2621
    assert epoch_words(1024) == 500


def replayed_reads(keys: list[int], sizes: dict[int, int], epoch: int) -> list[int]:
    """SCALE-Sim's read buffer word by word: a block's words come in one fixed (shuffled) order; a word
    not fetched since the last refill is fetched; the E-th word fetched since a refill triggers the next."""
    rng = np.random.default_rng(0)
    order = {key: rng.permutation(size) + 1000 * key for key, size in sizes.items()}
    held: set[int] = set()
    out = []
    for key in keys:
        fetched = 0
        for word in order[key].tolist():
            if word in held:
                continue
            held.add(word)
            fetched += 1
            if len(held) == epoch:
                held = set()
        out.append(fetched)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.lists(st.integers(1, 30), min_size=5, max_size=5),
       st.integers(1, 60))
def test_dram_reads_match_a_word_by_word_replay(keys, size_list, epoch):
    sizes = dict(enumerate(size_list))
    words = [sizes[k] for k in keys]
    assert dram_read_words(np.array(keys), np.array(words), epoch).tolist() == replayed_reads(keys, sizes, epoch)


def test_first_visits_fetch_each_output_block_once():
    plan = FoldPlan("ws", 2, 2, m=5, k=3, n=7)  # each C column block is visited by 2 K-folds
    reads = first_visits(plan, "output")
    assert int(reads.sum()) == 5 * 7
    assert int((reads > 0).sum()) == plan.col_folds


@pytest.mark.parametrize("field, value", [("dataflow", "rs"), ("rows", 0), ("k", 1.5)])
def test_a_bad_plan_is_refused(field, value):
    args = {"dataflow": "os", "rows": 2, "cols": 2, "m": 4, "k": 4, "n": 4} | {field: value}
    with pytest.raises(ValueError, match=field):
        FoldPlan(**args)
