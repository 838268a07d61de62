"""Fitted LogCA parameter sets: fitting them from timings, and loading published ones.

Fitting follows the method of 000 section 4.3 (000:L725-742):

* C and beta come from the unaccelerated times T0(g) by regression: a
  least-squares line through (log g, log T0), slope beta and intercept log C.
* o, L and A come from the accelerated times T1(g) = o + L1(g) + C g^beta / A.
  The thesis reads o as the g -> 0 limit of T1 and A as the large-g plateau
  of the speedup. Reading limits at finite granularities biases both (at
  the largest g the speedup is still below A), so this module solves the
  same information in one relative-weighted linear least-squares problem in
  the unknowns (o, L, 1/A): the small-g rows pin o (and L), the large-g rows
  pin 1/A. With exact model data the fit is exact.

Identifiability: with granularity-independent latency T1 depends on o + L
only, so L must be supplied (the thesis measures it with micro-benchmarks) or
it is lumped into o (``latency_lumped``). With granularity-dependent latency
and beta = 1, L g and C g / A are proportional; supply A (the thesis uses the
peak-FLOP ratio for GPUs) or L (1 / peak bandwidth). An ill-conditioned design,
or two estimates that the noise lets trade off against each other, raises
ValueError. A parameter whose term stays below the noise at every granularity
(e.g. a small L next to a super-linear compute term) is not flagged: its
estimate is then poor or clamped to 0.

``fit_logca_to_speedups`` fits C and o when only speedups were published (a
thesis table lists T0/T1, not the times): with L per byte, A and beta given,
1/S - 1/A = (o/C) g^-beta + (L/C) g^(1-beta) is linear in o/C and L/C, so the
supplied L sets the scale of C.

``fit_host_cost_to_speedups`` does the same when the accelerator's time is
known instead of A (a device whose rate follows from its own figures): with
D(g) the device's cycles, 1/S = (o/C) g^-beta + (1/C) (L g + D(g)) g^-beta is
linear in o/C and 1/C.

``load_platforms`` reads a YAML table of published parameters such as
``configs/presets/platforms/logca_table_4_3.yaml`` (000 Table 4.3).
Times are in host cycles, granularities in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from models.logca import LogCAParams, time_accelerated, time_unaccelerated
from simulator.config.bounds import CLOCK_HZ, CYCLES, SPEEDUP
from simulator.errors import ConfigError, TableError
from simulator.config.fields import row_values, table_rows, table_value
from simulator.config.yamlio import config_text, load_yaml_text

__all__ = [
    "ComplexityFit",
    "LogCAFit",
    "fit_complexity",
    "fit_logca",
    "SpeedupFit",
    "fit_logca_to_speedups",
    "PlatformEntry",
    "TableError",
    "load_platform_entries",
    "load_platforms",
]

_MAX_CONDITION = 1e7  # of the column-scaled, relative-weighted T1 design matrix


@dataclass(frozen=True)
class ComplexityFit:
    """Result of the log-log regression of T0(g) = C g^beta.

    c_cycles_per_byte_beta: C; beta: exponent; relative_residuals: model/measured - 1
    per sample (dimensionless).
    """

    c_cycles_per_byte_beta: float
    beta: float
    relative_residuals: tuple[float, ...]


@dataclass(frozen=True)
class LogCAFit:
    """A fitted LogCAParams with its residuals.

    t0_relative_residuals / t1_relative_residuals: model/measured - 1 per sample.
    latency_lumped: True when latency is granularity-independent and was not
    supplied: L is then 0 and ``overhead_cycles`` holds o + L.
    """

    params: LogCAParams
    t0_relative_residuals: tuple[float, ...]
    t1_relative_residuals: tuple[float, ...]
    latency_lumped: bool

    @property
    def t0_rms_relative(self) -> float:
        """Root-mean-square relative residual of T0 (dimensionless)."""
        return float(np.sqrt(np.mean(np.square(self.t0_relative_residuals))))

    @property
    def t1_rms_relative(self) -> float:
        """Root-mean-square relative residual of T1 (dimensionless)."""
        return float(np.sqrt(np.mean(np.square(self.t1_relative_residuals))))


def _samples(name: str, values: ArrayLike, size: int | None = None) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 2:
        raise ValueError(f"{name} must be a 1-D sequence of at least 2 samples, got shape {arr.shape}")
    if size is not None and arr.size != size:
        raise ValueError(f"{name} must have {size} samples (one per granularity), got {arr.size}")
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} must be finite and > 0, got {values!r}")
    return arr


def fit_complexity(g_bytes: ArrayLike, t0_cycles: ArrayLike) -> ComplexityFit:
    """Fit C (cycles/byte^beta) and beta to unaccelerated times (000 section 4.3, 'C').

    Ordinary least squares of log T0 = log C + beta log g.
    """
    g = _samples("g_bytes", g_bytes)
    t0 = _samples("t0_cycles", t0_cycles, g.size)
    if np.unique(g).size < 2:
        raise ValueError("g_bytes must hold at least 2 distinct granularities to fit beta")
    beta, log_c = np.polyfit(np.log(g), np.log(t0), 1)
    if beta <= 0:
        raise ValueError(f"t0_cycles must grow with g; fitted beta = {beta:.4g} <= 0")
    c = float(np.exp(log_c))
    model = c * g**beta
    return ComplexityFit(c, float(beta), tuple(model / t0 - 1.0))


def fit_logca(
    g_bytes: ArrayLike,
    t0_cycles: ArrayLike,
    t1_cycles: ArrayLike,
    *,
    latency_per_byte: bool,
    latency: float | None = None,
    acceleration: float | None = None,
) -> LogCAFit:
    """Fit LogCA parameters to unaccelerated and accelerated times.

    g_bytes: granularities (bytes); t0_cycles, t1_cycles: measured host and
    offloaded times at each g (cycles). latency_per_byte selects L1(g) = L g.
    latency (cycles, or cycles/byte) and acceleration, when given, are taken
    as known and not fitted. Negative least-squares coefficients (noise on a
    parameter that is ~0) are clamped to 0 and the rest refitted.
    """
    if not isinstance(latency_per_byte, bool):
        raise ValueError(f"latency_per_byte must be a bool, got {latency_per_byte!r}")
    g = _samples("g_bytes", g_bytes)
    t0 = _samples("t0_cycles", t0_cycles, g.size)
    t1 = _samples("t1_cycles", t1_cycles, g.size)
    if latency is not None and not (math.isfinite(latency) and latency >= 0):
        raise ValueError(f"latency must be finite and >= 0, got {latency!r}")
    if acceleration is not None and not (math.isfinite(acceleration) and acceleration > 0):
        raise ValueError(f"acceleration must be finite and > 0, got {acceleration!r}")

    cx = fit_complexity(g, t0)
    compute = cx.c_cycles_per_byte_beta * g**cx.beta
    x_latency = g if latency_per_byte else np.ones_like(g)
    lumped = (not latency_per_byte) and latency is None

    # T1 - known terms = sum_k coef_k * column_k, each row divided by T1.
    rhs = t1.copy()
    columns: dict[str, np.ndarray] = {"o": np.ones_like(g)}
    if latency is not None:
        rhs -= latency * x_latency
    elif latency_per_byte:
        columns["L"] = x_latency
    if acceleration is not None:
        rhs -= compute / acceleration
    else:
        columns["inv_A"] = compute
    coefs = _nonnegative_weighted_lstsq(columns, rhs, 1.0 / t1)

    inv_a = coefs.get("inv_A")
    if acceleration is None:
        if inv_a is None or inv_a <= 0:
            raise ValueError("t1_cycles do not decrease the compute term: fitted 1/A <= 0; expected T1 ~ C g^beta / A at large g")
        acceleration = 1.0 / inv_a
    fitted_latency = latency if latency is not None else coefs.get("L", 0.0)
    overhead = coefs.get("o", 0.0)
    params = LogCAParams(
        latency=float(fitted_latency),
        overhead_cycles=float(overhead),
        c_cycles_per_byte_beta=cx.c_cycles_per_byte_beta,
        acceleration=float(acceleration),
        beta=cx.beta,
        latency_per_byte=latency_per_byte,
    )
    t0_model = np.asarray(time_unaccelerated(params, g))
    t1_model = np.asarray(time_accelerated(params, g))
    return LogCAFit(params, tuple(t0_model / t0 - 1.0), tuple(t1_model / t1 - 1.0), lumped)


@dataclass(frozen=True)
class SpeedupFit:
    """LogCA parameters fitted to speedups alone, with the relative residuals (model/measured - 1) per sample."""

    params: LogCAParams
    relative_residuals: tuple[float, ...]

    @property
    def rms_relative(self) -> float:
        """Root-mean-square relative residual of the speedup (dimensionless)."""
        return float(np.sqrt(np.mean(np.square(self.relative_residuals))))


def fit_logca_to_speedups(g_bytes: ArrayLike, speedups: ArrayLike, *, latency_cycles_per_byte: float,
                          acceleration: float, beta: float) -> SpeedupFit:
    """Fit C (cycles/byte^beta) and o (cycles) to measured speedups T0/T1 with L (host cycles per byte,
    granularity-dependent), A and beta supplied (module docstring).

    Least squares on 1/S - 1/A weighted by S, i.e. on the relative error of S, with o, C >= 0.
    """
    g = _samples("g_bytes", g_bytes)
    s = _samples("speedups", speedups, g.size)
    for name, value in (("latency_cycles_per_byte", latency_cycles_per_byte), ("acceleration", acceleration),
                        ("beta", beta)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    if np.any(s >= acceleration):
        raise ValueError(f"speedups must stay below acceleration = {acceleration!r}: LogCA's bound, "
                         f"got max {float(s.max())!r}")
    columns = {"o/C": g ** -beta, "L/C": g ** (1.0 - beta)}
    coef = _nonnegative_weighted_lstsq(columns, 1.0 / s - 1.0 / acceleration, s)
    l_over_c = coef.get("L/C", 0.0)
    if not l_over_c > 0:
        raise ValueError("speedups leave no room for the copies (fitted L/C <= 0): C is not identifiable")
    c = latency_cycles_per_byte / l_over_c
    params = LogCAParams(latency=latency_cycles_per_byte, latency_per_byte=True,
                         overhead_cycles=coef.get("o/C", 0.0) * c, c_cycles_per_byte_beta=c,
                         acceleration=acceleration, beta=beta)
    model = time_unaccelerated(params, g) / time_accelerated(params, g)
    return SpeedupFit(params, tuple(model / s - 1.0))


def fit_host_cost_to_speedups(g_bytes: ArrayLike, speedups: ArrayLike, *, latency_cycles_per_byte: float,
                              device_cycles: ArrayLike, beta: float) -> SpeedupFit:
    """Fit C (cycles/byte^beta) and o (cycles) to measured speedups T0/T1 with L (host cycles per byte), the
    accelerator's own time D(g) per sample (host cycles) and beta supplied (module docstring). The returned
    parameters' A is the host's cost over D at the largest granularity (LogCA's A, read where the speedup
    flattens); the residuals use D itself.

    Least squares on 1/S weighted by S, i.e. on the relative error of S, with o, C >= 0.
    """
    g = _samples("g_bytes", g_bytes)
    s = _samples("speedups", speedups, g.size)
    d = _samples("device_cycles", device_cycles, g.size)
    for name, value in (("latency_cycles_per_byte", latency_cycles_per_byte), ("beta", beta)):
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    columns = {"o/C": g ** -beta, "1/C": (latency_cycles_per_byte * g + d) * g ** -beta}
    coef = _nonnegative_weighted_lstsq(columns, 1.0 / s, s)
    if not coef.get("1/C", 0.0) > 0:
        raise ValueError("speedups leave no room for the copies and the device (fitted 1/C <= 0): C is not "
                         "identifiable")
    c = 1.0 / coef["1/C"]
    overhead = coef.get("o/C", 0.0) * c
    top = int(np.argmax(g))
    params = LogCAParams(latency=latency_cycles_per_byte, latency_per_byte=True, overhead_cycles=overhead,
                         c_cycles_per_byte_beta=c, acceleration=float(c * g[top] ** beta / d[top]), beta=beta)
    model = c * g ** beta / (overhead + latency_cycles_per_byte * g + d)
    return SpeedupFit(params, tuple(model / s - 1.0))


def _nonnegative_weighted_lstsq(
    columns: dict[str, np.ndarray], rhs: np.ndarray, weights: np.ndarray
) -> dict[str, float]:
    """min || w (X c - y) || with c >= 0 by dropping negative coefficients and refitting."""
    active = list(columns)
    while True:
        if not active:
            return {}
        x = np.column_stack([columns[name] * weights for name in active])
        scale = np.linalg.norm(x, axis=0)
        if np.any(scale == 0):
            raise ValueError(f"the T1 design has an all-zero column among {active}; expected varied granularities")
        xs = x / scale
        cond = np.linalg.cond(xs)
        if not np.isfinite(cond) or cond > _MAX_CONDITION:
            raise ValueError(
                f"parameters {active} are not identifiable from these timings (condition number {cond:.3g}); "
                "supply acceleration (peak-FLOP ratio) or latency (1 / peak bandwidth), 000 section 4.3"
            )
        sol, *_ = np.linalg.lstsq(xs, rhs * weights, rcond=None)
        coef = sol / scale
        _check_separable(active, xs, rhs * weights - xs @ sol, sol)
        negative = [name for name, c in zip(active, coef) if c < 0]
        if not negative:
            return dict(zip(active, (float(c) for c in coef)))
        active = [name for name in active if name not in negative]


def _check_separable(names: list[str], xs: np.ndarray, residual: np.ndarray, sol: np.ndarray) -> None:
    """Raise when noise lets two fitted parameters trade off against each other.

    From the least-squares covariance s^2 (X^T X)^-1: two estimates that are
    almost perfectly correlated (|rho| > 0.99) and both uncertain by more than
    5 % are not separated by the data (e.g. L g and C g^beta / A for beta ~ 1).
    """
    dof = xs.shape[0] - xs.shape[1]
    if len(names) < 2 or dof <= 0:
        return
    variance = float(residual @ residual) / dof
    cov = variance * np.linalg.inv(xs.T @ xs)
    std = np.sqrt(np.diag(cov))
    rel = std / np.maximum(np.abs(sol), np.finfo(float).tiny)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if std[i] == 0 or std[j] == 0:
                continue
            rho = cov[i, j] / (std[i] * std[j])
            if abs(rho) > 0.99 and rel[i] > 0.05 and rel[j] > 0.05:
                raise ValueError(
                    f"parameters {names[i]!r} and {names[j]!r} are not identifiable from these timings "
                    f"(correlation {rho:.4f}, relative uncertainties {rel[i]:.2g} and {rel[j]:.2g}); "
                    "supply acceleration (peak-FLOP ratio) or latency (1 / peak bandwidth), 000 section 4.3"
                )


# --------------------------------------------------------------------------
# Published parameter tables
# --------------------------------------------------------------------------

_ENTRY_KEYS = {
    "platform": str,
    "kernel": str,
    "host_frequency_hz": float,
    "latency": float,
    "latency_per_byte": bool,
    "overhead_cycles": float,
    "c_cycles_per_byte_beta": float,
    "acceleration": float,
    "beta": float,
    "source": str,
    "note": str,
}
_REQUIRED_KEYS = set(_ENTRY_KEYS) - {"note"}
#: the keys of an entry that may carry a unit, as a config writes it ("1.16 GHz"): key -> dimension; a bare
#: number is in the key's SI unit (the shipped tables write 1.16e+9)
_ENTRY_UNITS = {"host_frequency_hz": "frequency"}
#: the range of each numeric key: the config bound of the same quantity (a host clock as a core's, L and o as an
#: accelerator's cycles, A as a kernel accelerator's acceleration); outside them T1 or g1 is no finite number
_ENTRY_BOUNDS = {"host_frequency_hz": CLOCK_HZ, "latency": CYCLES, "overhead_cycles": CYCLES, "acceleration": SPEEDUP}
_TOP_KEYS = {"description", "platforms"}


@dataclass(frozen=True)
class PlatformEntry:
    """One row of a published LogCA table: names, host clock (Hz), parameters, citation."""

    key: str
    platform: str
    kernel: str
    host_frequency_hz: float
    params: LogCAParams
    source: str
    note: str = ""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.host_frequency_hz) and self.host_frequency_hz > 0):
            raise ValueError(f"{self.key}: host_frequency_hz must be > 0 Hz, got {self.host_frequency_hz!r}")


def _entry_value(name: str, value: Any) -> Any:
    """Entry key ``name``'s ``value`` as the schema reads a config's: a number bare or in exponent form ("1e3"),
    with a unit where the key has one (``_ENTRY_UNITS``: "1 GHz", in SI); ValueError saying what was expected."""
    return table_value(value, _ENTRY_KEYS[name], _ENTRY_UNITS.get(name), within=_ENTRY_BOUNDS.get(name))


def _entry(key: str, raw: Any, where: str) -> tuple[PlatformEntry | None, list[str]]:
    """Entry ``key`` of a table (``where``: the file and the entry, as messages name them), or None and a problem
    per bad, unknown or missing key (``fields.row_values``)."""
    values, problems = row_values(raw, where, list(_ENTRY_KEYS), _REQUIRED_KEYS, _entry_value)
    if values is None:
        return None, problems
    try:
        params = LogCAParams(
            latency=values["latency"],
            overhead_cycles=values["overhead_cycles"],
            c_cycles_per_byte_beta=values["c_cycles_per_byte_beta"],
            acceleration=values["acceleration"],
            beta=values["beta"],
            latency_per_byte=values["latency_per_byte"],
        )
        entry = PlatformEntry(
            key=key,
            platform=values["platform"],
            kernel=values["kernel"],
            host_frequency_hz=values["host_frequency_hz"],
            params=params,
            source=values["source"],
            note=values.get("note", ""),
        )
    except ValueError as exc:
        return None, [f"{where}: {exc}"]
    return entry, []


def load_platform_entries(path: str | Path) -> dict[str, PlatformEntry]:
    """Read a YAML table of LogCA parameter sets, keyed by entry name.

    Unknown, missing, duplicate or mistyped keys are all collected and raised
    together as one TableError, each problem naming the file and the entry.
    """
    source = str(path)
    try:
        text = config_text(path)  # a regular file under the size cap
    except ConfigError as exc:
        raise TableError(exc.messages) from None
    return _entries_of_text(text, source)


def _entries_of_text(text: str, source: str) -> dict[str, PlatformEntry]:
    """``load_platform_entries`` of a file's ``text`` (its parse is kept per process by ``load_yaml_text``)."""
    try:
        data = load_yaml_text(text, source)  # strict: duplicate keys, alias bombs, syntax
    except ConfigError as exc:
        raise TableError(exc.messages) from None
    return table_rows(data, source, sorted(_TOP_KEYS), _entry)


def load_platforms(path: str | Path) -> dict[str, LogCAParams]:
    """Read a YAML table of LogCA parameter sets: entry name -> LogCAParams."""
    return {key: entry.params for key, entry in load_platform_entries(path).items()}
