"""AES-128 and SHA-256 over a buffer of g bytes: host software and offloaded versions.

Both versions start with an ``init`` stage in which the host writes the input
buffer (the application produced it, so it sits in the host's caches as far as
they hold it); the stage ``kernel`` is what is timed. With ``warmup`` the
kernel runs once more before it, in stage ``warmup``, on the same buffers: the
timed run then finds input and output where the previous execution left them
(in the caches as far as they hold them), as in a measurement that averages
back-to-back executions over one buffer (000 reports the average of one
hundred executions, 000:L481).

Host software (``crypto_host``): per row of ``row_bytes`` the core loads the
input and stores the output (AES) and spends the software's cycles. The cycle
count follows the platform's computational index: the whole buffer costs
C g^beta host cycles (LogCA T0, 000 eq. 4.1), C and beta from the platform
preset (000 Tables 4.2-4.3); row i gets C (end_i^beta - start_i^beta). SHA-256
hashes the padded message (FIPS 180-4: 0x80, zeros, 64-bit length, to 64 B),
so its cost is C (padded bytes)^beta and it stores one 32 B digest.

Offload (``crypto_offload``): the buffer goes to a crypto unit as
``requests`` sub-requests issued back to back (pipelined: the host's overhead
for request i+1 overlaps the unit's work on request i), each using
``engines`` engines of the unit (the buffer split between them); then the
host waits for completion. With ``threads`` = n > 1 (n threads, each driving the crypto unit of
its own core), thread t
takes the t-th of n slices of the buffer in whole AES blocks (SHA-256: the
t-th of n independent messages, one digest each) and hands it to unit
``<unit><t>`` (``crypto0``, ``crypto1``, ...); a thread whose slice is empty
(fewer blocks than threads) offloads nothing. Thread 0 writes the input in
``init``, which every thread waits for at a barrier before it offloads, and
every thread ends each execution at a barrier.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import pyarrow as pa

from simulator.config.algorithms import AES_BLOCK_BYTES, SHA256_DIGEST_BYTES, sha256_padded_bytes, split_blocks
from workloads.trace import (MAX_TRACE_ROWS, AddressSpace, TraceBuilder, check_row_cycles, check_trace_limit, rows_why,
                             thread_count)

CryptoKernel = Literal["aes", "sha"]
KERNELS = get_args(CryptoKernel)
OPS = {"aes": "aes128", "sha": "sha256"}
DEFAULT_ROW_BYTES = 64 * 1024


def _check(kernel: str, g_bytes: int) -> None:
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    if isinstance(g_bytes, bool) or not isinstance(g_bytes, int) or g_bytes < 1:
        raise ValueError(f"g_bytes must be an integer >= 1 byte, got {g_bytes!r}")


def _layout(tb: TraceBuilder, kernel: str, g_bytes: int, digests: int = 1) -> tuple[int, int, int]:
    """Allocate input and output (``digests`` digests for SHA-256), write the input (stage init); return (src,
    dst, dst_bytes)."""
    space = AddressSpace()
    out_bytes = g_bytes if kernel == "aes" else digests * SHA256_DIGEST_BYTES
    src = space.alloc("crypto.input", g_bytes)
    dst = space.alloc("crypto.output", out_bytes)
    tb.access("host", "init", "write", src, 8, 8, -(-g_bytes // 8))
    return src, dst, out_bytes


def host_cycles(kernel: str, g_bytes: int, c_cycles_per_byte_beta: float, beta: float,
                row_bytes: int | None = None) -> float:
    """Host software cycles for one buffer: C g^beta (AES) or C padded^beta (SHA-256); with ``row_bytes``, refused
    if the rows of that many bytes it is spread over (``_host_rows``) would take one above MAX_ROW_CYCLES."""
    _check(kernel, g_bytes)
    n = g_bytes if kernel == "aes" else sha256_padded_bytes(g_bytes)
    # n**beta beyond a float is refused before it is computed: an integer beta would make it an exact,
    # arbitrarily long integer power
    too_big = n > 1 and beta * math.log2(n) > 1024
    cycles = math.inf if too_big else c_cycles_per_byte_beta * n**beta
    if not math.isfinite(cycles):  # the trace's cycles column is finite
        raise ValueError(f"c_cycles_per_byte_beta and beta must be small enough for a finite cycle count (C g^beta "
                         f"with g = {n} B), got {c_cycles_per_byte_beta!r} and {beta!r}")
    if row_bytes is not None:
        check_row_cycles("c_cycles_per_byte_beta", c_cycles_per_byte_beta, cycles, g_bytes, row_bytes, beta)
    return cycles


def _host_rows(tb: TraceBuilder, stage: str, kernel: str, g_bytes: int, src: int, dst: int, out_bytes: int,
               c_cycles_per_byte_beta: float, beta: float, row_bytes: int) -> None:
    """One execution of the host software in ``stage``: C g^beta cycles spread over the rows."""
    total = host_cycles(kernel, g_bytes, c_cycles_per_byte_beta, beta, row_bytes)
    for off in range(0, g_bytes, row_bytes):
        n = min(row_bytes, g_bytes - off)
        # row share of C g^beta, cumulative so that the rows add up to it exactly
        cycles = total * (((off + n) / g_bytes) ** beta - (off / g_bytes) ** beta)
        elems = -(-n // AES_BLOCK_BYTES)
        tb.access("host", stage, "read", src + off, min(AES_BLOCK_BYTES, n), AES_BLOCK_BYTES, elems, cycles=cycles)
        if kernel == "aes":
            tb.access("host", stage, "write", dst + off, min(AES_BLOCK_BYTES, n), AES_BLOCK_BYTES, elems)
    if kernel == "sha":
        tb.access("host", stage, "write", dst, out_bytes, out_bytes, 1)


def _offload_rows(tb: TraceBuilder, stage: str, kernel: str, g_bytes: int, src: int, dst: int, out_bytes: int,
                  unit: str, engines: int, requests: int, thread: int = 0) -> None:
    """One execution of the offload in ``stage`` by ``thread``: the requests, then the wait for completion."""
    if kernel == "sha":
        tb.offload("host", stage, unit, op=OPS[kernel], inputs=[[src, g_bytes]], outputs=[[dst, out_bytes]],
                   engines=engines, thread=thread)
    else:
        off = 0
        for blocks in split_blocks(-(-g_bytes // AES_BLOCK_BYTES), requests):
            n = min(blocks * AES_BLOCK_BYTES, g_bytes - off)
            if n <= 0:
                continue
            tb.offload("host", stage, unit, op=OPS[kernel], inputs=[[src + off, n]], outputs=[[dst + off, n]],
                       engines=engines, thread=thread)
            off += n
    tb.wait("host", stage, unit, thread=thread)


def thread_parts(kernel: str, g_bytes: int, threads: int) -> list[tuple[int, int, int]]:
    """(input offset, input bytes, output offset) of each thread's part of the buffer: AES, the t-th of
    ``threads`` slices in whole 16 B blocks (``split_blocks``), its ciphertext at the same offset; SHA-256, the
    t-th of ``threads`` slices of the message, its digest the t-th of the output's digests."""
    if kernel == "sha":
        cuts = [g_bytes * t // threads for t in range(threads + 1)]
        return [(cuts[t], cuts[t + 1] - cuts[t], t * SHA256_DIGEST_BYTES) for t in range(threads)]
    parts, off = [], 0
    for blocks in split_blocks(-(-g_bytes // AES_BLOCK_BYTES), threads):
        n = min(blocks * AES_BLOCK_BYTES, g_bytes - off)
        parts.append((off, n, off))
        off += n
    return parts


def _threaded_offload_rows(tb: TraceBuilder, stage: str, kernel: str, g_bytes: int, src: int, dst: int,
                           unit: str, engines: int, requests: int, threads: int) -> None:
    """One execution by ``threads`` threads, thread t on unit ``<unit><t>`` (module docstring), then a barrier."""
    for t, (off, n, out_off) in enumerate(thread_parts(kernel, g_bytes, threads)):
        if n == 0:  # more threads than blocks: this one only meets the others at the barrier
            continue
        out_n = n if kernel == "aes" else SHA256_DIGEST_BYTES
        _offload_rows(tb, stage, kernel, n, src + off, dst + out_off, out_n, f"{unit}{t}", engines, requests, t)
    for t in range(threads):
        tb.barrier(stage, thread=t)


def crypto_host(kernel: CryptoKernel, g_bytes: int, c_cycles_per_byte_beta: float, beta: float,
                row_bytes: int = DEFAULT_ROW_BYTES, warmup: bool = False) -> pa.Table:
    """Host software AES-128/SHA-256 of ``g_bytes`` bytes (see module docstring); ``warmup``: run it once
    untimed (stage ``warmup``) before the timed ``kernel`` stage."""
    _check(kernel, g_bytes)
    if not (c_cycles_per_byte_beta > 0 and beta > 0):
        raise ValueError(f"c_cycles_per_byte_beta and beta must be > 0, got {c_cycles_per_byte_beta!r}, {beta!r}")
    if row_bytes < AES_BLOCK_BYTES or row_bytes % AES_BLOCK_BYTES:
        raise ValueError(f"row_bytes must be a multiple of {AES_BLOCK_BYTES} B, got {row_bytes!r}")
    per_row = (2 if kernel == "aes" else 1) * (2 if warmup else 1)
    check_trace_limit("g_bytes", g_bytes, (MAX_TRACE_ROWS - 3) // per_row * row_bytes,
                      rows_why(per_row, f"row of row_bytes = {row_bytes} B"))
    tb = TraceBuilder()
    src, dst, out_bytes = _layout(tb, kernel, g_bytes)
    for stage in (("warmup", "kernel") if warmup else ("kernel",)):
        _host_rows(tb, stage, kernel, g_bytes, src, dst, out_bytes, c_cycles_per_byte_beta, beta, row_bytes)
    return tb.to_table()


def crypto_offload(kernel: CryptoKernel, g_bytes: int, unit: str = "crypto", engines: int = 1,
                   requests: int = 1, warmup: bool = False, threads: int = 1) -> pa.Table:
    """AES-128/SHA-256 of ``g_bytes`` on crypto unit ``unit`` (see module docstring); ``warmup``: run it once
    untimed (stage ``warmup``) before the timed ``kernel`` stage; ``threads`` > 1: on units ``<unit>0`` ..
    ``<unit><threads - 1>``, one thread each."""
    _check(kernel, g_bytes)
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ValueError(f"requests must be an integer >= 1, got {requests!r}")
    if kernel == "sha" and requests > 1:
        raise ValueError("requests must be 1 for sha: a digest cannot be split into independent sub-requests")
    threads = thread_count(threads)
    if kernel == "aes":  # a request takes whole 16 B blocks, at least one, of its thread's slice
        fewest = min(n for n in split_blocks(-(-g_bytes // AES_BLOCK_BYTES), threads) if n)
        check_trace_limit("requests", requests, fewest, f"a request takes at least one {AES_BLOCK_BYTES} B block, and "
                          + (f"g_bytes = {g_bytes} B holds {fewest}" if threads == 1
                             else f"the smallest of the {threads} threads' slices of g_bytes = {g_bytes} B holds {fewest}"))
    passes = 2 if warmup else 1
    check_trace_limit("requests", requests, ((MAX_TRACE_ROWS - threads) // passes - 2 * threads) // threads,
                      rows_why(passes * threads, "request"))
    tb = TraceBuilder()
    src, dst, out_bytes = _layout(tb, kernel, g_bytes, threads)
    if threads > 1:  # no thread hands its slice over before thread 0 has written it
        for t in range(threads):
            tb.barrier("init", thread=t)
    for stage in (("warmup", "kernel") if warmup else ("kernel",)):
        if threads == 1:
            _offload_rows(tb, stage, kernel, g_bytes, src, dst, out_bytes, unit, engines, requests)
        else:
            _threaded_offload_rows(tb, stage, kernel, g_bytes, src, dst, unit, engines, requests, threads)
    units = [unit] if threads == 1 else [f"{unit}{t}" for t in range(threads)]
    return tb.to_table(units=["host", *units])


GENERATORS = {"crypto_host": crypto_host, "crypto_offload": crypto_offload}
