"""offsim's DRAM model against the peers' reference tables (tests/peers/README.md): DRAMSim3's on
DDR3-1600 two ranks, DDR4-3200 two ranks and one HBM2 channel, Ramulator 2's on one DDR5-4800
sub-channel, one HBM3-6400 pseudo-channel and one LPDDR5-6400 channel (DRAMSim3 has none of them).

The streams are regenerated from ``dram_streams.py`` (their digests must match the tables') and
served by offsim set up as the peers were (``dram_compare.PEER_SETUPS``: DDR3 under the preset's
controller and under ready_first with per-bank command queues of 8, DDR4 and HBM2 under the latter,
DDR5, HBM3 and LPDDR5 under ready_first without command queues); the bars are issue 40's: run time
within 0.97-1.03 of the peer's on DDR3 and 0.95-1.05 on the others, every energy category within 5 %
of DRAMSim3's (offsim's VDD share: DRAMSim3 has no VPP term; Ramulator 2 has no energy), the mean read
latency of the timed low-rate stream within 2 %. The peers need not be installed.
"""

from __future__ import annotations

import functools
import math

import pytest

from tests.peers.dram_compare import (ENERGY_CATEGORIES, HERE, PEER_SETUPS, offsim_figures, peer_dram, peer_streams,
                                      read_table)
from tests.peers.dram_streams import stream_digest

#: configuration (the tables') -> offsim / peer run-time band
TIME_BAND = {"ddr3": (0.97, 1.03), "ddr4": (0.95, 1.05), "hbm2": (0.95, 1.05), "ddr5": (0.95, 1.05),
             "hbm3": (0.95, 1.05), "lpddr5": (0.95, 1.05)}
ENERGY_TOLERANCE = 0.05
LATENCY_TOLERANCE = 0.02

IN_ORDER = ("the in-order controller: offsim serves each 32-request block in an order fixed before any timing "
            "is known, so a request waiting on its bank stalls every later one; DRAMSim3 issues whichever "
            "command is ready")
IN_ORDER_ENERGY = "the run time is off (" + IN_ORDER + "), and background and refresh energy follow it"

RAMULATOR_ORDER = (
    "offsim serves the triad in another order than Ramulator 2. In offsim's {standard} mapping each bank takes "
    "the three arrays' rows in turn, so in stream order nearly every line needs an ACT (Ramulator 2: {peer_rows}). "
    "Both admit requests in stream order, stopping at a full buffer; offsim's ready_first (without command "
    "queues) then serves the queued request whose column command can issue earliest, so a row hit goes before an "
    "older request to another row of its bank: {acts:,} ACTs for {lines:,} lines. Ramulator 2's FRFCFS issues "
    "the oldest ready command, so an older request's PRE goes before a younger row hit (its FRFCFS-RowHit gives "
    "the same figures on the DDR5 triad: it only keeps a younger PRE from closing an older hit's row); {bound}. "
    "Two scheduling policies, not a timing rule; not yet reconciled")

TFAW = "it runs near its tFAW bound (one ACT per {} tCK)"
LPDDR5_COMMANDS = (
    "Ramulator 2's command bus: it moves 32 B per request, so a line takes two column commands, and an ACT is two "
    "commands (ACT-1, ACT-2), each command a tCK of the CA bus, so a line to another row costs PRE, ACT-1, ACT-2 "
    "and two column commands, 5 tCK of commands against 4 tCK of data; offsim's model has no command bus")

#: setup -> stream -> checks offsim fails, with the cause (figures: offsim / the setup's peer).
KNOWN_MISSES: dict[str, dict[str, dict[str, str]]] = {
    "ddr3": {
        "seq_write": {"energy": "background_precharge 1.082: offsim's ranks spend more time with every bank "
                                "precharged; the two controllers close rows at different times"},
        "random_read": {"time": IN_ORDER + " (time 1.46)", "energy": IN_ORDER_ENERGY},
        "triad": {"time": IN_ORDER + " (time 1.07)", "energy": IN_ORDER_ENERGY},
        "triad_one_bank": {"time": IN_ORDER + " (time 1.16)", "energy": IN_ORDER_ENERGY},
    },
    "ddr3_ready_first": {},
    "ddr4": {},
    "hbm2": {},
    "ddr5": {
        "triad": {"time": "time 0.852: " + RAMULATOR_ORDER.format(
            standard="DDR5", peer_rows="0 row hits, 711,269 conflicts, 75,124 misses", acts=664_431, lines=786_432,
            bound=TFAW.format(12.25))},
        "triad_one_bank": {"time": "time 0.819: " + RAMULATOR_ORDER.format(
            standard="DDR5", peer_rows="0 row hits, 644,369 conflicts, 142,022 misses", acts=644_998, lines=786_432,
            bound=TFAW.format(12.25))},
    },
    "lpddr5": {
        "random_read": {"time": "time 0.783: " + LPDDR5_COMMANDS + ". Ramulator 2: 5,963,859 cycles for 1,048,542.5 "
                                "lines (5.69 tCK a line; 1,040,118 of its requests meet another row open); offsim: "
                                "4,671,739 cycles, 1,048,516 ACTs (4.46 tCK a line, the data bus and tFAW's one ACT "
                                "per 4 tCK); refresh takes 7.2 % of both; not yet reconciled"},
        "triad": {"time": "time 0.830: " + LPDDR5_COMMANDS + "; and " + RAMULATOR_ORDER.format(
            standard="LPDDR5", peer_rows="556,672 conflicts and 133,908 misses among its 1,572,760 32 B requests",
            acts=655_360, lines=786_432,
            bound="its command bus bounds it (about 3.5 million commands in its 4,408,169 cycles)")},
        "triad_one_bank": {"time": "time 0.829: " + LPDDR5_COMMANDS + "; and " + RAMULATOR_ORDER.format(
            standard="LPDDR5", peer_rows="552,853 conflicts and 139,232 misses among its 1,572,756 32 B requests",
            acts=654_301, lines=786_432,
            bound="its command bus bounds it (about 3.5 million commands in its 4,412,867 cycles)")},
    },
    "hbm3": {
        "triad": {"time": "time 0.801: " + RAMULATOR_ORDER.format(
            standard="HBM3", peer_rows="537,767 conflicts and 112,750 misses among its 1,572,746 32 B requests",
            acts=445_349, lines=786_432, bound=TFAW.format(6))},
        "triad_one_bank": {"time": "time 0.785: " + RAMULATOR_ORDER.format(
            standard="HBM3", peer_rows="536,487 conflicts and 114,259 misses among its 1,572,748 32 B requests",
            acts=381_321, lines=786_432, bound=TFAW.format(6))},
    },
}

#: setup -> the table of its peer (``PeerSetup.peer``)
REFERENCE = {setup: read_table(HERE / f"{peer.peer}_{peer.config}.csv") for setup, peer in PEER_SETUPS.items()}
STREAMS = {setup: {s.name: (s, ours) for s, ours in peer_streams(setup)} for setup in PEER_SETUPS}


@functools.lru_cache(maxsize=None)
def figures(setup: str, name: str) -> dict[str, float]:
    return offsim_figures(peer_dram(setup), STREAMS[setup][name][1])


def _cases(check: str, timed_only: bool = False, peers: tuple[str, ...] = ("dramsim3", "ramulator2")) -> list:
    out = []
    for setup, streams in STREAMS.items():
        if PEER_SETUPS[setup].peer not in peers:
            continue
        for name, (stream, _) in streams.items():
            if timed_only and not stream.timed:
                continue
            reason = KNOWN_MISSES[setup].get(name, {}).get(check)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(setup, name, marks=marks, id=f"{setup}-{name}"))
    return out


@pytest.mark.parametrize("setup", list(PEER_SETUPS))
def test_reference_table_covers_the_streams_it_was_made_from(setup):
    reference, streams = REFERENCE[setup], STREAMS[setup]
    assert set(reference) == set(streams)
    for name, row in reference.items():
        stream = streams[name][0]
        assert row["digest"] == stream_digest(stream), f"{setup} {name}: the stream generator changed"
        assert int(row["requests"]) == stream.lines.size


@pytest.mark.parametrize("setup,name", _cases("time"))
def test_run_time_matches_the_peer(setup, name):
    ratio = figures(setup, name)["time_ns"] / float(REFERENCE[setup][name]["time_ns"])
    low, high = TIME_BAND[PEER_SETUPS[setup].config]
    assert low <= ratio <= high, f"offsim / {PEER_SETUPS[setup].peer} run time {ratio:.4f}"


@pytest.mark.parametrize("setup,name", _cases("energy", peers=("dramsim3",)))
def test_energy_categories_match_dramsim3(setup, name):
    ours = figures(setup, name)
    misses = []
    for category in ENERGY_CATEGORIES:
        theirs = float(REFERENCE[setup][name][f"energy_{category}_pj"])
        mine = ours[f"energy_{category}_pj"]
        if theirs == 0.0:
            if mine != 0.0:
                misses.append(f"{category}: offsim {mine:.4g} pJ, DRAMSim3 0")
        elif not math.isclose(mine, theirs, rel_tol=ENERGY_TOLERANCE):
            misses.append(f"{category}: offsim / DRAMSim3 {mine / theirs:.4f}")
    assert not misses, "; ".join(misses)


@pytest.mark.parametrize("setup,name", _cases("latency", timed_only=True))
def test_low_rate_read_latency_matches_the_peer(setup, name):
    ours = figures(setup, name)["mean_read_latency_ns"]
    theirs = float(REFERENCE[setup][name]["mean_read_latency_ns"])
    assert math.isclose(ours, theirs, rel_tol=LATENCY_TOLERANCE), \
        f"offsim {ours:.3f} ns, {PEER_SETUPS[setup].peer} {theirs:.3f} ns"
