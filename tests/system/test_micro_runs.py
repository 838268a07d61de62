"""Micro workloads on the i7-920 preset: the foundation's behavioural checks (issue: foundation).

Each expected figure is derived from the config's own parameters, not from
a previous run: Little's law for the stream, the full latency chain for the
pointer chase, flops/cycle x f for compute, the DRAM channel peak, and the
IDD x VDD x time formula for background and refresh energy.
"""

from __future__ import annotations

import numpy as np
import pytest

import simulator
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.studies.fmm.crosscheck import measure_access_rate
from simulator.replay import replay
from simulator.system import build_system
from workloads.trace import TraceBuilder
from tests.conftest import DEFAULT_SYSTEM

SPEC = load_spec(DEFAULT_SYSTEM, SystemSpec).spec
T = SPEC.dram.timing
TCK = T.tck_s
DEVICES_PER_RANK = SPEC.dram.geometry.bus_width_bits // SPEC.dram.geometry.device_width_bits
RANKS = SPEC.dram.geometry.channels * SPEC.dram.geometry.ranks_per_channel
CHANNEL_PEAK = SPEC.dram.geometry.channels * SPEC.dram.geometry.bus_width_bits / 8 * 2 / TCK  # DDR: 2 beats/tCK


def _run(workload: dict, *overrides: str):
    return simulator.run(DEFAULT_SYSTEM, workload, list(overrides)).summary()


def test_stream_bandwidth_follows_littles_law_and_lies_in_the_i7_band():
    s = _run({"generator": "stream", "params": {"kind": "read", "array_bytes": "32 MiB"}})
    bw = 32 * 2**20 / s["simulated_time_s"]
    latency = SPEC.host.memory_path_latency_s + (T.t_rcd + T.cl + T.burst_length / 2) * TCK
    littles = SPEC.host.max_outstanding_misses * SPEC.caches.line_bytes / latency
    assert bw == pytest.approx(littles, rel=0.03)
    assert 3e9 <= bw <= 7e9  # 3 GB/s (003's MARSSx86 model) .. 6.4 GB/s (real i7-920), 003:L301 and 003:L185


def test_stream_bandwidth_scales_with_outstanding_misses():
    base = _run({"generator": "stream", "params": {"kind": "read", "array_bytes": "8 MiB"}})
    more = _run({"generator": "stream", "params": {"kind": "read", "array_bytes": "8 MiB"}},
                "host.max_outstanding_misses=5")
    assert more["simulated_time_s"] == pytest.approx(2 * base["simulated_time_s"], rel=0.03)


def test_pointer_chase_exposes_the_full_load_to_use_latency():
    hops = 4000
    s = _run({"generator": "pointer_chase", "params": {"n_hops": hops, "footprint_bytes": "256 MiB", "seed": 3}})
    per_hop = s["simulated_time_s"] / hops
    d = s["dram"]
    # every hop misses all caches; DRAM time depends on the row state the hop finds
    assert d["reads"] == hops
    dram_time = (d["row_conflicts"] * (T.t_rp + T.t_rcd) + d["row_misses"] * T.t_rcd
                 + hops * (T.cl + T.burst_length / 2)) * TCK / hops
    # the next hop reaches DRAM after the memory path: the rank has powered down in between
    wake = T.t_xp * TCK if SPEC.dram.geometry.power_down else 0.0
    expected = SPEC.host.memory_path_latency_s + dram_time + wake
    assert per_hop == pytest.approx(expected, rel=0.02)
    assert per_hop > 10 * SPEC.host.memory_path_latency_s / SPEC.host.max_outstanding_misses


def test_compute_bound_micro_runs_at_peak_flop_rate():
    s = _run({"generator": "compute_only", "params": {"flops": 10**8, "rows": 7}})
    assert s["host"]["achieved_flops_per_s"] == pytest.approx(
        SPEC.host.flops_per_cycle * SPEC.host.frequency_hz, rel=1e-9)


def test_dram_streaming_never_exceeds_the_channel_peak():
    # a core with ample outstanding misses and the prefetcher on: DRAM becomes the limit
    s = _run({"generator": "stream", "params": {"kind": "copy", "array_bytes": "16 MiB"}},
             "host.max_outstanding_misses=256", "caches.prefetcher.enabled=true")
    bw = s["dram"]["bandwidth_bytes_per_s"]
    assert bw <= CHANNEL_PEAK
    assert bw >= 0.7 * CHANNEL_PEAK


def test_the_prefetcher_does_not_lift_a_plain_stream_beyond_the_cores_miss_budget():
    # its lines are used before an idle miss slot could issue them, so they cost what misses cost
    read = {"generator": "stream", "params": {"kind": "read", "array_bytes": "32 MiB"}}
    plain = _run(read)
    prefetched = _run(read, "caches.prefetcher.enabled=true")
    assert prefetched["caches"]["L2"]["prefetches"] > 0.5 * 32 * 2**20 / 64
    assert prefetched["simulated_time_s"] == pytest.approx(plain["simulated_time_s"], rel=0.06)


def test_the_prefetcher_fetches_ahead_in_the_slack_of_compute_rows():
    # 4 KiB reads between compute rows: the lines prefetched beyond a read row's end are issued
    # while the core computes, so the next read row finds them and ends sooner
    busy = {}
    for overrides in ((), ("caches.prefetcher.enabled=true", "caches.prefetcher.degree=16")):
        system = build_system(load_spec(DEFAULT_SYSTEM, SystemSpec, overrides).spec)
        tb = TraceBuilder()
        for i in range(200):
            tb.access("host", "read", "read", i * 4096, 8, 8, 512)
            tb.compute("host", "work", cycles=20_000)
        replay(system, tb.to_table())
        busy[bool(overrides)] = system.host.stages["read"].busy_ps
        if overrides:
            assert system.host.prefetch.issued >= 200  # lines issued in idle slots
    assert busy[True] < 0.95 * busy[False]


def test_background_and_refresh_energy_of_an_idle_dram_follow_idd_vdd_time():
    s = _run({"generator": "compute_only", "params": {"flops": 4 * 10**7}})
    seconds = s["simulated_time_s"]
    c = SPEC.dram.currents
    e = s["dram"]["energy_j"]
    refreshes = s["dram"]["refreshes"]
    assert refreshes == RANKS * int(seconds // T.t_refi_s)
    assert SPEC.dram.geometry.power_down  # the preset's idle ranks sleep, waking only to refresh
    awake = refreshes * (T.t_xp + T.t_rfc) * TCK  # rank-seconds: tXP to wake, then the REF; no bank ever opened
    assert e["background_active"] == 0
    assert e["background_precharge"] == pytest.approx(c.vdd_v * c.idd2n_a * DEVICES_PER_RANK * awake, rel=1e-9)
    assert e["background_power_down"] == pytest.approx(
        c.vdd_v * c.idd2p_a * DEVICES_PER_RANK * (RANKS * seconds - awake), rel=1e-9)
    per_refresh = c.vdd_v * (c.idd5_a - c.idd3n_a) * T.t_rfc * TCK * DEVICES_PER_RANK
    assert e["refresh"] == pytest.approx(refreshes * per_refresh, rel=1e-9)
    assert e["read"] == e["write"] == e["activate_precharge"] == 0


def test_energy_adds_up_by_component():
    s = _run({"generator": "stream", "params": {"kind": "triad", "array_bytes": "4 MiB"}})
    assert s["energy_total_j"] == pytest.approx(sum(s["energy_by_component_j"].values()))
    assert s["energy_by_component_j"]["host"] == pytest.approx(
        s["host"]["flops"] * SPEC.host.energy_per_flop_j + SPEC.host.static_power_w * s["simulated_time_s"])


@pytest.mark.parametrize("system", sorted((DEFAULT_SYSTEM.parent / "marssx86").glob("*.yaml")), ids=lambda p: p.stem)
def test_marssx86_like_host_streams_at_the_papers_simulated_3_gb_s(system):
    spec = load_spec(system, SystemSpec).spec
    s = simulator.run(system, {"generator": "stream", "params": {"kind": "read", "array_bytes": "8 MiB"}}).summary()
    bw = 8 * 2**20 / s["simulated_time_s"]
    t = spec.dram.timing
    latency = spec.host.memory_path_latency_s + (t.t_rcd + t.cl + t.burst_length / 2) * t.tck_s
    # the mechanism: Little's law with this system's own outstanding misses
    assert bw == pytest.approx(spec.host.max_outstanding_misses * spec.caches.line_bytes / latency, rel=0.03)
    # the calibration the system files state: 003:L301's 3 GB/s
    assert bw == pytest.approx(3e9, rel=0.05)


def test_a_gather_of_runs_issues_one_access_per_element_on_the_runs_lines():
    """Leaves of 35 doubles, cached: a gather of runs costs 35 issue slots per leaf, a plain gather 1."""
    leaves = np.arange(64, dtype=np.int64) * 35 * 8  # 64 leaves of 280 B, 17.5 KiB: fits L1
    elapsed, lines = {}, {}
    for run in (1, 35):
        b = TraceBuilder()
        elem = 8 if run > 1 else 35 * 8
        for _ in range(50):
            b.gather("host", "s", "read", leaves, elem, run=run)
        system = build_system(SPEC)
        end_ps = replay(system, b.to_table())
        stage = system.host.stages["s"]
        assert stage.bytes_touched == 50 * 64 * 280  # same bytes, same lines either way
        lines[run] = stage.lines
        elapsed[run] = end_ps
    assert lines[1] == lines[35]
    cycles_per_leaf = {r: t / 1e12 * SPEC.host.frequency_hz / (50 * 64) for r, t in elapsed.items()}
    assert cycles_per_leaf[35] == pytest.approx(35 / SPEC.host.loads_per_cycle, rel=0.05)
    assert cycles_per_leaf[1] < 6  # a handful of L1 lines per leaf


@pytest.mark.parametrize("system", [DEFAULT_SYSTEM, DEFAULT_SYSTEM.parent / "marssx86" / "cpu.yaml"],
                         ids=lambda p: p.stem)
def test_measured_access_rate_is_the_configured_issue_rate(system):
    """The FMM cross-check's measured access rate follows each host's loads_per_cycle x clock."""
    host = load_spec(system, SystemSpec).spec.host
    assert measure_access_rate(str(system)) == pytest.approx(host.loads_per_cycle * host.frequency_hz, rel=0.02)


def test_each_stage_records_the_bytes_each_level_served():
    # a stage writes 4 MiB, a second reads it back: the record per stage adds up to the core's, and
    # the second stage finds most of the buffer in the caches the first one filled
    spec = load_spec(DEFAULT_SYSTEM, SystemSpec).spec
    system = build_system(spec)
    tb = TraceBuilder()
    n = 4 * 2**20 // 64
    tb.access("host", "fill", "write", 0, 64, 64, n)
    tb.access("host", "reread", "read", 0, 64, 64, n)
    replay(system, tb.to_table())
    fill, reread = system.host.stages["fill"].bytes_by_level, system.host.stages["reread"].bytes_by_level
    assert fill.sum() == reread.sum() == 4 * 2**20
    assert np.array_equal(fill + reread, system.host.bytes_by_level)
    assert fill[-1] == 4 * 2**20  # every line of the first write came from DRAM
    assert reread[-1] < 0.1 * reread.sum()  # the 8 MiB LLC holds the rewritten buffer


def test_the_hosts_figures_are_the_same_on_a_system_with_an_idle_accelerator():
    """The host's constant power, and its energy per flop and per DRAM byte, are measured on the system without
    its accelerators: an idle LAP's static power (or its stack's background) is the LAP's, not the host's."""
    from simulator.studies.fmm.crosscheck import _measure_host

    alone = _measure_host(str(DEFAULT_SYSTEM))
    for path in ("lap_dram.yaml", "lap_hbm_stack.yaml"):
        assert _measure_host(str(DEFAULT_SYSTEM.parent / path)) == alone, path
