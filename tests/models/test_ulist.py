"""Tests of the U-list analytical model (003 eqs. 2-12) against hand values and Tables 3 and 5."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.ulist import (
    EnergyParams,
    ExtendedParams,
    UListDims,
    UListMachine,
    blocked_cycles,
    blocked_stage_costs,
    energy_j,
    lap_blocking,
    llc_blocks,
    pipelined_cycles,
    stage_costs,
    t1_cycles,
    t2_cpu_cycles,
    t2_lap_cycles,
    t3_cycles,
    total_cycles,
)
from simulator.studies.references import reference_table

# Published figures, from the cited reference table (results/reference/asri_fmm.csv)
# 003 Table 2: q -> (N_q, N_oct, N_U)
TABLE2 = {q: tuple(int(v) for v in row)
          for q, row in reference_table("asri_fmm", "003 Table 2", ("N_q", "N_oct", "N_U")).items() if q <= 14}
# 003 Table 3, model columns, MCycles: q -> (T1, T2, T3)
TABLE3_MODEL = reference_table("asri_fmm", "003 Table 3", ("T1 model", "T2 model", "T3 model"))
# 003 Table 5, model columns, MCycles: q -> (LAP-DRAM Orig, LAP-LLC Block, LAP-LLC Pipeline)
TABLE5_MODEL = reference_table("asri_fmm", "003 Table 5", (
    "LAP-DRAM Orig model", "LAP-LLC Block model", "LAP-LLC Pipeline model"))

# Real i7-920 (003:L185): 6.4 GB/s streaming, 8 GFLOP/s peak, 0.32 GB/s for the irregular part
I7_920 = UListMachine(6.4e9, 0.32e9, 8e9, 40e9, 12.8e9)
# Table 5 caption / 003 §7-8: w_C = 3 GB/s (MARSSx86), f_L = 40 GFLOP/s, w_L = 12.8 GB/s
PAPER_LAP = UListMachine(3e9, 3e9, 8e9, 40e9, 12.8e9)


def dims(q: int) -> UListDims:
    return UListDims(*TABLE2[q])


def mcycles(c: float) -> float:
    return c / 1e6


# --------------------------------------------------------------------------- hand-computable cases

# 8 B/s and 1 Hz: one element per cycle; 1 flop/s: one flop per cycle
UNIT = UListMachine(8.0, 4.0, 1.0, 2.0, 16.0, clock_hz=1.0)


def test_hand_values_of_each_stage() -> None:
    d = UListDims(n_q=2, n_oct=3, n_u=10)
    assert t1_cycles(d, UNIT) == 2 * 10 * 2 + 3 * 2  # 46 elements at 1 element/cycle
    assert t3_cycles(d, UNIT) == 2 * (2 * 3 * 2) + 10 * 2  # leaves at half speed, C at full
    # CPU GEMM: max(2*10*4 = 80 flop, 2*(20 + 30) = 100 elements)
    assert t2_cpu_cycles(d, UNIT) == 100
    # LAP: n = 1 -> m_c = n_c = 64, r = 1; traffic 10*(2*64*64 + 2*128) el at 2 el/cycle; 80 flop at 2/cycle
    assert t2_lap_cycles(d, UNIT) == 10 * (2 * 64 * 64 + 2 * 128) / 2
    assert total_cycles(d, UNIT, "cpu") == 46 + 100 + 44


def test_printed_output_equation_when_bandwidths_equal() -> None:
    d = dims(8)
    m = UListMachine(3e9, 3e9, 8e9, 40e9, 12.8e9)
    assert t3_cycles(d, m) == pytest.approx((2 * d.n_oct * d.n_q + d.n_u * d.n_q) * 8 / 3e9 * 2e9)


def test_lap_blocking_rule() -> None:
    b4 = lap_blocking(dims(4))  # m = 35, n = 16491.3
    assert (b4.m_c, b4.n_c, b4.r) == (64, 256, 65 * 1)
    b14 = lap_blocking(dims(14))  # m = 680, n = 833.6
    assert (b14.m_c, b14.n_c, b14.r) == (256, 256, 4 * 3)


def test_blocked_and_pipelined_hand_values() -> None:
    d = UListDims(n_q=2, n_oct=3, n_u=12)
    # b = 2: min(N_oct, N_U/b) = 3 leaves per block; GEMM 2*12*4 = 96 flop / (2 * 2 flop/cycle)
    assert blocked_cycles(d, UNIT, 2) == 2 * (2 * 3 * 2 + 96 / 4 + 3 * 2)
    assert pipelined_cycles(d, UNIT, 2) == 2 * max(96 / 4, 3 * 3 * 2)
    # b = 6: N_U/b = 2 < N_oct
    assert pipelined_cycles(d, UNIT, 6) == 6 * max(96 / 12, 3 * 2 * 2)


def test_llc_blocks_fit_b_and_c() -> None:
    d = dims(10)
    b = llc_blocks(d, 8 * 2**20)
    assert 2 * d.n_q * d.n_u * 8 / b <= 8 * 2**20 < 2 * d.n_q * d.n_u * 8 / (b - 1)


@given(
    n_q=st.integers(1, 2000),
    n_oct=st.integers(1, 10_000),
    n_u=st.integers(1, 300_000),
    b=st.integers(1, 64),
)
def test_pipelining_never_slower_than_blocking(n_q: int, n_oct: int, n_u: int, b: int) -> None:
    d = UListDims(n_q, n_oct, n_u)
    assert pipelined_cycles(d, PAPER_LAP, b) <= blocked_cycles(d, PAPER_LAP, b) * (1 + 1e-12)


# --------------------------------------------------------------------------- Table 3 (CPU)


@pytest.mark.parametrize("q", sorted(TABLE3_MODEL))
def test_table3_t1_t2_with_real_machine(q: int) -> None:
    t1, t2, _ = TABLE3_MODEL[q]
    assert mcycles(t1_cycles(dims(q), I7_920)) == pytest.approx(t1, rel=0.04)
    assert mcycles(t2_cpu_cycles(dims(q), I7_920)) == pytest.approx(t2, rel=0.01)


def test_table3_t3_with_irregular_leaf_bandwidth() -> None:
    # leaf accesses at 0.32 GB/s, C at 6.4 GB/s: 38.6 MCycles at q = 4 (printed 38); the
    # printed values for q >= 6 (31-35) vary while the Table-2 element counts do not, so
    # no bandwidth assignment reproduces them all: 25 % is the honest bound here.
    assert mcycles(t3_cycles(dims(4), I7_920)) == pytest.approx(38, rel=0.03)
    for q, (_, _, t3) in TABLE3_MODEL.items():
        assert mcycles(t3_cycles(dims(q), I7_920)) == pytest.approx(t3, rel=0.25)


def test_t2_cpu_is_compute_bound_on_i7() -> None:
    for q in TABLE2:
        d = dims(q)
        assert t2_cpu_cycles(d, I7_920) == pytest.approx(2 * d.n_u * d.n_q**2 / 8e9 * 2e9)


# --------------------------------------------------------------------------- Table 5 (LAP)


@pytest.mark.parametrize("q", [10, 14])
def test_table5_orig_large_q_with_paper_parameters(q: int) -> None:
    assert mcycles(total_cycles(dims(q), PAPER_LAP, "lap")) == pytest.approx(TABLE5_MODEL[q][0], rel=0.10)


def test_table5_orig_small_q_is_under_predicted_with_paper_parameters() -> None:
    # documents the gap: with w_C = 3 GB/s the CPU stages are too fast for the printed 190
    assert mcycles(total_cycles(dims(4), PAPER_LAP, "lap")) < 0.75 * TABLE5_MODEL[4][0]


def test_table5_blocked_with_llc_blocks_is_below_the_printed_column() -> None:
    # with b from the LLC rule, the paper's 3 GB/s gives far less than the printed column
    for q in TABLE5_MODEL:
        d = dims(q)
        assert mcycles(blocked_cycles(d, PAPER_LAP, llc_blocks(d, 8 * 2**20))) < TABLE5_MODEL[q][1]


# --------------------------------------------------------------------------- work, traffic, energy


def test_stage_costs_match_times_and_bytes() -> None:
    d = dims(8)
    st_ = stage_costs(d, PAPER_LAP, "lap")
    assert [s.name for s in st_] == ["input", "gemm", "output"]
    assert sum(s.cycles for s in st_) == pytest.approx(total_cycles(d, PAPER_LAP, "lap"))
    assert st_[0].traffic_bytes["dram"] == (2 * d.n_u * d.n_q + d.n_oct * d.n_q) * 8
    assert st_[1].flops == 2 * d.n_u * d.n_q**2 and st_[1].engine == "lap"
    b = llc_blocks(d, 8 * 2**20)
    bl = blocked_stage_costs(d, PAPER_LAP, b)
    assert sum(s.cycles for s in bl) == pytest.approx(blocked_cycles(d, PAPER_LAP, b))
    assert sum(s.traffic_bytes["dram"] for s in bl) < sum(s.traffic_bytes["dram"] for s in st_)
    # B and C (N_U N_q doubles each) cross the LLC: host writes B; LAP reads B, reads and writes C;
    # host reads C
    bc = d.n_u * d.n_q * 8
    assert [s.traffic_bytes["llc"] for s in bl] == [bc, 3 * bc, bc]
    assert "llc" not in st_[0].traffic_bytes  # unblocked: everything streams from DRAM


def test_energy_is_work_plus_traffic_plus_static() -> None:
    d = UListDims(n_q=2, n_oct=3, n_u=10)
    p = EnergyParams(eps_flop_cpu_j=1.0, eps_flop_lap_j=0.5, eps_byte_j={"dram": 0.25}, static_power_w=3.0)
    st_ = stage_costs(d, UNIT, "lap")
    t = sum(s.cycles for s in st_)
    w_cpu = 10 * 2 + 2 * 10 * 2  # input scaling + output scale-and-accumulate
    w_lap = 2 * 10 * 4
    q = sum(s.traffic_bytes["dram"] for s in st_)
    assert energy_j(st_, p, t, 1.0) == pytest.approx(w_cpu * 1.0 + w_lap * 0.5 + q * 0.25 + 3.0 * t)
    with pytest.raises(ValueError, match="memory level"):
        energy_j(st_, EnergyParams(1.0, 1.0, {}, 0.0), t, 1.0)


def test_pipelining_saves_static_energy() -> None:
    d = dims(10)
    b = llc_blocks(d, 8 * 2**20)
    p = EnergyParams(670e-12, 40e-12, {"dram": 80e-12 * 8, "llc": 10e-12 * 8}, 30.0)
    st_ = blocked_stage_costs(d, PAPER_LAP, b)
    e_block = energy_j(st_, p, blocked_cycles(d, PAPER_LAP, b), 2e9)
    e_pipe = energy_j(st_, p, pipelined_cycles(d, PAPER_LAP, b), 2e9)
    assert e_pipe < e_block
    assert e_block - e_pipe == pytest.approx(
        30.0 * (blocked_cycles(d, PAPER_LAP, b) - pipelined_cycles(d, PAPER_LAP, b)) / 2e9
    )


# --------------------------------------------------------------------------- validation


def test_validation_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="n_u"):
        UListDims(35, 100, 0)
    with pytest.raises(ValueError, match="w_l_bytes_per_s"):
        UListMachine(1e9, 1e9, 1e9, 1e9, -1.0)
    with pytest.raises(ValueError, match="b \\(number of blocks\\)"):
        blocked_cycles(dims(4), PAPER_LAP, 0)
    with pytest.raises(ValueError, match="engine"):
        total_cycles(dims(4), PAPER_LAP, "gpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="static_power_w"):
        EnergyParams(0.0, 0.0, {}, -1.0)


# --------------------------------------------------------------------------- extended model (not in 003)


def test_extended_validation_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="w_llc_bytes_per_s"):
        ExtendedParams(0.0, 1.0, 16.0)
    with pytest.raises(ValueError, match="evict_cycles_per_line"):
        ExtendedParams(1e9, -1.0, 16.0)
    with pytest.raises(ValueError, match="line_bytes"):
        ExtendedParams(1e9, 1.0, 16.0, line_bytes=0)


# --------------------------------------------------------------------------- extended model, all variants

from models.ulist import (DRAM_LEVELS, ExtendedStages, block_pieces, extended_stages,  # noqa: E402
                         fastest_pipelined_blocks, lap_call_cycles, leaf_lines, llc_residency, pipelined_contention_at)


def dram_bytes(e: ExtendedStages) -> float:
    """DRAM bytes of every stage of ``e``, whoever moves them (the host, or the LAP by DMA), B."""
    return sum(q for s in e.stages for level, q in s.traffic_bytes.items() if level in DRAM_LEVELS)


def test_a_dma_coupled_laps_gemm_bytes_are_priced_as_dma_and_a_cache_coupled_ones_as_the_hosts() -> None:
    """The GEMM stage's DRAM bytes: level dram_dma at the DRAM and near-memory couplings, dram at the LLC."""
    d, x = dims(4), ExtendedParams(30e9, 3.8, 16.0)
    for coupling, level in (("dram", "dram_dma"), ("near-memory", "dram_dma"), ("llc", "dram")):
        gemm = next(st for st in extended_stages(d, PAPER_LAP, x, 1, llc_bytes=8 * 2**20, coupling=coupling).stages
                    if st.name == "gemm")
        assert set(gemm.traffic_bytes) == {level, "llc"} and gemm.traffic_bytes[level] > 0


def test_leaf_lines_by_hand() -> None:
    assert leaf_lines(8) == 1.0  # 64 B leaves, line-aligned
    assert leaf_lines(4) == 1.0  # 32 B leaves, two per line
    # 35 doubles = 280 B: offsets 0, 280, ... repeat every 8 leaves; spans 5, 6, 5, 6, 5, 5, 6, 4 lines
    assert leaf_lines(35) == pytest.approx(42 / 8)


def test_lap_call_cycles_by_hand() -> None:
    mc = UListMachine(8.0, 8.0, 1.0, 1.0, 8.0, clock_hz=1.0)  # one element per cycle on the LAP port
    # m = k = 2, n = 3: one sub-block; fill = A 4 + B 6 + C 6 in + C 6 out = 22 el = all traffic
    assert lap_call_cycles(2, 3, mc) == pytest.approx(22 + max(2 * 2 * 2 * 3, 0.0))
    assert lap_call_cycles(2, 0, mc) == 0.0


def _llc_point(b: int, sets: int = 1, llc: float = 8 * 2**20, coupling: str = "llc"):
    return extended_stages(dims(4), PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0), b, llc_bytes=llc,
                           sets=sets, coupling=coupling)


def test_extended_stages_premise_and_exchange_level() -> None:
    fits, orig = _llc_point(24), _llc_point(1)
    assert fits.via_llc and not orig.via_llc  # B + C of q = 4 (2 x 48 MB) do not fit 8 MiB
    assert not _llc_point(24, coupling="dram").via_llc
    # B and C at DRAM (w_C = 3 GB/s) cost more host time than at the LLC (30 GB/s)
    assert _llc_point(24, coupling="dram").t1 > fits.t1
    # traffic: the LLC exchange keeps B and C out of DRAM
    assert dram_bytes(fits) < dram_bytes(_llc_point(24, coupling="dram"))
    assert fits.blocked_cycles() == pytest.approx(24 * (fits.t1 + fits.t2 + fits.t3 + fits.tm))
    assert fits.pipelined_cycles() <= fits.blocked_cycles()


def test_extended_stages_class_counts_change_only_the_gemm() -> None:
    d = dims(4)
    counts = (d.n_u - 9 * 100,) + (100,) * 9
    x = ExtendedParams(30e9, 3.8, 16.0)
    # (target-ordered blocks; class-ordered ones also span other shares of the leaves)
    even = extended_stages(d, PAPER_LAP, x, 24, llc_bytes=8 * 2**20, order="target")
    skew = extended_stages(d, PAPER_LAP, x, 24, llc_bytes=8 * 2**20, class_counts=counts, order="target")
    assert (skew.t1, skew.t3, skew.tm) == pytest.approx((even.t1, even.t3, even.tm))
    assert skew.t2 != pytest.approx(even.t2)
    with pytest.raises(ValueError, match="class_counts"):
        extended_stages(d, PAPER_LAP, x, 24, llc_bytes=8 * 2**20, class_counts=(1,) * 10)


def test_extended_stages_validation_names_the_parameter() -> None:
    x = ExtendedParams(30e9, 3.8, 16.0)
    for kw, name in (({"llc_bytes": 0.0}, "llc_bytes"), ({"llc_bytes": 1e6, "sets": 3}, "sets"),
                     ({"llc_bytes": 1e6, "coupling": "pcie"}, "coupling")):
        with pytest.raises(ValueError, match=name):
            extended_stages(dims(4), PAPER_LAP, x, 2, **kw)
    with pytest.raises(ValueError, match="n_q"):
        leaf_lines(0)


def test_extended_stages_charge_one_access_per_permuted_element() -> None:
    """With a slow issue rate the host stages become 3 (input) and 4 (output) accesses per element."""
    d = dims(4)
    free = extended_stages(d, PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0), 24, llc_bytes=8 * 2**20)
    slow = extended_stages(d, PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0, access_rate_per_s=1e8), 24,
                           llc_bytes=8 * 2**20)
    meta_cycles = d.n_u * 16.0 / PAPER_LAP.w_c_bytes_per_s * PAPER_LAP.clock_hz / 24
    per_block = d.n_u * d.n_q / 1e8 * PAPER_LAP.clock_hz / 24
    assert slow.t1 == pytest.approx(3 * per_block + meta_cycles)
    assert slow.t3 == pytest.approx(4 * per_block + meta_cycles)
    assert free.t1 < slow.t1 and (free.t2, free.tm) == (slow.t2, slow.tm)
    with pytest.raises(ValueError, match="access_rate_per_s"):
        ExtendedParams(1e9, 1.0, 16.0, access_rate_per_s=0.0)


def test_llc_residency_step_without_a_curve_and_linear_with_one() -> None:
    assert llc_residency(8.0, 8.0) == 1.0 and llc_residency(8.1, 8.0) == 0.0
    curve = ((1.0, 1.0), (1.5, 0.4), (3.0, 0.0))
    assert llc_residency(4.0, 8.0, curve) == 1.0  # below the first ratio: its residency
    assert llc_residency(10.0, 8.0, curve) == pytest.approx(1.0 - 0.6 * 0.25 / 0.5)
    assert llc_residency(18.0, 8.0, curve) == pytest.approx(0.4 * (1 - 0.75 / 1.5))
    assert llc_residency(80.0, 8.0, curve) == 0.0
    for bad, name in ((((1.0, 1.0), (1.0, 0.5)), "ratio"), (((1.0, 1.5),), "residency"), (((1.0,),), "pair")):
        with pytest.raises(ValueError, match=name):
            ExtendedParams(30e9, 3.8, 16.0, residency_curve=bad)
    with pytest.raises(ValueError, match="working_set_bytes"):
        llc_residency(-1.0, 8.0)


def test_partial_residency_lies_between_the_llc_and_the_dram_exchange() -> None:
    """One rule for blocked and pipelined points: the share of B and C the LLC serves is the
    curve at the block's working set; time and DRAM traffic interpolate between the two levels."""
    d = dims(4)

    def point(h: float, sets: int = 1, b: int = 24):
        x = ExtendedParams(30e9, 3.8, 16.0, residency_curve=((0.1, h), (100.0, h)))
        return extended_stages(d, PAPER_LAP, x, b, llc_bytes=8 * 2**20, sets=sets)

    keep, half, lose = point(1.0), point(0.5), point(0.0)
    assert (keep.bc_llc_share, half.bc_llc_share, lose.bc_llc_share) == (1.0, 0.5, 0.0)
    assert keep.t1 < half.t1 < lose.t1 and keep.t3 < half.t3 < lose.t3
    assert dram_bytes(half) == pytest.approx((dram_bytes(keep) + dram_bytes(lose)) / 2)
    lose_dram = extended_stages(d, PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0, residency_curve=((0.1, 0.0),)),
                                24, llc_bytes=8 * 2**20, coupling="dram")
    assert (lose.t1, lose.t3, dram_bytes(lose)) == pytest.approx((lose_dram.t1, lose_dram.t3, dram_bytes(lose_dram)))
    # blocked (one set) and pipelined (two sets) read the same curve at their own working set:
    # B and C of the live sets, the ten A_j, the block's share of leaf data and K/M records
    curve = ((1.0, 1.0), (2.0, 0.0))
    x = ExtendedParams(30e9, 3.8, 16.0, residency_curve=curve)
    bc = d.n_u * d.n_q * 8
    seen = []
    for sets, b in ((1, 12), (2, 24), (2, 16), (1, 6)):
        # target-ordered blocks: every block holds all ten classes and 1 / b of the leaves
        ws = sets * 2 * bc / b + 10 * d.n_q ** 2 * 8 + (2 * d.n_oct * d.n_q * 8 + 2 * d.n_u * 16.0) / b
        es = extended_stages(d, PAPER_LAP, x, b, llc_bytes=8 * 2**20, sets=sets, order="target")
        assert es.residency == pytest.approx(llc_residency(ws, 8 * 2**20, curve))
        seen.append(es.residency)
        # class-ordered blocks: the A_j of their calls, 10 / b of the leaves (all of them when b <= 10)
        calls = sum(n > 0 for blk in block_pieces((d.n_u / 10,) * 10, b) for n in blk)
        ws = (sets * 2 * bc / b + calls / b * d.n_q ** 2 * 8 + 2 * d.n_oct * d.n_q * 8 * min(1.0, 10 / b)
              + 2 * d.n_u * 16.0 / b)
        es = extended_stages(d, PAPER_LAP, x, b, llc_bytes=8 * 2**20, sets=sets)
        assert es.residency == pytest.approx(llc_residency(ws, 8 * 2**20, curve))
    assert max(seen) == 1.0 and min(seen) == 0.0 and any(0.0 < r < 1.0 for r in seen)


def test_block_pieces_by_hand() -> None:
    # class order: B's columns class by class, cut into equal runs
    assert block_pieces((4, 2, 2), 2) == [[4.0, 0.0, 0.0], [0.0, 2.0, 2.0]]
    assert block_pieces((4, 2, 2), 4) == [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]]
    assert block_pieces((3, 3), 4) == [[1.5, 0.0], [1.5, 0.0], [0.0, 1.5], [0.0, 1.5]]
    assert block_pieces((5, 1), 3) == [[2.0, 0.0], [2.0, 0.0], [1.0, 1.0]]
    # target order: every block a share of every class
    assert block_pieces((4, 2), 2, "target") == [[2.0, 1.0], [2.0, 1.0]]
    with pytest.raises(ValueError, match="order"):
        block_pieces((4, 2), 2, "random")


def test_class_ordered_blocks_read_each_a_once_per_call() -> None:
    # 24 blocks of a q = 4 U-list: class order makes 24 + 9 = 33 GEMM calls at most, target order 240;
    # each call reads its A_j (N_q^2 doubles) from DRAM
    d = dims(4)
    x = ExtendedParams(30e9, 3.8, 16.0)
    a = d.n_q ** 2 * 8
    gem = {o: next(st for st in extended_stages(d, PAPER_LAP, x, 24, llc_bytes=8 * 2**20, coupling="dram",
                                                order=o).stages if st.name == "gemm").traffic_bytes["dram_dma"]
           for o in ("class", "target")}
    calls = sum(n > 0 for blk in block_pieces((d.n_u / 10,) * 10, 24) for n in blk)
    assert calls <= 33
    assert gem["target"] - gem["class"] == pytest.approx((240 - calls) * a)


def test_pipelined_curves_split_the_b_and_the_c_share() -> None:
    """With pipelined curves, a pipelined point prices B at h_B and C at h_C: the input permutation
    as if every share were h_B, the output as if it were h_C; a blocked point ignores them."""
    d = dims(4)
    llc = 8 * 2**20
    flat = lambda h: ((0.1, h), (100.0, h))  # noqa: E731

    def point(sets: int, **curves):
        return extended_stages(d, PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0, residency_curve=flat(0.5), **curves),
                               24, llc_bytes=llc, sets=sets)

    split = point(2, pipelined_b_curve=flat(1.0), pipelined_c_curve=flat(0.0))
    all_b, all_c = point(2, pipelined_b_curve=flat(1.0), pipelined_c_curve=flat(1.0)), \
        point(2, pipelined_b_curve=flat(0.0), pipelined_c_curve=flat(0.0))
    assert (split.b_llc_share, split.c_llc_share, split.bc_llc_share) == (1.0, 0.0, 0.5)
    assert split.t1 == pytest.approx(all_b.t1) and split.t3 == pytest.approx(all_c.t3)
    assert split.t3 > split.t1 - all_b.t1 + all_b.t3  # C at DRAM costs the output permutation
    assert split.residency == 0.5  # the leaf gathers keep the blocked curve
    # traffic: B (host write, LAP read) at the LLC, C (host read, LAP read and write) at DRAM
    bc = d.n_u * d.n_q * 8
    gemm = {s.name: s for s in split.stages}["gemm"]
    assert gemm.traffic_bytes["llc"] == pytest.approx(bc)
    assert dram_bytes(all_c) - dram_bytes(split) == pytest.approx(2 * bc)  # B written by the host, read by the LAP
    blocked = point(1, pipelined_b_curve=flat(1.0), pipelined_c_curve=flat(0.0))
    assert (blocked.b_llc_share, blocked.c_llc_share) == (0.5, 0.5)
    via_dram = extended_stages(d, PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0, pipelined_b_curve=flat(1.0),
                                                            pipelined_c_curve=flat(1.0)),
                               24, llc_bytes=llc, sets=2, coupling="dram")
    assert (via_dram.b_llc_share, via_dram.c_llc_share) == (0.0, 0.0)
    with pytest.raises(ValueError, match="pipelined_b_curve and pipelined_c_curve"):
        ExtendedParams(30e9, 3.8, 16.0, pipelined_b_curve=flat(1.0))
    with pytest.raises(ValueError, match="residency"):
        ExtendedParams(30e9, 3.8, 16.0, pipelined_b_curve=flat(1.0), pipelined_c_curve=flat(1.5))


def test_fastest_pipelined_blocks_is_the_argmin_of_the_model() -> None:
    d, x, llc = dims(14), ExtendedParams(30e9, 3.8, 16.0), 8 * 2**20

    def cycles(b: int) -> float:
        return extended_stages(d, PAPER_LAP, x, b, llc_bytes=llc, sets=2).pipelined_cycles()

    best = fastest_pipelined_blocks(d, PAPER_LAP, x, 1, 40, llc_bytes=llc)
    assert all(cycles(best) <= cycles(b) for b in range(1, 41))
    # q = 14: fill and drain ((T1 + T3) / b) beat one block, the A_j re-reads beat 40 blocks
    assert 1 < best < 40 and cycles(best) < min(cycles(1), cycles(40))
    assert fastest_pipelined_blocks(d, PAPER_LAP, x, 5, 5, llc_bytes=llc) == 5
    with pytest.raises(ValueError, match="b_min must be <= b_max"):
        fastest_pipelined_blocks(d, PAPER_LAP, x, 6, 5, llc_bytes=llc)
    with pytest.raises(ValueError, match="number of blocks"):
        fastest_pipelined_blocks(d, PAPER_LAP, x, 0, 5, llc_bytes=llc)


def test_pipelined_contention_scales_the_dram_part_of_the_exchange() -> None:
    d, llc = dims(8), 8 * 2**20
    free = ExtendedParams(30e9, 3.8, 16.0)
    slow = ExtendedParams(30e9, 3.8, 16.0, pipelined_contention=((35.0, 2.0, 3.0),))  # every height
    a, b = (extended_stages(d, PAPER_LAP, x, 6, llc_bytes=llc, sets=2, coupling="dram") for x in (free, slow))
    bc = d.n_u * d.n_q * 8  # B (and C) bytes; through DRAM they cost bc / w_C each, twice and thrice as long
    w_c, clk = PAPER_LAP.w_c_bytes_per_s, PAPER_LAP.clock_hz
    assert b.t1 * b.b - a.t1 * a.b == pytest.approx(bc / w_c * clk, rel=1e-9)
    assert b.t3 * b.b - a.t3 * a.b == pytest.approx(2 * bc / w_c * clk, rel=1e-9)
    assert b.t2 == a.t2 and b.stages[1].traffic_bytes == a.stages[1].traffic_bytes
    # blocked points run no GEMM beside the host: unchanged
    assert (extended_stages(d, PAPER_LAP, slow, 6, llc_bytes=llc, coupling="dram").t1
            == extended_stages(d, PAPER_LAP, free, 6, llc_bytes=llc, coupling="dram").t1)
    for bad in (((35.0, 0.0, 1.0),), ((35.0, 1.0),), ((35.0, 1.0, math.inf),),
                ((84.0, 1.0, 1.0), (35.0, 1.0, 1.0)), ((0.0, 1.0, 1.0),)):
        with pytest.raises(ValueError, match="pipelined_contention"):
            ExtendedParams(30e9, 3.8, 16.0, pipelined_contention=bad)


def test_pipelined_contention_is_read_at_the_point_height() -> None:
    curve = ((35.0, 2.0, 1.0), (165.0, 1.0, 3.0))
    assert pipelined_contention_at((), 84) == (1.0, 1.0)
    assert pipelined_contention_at(curve, 10) == (2.0, 1.0)  # below the first height: its factors
    assert pipelined_contention_at(curve, 680) == (1.0, 3.0)  # above the last: its factors
    assert pipelined_contention_at(curve, 100) == pytest.approx((1.5, 2.0))  # halfway, linear
    # the model takes the factors of its own N_q: q = 4 (N_q = 35) and q = 8 (N_q = 165)
    llc = 8 * 2**20
    for q, k_in in ((4, 2.0), (8, 1.0)):
        at, const = (extended_stages(dims(q), PAPER_LAP, ExtendedParams(30e9, 3.8, 16.0, pipelined_contention=c), 6,
                                     llc_bytes=llc, sets=2, coupling="dram")
                     for c in (curve, ((1.0, k_in, 1.0),)))
        assert at.t1 == pytest.approx(const.t1, rel=1e-12)


# --------------------------------------------------------------------------- extended model, CPU only

from models.ulist import HostGemmBlocking, cpu_extended_stages, host_gemm_elements  # noqa: E402


def test_host_gemm_elements_by_hand() -> None:
    one_slice = UListDims(35, 100, 1000)
    blocking = HostGemmBlocking(k_c=256, n_c=2048)
    # N_q <= k_c: eq. 5's count, N_q (10 N_q + 3 N_U)
    assert host_gemm_elements(one_slice, blocking, 8 * 2**20) == 35 * (10 * 35 + 3 * 1000)
    # N_q = 6 > k_c = 4: two slices; class width 100 (N_U / 10), panels (6 + 4) x 100 x 8 B = 8000 B
    d = UListDims(6, 10, 1000)
    small = HostGemmBlocking(k_c=4, n_c=2048)
    # the LLC keeps the C panel beside the packed B panel: C read and written once
    assert host_gemm_elements(d, small, 8000.0) == 10 * 36 + 6 * 1000 * 3
    # it does not: C read and written once per slice
    assert host_gemm_elements(d, small, 7999.0) == 10 * 36 + 6 * 1000 * (1 + 2 * 2)
    # the panel is at most n_c wide: n_c = 50 halves it (4000 B), which fits 7999 B
    assert host_gemm_elements(d, HostGemmBlocking(k_c=4, n_c=50), 7999.0) == 10 * 36 + 6 * 1000 * 3
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="k_c"):
            HostGemmBlocking(k_c=bad, n_c=8)


def test_cpu_extended_gemm_adds_memory_time_to_compute_time() -> None:
    """The host GEMM's streaming does not overlap its flops: T2 = flops / f_C + bytes / w_C."""
    d, llc = dims(4), 8 * 2**20
    x = ExtendedParams(30e9, 3.8, 16.0)
    blocking = HostGemmBlocking(256, 2048)
    cpu = cpu_extended_stages(d, PAPER_LAP, x, blocking, llc_bytes=llc)
    moved = host_gemm_elements(d, blocking, llc) * 8
    clk = PAPER_LAP.clock_hz
    assert cpu.t2 == pytest.approx((2 * d.n_u * d.n_q**2 / PAPER_LAP.f_c_flops_per_s
                                    + moved / PAPER_LAP.w_c_bytes_per_s) * clk, rel=1e-12)
    assert cpu.t2 > t2_cpu_cycles(d, PAPER_LAP)  # eq. 5 takes the max of the two terms
    # the host stages are those of the unblocked DRAM exchange; no offload, so no eviction
    lap = extended_stages(d, PAPER_LAP, x, 1, llc_bytes=llc, coupling="dram")
    assert (cpu.t1, cpu.t3, cpu.tm, cpu.b) == (lap.t1, lap.t3, 0.0, 1)
    gemm = cpu.stages[1]
    assert (gemm.engine, gemm.flops, dict(gemm.traffic_bytes)) == ("cpu", 2 * d.n_u * d.n_q**2, {"dram": moved})
    assert cpu.blocked_cycles() == pytest.approx(cpu.t1 + cpu.t2 + cpu.t3)


def test_dirty_flush_charges_the_resident_part_of_each_block_of_b() -> None:
    """DRAM coupling: beyond the per-line eviction cost, every dirty B line the caches can still
    hold (a block's B, at most the LLC) costs the measured dirty-flush surplus; LLC coupling: nothing."""
    d = dims(4)
    bc_lines = d.n_u * d.n_q * 8 / 64
    clean = ExtendedParams(30e9, 4.0, 16.0)
    dirty = ExtendedParams(30e9, 4.0, 16.0, dirty_flush_cycles_per_line=10.0)
    small_llc = 4 * 2**20  # one block of B at b = 24 is about 2 MB; all of B is 48 MB
    for b, resident_lines in ((24, bc_lines), (1, small_llc / 64)):
        a, x = (extended_stages(d, PAPER_LAP, p, b, llc_bytes=small_llc, coupling="dram") for p in (clean, dirty))
        assert (x.tm - a.tm) * b == pytest.approx(resident_lines * 6.0, rel=1e-9)  # cycles
        assert (x.t1, x.t2, x.t3) == (a.t1, a.t2, a.t3)
    llc = [extended_stages(d, PAPER_LAP, p, 24, llc_bytes=8 * 2**20) for p in (clean, dirty)]
    assert llc[0].tm == llc[1].tm
    with pytest.raises(ValueError, match="dirty_flush_cycles_per_line"):
        ExtendedParams(30e9, 4.0, 16.0, dirty_flush_cycles_per_line=-1.0)


def test_pipelined_eviction_is_serial_with_both_sides() -> None:
    """The host evicts (or flushes) the next block's lines when it offloads it, after waiting for the
    running GEMM: per block Tm + max(T2, host work beside it), plus the first input and the last output."""
    gemm_bound = ExtendedStages(2.0, 5.0, 1.0, 0.5, 4, 0.0, 0.0, 0.0, ())
    assert gemm_bound.pipelined_cycles() == 2.0 + 4 * (0.5 + 5.0) + 1.0
    host_bound = ExtendedStages(2.0, 1.0, 1.0, 0.5, 4, 0.0, 0.0, 0.0, ())
    # gemm(0) runs beside in(1) only, gemm(3) beside out(2) only, the two middle ones beside both
    assert host_bound.pipelined_cycles() == 2.0 + (0.5 + 2.0) + 2 * (0.5 + 3.0) + (0.5 + 1.0) + 1.0
    assert host_bound.blocked_cycles() == 4 * (2.0 + 0.5 + 1.0 + 1.0)
    one = ExtendedStages(2.0, 1.0, 1.0, 0.5, 1, 0.0, 0.0, 0.0, ())
    assert one.pipelined_cycles() == one.blocked_cycles() == 2.0 + 0.5 + 1.0 + 1.0


def _pipeline_critical_path(trace, t1: float, t2: float, t3: float) -> tuple[float, int, int]:
    """Cycles of a pipelined FMM trace when every run of input-permutation rows (one block's) takes
    ``t1``, every run of output-permutation rows ``t3``, a GEMM ``t2`` from its block's first offload
    and a wait holds the host until the GEMM ends; with the numbers of input and output runs."""
    host = gemm_end = 0.0
    n_in = n_out = 0
    prev = ""
    for op, stage in zip(trace.column("op").to_pylist(), trace.column("stage").to_pylist()):
        if op == "offload" and prev != "offload":
            gemm_end = host + t2
        elif op == "wait":
            host = max(host, gemm_end)
        elif stage != prev and stage in ("input_perm", "output_perm"):
            host += t1 if stage == "input_perm" else t3
            n_in, n_out = n_in + (stage == "input_perm"), n_out + (stage == "output_perm")
        prev = op if op in ("offload", "wait") else stage
    return host, n_in, n_out


@pytest.mark.parametrize("b", [1, 2, 3, 5])
def test_pipelined_cycles_follow_the_pipelined_trace(b: int) -> None:
    """The model's pipeline is the trace's (003 Fig. 6): each block's input and output permutation
    once, every GEMM beside the permutations the trace issues between its offload and its wait."""
    from workloads.fmm_ulist import build_problem, split_blocks, ulist_trace

    problem = build_problem(4, n_points=3000, density="uniform")
    trace = ulist_trace(problem, "pipelining", "lap", split_blocks(problem, b))
    for t1, t2, t3 in ((3.0, 1.0, 2.0), (1.0, 10.0, 2.0), (1.0, 2.5, 2.0)):  # host-bound, GEMM-bound, mixed
        path, n_in, n_out = _pipeline_critical_path(trace, t1, t2, t3)
        assert (n_in, n_out) == (b, b)
        assert ExtendedStages(t1, t2, t3, 0.0, b, 0.0, 0.0, 0.0, ()).pipelined_cycles() == path
