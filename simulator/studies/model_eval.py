"""Analytical models evaluated on their own, without a simulation: what ``offsim models`` prints.

* **LogCA** (000 ch. 4) for a row of a LogCA parameter table (the form of
  ``configs/presets/platforms/logca_table_4_3.yaml``): T0, T1 and the speedup at each granularity,
  the break-even granularity g1 and g_A/2 (exact roots, and the closed forms as 000 prints them),
  and Accelerometer's bottlenecks at each granularity (000 section 6.2.2: the parameters whose
  tenfold improvement raises the speedup by at least 20 %); on request the speedup with one
  parameter improved by a given factor (``Improvement``).
* **Energy roofline** (001 ch. 3-4) for a row of a platform table (the form of
  ``configs/presets/platforms/choi_table6.yaml``): the balances and, at each intensity, performance,
  energy efficiency, average power and what bounds the time.

Both are the pure functions of :mod:`models.logca`, :mod:`models.accelerometer` and
:mod:`models.roofline`; this module only picks the rows, evaluates and formats them. Times are in
host cycles and seconds (the row's host clock), granularities in bytes, intensities in flop/B.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.accelerometer import PARAMETERS, bottlenecks, improved_speedup
from models.calibrate import PlatformEntry, TableError, load_platform_entries
from models.logca import (LogCAParams, g1, g1_closed_form, g_half, g_half_closed_form, speedup, time_accelerated,
                          time_unaccelerated)
from models.roofline import MachineBalance, RooflinePlatform, Table6Row
from models.roofline import load_platforms as load_roofline_platforms
from simulator.config.bounds import DATA_BYTES
from simulator.errors import InputError
from simulator.config.files import write_atomic
from simulator.config.loader import PROJECT_ROOT
from simulator.config.outputs import check_output_file
from simulator.units import BINARY_PREFIXES, UnitError, format_bytes, format_quantity, parse_quantity

LOGCA_TABLE = PROJECT_ROOT / "configs" / "presets" / "platforms" / "logca_table_4_3.yaml"
ROOFLINE_TABLE = PROJECT_ROOT / "configs" / "presets" / "platforms" / "choi_table6.yaml"
#: default granularities: 16 B to 64 MiB in powers of 4, the range of 000's sweeps (000 section 3.2)
DEFAULT_GRANULARITIES = tuple(float(4**k) for k in range(2, 14))
#: default intensities: 1/8 to 64 flop/B in powers of 2, across every Table 6 platform's balance points
DEFAULT_INTENSITIES = tuple(2.0**k for k in range(-3, 7))


# ---- LogCA -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LogCAPoint:
    """LogCA at one granularity: T0 and T1 in host cycles, the speedup, the bottleneck label ("oCA")."""

    g_bytes: float
    t0_cycles: float
    t1_cycles: float
    speedup: float
    bottlenecks: str
    improved: tuple[float, ...] = ()


@dataclass(frozen=True)
class Improvement:
    """One LogCA parameter improved ``factor`` times (000 section 6.2.2: L and o divided, C and A multiplied;
    an infinite factor is the limit of 000's totem plots)."""

    parameter: str
    factor: float

    @property
    def label(self) -> str:
        """"o/10", "A x10", "L -> 0", "C -> inf"."""
        if math.isinf(self.factor):
            return f"{self.parameter} -> {'0' if self.parameter in 'Lo' else 'inf'}"
        return f"{self.parameter}/{self.factor:g}" if self.parameter in "Lo" else f"{self.parameter} x{self.factor:g}"

    @property
    def column(self) -> str:
        """The CSV column of the improved speedup: "speedup_o_10x", "speedup_A_infx"."""
        return f"speedup_{self.parameter}_{self.factor:g}x"


@dataclass(frozen=True)
class LogCAReport:
    """One table row evaluated: g1 and g_A/2 in bytes (exact roots; inf if never reached), the same
    by 000's closed forms, and the curve."""

    entry: PlatformEntry
    g1_bytes: float
    g_half_bytes: float
    g1_printed_bytes: float
    g_half_printed_bytes: float
    points: tuple[LogCAPoint, ...]
    improvements: tuple[Improvement, ...] = ()


def logca_report(entry: PlatformEntry, granularities: Sequence[float] = DEFAULT_GRANULARITIES,
                 improvements: Sequence[Improvement] = ()) -> LogCAReport:
    """Evaluate LogCA for ``entry`` at ``granularities`` (bytes, each > 0), with the speedup after each of
    ``improvements`` (Accelerometer's what-if, 000 section 6.2); ValueError if T0 overflows a float there."""
    p = entry.params
    with np.errstate(over="ignore"):  # an overflow is refused below, naming the row
        top = float(time_unaccelerated(p, max(granularities)))
    if not math.isfinite(top):
        raise ValueError(f"T0 = C g^beta overflows at g = {format_bytes(max(granularities))} (C "
                         f"{p.c_cycles_per_byte_beta:g}, beta {p.beta:g}); expected C and beta whose T0 stays a "
                         "finite number of cycles over the granularities asked for")
    points = []
    for g in granularities:
        label = "".join(name for name in PARAMETERS if name in bottlenecks(p, g))  # 000 Fig. 6.4's order
        points.append(LogCAPoint(g, float(time_unaccelerated(p, g)), float(time_accelerated(p, g)),
                                 float(speedup(p, g)), label, _improved(p, g, improvements)))
    try:
        closed = g1_closed_form(p), g_half_closed_form(p)
    except (OverflowError, ZeroDivisionError):
        raise ValueError(f"000's closed forms of g1 and g_A/2 overflow (C {p.c_cycles_per_byte_beta:g}, beta "
                         f"{p.beta:g}); expected C and beta of a kernel, such as 000 Table 4.3's") from None
    return LogCAReport(entry, g1(p), g_half(p), *closed, tuple(points), tuple(improvements))


def _improved(p: LogCAParams, g: float, improvements: Sequence[Improvement]) -> tuple[float, ...]:
    """The speedup at ``g`` after each improvement; InputError naming the --improve a model refuses."""
    out = []
    for i in improvements:
        try:
            out.append(float(improved_speedup(p, g, i.parameter, i.factor)))
        except (ValueError, OverflowError) as exc:
            raise InputError(f"--improve {i.label}: {exc}; expected a factor that leaves the parameter finite") \
                from None
    return tuple(out)


def _size(value: float) -> str:
    """A granularity in bytes for the text report, to 3 digits with binary prefixes ("2.47 KiB"); inf reads
    "never", a negative closed form "none (negative)"."""
    if math.isinf(value):
        return "never"
    if value < 0:
        return "none (negative)"
    for size, prefix in BINARY_PREFIXES:
        if value >= size:
            return f"{value / size:.3g} {prefix}B"
    return f"{value:.3g} B"


def logca_lines(report: LogCAReport) -> list[str]:
    """The text report of one row."""
    e, p = report.entry, report.entry.params
    f = e.host_frequency_hz
    latency = f"{p.latency:g} cycles/B" if p.latency_per_byte else f"{p.latency:g} cycles"
    lines = [f"{e.key}: {e.platform}, {e.kernel}  ({e.source})",
             f"  L {latency}  o {p.overhead_cycles:g} cycles  C {p.c_cycles_per_byte_beta:g} cycles/B^beta  "
             f"beta {p.beta:g}  A {p.acceleration:g}  host clock {format_quantity(f, 'Hz')}",
             *([f"  note: {e.note}"] if e.note else []),
             f"  g1 (speedup 1) {_size(report.g1_bytes)}; g_A/2 (speedup {p.acceleration / 2:g}) "
             f"{_size(report.g_half_bytes)}; 000's closed forms: {_size(report.g1_printed_bytes)}, "
             f"{_size(report.g_half_printed_bytes)}",
             f"  {'g':>10}  {'T0 (cycles)':>12}  {'T1 (cycles)':>12}  {'T1':>10}  {'speedup':>8}  "
             + "".join(f"{i.label:>9}  " for i in report.improvements) + "bottlenecks"]
    for pt in report.points:
        lines.append(f"  {format_bytes(pt.g_bytes):>10}  {pt.t0_cycles:>12.4g}  {pt.t1_cycles:>12.4g}  "
                     f"{format_quantity(pt.t1_cycles / f, 's'):>10}  {pt.speedup:>8.3g}  "
                     + "".join(f"{x:>9.3g}  " for x in pt.improved) + (pt.bottlenecks or "-"))
    return lines


LOGCA_COLUMNS = ("entry", "g_bytes", "t0_cycles", "t1_cycles", "t0_s", "t1_s", "speedup", "bottlenecks",
                 "g1_bytes", "g_half_bytes")


def logca_columns(improvements: Sequence[Improvement]) -> tuple[str, ...]:
    """``LOGCA_COLUMNS`` and a column per improvement."""
    return LOGCA_COLUMNS + tuple(i.column for i in improvements)


def logca_rows(reports: Sequence[LogCAReport]) -> list[dict[str, object]]:
    """One CSV row per entry and granularity (:func:`logca_columns`; seconds at the row's host clock)."""
    return [{"entry": r.entry.key, "g_bytes": pt.g_bytes, "t0_cycles": pt.t0_cycles, "t1_cycles": pt.t1_cycles,
             "t0_s": pt.t0_cycles / r.entry.host_frequency_hz, "t1_s": pt.t1_cycles / r.entry.host_frequency_hz,
             "speedup": pt.speedup, "bottlenecks": pt.bottlenecks, "g1_bytes": r.g1_bytes,
             "g_half_bytes": r.g_half_bytes, **{i.column: x for i, x in zip(r.improvements, pt.improved)}}
            for r in reports for pt in r.points]


# ---- energy roofline ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class RooflinePoint:
    """The roofline at one intensity (flop/B): GFLOP/s, GFLOP/J, average power (W), and what bounds the
    time: "memory", "compute" or, with a power cap, "power"."""

    intensity_flop_per_byte: float
    gflop_per_s: float
    gflop_per_j: float
    power_w: float
    bound: str


@dataclass(frozen=True)
class RooflineReport:
    """One platform evaluated: its key, what it is, its costs and balances, the settings they were taken
    with (in full, and as a short tag for figure titles), and the curve."""

    key: str
    description: str
    platform: RooflinePlatform
    balance: MachineBalance
    settings: str
    tag: str
    points: tuple[RooflinePoint, ...]


def _bound(platform: RooflinePlatform, i: float) -> str:
    if platform.delta_pi_w is not None and platform.b_tau_minus < i < platform.b_tau_plus:
        return "power"
    return "memory" if i < platform.b_tau else "compute"


def evaluate_roofline(key: str, description: str, platform: RooflinePlatform, intensities: Sequence[float],
                      settings: str, tag: str) -> RooflineReport:
    """The energy roofline of ``platform`` at ``intensities`` (flop/B, each > 0)."""
    points = tuple(RooflinePoint(i, float(platform.performance_gflop_per_s(i)),
                                 float(platform.energy_efficiency_gflop_per_j(i)), float(platform.power_w(i)),
                                 _bound(platform, i))
                   for i in intensities)
    return RooflineReport(key, description, platform, platform.balance(), settings, tag, points)


def roofline_report(key: str, row: Table6Row, intensities: Sequence[float] = DEFAULT_INTENSITIES,
                    precision: str = "double", throughput: str = "vendor", power_cap: bool = False) -> RooflineReport:
    """Evaluate the energy roofline of the table row ``row`` at ``intensities`` (flop/B). Raises ValueError
    when the row has no data for ``precision``."""
    platform = row.platform(precision, throughput, power_cap)  # type: ignore[arg-type]
    cap = ", power cap" if power_cap else ""
    return evaluate_roofline(key, f"{row.label}, {row.processor}", platform, intensities,
                             f"{precision} precision, {throughput} throughput{cap}", f"{precision}, {throughput}{cap}")


def system_roofline_report(system: str | Path, intensities: Sequence[float] = DEFAULT_INTENSITIES) -> RooflineReport:
    """Evaluate the energy roofline of a simulated system, its costs measured by the two micro runs of
    :func:`simulator.studies.roofline.measure_machine` (never read from its config). InputError when the
    config is bad or its DRAM cannot hold the read stream."""
    from simulator.config.loader import load_spec
    from simulator.config.schema import SystemSpec
    from simulator.studies.roofline import calibration_problem, measure_machine

    loaded = load_spec(system, SystemSpec)
    problem = calibration_problem(loaded)
    if problem:
        raise InputError(f"--system {system}: {problem}")
    platform = measure_machine(loaded).platform(loaded.spec.name)
    return evaluate_roofline(Path(system).stem, f"{loaded.spec.name} (simulated)", platform, intensities,
                             "costs measured on the simulated system by micro runs", "simulated")


def _cap_note(p: RooflinePlatform, b: MachineBalance) -> str:
    """Where the power cap binds (001 eqs. 36-37), or that it never does; "" without a cap."""
    if p.delta_pi_w is None:
        return ""
    cap = f"cap delta_pi {format_quantity(p.delta_pi_w, 'W')}"
    if b.b_tau_minus == b.b_tau_plus:
        return f"  {cap}: never reached"
    return f"  {cap}: binds between {b.b_tau_minus:.3g} and {b.b_tau_plus:.3g} flop/B"


def roofline_lines(report: RooflineReport) -> list[str]:
    """The text report of one row."""
    p, b = report.platform, report.balance
    lines = [f"{report.key}: {report.description}; {report.settings}",
             f"  tau_flop {format_quantity(p.tau_flop_s, 's/flop')}  tau_mem {format_quantity(p.tau_mem_s_per_byte, 's/B')}"
             f"  eps_flop {format_quantity(p.eps_flop_j, 'J/flop')}  eps_mem {format_quantity(p.eps_mem_j_per_byte, 'J/B')}"
             f"  pi_0 {format_quantity(p.pi0_w, 'W')}",
             f"  B_tau {b.b_tau:.3g} flop/B  B_eps {b.b_eps:.3g} flop/B  eps_hat {format_quantity(b.eps_hat_j, 'J/flop')}"
             f"  eta {b.eta:.3g}"
             + _cap_note(p, b),
             f"  {'I (flop/B)':>10}  {'GFLOP/s':>9}  {'GFLOP/J':>9}  {'power':>9}  bound"]
    for pt in report.points:
        lines.append(f"  {pt.intensity_flop_per_byte:>10.4g}  {pt.gflop_per_s:>9.4g}  {pt.gflop_per_j:>9.4g}  "
                     f"{format_quantity(pt.power_w, 'W'):>9}  {pt.bound}")
    return lines


ROOFLINE_COLUMNS = ("entry", "intensity_flop_per_byte", "gflop_per_s", "gflop_per_j", "power_w", "bound",
                    "b_tau_flop_per_byte", "b_eps_flop_per_byte")


def roofline_rows(reports: Sequence[RooflineReport]) -> list[dict[str, object]]:
    """One CSV row per entry and intensity (``ROOFLINE_COLUMNS``)."""
    return [{"entry": r.key, "intensity_flop_per_byte": pt.intensity_flop_per_byte, "gflop_per_s": pt.gflop_per_s,
             "gflop_per_j": pt.gflop_per_j, "power_w": pt.power_w, "bound": pt.bound,
             "b_tau_flop_per_byte": r.balance.b_tau, "b_eps_flop_per_byte": r.balance.b_eps}
            for r in reports for pt in r.points]


# ---- tables and output ---------------------------------------------------------------------------------

def load_logca_table(path: str | Path) -> dict[str, PlatformEntry]:
    """The rows of a LogCA table; a bad table is an InputError naming the file and the row, a line per problem."""
    return _table_rows(load_platform_entries, path)


def load_roofline_table(path: str | Path) -> dict[str, Table6Row]:
    """The rows of a roofline platform table; a bad table is an InputError naming the file and the row, a line
    per problem."""
    return _table_rows(load_roofline_platforms, path)


def _table_rows(load: Callable[[str | Path], dict], path: str | Path) -> dict:
    """``load(path)``: a model's table given with --table; its TableError as an InputError, a line per problem."""
    try:
        return load(path)
    except TableError as exc:
        raise InputError([f"--table: {problem}" for problem in exc.problems]) from None


def shown(path: str | Path) -> str:
    """``path`` as a report names it: relative to the project root when inside it."""
    return str(Path(path).relative_to(PROJECT_ROOT) if Path(path).is_relative_to(PROJECT_ROOT) else path)


def pick(rows: dict, names: Sequence[str], path: str | Path) -> list[str]:
    """``names``, each checked to be a row of the table at ``path`` (InputError otherwise)."""
    unknown = [n for n in names if n not in rows]
    if unknown:
        raise InputError(f"{', '.join(repr(n) for n in unknown)}: not a row of {shown(path)}; expected one of: "
                         f"{', '.join(sorted(rows))}")
    refuse_repeats("ENTRY", names)
    return list(names)


def write_csv(path: str | Path, columns: Sequence[str], rows: list[dict[str, object]]) -> Path:
    """Write ``rows`` to the CSV file ``path`` atomically, floats in full precision."""
    def write(tmp: Path) -> None:
        with tmp.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(columns))
            writer.writeheader()
            writer.writerows({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()} for row in rows)
    return write_atomic(path, write)


def logca_figure(reports: Sequence[LogCAReport], path: str | Path) -> Path:
    """Draw the speedup against the granularity, one line per entry (log-log, as 000 Fig. 4.2), as a PNG."""
    from simulator.studies.plots import Panel, Series, line_panels

    series = tuple(Series(f"{r.entry.key}{', ' + label if label else ''}", tuple(pt.g_bytes for pt in r.points),
                          tuple(pt.speedup if k < 0 else pt.improved[k] for pt in r.points))
                   for r in reports for k, label in [(-1, "")] + [(k, i.label) for k, i in enumerate(r.improvements)])
    return line_panels([Panel("", series)], path, xlabel="granularity g", ylabel="speedup T0 / T1", x_unit="B", y_unit="1",
                       title="LogCA (000 eqs. 4.1-4.2)", logx=True, logy=None)


def roofline_figure(reports: Sequence[RooflineReport], path: str | Path) -> Path:
    """Draw, per entry, the speed relative to the peak flop rate (W tau_flop / T, the roofline) and the energy
    efficiency relative to its best (W eps_hat / E, the arch line), against intensity (001 Fig. 2), as a PNG."""
    from simulator.studies.plots import Panel, Series, line_panels

    panels = []
    for r in reports:
        x = tuple(pt.intensity_flop_per_byte for pt in r.points)
        speed = tuple(pt.gflop_per_s * 1e9 * r.platform.tau_flop_s for pt in r.points)
        efficiency = tuple(pt.gflop_per_j * 1e9 * r.balance.eps_hat_j for pt in r.points)
        panels.append(Panel(f"{r.key} ({r.tag})", (Series("speed, W tau_flop / T", x, speed),
                                    Series("energy efficiency, W eps_hat / E", x, efficiency))))
    return line_panels(panels, path, xlabel="intensity (flop/B)", ylabel="relative to the peak", x_unit="1", y_unit="1",
                       title="Energy roofline (001 eqs. 3-6)", logx=True, logy=True)


def positive_quantity(text: str, dimension: str, option: str, expected: str) -> float:
    """``text``, an option's value with its unit ("4 KiB", "36.8 ns"), in the base unit of ``dimension``;
    InputError naming ``option`` and, when the value is not > 0, what was ``expected``."""
    try:
        value = parse_quantity(text, dimension)
    except UnitError as exc:
        raise InputError(f"{option} {text!r}: {exc}") from None
    if not value > 0:
        raise InputError(f"{option} {text!r}: expected {expected}")
    return value


def refuse_repeats(option: str, texts: Sequence[object] | None, values: Sequence[object] | None = None) -> None:
    """InputError naming ``option`` and the first of ``texts`` (as given) whose value (``values``, by default the
    texts) was given before: a repeat would print its row or column twice. Values compare as numbers, so that
    o=10 and o=10.0 are one."""
    seen: dict[object, object] = {}
    for text, value in zip(texts or (), texts or () if values is None else values):
        if value in seen:
            again = "" if seen[value] == text else f" (as {seen[value]!r} before)"
            raise InputError(f"{option} {text!r}: given twice{again}; expected each value once")
        seen[value] = text


def parse_granularities(texts: Sequence[str] | None) -> tuple[float, ...]:
    """``--g`` values ("4 KiB", "1 MB") in bytes, each > 0 and within ``DATA_BYTES``; the defaults when none
    are given."""
    if not texts:
        return DEFAULT_GRANULARITIES
    expected = f"a granularity > 0 B and {DATA_BYTES.why}"
    values = tuple(positive_quantity(text, "size", "--g", expected) for text in texts)
    for text, value in zip(texts, values):
        if value > DATA_BYTES.high:
            raise InputError(f"--g {text!r}: expected {expected}")
    refuse_repeats("--g", texts, values)
    return values


#: The arithmetic intensities ``--intensity`` takes, flop/B: wide of every platform's balance, and narrow enough that
#: the roofline's time and energy per flop and per byte stay finite numbers
INTENSITY_RANGE = (1e-9, 1e9)


def parse_intensities(texts: Sequence[str] | None) -> tuple[float, ...]:
    """``--intensity`` values in flop/B ("0.5", "4 flop/B"), each in :data:`INTENSITY_RANGE`; the defaults when
    none."""
    if not texts:
        return DEFAULT_INTENSITIES
    values = []
    for text in texts:
        number = text.strip().removesuffix("flop/B").strip()
        try:
            i = float(number)
        except ValueError:
            i = math.nan
        low, high = INTENSITY_RANGE
        if not low <= i <= high:
            raise InputError(f"--intensity {text!r}: expected an arithmetic intensity from {low:g} to {high:g} "
                             "flop/B, e.g. 0.5 or '4 flop/B'")
        values.append(i)
    refuse_repeats("--intensity", texts, values)
    return tuple(values)


@dataclass(frozen=True)
class Outputs:
    """The files ``offsim models`` writes beside its text report: ``csv`` (--out) and ``png`` (--plot), or None."""

    csv: str | None = None
    png: str | None = None

    def check(self, listing: bool, draws: bool = True) -> None:
        """Refuse, before any work, any file when the command only lists the table's rows (``listing``), a
        figure from a command that draws none (not ``draws``), and a path ``check_output_file`` refuses (a
        directory, another suffix than .csv or .png, a place that cannot be written)."""
        if self.png is not None and not draws:
            raise InputError(f"--plot {self.png}: this model draws no figure; expected --out FILE.csv for its numbers")
        for option, path, kind in (("--out", self.csv, "CSV"), ("--plot", self.png, "PNG")):
            if path is None:
                continue
            if listing:
                raise InputError(f"{option} {path}: given without an ENTRY; expected one or more rows to evaluate "
                                 "(without one, the command lists the table's rows and writes nothing)")
            check_output_file(path, option, f".{kind.lower()}")

    def write(self, columns: Sequence[str], rows: list[dict[str, object]],
              draw: Callable[[Path], Path] | None = None) -> list[str]:
        """Write the CSV and draw the figure where asked (``draw``: None for a model without one, whose
        :meth:`check` refused a figure); return "written" lines naming them."""
        written = []
        if self.csv is not None:
            written.append(str(write_csv(self.csv, columns, rows)))
        if self.png is not None and draw is not None:
            written.append(str(draw(Path(self.png))))
        return [f"written   {path}" for path in written]


def listing_lines(rows: dict[str, str]) -> list[str]:
    """The lines that list a table's rows (what the command prints without an entry)."""
    width = max(map(len, rows), default=0)
    return [f"{key:<{width}}  {what}" for key, what in rows.items()]


def joined(reports: list[list[str]]) -> list[str]:
    """Text reports one after another, a blank line between them."""
    return [line for i, lines in enumerate(reports) for line in ([""] if i else []) + lines]


def parse_improvements(texts: Sequence[str] | None) -> tuple[Improvement, ...]:
    """``--improve`` values ("o=10", "A=inf"): a LogCA parameter and a factor >= 1 (inf: the limit)."""
    out = []
    for text in texts or ():
        name, _, factor_text = text.partition("=")
        try:
            factor = float(factor_text)
        except ValueError:
            factor = math.nan
        if name.strip() not in PARAMETERS or not factor >= 1:
            raise InputError(f"--improve {text!r}: expected PARAMETER=FACTOR with a parameter of "
                             f"{', '.join(PARAMETERS)} and a factor >= 1 or inf, e.g. o=10")
        out.append(Improvement(name.strip(), factor))
    refuse_repeats("--improve", texts, out)
    return tuple(out)


def run_logca(entries: Sequence[str], table: str | Path, g_texts: Sequence[str] | None,
              outputs: Outputs = Outputs(), improve_texts: Sequence[str] | None = None) -> list[str]:
    """``offsim models logca``: the table's rows when ``entries`` is empty, else each entry's report
    (text lines), then the files of ``outputs``."""
    outputs.check(listing=not entries)
    granularities, improvements = parse_granularities(g_texts), parse_improvements(improve_texts)  # even to list
    rows = load_logca_table(table)
    if not entries:
        return listing_lines({k: f"{e.platform}, {e.kernel}" for k, e in rows.items()})
    reports = []
    for name in pick(rows, entries, table):
        try:
            reports.append(logca_report(rows[name], granularities, improvements))
        except ValueError as exc:
            raise InputError(f"{table}: {name}: {exc}") from None
    written = outputs.write(logca_columns(improvements), logca_rows(reports), lambda png: logca_figure(reports, png))
    return joined([logca_lines(r) for r in reports]) + written


def run_roofline(entries: Sequence[str], table: str | Path, intensity_texts: Sequence[str] | None,
                 precision: str, throughput: str, power_cap: bool, outputs: Outputs = Outputs(),
                 systems: Sequence[str] = ()) -> list[str]:
    """``offsim models roofline``: the table's rows when neither ``entries`` nor ``systems`` are given,
    else the report of each entry (its precision, throughput and cap) and of each simulated system
    (its costs measured), as text lines, then the files of ``outputs``."""
    outputs.check(listing=not entries and not systems)
    intensities = parse_intensities(intensity_texts)  # refused as input with or without an entry
    rows = load_roofline_table(table)
    if not entries and not systems:
        return listing_lines({k: f"{r.label} ({r.processor})" for k, r in rows.items()})
    reports = []
    for name in pick(rows, entries, table):
        try:
            reports.append(roofline_report(name, rows[name], intensities, precision, throughput, power_cap))
        except ValueError as exc:
            raise InputError(f"{shown(table)}: {name}: {exc}; expected a platform with {precision}-precision data, or "
                             f"--precision {'single' if precision == 'double' else 'double'}") from None
    refuse_repeats("--system", systems)
    reports += [system_roofline_report(system, intensities) for system in systems]
    written = outputs.write(ROOFLINE_COLUMNS, roofline_rows(reports), lambda png: roofline_figure(reports, png))
    return joined([roofline_lines(r) for r in reports]) + written

