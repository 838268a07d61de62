"""Energy after the run: action counts x an energy table, per component, category and requester.

Components only count (flops; cache reads, writes, fills, write-backs, probes;
DRAM commands and bank-state time; link and interface bytes), each count also
split by the requester that caused it: ``host`` (the core's own trace rows),
an accelerator's unit name (its data path), ``<unit>.driver`` (the host-side
coherence work and the DMA copies of its offloads) and ``background`` (DRAM
energy that time alone causes: background and refresh). This module prices
the counts with the system spec's energies (Accelergy's split of counting from
pricing). Energies in J, counts in the unit ``ACTION_UNITS`` names.

Two models (``energy.model`` of the system spec):

- ``actions``: every action of every requester at its price. A cache level
  charges ``read_energy_j`` per demand load reaching it (hit or miss) and,
  with a stream prefetcher, per prefetch lookup reaching it (``prefetch_read``),
  ``write_energy_j`` per demand store, ``line_energy_j`` per fill, write-back
  received, write-back sent and maintenance probe; evictions, invalidations
  and allocations are counted but cost nothing of their own (the fill or probe
  that causes them is priced).
- ``inclusive_per_byte``: 001's roofline costs (001 eq. 10): each byte the host
  core uses is charged once, ``energy_j_per_byte`` of the level that served it;
  the caches' other work (fills, write-backs, probes, accelerator accesses) is
  free. The roofline comparison with 001's published costs needs it.

Both models price DRAM (IDD-based energies per command and per unit of time;
main memory as ``dram``, each near memory under its own name, with its own
``interface`` energy per byte it moves), the memory path and the off-chip
interface per main-memory byte (a near memory's traffic crosses neither), and
the accelerators the same way. ``check_conservation`` verifies every run's account.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from simulator.accel.base import counter_unit
from simulator.memory.cache import COUNTER_NAMES, DRAM_NAME
from simulator.memory.dram import ATTRIBUTED_COUNTERS
from simulator.memory.power import command_energies_j, priced
from simulator.config.schema import BACKGROUND_REQUESTER, dram_parameters, memory_parameters
from simulator.system import System
from simulator.units import PS_PER_S

#: the requester of energy no request causes (DRAM background and refresh)
BACKGROUND = BACKGROUND_REQUESTER

#: cache energy categories under ``actions``: category -> (counter, price field of CacheLevelSpec)
CACHE_PRICES: dict[str, tuple[str, str]] = {
    "read": ("loads", "read_energy_j"),
    "write": ("stores", "write_energy_j"),
    "fill": ("fills", "line_energy_j"),
    "writeback_in": ("writebacks_in", "line_energy_j"),
    "writeback_out": ("writebacks_out", "line_energy_j"),
    "probe": ("probes", "line_energy_j"),
}
#: cache counters reported as actions (hits and misses are outcomes of reads and writes, not actions)
CACHE_ACTIONS = tuple(c for c in COUNTER_NAMES if c not in ("hits", "misses"))
#: DRAM categories priced per command, and the counter each is priced on
DRAM_COMMAND_PRICES = {"activate_precharge": "activates", "read": "reads", "write": "writes"}

#: units of the actions other components than accelerators count (an accelerator's: ``counter_unit``)
ACTION_UNITS = {**{c: "lines" for c in COUNTER_NAMES}, "probes": "lookups", "prefetch_reads": "lines",
                "reads": "lines", "writes": "lines",
                "activates": "commands", "refreshes": "commands", "flops": "flop", "bytes": "B", "link_bytes": "B"}


def action_unit(action: str) -> str:
    """The unit an action is counted in (lines, lookups, commands, flop, B, or an accelerator counter's)."""
    return ACTION_UNITS.get(action) or counter_unit(action)

#: relative tolerance of the conservation sums (float sums in a different order)
_REL_TOL = 1e-9


class ConservationError(RuntimeError):
    """A run's counts or energies do not add up: an internal error of the simulator, never a user's."""


@dataclass
class EnergyAccount:
    """A run's actions and energy: component -> requester -> action (count) / category (J)."""

    model: str
    actions: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    energy_j: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: component -> category -> J computed from the component's total counts (not summed over requesters)
    totals_j: dict[str, dict[str, float]] = field(default_factory=dict)

    def count(self, component: str, requester: str, action: str, value: float) -> None:
        """Record ``value`` of ``action`` by ``requester`` at ``component`` (a zero is kept, for the table)."""
        self.actions.setdefault(component, {}).setdefault(requester, {})[action] = float(value)

    def charge(self, component: str, requester: str, category: str, joules: float) -> None:
        """Add ``joules`` of ``category`` to ``component`` for ``requester``."""
        cats = self.energy_j.setdefault(component, {}).setdefault(requester, {})
        cats[category] = cats.get(category, 0.0) + float(joules)

    def by_component(self) -> dict[str, dict[str, float]]:
        """component -> category -> J, summed over requesters (every component and category of the totals)."""
        out: dict[str, dict[str, float]] = {}
        for component, cats in self.totals_j.items():
            out[component] = {cat: 0.0 for cat in cats}
            for per_req in self.energy_j.get(component, {}).values():
                for cat, j in per_req.items():
                    out[component][cat] = out[component].get(cat, 0.0) + j
        return out

    def by_requester(self) -> dict[str, float]:
        """requester -> J over every component."""
        out: dict[str, float] = {}
        for per_component in self.energy_j.values():
            for who, cats in per_component.items():
                out[who] = out.get(who, 0.0) + sum(cats.values())
        return out


def _host(system: System, end_ps: int, acc: EnergyAccount) -> None:
    spec = system.spec.host
    flops = system.host_flops()
    static_j = spec.static_power_w * spec.cores * end_ps / PS_PER_S  # static_power_w is per core
    acc.count("host", "host", "flops", flops)
    acc.charge("host", "host", "dynamic", flops * spec.energy_per_flop_j)
    acc.charge("host", "host", "static", static_j)
    acc.totals_j["host"] = {"dynamic": flops * spec.energy_per_flop_j, "static": static_j}


def prefetch_reads(counters: dict[str, dict[str, int]], names: list[str], prefetch_level: int) -> dict[str, int]:
    """Prefetch lookups reaching each cache level (hit or miss, as a demand load is counted), by level name: a
    prefetch job looks its line up in the levels below ``prefetch_level`` in turn until one holds it (DRAM
    else), and fills every level from the one above that up to ``prefetch_level``, each counting a prefetch;
    so a job reached a level below ``prefetch_level`` exactly when it filled the level above, and a level at or
    above ``prefetch_level`` is reached by none."""
    return {name: (counters[names[i - 1]]["prefetches"] if i > prefetch_level else 0) for i, name in enumerate(names)}


def _caches(system: System, acc: EnergyAccount) -> None:
    levels = system.spec.caches.levels
    names = [level.name for level in levels]
    served = system.host_bytes_by_level()
    totals = system.caches.counters()
    per_requester = system.caches.counters_by_requester()
    actions, prices = list(CACHE_ACTIONS), dict(CACHE_PRICES)
    prefetcher = system.spec.caches.prefetcher
    if prefetcher.enabled:  # its lookups in a level are counted and priced as reads, as a demand load's are
        pf_level = names.index(prefetcher.level)
        for table in (totals, *per_requester.values()):
            for name, lookups in prefetch_reads(table, names, pf_level).items():
                table[name]["prefetch_reads"] = lookups
        actions.append("prefetch_reads")
        prices["prefetch_read"] = ("prefetch_reads", "read_energy_j")
    for i, level in enumerate(levels):
        for who, counters in per_requester.items():
            for action in actions:
                acc.count(level.name, who, action, counters[level.name][action])
        if acc.model == "actions":
            acc.totals_j[level.name] = {cat: totals[level.name][counter] * getattr(level, price)
                                        for cat, (counter, price) in prices.items()}
            for who, counters in per_requester.items():
                for cat, (counter, price) in prices.items():
                    acc.charge(level.name, who, cat, counters[level.name][counter] * getattr(level, price))
        else:
            served_bytes = float(served[i])
            acc.count(level.name, "host", "bytes", served_bytes)
            acc.totals_j[level.name] = {"access": served_bytes * level.energy_j_per_byte}
            acc.charge(level.name, "host", "access", served_bytes * level.energy_j_per_byte)


def _dram(system: System, end_ps: int, acc: EnergyAccount) -> None:
    """DRAM categories of main memory (component ``dram``) and of each near memory (component named
    as the memory, with its own interface priced on every byte it serves)."""
    for name, memory in system.near_memories.items():
        spec = system.spec.near_memories[name]
        moved = _memory(name, memory, memory_parameters(spec, system.spec.caches.line_bytes), end_ps, acc)
        bit_j = spec.interface_energy_j_per_bit  # its own interface (e.g. a stack's), not main memory's
        acc.totals_j[name]["interface"] = sum(moved.values()) * 8 * bit_j
        for who, nbytes in moved.items():
            acc.count(name, who, "bytes", nbytes)
            acc.charge(name, who, "interface", nbytes * 8 * bit_j)
    _memory("dram", system.dram, dram_parameters(system.spec), end_ps, acc)


def bytes_moved(memory, line_bytes: int) -> dict[str, int]:
    """The bytes each requester moved over ``memory``'s bus (its reads and writes), B."""
    return {who: (c["reads"] + c["writes"]) * line_bytes for who, c in memory.counters_by_requester().items()}


def memory_bytes(system: System) -> tuple[dict[str, int], dict[str, int]]:
    """The bytes each requester moved over main memory's bus, and over every memory's (main and near), B."""
    line_bytes = system.spec.caches.line_bytes
    main = bytes_moved(system.dram, line_bytes)
    everywhere: dict[str, int] = {}
    for moved in [*(bytes_moved(m, line_bytes) for m in system.near_memories.values()), main]:
        for who, nbytes in moved.items():
            everywhere[who] = everywhere.get(who, 0) + nbytes
    return main, everywhere


def _memory(component: str, dram, parameters, end_ps: int, acc: EnergyAccount) -> dict[str, int]:
    """One memory's categories by requester (commands) and background; the bytes each requester moved, B."""
    total = dram.energy_j(end_ps)
    acc.totals_j[component] = dict(total)
    per_command = command_energies_j(*parameters)
    for who, counts in dram.counters_by_requester().items():
        for action in ATTRIBUTED_COUNTERS:
            acc.count(component, who, action, counts[action])
        for cat, counter in DRAM_COMMAND_PRICES.items():
            acc.charge(component, who, cat, priced(per_command[cat], counts[counter]))
    acc.count(component, BACKGROUND, "refreshes", dram.background_times_ps(end_ps)["refreshes"])
    for cat, joules in total.items():
        if cat not in DRAM_COMMAND_PRICES:
            acc.charge(component, BACKGROUND, cat, joules)
    return bytes_moved(dram, parameters[2].line_bytes)


def path_exempt_bytes(system: System) -> dict[str, int]:
    """The bytes each requester moved by DMA at a memory controller or inside a memory, past the host's memory
    path (``Interface.path_exempt_bytes`` of every unit), B."""
    exempt: dict[str, int] = {}
    for unit in system.units.values():
        for who, nbytes in unit.interface.path_exempt_bytes.items():
            exempt[who] = exempt.get(who, 0) + nbytes
    return exempt


def _per_dram_byte(system: System, main: dict[str, int], everywhere: dict[str, int], acc: EnergyAccount) -> None:
    """The memory path and main memory's off-chip interface, priced per DRAM byte of each requester: the memory
    path on the bytes of any memory that cross it (the caches' misses and write-backs, not DMA that joins a
    memory controller or works inside a memory), the interface on main memory's bytes that leave the chip (not a
    near-memory unit's)."""
    spec = system.spec
    offchip_exempt = {name: unit.interface.offchip_exempt_bytes for name, unit in system.units.items()}
    path_exempt = path_exempt_bytes(system)
    path_j = spec.host.memory_path_energy_j_per_byte
    bit_j = spec.dram.interface_energy_j_per_bit
    acc.totals_j["memory_path"] = {"access": (sum(everywhere.values()) - sum(path_exempt.values())) * path_j}
    acc.totals_j["dram_interface"] = {"transfer": (sum(main.values()) - sum(offchip_exempt.values())) * 8 * bit_j}
    for who, nbytes in everywhere.items():
        on_path = nbytes - path_exempt.get(who, 0)
        acc.count("memory_path", who, "bytes", on_path)
        acc.charge("memory_path", who, "access", on_path * path_j)
    for who, nbytes in main.items():
        crossing = nbytes - offchip_exempt.get(who, 0)  # near-memory units reach DRAM without the off-chip interface
        acc.count("dram_interface", who, "bytes", crossing)
        acc.charge("dram_interface", who, "transfer", crossing * 8 * bit_j)


def _units(system: System, end_ps: int, acc: EnergyAccount) -> None:
    for name, unit in system.units.items():
        cats = unit.energy_j(end_ps)
        acc.totals_j[name] = dict(cats)
        for counter, value in sorted(unit.counts.items()):
            acc.count(name, name, counter, value)
        for cat, joules in cats.items():
            if cat != "link":
                acc.charge(name, name, cat, joules)
        bit_j = unit.interface.spec.energy_j_per_bit
        for who, nbytes in unit.interface.link_bytes_by_requester().items():
            acc.count(name, who, "link_bytes", nbytes)
            acc.charge(name, who, "link", nbytes * 8 * bit_j)


def energy_account(system: System, end_ps: int) -> EnergyAccount:
    """Every component's actions and energy by requester for a run that ended at ``end_ps``, checked by
    ``check_conservation`` (raises ConservationError)."""
    acc = EnergyAccount(model=system.spec.energy.model)
    _host(system, end_ps, acc)
    _caches(system, acc)
    _dram(system, end_ps, acc)
    _per_dram_byte(system, *memory_bytes(system), acc)
    _units(system, end_ps, acc)
    check_conservation(system, acc)
    return acc


def energy_breakdown_j(system: System, end_ps: int) -> dict[str, dict[str, float]]:
    """Energy by component and category, J (``energy_account(...).by_component()``)."""
    return energy_account(system, end_ps).by_component()


def _close(a: float, b: float) -> bool:
    # NaN on both sides: an energy unknown either way (a memory without declared currents, simulator.memory.power;
    # a crypto unit without declared energies)
    return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=1e-18) or (math.isnan(a) and math.isnan(b))


def _check_lines(system: System) -> list[str]:
    """Lines in = lines out at every level, and per-requester counts that add up to the totals."""
    problems = []
    totals = system.caches.counters()
    resident = system.caches.resident_lines()
    per_requester = system.caches.counters_by_requester()
    for level in system.spec.caches.levels:
        c = totals[level.name]
        held = c["allocations"] - c["evictions"] - c["invalidations"]
        if held != resident[level.name]:
            problems.append(f"{level.name}: {c['allocations']} lines in - {c['evictions']} evicted - "
                            f"{c['invalidations']} invalidated = {held}, but it holds {resident[level.name]}")
    for name in [*(lv.name for lv in system.spec.caches.levels), DRAM_NAME]:
        for counter, value in totals[name].items():
            split = sum(r[name][counter] for r in per_requester.values())
            if split != value:
                problems.append(f"{name}.{counter}: {value} in total, {split} summed over requesters")
    host_dram = {"reads": 0, "writes": 0}  # the host's lines, wherever they live (main or a near memory)
    for name, memory in {"dram": system.dram, **system.near_memories}.items():
        served = memory.counters()
        split = memory.counters_by_requester()
        for counter in ATTRIBUTED_COUNTERS:
            total = sum(r[counter] for r in split.values())
            if total != served[counter]:
                problems.append(f"{name}.{counter}: {served[counter]} in total, {total} summed over requesters")
        for key in host_dram:
            host_dram[key] += split.get("host", {}).get(key, 0)
    host_cache = per_requester.get("host", {}).get(DRAM_NAME, {"dram_reads": 0, "dram_writes": 0})
    for cache_key, dram_key in (("dram_reads", "reads"), ("dram_writes", "writes")):
        if host_cache[cache_key] != host_dram[dram_key]:
            problems.append(f"host: the caches sent {host_cache[cache_key]} lines to memory ({cache_key}), "
                            f"the memories served {host_dram[dram_key]} ({dram_key})")
    return problems


def _check_exempt_bytes(system: System) -> list[str]:
    """Each unit's main-memory bytes that cross no off-chip interface (``Interface.offchip_exempt_bytes``, a
    near-memory unit's) lie between none and all the main-memory bytes the DRAM served for it; each requester's
    bytes that bypass the memory path (``path_exempt_bytes``), between none and all the bytes every memory (main
    and near) served for it."""
    main, everywhere = memory_bytes(system)
    problems = []
    for name, unit in system.units.items():
        exempt = unit.interface.offchip_exempt_bytes
        if not 0 <= exempt <= main.get(name, 0):
            problems.append(f"{name}: {exempt} B exempt from the off-chip interface, of {main.get(name, 0)} B it "
                            "moved in main memory")
    for who, exempt in sorted(path_exempt_bytes(system).items()):
        if not 0 <= exempt <= everywhere.get(who, 0):
            problems.append(f"{who}: {exempt} B past the memory path, of {everywhere.get(who, 0)} B it moved in "
                            "memory")
    return problems


def check_conservation(system: System, acc: EnergyAccount) -> None:
    """Raise ConservationError unless lines in = lines out at every cache level, every split by
    requester adds up to its total, the bytes exempt from the off-chip interface or the memory path are among
    those their requester moved, actions x energies give each component's energy, no energy is below zero, and
    the categories and components add up to the total."""
    problems = _check_lines(system) + _check_exempt_bytes(system)
    summed = acc.by_component()
    negative = sorted(f"{component}.{cat} ({joules!r} J)" for component, cats in summed.items()
                      for cat, joules in cats.items() if joules < 0)  # (an unknown energy, NaN, is not below 0)
    if negative:
        problems.append(f"energy below zero: {', '.join(negative)}")
    for component, cats in acc.totals_j.items():
        for cat, joules in cats.items():
            if not _close(summed[component].get(cat, 0.0), joules):
                problems.append(f"energy {component}.{cat}: {joules!r} J from its total counts, "
                                f"{summed[component].get(cat, 0.0)!r} J summed over requesters")
        extra = set(summed[component]) - set(cats)
        if extra:
            problems.append(f"energy {component}: categories {sorted(extra)} charged but not priced")
    total = sum(sum(c.values()) for c in acc.totals_j.values())
    if not _close(sum(acc.by_requester().values()), total):
        problems.append(f"energy: {total!r} J by component, {sum(acc.by_requester().values())!r} J by requester")
    if problems:
        raise ConservationError("conservation violated (an internal error of the simulator): " + "; ".join(problems))
