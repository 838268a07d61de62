"""Runs of memory rows in one compiled call (``HostCore.run_memory_rows``, ``chunk_kernel.serve_rows``) give
every number that rows run one by one give: beside an accelerator's commands, at both couplings, on the CPU
alone, and on a multi-core host whose threads meet at barriers."""

from __future__ import annotations

import pytest

import simulator
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.host.core import HostCore
from simulator.memory import chunk_kernel
from simulator.runner import simulate_trace
from tests.conftest import CONFIGS, DEFAULT_SYSTEM
from workloads.trace import TraceBuilder

MiB = 1 << 20


def one_by_one(monkeypatch) -> None:
    """Make ``run_memory_rows`` refuse every row: the replay then runs each row alone."""
    def refuse(self, env, rows, first, *args):
        return first
        yield  # a generator, as the method is

    monkeypatch.setattr(HostCore, "run_memory_rows", refuse)


def counted(monkeypatch) -> dict[str, int]:
    """Count ``serve_rows``'s calls and the rows they ran."""
    tally = {"calls": 0, "rows": 0}
    serve = chunk_kernel.serve_rows

    def counting(*args):
        serve(*args)
        out = args[-1]
        tally["calls"] += 1
        tally["rows"] += int(out[chunk_kernel.O_NEXT]) - args[2]

    monkeypatch.setattr(chunk_kernel, "serve_rows", counting)
    return tally


def fmm(system: str, variant: str, placement: str):
    loaded = load_spec(CONFIGS / "systems" / system, SystemSpec, ())
    workload = {"generator": "fmm_ulist",
                "params": {"q": 4, "n_points": 12000, "density": "table2", "variant": variant,
                           "placement": placement}}
    return lambda: simulator.run(loaded, workload)


def threads():
    """Thread 0 runs short rows while thread 1 computes; after a barrier, which resumes both at one time,
    both read from DRAM."""
    b = TraceBuilder()
    b.compute("host", "work", flops=10**7, thread=1)
    for t in range(2):
        base = t * 16 * MiB
        b.access("host", "read", "read", base, 8, 8, 4096, flops=100, thread=t)
        for k in range(40 if t == 0 else 2):  # short rows: many to a run
            b.access("host", "rows", "read", base + k * 4096, 8, 64, 60, flops=10 * k, thread=t)
        for k in range(4):  # stores: one by one, as they invalidate the other core's copies
            b.access("host", "rows", "update", base + MiB + k * 4096, 8, 64, 20, thread=t)
        b.barrier(thread=t)
        for k in range(10):
            b.access("host", "after", "read", base + 8 * MiB + k * 4096, 8, 8, 100, thread=t)
    loaded = load_spec(DEFAULT_SYSTEM, SystemSpec, ["host.cores=2"])
    table = b.to_table()
    return lambda: simulate_trace(loaded, table)


CASES = {
    "lap_dram_pipelining": fmm("lap_dram.yaml", "pipelining", "lap"),
    "lap_llc_orig": fmm("lap_llc.yaml", "orig", "lap"),
    "cpu_orig": fmm("i7_920_ddr3.yaml", "orig", "cpu"),
    "two_threads": threads(),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_runs_of_rows_give_the_numbers_of_rows_one_by_one(case, monkeypatch) -> None:
    tally = counted(monkeypatch)
    together = CASES[case]()
    assert tally["rows"] > 2 * tally["calls"] > 0  # the rows did run several to a call
    monkeypatch.undo()
    one_by_one(monkeypatch)
    alone = CASES[case]()
    assert together.rows == alone.rows
