"""Spec of a systolic GEMM array (kind ``systolic``): R x C MAC processing elements, SCALE-Sim's dataflows.

The array is ``rows`` x ``cols`` processing elements clocked at ``frequency_hz``,
each doing one multiply-accumulate per cycle on words of ``word_bytes``. Its
``dataflow`` keeps one operand in the PEs (SCALE-Sim's three: A. Samajdar et al.,
"SCALE-Sim: Systolic CNN Accelerator Simulator", arXiv:1811.02883): ``os``
output stationary, ``ws`` weight stationary, ``is`` input stationary. Three
double-buffered SRAMs hold the input (A), weight (B) and output (C) words;
``simulator.accel.systolic_dataflow`` has the fold arithmetic. Energies: per MAC, per SRAM word read or written by the
array, and per word moved between DRAM and the SRAMs on the array's side (the
DRAM device's own energy is the DRAM model's); ``static_power_w`` is drawn while
busy, ``idle_power_w`` while idle.
"""

from __future__ import annotations

from dataclasses import dataclass

from simulator.config.accelerators import AcceleratorSpec, register_kind
from simulator.config.bounds import CLOCK_HZ, COUNT
from simulator.errors import FieldError
from simulator.config.fields import param

#: The dataflows, by which operand stays in the PEs: output, weight (B), input (A).
DATAFLOWS = ("os", "ws", "is")
#: An SRAM is managed in 100 sets (SCALE-Sim's read buffer); it needs at least one word per set.
SRAM_SETS = 100


@register_kind("systolic")
@dataclass(frozen=True)
class SystolicSpec(AcceleratorSpec):
    """A systolic array: PEs, dataflow, clock, word size, SRAMs, energies and power."""

    frequency_hz: float = param(unit="frequency", positive=True, within=CLOCK_HZ, doc="array clock")
    rows: int = param(min=1, within=COUNT, doc="rows of processing elements (R)")
    cols: int = param(min=1, within=COUNT, doc="columns of processing elements (C)")
    dataflow: str = param(choices=DATAFLOWS, doc="operand kept in the PEs: os (output), ws (weight), is (input)")
    input_sram_bytes: int = param(unit="size", positive=True, doc="SRAM of the input matrix A (ifmap), both halves")
    weight_sram_bytes: int = param(unit="size", positive=True, doc="SRAM of the weight matrix B (filter), both halves")
    output_sram_bytes: int = param(unit="size", positive=True, doc="SRAM of the output matrix C (ofmap), both halves")
    word_bytes: int = param(2, min=1, max=64, doc="bytes of one matrix element (word)")
    energy_per_mac_j: float = param(0.0, unit="energy", min=0.0, doc="dynamic energy of one multiply-accumulate")
    sram_energy_j_per_word: float = param(0.0, unit="energy", min=0.0,
                                          doc="energy per word the array reads from or writes to an SRAM")
    dram_energy_j_per_word: float = param(0.0, unit="energy", min=0.0,
                                          doc="array-side energy per word moved between DRAM and the SRAMs, "
                                              "counted over the whole cache lines the coupling moves (DMA and "
                                              "SRAM fill; the DRAM device is priced by the DRAM model)")
    static_power_w: float = param(0.0, unit="power", min=0.0, doc="power while busy beyond the dynamic energy")
    idle_power_w: float = param(0.0, unit="power", min=0.0, doc="power while idle (leakage)")

    def __post_init__(self) -> None:
        for name in ("input_sram_bytes", "weight_sram_bytes", "output_sram_bytes"):
            if getattr(self, name) // self.word_bytes < SRAM_SETS:
                raise FieldError(name, f"{getattr(self, name)} B; expected at least {SRAM_SETS} words of "
                                 f"{self.word_bytes} B (the SRAM is managed in {SRAM_SETS} sets)", ("word_bytes",))

    def sram_words(self, which: str) -> int:
        """Words the ``which`` SRAM (input, weight or output) holds."""
        return getattr(self, f"{which}_sram_bytes") // self.word_bytes
