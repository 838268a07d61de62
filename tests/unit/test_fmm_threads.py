"""The FMM U-list trace on several threads: the permutations split over target leaves (PVFMM's OpenMP loops)
cover every interaction once, no two threads touch one target leaf, and one thread is the serial trace."""

from __future__ import annotations

import numpy as np
import pytest

from workloads.fmm_ulist import (ELEM_BYTES, build_problem, fmm_ulist, split_blocks, target_ranges, thread_spans,
                                 ulist_trace)
from workloads.trace import validate_trace

N_POINTS = 20_000


@pytest.fixture(scope="module")
def problem():
    return build_problem(4, N_POINTS, "table2")


def rows(table, stage, op):
    t = table.to_pydict()
    return [(thread, addrs, flops) for s, o, thread, addrs, flops in
            zip(t["stage"], t["op"], t["thread"], t["addrs"], t["flops"]) if s == stage and o == op]


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_target_ranges_balance_the_interactions(problem, threads):
    bounds = target_ranges(problem, threads)
    assert bounds[0] == 0 and bounds[-1] == problem.n_oct and np.all(np.diff(bounds) >= 0)
    per_thread = np.diff(np.searchsorted(problem.target, bounds))
    assert per_thread.sum() == problem.n_u
    assert per_thread.max() <= problem.n_u / threads * 1.1  # leaf boundaries cost at most a few leaves


@pytest.mark.parametrize(("variant", "placement", "blocks"), [("orig", "cpu", 1), ("blocking", "lap", 3),
                                                             ("pipelining", "lap", 4)])
def test_permutations_cover_each_interaction_once_and_targets_by_one_thread(problem, variant, placement, blocks):
    threads = 4
    table = ulist_trace(problem, variant, placement, split_blocks(problem, blocks), threads=threads)
    validate_trace(table, units={"host", "lap"})
    serial = ulist_trace(problem, variant, placement, split_blocks(problem, blocks))
    for stage, flops_per in (("input_perm", 1), ("output_perm", 2)):  # N_q (K) or 2 N_q (M) flops per interaction
        per_thread = {}
        for thread, _, flops in rows(table, stage, "read" if stage == "input_perm" else "update"):
            per_thread[thread] = per_thread.get(thread, 0) + flops
        assert sum(per_thread.values()) == flops_per * problem.n_u * problem.n_q
        assert sorted(per_thread) == list(range(threads))
        s = table.to_pydict()
        assert (sum(f for f, st in zip(s["flops"], s["stage"]) if st == stage)
                == sum(serial.column("flops").to_numpy()[np.array(serial.column("stage").to_pylist()) == stage]))
    leaf_bytes = problem.n_q * ELEM_BYTES
    owner: dict[int, int] = {}
    for thread, addrs, _ in rows(table, "output_perm", "update"):
        for leaf in {a // leaf_bytes for a in addrs}:
            assert owner.setdefault(leaf, thread) == thread  # one thread updates a target leaf
    t = table.to_pydict()
    n_barriers = [sum(1 for op, th in zip(t["op"], t["thread"]) if op == "barrier" and th == k) for k in range(threads)]
    assert len(set(n_barriers)) == 1 and n_barriers[0] >= 3 * blocks - (1 if variant == "pipelining" else 0)
    if placement == "lap":  # thread 0 offloads and waits
        assert {th for op, th in zip(t["op"], t["thread"]) if op in ("offload", "wait")} == {0}


def test_spans_are_runs_of_a_class_sorted_by_target(problem):
    bounds = target_ranges(problem, 3)
    cols = np.flatnonzero(problem.class_id == 0)
    spans = thread_spans(problem, cols, bounds)
    assert spans[0][0] == 0 and spans[-1][1] == cols.size
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    for t, (lo, hi) in enumerate(spans):
        assert np.all((problem.target[cols[lo:hi]] >= bounds[t]) & (problem.target[cols[lo:hi]] < bounds[t + 1]))


def test_one_thread_is_the_serial_trace_and_threads_are_checked():
    a = fmm_ulist(4, n_points=N_POINTS, variant="blocking", placement="lap", blocks=2)
    b = fmm_ulist(4, n_points=N_POINTS, variant="blocking", placement="lap", blocks=2, threads=1)
    assert a.equals(b) and "thread" not in a.column_names
    with pytest.raises(ValueError, match="threads"):
        fmm_ulist(4, n_points=N_POINTS, threads=0)
