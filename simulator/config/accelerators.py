"""Accelerator and interface specs.

An accelerator entry of a system config names its ``kind`` (which selects the
spec class registered for it, e.g. ``lap``) and its ``interface``: how it is
coupled to the host (003 section 5, Fig. 5). The interface decides how
the host hands work over (driver overhead, flushes, copies) and how the
accelerator reaches memory; the accelerator's own spec says only what it
computes and how fast. Kind-specific spec classes subclass ``AcceleratorSpec``
and register with ``register_kind``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

from simulator.config.bounds import BANDWIDTH_BYTES_PER_S, CYCLES, LATENCY_S
from simulator.errors import FieldError
from simulator.config.fields import param
from simulator.config.plugins import PluginError, load_entry_points

ENTRY_POINT_GROUP = "offsim.accelerators"
#: the module that imports (and so registers) every shipped kind; it stands above this one
SHIPPED_KINDS_MODULE = "simulator.config.accel_specs"
COUPLINGS = ("dram", "near_memory", "llc", "pcie", "on_die_dma", "in_pipeline", "shared_memory")


@dataclass(frozen=True)
class InterfaceSpec:
    """How an accelerator is coupled to the host and memory.

    couplings: ``dram`` (system-bus DMA from DRAM, non-coherent: the host flushes
    inputs before and invalidates outputs after), ``near_memory`` (like dram with
    the accelerator inside the memory: ``bandwidth`` is its internal bandwidth and
    no off-chip interface energy), ``llc`` (on the L2-LLC bus: the host evicts
    dirty lines to the LLC, the accelerator reads/writes through the LLC),
    ``pcie`` (device with its own memory: copies in and out over the link),
    ``on_die_dma`` (coprocessor reached by privileged DMA calls; reads through the
    LLC), ``in_pipeline`` (a functional unit driven by instructions, operands from
    L1, the core waits for it), ``shared_memory`` (coherent, HSA-like: no copies,
    no flushes, accesses through the LLC).
    """

    coupling: str = param(choices=COUPLINGS, doc="coupling of the accelerator to host and memory")
    bandwidth_bytes_per_s: float = param(unit="bandwidth", positive=True, within=BANDWIDTH_BYTES_PER_S,
                                         doc="bandwidth of the accelerator's data path (link or port)")
    latency_s: float = param(0.0, unit="time", min=0.0, within=LATENCY_S,
                             doc="one-way latency of the link per transfer/request")
    energy_j_per_bit: float = param(0.0, unit="energy_per_bit", min=0.0, doc="link energy per bit moved")
    offload_overhead_cycles: float = param(0.0, min=0.0, within=CYCLES,
                                           doc="host cycles per offload (driver call, set-up: LogCA o)")
    completion_latency_s: float = param(0.0, unit="time", min=0.0, within=LATENCY_S,
                                        doc="from the accelerator's last write to the host seeing completion")
    device_memory_bandwidth_bytes_per_s: float = param(
        0.0, unit="bandwidth", min=0.0, max=BANDWIDTH_BYTES_PER_S.high,
        doc="pcie only: bandwidth of the device's own memory (0 = not limiting, else at least "
            f"{BANDWIDTH_BYTES_PER_S.low:.0e} B/s as every bandwidth)")
    full_duplex: bool = param(False, doc="pcie only: copies in and out run on separate directions of the link "
                                         "(each at bandwidth_bytes_per_s) instead of taking turns")
    memory: str = param("", doc="near_memory only: the near_memories entry the accelerator works in (its data "
                                "path reaches that memory, not main memory: it pays no main-memory off-chip "
                                "interface energy, and that memory's own interface prices its bytes; the "
                                "memory holds the regions its commands name, so every other requester's accesses "
                                "to them, the host's, the drivers' and other accelerators', are served there too); "
                                "empty: it works in main memory")

    def __post_init__(self) -> None:
        if self.memory and self.coupling != "near_memory":
            raise FieldError("memory", f"{self.memory!r}: only the near_memory coupling works in a memory of its "
                             f"own, got coupling {self.coupling!r}", ("coupling",))
        if self.full_duplex and self.coupling != "pcie":
            raise FieldError("full_duplex", f"only the pcie coupling copies in and out, got coupling "
                             f"{self.coupling!r}", ("coupling",))
        device_bw = self.device_memory_bandwidth_bytes_per_s
        if device_bw and self.coupling != "pcie":
            raise FieldError("device_memory_bandwidth_bytes_per_s", f"{device_bw:g} B/s: only the pcie coupling's "
                             f"device has a memory of its own, got coupling {self.coupling!r}; expected 0",
                             ("coupling",))
        if 0 < device_bw < BANDWIDTH_BYTES_PER_S.low:
            raise FieldError("device_memory_bandwidth_bytes_per_s", f"{device_bw:g} B/s; expected 0 (not limiting) or "
                             f"at least {BANDWIDTH_BYTES_PER_S.low:g} B/s ({BANDWIDTH_BYTES_PER_S.why})")


@dataclass(frozen=True)
class AcceleratorSpec:
    """Common part of every accelerator: its kind and interface. Subclasses add the rest."""

    KINDS: ClassVar[dict[str, type]] = {}

    kind: str = param(doc="accelerator kind (lap, crypto, stencil, kernel, systolic, or one an installed package adds)")
    interface: InterfaceSpec = param(doc="coupling to host and memory")

    @classmethod
    def load_kinds(cls) -> dict[str, type]:
        """The registered kinds: the shipped ones (registered as ``simulator.config.accel_specs`` imports
        their modules; ``schema`` imports it), then the modules installed packages name in the entry-point
        group ``offsim.accelerators``, imported at the first call. Each such module registers its kind's spec
        (``register_kind``) and builder (``simulator.accel.registry.register_builder``) on import, as the
        shipped kinds do. RuntimeError before ``accel_specs`` is imported: the shipped kinds register first,
        so that a package cannot take one of their names."""
        if SHIPPED_KINDS_MODULE not in sys.modules:
            raise RuntimeError(f"AcceleratorSpec.load_kinds: the shipped accelerator kinds are not registered yet; "
                               f"expected {SHIPPED_KINDS_MODULE} (or simulator.config.schema, which imports it) "
                               "imported first")
        load_entry_points(ENTRY_POINT_GROUP)
        return cls.KINDS


def register_kind(kind: str):
    """Class decorator: register an AcceleratorSpec subclass for ``kind`` (a kind registers once)."""
    def deco(cls: type) -> type:
        if AcceleratorSpec.KINDS.get(kind, cls) is not cls:
            raise PluginError(f"accelerator kind {kind!r} is registered already (by "
                              f"{AcceleratorSpec.KINDS[kind].__module__}); expected a new kind name")
        AcceleratorSpec.KINDS[kind] = cls
        return cls
    return deco

