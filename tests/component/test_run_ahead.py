"""The host core running ahead of the SimPy clock (``simulator.host.core``) changes no number: each run equals
the same run with one timeout per chunk (``Environment.peek`` made to report an event at the current time, so
that no core ever runs ahead), on one thread, on threads that meet at barriers, beside an accelerator, with
the caches' prefetcher on, and for rows of dependent loads longer than a chunk between independent rows."""

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
    # flops enough that each chunk computes longer than its loads take: the core runs ahead after each chunk
    tb.gather("host", "chase", "read", chase["addrs"], chase["elem_bytes"], flops=10**9, dependent=True)
    tb.access("host", "after", "write", 1 << 24, 8, 8, 4 * CHUNK_LINES * 8)
    return tb.to_table()


CASES = [
    ("lap_dram.yaml", (), {"variant": "orig", "placement": "lap"}),
    ("lap_llc.yaml", ("host.cores=2",), {"variant": "pipelining", "placement": "lap", "threads": 2}),
    ("i7_920_ddr3.yaml", ("host.cores=3",), {"variant": "orig", "placement": "cpu", "threads": 3}),
    ("i7_920_ddr3.yaml", ("caches.prefetcher.enabled=true",), {"variant": "orig", "placement": "cpu"}),
    ("i7_920_ddr3.yaml", (), None),
]


@pytest.mark.parametrize("system, overrides, params", CASES)
def test_running_ahead_changes_no_number(monkeypatch, system, overrides, params):
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
    assert n_ahead < len(timeouts) - n_ahead  # the core did run ahead
