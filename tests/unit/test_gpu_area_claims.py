"""004 app. C.2's area figures recomputed from its constants (simulator/studies/gpu_area_claims.py)."""

from __future__ import annotations

import pytest

from simulator.studies.gpu_area_claims import claims


def test_gtx980_blocks_match_the_printed_linear_model():
    ours = claims()
    assert ours[("004 §C.2.2", "GTX980", "L2 area, linear model")] == pytest.approx(98.25, abs=0.01)
    assert ours[("004 §C.2.2", "GTX980", "shared memory area per SM, linear model")] == pytest.approx(1.59, abs=0.01)


def test_titan_x_die_area_is_within_two_percent_of_the_published_one():
    assert claims()[("004 §C.2.3", "Titan X", "die area, published")] == pytest.approx(601, rel=0.02)
