"""offsim's DRAM model against DRAMSim3's reference table for DDR3-1600, two ranks (tests/peers/README.md).

The streams are regenerated from ``dram_streams.py`` (their digests must match the table's) and
served by the shipped preset with two ranks and power-down off; the bars are issue 40's: run time
within 0.97-1.03 of DRAMSim3's, every energy category within 5 %, the mean read latency of the
timed low-rate stream within 2 %. The peers need not be installed.

Comparisons offsim fails today are marked ``xfail(strict=True)`` with the cause, so each turns
into a failure once the model passes it and the mark must go.
"""

from __future__ import annotations

import functools
import math

import pytest

from tests.peers.dram_compare import ENERGY_CATEGORIES, HERE, ddr3_dram, ddr3_streams, offsim_figures, read_table
from tests.peers.dram_streams import stream_digest

TIME_BAND = (0.97, 1.03)
ENERGY_TOLERANCE = 0.05
LATENCY_TOLERANCE = 0.02

IN_ORDER = ("the in-order controller: offsim serves each 32-request block in an order fixed before any timing "
            "is known, so a request waiting on its bank stalls every later one; DRAMSim3 issues whichever "
            "command is ready")
IN_ORDER_ENERGY = "the run time is off (" + IN_ORDER + "), and background and refresh energy follow it"

#: stream -> checks offsim fails today, with the cause (figures: offsim / DRAMSim3).
KNOWN_MISSES: dict[str, dict[str, str]] = {
    "seq_write": {"energy": "background_precharge 1.088, background_active 0.963: offsim's ranks spend more "
                            "time with every bank precharged; the two controllers close rows at different times"},
    "random_read": {"time": IN_ORDER + " (time 1.44)", "energy": IN_ORDER_ENERGY},
    "triad": {"time": IN_ORDER + " (time 1.06)", "energy": IN_ORDER_ENERGY},
    "triad_one_bank": {"time": IN_ORDER + " (time 1.16)", "energy": IN_ORDER_ENERGY},
    "random_read_200ns": {
        "energy": "background_precharge 0.922: offsim's ranks spend less time with every bank precharged "
                  "than DRAMSim3's; a likely source, not yet confirmed: DRAMSim3 staggers the two ranks' refreshes by "
                  "tREFI / 2, offsim refreshes both at once",
        "latency": "offsim 44.24 ns, DRAMSim3 45.66 ns: DRAMSim3 takes two cycles from a request's arrival to its "
                   "first command (into its transaction queue, then its command queue), offsim none; the rest "
                   "is not yet reconciled"},
}

REFERENCE = read_table(HERE / "dramsim3_ddr3.csv")
STREAMS = {s.name: s for s in ddr3_streams()}


@functools.lru_cache(maxsize=None)
def figures(name: str) -> dict[str, float]:
    return offsim_figures(ddr3_dram(), STREAMS[name])


def _cases(check: str, names) -> list:
    out = []
    for name in names:
        reason = KNOWN_MISSES.get(name, {}).get(check)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def test_reference_table_covers_the_streams_it_was_made_from():
    assert set(REFERENCE) == set(STREAMS)
    for name, row in REFERENCE.items():
        assert row["digest"] == stream_digest(STREAMS[name]), f"{name}: the stream generator changed"
        assert int(row["requests"]) == STREAMS[name].lines.size


@pytest.mark.parametrize("name", _cases("time", STREAMS))
def test_run_time_matches_dramsim3(name):
    ratio = figures(name)["time_ns"] / float(REFERENCE[name]["time_ns"])
    assert TIME_BAND[0] <= ratio <= TIME_BAND[1], f"offsim / DRAMSim3 run time {ratio:.4f}"


@pytest.mark.parametrize("name", _cases("energy", STREAMS))
def test_energy_categories_match_dramsim3(name):
    ours = figures(name)
    misses = []
    for category in ENERGY_CATEGORIES:
        theirs = float(REFERENCE[name][f"energy_{category}_pj"])
        mine = ours[f"energy_{category}_pj"]
        if theirs == 0.0:
            if mine != 0.0:
                misses.append(f"{category}: offsim {mine:.4g} pJ, DRAMSim3 0")
        elif not math.isclose(mine, theirs, rel_tol=ENERGY_TOLERANCE):
            misses.append(f"{category}: offsim / DRAMSim3 {mine / theirs:.4f}")
    assert not misses, "; ".join(misses)


@pytest.mark.parametrize("name", _cases("latency", [n for n, s in STREAMS.items() if s.timed]))
def test_low_rate_read_latency_matches_dramsim3(name):
    ours = figures(name)["mean_read_latency_ns"]
    theirs = float(REFERENCE[name]["mean_read_latency_ns"])
    assert math.isclose(ours, theirs, rel_tol=LATENCY_TOLERANCE), f"offsim {ours:.3f} ns, DRAMSim3 {theirs:.3f} ns"
