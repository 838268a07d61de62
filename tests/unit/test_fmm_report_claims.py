"""003's further figures read off the FMM study's outputs (simulator/studies/fmm/report_claims.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from simulator.studies.fmm.report_claims import (PIPELINED_GAIN, host_rates, model_errors_pct,
                                                 pipelined_coupling_gain_pct, table2_dims)


def test_pipelined_gain_is_the_largest_cut_over_q():
    table = pd.DataFrame({"q": [4, 4, 8, 8, 8], "placement": ["lap-llc", "lap-dram", "lap-llc", "lap-dram", "lap-llc"],
                          "variant": ["pipelining", "pipelining", "pipelining", "pipelining", "orig"],
                          "cycles": [80.0, 100.0, 95.0, 100.0, 50.0]})
    assert pipelined_coupling_gain_pct(table) == pytest.approx(20.0)  # q = 4: 1 - 80 / 100
    assert pipelined_coupling_gain_pct(table[table.q == 8]) == pytest.approx(5.0)
    assert pipelined_coupling_gain_pct(table[table.placement == "lap-llc"]) is None
    assert "Pipe" in PIPELINED_GAIN


def test_model_error_is_the_mean_absolute_deviation_per_column():
    cross = pd.DataFrame({"placement": ["lap-dram", "lap-dram", "lap-llc"], "variant": ["orig", "orig", "blocking"],
                          "sim_mcycles": [100.0, 200.0, 50.0], "model_mcycles": [110.0, 190.0, 50.0]})
    errors = model_errors_pct(cross)
    assert errors == {"LAP-DRAM Orig": pytest.approx(7.5), "LAP-LLC Block": pytest.approx(0.0)}  # (10 + 5) / 2


def test_host_rates_are_in_gb_per_s_and_gflop_per_s():
    ours = host_rates({"w_c_bytes_per_s": 6.4e9, "w_c_irregular_bytes_per_s": 1.3e8, "f_c_flops_per_s": 8e9},
                      {"w_c_bytes_per_s": 3e9})
    assert sorted(ours.values()) == pytest.approx([0.13, 3.0, 6.4, 8.0])


def test_table2_leaf_size_is_exact():
    # N_q = (q + 1)(q + 2)(q + 3) / 6 points a leaf (003 Table 2: 35 at q = 4)
    assert table2_dims([4], 20_000, "uniform")[4].n_q == 35
