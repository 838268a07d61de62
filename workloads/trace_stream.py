"""A trace that arrives in batches: tables of at most a few thousand rows, made as they are replayed.

A generator whose trace grows with its problem (the FMM U-list: some 90 k rows and 90 MiB of addresses at
N = 9.6e5) hands the simulator a :class:`TraceStream` instead of one table. The replay
(``simulator.replay``) checks and runs each batch as it comes and then drops it, so a run holds one
batch of rows at a time, never the whole trace. The batches concatenated are the trace the generator's
table form gives, row for row (``TraceStream.to_table``).

A batch is a table of :data:`workloads.trace.TRACE_SCHEMA` (or, for a ``threaded`` stream, of
``THREADED_TRACE_SCHEMA``); row numbers in messages count from the stream's first row.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

import pyarrow as pa

#: Rows per batch a generator aims at: as many as the replay expands per compiled call
#: (``simulator.replay.LINE_BLOCK_ROWS``), so a batch costs no more calls than the whole table.
BATCH_ROWS = 4096


class TraceStream:
    """The batches (tables) of one trace, handed out once, in order; ``threaded``: the batches carry the
    ``thread`` column. ``rows`` counts the rows handed out so far (the trace's length once it is drained),
    ``make_s`` the wall seconds spent making them."""

    def __init__(self, batches: Iterable[pa.Table], threaded: bool = False) -> None:
        self._batches = iter(batches)
        self.threaded = threaded
        self.rows = 0
        self.make_s = 0.0

    def __iter__(self) -> Iterator[pa.Table]:
        while True:
            start = time.perf_counter()
            batch = next(self._batches, None)
            self.make_s += time.perf_counter() - start
            if batch is None:
                return
            self.rows += batch.num_rows
            yield batch

    def to_table(self) -> pa.Table:
        """Every remaining batch as one table."""
        return pa.concat_tables(list(self))

