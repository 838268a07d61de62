"""Benchmark: the FMM study's schedule on W workers simulated from its measured point times.

Reads a study's ``table.csv`` (each point's ``generate_s + simulate_s``, measured by the run that
wrote it) and replays the list schedule (each point, in run order, to the worker free first) for
W workers, in three orders: the study's run order (``placement.point_priority``, longest first by
declared size), the order by q alone with the pipelined points last (a point's size taken as q,
as a reference), and the points sorted by their measured times (the best a list schedule of these
times can do). Prints each order's wall time and efficiency = sum of point times / (W x wall).
The micro runs are not in the table: the schedule starts at the points (the pipelined points,
which wait for the micro runs, are taken as ready from the start).

Run: python tests/bench/bench_schedule.py [--table results/fmm/table.csv] [--workers 16]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from simulator.studies.fmm.placement import PlacementPoint, point_priority
from simulator.studies.schedule import efficiency, list_schedule_s

ROOT = Path(__file__).resolve().parents[2]


def point_of(row: pd.Series) -> PlacementPoint:
    """The declared point of a table row (what the run order sees before the point runs)."""
    return PlacementPoint(int(row.q), row.placement, row.system, row.gemm, row.variant, int(row.n_points),
                          row.density, int(row.llc_bytes), float(row.block_llc_share))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=ROOT / "results" / "fmm" / "table.csv")
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    table = pd.read_csv(args.table)
    seconds = (table.generate_s + table.simulate_s).tolist()
    priority = [point_priority(point_of(row)) for row in table.itertuples()]
    orders = {
        "run order (longest first by declared size)": sorted(range(len(table)), key=lambda i: priority[i],
                                                             reverse=True),
        "by q, pipelined last (reference)": sorted(range(len(table)), key=lambda i: (
            table.variant[i] == "pipelining", table.gemm[i] != "cpu", -table.q[i])),
        "by measured time (best list schedule)": sorted(range(len(table)), key=lambda i: -seconds[i]),
    }
    total = sum(seconds)
    print(f"{args.table}: {len(table)} points, {total:.1f} s of point time, longest {max(seconds):.1f} s; "
          f"{args.workers} workers: at least {max(total / args.workers, max(seconds)):.1f} s")
    for name, order in orders.items():
        times = [seconds[i] for i in order]
        wall = list_schedule_s(times, args.workers)
        print(f"  {name:<44} wall {wall:7.1f} s  efficiency {efficiency(times, args.workers):.3f}  "
              f"speedup over 1 worker {total / wall:5.2f}x")


if __name__ == "__main__":
    main()
