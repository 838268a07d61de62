"""Run SCALE-Sim v3 (PyPI ``scalesim`` 3.0.0) in-process on one GEMM and return its counts.

SCALE-Sim is the oracle of the systolic array (``simulator.accel.systolic``): the tests and
``tests/bench/bench_systolic.py`` call ``run_gemm``. Its bandwidth-estimating mode is used
(SCALE-Sim's default, ``InterfaceBandwidth: CALC``): the read buffers never stall, and DRAM
traffic is counted as its read and write buffers fetch and drain. Sizes are SCALE-Sim's: SRAMs
in kB of 1024 one-byte words.

numpy: scalesim 3.0.0 ends ``double_buffered_scratchpad.service_memory_requests`` with
``int(max(cycles))`` over a list of shape-(1,) arrays, a conversion numpy 2.4 refuses (deprecated
since numpy 1.25). Pinning numpy below 2.4 would hold the whole project back, and a second
environment for SCALE-Sim alone would be heavy for a test oracle, so this harness patches it:
``patch_for_numpy`` makes the output write buffer return its service cycles as a flat array
(same values), so the list holds numpy scalars. The patch touches only scalesim's
``write_buffer`` class, in the process that imports this module, and is applied once.
"""

from __future__ import annotations

from dataclasses import dataclass

from scalesim.layout_utils import layouts
from scalesim.memory.write_buffer import write_buffer
from scalesim.scale_config import scale_config
from scalesim.single_layer_sim import single_layer_sim
from scalesim.topology_utils import topologies


def patch_for_numpy() -> None:
    """Make scalesim 3.0.0 run on numpy >= 2.4 (module docstring); idempotent."""
    original = write_buffer.service_writes
    if getattr(original, "flattened_for_numpy", False):
        return

    def service_writes(self, *args, **kwargs):
        return original(self, *args, **kwargs).reshape(-1)

    service_writes.flattened_for_numpy = True
    write_buffer.service_writes = service_writes


patch_for_numpy()


@dataclass(frozen=True)
class ScaleSimCounts:
    """SCALE-Sim's report of one GEMM layer: cycles and words."""

    compute_cycles: int  # COMPUTE_REPORT "Total Cycles": last output write's cycle, stalls included
    stall_cycles: int
    input_sram_read_words: int  # ifmap
    weight_sram_read_words: int  # filter
    output_sram_write_words: int  # ofmap
    input_dram_read_words: int
    weight_dram_read_words: int
    output_dram_write_words: int


def run_gemm(m: int, k: int, n: int, rows: int, cols: int, dataflow: str, input_kb: int = 256,
             weight_kb: int = 256, output_kb: int = 128) -> ScaleSimCounts:
    """SCALE-Sim on C (m x n) = A (m x k) B (k x n), ``rows`` x ``cols`` array, ``dataflow`` os/ws/is."""
    cfg = scale_config()
    cfg.array_rows, cfg.array_cols, cfg.df = rows, cols, dataflow
    cfg.ifmap_sz_kb, cfg.filter_sz_kb, cfg.ofmap_sz_kb = input_kb, weight_kb, output_kb
    cfg.use_user_bandwidth = False  # CALC: bandwidth-estimating mode
    cfg.valid_conf_flag = True
    topo = topologies()
    # a GEMM as SCALE-Sim's GEMM topology reader enters it: ifmap m x k, filter 1 x k, k channels... n filters
    topo.append_topo_arrays("gemm", ["gemm", m, k, 1, k, 1, n, 1, 1, 1, 1])
    topo.num_layers, topo.topo_load_flag = 1, True
    topo.topo_calc_hyperparams()
    sim = single_layer_sim()
    sim.set_params(layer_id=0, config_obj=cfg, topology_obj=topo, layout_obj=layouts(), verbose=False)
    sim.run()
    comp = sim.get_compute_report_items()
    det = sim.get_detail_report_items()
    return ScaleSimCounts(int(comp[1]), int(comp[2]), int(det[2]), int(det[5]), int(det[8]), int(det[11]),
                          int(det[14]), int(det[17]))
