"""001's printed results of the energy roofline, recomputed by ``models.roofline`` from the parameters they rest on.

Table 2 (001:L464-472) derives the Fermi GPU's tau_flop, tau_mem, B_tau and B_eps from four representative
values; section 4.4.3 (001:L1248-1259) and section 4.4.4 (001:L1285) derive peak energy efficiencies, the
constant energy a streamed byte pays, the share of constant power and a power-bounding scenario from 001 Table 6
(``configs/presets/platforms/choi_table6.yaml``); section 4.1 (001:L1112) the Arndale GPUs that match the GTX
Titan's peak power, and section 5.2.3.1 (001:L1463) the Titan's balance points. Each function returns the
quantity in the unit it names; ``claim`` gives it in the unit its reference entry prints. Table 6 platforms run single precision
(001:L1213) with the throughputs fitted to the microbenchmarks (the parenthesised columns, 001:L1217-1222) and
their power cap. Sections 3.4.2 and 3.4.5 (001:L733, L786) use the uncapped model of section 3 on the GTX 580
and 680, whose Table 4 coefficients are Table 6's, with tau from the vendor's peaks as section 3.3.2 instantiates
it (001:L649).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

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
    count = node_w / max_power_w(rows[BOUND_ALTERNATIVE])
    i = BOUND_INTENSITY_FLOP_PER_BYTE
    return {"node power": node_w,
            "performance vs full cap": capped.performance_gflop_per_s(i) / titan.performance_gflop_per_s(i),
            "Arndale GPUs at that power": count,
            "speed of those GPUs vs capped Titan": round(count) * small.performance_gflop_per_s(i)
            / capped.performance_gflop_per_s(i)}


def section3_platform(row: Table6Row) -> RooflinePlatform:
    """A GPU as 001 section 3 models it: single precision, the vendor's peaks, no power cap."""
    return row.platform("single", "vendor")


def peak_power_w(p: RooflinePlatform) -> float:
    """Uncapped power at I = B_tau, where flops and bytes both run at full rate: pi_0 + pi_flop + pi_mem (W)."""
    return p.pi0_w + p.pi_flop_w + p.pi_mem_w


def max_power_w(row: Table6Row) -> float:
    """A platform's maximum power under its cap, pi_0 + delta_pi (W)."""
    return row.pi0_w + row.delta_pi_w


def constant_power_share(row: Table6Row) -> float:
    """The fraction of maximum power that constant power takes, pi_0 / (pi_0 + delta_pi) (001:L1257)."""
    return row.pi0_w / max_power_w(row)


def constant_power_shares() -> dict[str, float]:
    """001 section 4.4.3 on the twelve platforms: how many spend over half their maximum power as constant
    power, and the correlation of that share with peak energy efficiency (Pearson r)."""
    rows = load_platforms(TABLE6).values()
    shares = [constant_power_share(r) for r in rows]
    peaks = [peak_flop_efficiency_gflop_per_j(table6_platform(r)) for r in rows]
    return {"platforms whose pi_0 is over half of pi_0 + delta_pi": float(sum(s > 0.5 for s in shares)),
            "correlation of that share with peak energy efficiency": float(np.corrcoef(shares, peaks)[0, 1])}


def power_matched_arndale() -> dict[str, float]:
    """001 section 4.1: the Arndale GPUs whose peak power adds up to the GTX Titan's, and their aggregate
    memory bandwidth against the Titan's (the ratio of the bandwidth-bound performances)."""
    rows = load_platforms(TABLE6)
    titan, small = rows[BOUND_PLATFORM], rows[BOUND_ALTERNATIVE]
    count = max_power_w(titan) / max_power_w(small)
    return {"Arndale GPUs matching its peak power": count,
            "memory bandwidth of those GPUs vs the Titan (up to)":
                round(count) * small.sustained_mem_gb_per_s / titan.sustained_mem_gb_per_s}


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
    rows = load_platforms(TABLE6)
    out[("001 §3.4.2", "gtx580_fermi", "power at B_tau without a cap")] = (
        peak_power_w(section3_platform(rows["gtx580_fermi"])), "W")
    for name in ("gtx580_fermi", "gtx680_kepler"):
        out[("001 §3.4.5", name, "flop share of compute-only energy")] = (
            100 * section3_platform(rows[name]).eta, "%")
    counts = {"Arndale GPUs matching its peak power": "count",
              "memory bandwidth of those GPUs vs the Titan (up to)": "x"}
    out |= {("001 §4.1", BOUND_PLATFORM, k): (v, counts[k]) for k, v in power_matched_arndale().items()}
    shares = {"platforms whose pi_0 is over half of pi_0 + delta_pi": "count",
              "correlation of that share with peak energy efficiency": "Pearson r"}
    out |= {("001 §4.4.3", "all 12 platforms", k): (v, shares[k]) for k, v in constant_power_shares().items()}
    titan = table6_platform(rows[BOUND_PLATFORM])
    out[("001 §5.2.3.1", BOUND_PLATFORM, "time balance B_tau")] = (titan.b_tau, "flop/B")
    out[("001 §5.2.3.1", BOUND_PLATFORM, "energy balance B_eps")] = (titan.b_eps, "flop/B")
    return out


def claim(key: tuple[str, str, str], unit: str) -> float | None:
    """Ours for reference entry ``key`` in ``unit`` (None: no such claim, or a unit it cannot be given in)."""
    found = claims().get(key)
    if found is None:
        return None
    value, base = found
    return value if unit == base else (value * UNITS[base][unit] if unit in UNITS.get(base, {}) else None)
