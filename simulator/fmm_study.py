"""FMM U-list placement study (003 §7-8): CPU only vs LAP on DRAM / LLC / near-memory, five variants.

Runs the grid of ``configs/studies/fmm_placement.yaml`` with a process pool of
two, writes to the output directory (default ``results/fmm``):

* ``table.csv``: per point host cycles per stage (input_perm, gemm,
  out_prefetch, output_perm; busy cycles of the host in the stage), total
  cycles, DRAM accesses (reads + writes, lines), DRAM energy by background /
  refresh / dynamic and total energy by component (J);
* ``table5.csv``: the 003 Table 5 analogue, simulated and model cycles next to
  the published columns (SPEC §2) and the deviation of ours from them;
* ``table3.csv``: CPU-only stages against 003 Table 3 (real i7-920);
* ``findings.csv``: per q the pipelining gain over Orig and the cut in DRAM
  accesses of LAP-LLC Blocking vs LAP-DRAM Orig (003 §8.1-8.2);
* ``crosscheck.csv``: :mod:`models.ulist` vs simulation, time and energy, with the
  model parameters MEASURED by micro runs on the simulated systems (``machine.json``)
  and b the number of blocks the simulated trace used; beside the printed equations,
  the extended model (``ext_mcycles``: the costs eqs. 8-12 omit) for the LLC points;
* ``fig8_dram_accesses.png``, ``fig9_cycles_by_stage.png``,
  ``fig10_dram_energy.png``, ``fig11_total_energy.png``.

Entry point: ``python -m simulator.fmm_study [--quick] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from models import ulist
from simulator.config.loader import PROJECT_ROOT, load_spec, project_file
from simulator.config.errors import InputError
from simulator.config.fields import param
from simulator.reproduce import reference_table
from simulator.config.workload import build_workload, generate_trace
from simulator.stencil_study import CONSTANT_CATEGORIES, simulate_trace
from simulator.plots import save_figure
from workloads import fmm_ulist
from workloads.gemm import lap_gemm
from workloads.trace import TraceBuilder

STUDY = PROJECT_ROOT / "configs" / "studies" / "fmm_placement.yaml"
STAGES = ("input_perm", "gemm", "out_prefetch", "output_perm")
CLOCK_HZ = 2e9  # host clock (003 Table 4)

# Published figures, from the cited reference table (results/reference/asri_fmm.csv), MCycles.
# 003 Table 5: sim and model for LAP-DRAM Orig, LAP-LLC Block, LAP-LLC Pipeline.
TABLE5 = reference_table("asri_fmm", "003 Table 5", (
    "LAP-DRAM Orig sim", "LAP-DRAM Orig model", "LAP-LLC Block sim", "LAP-LLC Block model",
    "LAP-LLC Pipeline sim", "LAP-LLC Pipeline model"))
# 003 Table 3, CPU only, real i7-920: T1, T2, T3.
TABLE3_REAL = reference_table("asri_fmm", "003 Table 3", ("T1 real", "T2 real", "T3 real"))


def _q(df: pd.DataFrame, component: str, quantity: str) -> float:
    s = df[(df.component == component) & (df.quantity == quantity)].value
    return float(s.sum())


def summarise(df: pd.DataFrame) -> dict[str, float]:
    """Cycles per stage, DRAM accesses and energies (J) of one run's results table."""
    out: dict[str, float] = {"cycles": _q(df, "system", "host_cycles"),
                             "time_s": _q(df, "system", "simulated_time_s")}
    for st in STAGES:
        out[f"cycles_{st}"] = _q(df, f"stage/host/{st}", "busy_s") * CLOCK_HZ
    out["dram_accesses"] = _q(df, "dram", "reads") + _q(df, "dram", "writes")
    e = df[df.component.str.startswith("energy/")]
    dram = e[e.component == "energy/dram"]
    out["dram_background_j"] = float(dram[dram.quantity.str.startswith("background")].value.sum())
    out["dram_refresh_j"] = float(dram[dram.quantity == "refresh"].value.sum())
    out["dram_dynamic_j"] = float(dram.value.sum()) - out["dram_background_j"] - out["dram_refresh_j"]
    for comp, val in e.groupby("component").value.sum().items():
        out[f"energy_{comp.split('/', 1)[1]}_j"] = float(val)
    out["energy_total_j"] = float(e.value.sum())
    return out


@dataclass(frozen=True)
class Point:
    """One grid point: order ``q``, placement name, system file, variant, problem size."""

    q: int
    placement: str
    system: str
    gemm: str
    variant: str
    n_points: int
    density: str
    llc_bytes: int


@dataclass(frozen=True)
class PlacementSpec:
    """One placement of the study: a system and where its GEMMs run."""

    system: str = param(doc="system config, relative to the project root", check=project_file)
    gemm: str = param(choices=fmm_ulist.PLACEMENTS, doc="where the GEMMs run")
    variants: tuple[str, ...] = param(choices=fmm_ulist.VARIANTS, doc="software variants to run")


@dataclass(frozen=True)
class QuickSpec:
    """The reduced grid of ``--quick``."""

    qs: tuple[int, ...] = param(min=1, doc="Chebyshev orders")
    n_points: int = param(min=1, doc="points of the FMM problem")


@dataclass(frozen=True)
class FmmStudySpec:
    """configs/studies/fmm_placement.yaml, validated like every config (file, key and expectation named)."""

    study: str = param(choices=("fmm_placement",), doc="study kind")
    n_points: int = param(min=1, doc="points of the FMM problem (003: 2.4e5)")
    density: str = param(choices=fmm_ulist.DENSITIES, doc="point density of the octree")
    llc_bytes: int = param(unit="size", positive=True, doc="LLC capacity that sizes the blocks")
    qs: tuple[int, ...] = param(min=1, doc="Chebyshev orders")
    placements: dict[str, PlacementSpec] = param(doc="placements by name")
    quick: QuickSpec = param(doc="the reduced grid of --quick")

    def __post_init__(self) -> None:
        if not self.qs or not self.quick.qs:
            raise ValueError("qs: expected at least one order q")
        if "cpu" not in self.placements:
            raise ValueError("placements: expected a 'cpu' placement (the micro runs measure w_C, f_C on it)")


def load_study(path: str | Path) -> FmmStudySpec:
    """Read and validate an FMM study file; ConfigError naming file and key on any problem."""
    return load_spec(path, FmmStudySpec).spec


def run_point(p: Point) -> dict[str, Any]:
    """Generate and simulate one point; the row of ``table.csv``."""
    t0 = time.perf_counter()
    problem = fmm_ulist.build_problem(p.q, p.n_points, p.density)
    blocked = p.variant in ("blocking", "blocking_pref", "pipelining")
    b = fmm_ulist.choose_blocks(problem, p.llc_bytes, p.variant) if blocked else 1
    blocks = fmm_ulist.split_blocks(problem, b)
    trace = fmm_ulist.ulist_trace(problem, p.variant, p.gemm, blocks)
    t1 = time.perf_counter()
    res = simulate_trace(p.system, trace)
    t2 = time.perf_counter()
    row = {**asdict(p), **summarise(res.to_pandas()), "blocks": len(blocks), "rows": trace.num_rows,
           "generate_s": t1 - t0, "simulate_s": t2 - t1}
    return row


def grid(study: FmmStudySpec, quick: bool) -> list[Point]:
    """The points of a study (``quick``: its reduced q list and problem size)."""
    qs = study.quick.qs if quick else study.qs
    n = study.quick.n_points if quick else study.n_points
    return [Point(q, name, str(PROJECT_ROOT / pl.system), pl.gemm, v, n, study.density, study.llc_bytes)
            for q in qs for name, pl in study.placements.items() for v in pl.variants]


# --------------------------------------------------------------------------- micro runs


def _run_workload(system: str, raw: dict) -> pd.DataFrame:
    spec = build_workload(raw, "<micro>", Path.cwd())
    return simulate_trace(system, generate_trace(spec, "<micro>")).to_pandas()


def measure_llc_exchange(system: str, nbytes: int = 2 * 1024 * 1024) -> tuple[float, float]:
    """(host bandwidth for lines the LLC serves, bytes/s; host cycles per line evicted to the LLC).

    A region larger than L2 and smaller than the LLC is written once (warm-up), then read
    in 64 B elements as the FMM trace reads C (bandwidth = bytes / busy time of that
    stage), written again and evicted to the LLC (cycles / line of the eviction stage).
    """
    tb = TraceBuilder()
    tb.access("host", "warm", "write", 0, 64, 64, nbytes // 64)
    tb.access("host", "llc_read", "read", 0, 64, 64, nbytes // 64)
    tb.access("host", "warm", "write", 0, 64, 64, nbytes // 64)
    tb.access("host", "evict", "evict_llc", 0, 64, 64, nbytes // 64)
    df = simulate_trace(system, tb.to_table()).to_pandas()
    read_s = _q(df, "stage/host/llc_read", "busy_s")
    evict_cycles = _q(df, "stage/host/evict", "busy_s") * CLOCK_HZ
    return nbytes / read_s, evict_cycles / (nbytes // 64)


def measure_machine(cpu_system: str, lap_systems: dict[str, str]) -> dict[str, Any]:
    """Model parameters measured on the simulated systems (bytes/s, flop/s, J, W).

    w_C: single-core read stream over 64 MiB; w_C irregular: random 8 B reads (bytes
    used / time); f_C: compute-only run; per LAP system f_L from a compute-bound
    256 x 256 x 1024 GEMM and w_L from a bandwidth-bound 64 x 8192 x 1 GEMM (interface
    bytes / busy time).  Energies: eps_flop_cpu and pi_0 (constant power) from the
    compute-only run, eps_byte_dram = non-constant energy of the stream / bytes,
    eps_flop_lap = LAP compute energy / flops.
    """
    m: dict[str, Any] = {}
    s = _run_workload(cpu_system, {"generator": "stream", "params": {"kind": "read", "array_bytes": "64 MiB"}})
    t_s = _q(s, "system", "simulated_time_s")
    nbytes = 64 * 1024 * 1024
    m["w_c_bytes_per_s"] = nbytes / t_s
    const = sum(_q(s, f"energy/{c}", k) for c, k in CONSTANT_CATEGORIES)
    total = float(s[s.component.str.startswith("energy/")].value.sum())
    m["eps_byte_dram_j"] = (total - const) / nbytes
    r = _run_workload(cpu_system, {"generator": "random_access",
                                   "params": {"n_accesses": 200000, "footprint_bytes": "256 MiB", "seed": 1}})
    m["w_c_irregular_bytes_per_s"] = 200000 * 8 / _q(r, "system", "simulated_time_s")
    c = _run_workload(cpu_system, {"generator": "compute_only", "params": {"flops": 1_000_000_000}})
    tc = _q(c, "system", "simulated_time_s")
    m["f_c_flops_per_s"] = 1e9 / tc
    c_const = sum(_q(c, f"energy/{a}", k) for a, k in CONSTANT_CATEGORIES)
    m["static_power_w"] = c_const / tc
    m["eps_flop_cpu_j"] = (float(c[c.component.str.startswith("energy/")].value.sum()) - c_const) / 1e9
    for name, sysf in lap_systems.items():
        m[f"{name}.w_llc_bytes_per_s"], m[f"{name}.evict_cycles_per_line"] = measure_llc_exchange(sysf)
        g = simulate_trace(sysf, lap_gemm(256, 1024, 256)).to_pandas()
        m[f"{name}.f_l_flops_per_s"] = _q(g, "accel/lap", "flops") / _q(g, "accel/lap", "busy_s")
        m[f"{name}.eps_flop_lap_j"] = _q(g, "energy/lap", "compute") / _q(g, "accel/lap", "flops")
        b = simulate_trace(sysf, lap_gemm(64, 8192, 1)).to_pandas()
        moved = _q(b, "accel/lap", "bytes_read") + _q(b, "accel/lap", "bytes_written")
        m[f"{name}.w_l_bytes_per_s"] = moved / _q(b, "accel/lap", "busy_s")
    return m


def model_rows(table: pd.DataFrame, machine: dict[str, Any], dims: dict[int, ulist.UListDims]) -> pd.DataFrame:
    """Model cycles and energy for every simulated point (LAP variants: orig/pref -> eq. 2 with
    eq. 7, blocking -> eq. 8, pipelining -> eq. 12; CPU: eq. 2 with eq. 5), with b the number
    of blocks the simulated trace used. ``ext_mcycles``: the extended model of
    :mod:`models.ulist` (omitted costs added) for the LLC-coupled blocked and pipelined
    points, where its premise (B and C exchanged through the LLC) holds; else empty."""
    rows = []
    for _, r in table.iterrows():
        d = dims[int(r.q)]
        lap = r.placement if r.gemm == "lap" else next(k.split(".")[0] for k in machine if ".f_l" in k)
        mc = ulist.UListMachine(machine["w_c_bytes_per_s"], machine["w_c_irregular_bytes_per_s"],
                                machine["f_c_flops_per_s"], machine[f"{lap}.f_l_flops_per_s"],
                                machine[f"{lap}.w_l_bytes_per_s"], CLOCK_HZ)
        b = int(r.blocks)
        ext = float("nan")
        if r.placement == "lap-llc" and r.variant != "orig" and r.variant != "orig_pref":
            xp = ulist.ExtendedParams(machine[f"{lap}.w_llc_bytes_per_s"], machine[f"{lap}.evict_cycles_per_line"],
                                      fmm_ulist.META_BYTES)
            ext = (ulist.extended_pipelined_cycles(d, mc, xp, b) if r.variant == "pipelining"
                   else ulist.extended_blocked_cycles(d, mc, xp, b))
        if r.gemm == "cpu":
            cyc, stages = ulist.total_cycles(d, mc, "cpu"), ulist.stage_costs(d, mc, "cpu")
        elif r.variant in ("orig", "orig_pref"):
            cyc, stages = ulist.total_cycles(d, mc, "lap"), ulist.stage_costs(d, mc, "lap")
        elif r.variant == "pipelining":
            cyc, stages = ulist.pipelined_cycles(d, mc, b), ulist.blocked_stage_costs(d, mc, b)
        else:
            cyc, stages = ulist.blocked_cycles(d, mc, b), ulist.blocked_stage_costs(d, mc, b)
        ep = ulist.EnergyParams(machine["eps_flop_cpu_j"], machine[f"{lap}.eps_flop_lap_j"],
                                {"dram": machine["eps_byte_dram_j"]}, machine["static_power_w"])
        e = ulist.energy_j(stages, ep, cyc, CLOCK_HZ)
        rows.append({"q": r.q, "placement": r.placement, "variant": r.variant,
                     "blocks": b, "sim_mcycles": r.cycles / 1e6, "model_mcycles": cyc / 1e6,
                     "time_dev": r.cycles / cyc - 1, "ext_mcycles": ext / 1e6, "ext_time_dev": r.cycles / ext - 1,
                     "sim_energy_j": r.energy_total_j, "model_energy_j": e,
                     "energy_dev": r.energy_total_j / e - 1})
    return pd.DataFrame(rows)


def table5(table: pd.DataFrame, cross: pd.DataFrame) -> pd.DataFrame:
    """Our LAP-DRAM Orig, LAP-LLC Blocking, LAP-LLC Pipelining (sim and model) next to 003 Table 5."""
    rows = []
    for q, pub in TABLE5.items():
        row: dict[str, Any] = {"q": q}
        for (pl, v, tag), (ps, pm) in zip([("lap-dram", "orig", "dram_orig"), ("lap-llc", "blocking", "llc_block"),
                                           ("lap-llc", "pipelining", "llc_pipe")],
                                          [(pub[0], pub[1]), (pub[2], pub[3]), (pub[4], pub[5])]):
            c = cross[(cross.q == q) & (cross.placement == pl) & (cross.variant == v)]
            row[f"{tag}_paper_sim"], row[f"{tag}_paper_model"] = ps, pm
            if len(c):
                row[f"{tag}_sim"] = float(c.sim_mcycles.iloc[0])
                row[f"{tag}_model"] = float(c.model_mcycles.iloc[0])
                if tag != "dram_orig":
                    row[f"{tag}_ext_model"] = float(c.ext_mcycles.iloc[0])
                    row[f"{tag}_blocks"] = int(c.blocks.iloc[0])
                row[f"{tag}_sim_dev"] = row[f"{tag}_sim"] / ps - 1
        rows.append(row)
    return pd.DataFrame(rows)


def findings(table: pd.DataFrame) -> pd.DataFrame:
    """Per q, two 003 §8 findings: pipelining gain over Orig (1 - T_pipe / T_orig, per
    coupling) and the cut in DRAM accesses of LAP-LLC Blocking vs LAP-DRAM Orig."""
    def get(q, pl, v, col):
        c = table[(table.q == q) & (table.placement == pl) & (table.variant == v)]
        return float(c[col].iloc[0]) if len(c) else float("nan")

    rows = []
    for q in sorted(table.q.unique()):
        row: dict[str, Any] = {"q": int(q)}
        for pl in ("lap-dram", "lap-llc"):
            row[f"{pl}_pipelining_gain"] = 1 - get(q, pl, "pipelining", "cycles") / get(q, pl, "orig", "cycles")
        row["dram_cut_llc_block_vs_dram_orig"] = (1 - get(q, "lap-llc", "blocking", "dram_accesses")
                                                  / get(q, "lap-dram", "orig", "dram_accesses"))
        rows.append(row)
    return pd.DataFrame(rows)


def table3(table: pd.DataFrame) -> pd.DataFrame:
    """CPU-only stages (MCycles) against 003 Table 3 real i7-920."""
    rows = []
    for q, (t1, t2, t3) in TABLE3_REAL.items():
        c = table[(table.q == q) & (table.placement == "cpu")]
        if not len(c):
            continue
        r = c.iloc[0]
        sim = (r.cycles_input_perm / 1e6, r.cycles_gemm / 1e6, r.cycles_output_perm / 1e6)
        rows.append({"q": q, "T1_sim": sim[0], "T1_real": t1, "T2_sim": sim[1], "T2_real": t2,
                     "T3_sim": sim[2], "T3_real": t3, "T1_dev": sim[0] / t1 - 1, "T2_dev": sim[1] / t2 - 1,
                     "T3_dev": sim[2] / t3 - 1})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- figures


def _bar_ticks(ax, qs: list, configs: list[str], width: float) -> None:
    """One rotated tick per bar (placement/variant) and the q value under each group."""
    ticks = [qi + ci * width for qi in range(len(qs)) for ci in range(len(configs))]
    ax.set_xticks(ticks, [c for _ in qs for c in configs], rotation=90, fontsize=6)
    for qi, q in enumerate(qs):
        ax.text(qi + 0.4 - width / 2, 1.01, f"q={q}", transform=ax.get_xaxis_transform(), ha="center")


def figures(table: pd.DataFrame, out: Path) -> None:
    """Figures 8-11 analogues as PNG files in ``out``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = table.copy()
    t["config"] = t.placement + "/" + t.variant
    configs = list(dict.fromkeys(t.config))
    qs = sorted(t.q.unique())

    def bars(ax, col_sets, labels, title, ylabel, scale):
        width = 0.8 / len(configs)
        for qi, q in enumerate(qs):
            for ci, cfg in enumerate(configs):
                r = t[(t.q == q) & (t.config == cfg)]
                if not len(r):
                    continue
                bottom = 0.0
                for k, col in enumerate(col_sets):
                    v = float(r[col].iloc[0]) * scale
                    ax.bar(qi + ci * width, v, width, bottom=bottom, color=f"C{k}",
                           label=labels[k] if qi == 0 and ci == 0 else None, edgecolor="k", linewidth=0.2)
                    bottom += v
        _bar_ticks(ax, qs, configs, width)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        if len(col_sets) > 1:
            ax.legend(fontsize=7)

    fig, ax = plt.subplots(figsize=(13, 6))
    width = 0.8 / len(configs)
    for ci, cfg in enumerate(configs):
        r = t[t.config == cfg].sort_values("q")
        ax.bar([qs.index(q) + ci * width for q in r.q], r.dram_accesses / 1e6, width, label=cfg)
    _bar_ticks(ax, qs, configs, width)
    ax.set_ylabel("DRAM accesses (M lines)")
    ax.set_title("FMM U-list: DRAM accesses (cf. 003 Fig. 8)")
    save_figure(fig, out / "fig8_dram_accesses.png", dpi=120)

    specs = [("fig9_cycles_by_stage.png", [f"cycles_{s}" for s in STAGES], list(STAGES),
              "Host cycles by stage (cf. 003 Fig. 9)", "MCycles", 1e-6),
             ("fig10_dram_energy.png", ["dram_background_j", "dram_refresh_j", "dram_dynamic_j"],
              ["background", "refresh", "dynamic"], "DRAM energy split (cf. 003 Fig. 10)", "J", 1.0)]
    ecols = sorted(c for c in t.columns if c.startswith("energy_") and c != "energy_total_j")
    specs.append(("fig11_total_energy.png", ecols, [c[7:-2] for c in ecols],
                  "Total energy by component (cf. 003 Fig. 11)", "J", 1.0))
    for fname, cols, labels, title, ylabel, scale in specs:
        fig, ax = plt.subplots(figsize=(13, 6))
        bars(ax, cols, labels, title, ylabel, scale)
        save_figure(fig, out / fname, dpi=120)


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run the study and write tables and figures; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced q list and problem size")
    ap.add_argument("--study", default=str(STUDY))
    ap.add_argument("--out", default="results/fmm")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    try:
        study = load_study(args.study)
    except InputError as exc:
        for message in exc.messages:
            print(f"fmm_study: error: {message}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    pts = grid(study, args.quick)
    # big points first so that the two workers finish together
    pts.sort(key=lambda p: (p.gemm != "cpu", -p.q))
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        rows = list(pool.map(run_point, pts))
    table = pd.DataFrame(rows).sort_values(["q", "placement", "variant"]).reset_index(drop=True)
    table.to_csv(out / "table.csv", index=False)
    t_grid = time.perf_counter() - t0
    systems = {name: str(PROJECT_ROOT / pl.system) for name, pl in study.placements.items()}
    machine = measure_machine(systems["cpu"], {k: systems[k] for k, pl in study.placements.items() if pl.gemm == "lap"})
    n = study.quick.n_points if args.quick else study.n_points
    dims = {int(q): fmm_ulist.build_problem(int(q), n, study.density).dims() for q in table.q.unique()}
    machine["dims"] = {q: asdict(d) for q, d in dims.items()}
    (out / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    cross = model_rows(table, machine, dims)
    cross.to_csv(out / "crosscheck.csv", index=False)
    table5(table, cross).to_csv(out / "table5.csv", index=False)
    table3(table).to_csv(out / "table3.csv", index=False)
    findings(table).to_csv(out / "findings.csv", index=False)
    figures(table, out)
    print(f"{len(pts)} points in {t_grid:.1f} s (grid), {time.perf_counter() - t0:.1f} s total; "
          f"one q=4 point: {table[table.q == table.q.min()].simulate_s.median():.1f} s simulate "
          f"+ {table[table.q == table.q.min()].generate_s.median():.1f} s generate (median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
