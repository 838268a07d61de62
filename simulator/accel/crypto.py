"""The crypto unit: AES-128 and SHA-256 engines fed by the interface's data path.

A command (``CryptoCommand``; ``offsim commands crypto``: ``op`` ``aes128`` or
``sha256``) names one input and one output region: its data are its operands. With ``engines`` = k > 1 (AES only: its blocks are independent) the
buffer is split into k parts of whole blocks, one per engine; the engines run
at once and share the interface's link, so their reads and writes queue behind
each other there. Each engine streams its part in chunks: it asks for chunk
i+1 while it encrypts chunk i, and writes chunk i back when done, so
transfers overlap work. An engine's time is its pipeline latency plus blocks x
cycles per block of the unit clock, or the data path's time if that is longer.

The host pays the interface's overhead once per request, plus the kernel's
set-up (``aes_setup_cycles`` or ``sha_setup_cycles``: the part of LogCA's o
that differs per kernel, 000 Table 4.3); a request that uses several engines
also pays ``split_overhead_cycles`` host cycles (dispatch to and join of the
engines). Counters: ``blocks``, ``bytes_read``, ``bytes_written``,
``requests``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simulator.accel.base import AcceleratorUnit, Command, CommandError
from simulator.accel.command_schema import Regions, command_field
from simulator.accel.registry import BuildContext, register_builder, register_command
from simulator.config.accel_crypto import CryptoSpec
from simulator.config.algorithms import (AES_BLOCK_BYTES, SHA256_BLOCK_BYTES, SHA256_DIGEST_BYTES, aes_blocks,
                                         sha256_padded_bytes, split_blocks)
from simulator.engine import ClockDomain
from simulator.interconnect.interface import region_lines, region_partial_lines
from simulator.memory.power import priced

MAX_CHUNKS_PER_ENGINE = 64  # bounds the events per job on large buffers


def _one_region(regions: tuple) -> str | None:
    return None if len(regions) == 1 else f"expected exactly one [byte address, bytes] region, got {len(regions)}"


@register_command("crypto")
@dataclass(frozen=True)
class CryptoCommand:
    """A crypto command: encrypt (AES-128) or digest (SHA-256) one buffer into another."""

    op: str = command_field(choices=("aes128", "sha256"), doc="the kernel: AES-128 encryption or SHA-256 digest")
    inputs: Regions = command_field(check=_one_region, doc="the buffer to encrypt or digest (one region)")
    outputs: Regions = command_field(check=_one_region, doc="where the ciphertext or digest goes (one region)")
    engines: int = command_field(1, unit="engines", min=1,
                                 doc="engines the buffer is split over (aes128 only; at most the unit's engines)")

    def __post_init__(self) -> None:
        if self.engines > 1 and self.op != "aes128":
            raise ValueError(f"engines = {self.engines}: expected 1 for op {self.op!r} (only aes128 has "
                             "independent blocks to split)")
        in_bytes, out_bytes = int(self.inputs[0][1]), int(self.outputs[0][1])
        if self.op == "aes128" and out_bytes < in_bytes:
            raise ValueError(f"outputs: {out_bytes} B; expected at least the input's {in_bytes} B (the ciphertext "
                             "is as long as the plaintext)")
        if self.op == "sha256" and out_bytes != SHA256_DIGEST_BYTES:
            raise ValueError(f"outputs: {out_bytes} B; expected {SHA256_DIGEST_BYTES} B (one SHA-256 digest)")


def _known(value: float | None) -> float:
    """A price of the spec, NaN where it is left out (not known)."""
    return math.nan if value is None else value


class CryptoUnit(AcceleratorUnit):
    """A crypto unit with ``spec.engines`` engines (see module docstring)."""

    COMMAND = CryptoCommand

    def __init__(self, name: str, spec: CryptoSpec, context: BuildContext) -> None:
        self.spec = spec
        self.host_clock = ClockDomain(f"{name}.host", context.host_frequency_hz)
        super().__init__(name=name, env=context.env, clock=ClockDomain(name, spec.frequency_hz),
                         interface=context.interface, static_power_w=_known(spec.static_power_w),
                         idle_power_w=_known(spec.idle_power_w))

    # --- host side -------------------------------------------------------------------------------

    def host_setup_cycles(self, params) -> float:
        """Host cycles this request costs before the interface's offload: kernel set-up and engine split."""
        k = params.get("engines", 1)
        op = params.get("op")
        setup = {"aes128": self.spec.aes_setup_cycles, "sha256": self.spec.sha_setup_cycles}.get(op, 0.0)
        return setup + (self.spec.split_overhead_cycles if k > 1 else 0.0)

    def offload(self, core, params, stage, args=None):
        """Host: the kernel's set-up and the split cost (``host_setup_cycles``), then the interface's offload."""
        cycles = self.host_setup_cycles(params)
        if cycles:
            start = self.env.now
            dt = core.clock.cycles_to_ps(cycles)
            stage.busy_ps += dt
            stage.compute_ps += dt
            yield self.env.timeout(dt)
            stage.add_interval(start, self.env.now)
        yield from super().offload(core, params, stage, args)

    def check_args(self, cmd: CryptoCommand) -> None:
        """A SHA-256 engine for op sha256, at most ``spec.engines`` engines."""
        if cmd.op == "sha256" and not self.spec.sha_cycles_per_block:
            raise CommandError("op = 'sha256': this unit has no SHA-256 engine (sha_cycles_per_block = 0); "
                               "expected 'aes128'")
        if cmd.engines > self.spec.engines:
            raise CommandError(f"engines = {cmd.engines}: expected at most the unit's {self.spec.engines}")

    # --- accelerator side ------------------------------------------------------------------------

    def execute(self, cmd: Command):
        """Split the request over its engines, run them at once, finish when the last one has."""
        p = cmd.params  # checked by check_command before the run
        op = p.get("op")
        (in_addr, in_bytes), (out_addr, out_bytes) = (map(int, cmd.inputs[0]), map(int, cmd.outputs[0]))
        k = p["engines"]
        self.count("requests", 1)
        if op == "sha256":
            blocks = sha256_padded_bytes(in_bytes) // SHA256_BLOCK_BYTES
            jobs = [((in_addr, in_bytes), (out_addr, out_bytes), blocks, self.spec.sha_cycles_per_block)]
        else:
            jobs = []
            offset = 0
            for part_blocks in split_blocks(aes_blocks(in_bytes), k):
                nbytes = min(part_blocks * AES_BLOCK_BYTES, in_bytes - offset)
                jobs.append(((in_addr + offset, nbytes), (out_addr + offset, min(nbytes, max(0, out_bytes - offset))),
                             part_blocks, self.spec.aes_cycles_per_block))
                offset += nbytes
        procs = [self.env.process(self._engine(*job)) for job in jobs if job[2] > 0]
        if procs:
            yield self.env.all_of(procs)

    def _engine(self, src: tuple[int, int], dst: tuple[int, int], blocks: int, cycles_per_block: float):
        """One engine's job: stream ``src`` in chunks, ``blocks`` blocks of work, write ``dst``."""
        env, line = self.env, self.interface.line_bytes
        in_lines = region_lines([list(src)], line)
        out_lines = region_lines([list(dst)], line)
        out_partial = region_partial_lines([list(dst)], line)  # lines the output covers in part
        n_chunks = max(1, min(MAX_CHUNKS_PER_ENGINE, math.ceil(max(src[1], 1) / self.spec.chunk_bytes)))
        in_parts = np.array_split(in_lines, n_chunks)
        if dst[1] >= src[1]:  # ciphertext: chunk i of the output follows chunk i of the input
            out_parts = np.array_split(out_lines, n_chunks)
        else:  # a digest: written once, after the last block
            out_parts = [out_lines[:0]] * (n_chunks - 1) + [out_lines]
        block_parts = np.diff(np.linspace(0, blocks, n_chunks + 1).round().astype(np.int64))
        arrival = self.interface.access(in_parts[0], False, env.now)
        written = env.now
        for i in range(n_chunks):
            if arrival > env.now:
                yield env.timeout(arrival - env.now)
            if i + 1 < n_chunks:  # ask for the next chunk while this one is processed
                arrival = self.interface.access(in_parts[i + 1], False, env.now)
            work = block_parts[i] * cycles_per_block + (self.spec.pipeline_latency_cycles if i == 0 else 0.0)
            yield env.timeout(self.compute_ps(work))
            if len(out_parts[i]):
                written = max(written, self.interface.access(out_parts[i], True, env.now, out_partial))
        if written > env.now:
            yield env.timeout(written - env.now)
        self.count("blocks", blocks)
        self.count("bytes_read", len(in_lines) * line)
        self.count("bytes_written", len(out_lines) * line)

    def dynamic_energy_j(self) -> dict[str, float]:
        """Engine energy: blocks x energy per block, J."""
        return {"engines": priced(_known(self.spec.energy_j_per_block), self.counts.get("blocks", 0))}


@register_builder("crypto")
def build_crypto(name: str, spec: CryptoSpec, context: BuildContext) -> CryptoUnit:
    """Builder of ``crypto`` units."""
    return CryptoUnit(name, spec, context)
