"""The command-queue controller's ACT placement (``dram_kernel.backfill_act``): an ACT may fall among
ACTs placed before it, by hand, keeping tRRD_S, tRRD_L and tFAW from every one of them."""

from __future__ import annotations

import numpy as np

from simulator.memory import dram_kernel as k

NS = 1000
RRD_S, RRD_L, FAW = 5 * NS, 8 * NS, 30 * NS


def _state(acts: list[tuple[int, int]]):
    """One rank of four banks in two groups with the given (time ps, group row) ACTs in its history."""
    p = np.zeros(len(k.KERNEL_SLOTS), dtype=np.int64)
    p[k.P_RRD_S], p[k.P_RRD_L], p[k.P_FAW] = RRD_S, RRD_L, FAW
    bk = np.zeros((4, k.N_BANK), dtype=np.int64)
    bk[:, k.B_ACT_READY] = k.NEG_INF
    rk = np.zeros((1, k.N_RANK), dtype=np.int64)
    rk[0, k.R_READY] = k.NEG_INF
    h = k.act_history(1)
    for t, gi in acts:
        h[0, :-1] = h[0, 1:]
        h[0, -1] = (t, gi)
    return p, bk, rk, h


def _act(acts, ready, group=0):
    p, bk, rk, h = _state(acts)
    return k.backfill_act(h[0], bk, rk, 0, 0, group, ready, p)


def test_an_act_goes_into_a_gap_before_later_acts():
    assert _act([(0, 1), (100 * NS, 1)], 20 * NS) == 20 * NS


def test_an_act_keeps_trrd_on_both_sides():
    # 3 ns after an ACT of another group and 4 ns before the next: moved to 5 ns after the first, which is
    # 2 ns before the next, then to 5 ns after that one
    assert _act([(0, 1), (7 * NS, 1)], 3 * NS) == 12 * NS
    assert _act([(0, 0)], 3 * NS, group=0) == RRD_L  # its own group: tRRD_L


def test_an_act_keeps_tfaw_in_every_window_it_falls_in():
    four = [(0, 1), (6 * NS, 1), (12 * NS, 1), (18 * NS, 1)]
    assert _act(four + [(200 * NS, 1)], 24 * NS) == FAW  # the fifth after the four: tFAW after the first
    # before a later burst of four (100 .. 118 ns), an ACT needs tFAW to their last: at 88 ns at the latest,
    # else after them, tFAW after the first
    later = [(100 * NS, 1), (106 * NS, 1), (112 * NS, 1), (118 * NS, 1)]
    assert _act(later, 80 * NS) == 80 * NS
    assert _act(later, 90 * NS) == 130 * NS


def test_a_full_history_keeps_the_act_after_its_fourth_entry():
    # ACTs older than the history are unknown: an ACT may not fall where a tFAW window would reach them, so
    # it goes no earlier than the fourth entry, and tRRD_S after it
    acts = [(i * 100 * NS, 1) for i in range(k.ACT_HISTORY)]
    assert _act(acts, 0) == 300 * NS + RRD_S
