"""Spec of a kernel accelerator (kind ``kernel``): a GPU-style throughput device.

The unit runs a kernel whose host cost is ``host_cycles`` (carried by the
command: the host's C g^beta share of that request) ``acceleration`` times
faster than the host (LogCA A, 000 Table 4.3): work of one request takes
host_cycles / A host cycles. Each request also pays ``launch_latency_s``
(kernel launch on the device; each part of a pipelined command is a request). The unit streams its inputs and outputs in
chunks of ``chunk_bytes`` through its interface's data path (device memory
for ``pcie``, LLC and DRAM for ``shared_memory``) while it computes.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.bounds import LATENCY_S, SPEEDUP
from simulator.config.fields import param


@register_kind("kernel")
@dataclass(frozen=True)
class KernelSpec(AcceleratorSpec):
    """One kernel accelerator: rate relative to the host, launch cost, chunking and power."""

    acceleration: float = param(positive=True, within=SPEEDUP,
                                doc="throughput relative to the host running the same kernel (LogCA A)")
    launch_latency_s: float = param(0.0, unit="time", min=0.0, within=LATENCY_S,
                                    doc="device time per request before its work starts")
    chunk_bytes: int = param(1024 * 1024, unit="size", min=64, doc="bytes the unit streams in, works on and writes at a time")
    active_power_w: float = param(0.0, unit="power", min=0.0, doc="dynamic power while computing")
    static_power_w: float = param(0.0, unit="power", min=0.0, doc="power while busy (static part)")
    idle_power_w: float = param(0.0, unit="power", min=0.0, doc="power while idle")
