"""Run the peers on the streams of ``dram_streams.py`` and reduce their outputs to reference tables.

``python tests/peers/dram_peer_tables.py dramsim3 FOLDER --traced BIN --plain BIN --out CSV`` runs
DRAMSim3 on every stream in FOLDER (written by ``dram_streams.py``) twice: first the build with
``CMD_TRACE`` on (BIN ``--traced``), long enough for every request, to find from its command trace
when the last data burst ends; then the plain build (``--plain``) for exactly that many cycles, so
that its statistics cover the stream's run and nothing after it. It writes one CSV row per stream.

``python tests/peers/dram_peer_tables.py ramulator2 FOLDER --config CONFIG --out CSV`` reads the
``<stream>.ramulator2.stats.json`` files the generated Ramulator 2 configurations of CONFIG wrote.

Units: times in ns and in the peer's clock cycles, bytes in B, bandwidth in GB/s (1e9 B/s),
energy in pJ. DRAMSim3 reports energies in V x mA x cycles (labelled pJ, but only so when a
cycle is 1 ns); they are multiplied by tCK in ns here.
"""

from __future__ import annotations

import argparse
import configparser
import csv
import json
import resource
import subprocess
import sys
from collections import defaultdict, deque
from pathlib import Path

import numpy as np

from tests.peers.dram_streams import (CONFIG_NAMES, LINE_BYTES, RAMULATOR_ONLY, bank_stride_lines, config_streams,
                                     dramsim3_layout, reference_layout, stream_digest, streams)

#: DRAMSim3 energy statistics (V x mA x cycles) and offsim's names for their categories.
DRAMSIM3_ENERGY = {"act_energy": "activate_precharge", "read_energy": "read", "write_energy": "write",
                   "ref_energy": "refresh", "act_stb_energy": "background_active",
                   "pre_stb_energy": "background_precharge"}

COLUMNS = ["stream", "digest", "requests", "reads", "writes", "reads_issued", "writes_issued",
           "time_cycles", "tck_ps", "time_ns", "bytes", "bandwidth_gb_s", "mean_read_latency_ns",
           "activates", "refreshes"] + [f"energy_{c}_pj" for c in DRAMSIM3_ENERGY.values()]


def _read_ini(folder: Path) -> configparser.ConfigParser:
    ini = configparser.ConfigParser()
    ini.optionxform = str
    ini.read(folder / "dramsim3.ini")
    return ini


def _command_trace(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cycle, is_read, field key) of every column command in a DRAMSim3 command trace; the key
    packs rank, bank group, bank, row and column."""
    cycles, reads, keys = [], [], []
    with open(path) as f:
        for text in f:
            parts = text.split()
            if parts[1] not in ("read", "write", "read_p", "write_p"):
                continue
            cycles.append(int(parts[0]))
            reads.append(parts[1].startswith("read"))
            ra, bg, ba, ro, co = int(parts[3]), int(parts[4]), int(parts[5]), int(parts[6], 16), int(parts[7], 16)
            keys.append((((ra * 64 + bg) * 64 + ba) << 40) | (ro << 16) | co)
    return np.array(cycles, np.int64), np.array(reads, bool), np.array(keys, np.int64)


def _line_keys(lines: np.ndarray, folder: Path) -> np.ndarray:
    f = dramsim3_layout(_read_ini(folder)).decode(lines)
    return (((f["ra"] * 64 + f["bg"]) * 64 + f["ba"]) << 40) | (f["ro"] << 16) | f["co"]


def _latency_from_arrival(lines, is_write, arrival_cycles, cmd_cycles, cmd_reads, cmd_keys, folder, rd_delay):
    """Mean cycles from each read's trace arrival to the end of its data burst, each read matched
    to the first later read command of its address."""
    pending: dict[int, deque] = defaultdict(deque)
    keys = _line_keys(lines, folder)
    for k, c in zip(keys[~is_write].tolist(), arrival_cycles[~is_write].tolist()):
        pending[k].append(c)
    total, count = 0, 0
    for c, k in zip(cmd_cycles[cmd_reads].tolist(), cmd_keys[cmd_reads].tolist()):
        while pending[k]:  # one read command serves every queued read of its address
            total += c + rd_delay - pending[k].popleft()
            count += 1
            if not pending[k] or pending[k][0] > c:
                break
    return total / count if count else float("nan")


def run_dramsim3(folder: Path, traced: Path, plain: Path, out_csv: Path) -> None:
    ini = _read_ini(folder)
    tck = round(float(ini["timing"]["tCK"]) * 1000)
    t = ini["timing"]
    bl_cycles = int(ini["dram_structure"]["BL"]) // 2
    rd_delay, wr_delay = int(t.get("AL", 0)) + int(t["CL"]) + bl_cycles, int(t.get("AL", 0)) + int(t["CWL"]) + bl_cycles
    rows = []
    for stream in streams(bank_stride_lines(dramsim3_layout(ini))):
        lines, is_write = stream.lines, stream.is_write
        arrival_cycles = stream.arrival_ps // tck
        n_reads = int((~is_write).sum())
        run = folder / f"{stream.name}.dramsim3"
        run.mkdir(exist_ok=True)
        trace = folder / f"{stream.name}.dramsim3.trace"
        budget = int(arrival_cycles[-1]) + 8 * lines.size + 10_000
        while True:  # long enough for every read to complete
            subprocess.run([str(traced), str(folder / "dramsim3.ini"), "-c", str(budget), "-t", str(trace),
                            "-o", str(run)], check=True, stdout=subprocess.DEVNULL)
            if json.loads((run / "dramsim3.json").read_text())["0"]["num_reads_done"] == n_reads:
                break
            budget *= 2
        cmd_cycles, cmd_reads, cmd_keys = _command_trace(run / "dramsim3ch_0cmd.trace")
        (run / "dramsim3ch_0cmd.trace").unlink()
        ends = cmd_cycles + np.where(cmd_reads, rd_delay, wr_delay)
        end_cycle = int(ends.max())
        start_s = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        subprocess.run([str(plain), str(folder / "dramsim3.ini"), "-c", str(end_cycle), "-t", str(trace),
                        "-o", str(run)], check=True, stdout=subprocess.DEVNULL)
        cpu_s = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - start_s
        stats = json.loads((run / "dramsim3.json").read_text())["0"]
        issued = (int(cmd_reads.sum()), int((~cmd_reads).sum()))
        if (stats["num_read_cmds"], stats["num_write_cmds"]) != issued:  # the two builds must agree
            raise RuntimeError(f"{stream.name}: {stats['num_read_cmds']} reads, {stats['num_write_cmds']} writes "
                               f"by cycle {end_cycle}; the traced run issued {issued}")
        row = {"stream": stream.name, "digest": stream_digest(stream), "requests": lines.size, "reads": n_reads,
               "writes": int(is_write.sum()), "reads_issued": stats["num_read_cmds"],
               "writes_issued": stats["num_write_cmds"], "time_cycles": end_cycle, "tck_ps": tck,
               "time_ns": end_cycle * tck / 1000,
               "bytes": (stats["num_read_cmds"] + stats["num_write_cmds"]) * LINE_BYTES,
               "activates": stats["num_act_cmds"], "refreshes": stats["num_ref_cmds"]}
        row["bandwidth_gb_s"] = row["bytes"] / row["time_ns"]
        if stream.timed:
            row["mean_read_latency_ns"] = _latency_from_arrival(
                lines, is_write, arrival_cycles, cmd_cycles, cmd_reads, cmd_keys, folder, rd_delay) * tck / 1000
        else:  # DRAMSim3's own figure: from the cycle after the controller took the request
            row["mean_read_latency_ns"] = stats["average_read_latency"] * tck / 1000
        for key, category in DRAMSIM3_ENERGY.items():
            value = stats[key]
            value = sum(value.values()) if isinstance(value, dict) else value
            row[f"energy_{category}_pj"] = value * tck / 1000  # V x mA x cycles x ns/cycle = pJ
        rows.append(row)
        print(f"{stream.name}: {end_cycle} cycles, {row['bandwidth_gb_s']:.3f} GB/s, plain run {cpu_s:.2f} s user CPU",
              flush=True)
    write_csv(out_csv, rows)


def read_ramulator2(folder: Path, config: str, out_csv: Path) -> None:
    """One row per stream from Ramulator 2's statistics, in lines and ns (its controller may count
    bursts, several to a line, and half clock cycles: ``RamulatorOnly``)."""
    peer = RAMULATOR_ONLY.get(config)
    per_line, ticks = (peer.requests_per_line, peer.ticks_per_tck) if peer else (1, 1)
    layout, tck = reference_layout(config, None if peer else _read_ini(folder))
    rows = []
    for stream in config_streams(config, layout):
        stats = json.loads((folder / f"{stream.name}.ramulator2.stats.json").read_text())
        ctrl = stats["memory_system"]["controller"]
        cycles = _ratio(int(ctrl["cycles"]), ticks)
        reads, writes = int(ctrl["num_read_reqs_served"]), int(ctrl["num_write_reqs_served"])
        row = {"stream": stream.name, "digest": stream_digest(stream), "requests": stream.lines.size,
               "reads": int((~stream.is_write).sum()), "writes": int(stream.is_write.sum()),
               "reads_issued": _ratio(reads, per_line), "writes_issued": _ratio(writes, per_line),
               "time_cycles": cycles, "tck_ps": tck, "time_ns": cycles * tck / 1000,
               "bytes": (reads + writes) * LINE_BYTES // per_line,
               "mean_read_latency_ns": float(ctrl["avg_read_latency"]) / ticks * tck / 1000,
               "activates": "", "refreshes": ""}
        row["bandwidth_gb_s"] = row["bytes"] / row["time_ns"]
        rows.append(row)
    write_csv(out_csv, rows)


def _ratio(count: int, divisor: int) -> int | float:
    """count / divisor, an int where it is whole (Ramulator 2's bursts and half cycles to lines and cycles)."""
    return count // divisor if count % divisor == 0 else count / divisor


#: columns that count cycles or commands: Ramulator 2's halves (``_ratio``) are written exactly
HALF_COUNT_COLUMNS = ("time_cycles", "reads_issued", "writes_issued")


def _cell(column: str, value: object) -> object:
    """A table cell: a count of ``HALF_COUNT_COLUMNS`` exactly, any other float to 6 significant digits."""
    if isinstance(value, float) and column in HALF_COUNT_COLUMNS:
        return repr(value)
    return f"{value:.6g}" if isinstance(value, float) else value


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, restval="", lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(k, v) for k, v in row.items()})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="peer", required=True)
    d = sub.add_parser("dramsim3")
    d.add_argument("folder", type=Path)
    d.add_argument("--traced", type=Path, required=True, help="dramsim3main built with -DCMD_TRACE=ON")
    d.add_argument("--plain", type=Path, required=True, help="dramsim3main built without it")
    d.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("ramulator2")
    r.add_argument("folder", type=Path)
    r.add_argument("--config", choices=CONFIG_NAMES, required=True,
                   help="the configuration the folder holds (dram_streams.py --config)")
    r.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.peer == "dramsim3":
        run_dramsim3(args.folder, args.traced, args.plain, args.out)
    else:
        read_ramulator2(args.folder, args.config, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
