"""Simulated LogCA studies against the thesis' measurements (000 Table 4.4) and the LogCA model."""

from __future__ import annotations

import pytest

from simulator.logca_study import simulate_point, load_platform
from models.logca import g1

# 000 Table 4.4 (000:L1034): measured AES speedup on the UltraSPARC T2 with n crypto units
TABLE_4_4 = {
    16: (0.04, 0.15, 0.11, 0.1), 32: (0.08, 0.17, 0.16, 0.13), 64: (0.16, 0.2, 0.18, 0.19),
    128: (0.33, 0.27, 0.28, 0.31), 256: (0.63, 0.42, 0.47, 0.51), 512: (1.22, 0.63, 0.81, 0.99),
    1024: (2.30, 1.06, 1.49, 1.87), 2048: (4.10, 2.01, 2.79, 3.39), 4096: (6.70, 3.67, 5.10, 6.03),
    8192: (9.8, 6.68, 9.08, 10.8), 16384: (12.8, 11.8, 15.0, 16.8), 32768: (15.1, 17.0, 21.2, 22.6),
    65536: (16.6, 24.4, 27.1, 28.8),
}
N_UNITS = (1, 2, 4, 8)


@pytest.fixture(scope="module")
def t2_speedups():
    platform = load_platform("ultrasparc_t2", "aes")
    return {(g, n): simulate_point(platform, g, engines=n).speedup for g in TABLE_4_4 for n in N_UNITS}


def test_t2_single_unit_within_25_percent_of_table_4_4(t2_speedups):
    for g, row in TABLE_4_4.items():
        if g >= 64:
            assert t2_speedups[(g, 1)] == pytest.approx(row[0], rel=0.25), g


def test_t2_break_even_between_256_and_512_bytes(t2_speedups):
    assert t2_speedups[(256, 1)] < 1.0 < t2_speedups[(512, 1)]


def test_t2_several_units_lose_at_mid_and_win_at_large_granularity(t2_speedups):
    for n in (2, 4, 8):
        for g in (256, 512, 1024, 2048, 4096):
            assert t2_speedups[(g, n)] < t2_speedups[(g, 1)], (g, n)
        for g in (32768, 65536):
            assert t2_speedups[(g, n)] > t2_speedups[(g, 1)], (g, n)


def test_t2_model_break_even_matches_simulation(t2_speedups):
    platform = load_platform("ultrasparc_t2", "aes")
    g_one = g1(platform.logca)
    assert 256 < g_one < 512


# --- calibration round trip and interface evolution (AES, n = 1, 1 KiB .. 4 MiB) --------------------

from simulator.logca_study import CRYPTO_PLATFORMS, calibrate, granularities, overhead_cutoff_bytes, sweep  # noqa: E402
from models.logca import speedup  # noqa: E402


@pytest.fixture(scope="module")
def crypto_fits():
    out = {}
    for name in CRYPTO_PLATFORMS:
        platform = load_platform(name, "aes")
        points = sweep(platform, granularities(16, 4 * 2**20))
        out[name] = (platform, points, calibrate(platform, points))
    return out


def test_fitted_compute_parameters_match_the_presets(crypto_fits):
    for name, (platform, _, fit) in crypto_fits.items():
        p, q = fit.params, platform.logca
        assert p.c_cycles_per_byte_beta == pytest.approx(q.c_cycles_per_byte_beta, rel=0.10), name
        assert p.beta == pytest.approx(q.beta, rel=0.10), name
        assert p.acceleration == pytest.approx(q.acceleration, rel=0.10), name


def test_fitted_overhead_matches_where_it_is_visible(crypto_fits):
    # o is identifiable from g >= 1 KiB only where it is a sizeable share of T1 (T2, T3: o ~ 3e4 cycles)
    for name in ("ultrasparc_t2", "sparc_t3"):
        platform, _, fit = crypto_fits[name]
        assert fit.params.overhead_cycles == pytest.approx(platform.logca.overhead_cycles, rel=0.10), name


def test_fitted_speedup_follows_the_simulation(crypto_fits):
    for name, (_, points, fit) in crypto_fits.items():
        for pt in points:
            if pt.g_bytes >= 1024:
                assert float(speedup(fit.params, pt.g_bytes)) == pytest.approx(pt.speedup, rel=0.10), (name, pt.g_bytes)


def test_overhead_cutoff_shrinks_along_the_interface_evolution(crypto_fits):
    order = ("ultrasparc_t2", "sparc_t4_engine", "sparc_t4_instructions")
    cutoffs = [overhead_cutoff_bytes(crypto_fits[name][2].params) for name in order]
    assert cutoffs == sorted(cutoffs, reverse=True) and cutoffs[0] > 4 * cutoffs[-1]
