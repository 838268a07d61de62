"""The U-list model priced on its own, without a simulation: what ``offsim models ulist`` prints.

The model (003 eqs. 2-12 as printed, and the extended model of :mod:`simulator.studies.fmm.crosscheck`)
needs inputs measured on a simulated system: bandwidths, flop rates, energies per flop and per
byte, static power, LLC residency curves, the contention of pipelined GEMMs. An FMM placement
study measures them once and keeps them in its ``machine.json`` (``results/fmm/machine.json`` for
the default study). This module reads such a file and prices any point (order q, placement,
variant, N, density, LLC) with the study's own rules: b for blocked variants by 003's LLC rule
(``fmm_ulist.variant_blocks``), and for pipelined ones the b the extended model predicts
fastest (``fmm_crosscheck.pipelined_blocks``), unless b is given. Only the U-list's dimensions are
built (the octree, 0.1 to 0.5 s per q); nothing is simulated. So it answers "what does the model
predict at q = 12, or for 10^6 points?" in seconds, with the measured inputs of the study's
systems; whether the model holds there is for a simulation to say (``offsim run --crosscheck``).

Times are host cycles at the model's 2 GHz clock (003 Table 4) and seconds; energies in joules.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.config.bounds import BANDWIDTH_BYTES_PER_S, CYCLES, ENERGY_PER_ACTION, FLOP_RATE, POWER_W
from simulator.errors import ConfigError, InputError, one_line
from simulator.config.fields import within_problem
from simulator.config.jsonio import RepeatedKey, loads_keys_once
from simulator.studies.fmm.crosscheck import (CLOCK_HZ, PointModel, class_counts, extended_params, pipelined_blocks,
                                      point_model)
from simulator.config.loader import PROJECT_ROOT
from simulator.config.yamlio import config_text
from simulator.studies.model_eval import Outputs, refuse_repeats, shown
from simulator.units import UnitError, finite_float, format_bytes, format_quantity, parse_quantity
from workloads import fmm_tree, fmm_ulist

DEFAULT_MACHINE = PROJECT_ROOT / "results" / "fmm" / "machine.json"
#: the figures every point reads of each LAP placement a machine file measured ("<placement>.<key>")
PLACEMENT_KEYS = ("f_l_flops_per_s", "w_l_bytes_per_s", "eps_flop_lap_j", "w_llc_bytes_per_s", "evict_cycles_per_line")
#: the variants priced by default: 003 Table 5's three (Orig, Blocking, Pipelining)
DEFAULT_VARIANTS = ("orig", "blocking", "pipelining")
#: the host figures every point reads (a file without them was not written by an FMM study)
REQUIRED_KEYS = ("w_c_bytes_per_s", "w_c_irregular_bytes_per_s", "f_c_flops_per_s", "access_rate_per_s",
                 "static_power_w", "eps_byte_dram_j", "eps_flop_cpu_j", "llc_residency", "dims")
#: the range of each measured figure, by the end of its key: the config bounds of the same quantity (a figure
#: outside them, such as a bandwidth of 1e-308 B/s, prices a point at an infinite time or energy)
MACHINE_BOUNDS = {"_bytes_per_s": (BANDWIDTH_BYTES_PER_S, "bandwidth"), "_flops_per_s": (FLOP_RATE, "flop_rate"),
                  "_power_w": (POWER_W, "power"), "_cycles_per_line": (CYCLES, None),
                  "eps_flop_cpu_j": (ENERGY_PER_ACTION, "energy_per_flop"),
                  "eps_flop_lap_j": (ENERGY_PER_ACTION, "energy_per_flop"), "_j": (ENERGY_PER_ACTION, "energy_per_byte"),
                  # a host's cache accesses per second: a clock times a per-cycle rate, as its flops are
                  "_rate_per_s": (FLOP_RATE, None)}
ULIST_COLUMNS = ("q", "placement", "variant", "n_points", "density", "llc_bytes", "n_q", "n_oct", "n_u", "blocks",
                 "printed_cycles", "printed_s", "printed_energy_j", "extended_cycles", "extended_s",
                 "extended_energy_j")


def load_machine(path: str | Path) -> dict[str, Any]:
    """The measured inputs of an FMM study (its ``machine.json``); InputError naming the file when it
    cannot be read or lacks what every point reads."""
    try:
        machine = loads_keys_once(config_text(path, "machine.json an FMM placement study writes"))  # a regular file
    except ConfigError as exc:
        raise InputError(f"--machine {exc.messages[0]}") from None
    except RepeatedKey as exc:
        raise InputError(f"--machine {path}: {exc.key}: named twice; expected each key once, as in the machine.json "
                         "an FMM placement study writes") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"--machine {path}: not JSON ({exc.msg} at line {exc.lineno}); expected the machine.json "
                         "an FMM placement study writes") from None
    except RecursionError:
        raise InputError(f"--machine {path}: nested too deeply to read; expected the machine.json an FMM placement "
                         "study writes") from None
    except ValueError:  # what json.loads raises besides the above: a number too long for Python to read
        raise InputError(f"--machine {path}: a number of more than {sys.get_int_max_str_digits()} digits; expected "
                         "the machine.json an FMM placement study writes") from None
    missing = [k for k in REQUIRED_KEYS if not isinstance(machine, dict) or k not in machine]
    if missing:
        raise InputError(f"--machine {path}: {', '.join(missing)} missing; expected the machine.json an FMM "
                         "placement study writes")
    for key, value in machine.items():
        problem = _machine_value_problem(key, value)
        if problem:
            raise InputError(f"--machine {path}: {key}: {problem}, got {one_line(json.dumps(value), 60)}")
    laps = lap_placements(machine)
    if not laps:
        raise InputError(f"--machine {path}: no LAP placement measured (no '<placement>.f_l_flops_per_s'); "
                         "expected the machine.json of a study with at least one LAP placement")
    for lap in laps:
        missing = [f"{lap}.{k}" for k in PLACEMENT_KEYS if f"{lap}.{k}" not in machine]
        if missing:
            raise InputError(f"--machine {path}: {', '.join(missing)} missing; expected every figure the study "
                             f"measured for {lap} ({', '.join(PLACEMENT_KEYS)})")
    return machine


def _is_order_key(q: str) -> bool:
    """Whether ``q`` is an order as a study writes it into machine.json: ASCII digits without a leading zero
    (``"²"`` and ``"٤"`` are digits to ``str.isdigit``, which ``int`` refuses or reads as another key's q)."""
    return re.fullmatch(r"0|[1-9][0-9]*", q) is not None


def _machine_value_problem(key: str, value: Any) -> str | None:
    """What a machine.json entry should be, if ``value`` is not that: a finite number for a measured figure,
    (x, y) pairs of finite numbers for a curve, text for a coupling; None when it is (the models check ranges)."""
    def number(v: Any) -> bool:
        return finite_float(v) is not None

    if key.endswith(".coupling"):
        return None if isinstance(value, str) else "expected a coupling name"
    if key.startswith("llc_residency") or key.endswith(".pipelined_contention"):
        width = 2 if key.startswith("llc_residency") else 3  # (ratio, residency); (height, and two factors)
        ok = isinstance(value, list) and bool(value) and all(  # a study writes a curve or factors measured, or none
            isinstance(row, list) and len(row) == width and all(map(number, row)) for row in value)
        one_pair = width == 3 and isinstance(value, list) and len(value) == 2 and all(map(number, value))
        # one pair: an older machine.json's factors
        return None if ok or one_pair else f"expected a list of one or more rows of {width} finite numbers"
    if key == "dims":
        ok = isinstance(value, dict) and bool(value) and all(isinstance(d, dict) and set(d) == {"n_q", "n_oct", "n_u"}
                                             and all(isinstance(n, int) and not isinstance(n, bool) and n >= 1
                                                     for n in d.values())
                                             and _is_order_key(q) for q, d in value.items())
        return None if ok else ("expected, by q (digits 0-9, no leading zero), the counts n_q, n_oct and n_u (whole "
                                "numbers >= 1) of one q or more")
    if key == "class_counts":
        ok = isinstance(value, dict) and all(_is_order_key(q) and isinstance(c, list) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in c) for q, c in value.items())
        return None if ok else "expected, by q (digits 0-9, no leading zero), a list of whole numbers >= 0"
    if key.endswith(("_j", "_w")) and not (number(value) and value >= 0):  # energies and powers
        return "expected a finite number >= 0 (J or W)"
    if not number(value):
        return "expected a finite number"
    bound = next((b for suffix, b in MACHINE_BOUNDS.items() if key.endswith(suffix)), None)
    return None if bound is None else within_problem(value, *bound)


def lap_placements(machine: dict[str, Any]) -> list[str]:
    """The LAP placements ("lap-<coupling>") whose figures ``machine`` holds, in file order."""
    return [k.split(".")[0] for k in machine if k.endswith(".f_l_flops_per_s")]


@dataclass(frozen=True)
class UListPrediction:
    """Both models of one point: what was asked, the U-list's dimensions, b, and the prices."""

    q: int
    placement: str
    variant: str
    n_points: int
    density: str
    llc_bytes: int
    n_q: int
    n_oct: int
    n_u: int
    blocks: int
    model: PointModel


def predict(machine: dict[str, Any], q: int, placement: str, variant: str, n_points: int, density: str,
            llc_bytes: int, blocks: int | None = None) -> UListPrediction:
    """Price one point with ``machine``'s inputs (module docstring). ``placement`` is "cpu" or one of
    :func:`lap_placements`; a CPU-only point runs variant "orig" only."""
    problem = fmm_ulist.build_problem(q, n_points, density)
    share = fmm_ulist.DEFAULT_LLC_SHARE
    d = problem.dims()
    if placement != "cpu" and blocks is not None and blocks > d.n_u:  # a block of no interaction (split_blocks)
        raise InputError(f"--blocks {blocks}: more blocks than the U-list has interactions at q = {q} (N_U = "
                         f"{d.n_u:,}); expected at most {d.n_u:,}")
    if placement == "cpu":
        b, lap, gemm = 1, lap_placements(machine)[0], "cpu"  # the host's LLC costs: every study system has them
    else:
        lap, gemm = placement, "lap"
        if blocks is None and variant == "pipelining":
            b = pipelined_blocks(machine, placement, problem, llc_bytes, share)
        else:
            b = len(fmm_ulist.variant_blocks(problem, variant, blocks, llc_bytes, share))
    model = point_model(machine, lap, d, class_counts(problem), gemm=gemm, variant=variant, placement=placement,
                        blocks=b, llc_bytes=float(llc_bytes), block_order="class")
    return UListPrediction(q, placement, variant, n_points, density, llc_bytes, d.n_q, d.n_oct, d.n_u, b, model)


def points(machine: dict[str, Any], qs: Sequence[int], placements: Sequence[str], variants: Sequence[str]
           ) -> list[tuple[int, str, str]]:
    """The (q, placement, variant) grid asked for, CPU-only points with "orig" only; InputError for a
    placement the machine has not measured or a variant the generator lacks."""
    known = ["cpu", *lap_placements(machine)]
    bad = [p for p in placements if p not in known]
    if bad:
        raise InputError(f"--placement {', '.join(bad)}: not measured in this machine file; expected one of: "
                         f"{', '.join(known)}")
    bad = [v for v in variants if v not in fmm_ulist.VARIANTS]
    if bad:
        raise InputError(f"--variant {', '.join(bad)}: unknown; expected one of: {', '.join(fmm_ulist.VARIANTS)}")
    bad_q = [q for q in qs if q < fmm_tree.MIN_ORDER]
    if bad_q:
        raise InputError(f"--q {bad_q[0]}: expected an expansion order >= {fmm_tree.MIN_ORDER}")
    return [(q, p, v) for q in qs for p in placements for v in (("orig",) if p == "cpu" else variants)]


def ulist_lines(machine_path: str | Path, machine: dict[str, Any], predictions: Sequence[UListPrediction]) -> list[str]:
    """The text report: what the inputs are, one line per point, and where the inputs were extrapolated."""
    first = predictions[0]
    lines = [f"U-list model, printed (003 eqs. 2-12) and extended, inputs measured on the study's systems "
             f"({shown(machine_path)}); nothing simulated",
             f"N = {first.n_points} points ({first.density} density), LLC {format_bytes(first.llc_bytes)}, host clock "
             f"{format_quantity(CLOCK_HZ, 'Hz')}",
             f"{'q':>3}  {'placement':<16} {'variant':<11} {'N_q':>4} {'N_oct':>7} {'N_U':>9} {'b':>4}  "
             f"{'printed':>20}  {'extended':>20}"]
    for p in predictions:
        m = p.model
        lines.append(f"{p.q:>3}  {p.placement:<16} {p.variant:<11} {p.n_q:>4} {p.n_oct:>7} {p.n_u:>9} {p.blocks:>4}  "
                     f"{_priced(m.cycles, m.energy_j):>20}  {_priced(m.ext_cycles, m.ext_energy_j):>20}")
    return lines + extrapolation_notes(machine, predictions)


def extrapolation_notes(machine: dict[str, Any], predictions: Sequence[UListPrediction]) -> list[str]:
    """A note for each pipelined LAP placement priced at a GEMM height N_q outside the heights its
    contention was measured at: the extended model holds the nearest measured factors there
    (``models.ulist.pipelined_contention_at``), an extrapolation no simulation has checked."""
    notes = []
    for lap in dict.fromkeys(p.placement for p in predictions if p.placement != "cpu" and p.variant == "pipelining"):
        heights = [h for h, _, _ in extended_params(machine, lap).pipelined_contention]
        outside = sorted({p.n_q for p in predictions if p.placement == lap and p.variant == "pipelining"
                          and heights and not heights[0] <= p.n_q <= heights[-1]})
        if outside:
            notes.append(f"note: {lap} pipelining at N_q = {', '.join(map(str, outside))}: the contention of the host "
                         f"with the concurrent GEMMs was measured at N_q = {heights[0]:g}..{heights[-1]:g}; the "
                         "extended model holds the nearest measured value there")
    return notes


def _priced(cycles: float, energy_j: float) -> str:
    return f"{cycles / 1e6:.1f} Mcyc {format_quantity(energy_j, 'J', 3)}"


def ulist_rows(predictions: Sequence[UListPrediction]) -> list[dict[str, object]]:
    """One CSV row per point (``ULIST_COLUMNS``)."""
    return [{"q": p.q, "placement": p.placement, "variant": p.variant, "n_points": p.n_points, "density": p.density,
             "llc_bytes": p.llc_bytes, "n_q": p.n_q, "n_oct": p.n_oct, "n_u": p.n_u, "blocks": p.blocks,
             "printed_cycles": p.model.cycles, "printed_s": p.model.cycles / CLOCK_HZ,
             "printed_energy_j": p.model.energy_j, "extended_cycles": p.model.ext_cycles,
             "extended_s": p.model.ext_cycles / CLOCK_HZ, "extended_energy_j": p.model.ext_energy_j}
            for p in predictions]


def ulist_figure(predictions: Sequence[UListPrediction], path: str | Path) -> Path:
    """Draw each model's time against q, a panel per placement and a line per variant and model (003 Fig. 7's
    projections, with the measured inputs), as a PNG."""
    from simulator.studies.plots import Panel, Series, line_panels

    panels = []
    for placement in dict.fromkeys(p.placement for p in predictions):
        mine = [p for p in predictions if p.placement == placement]
        series = []
        for variant in dict.fromkeys(p.variant for p in mine):
            pts = sorted((p for p in mine if p.variant == variant), key=lambda p: p.q)
            q = tuple(p.q for p in pts)
            series += [Series(f"{variant}, printed", q, tuple(p.model.cycles / CLOCK_HZ for p in pts)),
                       Series(f"{variant}, extended", q, tuple(p.model.ext_cycles / CLOCK_HZ for p in pts))]
        panels.append(Panel(placement, tuple(series)))
    first = predictions[0]
    return line_panels(panels, path, xlabel="expansion order q", ylabel="U-list time", x_unit="1", y_unit="s",
                       title=f"U-list model, N = {first.n_points}, LLC {format_bytes(first.llc_bytes)} (003 eqs. 2-12 "
                       "and extended)", logx=False, logy=None)


def run_ulist(machine_path: str | Path, qs: Sequence[int] | None, placements: Sequence[str] | None,
              variants: Sequence[str] | None, n_points: int, density: str, llc_text: str, blocks: int | None,
              outputs: Outputs = Outputs()) -> list[str]:
    """``offsim models ulist``: price the grid asked for (defaults: the machine file's q, every placement
    it measured, 003 Table 5's variants) and report it, then write the CSV and figure of ``outputs``."""
    outputs.check(listing=False)
    for option, value in (("--n-points", n_points), ("--blocks", blocks)):
        if value is not None and value < 1:
            raise InputError(f"{option} {value}: expected an integer >= 1")
    if n_points > fmm_ulist.MAX_TRACE_ADDRESSES:  # the tree holds every point, as the generator's does
        raise InputError(f"--n-points {n_points}: expected at most {fmm_ulist.MAX_TRACE_ADDRESSES:,}, the FMM "
                         "generator's bound (workloads.trace.MAX_TRACE_ADDRESSES)")
    if density not in fmm_ulist.DENSITIES:
        raise InputError(f"--density {density}: unknown; expected one of: {', '.join(fmm_ulist.DENSITIES)}")
    try:
        llc_bytes = parse_quantity(llc_text, "size")
    except UnitError as exc:
        raise InputError(f"--llc {llc_text!r}: {exc}") from None
    if not (llc_bytes >= 1 and llc_bytes.is_integer()):
        raise InputError(f"--llc {llc_text!r}: expected a whole number of bytes >= 1 B")
    for option, given in (("--q", qs), ("--placement", placements), ("--variant", variants)):
        refuse_repeats(option, given)
    machine = load_machine(machine_path)
    grid = points(machine, qs or sorted(int(q) for q in machine["dims"]),
                  placements or ["cpu", *lap_placements(machine)], variants or DEFAULT_VARIANTS)
    for q in sorted({q for q, _, _ in grid}):
        problem = fmm_ulist.order_problem(q, n_points)
        if problem:
            raise InputError(f"--q {q} with --n-points {n_points}: {problem}")
    try:
        predictions = [predict(machine, q, p, v, n_points, density, int(llc_bytes), blocks) for q, p, v in grid]
    except ValueError as exc:  # the model refuses a figure of the machine file, or the blocks asked for
        raise InputError(f"models ulist: {exc} (with --machine {machine_path}, --llc {llc_text!r}"
                         f"{f', --blocks {blocks}' if blocks else ''})") from None
    written = outputs.write(ULIST_COLUMNS, ulist_rows(predictions), lambda png: ulist_figure(predictions, png))
    return ulist_lines(machine_path, machine, predictions) + written
