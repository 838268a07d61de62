"""Tests of the energy roofline model (models.roofline) against 001 identities and tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models.roofline import RooflinePlatform, load_platforms

TABLE6 = Path(__file__).resolve().parents[2] / "configs" / "presets" / "platforms" / "choi_table6.yaml"
INTENSITIES = np.logspace(-3, 4, 400)


@pytest.fixture(scope="module")
def table6():
    return load_platforms(TABLE6)


def fermi_table2(pi0_w: float = 0.0) -> RooflinePlatform:
    # 001 Table 2 (001:L464-L473): 515 Gflop/s, 144 GB/s, 25 pJ/flop, 360 pJ/B
    return RooflinePlatform.from_throughput(515e9, 144e9, 25e-12, 360e-12, pi0_w)


# ---- identities -------------------------------------------------------------------

def test_table2_balance_points():
    p = fermi_table2()
    assert p.b_tau == pytest.approx(3.6, abs=0.05)  # "6.9/1.9 ~ 3.6" (001:L470)
    assert p.b_eps == pytest.approx(14.4)  # "360/25 ~ 14.4" (001:L473)
    assert p.b_eps / p.b_tau == pytest.approx(4.0, abs=0.05)  # fig. 2b memory-bound limit 4.0 (001:L497)


def test_ridge_at_b_tau():
    p = fermi_table2()
    assert p.time_roofline(p.b_tau) == pytest.approx(1.0)
    assert p.time_roofline(0.99 * p.b_tau) < 1.0
    assert p.time_roofline(10 * p.b_tau) == 1.0
    assert p.performance_gflop_per_s(p.b_tau) == pytest.approx(515.0)
    assert p.performance_gflop_per_s(0.5 * p.b_tau) == pytest.approx(515.0 / 2)
    # T from (W, Q): memory term equals flop term exactly at I = B_tau
    w = 1e9
    assert p.time_s(w, w / p.b_tau) == pytest.approx(w * p.tau_flop_s)


def test_arch_line_limits_and_energy_balance_point():
    p = fermi_table2()
    assert p.arch_line(1e9) == pytest.approx(1.0, abs=1e-6)
    assert p.arch_line(p.b_eps) == pytest.approx(0.5)  # half efficiency at B_eps when pi_0 = 0 (001:L537)
    vals = p.arch_line(INTENSITIES)
    assert np.all(np.diff(vals) > 0)  # smooth and increasing


def test_constant_power_lowers_effective_balance():
    p = fermi_table2(pi0_w=10.0)
    assert 0 < p.eta < 1
    assert p.eps_hat_j == pytest.approx(25e-12 + 10.0 / 515e9)
    # above B_tau, B_hat = eta B_eps and the arch line is 1/2 there
    i_half = p.eta * p.b_eps
    assert i_half > p.b_tau
    assert p.arch_line(i_half) == pytest.approx(0.5)
    assert np.all(np.asarray(p.b_hat_eps(INTENSITIES)) <= p.b_eps + 1e-12)


def test_eq5_equals_eq4():
    """W eps_hat (1 + B_hat(I)/I) equals W eps_flop + Q eps_mem + pi_0 T with T from eq. 3."""
    p = fermi_table2(pi0_w=40.0)
    w = 3.0e10
    for i in INTENSITIES[::17]:
        e_direct = p.energy_j(w, w / i)
        e5 = w * p.eps_hat_j * (1 + p.b_hat_eps(i) / i)
        assert e_direct == pytest.approx(e5, rel=1e-12)
        assert w / e_direct / 1e9 == pytest.approx(p.energy_efficiency_gflop_per_j(i), rel=1e-12)


def test_cache_levels_charged_once_at_serving_level():
    p = RooflinePlatform(1e-11, 1e-10, 1e-10, 1e-9, pi0_w=0.0, eps_l1_j_per_byte=1e-11,
                         eps_l2_j_per_byte=2e-11)
    e = p.energy_j(100, 10, t_s=0.0, q_l1_bytes=1000, q_l2_bytes=100)
    assert e == pytest.approx(100 * 1e-10 + 10 * 1e-9 + 1000 * 1e-11 + 100 * 2e-11)
    # moving a byte from DRAM service to L2 service saves eps_mem - eps_l2, not eps_mem
    e2 = p.energy_j(100, 9, t_s=0.0, q_l1_bytes=1000, q_l2_bytes=101)
    assert e - e2 == pytest.approx(1e-9 - 2e-11)
    with pytest.raises(ValueError, match="q_l1_bytes"):
        fermi_table2().energy_j(1, 1, q_l1_bytes=5)


def test_power_line_uncapped_bounds_eq8():
    p = fermi_table2()
    pw = np.asarray(p.power_w(INTENSITIES))
    assert np.allclose(pw, p.power_line_w(INTENSITIES), rtol=1e-12)
    lo = p.pi_flop_w * p.b_eps / p.b_tau
    hi = p.pi_flop_w * (1 + p.b_eps / p.b_tau)
    assert np.all(pw <= hi * (1 + 1e-12))
    assert p.power_w(p.b_tau) == pytest.approx(hi)
    assert p.power_w(1e-6) == pytest.approx(lo, rel=1e-5)
    assert p.power_w(1e9) == pytest.approx(p.pi_flop_w, rel=1e-6)


# ---- Table 6 ----------------------------------------------------------------------

def test_table6_loads_all_platforms(table6):
    assert len(table6) == 12
    assert table6["gtx_titan_kepler"].peak_dp_gflop_per_s == 1660
    assert table6["hd4000_nuc_gpu"].eps_d_pj_per_flop is None
    with pytest.raises(ValueError, match="double"):
        table6["hd4000_nuc_gpu"].platform("double")


def test_table6_nehalem_balances(table6):
    row = table6["nehalem_cpu"]
    d = row.platform("double", "vendor")
    # B_tau = 53.3 GFLOP/s / 25.6 GB/s, B_eps = 795 pJ/B / 670 pJ/flop (001:L1185)
    assert d.b_tau == pytest.approx(53.3 / 25.6)
    assert d.b_eps == pytest.approx(795 / 670)
    assert d.eps_hat_j == pytest.approx(670e-12 + 122 / 53.3e9)
    s = row.platform("single", "vendor")
    assert s.b_tau == pytest.approx(107 / 25.6)
    assert s.b_eps == pytest.approx(795 / 371)
    sd = row.platform("double", "sustained")
    assert sd.b_tau == pytest.approx(49.7 / 19.1)
    assert d.eps_l1_j_per_byte == pytest.approx(135e-12)
    assert d.eps_l2_j_per_byte == pytest.approx(168e-12)
    assert row.eps_rand_j_per_access == pytest.approx(108e-9)


@pytest.mark.parametrize("key, gflop_per_j", [
    ("gtx_titan_kepler", 16.0),   # "GTX Titan ... at 16 Gflop/J" (001:L1248)
    ("arndale_mali_t604_gpu", 8.1),  # "8.1 Gflop/J vs. 16 Gflop/J" (001:L1255)
    ("nehalem_cpu", 0.62),        # "Desktop CPU (Nehalem) ... at just 620 Mflop/J" (001:L1248)
])
def test_table6_peak_energy_efficiency(table6, key, gflop_per_j):
    p = table6[key].platform("single", "sustained")
    assert p.energy_efficiency_gflop_per_j(1e9) == pytest.approx(gflop_per_j, rel=0.03)


@pytest.mark.parametrize("key, const_pj, total_pj", [
    ("xeon_phi_knc", 994, 1130),        # 001:L1259-L1261
    ("gtx_titan_kepler", 515, 782),
    ("arndale_mali_t604_gpu", 153, 671),
])
def test_table6_streaming_energy_per_byte(table6, key, const_pj, total_pj):
    p = table6[key].platform("single", "sustained")
    assert p.tau_mem_s_per_byte * p.pi0_w * 1e12 == pytest.approx(const_pj, rel=0.005)
    q = 1e9
    e_per_byte = p.energy_j(0.0, q, t_s=q * p.tau_mem_s_per_byte) / q
    assert e_per_byte * 1e12 == pytest.approx(total_pj, rel=0.005)


# ---- power cap ----------------------------------------------------------------------

def test_power_cap_raises_time_only_above_cap(table6):
    row = table6["nehalem_cpu"]
    free = row.platform("double", "vendor")
    capped = row.platform("double", "vendor", power_cap=True)
    assert capped.pi_flop_w + capped.pi_mem_w > capped.delta_pi_w  # cap binds near the ridge
    w = 1e10
    for i in INTENSITIES:
        q = w / i
        t_free, t_cap = free.time_s(w, q), capped.time_s(w, q)
        dyn_power = free.dynamic_energy_j(w, q) / t_free
        if dyn_power <= capped.delta_pi_w:
            assert t_cap == pytest.approx(t_free, rel=1e-12)
        else:
            assert t_cap > t_free
            assert free.dynamic_energy_j(w, q) / t_cap == pytest.approx(capped.delta_pi_w)
    assert capped.time_s(w, w / free.b_tau) > free.time_s(w, w / free.b_tau)
    assert capped.time_s(w, w / 1e4) == free.time_s(w, w / 1e4)


def test_power_cap_closed_form_eq38(table6):
    for key in ("nehalem_cpu", "gtx680_kepler", "arndale_mali_t604_gpu", "xeon_phi_knc"):
        p = table6[key].platform("single", "vendor", power_cap=True)
        assert p.b_tau_minus <= p.b_tau <= p.b_tau_plus
        pw = np.asarray(p.power_w(INTENSITIES))
        assert np.allclose(pw, p.power_line_w(INTENSITIES), rtol=1e-9)
        assert np.all(pw <= p.pi0_w + p.delta_pi_w + 1e-9)
        perf = np.asarray(p.performance_gflop_per_s(INTENSITIES))
        assert np.all(np.diff(perf) >= -1e-9)


def test_uncapped_cap_interval_collapses():
    p = RooflinePlatform.from_throughput(1e9, 1e9, 1e-9, 1e-9, delta_pi_w=10.0)  # 1 W + 1 W < 10 W
    assert p.b_tau_plus == p.b_tau_minus == p.b_tau


# ---- validation -----------------------------------------------------------------------

def test_validation_messages(tmp_path):
    with pytest.raises(ValueError, match="tau_flop_s"):
        RooflinePlatform(0.0, 1e-10, 1e-10, 1e-9)
    with pytest.raises(ValueError, match="delta_pi_w"):
        RooflinePlatform(1e-11, 1e-10, 1e-10, 1e-9, delta_pi_w=-1.0)
    with pytest.raises(ValueError, match="intensity"):
        fermi_table2().arch_line(0.0)
    bad = tmp_path / "bad.yaml"
    text = TABLE6.read_text().replace("    idle_w: 79.9\n", "    idle_w: 79.9\n    idle_watts: 3\n", 1)
    bad.write_text(text)
    with pytest.raises(ValueError, match="unknown key 'idle_watts'"):
        load_platforms(bad)
    dup = tmp_path / "dup.yaml"
    dup.write_text(TABLE6.read_text().replace("    idle_w: 79.9\n", "    idle_w: 79.9\n    idle_w: 3\n", 1))
    with pytest.raises(ValueError, match="duplicate key"):
        load_platforms(dup)
    missing = tmp_path / "missing.yaml"
    missing.write_text(TABLE6.read_text().replace("    idle_w: 79.9\n", "", 1))
    with pytest.raises(ValueError, match="missing key 'idle_w'"):
        load_platforms(missing)
    tiny_cap = tmp_path / "tiny_cap.yaml"  # a cap the model would divide energies by: 1e-300 W is no cap
    tiny_cap.write_text(TABLE6.read_text().replace("    delta_pi_w: 44.2\n", "    delta_pi_w: 1e-300\n", 1))
    with pytest.raises(ValueError, match=r"platforms.nehalem_cpu.delta_pi_w: expected a value >= 1 mW, got .1e-300."):
        load_platforms(tiny_cap)
    broken = tmp_path / "broken.yaml"
    broken.write_text("platforms: [1, 2\n")
    with pytest.raises(ValueError, match="broken.yaml: invalid YAML"):
        load_platforms(broken)
