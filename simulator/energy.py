"""Energy after the run: action counts x an energy table, plus static power x time.

Components only count (flops, bytes served per cache level, DRAM commands and
bank-state time); this module prices the counts with the system spec's
energies (Accelergy's split of counting from pricing). All values in joules.
"""

from __future__ import annotations

from simulator.system import System
from simulator.config.units import PS_PER_S


def energy_breakdown_j(system: System, end_ps: int) -> dict[str, dict[str, float]]:
    """Energy by component and category, J, for a run that ended at ``end_ps``.

    host: ``dynamic`` (flops x energy_per_flop), ``static`` (static_power x time);
    each cache level: bytes it served x its energy per byte (a byte is charged once,
    at the level that served it, 001 eq. 10); memory_path: DRAM traffic bytes x the
    host-side energy per byte; dram: the DRAM model's categories (background
    active/precharge/power-down, refresh, activate/precharge, read, write); dram_interface: DRAM
    traffic bits x the off-chip interface energy per bit.
    """
    spec = system.spec
    seconds = end_ps / PS_PER_S
    core = system.host
    out: dict[str, dict[str, float]] = {
        "host": {
            "dynamic": core.flops * spec.host.energy_per_flop_j,
            "static": spec.host.static_power_w * seconds,
        }
    }
    for i, level in enumerate(spec.caches.levels):
        out[level.name] = {"access": float(core.bytes_by_level[i]) * level.energy_j_per_byte}
    dram_counts = system.dram.counters()
    traffic_bytes = dram_counts["bytes_read"] + dram_counts["bytes_written"]
    out["memory_path"] = {"access": traffic_bytes * spec.host.memory_path_energy_j_per_byte}
    out["dram"] = dict(system.dram.energy_j(end_ps))
    # near-memory accelerators move DRAM data without crossing the off-chip interface
    exempt = sum(unit.interface.offchip_exempt_bytes for unit in system.units.values())
    out["dram_interface"] = {"transfer": (traffic_bytes - exempt) * 8 * spec.dram.interface_energy_j_per_bit}
    for name, unit in system.units.items():
        out[name] = unit.energy_j(end_ps)
    return out
