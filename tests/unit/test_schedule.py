"""The longest-first runner and the list schedule of measured task times."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait

import pytest

from simulator.studies.schedule import LongestFirst, efficiency, list_schedule_s


def test_list_schedule_on_hand_computable_cases():
    assert list_schedule_s([3, 3, 2, 2, 2], workers=2) == 7  # 3+2+2 | 3+2
    assert list_schedule_s([1, 1, 1, 1, 4], workers=2) == 6  # the long one last: 1+1+4 | 1+1
    assert list_schedule_s([4, 1, 1, 1, 1], workers=2) == 4  # first: 4 | 1+1+1+1
    assert list_schedule_s([5, 1], workers=4) == 5
    assert efficiency([3, 3, 2, 2, 2], workers=2) == pytest.approx(12 / 14)
    assert efficiency([4, 4, 4, 4], workers=4) == 1.0


def test_waiting_tasks_start_by_priority_and_late_ones_jump_the_queue():
    started = []
    gate = threading.Event()

    def job(name):
        if name == "first":
            gate.wait(5)
        started.append(name)
        return name

    with ThreadPoolExecutor(max_workers=1) as pool:
        queue = LongestFirst(pool, capacity=1)
        first = queue.submit((9,), job, "first")  # occupies the only worker
        for name, size in (("small", 1), ("big", 5), ("mid", 3), ("mid-again", 3)):
            queue.submit((size,), job, name)
        seen = []
        for task in queue.completed():
            seen.append(task.result())
            if task is first:
                queue.submit((4,), job, "late")  # ready now: ahead of every smaller waiting task
            gate.set()
        gate.set()
    assert started == ["first", "big", "late", "mid", "mid-again", "small"]
    assert seen == started


def test_a_late_task_is_placed_by_its_priority_when_several_tasks_finish_at_once():
    started = []

    class Recording(ThreadPoolExecutor):
        def submit(self, fn, *args):
            started.append(args[0])
            return super().submit(fn, *args)

    with Recording(max_workers=2) as pool:
        queue = LongestFirst(pool, capacity=2)
        a, b = queue.submit((5,), str, "a"), queue.submit((4,), str, "b")
        queue.submit((1,), str, "low")
        wait([a.future, b.future])  # both finish before the caller looks
        for task in queue.completed():
            if task is a:
                queue.submit((2,), str, "after-a")
            if task is b:
                queue.submit((10,), str, "late-big")  # takes the worker b freed, ahead of the waiting "low"
    assert started == ["a", "b", "after-a", "late-big", "low"]


def test_a_task_error_is_raised_by_its_result():
    with ThreadPoolExecutor(max_workers=2) as pool:
        queue = LongestFirst(pool, capacity=None)
        bad = queue.submit((1,), lambda: 1 / 0)
        assert [t for t in queue.completed()] == [bad]
    with pytest.raises(ZeroDivisionError):
        bad.result()


def test_start_waiting_hands_a_freed_worker_its_next_task_before_the_caller_moves_on():
    with ThreadPoolExecutor(max_workers=1) as pool:
        queue = LongestFirst(pool, capacity=1)
        first = queue.submit((2,), lambda: "first")
        second = queue.submit((1,), lambda: "second")
        seen = []
        for task in queue.completed():
            if task is first:
                assert second.future is None  # the caller holds the freed worker until it asks for more
                queue.start_waiting()
                assert second.future is not None  # e.g. before a report it is about to write
            seen.append(task.result())
    assert seen == ["first", "second"]


def test_start_waiting_fills_every_worker_freed_in_one_batch():
    with ThreadPoolExecutor(max_workers=2) as pool:
        queue = LongestFirst(pool, capacity=2)
        first, second = queue.submit((4,), lambda: "a"), queue.submit((3,), lambda: "b")
        third, fourth = queue.submit((2,), lambda: "c"), queue.submit((1,), lambda: "d")
        wait([first.future, second.future])  # both workers free before the caller looks
        seen = []
        for task in queue.completed():
            if task is first:
                queue.start_waiting()
                assert third.future is not None and fourth.future is not None
            seen.append(task.result())
    assert sorted(seen) == ["a", "b", "c", "d"]
