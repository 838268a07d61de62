"""The miss-slot timing of prefetched lines (simulator.host.prefetch_timing)."""

from __future__ import annotations

import numpy as np

from simulator.host.prefetch_timing import PrefetchSlots

SLOT, LAT, KEPT = 10, 100, 1000  # ps per line in the miss slots, load-to-use latency (ps), queue bound


def _slots() -> PrefetchSlots:
    return PrefetchSlots(level=1, slot_ps=SLOT, latency_ps=LAT, max_queued=KEPT)


def test_queued_lines_are_issued_in_idle_slots_one_slot_apart():
    pf = _slots()
    pf.commit(0, 3)  # a chunk's 3 demand misses hold the slots until 30 ps
    pf.add(np.array([7, 8, 9]), np.array([50, 60, 70]))
    pf.issue_idle(55)  # idle from 30 to 55: room for two lines (30, 40), not a third (50 + 10 > 55)
    assert pf.ready_ps == {7: 30 + LAT, 8: 40 + LAT} and pf.queued_done_ps == {9: 70}
    assert pf.issued == 2 and list(pf.queue) == [9]
    assert pf.slots_busy_until_ps == 55  # the idle rest is lost, not banked


def test_a_line_used_while_queued_is_promoted_and_one_in_flight_is_waited_for():
    pf = _slots()
    pf.add(np.array([1, 2]), np.array([20, 400]))  # DRAM delivers line 2 late
    pf.issue_idle(10)  # one slot: line 1 issued at 0, usable at 100
    promoted, latest = pf.use(np.array([1, 2, 5]))  # 5 was never prefetched: a plain hit
    assert promoted == 1 and latest == LAT  # line 2 promoted; line 1 in flight until 100
    assert pf.ready_ps == pf.queued_done_ps == {} and pf.promoted == 1
    pf.issue_idle(1000)  # line 2 was used: it is skipped without taking a slot
    assert pf.issued == 1


def test_a_line_in_flight_is_usable_no_earlier_than_dram_delivers_it():
    pf = _slots()
    pf.add(np.array([3]), np.array([500]))
    pf.issue_idle(SLOT)
    assert pf.use(np.array([3])) == (0, 500)


def test_commit_starts_no_earlier_than_the_chunk():
    pf = _slots()
    assert pf.commit(1000, 4) == 1000 + 4 * SLOT
    assert pf.commit(1010, 1) == 1000 + 5 * SLOT  # the slots were still busy


def test_the_queue_forgets_lines_prefetched_longest_ago():
    pf = _slots()
    n = KEPT + 10
    pf.add(np.arange(n), np.zeros(n, dtype=np.int64))  # no idle slot ever: nothing issued
    assert len(pf.queue) == KEPT and 0 not in pf.queued_done_ps and n - 1 in pf.queued_done_ps
    assert pf.use(np.arange(10)) == (0, 0)  # forgotten lines: plain hits
