"""Simulated LogCA studies against the thesis' measurements (000 Table 4.4) and the LogCA model."""

from __future__ import annotations

import pytest

from simulator.studies.logca.crypto import check_overhead, load_platform, simulate_point
from models.logca import g1

# 000 Table 4.4 (000:L1032-1048): measured AES speedup on the UltraSPARC T2 with n crypto units
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

from simulator.studies.logca.crypto import (  # noqa: E402
    CRYPTO_PLATFORMS, EVOLUTION_PLATFORMS, PCIE_CARD, calibrate, calibrate_overhead, granularities,
    overhead_cutoff_bytes, sweep)
from models.logca import speedup  # noqa: E402

SHA_PLATFORMS = ("ultrasparc_t2", "sparc_t3", "sparc_t4_engine", "sparc_t4_instructions")


def _fits(names, kernel):
    out = {}
    for name in names:
        platform = load_platform(name, kernel)
        points = sweep(platform, granularities(16, 4 * 2**20))
        out[name] = (platform, points, calibrate(platform, points))
    return out


@pytest.fixture(scope="module")
def crypto_fits():
    return _fits((PCIE_CARD,) + CRYPTO_PLATFORMS, "aes")


@pytest.fixture(scope="module")
def sha_fits():
    return _fits(SHA_PLATFORMS, "sha")


def test_fitted_compute_parameters_match_the_presets(crypto_fits, sha_fits):
    for name, (platform, _, fit) in list(crypto_fits.items()) + [(f"{k} sha", v) for k, v in sha_fits.items()]:
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
    # 000 Fig. 6.11 (000:L1469): the overhead region shrinks from the PCIe card (a) to the T4 instructions (e)
    cutoffs = [overhead_cutoff_bytes(crypto_fits[name][2].params) for name in EVOLUTION_PLATFORMS]
    assert all(a > b for a, b in zip(cutoffs, cutoffs[1:])), dict(zip(EVOLUTION_PLATFORMS, cutoffs))
    assert cutoffs[0] > 4 * cutoffs[1] and cutoffs[1] > 4 * cutoffs[3]


# --- per-kernel overhead (000 Table 4.3: o differs between AES and SHA on one platform) -----------------


def test_sha_overhead_is_recovered_per_kernel(sha_fits):
    for name, (platform, points, fit) in sha_fits.items():
        o_table = platform.logca.overhead_cycles
        # o read as the g -> 0 limit of T1, with L, C, beta, A of the g >= 1 KiB fit
        assert calibrate_overhead(fit.params, points) == pytest.approx(o_table, rel=0.10), name
        if name != "sparc_t4_instructions":  # there the engine's linear cost vs C g^0.97 / A pulls the joint fit
            assert fit.params.overhead_cycles == pytest.approx(o_table, rel=0.15), name


def test_sha_speedup_follows_table_4_3(sha_fits):
    for name, (platform, points, _) in sha_fits.items():
        for pt in points:
            if pt.g_bytes >= 1024:
                assert pt.speedup == pytest.approx(float(speedup(platform.logca, pt.g_bytes)), rel=0.15), (name, pt.g_bytes)


def test_small_g_overhead_is_closer_for_tightly_coupled_units(crypto_fits):
    # o under 4 % of T1 at 1 KiB: the g >= 1 KiB fit cannot see it; the small-g limit is nearer the table
    for name in ("sparc_t4_engine", "sparc_t4_instructions", "sandy_bridge_aesni"):
        platform, points, fit = crypto_fits[name]
        o_table = platform.logca.overhead_cycles
        o_small = calibrate_overhead(fit.params, points)
        assert abs(o_small - o_table) < abs(fit.params.overhead_cycles - o_table), name
    for name in ("ultrasparc_t2", "sparc_t3"):
        platform, points, fit = crypto_fits[name]
        assert calibrate_overhead(fit.params, points) == pytest.approx(platform.logca.overhead_cycles, rel=0.02)


# --- where a fitted o parts from the preset's: the per-request account (check_overhead) -------------------

@pytest.fixture(scope="module")
def overhead_checks(crypto_fits, sha_fits):
    out = {}
    for kernel, fits in (("aes", crypto_fits), ("sha", sha_fits)):
        for name, (platform, points, fit) in fits.items():
            out[(name, kernel)] = check_overhead(platform, points, fit)
    return out


def test_warm_buffers_take_the_cold_output_line_out_of_the_small_g_overhead(overhead_checks):
    for (name, kernel), c in overhead_checks.items():
        # the first execution misses on its output line: at 16 B (a digest of 32 B) the output covers it in part
        assert c.cold_extra_cycles > 0, (name, kernel)
    # with the cold line the small-g read was 1.26 (T4 engine) and 1.66 (T4 instructions) times the preset's o
    for name in ("sparc_t4_engine", "sparc_t4_instructions"):
        c = overhead_checks[(name, "aes")]
        assert c.o_small_g_cycles == pytest.approx(c.o_preset_cycles, rel=0.20), name


def test_warm_sweep_is_what_the_study_times():
    platform = load_platform("sparc_t4_instructions", "aes")
    warm, cold = simulate_point(platform, 16), simulate_point(platform, 16, warm=False)
    assert warm.t1_cycles < cold.t1_cycles and warm.t0_cycles <= cold.t0_cycles


def test_fitted_overhead_gap_of_the_fastest_units_is_the_engine_cost_shape(overhead_checks):
    # o of 10-111 cycles is under 4 % of T1 at 1 KiB; the engine's cost is linear in blocks while the model's
    # compute term is C g^beta / A (beta 1.01 or 0.97): a fit of T1 = o + L + engine work alone moves o as much
    for key in (("sparc_t4_instructions", "aes"), ("sandy_bridge_aesni", "aes"), ("sparc_t4_instructions", "sha")):
        c = overhead_checks[key]
        gap = c.o_fit_cycles - c.o_preset_cycles
        assert abs(c.o_fit_cycles - c.o_fit_engine_only_cycles) < 0.15 * abs(gap), key
    # the T4 engine's 1 KiB chunks add their first read and last write: both effects, each a real share
    c = overhead_checks[("sparc_t4_engine", "aes")]
    assert c.o_preset_cycles < c.o_fit_engine_only_cycles < c.o_fit_cycles
    assert c.o_fit_cycles - c.o_fit_engine_only_cycles == pytest.approx(c.data_path_fit_min_cycles, rel=0.25)
    assert "o fit/preset" in c.explanation() and "000:L481" in c.explanation()


# --- the off-chip PCIe crypto card -------------------------------------------------------------------


def test_pcie_card_never_breaks_even(crypto_fits):
    # 000:L816: g1 of the PCIe crypto card does not exist
    platform, points, fit = crypto_fits[PCIE_CARD]
    assert max(pt.speedup for pt in points) < 1.0
    assert fit.params.c_cycles_per_byte_beta < fit.params.latency  # C / L < 1: copies cost more than the software


def test_pcie_card_fit_recovers_its_system(crypto_fits):
    platform, _, fit = crypto_fits[PCIE_CARD]
    assert fit.params.overhead_cycles == pytest.approx(platform.logca.overhead_cycles, rel=0.05)
    assert fit.params.acceleration == pytest.approx(platform.logca.acceleration, rel=0.05)


def test_crypto_study_file_drives_the_study(tmp_path):
    from dataclasses import replace

    from simulator.studies.logca.crypto import crypto_study, load_crypto_study

    study = load_crypto_study()
    assert study.platforms[0] == "hifn_7955" and study.multi_unit_engines == (2, 4, 8)
    assert study.max_granularity_bytes == 64 * 2**20
    small = replace(study, platforms=("ultrasparc_t2", "sparc_t4_instructions"), max_granularity_bytes=2**14,
                    calibration_min_bytes=2**10, multi_unit_engines=(2,), multi_unit_max_bytes=2**10)
    res = crypto_study(small, tmp_path)
    assert set(res.fits) == set(res.curves) == {"ultrasparc_t2", "sparc_t4_instructions"}
    assert set(res.multi_unit) == {2} and [p.g_bytes for p in res.multi_unit[2]][-1] == 2**10
    assert (tmp_path / "speedup_ultrasparc_t2_aes.png") in res.figures
    assert set(res.overheads) == set(res.fits)
    assert res.overheads["sparc_t4_instructions"].o_fit_cycles == res.fits["sparc_t4_instructions"].params.overhead_cycles
    assert all(path.is_file() for path in res.figures)


def test_bad_crypto_study_file_names_file_and_keys(tmp_path):
    from simulator.errors import ConfigError
    from simulator.studies.logca.crypto import load_crypto_study

    bad = tmp_path / "bad.yaml"
    bad.write_text("study: logca_crypto\nplatforms: [ultrasparc_t2, sparc_t9]\nkernel: aes\n"
                   "min_granularity_bytes: 16\nmax_granularity_bytes: 64 MiB\ncalibration_min_bytes: 1 KiB\n"
                   "multi_unit_platform: ultrasparc_t2\nmulti_unit_engines: [1]\nmulti_unit_max_bytes: 64 KiB\n")
    with pytest.raises(ConfigError) as err:
        load_crypto_study(bad)
    text = str(err.value)
    assert "bad.yaml: platforms[1]" in text and "sparc_t9" in text
    assert "bad.yaml: min_granularity_bytes" in text and "no unit" in text
    assert "bad.yaml: multi_unit_engines[0]" in text


def test_more_multi_unit_engines_than_the_unit_has_are_refused_at_load(tmp_path):
    """The multi-unit runs' engine counts are checked against the platform's unit when the file is read, not by
    the unit in a worker halfway through the study."""
    from simulator.errors import ConfigError
    from simulator.studies.logca.crypto import load_crypto_study

    text = ("study: logca_crypto\nplatforms: [ultrasparc_t2]\nkernel: aes\nmin_granularity_bytes: 16 B\n"
            "max_granularity_bytes: 64 B\ncalibration_min_bytes: 16 B\nmulti_unit_platform: ultrasparc_t2\n"
            "multi_unit_engines: [2, 16]\nmulti_unit_max_bytes: 64 B\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_crypto_study(bad)
    assert str(err.value) == (f"{bad}: multi_unit_engines: 16; expected at most the 8 engines of unit 'crypto' of "
                              "ultrasparc_t2's system (configs/systems/logca_ultrasparc_t2.yaml)")
    bad.write_text(text.replace("[2, 16]", "[2, 8]"))
    assert load_crypto_study(bad).multi_unit_engines == (2, 8)


def test_command_line_help_runs_nothing_and_a_bad_study_file_exits_2(tmp_path, capsys):
    from simulator.studies.logca import gpu_calibration as logca_gpu_calibration
    from simulator.studies.logca import crypto as logca_study

    for module in (logca_study, logca_gpu_calibration):
        with pytest.raises(SystemExit) as exc:
            module.main(["--help"])
        assert exc.value.code == 0
        assert "usage:" in capsys.readouterr().out
    bad = tmp_path / "c.yaml"
    bad.write_text("study: logca_crypto\nfoo: 1\n")
    assert logca_study.main(["--study", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: foo: unknown key" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_sha_study_file_with_multi_unit_runs_is_refused_and_one_without_them_loads(tmp_path, capsys):
    """A SHA-256 request cannot be split over engines (the crypto unit refuses it): refused when the file is
    read, exit 2 and one message, not a traceback in the multi-unit sweep; with [] the study has none."""
    from simulator.cli import main
    from simulator.studies.logca.crypto import load_crypto_study

    text = ("study: logca_crypto\nplatforms: [ultrasparc_t2]\nkernel: sha\nmin_granularity_bytes: 16 B\n"
            "max_granularity_bytes: 16 KiB\ncalibration_min_bytes: 1 KiB\nmulti_unit_platform: ultrasparc_t2\n"
            "multi_unit_engines: [2, 4]\nmulti_unit_max_bytes: 4 KiB\n")
    sha = tmp_path / "sha.yaml"
    sha.write_text(text)
    assert main(["validate", str(sha)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"offsim: error: {sha}: multi_unit_engines: [2, 4]: kernel 'sha' cannot use more than one engine "
                   "per request (each SHA-256 block chains on the digest of the one before); expected [] (no "
                   "multi-unit runs), or kernel aes"]
    sha.write_text(text.replace("[2, 4]", "[]"))
    assert load_crypto_study(sha).multi_unit_engines == ()
