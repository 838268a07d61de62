"""Spec of a kernel accelerator (kind ``kernel``): a GPU-style throughput device.

The device's rate comes from its own figures: each request declares its work
(``flops`` and the ``memory_bytes`` it moves in the device's memory, counted by
the workload from the kernel's standard operation count) and takes the
roofline time max(flops / ``peak_flops_per_s``, memory_bytes / the bandwidth of
the memory it works in), seconds; that bandwidth is the interface's
``device_memory_bandwidth_bytes_per_s`` for ``pcie`` and the data path's
``bandwidth_bytes_per_s`` for the couplings that work in host memory. The
device's LogCA acceleration A then follows from the host's cost of the same
request. ``acceleration`` > 0 overrides this with a fixed A (the shipped GPU
presets fix 000 Table 4.3's): the request's work takes host_cycles / A host
cycles (``host_cycles``, carried by the command, is the host's C g^beta share
of that request). Each request also pays
``launch_latency_s`` (each part of a pipelined command is a request). The
unit streams its inputs and outputs in chunks of ``chunk_bytes`` through its
interface's data path while it computes.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.bounds import LATENCY_S, SPEEDUP
from simulator.errors import FieldError
from simulator.config.fields import param


@register_kind("kernel")
@dataclass(frozen=True)
class KernelSpec(AcceleratorSpec):
    """One kernel accelerator: peak rate (or a fixed acceleration), launch cost, chunking and power."""

    peak_flops_per_s: float = param(0.0, unit="flop_rate", min=0.0,
                                    doc="peak arithmetic rate at the precision of the kernels it runs (0: only "
                                        "with acceleration)")
    acceleration: float = param(0.0, min=0.0, max=SPEEDUP.high,
                                doc="fixed throughput relative to the host running the same kernel (LogCA A), "
                                    "overriding the roofline of peak_flops_per_s and memory bandwidth; 0: the "
                                    "roofline")
    launch_latency_s: float = param(0.0, unit="time", min=0.0, within=LATENCY_S,
                                    doc="device time per request before its work starts")
    chunk_bytes: int = param(1024 * 1024, unit="size", min=64,
                             doc="bytes the unit streams in, works on and writes at a time; a request of more than 64 "
                                 "chunks is cut into 64 larger ones (the events per request stay bounded)")
    active_power_w: float = param(0.0, unit="power", min=0.0, doc="dynamic power while computing")
    static_power_w: float = param(0.0, unit="power", min=0.0, doc="power while busy (static part)")
    idle_power_w: float = param(0.0, unit="power", min=0.0, doc="power while idle")

    def __post_init__(self) -> None:
        if self.acceleration:
            if self.acceleration < SPEEDUP.low:
                raise FieldError("acceleration", f"{self.acceleration!r}: expected 0 (the roofline) or "
                                 f"{SPEEDUP.low:g}..{SPEEDUP.high:g} ({SPEEDUP.why})")
            return
        if not self.peak_flops_per_s > 0:
            raise FieldError("peak_flops_per_s", "0: expected the device's peak rate (e.g. '1.03 TFLOP/s'), or an "
                             "acceleration > 0", ("acceleration",))
        if self.interface.coupling == "pcie" and not self.interface.device_memory_bandwidth_bytes_per_s > 0:
            raise FieldError("interface.device_memory_bandwidth_bytes_per_s", "0: expected the device memory's "
                             "bandwidth, which bounds the roofline of a pcie device without an acceleration",
                             ("acceleration", "interface.coupling"))

    @property
    def roofline_bandwidth_bytes_per_s(self) -> float:
        """Bandwidth of the memory the device works in, B/s: its own (pcie) or its data path's."""
        if self.interface.coupling == "pcie":
            return self.interface.device_memory_bandwidth_bytes_per_s
        return self.interface.bandwidth_bytes_per_s

    def device_seconds(self, flops: float, memory_bytes: float) -> float:
        """Roofline time of a request's work (launch not included), s."""
        return max(flops / self.peak_flops_per_s, memory_bytes / self.roofline_bandwidth_bytes_per_s)
