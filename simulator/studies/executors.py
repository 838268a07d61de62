"""Where a study's points run: a local process pool or a dask.distributed cluster.

Both give a ``concurrent.futures``-style executor (``submit(fn, *args)`` returning
futures with ``result()``), so a study runner is written once for both. With
dask, the function and its arguments are pickled by reference: every worker
needs offsim installed (the same version) and, for runners that pass config
paths rather than loaded configs, the project tree at the same path.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from simulator.errors import InputError

WORKER_CLOSE_TIMEOUT_S = 60.0  # how long a loopback Dask worker process may take to close, s
SCHEDULER_CONNECT_TIMEOUT_S = 10.0  # a scheduler that answers does so within a second; dask's default is 30 s


def import_dask() -> Any:
    """``dask.distributed``, or one clear InputError if the optional extra is not installed."""
    try:
        import dask.distributed as dd
    except ImportError:
        raise InputError("--scheduler/--dask-local: dask.distributed is not installed; "
                         "expected it installed, e.g. pip install 'offsim[dask]'") from None
    return dd


#: local worker processes a study may start per CPU of the machine (more only wait for a CPU, each with its memory)
LOCAL_WORKERS_PER_CPU = 4


def max_local_workers() -> int:
    """The most local worker processes (--workers, --dask-local) a study may start on this machine."""
    return LOCAL_WORKERS_PER_CPU * (os.cpu_count() or 1)


def check_parallel_options(workers: int | None, scheduler: str | None, dask_local: int | None) -> None:
    """Raise InputError unless at most one of workers/scheduler/dask_local is given (local processes
    or a Dask cluster: the other would be ignored), the counts are positive and, for Dask,
    dask.distributed is installed: before a runner writes anything."""
    if scheduler is not None and dask_local is not None:
        raise InputError("--scheduler/--dask-local: both given; expected at most one")
    if workers is not None and (scheduler is not None or dask_local is not None):
        other = "--scheduler" if scheduler is not None else "--dask-local"
        raise InputError(f"--workers: cannot be combined with {other} (Dask workers are the cluster's); "
                         "expected one of --workers, --scheduler or --dask-local")
    most = max_local_workers()
    for option, count in (("--workers", workers), ("--dask-local", dask_local)):
        if count is not None and not 1 <= count <= most:
            raise InputError(f"{option}: {count}; expected a number of processes from 1 to {most} "
                             f"({LOCAL_WORKERS_PER_CPU} per CPU of this machine: each point keeps one CPU busy)")
    if scheduler is not None or dask_local is not None:
        import_dask()


def exit_with_parent(parent_pid: int, interval_s: float = 0.2) -> None:
    """Pool-worker initializer: end this worker soon after the driver process is gone.

    A forked worker holds both ends of the pool's task pipe, so it would wait
    forever (holding a study's lock) if the driver were killed with SIGKILL.
    It ignores Ctrl-C, which a terminal sends to the whole process group: the
    driver alone handles it, and ends its workers.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval_s)
        os._exit(1)

    threading.Thread(target=watch, name="offsim-parent-watch", daemon=True).start()


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Cancel ``pool``'s queued tasks and kill its workers (a point they were writing is a hidden
    temporary folder, removed by the next run)."""
    processes = list(getattr(pool, "_processes", None) or {})  # the pool's only handle on its workers
    pool.shutdown(wait=False, cancel_futures=True)
    for pid in processes:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def connect_scheduler(dd: Any, scheduler: str) -> Any:
    """A ``dd.Client`` of the scheduler at address ``scheduler``; one InputError naming the option if
    the address is malformed or nothing answers within SCHEDULER_CONNECT_TIMEOUT_S."""
    try:
        return dd.Client(scheduler, timeout=SCHEDULER_CONNECT_TIMEOUT_S)
    except (OSError, ValueError) as exc:  # dask: ValueError for a bad address, OSError for a timeout
        reason = str(exc) or type(exc).__name__
    gc.collect()  # the half-made Client now: collected later, its __del__ can time out and print a traceback
    raise InputError(f"--scheduler {scheduler}: cannot connect ({reason}); expected the address of a running "
                     "dask.distributed scheduler, e.g. tcp://host:8786")


def tasks_per_worker(workers: int | None, scheduler: str | None, dask_local: int | None) -> int | None:
    """How many tasks ``point_executor`` with these options runs at once: its worker processes, or None
    for a scheduler's cluster, whose workers are not known before it is asked."""
    if scheduler is not None:
        return None
    return dask_local or workers or os.cpu_count() or 1


@contextmanager
def point_executor(workers: int | None = None, scheduler: str | None = None,
                   dask_local: int | None = None) -> Iterator[Executor]:
    """An executor for independent points, shut down on exit.

    workers: local processes (default os.cpu_count()); scheduler: a dask.distributed
    scheduler address (e.g. ``tcp://host:8786``), connected on entry (InputError if it cannot be);
    dask_local: a loopback Dask cluster of that many single-threaded worker processes.
    """
    check_parallel_options(workers, scheduler, dask_local)
    if scheduler is None and dask_local is None:
        with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, initializer=exit_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            try:
                yield pool
            except KeyboardInterrupt:  # Ctrl-C: end the workers now rather than wait for their points
                _terminate(pool)
                raise
        return
    dd = import_dask()
    cluster = None
    if scheduler is None:
        with _ctrl_c_ignored():  # by the worker processes started now: the driver alone handles it
            cluster = dd.LocalCluster(n_workers=dask_local, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", dashboard_address=None)
    client = dd.Client(cluster) if cluster is not None else connect_scheduler(dd, scheduler)
    interrupted = False
    try:
        with client.get_executor(pure=False) as pool:
            yield pool
    except KeyboardInterrupt:  # Ctrl-C: end the local workers now rather than have them cancel their tasks
        interrupted = True
        if cluster is not None:
            _silence_dask_logs()  # the killed workers' closed connections are expected, not news
            cluster.sync(_kill_workers, cluster)
        raise
    finally:
        if cluster is not None and not interrupted:
            # a heartbeat a worker sends while it or the scheduler closes fails, logged as an ERROR with a traceback;
            # best effort: a failure here must not hide the run's own error or skip the closes below
            with contextlib.suppress(Exception):
                client.run(_stop_heartbeat, on_error="ignore")
        client.close()
        if cluster is not None:
            cluster.close() if interrupted else close_local_cluster(cluster)


def _stop_heartbeat(dask_worker: Any) -> None:
    """Stop a Dask worker's periodic heartbeat to the scheduler (run on each loopback worker before it closes)."""
    callback = dask_worker.periodic_callbacks.get("heartbeat")
    if callback is not None:
        callback.stop()


@contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """Ignore SIGINT in this process (from the main thread) while processes are started: a started
    Python process keeps an ignored SIGINT ignored, so a terminal's Ctrl-C reaches the driver only."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _silence_dask_logs() -> None:
    """Disable every ``distributed`` logger of this process (the driver): after Ctrl-C its scheduler reports
    each killed worker's connection as closed, with a traceback, at INFO level."""
    import logging

    for name in ["distributed", *logging.root.manager.loggerDict]:
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).disabled = True


async def _kill_workers(cluster: Any) -> None:
    """Kill the worker processes of loopback Dask ``cluster``, their nannies told not to restart them."""
    nannies = list(cluster.workers.values())
    for nanny in nannies:
        nanny.close_gracefully("interrupted")
    for nanny in nannies:
        if nanny.pid:
            try:
                os.kill(nanny.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def close_local_cluster(cluster: Any) -> None:
    """Shut a loopback Dask cluster down quietly: each worker process is asked to close and waited for up to
    WORKER_CLOSE_TIMEOUT_S before the scheduler closes. Dask's own close gives a worker 4 s and then kills it
    with a warning, and a worker still alive when the scheduler has gone logs a failed heartbeat; a worker
    that has imported offsim can take longer than that to exit on a busy machine."""
    import asyncio

    async def close_workers() -> None:
        await asyncio.gather(*(w.close(timeout=WORKER_CLOSE_TIMEOUT_S) for w in list(cluster.workers.values())))

    cluster.sync(close_workers)
    cluster.close()
