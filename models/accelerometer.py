"""Accelerometer: sensitivity analysis of the LogCA parameters.

Accelerometer (Altaf thesis, seed 000 chapter 6) calls a LogCA parameter a
design bottleneck at granularity g when improving it tenfold -- L/10, o/10,
C x10 or A x10 -- raises the speedup by at least 20 % (000 section 6.2.2,
000:L1383). From that rule follow

* the bottleneck set at each granularity,
* the optimisation regions: maximal granularity ranges with the same set,
  labelled by their parameters in the order L, o, C, A (e.g. "oCA"),
* the cut-off granularities where a parameter starts or stops being a
  bottleneck (the arrows of 000 Figures 6.4 and 6.11),
* totem plots: the gain of 2x..10x improvements and of the extreme cases
  (L, o -> 0; C, A -> infinity), 000 section 6.2.3.

Granularities are in bytes, gains are speedup ratios (improved / base).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from models.logca import LogCAParams, speedup

__all__ = [
    "PARAMETERS",
    "DEFAULT_FACTOR",
    "DEFAULT_THRESHOLD",
    "improved",
    "improved_speedup",
    "speedup_gain",
    "bottlenecks",
    "Region",
    "optimization_regions",
    "Cutoff",
    "cutoff_granularities",
    "totem",
]

PARAMETERS: tuple[str, ...] = ("L", "o", "C", "A")
"""LogCA parameters in label order; L and o improve downwards, C and A upwards."""

DEFAULT_FACTOR = 10.0  # 000 section 6.2.2 (000:L1383): 10x improvement
DEFAULT_THRESHOLD = 1.2  # 000 section 6.2.2 (000:L1383): at least 20 % more speedup


def _check_parameter(parameter: str) -> None:
    if parameter not in PARAMETERS:
        raise ValueError(f"parameter must be one of {PARAMETERS}, got {parameter!r}")


def _check_factor(factor: float) -> None:
    if not (isinstance(factor, (int, float)) and factor >= 1 and not math.isnan(factor)):
        raise ValueError(f"factor must be a number >= 1 (or math.inf), got {factor!r}")


def _check_threshold(threshold: float) -> None:
    if not (isinstance(threshold, (int, float)) and math.isfinite(threshold) and threshold > 1):
        raise ValueError(f"threshold must be a finite speedup ratio > 1, got {threshold!r}")


def improved(p: LogCAParams, parameter: str, factor: float = DEFAULT_FACTOR) -> LogCAParams:
    """Parameters with ``parameter`` improved ``factor`` times (finite factor).

    L and o are divided by the factor, C and A multiplied (000 section 6.2.2).
    """
    _check_parameter(parameter)
    _check_factor(factor)
    if math.isinf(factor):
        raise ValueError("factor must be finite for improved(); use improved_speedup for the limit")
    if parameter == "L":
        return replace(p, latency=p.latency / factor)
    if parameter == "o":
        return replace(p, overhead_cycles=p.overhead_cycles / factor)
    if parameter == "C":
        return replace(p, c_cycles_per_byte_beta=p.c_cycles_per_byte_beta * factor)
    return replace(p, acceleration=p.acceleration * factor)


def improved_speedup(
    p: LogCAParams, g_bytes: ArrayLike, parameter: str, factor: float = DEFAULT_FACTOR
) -> NDArray[np.float64] | float:
    """Speedup at g after improving ``parameter`` by ``factor``, dimensionless.

    ``factor = math.inf`` gives the extreme cases of the totem plots (000
    section 6.2.3): L -> 0 and o -> 0 are exact; C -> inf gives A (the
    computation dominates both times); A -> inf gives C g^beta / (o + L1(g)).
    """
    _check_parameter(parameter)
    _check_factor(factor)
    if not math.isinf(factor):
        return speedup(improved(p, parameter, factor), g_bytes)
    if parameter == "L":
        return speedup(replace(p, latency=0.0), g_bytes)
    if parameter == "o":
        return speedup(replace(p, overhead_cycles=0.0), g_bytes)
    g = np.asarray(g_bytes, dtype=np.float64)
    if np.any(~np.isfinite(g)) or np.any(g <= 0):
        raise ValueError(f"g_bytes must be finite and > 0 bytes, got {g_bytes!r}")
    if parameter == "C":
        out = np.full_like(g, p.acceleration)
    else:
        t0 = p.c_cycles_per_byte_beta * g**p.beta
        latency_cycles = p.latency * g if p.latency_per_byte else p.latency
        fixed = p.overhead_cycles + latency_cycles
        with np.errstate(divide="ignore"):
            out = np.where(fixed > 0, t0 / np.where(fixed > 0, fixed, 1.0), np.inf)
    return float(out) if out.ndim == 0 else out


def speedup_gain(
    p: LogCAParams, g_bytes: ArrayLike, parameter: str, factor: float = DEFAULT_FACTOR
) -> NDArray[np.float64] | float:
    """Improved speedup divided by the base speedup at g, dimensionless."""
    base = np.asarray(speedup(p, g_bytes))
    gain = np.asarray(improved_speedup(p, g_bytes, parameter, factor)) / base
    return float(gain) if gain.ndim == 0 else gain


def bottlenecks(
    p: LogCAParams,
    g_bytes: ArrayLike,
    factor: float = DEFAULT_FACTOR,
    threshold: float = DEFAULT_THRESHOLD,
) -> frozenset[str] | tuple[frozenset[str], ...]:
    """Parameters whose ``factor``-fold improvement gains >= ``threshold`` at g.

    Returns one frozenset for a scalar g, else a tuple of frozensets, one per g.
    """
    _check_threshold(threshold)
    g = np.asarray(g_bytes, dtype=np.float64)
    gains = {name: np.atleast_1d(np.asarray(speedup_gain(p, g, name, factor))) for name in PARAMETERS}
    sets = tuple(
        frozenset(name for name in PARAMETERS if gains[name][i] >= threshold)
        for i in range(np.atleast_1d(g).size)
    )
    return sets[0] if g.ndim == 0 else sets


@dataclass(frozen=True)
class Region:
    """A granularity range [g_start_bytes, g_end_bytes] with one bottleneck set.

    The bounds are the first and last grid granularity (bytes) of the range.
    """

    g_start_bytes: float
    g_end_bytes: float
    parameters: frozenset[str]

    def __post_init__(self) -> None:
        if not (0 < self.g_start_bytes <= self.g_end_bytes):
            raise ValueError(
                f"g_start_bytes must be > 0 and <= g_end_bytes, got {self.g_start_bytes!r}, {self.g_end_bytes!r}"
            )
        unknown = set(self.parameters) - set(PARAMETERS)
        if unknown:
            raise ValueError(f"parameters must be drawn from {PARAMETERS}, got unknown {sorted(unknown)}")

    @property
    def label(self) -> str:
        """Parameters in the order L, o, C, A, as in 000 Figure 6.4 ("oCA"); "" if none."""
        return "".join(name for name in PARAMETERS if name in self.parameters)


def optimization_regions(
    p: LogCAParams,
    g_bytes: Sequence[float] | NDArray[np.float64],
    factor: float = DEFAULT_FACTOR,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[Region]:
    """Group an increasing granularity grid into regions of equal bottleneck sets.

    Regions without any bottleneck are included (empty label). Use a grid of
    powers of two for the thesis' plots, 16 B to 32 MiB (000 section 3.2).
    """
    g = np.asarray(g_bytes, dtype=np.float64)
    if g.ndim != 1 or g.size == 0 or np.any(np.diff(g) <= 0):
        raise ValueError(f"g_bytes must be a non-empty strictly increasing 1-D grid, got {g_bytes!r}")
    sets = bottlenecks(p, g, factor, threshold)
    assert isinstance(sets, tuple)
    regions: list[Region] = []
    start = 0
    for i in range(1, g.size + 1):
        if i == g.size or sets[i] != sets[start]:
            regions.append(Region(float(g[start]), float(g[i - 1]), sets[start]))
            start = i
    return regions


@dataclass(frozen=True)
class Cutoff:
    """Granularity (bytes) where ``parameter`` starts (starts=True) or stops being a bottleneck."""

    parameter: str
    g_bytes: float
    starts: bool


def cutoff_granularities(
    p: LogCAParams,
    g_min_bytes: float,
    g_max_bytes: float,
    factor: float = DEFAULT_FACTOR,
    threshold: float = DEFAULT_THRESHOLD,
    points_per_decade: int = 64,
) -> list[Cutoff]:
    """Granularities in [g_min, g_max] where a parameter's gain crosses ``threshold``.

    Crossings are bracketed on a logarithmic grid (``points_per_decade``) and
    refined by bisection on log g to relative precision ~1e-12; sorted by g.
    A parameter that is a bottleneck over the whole range has no cut-off.
    """
    if not (0 < g_min_bytes < g_max_bytes < math.inf):
        raise ValueError(
            f"g_min_bytes and g_max_bytes must satisfy 0 < g_min < g_max < inf, got {g_min_bytes!r}, {g_max_bytes!r}"
        )
    if points_per_decade < 2:
        raise ValueError(f"points_per_decade must be >= 2, got {points_per_decade!r}")
    _check_threshold(threshold)
    decades = math.log10(g_max_bytes / g_min_bytes)
    log_grid = np.linspace(math.log(g_min_bytes), math.log(g_max_bytes), int(math.ceil(decades * points_per_decade)) + 1)
    cutoffs: list[Cutoff] = []
    for name in PARAMETERS:
        excess = np.asarray(speedup_gain(p, np.exp(log_grid), name, factor)) - threshold
        inside = excess >= 0
        for i in np.nonzero(inside[1:] != inside[:-1])[0]:
            lo, hi = float(log_grid[i]), float(log_grid[i + 1])
            lo_inside = bool(inside[i])
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if (float(speedup_gain(p, math.exp(mid), name, factor)) >= threshold) == lo_inside:
                    lo = mid
                else:
                    hi = mid
            cutoffs.append(Cutoff(name, math.exp(0.5 * (lo + hi)), starts=not lo_inside))
    return sorted(cutoffs, key=lambda c: c.g_bytes)


def totem(
    p: LogCAParams,
    g_bytes: ArrayLike,
    parameter: str,
    factors: Sequence[float] = (2.0, 4.0, 6.0, 8.0, 10.0, math.inf),
) -> dict[float, NDArray[np.float64] | float]:
    """Speedup gain at g for each improvement factor of one parameter (000 section 6.2.3)."""
    return {float(f): speedup_gain(p, g_bytes, parameter, f) for f in factors}
