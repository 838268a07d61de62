"""The couplings of an accelerator to host and memory: one strategy object each.

A coupling says four things (003 section 5, Fig. 5):
- the host's coherence work before an offload (``before_offload``: the maintenance op the driver runs on the
  command's input and output lines: ``flush`` for the non-coherent couplings, ``evict_llc`` for ``llc``, none
  for the coherent ones) and after completion (``after_offload``: invalidate the outputs' host copies at
  every level, only above the LLC, or not at all);
- whether the device works on its own memory, so that inputs are copied in and outputs out over the link
  (``copies``: pcie);
- whether the core waits for each command as for an instruction (``core_waits``: in_pipeline);
- the accelerator's data path (``access``): which parts of the memory system a line crosses, and where its
  link joins the host side (``entry``, a node of the system graph); through the caches of a coherent coupling
  (``coherent_stores``), the unit's stores first remove the host's copies above its entry.

``simulator.interconnect.interface.Interface`` runs the strategy named by ``InterfaceSpec.coupling``; the
accelerator code never asks which coupling it has. A new coupling is one subclass here and its name in
``simulator.config.accelerators.COUPLINGS``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

#: the interface running a strategy (``simulator.interconnect.interface.Interface``, which imports this module)
Interface = Any

#: graph nodes a coupling's link may join (``simulator.system``): the memory controller, or the host's last or
#: first cache level (names resolved when the graph is built)
MEMORY_CONTROLLER = "memory controller"
LAST_LEVEL = "<last level>"
FIRST_LEVEL = "<first level>"


class Coupling:
    """Base strategy: a coherent accelerator whose link joins the memory controller (subclasses set the rest)."""

    name: ClassVar[str]
    before_offload: ClassVar[str | None] = None  # maintenance op on inputs and outputs, or None
    after_offload: ClassVar[str] = "none"  # invalidate outputs' host copies: "all" levels, "above_llc", "none"
    copies: ClassVar[bool] = False
    core_waits: ClassVar[bool] = False
    entry: ClassVar[str] = MEMORY_CONTROLLER

    @property
    def coherent_stores(self) -> bool:
        """Whether the unit's stores remove the host's copies above its entry first (``simulator.memory.
        core_caches.CoherentStores``), as hardware coherence does: a coupling whose link joins a cache level
        and whose driver does no coherence work before an offload."""
        return self.entry != MEMORY_CONTROLLER and self.before_offload is None

    def access(self, iface: Interface, lines: np.ndarray, is_write: bool, now_ps: int,
               partial: np.ndarray | None = None) -> int:
        """Move ``lines`` between the accelerator and memory from ``now_ps``; their arrival, ps (``partial``: the
        lines a write covers in part, ``Interface.access``)."""
        raise NotImplementedError


class DramCoupling(Coupling):
    """System-bus DMA from DRAM, non-coherent: a link in series with DRAM. The DMA joins the memory controller:
    its lines cross neither the host's caches nor its memory path (``Interface.path_exempt_bytes``)."""

    name = "dram"
    before_offload = "flush"
    after_offload = "all"

    def access(self, iface: Interface, lines: np.ndarray, is_write: bool, now_ps: int,
               partial: np.ndarray | None = None) -> int:
        link_done = iface.link.transfer(len(lines) * iface.line_bytes, now_ps, iface.name)
        if not len(lines):
            return link_done
        return max(link_done, iface.dma(lines, is_write, now_ps, iface.name, self.bus_speedup(iface)))

    def bus_speedup(self, iface: Interface) -> float:
        """How much faster than the channel the unit's bursts reach the banks (1: through the channel)."""
        return 1.0


class NearMemoryCoupling(DramCoupling):
    """Inside the memory: the unit reaches the banks over an internal path of its configured bandwidth w; its
    bursts and column-to-column gaps take 1/m of the channel's, m = w / the memory's peak bandwidth over all
    its channels (any real m >= 1, to the picosecond), while activations and precharges keep their timing;
    below that bandwidth (m < 1) the link in series is the bound. Its bytes never cross the off-chip interface. The memory
    is main memory, or the unit's own near memory (``InterfaceSpec.memory``; the interface's ``dram`` is then
    that memory)."""

    name = "near_memory"

    def access(self, iface: Interface, lines: np.ndarray, is_write: bool, now_ps: int,
               partial: np.ndarray | None = None) -> int:
        if not iface.spec.memory:  # in main memory (a near memory of its own is not main memory's traffic);
            # lines another unit keeps in its near memory are that memory's traffic, over its own interface
            iface.offchip_exempt_bytes += iface.lines_at_home(lines) * iface.line_bytes
        return super().access(iface, lines, is_write, now_ps, partial)

    def bus_speedup(self, iface: Interface) -> float:
        return max(1.0, iface.spec.bandwidth_bytes_per_s / iface.home.peak_bandwidth_bytes_per_s)


class PcieCoupling(Coupling):
    """A device with its own memory: inputs copied in and outputs out over the link by the driver's DMA; the
    device's accesses cost only its memory's bandwidth, if configured, and no energy (no cited figure prices
    that memory)."""

    name = "pcie"
    before_offload = "flush"
    after_offload = "all"
    copies = True

    def access(self, iface: Interface, lines: np.ndarray, is_write: bool, now_ps: int,
               partial: np.ndarray | None = None) -> int:
        if iface.device_memory is None:
            return now_ps
        return max(now_ps, iface.device_memory.transfer(len(lines) * iface.line_bytes, now_ps, iface.name))


class ThroughCachesCoupling(Coupling):
    """Accesses enter the host caches at the last level, after the link (the DRAM work they cause is the
    unit's). A line the unit writes whole is allocated in the last level without a read of memory; a line it
    writes in part is read first where the caches lack it, as a core's store is."""

    entry = LAST_LEVEL

    def access(self, iface: Interface, lines: np.ndarray, is_write: bool, now_ps: int,
               partial: np.ndarray | None = None) -> int:
        link_done = iface.link.transfer(len(lines) * iface.line_bytes, now_ps, iface.name)
        return max(link_done, iface.through_caches(lines, is_write, now_ps, iface.llc_level, now_ps,
                                                   whole_lines=True, partial=partial))


class LlcCoupling(ThroughCachesCoupling):
    """On the L2-LLC bus: the host evicts dirty lines to the LLC before, and drops the levels above it after."""

    name = "llc"
    before_offload = "evict_llc"
    after_offload = "above_llc"


class OnDieDmaCoupling(ThroughCachesCoupling):
    """A coprocessor reached by privileged DMA calls, reading through the LLC, coherent."""

    name = "on_die_dma"


class SharedMemoryCoupling(ThroughCachesCoupling):
    """Coherent, HSA-like: no copies, no flushes, accesses through the LLC."""

    name = "shared_memory"


class InPipelineCoupling(Coupling):
    """A functional unit driven by instructions: operands from L1 after the link; the core waits for it. Its
    writes are the core's stores (a line absent from L1 is read first)."""

    name = "in_pipeline"
    core_waits = True
    entry = FIRST_LEVEL

    def access(self, iface: Interface, lines: np.ndarray, is_write: bool, now_ps: int,
               partial: np.ndarray | None = None) -> int:
        link_done = iface.link.transfer(len(lines) * iface.line_bytes, now_ps, iface.name)
        return iface.through_caches(lines, is_write, now_ps, 0, link_done)


#: the coupling strategies by name (``InterfaceSpec.coupling``)
COUPLING_STRATEGIES: dict[str, Coupling] = {c.name: c() for c in (
    DramCoupling, NearMemoryCoupling, PcieCoupling, LlcCoupling, OnDieDmaCoupling, SharedMemoryCoupling,
    InPipelineCoupling)}
