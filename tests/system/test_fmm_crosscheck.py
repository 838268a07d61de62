"""Tests of the FMM cross-check (simulator.studies.fmm.crosscheck) on small synthetic tables: no study is run."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from models.ulist import UListDims
from simulator.studies.fmm.crosscheck import (crosscheck_summary, measure_dirty_flush, measure_llc_exchange,
                                      measure_llc_residency, measure_pipelined_contention,
                                      measure_pipelined_residency, model_rows)

MACHINE = {
    "w_c_bytes_per_s": 6e9, "w_c_irregular_bytes_per_s": 0.7e9, "f_c_flops_per_s": 8e9, "access_rate_per_s": 2e9,
    "eps_byte_dram_j": 6e-10, "static_power_w": 34.0, "eps_flop_cpu_j": 6.7e-10,
    **{f"{p}.{k}": v for p in ("lap-dram", "lap-llc")
       for k, v in (("w_llc_bytes_per_s", 3.4e10), ("evict_cycles_per_line", 3.8), ("f_l_flops_per_s", 4e10),
                    ("eps_flop_lap_j", 3.2e-11), ("w_l_bytes_per_s", 1.28e10), ("eps_byte_llc_j", 1e-10),
                    ("lap_static_power_w", 0.32))},
}
DIMS = {4: UListDims(35, 6833, 171395), 8: UListDims(165, 1457, 35281)}


def _table() -> pd.DataFrame:
    rows = []
    for q in DIMS:
        for pl, gemm, v, b in (("cpu", "cpu", "orig", 1), ("lap-dram", "lap", "orig", 1),
                               ("lap-llc", "lap", "blocking", 23), ("lap-llc", "lap", "pipelining", 42)):
            rows.append({"q": q, "placement": pl, "gemm": gemm, "variant": v, "blocks": b, "cycles": 1e8 * q,
                         "energy_total_j": 2.0 * q, "llc_bytes": 8 * 2**20, "n_points": 1000, "density": "uniform",
                         "block_order": "class"})
    return pd.DataFrame(rows)


def test_model_rows_columns_and_energy_from_the_same_time() -> None:
    cross = model_rows(_table(), MACHINE, DIMS, class_counts={})
    for col in ("sim_mcycles", "model_mcycles", "ext_mcycles", "time_dev", "ext_time_dev", "sim_energy_j",
                "model_energy_j", "energy_dev", "ext_energy_j", "ext_energy_dev", "ext_bc_llc_share"):
        assert col in cross
    lap = cross[cross.placement != "cpu"]
    assert lap.ext_mcycles.notna().all()
    # CPU only: the extended model adds the host GEMM's memory time to its compute time, which
    # eq. 5 overlaps (max), so it predicts more cycles than the printed model
    cpu = cross[cross.placement == "cpu"]
    assert (cpu.ext_mcycles > cpu.model_mcycles).all()
    # energy >= static power x the model time it sits beside
    assert (lap.ext_energy_j >= 34.32 * lap.ext_mcycles * 1e6 / 2e9).all()
    assert (cross.model_energy_j >= 34.0 * cross.model_mcycles * 1e6 / 2e9).all()
    # deviations are sim / model - 1
    assert cross.ext_time_dev.to_numpy() == pytest.approx((cross.sim_mcycles / cross.ext_mcycles - 1).to_numpy())
    llc = cross[(cross.placement == "lap-llc") & (cross.variant == "blocking")]
    assert (llc.ext_bc_llc_share == 1.0).all()  # no measured curve: all or nothing, and these fit
    assert (cross[(cross.placement == "lap-dram")].ext_bc_llc_share == 0.0).all()


def test_model_rows_leave_out_the_systolic_points() -> None:
    # the U-list model prices a flop-rate LAP; a systolic point beside it gets no model row
    table = _table()
    systolic = table[table.gemm == "lap"].assign(gemm="systolic", placement=lambda t: "systolic-os-" + t.placement)
    both = model_rows(pd.concat([table, systolic], ignore_index=True), MACHINE, DIMS, class_counts={})
    pd.testing.assert_frame_equal(both, model_rows(table, MACHINE, DIMS, class_counts={}))


def test_a_placement_named_otherwise_takes_its_recorded_coupling() -> None:
    """A LAP placement whose name is not "lap-<coupling>" (the LAP in an HBM stack) is modelled with the
    coupling its micro runs recorded: as "lap-<that coupling>" with the same measured figures."""
    from simulator.studies.fmm.crosscheck import lap_coupling, model_coupling

    from tests.conftest import CONFIGS

    assert lap_coupling(str(CONFIGS / "systems" / "lap_hbm_stack.yaml")) == "near-memory"
    assert lap_coupling(str(CONFIGS / "systems" / "lap_llc.yaml")) == "llc"
    machine = {**MACHINE, **{k.replace("lap-llc", "lap-stack"): v for k, v in MACHINE.items() if k.startswith("lap-llc")},
               "lap-stack.coupling": "llc"}
    assert model_coupling(machine, "lap-stack") == "llc" and model_coupling(machine, "lap-dram") == "dram"
    table = _table()
    renamed = table.assign(placement=table.placement.replace("lap-llc", "lap-stack"))
    cross, named = model_rows(renamed, machine, DIMS, class_counts={}), model_rows(table, MACHINE, DIMS, class_counts={})
    pd.testing.assert_frame_equal(cross.drop(columns="placement"), named.drop(columns="placement"))


def test_model_rows_use_the_measured_residency_curve() -> None:
    """A curve that keeps half of the lines at every ratio halves the LLC share of B and C."""
    half = {**MACHINE, "llc_residency": [[0.5, 0.5], [4.0, 0.5]]}
    cross = model_rows(_table(), half, DIMS, class_counts={})
    llc = cross[cross.placement == "lap-llc"]
    assert llc.ext_bc_llc_share.to_numpy() == pytest.approx(0.5)
    full = model_rows(_table(), MACHINE, DIMS, class_counts={})
    assert (llc.ext_mcycles.to_numpy() > full[full.placement == "lap-llc"].ext_mcycles.to_numpy()).all()


def test_measure_llc_residency_falls_past_the_capacity() -> None:
    """On the simulated 8 MiB LLC a reused exchange of half the capacity stays, one of 1.25x
    keeps part of its lines, and the reference ratio (4x) keeps none by construction."""
    curve = measure_llc_residency("configs/systems/lap_llc.yaml", ratios=(0.5, 1.25, 4.0), heights=(35,))
    (x0, h0), (x1, h1), (x2, h2) = curve
    assert (x0, x1, x2) == (0.5, 1.25, 4.0)
    assert h0 == pytest.approx(1.0, abs=1e-3)
    assert 0.05 < h1 < 0.95
    assert h2 == 0.0


@pytest.mark.parametrize("system", ["configs/systems/lap_llc.yaml", "configs/systems/marssx86/lap_llc.yaml"])
def test_one_run_of_three_exchanges_counts_what_runs_of_one_and_of_three_count(system) -> None:
    """The residency's D_1 and D_3, read from one run of three rounds, are the DRAM lines of a run of one
    round and of a run of three, bit for bit: at an LLC-sized exchange (1.1x) that keeps part of B and C."""
    from simulator.studies.fmm.crosscheck import _exchange_dram_lines, _exchange_dram_lines_1_3

    n = int(1.1 * 8 * 2**20 / (2 * 35 * 8)) // 8 * 8
    d1, d3 = _exchange_dram_lines_1_3(system, 35, n)
    assert (d1, d3) == (_exchange_dram_lines(system, 35, n, 1), _exchange_dram_lines(system, 35, n, 3))
    assert d3 > d1 > 0


def test_exchange_micro_runs_store_b_and_c_in_the_studys_layout() -> None:
    """The pipelined exchange micro run lays B and C out as the FMM trace of the same layout does:
    contiguous runs and PVFMM's GEMM orientation for ``interactions``, line-group gathers for ``rows``;
    and the residency it measures depends on it (the LAP sweeps B and C in a different order)."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    from simulator.studies.fmm.crosscheck import _pipelined_exchange_trace
    for layout, gathers, m in (("rows", True, 35), ("interactions", False, 16)):
        t = _pipelined_exchange_trace(35, 16, 3, layout)
        host = t.filter(pc.is_in(t["op"], value_set=pa.array(["read", "write"])))
        assert all((a is not None) == gathers for a in host.column("addrs").to_pylist())
        offloads = [json.loads(x) for x, op in zip(t["params"].to_pylist(), t["op"].to_pylist()) if op == "offload"]
        assert {o["m"] for o in offloads} == {m}
    rows = measure_llc_residency("configs/systems/lap_llc.yaml", ratios=(1.1, 4.0), heights=(35,))
    inter = measure_llc_residency("configs/systems/lap_llc.yaml", ratios=(1.1, 4.0), heights=(35,),
                                  bc_layout="interactions")
    assert rows[0][1] != pytest.approx(inter[0][1], abs=0.01)


def test_measure_pipelined_residency_keeps_b_longer_than_c() -> None:
    """Double-buffered exchange on the simulated 8 MiB LLC: two sets of half the capacity stay,
    at 3x nothing stays, and at 1.2x the C lines (long reuse distance) are lost before the B
    lines (short)."""
    b, c = measure_pipelined_residency("configs/systems/lap_llc.yaml", ratios=(0.5, 1.2, 3.0), heights=(35,))
    assert [x for x, _ in b] == [x for x, _ in c] == [0.5, 1.2, 3.0]
    (_, b0), (_, b1), (_, b2) = b
    (_, c0), (_, c1), (_, c2) = c
    assert b0 > 0.95 and c0 > 0.95
    assert b2 < 0.05 and c2 < 0.05
    assert c1 < b1 - 0.2


def test_measure_pipelined_contention_slows_the_host_beside_a_gemm() -> None:
    """Default LLC-coupled system, exchange at 2x the LLC (B and C from DRAM): the host's B writes
    wait longer when the LAP's GEMMs share the LLC and the DRAM queue; the near-memory LAP reaches
    the banks over its own path, so the host's C reads do not slow."""
    [[h, k_in, k_out]] = measure_pipelined_contention("configs/systems/lap_llc.yaml", heights=(84,))
    assert h == 84 and k_in > 1.2 and k_out > 1.2
    [[_, n_in, n_out]] = measure_pipelined_contention("configs/systems/lap_near_memory.yaml", heights=(84,))
    assert n_out == pytest.approx(1.0, abs=0.01) and n_in < k_in


def test_measure_dirty_flush_pays_a_dram_write_per_line() -> None:
    """Default LAP-DRAM system: flushing dirty lines waits for their DRAM writes (one 64 B burst per
    5 ns at 12.8 GB/s is 10 cycles at 2 GHz), more than the eviction of a line to the LLC costs."""
    dirty = measure_dirty_flush("configs/systems/lap_dram.yaml")
    _, evict = measure_llc_exchange("configs/systems/lap_dram.yaml")
    assert 10.0 <= dirty < 12.0 and dirty > 2 * evict


def test_measure_pipelined_contention_is_larger_beside_thin_gemms() -> None:
    """Default LAP-DRAM system: a GEMM of height 35 moves more bytes per flop than one of height
    286 and slows the host's B writes more (measured 2.25 against 1.27)."""
    (_, thin, _), (_, thick, _) = measure_pipelined_contention("configs/systems/lap_dram.yaml", heights=(35, 286))
    assert thin > thick + 0.5


def test_model_rows_apply_the_contention_only_to_pipelining() -> None:
    missing = {**MACHINE, "llc_residency": [[0.5, 0.0], [4.0, 0.0]]}  # B and C always from DRAM
    slow = {**missing, "lap-llc.pipelined_contention": [[35, 2.0, 3.0], [165, 2.0, 3.0]]}
    base, cont = (model_rows(_table(), m, DIMS, class_counts={}).set_index(["q", "placement", "variant"])
                  for m in (missing, slow))
    pipe = ("lap-llc", "pipelining")
    assert (cont.loc[(slice(None),) + pipe, "ext_mcycles"] > base.loc[(slice(None),) + pipe, "ext_mcycles"]).all()
    others = [i for i in base.index if i[1:] != pipe]
    assert (cont.loc[others, "ext_mcycles"] == base.loc[others, "ext_mcycles"]).all()
    # a study directory written before the factors were kept per height: one pair for every height
    old = model_rows(_table(), {**missing, "lap-llc.pipelined_contention": [2.0, 3.0]}, DIMS, class_counts={})
    assert old.ext_mcycles.to_numpy() == pytest.approx(cont.reset_index().ext_mcycles.to_numpy(), rel=1e-12)


def test_model_rows_use_the_pipelined_curves_only_for_pipelining() -> None:
    keep_b = {**MACHINE, "llc_residency": [[0.5, 0.5], [4.0, 0.5]],
              "llc_residency_pipelined_b": [[0.5, 1.0], [4.0, 1.0]],
              "llc_residency_pipelined_c": [[0.5, 0.0], [4.0, 0.0]]}
    cross = model_rows(_table(), keep_b, DIMS, class_counts={})
    llc = cross[cross.placement == "lap-llc"].set_index("variant")
    assert (llc.loc["pipelining", "ext_b_llc_share"] == 1.0).all()
    assert (llc.loc["pipelining", "ext_c_llc_share"] == 0.0).all()
    assert (llc.loc["blocking", ["ext_b_llc_share", "ext_c_llc_share"]].to_numpy() == 0.5).all()


def test_crosscheck_summary_is_the_mean_absolute_deviation() -> None:
    cross = pd.DataFrame({
        "q": [4, 6, 4, 6, 14], "placement": ["lap-llc"] * 4 + ["lap-llc"], "variant": ["blocking"] * 5,
        "time_dev": [0.1, -0.3, 0.0, 0.0, 9.0], "ext_time_dev": [0.02, -0.04, 0.0, 0.0, 9.0],
        "energy_dev": [0.2, 0.2, 0.0, 0.0, 9.0], "ext_energy_dev": [-0.01, 0.03, 0.0, 0.0, 9.0],
    })
    cross.loc[2:3, "placement"] = "lap-dram"
    cross.loc[2:3, "variant"] = "orig"
    s = crosscheck_summary(cross, qs=(4, 6)).set_index("column")
    assert s.loc["LAP-LLC Blocking", "mae_time_printed"] == pytest.approx(0.2)
    assert s.loc["LAP-LLC Blocking", "mae_time_extended"] == pytest.approx(0.03)
    assert s.loc["LAP-LLC Blocking", "mae_energy_extended"] == pytest.approx(0.02)
    assert s.loc["LAP-LLC Blocking", "points"] == 2  # q = 14 left out
    assert s.loc["LAP-DRAM Orig", "mae_time_printed"] == 0.0
    assert math.isnan(s.loc["CPU only", "mae_time_printed"])


def test_recompute_rejects_a_directory_that_is_not_a_study(tmp_path, capsys) -> None:
    from pathlib import Path

    from simulator.studies.fmm.crosscheck import TABLE_COLUMNS, main

    assert main([str(tmp_path)]) == 2
    assert f"{tmp_path / 'table.csv'}: missing" in capsys.readouterr().err
    # a table without the block order cannot be recomputed: its blocks could be cut either way
    study = Path("results/fmm_marssx86")
    (tmp_path / "machine.json").write_text((study / "machine.json").read_text())
    pd.read_csv(study / "table.csv").drop(columns=["block_order"]).to_csv(tmp_path / "table.csv", index=False)
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'table.csv'}: columns block_order missing" in err and "block_order" in TABLE_COLUMNS


def test_machine_parts_split_the_micro_runs_and_assemble_in_measure_machines_order() -> None:
    """The shipped study's micro runs are 15 independent parts, residency heights first; the residency system's
    contention runs are its pipelined residency runs, and the host rows alone run once for the three LAP
    systems (one host); each part crosses a process boundary (pickles); the assembled dict keeps
    measure_machine's key order, each LAP system's contention factors before its f_L, and averages each
    residency curve over the heights in height order."""
    import pickle

    from simulator.studies.fmm.crosscheck import (PIPELINED_RATIOS, RESIDENCY_HEIGHTS, RESIDENCY_RATIOS, assemble_machine,
                                          machine_parts)

    laps = {p: f"configs/systems/{p.replace('-', '_')}.yaml" for p in ("lap-dram", "lap-llc", "lap-near-memory")}
    parts = machine_parts("configs/systems/i7_920_ddr3.yaml", laps)
    assert [p.kind for p in parts] == (["llc_residency"] * 4 + ["pipelined_residency"] * 4 + ["contention_with_lap"] * 2
                                       + ["contention_alone"] + ["lap"] * 3 + ["cpu"])
    assert {p.args[0] for p in parts[:8]} == {laps["lap-llc"]} and [p.args[1] for p in parts[:4]] == list(
        RESIDENCY_HEIGHTS)
    assert [p.args[0] for p in parts[8:10]] == ["lap-dram", "lap-near-memory"]
    assert not parts[10].args[0].spec.accelerators  # the host alone
    assert [p.args[:3] for p in parts[11:14]] == [  # the non-coherent couplings measure a dirty flush
        ("lap-dram", laps["lap-dram"], True), ("lap-llc", laps["lap-llc"], False),
        ("lap-near-memory", laps["lap-near-memory"], True)]
    assert pickle.loads(pickle.dumps(parts)) == parts

    n, k = len(RESIDENCY_RATIOS), len(PIPELINED_RATIOS)
    busy = {"lap-dram": 3.0, "lap-llc": 4.0, "lap-near-memory": 5.0}  # busy times beside each LAP, x the alone's
    results = ([[0.1 * h] * n for h in range(4)]
               + [{"shares": ([0.2 * h] * k, [0.05 * h] * k), "with_lap": [m, 4.0 * m, 8.0 * m]}
                  for h, m in enumerate(RESIDENCY_HEIGHTS)]
               + [[[m, busy[lap] * m, 2 * busy[lap] * m] for m in RESIDENCY_HEIGHTS] for lap in ("lap-dram", "lap-near-memory")]
               + [[[m, 1.0 * m, 1.0 * m] for m in RESIDENCY_HEIGHTS]]  # the one host alone: any other height's misprices
               + [{f"{lap}.w": i, f"{lap}.f_l_flops_per_s": 1e9} for i, lap in enumerate(laps)]
               + [{"w_c_bytes_per_s": 6e9, "f_c": 8e9}])
    m = assemble_machine(parts, results)
    assert list(m) == ["w_c_bytes_per_s", "f_c", "llc_residency", "llc_residency_pipelined_b", "llc_residency_pipelined_c"] + [
        f"{lap}.{key}" for lap in laps for key in ("w", "pipelined_contention", "f_l_flops_per_s")]
    assert m["llc_residency"][0] == [RESIDENCY_RATIOS[0], pytest.approx(0.15)]
    assert m["llc_residency_pipelined_b"][-1] == [PIPELINED_RATIOS[-1], pytest.approx(0.3)]
    assert m["llc_residency_pipelined_c"][0][1] == pytest.approx(0.075)
    for lap, factor in busy.items():
        assert m[f"{lap}.pipelined_contention"] == [[float(h), factor, 2 * factor] for h in RESIDENCY_HEIGHTS]
    with pytest.raises(ValueError):  # a result missing
        assemble_machine(parts, results[:-1])
    unpipelined = machine_parts("configs/systems/i7_920_ddr3.yaml", laps, pipelined=False)
    assert [p.kind for p in unpipelined] == ["llc_residency"] * 4 + ["lap"] * 3 + ["cpu"]
    swapped = [r for r in results]
    swapped[10] = list(reversed(results[10]))  # the alone runs' heights out of order: refused, not mispriced
    with pytest.raises(ValueError, match="heights"):
        assemble_machine(parts, swapped)


def test_lap_systems_on_two_hosts_divide_by_their_own_host_alone() -> None:
    """A LAP system whose host differs (here its DRAM scheduler, set on the loaded system) gets host rows alone
    of its own; the two that differ only in their accelerators share one."""
    from simulator.studies.fmm.crosscheck import RESIDENCY_HEIGHTS, assemble_machine, host_key, machine_parts
    from simulator.studies.fmm.placement import placement_system

    other = placement_system("configs/systems/lap_near_memory.yaml", ("dram.geometry.scheduler=ready_first",))
    laps = {"lap-dram": "configs/systems/lap_dram.yaml", "lap-near-memory": other}
    assert host_key(laps["lap-dram"]) == host_key("configs/systems/lap_near_memory.yaml") != host_key(other)
    parts = machine_parts("configs/systems/i7_920_ddr3.yaml", laps)
    kinds = [p.kind for p in parts]
    assert kinds == ["contention_with_lap"] * 2 + ["contention_alone"] * 2 + ["lap"] * 2 + ["cpu"]
    alone_of = {host_key(p.args[0]): i for i, p in enumerate(parts) if p.kind == "contention_alone"}
    results = ([[[m, 6.0 * m, 6.0 * m] for m in RESIDENCY_HEIGHTS]] * 2
               + [[[m, (1.0 + i) * m, (1.0 + i) * m] for m in RESIDENCY_HEIGHTS] for i in range(2)]
               + [{f"{lap}.f_l_flops_per_s": 1e9} for lap in laps] + [{"w_c_bytes_per_s": 6e9}])
    m = assemble_machine(parts, results)
    for lap, sysf in laps.items():
        factor = 6.0 / (1.0 + alone_of[host_key(sysf)] - 2)  # alone results 1x and 2x, by their parts' order
        assert m[f"{lap}.pipelined_contention"] == [[float(h), factor, factor] for h in RESIDENCY_HEIGHTS]
    assert m["lap-dram.pipelined_contention"] != m["lap-near-memory.pipelined_contention"]


@pytest.mark.parametrize("system", ["configs/systems/lap_llc.yaml", "configs/systems/lap_hbm_stack.yaml"])
def test_the_host_rows_alone_run_the_same_without_the_accelerators(system) -> None:
    """What lets LAP systems of one host share their host rows alone: on the system without its accelerators
    (and their near memory) the rows take the same busy times, stage by stage, as on the whole system."""
    from simulator.studies.fmm.crosscheck import _exchange_busy, host_alone
    from simulator.runner import load_system

    whole = load_system(system)
    assert _exchange_busy(whole, (35,), 2.0, 3, "rows", host_only=True) == \
        _exchange_busy(host_alone(whole), (35,), 2.0, 3, "rows", host_only=True)


@pytest.mark.parametrize("placement, key", [("lap-dram", "eps_byte_dram_dma_j"),
                                            ("lap-near-memory", "eps_byte_dram_near_j"), ("lap-llc", None)])
def test_the_extended_model_prices_the_laps_dma_bytes_at_the_dma_energy(placement, key):
    """The LAP's GEMM-stage DRAM bytes at the DRAM and near-memory couplings are DMA, which crosses neither the
    caches nor the memory path: the extended model prices exactly those bytes at the measured DMA energy per
    byte (1e-10 J/B cheaper here), the printed model keeps the host's, and an LLC-coupled LAP's bytes (through
    the caches) keep the host's too."""
    import json

    from models import ulist
    from simulator.studies.fmm import crosscheck as cc
    from simulator.studies.fmm.model_eval import DEFAULT_MACHINE
    from workloads import fmm_ulist

    machine = json.loads(DEFAULT_MACHINE.read_text())
    dims, counts = UListDims(**machine["dims"]["4"]), tuple(machine["class_counts"]["4"])
    kw = dict(gemm="lap", variant="orig", placement=placement, blocks=1, llc_bytes=8 * 2**20, block_order="class")
    host = machine["eps_byte_dram_j"]
    same = cc.point_model({**machine, **dict.fromkeys(cc.DMA_EPS_KEYS.values(), host)}, placement, dims, counts, **kw)
    less = cc.point_model({**machine, **dict.fromkeys(cc.DMA_EPS_KEYS.values(), host - 1e-10)}, placement, dims, counts,
                          **kw)
    assert less.energy_j == same.energy_j and less.ext_cycles == same.ext_cycles
    if key is None:
        assert less.ext_energy_j == same.ext_energy_j
        return
    es = ulist.extended_stages(dims, cc._machine(machine, placement), cc.extended_params(machine, placement), 1,
                               llc_bytes=8 * 2**20, sets=fmm_ulist.exchange_buffers("orig"),
                               coupling=cc.model_coupling(machine, placement), class_counts=counts, order="class")
    gemm_dram = next(st for st in es.stages if st.name == "gemm").traffic_bytes["dram_dma"]
    assert gemm_dram > 0
    assert same.ext_energy_j - less.ext_energy_j == pytest.approx(gemm_dram * 1e-10, rel=1e-9)
