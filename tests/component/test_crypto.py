"""The crypto unit and the AES/SHA traces: block counts, padding, splitting, timing against hand figures."""

from __future__ import annotations

import math

import pytest

import simulator
from simulator.config.algorithms import aes_blocks, sha256_padded_bytes, split_blocks
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import replay
from simulator.system import build_system
from workloads.aes import crypto_host, crypto_offload, host_cycles
from workloads.trace import TraceBuilder

T2 = "configs/systems/logca_ultrasparc_t2.yaml"
F_HZ = 1.16e9


@pytest.fixture(scope="module")
def t2():
    return load_spec(T2, SystemSpec)


def kernel_cycles(loaded, trace):
    system = build_system(loaded.spec)
    end = replay(system, trace)
    return (end - system.host.stages["init"].last_ps) * F_HZ / 1e12, system


def test_sha256_padding_follows_fips_180_4():
    assert sha256_padded_bytes(0) == 64
    assert sha256_padded_bytes(55) == 64
    assert sha256_padded_bytes(56) == 128  # no room for 0x80 and the 8-byte length
    assert sha256_padded_bytes(64) == 128
    assert aes_blocks(17) == 2


def test_split_blocks_is_balanced_and_complete():
    parts = split_blocks(10, 4)
    assert parts == [3, 3, 2, 2] and sum(parts) == 10
    with pytest.raises(ValueError, match="parts"):
        split_blocks(10, 0)


def test_host_trace_costs_c_g_beta_cycles():
    for kernel, g in (("aes", 1000), ("aes", 300_000), ("sha", 100)):
        trace = crypto_host(kernel, g, 90.0, 1.01)
        rows = trace.to_pandas()
        assert rows.loc[rows.stage == "kernel", "cycles"].sum() == pytest.approx(host_cycles(kernel, g, 90.0, 1.01))
    assert host_cycles("sha", 100, 72.0, 0.97) == pytest.approx(72.0 * 128 ** 0.97)


def test_unit_time_is_overhead_latency_and_blocks(t2):
    """One engine, 64 KiB: o + blocks x cycles/block + L, within the data path's small share."""
    g = 64 * 1024
    t1, system = kernel_cycles(t2, crypto_offload("aes", g))
    unit = system.units["crypto"]
    expected = 29000 + (g // 16) * 84.7 + 1500
    assert unit.counts["blocks"] == g // 16
    assert unit.counts["bytes_read"] == g and unit.counts["bytes_written"] == g
    assert t1 == pytest.approx(expected, rel=0.03)


def test_engines_split_the_work_and_pay_the_split_cost(t2):
    g = 256 * 1024
    t1, _ = kernel_cycles(t2, crypto_offload("aes", g, engines=1))
    t4, _ = kernel_cycles(t2, crypto_offload("aes", g, engines=4))
    compute = (g // 16) * 84.7
    assert t4 == pytest.approx(47600 + 29000 + 1500 + compute / 4, rel=0.03)
    assert t1 > t4


def test_pipelined_requests_hide_overhead_behind_work(t2):
    g = 1024 * 1024
    t1, _ = kernel_cycles(t2, crypto_offload("aes", g, requests=1))
    t8, s8 = kernel_cycles(t2, crypto_offload("aes", g, requests=8))
    assert s8.units["crypto"].commands_done == 8
    # overheads after the first overlap the unit's work: 8 requests cost about one overhead more than one request
    assert t8 < t1 + 2 * 29000


def test_bad_commands_are_rejected(t2):
    with pytest.raises(ValueError, match="engines = 9: expected at most the unit's 8"):
        kernel_cycles(t2, crypto_offload("aes", 1024, engines=9))
    with pytest.raises(ValueError, match="engines = 2: expected 1 for op .sha256."):
        kernel_cycles(t2, crypto_offload("sha", 1024, engines=2))
    with pytest.raises(ValueError, match="kernel"):
        crypto_host("des", 16, 1.0, 1.0)


# --- per-kernel host set-up and the PCIe crypto card ---------------------------------------------------

from dataclasses import replace  # noqa: E402

from simulator.config.loader import LoadedConfig  # noqa: E402
from models.calibrate import load_platform_entries  # noqa: E402

TABLE_4_3 = "configs/presets/platforms/logca_table_4_3.yaml"
CARD = "configs/systems/logca_hifn_7955.yaml"


def _without_setup(loaded):
    acc = loaded.spec.accelerators["crypto"]
    spec = replace(loaded.spec, accelerators={"crypto": replace(acc, aes_setup_cycles=0.0, sha_setup_cycles=0.0)})
    return LoadedConfig(spec=spec, resolved=loaded.resolved, source=loaded.source)


def test_interface_overhead_plus_kernel_setup_is_table_4_3_o():
    entries = load_platform_entries(TABLE_4_3)
    for name in ("ultrasparc_t2", "sparc_t3", "sparc_t4_engine", "sparc_t4_instructions"):
        acc = load_spec(f"configs/systems/logca_{name}.yaml", SystemSpec).spec.accelerators["crypto"]
        for kernel, setup in (("aes", acc.aes_setup_cycles), ("sha", acc.sha_setup_cycles)):
            o = entries[f"{name}_{kernel}"].params.overhead_cycles
            assert acc.interface.offload_overhead_cycles + setup == pytest.approx(o), (name, kernel)


def test_kernel_setup_is_charged_on_the_host_per_request():
    loaded = load_spec("configs/systems/logca_sparc_t4_engine.yaml", SystemSpec)
    f_hz = loaded.spec.host.frequency_hz

    def cycles(cfg, trace):
        system = build_system(cfg.spec)
        end = replay(system, trace)
        return (end - system.host.stages["init"].last_ps) * f_hz / 1e12, system

    t_sha, system = cycles(loaded, crypto_offload("sha", 1024))
    t_sha0, _ = cycles(_without_setup(loaded), crypto_offload("sha", 1024))
    assert t_sha - t_sha0 == pytest.approx(loaded.spec.accelerators["crypto"].sha_setup_cycles, rel=0.01)
    unit = system.units["crypto"]
    assert unit.host_setup_cycles({"op": "aes128"}) == 0.0
    t2 = build_system(load_spec(T2, SystemSpec).spec).units["crypto"]
    assert t2.host_setup_cycles({"op": "aes128", "engines": 2}) == 18500 + 47600


def test_pcie_card_time_is_driver_copies_and_engine():
    loaded = load_spec(CARD, SystemSpec)
    spec = loaded.spec
    acc = spec.accelerators["crypto"]
    f_hz = spec.host.frequency_hz
    g = 1024 * 1024
    system = build_system(spec)
    end = replay(system, crypto_offload("aes", g))
    t1 = (end - system.host.stages["init"].last_ps) * f_hz / 1e12
    copies = 2 * g / acc.interface.bandwidth_bytes_per_s * f_hz
    engine = g / 16 * acc.aes_cycles_per_block * f_hz / acc.frequency_hz
    assert t1 == pytest.approx(acc.interface.offload_overhead_cycles + copies + engine, rel=0.03)
    assert system.units["crypto"].interface.link.bytes_moved == 2 * g


def test_pcie_card_has_no_sha256_engine():
    system = build_system(load_spec(CARD, SystemSpec).spec)
    with pytest.raises(ValueError, match="no SHA-256 engine"):
        replay(system, crypto_offload("sha", 1024))


# --- warm buffers: the kernel once untimed, then timed (000 averages back-to-back executions, 000:L481) -------


def test_warmup_repeats_the_kernel_in_its_own_stage():
    for trace in (crypto_host("aes", 1000, 90.0, 1.01, warmup=True), crypto_offload("aes", 1000, requests=2,
                                                                                  warmup=True)):
        rows = trace.to_pandas()
        warm, timed = rows[rows.stage == "warmup"], rows[rows.stage == "kernel"]
        assert len(warm) == len(timed) > 0
        assert list(warm.op) == list(timed.op) and list(warm.addr) == list(timed.addr)
    assert "warmup" not in set(crypto_offload("sha", 100).to_pandas().stage)


def test_warm_request_skips_the_cold_output_miss(t2):
    """A 16 B output covers its line in part, so a cold request reads the line before it writes it; timed from
    the end of a warm-up, a request pays no such miss."""
    cold, _ = kernel_cycles(t2, crypto_offload("aes", 16))
    system = build_system(t2.spec)
    end = replay(system, crypto_offload("aes", 16, warmup=True))
    warm = (end - system.host.stages["warmup"].last_ps) * F_HZ / 1e12
    assert system.units["crypto"].counts["blocks"] == 2  # the warm-up ran too
    assert warm < cold
    # what is left beyond o + L + one block: the L2 read and write of one line each, under two L2 hits
    l2_cycles = t2.spec.caches.levels[1].latency_cycles
    assert 0 < warm - (29000 + 1500 + 84.7) <= 2 * l2_cycles


@pytest.mark.parametrize("declared", [False, True])
def test_a_unit_without_declared_energies_has_an_energy_not_known(declared):
    # no shipped crypto preset cites its engines' energy: left out, the unit's energy is NaN (not 0 J), and so the
    # run's total; declared, each is priced: blocks x energy per block, busy and idle time at their powers
    overrides = (["accelerators.crypto.energy_j_per_block=2 nJ", "accelerators.crypto.static_power_w=1 W",
                  "accelerators.crypto.idle_power_w=0.5 W"] if declared else [])
    loaded = load_spec(T2, SystemSpec, overrides)
    res = simulator.run(loaded, {"generator": "crypto_offload",
                                 "params": {"kernel": "aes", "g_bytes": "4 KiB", "unit": "crypto"}})
    energy = res.summary()["energy_by_component_j"]["crypto"]
    if not declared:
        assert math.isnan(energy) and math.isnan(res.summary()["energy_total_j"])
        return
    busy, total = res.value("accel/crypto", "busy_s"), res.value("system", "simulated_time_s")
    assert energy == pytest.approx(256 * 2e-9 + 1.0 * busy + 0.5 * (total - busy))


def test_a_whole_line_output_is_written_without_a_read_a_partial_one_is_read_first(t2):
    # 4 KiB of ciphertext on a line boundary: 64 whole lines, none read; from 8 B into a line: the first and last
    # lines are covered in part and read first
    reads = {}
    for offset in (0, 8):
        system = build_system(t2.spec)
        trace = TraceBuilder()
        trace.offload("host", "kernel", "crypto", op="aes128", inputs=[[0, 4096]], outputs=[[(1 << 20) + offset, 4096]])
        trace.wait("host", "kernel", "crypto")
        replay(system, trace.to_table())
        reads[offset] = system.dram.counters()["reads"]
    assert reads[8] - reads[0] == 2
