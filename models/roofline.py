"""Energy roofline: time, energy and power of W flops and Q bytes (001 ch. 3-4).

The abstract machine (001 §3.1, §4.2) has four costs: time per flop
``tau_flop_s``, time per byte ``tau_mem_s_per_byte`` (throughputs, not
latencies), energy per flop ``eps_flop_j`` and energy per byte
``eps_mem_j_per_byte``; a constant power ``pi0_w``; optionally the inclusive
energy per byte served by L1 and L2 (001 eq. 10, §4.4.2) and a usable-power cap
``delta_pi_w`` above ``pi0_w`` (001 eqs. 32-38).

Equations (W flops, Q bytes from main memory, I = W / Q in flop/B):

* time, eq. 3 / 34:  T = max(W tau_flop, Q tau_mem, E_dyn / delta_pi)
  (the third term only with a cap; E_dyn is the dynamic energy below);
* energy, eq. 4 / 10 / 32:  E = W eps_flop + Q eps_mem + Q_L1 eps_L1 + Q_L2 eps_L2 + pi_0 T,
  every byte charged once, at the level that serves it (costs are inclusive of the path);
* balances: B_tau = tau_mem / tau_flop, B_eps = eps_mem / eps_flop (flop/B);
* eps_hat = eps_flop + pi_0 tau_flop, eta = eps_flop / eps_hat,
  B_hat_eps(I) = eta B_eps + (1 - eta) max(0, B_tau - I)   (eq. 6);
* arch line W eps_hat / E = 1 / (1 + B_hat_eps(I) / I)      (eq. 5, uncapped);
* capped power P(I) with B_tau^+ and B_tau^-                 (eqs. 36-38).

Intensity functions accept a float or a numpy array and return the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np

from simulator.config.bounds import BANDWIDTH_BYTES_PER_S, BY_DIMENSION, FLOP_RATE, POWER_CAP_W
from simulator.errors import ConfigError, TableError, as_written
from simulator.config.fields import row_values, table_rows, table_value
from simulator.config.yamlio import config_text, load_yaml_text

ArrayLike = float | np.ndarray

_PICO = 1e-12
_NANO = 1e-9
_GIGA = 1e9


def _out(x: np.ndarray) -> ArrayLike:
    """Return a 0-d result as a plain float, arrays unchanged."""
    return float(x) if np.ndim(x) == 0 else x


def _positive_intensity(intensity_flop_per_byte: ArrayLike) -> np.ndarray:
    i = np.asarray(intensity_flop_per_byte, dtype=float)
    if np.any(~(i > 0)):
        raise ValueError(
            f"intensity_flop_per_byte must be > 0 (flop/B), got {intensity_flop_per_byte!r}"
        )
    return i


@dataclass(frozen=True)
class MachineBalance:
    """Derived balance quantities of a platform (001 eqs. 3-6, 36-37).

    ``b_tau`` and ``b_eps`` in flop/B; ``eps_hat_j`` in J per flop; ``eta`` unitless;
    ``pi_flop_w``/``pi_mem_w`` peak flop and memory power (W, excluding pi_0);
    ``b_tau_plus``/``b_tau_minus`` the capped-power interval (flop/B; both equal
    ``b_tau`` when there is no cap or the cap is never reached).
    """

    b_tau: float
    b_eps: float
    eps_hat_j: float
    eta: float
    pi_flop_w: float
    pi_mem_w: float
    b_tau_plus: float
    b_tau_minus: float


@dataclass(frozen=True)
class RooflinePlatform:
    """Time/energy cost parameters of one platform (001 §3.1, §4.2, Table 6).

    All fields are SI: seconds, joules, watts, bytes, flops.
    """

    tau_flop_s: float
    tau_mem_s_per_byte: float
    eps_flop_j: float
    eps_mem_j_per_byte: float
    pi0_w: float = 0.0
    eps_l1_j_per_byte: float | None = None
    eps_l2_j_per_byte: float | None = None
    delta_pi_w: float | None = None
    name: str = ""

    def __post_init__(self) -> None:
        for f in ("tau_flop_s", "tau_mem_s_per_byte", "eps_flop_j"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and v > 0 and np.isfinite(v)):
                raise ValueError(f"{f} must be a finite number > 0, got {v!r}")
        for f in ("eps_mem_j_per_byte", "pi0_w"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and v >= 0 and np.isfinite(v)):
                raise ValueError(f"{f} must be a finite number >= 0, got {v!r}")
        for f in ("eps_l1_j_per_byte", "eps_l2_j_per_byte"):
            v = getattr(self, f)
            if v is not None and not (isinstance(v, (int, float)) and v >= 0):
                raise ValueError(f"{f} must be None or a number >= 0 (J/B), got {v!r}")
        if self.delta_pi_w is not None and not (
            isinstance(self.delta_pi_w, (int, float)) and self.delta_pi_w > 0
        ):
            raise ValueError(f"delta_pi_w must be None or a number > 0 (W), got {self.delta_pi_w!r}")

    @classmethod
    def from_throughput(
        cls,
        flop_per_s: float,
        bandwidth_bytes_per_s: float,
        eps_flop_j: float,
        eps_mem_j_per_byte: float,
        pi0_w: float = 0.0,
        **kwargs: Any,
    ) -> RooflinePlatform:
        """Build from peak throughputs (flop/s, B/s): tau = 1 / throughput (001:L649)."""
        for n, v in (("flop_per_s", flop_per_s), ("bandwidth_bytes_per_s", bandwidth_bytes_per_s)):
            if not v > 0:
                raise ValueError(f"{n} must be > 0, got {v!r}")
        return cls(1.0 / flop_per_s, 1.0 / bandwidth_bytes_per_s, eps_flop_j, eps_mem_j_per_byte,
                   pi0_w, **kwargs)

    # ---- balance quantities -------------------------------------------------
    @property
    def b_tau(self) -> float:
        """Time balance B_tau = tau_mem / tau_flop (flop/B), eq. 3."""
        return self.tau_mem_s_per_byte / self.tau_flop_s

    @property
    def b_eps(self) -> float:
        """Energy balance B_eps = eps_mem / eps_flop (flop/B), eq. 4."""
        return self.eps_mem_j_per_byte / self.eps_flop_j

    @property
    def eps_hat_j(self) -> float:
        """Actual energy per flop with constant power, eps_flop + pi_0 tau_flop (J)."""
        return self.eps_flop_j + self.pi0_w * self.tau_flop_s

    @property
    def eta(self) -> float:
        """Constant-flop energy efficiency eta = eps_flop / eps_hat (unitless)."""
        return self.eps_flop_j / self.eps_hat_j

    @property
    def pi_flop_w(self) -> float:
        """Peak power of flops alone, eps_flop / tau_flop (W)."""
        return self.eps_flop_j / self.tau_flop_s

    @property
    def pi_mem_w(self) -> float:
        """Peak power of memory traffic alone, eps_mem / tau_mem (W)."""
        return self.eps_mem_j_per_byte / self.tau_mem_s_per_byte

    @property
    def b_tau_plus(self) -> float:
        """Upper end of the power-capped interval, eq. 36 (flop/B)."""
        if self.delta_pi_w is None or self.delta_pi_w >= self.pi_flop_w + self.pi_mem_w:
            return self.b_tau
        if self.delta_pi_w <= self.pi_flop_w:
            return float("inf")  # even pure flops exceed the cap
        return self.b_tau * max(1.0, self.pi_mem_w / (self.delta_pi_w - self.pi_flop_w))

    @property
    def b_tau_minus(self) -> float:
        """Lower end of the power-capped interval, eq. 37 (flop/B)."""
        if self.delta_pi_w is None or self.delta_pi_w >= self.pi_flop_w + self.pi_mem_w:
            return self.b_tau
        return self.b_tau * max(0.0, min(1.0, (self.delta_pi_w - self.pi_mem_w) / self.pi_flop_w))

    def balance(self) -> MachineBalance:
        """All derived balance quantities at once."""
        return MachineBalance(self.b_tau, self.b_eps, self.eps_hat_j, self.eta, self.pi_flop_w,
                              self.pi_mem_w, self.b_tau_plus, self.b_tau_minus)

    # ---- time, energy, power of (W, Q) ---------------------------------------
    def _cache_energy_j(self, q_l1_bytes: float, q_l2_bytes: float) -> float:
        e = 0.0
        for q, eps, name in ((q_l1_bytes, self.eps_l1_j_per_byte, "q_l1_bytes"),
                             (q_l2_bytes, self.eps_l2_j_per_byte, "q_l2_bytes")):
            if q < 0:
                raise ValueError(f"{name} must be >= 0 bytes, got {q!r}")
            if q > 0:
                if eps is None:
                    raise ValueError(f"{name}={q!r} given but the platform has no energy for that level")
                e += q * eps
        return e

    def dynamic_energy_j(self, w_flops: float, q_bytes: float, q_l1_bytes: float = 0.0,
                         q_l2_bytes: float = 0.0) -> float:
        """Energy of the operations alone, without constant power (J), eq. 10 minus pi_0 T.

        ``q_bytes`` are served by main memory, ``q_l1_bytes``/``q_l2_bytes`` by L1/L2;
        each byte appears in exactly one of them (inclusive costs, 001:L1236).
        """
        if w_flops < 0 or q_bytes < 0:
            raise ValueError(f"w_flops and q_bytes must be >= 0, got {w_flops!r}, {q_bytes!r}")
        return (w_flops * self.eps_flop_j + q_bytes * self.eps_mem_j_per_byte
                + self._cache_energy_j(q_l1_bytes, q_l2_bytes))

    def time_s(self, w_flops: float, q_bytes: float, q_l1_bytes: float = 0.0,
               q_l2_bytes: float = 0.0) -> float:
        """Best-case time (s): eq. 3 without a cap, eq. 34 with ``delta_pi_w``.

        Under a cap the throttling term uses the full dynamic energy, cache terms included
        (with no cache traffic this is exactly eq. 34).
        """
        t = max(w_flops * self.tau_flop_s, q_bytes * self.tau_mem_s_per_byte)
        if self.delta_pi_w is not None:
            t = max(t, self.dynamic_energy_j(w_flops, q_bytes, q_l1_bytes, q_l2_bytes) / self.delta_pi_w)
        return t

    def energy_j(self, w_flops: float, q_bytes: float, t_s: float | None = None,
                 q_l1_bytes: float = 0.0, q_l2_bytes: float = 0.0) -> float:
        """Total energy (J), eqs. 4 / 10 / 32; ``t_s`` defaults to :meth:`time_s`."""
        if t_s is None:
            t_s = self.time_s(w_flops, q_bytes, q_l1_bytes, q_l2_bytes)
        if t_s < 0:
            raise ValueError(f"t_s must be >= 0 seconds, got {t_s!r}")
        return self.dynamic_energy_j(w_flops, q_bytes, q_l1_bytes, q_l2_bytes) + self.pi0_w * t_s

    # ---- functions of intensity ----------------------------------------------
    def b_hat_eps(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Effective energy balance, eq. 6 (flop/B)."""
        i = _positive_intensity(intensity_flop_per_byte)
        return _out(self.eta * self.b_eps + (1.0 - self.eta) * np.maximum(0.0, self.b_tau - i))

    def time_roofline(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Normalised speed W tau_flop / T = min(1, I / B_tau), uncapped (001 §3.1.3)."""
        i = _positive_intensity(intensity_flop_per_byte)
        return _out(np.minimum(1.0, i / self.b_tau))

    def arch_line(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Normalised energy efficiency W eps_hat / E = 1 / (1 + B_hat_eps(I) / I), eq. 5 (uncapped)."""
        i = _positive_intensity(intensity_flop_per_byte)
        return _out(1.0 / (1.0 + np.asarray(self.b_hat_eps(i)) / i))

    def _time_per_flop_s(self, i: np.ndarray) -> np.ndarray:
        """T / W as a function of intensity, eq. 35 (s per flop)."""
        t = self.tau_flop_s * np.maximum(1.0, self.b_tau / i)
        if self.delta_pi_w is not None:
            t = np.maximum(t, self.tau_flop_s * self.pi_flop_w / self.delta_pi_w * (1.0 + self.b_eps / i))
        return t

    def performance_gflop_per_s(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Performance roofline W / T in GFLOP/s (capped when ``delta_pi_w`` is set)."""
        i = _positive_intensity(intensity_flop_per_byte)
        return _out(1.0 / self._time_per_flop_s(i) / _GIGA)

    def energy_efficiency_gflop_per_j(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Energy-efficiency roofline W / E in GFLOP/J, eq. 33 with T from eq. 35."""
        i = _positive_intensity(intensity_flop_per_byte)
        e_per_flop = self.eps_flop_j * (1.0 + self.b_eps / i) + self.pi0_w * self._time_per_flop_s(i)
        return _out(1.0 / e_per_flop / _GIGA)

    def power_w(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Average power P = E / T (W) from eqs. 33 and 35 (equals the closed form eq. 38)."""
        i = _positive_intensity(intensity_flop_per_byte)
        t = self._time_per_flop_s(i)
        return _out(self.pi0_w + self.eps_flop_j * (1.0 + self.b_eps / i) / t)

    def power_line_w(self, intensity_flop_per_byte: ArrayLike) -> ArrayLike:
        """Average power by the piecewise closed form, eq. 38 (W)."""
        i = _positive_intensity(intensity_flop_per_byte)
        above = self.pi_flop_w + self.pi_mem_w * self.b_tau / i
        below = self.pi_flop_w * i / self.b_tau + self.pi_mem_w
        cap = self.delta_pi_w if self.delta_pi_w is not None else np.inf
        p = np.where(i >= self.b_tau_plus, above, np.where(i <= self.b_tau_minus, below, cap))
        if self.delta_pi_w is None:  # no cap: the two branches meet at B_tau
            p = np.where(i >= self.b_tau, above, below)
        return _out(self.pi0_w + p)


# ---- 001 Table 6 presets ---------------------------------------------------------

@dataclass(frozen=True)
class Table6Row:
    """One row of 001 Table 6 (001:L1180), in the table's own units (see key names).

    ``None`` stands for a dash (missing datum) in the table.
    """

    label: str
    processor: str
    peak_sp_gflop_per_s: float
    peak_dp_gflop_per_s: float | None
    peak_mem_gb_per_s: float
    pi0_w: float
    idle_w: float
    delta_pi_w: float
    eps_s_pj_per_flop: float
    sustained_sp_gflop_per_s: float
    eps_d_pj_per_flop: float | None
    sustained_dp_gflop_per_s: float | None
    eps_mem_pj_per_byte: float
    sustained_mem_gb_per_s: float
    eps_l1_pj_per_byte: float | None
    l1_gb_per_s: float | None
    eps_l2_pj_per_byte: float | None
    l2_gb_per_s: float | None
    eps_rand_nj_per_access: float | None
    rand_macc_per_s: float | None

    def platform(
        self,
        precision: Literal["single", "double"] = "double",
        throughput: Literal["vendor", "sustained"] = "vendor",
        power_cap: bool = False,
        name: str = "",
    ) -> RooflinePlatform:
        """Model parameters for one precision.

        ``throughput="vendor"`` takes tau from the claimed peaks (columns 3-5, as 001 §3.3.2
        instantiates eq. 3); ``"sustained"`` from the measured values in parentheses.
        ``power_cap`` adds ``delta_pi_w`` (001 §4.2).
        """
        if precision not in ("single", "double"):
            raise ValueError(f"precision must be 'single' or 'double', got {precision!r}")
        if throughput not in ("vendor", "sustained"):
            raise ValueError(f"throughput must be 'vendor' or 'sustained', got {throughput!r}")
        if precision == "single":
            eps, peak, sust = self.eps_s_pj_per_flop, self.peak_sp_gflop_per_s, self.sustained_sp_gflop_per_s
        else:
            eps, peak, sust = self.eps_d_pj_per_flop, self.peak_dp_gflop_per_s, self.sustained_dp_gflop_per_s
        flops = peak if throughput == "vendor" else sust
        bw = self.peak_mem_gb_per_s if throughput == "vendor" else self.sustained_mem_gb_per_s
        if eps is None or flops is None:
            raise ValueError(f"platform {self.label!r} has no {precision}-precision data in Table 6")
        l1 = None if self.eps_l1_pj_per_byte is None else self.eps_l1_pj_per_byte * _PICO
        l2 = None if self.eps_l2_pj_per_byte is None else self.eps_l2_pj_per_byte * _PICO
        return RooflinePlatform.from_throughput(
            flops * _GIGA, bw * _GIGA, eps * _PICO, self.eps_mem_pj_per_byte * _PICO, self.pi0_w,
            eps_l1_j_per_byte=l1, eps_l2_j_per_byte=l2,
            delta_pi_w=self.delta_pi_w if power_cap else None, name=name or self.label)

    @property
    def eps_rand_j_per_access(self) -> float | None:
        """Energy per random main-memory access (J)."""
        return None if self.eps_rand_nj_per_access is None else self.eps_rand_nj_per_access * _NANO


_ROW_FIELDS = {f.name: f for f in fields(Table6Row)}
_OPTIONAL = {n for n, f in _ROW_FIELDS.items() if "None" in str(f.type)}
_TEXT_KEYS = ("label", "processor")
_TOP_KEYS = ("platforms", "source")
#: the keys of a row that may carry a unit, by the end of their name: (dimension, SI value of one of the key's
#: units); a bare number is in the key's unit, as the shipped tables write it ("peak_sp_gflop_per_s: 107")
_ROW_UNITS = {"_gflop_per_s": ("flop_rate", _GIGA), "_gb_per_s": ("bandwidth", _GIGA), "_w": ("power", 1.0),
              "_pj_per_flop": ("energy_per_flop", _PICO), "_pj_per_byte": ("energy_per_byte", _PICO),
              "_nj_per_access": ("energy", _NANO)}


#: the range of a keyed quantity: the config bound of its dimension (a flop rate, a bandwidth, or an energy or
#: power as ``param`` bounds them); a value beyond it makes a time, an energy or a balance no finite number
_ROW_BOUNDS = {"flop_rate": FLOP_RATE, "bandwidth": BANDWIDTH_BYTES_PER_S, **BY_DIMENSION}
#: keys with a range of their own, narrower than their dimension's
_KEY_BOUNDS = {"delta_pi_w": POWER_CAP_W}
#: the keys the model divides by or caps with, so > 0 though their range starts at 0 (eqs. 3-6, 32-38)
_POSITIVE = ("eps_s_pj_per_flop", "eps_d_pj_per_flop", "delta_pi_w")


def _row_value(name: str, value: Any) -> Any:
    """Row key ``name``'s ``value`` in the key's unit, as a config's is read: a string for the label and
    processor; else a number >= 0, bare or in exponent form ("1e3"), or with a unit where the key has a
    dimension (``_ROW_UNITS``: "107 GFLOP/s", "20 pJ"), within that dimension's config bound
    (``_ROW_BOUNDS``; > 0 for ``_POSITIVE``); null (a dash) where the key is optional.
    ValueError saying what was expected."""
    if name in _TEXT_KEYS:
        return table_value(value, str)
    if value is None and name in _OPTIONAL:
        return None
    unit, scale = next((u for suffix, u in _ROW_UNITS.items() if name.endswith(suffix)), (None, 1.0))
    number = table_value(value, float, unit, scale, _KEY_BOUNDS.get(name, _ROW_BOUNDS.get(unit or "")),
                         name in _POSITIVE)
    if number < 0:
        raise ValueError(f"expected a number >= 0, got {as_written(value)}")
    return number


def _row(key: str, row: Any, where: str) -> tuple[Table6Row | None, list[str]]:
    """Platform ``key``'s row (``where``: the file and the row, as messages name them), or None and a problem
    per bad, unknown or missing key (``fields.row_values``)."""
    values, problems = row_values(row, where, list(_ROW_FIELDS), _ROW_FIELDS, _row_value)
    return (None, problems) if values is None else (Table6Row(**values), [])


def load_platforms(path: str | Path) -> dict[str, Table6Row]:
    """Read a platform table such as ``configs/presets/platforms/choi_table6.yaml``.

    The file has top-level keys ``source`` and ``platforms``; each platform maps every
    :class:`Table6Row` field, in the unit its name gives, or with a unit (``_row_value``).
    Unknown, missing or duplicate keys and wrongly typed values are all collected and raised
    together as one TableError, each problem naming the file, the platform and the key.
    """
    source = str(path)
    try:
        doc = load_yaml_text(config_text(path), source)  # strict: duplicate keys, alias bombs, syntax
    except ConfigError as exc:
        raise TableError(exc.messages) from None
    return table_rows(doc, source, _TOP_KEYS, _row)
