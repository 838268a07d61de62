"""Studies of issue 4 on the simulator: intensity sweep vs the energy roofline, stencil tiling.

Roofline (001 ch. 3-4): the machine's costs are *measured on the simulated
system* with micro runs, never read from its config (``simulator.studies.roofline.measure_machine``).
The sweep then runs ``workloads.micro.intensity`` at each I and compares the simulated
time and energy with T = max(W tau_flop, Q tau_mem) and E = W eps_flop + Q eps_mem + pi_0 T.

Stencils (004 apps. A, B): host sweeps (naive, blocked, time-tiled) against
``models.stencil.dram_traffic_words`` and the stencil engine against the tiled time model.

Each study is a plug-in of the paper-study interface (``ROOFLINE_PLUGIN``, ``TILING_PLUGIN``;
``simulator.studies.plugin``): its simulations are points (``RooflineRun``: the machine's measurement and
one per intensity; ``TilingRun``: each host sweep and each engine tile), each stored under ``points/`` of
the output directory as it completes, and its report draws the figure and writes ``<study>_summary.json``.

Entry point: ``offsim study configs/studies/<study>.yaml --out DIR``; DIR must be
new, empty or a previous output of these studies (``OUTPUT_PATTERNS`` and the engine's entries). The
study file is checked whole before DIR is made (``load_study``: systems, lists, grid and tile dimensions,
tile sizes against the fast memory that holds them).
All times in seconds, energies in joules, traffic in bytes or words as named.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from models.stencil import GpuParams, TileShape
from simulator.config.accel_stencil import StencilEngineSpec
from simulator.errors import ConfigError, InputError
from simulator.config.fields import param
from simulator.config.loader import PROJECT_ROOT, LoadedConfig, load_spec, project_file
from simulator.config.schema import dram_geometry
from simulator.config.stencils import STENCILS
from simulator.config.yamlio import load_yaml
from simulator.config.files import write_atomic
from simulator.engine.limits import host_time_message
from simulator.studies.roofline import MeasuredMachine, energy_problem, measure_machine
from simulator.runner import energy_split_j, load_system, memory_reach_problem, simulate_trace
from simulator.studies.plots import save_figure
from simulator.studies.plugin import StudyPlugin, point_key, system_hash
from simulator.studies.plugin_run import run_plugin
from simulator.studies.spec import list_problems, load_referenced_system
from workloads import micro
from workloads import stencil as ws

# ---- study files ----------------------------------------------------------------------------

@dataclass(frozen=True)
class RooflineStudySpec:
    """configs/studies/roofline.yaml: an intensity sweep on one system."""

    study: str = param(choices=("roofline",), doc="study kind")
    system: str = param(check=project_file, doc="system config, relative to the project root")
    total_bytes: int = param(unit="size", positive=True, max=micro.MAX_INTENSITY_BYTES,
                             doc="bytes Q streamed per point (at most workloads.micro.MAX_INTENSITY_BYTES)")
    intensities: tuple[float, ...] = param(positive=True, max=micro.MAX_INTENSITY_FLOPS_PER_BYTE,
                                           doc="flop/byte intensities of the sweep")
    overrides: tuple[str, ...] = param((), doc="--set style overrides of the system")


@dataclass(frozen=True)
class TileSpec:
    """A tile shape: t_t time steps by t_s points per space dimension."""

    t_t: int = param(min=1, doc="time steps per tile")
    t_s: tuple[int, ...] = param(min=1, doc="points per space dimension")


@dataclass(frozen=True)
class HostTileSpec(TileSpec):
    """The host's time tiling: a tile shape and its kind."""

    kind: str = param("hhc_2d", choices=("time_skew_1d", "hex_1d", "hhc_2d", "hhc_3d"), doc="tiling scheme")


@dataclass(frozen=True)
class StencilTilingStudySpec:
    """configs/studies/stencil_tiling.yaml: host sweeps and engine tiles vs the 004 models."""

    study: str = param(choices=("stencil_tiling",), doc="study kind")
    stencil: str = param(choices=tuple(STENCILS), doc="stencil kernel")
    host_system: str = param(check=project_file, doc="host system config, relative to the project root")
    grid: tuple[int, ...] = param(min=1, doc="interior points per dimension of the host sweeps")
    steps: int = param(min=1, doc="time steps of the host sweeps")
    host_tile: HostTileSpec = param(doc="time tiling of the host sweep")
    engine_system: str = param(check=project_file, doc="system with the stencil engine")
    engine_grid: tuple[int, ...] = param(min=1, doc="interior points per dimension on the engine")
    engine_steps: int = param(min=1, doc="time steps on the engine")
    engine_tiles: tuple[TileSpec, ...] = param(doc="hhc_2d tile shapes run on the engine")
    engine: str = param("stencil", doc="the engine's unit name in that system")


STUDY_SPECS = {"roofline": RooflineStudySpec, "stencil_tiling": StencilTilingStudySpec}


def load_study(path: str | Path) -> RooflineStudySpec | StencilTilingStudySpec:
    """Read and validate a stencil/roofline study file (its ``study`` key selects the kind): its keys, then
    what its runner needs of them (``roofline_problems``, ``tiling_problems``), so that a file the runner
    would stop on is refused before anything is written. ConfigError naming the file and key."""
    raw = load_yaml(path)
    kind = raw.get("study") if isinstance(raw, dict) else None
    if kind not in STUDY_SPECS:
        raise ConfigError(f"{path}: study: {kind!r}; expected one of: {', '.join(sorted(STUDY_SPECS))}")
    spec = load_spec(path, STUDY_SPECS[kind]).spec
    check = roofline_problems if kind == "roofline" else tiling_problems
    errors = check(spec, str(path))
    if errors:
        raise ConfigError(errors)
    return spec


#: bytes per element of the host sweeps and the roofline micro runs (doubles): the checks at load and the runs
#: lay out and count the same elements
ELEM_BYTES = 8


def llc_words(host: LoadedConfig) -> int:
    """The host's last-level cache in ``ELEM_BYTES`` elements: the tile model's fast memory M."""
    return host.spec.caches.levels[-1].size_bytes // ELEM_BYTES


def roofline_problems(cfg: RooflineStudySpec, source: str, elem_bytes: int = ELEM_BYTES) -> list[str]:
    """The intensities (at least one, none twice), the system with the study's overrides, and Q: whole
    ``elem_bytes`` elements (as ``run_roofline_point`` reads them), at least one per core, within the DRAM."""
    errors = list_problems(cfg, source, ("intensities",))
    loaded, problems = load_referenced_system(source, "system", cfg.system)
    if loaded is not None and cfg.overrides:
        loaded, problems = load_referenced_system(source, "overrides", cfg.system, cfg.overrides)
    if cfg.total_bytes % elem_bytes:
        errors.append(f"{source}: total_bytes: {cfg.total_bytes} B; expected whole {elem_bytes} B elements")
    elif loaded is not None and cfg.total_bytes < loaded.spec.host.cores * elem_bytes:
        errors.append(f"{source}: total_bytes: {cfg.total_bytes} B; expected at least one {elem_bytes} B element "
                      f"per core ({loaded.spec.host.cores} cores)")
    elif loaded is not None:  # Q is one array from address 0 (micro.intensity)
        problem = memory_reach_problem(cfg.total_bytes, dram_geometry(loaded.spec).capacity_bytes,
                                       f"{source}: total_bytes", cfg.system)
        problem = problem or _intensity_time_problem(cfg, loaded, source)
        errors += [problem] if problem else []
    if loaded is not None:  # the machine is measured on it (run_roofline_point)
        problem = energy_problem(loaded)
        errors += [f"{source}: system: {problem}"] if problem else []
    return errors + problems


def _intensity_time_problem(cfg: RooflineStudySpec, loaded: LoadedConfig, source: str) -> str | None:
    """Why the sweep's highest intensity cannot run within the simulated-time limit, or None: its flops alone,
    shared evenly by the host's cores at ``host.flops_per_cycle``, take longer (a lower bound of what the run's
    ``host_time_problem`` finds in its trace, so counted without building the trace)."""
    if not cfg.intensities:
        return None  # refused as an empty list
    top = max(cfg.intensities)
    h = loaded.spec.host
    work = np.array([top * cfg.total_bytes / h.cores / h.flops_per_cycle])
    return host_time_message(loaded.spec, work, f"{source}: intensities: {top:g} flop/B", cfg.system)


def tiling_problems(cfg: StencilTilingStudySpec, source: str) -> list[str]:
    """What ``run_tiling_point`` needs: both systems, grids of the stencil's dimensions, tile shapes
    the models accept (``TileShape``) of those dimensions, a host tile within the LLC and engine tiles within
    the engine's scratchpad, an engine of that name in the engine system, and no engine tile twice."""
    dims = STENCILS[cfg.stencil].dims
    errors = list_problems(cfg, source, ("engine_tiles",))
    grids = (("grid", cfg.grid), ("engine_grid", cfg.engine_grid)) if dims == 2 else (("grid", cfg.grid),)
    for key, grid in grids:  # a stencil not 2-D is refused for the engine whatever its grid (_engine_problems)
        if len(grid) != dims:
            errors.append(f"{source}: {key}: {list(grid)}; expected {dims} sizes, one per dimension of the "
                          f"{dims}-D stencil {cfg.stencil!r}")
    host, problems = load_referenced_system(source, "host_system", cfg.host_system)
    errors += problems
    tile = cfg.host_tile
    shape, problem = _tile_shape(tile.kind, tile)
    if problem:
        errors.append(f"{source}: host_tile: {problem}")
    elif len(shape.t_s) != dims:
        errors.append(f"{source}: host_tile.kind: {tile.kind!r} tiles {len(shape.t_s)}-D grids; expected a kind "
                      f"for the {dims}-D stencil {cfg.stencil!r}")
    elif host is not None and shape.m_tile_words > llc_words(host):
        errors.append(f"{source}: host_tile: a tile of t_t {tile.t_t}, t_s {list(tile.t_s)} needs "
                      f"{shape.m_tile_words} words; expected at most the {llc_words(host)} {ELEM_BYTES} B words "
                      f"of the host's LLC ({cfg.host_system})")
    elif len(cfg.grid) == dims and (problem := ws.tile_extent_problem(cfg.grid, cfg.steps, shape)
                                    or ws.tile_flops_problem(cfg.stencil, shape)):  # as the generator checks it
        errors.append(f"{source}: host_tile: {problem}")
    elif len(cfg.grid) == dims:  # each host sweep within a trace's rows, as the generator checks it
        sizes = ((scheme, ws.sweep_size_problem(scheme, cfg.grid, cfg.steps, shape)) for scheme in HOST_SCHEMES)
        too_big = [f"{source}: grid and steps: the {scheme} sweep: {problem}" for scheme, problem in sizes if problem]
        errors += too_big[:1]  # one message: the first sweep that cannot run
        if not too_big and host is not None:  # the time-tiled sweep's memory: its two grids and its scratch tile
            space, _, _ = ws.time_tiled_space(cfg.grid, shape, ELEM_BYTES)
            problem = memory_reach_problem(space.end_addr, dram_geometry(host.spec).capacity_bytes,
                                           f"{source}: grid", cfg.host_system)
            errors += [problem] if problem else []
    return errors + _engine_problems(cfg, source)


def _tile_shape(kind: str, tile: TileSpec) -> tuple[TileShape | None, str | None]:
    """(the models' tile shape, None), or (None, why ``TileShape`` refuses the tile)."""
    try:
        return TileShape(kind, tile.t_t, tuple(tile.t_s)), None
    except ValueError as exc:
        return None, str(exc)


def _engine_problems(cfg: StencilTilingStudySpec, source: str) -> list[str]:
    """The engine system holds a stencil engine named ``cfg.engine`` whose scratchpad holds every engine
    tile (the rule of ``StencilEngineUnit.slots``); the engine runs hhc_2d tiles, so the stencil is 2-D."""
    errors = []
    if STENCILS[cfg.stencil].dims != 2:
        errors.append(f"{source}: stencil: {cfg.stencil!r} is {STENCILS[cfg.stencil].dims}-D; expected a 2-D "
                      "stencil, as the engine runs hhc_2d tiles (engine_tiles)")
    loaded, problems = load_referenced_system(source, "engine_system", cfg.engine_system)
    engine = loaded.spec.accelerators.get(cfg.engine) if loaded is not None else None
    if loaded is not None and not isinstance(engine, StencilEngineSpec):
        have = ", ".join(f"{n} ({type(a).__name__})" for n, a in loaded.spec.accelerators.items()) or "none"
        problems.append(f"{source}: engine_system: {cfg.engine_system} has no stencil engine named {cfg.engine!r} "
                        f"(accelerators: {have}); expected a system with one (engine: names it)")
    words = engine.scratchpad_words if isinstance(engine, StencilEngineSpec) else None
    for i, tile in enumerate(cfg.engine_tiles):
        shape, problem = _tile_shape("hhc_2d", tile)
        if problem:
            errors.append(f"{source}: engine_tiles[{i}]: {problem}")
        elif words is not None and shape.m_tile_words > words:
            errors.append(f"{source}: engine_tiles[{i}]: t_t {tile.t_t}, t_s {list(tile.t_s)} needs "
                          f"{shape.m_tile_words} words per tile; expected at most the {words} words of the "
                          f"engine's scratchpad ({cfg.engine_system}: accelerators.{cfg.engine}.scratchpad_bytes "
                          f"{engine.scratchpad_bytes} B / word_bytes {engine.word_bytes} B)")
        elif (size := ws.engine_program_problem(cfg.engine_grid, cfg.engine_steps, shape)) is not None:
            message = f"{source}: engine_{size[0]}: {size[1]}"  # one message per key: the first tile's
            errors += [] if any(e.startswith(f"{source}: engine_{size[0]}:") for e in errors) else [message]
    return problems + errors


# ---- roofline -----------------------------------------------------------------------------

@dataclass(frozen=True)
class SweepPoint:
    """One intensity: work (flop), traffic (B), simulated and predicted time (s) and energy (J)."""

    intensity_flop_per_byte: float
    w_flops: int
    q_bytes: int
    dram_bytes: float
    time_s: float
    energy_j: float
    model_time_s: float
    model_energy_j: float

    @property
    def time_error(self) -> float:
        return self.time_s / self.model_time_s - 1.0

    @property
    def energy_error(self) -> float:
        return self.energy_j / self.model_energy_j - 1.0


def intensity_sweep(system: str | Path | LoadedConfig, intensities: Sequence[float],
                    total_bytes: int = 16 * 2**20, elem_bytes: int = 8,
                    machine: MeasuredMachine | None = None) -> tuple[MeasuredMachine, list[SweepPoint]]:
    """Simulate one intensity micro run per I (on every core of the host, one thread each) and predict each
    with the measured roofline."""
    loaded = load_system(system)
    machine = machine or measure_machine(loaded, elem_bytes=elem_bytes)
    plat = machine.platform()
    points = []
    for trace, i in zip(micro.intensity_sweep(list(intensities), total_bytes, elem_bytes,
                                              threads=loaded.spec.host.cores), intensities):
        res = simulate_trace(loaded, trace)
        w = int(res.value("host", "flops"))
        t = res.value("system", "simulated_time_s")
        e, _ = energy_split_j(res)
        dram = res.value("dram", "bytes_read") + res.value("dram", "bytes_written")
        t_model = plat.time_s(w, total_bytes)
        points.append(SweepPoint(float(i), w, total_bytes, dram, t, e, t_model,
                                 plat.energy_j(w, total_bytes, t_model)))
    return machine, points


def plot_roofline(machine: MeasuredMachine, points: Sequence[SweepPoint], path: str | Path) -> Path:
    """Two panels over intensity: normalised speed vs the time roofline, energy efficiency vs the arch line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    plat = machine.platform()
    pts = [p for p in points if p.intensity_flop_per_byte > 0]
    i_sim = np.array([p.intensity_flop_per_byte for p in pts])
    grid = np.logspace(np.log10(min(i_sim.min(), plat.b_tau / 8)), np.log10(max(i_sim.max(), plat.b_tau * 8)), 200)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    speed = [p.w_flops * plat.tau_flop_s / p.time_s for p in pts]
    eff = [p.w_flops * plat.eps_hat_j / p.energy_j for p in pts]
    for ax, sim, line, label in ((axes[0], speed, plat.time_roofline(grid), "time roofline min(1, I/B_tau)"),
                                 (axes[1], eff, plat.arch_line(grid), "arch line 1/(1 + B_hat_eps(I)/I)")):
        ax.loglog(grid, line, "-", color="tab:blue", label=label)
        ax.loglog(i_sim, sim, "o", color="tab:red", label="simulated")
        ax.axvline(plat.b_tau, ls="--", color="grey", label=f"B_tau = {plat.b_tau:.2f} flop/B")
        ax.axvline(plat.b_eps, ls=":", color="black", label=f"B_eps = {plat.b_eps:.2f} flop/B")
        ax.set_xlabel("intensity I (flop/B)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("W tau_flop / T (normalised speed)")
    axes[1].set_ylabel("W eps_hat / E (normalised energy efficiency)")
    fig.suptitle("Intensity sweep on the simulated host vs the energy roofline (001 eqs. 3-6)")
    return save_figure(fig, path)


@dataclass(frozen=True)
class RooflineRun:
    """One run of a roofline study: the micro runs that measure the machine (``intensity`` None), or the
    intensity micro run at ``intensity`` flop/B streaming ``total_bytes`` (on every core, one thread each)."""

    system: str
    overrides: tuple[str, ...]
    total_bytes: int
    intensity: float | None = None

    def key(self) -> str:
        """Storage key: the run and the system's content."""
        return point_key("roofline", self.intensity, self.total_bytes, system_hash(self.system, self.overrides))

    def cost(self) -> tuple[float]:
        """The measurement first (every prediction needs it), then the intensities by their work."""
        return (float("inf"),) if self.intensity is None else (self.total_bytes * (1.0 + self.intensity),)


def roofline_points(cfg: RooflineStudySpec, quick: bool = False) -> list[RooflineRun]:
    """The measurement and one run per intensity of ``cfg`` (no reduced grid: ``quick`` changes nothing)."""
    return [RooflineRun(cfg.system, cfg.overrides, cfg.total_bytes),
            *(RooflineRun(cfg.system, cfg.overrides, cfg.total_bytes, float(i)) for i in cfg.intensities)]


def run_roofline_point(run: RooflineRun, elem_bytes: int = ELEM_BYTES) -> dict[str, Any]:
    """The measured machine (``MeasuredMachine`` as a dict), or one intensity run's flops, time (s),
    energy (J) and DRAM bytes."""
    loaded = load_system(PROJECT_ROOT / run.system, run.overrides)
    if run.intensity is None:
        return asdict(measure_machine(loaded, elem_bytes=elem_bytes))
    trace = micro.intensity(run.intensity, run.total_bytes, elem_bytes, threads=loaded.spec.host.cores)
    res = simulate_trace(loaded, trace)
    energy_j, _ = energy_split_j(res)
    return {"w_flops": int(res.value("host", "flops")), "time_s": res.value("system", "simulated_time_s"),
            "energy_j": energy_j, "dram_bytes": res.value("dram", "bytes_read") + res.value("dram", "bytes_written")}


def roofline_report(cfg: RooflineStudySpec, quick: bool, records: Mapping[RooflineRun, dict],
                    out_dir: Path) -> dict[str, Any]:
    """Predict each run with the measured roofline, plot, write and return a JSON-able summary."""
    runs = roofline_points(cfg)
    machine = MeasuredMachine(**records[runs[0]])
    plat = machine.platform()
    points = []
    for run in runs[1:]:
        r = records[run]
        t_model = plat.time_s(r["w_flops"], run.total_bytes)
        points.append(SweepPoint(run.intensity, r["w_flops"], run.total_bytes, r["dram_bytes"], r["time_s"],
                                 r["energy_j"], t_model, plat.energy_j(r["w_flops"], run.total_bytes, t_model)))
    fig = plot_roofline(machine, points, out_dir / "roofline_sweep.png")
    return write_summary(out_dir, cfg, {
        "machine": asdict(machine), "b_tau_flop_per_byte": plat.b_tau, "b_eps_flop_per_byte": plat.b_eps,
        "points": [asdict(p) | {"time_error": p.time_error, "energy_error": p.energy_error} for p in points],
        "figure": fig.name})


def write_summary(out_dir: Path, cfg: RooflineStudySpec | StencilTilingStudySpec,
                  summary: dict[str, Any]) -> dict[str, Any]:
    """Write ``<study>_summary.json`` in ``out_dir``; return ``summary``."""
    text = json.dumps(summary, indent=2, default=str) + "\n"
    write_atomic(out_dir / f"{cfg.study}_summary.json", lambda tmp: tmp.write_text(text))
    return summary


# ---- stencil tiling ---------------------------------------------------------------------------

HOST_SCHEMES = ("naive", "time_tiled")


@dataclass(frozen=True)
class TilingRun:
    """One run of a stencil tiling study: a host sweep (``scheme`` of ``HOST_SCHEMES``) or, with ``tile``,
    the engine's program of that hhc_2d tile shape."""

    cfg: StencilTilingStudySpec
    scheme: str
    tile: TileSpec | None = None

    def key(self) -> str:
        """Storage key: the study's settings, the run and its systems' content."""
        return point_key("stencil", asdict(self.cfg), self.scheme, None if self.tile is None else asdict(self.tile),
                         system_hash(self.cfg.host_system), system_hash(self.cfg.engine_system))

    def cost(self) -> tuple[float]:
        """Host sweeps first (a full grid each), then the engine's tiles."""
        return (1.0,) if self.tile is None else (0.0,)


def tiling_points(cfg: StencilTilingStudySpec, quick: bool = False) -> list[TilingRun]:
    """The host sweeps and one engine run per tile shape (no reduced grid: ``quick`` changes nothing)."""
    return [*(TilingRun(cfg, scheme) for scheme in HOST_SCHEMES),
            *(TilingRun(cfg, "engine", tile) for tile in cfg.engine_tiles)]


def run_tiling_point(run: TilingRun) -> dict[str, Any]:
    """A host sweep's DRAM traffic (words, simulated and 004's model) and time (s), or an engine tile's
    simulated and modelled time (s)."""
    from models.stencil import dram_traffic_words, predict_time_s
    from simulator.accel.stencil import cycles_per_point

    cfg = run.cfg
    st = cfg.stencil
    if run.tile is None:
        host = load_system(PROJECT_ROOT / cfg.host_system)
        grid, steps = cfg.grid, cfg.steps
        shape = TileShape(cfg.host_tile.kind, cfg.host_tile.t_t, cfg.host_tile.t_s)
        trace = ws.naive_sweep(st, grid, steps, ELEM_BYTES) if run.scheme == "naive" else ws.time_tiled_sweep(
            st, grid, steps, shape, ELEM_BYTES)
        res = simulate_trace(host, trace)
        words = (res.value("dram", "bytes_read") + res.value("dram", "bytes_written")) / ELEM_BYTES
        model = dram_traffic_words(STENCILS[st], grid, steps, run.scheme, llc_words(host), shape=shape,
                                   write_allocate=True).total_words
        return {"scheme": run.scheme, "sim_words": words, "model_words": model,
                "sim_time_s": res.value("system", "simulated_time_s")}
    eng = load_system(PROJECT_ROOT / cfg.engine_system)
    spec = eng.spec.accelerators[cfg.engine]
    gpu = model_params(spec, spec.interface.bandwidth_bytes_per_s,
                       spec.interface.offload_overhead_cycles / eng.spec.host.frequency_hz)
    c_iter = cycles_per_point(spec, st) / spec.frequency_hz
    shape = TileShape("hhc_2d", run.tile.t_t, run.tile.t_s)
    program = ws.engine_program(st, cfg.engine_grid, cfg.engine_steps, shape, elem_bytes=spec.word_bytes)
    res = simulate_trace(eng, program)
    return {"t_t": run.tile.t_t, "t_s": run.tile.t_s, "sim_time_s": res.value("system", "simulated_time_s"),
            "model_time_s": predict_time_s(shape, cfg.engine_grid, cfg.engine_steps, gpu, c_iter, spec.lanes)}


def tiling_report(cfg: StencilTilingStudySpec, quick: bool, records: Mapping[TilingRun, dict],
                  out_dir: Path) -> dict[str, Any]:
    """Host traffic of naive vs time-tiled sweeps and engine time per tile shape vs the models: plot, write and
    return the summary."""
    runs = tiling_points(cfg)
    traffic = [records[run] for run in runs if run.tile is None]
    engine = [records[run] for run in runs if run.tile is not None]
    _plot_tiling(traffic, engine, out_dir / "stencil_tiling.png")
    return write_summary(out_dir, cfg, {"traffic": traffic, "engine": engine, "figure": "stencil_tiling.png"})


def _plot_tiling(traffic: list[dict], engine: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = range(len(traffic))
    a.bar([i - 0.2 for i in x], [t["sim_words"] / 1e6 for t in traffic], 0.4, label="simulated")
    a.bar([i + 0.2 for i in x], [t["model_words"] / 1e6 for t in traffic], 0.4, label="model (004)")
    a.set_xticks(list(x), [t["scheme"] for t in traffic])
    a.set_ylabel("DRAM traffic (Mwords)")
    a.set_title("Host sweeps: DRAM traffic")
    a.legend()
    labels = [f"tT={e['t_t']} ts={tuple(e['t_s'])}" for e in engine]
    y = range(len(engine))
    b.barh([i - 0.2 for i in y], [e["sim_time_s"] * 1e3 for e in engine], 0.4, label="simulated")
    b.barh([i + 0.2 for i in y], [e["model_time_s"] * 1e3 for e in engine], 0.4, label="model A.13/A.31")
    b.set_yticks(list(y), labels, fontsize=8)
    b.set_xlabel("time (ms)")
    b.set_title("Stencil engine: time per tile shape")
    b.legend(fontsize=8)
    save_figure(fig, path)


# ---- plug-ins and entry point ----------------------------------------------------------------

# What the studies write (their figures and summaries), for the --out check.
OUTPUT_PATTERNS = ("roofline_sweep.png", "stencil_tiling.png", "*_summary.json",
                   "README.md")  # the folder's guide (results/stencil keeps one), which the study leaves alone
ROOFLINE_PLUGIN = StudyPlugin(title="the energy roofline study", load=load_study, points=roofline_points,
                              run_point=run_roofline_point, report=roofline_report, outputs=OUTPUT_PATTERNS)
TILING_PLUGIN = StudyPlugin(title="the stencil tiling study", load=load_study, points=tiling_points,
                            run_point=run_tiling_point, report=tiling_report, outputs=OUTPUT_PATTERNS)
PLUGINS = {"roofline": ROOFLINE_PLUGIN, "stencil_tiling": TILING_PLUGIN}


def run_study(path: str | Path | RooflineStudySpec | StencilTilingStudySpec, out_dir: str | Path,
              **engine: Any) -> dict[str, Any]:
    """Run a study (a YAML file, whose key ``study`` selects it, or its loaded spec) on the sweep engine into
    ``out_dir`` (``plugin_run.run_plugin``; ``engine``: its executor and ``owned`` options); write
    ``<study>_summary.json`` and return the summary. RuntimeError if a run failed."""
    cfg = path if isinstance(path, (RooflineStudySpec, StencilTilingStudySpec)) else load_study(path)
    outcome = run_plugin(PLUGINS[cfg.study], cfg.study, cfg, out_dir, **engine)
    if outcome.failed:
        raise RuntimeError(f"{len(outcome.failed)} runs of the {cfg.study} study failed: "
                           + "; ".join(f"{k}: {e}" for k, e in outcome.failed.items()))
    return outcome.result


def main(argv: Sequence[str] | None = None, prog: str = "stencil_study") -> int:
    """Command line: run one study file into an output directory; ``prog`` names the program in messages."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    ap.add_argument("study", help="study YAML (configs/studies/...)")
    ap.add_argument("--out", default="results/stencil", help="output directory")
    args = ap.parse_args(argv)
    try:
        summary = run_study(args.study, args.out)
    except InputError as exc:
        return exc.report(prog)
    print(json.dumps({k: v for k, v in summary.items() if k != "points"}, indent=2, default=str))
    return 0


def model_params(spec: StencilEngineSpec, bandwidth_bytes_per_s: float, call_overhead_s: float) -> GpuParams:
    """The engine as ``models.stencil.GpuParams``: L, tau_sync, T_sync = call overhead.

    L = units x word / bandwidth: when every unit streams, each gets an even share of the
    interface (004's L is likewise a measured per-SM figure under full load, 004 Table A.3).
    """
    words = spec.scratchpad_words
    return GpuParams(spec.units, spec.lanes, words, words, spec.max_tiles_in_flight,
                     spec.lanes * spec.max_tiles_in_flight, spec.lanes,
                     spec.units * spec.word_bytes / bandwidth_bytes_per_s, spec.sync_cycles / spec.frequency_hz,
                     call_overhead_s, "stencil engine")

