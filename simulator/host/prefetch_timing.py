"""When the lines a hardware prefetcher brings in become usable, under the core's miss budget.

The cache model prefetches functionally: a line is in the cache from the access
that triggered its prefetch on, and its DRAM read is sent with that access's
chunk. What bounds a real prefetcher is the core's miss slots
(``max_outstanding_misses``), which demand misses use first. So here:

- A prefetched line waits in a queue (in the order prefetched) for an idle miss
  slot. Slots are idle when a chunk ends on issue or compute rather than on
  memory; then the queue is issued one line every
  ``dram_latency / max_outstanding_misses`` (Little's law, as demand misses), and
  each issued line is usable ``dram_latency`` after its issue (or when DRAM has
  delivered it, if later).
- A demand access to a prefetched line still in the queue makes it a demand miss
  of that chunk (it pays the slot time a miss pays); one to a line in flight
  waits for that line only.

A plain stream then costs what it costs without the prefetcher: its chunks are
memory-bound, so every prefetched line it uses is issued as a demand miss.
Prefetching pays where memory rows alternate with issue- or compute-bound rows:
the lines the next memory row needs are fetched in the slack of the rows between.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

PRUNE_AT = 1 << 16  # tracked lines before those already usable are forgotten


@dataclass
class PrefetchSlots:
    """The prefetched lines of one core not yet used, and its miss slots' busy time.

    ``level``: index of the cache level the prefetcher fills (its lines' first demand
    access is served there); ``slot_ps``: miss-slot time per line, ps;
    ``latency_ps``: load-to-use DRAM latency, ps; ``max_queued``: queue entries kept, lines.
    A line prefetched more than ``max_queued`` prefetches ago has left a prefetch level of
    fewer lines, so a later access to it is not served there and needs no record (the
    core passes 4x the level's lines).
    """

    level: int
    slot_ps: int
    latency_ps: int
    max_queued: int
    queue: deque = field(default_factory=deque)  # queued lines, in the order prefetched
    queued_done_ps: dict[int, int] = field(default_factory=dict)  # queued line -> DRAM delivers it at (ps)
    ready_ps: dict[int, int] = field(default_factory=dict)  # issued line -> usable at (ps)
    slots_busy_until_ps: int = 0
    issued: int = 0   # prefetched lines issued in idle slots
    promoted: int = 0  # prefetched lines used while still queued (paid as demand misses)
    _prune_at: int = field(default=PRUNE_AT, init=False, repr=False)

    def issue_idle(self, now_ps: int) -> None:
        """Issue queued lines in the slots idle from the last commitment up to ``now_ps``."""
        t = self.slots_busy_until_ps
        queue, queued, ready = self.queue, self.queued_done_ps, self.ready_ps
        while queue and t + self.slot_ps <= now_ps:
            line = queue.popleft()
            done = queued.pop(line, None)
            if done is not None:  # not used meanwhile (nor issued from an earlier place in the queue)
                ready[line] = max(t + self.latency_ps, done)
                self.issued += 1
                t += self.slot_ps
        self.slots_busy_until_ps = max(t, now_ps)
        if len(ready) > self._prune_at:  # lines usable by now cost a plain hit: stop tracking them
            for line in [x for x, r in ready.items() if r <= now_ps]:
                del ready[line]
            self._prune_at = max(PRUNE_AT, 2 * len(ready))

    def add(self, lines: np.ndarray, done_ps: np.ndarray) -> None:
        """Queue newly prefetched ``lines``; ``done_ps``: when DRAM delivers each (ps)."""
        queue, queued, ready = self.queue, self.queued_done_ps, self.ready_ps
        for line, done in zip(lines.tolist(), done_ps.tolist()):
            queued[line] = done
            ready.pop(line, None)
            queue.append(line)
        while len(queue) > self.max_queued:
            queued.pop(queue.popleft(), None)

    def use(self, lines: np.ndarray) -> tuple[int, int]:
        """Demand accesses to ``lines`` served at the prefetch level: (lines promoted to demand
        misses, latest time a line in flight becomes usable, ps; 0 if none)."""
        promoted, latest = 0, 0
        queued, ready = self.queued_done_ps, self.ready_ps
        for line in lines.tolist():
            if queued.pop(line, None) is not None:
                promoted += 1
            else:
                latest = max(latest, ready.pop(line, 0))
        self.promoted += promoted
        return promoted, latest

    def commit(self, start_ps: int, n_misses: int) -> int:
        """A chunk starting at ``start_ps`` takes the slots for ``n_misses`` lines; return when
        the slots are free again, ps."""
        self.slots_busy_until_ps = max(self.slots_busy_until_ps, start_ps) + n_misses * self.slot_ps
        return self.slots_busy_until_ps
