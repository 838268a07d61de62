"""Every offload command of a trace is checked by its unit before the unit sees it: a bad one is one
TraceError naming the trace, the row and the argument, not an exception inside the simulation."""

from __future__ import annotations

import pytest

from simulator.config.loader import load_spec
from simulator.config.schema import SystemSpec
from simulator.replay import replay
from simulator.system import build_system
from tests.conftest import offload_trace
from workloads.trace import TraceError

CRYPTO = "configs/systems/logca_ultrasparc_t2.yaml"  # unit 'crypto', 8 engines, with SHA-256
CARD = "configs/systems/logca_hifn_7955.yaml"  # a crypto card without SHA-256
LAP = "configs/systems/lap_llc.yaml"  # unit 'lap'
KERNEL = "configs/systems/logca_gpu_discrete.yaml"  # unit 'gpu'
STENCIL = "configs/systems/stencil_dram.yaml"  # unit 'stencil'
SYSTOLIC = "configs/systems/systolic_dram.yaml"  # unit 'systolic'

AES = {"op": "aes128", "inputs": [[0, 4096]], "outputs": [[1 << 20, 4096]]}
GEMM = {"op": "gemm", "m": 64, "n": 64, "k": 64, "a_addr": 0, "b_addr": 1 << 20, "c_addr": 1 << 21}
GPU = {"op": "gemm", "inputs": [[0, 4096]], "outputs": [[1 << 20, 4096]], "host_cycles": 1000, "flops": 92682,
       "memory_bytes": 6144}
TILE = {"inputs": [[0, 512]], "outputs": [[1 << 20, 512]], "points": 64, "rows": [8] * 8}
STENCIL_CMD = {"op": "stencil_tiles", "stencil": "jacobi_2d", "t_t": 2, "m_tile_words": 256, "tiles": [TILE]}

CASES = [
    (CRYPTO, "crypto", AES | {"engines": 0}, "engines: expected a value >= 1, got 0"),
    (CRYPTO, "crypto", AES | {"engines": "x"}, "engines: expected an integer, got 'x'"),
    (CRYPTO, "crypto", AES | {"op": "aes"}, "op: expected one of 'aes128', 'sha256', got 'aes'"),
    (CRYPTO, "crypto", {"op": "aes128", "inputs": [[0, 16]]}, "outputs: missing; expected a list of [byte address, bytes] regions"),
    (CRYPTO, "crypto", AES | {"inputs": "0-4096"}, "inputs = '0-4096': expected a list of [byte address, bytes]"),
    (CRYPTO, "crypto", AES | {"inputs": [[-64, 64]]}, "inputs[0] = [-64, 64]: expected [byte address, bytes]"),
    (CRYPTO, "crypto", AES | {"outputs": [[0, 64, 1]]}, "outputs[0] = [0, 64, 1]: expected [byte address, bytes]"),
    (CRYPTO, "crypto", AES | {"outputs": [[0, 2**50]]}, "outputs[0] = [0, 1125899906842624]: ends at byte "
                                                        "1125899906842624; expected it to end within the"),
    (CARD, "crypto", {**AES, "op": "sha256", "outputs": [[1 << 20, 32]]}, "this unit has no SHA-256 engine"),
    (CRYPTO, "crypto", AES | {"outputs": [[1 << 20, 16]]}, "outputs: 16 B; expected at least the input's 4096 B"),
    (CRYPTO, "crypto", AES | {"op": "sha256"}, "outputs: 4096 B; expected 32 B (one SHA-256 digest)"),
    (LAP, "lap", GEMM | {"op": "conv"}, "op: expected one of 'gemm', got 'conv'"),
    (LAP, "lap", GEMM | {"m": 0}, "offload to lap: m: expected a value >= 1, got 0"),
    (LAP, "lap", GEMM | {"lda": 8}, "lda = 8: expected a leading dimension >= 64"),
    (LAP, "lap", GEMM | {"accumulate": "no"}, "accumulate: expected true or false, got 'no'"),
    (LAP, "lap", GEMM | {"c_addr": 2**40}, "c_addr = 1099511627776: the matrix ends at byte 1099511660544; expected it to end within"),
    (SYSTOLIC, "systolic", GEMM | {"op": "conv"}, "op: expected one of 'gemm', got 'conv'"),
    (SYSTOLIC, "systolic", GEMM | {"k": -2}, "offload to systolic: k: expected a value >= 1, got -2"),
    (SYSTOLIC, "systolic", GEMM | {"b_addr": 2**40}, "b_addr = 1099511627776: the matrix ends at byte"),
    (KERNEL, "gpu", GPU | {"op": "conv"}, "op: expected one of 'gemm', 'fft', 'radix_sort', 'binary_search', got 'conv'"),
    (KERNEL, "gpu", GPU | {"host_cycles": -1}, "host_cycles: expected a value >= 0.0, got -1"),
    (KERNEL, "gpu", GPU | {"flops": -1}, "flops: expected a value >= 0.0, got -1"),
    # work the device would take longer than a run may last on (its time in ps would also overflow int64)
    (KERNEL, "gpu", GPU | {"host_cycles": 1e18}, "host_cycles = 1e+18: 14.68 Ms of device time; expected a request "
                                                 "that ends within a run's 1 ks of simulated time"),
    (KERNEL, "gpu", {"op": "fft", "parts": [{"inputs": [[0, 64]], "outputs": [], "host_cycles": 1},
                                            {"inputs": [[0, 64]], "outputs": [], "host_cycles": 1e300}]},
     "parts[1].host_cycles = 1e+300: "),
    (KERNEL, "gpu", {"op": "fft", "parts": [{"inputs": [[0, 64]], "outputs": []}]},
     "parts[0].host_cycles: missing; expected a number (host cycles)"),
    (KERNEL, "gpu", {"op": "fft", "parts": [{"inputs": [[0]], "host_cycles": 1}]}, "parts[0].inputs[0] = [0]"),
    (KERNEL, "gpu", {"op": "fft", "parts": []}, "parts: expected a non-empty list"),
    (STENCIL, "stencil", STENCIL_CMD | {"stencil": "jacobi_9d"}, "stencil: expected one of 'gradient_2d'"),
    (STENCIL, "stencil", STENCIL_CMD | {"t_t": 0}, "t_t: expected a value >= 1, got 0"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"rows": 8}]}, "tiles[0].rows = 8: expected a list"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"points": -1}]}, "tiles[0].points: expected a value >= 0, got -1"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"outputs": [[0, -8]]}]}, "tiles[0].outputs[0] = [0, -8]"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"inputs": [[2**45, 64]]}]}, "tiles[0].inputs[0] = [35"),
    (STENCIL, "stencil", STENCIL_CMD | {"m_tile_words": 10**9}, "m_tile_words = 1000000000: expected at most the 12288 words"),
    (STENCIL, "stencil", {k: v for k, v in STENCIL_CMD.items() if k != "m_tile_words"}, "m_tile_words: missing"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"inputs": [[0, 1 << 20]]}]},
     "tiles[0].inputs: 1 MiB; expected at most the tile's m_tile_words = 256 words of 4 B (1 KiB)"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"outputs": [[1 << 20, 512], [1 << 21, 600]]}]},
     "tiles[0].outputs: 1112 B; expected at most"),
    (STENCIL, "stencil", STENCIL_CMD | {"tiles": [TILE | {"rows": [1, 2]}]},
     "tiles[0].points = 64: expected the sum of rows, 3"),
]


@pytest.mark.parametrize("system, target, params, says", CASES, ids=[c[3][:40] for c in CASES])
def test_a_bad_command_is_refused_naming_row_and_argument(system, target, params, says):
    built = build_system(load_spec(system, SystemSpec).spec)
    with pytest.raises(TraceError) as err:
        replay(built, offload_trace(target, params), "t.parquet")
    assert str(err.value).startswith("t.parquet: row 1, column 'params': ")
    assert says in str(err.value)
    assert built.units[target].commands_done == 0


@pytest.mark.parametrize("system, target, params", [(CRYPTO, "crypto", AES), (LAP, "lap", GEMM),
                                                    (KERNEL, "gpu", GPU), (STENCIL, "stencil", STENCIL_CMD),
                                                    (SYSTOLIC, "systolic", GEMM)])
def test_the_good_command_of_each_unit_runs(system, target, params):
    built = build_system(load_spec(system, SystemSpec).spec)
    assert replay(built, offload_trace(target, params)) > 0
    assert built.units[target].commands_done == 1


def test_the_host_is_not_a_command_target():
    built = build_system(load_spec(LAP, SystemSpec).spec)
    with pytest.raises(TraceError, match=r"row 1, column 'params': target unit 'host' is not an accelerator of the "
                                         r"system \(it has: lap\)"):
        replay(built, offload_trace("host", GEMM))


def test_a_matrix_that_ends_at_the_last_byte_of_memory_runs():
    built = build_system(load_spec(LAP, SystemSpec).spec)
    top = built.dram.capacity_bytes
    eb = built.units["lap"].spec.elem_bytes
    # C is the top-left 64 x 64 of a 64 x 128 matrix: its last row ends 64 elements before the matrix does
    c_addr = top - (63 * 128 + 64) * eb
    assert replay(built, offload_trace("lap", GEMM | {"c_addr": c_addr, "ldc": 128})) > 0
    with pytest.raises(TraceError, match="c_addr"):
        replay(build_system(load_spec(LAP, SystemSpec).spec), offload_trace("lap", GEMM | {"c_addr": c_addr + eb, "ldc": 128}))
