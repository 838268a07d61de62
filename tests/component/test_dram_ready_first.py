"""Ready-first controller: the request whose column can issue earliest goes first, by hand; requests
enter their queues in arrival order; the write buffer is drained when full or when no read waits; it serves random reads faster than the
block-sorting first-ready controller. (Its command logs are checked against the DDR3 rules with
the other controllers in test_dram.py.)"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simulator.memory import dram_kernel as k
from tests.component.test_dram import (GEOMETRY, TCK, TIMING, check_protocol, line, make, open_time_from_log,
                                       random_chunks)


def test_a_row_hit_behind_a_conflict_is_served_first_by_hand():
    d = make(scheduler="ready_first", command_log_capacity=16)
    d.service(np.array([line(1, 0)]), False, 0)  # bank 0 holds row 1
    a = 1_000_000
    out = d.service_lines(np.array([line(2, 0), line(1, 0, 5)]), False, a)
    assert out[1] == a + (11 + 4) * TCK  # the hit: CL + burst
    # the conflict: PRE tRTP after the hit's read, tRP, ACT, tRCD, CL, burst
    assert out[0] == a + (6 + 11 + 11 + 11 + 4) * TCK
    c = d.counters()
    assert (c["row_hits"], c["row_conflicts"]) == (1, 1)


def _served_kinds(d, lines, writes):
    d.service_lines(np.array(lines), np.array(writes), 1_000_000)
    log = d.command_log()
    return [int(cmd) for cmd in log[:, 1] if cmd in (2, 3)]  # CMD_RD, CMD_WR in issue order


def test_writes_wait_in_their_buffer_while_reads_are_waiting():
    d = make(scheduler="ready_first", queue_depth=4, command_log_capacity=64)
    lines = [line(1, b) for b in range(4)]
    kinds = _served_kinds(d, lines, [True, False, True, False])
    assert kinds == [2, 2, 3, 3]  # both reads, then the writes once no read waits


def test_a_full_write_buffer_is_drained_first():
    d = make(scheduler="ready_first", queue_depth=2, command_log_capacity=64)
    lines = [line(1, b) for b in range(4)]
    kinds = _served_kinds(d, lines, [True, True, False, False])
    assert kinds == [3, 3, 2, 2]  # two writes fill the 2-deep buffer: drained before the reads


def test_requests_enter_their_queues_in_arrival_order():
    d = make(scheduler="ready_first", queue_depth=2, command_log_capacity=64)
    lines = [line(1, b) for b in range(6)]
    kinds = _served_kinds(d, lines, [False, False, False, False, True, True])
    # the third read finds the 2-deep read queue full and holds back the writes behind it; the writes
    # enter only with the fourth read, once two reads are served, and their full buffer is drained
    # before the last two reads (admitted apart, the writes would fill their buffer at once: 3, 3, 2, 2, 2, 2)
    assert kinds == [2, 2, 3, 3, 2, 2]


def test_random_reads_run_faster_than_with_block_sorting():
    rng = np.random.default_rng(3)
    lines = rng.integers(0, (1 << 30) // 64, 20_000)
    ends = {}
    for scheduler in ("in_order", "frfcfs", "ready_first"):
        d = make(scheduler=scheduler)
        ends[scheduler] = d.service(lines, False, 0)
        assert d.counters()["reads"] == len(lines)
    # measured on 200 000 reads over 1 GiB, two ranks: 5.4, 8.1 and 11.8 GB/s
    assert ends["ready_first"] < 0.8 * ends["frfcfs"] < 0.8 * ends["in_order"]


@pytest.mark.parametrize("command_queue_depth", [0, 8])
def test_a_row_hit_behind_a_conflict_in_one_bank_goes_first(command_queue_depth):
    d = make(scheduler="ready_first", command_queue_depth=command_queue_depth)
    d.service(np.array([line(1, 0)]), False, 0)  # bank 0 holds row 1
    a = 1_000_000
    out = d.service_lines(np.array([line(2, 0), line(1, 0, 5)]), False, a)
    assert out[1] < out[0]


def _columns_per_act(command_queue_depth: int) -> float:
    # reads alternating between two rows of one bank, as a triad's arrays in one bank
    n = 4096
    lines = np.array([line(1 + (k % 2), 0, (k // 2) % 128) for k in range(n)])
    d = make(scheduler="ready_first", command_queue_depth=command_queue_depth)
    d.service(lines, False, 0)
    c = d.counters()
    return c["reads"] / c["activates"]


def test_a_bank_command_queue_bounds_the_row_hits_an_act_serves():
    # a row's hits are those in its bank's queue of 8, and those entering it while they are served (every
    # other request here): at most 16; from the whole 32-entry read queue, all of that row's 16 and more
    assert _columns_per_act(8) <= 16 < _columns_per_act(0)


def test_command_queues_need_the_ready_first_scheduler():
    with pytest.raises(ValueError, match="command_queue_depth"):
        make(scheduler="frfcfs", command_queue_depth=8)
    with pytest.raises(ValueError, match="command_queue_depth"):
        make(scheduler="ready_first", command_queue_depth=-1)


def test_command_queues_serve_random_reads_as_fast_as_the_whole_queue():
    # DRAMSim3's structure holds back no bank: random reads (one or two per bank in the queue) gain nothing
    # from seeing the whole read queue
    rng = np.random.default_rng(3)
    lines = rng.integers(0, (1 << 30) // 64, 20_000)
    ends = [make(scheduler="ready_first", command_queue_depth=depth).service(lines, False, 0) for depth in (0, 8)]
    assert 0.95 < ends[1] / ends[0] < 1.05


def test_the_input_pipeline_delays_every_first_command():
    a = 1_000_000
    for cycles in (0, 2, 5):
        for scheduler, depth in (("in_order", 0), ("ready_first", 8)):
            d = make(scheduler=scheduler, command_queue_depth=depth, arrival_to_command_cycles=cycles)
            assert d.service(np.array([line(5, 3)]), False, a) == a + (cycles + 11 + 11 + 4) * TCK  # + tRCD, CL, burst
    for bad in (-1, True, 1.0):
        with pytest.raises(ValueError, match="arrival_to_command_cycles"):
            make(arrival_to_command_cycles=bad)


def _two_rank_line(rank, row, bank, col=0):
    """Line index of (rank, row, bank, column) on the preset's mapping row:rank:bank:channel:column, two ranks."""
    return ((row * 2 + rank) * 8 + bank) * 256 + col


def _reads_around_a_refresh(command_queue_depth):
    """A read of rank 1 arriving as its refresh falls due, then one of rank 0 100 ns later, one call each:
    their completion times (ps) and the system."""
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g, scheduler="ready_first", command_queue_depth=command_queue_depth, refresh="staggered",
             command_log_capacity=64)
    due = TIMING.t_refi_ps  # rank 1 of 2, staggered: tREFI
    first = d.service_lines(np.array([_two_rank_line(1, 4, 2)]), False, due)[0]
    second = d.service_lines(np.array([_two_rank_line(0, 7, 5)]), False, due + 100_000)[0]
    return first, second, d


def test_a_lone_read_passes_one_waiting_on_its_ranks_refresh_through_the_command_queues():
    first, second, d = _reads_around_a_refresh(8)
    assert first == TIMING.t_refi_ps + (TIMING.t_rfc + 11 + 11 + 4) * TCK  # REF, then ACT, tRCD, CL, burst
    assert second == TIMING.t_refi_ps + 100_000 + (11 + 11 + 4) * TCK  # an idle bank of the other rank
    log = d.command_log()
    assert check_protocol(log, TIMING, 2) == len(log)
    end = d.last_completion_ps
    assert d.background_times_ps(end)["open"] == open_time_from_log(log, 2, end)
    # without command queues the controller keeps its column commands in arrival order
    first, second, _ = _reads_around_a_refresh(0)
    assert second > first


def test_lone_requests_around_refreshes_keep_the_protocol_and_its_accounting():
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g, scheduler="ready_first", command_queue_depth=8, refresh="staggered", command_log_capacity=100_000)
    rng = np.random.default_rng(4)
    arrival = 0
    for _ in range(3000):  # about six tREFI of single requests, 40 to 60 ns apart
        arrival += int(rng.integers(32, 49)) * TCK
        d.service_lines(rng.integers(0, g.capacity_lines, 1), rng.random(1) < 0.3, arrival)
    end = d.last_completion_ps + 10 * TIMING.t_refi_ps
    times = d.background_times_ps(end)
    d.idle_until(end)
    log = d.command_log()
    assert check_protocol(log, TIMING, 2) == len(log)
    assert times["open"] == open_time_from_log(log, 2, end)
    assert int(np.sum(log[:, 1] == k.CMD_REF)) == times["refreshes"] > 0


@pytest.mark.parametrize("seed", [3, 9])
@pytest.mark.parametrize("policy,power_down,depth", [("open", False, 8), ("closed", False, 8),
                                                     ("open_adaptive", True, 4)])
def test_chunks_through_the_command_queues_keep_the_accounted_open_time_of_their_log(seed, policy, power_down, depth):
    # requests of one chunk are served out of their order of entry, and an ACT may go before ACTs served
    # earlier: the open time accounted while serving must still be the union of the log's [ACT, PRE) intervals
    g = dataclasses.replace(GEOMETRY, ranks_per_channel=2)
    d = make(g, page_policy=policy, scheduler="ready_first", command_queue_depth=depth, power_down=power_down,
             command_log_capacity=400_000)
    last = 0
    for arrival, lines, wr in random_chunks(seed):
        last = max(last, d.service(lines, wr, arrival))
    end = last + 50_000_000
    times = d.background_times_ps(end)
    d.idle_until(end)
    log = d.command_log()
    assert len(log) < 400_000
    assert check_protocol(log, TIMING, 2) == len(log)
    assert times["open"] == open_time_from_log(log, 2, end)


def test_through_the_command_queues_a_refresh_falling_due_goes_before_later_commands():
    # reads of one row from 100 ns before tREFI: those whose column command would come at or after the refresh's
    # due time wait for it, and re-open the row after it, as DRAMSim3's controller refreshes a rank when due
    d = make(scheduler="ready_first", command_queue_depth=8, command_log_capacity=256)
    due = TIMING.t_refi_ps
    d.service_lines(np.array([line(1, 0, col) for col in range(64)]), False, due - 100_000)
    log = d.command_log()
    ref = int(log[log[:, 1] == k.CMD_REF][0, 0])
    columns = log[log[:, 1] == k.CMD_RD][:, 0]
    assert due <= ref <= due + (TIMING.t_rtp + TIMING.t_rp + 4) * TCK  # the bank closed as soon as it may
    assert not np.any((columns >= due) & (columns < ref + TIMING.t_rfc * TCK))
    assert 0 < np.sum(columns < due) < 64
    assert d.counters()["activates"] == 2
    assert check_protocol(log, TIMING, 1) == len(log)


def test_a_row_a_queued_request_could_open_before_a_due_refresh_is_opened_then_and_again_after():
    # two ranks; from 100 ns before tREFI, 34 reads of the open row 1 of rank 0's bank 0, then one of row 2 of
    # rank 1's bank 1: that request waits in its command queue behind bank 0's row hits, each of which the data bus
    # takes a rank switch earlier, until past the due time, but its ACT could issue long before; DRAMSim3 issues
    # it then, and the refresh closes the row again
    geometry = dataclasses.replace(GEOMETRY, ranks_per_channel=2)

    def at(row, rank, bank, col=0):  # the line of that place (mapping row:rank:bank:column)
        return line(row * 2 + rank, bank, col)

    d = make(geometry, scheduler="ready_first", command_queue_depth=8, command_log_capacity=256)
    due = TIMING.t_refi_ps
    d.service(np.array([at(1, 0, 0)]), False, due - 200_000)
    d.service_lines(np.array([at(1, 0, 0, col) for col in range(1, 35)] + [at(2, 1, 1)]), False, due - 100_000)
    log = d.command_log()
    rank1 = log[log[:, 2] == 1]
    ref_end = int(rank1[rank1[:, 1] == k.CMD_REF][0, 0]) + TIMING.t_rfc * TCK
    acts = rank1[rank1[:, 1] == k.CMD_ACT][:, 0]
    assert len(acts) == 2 and acts[0] < due and acts[1] >= ref_end
    assert rank1[rank1[:, 1] == k.CMD_RD][0, 0] >= acts[1] + TIMING.t_rcd * TCK
    assert d.counters()["activates"] == 4  # each bank's row, before the refresh and after it
    assert check_protocol(log, TIMING, 2) == len(log)
    end = d.last_completion_ps
    assert d.background_times_ps(end)["open"] == open_time_from_log(log, 2, end)


def test_through_the_command_queues_tied_banks_take_turns():
    # DRAMSim3's CommandQueue::GetCommandToIssue visits its per-bank queues round-robin from the one after the
    # queue it issued from last, whatever the age of their requests: row hits of banks 0 and 1, each of which the
    # data bus could take next, go to the banks in turn, bank 1's younger requests among them
    d = make(scheduler="ready_first", command_queue_depth=8, command_log_capacity=64)
    d.service_lines(np.array([line(1, 1), line(1, 0)]), False, 0)  # both banks hold row 1, bank 0 served last
    before = len(d.command_log())
    d.service_lines(np.array([line(1, 0, col) for col in range(1, 5)] + [line(1, 1, 1), line(1, 1, 2)]), False,
                    1_000_000)
    log = d.command_log()[before:]
    assert log[:, 1].tolist() == [k.CMD_RD] * 6
    assert log[:, 3].tolist() == [1, 0, 1, 0, 0, 0]
