"""Speed of the systolic array against SCALE-Sim v3 on the FMM U-list's GEMM shapes (target: 1000x faster).

The five U-list shapes (M x K x N = 35x35x16491, 84x84x6877, 165x165x3417, 286x286x2013,
680x680x834) on 4x4 and 16x16 arrays, output and weight stationary, with SCALE-Sim's default
SRAMs (256, 256 and 128 kB of one-byte words; offsim is set to the same words). Per point it
prints offsim's wall and CPU seconds for a whole run (trace, replay, DRAM through the coupling),
the CPU seconds of the closed forms alone (fold plan and DRAM read words), SCALE-Sim's wall and
CPU seconds in a fresh process (given up after --limit-s of wall time, 300 s by default), the
ratio of the CPU seconds (the machine may be shared: CPU time depends less on its load), and
whether the compute cycles and DRAM read words agree. offsim's kernels are compiled first.
Run: python tests/bench/bench_systolic.py [--limit-s S] [--arrays 16x16 ...] [--dataflows os ws]
[--shapes 35x35x16491 ...]
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the SCALE-Sim harness lives in tests/peers

SHAPES = [(35, 35, 16491), (84, 84, 6877), (165, 165, 3417), (286, 286, 2013), (680, 680, 834)]
ARRAYS = ["4x4", "16x16"]
DATAFLOWS = ["os", "ws"]
SRAM_KB = (256, 256, 128)  # SCALE-Sim's defaults: input (ifmap), weight (filter), output (ofmap)
TARGET_RATIO = 1000.0
SYSTEM = "configs/systems/systolic_dram.yaml"


def _scalesim_worker(args: tuple, out: multiprocessing.Queue) -> None:
    from tests.peers.scalesim_runner import run_gemm

    t0, c0 = time.perf_counter(), time.process_time()
    counts = run_gemm(*args, *SRAM_KB)
    out.put((time.perf_counter() - t0, time.process_time() - c0, counts))


def scalesim_point(m: int, k: int, n: int, rows: int, cols: int, dataflow: str, limit_s: float):
    """(wall s, CPU s, counts) of SCALE-Sim in a fresh process, or Nones past ``limit_s`` of wall time."""
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=_scalesim_worker, args=((m, k, n, rows, cols, dataflow), out))
    proc.start()
    try:
        wall_s, cpu_s, counts = out.get(timeout=limit_s)
    except queue.Empty:
        wall_s = cpu_s = counts = None
    proc.kill()
    proc.join()
    return wall_s, cpu_s, counts


def offsim_point(m: int, k: int, n: int, rows: int, cols: int, dataflow: str):
    """(whole-run wall s and CPU s, closed-form CPU s, fold plan, input and weight DRAM read words) of offsim."""
    from simulator.accel.systolic_dataflow import FoldPlan, input_dram_words
    from simulator.runner import load_system, simulate_trace
    from workloads.gemm import lap_gemm

    sets = [f"accelerators.systolic.{key}={value}" for key, value in (
        ("rows", rows), ("cols", cols), ("dataflow", dataflow), ("word_bytes", 1),
        ("input_sram_bytes", f"{SRAM_KB[0]} KiB"), ("weight_sram_bytes", f"{SRAM_KB[1]} KiB"),
        ("output_sram_bytes", f"{SRAM_KB[2]} KiB"))]
    system = load_system(SYSTEM, sets)
    t0, c0 = time.perf_counter(), time.process_time()
    simulate_trace(system, lap_gemm(m, n, k, target="systolic", elem_bytes=1, accumulate=False))
    t1, c1 = time.perf_counter(), time.process_time()
    plan = FoldPlan(dataflow, rows, cols, m, k, n)
    reads = [int(input_dram_words(plan, op, kb * 1024).sum()) for op, kb in (("input", SRAM_KB[0]),
                                                                              ("weight", SRAM_KB[1]))]
    return t1 - t0, c1 - c0, time.process_time() - c1, plan, reads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-s", type=float, default=300.0, help="give SCALE-Sim up after this many seconds")
    parser.add_argument("--arrays", nargs="+", default=ARRAYS, choices=ARRAYS)
    parser.add_argument("--dataflows", nargs="+", default=DATAFLOWS, choices=["os", "ws", "is"])
    parser.add_argument("--shapes", nargs="+", default=[f"{m}x{k}x{n}" for m, k, n in SHAPES],
                        choices=[f"{m}x{k}x{n}" for m, k, n in SHAPES], help="M x K x N shapes to run")
    args = parser.parse_args()
    offsim_point(64, 64, 64, 4, 4, "os")  # compile the kernels before timing
    print(f"{'M x K x N':>15} {'array':>6} {'df':>3} {'offsim s':>9} {'cpu s':>7} {'closed s':>8} "
          f"{'SCALE-Sim s':>11} {'cpu s':>7} {'ratio':>7} {'cycles':>10} {'agree':>5}")
    ratios = []
    for array in args.arrays:
        rows, cols = map(int, array.split("x"))
        for dataflow in args.dataflows:
            for m, k, n in (tuple(map(int, shape.split("x"))) for shape in args.shapes):
                run_s, run_cpu, closed_cpu, plan, reads = offsim_point(m, k, n, rows, cols, dataflow)
                ss_s, ss_cpu, ss = scalesim_point(m, k, n, rows, cols, dataflow, args.limit_s)
                if ss is None:
                    ss_txt, ss_cpu_txt, ratio_txt, agree = f"> {args.limit_s:.0f}", "-", "-", "-"
                else:
                    ratios.append(ss_cpu / run_cpu)
                    ss_txt, ss_cpu_txt, ratio_txt = f"{ss_s:.1f}", f"{ss_cpu:.1f}", f"{ss_cpu / run_cpu:.0f}"
                    agree = "yes" if (plan.compute_cycles == ss.compute_cycles and reads == [
                        ss.input_dram_read_words, ss.weight_dram_read_words]) else "NO"
                print(f"{f'{m}x{k}x{n}':>15} {array:>6} {dataflow:>3} {run_s:9.3f} {run_cpu:7.3f} {closed_cpu:8.4f} "
                      f"{ss_txt:>11} {ss_cpu_txt:>7} {ratio_txt:>7} {plan.compute_cycles:10d} {agree:>5}", flush=True)
    if ratios:
        worst = min(ratios)
        print(f"SCALE-Sim finished {len(ratios)} points; offsim's whole run took {worst:.0f} to {max(ratios):.0f} "
              f"times less CPU time; target {TARGET_RATIO:.0f}x: {'OK' if worst >= TARGET_RATIO else 'MISSED'} "
              f"({worst / TARGET_RATIO:.2f} of it at the slowest)")


if __name__ == "__main__":
    main()
