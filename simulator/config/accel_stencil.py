"""Spec of the stencil engine: n units x lanes with a scratchpad each, k tiles in flight (004 app. A, B).

The engine is the GPU of 004's models in miniature: ``units`` compute units (004's
SMs), each with ``lanes`` vector lanes (n_V) and ``scratchpad_bytes`` of
local memory (M_SM), holding up to ``max_tiles_in_flight`` tiles (MTB_SM) whose
copies in and out overlap the computation of another tile. A point update costs
``flops_per_point / flops_per_lane_per_cycle`` cycles on a lane; a barrier costs
``sync_cycles``. Energies follow 004 eqs. B.2-B.6: per operation (add, multiply,
other), per scratchpad word (e_sr, u_sr words per point), per global word copied
in or out (e_gs), and static power while busy.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.bounds import CLOCK_HZ, COUNT, CYCLES, PER_CYCLE_RATE
from simulator.config.fields import param


@register_kind("stencil")
@dataclass(frozen=True)
class StencilEngineSpec(AcceleratorSpec):
    """A stencil engine: units, lanes, clock, scratchpad, tiles in flight, energies and power."""

    frequency_hz: float = param(unit="frequency", positive=True, within=CLOCK_HZ, doc="engine clock")
    scratchpad_bytes: int = param(unit="size", positive=True, doc="scratchpad (shared memory) per unit")
    static_power_w: float = param(unit="power", min=0.0, doc="power while busy beyond the dynamic energy (P_stat)")
    idle_power_w: float = param(unit="power", min=0.0, doc="power while idle")
    units: int = param(1, min=1, within=COUNT, doc="compute units (SMs), each running its own tiles")
    lanes: int = param(32, min=1, within=COUNT,
                       doc="vector lanes per unit (n_V): points updated per cycle step of a row")
    max_tiles_in_flight: int = param(2, min=1, within=COUNT,
                                     doc="tiles resident per unit (k at most), bounded by the scratchpad")
    flops_per_lane_per_cycle: float = param(2.0, positive=True, within=PER_CYCLE_RATE,
                                            doc="flops one lane retires per cycle")
    sync_cycles: float = param(4.0, min=0.0, within=CYCLES, doc="cycles of one barrier (tau_sync)")
    word_bytes: int = param(4, min=1, max=64, doc="bytes of one grid value")
    energy_fadd_j: float = param(0.0, unit="energy", min=0.0, doc="energy per add (e_fadd)")
    energy_fmul_j: float = param(0.0, unit="energy", min=0.0, doc="energy per multiply (e_fmul)")
    energy_fother_j: float = param(0.0, unit="energy", min=0.0, doc="energy per other operation (sqrt, divide)")
    energy_scratchpad_j_per_word: float = param(0.0, unit="energy", min=0.0,
                                                doc="energy per scratchpad-to-register word (e_sr)")
    energy_global_j_per_word: float = param(0.0, unit="energy", min=0.0,
                                            doc="energy per word copied between memory and scratchpad (e_gs)")

    @property
    def scratchpad_words(self) -> int:
        """Grid values one unit's scratchpad holds (words of ``word_bytes``)."""
        return self.scratchpad_bytes // self.word_bytes
