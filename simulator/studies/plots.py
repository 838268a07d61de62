"""Standard figures: a quantity against a swept value, one line per group, one panel per other setting.

Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot, no
global backend switch) and saved as PNG. Axis units come from the key's suffix
(``_bytes`` -> B, ``_hz`` -> Hz, ``_s`` -> s, ...) or from the results table;
ticks use engineering prefixes, and binary prefixes for sizes in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, Formatter, FuncFormatter, LogLocator, NullFormatter, PercentFormatter

from simulator.units import COUNT_UNITS, NOT_KNOWN, format_bytes, format_count, format_quantity

MAX_PANEL_COLUMNS = 3
SI_UNITS = ("s", "J", "W", "Hz", "B/s", "flop/s")
# Distinct markers and dash styles so that lines lying on top of each other stay visible.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
LINESTYLES = ("-", "--", "-.", ":")


@dataclass(frozen=True)
class Series:
    """One line: its legend label and its points (x may be numbers or category names)."""

    label: str
    x: tuple[Any, ...]
    y: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"Series {self.label!r}: x has {len(self.x)} values, y has {len(self.y)}; expected equal")


@dataclass(frozen=True)
class Panel:
    """One sub-plot: a title (the fixed settings it shows) and its lines."""

    title: str
    series: tuple[Series, ...]


def save_figure(fig: Any, path: str | Path, dpi: int = 110) -> Path:
    """Lay out ``fig``, write it as PNG (creating the folder) and release it; returns the path."""
    import matplotlib.pyplot as plt  # pyplot keeps its figures until they are closed

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out


def format_value(value: Any, unit: str) -> str:
    """A value for labels: "4 MiB" for whole binary sizes, engineering prefixes otherwise; "not known" for NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if math.isnan(value):
        return NOT_KNOWN
    if unit == "ratio":  # a relative error or share, signed
        return f"{value:+.1%}"
    if unit == "B" and value and float(value).is_integer():
        return format_bytes(value)
    if unit in COUNT_UNITS:
        return format_count(value, unit)
    if not unit:
        return f"{value:g}"
    return format_quantity(float(value), unit)


def _formatter(unit: str) -> Formatter:
    if unit == "ratio":  # a relative error or share: -0.21 reads -21 %
        return PercentFormatter(xmax=1.0, decimals=None, symbol=" %")
    if unit == "1":  # a plain number (a speedup, a fraction of a peak): 0.001 reads 0.001, not 1m
        return FuncFormatter(lambda v, _pos: f"{v:g}")
    if unit == "B":
        return FuncFormatter(lambda v, _pos: format_value(int(v) if float(v).is_integer() else v, "B"))
    if unit in SI_UNITS:
        return EngFormatter(unit=unit, sep=" ")
    # Counts (lines, cycles, ...): engineering prefixes without the unit, which the axis label names.
    return EngFormatter(unit="", sep="")


def _numeric(values: list[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values)


def auto_log(values: list[Any], span: float = 16.0) -> bool:
    """Log scale when all values are positive numbers spanning a factor of ``span`` or more."""
    return _numeric(values) and bool(values) and min(values) > 0 and max(values) / min(values) >= span


def line_panels(panels: list[Panel], path: str | Path, *, xlabel: str, ylabel: str, x_unit: str = "",
                y_unit: str = "", title: str = "", legend_title: str = "", logx: bool | None = None,
                logy: bool | None = False) -> Path:
    """Draw ``panels`` side by side (shared y) and save a PNG at ``path``; return the path.

    Numeric x values are placed on a linear or log axis (``logx`` None: automatic,
    base 2 for sizes in bytes) and drawn as lines; other x values become evenly spaced
    categories, drawn as grouped bars (one bar per series in each category) on a y axis
    that starts at zero.
    """
    if not panels or not any(s.x for p in panels for s in p.series):
        raise ValueError(f"line_panels: nothing to draw for {path}; expected at least one panel with points")
    xs = [v for p in panels for s in p.series for v in s.x]
    numeric = _numeric(xs)
    categories: list[Any] = [] if numeric else sorted(set(xs), key=lambda v: (str(type(v)), v))
    use_logx = numeric and (auto_log(xs, 4.0 if x_unit == "B" else 16.0) if logx is None else logx)
    ys = [v for p in panels for s in p.series for v in s.y if v is not None and math.isfinite(v)]
    use_logy = bool(auto_log(ys) if logy is None else logy) and bool(ys) and min(ys) > 0
    n = len(panels)
    cols = min(n, MAX_PANEL_COLUMNS)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4.6 * cols + 1.2, 3.6 * rows + 0.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, sharey=True, squeeze=False)
    labels = list(dict.fromkeys(s.label for p in panels for s in p.series))
    styles = {label: dict(color=f"C{i % 10}", marker=MARKERS[i % len(MARKERS)],
                          linestyle=LINESTYLES[i % len(LINESTYLES)]) for i, label in enumerate(labels)}
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.set_visible(False)
            continue
        panel = panels[i]
        width = 0.8 / max(1, len(panel.series))
        for k, s in enumerate(panel.series):
            if numeric:
                ax.plot(list(s.x), list(s.y), markersize=5, linewidth=1.5, alpha=0.85, label=s.label or None,
                        **styles[s.label])
            else:  # categories (a coupling, a variant): grouped bars from zero, so a 3 % gap looks like one
                offset = (k - (len(panel.series) - 1) / 2) * width
                ax.bar([categories.index(v) + offset for v in s.x], [0.0 if v is None else v for v in s.y],
                       width=width, color=styles[s.label]["color"], alpha=0.85, label=s.label or None)
        if use_logx:
            ax.set_xscale("log", base=2 if x_unit == "B" else 10)
            if x_unit == "B" or len(set(xs)) <= 8:
                ax.set_xticks(sorted(set(xs)))
                ax.minorticks_off()
                if len(set(xs)) > 8:  # more size labels than fit side by side
                    ax.tick_params(axis="x", labelrotation=45)
        if not numeric:
            if not use_logy:
                ax.set_ylim(bottom=0)
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels([format_value(c, x_unit) for c in categories])
        elif not use_logx and len(set(xs)) <= 8:
            ax.set_xticks(sorted(set(xs)))
        if numeric:
            ax.xaxis.set_major_formatter(_formatter(x_unit))
        if use_logy:
            ax.set_yscale("log")
            if max(ys) / min(ys) < 1000:  # few decades: label 1, 2 and 5 of each
                ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(_formatter(y_unit))
        ax.grid(True, which="major", alpha=0.35)
        if panel.title:
            ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(xlabel)
        if i % cols == 0:
            ax.set_ylabel(ylabel)
    if any(labels):
        handles, names = axes.flat[0].get_legend_handles_labels()
        seen = dict(zip(names, handles))
        for ax in list(axes.flat)[1:n]:
            for h, l in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(l, h)
        handles = [seen[l] for l in labels if l in seen]
        names = [l for l in labels if l in seen]
        if n == 1:  # one panel: the legend fits inside, where it hides the fewest points
            axes.flat[0].legend(handles, names, title=legend_title or None, loc="best", fontsize=8, title_fontsize=8)
        else:
            fig.legend(handles, names, title=legend_title or None, loc="outside right upper", fontsize=8,
                       title_fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    return out


def bar_fill(i: int) -> dict[str, Any]:
    """The fill of the ``i``-th series of a bar chart (``bar`` keyword arguments): matplotlib's ten colours,
    hatched from the eleventh series on, so that no two series look alike."""
    return {"color": f"C{i % 10}", "hatch": "//" if i >= 10 else None}
