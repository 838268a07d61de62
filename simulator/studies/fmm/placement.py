"""FMM U-list placement study (003 §7-8): CPU only vs a LAP or a systolic array on DRAM / LLC / near memory.

A placement names a system file, the unit its GEMMs run on (``gemm``: ``cpu``, or the accelerator
``lap`` or ``systolic`` of that name in the system) and optional ``overrides`` of the system
(``key=value``, as ``offsim run --set``), so one system file serves a systolic array of either
dataflow; the study key ``system_overrides`` comes before every placement's own (and sets the systems of the
micro runs too), so one study file runs the grid with, say, another DRAM controller. The study's own models (003's U-list model, the 003 tables and findings, figures 8-11)
cover the CPU-only and LAP placements; the systolic placements appear in ``table.csv`` and
figure 12, beside the LAP at the same coupling. A LAP working in a near memory of its own (``lap-hbm``: an HBM
stack holding its operands) is a LAP placement of the model and figures 8-11, has its own column in figure 12
and its own findings beside ``lap-near-memory`` (:func:`hbm_findings`); 003's own placements
(:func:`paper_placements`) leave it out.

Runs the grid of ``configs/studies/fmm_placement.yaml`` with a process pool of
two (or on a dask.distributed cluster, ``simulator.studies.executors``), writes to the
output directory (default ``results/fmm``):

* ``table.csv``: per point host cycles per stage (input_perm, gemm,
  out_prefetch, output_perm; busy cycles of the host in the stage), total
  cycles, DRAM accesses (reads + writes, lines), DRAM energy by background /
  refresh / dynamic and total energy by component (J);
* ``table5.csv``: the 003 Table 5 analogue, simulated and model cycles next to
  the published columns (003 Tables 3 and 5) and the deviation of ours from them;
* ``table3.csv``: CPU-only stages against 003 Table 3 (real i7-920);
* ``findings.csv``: per q the findings of 003 §8 (and the DRAM-access factors its §1
  quotes) measured on our points, one column each (:func:`findings`);
* ``crosscheck_summary.csv``: mean absolute error of the models per Table-5 column (and
  CPU only), time and energy, over q <= 10 and over q > 10;
* ``crosscheck.csv``: :mod:`models.ulist` vs simulation, time and energy, with the
  model parameters MEASURED by micro runs on the simulated systems (``machine.json``)
  and b the number of blocks the simulated trace used; beside the printed equations,
  the extended model (``ext_mcycles``: the costs eqs. 8-12 omit) for every point;
* ``fig8_dram_accesses.png``, ``fig9_cycles_by_stage.png``,
  ``fig10_dram_energy.png``, ``fig11_total_energy.png`` (CPU-only and LAP points);
* ``fig12_systolic_vs_lap.png``: host cycles by stage and total energy of every accelerator
  placement, grouped by coupling and variant (the LAP beside the systolic arrays that replace it).

Block size: the blocked points use ``fmm_ulist.choose_blocks`` with the study
file's ``llc_bytes`` and ``block_llc_share`` (dimensionless, 0 < share <= 1, default 0.5): the
share of the LLC the live B and C block buffers may fill. 003 §6.1 fills the whole LLC with
them (share 1, 003:L253); the default leaves half of it to the leaf data, the Â_j and the
records (``workloads/fmm_ulist.py``). The pipelined LAP points, with the study key
``pipelined_blocks: model`` (the default), take the b of ``fmm_ulist.block_range`` that the
extended U-list model, with the parameters measured on the study's own systems, predicts
fastest (``fmm_crosscheck.pipelined_blocks``): the range runs from the blocked rule up to
the LLC rule alone, and a pipeline hides more of the permutations with more blocks at the
price of more GEMM calls, each re-reading its Â_j. Blocks are runs of B's columns in class
order (``fmm_ulist.split_blocks``), or with ``block_order: target`` ranges of target leaves
holding every class. With ``pipelined_blocks: llc_rule`` they use
``choose_blocks`` like the blocked points. The micro runs that measure the model's
parameters therefore run first, beside the first points. The points then run longest first by their
declared size (``point_priority``; ``simulator.studies.schedule``), one task per worker at a time, so
that a pipelined point, ready once the micro runs are done, starts before every smaller point. The study key ``bc_layout``
(``rows``, the default, or ``interactions``: PVFMM's layout) says how B and C are stored,
in the traces and in the micro runs that measure the LLC residency of their exchange.
``table.csv`` records the share, the layout and b of every point; the models take b from the
simulated trace.

The study is a plug-in of the paper-study interface (``PLUGIN``; ``simulator.studies.plugin``): its
points are the micro runs and the grid's points, the pipelined LAP points a second round once the
micro runs' records are in (``tuned_points``), and the sweep engine (``simulator.studies.plugin_run``)
stores each point's record under ``points/`` of the output directory as it completes, so that a run
stopped part way resumes from them. ``--out`` may name a new path, an empty directory or a previous
output of this study (a directory holding only the files above, ``OUTPUT_FILES``, like the committed
``results/fmm``, and the engine's entries); anything else is refused (exit 2) before any point runs.
The points' executor is started (a scheduler connected) before the directory is created, so a bad
``--scheduler`` leaves nothing behind.

Entry point: ``offsim study configs/studies/fmm_placement.yaml [--out DIR] [--workers N | --scheduler
ADDRESS | --dask-local N]``; ``offsim reproduce asri-fmm`` runs it and the MARSSx86-like study, each
on some of its placement/variant pairs (``--only PAIRS``), on one executor (``run_studies``). A run on
some pairs measures the LAP systems of those pairs and the two the models read (``narrowed``), so its
``machine.json`` holds no figures of the other placements.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from simulator.config.accel_lap import LapSpec
from simulator.config.accelerators import InterfaceSpec
from simulator.config.accel_systolic import SystolicSpec
from simulator.config.loader import (PROJECT_ROOT, LoadedConfig, load_spec, parse_override, project_file,
                                     resolve_presets)
from simulator.config.yamlio import load_yaml
from simulator.errors import ConfigError, InputError, as_written
from simulator.config.fields import param
from simulator.config.schema import COMPONENT_NAME
from simulator.studies.references import reference_table
from simulator.studies.fmm.crosscheck import (CLOCK_HZ, MODELLED_GEMMS, MachinePart, assemble_machine,
                                              class_counts, crosscheck_summary, machine_parts, model_rows,
                                              pipelined_blocks, pipelined_search_range, residency_system,
                                              stage_quantity)
from simulator.runner import load_system, simulate_trace
from simulator.arguments import OptionParser, int_arg
from simulator.studies.plugin import StudyPlugin, point_key, system_hash
from simulator.studies.executors import LOCAL_WORKERS_PER_CPU
from simulator.studies.plugin_run import PluginJob, check_plugin_dir, finished, run_plugins
from simulator.studies.plots import save_figure
from simulator.studies.spec import list_problems, load_referenced_system
from models.ulist import BLOCK_ORDERS
from workloads import fmm_tree, fmm_ulist

STUDY = PROJECT_ROOT / "configs" / "studies" / "fmm_placement.yaml"
STAGES = ("input_perm", "gemm", "out_prefetch", "output_perm")
FIGURE_FILES = ("fig8_dram_accesses.png", "fig9_cycles_by_stage.png", "fig10_dram_energy.png",
                "fig11_total_energy.png", "fig12_systolic_vs_lap.png")
# everything main() writes: a directory holding only these is a previous output, which a run replaces
OUTPUT_FILES = ("table.csv", "table5.csv", "table3.csv", "findings.csv", "crosscheck.csv", "crosscheck_summary.csv",
                "machine.json", *FIGURE_FILES)
# What a previous output may hold (shell globs covering OUTPUT_FILES), for the --out check.
OUTPUT_PATTERNS = ("table*.csv", "findings.csv", "crosscheck*.csv", "machine.json", "fig*.png",
                   "README.md")  # the folder's guide (results/fmm keeps one), which the study leaves as it is
PIPELINED_BLOCK_RULES = ("model", "llc_rule")
#: the placement of the LAP in an HBM stack of its own, which the findings set beside lap-near-memory
HBM_PLACEMENT = "lap-hbm"

# Published figures, from the cited reference table (results/reference/asri_fmm.csv), MCycles.
# 003 Table 5: sim and model for LAP-DRAM Orig, LAP-LLC Block, LAP-LLC Pipeline.
TABLE5 = reference_table("asri_fmm", "003 Table 5", (
    "LAP-DRAM Orig sim", "LAP-DRAM Orig model", "LAP-LLC Block sim", "LAP-LLC Block model",
    "LAP-LLC Pipeline sim", "LAP-LLC Pipeline model"))
# 003 Table 3, CPU only, real i7-920: T1, T2, T3.
TABLE3_REAL = reference_table("asri_fmm", "003 Table 3", ("T1 real", "T2 real", "T3 real"))


@dataclass(frozen=True)
class GemmUnit:
    """An accelerator kind a placement's GEMMs may offload to: its spec class, the spec field holding its
    element size (bytes; the trace's doubles), its name in messages and a system file with one."""

    spec: type
    size_field: str
    label: str
    example: str


#: The accelerators by placement ``gemm``, which is also the unit's name in the system.
GEMM_UNITS = {"lap": GemmUnit(LapSpec, "elem_bytes", "LAP", "configs/systems/lap_llc.yaml"),
              "systolic": GemmUnit(SystolicSpec, "word_bytes", "systolic array",
                                   "configs/systems/systolic_fp64_llc.yaml")}


def summarise(df: pd.DataFrame) -> dict[str, float]:
    """Cycles per stage, DRAM accesses and energies (J) of one run's results table."""
    out: dict[str, float] = {"cycles": stage_quantity(df, "system", "host_cycles"),
                             "time_s": stage_quantity(df, "system", "simulated_time_s")}
    for st in STAGES:
        out[f"cycles_{st}"] = stage_quantity(df, f"stage/host/{st}", "busy_s") * CLOCK_HZ
    out["dram_accesses"] = stage_quantity(df, "dram", "reads") + stage_quantity(df, "dram", "writes")
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
class PlacementPoint:
    """One grid point: order ``q``, placement name, system file (relative to the project root) and its
    ``overrides``, variant, problem size."""

    q: int
    placement: str
    system: str
    gemm: str
    variant: str
    n_points: int
    density: str
    llc_bytes: int
    block_llc_share: float
    blocks: int = 0  # 0: fmm_ulist.choose_blocks; else this b
    block_order: str = "class"  # how blocks cut the interactions (fmm_ulist.split_blocks)
    bc_layout: str = "rows"  # how B and C are stored (fmm_ulist.BC_LAYOUTS)
    overrides: tuple[str, ...] = ()  # key=value settings of the system (the placement's name tells them apart)

    def key(self) -> str:
        """Storage key of the point's row: its fields and its system's content (``system_hash``)."""
        return point_key("point", asdict(self), system_hash(self.system, self.overrides))

    def cost(self) -> tuple[int, float]:
        """The point's place in the run order (``point_priority``)."""
        return point_priority(self)


@dataclass(frozen=True)
class PlacementSpec:
    """One placement of the study: a system and where its GEMMs run."""

    system: str = param(doc="system config, relative to the project root", check=project_file)
    gemm: str = param(choices=fmm_ulist.PLACEMENTS, doc="where the GEMMs run: 'cpu', or the accelerator unit of "
                                                      "that name in the system ('lap' or 'systolic')")
    variants: tuple[str, ...] = param(choices=fmm_ulist.VARIANTS, doc="software variants to run")
    overrides: tuple[str, ...] = param((), doc="--set style overrides of the system, e.g. "
                                               "accelerators.systolic.dataflow=ws")


@dataclass(frozen=True)
class QuickSpec:
    """The reduced grid of ``--quick``."""

    qs: tuple[int, ...] = param(min=fmm_tree.MIN_ORDER, doc="Chebyshev orders")
    n_points: int = param(min=1, max=fmm_ulist.MAX_TRACE_ADDRESSES, doc="points of the FMM problem")


@dataclass(frozen=True)
class FmmStudySpec:
    """configs/studies/fmm_placement.yaml, validated like every config (file, key and expectation named)."""

    study: str = param(choices=("fmm_placement",), doc="study kind")
    n_points: int = param(min=1, max=fmm_ulist.MAX_TRACE_ADDRESSES,
                          doc="points of the FMM problem (003: 2.4e5; at most workloads.trace.MAX_TRACE_ADDRESSES, "
                              "as for the generator)")
    density: str = param(choices=fmm_ulist.DENSITIES, doc="point density of the octree")
    llc_bytes: int = param(unit="size", positive=True, doc="LLC capacity that sizes the blocks")
    qs: tuple[int, ...] = param(min=fmm_tree.MIN_ORDER, doc="Chebyshev orders")
    placements: dict[str, PlacementSpec] = param(doc="placements by name")
    quick: QuickSpec = param(doc="the reduced grid of --quick")
    block_llc_share: float = param(fmm_ulist.DEFAULT_LLC_SHARE, positive=True, max=1.0,
                                   doc="share of llc_bytes the live B and C block buffers may fill "
                                       "(dimensionless, 0 < share <= 1; 003 §6.1: 1)")
    block_order: str = param("class", choices=BLOCK_ORDERS,
                             doc="how blocks cut the interactions: 'class' (runs of B's columns, class by class) "
                                 "or 'target' (by target leaf, every class in every block)")
    bc_layout: str = param("rows", choices=fmm_ulist.BC_LAYOUTS,
                           doc="how B and C are stored: 'rows' (row by row) or 'interactions' (each "
                               "interaction's N_q values contiguous, PVFMM's layout)")
    system_overrides: tuple[str, ...] = param((), doc="--set style overrides of every placement's system (before "
                                                     "the placement's own) and of the micro runs', e.g. "
                                                     "dram.geometry.scheduler=ready_first")
    pipelined_blocks: str = param("model", choices=PIPELINED_BLOCK_RULES,
                                  doc="b of the pipelined LAP points: 'model' (the fastest the U-list model "
                                      "predicts within fmm_ulist.block_range) or 'llc_rule' (choose_blocks)")

    def __post_init__(self) -> None:
        if not self.qs or not self.quick.qs:
            raise ValueError("qs: expected at least one order q")
        if "cpu" not in self.placements:
            raise ValueError("placements: expected a 'cpu' placement (the micro runs measure w_C, f_C on it)")


def _before_own(shared: tuple[str, ...], own: tuple[str, ...], system: str) -> tuple[str, ...]:
    """A placement's overrides: the study's ``system_overrides`` first, less those of a key the placement sets
    itself (its own value wins; a key named by list index or by item name alike, in the placement's ``system``,
    relative to the project root), then its own."""
    from simulator.config.effective import named_key

    try:
        resolved = resolve_presets(load_yaml(PROJECT_ROOT / system), system)
    except (ConfigError, OSError):  # the system's own problem: reported where it is loaded
        resolved = {}

    def key(text: str) -> str:
        try:
            return named_key(parse_override(text)[0], resolved)
        except ConfigError:  # a malformed override: reported where the overrides are applied
            return text

    keys = {key(text) for text in own}
    return (*(text for text in shared if key(text) not in keys), *own)


def load_study(path: str | Path) -> FmmStudySpec:
    """Read and validate an FMM study file; ConfigError naming file and key on any problem. Beyond its keys,
    what the points need (``placement_problems``) and its lists (no empty variants, no q or variant twice)
    are checked here, before the runner starts its workers or writes anything."""
    source = str(path)
    study = load_spec(path, FmmStudySpec).spec
    if study.system_overrides:  # every placement's system takes them, before its own
        first = next(iter(study.placements.values()))  # a bad override is one error, not one per placement
        errors = load_referenced_system(source, "system_overrides", first.system, study.system_overrides)[1]
        if errors:
            raise ConfigError(errors)
        study = replace(study, placements={name: replace(pl, overrides=_before_own(study.system_overrides,
                                                                                  pl.overrides, pl.system))
                                           for name, pl in study.placements.items()})
    errors = list_problems(study, source, ("qs", "quick.qs", "placements.*.variants"))
    # a name keys the measured figures in machine.json (<name>.<figure>) and a pair of --only (<name>/<variant>)
    errors += [f"{source}: placements: {as_written(name)}; expected a name of letters, digits, '_' and '-', "
               "starting with a letter" for name in study.placements if not COMPONENT_NAME.fullmatch(name)]
    for key, qs, n_points in (("qs", study.qs, study.n_points), ("quick.qs", study.quick.qs, study.quick.n_points)):
        errors += [f"{source}: {key}[{i}]: {problem}" for i, q in enumerate(qs)
                   if (problem := fmm_ulist.order_problem(q, n_points))]
    for name, placement in study.placements.items():
        errors += placement_problems(placement, source, f"placements.{name}")
    if errors:
        raise ConfigError(errors)
    return study


def placement_problems(placement: PlacementSpec, source: str, key: str) -> list[str]:
    """A placement's system file loads as a system with its overrides; an accelerator placement's system has
    a unit of its ``gemm`` kind under that name (the unit its GEMM offloads go to, ``fmm_ulist``) working on
    the trace's doubles; a CPU placement runs only ``orig`` (``fmm_ulist.ulist_trace``)."""
    loaded, errors = load_referenced_system(source, f"{key}.system", placement.system, placement.overrides)
    if placement.gemm in GEMM_UNITS and loaded is not None:
        kind = GEMM_UNITS[placement.gemm]
        unit = loaded.spec.accelerators.get(placement.gemm)
        if not isinstance(unit, kind.spec):
            errors.append(f"{source}: {key}.system: {placement.system} has no {kind.label} named {placement.gemm!r}; "
                          f"expected a system with one for gemm: {placement.gemm}, e.g. {kind.example}")
        elif getattr(unit, kind.size_field) != fmm_ulist.ELEM_BYTES:
            errors.append(f"{source}: {key}.system: accelerators.{placement.gemm}.{kind.size_field} = "
                          f"{getattr(unit, kind.size_field)}; expected {fmm_ulist.ELEM_BYTES} (the U-list's doubles)")
    if placement.gemm == "cpu":
        errors += [f"{source}: {key}.variants[{i}]: {v!r}; expected only 'orig' for gemm: cpu (the other variants "
                   "offload to the LAP)" for i, v in enumerate(placement.variants) if v != "orig"]
    return errors


@functools.lru_cache(maxsize=None)
def placement_system(system: str, overrides: tuple[str, ...] = ()) -> LoadedConfig:
    """A placement's system file (relative to the project root) loaded with ``overrides``, once per process:
    a worker runs many points on the same few systems (like ``plugin.system_hash``, which keys them)."""
    return load_system(PROJECT_ROOT / system, overrides)


def run_point(p: PlacementPoint) -> dict[str, Any]:
    """Generate and simulate one point; the row of ``table.csv``."""
    t0 = time.perf_counter()
    problem = fmm_ulist.build_problem(p.q, p.n_points, p.density)
    blocks = fmm_ulist.variant_blocks(problem, p.variant, p.blocks or None, p.llc_bytes, p.block_llc_share,
                                      p.block_order)
    trace = fmm_ulist.ulist_stream(problem, p.variant, p.gemm, blocks, p.bc_layout)  # rows made as replayed
    t1 = time.perf_counter()
    res = simulate_trace(placement_system(p.system, p.overrides), trace)
    t2 = time.perf_counter()
    point = {k: v for k, v in asdict(p).items() if k != "overrides"}  # the placement's name stands for them
    row = {**point, **summarise(res.to_pandas()), "blocks": len(blocks), "rows": trace.rows,
           "generate_s": t1 - t0 + trace.make_s, "simulate_s": t2 - t1 - trace.make_s}
    return row


def grid(study: FmmStudySpec, quick: bool, only: frozenset[tuple[str, str]] | None = None) -> list[PlacementPoint]:
    """The points of a study (``quick``: its reduced q list and problem size; ``only``: just these
    (placement, variant) pairs)."""
    qs = study.quick.qs if quick else study.qs
    n = study.quick.n_points if quick else study.n_points
    return [PlacementPoint(q, name, str(pl.system), pl.gemm, v, n, study.density, study.llc_bytes, study.block_llc_share,
                  block_order=study.block_order, bc_layout=study.bc_layout, overrides=pl.overrides)
            for q in qs for name, pl in study.placements.items() for v in pl.variants
            if only is None or (name, v) in only]


#: The micro runs start before every point: the pipelined points wait for the model inputs they measure.
MICRO_RUN_PRIORITY = (2, 0.0)


def point_priority(p: PlacementPoint) -> tuple[int, float]:
    """A point's place in the run order (larger first), estimated from its declared size. First the points
    whose replay moves every GEMM operand line by line: the CPU-only points, running every GEMM on the host,
    and the systolic arrays, which move each operand line at every step of a fold (work ~ N x N_q, more at
    larger q). Then the LAP points by their number of leaf boxes N / N_q (their trace's rows, hence their
    replay's time, grow with it: fewer at larger q). On 2 cores (a point's ``generate_s + simulate_s``), a
    systolic point takes 1.4 to 1.6 s at q = 4 and 5 to 6 s at q = 14, as a CPU-only point does (1.9 and 6.2 s),
    where a LAP point takes 0.9 to 1.4 s at every q; the committed ``results/fmm/table.csv``, measured on a
    slower, loaded machine, grows the same way (systolic 22 to 42 s at q = 4, 31 to 127 s at q = 14)."""
    n_q = fmm_tree.leaf_points(p.q)
    return (0, p.n_points / n_q) if p.gemm == "lap" else (1, float(p.n_points * n_q))


def needs_model_blocks(p: PlacementPoint, study: FmmStudySpec) -> bool:
    """Whether the point's b comes from the U-list model (a pipelined LAP point under
    ``pipelined_blocks: model``; the model prices a LAP, so a pipelined systolic point takes the LLC rule)."""
    return study.pipelined_blocks == "model" and p.variant == "pipelining" and p.gemm == "lap" and not p.blocks


def parse_only(text: str, study: FmmStudySpec) -> frozenset[tuple[str, str]]:
    """``placement/variant,...`` -> the pairs; ValueError naming an unknown pair and the known ones."""
    known = {(name, v) for name, pl in study.placements.items() for v in pl.variants}
    pairs = set()
    for item in filter(None, (x.strip() for x in text.split(","))):
        pair = tuple(item.split("/", 1))
        if pair not in known:
            raise ValueError(f"--only: expected placement/variant pairs of the study "
                             f"({', '.join(sorted('/'.join(k) for k in known))}), got {item!r}")
        pairs.add(pair)
    if not pairs:
        raise ValueError("--only: expected at least one placement/variant pair")
    return frozenset(pairs)


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
    """Per q, the 003 §8 findings measured on our points (fractions are 1 = 100 %):

    * ``<coupling>_pipelining_gain``: 1 - T_pipe / T_orig (003: ~37 % at q = 10);
    * ``dram_cut_llc_block_vs_dram_orig``: cut in DRAM accesses of LAP-LLC Blocking vs
      LAP-DRAM Orig (003: ~50 % for q <= 10);
    * ``dram_dynamic_cut_llc_block_vs_dram_orig``: the same cut in dynamic DRAM energy (003: 50-60 %, 003:L360);
    * ``<coupling>_pref_extra_dram``: DRAM accesses added by Orig+Pref over Orig
      (003: prefetching without blocking adds accesses);
    * ``<coupling>_blocking_pref_extra_dram``: DRAM accesses added by Blocking+Pref over Blocking
      (003: "a minor decrease" on the blocked points, the prefetched metadata kept recently used, 003:L334);
    * ``llc_vs_dram_runtime``: largest |T_LLC / T_DRAM - 1| over the variants (003: <= ~20 %);
    * ``dram_static_refresh_share_min`` / ``_max``: background (power-down included) + refresh
      share of the DRAM energy over the LAP-DRAM and LAP-LLC points (003: 60-80 %; its Fig. 10
      shows those two couplings, near-memory being left out of its study, 003:L211);
    * ``energy_order_host_dram_lap``: 1 if on every LAP point host > DRAM > LAP energy (003 Fig. 11);
    * ``llc_pipe_energy_saving_vs_dram_pipe``: 1 - E_LLC+Pipe / E_DRAM+Pipe, total energy
      (003: up to 17 %);
    * ``<coupling>_pipelining_energy_saving``: 1 - E_pipe / E_orig, total energy (003: up to 43 %,
      003:L366);
    * ``<coupling>_blocking_slowdown``: T_blocking / T_orig - 1 (003: "performance is slightly decreased
      with blocking alone", 003:L348);
    * ``gemm_llc_vs_dram_speedup``: 1 - T_GEMM,LLC / T_GEMM,DRAM, host cycles of the GEMM stage of the
      Orig points (003: 10 % at q = 4, under 2 % at larger q, 003:L352);
    * ``dram_cut_llc_orig_vs_dram_orig``: cut in DRAM accesses by coupling alone, LAP-LLC Orig vs
      LAP-DRAM Orig (003: up to 26 %, 003:L39);
    * ``dram_factor_llc_orig_vs_llc_block``: LAP-LLC Orig / LAP-LLC Blocking DRAM accesses, what blocking
      saves over the naive on-chip coupling (003: up to 2x, 003:L17 and L39);
    * ``dram_factor_dram_orig_vs_llc_best``: LAP-DRAM Orig over the fewest DRAM accesses of the blocked
      LAP-LLC variants run (Blocking, Blocking+Pref, Pipelining; 003: "a total of 3x", 003:L39);
    * with ``lap-hbm`` points (the LAP in an HBM stack of its own, not 003's): :func:`hbm_findings`.

    003 studied the LAP in main memory: the energy order leaves ``lap-hbm`` out.
    """
    def get(q, pl, v, col):
        c = table[(table.q == q) & (table.placement == pl) & (table.variant == v)]
        return float(c[col].iloc[0]) if len(c) else float("nan")

    def known(values) -> list[float]:
        """The values that are not NaN (a NaN marks a point the table does not have)."""
        return [v for v in values if v == v]

    rows = []
    for q in sorted(table.q.unique()):
        def ratio(a: tuple[str, str], b: tuple[str, str], col: str) -> float:
            """col of point a (placement, variant) over col of point b, at this q."""
            return get(q, *a, col) / get(q, *b, col)

        row: dict[str, Any] = {"q": int(q)}
        for pl in ("lap-dram", "lap-llc"):
            row[f"{pl}_pipelining_gain"] = 1 - ratio((pl, "pipelining"), (pl, "orig"), "cycles")
        row["dram_cut_llc_block_vs_dram_orig"] = 1 - ratio(("lap-llc", "blocking"), ("lap-dram", "orig"),
                                                           "dram_accesses")
        row["dram_dynamic_cut_llc_block_vs_dram_orig"] = 1 - ratio(("lap-llc", "blocking"), ("lap-dram", "orig"),
                                                                   "dram_dynamic_j")
        for pl in ("lap-dram", "lap-llc"):
            row[f"{pl}_pref_extra_dram"] = ratio((pl, "orig_pref"), (pl, "orig"), "dram_accesses") - 1
            row[f"{pl}_blocking_pref_extra_dram"] = ratio((pl, "blocking_pref"), (pl, "blocking"),
                                                          "dram_accesses") - 1
        variants = table[(table.q == q) & (table.placement == "lap-llc")].variant
        # variants run on one coupling only give NaN; max() would keep a NaN that came first
        row["llc_vs_dram_runtime"] = max(known(abs(ratio(("lap-llc", v), ("lap-dram", v), "cycles") - 1)
                                               for v in variants), default=float("nan"))
        lap = table[(table.q == q) & (table.gemm == "lap") & (table.placement != HBM_PLACEMENT)]  # 003's: main memory
        coupled = lap[lap.placement.isin(("lap-dram", "lap-llc"))]
        share = (coupled.dram_background_j + coupled.dram_refresh_j) / coupled.energy_dram_j
        row["dram_static_refresh_share_min"] = float(share.min()) if len(coupled) else float("nan")
        row["dram_static_refresh_share_max"] = float(share.max()) if len(coupled) else float("nan")
        row["energy_order_host_dram_lap"] = float(bool(len(lap)) and bool(
            ((lap.energy_host_j > lap.energy_dram_j) & (lap.energy_dram_j > lap.energy_lap_j)).all()))
        row["llc_pipe_energy_saving_vs_dram_pipe"] = 1 - ratio(("lap-llc", "pipelining"), ("lap-dram", "pipelining"),
                                                               "energy_total_j")
        for pl in ("lap-dram", "lap-llc"):
            row[f"{pl}_pipelining_energy_saving"] = 1 - ratio((pl, "pipelining"), (pl, "orig"), "energy_total_j")
            row[f"{pl}_blocking_slowdown"] = ratio((pl, "blocking"), (pl, "orig"), "cycles") - 1
        row["gemm_llc_vs_dram_speedup"] = 1 - ratio(("lap-llc", "orig"), ("lap-dram", "orig"), "cycles_gemm")
        row["dram_cut_llc_orig_vs_dram_orig"] = 1 - ratio(("lap-llc", "orig"), ("lap-dram", "orig"), "dram_accesses")
        row["dram_factor_llc_orig_vs_llc_block"] = ratio(("lap-llc", "orig"), ("lap-llc", "blocking"),
                                                         "dram_accesses")
        blocked = known(get(q, "lap-llc", v, "dram_accesses") for v in ("blocking", "blocking_pref", "pipelining"))
        row["dram_factor_dram_orig_vs_llc_best"] = (get(q, "lap-dram", "orig", "dram_accesses") / min(blocked)
                                                    if blocked else float("nan"))
        if (table.placement == HBM_PLACEMENT).any():
            row.update(hbm_findings(ratio, table[(table.q == q) & (table.placement == HBM_PLACEMENT)].variant))
        rows.append(row)
    return pd.DataFrame(rows)


def hbm_findings(ratio: Callable[[tuple[str, str], tuple[str, str], str], float],
                 variants: Iterable[str]) -> dict[str, float]:
    """The HBM stack's columns of :func:`findings` at one q, against the near-memory LAP in main memory
    (``ratio``: a column of one (placement, variant) point over another's, NaN where one is missing):
    ``hbm_vs_near_memory_runtime_<variant>``: T_HBM / T_near-memory - 1 for each variant run;
    ``hbm_vs_near_memory_energy_<variant>``: the same for total energy (J); ``hbm_main_dram_cut_<variant>``:
    1 - main memory's DRAM accesses with the stack / without it (the stack's own accesses are not main
    memory's); the last two for Orig and Pipelining."""
    out: dict[str, float] = {}
    for v in variants:
        out[f"hbm_vs_near_memory_runtime_{v}"] = ratio((HBM_PLACEMENT, v), ("lap-near-memory", v), "cycles") - 1
    for v in ("orig", "pipelining"):
        out[f"hbm_vs_near_memory_energy_{v}"] = ratio((HBM_PLACEMENT, v), ("lap-near-memory", v),
                                                      "energy_total_j") - 1
        out[f"hbm_main_dram_cut_{v}"] = 1 - ratio((HBM_PLACEMENT, v), ("lap-near-memory", v), "dram_accesses")
    return out


TABLE3_COLUMNS = ("q", "T1_sim", "T1_real", "T2_sim", "T2_real", "T3_sim", "T3_real", "T1_dev", "T2_dev", "T3_dev")


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
    return pd.DataFrame(rows, columns=TABLE3_COLUMNS)  # the header even without a CPU-only point


# --------------------------------------------------------------------------- figures


def _bar_ticks(ax, qs: list, configs: list[str], width: float) -> None:
    """One rotated tick per bar (placement/variant) and the q value under each group."""
    ticks = [qi + ci * width for qi in range(len(qs)) for ci in range(len(configs))]
    ax.set_xticks(ticks, [c for _ in qs for c in configs], rotation=90, fontsize=6)
    for qi, q in enumerate(qs):
        ax.text(qi + 0.4 - width / 2, 1.01, f"q={q}", transform=ax.get_xaxis_transform(), ha="center")


def offload_interface(placement: PlacementSpec) -> InterfaceSpec:
    """The interface of the accelerator an accelerator placement's GEMMs offload to."""
    return placement_system(placement.system, placement.overrides).spec.accelerators[placement.gemm].interface


def accelerator_couplings(study: FmmStudySpec) -> dict[str, str]:
    """Placement name -> the coupling of the accelerator its GEMMs offload to, with the near memory it works
    in if it has one of its own (``near_memory (hbm)``); CPU-only placements left out."""
    out = {}
    for name, pl in study.placements.items():
        if pl.gemm in GEMM_UNITS:
            interface = offload_interface(pl)
            out[name] = interface.coupling + (f" ({interface.memory})" if interface.memory else "")
    return out


def paper_placements(study: FmmStudySpec) -> list[str]:
    """The placements 003 studied: CPU only, and the LAP in main memory (not in a memory of its own)."""
    return [name for name, pl in study.placements.items()
            if pl.gemm == "cpu" or (pl.gemm == "lap" and not offload_interface(pl).memory)]


def host_name(study: FmmStudySpec) -> str:
    """The name of the study's host: its CPU placement's system's."""
    cpu = study.placements["cpu"]
    return placement_system(cpu.system, cpu.overrides).spec.name


def figures(table: pd.DataFrame, out: Path, couplings: dict[str, str], host: str | None = None) -> None:
    """Figures 8-11 analogues (CPU-only and LAP points) and figure 12 (every accelerator placement by
    ``couplings``: placement -> coupling) as PNG files in ``out``; ``host``, the name of the study's host
    (``host_name``), ends every title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from simulator.studies.plots import bar_fill

    on = f", host {host}" if host else ""  # the study's host, in every title
    accelerators_figure(table, couplings, out / FIGURE_FILES[4], on)
    t = table[table.gemm.isin(MODELLED_GEMMS)].copy()
    t["config"] = t.placement + "/" + t.variant
    configs = list(dict.fromkeys(t.config))
    qs = sorted(t.q.unique())

    def bars(ax, col_sets, labels, title, ylabel, scale):
        # one bar call per configuration and column: matplotlib's cost is per call
        width = 0.8 / max(len(configs), 1)
        labelled = False
        # a part no point has (the prefetch stage of a grid without prefetching) is neither drawn nor in the
        # legend; the others keep their colours
        drawn = [(k, col) for k, col in enumerate(col_sets) if np.nan_to_num(t[col].to_numpy(dtype=float)).any()]
        for ci, cfg in enumerate(configs):
            r = t[t.config == cfg].drop_duplicates("q").sort_values("q")
            if not len(r):
                continue
            x = np.array([qs.index(q) for q in r.q]) + ci * width
            bottom = np.zeros(len(r))
            for k, col in drawn:
                v = np.nan_to_num(r[col].to_numpy(dtype=float)) * scale  # a part a point lacks: 0
                ax.bar(x, v, width, bottom=bottom, **bar_fill(k), label=None if labelled else labels[k],
                       edgecolor="k", linewidth=0.2)
                bottom = bottom + v
            labelled = True
        _bar_ticks(ax, qs, configs, width)
        ax.set_title(title + on, pad=18)  # above the q labels
        ax.set_ylabel(ylabel)
        if len(col_sets) > 1 and labelled:
            ax.legend(fontsize=7)

    fig, ax = plt.subplots(figsize=(13, 6))
    width = 0.8 / max(len(configs), 1)
    for ci, cfg in enumerate(configs):
        r = t[t.config == cfg].sort_values("q")
        ax.bar([qs.index(q) + ci * width for q in r.q], r.dram_accesses / 1e6, width, label=cfg, **bar_fill(ci),
               edgecolor="k", linewidth=0.2)
    _bar_ticks(ax, qs, configs, width)
    ax.set_ylabel("DRAM accesses (M lines)")
    ax.set_title("FMM U-list: DRAM accesses (cf. 003 Fig. 8)" + on, pad=18)  # above the q labels
    save_figure(fig, out / FIGURE_FILES[0], dpi=120)

    specs = [(FIGURE_FILES[1], [f"cycles_{s}" for s in STAGES], list(STAGES),
              "Host cycles by stage (cf. 003 Fig. 9)", "MCycles", 1e-6),
             (FIGURE_FILES[2], ["dram_background_j", "dram_refresh_j", "dram_dynamic_j"],
              ["background", "refresh", "dynamic"], "DRAM energy split (cf. 003 Fig. 10)", "J", 1.0)]
    # a component no point of the figure has (the systolic arrays' energy) gets no legend entry
    ecols = sorted(c for c in t.columns if c.startswith("energy_") and c != "energy_total_j" and t[c].notna().any())
    specs.append((FIGURE_FILES[3], ecols, [c[7:-2] for c in ecols],
                  "Total energy by component (cf. 003 Fig. 11)", "J", 1.0))
    for fname, cols, labels, title, ylabel, scale in specs:
        fig, ax = plt.subplots(figsize=(13, 6))
        bars(ax, cols, labels, title, ylabel, scale)
        save_figure(fig, out / fname, dpi=120)


def accelerators_figure(table: pd.DataFrame, couplings: dict[str, str], path: Path, title_end: str = "") -> None:
    """Figure 12: one column of panels per coupling, the accelerator placements at it that ran side by side for
    every q and every variant they all ran (a coupling none of whose placements ran: empty panels); top, host
    cycles (GEMM stage solid, the other stages hatched above it); bottom, total energy. ``title_end`` ends the
    title."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sites = list(dict.fromkeys(couplings.values()))
    qs = sorted(table.q.unique())
    fig, axes = plt.subplots(2, max(len(sites), 1), figsize=(5.5 * max(len(sites), 1), 8), squeeze=False)
    ran = set(table.placement)
    for col, site in enumerate(sites):
        # the placements at the site that ran: one that ran nothing (a grid narrowed by --only) would empty
        # the variants they all ran
        names = [name for name, c in couplings.items() if c == site and name in ran]
        ran_variants = [set(table[table.placement == name].variant) for name in names]
        variants = [v for v in fmm_ulist.VARIANTS if all(v in r for r in ran_variants)] if names else []
        groups = [(q, v) for q in qs for v in variants]
        width = 0.8 / max(len(names), 1)
        top, bottom = axes[0][col], axes[1][col]
        labelled = False
        for ni, name in enumerate(names):  # one bar call per placement and part: matplotlib's cost is per call
            rows = [table[(table.q == q) & (table.placement == name) & (table.variant == v)] for q, v in groups]
            present = [(gi, r.iloc[0]) for gi, r in enumerate(rows) if len(r)]  # a grid may lack a group
            if not present:
                continue
            # the k-th placement of every coupling in one colour: the LAP, then the arrays in study order
            x = np.array([gi for gi, _ in present]) + ni * width
            gemm_mc = np.array([float(r.cycles_gemm) for _, r in present]) / 1e6
            total_mc = np.array([float(r.cycles) for _, r in present]) / 1e6
            colour = f"C{ni}"
            top.bar(x, gemm_mc, width, color=colour, label=name)
            top.bar(x, total_mc - gemm_mc, width, bottom=gemm_mc, color=colour, alpha=0.35, hatch="//",
                    edgecolor="k", linewidth=0.2)
            bottom.bar(x, [float(r.energy_total_j) for _, r in present], width, color=colour, label=name)
            labelled = True
        for ax in (top, bottom):
            ax.set_xticks([gi + 0.4 - width / 2 for gi in range(len(groups))], [f"q={q} {v}" for q, v in groups],
                          rotation=90, fontsize=7)
        top.set_title(f"{site} coupling")
        top.set_ylabel("host MCycles (solid: GEMM stage)")
        bottom.set_ylabel("total energy (J)")
        if labelled:
            top.legend(fontsize=7)
    fig.suptitle("FMM U-list: the accelerators at each coupling" + title_end)
    save_figure(fig, path, dpi=120)


# --------------------------------------------------------------------------- the study's plug-in


@dataclass(frozen=True, eq=False)
class MicroRun:
    """One share of the micro runs that measure the U-list model's parameters (``machine_parts``):
    ``index`` orders them for ``assemble_machine``; ``systems`` names every system they run on. Two are
    equal when their keys are (a part may hold a loaded system, which is no dict key)."""

    index: int
    part: MachinePart
    systems: tuple[tuple[str, tuple[str, ...]], ...]  # (system file, its overrides)

    @functools.cached_property
    def _key(self) -> str:
        args = [str(Path(a).relative_to(PROJECT_ROOT)) if isinstance(a, str) and a.startswith(str(PROJECT_ROOT))
                else a.content_hash if isinstance(a, LoadedConfig) else a for a in self.part.args]
        return point_key("micro", self.part.kind, self.part.fn.__name__, args,
                         [system_hash(s, overrides) for s, overrides in self.systems])

    def key(self) -> str:
        """Storage key: the part's function and arguments and its systems' content."""
        return self._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MicroRun) and (self.index, self.key()) == (other.index, other.key())

    def __hash__(self) -> int:
        return hash((self.index, self.key()))

    def cost(self) -> tuple[int, float]:
        """Before every point: the pipelined points wait for the model these runs measure."""
        return MICRO_RUN_PRIORITY


#: the micro runs of the studies run lately (``micro_runs``), by the study's id: the engine asks for the
#: follow-up points after every completed point, and each answer needs the micro runs' list
_MICRO_RUNS: dict[int, tuple[FmmStudySpec, list[MicroRun]]] = {}
_MICRO_RUNS_KEPT = 4


def _micro_run_system(pl: PlacementSpec) -> str | LoadedConfig:
    """The system of the placement ``pl`` for the micro runs: its path, or loaded with its overrides (a path
    alone cannot carry them)."""
    return placement_system(pl.system, pl.overrides) if pl.overrides else str(PROJECT_ROOT / pl.system)


def _lap_systems(study: FmmStudySpec) -> dict[str, str | LoadedConfig]:
    """The systems of the study's LAP placements, by placement name, in the study's order."""
    return {name: _micro_run_system(pl) for name, pl in study.placements.items() if pl.gemm == "lap"}


def narrowed(study: FmmStudySpec, pairs: frozenset[tuple[str, str]]) -> FmmStudySpec:
    """``study`` with only the placements its points of ``pairs`` (``parse_only``) need, in the study's order:
    theirs, the CPU placement (the host's micro runs), the first LAP placement (a CPU-only point's model takes
    its LLC costs, ``model_rows``) and the LAP placement the residency curves are measured on
    (``residency_system``). The points of ``pairs`` and every model input they read stay the same; the micro
    runs leave out the LAP systems of the other placements (the two kept for the model are measured whole, even
    when the selection reads a part of them only). The micro runs' storage keys name the systems kept, so a
    run on other pairs does not reuse them."""
    laps = _lap_systems(study)
    keep = {"cpu", *(name for name, _ in pairs), *list(laps)[:1]}
    at_llc = residency_system(laps)
    if at_llc is not None:
        keep.add(at_llc)
    return replace(study, placements={name: pl for name, pl in study.placements.items() if name in keep})


def micro_runs(study: FmmStudySpec) -> list[MicroRun]:
    """The micro runs of ``study`` (``machine_parts``): the host's on its CPU placement's system, the LAP systems'
    on each, and the host rows alone of the contention factors on each distinct host without its accelerators."""
    held = _MICRO_RUNS.get(id(study))
    if held is not None and held[0] is study:
        return held[1]
    laps = _lap_systems(study)
    parts = machine_parts(_micro_run_system(study.placements["cpu"]), laps, study.bc_layout)
    used = tuple(dict.fromkeys((study.placements[name].system, study.placements[name].overrides)
                               for name in ("cpu", *laps)))
    runs = [MicroRun(i, part, used) for i, part in enumerate(parts)]
    while len(_MICRO_RUNS) >= _MICRO_RUNS_KEPT:
        del _MICRO_RUNS[next(iter(_MICRO_RUNS))]
    _MICRO_RUNS[id(study)] = (study, runs)  # the study held: its id names no other while it is kept
    return runs


def plan_points(study: FmmStudySpec, quick: bool) -> list[MicroRun | PlacementPoint]:
    """The first round: the micro runs, and every point whose b does not wait for the model they measure."""
    return [*micro_runs(study), *(p for p in grid(study, quick) if not needs_model_blocks(p, study))]


def tuned_points(study: FmmStudySpec, quick: bool, records: Mapping[Any, dict]) -> list[PlacementPoint] | None:
    """The second round: the pipelined LAP points with the b the model predicts fastest, once every micro
    run has its record (None before)."""
    tuned = [p for p in grid(study, quick) if needs_model_blocks(p, study)]
    if not tuned:
        return []
    machine = machine_of(micro_runs(study), records)
    if machine is None:
        return None
    problems = _tuned_problems(study, tuned)
    return [replace(p, blocks=pipelined_blocks(machine, p.placement, problems[p.q], p.llc_bytes, p.block_llc_share,
                                               p.block_order)) for p in tuned]


def _tuned_problems(study: FmmStudySpec, tuned: list[PlacementPoint]) -> dict[int, fmm_ulist.UListProblem]:
    """The problems of the pipelined points ``tuned`` by q; InputError if one's b search would be too long to run
    (``pipelined_search_range``: the study's LLC far smaller than its problem's)."""
    problems = {q: fmm_ulist.build_problem(q, tuned[0].n_points, study.density) for q in sorted({p.q for p in tuned})}
    for q, problem in problems.items():
        try:
            pipelined_search_range(problem, tuned[0].llc_bytes, study.block_llc_share, study.block_order)
        except ValueError as exc:
            raise InputError(f"fmm_placement study: llc_bytes: {exc}, at q = {q} (pipelined_blocks: llc_rule gives "
                             "one)") from None
    return problems


def check_tuned_searches(study: FmmStudySpec, quick: bool) -> None:
    """``before_run``: refuse a study whose pipelined points' b searches would be too long to run, before its
    micro runs (building the problems' trees, which loading the file leaves out)."""
    tuned = [p for p in grid(study, quick) if needs_model_blocks(p, study)]
    if tuned:
        _tuned_problems(study, tuned)


def machine_of(runs: list[MicroRun], records: Mapping[Any, dict]) -> dict[str, Any] | None:
    """The measured model parameters (``assemble_machine``) from the micro runs' records; None if one is missing."""
    if any(run not in records for run in runs):
        return None
    return assemble_machine([run.part for run in runs], [records[run]["result"] for run in runs])


def run_task(task: MicroRun | PlacementPoint) -> dict[str, Any]:
    """Run one point of the study: a micro run's result (under ``result``) or a placement point's table row."""
    if isinstance(task, MicroRun):
        return {"result": task.part.run()}
    return run_point(task)


def report(study: FmmStudySpec, quick: bool, records: Mapping[Any, dict], out: Path) -> None:
    """Write the tables and figures (module docstring) from the records of the micro runs and the points."""
    rows = [record for point, record in records.items() if isinstance(point, PlacementPoint)]
    table = pd.DataFrame(rows).sort_values(["q", "placement", "variant"]).reset_index(drop=True)
    table.to_csv(out / "table.csv", index=False)
    machine = machine_of([p for p in records if isinstance(p, MicroRun)], records)
    n = study.quick.n_points if quick else study.n_points
    problems = {q: fmm_ulist.build_problem(q, n, study.density) for q in sorted({int(q) for q in table.q})}
    dims = {q: pr.dims() for q, pr in problems.items()}
    counts = {q: class_counts(pr) for q, pr in problems.items()}
    machine["dims"] = {q: asdict(d) for q, d in dims.items()}
    machine["class_counts"] = counts
    (out / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    cross = model_rows(table, machine, dims, counts)
    cross.to_csv(out / "crosscheck.csv", index=False)
    qs_fit = tuple(q for q in sorted(dims) if q <= 10)
    qs_big = tuple(q for q in sorted(dims) if q > 10)
    summary = pd.concat([crosscheck_summary(cross, qs=qs).assign(qs=" ".join(map(str, qs)))
                         for qs in (qs_fit, qs_big) if qs])
    summary.to_csv(out / "crosscheck_summary.csv", index=False)
    table5(table, cross).to_csv(out / "table5.csv", index=False)
    table3(table).to_csv(out / "table3.csv", index=False)
    findings(table).to_csv(out / "findings.csv", index=False)
    figures(table, out, accelerator_couplings(study), host_name(study))


PLUGIN = StudyPlugin(title="the FMM study", load=load_study, points=plan_points, run_point=run_task,
                     report=report, outputs=OUTPUT_PATTERNS, follow_up=tuned_points, before_run=check_tuned_searches)


# --------------------------------------------------------------------------- main


def check_out_dir(path: str | Path) -> Path:
    """``path`` as a Path if the study may write there: a new path, an empty directory or a previous
    output of this study (its ``OUTPUT_PATTERNS`` and the engine's entries, ``plugin_run``); InputError
    naming --out otherwise. Creates nothing."""
    return check_plugin_dir(path, PLUGIN)


def main(argv: list[str] | None = None, prog: str = "fmm_study") -> int:
    """Run the study and write tables and figures; returns the exit status. ``prog`` names the program in
    messages."""
    ap = OptionParser(prog=prog, description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced q list and problem size")
    ap.add_argument("--study", default=str(STUDY))
    ap.add_argument("--out", default="results/fmm")
    ap.add_argument("--workers", type=int_arg, help=f"local worker processes (default: number of CPUs; at most "
                                                    f"{LOCAL_WORKERS_PER_CPU} per CPU)")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="run the points on a dask.distributed scheduler, e.g. "
                    "tcp://host:8786 (every worker needs this offsim tree at the same path)")
    ap.add_argument("--dask-local", type=int_arg, metavar="N",
                    help="run on a loopback Dask cluster of N worker processes (as many as --workers may be)")
    ap.add_argument("--only", default=None, help="run just these placement/variant pairs, comma-separated "
                    "(e.g. lap-dram/orig,lap-llc/blocking), and only the micro runs they need")
    args = ap.parse_args(argv)
    return run_studies([StudyRun(args.study, args.out, args.only)], args.quick, prog, workers=args.workers,
                       scheduler=args.scheduler, dask_local=args.dask_local)


@dataclass(frozen=True)
class StudyRun:
    """One study of ``run_studies``: its file, its output directory and ``--only``'s pairs (None: all)."""

    study: str | Path
    out: str | Path
    only: str | None = None


def run_studies(runs: list[StudyRun], quick: bool = False, prog: str = "fmm_study", **executor: Any) -> int:
    """Run the studies ``runs`` on one executor (``plugin_run.run_plugins``: their points in one queue, longest
    first; each study's tables and figures written once its own points are done) and return the exit status:
    2 on bad input (said on stderr, naming ``prog``), 1 if a point failed. ``executor``: the workers /
    scheduler / dask_local options."""
    t0 = time.perf_counter()
    try:
        jobs = []
        for run in runs:
            study = load_study(run.study)
            only = parse_only(run.only, study) if run.only is not None else None
            if only is not None:
                study = narrowed(study, only)
            jobs.append(PluginJob(PLUGIN, "fmm_placement", study, run.out, quick, None if only is None else (
                lambda p, only=only: not isinstance(p, PlacementPoint) or (p.placement, p.variant) in only)))
        outcomes = run_plugins(jobs, **executor)
    except (InputError, ValueError) as exc:
        return (exc if isinstance(exc, InputError) else InputError(str(exc))).report(prog)
    wall_s = time.perf_counter() - t0
    return max(finished(outcome, run.out, wall_s) for run, outcome in zip(runs, outcomes))
