"""Running a study's points longest first, and the wall time such a schedule takes on W workers.

A study's wall time is at least its longest chain of work: on many workers, a long point started
last finishes alone while the other workers idle. ``LongestFirst`` therefore keeps at most
``capacity`` tasks (one per worker) on an executor and starts, whenever a worker frees, the waiting
task of the highest priority (its estimated cost); a task that becomes ready late (a point that
needs the micro runs' results) is placed by its priority, not behind every task submitted before
it. Which worker runs a task does not change its result, so the order changes no output byte.

``list_schedule_s`` replays the same rule on measured task times (seconds): each task in order to
the worker free first; ``efficiency`` = sum of the task times / (workers x wall time).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Executor, Future, wait
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Task:
    """A task handed to ``LongestFirst``: its future once an executor runs it."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    future: Future | None = field(default=None, repr=False)

    def succeeded(self) -> bool:
        """Whether the task has run to its end without raising."""
        return self.future is not None and self.future.done() and not self.future.cancelled() \
            and self.future.exception() is None

    def result(self) -> Any:
        """The task's result (its exception raised); the task must have completed."""
        assert self.future is not None and self.future.done(), "a task's result is read once it has completed"
        return self.future.result()


class LongestFirst:
    """Runs tasks on ``executor``, at most ``capacity`` at a time (None: every task at once, in priority
    order), the waiting task of the highest priority first; equal priorities in submission order."""

    def __init__(self, executor: Executor, capacity: int | None):
        if capacity is not None and capacity < 1:
            raise ValueError(f"capacity must be a positive number of tasks, got {capacity!r}")
        self._executor = executor
        self._capacity = capacity
        self._waiting: list[tuple[Any, int, Task]] = []  # heap of (negated priority, submission number, task)
        self._order = itertools.count()
        self._running: dict[Future, Task] = {}

    def submit(self, priority: Sequence[float], fn: Callable[..., Any], *args: Any) -> Task:
        """Queue ``fn(*args)`` with ``priority`` (a tuple of numbers, compared in order; larger runs first)
        and start it at once if a worker is free."""
        task = Task(fn, args)
        heapq.heappush(self._waiting, (tuple(-p for p in priority), next(self._order), task))
        self._fill()
        return task

    def start_waiting(self) -> None:
        """Start waiting tasks on the free workers now, counting as free the workers of tasks that have finished
        but are not yet handed over. ``completed`` starts them as the caller takes each task, so that a task the
        caller submits on seeing one is placed by its priority; a caller about to be busy between two (a report
        to write) calls this first, so that no worker idles meanwhile."""
        self._fill(finished_free=True)

    def _fill(self, finished_free: bool = False) -> None:
        def busy() -> int:
            return sum(not f.done() for f in self._running) if finished_free else len(self._running)

        while self._waiting and (self._capacity is None or busy() < self._capacity):
            task = heapq.heappop(self._waiting)[2]
            task.future = self._executor.submit(task.fn, *task.args)
            self._running[task.future] = task

    def cancel(self) -> None:
        """Drop the waiting tasks and cancel the running ones (those not yet started by a worker)."""
        self._waiting.clear()
        for future in self._running:
            future.cancel()

    def drain(self, finish_running: bool) -> list[Task]:
        """After ``cancel``: the tasks that have completed (``finish_running``: once every running one has), in
        the order they were started; none is handed over twice."""
        if finish_running:
            wait(list(self._running), return_when=ALL_COMPLETED)
        finished = [(f, t) for f, t in self._running.items() if f.done() and not f.cancelled()]
        for future, _ in finished:
            del self._running[future]
        return [t for _, t in finished]

    def completed(self) -> Iterator[Task]:
        """Each task as it completes, until none is running or waiting; tasks submitted meanwhile (e.g.
        by the caller on seeing a task complete) are included."""
        while self._running or self._waiting:
            self._fill()
            done, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
            for future in [f for f in self._running if f in done]:  # in the order they were started
                yield self._running.pop(future)
            self._fill()


def list_schedule_s(durations_s: Iterable[float], workers: int) -> float:
    """Wall time (s) of running tasks of ``durations_s`` in the given order on ``workers`` workers, each
    task on the worker free first."""
    free_at = [0.0] * workers
    for d in durations_s:
        heapq.heapreplace(free_at, free_at[0] + d)
    return max(free_at)


def efficiency(durations_s: Sequence[float], workers: int) -> float:
    """Sum of the task times / (workers x the list schedule's wall time), in [0, 1]."""
    wall = list_schedule_s(durations_s, workers)
    return sum(durations_s) / (workers * wall) if wall > 0 else 1.0
