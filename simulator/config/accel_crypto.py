"""Spec of a crypto unit (kind ``crypto``): AES-128 and SHA-256 engines behind one interface.

A crypto unit holds ``engines`` identical engines (the UltraSPARC T2 has one
per core). Each engine processes a job block by block: a pipeline latency once
per job, then ``*_cycles_per_block`` cycles of the unit's clock per block
(16 B AES blocks, 64 B SHA-256 blocks). A request that asks for several engines
has its buffer split between them; the engines share the interface's data path.

Host set-up per kernel: the interface's ``offload_overhead_cycles`` is what
every request pays (the driver call or the issue of the instruction
sequence); ``aes_setup_cycles`` and ``sha_setup_cycles`` are what a request of
that kernel pays on the host in addition (key schedule and cipher context,
or hash state and padding), so that LogCA's o of a platform can differ per
kernel as in 000 Table 4.3.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.bounds import CLOCK_HZ, COUNT, CYCLES
from simulator.config.fields import param


#: what an energy left out means: no published figure prices the engines of the shipped presets
NOT_KNOWN = "left out: not known, so the unit's energy is NaN for a run in which it works (or idles)"


@register_kind("crypto")
@dataclass(frozen=True)
class CryptoSpec(AcceleratorSpec):
    """One crypto unit: clock, engines, per-block cost, split cost and power."""

    frequency_hz: float = param(unit="frequency", positive=True, within=CLOCK_HZ, doc="clock of the engines")
    aes_cycles_per_block: float = param(positive=True, within=CYCLES,
                                        doc="engine cycles per 16 B AES-128 block (throughput)")
    sha_cycles_per_block: float = param(0.0, min=0.0, within=CYCLES,
                                        doc="engine cycles per 64 B SHA-256 block (throughput); 0 = no SHA engine")
    engines: int = param(1, min=1, within=COUNT, doc="identical engines that can share one request's buffer")
    pipeline_latency_cycles: float = param(0.0, min=0.0, within=CYCLES,
                                           doc="engine cycles from a job's first block in to its first block out")
    chunk_bytes: int = param(4096, unit="size", min=64,
                             doc="bytes an engine reads, processes and writes at a time; a job of more than 64 "
                                 "chunks is cut into 64 larger ones (the events per job stay bounded)")
    split_overhead_cycles: float = param(
        0.0, min=0.0, within=CYCLES,
        doc="host cycles per request that uses more than one engine (dispatch to and join of the engines)")
    aes_setup_cycles: float = param(
        0.0, min=0.0, within=CYCLES,
        doc="host cycles per AES-128 request on top of the interface's offload overhead (kernel set-up)")
    sha_setup_cycles: float = param(
        0.0, min=0.0, within=CYCLES,
        doc="host cycles per SHA-256 request on top of the interface's offload overhead (kernel set-up)")
    energy_j_per_block: float | None = param(None, unit="energy", min=0.0,
                                             doc=f"dynamic energy per block processed; {NOT_KNOWN}")
    static_power_w: float | None = param(None, unit="power", min=0.0,
                                         doc=f"power while busy (static part); {NOT_KNOWN}")
    idle_power_w: float | None = param(None, unit="power", min=0.0, doc=f"power while idle; {NOT_KNOWN}")
