"""FMM U-list traces: structure per variant, sizes, flops, and two placement findings of 003 §8."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from simulator.runner import simulate_trace
from workloads import fmm_tree
from simulator.interconnect.interface import region_lines
from models.ulist import llc_blocks
from workloads.fmm_ulist import (DEFAULT_LLC_SHARE, GROUP, META_BYTES, VARIANTS, block_range, build_problem,
                                 choose_blocks, column_lines, columns_access, fmm_ulist, group_column_lines,
                                 matrix_columns_access, reread_cap, split_blocks, ulist_trace)
from workloads.trace import TraceBuilder, trace_summary, validate_trace

N_POINTS = 20_000
SYSTEMS = "configs/systems"


@pytest.fixture(scope="module")
def problem():
    return build_problem(4, N_POINTS, "table2")


def _ops(table):
    return list(zip(table.column("stage").to_pylist(), table.column("op").to_pylist()))


def _dram_accesses(res) -> float:
    df = res.to_pandas()
    d = df[df.component == "dram"]
    return float(d[d.quantity.isin(["reads", "writes"])].value.sum())


def _cycles(res) -> float:
    df = res.to_pandas()
    return float(df[(df.component == "system") & (df.quantity == "host_cycles")].value.iloc[0])


@pytest.mark.parametrize("q", [4, 6, 8])
def test_n_q_exact(q):
    p = build_problem(q, N_POINTS, "table2")
    assert p.n_q == (q + 1) * (q + 2) * (q + 3) // 6
    assert p.n_u == fmm_tree.ulist_stats(
        fmm_tree.volume_fmm_tree(fmm_tree.sample_points(N_POINTS, fmm_tree.TABLE2_DENSITY), p.n_q, N_POINTS,
                                 periodic=True)[0], p.n_q, periodic=True).n_u


@pytest.mark.parametrize("variant", VARIANTS)
def test_trace_valid_and_stages(problem, variant):
    blocks = split_blocks(problem, 3 if variant in ("blocking", "blocking_pref", "pipelining") else 1)
    t = ulist_trace(problem, variant, "lap", blocks)
    validate_trace(t, units={"host", "lap"})
    ops = _ops(t)
    stages = {s for s, _ in ops}
    assert {"input_perm", "gemm", "output_perm"} <= stages
    assert ("out_prefetch" in stages) == variant.endswith("_pref")
    n_offloads = sum(op == "offload" for _, op in ops)
    n_classes = sum(len(np.unique(problem.class_id[b])) for b in blocks)
    assert n_offloads == n_classes
    n_waits = sum(op == "wait" for _, op in ops)
    assert n_waits == (len(blocks) if variant == "pipelining" else n_classes)
    first_out = next(i for i, (s, _) in enumerate(ops) if s == "output_perm")
    first_wait = next(i for i, (_, op) in enumerate(ops) if op == "wait")
    assert first_wait < first_out  # C is never read before its GEMM has finished
    if variant == "pipelining":  # in(1) is issued between offload(0) and the first wait
        first_offload = next(i for i, (_, op) in enumerate(ops) if op == "offload")
        between = [s for s, _ in ops[first_offload:first_wait]]
        assert "input_perm" in between
    else:
        # blocks run in order: in, gemm, out per block
        labels = [s for s, _ in ops if s != "out_prefetch"]
        runs = [labels[0]] + [b for a, b in zip(labels, labels[1:]) if a != b]
        assert runs == ["input_perm", "gemm", "output_perm"] * len(blocks)


def test_gemm_flops_match_class_split(problem):
    for placement in ("lap", "cpu"):
        t = ulist_trace(problem, "orig", placement, split_blocks(problem, 1))
        if placement == "cpu":
            g = t.filter(pc.equal(t.column("stage"), "gemm"))
            flops = trace_summary(g)["flops"]
        else:
            rows = [json.loads(p) for p, op in zip(t.column("params").to_pylist(), t.column("op").to_pylist())
                    if op == "offload"]
            flops = sum(2 * r["m"] * r["n"] * r["k"] for r in rows)
            assert sum(r["n"] for r in rows) == problem.n_u
        assert flops == 2 * problem.n_q ** 2 * problem.n_u


def test_permutation_flops_and_columns(problem):
    t = ulist_trace(problem, "orig", "lap", split_blocks(problem, 1))
    s_in = trace_summary(t.filter(pc.equal(t.column("stage"), "input_perm")))
    s_out = trace_summary(t.filter(pc.equal(t.column("stage"), "output_perm")))
    assert s_in["flops"] == problem.n_u * problem.n_q
    assert s_out["flops"] == 2 * problem.n_u * problem.n_q
    # every source leaf read once per interaction, B written (at least) once per element
    assert s_in["bytes_written"] >= problem.n_u * problem.n_q * 8


@pytest.mark.parametrize("stage, store_op", [("input_perm", "write"), ("output_perm", "update")])
def test_records_are_read_once_and_one_group_ahead_of_the_stores(problem, stage, store_op):
    """Each K (M) record is read once; a group's stores come right after the next group's records, so
    those loads do not queue behind the stores' write-backs (workloads.fmm_ulist docstring)."""
    t = ulist_trace(problem, "orig", "cpu", split_blocks(problem, 1))
    rows = t.filter(pc.equal(t.column("stage"), stage)).to_pylist()
    is_record = [r["elem_bytes"] == META_BYTES for r in rows]
    record_addrs = np.concatenate([np.asarray(r["addrs"]) if r["addrs"] is not None
                                   else r["addr"] + META_BYTES * np.arange(r["count"])
                                   for r, rec in zip(rows, is_record) if rec])
    assert record_addrs.size == problem.n_u == np.unique(record_addrs).size
    # a group's stores: one row per run of line-group pieces of one width (the first row of each run of them)
    stores = [i for i, r in enumerate(rows) if r["op"] == store_op and (i == 0 or rows[i - 1]["op"] != store_op)]
    classes = np.count_nonzero(np.bincount(problem.class_id))
    assert sum(is_record) == len(stores)  # one record row per group
    assert sum(is_record[i - 1] for i in stores) == len(stores) - classes  # all but each class's last group
    assert is_record[0]  # the first group's records open the stage


def _contiguous_rows(t, stage, op):
    """(addr, bytes) of the non-gather rows of ``stage``/``op``, each checked to be one run of doubles."""
    rows = t.filter(pc.and_(pc.equal(t.column("stage"), stage), pc.equal(t.column("op"), op))).to_pylist()
    rows = [r for r in rows if r["addrs"] is None]
    for r in rows:
        assert r["stride_bytes"] == r["elem_bytes"] == 8
    return [(r["addr"], r["count"] * 8) for r in rows]


def _merged(runs):
    """Runs that follow each other without a gap, joined."""
    out = []
    for a, n in sorted(runs):
        if out and out[-1][0] + out[-1][1] == a:
            out[-1] = (out[-1][0], out[-1][1] + n)
        else:
            out.append((a, n))
    return out


@pytest.mark.parametrize("placement", ["lap", "cpu"])
def test_interaction_layout_stores_b_and_c_interaction_by_interaction(problem, placement):
    # PVFMM's layout: an interaction's N_q values are contiguous; the input permutation writes (the
    # output permutation reads) each class's B (C) as one run, group after group, and the GEMMs take
    # PVFMM's orientation C_j^T += B_j^T Â_j^T (m = interactions, n = k = N_q)
    t = ulist_trace(problem, "orig", placement, split_blocks(problem, 1), "interactions")
    nq = problem.n_q
    if placement == "lap":
        cmds = _offloads(t)
        assert sum(c["m"] for c in cmds) == problem.n_u and all(c["n"] == c["k"] == nq for c in cmds)
        b_regions = [(c["a_addr"], nq * c["m"] * 8) for c in cmds]  # B_j is the left operand
        c_regions = [(c["c_addr"], nq * c["m"] * 8) for c in cmds]
    else:
        g = t.filter(pc.equal(t.column("stage"), "gemm"))
        assert trace_summary(g)["flops"] == 2 * nq * nq * problem.n_u
        b_regions = c_regions = None
    counts = sorted(int(c) for c in np.bincount(problem.class_id, minlength=10) if c)
    for stage, op, regions in (("input_perm", "write", b_regions), ("output_perm", "read", c_regions)):
        runs = _contiguous_rows(t, stage, op)
        assert sum(n for _, n in runs) == problem.n_u * nq * 8  # every element once
        if regions is not None:  # each class's matrix, exactly
            assert _merged(runs) == _merged(regions)
        else:  # host_gemm allocates each class apart: one run per class, N_q doubles per interaction
            assert sorted(n // (nq * 8) for _, n in _merged(runs)) == counts
    # the row layout (the default) writes B in line-group pieces instead, and offloads C_j = Â_j B_j
    rows = ulist_trace(problem, "orig", placement, split_blocks(problem, 1))
    assert not _contiguous_rows(rows, "input_perm", "write")
    if placement == "lap":
        assert sum(c["n"] for c in _offloads(rows)) == problem.n_u


def test_unknown_bc_layout_is_rejected(problem):
    with pytest.raises(ValueError, match="bc_layout must be one of"):
        ulist_trace(problem, "orig", "lap", split_blocks(problem, 1), "columns")
    with pytest.raises(ValueError, match="bc_layout must be one of"):
        fmm_ulist(4, 2000, "table2", bc_layout="columns")


def test_blocks_partition_interactions(problem):
    # class order (default): B's columns class by class, target order within a class, cut into equal runs
    blocks = split_blocks(problem, 25)
    assert len(blocks) == 25 and max(b.size for b in blocks) - min(b.size for b in blocks) <= 1
    allidx = np.concatenate(blocks)
    assert np.array_equal(np.sort(allidx), np.arange(problem.n_u))
    key = problem.class_id[allidx] * problem.n_u + allidx  # class first, then the (target-sorted) index
    assert np.all(np.diff(key) > 0)
    assert all(len(np.unique(problem.class_id[b])) <= 2 for b in blocks)  # one or two classes per block
    # target order: contiguous ranges cut at leaf boundaries, every class in every block
    blocks = split_blocks(problem, 5, "target")
    assert len(blocks) == 5
    assert np.array_equal(np.concatenate(blocks), np.arange(problem.n_u))
    for a, b in zip(blocks, blocks[1:]):
        assert problem.target[a[-1]] != problem.target[b[0]]
    with pytest.raises(ValueError, match="order"):
        split_blocks(problem, 5, "random")


def test_rejects_bad_arguments():
    with pytest.raises(ValueError, match="variant"):
        fmm_ulist(4, N_POINTS, variant="fast")
    with pytest.raises(ValueError, match="placement"):
        fmm_ulist(4, N_POINTS, placement="gpu")
    with pytest.raises(ValueError, match="needs an accelerator placement"):
        fmm_ulist(4, N_POINTS, variant="pipelining", placement="cpu")
    with pytest.raises(ValueError, match="blocks"):
        fmm_ulist(4, N_POINTS, variant="blocking", blocks=0)
    with pytest.raises(ValueError, match=r"threads must be an integer from 1 to 1024, got 1000000"):
        fmm_ulist(4, N_POINTS, threads=10**6)  # refused before the tree is built
    for make in (fmm_ulist, build_problem):  # refused before a point is drawn
        with pytest.raises(ValueError, match=r"n_points must be at most 16,777,216 \(at most 16,777,216 points"):
            make(4, 10**14)


@pytest.mark.parametrize("most, lists_u", [(8 * 40, False), (12_000, True)])
def test_a_tree_beyond_the_interaction_budget_is_refused_before_it_is_listed_whole(monkeypatch, most, lists_u):
    """A tree of 4,000 points at q = 1 has 939 leaves and 17,937 interactions: a budget below 8 per leaf stops the
    tree search before any U-list is listed, one above it the U-list listing, each with the same message naming
    n_points; a problem kept from a call under a larger budget is refused the same way."""
    from workloads import fmm_ulist as fu

    listed = []
    real = fmm_tree.u_lists
    monkeypatch.setattr(fmm_tree, "u_lists", lambda *args: listed.append(args) or real(*args))
    monkeypatch.setattr(fu, "_PROBLEMS", {})
    monkeypatch.setitem(fu.INTERACTION_BUDGETS, "tight", (most, "as the test sets it"))
    refused = rf"n_points must be fewer for q = 1: the tree of 4,000 points would hold more than {most:,} U-list"
    with pytest.raises(ValueError, match=refused):
        fu.build_problem(1, 4000, "uniform", seed=11, budget="tight")
    assert bool(listed) == lists_u and not fu._PROBLEMS
    assert fu.build_problem(1, 4000, "uniform", seed=11).n_u == 17_937  # the rows budget holds it
    with pytest.raises(ValueError, match=refused):
        fu.build_problem(1, 4000, "uniform", seed=11, budget="tight")
    with pytest.raises(ValueError, match="budget must be one of addresses, rows, tight, got 'rws'"):
        fu.build_problem(1, 4000, "uniform", seed=11, budget="rws")


def test_pipelining_faster_than_orig_on_lap(problem):
    sysf = f"{SYSTEMS}/lap_llc.yaml"
    orig = simulate_trace(sysf, ulist_trace(problem, "orig", "lap", split_blocks(problem, 1)))
    pipe = simulate_trace(sysf, ulist_trace(problem, "pipelining", "lap", split_blocks(problem, 4)))
    assert _cycles(pipe) < 0.95 * _cycles(orig)


def test_llc_blocking_fewer_dram_accesses_than_dram_orig(problem):
    dram_orig = simulate_trace(f"{SYSTEMS}/lap_dram.yaml", ulist_trace(problem, "orig", "lap",
                                                                      split_blocks(problem, 1)))
    llc_block = simulate_trace(f"{SYSTEMS}/lap_llc.yaml", ulist_trace(problem, "blocking", "lap",
                                                                     split_blocks(problem, 4)))
    assert _dram_accesses(llc_block) < 0.8 * _dram_accesses(dram_orig)


def _offloads(table):
    return [json.loads(p) for p, op in zip(table.column("params").to_pylist(), table.column("op").to_pylist())
            if op == "offload"]


def _b_ranges_per_block(problem, table, blocks):
    """(lowest, highest) byte of B per block, from the offload commands in order."""
    cmds, out = iter(_offloads(table)), []
    for idx in blocks:
        n_cls = len(np.unique(problem.class_id[idx]))
        rs = [next(cmds) for _ in range(n_cls)]
        out.append((min(r["b_addr"] for r in rs), max(r["b_addr"] + r["k"] * r["n"] * 8 for r in rs)))
    return out


def test_blocks_reuse_one_buffer_and_pipelining_two(problem):
    blocks = split_blocks(problem, 4)
    lo = _b_ranges_per_block(problem, ulist_trace(problem, "blocking", "lap", blocks), blocks)
    assert len({r[0] for r in lo}) == 1  # every block writes B into the same buffer
    pipe = _b_ranges_per_block(problem, ulist_trace(problem, "pipelining", "lap", blocks), blocks)
    for (a0, a1), (b0, b1) in zip(pipe, pipe[1:]):  # gemm(i) and in(i+1) never share B lines
        assert a1 <= b0 or b1 <= a0
    assert pipe[0][0] == pipe[2][0] and pipe[1][0] == pipe[3][0]


def test_block_size_leaves_half_the_llc(problem):
    llc = 2 * 2**20
    bc = 2 * problem.n_q * problem.n_u * 8
    assert problem.n_u // (5 * problem.n_q) > 8  # the Â_j re-read bound does not bind here
    for variant, sets in (("blocking", 1), ("pipelining", 2)):
        b = choose_blocks(problem, llc, variant)
        assert sets * bc / b <= DEFAULT_LLC_SHARE * llc < sets * bc / (b - 1)


@pytest.mark.parametrize("share", [1.0, 0.75, 0.3])
def test_block_size_follows_the_llc_share(problem, share):
    # 003 §6.1 (003:L253): share 1 lets one block's B and C fill the whole LLC
    llc = 2 * 2**20
    bc = 2 * problem.n_q * problem.n_u * 8
    for variant, sets in (("blocking", 1), ("pipelining", 2)):
        b = choose_blocks(problem, llc, variant, share)
        assert sets * bc / b <= share * llc < sets * bc / (b - 1)
    assert choose_blocks(problem, llc, "blocking", 1.0) < choose_blocks(problem, llc, "blocking")


@pytest.mark.parametrize("share", [0, -0.5, 1.01, float("nan"), True, "1"])
def test_llc_share_outside_0_1_is_rejected(problem, share):
    with pytest.raises(ValueError, match="llc_share"):
        choose_blocks(problem, 2 * 2**20, "blocking", share)
    with pytest.raises(ValueError, match="llc_share"):
        fmm_ulist(4, N_POINTS, variant="blocking", llc_share=share)


def test_block_count_bounded_by_a_rereads():
    p = build_problem(8, N_POINTS, "table2")  # N_q = 165: the re-read bound binds for a small LLC
    cap = 1 + 2 * p.n_u // p.n_q  # class order: one more GEMM call (one A_j read) per cut
    assert reread_cap(p) == cap and reread_cap(p, "target") == max(1, p.n_u // (5 * p.n_q))
    assert choose_blocks(p, 256 * 1024, "pipelining") == cap
    assert choose_blocks(p, 256 * 1024, "pipelining", order="target") == reread_cap(p, "target")
    b_min, b_fit = block_range(p, 256 * 1024, "pipelining")
    assert b_min == cap < b_fit  # the LLC rule alone would cut finer
    assert b_fit == llc_blocks(p.dims(), 256 * 1024 * DEFAULT_LLC_SHARE / 2)
    assert block_range(p, 64 * 2**20, "blocking") == (choose_blocks(p, 64 * 2**20, "blocking"),) * 2


def test_study_lets_the_model_choose_the_pipelined_blocks():
    from simulator.studies.fmm.crosscheck import pipelined_blocks
    from simulator.studies.fmm.placement import grid, load_study, needs_model_blocks

    study = load_study("configs/studies/fmm_placement.yaml")
    assert study.pipelined_blocks == "model"  # the default
    tuned = [(p.q, p.placement) for p in grid(study, False) if needs_model_blocks(p, study)]
    assert tuned == [(q, pl) for q in study.qs for pl in ("lap-dram", "lap-llc", "lap-near-memory", "lap-hbm")]
    # q = 14 on the measured default machine: the re-read bound starts the range at 26 blocks,
    # the LLC rule (share 1/2) ends it at 45; near memory, where the A_j re-reads cost least,
    # the model picks more blocks than the bound to hide more of the permutations
    machine = json.loads(Path("results/fmm/machine.json").read_text())
    p = build_problem(14, 240000, "table2")
    b_min, b_fit = block_range(p, study.llc_bytes, "pipelining", study.block_llc_share)
    b = pipelined_blocks(machine, "lap-near-memory", p, study.llc_bytes, study.block_llc_share)
    assert (b_min, b_fit) == (26, 45) and b_min < b <= b_fit
    # the LAP in the HBM stack is priced as near memory (its recorded coupling), with its own measured inputs
    assert machine["lap-hbm.coupling"] == "near-memory"
    assert b_min <= pipelined_blocks(machine, "lap-hbm", p, study.llc_bytes, study.block_llc_share) <= b_fit


def test_region_lines_counts_shared_lines_once():
    # a matrix that is input and output (C += A B) is flushed or evicted once per offload
    assert region_lines([[0, 128], [64, 128], [0, 64]], 64).tolist() == [0, 1, 2]
    assert region_lines([[640, 64], [0, 64]], 64).tolist() == [10, 0]
    # a region inside another, listed after a disjoint one; two regions sharing only a boundary line
    assert region_lines([[1000, 64], [0, 640], [128, 64]], 64).tolist() == [15, 16] + list(range(10))
    assert region_lines([[0, 100], [100, 100]], 64).tolist() == [0, 1, 2, 3]


def test_llc_offload_evicts_each_line_once(problem):
    t = ulist_trace(problem, "blocking", "lap", split_blocks(problem, 4))
    res = simulate_trace(f"{SYSTEMS}/lap_llc.yaml", t).to_pandas()
    evicted = float(res[(res.component == "stage/host/gemm") & (res.quantity == "lines")].value.iloc[0])
    distinct = sum(len(region_lines(c["inputs"], 64)) for c in _offloads(t))  # inputs: A, B and C
    assert evicted == distinct


def test_llc_blocking_halves_dram_accesses(problem):
    # 003 §8.1: LLC coupling + cache-aware blocking cuts DRAM accesses by about half vs DRAM coupling
    dram_orig = simulate_trace(f"{SYSTEMS}/lap_dram.yaml", ulist_trace(problem, "orig", "lap",
                                                                      split_blocks(problem, 1)))
    b = choose_blocks(problem, 8 * 2**20, "blocking")
    llc_block = simulate_trace(f"{SYSTEMS}/lap_llc.yaml", ulist_trace(problem, "blocking", "lap",
                                                                     split_blocks(problem, b)))
    assert _dram_accesses(llc_block) < 0.5 * _dram_accesses(dram_orig)


def test_shipped_study_file_validates():
    from simulator.studies.fmm.placement import STUDY, load_study

    study = load_study(STUDY)
    assert study.llc_bytes == 8 * 2**20 and study.qs == (4, 6, 8, 10, 14)
    assert {pl.gemm for pl in study.placements.values()} == {"cpu", "lap", "systolic"}
    dataflows = {pl.overrides for pl in study.placements.values() if pl.gemm == "systolic"}
    assert dataflows == {(), ("accelerators.systolic.dataflow=ws",)}  # the preset's os, and ws
    assert study.block_llc_share == DEFAULT_LLC_SHARE  # no key: the default rule


def test_marssx86_study_uses_003s_block_rule():
    from simulator.studies.fmm.placement import grid, load_study

    study = load_study("configs/studies/fmm_placement_marssx86.yaml")
    assert study.block_llc_share == 1.0  # 003 §6.1, 003:L253
    assert {p.block_llc_share for p in grid(study, True)} == {1.0}


def test_study_rejects_an_unknown_pipelined_block_rule(tmp_path):
    from simulator.errors import ConfigError
    from simulator.studies.fmm.placement import STUDY, load_study

    bad = tmp_path / "rule.yaml"
    bad.write_text(STUDY.read_text().replace("pipelined_blocks: model", "pipelined_blocks: fastest"))
    with pytest.raises(ConfigError, match="rule.yaml: pipelined_blocks: .*model"):
        load_study(bad)
    bad.write_text(STUDY.read_text().replace("pipelined_blocks: model", "pipelined_blocks: llc_rule"))
    assert load_study(bad).pipelined_blocks == "llc_rule"


@pytest.mark.parametrize("value, expected", [("0", "expected a positive value"), ("1.5", "expected a value <= 1")])
def test_study_rejects_a_block_llc_share_outside_0_1(tmp_path, value, expected):
    from simulator.errors import ConfigError
    from simulator.studies.fmm.placement import STUDY, load_study

    bad = tmp_path / "share.yaml"
    bad.write_text(STUDY.read_text() + f"block_llc_share: {value}\n")
    with pytest.raises(ConfigError, match=f"share.yaml: block_llc_share: {expected}"):
        load_study(bad)


def test_study_block_order_reaches_the_trace_and_the_model(tmp_path):
    from dataclasses import replace

    from simulator.errors import ConfigError
    from simulator.studies.fmm.placement import STUDY, grid, load_study, run_point

    f = tmp_path / "order.yaml"
    f.write_text(STUDY.read_text().replace("block_order: class", "block_order: target"))
    study = load_study(f)
    assert study.block_order == "target" and load_study(STUDY).block_order == "class"
    assert {p.block_order for p in grid(study, True)} == {"target"}
    # one small blocked point each way: the order changes the GEMM calls (one per class piece)
    p = next(p for p in grid(study, True) if p.placement == "lap-dram" and p.variant == "blocking")
    p = replace(p, n_points=3000, blocks=4)
    rows = {o: run_point(replace(p, block_order=o)) for o in ("class", "target")}
    assert rows["target"]["block_order"] == "target" and rows["class"]["block_order"] == "class"
    assert rows["target"]["dram_accesses"] != rows["class"]["dram_accesses"]
    # the extended model reads each row's order (class order: fewer GEMM calls, fewer A_j reads)
    import pandas as pd

    from simulator.studies.fmm.crosscheck import model_rows

    machine = json.loads(Path("results/fmm/machine.json").read_text())
    problem = build_problem(p.q, p.n_points, p.density)
    ext = model_rows(pd.DataFrame(list(rows.values())), machine, {p.q: problem.dims()})
    assert ext.ext_mcycles.iloc[0] != pytest.approx(ext.ext_mcycles.iloc[1])
    f.write_text(STUDY.read_text().replace("block_order: class", "block_order: random"))
    with pytest.raises(ConfigError, match="order.yaml: block_order"):
        load_study(f)


def test_study_bc_layout_reaches_the_points_and_the_trace(tmp_path):
    from dataclasses import replace

    from simulator.errors import ConfigError
    from simulator.studies.fmm.placement import STUDY, grid, load_study, run_point

    f = tmp_path / "layout.yaml"
    f.write_text(STUDY.read_text() + "bc_layout: interactions\n")
    study = load_study(f)
    assert study.bc_layout == "interactions" and load_study(STUDY).bc_layout == "rows"
    assert {p.bc_layout for p in grid(study, True)} == {"interactions"}
    p = next(p for p in grid(study, True) if p.placement == "lap-llc" and p.variant == "orig")
    p = replace(p, n_points=3000)
    rows = {lay: run_point(replace(p, bc_layout=lay)) for lay in ("rows", "interactions")}
    assert rows["interactions"]["bc_layout"] == "interactions" and rows["rows"]["bc_layout"] == "rows"
    assert rows["interactions"]["cycles_input_perm"] != rows["rows"]["cycles_input_perm"]
    f.write_text(STUDY.read_text() + "bc_layout: columns\n")
    with pytest.raises(ConfigError, match="layout.yaml: bc_layout"):
        load_study(f)


def test_bad_study_file_exits_2_naming_file_and_keys(tmp_path, capsys):
    from simulator.studies.fmm.placement import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("study: fmm_placement\nn_points: 1000\ndensity: table2\nllc_bytes: 8388608\nqs: [4]\n"
                   "placements:\n  cpu: {system: configs/systems/nope.yaml, gemm: gpu, variants: [orig]}\n"
                   "quick: {qs: [4], n_points: 10}\n")
    assert main(["--study", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: llc_bytes" in err and "a bare number has no unit" in err
    assert "bad.yaml: placements.cpu.system" in err and "bad.yaml: placements.cpu.gemm" in err
    assert not (tmp_path / "out").exists()


def test_only_restricts_the_grid_and_rejects_unknown_pairs(tmp_path, capsys):
    from simulator.studies.fmm.placement import STUDY, grid, load_study, main, parse_only

    study = load_study(STUDY)
    only = parse_only("lap-dram/orig, lap-llc/pipelining", study)
    pts = grid(study, False, only)
    assert {(p.placement, p.variant) for p in pts} == set(only) and len(pts) == 2 * len(study.qs)
    assert main(["--only", "lap-dram/nope", "--out", str(tmp_path / "out")]) == 2
    assert "lap-dram/nope" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_findings_on_a_hand_made_table():
    import pandas as pd

    from simulator.studies.fmm.placement import findings

    def row(pl, v, cycles, dram, e_host, e_dram, e_lap, bg, ref, total, gemm=40):
        return {"q": 10, "placement": pl, "gemm": "lap", "variant": v, "cycles": cycles, "dram_accesses": dram,
                "energy_host_j": e_host, "energy_dram_j": e_dram, "energy_lap_j": e_lap, "dram_background_j": bg,
                "dram_refresh_j": ref, "dram_dynamic_j": e_dram - bg - ref, "energy_total_j": total,
                "cycles_gemm": gemm}

    t = pd.DataFrame([row("lap-dram", "orig", 100, 1000, 5, 2, 1, 1.0, 0.4, 8, gemm=50),
                      row("lap-dram", "pipelining", 60, 900, 4, 1, 0.5, 0.6, 0.2, 6),
                      row("lap-llc", "orig", 100, 800, 5, 2, 1, 1.2, 0.4, 8, gemm=45),
                      row("lap-llc", "blocking", 95, 500, 5, 1.8, 1, 1.0, 0.4, 7.6),
                      row("lap-llc", "blocking_pref", 94, 520, 5, 1.8, 1, 1.0, 0.4, 7.6),
                      row("lap-llc", "pipelining", 50, 400, 3, 1, 0.5, 0.5, 0.2, 4.5),
                      # near-memory is outside 003 Fig. 10: its share (0.5) must not enter the range
                      row("lap-near-memory", "orig", 90, 1000, 5, 2, 1, 0.8, 0.2, 8)])
    f = findings(t).iloc[0]
    assert f["lap-dram_pipelining_gain"] == pytest.approx(0.4) and f["lap-llc_pipelining_gain"] == pytest.approx(0.5)
    assert f.llc_vs_dram_runtime == pytest.approx(1 - 50 / 60)
    assert f.dram_static_refresh_share_min == pytest.approx(0.7) and f.dram_static_refresh_share_max == pytest.approx(0.8)
    assert f.energy_order_host_dram_lap == 1.0
    assert f.llc_pipe_energy_saving_vs_dram_pipe == pytest.approx(0.25)
    assert f["lap-dram_pipelining_energy_saving"] == pytest.approx(0.25)
    assert f["lap-llc_pipelining_energy_saving"] == pytest.approx(1 - 4.5 / 8)
    assert f.gemm_llc_vs_dram_speedup == pytest.approx(0.1)
    assert f["lap-llc_blocking_slowdown"] == pytest.approx(-0.05)  # 95 against 100 cycles
    assert np.isnan(f["lap-dram_blocking_slowdown"])  # no LAP-DRAM Blocking point in this table
    assert f["lap-llc_blocking_pref_extra_dram"] == pytest.approx(0.04)  # 520 against 500 accesses
    assert np.isnan(f["lap-dram_blocking_pref_extra_dram"])
    # DRAM accesses: coupling alone 1000 -> 800, blocking 800 -> 500, the best blocked LLC point 400
    assert f.dram_cut_llc_orig_vs_dram_orig == pytest.approx(0.2)
    assert f.dram_factor_llc_orig_vs_llc_block == pytest.approx(1.6)
    assert f.dram_factor_dram_orig_vs_llc_best == pytest.approx(2.5)
    # dynamic DRAM energy: LAP-DRAM Orig 2 - 1.0 - 0.4 J, LAP-LLC Blocking 1.8 - 1.0 - 0.4 J
    assert f.dram_dynamic_cut_llc_block_vs_dram_orig == pytest.approx(1 - 0.4 / 0.6)
    # a variant run on the LLC coupling only is left out of the runtime gap, whichever row comes first
    first = findings(pd.concat([t[t.variant == "blocking"], t[t.variant != "blocking"]])).iloc[0]
    assert first.llc_vs_dram_runtime == pytest.approx(1 - 50 / 60)


def test_the_hbm_findings_set_the_stack_beside_the_near_memory_lap_in_main_memory():
    import pandas as pd

    from simulator.studies.fmm.placement import findings

    def row(pl, v, cycles, dram, total, e_dram=2.0, e_lap=1.0):
        return {"q": 8, "placement": pl, "gemm": "lap", "variant": v, "cycles": cycles, "dram_accesses": dram,
                "energy_host_j": 5.0, "energy_dram_j": e_dram, "energy_lap_j": e_lap, "dram_background_j": 1.0,
                "dram_refresh_j": 0.2, "dram_dynamic_j": e_dram - 1.2, "energy_total_j": total, "cycles_gemm": 40}

    near = [row("lap-near-memory", "orig", 100, 1000, 8.0), row("lap-near-memory", "pipelining", 80, 900, 6.0)]
    # the stack's main memory moves less than the LAP's energy: 003's order is of the LAP in main memory
    hbm = [row("lap-hbm", "orig", 90, 250, 7.0, e_dram=0.5), row("lap-hbm", "pipelining", 84, 300, 6.6, e_dram=0.5)]
    f = findings(pd.DataFrame(near + hbm)).iloc[0]
    assert f.hbm_vs_near_memory_runtime_orig == pytest.approx(-0.1)
    assert f.hbm_vs_near_memory_runtime_pipelining == pytest.approx(0.05)
    assert f.hbm_vs_near_memory_energy_orig == pytest.approx(7 / 8 - 1)
    assert f.hbm_vs_near_memory_energy_pipelining == pytest.approx(0.1)
    assert f.hbm_main_dram_cut_orig == pytest.approx(0.75) and f.hbm_main_dram_cut_pipelining == pytest.approx(2 / 3)
    assert f.energy_order_host_dram_lap == 1.0
    assert not any(c.startswith("hbm_") for c in findings(pd.DataFrame(near)).columns)  # no stack, no columns


def test_build_problem_shares_one_read_only_problem_per_arguments():
    a = build_problem(4, N_POINTS, "table2")
    assert build_problem(4, float(N_POINTS), "table2", periodic=1) is a  # same arguments, normalised
    assert build_problem(4, N_POINTS, "table2", seed=1) is not a
    with pytest.raises(ValueError, match="read-only"):
        a.target[0] = 0
    with pytest.raises(ValueError, match="q must be"):
        build_problem(4.5, N_POINTS, "table2")


@pytest.mark.parametrize("variant", ["orig", "pipelining"])
def test_a_systolic_placement_offloads_the_laps_commands_to_its_own_unit(problem, variant):
    blocks = split_blocks(problem, 3 if variant == "pipelining" else 1)
    lap, systolic = (ulist_trace(problem, variant, unit, blocks) for unit in ("lap", "systolic"))
    validate_trace(systolic, units={"host", "systolic"})
    lap_cmds, systolic_cmds = _offloads(lap), _offloads(systolic)
    assert {c.pop("unit") for c in lap_cmds} == {"lap"} and {c.pop("unit") for c in systolic_cmds} == {"systolic"}
    assert systolic_cmds == lap_cmds
    waits = [json.loads(p)["unit"] for p, op in zip(systolic.column("params").to_pylist(),
                                                    systolic.column("op").to_pylist()) if op == "wait"]
    assert waits and set(waits) == {"systolic"}


def test_the_systolic_array_runs_every_class_gemm_in_its_closed_form(problem):
    # 2 dataflows: every command's folds on the array, cycles as SCALE-Sim counts them (systolic_dataflow)
    from simulator.accel.systolic_dataflow import FoldPlan
    from simulator.runner import load_system

    t = ulist_trace(problem, "orig", "systolic", split_blocks(problem, 1))
    cmds = _offloads(t)
    for dataflow in ("os", "ws"):
        system = load_system(f"{SYSTEMS}/systolic_fp64_llc.yaml", [f"accelerators.systolic.dataflow={dataflow}"])
        df = simulate_trace(system, t).to_pandas()
        unit = df[df.component == "accel/systolic"].set_index("quantity").value
        plans = [FoldPlan(dataflow, 16, 16, c["m"], c["k"], c["n"]) for c in cmds]
        assert unit["macs"] == problem.n_q ** 2 * problem.n_u == sum(p.macs for p in plans)
        assert unit["compute_cycles"] == sum(p.compute_cycles for p in plans)
        assert unit["bytes_read"] > 0 and unit["bytes_written"] >= problem.n_q * problem.n_u * 8


@pytest.mark.parametrize("lo, hi", [(0, 300), (128, 129), (13, 300), (3, 70)])
def test_group_column_lines_are_each_groups_column_lines(lo, hi) -> None:
    bounds = list(range(lo, hi, GROUP)) + [hi]
    expected = [column_lines(4096, 5, 301, c0, c1) for c0, c1 in zip(bounds[:-1], bounds[1:])]
    got = group_column_lines(4096, 5, 301, lo, hi)
    assert len(got) == len(expected)
    assert all(np.array_equal(g, e) for g, e in zip(got, expected))


@pytest.mark.parametrize("layout", ["rows", "interactions"])
@pytest.mark.parametrize("n", [3, 8, 64, 197, 200])
def test_matrix_columns_access_is_columns_access_group_by_group(layout, n) -> None:
    bounds = list(range(0, n, GROUP)) + [n]
    expected, got = TraceBuilder(), TraceBuilder()
    for c0, c1 in zip(bounds[:-1], bounds[1:]):
        columns_access(expected, "in", "write", 4096, 35, n, c0, c1, layout, thread=2)
    matrix_columns_access(got, "in", "write", 4096, 35, n, layout, thread=2)
    assert len(got) == len(expected) == len(bounds) - 1
    assert got.to_table().equals(expected.to_table())


@pytest.mark.parametrize("variant, layout", [("orig", "rows"), ("pipelining", "rows"), ("orig", "interactions")])
def test_permutation_rows_do_not_depend_on_the_address_span(variant, layout, monkeypatch):
    # the permutations make their addresses SPAN_GROUPS groups at a time: spans of one or three groups, whose
    # ends fall inside every class, give the rows of the default span
    from workloads import fmm_ulist as module
    whole = fmm_ulist(4, N_POINTS, "table2", variant=variant, placement="lap", bc_layout=layout)
    for span in (1, 3):
        monkeypatch.setattr(module, "SPAN_GROUPS", span)
        assert fmm_ulist(4, N_POINTS, "table2", variant=variant, placement="lap", bc_layout=layout).equals(whole)


@pytest.mark.parametrize("variant, blocks, names", [("blocking", 40, "blocks"), ("orig", None, "n_points"),
                                                    ("blocking", None, "n_points")])
def test_a_trace_beyond_the_row_limit_is_refused_naming_its_cause(monkeypatch, variant, blocks, names):
    """The rows are counted over the stream's batches, each of which a builder of its own makes: past the limit
    the generator refuses, naming blocks where the workload sets them, else the problem's size (its default b
    follows from it)."""
    from workloads import fmm_ulist as module

    llc = {"llc_bytes": 64 * 1024}  # a small LLC: the blocking variant's default b is several blocks
    rows = fmm_ulist(1, 4000, "uniform", variant, "lap", blocks=blocks, **llc).num_rows
    if variant == "blocking" and blocks is None:
        assert len(module.variant_blocks(module.build_problem(1, 4000, "uniform"), variant, None, **llc)) > 1
    monkeypatch.setattr(module, "MAX_TRACE_ROWS", rows - 1)
    with pytest.raises(ValueError, match=rf"^{names} must be fewer: the trace of .* passes the {rows - 1:,} rows"):
        fmm_ulist(1, 4000, "uniform", variant, "lap", blocks=blocks, **llc)
    monkeypatch.setattr(module, "MAX_TRACE_ROWS", rows)
    assert fmm_ulist(1, 4000, "uniform", variant, "lap", blocks=blocks, **llc).num_rows == rows


def _element_addrs(row) -> np.ndarray:
    """The byte address of every element a trace row touches."""
    if row["addrs"] is None:
        return row["addr"] + row["stride_bytes"] * np.arange(row["count"], dtype=np.int64)
    addrs = np.asarray(row["addrs"], dtype=np.int64)
    run = row["count"] // addrs.size
    return (addrs[:, None] + row["elem_bytes"] * np.arange(run, dtype=np.int64)[None, :]).reshape(-1)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("stage, op", [("input_perm", "write"), ("output_perm", "read")])
def test_row_layout_touches_each_b_and_c_element_once_and_on_one_thread(problem, threads, stage, op):
    # a line-group piece holds only the columns its span covers: at a class width that is not a multiple of a
    # line's 8 doubles and at the ends of a thread's span, no piece spills into the next row or another span
    t = ulist_trace(problem, "orig", "lap", split_blocks(problem, 1), threads=threads)
    rows = [r for r in t.filter(pc.and_(pc.equal(t.column("stage"), stage), pc.equal(t.column("op"), op)))
            .to_pylist() if r["elem_bytes"] == 8]
    addrs = np.concatenate([_element_addrs(r) for r in rows])
    owner = np.concatenate([np.full(r["count"], r.get("thread", 0)) for r in rows])
    regions = [(c["b_addr" if stage == "input_perm" else "c_addr"], c["m"] * c["n"] * 8) for c in _offloads(t)]
    expected = np.concatenate([a + 8 * np.arange(n // 8, dtype=np.int64) for a, n in regions])
    assert addrs.size == problem.n_u * problem.n_q  # one access per element
    assert np.array_equal(np.sort(addrs), np.sort(expected))  # each element of B (C) exactly once
    assert np.unique(addrs).size == addrs.size and len(set(owner.tolist())) == threads
    assert any(c["n"] % 8 for c in _offloads(t))  # the case that spilled: a class width off the line
