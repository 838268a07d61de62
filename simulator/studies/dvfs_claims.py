"""001 Table 7 (001:L1538-1556): the Jetson TK1's energy costs at 16 voltage and frequency settings, predicted by
the DVFS energy roofline (``models.dvfs``, 001 eqs. 44-46).

001 splits the settings into a training set (type T) and a validation set (type V, 001:L1534). Here the
coefficients of eqs. 44-46 are fitted by least squares to the T rows' printed costs, and every row's costs are
predicted from its voltages: the T rows are the fit's own data (counted as fitted), the V rows the check. The
reference entries of ``results/reference/choi_roofline.csv`` name each setting in their row,
``"<type>: core <f> MHz <v> mV, memory <f> MHz <v> mV"``. Units: core energies pJ per operation, memory energy
pJ/B, constant power W.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from models.dvfs import DvfsCoefficients, DvfsSetting, fit
from simulator.studies.references import ReferenceRow

TABLE = "001 Table 7"
#: Table 7's core-energy columns and the operation kind each prices (eq. 44); the memory and constant columns
CORE_COLUMNS = {"energy SP": "single", "energy DP": "double", "energy integer": "integer",
                "energy shared memory": "shared memory", "energy L2": "L2"}
MEM_COLUMN, CONSTANT_COLUMN = "energy memory", "constant power"
_ROW = re.compile(r"(?P<type>[TV]): core (?P<fc>\d+) MHz (?P<vc>\d+) mV, memory (?P<fm>\d+) MHz (?P<vm>\d+) mV")
_PICO = 1e-12


@dataclass(frozen=True)
class Table7Setting:
    """One row of Table 7: its role (T: training, V: validation) and its voltages."""

    label: str
    training: bool
    setting: DvfsSetting


def parse_setting(label: str) -> Table7Setting:
    """The setting a Table 7 reference row names (ValueError if the label does not follow the row format)."""
    m = _ROW.fullmatch(label)
    if m is None:
        raise ValueError(f"{TABLE} row {label!r} does not read '<T|V>: core <f> MHz <v> mV, memory <f> MHz <v> mV'")
    return Table7Setting(label, m["type"] == "T", DvfsSetting(int(m["vc"]) / 1e3, int(m["vm"]) / 1e3))


def fitted_coefficients(rows: list[ReferenceRow]) -> DvfsCoefficients:
    """Eqs. 44-46 fitted to the costs Table 7 prints for its training settings."""
    by_row: dict[str, dict[str, float]] = {}
    for r in rows:
        if r.table == TABLE:
            by_row.setdefault(r.row, {})[r.column] = r.number
    training = [(parse_setting(label), costs) for label, costs in by_row.items() if parse_setting(label).training]
    settings = [s.setting for s, _ in training]
    return fit(settings,
               {kind: [costs[col] * _PICO for _, costs in training] for col, kind in CORE_COLUMNS.items()},
               [costs[MEM_COLUMN] * _PICO for _, costs in training],
               [costs[CONSTANT_COLUMN] for _, costs in training])


def predicted(coefficients: DvfsCoefficients, row: ReferenceRow) -> float:
    """Ours for Table 7 entry ``row``, in its unit (pJ, pJ/B or W)."""
    s = parse_setting(row.row).setting
    if row.column in CORE_COLUMNS:
        return coefficients.core_energy_j(CORE_COLUMNS[row.column], s) / _PICO
    if row.column == MEM_COLUMN:
        return coefficients.mem_energy_j_per_byte(s) / _PICO
    if row.column == CONSTANT_COLUMN:
        return coefficients.constant_power_w(s)
    raise ValueError(f"{TABLE} has no column {row.column!r}")
