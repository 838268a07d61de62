"""The threaded crypto offload trace (n threads, each driving its own core's unit): the parts
cover the buffer exactly once, each thread drives its own unit, and one thread is the serial trace."""

from __future__ import annotations

import json

import pytest

from simulator.config.algorithms import SHA256_DIGEST_BYTES
from workloads.aes import crypto_offload, thread_parts


def offloads(table):
    t = table.to_pydict()
    return [(thread, unit_params["unit"], unit_params) for thread, op, unit_params in
            zip(t["thread"], t["op"], (json.loads(p) if p else {} for p in t["params"])) if op == "offload"]


@pytest.mark.parametrize(("g_bytes", "threads"), [(1024, 2), (65536, 8), (1000, 3), (16 * 5, 4)])
def test_aes_parts_cover_the_buffer_once_in_whole_blocks(g_bytes, threads):
    parts = thread_parts("aes", g_bytes, threads)
    assert [off for off, _, _ in parts] == [sum(n for _, n, _ in parts[:t]) for t in range(threads)]
    assert sum(n for _, n, _ in parts) == g_bytes
    assert all(off % 16 == 0 and out == off for off, _, out in parts)
    rows = offloads(crypto_offload("aes", g_bytes, threads=threads, warmup=True))
    assert len(rows) == 2 * threads  # one request per thread and execution
    for thread, unit, params in rows:
        assert unit == f"crypto{thread}"
        off, n, _ = parts[thread]
        assert params["inputs"][0][1] == n and params["outputs"][0][1] == n
        assert params["outputs"][0][0] - params["inputs"][0][0] == rows[0][2]["outputs"][0][0] - rows[0][2]["inputs"][0][0]


def test_sha_threads_hash_independent_slices_into_their_own_digests():
    rows = offloads(crypto_offload("sha", 1000, threads=3))
    assert [p["inputs"][0][1] for _, _, p in rows] == [333, 333, 334]
    digests = [p["outputs"][0] for _, _, p in rows]
    assert [d[1] for d in digests] == [SHA256_DIGEST_BYTES] * 3
    assert [d[0] - digests[0][0] for d in digests] == [0, 32, 64]


def test_every_thread_waits_for_the_input_and_each_execution_ends_at_a_barrier():
    t = crypto_offload("aes", 4096, threads=4, warmup=True).to_pydict()
    barriers = [(stage, thread) for op, stage, thread in zip(t["op"], t["stage"], t["thread"]) if op == "barrier"]
    assert sorted(barriers) == sorted((s, th) for s in ("init", "warmup", "kernel") for th in range(4))
    # each thread's first row after thread 0's write of the input is the barrier of init: no offload comes before
    first = {th: (op, stage) for op, stage, th in reversed(list(zip(t["op"], t["stage"], t["thread"])))
             if op != "write"}
    assert first == {th: ("barrier", "init") for th in range(4)}
    waits = [(thread, stage) for op, stage, thread in zip(t["op"], t["stage"], t["thread"]) if op == "wait"]
    assert len(waits) == 8
    assert {th for op, th in zip(t["op"], t["thread"]) if op == "write"} == {0}  # thread 0 produces the input


def test_one_thread_is_the_serial_trace_and_bad_thread_counts_are_refused():
    table = crypto_offload("aes", 4096, warmup=True)
    assert table.equals(crypto_offload("aes", 4096, warmup=True, threads=1))
    assert "thread" not in table.column_names
    with pytest.raises(ValueError, match="threads"):
        crypto_offload("aes", 4096, threads=0)


def test_threads_beyond_the_blocks_offload_nothing_but_meet_at_the_barrier():
    t = crypto_offload("aes", 32, threads=3).to_pydict()  # two blocks for three threads
    assert sorted(th for op, th in zip(t["op"], t["thread"]) if op == "offload") == [0, 1]
    assert sorted(th for op, th in zip(t["op"], t["thread"]) if op == "barrier") == [0, 0, 1, 1, 2, 2]


def test_threaded_runs_need_a_system_with_a_unit_per_core():
    from dataclasses import replace

    from simulator.config.loader import PROJECT_ROOT
    from simulator.studies.logca import crypto as ls

    study = ls.load_crypto_study()
    assert study.threaded_counts == (1, 2, 4, 8)
    assert ls.threaded_system_problem(PROJECT_ROOT / study.threaded_system, 8) is None
    single = ls.threaded_system_problem(PROJECT_ROOT / "configs/systems/logca_ultrasparc_t2.yaml", 2)
    assert "1 cores" in single and "crypto0, crypto1" in single
    assert ls.threaded_system_problem(PROJECT_ROOT / study.threaded_system, 9).startswith("9 threads need 9 cores")
    far = ls.threaded_system_problem(PROJECT_ROOT / study.threaded_system, 10**9)  # named without listing 10^9 units
    assert far.endswith("the system has 8 cores and lacks crypto8, crypto9, crypto10, crypto11, ...")
    half = ls._threaded_problems(replace(study, threaded_system=""), "s.yaml")
    assert len(half) == 1 and half[0].startswith("s.yaml: threaded_counts: [1, 2, 4, 8]") and "neither" in half[0]
