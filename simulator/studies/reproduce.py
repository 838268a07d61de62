"""``offsim reproduce TARGET``: run one study and put each published figure next to ours.

A target names a paper's result set (``TARGETS``). Reproducing it runs the
study on the simulator (or, for the FMM grid, reuses a complete stored run),
compares every published value of ``results/reference/<target>.csv`` that the
study can produce with ours, and writes ``report.md`` in the output directory
(default ``results/reproduce/<target>/``): one Markdown table per published
table with the deviation ours / published - 1, followed by the figures the
study drew. Every referenced figure is checked to exist and be a PNG before the
report is written. Each row carries its reason from ``results/reference/reasons.csv``
(why it misses by more than 20 %, that it was used for fitting, or that the source
contradicts itself there, in which case it is listed apart), and the report opens
with the counts of ``simulator.studies.fidelity.tally``.

The reference CSVs hold one published value a row (columns ``table, row,
column, value, unit, source``); ``source`` cites the table and the source line
(``000 Table 4.4 (000:L1034)``). Values are read from the papers' text, never
derived here; derived quantities (B_tau from Table 6's throughputs) are
computed at report time and say so.

``quick`` runs each study with fewer or smaller points (documented per target);
its figures are then not comparable one to one where the problem size differs,
and the report says so.

The output directory may be a new path, an empty directory or a previous output
of the same target, which is overwritten: one whose marker file ``MARKER``
names the target (written when the run starts), or, from before the marker,
whose ``report.md`` does. Anything else is refused (InputError) before any work.
A run refused on input (a target not available) removes what it created.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from simulator.errors import InputError
from simulator.config.loader import PROJECT_ROOT, load_spec
from simulator.config.schema import SystemSpec
from simulator.config.outputs import check_output_target, first_missing, listing, make_output_dir, remove_created
from simulator.studies.plots import save_figure
from simulator.studies.comparisons import Comparison, Reproduction, Section, published
from simulator.studies.fidelity import Standing, median, standing, tally
from simulator.studies.references import Reason, ReferenceRow, index_rows, load_reasons, load_reference
from workloads.kernels import host_cycles

if TYPE_CHECKING:
    import pandas as pd

    from simulator.studies.roofline import MeasuredMachine

DEFAULT_OUT_DIR = Path("results") / "reproduce"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MARKER = ".offsim-reproduce"  # in an output directory: the name of the target whose output it holds


# --------------------------------------------------------------------------- report structure


class TargetUnavailable(InputError):
    """The study behind a target is not in the code base (yet)."""


def _fmt(x: float | None) -> str:
    if x is None:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 1e4 and float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:.4g}"


def _fmt_dev(d: float | None) -> str:
    return "—" if d is None else f"{d * 100:+.1f} %"


def render_markdown(rep: Reproduction, out_dir: Path, quick: bool, reasons: list[Reason] | None = None) -> str:
    """The report as Markdown; figure links are relative to ``out_dir``. ``reasons`` (default: the reasons
    table) gives each row's reason; self-contradicting source entries are listed apart."""
    reasons = load_reasons() if reasons is None else reasons
    lines = [f"# Reproduction: {rep.title}", "",
             f"Target `{rep.target}`{' (quick mode: fewer / smaller points)' if quick else ''}. "
             "Deviation = ours / reference - 1. Published values: "
             f"`results/reference/{rep.target.replace('-', '_')}.csv`; reasons: `results/reference/reasons.csv`.", "",
             f"**Summary:** {tally(rep, reasons).sentence()}", ""]
    for note in rep.notes:
        lines.append(f"- {note}")
    if rep.notes:
        lines.append("")
    apart: list[tuple[Comparison, Standing]] = []
    for sec in rep.sections:
        lines += [f"## {sec.title}", ""]
        if sec.text:
            lines += [sec.text, ""]
        lines += [f"| figure | {sec.reference_header} | {sec.ours_header} | deviation | unit | source | note | reason |",
                  "|---|---:|---:|---:|---|---|---|---|"]
        shown = []
        for c in sec.rows:
            st = standing(rep.target, sec, c, reasons)
            if st.contradiction:
                apart.append((c, st))
                continue
            shown.append(c)
            lines.append(f"| {c.label} | {_fmt(c.reference)} | {_fmt(c.ours)} | {_fmt_dev(c.deviation)} | "
                         f"{c.unit} | {c.source} | {c.note} | {st.cell()} |")
        devs = [abs(c.judged_deviation) for c in shown if c.judged_deviation is not None]
        if devs:
            met_bounds = " (a bound met counts as 0)" if any(c.upper_bound for c in shown) else ""
            lines += ["", f"{len(devs)} of {len(shown)} compared; |deviation|{met_bounds} median "
                      f"{median(devs) * 100:.1f} %, max {max(devs) * 100:.1f} %."]
        lines.append("")
    if apart:
        lines += ["## Where the source contradicts itself (counted neither way)", "",
                  "| figure | published | ours | deviation | unit | source | evidence |", "|---|---:|---:|---:|---|---|---|"]
        lines += [f"| {c.label} | {_fmt(c.reference)} | {_fmt(c.ours)} | {_fmt_dev(c.deviation)} | {c.unit} | "
                  f"{c.source} | {st.cell()} |" for c, st in apart]
        lines.append("")
    if rep.figures:
        lines += ["## Figures", ""]
        for fig in rep.figures:
            rel = os.path.relpath(fig, out_dir)
            lines += [f"![{fig.stem}]({rel})", ""]
    return "\n".join(lines)


def check_figures(figures: tuple[Path, ...]) -> None:
    """Raise RuntimeError unless every figure exists and starts with the PNG signature."""
    for fig in figures:
        if not fig.is_file():
            raise RuntimeError(f"figure {fig} referenced by the report does not exist")
        with fig.open("rb") as fh:
            if fh.read(8) != PNG_MAGIC:
                raise RuntimeError(f"figure {fig} is not a PNG file")


# --------------------------------------------------------------------------- prajapati-stencil

CHAIN_DIMS = (936, 1008, 552, 368, 1016, 616, 544)  # 004 §D.7 (004:L5302)
CHAIN_SQRT_M = 256  # sqrt(M) in elements, 004 §D.7 (004:L5351)
STENCIL_TILING = PROJECT_ROOT / "configs" / "studies" / "stencil_tiling.yaml"
# quick: half the steps (t_T 4), a 256^2 engine grid with two tile shapes; host grid stays 1024^2 (> LLC)
STENCIL_QUICK_STEPS = 4
STENCIL_QUICK_ENGINE = {"engine_grid": (256, 256), "engine_steps": 8, "engine_tiles": ((4, (8, 32)), (8, (32, 32)))}


def _prajapati_stencil(out: Path, quick: bool) -> Reproduction:
    from dataclasses import replace

    from models.data_movement import fused_data_movement, min_op_count, unfused_data_movement
    from simulator.studies.stencil.study import TileSpec, load_study, run_study

    ref = index_rows(load_reference("prajapati_stencil"))
    m_elems = CHAIN_SQRT_M ** 2
    order = min_op_count(CHAIN_DIMS)
    unfused = unfused_data_movement(order, m_elems)
    plan = fused_data_movement(order, m_elems)
    chosen = {node.choice: node for node in plan.nodes.values() if node.choice in ("left", "right")}
    table = "004 §D.7 worked example"
    root = plan.nodes[(1, len(CHAIN_DIMS) - 1)]
    ours = {("chain", "minimum op count"): order.op_count,
            ("chain", "unfused data movement S(1,6)"): unfused,
            ("chain", "fused data movement F(1,6)+P0P6"): plan.total_words,
            ("chain", "fused data movement F(1,6)"): root.f_best,
            ("chain", "reduction of fused over unfused data movement"): 100 * (1 - plan.total_words / unfused),
            # Fig. D.11 prints the root's costs in units of 1e5 elements (its "multiples of 10^4", 004:L5320, is
            # garbled: 31 + 28 + 20 = 79 is F(1,6) = 7,882,874)
            ("T5 (root)", "F without fusion"): root.f_none / 1e5,
            ("T5 (root)", "F with left fuse"): root.f_left / 1e5,
            ("T5 (root)", "F with right fuse"): root.f_right / 1e5}
    for key, choice in (("T3 (right fuse)", "right"), ("T4 (left fuse)", "left")):
        node = chosen.get(choice)
        ours[(key, "tile x")] = None if node is None else node.tile_x
        ours[(key, "tile y")] = None if node is None else node.tile_y
    rows = []
    for (row, col), value in ours.items():
        r = ref[(table, row, col)]
        note = "unrounded" if "tile" in col or row.startswith("T5") else ""
        rows.append(published(r, f"{row}: {col}" if row != "chain" else col, None if value is None else float(value),
                              note))
    chain = Section("Matrix chain worked example (004 §D.7)", tuple(rows),
                    f"P = {list(CHAIN_DIMS)}, sqrt(M) = {CHAIN_SQRT_M}; our minimum-op-count tree "
                    f"`{order.tree()}` (004's rendering of the tree at 004:L5303 is garbled; "
                    "we read it as `((A1(A2A3))((A4A5)A6))`, the tree of minimum operation count).")

    area = _gpu_area(ref)
    cfg = load_study(STENCIL_TILING)
    if quick:
        q = STENCIL_QUICK_ENGINE
        cfg = replace(cfg, steps=STENCIL_QUICK_STEPS, host_tile=replace(cfg.host_tile, t_t=STENCIL_QUICK_STEPS),
                      engine_grid=q["engine_grid"], engine_steps=q["engine_steps"],
                      engine_tiles=tuple(TileSpec(t_t, t_s) for t_t, t_s in q["engine_tiles"]))
    summary = run_study(cfg, out, owned=True)
    by = {t["scheme"]: t for t in summary["traffic"]}
    red_sim = 1 - by["time_tiled"]["sim_words"] / by["naive"]["sim_words"]
    red_model = 1 - by["time_tiled"]["model_words"] / by["naive"]["model_words"]
    src = "004 eqs. A/B via models.stencil"
    traffic = [Comparison(f"{s} sweep DRAM traffic", by[s]["model_words"], by[s]["sim_words"], "words", src)
               for s in ("naive", "time_tiled")]
    traffic.append(Comparison("traffic reduction of time tiling", red_model, red_sim, "fraction", src))
    traffic += [Comparison(f"engine time t_T={e['t_t']} t_s={tuple(e['t_s'])}", e["model_time_s"] * 1e3,
                           e["sim_time_s"] * 1e3, "ms", "004 eqs. A.13/A.31 via models.stencil") for e in summary["engine"]]
    tiling = Section("Stencil tiling study: simulation vs the 004 models", tuple(traffic),
                     f"{cfg.stencil} on {cfg.grid[0]}x{cfg.grid[1]} points, {cfg.steps} steps, host tile "
                     f"{cfg.host_tile.kind} t_t={cfg.host_tile.t_t} t_s={cfg.host_tile.t_s}. 004 prints no traffic figure for this configuration, so the reference "
                     "column is the 004 model evaluated for it, not a published number.",
                     reference_header="004 model", ours_header="simulated")
    return Reproduction("prajapati-stencil", "Prajapati (004): matrix-chain data movement and stencil tiling",
                        (chain, area, tiling), (out / summary["figure"],))


def _gpu_area(ref: dict[tuple[str, str, str], ReferenceRow]) -> Section:
    """004 app. C.2-C.4: the Maxwell area model on the GTX980 (calibration), the Titan X (validation), both
    without their caches, and Table C.2's cache-less designs."""
    from simulator.studies.gpu_area_claims import claims

    rows = tuple(published(ref[k], f"{k[1]}: {k[2]}", ours) for k, ours in claims().items())
    return Section("004 app. C.2-C.4: die area of the Maxwell GPUs and of the cache-less designs", rows,
                   "`models.gpu_area` (eq. C.6) with 004's Cacti-fitted memory lines and the areas it measured on "
                   "the GTX980's die photograph (`simulator/studies/gpu_area_claims.py`); the L1 of an SM pair "
                   "is 48 KiB, the size at which 004's L1 line gives its printed 7.78 mm^2. Section C.4.1 deletes "
                   "the L1 pairs and the L2 from both dies; Table C.2's designs have no caches and keep 2 KiB of "
                   "registers per vector unit.")


# --------------------------------------------------------------------------- choi-roofline

ROOFLINE_STUDY = PROJECT_ROOT / "configs" / "studies" / "roofline.yaml"
ROOFLINE_QUICK_INTENSITIES = (0.125, 0.5, 1.0, 2.0, 4.0, 16.0)
ROOFLINE_QUICK_BYTES = 4 * 2**20


def _plot_roofline_vs_table6(vendor, measured, path: Path, cores: int = 1) -> Path:
    """Time roofline and arch line of 001 Table 6's Nehalem next to the simulated machine's."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    grid = np.logspace(-2, 2, 300)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, fn, ylabel in ((axes[0], "performance_gflop_per_s", "GFLOP/s"),
                           (axes[1], "energy_efficiency_gflop_per_j", "GFLOP/J")):
        for plat, style in ((vendor, "-"), (measured, "--")):
            ax.loglog(grid, getattr(plat, fn)(grid), style, label=plat.name)
            ax.axvline(plat.b_tau, ls=style, color="grey", lw=0.6)
        ax.set_xlabel("intensity I (flop/B)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_title("time roofline (grey: B_tau)")
    axes[1].set_title("energy arch line")
    fig.suptitle("001 Table 6 Nehalem (4 cores, vendor peaks) vs the simulated "
                 + ("single core" if cores == 1 else f"{cores}-core host"))
    return save_figure(fig, path)


def _choi_roofline(out: Path, quick: bool) -> Reproduction:
    from models.roofline import RooflinePlatform
    from simulator.studies.roofline import peak_dram_bytes_per_s
    from simulator.studies.roofline_claims import claim
    from simulator.studies.stencil.study import intensity_sweep, load_study, measure_machine, plot_roofline

    ref = index_rows(load_reference("choi_roofline"))
    t6 = {k[2]: r for k, r in ref.items() if k[0] == "001 Table 6 Nehalem"}
    cfg = load_study(ROOFLINE_STUDY)
    system = PROJECT_ROOT / cfg.system  # the Nehalem host with 001 Table 6 energies
    if quick:
        machine = measure_machine(system, flops=10**6, stream_bytes=ROOFLINE_QUICK_BYTES)
        intensities, total = ROOFLINE_QUICK_INTENSITIES, ROOFLINE_QUICK_BYTES
    else:
        machine = measure_machine(system)
        intensities, total = cfg.intensities, cfg.total_bytes
    machine, points = intensity_sweep(system, intensities, total, machine=machine)
    loaded = load_spec(system, SystemSpec)
    host = loaded.spec.host
    cores = host.cores
    plat = machine.platform(f"simulated {loaded.spec.name}")
    src = t6["eps_d"].source
    vendor = RooflinePlatform.from_throughput(
        t6["peak DP"].number * 1e9, t6["peak memory bandwidth"].number * 1e9, t6["eps_d"].number * 1e-12,
        t6["eps_mem"].number * 1e-12, t6["pi_0"].number, name="001 Table 6 Nehalem (vendor peaks)")
    b_tau_sust = t6["sustained DP"].number / t6["sustained memory bandwidth"].number
    derived = "derived from " + src
    one_core = f"{cores} simulated core{'s' if cores > 1 else ''}, one thread each"
    rows = (
        Comparison("B_tau (vendor peaks 53.3 / 25.6)", vendor.b_tau,
                   1 / machine.tau_flop_s / peak_dram_bytes_per_s(loaded), "flop/B", derived,
                   "ours: the simulated machine's peaks, its compute-only throughput over its DRAM's peak "
                   "bandwidth (channels x bus width x transfer rate)"),
        Comparison("B_tau (sustained 49.7 / 19.1)", b_tau_sust, plat.b_tau, "flop/B", derived),
        Comparison("B_eps = eps_mem / eps_d", vendor.b_eps, plat.b_eps, "flop/B", derived, "follows eps_mem"),
        published(t6["eps_d"], "eps_d", machine.eps_flop_j * 1e12,
                  "system config carries 670 pJ/flop (an input, measured back)"),
        published(t6["eps_mem"], "eps_mem", machine.eps_mem_j_per_byte * 1e12,
                  "path energy + DRAM model device energy; on several cores also the background of the ranks "
                  "their streams keep out of power-down (pi_0 is measured with the DRAM idle) and the cache "
                  "actions per DRAM line, beside a path energy derived for one i7-920 core's stream"),
        published(t6["pi_0"], "pi_0", machine.pi0_w,
                  f"ours: {cores} x the per-core share of 122 W ({host.static_power_w:g} W) "
                  "+ DRAM background/refresh"),
        published(t6["peak DP"], "peak DP throughput", 1e-9 / machine.tau_flop_s, one_core),
        published(t6["sustained DP"], "sustained DP throughput", 1e-9 / machine.tau_flop_s, one_core),
        published(t6["sustained memory bandwidth"], "sustained memory bandwidth", 1e-9 / machine.tau_mem_s_per_byte,
                  f"read stream on {one_core}; {host.max_outstanding_misses} misses in flight a core"
                  + (f", {host.uncore_read_entries} DRAM reads in flight for all the cores together "
                     "(host.uncore_read_entries)" if host.uncore_read_entries is not None else "")),
    )
    table6 = Section("001 Table 6 Nehalem vs the machine measured on the simulator", rows,
                     f"Our costs are measured with micro runs on `{cfg.system}` (compute-only run, zero-intensity "
                     "stream, each on every core), as 001 fitted them to micro-benchmarks.")
    model_src = "001 eqs. 3-6 with our measured costs"
    sweep_rows = []
    for p in points:
        if p.intensity_flop_per_byte <= 0:
            continue
        i = p.intensity_flop_per_byte
        sweep_rows.append(Comparison(f"I = {i:g}: W tau_flop / T", float(plat.time_roofline(i)),
                                     p.w_flops * plat.tau_flop_s / p.time_s, "", model_src))
        sweep_rows.append(Comparison(f"I = {i:g}: W eps_hat / E", float(plat.arch_line(i)),
                                     p.w_flops * plat.eps_hat_j / p.energy_j, "", model_src))
    sweep = Section("Intensity sweep: simulated time and energy vs the roofline and arch line", tuple(sweep_rows),
                    f"{len(points)} intensities, Q = {total / 2**20:g} MiB per point.",
                    reference_header="model", ours_header="simulated")
    claims = Section("001 Table 2 and sections 3.4, 4.1, 4.4 and 5.2.3: the roofline model on the published "
                     "parameters",
                     tuple(published(r, f"{k[1]}: {k[2]}", claim(k, r.unit)) for k, r in ref.items()
                           if k[0] in CHOI_CLAIM_TABLES),
                     "`models.roofline` on Table 2's representative Fermi values and on Table 6's platforms "
                     "(single precision, fitted throughputs, power cap; sections 3.4.2 and 3.4.5 without a cap and "
                     "with the vendor's peaks, as 001 section 3 instantiates the model): "
                     "`simulator/studies/roofline_claims.py`.")
    table7 = _dvfs_table7(list(ref.values()))
    micro_runs = _nehalem_microbenchmarks(ref, system, machine, quick)
    fig1 = plot_roofline(machine, points, out / "roofline_sweep.png")
    fig2 = _plot_roofline_vs_table6(vendor, plat, out / "roofline_vs_table6.png", cores)
    sections, figures = (table6, micro_runs, claims, table7, sweep), (Path(fig1), fig2)
    if cores > 1:
        triad, fig3 = _triad_threads(system, t6["sustained memory bandwidth"], quick, out)
        sections, figures = sections + (triad,), figures + (fig3,)
    return Reproduction("choi-roofline", "Choi (001): energy roofline, Nehalem Table 6", sections, figures)


CHOI_CLAIM_TABLES = ("001 Table 2", "001 §3.4.2", "001 §3.4.5", "001 §4.1", "001 §4.4.3", "001 §4.4.4",
                     "001 §5.2.3.1")


def _nehalem_microbenchmarks(ref: dict[tuple[str, str, str], ReferenceRow], system: Path,
                             machine: MeasuredMachine, quick: bool) -> Section:
    """001 Table 6's cache and random-access columns and section 3.3.2's CPU microbenchmark on the simulator."""
    from simulator.studies.nehalem_claims import CACHE_LOAD_BYTES, claims

    rows = tuple(published(ref[k], f"{k[1]}: {k[2]}", value) for k, (value, _) in claims(system, machine, quick).items())
    return Section("001 Table 6 Nehalem caches and random access, and the section 3.3.2 CPU microbenchmark, "
                   "measured on the simulator", rows,
                   f"Micro runs on every core of `{system.relative_to(PROJECT_ROOT)}`: each thread streams half of "
                   f"its L1-D or L2 with {CACHE_LOAD_BYTES} B loads (warm passes only), or reads random 8 B "
                   "elements of a 256 MiB array; energies above the measured pi_0, as 001 eq. 9 separates "
                   "constant power; shares of peak are the sustained rates above over the machine's peaks "
                   "(`simulator/studies/nehalem_claims.py`).")


def _dvfs_table7(ref: list[ReferenceRow]) -> Section:
    """001 Table 7 against the DVFS energy roofline fitted to its training rows."""
    from simulator.studies.dvfs_claims import TABLE, fitted_coefficients, predicted

    coefficients = fitted_coefficients(ref)
    rows = tuple(published(r, f"{r.row}: {r.column}", predicted(coefficients, r)) for r in ref if r.table == TABLE)
    c = coefficients
    return Section("001 Table 7: Jetson TK1 energy costs under DVFS, eqs. 44-46 fitted to the training settings",
                   rows, "`models.dvfs` (001 eqs. 44-46: core costs C''_0 V_core^2, memory cost C''_0,mem "
                   "V_mem^2, constant power C_1,core V_core + C_1,mem V_mem + pi_misc) fitted by least squares to "
                   "the costs Table 7 prints for its eight training (T) settings, then evaluated at every "
                   "setting's voltages; the T rows are the fit's data, the eight validation (V) settings the "
                   f"check (`simulator/studies/dvfs_claims.py`). Fitted: C_1,core {c.c1_core_w_per_v:.3g} W/V, "
                   f"C_1,mem {c.c1_mem_w_per_v:.3g} W/V, pi_misc {c.pi_misc_w:.3g} W.")


def _triad_threads(system: Path, sustained: ReferenceRow, quick: bool, out: Path) -> tuple[Section, Path]:
    """The STREAM triad on 1 .. N threads of ``system`` against 001's sustained bandwidth (the saturation
    level); a row per thread count, the figure ``triad_threads.png``."""
    from simulator.studies.roofline import (TRIAD_ARRAY_BYTES, peak_dram_bytes_per_s, plot_triad_scaling,
                                            triad_scaling)

    array_bytes = ROOFLINE_QUICK_BYTES if quick else TRIAD_ARRAY_BYTES
    points = triad_scaling(system, array_bytes=array_bytes)
    loaded = load_spec(system, SystemSpec)
    fig = plot_triad_scaling(points, peak_dram_bytes_per_s(loaded), out / "triad_threads.png",
                             sustained.number * 1e9, f"STREAM triad on {loaded.spec.name}")
    rows = tuple(Comparison(f"triad DRAM bandwidth, {p.threads} thread{'s' if p.threads > 1 else ''}",
                            sustained.number, p.dram_bytes_per_s / 1e9, "GB/s", sustained.source,
                            f"STREAM count {p.stream_bytes_per_s / 1e9:.3g} GB/s")
                 for p in points)
    return Section("STREAM triad against threads: saturation at the sustained bandwidth", rows,
                   f"Three arrays of {array_bytes / 2**20:g} MiB, thread t on core t with its slice of each; DRAM "
                   "bandwidth counts every byte the channels moved (STREAM's count omits the write-allocate "
                   "reads of a). The reference is 001's sustained bandwidth, the level the curve saturates at "
                   "on the real desktop; fewer threads are expected below it."), fig


# --------------------------------------------------------------------------- logca-crypto


SHA_PLATFORMS = ("ultrasparc_t2", "sparc_t3", "sparc_t4_engine", "sparc_t4_instructions")  # 000 Table 4.3's SHA rows
ACCELEROMETER_GRID = (16, 2**26)  # bytes: the powers of two the thesis reads its regions on (000 section 3.2)


def _on_grid(g_bytes: float | None) -> float | None:
    """The first power of two at or above ``g_bytes``: where a region boundary falls on the thesis's grid."""
    return None if g_bytes is None else float(2 ** math.ceil(math.log2(g_bytes) - 1e-9))


def _cutoff(params, parameter: str, starts: bool) -> float | None:
    """Where ``parameter`` starts (or stops) being a bottleneck on ``ACCELEROMETER_GRID``, bytes (None: never)."""
    from models.accelerometer import bottlenecks, cutoff_granularities

    if starts and parameter in bottlenecks(params, ACCELEROMETER_GRID[0]):
        return float(ACCELEROMETER_GRID[0])
    found = [c.g_bytes for c in cutoff_granularities(params, *ACCELEROMETER_GRID)
             if c.parameter == parameter and c.starts == starts]
    if not found:
        return None
    return _on_grid(found[0] if starts else found[-1])


def _table43_rows(ref: dict, kernel: str, name: str, fitted) -> list[Comparison]:
    """000 Table 4.3's L, o, C, A of ``kernel`` on platform ``name`` beside LogCA ``fitted`` to our sweep."""
    ours = {"L": fitted.latency, "o": fitted.overhead_cycles, "C": fitted.c_cycles_per_byte_beta,
            "A": fitted.acceleration}
    return [published(ref[(f"000 Table 4.3 {kernel}", name, col)], f"{name} {col}", ours[col],
                      "supplied from the interface" if col == "L" else "fitted to our sweep") for col in ours]


def _t2_regions(ref: dict, params) -> Section:
    """000 Fig. 6.4 and the section 6.4 worked example: Accelerometer on Table 4.3's UltraSPARC T2 AES row."""
    from models.logca import granularity_for_speedup, speedup_bound

    table = "000 Fig. 6.4 UltraSPARC T2"
    rows = []
    for (tab, row, col), r in ref.items():
        if tab != table:
            continue
        if col == "granularity for speedup 12":
            g = granularity_for_speedup(params, 12.0)
            rows.append(published(r, f"{col} ({row})", _on_grid(g), f"continuous: {g:.4g} B"))
        elif col == "achievable speedup":
            rows.append(published(r, col, float(speedup_bound(params, ACCELEROMETER_GRID[1])),
                                  "the bound of a compute-bound kernel, Table 4.3's A"))
        else:
            parameter, event = col.split(" ", 1)
            rows.append(published(r, f"{parameter} {event}", _cutoff(params, parameter, event == "starts")))
    return Section("000 Fig. 6.4 and section 6.4: Accelerometer on UltraSPARC T2 with Table 4.3's parameters",
                   tuple(rows), "Regions and cut-offs by the 10x / 20 % rule on Table 4.3's AES row, read on the "
                   "thesis's power-of-two grid (a boundary is the first power of two past the crossing).")


def _logca_crypto(out: Path, quick: bool) -> Reproduction:
    from dataclasses import replace

    from simulator.studies.logca import crypto as ls
    from simulator.studies.logca import isca_figures as isca

    ref = index_rows(load_reference("logca_crypto"))
    t44 = {int(k[1][2:]): {} for k in ref if k[0] == "000 Table 4.4"}
    for k, r in ref.items():
        if k[0] == "000 Table 4.4":
            t44[int(k[1][2:])][int(k[2][2:])] = r
    study = ls.load_crypto_study()
    if quick:
        study = replace(study, max_granularity_bytes=2**20)
    g_max = study.max_granularity_bytes
    res = ls.crypto_study(study, out, reference={g: row[1].number for g, row in sorted(t44.items())}, owned=True)
    fits, curves, t2_extra, figures = res.fits, res.curves, res.multi_unit, list(res.figures)

    sim = {1: {p.g_bytes: p.speedup for p in curves["ultrasparc_t2"]}}
    sim |= {n: {p.g_bytes: p.speedup for p in pts} for n, pts in t2_extra.items()}
    # 000 describes one host that sets up each unit's share after the previous one (000:L872) and says of its runs
    # only that AES ran on eight units in parallel (000:L1030): the counted n > 1 entries are one host thread
    # spreading each request over n units; the threaded runs (n threads on n cores) are shown beside them
    split_note = "one host thread spreading each request over n units (000's parallel setup, 000:L872)"
    rows = [published(r, f"g = {g} B, n = {n}", sim[n].get(g), "" if n == 1 else split_note)
            for g, row in sorted(t44.items()) for n, r in sorted(row.items())]
    table44 = Section("000 Table 4.4: AES on UltraSPARC T2 with n crypto units", tuple(rows))
    threaded = (_table44_threads(t44, res.threaded, study),) if res.threaded else ()

    params = [c for name in ls.CRYPTO_PLATFORMS for c in _table43_rows(ref, "AES", name, fits[name].params)]
    table43 = Section("000 Table 4.3 (AES rows) vs LogCA fitted to our simulated sweeps", tuple(params),
                      f"Fit over g = 1 KiB .. {g_max // 2**20} MiB with L fixed to the simulated interface latency "
                      f"(beta fitted: {', '.join(f'{k} {f.params.beta:.3f}' for k, f in fits.items())}).")

    sha_g = ls.granularities(study.calibration_min_bytes, g_max)
    sha_rows, sha_sweeps = [], {}
    for name in SHA_PLATFORMS:
        platform = ls.load_platform(name, "sha")
        sha_sweeps[name] = ls.sweep(platform, sha_g)
        fit = ls.calibrate(platform, sha_sweeps[name], study.calibration_min_bytes)
        sha_rows += _table43_rows(ref, "SHA", name, fit.params)
    table43_sha = Section("000 Table 4.3 (SHA rows) vs LogCA fitted to our simulated SHA-256 sweeps", tuple(sha_rows),
                          f"Fit over g = {study.calibration_min_bytes} B .. {g_max} B in powers of two, L fixed as "
                          "for AES; the engine hashes 64 B blocks of the padded message.")
    regions = _t2_regions(ref, ls.load_platform("ultrasparc_t2", "aes").logca)

    cut_rows = []
    for k, r in ref.items():
        if k[0] != "000 Fig. 6.11 cut-off":
            continue
        name, par = k[1], k[2]
        label = f"{name} {par} cut-off ({'o stops' if par == 'o' else 'A starts'})"
        if name == "pcie_card":  # the off-chip card is no row of Table 4.3: its fitted sweep only
            cut_rows.append(published(r, label, _cutoff(fits[ls.PCIE_CARD].params, par, par == "A"),
                                      "fitted params of the simulated PCIe card (driver overhead assumed, see "
                                      "configs/systems/logca_hifn_7955.yaml)"))
            continue
        table_value = _cutoff(ls.load_platform(name, "aes").logca, par, par == "A")
        cut_rows.append(published(r, label, _cutoff(fits[name].params, par, par == "A"),
                                  f"fitted params; with Table 4.3 params: {_fmt(table_value)} B"))
    cutoffs = Section("000 Fig. 6.11 interface evolution: overhead and acceleration cut-off granularities",
                      tuple(cut_rows), "Accelerometer rule (10x change improves speedup by >= 20 %) on our fitted "
                      "parameters, read on the thesis's power-of-two grid as in Fig. 6.4.")
    o_rows = []
    for name, check in res.overheads.items():
        r = ref.get(("000 Table 4.3 AES", name, "o"))
        source = r.source if r is not None else "preset of the system file (no Table 4.3 row)"
        o_rows.append(Comparison(f"{name} o, fit over g >= 1 KiB", check.o_preset_cycles, check.o_fit_cycles,
                                 "cycles", source, check.explanation()))
        o_rows.append(Comparison(f"{name} o, read from g -> 0", check.o_preset_cycles, check.o_small_g_cycles,
                                 "cycles", source, "calibrate_overhead on 16 B .. 1 KiB, warm buffers"))
    overheads = Section("Calibration round trip: the preset's o against o fitted from our simulated runs",
                        tuple(o_rows), "Warm buffers (000 averages one hundred executions, 000:L481). Where the fit "
                        "parts from the preset, the note gives the per-request cycles that account for it.")
    notes = (f"Sweeps: the platforms of configs/studies/logca_crypto.yaml at powers of two "
             f"{study.min_granularity_bytes} B .. {g_max} B; {study.multi_unit_platform} with n = "
             f"{', '.join(map(str, study.multi_unit_engines))} units up to {study.multi_unit_max_bytes} B "
             "(the Table 4.4 granularities).",)
    table4 = isca.crypto_section(ref, curves, "ultrasparc_t2", sha_sweeps["ultrasparc_t2"])
    claims = isca.crypto_claims(curves, ls.PCIE_CARD) + isca.region_claims(
        {k: f.params for k, f in fits.items()}, {k: ls.load_platform(k, "aes").logca for k in SHA_PLATFORMS},
        ls.granularities(*ACCELEROMETER_GRID), SHA_PLATFORMS, ((ls.PCIE_CARD, "oL", "002:L1201"),), "002:L1190",
        "the on-chip SPARC crypto units")
    notes += tuple(c.sentence() for c in claims)
    return Reproduction("logca-crypto", "LogCA (000, 002): crypto accelerators, Table 4.4 and interface evolution",
                        (table44, *threaded, table43, table43_sha, overheads, cutoffs, regions, table4),
                        tuple(figures), notes)


#: 000 Table 4.4's entries from this granularity up are the ones the threaded runs are judged on (smaller ones
#: are bound by the per-request overheads alone)
THREADED_JUDGED_MIN_BYTES = 1024
THREADED_TOLERANCE = 0.20


def _threaded_note(sim: dict[int, dict[int, float]]) -> str:
    """The note of the n > 1 rows of :func:`_table44_threads`, with the gains of n threads over the fewest read
    off ``sim`` (n -> g in B -> speedup) where both ran the same buffer."""
    note = ("n threads on n cores, a setup 000 does not describe; not counted (the counted entry is the section "
            "above)")
    one, n_max = min(sim), max(sim)
    gain = {g: sim[n_max][g] / sim[one][g] for g in sim[n_max] if sim[one].get(g)}
    if n_max == one or not gain:
        return note
    g_max = max(gain)
    small = [x for g, x in gain.items() if g <= THREADED_JUDGED_MIN_BYTES]
    return (note + ": no resource the simulated units share is contended, so at large g the speedup keeps "
            f"growing with n (n = {n_max} gives {gain[g_max]:.1f}x n = {one}'s at {g_max} B) where 000's saturates"
            + (f"; at small g each thread's own offload overhead o dominates its slice, and n = {n_max} gains at "
               f"most {max(small):.2f}x up to {THREADED_JUDGED_MIN_BYTES} B" if small else ""))


def _table44_threads(t44: dict[int, dict[int, ReferenceRow]], threaded: dict, study) -> Section:
    """000 Table 4.4 against n threads on n cores, each driving its own unit; the count within the tolerance
    over the n > 1 entries from ``THREADED_JUDGED_MIN_BYTES`` up."""
    sim = {n: {p.g_bytes: p.speedup for p in pts} for n, pts in threaded.items()}
    note = _threaded_note(sim)
    cells = [(g, n, Comparison(f"g = {g} B, n = {n}", r.number, sim[n].get(g), "speedup", r.source,
                               note if n > 1 else
                               "n = 1 on the multi-core system; the counted n = 1 entry is the section above"))
             for g, row in sorted(t44.items()) for n, r in sorted(row.items()) if n in sim]
    rows = [c for _, _, c in cells]
    judged = [c for g, n, c in cells if n > 1 and g >= THREADED_JUDGED_MIN_BYTES and c.deviation is not None]
    within = sum(abs(c.deviation) <= THREADED_TOLERANCE for c in judged)
    return Section("000 Table 4.4 through n threads on n cores, one crypto unit each", tuple(rows),
                   f"`{study.threaded_system}`: thread t runs on core t and hands its slice of the buffer to its "
                   f"core's unit; no parameter is fitted to the n > 1 columns (the units' split cost applies to "
                   f"one request spread over engines, none here). n > 1 entries from "
                   f"{THREADED_JUDGED_MIN_BYTES} B up within {THREADED_TOLERANCE:.0%}: {within} of {len(judged)}.")


# --------------------------------------------------------------------------- logca-gpu

GPU_QUICK_MAX_BYTES = 2**20
GPU_TABLE43_FIELDS = {"o": "overhead_cycles", "A": "acceleration"}  # 000 Table 4.3 column -> LogCAParams field
GPU_WHAT_IF_BYTES = (2**20, 2**26)  # where the report sets the roofline's acceleration beside 000's A


def _gpu_roofline_what_if(gs, tables: dict[str, dict[int, dict[int, ReferenceRow]]],
                          ref_gpu: dict[tuple[str, str, str], ReferenceRow]) -> tuple[Comparison, ...]:
    """Per platform and kernel, at ``GPU_WHAT_IF_BYTES``: the acceleration the device's datasheet roofline would
    give and (discrete GPU, which has 000's measured tables) the one 000's n = 1 speedup implies, beside 000 Table
    4.3's A; rows without a published key, so not counted."""
    t43_a = {k[1]: r.number for k, r in ref_gpu.items() if k[0] == "000 Table 4.3 GEMM" and k[2] == "A"}
    rows = []
    for name, kernels in (("discrete", tuple(tables)), ("apu", ("gemm",))):
        for kernel in kernels:
            platform = gs.load_gpu_platform(name, kernel)
            c, f_hz = platform.logca.c_cycles_per_byte_beta, platform.host_frequency_hz
            for g in GPU_WHAT_IF_BYTES:
                roofline = gs.roofline_cycles(name, kernel, g)
                rows.append(Comparison(f"{name} {kernel} at {g} B: roofline", t43_a[name],
                                       gs.roofline_acceleration(name, kernel, g, c), "",
                                       "datasheet peak (configs/presets/accel)",
                                       f"what-if, not counted: roofline time {roofline / f_hz * 1e3:.3g} ms"))
                if name != "discrete":
                    continue
                measured = tables[kernel][g][1]
                device = gs.implied_device_cycles(platform, g, measured.number)
                if device > 0:
                    ours, note = (host_cycles(kernel, g, c) / device,
                                  f"not counted: S = {measured.number:g} leaves {device / f_hz * 1e3:.3g} ms, "
                                  f"{100 * roofline / device:.1f} % of the roofline's rate")
                else:
                    ours, note = None, (f"not counted: S = {measured.number:g}; o and L(g) alone exceed "
                                        "T0 / S here, so the column implies no device time")
                rows.append(Comparison(f"{name} {kernel} at {g} B: implied by 000's n = 1", t43_a[name], ours, "",
                                       measured.source, note))
    return tuple(rows)


def _logca_gpu(out: Path, quick: bool) -> Reproduction:
    try:
        from simulator.studies.logca import gpu as gs
        needed = (gs.load_gpu_platform, gs.simulate_point, gs.plot_pipelined)
    except (ImportError, AttributeError) as exc:
        raise TargetUnavailable(f"target logca-gpu not available yet: simulator.studies.logca.gpu with "
                                f"load_gpu_platform/simulate_point/plot_pipelined is missing ({exc})") from None
    del needed
    from simulator.studies.logca import isca_figures as isca
    from simulator.studies.logca.crypto import SimulatedSpeedup

    ref = load_reference("logca_gpu")
    tables: dict[str, dict[int, dict[int, ReferenceRow]]] = {}
    for r in ref:
        if not r.table.startswith(("000 Table 4.5", "000 Table 4.6", "000 Table 4.7")):
            continue
        kernel = r.table.split()[-1]
        tables.setdefault(kernel, {}).setdefault(int(r.row[2:]), {})[int(r.column[2:])] = r
    sections, figures, n1_curves = [], [], {}
    for kernel, table in tables.items():
        platform = gs.load_gpu_platform("discrete", kernel)
        g_list = [g for g in sorted(table) if not quick or g <= GPU_QUICK_MAX_BYTES]
        stages = sorted({n for row in table.values() for n in row})
        curves: dict[int, list[SimulatedSpeedup]] = {n: [gs.simulate_point(platform, g, n) for g in g_list] for n in stages}
        figures.append(gs.plot_pipelined(kernel, curves, out / f"pipelined_gpu_{kernel}.png"))
        n1_curves[kernel] = curves.get(1, [])
        sim = {n: {p.g_bytes: p.speedup for p in pts} for n, pts in curves.items()}
        rows = tuple(published(r, f"g = {g} B, n = {n}", sim[n].get(g), "" if g in sim[n] else "not run (quick)")
                     for g, row in sorted(table.items()) for n, r in sorted(row.items()))
        title = next(iter(next(iter(table.values())).values())).table
        sections.append(Section(f"{title}: pipelined offload on the discrete GPU, n stages", rows))
    g_top = GPU_QUICK_MAX_BYTES if quick else 2**26
    g_trip = [2**k for k in range(12, g_top.bit_length())]
    trip, fitted, gemm_sweeps = [], {}, {}
    for name in gs.GPU_PLATFORMS:
        platform = gs.load_gpu_platform(name, "gemm")
        pts = gemm_sweeps[name] = gs.sweep(platform, g_trip)
        fitted[name] = gs.calibrate(platform, pts).params
        for row in gs.round_trip(name, "gemm", g_trip, pts):
            trip.append(Comparison(f"{name} {row.label}", row.preset, row.fitted, row.unit,
                                   "simulated" if row.label.startswith("speedup") else "the platform's preset",
                                   row.note))
    ref_gpu = index_rows(ref)
    what_if = _gpu_roofline_what_if(gs, tables, ref_gpu)
    t43 = [published(r, f"{k[1]} {k[2]}", getattr(fitted[k[1]], GPU_TABLE43_FIELDS[k[2]]), "fitted to our sweep")
           for k, r in ref_gpu.items() if k[0] == "000 Table 4.3 GEMM"]
    cuts = [published(r, f"{k[1]} {k[2]}", _cutoff(fitted[k[1]], k[2].split()[0], k[2].endswith("starts")),
                      "fitted params of our sweep")
            for k, r in ref_gpu.items() if k[0] == "000 Fig. 6.12 cut-off"]
    sections.append(Section("000 Table 4.3 (GPU rows, GEMM) vs LogCA fitted to our simulated sweeps", tuple(t43),
                            f"The fit of the calibration round trip below (4 KiB .. {g_top} B)."))
    sections.append(Section("000 Fig. 6.12 GPU interface evolution, GEMM: cut-off granularities", tuple(cuts),
                            "Accelerometer rule on the parameters fitted to our sweeps, read on the thesis's "
                            "power-of-two grid (16 B .. 64 MiB)."))
    sections.append(Section(f"Calibration round trip, GEMM: LogCA fitted to our simulated sweep (4 KiB .. {g_top} B) "
                            "against the preset", tuple(trip),
                            "L fixed to the simulated link; C, beta, o, A fitted (000 section 4.3).",
                            reference_header="preset or simulated", ours_header="fitted"))
    sections.append(Section("What the datasheet roofline would make of each kernel, beside 000's A (not counted)",
                            what_if, "The shipped GPU presets fix 000 Table 4.3's A (30 discrete, 7 APU) and also "
                            "declare the device's datasheet peak flop/s (its memory bandwidth is the system's "
                            "interface key); without the fixed A (`acceleration: 0`) each request takes the roofline "
                            "max(flops / peak, memory bytes / bandwidth) plus its launch. Roofline rows: the host's "
                            "calibrated C g^beta over that roofline time. Implied rows: C g^beta over the device time "
                            "000's n = 1 speedup leaves once o and the copies L(g) are taken from its T1 = C g^beta / S "
                            "(the platform's calibrated C, o and L; C and o were fitted to that column with A = 30, so "
                            "this reads 000's own scale, not an independent measurement); the note gives that time as "
                            "a fraction of the roofline's. The gap between the two is why the presets keep 000's A.",
                            reference_header="000 Table 4.3 A", ours_header="A"))
    sections += isca.gpu_sections(ref_gpu, fitted, gemm_sweeps["discrete"], n1_curves)
    notes = ("L of the discrete GPU is calibrated from the simulated PCIe link (000 Table 4.3's GPU L is unreliable, "
             "where C / L < 1 would mean AES never breaks even).",
             "The device runs 000 Table 4.3's A (the presets' fixed acceleration); the roofline section shows what "
             "its datasheet peak would give instead.",
             "C and o of GEMM and FFT are fitted to the n = 1 columns of Tables 4.5-4.6 "
             "(configs/presets/platforms/gpu_host_cost_calibrated.yaml); the n = 2 and n = 4 rows are the check. "
             "Radix sort keeps 000 Table 4.3's C; its o is fitted to where Table 4.7's n = 1 column crosses 1.")
    claims = isca.gpu_claims(n1_curves, gs.load_gpu_platform("discrete", "gemm").logca.acceleration)
    claims += isca.region_claims(fitted, {k: gs.table_4_3_params(k, "gemm") for k in ("discrete", "apu")},
                                 gs.granularities(*ACCELEROMETER_GRID), ("hsa",), (("discrete", "L", "002:L1254"),),
                                 "002:L1272", "the HSA GPU")
    notes += tuple(c.sentence() for c in claims)
    if quick:
        notes += (f"quick: granularities up to {GPU_QUICK_MAX_BYTES} B only.",)
    return Reproduction("logca-gpu", "LogCA (000, 002): pipelined GPU offload, Tables 4.5-4.7", tuple(sections),
                        tuple(Path(f) for f in figures), notes)


# --------------------------------------------------------------------------- asri-fmm

FMM_FIGURES = ("fig8_dram_accesses.png", "fig9_cycles_by_stage.png", "fig10_dram_energy.png",
               "fig11_total_energy.png")
FMM_PAPER_N = 240_000  # 003 section 4.1 (003:L127)
MARSSX86_STUDY = PROJECT_ROOT / "configs" / "studies" / "fmm_placement_marssx86.yaml"
MARSSX86_CPU = PROJECT_ROOT / "configs" / "systems" / "marssx86" / "cpu.yaml"
# the points of 003 Table 5 and of the §8 pipelining and energy findings
TABLE2_DIMS = {"N_q": "n_q", "N_oct": "n_oct", "N_U": "n_u"}  # 003 Table 2 column -> UListDims field
MARSSX86_PAIRS = ("lap-dram/orig", "lap-dram/pipelining", "lap-llc/orig", "lap-llc/blocking", "lap-llc/pipelining")


def _bigger_q_gemm_gap(found: pd.DataFrame) -> tuple[float | None, str]:
    """003's "at bigger q, GEMM executions differ by less than 2 %" (003:L352, set against its q = 4): the largest
    absolute GEMM stage speedup of LAP-LLC over LAP-DRAM over every q above 4 (%), and a note giving each; None
    without such q or a value."""
    big = found[found.q > 4]
    gap = big.gemm_llc_vs_dram_speedup.abs().max() if len(big) else math.nan
    if math.isnan(gap):
        return None, "no q above 4 was run"
    each = ", ".join(f"{100 * v:.1f} % at q = {int(q)}" for q, v in zip(big.q, big.gemm_llc_vs_dram_speedup))
    return 100 * float(gap), (f"the largest absolute difference over q above 4 ({each}); 003 gives a bound, met "
                              "when ours is below it")


def _asri_fmm(out: Path, quick: bool) -> Reproduction:
    import json

    import pandas as pd

    try:
        from models import ulist
        from simulator.studies.fmm import placement as fmm_study
    except ImportError as exc:
        raise TargetUnavailable(f"target asri-fmm not available yet: simulator.studies.fmm.placement is missing ({exc})") from None

    # always fresh runs: the report describes what this checkout simulates. The default host (the real
    # i7-920's 6.4 GB/s) for 003 Table 3 and the figures; the MARSSx86-like host (3 GB/s, 003:L301) for the
    # Table 5 simulation columns and the §8 findings, which 003 measured on MARSSx86.
    study_dir, marss_dir = out / "study", out / "study_marssx86"
    # 003's placements only: the study file's other accelerators (a systolic array) and the LAP in a memory of
    # its own are not 003's
    default = fmm_study.load_study(fmm_study.STUDY)
    paper_pairs = [f"{name}/{v}" for name in fmm_study.paper_placements(default)
                   for v in default.placements[name].variants]
    # both studies on one pool: their points in one queue, longest first, each study's tables and figures
    # written while the other's points run
    runs = [fmm_study.StudyRun(fmm_study.STUDY, study_dir, ",".join(paper_pairs)),
            fmm_study.StudyRun(MARSSX86_STUDY, marss_dir, ",".join(MARSSX86_PAIRS))]
    if fmm_study.run_studies(runs, quick) != 0:
        raise TargetUnavailable("the FMM studies " + " and ".join(f"{r.study} --out {r.out}" for r in runs) + " failed")
    origin = "fresh runs of simulator.studies.fmm.placement" + (" --quick" if quick else "")
    table = pd.read_csv(study_dir / "table.csv")
    cross = pd.read_csv(marss_dir / "crosscheck.csv")
    machine = json.loads((study_dir / "machine.json").read_text())
    ref = load_reference("asri_fmm")
    n_points = int(table.n_points.iloc[0])

    def ours_cycles(frame, q: int, placement: str, variant: str, col: str) -> float | None:
        sel = frame[(frame.q == q) & (frame.placement == placement) & (frame.variant == variant)]
        return float(sel[col].iloc[0]) if len(sel) else None

    t5_cols = {"LAP-DRAM Orig": ("lap-dram", "orig"), "LAP-LLC Block": ("lap-llc", "blocking"),
               "LAP-LLC Pipeline": ("lap-llc", "pipelining")}
    t5, t3 = [], []
    for r in ref:
        if r.table not in ("003 Table 5", "003 Table 3"):
            continue
        q = int(r.row[2:])
        if r.table == "003 Table 5":
            name, kind = r.column.rsplit(" ", 1)
            pl, var = t5_cols[name]
            col = "sim_mcycles" if kind == "sim" else "model_mcycles"
            ours = ours_cycles(cross, q, pl, var, col)
            t5.append(published(r, f"q = {q}: {r.column}", ours, "" if ours is not None else "q not run"))
        elif r.table == "003 Table 3":
            stage, kind = r.column.split(" ")
            key = {"T1": "input_perm", "T2": "gemm", "T3": "output_perm"}[stage]
            if kind == "real":
                ours = ours_cycles(table, q, "cpu", "orig", f"cycles_{key}")
                ours = None if ours is None else ours / 1e6
                note = "simulated host stage" if ours is not None else "q not run"
            else:
                dims = machine.get("dims", {}).get(str(q))
                ours, note = None, "q not run"
                if dims is not None:
                    d = ulist.UListDims(**dims)
                    mc = ulist.UListMachine(machine["w_c_bytes_per_s"], machine["w_c_irregular_bytes_per_s"],
                                            machine["f_c_flops_per_s"], machine["lap-dram.f_l_flops_per_s"],
                                            machine["lap-dram.w_l_bytes_per_s"], fmm_study.CLOCK_HZ)
                    fn = {"T1": ulist.t1_cycles, "T3": ulist.t3_cycles}.get(stage)
                    ours = (fn(d, mc) if fn else ulist.t2_cycles(d, mc, "cpu")) / 1e6
                    note = "003 eqs. 3-5, our measured w_C, w_irr (T3), f_C"
            t3.append(published(r, f"q = {q}: {r.column}", ours, note))
    from simulator.studies.fmm.report_claims import table2_dims

    t2_rows = [r for r in ref if r.table == "003 Table 2"]
    t2_dims = table2_dims((int(r.row[2:]) for r in t2_rows), FMM_PAPER_N, default.density)
    t2 = [published(r, f"{r.row.replace('=', ' = ')}: {r.column}",
                    float(getattr(t2_dims[int(r.row[2:])], TABLE2_DIMS[r.column])),
                    f"our octree of {FMM_PAPER_N:,} points") for r in t2_rows]
    found = fmm_study.findings(pd.read_csv(marss_dir / "table.csv"))
    small = found[found.q <= 10]
    ours_finding = {
        "LAP pipelining gain over Orig": (100 * float(found[found.q == 10].filter(like="pipelining_gain").max(axis=1)
                                                      .iloc[0]) if (found.q == 10).any() else None,
                                          "q = 10, the larger of the LLC and DRAM couplings"),
        "DRAM access cut LAP-LLC Block vs LAP-DRAM Orig": (100 * float(small.dram_cut_llc_block_vs_dram_orig.min()),
                                                           "smallest cut over the q <= 10 we ran"),
        "total energy saving LAP-LLC Pipe vs LAP-DRAM Pipe (up to)": (
            100 * float(found.llc_pipe_energy_saving_vs_dram_pipe.max()), "largest over q"),
        "dynamic DRAM energy cut LAP-LLC Block vs LAP-DRAM Orig (from)": (
            100 * float(found.dram_dynamic_cut_llc_block_vs_dram_orig.min()), "smallest over q"),
        "dynamic DRAM energy cut LAP-LLC Block vs LAP-DRAM Orig (to)": (
            100 * float(found.dram_dynamic_cut_llc_block_vs_dram_orig.max()), "largest over q"),
        "runtime gain LAP-LLC vs LAP-DRAM, same variant (up to)": (
            100 * float(found.llc_vs_dram_runtime.max()), "largest over q and the variants run on both couplings"),
        "total energy saving LAP pipelining vs Orig": (
            100 * float(found[found.q == 10].filter(like="pipelining_energy_saving").max(axis=1).iloc[0])
            if (found.q == 10).any() else None, "q = 10, the larger of the LLC and DRAM couplings"),
        "DRAM static background + refresh share (from)": (100 * float(found.dram_static_refresh_share_min.min()),
                                                          "smallest over the LAP-DRAM and LAP-LLC points"),
        "DRAM static background + refresh share (to)": (100 * float(found.dram_static_refresh_share_max.max()),
                                                        "largest over the LAP-DRAM and LAP-LLC points"),
        "total energy saving LAP pipelining vs Orig (up to)": (
            100 * float(found.filter(like="pipelining_energy_saving").max().max()),
            "largest over q and the LLC and DRAM couplings"),
        "GEMM stage speedup LAP-LLC vs LAP-DRAM": (
            100 * float(found[found.q == 4].gemm_llc_vs_dram_speedup.iloc[0]) if (found.q == 4).any() else None,
            "Orig points, host cycles of the GEMM stage"),
        "GEMM stage speedup LAP-LLC vs LAP-DRAM (under)": _bigger_q_gemm_gap(found),
        "DRAM access cut LAP-LLC Orig vs LAP-DRAM Orig (up to)": (
            100 * float(found.dram_cut_llc_orig_vs_dram_orig.max()), "largest over q"),
        "DRAM accesses LAP-LLC Orig / LAP-LLC Block (up to)": (
            float(found.dram_factor_llc_orig_vs_llc_block.max()), "largest over q"),
        "DRAM accesses LAP-DRAM Orig / best blocked LAP-LLC (up to)": (
            float(found.dram_factor_dram_orig_vs_llc_best.max()),
            "largest over q, the fewest of LAP-LLC Blocking, Blocking+Pref and Pipelining at each q"),
    }
    t8 = [published(r, f"{r.column} ({r.row})", ours_finding[r.column][0], ours_finding[r.column][1])
          for r in ref if r.table == "003 §8"]
    further = _asri_further(ref, machine, json.loads((marss_dir / "machine.json").read_text()),
                            pd.read_csv(marss_dir / "table.csv"), cross)
    marss = load_spec(MARSSX86_CPU, SystemSpec).spec.host  # the calibrated values the study's host runs with
    notes = [f"Results from {origin}; N = {n_points} points. Table 5 and the §8 findings: the MARSSx86-like "
             f"host (configs/presets/cpu/i7_920_marssx86.yaml, two calibrated parameters: {marss.max_outstanding_misses} "
             f"outstanding misses for 003:L301's 3 GB/s, and {marss.loads_per_cycle:g} loads or stores issued per "
             "cycle for Table 5's LAP-LLC pipelined entry at q = 4, the one entry fitted); Table 3 and the "
             "figures: the default host.",
             "Why the largest deviations remain, with the measurements and experiments behind each: results/fmm/README.md, "
             "\"Where the FMM study still departs from 003\"."]
    if n_points != FMM_PAPER_N:
        notes.append(f"N = {n_points} is not the paper's N = {FMM_PAPER_N}: cycle counts scale roughly with N, "
                     "so the deviations below measure the problem size, not the simulator (quick mode).")
    sections = (
        Section("003 Table 5: MARSSx86+LAP simulation and model vs ours", tuple(t5),
                "Ours: simulated host cycles of the whole U-list on the MARSSx86-like host, and 003's equations as "
                "printed with w_C, f_L, w_L measured by micro runs on those simulated systems "
                "(`study_marssx86/machine.json`); our extended model is in `study_marssx86/crosscheck.csv`."),
        Section("003 Table 3: CPU-only stages (model and real i7-920) vs ours", tuple(t3)),
        Section("003 Table 2: expansion size N_q, leaves N_oct and U-list interactions N_U", tuple(t2),
                f"Ours: the octree the study's generator builds for 003's N = {FMM_PAPER_N:,} points (density "
                f"`{default.density}`) at every order Table 2 prints, whichever orders the runs used."),
        Section("003 §8 findings on the MARSSx86-like host", tuple(t8),
                "Per q in `study_marssx86/findings.csv`; the host > DRAM > LAP energy order holds on "
                f"{int(found.energy_order_host_dram_lap.sum())} of {len(found)} orders q."),
        further,
    )
    figures = tuple(study_dir / f for f in FMM_FIGURES)
    return Reproduction("asri-fmm", "Asri et al. (003): LAP placement for the FMM U-list", sections, figures,
                        tuple(notes))


def _asri_further(ref: list[ReferenceRow], machine: dict, marss_machine: dict, marss_table: pd.DataFrame,
                  cross: pd.DataFrame) -> Section:
    """003's host rates (003:L185, L301), the pipelined couplings' runtime gap (003:L41) and the model's average
    error (003:L381), from the two studies' outputs (``simulator.studies.fmm.report_claims``)."""
    from simulator.studies.fmm.report_claims import claims, model_errors_pct

    ours = claims(machine, marss_machine, marss_table, cross)
    printed, extended = model_errors_pct(cross), model_errors_pct(cross, "ext_mcycles")
    notes = {("003 §8.4", "Table 5"): "003's equations as printed; per model " + ", ".join(
        f"{k} {v:.1f} % (extended model {extended.get(k, float('nan')):.1f} %)" for k, v in printed.items()),
        ("003 §1", "any q"): "1 - T_LLC / T_DRAM, both pipelined; largest over q",
        ("003 §4.2", "real i7-920"): "the study's default host (machine.json)",
        ("003 §8 host", "MARSSx86 model"): "the MARSSx86-like host (study_marssx86/machine.json)"}
    rows = tuple(published(r, f"{r.row}: {r.column}", ours[(r.table, r.row, r.column)],
                           notes.get((r.table, r.row), "")) for r in ref if (r.table, r.row, r.column) in ours)
    return Section("003's host rates, pipelined couplings and model error", rows,
                   "The rates the FMM study measures on its hosts by micro runs, the runtime gap between the "
                   "pipelined couplings on the MARSSx86-like host, and the mean |model / simulation - 1| of "
                   "003's equations over the Table 5 points run (`simulator/studies/fmm/report_claims.py`).")


# --------------------------------------------------------------------------- entry point

TARGETS: dict[str, Callable[[Path, bool], Reproduction]] = {
    "asri-fmm": _asri_fmm,
    "logca-crypto": _logca_crypto,
    "logca-gpu": _logca_gpu,
    "choi-roofline": _choi_roofline,
    "prajapati-stencil": _prajapati_stencil,
}


def _not_target_output(out: Path, target: str) -> str | None:
    """What keeps non-empty directory ``out`` from being a previous output of ``target`` (None: nothing)."""
    marker = out / MARKER
    if marker.is_file():
        owner = marker.read_text().strip()
        return None if owner == target else f"holds the output of target {owner!r} (named in its {MARKER})"
    report = out / "report.md"
    head = report.read_text(errors="replace").splitlines()[:5] if report.is_file() else []
    if any(line.startswith(f"Target `{target}`") for line in head):  # written before the marker was
        return None
    return f"holds {listing([p.name for p in out.iterdir()])}, which is not an output of target {target!r}"


def check_out_dir(target: str, path: str | Path) -> Path:
    """``path`` as a Path if ``target`` may write there (a new path, an empty directory or a previous
    output of the same target, see the module docstring), creating nothing; else InputError naming --out."""
    return check_output_target(path, lambda d: _not_target_output(d, target),
                               f"a previous output of target {target!r} (its {MARKER} names the target)")


def reproduce(target: str, out_dir: str | Path | None = None, quick: bool = False) -> Path:
    """Run ``target``'s study, write ``report.md`` in ``out_dir`` and return its path.

    Raises InputError for an unknown target (naming the known ones) or an output directory that
    holds something else (``check_out_dir``), and TargetUnavailable when the study's module is not
    present yet; nothing this call created is left behind then.
    """
    if target not in TARGETS:
        raise InputError(f"unknown reproduce target {target!r}; known targets: {', '.join(TARGETS)}")
    out = check_out_dir(target, out_dir if out_dir is not None else DEFAULT_OUT_DIR / target)
    created = first_missing(out)
    out = make_output_dir(out).resolve()
    marker = out / MARKER
    new_marker = not marker.exists()
    marker.write_text(target + "\n")
    try:
        rep = TARGETS[target](out, quick)
    except InputError:
        if new_marker:
            marker.unlink(missing_ok=True)
        remove_created(created)
        raise
    check_figures(rep.figures)
    path = out / "report.md"
    path.write_text(render_markdown(rep, out, quick) + "\n")
    return path


def summary_line(path: Path) -> str:
    """The report's summary sentence and its figure count (for the CLI)."""
    text = path.read_text()
    summary = next((line.removeprefix("**Summary:** ") for line in text.splitlines()
                    if line.startswith("**Summary:**")), "no summary")
    return f"{summary} {text.count('![')} figures."


__all__ = ["Comparison", "Reproduction", "Section", "TARGETS", "TargetUnavailable",
           "check_figures", "render_markdown", "reproduce", "summary_line"]

