"""offsim's DRAM model on the peer-check streams, and its figures beside the peers' reference tables.

``offsim_figures`` serves one stream of ``dram_streams.py`` on a ``DramSystem`` and returns the
same quantities as the reference tables (ns, B, GB/s, pJ): a saturating stream is one chunk
arriving at 0, a timed stream one request per call at its arrival time. ``ddr3_dram`` is the
shipped DDR3-1600 preset set up as the DDR3 tables' peers were: two ranks, open page, a
32-entry queue, refresh on, power-down off.

``python tests/peers/dram_compare.py`` prints, per stream of the DDR3 tables, offsim against
DRAMSim3 and Ramulator 2: run-time ratio, GB/s, mean read latency and each energy category.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

import numpy as np

from tests.peers.dram_streams import LINE_BYTES, Stream, streams

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: offsim's energy categories that DRAMSim3 also reports (it has no power-down).
ENERGY_CATEGORIES = ("activate_precharge", "read", "write", "refresh", "background_active", "background_precharge")


def ddr3_dram():
    """The shipped DDR3-1600 preset, two ranks, power-down off (the DDR3 tables' setting)."""
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from simulator.system import build_dram

    spec = load_spec(ROOT / "configs" / "systems" / "i7_920_ddr3.yaml", SystemSpec,
                     ["dram.geometry.ranks_per_channel=2", "dram.geometry.power_down=false"]).spec
    return build_dram(spec)


def ddr3_streams() -> list[Stream]:
    """The streams of the DDR3 tables (the triad's arrays offset by whole rows of the preset)."""
    return streams(ddr3_dram().geometry.lines_per_row)


def serve(dram, stream: Stream) -> np.ndarray:
    """Serve the stream; return each request's data-burst completion time, ps."""
    if not stream.timed:
        return dram.service_lines(stream.lines, stream.is_write, 0)
    done = np.empty(stream.lines.size, np.int64)
    for i in range(stream.lines.size):
        done[i] = dram.service_lines(stream.lines[i:i + 1], stream.is_write[i:i + 1], int(stream.arrival_ps[i]))[0]
    return done


def offsim_figures(dram, stream: Stream) -> dict[str, float]:
    """Run time (ns), bytes, GB/s, mean read latency (ns, timed streams only) and energy per
    category (pJ) of ``stream`` served by ``dram`` (a fresh DramSystem)."""
    done = serve(dram, stream)
    end_ps = dram.last_completion_ps
    reads = ~stream.is_write
    out = {"time_ns": end_ps / 1000, "bytes": stream.lines.size * LINE_BYTES,
           "bandwidth_gb_s": stream.lines.size * LINE_BYTES / (end_ps / 1000),
           "mean_read_latency_ns": float(np.mean(done[reads] - stream.arrival_ps[reads])) / 1000
           if stream.timed else float("nan")}
    energy = dram.energy_j(end_ps)
    for category in ENERGY_CATEGORIES:
        out[f"energy_{category}_pj"] = energy[category] * 1e12
    return out


def read_table(path: Path) -> dict[str, dict[str, str]]:
    """Rows of a reference table by stream name."""
    with open(path, newline="") as f:
        return {row["stream"]: row for row in csv.DictReader(f)}


def main() -> int:
    dramsim3 = read_table(HERE / "dramsim3_ddr3.csv")
    ramulator2 = read_table(HERE / "ramulator2_ddr3.csv") if (HERE / "ramulator2_ddr3.csv").exists() else {}
    for stream in ddr3_streams():
        if stream.name not in dramsim3:
            continue
        dram = ddr3_dram()
        start = time.perf_counter()
        ours = offsim_figures(dram, stream)
        wall_s = time.perf_counter() - start
        ref = dramsim3[stream.name]
        ram = ramulator2.get(stream.name, {})
        print(f"{stream.name}: offsim/DRAMSim3 time {ours['time_ns'] / float(ref['time_ns']):.4f}; GB/s offsim "
              f"{ours['bandwidth_gb_s']:.3f} DRAMSim3 {float(ref['bandwidth_gb_s']):.3f} Ramulator2 "
              f"{ram.get('bandwidth_gb_s', '-')}; mean read latency ns offsim {ours['mean_read_latency_ns']:.2f} "
              f"DRAMSim3 {ref['mean_read_latency_ns']} Ramulator2 {ram.get('mean_read_latency_ns', '-')}; "
              f"offsim wall {wall_s:.3f} s")
        for category in ENERGY_CATEGORIES:
            theirs = float(ref[f"energy_{category}_pj"])
            mine = ours[f"energy_{category}_pj"]
            ratio = f"{mine / theirs:.4f}" if theirs else "-"
            print(f"    {category:22s} offsim {mine / 1e6:12.4f} uJ  DRAMSim3 {theirs / 1e6:12.4f} uJ  ratio {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
