"""003's further figures read off the FMM study's outputs for the asri-fmm report.

* 003 section 4.2 (003:L185): the real i7-920's single-core stream bandwidth, its bandwidth for random 8 B
  transfers and its peak flop rate, beside the rates the study measures on its default host (``machine.json``:
  ``w_c_bytes_per_s``, ``w_c_irregular_bytes_per_s``, ``f_c_flops_per_s``), in GB/s and GFLOP/s;
* 003 section 8 (003:L301): the single-core bandwidth of 003's MARSSx86 model, beside the MARSSx86-like host's;
* 003 section 1 (003:L41): with pipelining on both, the runtime the LLC coupling saves over the DRAM coupling
  (1 - T_LLC / T_DRAM, the largest over the orders q run), in %;
* 003 section 8.4 (003:L381): the performance model's average error per model against the simulation, the
  mean over q of |model / simulation - 1| for each of Table 5's three model columns, the largest of the three
  (a bound: 003 gives "less than 3 %"), in %. Ours sets 003's equations as printed (``model_mcycles`` of
  ``crosscheck.csv``) beside our simulation; the extended model's (``ext_mcycles``) is given beside it.

``table2_dims`` builds the octree of 003 Table 2 (003:L172-181) for every order q it prints at 003's N = 2.4e5
points (003:L127), whatever orders and N the study's runs used (a few seconds).

Each function returns ``{(table, row, column): value}`` keyed as ``results/reference/asri_fmm.csv``; a value
is None where the points it needs were not run.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from workloads import fmm_ulist

#: 003 Table 5's model columns: (placement, variant) of the points they price
TABLE5_MODELS = {"LAP-DRAM Orig": ("lap-dram", "orig"), "LAP-LLC Block": ("lap-llc", "blocking"),
                 "LAP-LLC Pipeline": ("lap-llc", "pipelining")}
HOST_TABLE, MARSS_TABLE, SUMMARY_TABLE = "003 §4.2", "003 §8 host", "003 §1"
PIPELINED_GAIN = "runtime gain LAP-LLC Pipe vs LAP-DRAM Pipe (up to)"
MODEL_ERROR = "average model error vs simulation, largest of the three models (under)"


def table2_dims(qs, n_points: int, density: str) -> dict[int, fmm_ulist.UListDims]:
    """N_q, N_oct and N_U of the U-list of ``n_points`` points at each order of ``qs``."""
    return {q: fmm_ulist.build_problem(q, n_points, density).dims() for q in sorted(set(qs))}


def host_rates(default_machine: Mapping[str, Any], marss_machine: Mapping[str, Any]) -> dict[tuple[str, str, str], float]:
    """The hosts' measured rates (GB/s, GFLOP/s) against 003:L185 and 003:L301."""
    real = "real i7-920"
    return {(HOST_TABLE, real, "single-core stream bandwidth"): default_machine["w_c_bytes_per_s"] / 1e9,
            (HOST_TABLE, real, "random 8 B transfer bandwidth"): default_machine["w_c_irregular_bytes_per_s"] / 1e9,
            (HOST_TABLE, real, "peak flop rate"): default_machine["f_c_flops_per_s"] / 1e9,
            (MARSS_TABLE, "MARSSx86 model", "single-core stream bandwidth"): marss_machine["w_c_bytes_per_s"] / 1e9}


def _cycles(table: pd.DataFrame, q: int, placement: str, variant: str) -> float | None:
    sel = table[(table.q == q) & (table.placement == placement) & (table.variant == variant)]
    return float(sel.cycles.iloc[0]) if len(sel) else None


def pipelined_coupling_gain_pct(table: pd.DataFrame) -> float | None:
    """1 - T(LAP-LLC Pipelining) / T(LAP-DRAM Pipelining), the largest over q (%), from a study's ``table.csv``."""
    gains = []
    for q in sorted(table.q.unique()):
        llc, dram = _cycles(table, q, "lap-llc", "pipelining"), _cycles(table, q, "lap-dram", "pipelining")
        if llc is not None and dram is not None:
            gains.append(100 * (1 - llc / dram))
    return max(gains) if gains else None


def model_errors_pct(cross: pd.DataFrame, column: str = "model_mcycles") -> dict[str, float]:
    """Per Table 5 model column, the mean over q of |``column`` / sim_mcycles - 1| (%), from ``crosscheck.csv``."""
    out = {}
    for name, (placement, variant) in TABLE5_MODELS.items():
        sel = cross[(cross.placement == placement) & (cross.variant == variant)]
        if len(sel):
            out[name] = float(100 * (sel[column] / sel.sim_mcycles - 1).abs().mean())
    return out


def claims(default_machine: Mapping[str, Any], marss_machine: Mapping[str, Any], marss_table: pd.DataFrame,
           marss_cross: pd.DataFrame) -> dict[tuple[str, str, str], float | None]:
    """Ours for every entry this module covers (module docstring)."""
    out: dict[tuple[str, str, str], float | None] = dict(host_rates(default_machine, marss_machine))
    out[(SUMMARY_TABLE, "any q", PIPELINED_GAIN)] = pipelined_coupling_gain_pct(marss_table)
    errors = model_errors_pct(marss_cross)
    out[("003 §8.4", "Table 5", MODEL_ERROR)] = max(errors.values()) if len(errors) == len(TABLE5_MODELS) else None
    return out
