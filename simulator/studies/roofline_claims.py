"""001's printed results of the energy roofline, recomputed by ``models.roofline`` from the parameters they rest on.

Table 2 (001:L464-472) derives the Fermi GPU's tau_flop, tau_mem, B_tau and B_eps from four representative
values; section 4.4.3 (001:L1248-1259) and section 4.4.4 (001:L1285) derive peak energy efficiencies, the
constant energy a streamed byte pays, and a power-bounding scenario from 001 Table 6
(``configs/presets/platforms/choi_table6.yaml``). Each function returns the quantity in the unit its reference
unit it names (``claim``). Table 6 platforms run single precision (001:L1213) with the throughputs fitted to the
microbenchmarks (the parenthesised columns, 001:L1217-1222) and their power cap.
"""

from __future__ import annotations

from dataclasses import replace

from models.roofline import RooflinePlatform, Table6Row, load_platforms
from simulator.config.loader import PROJECT_ROOT

TABLE6 = PROJECT_ROOT / "configs" / "presets" / "platforms" / "choi_table6.yaml"
# 001 Table 2's representative Fermi values (001:L468-472): 515 Gflop/s, 144 GB/s, 25 pJ/flop, 360 pJ/B
FERMI_TABLE2 = RooflinePlatform.from_throughput(515e9, 144e9, 25e-12, 360e-12, name="001 Table 2 Fermi")
# the power-bounding scenario of 001 section 4.4.4 (001:L1285): GTX Titan's cap cut to 1/8, intensity 0.25 flop/B
BOUND_CAP_DIVISOR = 8
BOUND_INTENSITY_FLOP_PER_BYTE = 0.25
BOUND_PLATFORM, BOUND_ALTERNATIVE = "gtx_titan_kepler", "arndale_mali_t604_gpu"


def table6_platform(row: Table6Row) -> RooflinePlatform:
    """A Table 6 platform as section 4.4 uses it: single precision, fitted throughputs, power cap."""
    return row.platform("single", "sustained", power_cap=True)


def peak_flop_efficiency_gflop_per_j(p: RooflinePlatform) -> float:
    """Energy efficiency at high intensity, 1 / (eps_flop + pi_0 tau_flop) (GFLOP/J)."""
    return 1e-9 / p.eps_hat_j


def constant_energy_per_byte_pj(p: RooflinePlatform) -> float:
    """The constant energy a byte streamed at full bandwidth pays, pi_0 tau_mem (pJ/B)."""
    return p.pi0_w * p.tau_mem_s_per_byte * 1e12


def stream_energy_per_byte_pj(p: RooflinePlatform) -> float:
    """Total energy of a streamed byte, eps_mem + pi_0 tau_mem (pJ/B)."""
    return p.eps_mem_j_per_byte * 1e12 + constant_energy_per_byte_pj(p)


def power_bound() -> dict[str, float]:
    """001 section 4.4.4: the GTX Titan node at 1/8 of its cap against Arndale GPUs of the same power.

    Keys: node power (W), the Titan's performance at 0.25 flop/B relative to its full cap, the number of Arndale
    GPUs that draw the node's power at most, and how much faster they are than the capped Titan at 0.25 flop/B.
    """
    rows = load_platforms(TABLE6)
    titan = table6_platform(rows[BOUND_PLATFORM])
    capped = replace(titan, delta_pi_w=titan.delta_pi_w / BOUND_CAP_DIVISOR)
    small = table6_platform(rows[BOUND_ALTERNATIVE])
    node_w = capped.pi0_w + capped.delta_pi_w
    count = node_w / (small.pi0_w + small.delta_pi_w)
    i = BOUND_INTENSITY_FLOP_PER_BYTE
    return {"node power": node_w,
            "performance vs full cap": capped.performance_gflop_per_s(i) / titan.performance_gflop_per_s(i),
            "Arndale GPUs at that power": count,
            "speed of those GPUs vs capped Titan": round(count) * small.performance_gflop_per_s(i)
            / capped.performance_gflop_per_s(i)}


#: the unit each quantity is computed in, and the other units a reference entry may print it in (factor to apply)
UNITS = {"Gflop/J": {"Mflop/J": 1e3}, "pJ/B": {"nJ/B": 1e-3}}


def claims() -> dict[tuple[str, str, str], tuple[float, str]]:
    """Ours for each reference entry of 001 Table 2 and sections 4.4.3-4.4.4, keyed as in choi_roofline.csv:
    (value, unit)."""
    fermi = FERMI_TABLE2
    out = {("001 Table 2", "Fermi", "tau_flop"): (fermi.tau_flop_s * 1e12, "ps/flop"),
           ("001 Table 2", "Fermi", "tau_mem"): (fermi.tau_mem_s_per_byte * 1e12, "ps/B"),
           ("001 Table 2", "Fermi", "B_tau"): (fermi.b_tau, "flop/B"),
           ("001 Table 2", "Fermi", "B_eps"): (fermi.b_eps, "flop/B")}
    for name, row in load_platforms(TABLE6).items():
        p = table6_platform(row)
        out[("001 §4.4.3", name, "peak energy efficiency")] = (peak_flop_efficiency_gflop_per_j(p), "Gflop/J")
        out[("001 §4.4.3", name, "streamed bytes per joule")] = (1e3 / stream_energy_per_byte_pj(p), "GB/J")
        out[("001 §4.4.3", name, "constant energy per streamed byte")] = (constant_energy_per_byte_pj(p), "pJ/B")
        out[("001 §4.4.3", name, "total energy per streamed byte")] = (stream_energy_per_byte_pj(p), "pJ/B")
    units = {"node power": "W", "performance vs full cap": "x", "Arndale GPUs at that power": "count",
             "speed of those GPUs vs capped Titan": "x"}
    out |= {("001 §4.4.4", BOUND_PLATFORM, k): (v, units[k]) for k, v in power_bound().items()}
    return out


def claim(key: tuple[str, str, str], unit: str) -> float | None:
    """Ours for reference entry ``key`` in ``unit`` (None: no such claim, or a unit it cannot be given in)."""
    found = claims().get(key)
    if found is None:
        return None
    value, base = found
    return value if unit == base else (value * UNITS[base][unit] if unit in UNITS.get(base, {}) else None)
