"""Ready-first controller: the request whose column can issue earliest goes first, by hand; the
write buffer is drained when full or when no read waits; it serves random reads faster than the
block-sorting first-ready controller. (Its command logs are checked against the DDR3 rules with
the other controllers in test_dram.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from tests.component.test_dram import TCK, line, make


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
