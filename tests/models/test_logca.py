"""Tests of the LogCA performance and energy models (models/logca.py)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.calibrate import load_platforms
from models.logca import (
    LogCAEnergyParams,
    LogCAParams,
    efficiency,
    efficiency_bound,
    energy_accelerated,
    energy_unaccelerated,
    g1,
    g1_closed_form,
    g1_energy,
    g1_energy_closed_form,
    g_half,
    g_half_closed_form,
    g_half_energy,
    g_half_energy_closed_form,
    granularity_for_speedup,
    parallel_speedup,
    parallel_speedup_equal_split,
    parallel_time,
    pipelined_speedup,
    pipelined_speedup_heterogeneous,
    pipelined_speedup_limit,
    serial_speedup,
    speedup,
    speedup_bound,
    speedup_efficiency_product,
    time_accelerated,
    time_unaccelerated,
)

TABLE = Path(__file__).resolve().parents[2] / "configs" / "presets" / "platforms" / "logca_table_4_3.yaml"


@pytest.fixture(scope="module")
def platforms() -> dict[str, LogCAParams]:
    return load_platforms(TABLE)


# --- validation ------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value",
    [
        ("latency", -1.0),
        ("overhead_cycles", math.nan),
        ("c_cycles_per_byte_beta", 0.0),
        ("acceleration", 0.0),
        ("beta", 0.0),
        ("beta", math.inf),
        ("latency_per_byte", 1),
    ],
)
def test_params_reject_bad_values_naming_the_field(field: str, value: object) -> None:
    kwargs = dict(latency=1.0, overhead_cycles=1.0, c_cycles_per_byte_beta=1.0, acceleration=2.0, beta=1.0)
    kwargs[field] = value
    with pytest.raises(ValueError, match=field):
        LogCAParams(**kwargs)


def test_granularity_must_be_positive() -> None:
    p = LogCAParams(1.0, 1.0, 1.0, 2.0)
    with pytest.raises(ValueError, match="g_bytes"):
        speedup(p, [16.0, 0.0])


# --- published break-even metrics ----------------------------------------------


def test_t2_aes_g1_and_g_half_match_the_thesis(platforms: dict[str, LogCAParams]) -> None:
    # The on-chip T2 unit has granularity-independent latency (000:L744); the
    # published 358 B and 6439 B follow from beta = 1 (AES is O(n), 000 Table 3.1).
    t2 = dataclasses.replace(platforms["ultrasparc_t2_aes"], beta=1.0)
    assert not t2.latency_per_byte
    assert g1(t2) == pytest.approx(358.0, rel=0.02)
    assert g_half(t2) == pytest.approx(6439.0, rel=0.02)
    # g_{A/2} = (A - 1)^(1/beta) g1 (000 eq. 4.9)
    assert g_half(t2) == pytest.approx((t2.acceleration - 1.0) * g1(t2), rel=1e-9)


def test_t4_instruction_aes_g1(platforms: dict[str, LogCAParams]) -> None:
    t4 = dataclasses.replace(platforms["sparc_t4_instructions_aes"], beta=1.0)
    assert g1(t4) == pytest.approx(3.9, rel=0.02)


def test_metrics_are_roots_of_the_speedup(platforms: dict[str, LogCAParams]) -> None:
    for name, p in platforms.items():
        for target, g in ((1.0, g1(p)), (p.acceleration / 2.0, g_half(p))):
            if math.isinf(g):
                continue
            assert speedup(p, g) == pytest.approx(target, rel=1e-9), name
            assert speedup(p, g * (1 - 1e-6)) < target, name  # the first crossing


def test_independent_closed_forms_are_exact_for_any_beta(platforms: dict[str, LogCAParams]) -> None:
    for name, p in platforms.items():
        if p.latency_per_byte:
            continue
        assert g1(p) == pytest.approx(g1_closed_form(p), rel=1e-9), name
        assert g_half(p) == pytest.approx(g_half_closed_form(p), rel=1e-9), name


def test_dependent_printed_forms_exact_only_for_beta_one() -> None:
    base = LogCAParams(latency=3.0, overhead_cycles=2e5, c_cycles_per_byte_beta=174.0, acceleration=30.0, latency_per_byte=True)
    assert g1_closed_form(base) == pytest.approx(g1(base), rel=1e-12)
    assert g_half_closed_form(base) == pytest.approx(g_half(base), rel=1e-12)
    for beta in (0.94, 1.2, 1.7):
        p = dataclasses.replace(base, beta=beta)
        assert math.isfinite(g1(p))
        assert abs(g1_closed_form(p) / g1(p) - 1.0) > 0.01, beta


def test_never_reached_returns_inf(platforms: dict[str, LogCAParams]) -> None:
    # Dependent latency, beta = 1, C / L < 1: no break-even (000 eq. 4.13 condition).
    assert g1(LogCAParams(2.0, 10.0, 1.0, 30.0, 1.0, True)) == math.inf
    # Binary search on the discrete GPU: sub-linear, C / L < 7 (000 section 4.4.3).
    assert g1(platforms["discrete_gpu_binary_search"]) == math.inf
    # A target at or above A is never reached with latency or overhead.
    p = LogCAParams(1.0, 1.0, 1.0, 4.0)
    assert granularity_for_speedup(p, 4.0) == math.inf
    # Sub-linear, dependent, with a peak above the target: first crossing found.
    p = LogCAParams(0.01, 100.0, 50.0, 10.0, 0.5, True)
    g = g1(p)
    assert math.isfinite(g) and speedup(p, g) == pytest.approx(1.0, rel=1e-9)


# --- identities --------------------------------------------------------------


def test_speedup_is_t0_over_t1_and_vectorised() -> None:
    p = LogCAParams(500.0, 435.0, 32.0, 12.0, 1.01)
    g = 2.0 ** np.arange(4, 26)
    s = speedup(p, g)
    assert isinstance(s, np.ndarray) and s.shape == g.shape
    np.testing.assert_allclose(s, time_unaccelerated(p, g) / time_accelerated(p, g), rtol=1e-14)
    assert speedup(p, 1024.0) == pytest.approx(float(s[6]))
    assert isinstance(speedup(p, 1024.0), float)


def test_independent_limit_is_acceleration() -> None:
    p = LogCAParams(1500.0, 2.9e4, 90.0, 19.0, 1.01)
    assert speedup(p, 1e15) == pytest.approx(19.0, rel=1e-6)
    g = 2.0 ** np.arange(4, 40)
    assert np.all(np.diff(speedup(p, g)) > 0)
    assert np.all(speedup(p, g) < speedup_bound(p, g))


@pytest.mark.parametrize("beta", [0.5, 0.94, 1.0, 1.2, 1.7])
def test_dependent_speedup_bounded_by_intensity(beta: float) -> None:
    p = LogCAParams(3.0, 2e5, 174.0, 30.0, beta, True)
    g = 2.0 ** np.arange(4, 40)
    assert np.all(speedup(p, g) < speedup_bound(p, g))
    # With A -> inf and g -> inf the bound (C/L) g^(beta-1) is approached (000 eq. 4.11).
    fast = dataclasses.replace(p, acceleration=1e12)
    big = 2.0**40
    ratio = speedup(fast, big) / speedup_bound(fast, big)
    if beta <= 1.0:
        assert ratio == pytest.approx(1.0, rel=1e-3)
    else:
        assert ratio < 1.0


@settings(max_examples=60, deadline=None)
@given(
    latency=st.floats(0.0, 1e4),
    overhead=st.floats(1.0, 1e8),
    c=st.floats(0.1, 1e3),
    a=st.floats(1.5, 100.0),
    beta=st.floats(0.3, 2.0),
    per_byte=st.booleans(),
)
def test_metrics_property(latency: float, overhead: float, c: float, a: float, beta: float, per_byte: bool) -> None:
    p = LogCAParams(latency, overhead, c, a, beta, per_byte)
    for target in (1.0, a / 2.0):
        g = granularity_for_speedup(p, target)
        if math.isinf(g):
            grid = 2.0 ** np.linspace(-20, 200, 2000)
            assert np.all(speedup(p, grid) < target * (1 + 1e-9))
        else:
            assert speedup(p, g) == pytest.approx(target, rel=1e-7)
            assert speedup(p, g * 0.999) < target


# --- measured data: 000 Table 4.4, n = 1 ---------------------------------------

# 000 Table 4.4 (000:L1034-1048): measured AES speedup on UltraSPARC T2, one unit.
TABLE_4_4_N1 = {
    16: 0.04, 32: 0.08, 64: 0.16, 128: 0.33, 256: 0.63, 512: 1.22, 1024: 2.30,
    2048: 4.10, 4096: 6.70, 8192: 9.8, 16384: 12.8, 32768: 15.1, 65536: 16.6,
}


def test_t2_aes_curve_tracks_table_4_4(platforms: dict[str, LogCAParams]) -> None:
    # The thesis reports that LogCA follows the measured AES curves (000
    # Figure 4.5, 000:L796); the Table 4.3 parameters over-predict by 4-20 %.
    p = platforms["ultrasparc_t2_aes"]
    g = np.array(list(TABLE_4_4_N1), dtype=float)
    measured = np.array(list(TABLE_4_4_N1.values()))
    deviation = speedup(p, g) / measured - 1.0
    assert np.all(np.abs(deviation) < 0.25), deviation
    # and it grows with g like the measurement (break-even between 256 B and 512 B)
    assert 256 < g1(p) < 512


# --- multiple accelerators ---------------------------------------------------------


def test_parallel_equal_split_reduces_to_eq_4_19() -> None:
    p = LogCAParams(3.0, 1e4, 174.0, 30.0, 1.0, True)
    g, n = 65536.0, 4
    expected = p.c_cycles_per_byte_beta * g / (
        n * p.overhead_cycles + p.latency * g / n + p.c_cycles_per_byte_beta * g / (n * p.acceleration)
    )
    assert parallel_speedup_equal_split(p, g, n) == pytest.approx(expected, rel=1e-12)
    assert parallel_speedup_equal_split(p, g, 1) == pytest.approx(speedup(p, g), rel=1e-12)
    # the general eq. 4.17 with identical accelerators and equal parts agrees
    t = parallel_time([p] * n, [g / n] * n)
    assert parallel_speedup([p] * n, [g / n] * n, float(time_unaccelerated(p, g))) == pytest.approx(expected)
    assert t == pytest.approx(float(time_unaccelerated(p, g)) / expected)


def test_parallel_small_overhead_approaches_n_a() -> None:
    p = LogCAParams(0.0, 1e-9, 100.0, 10.0, 1.0, False)
    assert parallel_speedup_equal_split(p, 1e9, 8) == pytest.approx(80.0, rel=1e-6)  # 000 eq. 4.20


def test_parallel_time_uses_lumped_overheads() -> None:
    fast = LogCAParams(0.0, 10.0, 1.0, 2.0)
    slow = LogCAParams(0.0, 1000.0, 1.0, 2.0)
    # second accelerator starts after o1 + o2 (000 section 4.5.1)
    assert parallel_time([fast, slow], [100.0, 1.0]) == pytest.approx(max(10 + 50, 1010 + 0.5))
    with pytest.raises(ValueError, match="parts_bytes"):
        parallel_time([fast], [1.0, 2.0])


def test_serial_and_pipelined_heterogeneous() -> None:
    a = LogCAParams(2.0, 100.0, 10.0, 5.0, 1.0, True)
    b = LogCAParams(1.0, 300.0, 20.0, 8.0, 1.2, True)
    parts = [1000.0, 500.0]
    t0 = 10.0 * 1000 + 20.0 * 500**1.2
    serial = 100 + 2 * 1000 + 10.0 * 1000 / 5 + 300 + 1 * 500 + 20.0 * 500**1.2 / 8
    assert serial_speedup([a, b], parts) == pytest.approx(t0 / serial)  # 000 eq. 4.24
    piped = 300 + max(2000.0, 500.0) + 10.0 * 1000 / 5 + 20.0 * 500**1.2 / 8
    assert pipelined_speedup_heterogeneous([a, b], parts) == pytest.approx(t0 / piped)  # 000 eq. 4.25
    assert serial_speedup([a], [1000.0]) == pytest.approx(speedup(a, 1000.0))


def test_pipelined_forms() -> None:
    g = 4096.0
    p_overhead = LogCAParams(1.0, 5e5, 10.0, 20.0, 1.0, False)  # o >> L1, o > X
    p_latency = LogCAParams(200.0, 10.0, 10.0, 20.0, 1.0, True)  # L1 >> o
    p_small = LogCAParams(1.0, 10.0, 100.0, 4.0, 1.0, False)  # o, L1 << X
    for p in (p_overhead, p_latency, p_small):
        assert pipelined_speedup(p, g, 1) == pytest.approx(speedup(p, g), rel=1e-12)
        assert pipelined_speedup(p, g, 10**8) == pytest.approx(pipelined_speedup_limit(p, g), rel=1e-6)
    t0 = 100.0 * g
    x = t0 / 4.0
    assert pipelined_speedup(p_small, g, 8) == pytest.approx(8 * t0 / (1.0 + 10.0 + 8 * x))  # 000 eq. 4.30
    assert pipelined_speedup_limit(p_small, g) == pytest.approx(4.0)  # 000 eq. 4.31
    assert pipelined_speedup_limit(p_overhead, g) == pytest.approx(10.0 * g / 5e5)  # 000 eq. 4.27
    assert pipelined_speedup_limit(p_latency, g) == pytest.approx(10.0 * g / (200.0 * g))  # 000 eq. 4.29
    with pytest.raises(ValueError, match="n"):
        pipelined_speedup(p_small, g, 0)


# --- LogCA^e ---------------------------------------------------------------------------


def test_energy_model_and_sep() -> None:
    pe = LogCAEnergyParams(
        latency_energy_j_per_byte=2e-9, overhead_energy_j=1e-3, c_energy_j_per_byte_beta=5e-8, energy_acceleration=10.0
    )
    p = LogCAParams(3.0, 2e5, 174.0, 30.0, 1.0, True)
    g = 2.0 ** np.arange(10, 30)
    e0, e1 = energy_unaccelerated(pe, g), energy_accelerated(pe, g)
    np.testing.assert_allclose(e1, 1e-3 + 2e-9 * g + 5e-8 * g / 10.0, rtol=1e-14)  # 000 eq. 5.2
    np.testing.assert_allclose(efficiency(pe, g), e0 / e1, rtol=1e-14)
    assert np.all(efficiency(pe, g) < efficiency_bound(pe, g))
    edp_ratio = (time_unaccelerated(p, g) * e0) / (time_accelerated(p, g) * e1)
    np.testing.assert_allclose(speedup_efficiency_product(p, pe, g), edp_ratio, rtol=1e-12)  # 000 eq. 5.8
    # printed 5.6 / 5.7 are exact at beta = 1
    assert g1_energy(pe) == pytest.approx(g1_energy_closed_form(pe), rel=1e-12)
    assert g_half_energy(pe) == pytest.approx(g_half_energy_closed_form(pe), rel=1e-12)
    assert efficiency(pe, g1_energy(pe)) == pytest.approx(1.0, rel=1e-9)
    with pytest.raises(ValueError, match="energy_acceleration"):
        LogCAEnergyParams(1e-9, 1e-3, 1e-8, 0.0)
