"""The energy roofline under dynamic voltage and frequency scaling (001 §5.1, eqs. 44-46).

At a setting (core voltage V_core, memory voltage V_mem, volts) an operation on the core costs
eps = C''_0 V_core^2 (eq. 44: dynamic power times the time per operation, whose frequencies cancel), a byte moved
to or from memory eps_mem = C''_0,mem V_mem^2 (eq. 45), and the constant power is the leakage of core and memory
plus the rest, pi_0 = C_1,core V_core + C_1,mem V_mem + pi_misc (eq. 46). 001 fits these coefficients by
regression on measured energies (eq. 48); ``fit`` fits them to energy costs given at a set of settings, by least
squares, so that costs at other settings can be predicted. Energies are in J (per operation or per byte),
powers in W, voltages in V, coefficients in J/V^2 and W/V.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np


@dataclass(frozen=True)
class DvfsSetting:
    """One voltage setting of core and memory (V)."""

    v_core_v: float
    v_mem_v: float

    def __post_init__(self) -> None:
        for name in ("v_core_v", "v_mem_v"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0 (V), got {v!r}")


@dataclass(frozen=True)
class DvfsCoefficients:
    """The constants of eqs. 44-46: C''_0 per core operation kind (J/V^2), C''_0,mem (J/B/V^2), C_1,core and
    C_1,mem (W/V), pi_misc (W)."""

    c0_core_j_per_v2: Mapping[str, float]
    c0_mem_j_per_byte_v2: float
    c1_core_w_per_v: float
    c1_mem_w_per_v: float
    pi_misc_w: float

    def core_energy_j(self, kind: str, s: DvfsSetting) -> float:
        """Energy of one core operation of ``kind`` at setting ``s`` (eq. 44), J."""
        if kind not in self.c0_core_j_per_v2:
            raise ValueError(f"no core operation kind {kind!r}; known: {', '.join(self.c0_core_j_per_v2)}")
        return self.c0_core_j_per_v2[kind] * s.v_core_v ** 2

    def mem_energy_j_per_byte(self, s: DvfsSetting) -> float:
        """Energy of one byte of memory traffic at setting ``s`` (eq. 45), J/B."""
        return self.c0_mem_j_per_byte_v2 * s.v_mem_v ** 2

    def constant_power_w(self, s: DvfsSetting) -> float:
        """Constant power at setting ``s`` (eq. 46), W."""
        return self.c1_core_w_per_v * s.v_core_v + self.c1_mem_w_per_v * s.v_mem_v + self.pi_misc_w


def _square_law_coefficient(energies_j: Sequence[float], volts: Sequence[float]) -> float:
    """The C minimising sum (C v^2 - e)^2 over the pairs (J/V^2)."""
    v2 = np.asarray(volts, dtype=float) ** 2
    return float(np.dot(v2, energies_j) / np.dot(v2, v2))


def fit(settings: Sequence[DvfsSetting], core_energies_j: Mapping[str, Sequence[float]],
        mem_energies_j_per_byte: Sequence[float], constant_powers_w: Sequence[float]) -> DvfsCoefficients:
    """Coefficients of eqs. 44-46 fitted by least squares to costs given at ``settings`` (one value a setting in
    each sequence). The constant power needs at least three settings with distinct core and memory voltages."""
    n = len(settings)
    if n == 0:
        raise ValueError("fit needs at least one setting")
    for name, values in (("mem_energies_j_per_byte", mem_energies_j_per_byte),
                         ("constant_powers_w", constant_powers_w), *core_energies_j.items()):
        if len(values) != n:
            raise ValueError(f"{name} has {len(values)} values for {n} settings")
    v_core = [s.v_core_v for s in settings]
    v_mem = [s.v_mem_v for s in settings]
    design = np.column_stack([v_core, v_mem, np.ones(n)])
    if np.linalg.matrix_rank(design) < 3:
        raise ValueError("the settings do not determine eq. 46: vary core and memory voltage independently")
    (c1_core, c1_mem, misc), *_ = np.linalg.lstsq(design, np.asarray(constant_powers_w, dtype=float), rcond=None)
    return DvfsCoefficients({k: _square_law_coefficient(e, v_core) for k, e in core_energies_j.items()},
                            _square_law_coefficient(mem_energies_j_per_byte, v_mem),
                            float(c1_core), float(c1_mem), float(misc))
