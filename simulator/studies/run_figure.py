"""The figure of one run: where its time went, stage by stage, and its energy by component and category.

Left: each stage of each trace unit (``stage/<unit>/<stage>``) as a bar of its compute time and its
stall time (s), then each accelerator's busy time (at most :data:`MAX_STAGE_BARS` bars: the longest, and the
rest as one). Right: each component's energy (J), stacked by the
categories its energy model charges (host dynamic and static, DRAM background, refresh, activate,
read and write, ...). Drawn on the Agg canvas; the same results give the same bytes.
"""

from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, MaxNLocator

from simulator.results import Results
from simulator.studies.plots import bar_fill
from simulator.units import format_quantity


def stage_times_s(results: Results) -> list[tuple[str, float, float]]:
    """(``unit/stage``, compute time s, stall time s) per stage in the order the run recorded them, then
    (``<accelerator> busy``, busy time s, 0) per accelerator."""
    stages: dict[str, dict[str, float]] = {}
    busy: dict[str, float] = {}
    for component, quantity, value, _unit in results.rows:
        if component.startswith("stage/") and quantity in ("compute_s", "stall_s"):
            stages.setdefault(component[len("stage/"):], {})[quantity] = value
        elif component.startswith("accel/") and quantity == "busy_s":
            busy[component[len("accel/"):]] = value
    return ([(name, t.get("compute_s", 0.0), t.get("stall_s", 0.0)) for name, t in stages.items()]
            + [(f"{name} busy", t, 0.0) for name, t in busy.items()])


#: Most bars of the time panel: beyond, the longest stages keep theirs (in the run's order) and the rest share one
MAX_STAGE_BARS = 40
#: Longest bar label, characters (a longer one is cut, with an ellipsis)
MAX_BAR_LABEL_CHARS = 48


def shown_stages(stages: list[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    """``stages`` (``stage_times_s``) as the time panel draws them: at most :data:`MAX_STAGE_BARS` bars, the longest
    stages (compute + stall) in their order and one bar summing the others; labels cut to
    :data:`MAX_BAR_LABEL_CHARS` characters."""
    def label(name: str) -> str:
        return name if len(name) <= MAX_BAR_LABEL_CHARS else name[:MAX_BAR_LABEL_CHARS - 1] + "\u2026"

    def unique(labels: list[str]) -> list[str]:
        """Labels made distinct with a count (the axis draws equal labels on one bar), '$' shown as written
        (matplotlib would read it as the start of math text)."""
        seen: dict[str, int] = {}
        out = []
        for text in labels:
            seen[text] = seen.get(text, 0) + 1
            out.append((text if seen[text] == 1 else f"{text} ({seen[text]})").replace("$", r"\$"))
        return out

    if len(stages) > MAX_STAGE_BARS:
        order = sorted(range(len(stages)), key=lambda i: -(stages[i][1] + stages[i][2]))
        kept = sorted(order[:MAX_STAGE_BARS - 1])
        rest = order[MAX_STAGE_BARS - 1:]
        stages = [stages[i] for i in kept] + [(f"{len(rest)} other stages", sum(stages[i][1] for i in rest),
                                               sum(stages[i][2] for i in rest))]
    return list(zip(unique([label(name) for name, _, _ in stages]), (c for _, c, _ in stages),
                    (s for _, _, s in stages)))


def energy_by_category_j(results: Results) -> dict[str, dict[str, float]]:
    """component -> category -> energy (J), from the ``energy/<component>`` rows."""
    out: dict[str, dict[str, float]] = {}
    for component, quantity, value, _unit in results.rows:
        if component.startswith("energy/"):
            out.setdefault(component[len("energy/"):], {})[quantity] = value
    return out


def run_figure_png(results: Results, title: str = "", dpi: int = 110) -> bytes:
    """The run's stage times and energy breakdown (module docstring) as PNG bytes."""
    stages = shown_stages(stage_times_s(results))
    energy = energy_by_category_j(results)
    fig = Figure(figsize=(12.0, 0.9 + 0.38 * max(len(stages), len(energy), 4)))
    FigureCanvasAgg(fig)
    ax_t, ax_e = fig.subplots(1, 2)
    names = [name for name, _, _ in stages]
    compute = [c for _, c, _ in stages]
    stall = [s for _, _, s in stages]
    ax_t.barh(names, compute, color="C0", label="compute")
    ax_t.barh(names, stall, left=compute, color="C0", alpha=0.35, label="stall (memory, issue, waits on an accelerator)")
    ax_t.invert_yaxis()  # first stage on top
    ax_t.xaxis.set_major_formatter(EngFormatter(unit="s", sep=" "))
    ax_t.xaxis.set_major_locator(MaxNLocator(5))
    ax_t.set_xlabel("time")
    ax_t.set_title("time by stage")
    if stages:
        ax_t.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize="small", frameon=False)
    components = sorted(energy, key=lambda c: -sum(energy[c].values()))
    categories = list(dict.fromkeys(q for c in components for q in energy[c]))
    left = [0.0] * len(components)
    for i, category in enumerate(categories):
        widths = [energy[c].get(category, 0.0) for c in components]
        ax_e.barh(components, widths, left=left, **bar_fill(i), label=category)
        left = [a + b for a, b in zip(left, widths)]
    ax_e.invert_yaxis()  # largest on top
    ax_e.xaxis.set_major_formatter(EngFormatter(unit="J", sep=" "))
    ax_e.xaxis.set_major_locator(MaxNLocator(5))
    ax_e.set_xlabel("energy")
    ax_e.set_title(f"energy by component (total {format_quantity(sum(left), 'J')})")
    if categories:
        ax_e.legend(loc="best", fontsize="x-small", ncol=2)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=dpi)
    return png.getvalue()
