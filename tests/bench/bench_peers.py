"""Benchmark: offsim beside every peer simulator installed here, in one run, with speed ratios.

- Caches: the mixed trace of ``bench_cache.py`` (1M accesses by default) through offsim's hierarchy
  and pycachesim's (its C core), CPU seconds, best of 3; the ratio is pycachesim's time / offsim's.
- DRAM: the streams of ``tests/peers`` served by offsim, beside the DRAMSim3 and Ramulator 2 reference
  tables (simulated time and bandwidth, as ratios offsim / peer). The tables hold no run time of the
  peers; with ``dramsim3main`` (its plain build) on PATH, DRAMSim3 runs each saturating stream of each
  configuration for the cycles its table gives (CPU seconds of the child process), and offsim's DRAM
  model serves the same stream as each ``PEER_SETUPS`` entry of that configuration sets it up (CPU
  seconds of ``service_lines`` alone, best of 3, kernels loaded first); the ratio is DRAMSim3's time /
  offsim's. The ddr4 and hbm2 configurations start from DRAMSim3's shipped files (``--dramsim3-configs``,
  the ``configs`` folder of its checkout); without it only ddr3 is timed.
- Systolic array: one U-list GEMM shape on a 16x16 array, output stationary, offsim's whole run against
  SCALE-Sim v3 in a fresh process (CPU seconds; SCALE-Sim stopped after ``--limit-s`` of wall time).
A peer that is not installed is named and skipped.

Run: python tests/bench/bench_peers.py [--accesses N] [--gemm MxKxN] [--limit-s S] [--dramsim3-configs DIR]
[--dram-setups SETUP,...] [--dram-streams STREAM,...]
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the peers' harnesses live in tests/peers and tests/bench

REPEATS = 3


def caches(n_accesses: int) -> None:
    from tests.bench.bench_cache import build_pycachesim, i7_920_levels, make_trace, pycachesim_pairs, run_offsim

    from simulator.memory.cache import CacheHierarchy

    lines, stores = make_trace(n_accesses)
    CacheHierarchy(i7_920_levels()).access(lines[:1000], stores[:1000])  # compile or load the kernels first
    ours = min(run_offsim(lines, stores)[0] for _ in range(REPEATS))
    line = f"caches   offsim {ours:.3f} s CPU for {n_accesses:,} accesses ({n_accesses / ours / 1e6:.2f} M/s)"
    if importlib.util.find_spec("cachesim") is None:
        print(f"{line}; pycachesim not installed: no ratio")
        return
    pairs = pycachesim_pairs(lines, stores)
    theirs = float("inf")
    for _ in range(REPEATS):
        sim, _levels = build_pycachesim()
        t0 = time.process_time()
        sim.loadstore(pairs, length=8)
        theirs = min(theirs, time.process_time() - t0)
    print(f"{line}; pycachesim {theirs:.3f} s: offsim is {theirs / ours:.2f}x as fast")


def dram(setups: list[str], names: list[str]) -> None:
    from tests.peers.dram_compare import HERE, PEER_SETUPS, offsim_figures, peer_dram, peer_streams, read_table

    for setup in setups:
        peer = PEER_SETUPS[setup]
        paths = {"DRAMSim3": HERE / f"dramsim3_{peer.config}.csv", "Ramulator 2": HERE / f"ramulator2_{peer.config}.csv"}
        tables = {name: read_table(path) for name, path in paths.items() if path.exists()}
        streams = [ours for _, ours in peer_streams(setup) if ours.name in names]
        if not streams:
            continue
        offsim_figures(peer_dram(setup), streams[0])  # untimed: loads every kernel the timed runs use
        for stream in streams:
            dram_system = peer_dram(setup)
            start = time.process_time()
            ours = offsim_figures(dram_system, stream)
            cpu_s = time.process_time() - start
            beside = [f"{name} time x{ours['time_ns'] / float(t[stream.name]['time_ns']):.4f}"
                      for name, t in tables.items() if stream.name in t]
            print(f"dram     {setup:<16} {stream.name:<18} offsim {cpu_s:.3f} s CPU, {ours['bandwidth_gb_s']:.3f} "
                  f"GB/s; simulated time offsim/peer: {', '.join(beside) or 'no reference row'}")


def dramsim3_cpu_s(binary: str, folder: Path, stream, ini, cycles: int) -> tuple[float, dict]:
    """CPU seconds (user and system, of the child) DRAMSim3 takes to run ``stream`` for ``cycles`` cycles
    of the configuration ``ini``, and its statistics; inputs and outputs go to ``folder``."""
    import json
    import resource

    from tests.peers.dram_streams import tck_ps, write_dramsim3_trace

    ini_path, trace, out = folder / "dramsim3.ini", folder / f"{stream.name}.trace", folder / stream.name
    with open(ini_path, "w") as f:
        ini.write(f)
    write_dramsim3_trace(trace, stream, tck_ps(ini))
    out.mkdir()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([binary, str(ini_path), "-c", str(cycles), "-t", str(trace), "-o", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu_s, json.loads((out / "dramsim3.json").read_text())["0"]


def offsim_service_cpu_s(setup: str, stream) -> float:
    """Least CPU seconds of ``REPEATS`` runs of ``service_lines`` on ``stream`` (one chunk at 0) by a fresh
    DramSystem set up as ``PEER_SETUPS[setup]``; its kernels are loaded before."""
    from tests.peers.dram_compare import peer_dram

    peer_dram(setup).service_lines(stream.lines[:64], stream.is_write[:64], 0)
    best = float("inf")
    for _ in range(REPEATS):
        dram_system = peer_dram(setup)
        start = time.process_time()
        dram_system.service_lines(stream.lines, stream.is_write, 0)
        best = min(best, time.process_time() - start)
    return best


def dram_speed(setups: list[str], names: list[str], dramsim3_configs: Path | None) -> None:
    """DRAMSim3's CPU time against offsim's on each saturating stream of each chosen setup's configuration."""
    import tempfile

    from tests.peers.dram_compare import HERE, PEER_SETUPS, peer_streams, read_table
    from tests.peers.dram_streams import dramsim3_ini, stream_digest

    binary = shutil.which("dramsim3main")
    if binary is None:
        print("dram     DRAMSim3 not installed (no dramsim3main on PATH): the tables give its results, not its "
              "speed; no speed ratio")
        return
    configs = dict.fromkeys(PEER_SETUPS[setup].config for setup in setups)
    for config in configs:
        if config != "ddr3" and dramsim3_configs is None:
            print(f"dram     {config}: DRAMSim3's configs folder not given (--dramsim3-configs): no speed ratio")
            continue
        table_path = HERE / f"dramsim3_{config}.csv"
        if not table_path.exists():
            print(f"dram     {config}: no DRAMSim3 reference table ({table_path.name}) to give the cycles to run: "
                  "no speed ratio")
            continue
        ini = dramsim3_ini(config, dramsim3_configs)
        table = read_table(table_path)
        mine = [setup for setup in setups if PEER_SETUPS[setup].config == config]
        ours = {setup: {s.name: o for s, o in peer_streams(setup)} for setup in mine}
        with tempfile.TemporaryDirectory() as tmp:
            for theirs_stream, _ in peer_streams(mine[0]):
                if theirs_stream.timed or theirs_stream.name not in names:
                    continue  # a timed stream measures latency, not the simulator's throughput
                row = table[theirs_stream.name]
                if row["digest"] != stream_digest(theirs_stream):
                    raise RuntimeError(f"{config} {theirs_stream.name}: the stream differs from the table's")
                theirs_s, stats = dramsim3_cpu_s(binary, Path(tmp), theirs_stream, ini, int(row["time_cycles"]))
                issued = (stats["num_read_cmds"], stats["num_write_cmds"])
                if issued != (int(row["reads_issued"]), int(row["writes_issued"])):
                    print(f"dram     {config} {theirs_stream.name}: this DRAMSim3 issued {issued[0]} reads and "
                          f"{issued[1]} writes in {row['time_cycles']} cycles, the table's build "
                          f"{row['reads_issued']} and {row['writes_issued']}")
                for setup in mine:
                    ours_s = offsim_service_cpu_s(setup, ours[setup][theirs_stream.name])
                    print(f"speed    {setup:<16} {theirs_stream.name:<15} DRAMSim3 {theirs_s:7.3f} s CPU, offsim "
                          f"{ours_s:6.3f} s CPU: {theirs_s / ours_s:6.1f}x as fast", flush=True)


def systolic(shape: tuple[int, int, int], limit_s: float) -> None:
    if importlib.util.find_spec("scalesim") is None:
        print("systolic SCALE-Sim not installed: no ratio")
        return
    from tests.bench.bench_systolic import offsim_point, scalesim_point

    m, k, n = shape
    offsim_point(m, k, n, 16, 16, "os")  # compile or load the kernels first
    _, ours_cpu, _, _, _ = offsim_point(m, k, n, 16, 16, "os")
    wall_s, theirs_cpu, _ = scalesim_point(m, k, n, 16, 16, "os", limit_s)
    if theirs_cpu is None:
        print(f"systolic {m}x{k}x{n} on 16x16 os: offsim {ours_cpu:.3f} s CPU; SCALE-Sim stopped after "
              f"{limit_s:.0f} s wall: offsim at least {limit_s / ours_cpu:.0f}x as fast (by wall time)")
        return
    print(f"systolic {m}x{k}x{n} on 16x16 os: offsim {ours_cpu:.3f} s CPU, SCALE-Sim {theirs_cpu:.2f} s CPU "
          f"({wall_s:.1f} s wall): offsim is {theirs_cpu / ours_cpu:.0f}x as fast")


def _choice(text: str | None, known: list[str], option: str) -> list[str]:
    """The comma-separated names of ``text`` (all of ``known`` when None); exit 2 naming an unknown one."""
    if text is None:
        return known
    chosen = text.split(",")
    unknown = [name for name in chosen if name not in known]
    if unknown:
        print(f"bench_peers: {option} {','.join(unknown)}: expected names among {', '.join(known)}", file=sys.stderr)
        sys.exit(2)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accesses", type=int, default=1_000_000)
    parser.add_argument("--gemm", default="35x35x2048", help="the systolic GEMM shape MxKxN")
    parser.add_argument("--limit-s", type=float, default=120.0, help="give SCALE-Sim up after this many seconds")
    parser.add_argument("--dramsim3-configs", type=Path, help="DRAMSim3's configs folder (for ddr4 and hbm2)")
    parser.add_argument("--dram-setups", help="comma-separated PEER_SETUPS names (default: all)")
    parser.add_argument("--dram-streams", help="comma-separated stream names (default: all)")
    args = parser.parse_args()
    from tests.peers.dram_compare import PEER_SETUPS
    from tests.peers.dram_streams import CONFIGS, streams

    setups = _choice(args.dram_setups, list(PEER_SETUPS), "--dram-setups")
    names = _choice(args.dram_streams, [s.name for s in streams(1)], "--dram-streams")  # (the names alone)
    if args.dramsim3_configs is not None:
        for config in dict.fromkeys(PEER_SETUPS[setup].config for setup in setups):
            base = args.dramsim3_configs / CONFIGS[config].dramsim3_base if config in CONFIGS else None
            if base is not None and not base.is_file():
                parser.exit(2, f"bench_peers: --dramsim3-configs {args.dramsim3_configs}: expected DRAMSim3's "
                               f"configs folder, with {base.name} (the {config} configuration's base)\n")
    caches(args.accesses)
    dram(setups, names)
    dram_speed(setups, names, args.dramsim3_configs)
    systolic(tuple(int(x) for x in args.gemm.split("x")), args.limit_s)


if __name__ == "__main__":
    main()
