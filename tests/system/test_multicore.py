"""Multi-core hosts: threads on cores, barriers and joins, private and shared caches, coherence."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec, dram_timing
from simulator.replay import replay
from simulator.runner import simulate_trace
from simulator.system import build_system
from tests.conftest import DEFAULT_SYSTEM, ROOT
from workloads.trace import TraceBuilder, write_trace

LINE = 64
MiB = 1 << 20


def system(cores: int, *overrides: str):
    return load_spec(DEFAULT_SYSTEM, SystemSpec, [f"host.cores={cores}", *overrides])


def values(results) -> dict[tuple[str, str], float]:
    return {(c, q): v for c, q, v, _ in results.rows}


def private_rows(builder: TraceBuilder, thread: int, base: int) -> None:
    """Reads, writes, updates and a zeroed region of thread ``thread``'s own 1.5 MiB from byte ``base``."""
    b = builder
    b.access("host", "read", "read", base, 8, 8, 96 * 1024, flops=1000, thread=thread)
    b.access("host", "write", "write", base + MiB, 8, 16, 16 * 1024, thread=thread)
    b.access("host", "update", "update", base, 8, 8, 32 * 1024, thread=thread)
    b.region("host", "zero", "zero", base + MiB + 256 * 1024, 64 * 1024, thread=thread)
    b.gather("host", "chase", "read", base + np.arange(0, 512 * 1024, 4096), 8, dependent=True, thread=thread)


# --------------------------------------------------------------------------- (b) sharing nothing


@pytest.mark.parametrize("prefetch", [False, True])
def test_threads_sharing_nothing_have_the_private_counters_of_single_core_runs(prefetch) -> None:
    extra = ["caches.prefetcher.enabled=true"] if prefetch else []
    n = 3
    together = TraceBuilder()
    for t in range(n):
        private_rows(together, t, t * 64 * MiB)
    multi = values(simulate_trace(system(n, *extra), together.to_table()))
    for t in range(n):
        alone = TraceBuilder()
        private_rows(alone, 0, t * 64 * MiB)
        single = values(simulate_trace(system(1, *extra), alone.to_table()))
        for level in ("L1D", "L2"):
            for key in ("loads", "stores", "hits", "misses", "writebacks_out", "fills", "evictions", "prefetches",
                        "allocations"):
                assert multi[(f"cache/{level}/core{t}", key)] == single[(f"cache/{level}", key)], (level, key)
            assert multi[(f"cache/{level}/core{t}", "snooped_invalidations")] == 0
            assert multi[(f"core{t}", f"bytes_served_by_{level}")] == single[("host", f"bytes_served_by_{level}")]
        assert multi[(f"core{t}", "flops")] == single[("host", "flops")]
    # the shared LLC and DRAM serve every core: its totals are the sum of what the cores asked of it
    llc_accesses = sum(multi[(f"cache/L2/core{t}", "misses")] + multi[(f"cache/L2/core{t}", "writebacks_out")]
                       for t in range(n))
    assert multi[("cache/LLC", "loads")] + multi[("cache/LLC", "stores")] + multi[("cache/LLC", "writebacks_in")] \
        == llc_accesses


def test_cores_contend_for_dram() -> None:
    """One core streams at some 6.4 GB/s, bound by its miss buffers; the channel peaks at 12.8 GB/s. Two
    streams of their own arrays fit beside each other, four do not: they take more than twice as long."""
    def stream(n_threads: int) -> float:
        b = TraceBuilder()
        for t in range(n_threads):
            b.access("host", "s", "read", t * 64 * MiB, 8, 8, MiB, thread=t)
        return values(simulate_trace(system(4), b.to_table()))[("system", "simulated_time_s")]

    one, two, four = stream(1), stream(2), stream(4)
    assert 8 * MiB / one == pytest.approx(6.4e9, rel=0.05)
    assert two == pytest.approx(one, rel=0.05)
    assert 4 * 8 * MiB / four == pytest.approx(12.8e9, rel=0.15) and four > 1.8 * one


@pytest.mark.parametrize("entries", [4, 8])
def test_a_shared_read_queue_bounds_the_cores_by_littles_law(entries) -> None:
    """Four streams (together 40 miss buffers) through ``entries`` shared read entries: an entry is
    held at least the path latency plus a row hit's CL + burst, so the cores read at most entries x
    64 B over that time; row misses and refresh keep them a little under it."""
    spec = system(4, f"host.uncore_read_entries={entries}")
    b = TraceBuilder()
    for t in range(4):
        b.access("host", "s", "read", t * 64 * MiB, 8, 8, MiB, thread=t)
    time_s = values(simulate_trace(spec, b.to_table()))[("system", "simulated_time_s")]
    timing = dram_timing(spec.spec.dram)
    held_s = spec.spec.host.memory_path_latency_s + (timing.cl + timing.burst_length // 2) * timing.tck_ps * 1e-12
    bound_bytes_per_s = entries * LINE / held_s
    assert 0.85 * bound_bytes_per_s <= 4 * 8 * MiB / time_s <= bound_bytes_per_s


def test_a_read_queue_with_the_ready_first_scheduler_exits_2(tmp_path) -> None:
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "show", str(DEFAULT_SYSTEM), "--set",
                           "host.uncore_read_entries=32", "--set", "dram.geometry.scheduler=ready_first"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "host.uncore_read_entries: set with dram.geometry.scheduler ready_first" in done.stderr


# --------------------------------------------------------------------------- (c) barriers and joins


def _compute_only(builder_rows) -> tuple[dict, object]:
    b = TraceBuilder()
    builder_rows(b)
    spec = system(3)
    sim = build_system(spec.spec)
    end_ps = replay(sim, b.to_table())
    return end_ps, sim


def test_a_barrier_holds_each_thread_until_the_slowest_arrives() -> None:
    def rows(b):
        b.compute("host", "a", cycles=1000, thread=0)
        b.compute("host", "a", cycles=3000, thread=1)
        b.compute("host", "a", cycles=2000, thread=2)
        for t in range(3):
            b.barrier(thread=t)
        b.compute("host", "b", cycles=500, thread=0)

    end_ps, sim = _compute_only(rows)
    ps = sim.host_clock.cycles_to_ps
    assert end_ps == ps(3000) + ps(500)
    assert [c.sync_wait_ps for c in sim.cores] == [ps(3000) - ps(1000), 0, ps(3000) - ps(2000)]


def test_a_join_waits_for_the_named_threads_to_end() -> None:
    def rows(b):
        b.compute("host", "a", cycles=1000, thread=0)
        b.compute("host", "a", cycles=4000, thread=1)
        b.compute("host", "a", cycles=2500, thread=2)
        b.join([1, 2], thread=0)
        b.compute("host", "b", cycles=100, thread=0)

    end_ps, sim = _compute_only(rows)
    ps = sim.host_clock.cycles_to_ps
    assert end_ps == ps(4000) + ps(100)
    assert sim.cores[0].sync_wait_ps == ps(4000) - ps(1000)


@pytest.mark.parametrize("later_command", [False, True])
def test_a_wait_waits_for_the_commands_handed_over_so_far_not_for_later_ones(later_command) -> None:
    """Thread 0 hands a 16 KiB request to crypto unit 0 and waits; thread 1 hands it a 256 KiB one 1.7 us later:
    thread 0's wait ends when its own request does, whether or not thread 1's follows."""
    b = TraceBuilder()
    b.offload("host", "k0", "crypto0", op="aes128", inputs=[[0, 16384]], outputs=[[MiB, 16384]], thread=0)
    b.wait("host", "k0", "crypto0", thread=0)
    b.compute("host", "pre1", flops=2000, thread=1)
    if later_command:
        b.offload("host", "k1", "crypto0", op="aes128", inputs=[[2 * MiB, 262144]], outputs=[[4 * MiB, 262144]],
                  thread=1)
        b.wait("host", "k1", "crypto0", thread=1)
    loaded = load_spec(ROOT / "configs/systems/ultrasparc_t2_8core.yaml", SystemSpec)
    got = values(simulate_trace(loaded, b.to_table()))
    alone = values(simulate_trace(loaded, _without_thread_1(b)))
    assert got[("stage/host/k0", "end_s")] == alone[("stage/host/k0", "end_s")]
    if later_command:
        assert got[("stage/host/k1", "start_s")] < got[("stage/host/k0", "end_s")] < got[("stage/host/k1", "end_s")]


def _without_thread_1(builder: TraceBuilder):
    """``builder``'s table without the rows of thread 1."""
    import pyarrow.compute as pc

    table = builder.to_table()
    return table.filter(pc.not_equal(table["thread"], 1))


def test_each_wait_cleans_up_after_the_commands_it_waited_for() -> None:
    """On a PCIe card (its driver invalidates the host copies of a command's outputs after it): thread 0 hands
    over 16 KiB and waits at once; thread 1 hands over 64 KiB once thread 0 waits, then waits: each wait
    invalidates the lines of its own command's output (256 and 1024 lines), not the other's."""
    b = TraceBuilder()
    b.offload("host", "k0", "crypto", op="aes128", inputs=[[0, 16384]], outputs=[[MiB, 16384]], thread=0)
    b.wait("host", "w0", "crypto", thread=0)
    b.compute("host", "pre1", flops=4000, thread=1)
    b.offload("host", "k1", "crypto", op="aes128", inputs=[[2 * MiB, 65536]], outputs=[[4 * MiB, 65536]], thread=1)
    b.wait("host", "w1", "crypto", thread=1)
    loaded = load_spec(ROOT / "configs/systems/logca_hifn_7955.yaml", SystemSpec, ["host.cores=2"])
    got = values(simulate_trace(loaded, b.to_table()))
    assert got[("stage/host/k1", "start_s")] < got[("stage/host/w0", "end_s")]  # handed over while thread 0 waits
    assert got[("stage/host/w0", "lines")] == 16384 // LINE
    assert got[("stage/host/w1", "lines")] == 65536 // LINE


# --------------------------------------------------------------------------- coherence


def test_a_line_written_by_two_cores_is_invalidated_once_and_written_back() -> None:
    """Core 0 writes line x (dirty in its L1D, clean in its L2 and the LLC); after a barrier core 1 writes it:
    core 0's two copies are probed and invalidated, its dirty L1D copy goes into the LLC, and core 1 finds
    the line there. Core 0 then reads it back from the LLC (loads do not snoop: core 1 keeps its copy)."""
    b = TraceBuilder()
    b.access("host", "w0", "write", 4096, 8, 8, 1, thread=0)
    b.barrier(thread=0)
    b.barrier(thread=1)
    b.access("host", "w1", "write", 4096, 8, 8, 1, thread=1)
    b.barrier(thread=0)
    b.barrier(thread=1)
    b.access("host", "r0", "read", 4096, 8, 8, 1, thread=0)
    r = values(simulate_trace(system(2), b.to_table()))
    assert r[("cache/L1D/core0", "snooped_probes")] == 1 and r[("cache/L1D/core0", "snooped_invalidations")] == 1
    assert r[("cache/L2/core0", "snooped_probes")] == 1 and r[("cache/L2/core0", "snooped_invalidations")] == 1
    assert r[("cache/L1D/core0", "snooped_writebacks_out")] == 1
    assert r[("cache/L2/core0", "snooped_writebacks_out")] == 0
    assert r[("cache/L1D/core1", "snooped_invalidations")] == 0  # core 0's read did not snoop
    assert r[("cache/LLC", "writebacks_in")] == 1
    assert r[("core1", "bytes_served_by_LLC")] == 8 and r[("core0", "bytes_served_by_LLC")] == 8
    assert r[("core0", "bytes_served_by_DRAM")] == 8 and r[("dram", "reads")] == 1
    # the probes are priced as the host's probes: L1D line_energy_j each
    assert r[("actions/L1D/host", "probes")] == 1 and r[("actions/L2/host", "probes")] == 1


def _llc_set_full_of_dirty_lines():
    """Two cores, each with a 2-way L1 of 4 sets over one 4-way LLC of 4 sets (lines 4k share set 0 of both):
    core 1 holds line 24 dirty in its L1; core 0 has filled LLC set 0 with dirty lines 16, 20, 28 and 32."""
    from simulator.memory.cache import CacheGeometry
    from simulator.memory.core_caches import CoreCaches

    caches = CoreCaches([CacheGeometry("L1", 512, 2, 64), CacheGeometry("LLC", 1024, 4, 64)], [False, True], 2)
    caches.views[1].access(np.array([24]), True)
    caches.views[0].access(np.array([0, 4, 8, 12, 16, 20, 28, 32]), True)
    caches.views[0].evict_to_llc(np.array([28, 32]))
    assert all(caches.cores[0].is_dirty(x) == [False, True] for x in (16, 20, 28, 32))  # dirty in the LLC
    assert caches.cores[1].is_dirty(24) == [True, False]  # dirty in core 1's L1 only
    return caches


@pytest.mark.parametrize("core", [0, 1])
def test_a_flush_or_invalidate_of_a_line_another_core_holds_dirty_pushes_nothing_out(core) -> None:
    """Whichever core flushes line 24, its one dirty copy goes to DRAM once and the LLC keeps its four lines;
    an invalidate discards it (no DRAM write), as on a single core. Written into the LLC first, the other
    core's copy would evict dirty line 16 on its way (a DRAM write of a line nobody flushed)."""
    caches = _llc_set_full_of_dirty_lines()
    flushed = caches.views[core].flush(np.array([24]))
    assert flushed.dram_writes.tolist() == [24]
    assert all(caches.cores[0].is_dirty(x) == [False, True] for x in (16, 20, 28, 32))
    assert caches.cores[1].is_dirty(24) == [False, False] and caches.resident_lines()["LLC"] == 4
    caches = _llc_set_full_of_dirty_lines()  # the LLC holding a clean copy: the dirty one is merged into it
    caches.views[0].access(np.array([24]), False)  # a load does not snoop: core 1 keeps its dirty copy
    merged = caches.views[core].flush(np.array([24]))
    assert merged.dram_writes.tolist() == [24] and caches.cores[1].is_dirty(24) == [False, False]
    caches = _llc_set_full_of_dirty_lines()
    dropped = caches.views[core].invalidate(np.array([24]))
    assert dropped.dram_writes.tolist() == [] and caches.resident_lines() == {"L1": 0, "LLC": 4}
    assert dropped.snooped == (1 if core == 0 else 0)


def test_the_storing_core_pays_the_llc_latency_per_line_it_invalidates() -> None:
    """The same dependent write of one line, once to a line another core holds and once to a line no one
    holds: the difference is the LLC's hit latency (38 cycles at 2 GHz), nothing else differs."""
    def second_write_ps(shared: bool) -> int:
        b = TraceBuilder()
        b.access("host", "w0", "write", 4096, 8, 8, 1, thread=0)
        b.access("host", "w0", "write", 8192, 8, 8, 1, thread=1)
        if not shared:  # core 1's copy goes into the LLC: core 0 finds it there as it does in the other case
            b.access("host", "w0", "evict_llc", 8192, 8, 8, 1, thread=1)
        b.barrier(thread=0)
        b.barrier(thread=1)
        b.access("host", "w1", "write", 8192, 8, 8, 1, dependent=True, thread=0)
        sim = build_system(system(2).spec)
        replay(sim, b.to_table())
        return sim.cores[0].stages["w1"].busy_ps

    assert second_write_ps(True) - second_write_ps(False) == 38 * 500


@pytest.mark.parametrize("op", ["flush", "evict_llc", "invalidate"])
@pytest.mark.parametrize("written", [True, False])
def test_maintenance_pays_the_llc_latency_per_line_it_removes_from_another_core(op, written) -> None:
    """Core 0's flush, evict or invalidate of 64 lines core 1 wrote (or read), once while core 1 holds them and
    once after core 1 moved them into the LLC itself: the first pays, per line it removes from core 1, the LLC's
    hit latency (38 cycles at 2 GHz) over the misses in flight, on top of the lookups and DRAM writes, as a
    store's invalidations do; everything else is the same in both (a flush writes the dirty lines to DRAM once,
    from core 1's copies or from the LLC)."""
    n = 64

    def maintenance_ps(held: bool) -> tuple[int, int]:
        b = TraceBuilder()
        b.access("host", "w", "write" if written else "read", 0, 8, 8, n * 8, thread=1)
        if not held:
            b.access("host", "w", "evict_llc", 0, 8, 8, n * 8, thread=1)
        b.barrier(thread=0)
        b.barrier(thread=1)
        b.access("host", "m", op, 0, 8, 8, n * 8, thread=0)
        sim = build_system(system(2).spec)
        replay(sim, b.to_table())
        return sim.cores[0].stages["m"].busy_ps, sim.cores[0].max_outstanding_misses

    held_ps, outstanding = maintenance_ps(True)
    apart_ps, _ = maintenance_ps(False)
    assert held_ps - apart_ps == pytest.approx(n * 38 / outstanding * 500, abs=1)


# --------------------------------------------------------------------------- single-core and bad input


def test_a_single_core_system_hashes_as_before_and_a_multicore_one_differently() -> None:
    one = load_spec(DEFAULT_SYSTEM, SystemSpec, [])
    assert system(1).content_hash == one.content_hash
    assert system(2).content_hash != one.content_hash
    assert load_spec(DEFAULT_SYSTEM, SystemSpec, ["caches.levels.LLC.shared=true"]).content_hash != one.content_hash


def test_a_shared_level_above_a_private_one_is_refused() -> None:
    from simulator.errors import ConfigError
    with pytest.raises(ConfigError, match=r"caches\.levels\.L2\.shared: true in L2, above the private LLC"):
        system(2, "caches.levels.L2.shared=true", "caches.levels.LLC.shared=false")


def test_a_multicore_host_without_a_shared_level_is_refused() -> None:
    from simulator.errors import ConfigError
    with pytest.raises(ConfigError, match=r"caches\.levels\.LLC\.shared: false with host\.cores 2: no level is "
                                          "shared; expected at least the last level shared"):
        system(2, "caches.levels.LLC.shared=false")
    system(1, "caches.levels.LLC.shared=false")  # one core: nothing to share


def test_all_levels_shared_needs_no_coherence() -> None:
    b = TraceBuilder()
    b.access("host", "w", "write", 0, 8, 8, 1024, thread=0)
    b.access("host", "w", "write", 0, 8, 8, 1024, thread=1)
    r = values(simulate_trace(system(2, *(f"caches.levels.{n}.shared=true" for n in ("L1D", "L2"))), b.to_table()))
    assert r[("cache/L1D", "stores")] == 2 * 128 and r[("cache/L1D", "hits")] == 128  # 8 KiB: 128 lines each
    assert not any(c.startswith("cache/L1D/core") for c, _ in r)


def _run(tmp_path, table, cores: int):
    trace = tmp_path / "t.parquet"
    write_trace(table, trace)
    (tmp_path / "w.yaml").write_text("name: threaded\ntrace: t.parquet\n")
    return subprocess.run([sys.executable, "-m", "simulator.cli", "run", str(DEFAULT_SYSTEM), str(tmp_path / "w.yaml"),
                           "--set", f"host.cores={cores}", "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True)


def test_more_threads_than_cores_exits_2_naming_trace_column_and_cores(tmp_path) -> None:
    b = TraceBuilder()
    b.compute("host", "a", cycles=10, thread=0)
    b.compute("host", "a", cycles=10, thread=2)
    done = _run(tmp_path, b.to_table(), 2)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "t.parquet: row 1, column 'thread': thread 2, but the system has 2 cores (host.cores" in lines[0]
    assert not (tmp_path / "out").exists()


def test_unbalanced_barriers_exit_2_with_one_line(tmp_path) -> None:
    table = TraceBuilder()
    table.compute("host", "a", thread=1)
    table.barrier(thread=0)
    # to_table would refuse it: write the rows without the whole-trace check
    from workloads.trace import THREADED_TRACE_SCHEMA
    import pyarrow as pa
    cols = {name: table._cols[name] for name in THREADED_TRACE_SCHEMA.names}
    raw = pa.table({name: pa.array(cols[name], THREADED_TRACE_SCHEMA.field(name).type)
                    for name in THREADED_TRACE_SCHEMA.names if name != "addrs"}
                   | {"addrs": pa.array([None, None], THREADED_TRACE_SCHEMA.field("addrs").type)})
    import pyarrow.parquet as pq
    pq.write_table(raw, tmp_path / "t.parquet")
    (tmp_path / "w.yaml").write_text("name: threaded\ntrace: t.parquet\n")
    done = subprocess.run([sys.executable, "-m", "simulator.cli", "run", str(DEFAULT_SYSTEM), str(tmp_path / "w.yaml"),
                           "--set", "host.cores=2", "--out", str(tmp_path / "out")],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "t.parquet: row 1, column 'op': as many barriers on every thread with rows: thread 0 reaches 1, " \
           "thread 1 only 0" in lines[0]


def test_the_graph_has_a_core_and_private_levels_per_core_over_one_llc() -> None:
    from simulator.system import routes, system_graph
    graph = system_graph(system(2).spec)
    found = routes(graph)
    assert found["core0"] == ["core0", "L1D.core0", "L2.core0", "LLC", "memory controller"]
    assert found["core1"] == ["core1", "L1D.core1", "L2.core1", "LLC", "memory controller"]
    assert "host" not in graph


def test_a_multicore_run_prints_and_writes_its_per_core_records(tmp_path, capsys) -> None:
    from simulator.cli import main
    from tests.conftest import CONFIGS
    out = tmp_path / "run"
    assert main(["run", str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "stream_read.yaml"), "--set", "host.cores=2",
                 "--param", "array_bytes=1 MiB", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "L1D/core0 accesses" in printed and "L1D/core1 accesses            0" in printed
    import json
    summary = json.loads((out / "summary.json").read_text())
    assert summary["core0"]["bytes_served_by_DRAM"] == summary["host"]["bytes_served_by_DRAM"] > 0


# --------------------------------------------------------------------------- coherent accelerators

def _stage_bytes_by_level(systems_file: str, trace, overrides=()) -> tuple[list[float], object]:
    """The re-read stage's bytes served by each level, and the built system after the replay."""
    spec = load_spec(ROOT / "configs" / "systems" / systems_file, SystemSpec, list(overrides)).spec
    sim = build_system(spec)
    replay(sim, trace)
    return list(sim.cores[0].stages["reread"].bytes_by_level), sim


def test_the_couplings_without_driver_coherence_work_through_the_caches_are_the_coherent_ones() -> None:
    from simulator.interconnect.couplings import COUPLING_STRATEGIES

    assert {name for name, c in COUPLING_STRATEGIES.items() if c.coherent_stores} == {
        "on_die_dma", "shared_memory", "in_pipeline"}


def test_a_coherent_accelerators_store_removes_the_cores_copy_of_the_line() -> None:
    """On one core: the core writes 4 KiB (dirty in its L1D), the on-die crypto engine (coupling on_die_dma,
    entering at the LLC, here the L2) writes its output over them, and the core reads them back. A coherent
    store removes the core's copies first, so the re-read finds the engine's lines in the LLC, not the core's
    own stale L1D copy."""
    x, src, n = 1 << 20, 4 << 20, 4096
    b = TraceBuilder()
    b.access("host", "write", "write", x, 8, 8, n // 8)
    b.offload("host", "aes", "crypto", op="aes128", inputs=[[src, n]], outputs=[[x, n]])
    b.wait("host", "aes", "crypto")
    b.access("host", "reread", "read", x, 8, 8, n // 8)
    served, sim = _stage_bytes_by_level("logca_sparc_t4_engine.yaml", b.to_table(units=["host", "crypto"]))
    assert served[0] == 0 and served[1] == n  # L1D: nothing; the LLC (L2): every line
    counters = sim.caches.counters_by_requester()["crypto"]
    assert counters["L1D"]["invalidations"] == n // 64 and counters["L1D"]["writebacks_out"] == n // 64


def test_an_in_pipeline_units_store_removes_the_other_cores_copies() -> None:
    """Two cores: core 1 writes 16 KiB; core 0's in-pipeline AES unit (in core 0's L1D) writes its output over
    them. As for a store of core 0, core 1's private copies are invalidated, a dirty one written into the
    shared level, and core 1's re-read misses its L1D."""
    x, src, n = 1 << 20, 4 << 20, 16 * 1024
    b = TraceBuilder()
    b.access("host", "write", "write", x, 8, 8, n // 8, thread=1)
    b.barrier(thread=0)
    b.barrier(thread=1)
    b.offload("host", "aes", "crypto", op="aes128", inputs=[[src, n]], outputs=[[x, n]], thread=0)
    b.wait("host", "aes", "crypto", thread=0)
    b.barrier(thread=0)
    b.barrier(thread=1)
    b.access("host", "reread", "read", x, 8, 8, n // 8, thread=1)
    spec = load_spec(ROOT / "configs" / "systems" / "logca_sandy_bridge_aesni.yaml", SystemSpec,
                     ["host.cores=2"]).spec
    sim = build_system(spec)
    replay(sim, b.to_table(units=["host", "crypto"]))
    line = x // 64
    assert sim.caches.cores[0].is_dirty(line)[0]  # the unit's output, in core 0's L1D
    assert sim.cores[1].stages["reread"].bytes_by_level[0] == 0  # core 1's L1D copy was invalidated
    assert sim.caches.snoop_counters(1)["L1D"]["invalidations"] == n // 64


@pytest.mark.parametrize("op", ["offload", "wait"])
def test_an_in_pipeline_unit_is_refused_from_a_thread_other_than_0(op) -> None:
    """The unit works in core 0's L1D: thread 1 would hand it data it holds in its own L1D (read stale from the
    shared level) and get the output in core 0's; the trace is refused at its row."""
    from workloads.trace import TraceError
    src, x, n = 4 << 20, 1 << 20, 16 * 1024
    b = TraceBuilder()
    b.compute("host", "idle", cycles=1, thread=0)
    b.offload("host", "aes", "crypto", op="aes128", inputs=[[src, n]], outputs=[[x, n]],
              thread=1 if op == "offload" else 0)
    b.wait("host", "aes", "crypto", thread=1)
    spec = load_spec(ROOT / "configs" / "systems" / "logca_sandy_bridge_aesni.yaml", SystemSpec,
                     ["host.cores=2"]).spec
    row = 1 if op == "offload" else 2
    what = "offloads to" if op == "offload" else "waits on"
    expected = f"row {row}, column 'thread': thread 1 {what} 'crypto', coupled in_pipeline"
    with pytest.raises(TraceError, match=expected):
        replay(build_system(spec), b.to_table(units=["host", "crypto"]))
    # with every level shared there is one L1 for all the cores: any thread may drive the unit
    shared = load_spec(ROOT / "configs" / "systems" / "logca_sandy_bridge_aesni.yaml", SystemSpec,
                       ["host.cores=2", "caches.levels.L1D.shared=true", "caches.levels.L2.shared=true"]).spec
    assert replay(build_system(shared), b.to_table(units=["host", "crypto"])) > 0


def test_a_coherent_units_snoops_are_each_cores_and_allocate_nothing_above_its_entry() -> None:
    """Three levels, L1 private and L2 + L3 shared, two cores each holding a line dirty in its L1, and a unit
    entering at L3 storing both lines: each core's invalidation is counted in its own snoop counters, and the
    dirty copies go straight into L3, so L2 allocates nothing (no other line is pushed out of it)."""
    from simulator.memory.cache import CacheGeometry
    from simulator.memory.core_caches import CoherentStores, CoreCaches

    caches = CoreCaches([CacheGeometry("L1", 512, 2, 64), CacheGeometry("L2", 1024, 4, 64),
                         CacheGeometry("L3", 4096, 8, 64)], [False, True, True], 2)
    caches.views[0].access(np.array([8]), True)
    caches.views[1].access(np.array([24]), True)
    l2_before = caches.counters()["L2"]["allocations"]
    CoherentStores(caches).access(np.array([8, 24]), True, start_level=2, requester="unit")
    assert caches.snoop_counters(0)["L1"]["invalidations"] == 1
    assert caches.snoop_counters(1)["L1"]["invalidations"] == 1
    assert caches.counters()["L2"]["allocations"] == l2_before
    assert all(caches.cores[0].is_dirty(x) == [False, False, True] for x in (8, 24))
    with pytest.raises(ValueError, match=r"is_store: shape \(1,\); expected a bool or shape \(2,\)"):
        CoherentStores(caches).access(np.array([8, 24]), np.array([True]), start_level=2)


@pytest.mark.parametrize("reader_holds_c", [False, True])
def test_the_llc_drivers_invalidation_probes_another_core_only_where_it_holds_a_line(reader_holds_c) -> None:
    """Two cores on the LLC-coupled LAP: thread 0 offloads a 32 x 32 GEMM and waits; its driver evicts A, B and C
    to the LLC before and drops C's host copies above the LLC after, on core 0's own levels line by line (4 x C's
    lines at its L1D). Core 1 is probed only where it holds a line of C: never, or, when thread 1 read C while
    the LAP ran, once per line at each of its private levels."""
    n, e = 32, 8
    a, bm, c = 1 << 20, 2 << 20, 3 << 20
    b = TraceBuilder()
    for base in (a, bm, c):
        b.access("host", "produce", "write", base, e, e, n * n, thread=0)
    b.offload("host", "gemm", "lap", op="gemm", m=n, n=n, k=n, a_addr=a, b_addr=bm, c_addr=c, thread=0)
    b.barrier(thread=0)
    b.barrier(thread=1)
    b.wait("host", "gemm", "lap", thread=0)
    b.access("host", "other", "read", c if reader_holds_c else 8 << 20, e, e, n * n, thread=1)
    spec = load_spec(ROOT / "configs" / "systems" / "lap_llc.yaml", SystemSpec, ["host.cores=2"]).spec
    sim = build_system(spec)
    replay(sim, b.to_table(units=["host", "lap"]))
    c_lines = n * n * e // 64
    assert sim.caches.snoop_counters(0)["L1D"]["probes"] == 0
    held = c_lines if reader_holds_c else 0
    assert sim.caches.counters_by_requester()["lap.driver"]["L1D"]["probes"] == 4 * c_lines + held
    assert sim.caches.snoop_counters(1)["L1D"]["probes"] == held and sim.caches.snoop_counters(1)["L2"]["probes"] == held


def test_probes_are_counted_in_lookups_wherever_they_are_reported() -> None:
    """A probe is a lookup whether or not the line was there: the cache counters, each core's snoop counters and
    the energy actions give probes one unit."""
    b = TraceBuilder()
    b.access("host", "w", "write", 4096, 8, 8, 64, thread=0)
    b.barrier(thread=0)
    b.barrier(thread=1)
    b.access("host", "w", "write", 4096, 8, 8, 64, thread=1)
    units = {(c, q): u for c, q, _, u in simulate_trace(system(2), b.to_table()).rows}
    probe_units = {u for (c, q), u in units.items() if q in ("probes", "snooped_probes")}
    assert probe_units == {"lookups"}
    assert units[("cache/L1D/core0", "snooped_probes")] == "lookups" and units[("cache/L1D", "probes")] == "lookups"
