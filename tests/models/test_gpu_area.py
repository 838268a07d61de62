"""Tests of the Maxwell die-area model (models.gpu_area, 004 app. C.2)."""

from __future__ import annotations

import pytest

from models.gpu_area import AreaCoefficients, GpuFloorplan, LinearArea, die_area_mm2, l2_area_mm2

UNIT = AreaCoefficients(1.0, LinearArea(0.0, 0.0), LinearArea(0.0, 0.0), LinearArea(0.0, 0.0), LinearArea(0.0, 0.0),
                        0.0)


def test_vector_units_scale_with_sms_and_units_per_sm():
    assert die_area_mm2(UNIT, GpuFloorplan(4, 8, 2, 96, 48, 1024)) == pytest.approx(32.0)


def test_l1_is_counted_once_per_pair_and_l2_per_slice():
    c = AreaCoefficients(0.0, LinearArea(0.0, 0.0), LinearArea(0.0, 0.0), LinearArea(1.0, 0.5),
                         LinearArea(0.1, 1.0), 0.0)
    gpu = GpuFloorplan(4, 8, 2, 96, 48, 1024)
    assert l2_area_mm2(c, gpu) == pytest.approx(4 * (0.1 * 256 + 1.0))
    assert die_area_mm2(c, gpu) == pytest.approx(2 * 48.5 + l2_area_mm2(c, gpu))


def test_bad_floorplans_are_refused():
    with pytest.raises(ValueError, match="even number"):
        GpuFloorplan(3, 8, 2, 96, 48, 1024)
    with pytest.raises(ValueError, match="size must be >= 0 KiB"):
        LinearArea(1.0, 0.0).area_mm2(-1)
