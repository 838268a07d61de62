"""Studies of issue 4 on the simulator: intensity sweep vs the energy roofline, stencil tiling.

Roofline (001 ch. 3-4): the machine's costs are *measured on the simulated
system* with micro runs, never read from its config (``simulator.studies.roofline.measure_machine``).
The sweep then runs ``workloads.micro.intensity`` at each I and compares the simulated
time and energy with T = max(W tau_flop, Q tau_mem) and E = W eps_flop + Q eps_mem + pi_0 T.

Stencils (004 apps. A, B): host sweeps (naive, blocked, time-tiled) against
``models.stencil.dram_traffic_words`` and the stencil engine against the tiled time model.

Entry point: ``offsim study configs/studies/<study>.yaml --out DIR``; DIR must be
new, empty or a previous output of these studies (``OUTPUT_PATTERNS``). The study file is checked whole
before DIR is made (``load_study``: systems, lists, grid and tile dimensions, tile sizes against the fast
memory that holds them), and a run that fails removes DIR again if it made it.
All times in seconds, energies in joules, traffic in bytes or words as named.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from models.stencil import GpuParams, TileShape
from simulator.config.accel_stencil import StencilEngineSpec
from simulator.config.errors import ConfigError, InputError
from simulator.config.fields import param
from simulator.config.loader import PROJECT_ROOT, LoadedConfig, load_spec, project_file
from simulator.config.stencils import STENCILS
from simulator.config.yamlio import load_yaml
from simulator.config.files import write_atomic
from simulator.config.outputs import load_with_output_dir, removed_if_failed
from simulator.studies.roofline import MeasuredMachine, measure_machine
from simulator.runner import energy_split_j, load_system, simulate_trace
from simulator.studies.plots import save_figure
from simulator.studies.spec import list_problems, load_referenced_system
from workloads import micro

# ---- study files ----------------------------------------------------------------------------

@dataclass(frozen=True)
class RooflineStudySpec:
    """configs/studies/roofline.yaml: an intensity sweep on one system."""

    study: str = param(choices=("roofline",), doc="study kind")
    system: str = param(check=project_file, doc="system config, relative to the project root")
    total_bytes: int = param(unit="size", positive=True, doc="bytes Q streamed per point")
    intensities: tuple[float, ...] = param(positive=True, doc="flop/byte intensities of the sweep")
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


def roofline_problems(cfg: RooflineStudySpec, source: str) -> list[str]:
    """The intensities (at least one, none twice) and the system with the study's overrides."""
    errors = list_problems(cfg, source, ("intensities",))
    loaded, problems = load_referenced_system(source, "system", cfg.system)
    if loaded is not None and cfg.overrides:
        _, problems = load_referenced_system(source, "overrides", cfg.system, cfg.overrides)
    return errors + problems


def tiling_problems(cfg: StencilTilingStudySpec, source: str) -> list[str]:
    """What ``run_stencil_tiling_study`` needs: both systems, grids of the stencil's dimensions, tile shapes
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
    elif host is not None:  # the host's fast memory, as run_stencil_tiling_study gives dram_traffic_words
        llc_words = host.spec.caches.levels[-1].size_bytes // 8
        if shape.m_tile_words > llc_words:
            errors.append(f"{source}: host_tile: a tile of t_t {tile.t_t}, t_s {list(tile.t_s)} needs "
                          f"{shape.m_tile_words} words; expected at most the {llc_words} 8 B words of the "
                          f"host's LLC ({cfg.host_system})")
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


def run_roofline_study(cfg: RooflineStudySpec, out_dir: Path) -> dict[str, Any]:
    """The ``roofline`` study: measure, sweep, plot, and return a JSON-able summary."""
    system = load_system(PROJECT_ROOT / cfg.system, cfg.overrides)
    machine, points = intensity_sweep(system, cfg.intensities, cfg.total_bytes)
    plat = machine.platform()
    fig = plot_roofline(machine, points, out_dir / "roofline_sweep.png")
    return {"machine": asdict(machine), "b_tau_flop_per_byte": plat.b_tau, "b_eps_flop_per_byte": plat.b_eps,
            "points": [asdict(p) | {"time_error": p.time_error, "energy_error": p.energy_error} for p in points],
            "figure": fig.name}


# ---- stencil tiling ---------------------------------------------------------------------------

def run_stencil_tiling_study(cfg: StencilTilingStudySpec, out_dir: Path) -> dict[str, Any]:
    """Host traffic of naive vs time-tiled sweeps and engine time per tile shape vs the models; plot."""
    from models.stencil import TileShape, dram_traffic_words, predict_time_s
    from simulator.accel.stencil import cycles_per_point
    from workloads import stencil as ws

    host = load_system(PROJECT_ROOT / cfg.host_system)
    st, grid, steps = cfg.stencil, cfg.grid, cfg.steps
    llc_words = host.spec.caches.levels[-1].size_bytes // 8
    traffic = []
    for scheme in ("naive", "time_tiled"):
        shape = TileShape(cfg.host_tile.kind, cfg.host_tile.t_t, cfg.host_tile.t_s)
        trace = ws.naive_sweep(st, grid, steps) if scheme == "naive" else ws.time_tiled_sweep(st, grid, steps, shape)
        res = simulate_trace(host, trace)
        words = (res.value("dram", "bytes_read") + res.value("dram", "bytes_written")) / 8
        model = dram_traffic_words(STENCILS[st], grid, steps, scheme, llc_words, shape=shape,
                                   write_allocate=True).total_words
        traffic.append({"scheme": scheme, "sim_words": words, "model_words": model,
                        "sim_time_s": res.value("system", "simulated_time_s")})
    eng = load_system(PROJECT_ROOT / cfg.engine_system)
    spec = eng.spec.accelerators[cfg.engine]
    gpu = model_params(spec, spec.interface.bandwidth_bytes_per_s,
                       spec.interface.offload_overhead_cycles / eng.spec.host.frequency_hz)
    c_iter = cycles_per_point(spec, st) / spec.frequency_hz
    egrid, esteps = cfg.engine_grid, cfg.engine_steps
    engine = []
    for tile in cfg.engine_tiles:
        tt, ts = tile.t_t, tile.t_s
        shape = TileShape("hhc_2d", tt, ts)
        res = simulate_trace(eng, ws.engine_program(st, egrid, esteps, shape))
        engine.append({"t_t": tt, "t_s": ts, "sim_time_s": res.value("system", "simulated_time_s"),
                       "model_time_s": predict_time_s(shape, egrid, esteps, gpu, c_iter, spec.lanes)})
    _plot_tiling(traffic, engine, out_dir / "stencil_tiling.png")
    return {"traffic": traffic, "engine": engine, "figure": "stencil_tiling.png"}


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


# ---- entry point ----------------------------------------------------------------------------

STUDIES = {"roofline": run_roofline_study, "stencil_tiling": run_stencil_tiling_study}
# What the studies write (their figures and summaries), for the --out check.
OUTPUT_PATTERNS = ("roofline_sweep.png", "stencil_tiling.png", "*_summary.json",
                   "README.md")  # the folder's guide (results/stencil keeps one), which the study leaves alone


def run_study(path: str | Path, out_dir: str | Path) -> dict[str, Any]:
    """Run the study described by a YAML file (key ``study`` selects it) into ``out_dir`` (new, empty or
    a previous output of these studies); write ``<study>_summary.json``. A run that fails removes the
    directory again if it made it, so that no partial output is left behind."""
    with removed_if_failed(out_dir):
        cfg, out = load_with_output_dir(load_study, path, out_dir, OUTPUT_PATTERNS, "the stencil studies")
        summary = STUDIES[cfg.study](cfg, out)
    text = json.dumps(summary, indent=2, default=str) + "\n"
    write_atomic(out / f"{cfg.study}_summary.json", lambda tmp: tmp.write_text(text))
    return summary


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
    interface (the seed's L is likewise a measured per-SM figure under full load, 004 Table A.3).
    """
    words = spec.scratchpad_words
    return GpuParams(spec.units, spec.lanes, words, words, spec.max_tiles_in_flight,
                     spec.lanes * spec.max_tiles_in_flight, spec.lanes,
                     spec.units * spec.word_bytes / bandwidth_bytes_per_s, spec.sync_cycles / spec.frequency_hz,
                     call_overhead_s, "stencil engine")

