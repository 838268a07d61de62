"""DRAM energy from datasheet IDD currents and VDD: per-command energies and background power.

Method: Micron technical note TN-41-01 "Calculating Memory System Power for DDR3" as also
applied by DRAMPower and DRAMsim3 (``Config::InitPowerParams``): each command's energy is
the current *above* the active-standby background (IDD3N) that it draws, times VDD, times
its duration; background energy is charged separately by bank state. Datasheet currents are
per device, so every energy here is multiplied by the number of devices in a rank
(``bus_width_bits / device_width_bits``). All results are joules (J) or watts (W).

TN-41-01 formulas used (currents in A, times in s):

* activate + precharge, per ACT:
  ``E_act = VDD * (IDD0*tRC - (IDD3N*tRAS + IDD2N*(tRC - tRAS)))``
* read burst:  ``E_rd  = VDD * (IDD4R - IDD3N) * BL/2 * tCK``
* write burst: ``E_wr  = VDD * (IDD4W - IDD3N) * BL/2 * tCK``
* refresh, per REF of a rank: ``E_ref = VDD * (IDD5 - IDD3N) * tRFC``
* background: ``VDD*IDD3N`` while at least one bank of the rank holds an open row,
  ``VDD*IDD2N`` while all its banks are precharged (refresh time counts as precharged,
  its extra current being in ``E_ref``); while the rank is powered down, ``VDD*IDD3P``
  (active power-down, a row open) or ``VDD*IDD2P`` (precharge power-down) instead, as
  DRAMSim2 charges them (``MemoryController::update``, ``USE_LOW_POWER``).

Standards with a second supply VPP (DDR4) add its currents the same way, as DRAMPower does
for DDR4: ``VPP * (IPP0 - IPP3N) * tRC`` per ACT, ``VPP * (IPP5 - IPP3N) * tRFC`` per REF,
and ``VPP * IPP3N`` of background in every state (Micron's DDR4 data sheets, e.g. MT40A1G8,
apply the IPP3N limit to all standby, power-down and burst conditions, so reads and writes
draw nothing above it on VPP). ``include_vpp=False`` leaves the VPP terms out: the VDD supply's
share alone, as simulators without a VPP term report (DRAMSim3's ``Config::InitPowerParams``).

DDR5 (a standard with ``bankwise_standby``): JESD79-5 measures IDD3N with every bank of the device
open, and a DDR5 device's IDD0 lies below it (Micron's 16 Gb DDR5 at 4800 MT/s: IDD0 122 mA, IDD3N
142 mA, as gem5's DDR5 interfaces transcribe its data sheet), so the active standby of TN-41-01 would
make an ACT's energy negative. There the active standby (``active_standby_ma``) is the current with one bank open, each open bank adding its share of
IDD3N above IDD2N: ``IDD2N + (IDD3N - IDD2N) / banks``, DRAMPower's bank-wise DDR5 model
(``core_calculation_DDR5.cpp``, github.com/tukl-msd/DRAMPower) with its rho = 0; it replaces IDD3N
in every formula above. The rank's background counts one open bank however many are open, so this
is a lower bound on the background with several banks open. Same-bank refresh (REFsb) costs
``VDD * (IDD5C - standby) * tRFCsb`` per command. Active power-down draws IDD3P as measured (every bank
open), as DRAMPower's DDR5 model charges it (``E_PDNA``): with one bank open it can exceed the bank-wise
active standby (on the DDR5-4800 preset 140 mA against 93.6 mA), so a rank powering down with a row
open saves nothing there; the DDR5 preset keeps ``geometry.power_down`` off.

A line of several bursts (an HBM2E or HBM3 pseudo-channel) costs its bursts' read or write energy. A
standard without declared currents (HBM2E, HBM3: no public source gives them) prices every command and
state at NaN: an energy it spent is unknown, not 0, while a command it never issued, or a state it never
held, costs 0 J.
"""

from __future__ import annotations

import math

from simulator.memory.dram_params import STANDARDS, DramCurrents, DramGeometry, DramTiming, bursts_per_line

_MA_TO_A = 1e-3
_PS_TO_S = 1e-12

CATEGORIES = (
    "background_active",
    "background_precharge",
    "background_power_down",
    "refresh",
    "activate_precharge",
    "read",
    "write",
)


def devices_per_rank(geometry: DramGeometry) -> int:
    """Number of DRAM devices that form one rank (bus width / device width)."""
    return geometry.bus_width_bits // geometry.device_width_bits


def active_standby_ma(currents: DramCurrents, geometry: DramGeometry) -> float:
    """Standby current of a device with a bank open, mA: IDD3N, or on a standard whose IDD3N holds
    every bank open (``bankwise_standby``) IDD2N + (IDD3N - IDD2N) / banks (see the module docstring)."""
    if STANDARDS[currents.standard].bankwise_standby:
        return currents.idd2n_ma + (currents.idd3n_ma - currents.idd2n_ma) / geometry.banks
    return currents.idd3n_ma


def command_current_floors_ma(timing: DramTiming, currents: DramCurrents, geometry: DramGeometry) -> dict[str, float]:
    """The least each command current of ``currents`` (model name -> mA) may be for its command's energy
    (``command_energies_j``) not to fall below zero: the standby current the command's time would draw anyway,
    ``active_standby_ma`` for a burst or a refresh, and for an ACT and its PRE that over tRAS and IDD2N over
    tRC - tRAS. Empty for a standard without declared currents."""
    if currents.vdd_v is None:
        return {}
    standby = active_standby_ma(currents, geometry)
    act = (standby * timing.t_ras + currents.idd2n_ma * (timing.t_rc - timing.t_ras)) / timing.t_rc
    floors = {"idd0_ma": act, "idd4r_ma": standby, "idd4w_ma": standby, "idd5_ma": standby}
    if currents.idd5sb_ma is not None:
        floors["idd5sb_ma"] = standby
    return floors


def command_energies_j(timing: DramTiming, currents: DramCurrents, geometry: DramGeometry,
                       include_vpp: bool = True, refresh_mode: str = "all_bank") -> dict[str, float]:
    """Energy in J of one command on one rank (all its devices together).

    Keys: ``activate_precharge`` (one ACT and its later PRE), ``read`` (one read burst),
    ``write`` (one write burst), ``refresh`` (one REF of the rank; one REFsb under
    ``refresh_mode="same_bank"``). include_vpp: False leaves out the VPP supply's share.
    """
    if currents.vdd_v is None:  # a standard without declared currents: unknown
        return dict.fromkeys(("activate_precharge", "read", "write", "refresh"), math.nan)
    n_dev = devices_per_rank(geometry)
    vdd = currents.vdd_v
    tck_s = timing.tck_ps * _PS_TO_S
    idd0 = currents.idd0_ma * _MA_TO_A
    idd2n = currents.idd2n_ma * _MA_TO_A
    idd3n = active_standby_ma(currents, geometry) * _MA_TO_A
    t_rc_s = timing.t_rc * tck_s
    t_ras_s = timing.t_ras * tck_s
    beats = STANDARDS[timing.standard].beats_per_tck
    burst_s = timing.burst_length / beats * tck_s * bursts_per_line(timing, geometry)  # a line's bursts
    # TN-41-01: E_act = VDD * (IDD0*tRC - (IDD3N*tRAS + IDD2N*(tRC - tRAS)))
    e_act = vdd * (idd0 * t_rc_s - (idd3n * t_ras_s + idd2n * (t_rc_s - t_ras_s)))
    # TN-41-01: E_rd = VDD * (IDD4R - IDD3N) * BL/2 * tCK per burst, likewise for writes with IDD4W
    e_rd = vdd * (currents.idd4r_ma * _MA_TO_A - idd3n) * burst_s
    e_wr = vdd * (currents.idd4w_ma * _MA_TO_A - idd3n) * burst_s
    # TN-41-01: E_ref = VDD * (IDD5 - IDD3N) * tRFC; a REFsb draws IDD5C for tRFCsb
    same_bank = refresh_mode == "same_bank"
    t_ref_s = (timing.t_rfc_sb if same_bank else timing.t_rfc) * tck_s
    e_ref = vdd * ((currents.idd5sb_ma if same_bank else currents.idd5_ma) * _MA_TO_A - idd3n) * t_ref_s
    if include_vpp and currents.vpp_v is not None:  # the VPP supply, above its standby current IPP3N
        ipp3n = currents.ipp3n_ma * _MA_TO_A
        e_act += currents.vpp_v * (currents.ipp0_ma * _MA_TO_A - ipp3n) * t_rc_s
        if not same_bank:  # no IPP of a same-bank refresh is declared
            e_ref += currents.vpp_v * (currents.ipp5_ma * _MA_TO_A - ipp3n) * t_ref_s
    return {
        "activate_precharge": e_act * n_dev,
        "read": e_rd * n_dev,
        "write": e_wr * n_dev,
        "refresh": e_ref * n_dev,
    }


def background_power_w(currents: DramCurrents, geometry: DramGeometry, include_vpp: bool = True) -> dict[str, float]:
    """Background power in W of one rank: ``active`` (a bank open, IDD3N), ``precharge``
    (all banks precharged, IDD2N), ``precharge_power_down`` (IDD2P) and, when the currents
    give IDD3P, ``active_power_down``; active is ``active_standby_ma``; each with VPP x IPP3N added where the standard has VPP
    (unless include_vpp is False)."""
    if currents.vdd_v is None:  # a standard without declared currents: unknown
        return dict.fromkeys(("active", "precharge", "precharge_power_down"), math.nan)
    n_dev = devices_per_rank(geometry)
    out = {
        "active": currents.vdd_v * active_standby_ma(currents, geometry) * _MA_TO_A * n_dev,
        "precharge": currents.vdd_v * currents.idd2n_ma * _MA_TO_A * n_dev,
        "precharge_power_down": currents.vdd_v * currents.idd2p_ma * _MA_TO_A * n_dev,
    }
    if currents.idd3p_ma is not None:
        out["active_power_down"] = currents.vdd_v * currents.idd3p_ma * _MA_TO_A * n_dev
    if include_vpp and currents.vpp_v is not None:  # IPP3N in every state
        vpp_w = currents.vpp_v * currents.ipp3n_ma * _MA_TO_A * n_dev
        out = {state: w + vpp_w for state, w in out.items()}
    return out


def energy_by_category_j(
    timing: DramTiming,
    currents: DramCurrents,
    geometry: DramGeometry,
    *,
    activates: int,
    reads: int,
    writes: int,
    refreshes: int,
    open_time_ps: int,
    precharged_time_ps: int,
    power_down_open_ps: int = 0,
    power_down_precharged_ps: int = 0,
    include_vpp: bool = True,
    refresh_mode: str = "all_bank",
) -> dict[str, float]:
    """DRAM energy in J by category from command counts and background times.

    open_time_ps / precharged_time_ps are summed over ranks (rank-picoseconds with at least
    one bank open / with all banks precharged); power_down_open_ps / power_down_precharged_ps
    are the parts of each spent powered down; refreshes counts REF commands over all ranks;
    include_vpp: False gives the VDD supply's share alone; refresh_mode: what each refresh is
    (``command_energies_j``).
    """
    for name, value in (("activates", activates), ("reads", reads), ("writes", writes),
                        ("refreshes", refreshes), ("open_time_ps", open_time_ps),
                        ("precharged_time_ps", precharged_time_ps),
                        ("power_down_open_ps", power_down_open_ps),
                        ("power_down_precharged_ps", power_down_precharged_ps)):
        if value < 0:
            raise ValueError(f"{name} = {value!r}: expected a non-negative number")
    if power_down_open_ps > open_time_ps or power_down_precharged_ps > precharged_time_ps:
        raise ValueError(f"power-down times ({power_down_open_ps}, {power_down_precharged_ps} ps): expected at "
                         f"most the open and precharged times ({open_time_ps}, {precharged_time_ps} ps)")
    cmd = command_energies_j(timing, currents, geometry, include_vpp, refresh_mode)
    bg = background_power_w(currents, geometry, include_vpp)
    if power_down_open_ps and "active_power_down" not in bg:
        raise ValueError("power_down_open_ps > 0: expected currents.idd3p_ma (active power-down current)")
    return {
        "background_active": priced(bg["active"], (open_time_ps - power_down_open_ps) * _PS_TO_S),
        "background_precharge": priced(bg["precharge"],
                                       (precharged_time_ps - power_down_precharged_ps) * _PS_TO_S),
        "background_power_down": (priced(bg.get("active_power_down", 0.0), power_down_open_ps * _PS_TO_S)
                                  + priced(bg["precharge_power_down"], power_down_precharged_ps * _PS_TO_S)),
        "refresh": priced(cmd["refresh"], refreshes),
        "activate_precharge": priced(cmd["activate_precharge"], activates),
        "read": priced(cmd["read"], reads),
        "write": priced(cmd["write"], writes),
    }


def priced(price: float, amount: float) -> float:
    """price x amount (J per command x commands, W x s); none of a thing costs 0 J even where its price
    is unknown (NaN), so a memory without declared currents that served no command has 0 J of it."""
    return price * amount if amount else 0.0
