"""offsim's DRAM model on the peer-check streams, and its figures beside the peers' reference tables.

``offsim_figures`` serves one stream of ``dram_streams.py`` on a ``DramSystem`` and returns the
same quantities as the reference tables (ns, B, GB/s, pJ): a saturating stream is one chunk
arriving at 0, a timed stream one request per call at its arrival time. ``peer_dram`` is offsim
set up as a configuration's peers were (``PEER_SETUPS``): the shipped DDR3-1600 preset with two
ranks, under the preset's controller and under the ready-first one with per-bank command queues of 8
(the peers' structure); the shipped DDR4-3200 preset and one channel of the shipped HBM2 preset with
DRAMSim3's edits, under the latter; power-down off and ranks refreshed staggered, as DRAMSim3's, everywhere;
one sub-channel of the shipped DDR5-4800 preset, one pseudo-channel of the shipped HBM3 preset and one
channel of the shipped LPDDR5 preset under the ready-first controller without command queues, as Ramulator
2's. ``peer_streams`` gives the streams in offsim's line addresses: the same channel, rank, bank group,
bank, row and column as the peers decode from them.

``python tests/peers/dram_compare.py [SETUP ...]`` prints, per stream, offsim against each peer
with a table of the setup's configuration: run-time ratio, GB/s, mean read latency and, against
DRAMSim3, each energy category.
"""

from __future__ import annotations

import csv
import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.peers.dram_streams import (LINE_BYTES, RAMULATOR_ONLY, Stream, config_streams, offsim_layout, offsim_lines,
                                     offsim_spec)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: offsim's energy categories that DRAMSim3 also reports (it has no power-down).
ENERGY_CATEGORIES = ("activate_precharge", "read", "write", "refresh", "background_active", "background_precharge")


@dataclass(frozen=True)
class PeerSetup:
    """offsim set up as the peers of one configuration's tables were: the configuration (its
    tables ``<peer>_<config>.csv``), offsim's DRAM preset and the overrides on top of it, and the
    peer whose table the check holds it to (``dramsim3`` or ``ramulator2``)."""

    config: str
    preset: str
    overrides: tuple[str, ...]
    peer: str = "dramsim3"


#: DRAMSim3 driven by its trace frontend acts on a request two cycles after its trace cycle: the frontend
#: adds it after the memory's tick of that cycle, and the controller moves it to a command queue at the end of
#: the next tick, after that tick's command (``TraceBasedCPU::ClockTick``, ``Controller::ClockTick``)
_PIPELINE = ("dram.geometry.arrival_to_command_cycles=2",)
_DDR3 = ("dram.geometry.ranks_per_channel=2", "dram.geometry.power_down=false",
         "dram.geometry.refresh=staggered") + _PIPELINE
#: the ready-first controller with per-bank command queues of 8 requests, as the peers' files (DRAMSim3
#: ``queue_structure = PER_BANK``, ``cmd_queue_size = 8``)
_READY_FIRST = ("dram.geometry.scheduler=ready_first", "dram.geometry.command_queue_depth=8")
#: offsim as Ramulator 2's controllers: ready-first over a read queue and a write buffer of 32 requests without
#: per-bank command queues, power-down off, one cycle from a request's arrival to its first command
_RAMULATOR = ("dram.geometry.power_down=false", "dram.geometry.scheduler=ready_first", "dram.geometry.queue_depth=32",
              "dram.geometry.command_queue_depth=0", "dram.geometry.arrival_to_command_cycles=1")
#: setup name -> setup; ddr3 keeps the preset's own controller (frfcfs), the others run ready_first
PEER_SETUPS: dict[str, PeerSetup] = {
    "ddr3": PeerSetup("ddr3", "dram/ddr3_1600_mt41j256m4", _DDR3),
    "ddr3_ready_first": PeerSetup("ddr3", "dram/ddr3_1600_mt41j256m4", _DDR3 + _READY_FIRST),
    "ddr4": PeerSetup("ddr4", "dram/ddr4_3200_mt40a1g8", ("dram.geometry.power_down=false",
                                                         "dram.geometry.refresh=staggered") + _PIPELINE
                      + _READY_FIRST),
    # one 128-bit channel; DRAMSim3 doubles HBM columns (2 KB rows) and reads its file's tRTP_S (4)
    "hbm2": PeerSetup("hbm2", "dram/hbm2_8gb_x128", ("dram.geometry.power_down=false", "dram.geometry.channels=1",
                                                     "dram.geometry.columns=128", "dram.timing.t_rtp=4",
                                                     "dram.interface_energy_j_per_bit=20 pJ/bit")  # unused here
                      + _PIPELINE + _READY_FIRST),
    # one DDR5 sub-channel under Ramulator 2's GenericDDR controller: one read and one write buffer of 32 (the
    # preset's queue_depth) scanned whole, first-ready then oldest, no per-bank command queues; the controller
    # takes a request in the cycle the frontend sends it and issues its first command at the next tick
    # (Simulation::run ticks the frontend before the memory, ControllerBase::tick_prologue advances the clock
    # before scheduling), so one cycle of input pipeline
    "ddr5": PeerSetup("ddr5", RAMULATOR_ONLY["ddr5"].preset, RAMULATOR_ONLY["ddr5"].overrides + _RAMULATOR,
                      peer="ramulator2"),
    # one HBM3 pseudo-channel, all-bank refresh, under Ramulator 2's HBM34 controller (buffers of 64 of its 32 B
    # requests: 32 lines); a request's first command (an ACT or a column command, which issue on rising clock
    # edges only) comes at the next rising edge, half a cycle or one after its arrival: offsim takes one cycle
    "hbm3": PeerSetup("hbm3", RAMULATOR_ONLY["hbm3"].preset, RAMULATOR_ONLY["hbm3"].overrides + _RAMULATOR,
                      peer="ramulator2"),
    # one LPDDR5 channel, all-bank refresh, under Ramulator 2's LPDDR5 controller (buffers of 64 of its 32 B
    # requests: 32 lines; its data clock kept running)
    "lpddr5": PeerSetup("lpddr5", RAMULATOR_ONLY["lpddr5"].preset, RAMULATOR_ONLY["lpddr5"].overrides + _RAMULATOR,
                        peer="ramulator2"),
}


def peer_dram(setup: str):
    """A fresh DramSystem of offsim set up as ``PEER_SETUPS[setup]``."""
    from simulator.system import build_dram

    peer = PEER_SETUPS[setup]
    return build_dram(offsim_spec(peer.preset, peer.overrides))


def peer_streams(setup: str) -> list[tuple[Stream, Stream]]:
    """The streams of the setup's tables, each as the peers were given it and in offsim's line
    addresses."""
    geometry = peer_dram(setup).geometry
    layout = offsim_layout(PEER_SETUPS[setup].config, geometry)
    return [(s, dataclasses.replace(s, lines=offsim_lines(s, layout, geometry)))
            for s in config_streams(PEER_SETUPS[setup].config, layout)]


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
    category (pJ, the VDD supply's share: DRAMSim3 has no VPP term) of ``stream`` served by
    ``dram`` (a fresh DramSystem)."""
    done = serve(dram, stream)
    end_ps = dram.last_completion_ps
    reads = ~stream.is_write
    out = {"time_ns": end_ps / 1000, "bytes": stream.lines.size * LINE_BYTES,
           "bandwidth_gb_s": stream.lines.size * LINE_BYTES / (end_ps / 1000),
           "mean_read_latency_ns": float(np.mean(done[reads] - stream.arrival_ps[reads])) / 1000
           if stream.timed else float("nan")}
    energy = dram.energy_j(end_ps, include_vpp=False)
    for category in ENERGY_CATEGORIES:
        out[f"energy_{category}_pj"] = energy[category] * 1e12
    return out


#: table file prefix -> the peer's name
PEER_NAMES = {"dramsim3": "DRAMSim3", "ramulator2": "Ramulator2"}


def read_table(path: Path) -> dict[str, dict[str, str]]:
    """Rows of a reference table by stream name."""
    with open(path, newline="") as f:
        return {row["stream"]: row for row in csv.DictReader(f)}


def main(argv: list[str] | None = None) -> int:
    setups = (argv if argv is not None else sys.argv[1:]) or list(PEER_SETUPS)
    for setup in setups:
        if setup not in PEER_SETUPS:
            print(f"dram_compare: {setup!r}: expected one of {', '.join(PEER_SETUPS)}", file=sys.stderr)
            return 2
    for setup in setups:
        config = PEER_SETUPS[setup].config
        tables = {name: read_table(HERE / f"{peer}_{config}.csv") for peer, name in PEER_NAMES.items()
                  if (HERE / f"{peer}_{config}.csv").exists()}
        for stream, ours_stream in peer_streams(setup):
            dram = peer_dram(setup)
            start = time.perf_counter()
            ours = offsim_figures(dram, ours_stream)
            wall_s = time.perf_counter() - start
            rows = {name: table[stream.name] for name, table in tables.items()}
            ratios = "; ".join(f"offsim/{name} time {ours['time_ns'] / float(row['time_ns']):.4f}"
                               for name, row in rows.items())
            print(f"{setup} {stream.name}: {ratios}; GB/s offsim {ours['bandwidth_gb_s']:.3f} "
                  + " ".join(f"{name} {float(row['bandwidth_gb_s']):.3f}" for name, row in rows.items())
                  + f"; mean read latency ns offsim {ours['mean_read_latency_ns']:.2f} "
                  + " ".join(f"{name} {row['mean_read_latency_ns']}" for name, row in rows.items())
                  + f"; offsim wall {wall_s:.3f} s")
            ref = rows.get(PEER_NAMES["dramsim3"])
            for category in ENERGY_CATEGORIES if ref else ():  # only DRAMSim3 reports energy
                theirs = float(ref[f"energy_{category}_pj"])
                mine = ours[f"energy_{category}_pj"]
                ratio = f"{mine / theirs:.4f}" if theirs else "-"
                print(f"    {category:22s} offsim {mine / 1e6:12.4f} uJ  DRAMSim3 {theirs / 1e6:12.4f} uJ  "
                      f"ratio {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
