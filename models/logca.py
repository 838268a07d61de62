"""LogCA: the high-level performance model of a hardware accelerator.

LogCA (Altaf thesis, seed 000 chapter 4; LogCA paper, seed 002 sections 2-3)
describes an offload by five numbers: latency L, overhead o, granularity g,
computational index C and acceleration A, plus the complexity exponent beta of
the kernel. All times are in host cycles and all granularities in bytes:

* unaccelerated time   T0(g) = C g^beta                          (000 eq. 4.1)
* accelerated time     T1(g) = o + L1(g) + C g^beta / A          (000 eq. 4.2)
  with L1(g) = L (granularity-independent latency: pipelined or coherent
  interfaces) or L1(g) = L g (granularity-dependent latency: copies).
* speedup              T0(g) / T1(g)                   (000 eqs. 4.4 and 4.10)

Besides the curves this module offers the break-even granularity g1, the
half-acceleration granularity g_{A/2}, the upper bounds of the speedup, the
multi-accelerator forms of 000 section 4.5 (parallel, serial, pipelined), and
LogCA^e, the energy counterpart (000 section 5.2: efficiency E0/E1 in joules,
and the speedup-efficiency product SEP of 000 section 5.3).

The break-even metrics are computed as exact roots of ``speedup(g) = target``
(bisection on log g, no scipy). The printed closed forms are kept for
comparison: for granularity-independent latency they are exact (000 eqs.
4.7-4.8); for granularity-dependent latency the printed forms (000 eqs.
4.13-4.15) come from one Newton step and are exact only for beta = 1.

The module is a pure function library: it imports nothing from the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "LogCAParams",
    "time_unaccelerated",
    "time_accelerated",
    "speedup",
    "speedup_bound",
    "granularity_for_speedup",
    "g1",
    "g_half",
    "g1_closed_form",
    "g_half_closed_form",
    "parallel_time",
    "parallel_speedup",
    "parallel_speedup_equal_split",
    "serial_speedup",
    "pipelined_speedup_heterogeneous",
    "pipelined_speedup",
    "pipelined_speedup_limit",
    "LogCAEnergyParams",
    "energy_unaccelerated",
    "energy_accelerated",
    "efficiency",
    "efficiency_bound",
    "g1_energy",
    "g_half_energy",
    "g1_energy_closed_form",
    "g_half_energy_closed_form",
    "speedup_efficiency_product",
]


def _check_finite_nonnegative(name: str, value: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class LogCAParams:
    """LogCA parameters of one accelerator running one kernel.

    latency: L, in cycles when ``latency_per_byte`` is False (granularity-
        independent latency) or in cycles per byte when True (granularity-
        dependent latency, L1(g) = L g).
    overhead_cycles: o, host cycles spent setting up one offload.
    c_cycles_per_byte_beta: C, computational index; T0(g) = C g^beta cycles.
    acceleration: A, peak speedup of the accelerator over the host (> 0).
    beta: complexity exponent of the kernel in the granularity (> 0).
    latency_per_byte: which latency form L1(g) uses (see ``latency``).
    """

    latency: float
    overhead_cycles: float
    c_cycles_per_byte_beta: float
    acceleration: float
    beta: float = 1.0
    latency_per_byte: bool = False

    def __post_init__(self) -> None:
        _check_finite_nonnegative("latency", self.latency)
        _check_finite_nonnegative("overhead_cycles", self.overhead_cycles)
        _check_finite_nonnegative("c_cycles_per_byte_beta", self.c_cycles_per_byte_beta)
        _check_finite_nonnegative("acceleration", self.acceleration)
        _check_finite_nonnegative("beta", self.beta)
        if self.c_cycles_per_byte_beta <= 0:
            raise ValueError(
                f"c_cycles_per_byte_beta must be > 0 cycles/byte^beta, got {self.c_cycles_per_byte_beta!r}"
            )
        if self.acceleration <= 0:
            raise ValueError(f"acceleration must be > 0, got {self.acceleration!r}")
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta!r}")
        if not isinstance(self.latency_per_byte, bool):
            raise ValueError(f"latency_per_byte must be a bool, got {self.latency_per_byte!r}")


def _as_granularity(g_bytes: ArrayLike) -> NDArray[np.float64]:
    g = np.asarray(g_bytes, dtype=np.float64)
    if np.any(~np.isfinite(g)) or np.any(g <= 0):
        raise ValueError(f"g_bytes must be finite and > 0 bytes, got {g_bytes!r}")
    return g


def _out(values: NDArray[np.float64]) -> NDArray[np.float64] | float:
    return float(values) if values.ndim == 0 else values


def _latency_cycles(p: LogCAParams, g: NDArray[np.float64]) -> NDArray[np.float64]:
    """L1(g) in cycles: L g when granularity-dependent, else L."""
    return p.latency * g if p.latency_per_byte else np.full_like(g, p.latency)


def time_unaccelerated(p: LogCAParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """T0(g) = C g^beta, host cycles (000 eqs. 4.1 and 4.16)."""
    g = _as_granularity(g_bytes)
    return _out(p.c_cycles_per_byte_beta * g**p.beta)


def time_accelerated(p: LogCAParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """T1(g) = o + L1(g) + C g^beta / A, host cycles (000 eq. 4.2)."""
    g = _as_granularity(g_bytes)
    t0 = p.c_cycles_per_byte_beta * g**p.beta
    return _out(p.overhead_cycles + _latency_cycles(p, g) + t0 / p.acceleration)


def speedup(p: LogCAParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """T0(g) / T1(g), dimensionless (000 eq. 4.4 independent, eq. 4.10 dependent)."""
    g = _as_granularity(g_bytes)
    t0 = p.c_cycles_per_byte_beta * g**p.beta
    return _out(t0 / (p.overhead_cycles + _latency_cycles(p, g) + t0 / p.acceleration))


def speedup_bound(p: LogCAParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """Upper bound of the speedup at g, dimensionless.

    Granularity-independent latency: A (the g -> inf limit, 000 eqs. 4.5, 6.1).
    Granularity-dependent latency: (C / L) g^(beta - 1) (000 eqs. 4.11, 6.2),
    which the speedup stays below for every g; infinite when L = 0.
    """
    g = _as_granularity(g_bytes)
    if not p.latency_per_byte:
        return _out(np.full_like(g, p.acceleration))
    if p.latency == 0:
        return _out(np.full_like(g, math.inf))
    return _out(p.c_cycles_per_byte_beta / p.latency * g ** (p.beta - 1.0))


# --------------------------------------------------------------------------
# Break-even metrics as exact roots
# --------------------------------------------------------------------------

_BISECTION_STEPS = 200
_LOG_G_MIN = math.log(1e-300)
_LOG_G_MAX = math.log(1e300)


def _excess(p: LogCAParams, target: float, log_g: float) -> float:
    """T0(g) - target T1(g) in cycles, at g = exp(log_g); > 0 once the target is reached."""
    g = math.exp(log_g)
    try:
        t0 = p.c_cycles_per_byte_beta * g**p.beta
    except OverflowError:
        t0 = math.inf
    l1 = p.latency * g if p.latency_per_byte else p.latency
    if math.isinf(t0):
        # a g^beta dominates c g only when beta > 1 (or no per-byte latency).
        return math.inf if (p.beta > 1 or not p.latency_per_byte) else -math.inf
    return t0 * (1.0 - target / p.acceleration) - target * (p.overhead_cycles + l1)


def _bisect_log(p: LogCAParams, target: float, lo: float, hi: float) -> float:
    """Root of _excess in [lo, hi] (log g), with _excess(lo) <= 0 < _excess(hi)."""
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if _excess(p, target, mid) > 0:
            hi = mid
        else:
            lo = mid
    return math.exp(hi)


def granularity_for_speedup(p: LogCAParams, target: float) -> float:
    """Smallest granularity in bytes at which speedup(g) reaches ``target``.

    Returns math.inf when the speedup never reaches the target. The root of
    h(g) = a g^beta - c g - d with a = C (1 - target/A), c = target L (only for
    granularity-dependent latency) and d = target (o [+ L]) is found by
    bisection on log g. By the rule of signs for sums of powers h has one
    positive root when beta >= 1 or c = 0, and at most two when beta < 1, in
    which case h peaks at g* = (a beta / c)^(1 / (1 - beta)) and the first
    root lies below g*.
    """
    if not (isinstance(target, (int, float)) and math.isfinite(target) and target > 0):
        raise ValueError(f"target must be a finite speedup > 0, got {target!r}")
    a = p.c_cycles_per_byte_beta * (1.0 - target / p.acceleration)
    if a <= 0:
        return math.inf  # speedup < A everywhere (000 eq. 4.5)
    c = target * p.latency if p.latency_per_byte else 0.0
    d = target * (p.overhead_cycles + (0.0 if p.latency_per_byte else p.latency))
    if d == 0 and (c == 0 or p.beta < 1):
        # speedup -> target as g -> 0 (no fixed cost): reached at any g > 0.
        return 0.0
    if c > 0 and p.beta < 1:
        log_hi = math.log(a * p.beta / c) / (1.0 - p.beta)
    elif c > 0 and p.beta == 1:
        if a <= c:
            return math.inf  # the speedup tends to C / (L + C/A) <= target
        return d / (a - c)  # h is linear in g: exact
    else:
        # Find a finite upper bracket by stepping up in decades.
        log_probe = 0.0
        while _excess(p, target, log_probe) <= 0:
            log_probe += math.log(10.0)
            if log_probe > _LOG_G_MAX:
                return math.inf
        log_hi = log_probe
    log_hi = min(log_hi, _LOG_G_MAX)
    if _excess(p, target, log_hi) <= 0:
        return math.inf
    log_lo = min(0.0, log_hi)
    while _excess(p, target, log_lo) > 0:
        log_lo -= math.log(10.0)
        if log_lo < _LOG_G_MIN:
            return 0.0
    return _bisect_log(p, target, log_lo, log_hi)


def g1(p: LogCAParams) -> float:
    """Break-even granularity g1 in bytes: speedup(g1) = 1 (000 section 4.2.2); inf if never."""
    return granularity_for_speedup(p, 1.0)


def g_half(p: LogCAParams) -> float:
    """Granularity g_{A/2} in bytes at which speedup reaches A/2; inf if never."""
    return granularity_for_speedup(p, p.acceleration / 2.0)


def _ratio_or_inf(numerator: float, denominator: float) -> float:
    return math.inf if denominator == 0 else numerator / denominator


def g1_closed_form(p: LogCAParams) -> float:
    """g1 in bytes as printed; for comparison with ``g1``.

    Independent latency: [A/(A-1) (o+L)/C]^(1/beta) (000 eq. 4.7, 000:L632),
    exact; inf when A <= 1.
    Dependent latency: [C (beta-1)(A-1) + A o] / [C beta (A-1) - A L]
    (000 eq. 4.13, 000:L690; 002 eq. 11), one Newton step from g = 1 and exact
    only for beta = 1. The raw value is returned: a negative value is the
    thesis' sign that no break-even exists.
    """
    A, C, b = p.acceleration, p.c_cycles_per_byte_beta, p.beta
    o, L = p.overhead_cycles, p.latency
    if not p.latency_per_byte:
        if A <= 1:
            return math.inf
        return (A / (A - 1.0) * (o + L) / C) ** (1.0 / b)
    return _ratio_or_inf(C * (b - 1.0) * (A - 1.0) + A * o, C * b * (A - 1.0) - A * L)


def g_half_closed_form(p: LogCAParams) -> float:
    """g_{A/2} in bytes as printed; for comparison with ``g_half``.

    Independent latency: [A (o+L)/C]^(1/beta) (000 eq. 4.8, 000:L646), exact.
    Dependent latency: [C (beta-1) + A o] / [C beta - A L] (000 eq. 4.14,
    000:L701; equal to g_A of eq. 4.15), exact only for beta = 1; the raw value
    is returned (negative: does not exist).
    """
    A, C, b = p.acceleration, p.c_cycles_per_byte_beta, p.beta
    o, L = p.overhead_cycles, p.latency
    if not p.latency_per_byte:
        return (A * (o + L) / C) ** (1.0 / b)
    return _ratio_or_inf(C * (b - 1.0) + A * o, C * b - A * L)


# --------------------------------------------------------------------------
# Multiple accelerators (000 section 4.5)
# --------------------------------------------------------------------------


def _check_partition(params: Sequence[LogCAParams], parts_bytes: Sequence[float]) -> None:
    if len(params) == 0:
        raise ValueError("params must name at least one accelerator, got an empty sequence")
    if len(params) != len(parts_bytes):
        raise ValueError(
            f"parts_bytes must have one entry per accelerator ({len(params)}), got {len(parts_bytes)}"
        )
    for i, g_i in enumerate(parts_bytes):
        if not (math.isfinite(g_i) and g_i > 0):
            raise ValueError(f"parts_bytes[{i}] must be finite and > 0 bytes, got {g_i!r}")


def _check_count(name: str, n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {n!r}")


def parallel_time(params: Sequence[LogCAParams], parts_bytes: Sequence[float]) -> float:
    """T_parallel in cycles for accelerators fed one after another (000 eq. 4.17).

    Accelerator i receives g_i bytes; the host sets up offload i after offload
    i-1, so accelerator i starts after the lumped overhead o_1 + ... + o_i and
    finishes at T_i = sum_{j<=i} o_j + L1_i(g_i) + C_i g_i^beta_i / A_i. The
    offload ends with the last accelerator to finish.
    """
    _check_partition(params, parts_bytes)
    lumped_overhead = 0.0
    finish = 0.0
    for p, g_i in zip(params, parts_bytes):
        lumped_overhead += p.overhead_cycles
        t_i = lumped_overhead + float(time_accelerated(p, g_i)) - p.overhead_cycles
        finish = max(finish, t_i)
    return finish


def parallel_speedup(
    params: Sequence[LogCAParams], parts_bytes: Sequence[float], t0_cycles: float
) -> float:
    """Speedup of a parallel offload, T0(g) / T_parallel (000 eq. 4.18), dimensionless.

    ``t0_cycles`` is the host time C f(g) of the whole granularity g = sum g_i
    (000 eq. 4.16).
    """
    if not (math.isfinite(t0_cycles) and t0_cycles > 0):
        raise ValueError(f"t0_cycles must be finite and > 0 cycles, got {t0_cycles!r}")
    return t0_cycles / parallel_time(params, parts_bytes)


def parallel_speedup_equal_split(p: LogCAParams, g_bytes: ArrayLike, n: int) -> NDArray[np.float64] | float:
    """Speedup of n identical accelerators sharing g equally, dimensionless.

    With g_i = g/n, o_i = o, L_i = L, A_i = A the n-th accelerator finishes
    last, at n o + L1(g/n) + C (g/n)^beta / A (eq. 4.17 with equal parts); for
    beta = 1 and granularity-dependent latency this is 000 eq. 4.19 (000:L936),
    C g / (n o + L g/n + C g/(n A)).
    """
    _check_count("n", n)
    g = _as_granularity(g_bytes)
    part = g / n
    t0 = p.c_cycles_per_byte_beta * g**p.beta
    t_last = n * p.overhead_cycles + _latency_cycles(p, part) + p.c_cycles_per_byte_beta * part**p.beta / p.acceleration
    return _out(t0 / t_last)


def serial_speedup(params: Sequence[LogCAParams], parts_bytes: Sequence[float]) -> float:
    """Speedup of n accelerators run one after another, dimensionless (000 eq. 4.24).

    T0 = sum C_i g_i^beta_i (eq. 4.22) and T_serial = sum [o_i + L1_i(g_i) +
    C_i g_i^beta_i / A_i] (eq. 4.23), no overlap of computation and
    communication.
    """
    _check_partition(params, parts_bytes)
    t0 = sum(float(time_unaccelerated(p, g_i)) for p, g_i in zip(params, parts_bytes))
    t_serial = sum(float(time_accelerated(p, g_i)) for p, g_i in zip(params, parts_bytes))
    return t0 / t_serial


def pipelined_speedup_heterogeneous(params: Sequence[LogCAParams], parts_bytes: Sequence[float]) -> float:
    """Speedup of a carefully pipelined serial offload, dimensionless (000 eq. 4.25).

    Overheads and link latencies hide behind computation except the largest of
    each: T = max_i o_i + max_i L1_i(g_i) + sum_i C_i g_i^beta_i / A_i.
    """
    _check_partition(params, parts_bytes)
    t0 = sum(float(time_unaccelerated(p, g_i)) for p, g_i in zip(params, parts_bytes))
    max_o = max(p.overhead_cycles for p in params)
    max_l = max(float(_latency_cycles(p, np.asarray(g_i, dtype=np.float64))) for p, g_i in zip(params, parts_bytes))
    compute = sum(float(time_unaccelerated(p, g_i)) / p.acceleration for p, g_i in zip(params, parts_bytes))
    return t0 / (max_o + max_l + compute)


def pipelined_speedup(p: LogCAParams, g_bytes: ArrayLike, n: int) -> NDArray[np.float64] | float:
    """Speedup of n sub-computations of g bytes each pipelined on one accelerator.

    Dimensionless; 000 section 4.5.2.1, Figure 4.14. With X = C g^beta / A and
    L1 = L1(g):
    * overhead above latency (o >= L1): n C g^beta / (L1 + max[n o + X, o + n X])
      (000 eq. 4.26, 000:L994);
    * latency above overhead (L1 > o): n C g^beta / (o + max[n L1 + X, L1 + n X])
      (000 eq. 4.28, 000:L1004).
    When overhead and latency are both below X both reduce to
    n C g^beta / (L1 + o + n X) (000 eq. 4.30); n = 1 gives ``speedup``.
    """
    _check_count("n", n)
    g = _as_granularity(g_bytes)
    t0 = p.c_cycles_per_byte_beta * g**p.beta
    x = t0 / p.acceleration
    lat = _latency_cycles(p, g)
    o = p.overhead_cycles
    overhead_bound = lat + np.maximum(n * o + x, o + n * x)
    latency_bound = o + np.maximum(n * lat + x, lat + n * x)
    denominator = np.where(o >= lat, overhead_bound, latency_bound)
    return _out(n * t0 / denominator)


def pipelined_speedup_limit(p: LogCAParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """n -> inf limit of ``pipelined_speedup``, dimensionless.

    C g^beta / max[o, X] when o >= L1 (000 eq. 4.27) and C g^beta / max[L1, X]
    when L1 > o (000 eq. 4.29); A when both are below X (000 eq. 4.31).
    """
    g = _as_granularity(g_bytes)
    t0 = p.c_cycles_per_byte_beta * g**p.beta
    x = t0 / p.acceleration
    lat = _latency_cycles(p, g)
    o = p.overhead_cycles
    return _out(t0 / np.maximum(np.maximum(o, lat), x))


# --------------------------------------------------------------------------
# LogCA^e: the energy counterpart (000 chapter 5)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LogCAEnergyParams:
    """LogCA^e parameters of one accelerator running one kernel (000 Table 5.1).

    latency_energy_j_per_byte: L^e, link energy per offloaded byte (joules/byte);
        link energy is always granularity-dependent, L1^e(g) = L^e g (000 section 5.2).
    overhead_energy_j: o^e, host energy to set up one offload (joules).
    c_energy_j_per_byte_beta: C^e, host computation energy, E0(g) = C^e g^beta (joules).
    energy_acceleration: A^e, peak energy-efficiency gain of the accelerator (> 0).
    beta: complexity exponent of the kernel (> 0), as in LogCAParams.
    """

    latency_energy_j_per_byte: float
    overhead_energy_j: float
    c_energy_j_per_byte_beta: float
    energy_acceleration: float
    beta: float = 1.0

    def __post_init__(self) -> None:
        _check_finite_nonnegative("latency_energy_j_per_byte", self.latency_energy_j_per_byte)
        _check_finite_nonnegative("overhead_energy_j", self.overhead_energy_j)
        _check_finite_nonnegative("c_energy_j_per_byte_beta", self.c_energy_j_per_byte_beta)
        _check_finite_nonnegative("energy_acceleration", self.energy_acceleration)
        _check_finite_nonnegative("beta", self.beta)
        if self.c_energy_j_per_byte_beta <= 0:
            raise ValueError(f"c_energy_j_per_byte_beta must be > 0 J/byte^beta, got {self.c_energy_j_per_byte_beta!r}")
        if self.energy_acceleration <= 0:
            raise ValueError(f"energy_acceleration must be > 0, got {self.energy_acceleration!r}")
        if self.beta <= 0:
            raise ValueError(f"beta must be > 0, got {self.beta!r}")

    def as_time_form(self) -> LogCAParams:
        """The same numbers as a granularity-dependent LogCAParams.

        Efficiency (000 eq. 5.4) has the form of the dependent speedup (000 eq.
        4.10), so every metric of the time model applies (000:L1238); the
        "cycles" of the returned object are joules.
        """
        return LogCAParams(
            latency=self.latency_energy_j_per_byte,
            overhead_cycles=self.overhead_energy_j,
            c_cycles_per_byte_beta=self.c_energy_j_per_byte_beta,
            acceleration=self.energy_acceleration,
            beta=self.beta,
            latency_per_byte=True,
        )


def energy_unaccelerated(pe: LogCAEnergyParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """E0(g) = C^e g^beta, joules (000 eq. 5.1)."""
    return time_unaccelerated(pe.as_time_form(), g_bytes)


def energy_accelerated(pe: LogCAEnergyParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """E1(g) = o^e + L^e g + C^e g^beta / A^e, joules (000 eq. 5.2)."""
    return time_accelerated(pe.as_time_form(), g_bytes)


def efficiency(pe: LogCAEnergyParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """Energy efficiency E0(g) / E1(g), dimensionless (000 eqs. 5.3-5.4)."""
    return speedup(pe.as_time_form(), g_bytes)


def efficiency_bound(pe: LogCAEnergyParams, g_bytes: ArrayLike) -> NDArray[np.float64] | float:
    """Upper bound (C^e / L^e) g^(beta-1) of the efficiency, dimensionless (000 eq. 5.5)."""
    return speedup_bound(pe.as_time_form(), g_bytes)


def g1_energy(pe: LogCAEnergyParams) -> float:
    """Energy break-even granularity g1^e in bytes (exact root); inf if never."""
    return g1(pe.as_time_form())


def g_half_energy(pe: LogCAEnergyParams) -> float:
    """Granularity in bytes where efficiency reaches A^e / 2 (exact root); inf if never."""
    return g_half(pe.as_time_form())


def g1_energy_closed_form(pe: LogCAEnergyParams) -> float:
    """Printed g1^e (000 eq. 5.6, 000:L1242); exact only for beta = 1."""
    return g1_closed_form(pe.as_time_form())


def g_half_energy_closed_form(pe: LogCAEnergyParams) -> float:
    """Printed g^e_{A^e/2} (000 eq. 5.7, 000:L1245); exact only for beta = 1."""
    return g_half_closed_form(pe.as_time_form())


def speedup_efficiency_product(
    p: LogCAParams, pe: LogCAEnergyParams, g_bytes: ArrayLike
) -> NDArray[np.float64] | float:
    """SEP = speedup x efficiency = EDP_unaccelerated / EDP_accelerated (000 eq. 5.8), dimensionless."""
    g = _as_granularity(g_bytes)
    return _out(np.asarray(speedup(p, g)) * np.asarray(efficiency(pe, g)))
