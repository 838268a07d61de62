"""The DRAM model's exact output on the peer streams, pinned: a change to the kernels that is meant to
keep every simulated number (a speed-up, a refactor) must keep these digests.

For each setup of ``dram_compare.PEER_SETUPS`` and each saturating stream, the first ``GOLDEN_REQUESTS``
requests are served as one chunk arriving at 0 on a fresh model; the digest is SHA-256 over each request's
data-burst completion time (int64 ps, little-endian), the last completion (ps) and the model's counters.
They are integers, so the digest is the same on every platform. ``dram_golden.json`` holds the digests; a
change meant to alter the model's behaviour rewrites it
(``python -m tests.peers.test_dram_golden --write``) and says in its commit why the numbers moved.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.peers.dram_compare import PEER_SETUPS, peer_dram, peer_streams

GOLDEN = Path(__file__).resolve().parent / "dram_golden.json"
GOLDEN_REQUESTS = 32_768
#: the streams of every setup that arrive all at once (``dram_streams.streams``)
SATURATING = ("seq_read", "seq_write", "random_read", "triad", "triad_one_bank")


@functools.lru_cache(maxsize=1)
def _streams(setup: str) -> dict[str, object]:
    """The setup's streams in offsim's line addresses, by name (the last setup's kept: cases come setup by
    setup)."""
    return {peers.name: ours for peers, ours in peer_streams(setup)}


def digest(setup: str, stream_name: str) -> str:
    """The digest of the first GOLDEN_REQUESTS requests of one stream served on one setup."""
    stream = _streams(setup)[stream_name]
    assert not stream.timed, f"{stream_name} is a timed stream"
    dram = peer_dram(setup)
    done = dram.service_lines(stream.lines[:GOLDEN_REQUESTS], stream.is_write[:GOLDEN_REQUESTS], 0)
    h = hashlib.sha256(np.ascontiguousarray(done, dtype="<i8").tobytes())
    h.update(str(int(dram.last_completion_ps)).encode())
    h.update(json.dumps(dram.counters(), sort_keys=True).encode())
    return h.hexdigest()


CASES = [(setup, name) for setup in PEER_SETUPS for name in SATURATING]


@pytest.mark.parametrize(("setup", "stream_name"), CASES)
def test_the_model_serves_the_peer_streams_exactly_as_pinned(setup, stream_name):
    pinned = json.loads(GOLDEN.read_text())
    assert digest(setup, stream_name) == pinned[setup][stream_name]


def test_every_setup_and_stream_is_pinned():
    pinned = json.loads(GOLDEN.read_text())
    assert sorted((s, n) for s, names in pinned.items() for n in names) == sorted(CASES)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    table: dict[str, dict[str, str]] = {}
    for setup, name in CASES:
        table.setdefault(setup, {})[name] = digest(setup, name)
    GOLDEN.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN.name}: {len(CASES)} digests")
