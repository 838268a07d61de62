"""Generator parameters that a generator would round, ignore, or take unbounded time or rows over are refused at once.

Each case from the command line (``offsim validate``): exit code 2 and one message naming the workload file
(or the ``--param`` option), the parameter and what was expected.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.cli import main
from tests.conftest import CONFIGS, DEFAULT_SYSTEM

T2_SYSTEM = CONFIGS / "systems" / "logca_ultrasparc_t2.yaml"
GPU_SYSTEM = CONFIGS / "systems" / "logca_gpu_discrete.yaml"


def _workload(tmp_path: Path, generator: str, params: str) -> Path:
    path = tmp_path / "w.yaml"
    path.write_text(f"name: w\ngenerator: {generator}\nparams: {params}\n")
    return path


def _refused(capsys, argv: list[str]) -> str:
    """Run ``offsim argv``: exit code 2 and one error line, without a traceback; return the line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _validate_refuses(tmp_path: Path, capsys, generator: str, params: str, starts: str,
                      system: Path = DEFAULT_SYSTEM) -> str:
    """``offsim validate system w.yaml`` refuses the workload with a message that starts ``w.yaml: <starts>``."""
    path = _workload(tmp_path, generator, params)
    message = _refused(capsys, ["validate", str(system), str(path)])
    assert message.startswith(f"offsim: error: {path}: {starts}"), message
    return message


# ------------------------------------------------------------------------------------ gemm_tiled


def test_gemm_tiled_plans_a_tall_matrix_in_a_huge_cache_without_walking_every_tile_height(monkeypatch):
    from workloads import gemm_tiled

    calls = []
    words = gemm_tiled.TiledGemmPlan.words

    def counted(self, *args, **kwargs):
        calls.append(1)
        assert len(calls) < 100, "the plan weighs every tile height"
        return words(self, *args, **kwargs)

    monkeypatch.setattr(gemm_tiled.TiledGemmPlan, "words", counted)
    plan = gemm_tiled.plan_tiled_gemm(20_000_000, 1, 1, 8 << 30, 8)
    assert (plan.tile_rows, plan.tile_cols) == (20_000_000, 1)
    plan = gemm_tiled.plan_tiled_gemm(10**12, 1, 1, 1 << 60, 8)
    assert (plan.tile_rows, plan.tile_cols) == (10**12, 1)


def test_gemm_tiled_refuses_too_many_steps_before_planning(tmp_path, capsys):
    _validate_refuses(tmp_path, capsys, "gemm_tiled", "{p0: 10, p1: 1000000, p2: 1, cache_bytes: 1 MiB, ways: 8}",
                      "params.p1: 1000000; expected at most 666,666 (a trace holds at most 2,000,000 rows, 3 per "
                      "step index of schedule output)")
    _validate_refuses(tmp_path, capsys, "gemm_tiled", "{p0: 10, p1: 1, p2: 1000000, cache_bytes: 1 MiB, ways: 8, "
                      "schedule: input1}", "params.p2: 1000000; expected at most 666,666")


def test_gemm_tiled_refuses_a_cache_of_a_partial_set(tmp_path, capsys):
    _validate_refuses(tmp_path, capsys, "gemm_tiled", "{p0: 1000, p1: 1, p2: 1, cache_bytes: 1000 B, ways: 8}",
                      "params.cache_bytes: '1000 B'; expected a whole number of sets of ways x line_bytes = 8 x 64 B "
                      "= 512 B")


# ------------------------------------------------------------------------------------ host software cycles


@pytest.mark.parametrize("generator, params, system, starts", [
    ("crypto_host", "{kernel: aes, g_bytes: 1 KiB, c_cycles_per_byte_beta: 1e15, beta: 1}", T2_SYSTEM,
     "params.c_cycles_per_byte_beta: '1e15'; expected at most 8.796e+12 (a trace row holds at most 2**53 cycles"),
    ("kernel_host", "{kernel: gemm, g_bytes: 1 MiB, c_cycles_per_byte_beta: 1e8}", GPU_SYSTEM,
     "params.c_cycles_per_byte_beta: '1e8'; expected at most 1.355e+06 (a trace row holds at most 2**53 cycles"),
    ("kernel_host", "{kernel: binary_search, g_bytes: 1 MiB, c_cycles_per_byte_beta: 1e16}", GPU_SYSTEM,
     "params.c_cycles_per_byte_beta: '1e16'; expected at most 1.293e+15"),
])
def test_host_cycles_beyond_a_row_name_the_cost_parameter(tmp_path, capsys, generator, params, system, starts):
    _validate_refuses(tmp_path, capsys, generator, params, starts, system)


def test_host_cycles_are_checked_per_row_not_per_buffer():
    from workloads.aes import crypto_host
    from workloads.trace import MAX_ROW_CYCLES

    # 2**53 cycles a row over two rows: the buffer's total is twice the row limit
    trace = crypto_host("aes", 128, MAX_ROW_CYCLES / 64, 1.0, row_bytes=64)
    assert trace.column("cycles").to_pylist()[1:] == [MAX_ROW_CYCLES, 0.0, MAX_ROW_CYCLES, 0.0]


# ------------------------------------------------------------------------------------ whole elements and lines


@pytest.mark.parametrize("generator, params, starts", [
    ("random_access", "{n_accesses: 10, footprint_bytes: 1000 B, elem_bytes: 16 B}",
     "params.footprint_bytes: '1000 B'; expected a multiple of elem_bytes (16)"),
    ("pointer_chase", "{n_hops: 10, footprint_bytes: 1000 B}",
     "params.footprint_bytes: '1000 B'; expected a multiple of line_bytes (64)"),
    ("pointer_chase", "{n_hops: 10, footprint_bytes: 1200 B, line_bytes: 12 B}",
     "params.line_bytes: '12 B'; expected a power of two >= 8 B"),
    ("pointer_chase", "{n_hops: 10, footprint_bytes: 12000 B, line_bytes: 6000 B}",
     "params.line_bytes: '6000 B'; expected a power of two >= 8 B"),
])
def test_micro_sizes_of_partial_elements_or_lines_are_refused(tmp_path, capsys, generator, params, starts):
    _validate_refuses(tmp_path, capsys, generator, params, starts)


@pytest.mark.parametrize("generator, params, starts", [
    ("kernel_host", "{kernel: fft, g_bytes: 20 B, c_cycles_per_byte_beta: 1}",
     "params.g_bytes: '20 B'; expected a multiple of 8 B (whole 8 B elements of fft)"),
    ("kernel_offload", "{kernel: fft, g_bytes: 20 B, c_cycles_per_byte_beta: 1}",
     "params.g_bytes: '20 B'; expected a multiple of 8 B (whole 8 B elements of fft)"),
    ("kernel_host", "{kernel: gemm, g_bytes: 20 B, c_cycles_per_byte_beta: 1}",
     "params.g_bytes: '20 B'; expected a multiple of 8 B (whole 4 B elements read, and half as many written)"),
    ("kernel_host", "{kernel: fft, g_bytes: 64 KiB, c_cycles_per_byte_beta: 1, row_bytes: 100 B}",
     "params.row_bytes: '100 B'; expected a multiple of 8 B (whole 8 B elements of fft)"),
])
def test_kernel_buffers_of_partial_elements_are_refused(tmp_path, capsys, generator, params, starts):
    _validate_refuses(tmp_path, capsys, generator, params, starts, GPU_SYSTEM)


@pytest.mark.parametrize("params, starts", [
    ("{p0: 64, p1: 64, p2: 64, cache_bytes: 32 KiB, ways: 1}",
     "params.ways: 1; expected at least 2 for schedule output (reserve_ways, left out, keeps 1 of each set's ways for "
     "streamed lines by default, and the resident tile needs one more; or give reserve_ways below ways)"),
    ("{p0: 64, p1: 64, p2: 64, cache_bytes: 32 KiB, ways: 2, schedule: input1}",
     "params.ways: 2; expected at least 3 for schedule input1"),
])
def test_gemm_tiled_names_ways_when_the_default_reserve_fills_them(tmp_path, capsys, params, starts):
    _validate_refuses(tmp_path, capsys, "gemm_tiled", params, starts)


# ------------------------------------------------------------------------------------ gather rows


@pytest.mark.parametrize("generator, params, starts", [
    ("random_access", "{n_accesses: 16777216, footprint_bytes: 1 GiB, row_elems: 1}",
     "params.row_elems: 1; expected at least 9 for n_accesses = 16,777,216 (a trace holds at most 2,000,000 rows, a "
     "gather row of row_elems accesses each: n_accesses / row_elems rows, rounded up)"),
    ("pointer_chase", "{n_hops: 16777216, footprint_bytes: 1 MiB, row_elems: 2}",
     "params.row_elems: 2; expected at least 9 for n_hops = 16,777,216"),
])
def test_gather_rows_beyond_the_limit_are_refused_before_the_trace_is_built(tmp_path, capsys, monkeypatch, generator,
                                                                            params, starts):
    from workloads import micro

    def unbuilt(*args, **kwargs):
        raise AssertionError("built before the refusal")

    monkeypatch.setattr(micro, "AddressSpace", unbuilt)  # the refusal comes before any allocation
    _validate_refuses(tmp_path, capsys, generator, params, starts)


# ------------------------------------------------------------------------------------ threads at the row limit


def test_intensity_counts_partial_blocks_and_barriers_of_threads(tmp_path, capsys):
    _validate_refuses(tmp_path, capsys, "intensity", "{flops_per_byte: 1, total_bytes: 131072000000 B, threads: 3}",
                      "params.threads: 3; expected at most 1 (a trace holds at most 2,000,000 rows, 1 per block of "
                      "block_bytes = 65536 B of each thread's slice of total_bytes = 131,072,000,000 B")


def test_stream_threads_at_the_row_limit_name_the_option(tmp_path, capsys):
    out = tmp_path / "out"
    message = _refused(capsys, ["run", str(DEFAULT_SYSTEM), str(CONFIGS / "workloads" / "stream_triad.yaml"),
                                "--param", "threads=3", "--param", "array_bytes=43690622976 B", "--out", str(out)])
    assert message.startswith(f"offsim: error: --param threads=3 (over {CONFIGS / 'workloads' / 'stream_triad.yaml'}): "
                              "params.threads: 3; expected at most 2 (a trace holds at most 2,000,000 rows, 3 per "
                              "block"), message
    assert not out.exists()


# ------------------------------------------------------------------------------------ ignored parameters


@pytest.mark.parametrize("params, system, starts", [
    ("{kernel: aes, g_bytes: 16 B, requests: 5}", T2_SYSTEM,
     "params.requests: 5; expected at most 1 (a request takes at least one 16 B block, and g_bytes = 16 B holds 1)"),
    ("{kernel: aes, g_bytes: 100 B, requests: 4, threads: 2}", CONFIGS / "systems" / "ultrasparc_t2_8core.yaml",
     "params.requests: 4; expected at most 3 (a request takes at least one 16 B block, and the smallest of the 2 "
     "threads' slices of g_bytes = 100 B holds 3)"),
])
def test_crypto_offload_refuses_more_requests_than_blocks(tmp_path, capsys, params, system, starts):
    _validate_refuses(tmp_path, capsys, "crypto_offload", params, starts, system)


@pytest.mark.parametrize("params, starts", [
    ("{q: 4, n_points: 2000, blocks: 5}", "params.blocks: 5; expected null for variant orig (only blocking, "
     "blocking_pref, pipelining cut the interactions into blocks)"),
    ("{q: 4, n_points: 2000, variant: blocking, blocks: 100000000}",
     "params.blocks: 100000000; expected at most N_U = 853 (the interactions: a block holds at least one)"),
])
def test_fmm_ulist_refuses_blocks_it_would_ignore_or_cut(tmp_path, capsys, params, starts):
    _validate_refuses(tmp_path, capsys, "fmm_ulist", params, starts, CONFIGS / "systems" / "lap_dram.yaml")


# ------------------------------------------------------------------------------------ stencil


def test_stencil_names_t_t_when_the_tiles_outgrow_the_grid(tmp_path, capsys):
    _validate_refuses(tmp_path, capsys, "stencil", "{stencil: jacobi_2d, grid: [8, 8], steps: 100000000, "
                      "scheme: time_tiled, "
                      "tile_kind: hhc_2d, t_t: 100000000, t_s: [4, 4]}",
                      "params.t_t: 100000000; expected at most 8, the grid's longest side (with tiles of t_t = "
                      "100,000,000 over grid [8, 8] one time step takes 75,000,008 trace rows")


@pytest.mark.parametrize("params, starts", [
    ("grid: [64, 64], steps: 4, tile_kind: hhc_2d, t_t: 1000000, t_s: [1000000, 1000000]",
     "params.t_t: 1000000; expected at most steps = 4 (a tile spans t_t time steps and runs whole"),
    ("grid: [1, 1], steps: 1, tile_kind: hhc_2d, t_t: 8, t_s: [32, 256]", "params.t_t: 8; expected at most steps = 1"),
    ("grid: [16, 16], steps: 8, tile_kind: hhc_2d, t_t: 8, t_s: [32, 256]",
     "params.t_s: [32, 256]; expected at most the grid [16, 16] along each dimension (a tile spans t_s[i] points of "
     "dimension i and runs whole: a wider one updates points beyond the grid's edges)"),
    ("grid: [64, 64], steps: 4, tile_kind: hhc_2d, t_t: 4, t_s: [8, 65]", "params.t_s: [8, 65]; expected at most"),
])
def test_stencil_refuses_a_tile_beyond_the_steps_or_the_grid(tmp_path, capsys, params, starts):
    """Tiles run whole: a tile deeper than the steps or wider than the grid would do work beyond them."""
    _validate_refuses(tmp_path, capsys, "stencil", f"{{stencil: jacobi_2d, scheme: time_tiled, {params}}}", starts)


def test_stencil_refuses_a_tile_of_more_flops_than_a_row_holds(tmp_path, capsys):
    _validate_refuses(tmp_path, capsys, "stencil", "{stencil: jacobi_1d, grid: [100000000], steps: 100000000, "
                      "scheme: time_tiled, tile_kind: time_skew_1d, t_t: 100000000, t_s: [100000000]}",
                      "params.t_t: 100000000; expected smaller with t_s = [100000000] (the tile updates "
                      "10,000,000,000,000,000 points, 30,000,000,000,000,000 flops of jacobi_1d on one trace row, "
                      "which holds at most 9,007,199,254,740,992: workloads.trace.MAX_ROW_FLOPS)")


@pytest.mark.parametrize("generator, params, starts", [
    ("crypto_offload", "{kernel: des, g_bytes: 1 KiB}", "params.kernel: 'des'; expected one of aes, sha"),
    ("kernel_host", "{kernel: lu, g_bytes: 1 KiB, c_cycles_per_byte_beta: 1}",
     "params.kernel: 'lu'; expected one of gemm, fft, radix_sort, binary_search"),
    ("stencil", "{stencil: jacobi_4d, grid: [8], steps: 1}", "params.stencil: 'jacobi_4d'; expected one of "),
    ("stencil", "{stencil: jacobi_2d, grid: [8, 8], steps: 1, scheme: time_tiled, tile_kind: hex_2d, t_t: 2, "
     "t_s: [4, 4]}", "params.tile_kind: 'hex_2d'; expected one of time_skew_1d, hex_1d, hhc_2d, hhc_3d or null"),
    ("fmm_ulist", "{q: 1, n_points: 4000, block_order: leaf}", "params.block_order: 'leaf'; expected one of class, "
     "target"),
    ("fmm_ulist", "{q: 1, n_points: 4000, bc_layout: cols}", "params.bc_layout: 'cols'; expected one of rows, "
     "interactions"),
])
def test_a_closed_choice_outside_its_values_is_refused_before_the_generator_runs(tmp_path, capsys, generator, params,
                                                                                 starts):
    _validate_refuses(tmp_path, capsys, generator, params, starts)


@pytest.mark.parametrize("elem_bytes", ["8 B", "1 B"])
def test_a_gemm_laid_out_in_other_elements_than_the_targets_is_refused(tmp_path, capsys, elem_bytes):
    """The systolic array's words are 2 B: a GEMM of larger or smaller elements is refused, naming elem_bytes."""
    workload = CONFIGS / "workloads" / "systolic_gemm.yaml"
    message = _refused(capsys, ["run", str(CONFIGS / "systems" / "systolic_dram.yaml"), str(workload), "--param",
                                f"elem_bytes={elem_bytes}", "--out", str(tmp_path / "r")])
    eb = elem_bytes.split()[0]
    assert message.startswith(f"offsim: error: {workload} (with --param elem_bytes={elem_bytes}): row 0, column "
                              f"'params': offload to systolic: elem_bytes = {eb}: the matrices are laid out in {eb} B "
                              "elements; expected the unit's 2 B"), message
    assert not (tmp_path / "r").exists()
