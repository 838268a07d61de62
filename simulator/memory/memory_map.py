"""Which memory holds each line: main memory, or a near memory that holds an accelerator's operands.

An accelerator that works in a near memory of its own (``near_memories``, ``interface.memory``) keeps its
operands there: the byte regions its commands name as inputs and outputs. Every other requester's DRAM
traffic to those lines (the host's misses and write-backs, a driver's flushes and copies, another unit's DMA
or its accesses through the caches) is served by that memory too, at its timing and with its energy; the
rest of the address space is main memory. A ``MemoryMap``
stands where a port expects one DRAM (``service``, ``service_lines``) and splits each chunk by line between
the memories, each part arriving at the chunk's time. Lines are line indices (byte address // line bytes),
times integer picoseconds.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from simulator.memory.array_kernel import value_range
from simulator.memory.dram import DramSystem


def line_ranges(regions: Iterable[tuple[int, int]], line_bytes: int) -> np.ndarray:
    """The lines covered by ``(byte address, bytes)`` regions as sorted, disjoint, non-adjacent
    ``[first line, end line)`` rows (int64[n, 2]); empty regions cover nothing."""
    spans = sorted((int(a) // line_bytes, -(-(int(a) + int(n)) // line_bytes)) for a, n in regions if int(n) > 0)
    merged: list[list[int]] = []
    for first, end in spans:
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([first, end])
    return np.array(merged, dtype=np.int64).reshape(-1, 2)


class MemoryMap:
    """Main memory, and near memories each holding ``[first line, end line)`` ranges (``line_ranges``);
    a line two memories claim belongs to the first of them in ``homes``."""

    def __init__(self, main: DramSystem, homes: list[tuple[DramSystem, np.ndarray]]) -> None:
        self.main = main
        self.memories = [main] + [memory for memory, _ in homes]
        rows = [(int(first), int(end), k + 1) for k, (_, ranges) in enumerate(homes) for first, end in ranges]
        rows.sort(key=lambda r: (r[0], r[2]))
        kept: list[tuple[int, int, int]] = []
        for first, end, owner in rows:  # cut each range to what the earlier memories left free
            if kept and first < kept[-1][1]:
                first = kept[-1][1]
            if first < end:
                kept.append((first, end, owner))
        table = np.array(kept, dtype=np.int64).reshape(-1, 3)
        self._first, self._end, self._owner = table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy()

    def index_of(self, memory: DramSystem) -> int | None:
        """``memory``'s index in ``memories`` (0: main memory), or None if the map does not hold it."""
        return next((k for k, held in enumerate(self.memories) if held is memory), None)

    def owner_of(self, lines: np.ndarray) -> np.ndarray:
        """Index into ``memories`` of each line's memory (0: main memory)."""
        lines = np.asarray(lines, dtype=np.int64)
        if not len(self._first):
            return np.zeros(lines.shape, dtype=np.int64)
        k = np.searchsorted(self._first, lines, side="right") - 1
        safe = np.maximum(k, 0)
        return np.where((k >= 0) & (lines < self._end[safe]), self._owner[safe], 0)

    def service_lines(self, lines: np.ndarray, is_write: np.ndarray | bool, arrival_ps: int,
                      bus_speedup: float = 1, requester: str = "host", home: int = 0) -> np.ndarray:
        """Serve a chunk as ``DramSystem.service_lines`` does, each line by its memory; each line's
        data-burst completion time, ps, in the order of ``lines``. ``bus_speedup`` (a requester inside a
        memory, ``DramSystem.service_lines``) applies to the lines of ``memories[home]``, the memory the
        requester is inside: another memory's lines reach it over that memory's own channel."""
        lines = np.ascontiguousarray(lines, dtype=np.int64)
        owner = self.owner_of(lines)
        if not owner.any():
            return self.main.service_lines(lines, is_write, arrival_ps, bus_speedup if home == 0 else 1,
                                           requester=requester)
        writes = np.broadcast_to(np.asarray(is_write, dtype=np.bool_), lines.shape)
        out = np.empty(lines.shape[0], dtype=np.int64)
        for k, memory in enumerate(self.memories):
            mine = owner == k
            if mine.any():
                out[mine] = memory.service_lines(lines[mine], writes[mine], arrival_ps,
                                                 bus_speedup if k == home else 1, requester=requester)
        return out

    def service(self, lines: np.ndarray, is_write: np.ndarray | bool, arrival_ps: int,
                bus_speedup: float = 1, requester: str = "host", home: int = 0) -> int:
        """Serve a chunk (``service_lines``); the completion time of its last data burst, ps (``arrival_ps``
        for an empty chunk)."""
        out = self.service_lines(lines, is_write, arrival_ps, bus_speedup, requester, home)
        return int(value_range(out)[1]) if out.size else int(arrival_ps)
