"""Named ranges of config parameters that keep a simulation finite and its wall time reasonable.

Each range says why its limits are where they are; ``param(within=RANGE)`` gives
a field the range's bounds and adds the reason to the field's description (and
so to ``offsim keys``). The limits come from engineering sense, not from any
one machine: the widest real parts sit well inside them, and the absurd values
outside them would overflow the integer-picosecond time base (``2**63`` ps is
some 107 days) or let a run spin for hours on one row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Range:
    """Closed bounds ``low`` .. ``high`` in the field's SI unit (or plain number), and the reason."""

    low: float
    high: float
    why: str


CLOCK_HZ = Range(1e6, 100e9, "1 MHz..100 GHz: no processor or DRAM clock runs outside this, and a cycle stays "
                             "10 ps..1 us of the picosecond time base")
DRAM_TCK_S = Range(10e-12, 1e-6, "10 ps..1 us: a DRAM clock of 1 MHz..100 GHz, as every other clock")
#: DRAM timings in tCK: JEDEC's longest (DDR5 tRFC, some 1,700 tCK) is far below it; at the longest
#: tCK one access still takes under 66 ms.
DRAM_TCK_COUNT = Range(0, 65_535, "at most 65,535 tCK: JEDEC's longest timing (DDR5 tRFC) is some 1,700 tCK")
DRAM_TREFI_S = Range(1e-6, 1.0, "1 us..1 s: JEDEC's all-bank interval is 1.95-7.8 us; each refresh is one step "
                                "of the DRAM model, so a shorter one would make long runs crawl")
LATENCY_S = Range(0.0, 10e-3, "at most 10 ms: links and memory paths take ns to us; 10 ms is already a disk seek")
BANDWIDTH_BYTES_PER_S = Range(1e6, 100e12, "1 MB/s..100 TB/s: from a slow serial link to beyond any on-chip port")
#: Fixed costs in cycles (driver calls, set-up, per-block work); shipped platforms need up to 4e8.
CYCLES = Range(0.0, 1e10, "at most 1e10 cycles (10 s at 1 GHz): beyond any driver call or kernel set-up")
#: Arithmetic rates of a whole device or host (a model's measured or tabled peak): a clock of CLOCK_HZ times
#: PER_CYCLE_RATE flop a cycle, widened at the top for a device of many such units (the largest GPUs reach
#: some 1e15 flop/s); beyond it a time per flop would underflow the models' arithmetic.
FLOP_RATE = Range(1e3, 1e18, "1 kflop/s..1 Eflop/s: from a microcontroller to beyond any one device")
PER_CYCLE_RATE = Range(1e-3, 1e4, "1e-3..1e4 per cycle: from a unit busy a thousand cycles per operation to a "
                                  "wide vector machine")
SPEEDUP = Range(1e-3, 1e6, "1e-3..1e6: a unit a thousand times slower to a million times faster than the host")
UTILISATION = Range(1e-3, 1.0, "1e-3..1: a unit that sustains less than 0.1 % of its peak is not a model of one")
#: Bytes an analytical model prices in one piece (a LogCA granularity): a 64-bit address space holds no more,
#: and the models' powers of it stay finite numbers.
DATA_BYTES = Range(0.0, 2.0**64, "at most 2**64 B (16 EiB): a 64-bit address space holds no more")
#: Points along one dimension of a stencil's grid, and its time steps: a dimension of 2**31 4-byte words is 8 GiB,
#: beyond any GPU's memory, and a run's flop count (at most 2**124 flop per point) stays a finite number.
STENCIL_EXTENT = Range(1, 2**31, "2**31: beyond any grid a GPU holds or any run's steps")
#: Replicated hardware (cores, engines, PE rows, lanes, miss buffers, ways): sizes of the simulator's arrays.
COUNT = Range(1, 65_536, "at most 65,536: beyond any real part, and the simulator sizes arrays by it")

#: Energies, powers, currents and voltages: no declaration may leave them unbounded, or a huge value would
#: price a run at an infinite energy. ``param`` applies these by dimension where a field names no range.
ENERGY_PER_ACTION = Range(0.0, 1e-6, "at most 1 uJ per flop, byte or bit: real costs are fJ to nJ")
ENERGY_J = Range(0.0, 1e-3, "at most 1 mJ per event: real costs of one access or command are pJ to nJ")
POWER_W = Range(0.0, 1e6, "at most 1 MW: a component draws mW to kW")
#: A usable-power cap above constant power (001's delta_pi): the model divides energies by it, so a cap near 0 W
#: would stretch a run's time without bound.
POWER_CAP_W = Range(1e-3, 1e6, "1 mW..1 MW: a cap below a milliwatt holds no processor, and the time the model "
                               "divides by it would grow without bound")
CURRENT_A = Range(0.0, 100.0, "at most 100 A: a memory device or stack draws mA to a few A")
VOLTAGE_V = Range(0.0, 10.0, "at most 10 V: logic and DRAM supplies are 0.5-3.3 V")
BY_DIMENSION = {"energy_per_flop": ENERGY_PER_ACTION, "energy_per_byte": ENERGY_PER_ACTION,
                "energy_per_bit": ENERGY_PER_ACTION, "energy": ENERGY_J, "power": POWER_W, "current": CURRENT_A,
                "voltage": VOLTAGE_V}
