"""The host core running ahead of the SimPy clock (``simulator.host.core``) changes no number: each run equals
the same run with one timeout per chunk (``Environment.peek`` made to report an event at the current time, so
that no core ever runs ahead), on one thread, on threads that meet at barriers, beside an accelerator, and with
the caches' prefetcher on."""

from __future__ import annotations

import pytest
import simpy

from simulator.runner import load_system, simulate_trace
from tests.conftest import ROOT
from workloads.fmm_ulist import fmm_ulist

CASES = [
    ("lap_dram.yaml", (), {"variant": "orig", "placement": "lap"}),
    ("lap_llc.yaml", ("host.cores=2",), {"variant": "pipelining", "placement": "lap", "threads": 2}),
    ("i7_920_ddr3.yaml", ("host.cores=3",), {"variant": "orig", "placement": "cpu", "threads": 3}),
    ("i7_920_ddr3.yaml", ("caches.prefetcher.enabled=true",), {"variant": "orig", "placement": "cpu"}),
]


@pytest.mark.parametrize("system, overrides, params", CASES)
def test_running_ahead_changes_no_number(monkeypatch, system, overrides, params):
    trace = fmm_ulist(2, 20_000, "table2", **params)
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
