"""DRAM parameters declared once: every timing and current of every standard, in one table.

``STANDARDS`` declares the DRAM standards (their JEDEC document and which features they have);
``PARAMETERS`` declares each device parameter once: its config key, unit, lower bound, the
standards that have it (and whether each requires it), its description and the source of its
meaning. That table drives

* the config schema (``simulator.config.schema`` builds the ``dram.timing`` and
  ``dram.currents`` sections from it, so ``offsim keys dram`` lists it),
* validation (:func:`check_standard`, and the cross-key rules of ``DramTiming`` and
  ``DramCurrents``, which raise ``FieldError`` naming the parameter they refuse and the others
  they read; a ``name`` function given to a check spells those names as its caller's keys),
* the model's values (``DramTiming``: counts in tCK, tCK and tREFI in ps; ``DramCurrents``: mA and V),
* the compiled kernel's parameter vector: its layout (``KERNEL_SLOTS``, whose index constants
  ``simulator.memory.dram_kernel`` takes from here) and its packing (:func:`pack_timing_ps`).

No parameter has a default: a preset gives every parameter its standard requires (the shipped
presets cite their datasheets).
"""

from __future__ import annotations

import numbers
import zlib
from dataclasses import dataclass, field, fields, make_dataclass
from typing import TYPE_CHECKING, Any, Callable

from simulator.errors import FieldError
from simulator.units import format_quantity, is_power_of_two

if TYPE_CHECKING:  # numpy only to pack the kernel's vector: the config schema is read without it
    import numpy as np

MAPPING_FIELDS = ("row", "rank", "bank", "channel", "column")
PAGE_POLICIES = ("open", "open_adaptive", "closed")
#: Controllers (``simulator.memory.dram.DramSystem``): in arrival order, first-ready within blocks of
#: the queue (``dram_kernel.frfcfs_order``), or ready-first over the whole queue (``dram_ready_first``).
SCHEDULERS = ("in_order", "frfcfs", "ready_first")
#: Refresh schedules of the ranks of a channel (``first_refresh_ps``): every rank at k x tREFI, or the
#: ranks spread evenly over tREFI (DRAMSim3's ``RANK_LEVEL_STAGGERED``).
REFRESH_POLICIES = ("simultaneous", "staggered")
#: What one refresh command covers (``refresh_sets``): every bank of the rank (REF / REFab, the rank
#: blocked for tRFC), the same bank of every bank group (DDR5's REFsb: banks of one index within their
#: groups blocked for tRFCsb, the others working) or one bank (HBM3's REFpb, blocked for tRFCpb). A standard
#: lists the modes it has.
REFRESH_MODES = ("all_bank", "same_bank", "per_bank")
#: Longest timing the DRAM model takes, ps: 2**62, so sums of a few timings stay within int64.
MAX_TIMING_PS = 2**62


@dataclass(frozen=True)
class DramStandard:
    """One DRAM standard: its name in configs, its JEDEC document, and the features the model
    honours for it. bank_groups: banks form groups, column-to-column, ACT-to-ACT and
    write-to-read spacings come in a short (_S, other group) and a long (_L, same group) form.
    vpp: a second supply (VPP, wordline boost) whose IPP currents add to the energy.
    ranks: a channel may hold several ranks (an HBM channel is one die stack, one rank).
    refresh_modes: the ``REFRESH_MODES`` it has. bankwise_standby: IDD3N is the standby current
    with every bank open and an open bank adds its share only (``power.active_standby_ma``).
    beats_per_tck: data beats per clock cycle (2, double data rate; 4 where the data strobe runs at
    twice the command clock). multi_burst_lines: a cache line may take several bursts of one bank
    and row (a narrow pseudo-channel), back to back on the data bus, its bank group held tCCD_L per burst
    (``dram_kernel``). banks_per_refresh: banks one per-bank
    refresh covers (LPDDR5 refreshes a pair)."""

    name: str
    source: str
    bank_groups: bool
    vpp: bool
    ranks: bool
    refresh_modes: tuple[str, ...] = ("all_bank",)
    bankwise_standby: bool = False
    beats_per_tck: int = 2
    multi_burst_lines: bool = False
    banks_per_refresh: int = 1


STANDARDS: dict[str, DramStandard] = {s.name: s for s in (
    DramStandard("ddr3", "JEDEC JESD79-3F DDR3 SDRAM", bank_groups=False, vpp=False, ranks=True),
    DramStandard("ddr4", "JEDEC JESD79-4B DDR4 SDRAM", bank_groups=True, vpp=True, ranks=True),
    DramStandard("hbm2", "JEDEC JESD235A High Bandwidth Memory (HBM2), legacy (128-bit channel) mode",
                 bank_groups=True, vpp=False, ranks=False),
    # HBM2E (JESD235C/D: HBM2 at up to 3.2-3.6 Gb/s a pin, 16 Gb dies, 8- and 12-high stacks) keeps HBM2's
    # commands, bank groups and timing parameters. Its stacks run in pseudo-channel mode, each 64-bit half of
    # a channel with its own banks and data bus, so the model's channel is one pseudo-channel and a 32 B BL4
    # burst is half a 64 B line (hbm2 here is legacy mode: a 128-bit channel, a line one burst). It has
    # JESD235's single-bank refresh (REFSB, one bank blocked for tRFCSB) as per_bank, and no currents.
    DramStandard("hbm2e", "JEDEC JESD235C/D High Bandwidth Memory (HBM2E), a channel being one 64-bit "
                 "pseudo-channel", bank_groups=True, vpp=False, ranks=False, refresh_modes=("all_bank", "per_bank"),
                 multi_burst_lines=True),
    # a DDR5 DIMM channel is two independent 32-bit sub-channels, each with its own command bus, banks and
    # data bus and sharing nothing timed with the other: the model's channel is one sub-channel
    DramStandard("ddr5", "JEDEC JESD79-5 DDR5 SDRAM, a channel being one 32-bit sub-channel", bank_groups=True,
                 vpp=True, ranks=True, refresh_modes=("all_bank", "same_bank"), bankwise_standby=True),
    # an HBM3 channel is two pseudo-channels of 32 bits, each with its own banks and data bus; they share
    # the channel's command buses, which the model (timing no command bus) leaves out: its channel is one
    # pseudo-channel. Its data run at four beats per command clock; a 32 B burst is half a 64 B line.
    DramStandard("hbm3", "JEDEC JESD238 High Bandwidth Memory (HBM3), a channel being one 32-bit pseudo-channel",
                 bank_groups=True, vpp=False, ranks=False, refresh_modes=("all_bank", "per_bank"), beats_per_tck=4,
                 multi_burst_lines=True),
    # LPDDR5 in bank-group mode (4 groups of 4 banks, BL16) with the data clock WCK at four times CK: a
    # 16-bit channel moves 32 B a burst in 2 tCK, half a 64 B line; a REFpb refreshes banks k and k + 8
    DramStandard("lpddr5", "JEDEC JESD209-5B LPDDR5, bank-group mode, WCK:CK 4:1", bank_groups=True, vpp=False,
                 ranks=True, refresh_modes=("all_bank", "per_bank"), beats_per_tck=8, multi_burst_lines=True,
                 banks_per_refresh=2),
)}


@dataclass(frozen=True)
class DramParam:
    """One device parameter as a preset writes it under ``dram.<section>.<key>``.

    unit: ``tck`` (a whole number of clock cycles), ``beats`` (data beats), ``time`` (written
    with a time unit, kept in s by the config and in ps by the model), ``current`` (written with
    a current unit, kept in A by the config and in mA by the model) or ``voltage`` (V).
    standards: standard name -> True if that standard requires the parameter, False if it is
    optional there; standards not named do not have it (a config giving it is refused).
    slots: the kernel parameter-vector slots its value (in ps) fills.
    """

    key: str
    section: str
    unit: str
    standards: dict[str, bool]
    doc: str
    minimum: int = 1
    slots: tuple[str, ...] = ()

    @property
    def model_name(self) -> str:
        """Its field name in the model: ``tck_s`` -> ``tck_ps``, ``idd0_a`` -> ``idd0_ma``."""
        if self.unit == "time":
            return self.key[:-2] + "_ps"
        if self.unit == "current":
            return self.key[:-2] + "_ma"
        return self.key

    def describe(self) -> str:
        """Its description with the standards that have it, for the config reference."""
        required = [s for s, req in self.standards.items() if req]
        optional = [s for s, req in self.standards.items() if not req]
        where = "; ".join(part for part in (required and "required by " + ", ".join(required),
                                              optional and "optional in " + ", ".join(optional)) if part)
        unit = ", tCK" if self.unit == "tck" else ""  # a count of clock cycles has no SI unit to show
        return f"{self.doc}{unit} [{where}]"


_ALL = dict.fromkeys(STANDARDS, True)
#: the IDD currents: no public source gives HBM2E's, HBM3's or LPDDR5's, so they have none (energy unknown,
#: ``power``)
_IDD = {"ddr3": True, "ddr4": True, "hbm2": True, "ddr5": True}
_XP = _IDD  # power-down is not modelled without the currents it draws
_NO_GROUPS = {name: True for name, s in STANDARDS.items() if not s.bank_groups}
_GROUPS = {name: True for name, s in STANDARDS.items() if s.bank_groups}
_RANKED = {name: True for name, s in STANDARDS.items() if s.ranks}
_VPP = {"ddr4": True, "ddr5": False}  # DDR5: optional, all or none (no cited IPP of a DDR5 part is at hand)
_CKE = {"ddr3": True, "ddr4": True, "hbm2": True}  # DDR5 has no CKE pin: power-down is entered by command
_SAME_BANK = {name: True for name, s in STANDARDS.items() if "same_bank" in s.refresh_modes}
_PER_BANK = {name: True for name, s in STANDARDS.items() if "per_bank" in s.refresh_modes}

# Meanings after JESD79-3F / JESD79-4B / JESD79-5 (timing tables) and Micron TN-41-01 (currents).
PARAMETERS: tuple[DramParam, ...] = (
    DramParam("tck_s", "timing", "time", _ALL, "clock period tCK", slots=("tck",)),
    DramParam("cl", "timing", "tck", _ALL, "CAS (read) latency, read command to first data beat", slots=("cl",)),
    DramParam("cwl", "timing", "tck", _ALL, "CAS write latency, write command to first data beat", slots=("cwl",)),
    DramParam("t_rcd", "timing", "tck", _ALL, "ACT to column command, same bank", slots=("rcd",)),
    DramParam("t_rp", "timing", "tck", _ALL, "precharge period, PRE to ACT same bank", slots=("rp",)),
    DramParam("t_ras", "timing", "tck", _ALL, "ACT to PRE minimum, same bank", slots=("ras",)),
    DramParam("t_rc", "timing", "tck", _ALL, "ACT to ACT, same bank", slots=("rc",)),
    DramParam("t_rrd", "timing", "tck", _NO_GROUPS, "ACT to ACT, different banks of a rank",
              slots=("rrd_s", "rrd_l")),
    DramParam("t_rrd_s", "timing", "tck", _GROUPS, "ACT to ACT, banks of different bank groups", slots=("rrd_s",)),
    DramParam("t_rrd_l", "timing", "tck", _GROUPS, "ACT to ACT, different banks of the same bank group",
              slots=("rrd_l",)),
    DramParam("t_ccd", "timing", "tck", _NO_GROUPS, "column command to column command, same rank",
              slots=("ccd_s", "ccd_l")),
    DramParam("t_ccd_s", "timing", "tck", _GROUPS, "column to column command, different bank groups",
              slots=("ccd_s",)),
    DramParam("t_ccd_l", "timing", "tck", _GROUPS, "column to column command, same bank group", slots=("ccd_l",)),
    DramParam("t_ccd_l_wr", "timing", "tck", _SAME_BANK, "write to write command, same bank group (tCCD_L_WR)",
              slots=("ccd_l_wr",)),
    DramParam("t_wr", "timing", "tck", _ALL, "write recovery, end of write data to PRE", slots=("wr",)),
    DramParam("t_wtr", "timing", "tck", _NO_GROUPS, "end of write data to read command, same rank",
              slots=("wtr_s", "wtr_l")),
    DramParam("t_wtr_s", "timing", "tck", _GROUPS, "end of write data to read command, different bank groups",
              slots=("wtr_s",)),
    DramParam("t_wtr_l", "timing", "tck", _GROUPS, "end of write data to read command, same bank group",
              slots=("wtr_l",)),
    DramParam("t_rtp", "timing", "tck", _ALL, "read to PRE, same bank", slots=("rtp",)),
    DramParam("t_rfc", "timing", "tck", _ALL, "refresh cycle time (REF to the next ACT; tRFC1 on DDR5)",
              slots=("rfc",)),
    DramParam("t_rfc_sb", "timing", "tck", _SAME_BANK, "same-bank refresh cycle time (REFsb to an ACT of a "
              "refreshed bank, tRFCsb)", slots=("rfc_part",)),
    DramParam("t_rfc_pb", "timing", "tck", _PER_BANK, "per-bank refresh cycle time (REFpb to an ACT of the "
              "refreshed bank, tRFCpb)", slots=("rfc_part",)),
    DramParam("t_faw", "timing", "tck", _ALL, "four-activate window of a rank", slots=("faw",)),
    DramParam("burst_length", "timing", "beats", _ALL, "burst length BL (a power of two filling whole clocks: at "
              "least 2 beats, 4 on hbm3, 8 on lpddr5), beats; a burst takes BL/2 tCK (BL/4 on hbm3, BL/8 on lpddr5); "
              "a BL the standard does not define is accepted, as a what-if"),
    DramParam("t_refi_s", "timing", "time", _ALL, "average refresh interval tREFI", slots=("refi",)),
    DramParam("t_xp", "timing", "tck", _XP, "power-down exit to the next command", slots=("xp",)),
    DramParam("t_cke", "timing", "tck", _CKE, "shortest power-down (CKE low)", slots=("cke",)),
    DramParam("t_rtrs", "timing", "tck", _RANKED, "data-bus turnaround between ranks", minimum=0,
              slots=("rtrs",)),
    DramParam("idd0_a", "currents", "current", _IDD, "one-bank ACT-PRE current (IDD0)"),
    DramParam("idd2p_a", "currents", "current", _IDD, "precharge power-down current (IDD2P)"),
    DramParam("idd2n_a", "currents", "current", _IDD, "precharge standby current (IDD2N)"),
    DramParam("idd3n_a", "currents", "current", _IDD, "active standby current (IDD3N)"),
    DramParam("idd3p_a", "currents", "current", {"ddr3": False, "ddr4": False, "hbm2": False, "ddr5": False},
              "active power-down current (IDD3P); needed with geometry.power_down"),
    DramParam("idd4r_a", "currents", "current", _IDD, "burst read current (IDD4R)"),
    DramParam("idd4w_a", "currents", "current", _IDD, "burst write current (IDD4W)"),
    DramParam("idd5_a", "currents", "current", _IDD, "burst refresh current (IDD5, IDD5B on DDR4 and DDR5)"),
    DramParam("idd5sb_a", "currents", "current", _SAME_BANK, "same-bank refresh current (IDD5C on DDR5)"),
    DramParam("vdd_v", "currents", "voltage", _IDD, "core supply voltage VDD"),
    DramParam("vpp_v", "currents", "voltage", _VPP, "wordline-boost supply voltage VPP"),
    DramParam("ipp0_a", "currents", "current", _VPP, "one-bank ACT-PRE current on VPP (IPP0)"),
    DramParam("ipp3n_a", "currents", "current", _VPP,
              "standby current on VPP (IPP3N; JEDEC DDR4 applies it to every standby, power-down and "
              "burst condition)"),
    DramParam("ipp5_a", "currents", "current", _VPP, "burst refresh current on VPP (IPP5B)"),
)
PARAMETER_BY_KEY: dict[str, DramParam] = {p.key: p for p in PARAMETERS}
PARAMETER_BY_MODEL_NAME: dict[str, DramParam] = {p.model_name: p for p in PARAMETERS}


def section_parameters(section: str) -> tuple[DramParam, ...]:
    """The parameters of ``"timing"`` or ``"currents"``, in table order."""
    return tuple(p for p in PARAMETERS if p.section == section)


# -- the kernel's parameter vector -----------------------------------------------------------------
#: Slots the controller derives: data-bus occupancy of a burst (BL/2 tCK), the read-to-write bus
#: bubble, the three controller flags (1/0), the bank-group mask of a bank index and the layout id.
#: The refresh slots: 0 for all-bank refresh, else the divisor d and count n of the refresh sets, bank b
#: being in set (b // d) % n (``refresh_sets``). bursts_per_line: the bursts of one line (1, or more on a
#: standard with ``multi_burst_lines``).
DERIVED_SLOTS = ("burst", "rtw", "closed_page", "power_down", "idle_close", "bank_group_mask", "refresh_set_div",
                 "refresh_sets", "bursts_per_line", "layout")
#: Slots a standard may leave unfilled, with the value they take: a standard without ranks has no
#: rank-to-rank switch, one without partial refresh no tRFCsb or tRFCpb, one without power-down no tXP or tCKE.
ABSENT_SLOT_PS = {"rtrs": 0, "rfc_part": 0, "cke": 0, "xp": 0}
#: Slots a standard may leave unfilled that take another slot's value: tCCD_L_WR is tCCD_L where the
#: standard has no separate write-to-write spacing.
SLOT_FALLBACK = {"ccd_l_wr": "ccd_l"}
KERNEL_SLOTS: tuple[str, ...] = tuple(dict.fromkeys(s for p in PARAMETERS for s in p.slots)) + DERIVED_SLOTS
SLOT_INDEX: dict[str, int] = {name: i for i, name in enumerate(KERNEL_SLOTS)}
#: Identifies the layout; the compiled kernel checks it (numba freezes the index constants into its
#: cached machine code, which a change of this table alone would not invalidate).
LAYOUT_ID = zlib.crc32(":".join(KERNEL_SLOTS).encode())


def first_refresh_ps(policy: str, t_refi_ps: int, rank: int, ranks: int) -> int:
    """When rank ``rank`` (0-based, of the ``ranks`` of its channel) receives its first refresh, ps;
    each later one follows tREFI after the last. simultaneous: every rank at tREFI. staggered:
    rank r at (r + 1) x tREFI / ranks (floored to the ps), so that one rank refreshes every
    tREFI / ranks, as DRAMSim3's ``RANK_LEVEL_STAGGERED`` (``Refresh::InsertRefresh``) does."""
    if policy not in REFRESH_POLICIES:
        raise ValueError(f"refresh = {policy!r}: expected one of {REFRESH_POLICIES}")
    if policy == "simultaneous":
        return t_refi_ps
    return (rank + 1) * t_refi_ps // ranks


def check_refresh_mode(standard: str, mode: str) -> None:
    """Raise FieldError (keyed ``refresh_mode``) unless ``standard`` has refresh mode ``mode``."""
    modes = STANDARDS[standard].refresh_modes
    if mode not in modes:
        raise FieldError("refresh_mode", f"{mode!r}; {standard} refreshes {' or '.join(modes)}; expected one of "
                         f"those")


def refresh_sets(mode: str, banks: int, bank_groups: int, banks_per_refresh: int = 1) -> tuple[int, int]:
    """(divisor, sets) of a refresh mode over a device of ``banks`` banks in ``bank_groups`` groups: a
    refresh command covers the banks b of one set, (b // divisor) % sets; the sets take their turn in
    index order. all_bank: (0, 1), one set of every bank. same_bank: (bank_groups, banks / bank_groups),
    bank k of every group (bank b is in group b mod bank_groups). per_bank: (1, banks /
    banks_per_refresh), bank k alone or, two banks a command, banks k and k + banks / 2."""
    if mode == "all_bank":
        return 0, 1
    if mode == "same_bank":
        return bank_groups, banks // bank_groups
    if mode == "per_bank":
        return 1, banks // banks_per_refresh
    raise ValueError(f"refresh_mode = {mode!r}: expected one of {REFRESH_MODES}")


def refresh_command_interval_ps(t_refi_ps: int, sets: int, mode: str = "all_bank") -> int:
    """Interval between refresh commands of a rank, ps: every set is refreshed once per refresh interval, so one
    command every interval / sets (floored to the ps). The interval is tREFI, but for same_bank: JESD79-5 issues
    REFsb only in its fine granularity refresh mode, whose interval tREFI2 is half the normal mode's tREFI1
    (``t_refi`` of a DDR5 preset), each bank index once within every tREFI2."""
    interval = t_refi_ps // 2 if mode == "same_bank" else t_refi_ps
    return interval // sets


def _require_int(owner: str, name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise FieldError(name, f"{value!r}; expected an integer >= {minimum}", owner=owner)


def _shown(model_name: str, value: float) -> str:
    """A model value with its unit: times in s (kept in ps), currents in A (kept in mA), counts in tCK."""
    if model_name.endswith("_ps"):
        return format_quantity(value * 1e-12, "s")
    if model_name.endswith("_ma"):
        return format_quantity(value * 1e-3, "A")
    return f"{value!r} beats" if model_name == "burst_length" else f"{value!r} tCK"


def _same(name: str) -> str:
    return name


def check_standard(standard: str, section: str, given: set[str], owner: str) -> None:
    """Raise FieldError (keyed by the config key) unless ``given`` (config keys of ``section``) holds
    every parameter ``standard`` requires and none it does not have; its text names ``owner.key``."""
    if standard not in STANDARDS:
        raise FieldError("standard", f"{standard!r}; expected one of {', '.join(STANDARDS)}")
    for p in section_parameters(section):
        present = p.key in given
        if present and standard not in p.standards:
            raise FieldError(p.key, f"{standard} has no {p.key} ({p.doc}, a parameter of "
                             f"{', '.join(p.standards)}); expected it left out", owner=owner)
        if not present and p.standards.get(standard):
            raise FieldError(p.key, f"missing; {standard} requires it ({p.doc})", owner=owner)


def _model_fields(section: str) -> list[tuple[str, Any, Any]]:
    kind = {"tck": int, "beats": int, "time": int, "current": float, "voltage": float}
    return [(p.model_name, kind[p.unit] | None, field(default=None)) for p in section_parameters(section)]


def _given_keys(obj: object, section: str) -> set[str]:
    return {p.key for p in section_parameters(section) if getattr(obj, p.model_name) is not None}


def _order_error(owner: str, name: Callable[[str], str], key: str, value: float, relation: str,
                 bound: float, *reads: str, why: str = "") -> FieldError:
    """``key`` (a model name) = ``value`` breaks "``key`` ``relation`` (the sum of ``reads``) = ``bound``"."""
    terms = " + ".join(name(r) for r in reads)
    return FieldError(name(key), f"{_shown(key, value)}; expected {relation} {terms} ({_shown(key, bound)}){why}",
                      tuple(name(r) for r in reads), owner=owner)


def check_timing_orders(t: Any, owner: str = "DramTiming", name: Callable[[str], str] = _same) -> None:
    """Raise FieldError if timings ``t`` (model names: counts in tCK, ``tck_ps``, ``t_refi_ps``;
    None where absent) break an ordering the model relies on; ``name`` spells a model name as the
    caller's key. Orderings between absent parameters are not checked (a missing parameter is
    reported by :func:`check_standard`)."""
    def has(*names: str) -> bool:
        return all(getattr(t, n) is not None for n in names)

    if has("burst_length") and t.burst_length % 2:
        raise FieldError(name("burst_length"), f"{t.burst_length!r}; expected an even number of beats", owner=owner)
    if has("t_ras", "t_rcd") and t.t_ras < t.t_rcd:
        raise _order_error(owner, name, "t_ras", t.t_ras, ">=", t.t_rcd, "t_rcd")
    if has("t_rc", "t_ras", "t_rp") and t.t_rc < t.t_ras + t.t_rp:
        raise _order_error(owner, name, "t_rc", t.t_rc, ">=", t.t_ras + t.t_rp, "t_ras", "t_rp")
    for short, long in (("t_ccd_s", "t_ccd_l"), ("t_rrd_s", "t_rrd_l"), ("t_wtr_s", "t_wtr_l")):
        if has(short, long) and getattr(t, long) < getattr(t, short):
            raise _order_error(owner, name, long, getattr(t, long), ">=", getattr(t, short), short,
                               why=": the same bank group waits at least as long as different groups")
    if has("t_ccd_l", "t_ccd_l_wr") and t.t_ccd_l_wr < t.t_ccd_l:
        raise _order_error(owner, name, "t_ccd_l_wr", t.t_ccd_l_wr, ">=", t.t_ccd_l, "t_ccd_l",
                           why=": two writes in a bank group wait at least the column-to-column spacing")
    rrd = "t_rrd" if t.t_rrd is not None else "t_rrd_s"
    if has("t_faw", rrd) and t.t_faw < getattr(t, rrd):
        raise _order_error(owner, name, "t_faw", t.t_faw, ">=", getattr(t, rrd), rrd,
                           why=", the ACT-to-ACT spacing")
    for part in ("t_rfc_sb", "t_rfc_pb"):
        if has(part, "t_rfc") and getattr(t, part) > t.t_rfc:
            raise _order_error(owner, name, part, getattr(t, part), "<=", t.t_rfc, "t_rfc",
                               why=": refreshing some banks takes no longer than refreshing all")
    if has("cwl", "cl") and t.cwl > t.cl:
        raise _order_error(owner, name, "cwl", t.cwl, "<=", t.cl, "cl")
    if has("t_refi_ps", "t_rfc", "tck_ps") and t.t_refi_ps <= t.t_rfc * t.tck_ps:
        raise FieldError(name("t_refi_ps"), f"{_shown('t_refi_ps', t.t_refi_ps)}; expected > {name('t_rfc')} x "
                         f"{name('tck_ps')} ({_shown('t_refi_ps', t.t_rfc * t.tck_ps)}): a refresh must end "
                         "before the next is due", (name("t_rfc"), name("tck_ps")), owner=owner)
    for p in section_parameters("timing"):  # the DRAM kernel keeps every timing in int64 picoseconds
        value = getattr(t, p.model_name)
        if value is None or not has("tck_ps"):
            continue
        ps = value * (1 if p.unit == "time" else t.tck_ps)
        if ps > MAX_TIMING_PS:
            raise FieldError(name(p.model_name), f"{_shown(p.model_name, value)}"
                             f"{'' if p.unit == 'time' else f' ({ps} ps)'}; expected at most {MAX_TIMING_PS} ps, "
                             "the picosecond clock's range",
                             () if p.unit == "time" else (name("tck_ps"),), owner=owner)


def check_current_orders(c: Any, owner: str = "DramCurrents", name: Callable[[str], str] = _same,
                         bankwise_standby: bool = False, vpp_together: bool = True) -> None:
    """Raise FieldError if currents ``c`` (model names, mA; None where absent) break the TN-41-01
    orderings the energy model relies on: every command current at least its standby current (with
    ``bankwise_standby``, where IDD3N holds every bank open, at least the precharge standby IDD2N, the
    floor of the one-bank standby ``power.active_standby_ma``; the system's check applies the exact floor,
    ``power.command_current_floors_ma``, once the organisation is known), and each power-down current at
    most its standby current (IDD2P <= IDD2N, IDD3P <= IDD3N). IDD3N below IDD2N is accepted: DRAMSim2's DDR3
    parts (the shipped DDR3 presets) have it. ``name`` spells a model name as the caller's key. With
    ``vpp_together``, the VPP voltage and currents come all together or not at all (where a standard has them
    optional; check the standard's keys first)."""
    vpp = [p.model_name for p in PARAMETERS if p.key in ("vpp_v", "ipp0_a", "ipp3n_a", "ipp5_a")]
    given = [n for n in vpp if getattr(c, n) is not None]
    if vpp_together and given and len(given) < len(vpp):
        missing = next(n for n in vpp if getattr(c, n) is None)
        raise FieldError(name(missing), f"missing; expected every VPP key ({', '.join(name(n) for n in vpp)}) "
                         "or none", tuple(name(n) for n in given), owner=owner)
    standby = "idd2n_ma" if bankwise_standby else "idd3n_ma"
    for key, base in (("idd0_ma", standby), ("idd4r_ma", standby), ("idd4w_ma", standby),
                      ("idd5_ma", standby), ("idd5sb_ma", standby), ("ipp0_ma", "ipp3n_ma"), ("ipp5_ma", "ipp3n_ma")):
        value, floor = getattr(c, key), getattr(c, base)
        if value is not None and floor is not None and value < floor:
            raise _order_error(owner, name, key, value, ">=", floor, base,
                               why=": a command draws at least the standby current")
    for key, base in (("idd2p_ma", "idd2n_ma"), ("idd3p_ma", "idd3n_ma")):
        value, ceiling = getattr(c, key), getattr(c, base)
        if value is not None and ceiling is not None and value > ceiling:
            raise _order_error(owner, name, key, value, "<=", ceiling, base,
                               why=": a powered-down device draws at most its standby current")


def _timing_post_init(self: Any) -> None:
    check_standard(self.standard, "timing", _given_keys(self, "timing"), "DramTiming")
    for p in section_parameters("timing"):
        if getattr(self, p.model_name) is not None:
            _require_int("DramTiming", p.model_name, getattr(self, p.model_name), p.minimum)
    check_timing_orders(self)
    check_burst_clocks(self.standard, self.burst_length)


def check_burst_clocks(standard: str, burst_length: int, owner: str = "DramTiming",
                       name: Callable[[str], str] = _same) -> None:
    """Raise FieldError unless a burst of ``burst_length`` beats fills whole clocks of ``standard``'s data bus
    (``beats_per_tck`` a clock): a shorter one would take no time on the bus."""
    beats = STANDARDS[standard].beats_per_tck
    if burst_length % beats:
        raise FieldError(name("burst_length"), f"{burst_length!r} beats; expected a multiple of {beats}: {standard} "
                         f"moves {beats} beats a clock, and a burst takes whole clocks of the data bus", owner=owner)


def _burst_ps(self: Any) -> int:
    """Data-bus occupancy of one burst, BL / (beats per tCK) tCK, in ps."""
    return self.burst_length // STANDARDS[self.standard].beats_per_tck * self.tck_ps


def _currents_post_init(self: Any) -> None:
    check_standard(self.standard, "currents", _given_keys(self, "currents"), "DramCurrents")
    for p in section_parameters("currents"):
        value = getattr(self, p.model_name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0):
            raise FieldError(p.model_name, f"{value!r}; expected a positive number", owner="DramCurrents")
    check_current_orders(self, bankwise_standby=STANDARDS[self.standard].bankwise_standby)


#: DDR timing of one standard: counts in clock cycles (tCK) unless the name ends in _ps; a
#: parameter the standard does not have is None. Fields: ``standard`` then ``PARAMETERS``.
DramTiming = make_dataclass(
    "DramTiming", [("standard", str), *_model_fields("timing")], frozen=True,
    namespace={"__post_init__": _timing_post_init, "burst_ps": property(_burst_ps),
               "__doc__": "DDR timing of one standard (simulator.memory.dram_params.PARAMETERS): counts in "
                          "tCK unless the name ends in _ps; None where the standard has no such parameter."})
DramTiming.__module__ = __name__

#: Datasheet supply currents of one device in mA, and its supply voltages in V.
DramCurrents = make_dataclass(
    "DramCurrents", [("standard", str), *_model_fields("currents")], frozen=True,
    namespace={"__post_init__": _currents_post_init,
               "__doc__": "Datasheet supply currents of one device in mA and its supply voltages in V "
                          "(simulator.memory.dram_params.PARAMETERS); None where the standard has no such "
                          "parameter or an optional one is not given."})
DramCurrents.__module__ = __name__


def pack_timing_ps(timing: Any) -> np.ndarray:
    """The kernel's parameter vector (int64[len(KERNEL_SLOTS)], ps) with every timing slot filled
    and the device-derived slots (burst, rtw, layout); the controller flags are left 0."""
    import numpy as np

    tck = timing.tck_ps
    p = np.zeros(len(KERNEL_SLOTS), dtype=np.int64)
    filled = set()
    for param in section_parameters("timing"):
        value = getattr(timing, param.model_name)
        if value is None or not param.slots:
            continue
        for slot in param.slots:
            p[SLOT_INDEX[slot]] = value if param.unit == "time" else value * tck
            filled.add(slot)
    for slot, value in ABSENT_SLOT_PS.items():
        if slot not in filled:
            p[SLOT_INDEX[slot]] = value
            filled.add(slot)
    for slot, other in SLOT_FALLBACK.items():
        if slot not in filled:
            p[SLOT_INDEX[slot]] = p[SLOT_INDEX[other]]
            filled.add(slot)
    missing = [s for s in KERNEL_SLOTS if s not in filled and s not in DERIVED_SLOTS]
    if missing:  # the table gives every standard's timing slots; this guards its edits
        raise ValueError(f"DramTiming ({timing.standard}): no value for kernel slots {missing}")
    p[SLOT_INDEX["burst"]] = timing.burst_ps
    p[SLOT_INDEX["bursts_per_line"]] = 1
    # JEDEC tRTW = RL + tCCD + 2 tCK - WL: two idle bus cycles between read and write data
    p[SLOT_INDEX["rtw"]] = 2 * tck
    p[SLOT_INDEX["layout"]] = LAYOUT_ID
    return p


@dataclass(frozen=True)
class DramGeometry:
    """Organisation of the memory: channels x ranks x banks x rows x columns of devices.

    ``mapping`` orders the line-address fields from most to least significant, e.g.
    ``"row:rank:bank:channel:column"``; ``column`` there counts lines within a rank row.
    ``bank_groups`` divides the banks of a device into groups; the low bits of a bank's index
    select its group (bank b is in group b mod bank_groups), so consecutive banks of the
    mapping lie in different groups.
    """

    channels: int
    ranks_per_channel: int
    banks: int
    rows: int
    columns: int
    device_width_bits: int
    bus_width_bits: int
    line_bytes: int
    mapping: str = "row:rank:bank:channel:column"
    bank_groups: int = 1

    def __post_init__(self) -> None:
        for name in ("channels", "ranks_per_channel", "banks", "rows", "columns", "device_width_bits",
                     "bus_width_bits", "line_bytes", "bank_groups"):
            _require_int("DramGeometry", name, getattr(self, name), 1)
        # channels may be any count (lines interleave modulo it); the fields within a channel are bit fields
        for name in ("ranks_per_channel", "banks", "rows", "columns", "line_bytes", "bank_groups"):
            if not is_power_of_two(getattr(self, name)):
                raise FieldError(name, f"{getattr(self, name)!r}; expected a power of two", owner="DramGeometry")
        if self.banks % self.bank_groups:
            raise FieldError("bank_groups", f"{self.bank_groups!r}; expected to divide banks ({self.banks})",
                             ("banks",), owner="DramGeometry")
        if self.bus_width_bits % self.device_width_bits:
            raise FieldError("bus_width_bits", f"{self.bus_width_bits!r}; expected a multiple of device_width_bits "
                             f"({self.device_width_bits})", ("device_width_bits",), owner="DramGeometry")
        if self.bus_width_bits % 8 or self.line_bytes % (self.bus_width_bits // 8):
            raise FieldError("line_bytes", f"{self.line_bytes!r} B; expected a multiple of the bus width in bytes "
                             f"({self.bus_width_bits / 8} B)", ("bus_width_bits",), owner="DramGeometry")
        if self.row_bytes < self.line_bytes:
            raise FieldError("columns", f"{self.columns!r}; expected a rank row of at least one {self.line_bytes} B "
                             f"line (columns x device_width_bits / 8 x the rank's devices: {self.row_bytes} B)",
                             ("device_width_bits", "bus_width_bits", "line_bytes"), owner="DramGeometry")
        if self.row_bytes % self.line_bytes:
            raise FieldError("line_bytes", f"{self.line_bytes!r} B; expected to divide the rank row "
                             f"({self.row_bytes} B)", ("columns", "device_width_bits", "bus_width_bits"),
                             owner="DramGeometry")
        parts = self.mapping.split(":") if isinstance(self.mapping, str) else None
        if parts is None or sorted(parts) != sorted(MAPPING_FIELDS):
            raise FieldError("mapping", f"{self.mapping!r}; expected each of {MAPPING_FIELDS} exactly once, "
                             "separated by ':'", owner="DramGeometry")

    @property
    def devices_per_rank(self) -> int:
        """Devices side by side on the bus in one rank."""
        return self.bus_width_bits // self.device_width_bits

    @property
    def row_bytes(self) -> int:
        """Bytes in one row of a rank (all its devices)."""
        return self.columns * self.device_width_bits // 8 * self.devices_per_rank

    @property
    def lines_per_row(self) -> int:
        """Lines in one rank row."""
        return self.row_bytes // self.line_bytes

    @property
    def capacity_lines(self) -> int:
        """Lines addressable in the whole memory."""
        return self.channels * self.ranks_per_channel * self.banks * self.rows * self.lines_per_row

    @property
    def capacity_bytes(self) -> int:
        """Bytes the whole memory holds, B."""
        return self.capacity_lines * self.line_bytes

    def field_sizes(self) -> dict[str, int]:
        """Number of values of each mapping field."""
        return {"row": self.rows, "rank": self.ranks_per_channel, "bank": self.banks,
                "channel": self.channels, "column": self.lines_per_row}


def burst_bytes(timing: Any, geometry: DramGeometry) -> int:
    """Bytes one burst moves: bus width x burst length, B."""
    return geometry.bus_width_bits // 8 * timing.burst_length


def bursts_per_line(timing: Any, geometry: DramGeometry) -> int:
    """Bursts one line takes (``check_line_is_one_burst`` has checked it is a whole number)."""
    return geometry.line_bytes // burst_bytes(timing, geometry)


def peak_bandwidth_bytes_per_s(timing: Any, geometry: DramGeometry) -> float:
    """Peak data-bus bandwidth of all channels: one burst per burst time per channel, B/s."""
    return geometry.channels * burst_bytes(timing, geometry) * 1e12 / timing.burst_ps


def check_line_is_one_burst(timing: Any, geometry: DramGeometry, name: Callable[[str], str] = _same) -> None:
    """Raise FieldError (keyed ``line_bytes``) unless a cache line is exactly one burst: bus width x
    burst length bytes (or, on a standard with ``multi_burst_lines``, a power-of-two number of them);
    ``name`` spells a model name as the caller's key."""
    one = burst_bytes(timing, geometry)
    if STANDARDS[timing.standard].multi_burst_lines:
        if geometry.line_bytes % one or not is_power_of_two(geometry.line_bytes // one):
            raise FieldError(name("line_bytes"), f"{geometry.line_bytes!r} B; expected a power-of-two number of "
                             f"bursts ({name('bus_width_bits')} {geometry.bus_width_bits} / 8 x "
                             f"{name('burst_length')} {timing.burst_length} = {one} B each)",
                             (name("bus_width_bits"), name("burst_length")), owner="DramGeometry")
        return
    if one != geometry.line_bytes:
        raise FieldError(name("line_bytes"), f"{geometry.line_bytes!r} B; expected one burst "
                         f"({name('bus_width_bits')} {geometry.bus_width_bits} / 8 x {name('burst_length')} "
                         f"{timing.burst_length} = {one} B)", (name("bus_width_bits"), name("burst_length")),
                         owner="DramGeometry")


def check_geometry_standard(standard: str, bank_groups: int, ranks_per_channel: int) -> None:
    """Raise FieldError (keyed by the ``DramGeometry`` field) if an organisation uses a feature
    ``standard`` does not have (or lacks one it has)."""
    s = STANDARDS[standard]
    if bank_groups > 1 and not s.bank_groups:
        raise FieldError("bank_groups", f"{bank_groups!r}; {standard} has no bank groups; expected 1",
                         owner="DramGeometry")
    if s.bank_groups and bank_groups < 2:
        raise FieldError("bank_groups", f"{bank_groups!r}; {standard} has bank groups; expected 2 or more",
                         owner="DramGeometry")
    if ranks_per_channel > 1 and not s.ranks:
        raise FieldError("ranks_per_channel", f"{ranks_per_channel!r}; a {standard} channel is one rank; "
                         "expected 1", owner="DramGeometry")
