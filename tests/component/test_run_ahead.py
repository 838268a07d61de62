"""Runs of rows served in one call ahead of the SimPy clock (``HostCore.run_memory_rows``) change no number:
each run equals the same run with one row at a time (``Environment.peek`` made to report an event at the
current time, so that no run of rows ever forms), on one thread, on threads that meet at barriers, beside an
accelerator, with the caches' prefetcher on, and for rows of dependent loads longer than a chunk between
independent rows (the last two are served row by row either way)."""

from __future__ import annotations

import pytest
import simpy

from simulator.runner import load_system, simulate_trace
from tests.conftest import ROOT
from simulator.host.core import CHUNK_LINES
from workloads.fmm_ulist import fmm_ulist
from workloads.micro import pointer_chase
from workloads.trace import TraceBuilder


def chase_between_streams():
    """A stream, a row of dependent loads three chunks long, and a stream again."""
    tb = TraceBuilder()
    tb.access("host", "before", "read", 1 << 24, 8, 8, 4 * CHUNK_LINES * 8)
    chase = pointer_chase(3 * CHUNK_LINES, 4 << 20, row_elems=3 * CHUNK_LINES).to_pylist()[0]
    # flops enough that each chunk computes longer than its loads take
    tb.gather("host", "chase", "read", chase["addrs"], chase["elem_bytes"], flops=10**9, dependent=True)
    tb.access("host", "after", "write", 1 << 24, 8, 8, 4 * CHUNK_LINES * 8)
    return tb.to_table()


# (system, overrides, FMM U-list parameters or None for ``chase_between_streams``, whether rows run together)
CASES = [
    ("lap_dram.yaml", (), {"variant": "orig", "placement": "lap"}, True),
    ("lap_llc.yaml", ("host.cores=2",), {"variant": "pipelining", "placement": "lap", "threads": 2}, True),
    ("i7_920_ddr3.yaml", ("host.cores=3",), {"variant": "orig", "placement": "cpu", "threads": 3}, True),
    ("i7_920_ddr3.yaml", ("caches.prefetcher.enabled=true",), {"variant": "orig", "placement": "cpu"}, False),
    ("i7_920_ddr3.yaml", (), None, False),
]


@pytest.mark.parametrize("system, overrides, params, batched", CASES)
def test_runs_of_rows_change_no_number(monkeypatch, system, overrides, params, batched):
    trace = chase_between_streams() if params is None else fmm_ulist(2, 20_000, "table2", **params)
    loaded = load_system(ROOT / "configs" / "systems" / system, overrides)
    timeouts = []
    timeout = simpy.Environment.timeout
    monkeypatch.setattr(simpy.Environment, "timeout", lambda env, *a, **k: timeouts.append(1) or timeout(env, *a, **k))
    ahead = simulate_trace(loaded, trace)
    n_ahead = len(timeouts)
    monkeypatch.setattr(simpy.Environment, "peek", lambda env: env.now)
    step_by_step = simulate_trace(loaded, trace)
    assert ahead.rows == step_by_step.rows
    if batched:  # the rows did run together: fewer timeouts than one a row
        assert n_ahead < len(timeouts) - n_ahead
