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


def test_a_table_c2_design_is_its_sms_priced_block_by_block():
    # Jacobi 2D's design: 32 SMs of 128 vector units (logic 0.04282 + a 2 KiB register bank 0.004305 x 2 + 0.001947
    # mm^2 each), 24 KiB of shared memory (0.01565 x 24 + 0.09281) and 102.65 / 16 mm^2 of overhead; no caches
    per_sm = 128 * (0.04282 + 0.004305 * 2 + 0.001947) + 0.01565 * 24 + 0.09281 + 102.65 / 16
    assert claims()[("004 Table C.2", "Jacobi 2D", "area")] == pytest.approx(32 * per_sm, rel=1e-9)


def test_deleting_the_caches_removes_the_l1_pairs_and_the_l2():
    ours = claims()
    l1_pairs = 8 * ours[("004 §C.2.2", "GTX980", "L1 area per SM pair, linear model")]
    l2 = ours[("004 §C.2.2", "GTX980", "L2 area, linear model")]
    assert ours[("004 §C.4.1", "GTX980", "die area without caches")] == pytest.approx(
        ours[("004 §C.2.2", "GTX980", "die area")] - l1_pairs - l2, rel=1e-9)
