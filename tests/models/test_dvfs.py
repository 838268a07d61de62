"""Tests of the DVFS energy roofline (models.dvfs, 001 eqs. 44-46)."""

from __future__ import annotations

import pytest

from models.dvfs import DvfsCoefficients, DvfsSetting, fit

TRUE = DvfsCoefficients({"single": 27e-12, "double": 131e-12}, 370e-12, 2.8, 4.0, 0.5)
SETTINGS = [DvfsSetting(vc, vm) for vc in (0.77, 0.89, 1.03) for vm in (0.8, 0.88, 1.01)]


def test_costs_follow_the_square_and_linear_laws():
    low, high = DvfsSetting(0.5, 0.8), DvfsSetting(1.0, 0.8)
    assert TRUE.core_energy_j("single", high) == pytest.approx(4 * TRUE.core_energy_j("single", low))
    assert TRUE.mem_energy_j_per_byte(high) == TRUE.mem_energy_j_per_byte(low)  # memory voltage unchanged
    assert TRUE.constant_power_w(high) - TRUE.constant_power_w(low) == pytest.approx(2.8 * 0.5)


def test_fit_recovers_the_coefficients_it_was_given():
    got = fit(SETTINGS, {k: [TRUE.core_energy_j(k, s) for s in SETTINGS] for k in ("single", "double")},
              [TRUE.mem_energy_j_per_byte(s) for s in SETTINGS], [TRUE.constant_power_w(s) for s in SETTINGS])
    assert got.c0_core_j_per_v2["double"] == pytest.approx(131e-12)
    assert got.c0_mem_j_per_byte_v2 == pytest.approx(370e-12)
    assert (got.c1_core_w_per_v, got.c1_mem_w_per_v, got.pi_misc_w) == pytest.approx((2.8, 4.0, 0.5))


def test_fit_refuses_settings_that_do_not_separate_core_from_memory():
    together = [DvfsSetting(v, v) for v in (0.8, 0.9, 1.0)]
    with pytest.raises(ValueError, match="vary core and memory voltage independently"):
        fit(together, {}, [1e-10] * 3, [5.0] * 3)


def test_fit_refuses_mismatched_lengths_and_bad_input():
    with pytest.raises(ValueError, match="constant_powers_w has 2 values for 9 settings"):
        fit(SETTINGS, {}, [1e-10] * 9, [5.0] * 2)
    with pytest.raises(ValueError, match="v_core_v"):
        DvfsSetting(0.0, 1.0)
    with pytest.raises(ValueError, match="no core operation kind 'int'"):
        TRUE.core_energy_j("int", SETTINGS[0])
