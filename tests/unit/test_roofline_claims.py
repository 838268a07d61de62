"""001's derived model results, recomputed from the parameters they rest on (simulator/studies/roofline_claims.py)."""

from __future__ import annotations

import pytest

from simulator.studies.roofline_claims import claim, claims, power_bound


def test_table2_follows_from_its_four_values():
    assert claim(("001 Table 2", "Fermi", "tau_flop"), "ps/flop") == pytest.approx(1e3 / 515)
    assert claim(("001 Table 2", "Fermi", "B_tau"), "flop/B") == pytest.approx(515 / 144)
    assert claim(("001 Table 2", "Fermi", "B_eps"), "flop/B") == pytest.approx(360 / 25)


def test_streamed_byte_pays_constant_power_over_bandwidth():
    # Xeon Phi: pi_0 180 W over 181 GB/s sustained; eps_mem 136 pJ/B (001 Table 6)
    key = ("001 §4.4.3", "xeon_phi_knc", "constant energy per streamed byte")
    assert claim(key, "pJ/B") == pytest.approx(180 / 181 * 1e3)
    total = ("001 §4.4.3", "xeon_phi_knc", "total energy per streamed byte")
    assert claim(total, "nJ/B") == pytest.approx((136 + 180 / 181 * 1e3) * 1e-3)
    assert claim(total, "W") is None  # a unit the quantity cannot be given in


def test_power_bound_cuts_the_titan_cap_eightfold():
    bound = power_bound()
    assert bound["node power"] == pytest.approx(123 + 164 / 8)
    assert bound["Arndale GPUs at that power"] == pytest.approx((123 + 164 / 8) / (1.28 + 4.83))
    assert 0 < bound["performance vs full cap"] < 1


def test_every_claim_has_a_unit():
    assert all(isinstance(unit, str) and unit for _, unit in claims().values())


def test_section3_power_at_the_time_balance_runs_flops_and_bytes_at_full_rate():
    # GTX 580 (001 Table 6): pi_0 122 W, 99.7 pJ/flop at 1580 Gflop/s, 513 pJ/B at 192 GB/s, no cap
    got = claim(("001 §3.4.2", "gtx580_fermi", "power at B_tau without a cap"), "W")
    assert got == pytest.approx(122 + 99.7e-3 * 1580 + 513e-3 * 192)


def test_constant_power_share_counts_platforms_over_half():
    got = claims()[("001 §4.4.3", "all 12 platforms", "platforms whose pi_0 is over half of pi_0 + delta_pi")]
    assert got == (7.0, "count")
    r, unit = claims()[("001 §4.4.3", "all 12 platforms", "correlation of that share with peak energy efficiency")]
    assert -1 <= r < 0 and unit == "Pearson r"


def test_arndale_gpus_match_the_titan_peak_power():
    got = claim(("001 §4.1", "gtx_titan_kepler", "Arndale GPUs matching its peak power"), "count")
    assert got == pytest.approx((123 + 164) / (1.28 + 4.83))
