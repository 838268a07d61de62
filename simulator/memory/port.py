"""A memory port: one requester's path into the shared cache hierarchy and DRAM.

The host core and the accelerators reach memory through ports. A port runs a
chunk of line addresses through the functional cache model (in one bulk call)
and sends the resulting DRAM line stream to the shared DRAM model, which
serves chunks from every requester in arrival order. It returns what the
chunk did and when DRAM delivered its last line (integer picoseconds). Every
chunk is counted for a requester: the port's own name, or the one a call names
(a driver's coherence work runs on the host core's port). For a core's timing,
``access_levels`` makes a chunk's cache and DRAM steps in one compiled call
(``simulator.memory.chunk_kernel``) where the caches and the memory allow it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from simulator.memory import chunk_kernel
from simulator.memory.array_kernel import count_levels, value_range
from simulator.memory.cache import MAX_LINE


#: lines a requester hands its port per bulk cache/DRAM call (the host core, an interface's flushes and
#: invalidations): coarse enough for speed, fine enough to interleave requesters
CHUNK_LINES = 8192
#: most lines ``access_apart`` takes in one compiled call: the caches' buffers then hold a whole chunk's
#: reads and write-backs (some 16 B per line and cache level)
ONE_CALL_LINES = 1 << 16


class CacheModel(Protocol):
    """What a port needs of the cache hierarchy (see simulator.memory.cache)."""

    def access(self, lines: np.ndarray, is_store: np.ndarray | bool = False, start_level: int = 0): ...
    def zero(self, lines: np.ndarray, start_level: int = 0): ...
    def flush(self, lines: np.ndarray): ...
    def evict_to_llc(self, lines: np.ndarray): ...
    def invalidate(self, lines: np.ndarray, levels=None): ...


class DramModel(Protocol):
    """What a port needs of DRAM (see simulator.memory.dram)."""

    def service(self, lines: np.ndarray, is_write: np.ndarray | bool, arrival_ps: int,
                requester: str = "host") -> int: ...
    def service_lines(self, lines: np.ndarray, is_write: np.ndarray | bool, arrival_ps: int,
                      requester: str = "host") -> np.ndarray: ...


@dataclass
class PortResult:
    """One chunk through a port: the cache model's result and the DRAM completion time (ps, or None)."""

    cache: object  # simulator.memory.cache.ChunkResult
    dram_done_ps: int | None
    dram_lines: int
    read_done_ps: np.ndarray | None = None  # completion of each of ``cache.dram_reads``, in order, ps


class MemoryPort:
    """A requester's access path: caches from ``start_level`` down, then DRAM."""

    def __init__(self, name: str, caches: CacheModel, dram: DramModel, start_level: int = 0):
        self.name = name
        self.caches = caches
        self.dram = dram
        self.start_level = start_level
        # read/write flags of a chunk's DRAM requests (0 = read, 1 = write), served as a slice of this
        # array: its first half zeros, its second half ones (``_write_flags``)
        self._flags = np.zeros(0, dtype=np.uint8)
        self._no_stores = np.zeros(1, dtype=np.uint8)  # ``access_and_serve``'s per-access store flags, unused
        self._rows_state: tuple | None = None  # ``rows_args``: the parts it was made of, and its tuple

    def _write_flags(self, n_reads: int, n_writes: int) -> np.ndarray:
        """uint8 flags of ``n_reads`` reads followed by ``n_writes`` writes: a view, no allocation (the DRAM
        model only reads it)."""
        half = len(self._flags) // 2
        if n_reads > half or n_writes > half:
            half = max(n_reads, n_writes, 2 * half, 4096)
            self._flags = np.zeros(2 * half, dtype=np.uint8)
            self._flags[half:] = 1
        return self._flags[half - n_reads:half + n_writes]

    def _to_dram(self, result, now_ps: int, requester: str, posted_writes: bool = False) -> PortResult:
        """Send the chunk's DRAM reads, then its write-backs; ``dram_done_ps`` is the last
        completion, of the reads only when ``posted_writes`` (None if there is nothing to wait for)."""
        reads, writes = result.dram_reads, result.dram_writes
        n_reads = len(reads)
        n = n_reads + len(writes)
        if n == 0:
            return PortResult(result, None, 0)
        if not len(writes):
            lines = reads.astype(np.int64, copy=False)
        elif not n_reads:
            lines = writes.astype(np.int64, copy=False)
        else:
            lines = np.concatenate((reads, writes)).astype(np.int64, copy=False)
        done = self.dram.service_lines(lines, self._write_flags(n_reads, len(writes)), now_ps, requester=requester)
        read_done = done[:n_reads]
        waited = read_done if posted_writes else done
        return PortResult(result, int(value_range(waited)[1]) if len(waited) else None, n, read_done)

    def access(self, lines: np.ndarray, is_store: bool, now_ps: int) -> PortResult:
        """Load (or store) ``lines`` at ``now_ps``. The write-backs of the lines the caches evict
        are posted: DRAM serves them (after the chunk's reads) but ``dram_done_ps`` does not wait
        for them; a later chunk meets them in the DRAM's queues and banks."""
        return self._to_dram(self.caches.access(lines, is_store, self.start_level, requester=self.name), now_ps,
                             self.name, posted_writes=True)

    def access_levels(self, lines: np.ndarray, is_store: bool, now_ps: int) -> tuple[np.ndarray, int | None, int]:
        """``access``, reduced to what a core's timing needs of it: the lines served by each cache level and by
        DRAM (int64[levels + 1]), the completion of the chunk's last DRAM read (ps; None without one) and the
        lines of other cores' private caches its stores invalidated. In one compiled call
        (``chunk_kernel.access_and_serve``) where the caches and the memory allow it, else through ``access``."""
        n_out = self.caches.n_levels + 1
        result = self._in_one_call(lines, is_store, now_ps, False)
        if result is not None:
            dram_done = int(result[n_out + chunk_kernel.R_DRAM_DONE])
            return result[:n_out], (None if dram_done == chunk_kernel.NO_READS else dram_done), 0
        res = self.access(lines, is_store, now_ps)
        return count_levels(res.cache.served_by, n_out), res.dram_done_ps, res.cache.snooped

    def access_apart(self, lines: np.ndarray, is_store: bool, now_ps: int) -> int | None:
        """Load (or store) ``lines`` at ``now_ps``, the chunk's DRAM reads served as one chunk and then its
        write-backs as another, both waited for (an accelerator's data path through the caches,
        ``Interface.through_caches``): the last completion of either, ps (None without DRAM work). In one
        compiled call where the caches and the memory allow it (``access_levels``)."""
        result = self._in_one_call(lines, is_store, now_ps, True) if len(lines) <= ONE_CALL_LINES else None
        if result is not None:
            last = int(result[self.caches.n_levels + 1 + chunk_kernel.R_DRAM_DONE])
            return None if last == chunk_kernel.NO_READS else last
        res = self.caches.access(lines, is_store, self.start_level, requester=self.name)
        last = None
        for arr, is_write in ((res.dram_reads, False), (res.dram_writes, True)):
            if len(arr):
                done = self.dram.service(arr.astype(np.int64), is_write, now_ps, requester=self.name)
                last = done if last is None else max(last, done)
        return last

    def write_whole_lines(self, lines: np.ndarray, now_ps: int) -> int | None:
        """An accelerator's whole-line writes at ``now_ps`` (``Interface.through_caches``): each line allocated
        dirty at the entry level without reading memory, as ``zero`` allocates it, the write-backs of the lines
        it evicts waited for, as ``access_apart`` waits for them: their completion, ps (None without DRAM work)."""
        return self._to_dram(self.caches.zero(lines, self.start_level, requester=self.name), now_ps,
                             self.name).dram_done_ps

    def _in_one_call(self, lines: np.ndarray, is_store: bool, now_ps: int, apart: bool) -> np.ndarray | None:
        """``chunk_kernel.access_and_serve``'s result for the chunk (its DRAM stream served whole, or ``apart``),
        or None where the kernel does not apply (``_chunk_args``) or refused the lines before any work (status
        BAD_LINES: the steps one by one raise the error)."""
        fused = self._chunk_args(lines, is_store, now_ps)
        if fused is None:
            return None
        n_out = self.caches.n_levels + 1
        result = np.empty(n_out + chunk_kernel.N_RESULT, dtype=np.int64)
        chunk_kernel.access_and_serve(lines, self._no_stores, 1 if is_store else 0, self.start_level, MAX_LINE,
                                      *fused, result, apart)
        status, _, dram_lines, lo, hi = result[n_out:].tolist()
        if status == chunk_kernel.OUT_OF_RANGE:
            raise self.dram.out_of_range(lo, hi)
        if status != chunk_kernel.OK:
            return None
        if dram_lines:
            self.dram.chunk_served(now_ps)
        return result

    def _chunk_args(self, lines: np.ndarray, is_store: bool, now_ps: int) -> tuple | None:
        """The state arguments of ``chunk_kernel.access_and_serve`` for this chunk, or None where it does not
        apply: lines not a contiguous int64 array, a prefetcher, stores that snoop other cores, a memory other
        than one ``DramSystem`` or one that cannot take the chunk that way (``DramSystem.chunk_state``)."""
        if type(lines) is not np.ndarray or lines.dtype != np.int64 or lines.ndim != 1 \
                or not lines.flags.c_contiguous:
            return None
        parts = self._state_parts(len(lines), is_store, now_ps)
        if parts is None:
            return None
        cache_args, (pipeline_ps, dram_args) = parts
        return (*cache_args, now_ps + pipeline_ps, *dram_args)

    def _state_parts(self, n_lines: int, is_store: bool, now_ps: int) -> tuple[tuple, tuple[int, tuple]] | None:
        """What ``_chunk_args`` is made of for a chunk of ``n_lines`` lines, whatever the lines: the caches'
        arguments and the memory's ``chunk_state``."""
        if not 0 <= self.start_level < self.caches.n_levels:
            return None
        view = getattr(self.caches, "chunk_view", None)
        hierarchy = view(is_store) if view is not None else None
        chunk_dram = getattr(self.dram, "chunk_state", None)
        if hierarchy is None or chunk_dram is None:
            return None
        cache_args = hierarchy.chunk_args(n_lines, self.name)
        dram_state = chunk_dram(now_ps, self.name) if cache_args is not None else None
        if dram_state is None:
            return None
        return cache_args, dram_state

    def rows_args(self, max_lines: int, now_ps: int) -> tuple[int, tuple] | None:
        """For ``chunk_kernel.serve_rows`` starting at ``now_ps`` on chunks of at most ``max_lines`` lines: the
        memory's pipeline delay (ps, from the core's issue to the controller) and the state arguments from
        ``start_level`` to ``mine_attributed``, without ``arrival_ps`` (one tuple while the caches' and the
        memory's arrays last); None where ``access_levels`` would not take a load chunk into one compiled call
        (``_chunk_args``). A caller whose rows store checks ``stores_alone`` too."""
        parts = self._state_parts(max_lines, False, now_ps)
        if parts is None:
            return None
        cache_args, (pipeline_ps, dram_args) = parts
        made = self._rows_state
        if made is None or made[0] is not cache_args or made[1] is not dram_args:
            made = self._rows_state = (cache_args, dram_args,
                                       (self.start_level, MAX_LINE, *cache_args, *dram_args))
        return pipeline_ps, made[2]

    def stores_alone(self) -> bool:
        """Whether a chunk of stores runs as a chunk of loads does (``rows_args``): no other core's private copy
        to invalidate."""
        view = getattr(self.caches, "chunk_view", None)
        return view is not None and view(True) is not None

    def rows_served(self, arrival_ps: int) -> None:
        """Note that ``serve_rows`` sent its last chunk that reached DRAM at ``arrival_ps`` (``chunk_served``)."""
        self.dram.chunk_served(arrival_ps)

    def zero(self, lines: np.ndarray, now_ps: int) -> PortResult:
        """Full-line zeroing writes (dcbz / DC ZVA / CLZERO): allocated dirty, memory not read;
        write-backs posted as in ``access``."""
        return self._to_dram(self.caches.zero(lines, self.start_level, requester=self.name), now_ps, self.name,
                             posted_writes=True)

    def flush(self, lines: np.ndarray, now_ps: int, requester: str | None = None) -> PortResult:
        """clflush: dirty lines to DRAM, invalidated everywhere."""
        who = requester or self.name
        return self._to_dram(self.caches.flush(lines, requester=who), now_ps, who)

    def evict_to_llc(self, lines: np.ndarray, now_ps: int, requester: str | None = None) -> PortResult:
        """Dirty upper-level lines written into the LLC and kept there."""
        who = requester or self.name
        return self._to_dram(self.caches.evict_to_llc(lines, requester=who), now_ps, who)

    def invalidate(self, lines: np.ndarray, now_ps: int, requester: str | None = None) -> PortResult:
        """Drop the lines from every level without write-back."""
        who = requester or self.name
        return self._to_dram(self.caches.invalidate(lines, requester=who), now_ps, who)

    def direct(self, lines: np.ndarray, is_write: bool, now_ps: int) -> int:
        """Bypass the caches (a DMA engine on the memory bus); return the DRAM completion time, ps."""
        return self.dram.service(np.asarray(lines, dtype=np.int64), bool(is_write), now_ps, requester=self.name)
