"""Benchmark: the main job (offsim reproduce asri-fmm) of a reference checkout and of this one, back to back.

Issue 43's target: the main job in at most 45 s of wall time on a 2-core machine, measured in the same run
as the reference code for the ratio, its tables byte-identical to the reference's. Runs ``offsim reproduce
asri-fmm`` (``--quick`` on request) in a fresh process from each checkout, the reference first, and prints
each run's wall time and CPU time (its processes' user + system time, which other load on the machine
inflates less than the wall time), the ratios reference / this, and which outputs differ: the study tables
(``table.csv`` without its timing columns), ``machine.json`` and ``report.md``.

A checkout compiles its kernels on its first run (``simulator.kernel_cache``): run each once before
timing.

Run: python tests/bench/bench_main_job.py --base DIR [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET_WALL_S = 45.0
STUDY_DIRS = ("study", "study_marssx86")
SAME_BYTES = ("table3.csv", "table5.csv", "crosscheck.csv", "crosscheck_summary.csv", "findings.csv", "machine.json")
TIMING_COLUMNS = ("generate_s", "simulate_s")  # table.csv: each point's own wall times


def run_job(tree: Path, out: Path, quick: bool) -> tuple[float, float]:
    """(wall s, CPU s) of the main job of the checkout ``tree`` written to ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "simulator.cli", "reproduce", "asri-fmm", "--out", str(out)] + (["--quick"] if quick else [])
    subprocess.run(cmd, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, check=True, stdout=subprocess.DEVNULL)
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall_s, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def table_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a study's table.csv without its timing columns."""
    with path.open(newline="") as f:
        return [{k: v for k, v in row.items() if k not in TIMING_COLUMNS} for row in csv.DictReader(f)]


def differing(a: Path, b: Path) -> list[str]:
    """The outputs of two runs of the main job that differ (module docstring)."""
    out = [f"{d}/{name}" for d in STUDY_DIRS for name in SAME_BYTES
           if (a / d / name).read_bytes() != (b / d / name).read_bytes()]
    out += [f"{d}/table.csv" for d in STUDY_DIRS if table_rows(a / d / "table.csv") != table_rows(b / d / "table.csv")]
    if (a / "report.md").read_bytes() != (b / "report.md").read_bytes():
        out.append("report.md")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="a checkout of the reference code")
    parser.add_argument("--quick", action="store_true", help="the --quick job")
    parser.add_argument("--out", type=Path, help="keep the two outputs here (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        runs = {}
        for label, tree in (("reference", args.base.resolve()), ("this", ROOT)):
            runs[label] = run_job(tree, out / label, args.quick)
            print(f"{label:9s} {tree}: {runs[label][0]:7.1f} s wall, {runs[label][1]:7.1f} s CPU", flush=True)
        (base_wall, base_cpu), (wall, cpu) = runs["reference"], runs["this"]
        print(f"ratio reference / this: {base_wall / wall:.2f} x wall, {base_cpu / cpu:.2f} x CPU; "
              f"target {TARGET_WALL_S:g} s wall{'' if args.quick else f': {wall / TARGET_WALL_S:.2f} x it'}")
        diff = differing(out / "reference", out / "this")
        print("outputs: " + ("identical (table.csv without its timing columns)" if not diff
                             else "DIFFER: " + ", ".join(diff)))


if __name__ == "__main__":
    main()
