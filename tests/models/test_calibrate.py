"""Tests of the LogCA calibration fit and the parameter-table loader (models/calibrate.py)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from models.calibrate import (fit_complexity, fit_host_cost_to_speedups, fit_logca, fit_logca_to_speedups,
                             load_platform_entries, load_platforms)
from models.logca import LogCAParams, g1, speedup, time_accelerated, time_unaccelerated

TABLE = Path(__file__).resolve().parents[2] / "configs" / "presets" / "platforms" / "logca_table_4_3.yaml"
G = 2.0 ** np.arange(4, 26)  # 16 B .. 32 MiB, as profiled in 000 section 4.3
NOISE = 0.003  # relative, per sample


def _synthesise(p: LogCAParams, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    t0 = np.asarray(time_unaccelerated(p, G)) * (1.0 + noise * rng.standard_normal(G.size))
    t1 = np.asarray(time_accelerated(p, G)) * (1.0 + noise * rng.standard_normal(G.size))
    return t0, t1


def _assert_recovered(fit: LogCAParams, true: LogCAParams, rel: float) -> None:
    for field in ("latency", "overhead_cycles", "c_cycles_per_byte_beta", "acceleration", "beta"):
        assert getattr(fit, field) == pytest.approx(getattr(true, field), rel=rel), field
    assert fit.latency_per_byte == true.latency_per_byte


CASES = {
    # on-chip, independent latency, L known from a micro-benchmark (000 section 4.3)
    "t2_aes": (LogCAParams(1500.0, 2.9e4, 90.0, 19.0, 1.01), {"latency": 1500.0}),
    "t4_instructions_aes": (LogCAParams(4.0, 111.0, 32.0, 12.0, 1.01), {"latency": 4.0}),
    # copies, dependent latency, super-linear kernel: everything fitted
    "gpu_fft_like": (LogCAParams(100.0, 2e5, 290.0, 30.0, 1.2, True), {}),
    # copies, linear kernel: A supplied (peak-FLOP ratio, 000 section 4.3)
    "pcie_aes_like": (LogCAParams(3.0, 2e6, 174.0, 30.0, 1.01, True), {"acceleration": 30.0}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip_exact(case: str) -> None:
    true, known = CASES[case]
    t0, t1 = _synthesise(true, 0.0, 0)
    fit = fit_logca(G, t0, t1, latency_per_byte=true.latency_per_byte, **known)
    _assert_recovered(fit.params, true, 1e-6)
    assert fit.t0_rms_relative < 1e-9 and fit.t1_rms_relative < 1e-9
    assert not fit.latency_lumped


@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip_with_noise(case: str) -> None:
    true, known = CASES[case]
    t0, t1 = _synthesise(true, NOISE, 7)
    fit = fit_logca(G, t0, t1, latency_per_byte=true.latency_per_byte, **known)
    _assert_recovered(fit.params, true, 0.02)
    # residuals are of the size of the noise
    assert NOISE / 3 < fit.t1_rms_relative < 3 * NOISE
    assert len(fit.t0_relative_residuals) == G.size


def test_independent_latency_without_l_is_lumped_into_overhead() -> None:
    true = LogCAParams(1500.0, 2.9e4, 90.0, 19.0, 1.0)
    t0, t1 = _synthesise(true, 0.0, 0)
    fit = fit_logca(G, t0, t1, latency_per_byte=False)
    assert fit.latency_lumped
    assert fit.params.latency == 0.0
    assert fit.params.overhead_cycles == pytest.approx(2.9e4 + 1500.0, rel=1e-9)


def test_linear_kernel_with_copies_needs_a_or_l() -> None:
    true = LogCAParams(3.0, 2e6, 174.0, 30.0, 1.0, True)
    t0, t1 = _synthesise(true, 0.0, 0)
    with pytest.raises(ValueError, match="not identifiable"):
        fit_logca(G, t0, t1, latency_per_byte=True)
    # with noise the fitted beta is not exactly 1, and L and 1/A trade off
    noisy_t0, noisy_t1 = _synthesise(true, NOISE, 3)
    with pytest.raises(ValueError, match="not identifiable"):
        fit_logca(G, noisy_t0, noisy_t1, latency_per_byte=True)
    fit = fit_logca(G, t0, t1, latency_per_byte=True, latency=3.0)
    assert fit.params.acceleration == pytest.approx(30.0, rel=1e-6)


def test_fit_complexity_and_validation() -> None:
    cx = fit_complexity(G, 72.0 * G**0.97)
    assert cx.c_cycles_per_byte_beta == pytest.approx(72.0) and cx.beta == pytest.approx(0.97)
    with pytest.raises(ValueError, match="t0_cycles"):
        fit_complexity(G, -G)
    with pytest.raises(ValueError, match="t1_cycles"):
        fit_logca(G, G, G[:-1], latency_per_byte=False)
    with pytest.raises(ValueError, match="latency_per_byte"):
        fit_logca(G, G, G, latency_per_byte=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="acceleration"):
        fit_logca(G, G, G, latency_per_byte=False, acceleration=-1.0)


# --- the Table 4.3 data file ------------------------------------------------------


def test_a_table_read_again_is_a_mapping_of_its_own_and_follows_the_file(tmp_path) -> None:
    entries = load_platform_entries(TABLE)
    entries.pop("ultrasparc_t2_aes")  # a caller changing its mapping
    assert "ultrasparc_t2_aes" in load_platform_entries(TABLE)
    copy = tmp_path / "table.yaml"
    copy.write_text(Path(TABLE).read_text())
    assert load_platform_entries(copy) == load_platform_entries(TABLE)
    copy.write_text(Path(TABLE).read_text().replace("ultrasparc_t2_aes:", "ultrasparc_t2_aes_renamed:", 1))
    assert "ultrasparc_t2_aes_renamed" in load_platform_entries(copy)


def test_table_4_3_loads_with_cited_sources() -> None:
    entries = load_platform_entries(TABLE)
    assert len(entries) == 19
    for entry in entries.values():
        assert "000 Table 4.3" in entry.source
    t2 = entries["ultrasparc_t2_aes"]
    assert t2.host_frequency_hz == 1.16e9
    assert t2.params == LogCAParams(1500.0, 2.9e4, 90.0, 19.0, 1.01, False)
    params = load_platforms(TABLE)
    assert params["sandy_bridge_aesni_aes"] == LogCAParams(3.0, 10.0, 35.0, 6.0, 1.01, False)
    assert params["apu_gemm"].latency_per_byte and params["apu_gemm"].beta == 1.7
    # the on-chip crypto entries break even (000 section 4.4.1)
    for key in ("ultrasparc_t2_sha", "sparc_t3_aes", "sparc_t4_engine_sha"):
        assert math.isfinite(g1(params[key]))


GOOD_ENTRY = """
platforms:
  x:
    platform: P
    kernel: K
    host_frequency_hz: 1.0e+9
    latency: 1.0
    latency_per_byte: false
    overhead_cycles: 10.0
    c_cycles_per_byte_beta: 2.0
    acceleration: 4.0
    beta: 1.0
    source: test
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_loader_accepts_a_minimal_entry(tmp_path: Path) -> None:
    assert load_platforms(_write(tmp_path, GOOD_ENTRY))["x"] == LogCAParams(1.0, 10.0, 2.0, 4.0, 1.0, False)


def test_a_frequency_in_exponent_form_is_a_number_of_hz(tmp_path: Path) -> None:
    """1e9 (a string to YAML 1.1) is a bare number of Hz, as 1.0e+9 is, not a value that lacks its unit."""
    table = _write(tmp_path, GOOD_ENTRY.replace("host_frequency_hz: 1.0e+9", "host_frequency_hz: 1e9"))
    assert load_platform_entries(table)["x"].host_frequency_hz == 1e9


@pytest.mark.parametrize(
    "text, message",
    [
        (GOOD_ENTRY.replace("    beta: 1.0\n", "    beta: 1.0\n    betta: 2.0\n"), "unknown key 'betta'"),
        (GOOD_ENTRY.replace("    beta: 1.0\n", ""), "missing key 'beta'"),
        (GOOD_ENTRY.replace("    beta: 1.0\n", "    beta: 1.0\n    beta: 2.0\n"), "beta: duplicate key"),
        (GOOD_ENTRY.replace("acceleration: 4.0", "acceleration: -4.0"), "acceleration"),
        (GOOD_ENTRY.replace("host_frequency_hz: 1.0e+9", "host_frequency_hz: 1e9 B"), "host_frequency_hz"),
        (GOOD_ENTRY.replace("latency_per_byte: false", "latency_per_byte: 0"), "latency_per_byte"),
        ("platformz: {}\n", "platforms"),
    ],
)
def test_loader_rejects_bad_tables(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_platforms(_write(tmp_path, text))


def test_fit_to_speedups_recovers_c_and_o_with_l_a_and_beta_given():
    truth = LogCAParams(latency=0.75, latency_per_byte=True, overhead_cycles=3e6, c_cycles_per_byte_beta=0.25,
                        acceleration=30.0, beta=1.2)
    g = 2.0 ** np.arange(14, 27, 2)
    fit = fit_logca_to_speedups(g, speedup(truth, g), latency_cycles_per_byte=0.75, acceleration=30.0, beta=1.2)
    assert fit.params.c_cycles_per_byte_beta == pytest.approx(0.25, rel=1e-9)
    assert fit.params.overhead_cycles == pytest.approx(3e6, rel=1e-9)
    assert fit.rms_relative < 1e-9
    # the supplied L sets the scale: twice the L, twice C and o, the same speedups
    double = fit_logca_to_speedups(g, speedup(truth, g), latency_cycles_per_byte=1.5, acceleration=30.0, beta=1.2)
    assert double.params.c_cycles_per_byte_beta == pytest.approx(0.5, rel=1e-9)
    assert double.params.overhead_cycles == pytest.approx(6e6, rel=1e-9)


def test_fit_host_cost_recovers_c_and_o_beside_the_device_s_own_time():
    # a device whose time D(g) is its own (here g^1.5, a GEMM's n^3 in the bytes of its matrices) against a host
    # cost C g^1.7: the fit recovers C and o exactly, and A follows at the largest g
    g = 2.0 ** np.arange(14, 27, 2)
    device = 1e-3 * g**1.5 + 1e4
    truth_s = 4e-4 * g**1.7 / (5e5 + 0.5675 * g + device)
    fit = fit_host_cost_to_speedups(g, truth_s, latency_cycles_per_byte=0.5675, device_cycles=device, beta=1.7)
    assert fit.params.c_cycles_per_byte_beta == pytest.approx(4e-4, rel=1e-9)
    assert fit.params.overhead_cycles == pytest.approx(5e5, rel=1e-6)
    assert fit.params.acceleration == pytest.approx(4e-4 * g[-1] ** 1.7 / device[-1], rel=1e-9)
    assert fit.rms_relative < 1e-9
    with pytest.raises(ValueError, match="device_cycles must have 7 samples"):
        fit_host_cost_to_speedups(g, truth_s, latency_cycles_per_byte=0.5675, device_cycles=device[:3], beta=1.7)
    with pytest.raises(ValueError, match="beta"):
        fit_host_cost_to_speedups(g, truth_s, latency_cycles_per_byte=0.5675, device_cycles=device, beta=0.0)


def test_fit_to_speedups_rejects_what_logca_cannot_follow():
    g = [2.0**14, 2.0**20]
    with pytest.raises(ValueError, match="below acceleration"):
        fit_logca_to_speedups(g, [1.0, 40.0], latency_cycles_per_byte=1.0, acceleration=30.0, beta=1.0)
    with pytest.raises(ValueError, match="latency_cycles_per_byte"):
        fit_logca_to_speedups(g, [1.0, 2.0], latency_cycles_per_byte=0.0, acceleration=30.0, beta=1.0)
    with pytest.raises(ValueError, match="speedups"):
        fit_logca_to_speedups(g, [1.0, -2.0], latency_cycles_per_byte=1.0, acceleration=30.0, beta=1.0)
