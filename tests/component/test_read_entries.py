"""The outstanding-read limit shared by requesters upstream of the DRAM controller
(``DramSystem.limit_reads``, an uncore read queue): completion times by hand on DDR3-1600."""

import numpy as np
import pytest

from simulator.memory.dram import DramSystem
from tests.conftest import ddr3_preset

TIMING, CURRENTS, GEOMETRY = ddr3_preset()  # DDR3-1600 11-11-11, BL8: burst 4 tCK, tCCD 4 tCK
T = TIMING.tck_ps
HOLD_PS = 10_000
ROW = np.arange(4, dtype=np.int64)  # four lines of one row of bank 0 (mapping row:rank:bank:channel:column)


def make(entries: int | None, requesters=("host",)) -> DramSystem:
    d = DramSystem(TIMING, CURRENTS, GEOMETRY, scheduler="in_order")
    if entries is not None:
        d.limit_reads(entries, HOLD_PS, requesters)
    return d


def test_without_a_limit_reads_of_one_row_follow_each_other_at_tccd():
    # miss (tRCD + CL + burst), then row hits one tCCD apart
    assert make(None).service_lines(ROW, False, 0).tolist() == [26 * T, 30 * T, 34 * T, 38 * T]


def test_one_entry_serialises_the_reads_each_after_the_last_is_back():
    # each read waits for the entry: the previous data burst + the hold, then CL + burst of a row hit
    done = make(1).service_lines(ROW, False, 0)
    assert done.tolist() == [26 * T + k * (HOLD_PS + 15 * T) for k in range(4)]


def test_two_entries_let_two_reads_fly_and_the_third_takes_the_first_freed():
    done = make(2).service_lines(ROW, False, 0)
    # r0, r1 as unlimited; r2 takes r0's entry (free at 26T + hold), r3 r1's (30T + hold)
    assert done.tolist() == [26 * T, 30 * T, 26 * T + HOLD_PS + 15 * T, 30 * T + HOLD_PS + 15 * T]


def test_entries_stay_held_across_chunks():
    d = make(1)
    first = d.service_lines(ROW[:1], False, 0)
    second = d.service_lines(ROW[1:2], False, 0)  # arrives at once, waits for the first's entry
    assert second[0] == first[0] + HOLD_PS + 15 * T


def test_writes_and_other_requesters_are_not_limited():
    free = make(None)
    expected_writes = free.service_lines(ROW, True, 0).tolist()
    assert make(1).service_lines(ROW, True, 0).tolist() == expected_writes
    dma = make(1, requesters=("host",))
    assert dma.service_lines(ROW, False, 0, requester="dma").tolist() == [26 * T, 30 * T, 34 * T, 38 * T]


@pytest.mark.parametrize("entries, hold, message", [(0, 0, "entries = 0"), (True, 0, "entries = True"),
                                                    (4, -1, "hold_ps = -1")])
def test_bad_arguments_are_refused(entries, hold, message):
    with pytest.raises(ValueError, match=message):
        make(None).limit_reads(entries, hold, ("host",))


def test_the_ready_first_scheduler_is_refused():
    d = DramSystem(TIMING, CURRENTS, GEOMETRY, scheduler="ready_first")
    with pytest.raises(ValueError, match="in_order or frfcfs"):
        d.limit_reads(32, HOLD_PS, ("host",))
