"""GPU kernel accelerator on the simulator: copies, couplings, pipelining, LogCA calibration (000 ch. 4, 6)."""

from __future__ import annotations

from dataclasses import asdict

import pytest
import yaml

from models.logca import g1, speedup
from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.studies.logca.gpu import (PIPELINE_TABLES, calibrate, device_cycles, granularities,
                                       latency_bottleneck_granularities, latency_region_bandwidth, load_gpu_platform,
                                       main, offload_breakdown, roofline_acceleration, roofline_cycles,
                                       simulate_point, simulated_latency_gain, sweep, table_4_3_params)
from simulator.replay import replay
from simulator.system import build_system
from workloads.kernels import device_work, host_cycles, kernel_host, kernel_offload, output_bytes

DISCRETE = "configs/systems/logca_gpu_discrete.yaml"
ROOFLINE = ["accelerators.gpu.acceleration=0"]  # the preset's fixed A removed: the device runs at its roofline


def _run(path, trace, overrides=()):
    spec = load_spec(path, SystemSpec, overrides).spec
    system = build_system(spec)
    end = replay(system, trace)
    cycles = (end - system.host.stages["init"].last_ps) * spec.host.frequency_hz / 1e12
    return cycles, system


def test_host_trace_costs_c_g_beta():
    for kernel, c in (("gemm", 2.0), ("fft", 290.0), ("radix_sort", 290.0), ("binary_search", 116.0)):
        table = kernel_host(kernel, 2**20, c)
        kernel_rows = [i for i, s in enumerate(table.column("stage").to_pylist()) if s == "kernel"]
        total = sum(table.column("cycles").to_pylist()[i] for i in kernel_rows)
        assert total == pytest.approx(host_cycles(kernel, 2**20, c), rel=1e-6), kernel


def test_offload_stages_split_work_and_buffers():
    import json
    table = kernel_offload("gemm", 2**20, 2.0, stages=4)
    cmds = [json.loads(p) for p, op in zip(table.column("params").to_pylist(), table.column("op").to_pylist())
            if op == "offload"]
    assert len(cmds) == 1  # one offload (o paid once), its parts pipelined by the unit
    parts = cmds[0]["parts"]
    assert len(parts) == 4
    assert sum(c["host_cycles"] for c in parts) == pytest.approx(host_cycles("gemm", 2**20, 2.0))
    assert sum(c["inputs"][0][1] for c in parts) == 2**20
    assert sum(c["outputs"][0][1] for c in parts) == output_bytes("gemm", 2**20)


@pytest.mark.parametrize("kernel", ["radix_sort", "binary_search"])
def test_init_writes_a_buffer_of_4_byte_elements_whole(kernel):
    """A buffer of 4 B elements need not be a multiple of 8 B: the init stage writes every byte of it, no more."""
    for trace in (kernel_host(kernel, 20, 1.0), kernel_offload(kernel, 20, 1.0)):
        init = [r for r in trace.to_pylist() if r["stage"] == "init"]
        assert sum(r["count"] * r["elem_bytes"] for r in init) == 20
        end = max(r["addr"] + (r["count"] - 1) * r["stride_bytes"] + r["elem_bytes"] for r in init)
        assert end == init[0]["addr"] + 20


def test_offload_parts_cut_the_output_at_whole_elements():
    """GEMM's output is half its input: parts cut at the input's 4 B elements cover whole output elements, a part
    whose input finishes none has no output region, and the parts cover the output once."""
    import json
    table = kernel_offload("gemm", 24, 1.0, stages=6)
    cmd = next(json.loads(p) for p, op in zip(table.column("params").to_pylist(), table.column("op").to_pylist())
               if op == "offload")
    outputs = [region for part in cmd["parts"] for region in part["outputs"]]
    assert any(part["outputs"] == [] for part in cmd["parts"])
    assert all(size % 4 == 0 and size > 0 for _, size in outputs)
    (start, total), = cmd["outputs"]  # back to back from the command's output, covering it once
    assert [addr for addr, _ in outputs] == [start + sum(size for _, size in outputs[:i]) for i in range(len(outputs))]
    assert sum(size for _, size in outputs) == total == output_bytes("gemm", 24) == 12


def test_pipelined_parts_cross_the_link_once_and_run_as_sub_requests():
    g = 2**20
    _, system = _run(DISCRETE, kernel_offload("fft", g, 290.0, stages=4))
    unit = system.units["gpu"]
    assert unit.interface.bytes_moved == g + output_bytes("fft", g)
    assert unit.counts["requests"] == 4 and unit.commands_done == 1


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="kernel"):
        kernel_host("dct", 2**10, 1.0)
    with pytest.raises(ValueError, match="stages"):
        kernel_offload("binary_search", 2**10, 1.0, stages=2)
    with pytest.raises(ValueError, match="g_bytes"):
        kernel_offload("gemm", 3, 1.0)


def test_pcie_copies_in_and_out_cross_the_link():
    g = 2**20
    _, system = _run(DISCRETE, kernel_offload("fft", g, 290.0))
    unit = system.units["gpu"]
    assert unit.interface.bytes_moved == g + output_bytes("fft", g)
    assert unit.counts["requests"] == 1


def test_unit_runs_a_times_faster_than_host_at_large_g():
    # with o and the copies made negligible, T1 approaches T0 / A (A = 30, 000 Table 4.3, which the preset fixes
    # over its roofline)
    spec = load_spec(DISCRETE, SystemSpec).spec.accelerators["gpu"]
    assert spec.acceleration == 30 and spec.peak_flops_per_s == pytest.approx(1.03e12)
    over = ["accelerators.gpu.interface.offload_overhead_cycles=0",
            "accelerators.gpu.interface.bandwidth_bytes_per_s=1000 GB/s"]
    t0, _ = _run(DISCRETE, kernel_host("gemm", 2**21, 2.0), over)
    t1, system = _run(DISCRETE, kernel_offload("gemm", 2**21, 2.0), over)
    assert t0 / t1 == pytest.approx(30.0, rel=0.05)
    assert "flops" not in system.units["gpu"].counts  # the fixed A, not the roofline, timed the request


def test_unit_time_is_the_roofline_of_the_request_work_without_a_fixed_a():
    # GEMM is compute-bound on the C2070 (2 n^3 flops at 1.03 TFLOP/s), FFT memory-bound (one read and one write of
    # the points at 144 GB/s, above 5 N log2 N flops at peak): the unit's compute time is the larger term
    assert load_spec(DISCRETE, SystemSpec, ROOFLINE).spec.accelerators["gpu"].acceleration == 0
    g = 2**21
    for kernel, bound in (("gemm", "flops"), ("fft", "memory_bytes")):
        flops, memory_bytes = device_work(kernel, g)
        by_flops, by_bytes = flops / 1.03e12, memory_bytes / 144e9
        assert (by_flops > by_bytes) == (bound == "flops"), kernel
        _, system = _run(DISCRETE, kernel_offload(kernel, g, 2.0), ROOFLINE)
        unit = system.units["gpu"]
        assert unit.counts["compute_s"] == pytest.approx(max(by_flops, by_bytes), rel=1e-9), kernel
        assert unit.counts["flops"] == pytest.approx(flops) and unit.counts["memory_bytes"] == pytest.approx(memory_bytes)


def test_device_work_follows_each_kernel_standard_count():
    n = 512  # two 512 x 512 float matrices: 2 MiB in
    assert device_work("gemm", 2 * n * n * 4) == pytest.approx((2 * n**3, 3 * n * n * 4))
    points = 2**16  # complex floats, 8 B each
    assert device_work("fft", points * 8) == pytest.approx((5 * points * 16, 2 * points * 8))
    keys = 2**20  # 32-bit keys, 4 bits per pass: 8 passes, each reading and writing every key
    assert device_work("radix_sort", keys * 4) == pytest.approx((0.0, 8 * 2 * keys * 4))


def test_a_roofline_device_needs_its_peak_and_memory_bandwidth():
    from simulator.errors import ConfigError

    with pytest.raises(ConfigError, match="peak_flops_per_s"):
        load_spec(DISCRETE, SystemSpec, ROOFLINE + ["accelerators.gpu.peak_flops_per_s=0 FLOP/s"])
    with pytest.raises(ConfigError, match="device_memory_bandwidth_bytes_per_s"):
        load_spec(DISCRETE, SystemSpec,
                  ROOFLINE + ["accelerators.gpu.interface.device_memory_bandwidth_bytes_per_s=0 B/s"])
    fixed = load_spec(DISCRETE, SystemSpec, ["accelerators.gpu.peak_flops_per_s=0 FLOP/s"]).spec
    assert fixed.accelerators["gpu"].acceleration == 30  # a fixed A needs no peak


def test_roofline_what_if_beside_the_preset_fixed_a():
    # the study's roofline figures use the datasheet peak and bandwidth although the preset fixes A = 30
    c = load_gpu_platform("discrete", "gemm").logca.c_cycles_per_byte_beta
    g, f_hz = 2**26, 2.27e9
    flops, _ = device_work("gemm", g)
    assert roofline_cycles("discrete", "gemm", g) == pytest.approx(flops / 1.03e12 * f_hz, rel=1e-12)
    a_64m = roofline_acceleration("discrete", "gemm", g, c)
    assert a_64m == pytest.approx(host_cycles("gemm", g, c) / (flops / 1.03e12 * f_hz), rel=1e-12)
    # host C g^1.7 against 2 n^3 = g^1.5 flops: the roofline's A rises with g, past 000's A = 30 at 64 MiB
    assert roofline_acceleration("discrete", "gemm", 2**20, c) < a_64m and a_64m > 30
    assert load_gpu_platform("discrete", "gemm").logca.acceleration == 30.0  # the preset's A is what runs
    assert device_cycles("discrete", "gemm", g, c) == pytest.approx(host_cycles("gemm", g, c) / 30)
    _, bw = device_work("radix_sort", g)  # no flops: memory-bound at 144 GB/s
    assert roofline_cycles("discrete", "radix_sort", g) == pytest.approx(bw / 144e9 * f_hz, rel=1e-12)


def test_pipelining_overlaps_copies_with_compute():
    # a slow link and small overhead: copies (4.2 ms in and out at 2 GB/s) are comparable with compute
    # (290 g^0.94 / 30 cycles = 6.8 ms), so stages hide them; n = 1 pays both one after the other
    over = ["accelerators.gpu.interface.offload_overhead_cycles=1000",
            "accelerators.gpu.interface.bandwidth_bytes_per_s=2 GB/s"]
    g, f_hz = 2**22, 2.27e9
    t1 = {n: _run(DISCRETE, kernel_offload("radix_sort", g, 290.0, stages=n), over)[0] for n in (1, 2, 4, 8)}
    assert t1[2] < t1[1] and t1[4] < t1[2] and t1[8] < t1[4]
    assert t1[8] < 0.8 * t1[1]
    compute = host_cycles("radix_sort", g, 290.0) / 30
    copies = (g + output_bytes("radix_sort", g)) / 2e9 * f_hz
    assert compute + copies < t1[1] < 1.08 * (compute + copies)  # plus flushes, invalidations, launch
    # pipelining cannot beat the busier resource: full duplex, copies in and out run at once
    assert t1[8] >= max(compute, g / 2e9 * f_hz, output_bytes("radix_sort", g) / 2e9 * f_hz)


def test_full_duplex_link_overlaps_copies_in_and_out():
    # a copy-bound offload (0.5 GB/s link): with 8 stages, full duplex hides copy-out behind copy-in
    g, f_hz = 2**22, 2.27e9
    over = ["accelerators.gpu.interface.offload_overhead_cycles=1000",
            "accelerators.gpu.interface.bandwidth_bytes_per_s=0.5 GB/s"]
    copy_in, copy_out = g / 0.5e9 * f_hz, output_bytes("radix_sort", g) / 0.5e9 * f_hz
    trace = kernel_offload("radix_sort", g, 290.0, stages=8)
    full = _run(DISCRETE, trace, over)[0]
    half = _run(DISCRETE, trace, over + ["accelerators.gpu.interface.full_duplex=false"])[0]
    assert half >= copy_in + copy_out  # in and out take turns on the link
    assert max(copy_in, copy_out) <= full < 0.7 * (copy_in + copy_out)


def test_full_duplex_is_for_pcie_only():
    from simulator.errors import ConfigError

    with pytest.raises(ConfigError, match="full_duplex"):
        load_spec("configs/systems/logca_gpu_hsa.yaml", SystemSpec, ["accelerators.gpu.interface.full_duplex=true"])


def test_pipelined_discrete_gpu_pays_o_once_and_gains_like_tables_4_5_and_4_6():
    # 000 Tables 4.5-4.6: at o-dominated g the speedup is the same for every n (one set-up per offload); at large g
    # it grows with n. C and o were fitted to the n = 1 columns only, so the stage gains are a check.
    for kernel in ("gemm", "fft"):
        platform = load_gpu_platform("discrete", kernel)
        small = [simulate_point(platform, 2**16, n).speedup for n in (1, 2, 4)]
        assert max(small) / min(small) < 1.01, kernel
        table = PIPELINE_TABLES[kernel]
        for g in (2**22, 2**24):
            s = [simulate_point(platform, g, n).speedup for n in (1, 2, 4)]
            assert s[0] < s[1] < s[2], (kernel, g)
            for i in (1, 2):  # the gain of n stages over one, against the published gain
                published = table[g][i] / table[g][0]
                assert s[i] / s[0] == pytest.approx(published, rel=0.25), (kernel, g, i)


def test_calibrated_host_cost_file_matches_a_fresh_fit():
    from models.calibrate import load_platform_entries
    from simulator.studies.logca.gpu_calibration import KERNELS, calibrated_yaml, fit_discrete
    from simulator.studies.logca.gpu import CALIBRATED, system_path

    # The shipped file is what the calibration writes: the same header, keys and text, and the same
    # numbers to 1e-6 (a least-squares fit's last digits depend on the numpy / BLAS build).
    shipped, fresh = CALIBRATED.read_text(), calibrated_yaml()
    assert [ln for ln in shipped.splitlines() if ln.startswith("#")] == [
        ln for ln in fresh.splitlines() if ln.startswith("#")]
    _assert_same_tree(yaml.safe_load(shipped), yaml.safe_load(fresh))
    entries = load_platform_entries(CALIBRATED)
    for kernel in KERNELS:
        fit, stored = fit_discrete(kernel), entries[f"discrete_gpu_{kernel}"].params
        assert asdict(stored) == pytest.approx(asdict(fit.params), rel=1e-6), kernel
        assert fit.rms_relative < 0.35, kernel  # LogCA follows the n = 1 column it was fitted to
        assert load_gpu_platform("discrete", kernel).logca.overhead_cycles == stored.overhead_cycles
    apu = entries["apu_gemm"].params
    assert apu.overhead_cycles == pytest.approx(2 * entries["discrete_gpu_gemm"].params.overhead_cycles)  # 4e8 / 2e8
    # the HSA GPU runs the same host software, with its own system's o
    hsa = load_gpu_platform("hsa", "gemm").logca
    assert hsa.c_cycles_per_byte_beta == entries["discrete_gpu_gemm"].params.c_cycles_per_byte_beta
    hsa_system = load_spec(str(system_path("hsa")), SystemSpec).spec
    assert hsa.overhead_cycles == hsa_system.accelerators["gpu"].interface.offload_overhead_cycles


def test_calibration_of_a_preset_without_a_fixed_a_fits_beside_the_device_roofline(monkeypatch):
    # the same calibration for the C2070 without its preset's A: the device's roofline time and launch stand in for
    # C g^beta / A, and the entries' A is the roofline's at 64 MiB
    import simulator.studies.logca.gpu as gs
    import simulator.studies.logca.gpu_calibration as cal
    from simulator.runner import load_system

    def roofline_system(path, overrides=()):
        return load_system(path, tuple(overrides) + tuple(ROOFLINE))

    shipped = {k: cal.fit_discrete(k) for k in ("gemm", "fft")}
    monkeypatch.setattr(gs, "load_system", roofline_system)
    monkeypatch.setattr(cal, "load_system", roofline_system)
    assert cal.fixed_acceleration("discrete") == 0
    assert cal.acceleration_source("discrete", "gemm") == "A derived from the device's roofline at 67108864 B"
    for kernel in ("gemm", "fft"):
        fit = cal.fit_discrete(kernel)
        q = fit.params
        assert q.c_cycles_per_byte_beta != pytest.approx(shipped[kernel].params.c_cycles_per_byte_beta, rel=0.1)
        assert q.acceleration == pytest.approx(host_cycles(kernel, 2**26, q.c_cycles_per_byte_beta)
                                               / device_cycles("discrete", kernel, 2**26, q.c_cycles_per_byte_beta))
    # FFT follows its n = 1 column beside the roofline; GEMM cannot: the roofline's A rises with g (host C g^1.7
    # against 2 n^3 flops, g^1.5), so at 16 and 64 MiB the fit lies far above 000's plateau
    assert cal.fit_discrete("fft").rms_relative < 0.35
    gemm = cal.fit_discrete("gemm").relative_residuals
    assert gemm[-1] > gemm[-2] > 0.5
    overhead = cal.fit_discrete_overhead("radix_sort")
    crossing = cal.break_even_bytes(*cal.n1_column("radix_sort"))
    t1 = (overhead.params.overhead_cycles + overhead.params.latency * crossing
          + device_cycles("discrete", "radix_sort", crossing, 290.0))
    assert host_cycles("radix_sort", crossing, 290.0) / t1 == pytest.approx(1.0, rel=1e-9)


def test_radix_sort_overhead_puts_break_even_where_table_4_7_crosses_one():
    from models.calibrate import load_platform_entries
    from simulator.studies.logca.gpu import CALIBRATED, TABLE_4_3
    from simulator.studies.logca.gpu_calibration import break_even_bytes, fit_discrete_overhead, n1_column

    fit = fit_discrete_overhead("radix_sort")
    stored = load_platform_entries(CALIBRATED)["discrete_gpu_radix_sort"].params
    assert asdict(stored) == pytest.approx(asdict(fit.params), rel=1e-6)
    # only o is fitted: C stays the printed one, L the simulated link's, A the preset's
    printed = load_platform_entries(TABLE_4_3)["discrete_gpu_radix_sort"].params
    assert fit.params.c_cycles_per_byte_beta == printed.c_cycles_per_byte_beta == 290.0
    assert fit.params.acceleration == 30.0 and fit.params.beta == 0.94
    crossing = break_even_bytes(*n1_column("radix_sort"))
    assert 2**18 < crossing < 2**19  # 0.99 at 256 KiB, 1.66 at 512 KiB
    assert g1(fit.params) == pytest.approx(crossing, rel=1e-6)
    assert fit.params.overhead_cycles < printed.overhead_cycles / 5  # far below the GEMM row's 2e8 cycles
    platform = load_gpu_platform("discrete", "radix_sort").logca
    assert platform.overhead_cycles == stored.overhead_cycles and platform.c_cycles_per_byte_beta == 290.0
    assert break_even_bytes([1, 4], [0.5, 2.0]) == pytest.approx(2.0)  # midway in log g and log speedup
    with pytest.raises(ValueError, match="never cross 1"):
        break_even_bytes([1, 2], [0.5, 0.9])

def test_interface_evolution_gemm_discrete_apu_hsa():
    g_list = granularities(2**12, 2**20)
    fits, s = {}, {}
    for name in ("discrete", "apu", "hsa"):
        platform = load_gpu_platform(name, "gemm")
        pts = sweep(platform, g_list)
        fits[name] = calibrate(platform, pts)
        s[name] = [pt.speedup for pt in pts]
        # the fitted model follows the simulated speedups, not exactly: with the calibrated C the host's loads and
        # stores outweigh C g^beta at 4 KiB, and the HSA GPU's shared-memory accesses outweigh its compute at
        # 64-256 KiB, neither of which LogCA has
        assert fits[name].t1_rms_relative < 0.1, name
        for pt in pts:
            assert float(speedup(fits[name].params, pt.g_bytes)) == pytest.approx(pt.speedup, rel=0.25)
    assert fits["discrete"].params.latency_per_byte and not fits["hsa"].params.latency_per_byte
    # HSA (no copies, no driver call) breaks even far earlier than both copying GPUs
    at_64k = g_list.index(2**16)
    assert s["hsa"][at_64k] > 1.0 > s["discrete"][at_64k] > s["apu"][at_64k]
    assert g1(fits["hsa"].params) < g1(fits["discrete"].params) / 10 < g1(fits["apu"].params) / 10
    # Accelerometer on the fitted parameters: the latency region of the discrete GPU disappears on the APU and HSA
    grid = granularities(2**12, 2**26)
    assert 2**20 in latency_bottleneck_granularities(fits["discrete"].params, grid)
    assert not latency_bottleneck_granularities(fits["apu"].params, grid)
    # and with the printed L = 3000 cycles/B the discrete GPU has one too, the APU and HSA not
    assert latency_bottleneck_granularities(table_4_3_params("discrete", "gemm"), grid)
    assert not latency_bottleneck_granularities(table_4_3_params("apu", "gemm"), grid)
    assert not latency_bottleneck_granularities(fits["hsa"].params, grid)


def test_gpu_study_file_validates_and_bad_keys_are_named(tmp_path):
    from simulator.errors import ConfigError
    from simulator.studies.logca.gpu import load_gpu_study

    study = load_gpu_study()
    assert study.platforms == ("discrete", "apu", "hsa") and study.stages == (1, 2, 4, 8)
    assert study.stage_gain_granularities_bytes == (2**16, 2**20, 2**24, 2**26)
    bad = tmp_path / "bad.yaml"
    bad.write_text("study: logca_gpu\nplatforms: [discrete, tpu]\nkernel: gemm\nmin_granularity_bytes: 4 KiB\n"
                   "max_granularity_bytes: 64 MiB\npipelined_platform: discrete\npipelined_kernels: [gemm]\n"
                   "pipelined_min_bytes: 16 KiB\npipelined_max_bytes: 64 MiB\npipelined_capped_kernels: []\nstages: [0]\nstage_gain_kernel: gemm\nstage_gain_granularities_bytes: [65536]\n"
                   "max_stages: 8\n")
    with pytest.raises(ConfigError) as err:
        load_gpu_study(bad)
    text = str(err.value)
    assert "bad.yaml: platforms[1]" in text and "tpu" in text
    assert "bad.yaml: stages[0]" in text
    assert "bad.yaml: stage_gain_granularities_bytes[0]" in text and "no unit" in text


@pytest.mark.parametrize("key, value, expected", [
    ("max_stages", "1000000000000", "max_stages: 1000000000000; expected at most 8,192 for fft at 65,536 B"),
    ("stages", "[1, 1000000000]", "stages: 1000000000; expected at most 4,096 for gemm at 16,384 B"),
])
def test_a_stage_count_beyond_the_buffer_is_refused_before_the_points_are_listed(tmp_path, key, value, expected):
    _refused_with(tmp_path, key, value, expected)


@pytest.mark.parametrize("key, value, expected", [
    ("stage_gain_granularities_bytes", "[8 B]",
     "stage_gain_granularities_bytes: a buffer of 8 B for fft; expected buffers fft can run \\(g_bytes must be an "
     "integer >= 16 bytes"),
    ("pipelined_min_bytes", "4 B", "pipelined_min_bytes: a buffer of 4 B for gemm; expected buffers gemm can run"),
    ("min_granularity_bytes", "2 B", "min_granularity_bytes: a buffer of 2 B for gemm; expected buffers gemm can run"),
])
def test_a_buffer_a_kernel_cannot_run_is_refused_naming_its_key(tmp_path, key, value, expected):
    # a kernel needs two whole elements: a smaller buffer is refused at load, not by the generator's traceback
    _refused_with(tmp_path, key, value, expected)


def _refused_with(tmp_path, key: str, value: str, expected: str) -> None:
    """The shipped GPU study file with ``key: value`` is refused at load with a message matching ``expected``."""
    from simulator.errors import ConfigError
    from simulator.studies.logca.gpu import GPU_STUDY, load_gpu_study

    text = GPU_STUDY.read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text("\n".join(f"{key}: {value}" if line.startswith(f"{key}:") else line for line in text.split("\n")))
    with pytest.raises(ConfigError, match=expected):  # at load, before gpu_points lists a point
        load_gpu_study(bad)


def test_unpipelined_offload_charges_o_copies_and_compute_one_after_the_other():
    gemm = load_gpu_platform("discrete", "gemm")
    for g in (2**14, 2**20):
        b = offload_breakdown(gemm, g)
        assert b.copy_cycles > 0 and b.compute_cycles > 0
        assert b.other_cycles >= 0  # nothing overlapped away
        assert b.copy_cycles == pytest.approx(gemm.logca.latency * g, rel=1e-6)  # L from the same link


def test_a_faster_link_gains_most_on_the_discrete_gpu():
    # Accelerometer's test on the simulation itself, a 10x faster link: the discrete GPU gains > 10 % at 2 MiB,
    # less than 20 % because the host DRAM feeding the copies does not get faster; the APU < 2 %, HSA nothing
    gemm = load_gpu_platform("discrete", "gemm")
    assert 0.1 < simulated_latency_gain(gemm, 2**21) < 0.2
    assert simulated_latency_gain(gemm, 2**21) > simulated_latency_gain(gemm, 2**14)
    assert simulated_latency_gain(load_gpu_platform("apu", "gemm"), 2**21) < 0.02
    assert simulated_latency_gain(gemm, 2**18, bandwidth_bytes_per_s=5e8) > 0.2  # a 500 MB/s link
    assert simulated_latency_gain(load_gpu_platform("hsa", "gemm"), 2**18) == 0.0  # nothing copied
    # the threshold bandwidth of the model lies between the two
    per_byte = gemm.logca.latency / gemm.host_frequency_hz * 6e9
    bw = latency_region_bandwidth(gemm.logca, per_byte, gemm.host_frequency_hz, granularities(2**12, 2**26))
    assert 5e8 < bw < 6e10


def test_table_4_3_parameters_do_not_reproduce_tables_4_5_to_4_7():
    # the printed parameters miss the published radix-sort speedups by > 100x at 64 MiB
    from simulator.studies.logca.gpu import PIPELINE_TABLES, table_4_3_pipelined_speedup

    assert table_4_3_pipelined_speedup("radix_sort", 2**26, 1) < PIPELINE_TABLES["radix_sort"][2**26][0] / 100
    assert table_4_3_pipelined_speedup("gemm", 2**20, 1) == pytest.approx(
        float(speedup(table_4_3_params("discrete", "gemm"), 2**20)))
    with pytest.raises(ValueError, match="stages"):
        table_4_3_pipelined_speedup("gemm", 2**20, 0)


def test_pipelined_table_rows_cover_every_table_granularity():
    from simulator.studies.logca.gpu import PIPELINE_TABLES, pipelined_table_rows

    rows = pipelined_table_rows("radix_sort", stages=(1, 4), max_g_bytes=2**16)
    assert [(g, n) for g, n, _, _ in rows] == [(g, n) for g in PIPELINE_TABLES["radix_sort"] if g <= 2**16
                                               for n in (1, 4)]
    assert all(ref == PIPELINE_TABLES["radix_sort"][g][(1, 2, 4).index(n)] for g, n, _, ref in rows)


def test_command_line_reports_a_bad_study_file_and_exits_2(tmp_path, capsys):
    bad = tmp_path / "g.yaml"
    bad.write_text("study: logca_gpu\nfoo: 1\n")
    assert main(["--study", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: foo: unknown key" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def _assert_same_tree(a, b, where: str = "") -> None:
    """``a`` and ``b`` (parsed YAML) have the same keys, lists and strings, and numbers equal to 1e-6."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for key in a:
            _assert_same_tree(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_tree(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-6), where
    else:
        assert a == b, where


SMALL_GPU_STUDY = {
    "study": "logca_gpu", "platforms": ["discrete", "hsa"], "kernel": "gemm",
    "min_granularity_bytes": "4 KiB", "max_granularity_bytes": "64 KiB",
    "pipelined_platform": "discrete", "pipelined_kernels": ["gemm"], "pipelined_min_bytes": "16 KiB",
    "pipelined_max_bytes": "64 KiB", "pipelined_capped_kernels": [], "stages": [1, 2], "stage_gain_kernel": "fft",
    "stage_gain_granularities_bytes": ["64 KiB"], "max_stages": 2,
}


def test_gpu_study_command_writes_every_figure_and_a_deterministic_csv(tmp_path, capsys):
    import csv

    study = tmp_path / "small.yaml"
    study.write_text(yaml.safe_dump(SMALL_GPU_STUDY))
    for out in ("a", "b"):
        assert main(["--study", str(study), "--out", str(tmp_path / out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("discrete: L=") == 2 and printed.count("hsa: L=0 ") == 2  # HSA has no copies
    assert sorted(p.name for p in (tmp_path / "a").glob("*.png")) == sorted(
        ["gpu_case_study_gemm.png", "gpu_pipelined_fft_stages.png", "gpu_pipelined_gemm.png", "gpu_regions_gemm.png",
         "gpu_speedup_discrete_gemm.png", "gpu_speedup_hsa_gemm.png", "gpu_t1_breakdown_gemm.png"])
    table = (tmp_path / "a" / "gpu_figures.csv").read_bytes()
    assert table == (tmp_path / "b" / "gpu_figures.csv").read_bytes()  # same inputs, same bytes
    rows = list(csv.DictReader(table.decode().splitlines()))
    fitted = {(r["platform"], r["quantity"]) for r in rows if r["figure"] == "fit"}
    assert fitted == {(p, q) for p in ("discrete", "hsa")
                      for q in ("L", "o", "C", "A", "beta", "g1", "g_A/2", "latency_region_bandwidth")}
    pipelined = [r for r in rows if r["figure"] == "pipelined"]
    simulated = {(int(r["g_bytes"]), int(r["stages"])) for r in pipelined if r["source"] == "simulated"}
    assert simulated == {(g, n) for g in (2**14, 2**15, 2**16) for n in (1, 2)}
    published = {(int(r["g_bytes"]), int(r["stages"])): float(r["value"]) for r in pipelined
                 if r["source"].startswith("000 Tables")}
    # 000 Table 4.5 has 16 KiB and 64 KiB of the three buffers; stage columns 1 and 2 of its 1, 2, 4
    assert published == {(g, n): PIPELINE_TABLES["gemm"][g][n - 1] for g in (2**14, 2**16) for n in (1, 2)}
    point = simulate_point(load_gpu_platform("discrete", "gemm"), 2**16, 2)
    assert float(next(r["value"] for r in pipelined if r["source"] == "simulated" and r["g_bytes"] == str(2**16)
                      and r["stages"] == "2")) == pytest.approx(point.speedup, rel=1e-5)  # CSV holds 6 digits
