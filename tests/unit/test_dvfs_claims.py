"""001 Table 7 predicted by the DVFS energy roofline fitted to its training rows (simulator/studies/dvfs_claims.py)."""

from __future__ import annotations

import pytest

from simulator.studies.dvfs_claims import TABLE, fitted_coefficients, parse_setting, predicted
from simulator.studies.references import load_reference


def test_a_row_names_its_setting():
    s = parse_setting("V: core 72 MHz 760 mV, memory 68 MHz 800 mV")
    assert not s.training
    assert (s.setting.v_core_v, s.setting.v_mem_v) == pytest.approx((0.76, 0.8))
    with pytest.raises(ValueError, match="does not read"):
        parse_setting("core 72 MHz")


def test_validation_rows_follow_from_the_training_rows():
    rows = load_reference("choi_roofline")
    coefficients = fitted_coefficients(rows)
    validation = [r for r in rows if r.table == TABLE and not parse_setting(r.row).training]
    assert len(validation) == 8 * 7
    worst = max(abs(predicted(coefficients, r) / r.number - 1) for r in validation)
    assert worst < 0.02  # Table 7 prints three significant digits; eqs. 44-46 reproduce them
