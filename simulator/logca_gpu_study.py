"""LogCA GPU study on the simulator: discrete GPU -> APU -> HSA, kernels, pipelined offload.

Platforms (``GPU_PLATFORMS``): systems ``configs/systems/logca_gpu_<name>.yaml``
with the C of 000 Table 4.3 per kernel (the HSA GPU, absent from the table,
takes the APU's C: same host software) and beta of 000 Table 4.2. A point runs
``workloads.kernels`` host and offload traces on fresh systems and times the
``kernel`` stage in host cycles (``logca_study`` conventions).

L: the thesis' GPU latencies are unreliable (SPEC section 3), so L is
calibrated from the simulated link: ``link_latency_cycles_per_byte`` runs one
offload and divides the bytes the simulated link moved per input byte by its
bandwidth (host cycles per byte). Coherent shared memory (HSA) copies nothing:
L = 0, granularity-independent. ``calibrate`` fits C, beta, o and A to a sweep
with that L; ``figures`` draws speedup curves, the interface evolution, the
Accelerometer regions (fitted, and with Table 4.3's printed L for comparison)
and pipelined speedups beside 000 Tables 4.5-4.7.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from models.accelerometer import optimization_regions
from models.calibrate import LogCAFit, fit_logca, load_platform_entries
from models.logca import LogCAParams, speedup
from simulator.config.fields import param
from simulator.config.loader import LoadedConfig, load_spec
from simulator.config.schema import SystemSpec
from simulator.logca_study import TABLE_4_3, Platform, Point, granularities, plot_regions
from simulator.replay import replay
from simulator.system import build_system
from simulator.plots import save_figure
from workloads.kernels import BETA, KERNELS, kernel_host, kernel_offload

ROOT = Path(__file__).resolve().parents[1]
GPU_PLATFORMS = ("discrete", "apu", "hsa")
TABLE_ROW = {"discrete": "discrete_gpu", "apu": "apu", "hsa": "apu"}  # HSA: the APU's C (no Table 4.3 row)
PS_PER_S = 1e12

# 000 Tables 4.5-4.7 (000:L1050-1094): measured speedup on the discrete GPU with n pipeline stages (n = 1, 2, 4)
TABLE_4_5_GEMM = {2**14: (0.01, 0.01, 0.01), 2**16: (0.08, 0.08, 0.08), 2**18: (0.89, 0.9, 0.93),
                  2**20: (8.18, 8.30, 8.60), 2**22: (15.5, 18.5, 20.2), 2**24: (17.6, 21.3, 22.6),
                  2**26: (18.5, 23.5, 23.6)}
TABLE_4_6_FFT = {2**14: (0.01, 0.01, 0.01), 2**16: (0.04, 0.04, 0.04), 2**18: (0.16, 0.16, 0.16),
                 2**20: (0.68, 0.69, 0.72), 2**22: (2.26, 2.50, 2.60), 2**24: (5.68, 7.20, 8.40),
                 2**26: (9.18, 15.6, 17.4)}
TABLE_4_7_SORT = {2**12: (0.30, 0.28, 0.25), 2**13: (0.30, 0.28, 0.27), 2**14: (0.47, 0.45, 0.35),
                  2**15: (0.57, 0.46, 0.41), 2**16: (0.49, 0.47, 0.43), 2**17: (0.70, 0.65, 0.60),
                  2**18: (0.99, 0.95, 0.85), 2**19: (1.66, 1.70, 1.90), 2**20: (2.79, 3.00, 4.20),
                  2**21: (4.21, 5.20, 7.80), 2**22: (8.97, 9.80, 10.1), 2**23: (11.0, 12.0, 13.3),
                  2**24: (11.6, 13.1, 14.2), 2**25: (12.8, 14.4, 15.4), 2**26: (13.1, 15.6, 16.8)}
PIPELINE_TABLES = {"gemm": TABLE_4_5_GEMM, "fft": TABLE_4_6_FFT, "radix_sort": TABLE_4_7_SORT}
TABLE_STAGES = (1, 2, 4)


@functools.lru_cache(maxsize=None)
def _loaded(path: str) -> LoadedConfig:
    return load_spec(path, SystemSpec)


def _system_path(name: str) -> Path:
    if name not in GPU_PLATFORMS:
        raise ValueError(f"platform must be one of {GPU_PLATFORMS}, got {name!r}")
    return ROOT / "configs" / "systems" / f"logca_gpu_{name}.yaml"


def _kernel_cycles(path: Path, trace) -> tuple[float, object]:
    cfg = _loaded(str(path)).spec
    system = build_system(cfg)
    end_ps = replay(system, trace)
    start_ps = system.host.stages["init"].last_ps
    return (end_ps - start_ps) * cfg.host.frequency_hz / PS_PER_S, system


def link_latency_cycles_per_byte(name: str, kernel: str, g_ref_bytes: int = 2**20) -> float:
    """L from the simulated link: link bytes moved per input byte / link bandwidth, host cycles/B (0: no copies)."""
    path = _system_path(name)
    cfg = _loaded(str(path)).spec
    iface = cfg.accelerators["gpu"].interface
    if iface.coupling != "pcie":
        return 0.0
    _, system = _kernel_cycles(path, kernel_offload(kernel, g_ref_bytes, 1.0))
    moved = system.units["gpu"].interface.link.bytes_moved
    return moved / g_ref_bytes / iface.bandwidth_bytes_per_s * cfg.host.frequency_hz


def load_gpu_platform(name: str, kernel: str) -> Platform:
    """Platform ``name`` running ``kernel``: C of 000 Table 4.3, beta of Table 4.2, o and A of the system, L of the link."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    path = _system_path(name)
    entry = load_platform_entries(TABLE_4_3)[f"{TABLE_ROW[name]}_{kernel}"]
    cfg = _loaded(str(path)).spec
    acc = cfg.accelerators["gpu"]
    copies = acc.interface.coupling == "pcie"
    params = LogCAParams(latency=link_latency_cycles_per_byte(name, kernel), latency_per_byte=copies,
                         overhead_cycles=acc.interface.offload_overhead_cycles,
                         c_cycles_per_byte_beta=entry.params.c_cycles_per_byte_beta,
                         acceleration=acc.acceleration, beta=BETA[kernel])
    return Platform(name, kernel, path, params, cfg.host.frequency_hz)


def simulate_point(platform: Platform, g_bytes: int, stages: int = 1) -> Point:
    """Host and offloaded ``platform.kernel`` at ``g_bytes`` with ``stages`` pipelined sub-requests."""
    c = platform.logca.c_cycles_per_byte_beta
    t0, _ = _kernel_cycles(platform.system_path, kernel_host(platform.kernel, g_bytes, c))
    t1, _ = _kernel_cycles(platform.system_path, kernel_offload(platform.kernel, g_bytes, c, stages=stages))
    return Point(g_bytes, 1, stages, t0, t1)


def sweep(platform: Platform, g_list: list[int], stages: int = 1) -> list[Point]:
    """``simulate_point`` over ``g_list``."""
    return [simulate_point(platform, g, stages) for g in g_list]


def calibrate(platform: Platform, points: list[Point]) -> LogCAFit:
    """Fit C, beta, o and A to the simulated points with L supplied from the simulated link."""
    g = np.array([pt.g_bytes for pt in points], dtype=float)
    return fit_logca(g, [pt.t0_cycles for pt in points], [pt.t1_cycles for pt in points],
                     latency_per_byte=platform.logca.latency_per_byte, latency=platform.logca.latency)


def latency_bottleneck_granularities(params: LogCAParams, g_list: list[int]) -> list[int]:
    """Granularities (bytes) of ``g_list`` in whose Accelerometer region L is a bottleneck."""
    out = []
    for r in optimization_regions(params, g_list):
        if "L" in r.parameters:
            out += [g for g in g_list if r.g_start_bytes <= g <= r.g_end_bytes]
    return out


def table_4_3_params(name: str, kernel: str) -> LogCAParams:
    """000 Table 4.3's printed parameters (L included); HSA: ours with L = 0 (no copies)."""
    if name == "hsa":
        return load_gpu_platform(name, kernel).logca
    return load_platform_entries(TABLE_4_3)[f"{TABLE_ROW[name]}_{kernel}"].params


# --------------------------------------------------------------------------- figures


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_gpu_speedup(platform: Platform, points: list[Point], fit: LogCAFit, out_path: Path) -> Path:
    """Speedup vs g: simulated points, the platform's LogCA curve (L from the link) and the fitted curve."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    g = np.array([pt.g_bytes for pt in points], dtype=float)
    grid = np.geomspace(g.min(), g.max(), 200)
    ax.loglog(grid, speedup(platform.logca, grid), "-", color="k", lw=1, label="LogCA: Table 4.3 C, o, A; L from link")
    ax.loglog(grid, speedup(fit.params, grid), "--", color="tab:orange", lw=1, label="LogCA fitted to simulation")
    ax.loglog(g, [pt.speedup for pt in points], "o", ms=4, label="simulated")
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.set_xlabel("granularity g (bytes)")
    ax.set_ylabel("speedup T0/T1")
    ax.set_title(f"{platform.name} GPU: {platform.kernel}")
    ax.legend(fontsize=7)
    return save_figure(fig, out_path)



def plot_pipelined(kernel: str, curves: dict[int, list[Point]], out_path: Path) -> Path:
    """Simulated pipelined speedup vs g for each stage count, with 000 Tables 4.5-4.7 as crosses."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    table = PIPELINE_TABLES.get(kernel, {})
    for i, (n, pts) in enumerate(curves.items()):
        colour = plt.cm.viridis(i / max(1, len(curves) - 1))
        ax.loglog([pt.g_bytes for pt in pts], [pt.speedup for pt in pts], "o-", ms=3, color=colour, label=f"sim n={n}")
        if n in TABLE_STAGES and table:
            k = TABLE_STAGES.index(n)
            ax.loglog(list(table), [row[k] for row in table.values()], "x--", lw=0.6, color=colour,
                      label=f"000 n={n}")
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.set_xlabel("granularity g (bytes)")
    ax.set_ylabel("speedup T0/T1")
    ax.set_title(f"pipelined {kernel} on the discrete GPU (x: 000 Tables 4.5-4.7)")
    ax.legend(fontsize=6, ncol=2)
    return save_figure(fig, out_path)


def plot_stage_gain(kernel: str, by_g: dict[int, list[Point]], out_path: Path) -> Path:
    """Speedup(n) / speedup(1) vs stage count n, one line per granularity."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for g, pts in by_g.items():
        base = pts[0].speedup
        ax.plot([pt.requests for pt in pts], [pt.speedup / base for pt in pts], "o-", ms=3, label=f"g = {g} B")
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.set_xlabel("pipeline stages n")
    ax.set_ylabel("speedup(n) / speedup(1)")
    ax.set_title(f"pipelined {kernel}, discrete GPU")
    ax.legend(fontsize=7)
    return save_figure(fig, out_path)


GPU_STUDY = ROOT / "configs" / "studies" / "logca_gpu.yaml"


@dataclass(frozen=True)
class GpuStudySpec:
    """configs/studies/logca_gpu.yaml: the grid of the GPU study."""

    study: str = param(choices=("logca_gpu",), doc="study kind")
    platforms: tuple[str, ...] = param(choices=GPU_PLATFORMS, doc="platforms, in memory-interface evolution order")
    kernel: str = param(choices=KERNELS, doc="kernel of the interface-evolution sweeps")
    min_granularity_bytes: int = param(unit="size", positive=True, doc="smallest buffer")
    max_granularity_bytes: int = param(unit="size", positive=True, doc="largest buffer (powers of two between)")
    pipelined_platform: str = param(choices=GPU_PLATFORMS, doc="platform of the pipelined-offload runs")
    pipelined_kernels: tuple[str, ...] = param(choices=KERNELS, doc="kernels of the pipelined-offload runs")
    pipelined_min_bytes: int = param(unit="size", positive=True, doc="smallest buffer of the pipelined runs")
    stages: tuple[int, ...] = param(min=1, doc="pipeline stage counts compared with 000 Tables 4.5-4.7")
    stage_gain_granularities_bytes: tuple[int, ...] = param(unit="size", positive=True,
                                                            doc="buffers of the speedup-vs-stages curves")
    max_stages: int = param(min=1, doc="stages 1..max_stages of the speedup-vs-stages curves")

    def __post_init__(self) -> None:
        if self.min_granularity_bytes > self.max_granularity_bytes:
            raise ValueError("min_granularity_bytes: expected <= max_granularity_bytes")


def load_gpu_study(path: str | Path = GPU_STUDY) -> GpuStudySpec:
    """Read and validate the GPU study file (ConfigError naming file and key)."""
    return load_spec(path, GpuStudySpec).spec


def gpu_study(study: GpuStudySpec | None = None, out_dir: Path = ROOT / "results" / "logca") -> dict:
    """Run the GPU grid of ``study`` (default: configs/studies/logca_gpu.yaml), fit, draw the figures;
    return fits, sweeps and pipelined points."""
    from simulator.logca_study import plot_evolution

    study = study or load_gpu_study()
    g_list = granularities(study.min_granularity_bytes, study.max_granularity_bytes)
    fits: dict[str, LogCAFit] = {}
    curves: dict[str, list[Point]] = {}
    for name in study.platforms:
        platform = load_gpu_platform(name, study.kernel)
        pts = sweep(platform, g_list)
        curves[name] = pts
        fits[name] = calibrate(platform, pts)
        plot_gpu_speedup(platform, pts, fits[name], out_dir / f"speedup_gpu_{name}_{study.kernel}.png")
    plot_evolution(curves, out_dir / "gpu_interface_evolution.png",
                   f"{study.kernel.upper()}: GPU memory interface evolution")
    plot_regions({f"{k} (fitted)": f.params for k, f in fits.items()} |
                 {f"{k} (Table 4.3 L)": table_4_3_params(k, study.kernel) for k in study.platforms},
                 out_dir / f"gpu_regions_{study.kernel}.png", g_list)
    pipelined: dict[str, dict[int, list[Point]]] = {}
    table_g = [g for g in g_list if g >= study.pipelined_min_bytes]
    for kernel in study.pipelined_kernels:
        platform = load_gpu_platform(study.pipelined_platform, kernel)
        pipelined[kernel] = {n: sweep(platform, table_g, n) for n in study.stages}
        plot_pipelined(kernel, pipelined[kernel], out_dir / f"pipelined_gpu_{kernel}.png")
    base = load_gpu_platform(study.pipelined_platform, study.kernel)
    stage_gain = {g: [simulate_point(base, g, n) for n in range(1, study.max_stages + 1)]
                  for g in study.stage_gain_granularities_bytes if g <= study.max_granularity_bytes}
    plot_stage_gain(study.kernel, stage_gain, out_dir / f"pipelined_gpu_{study.kernel}_stages.png")
    return {"fits": fits, "curves": curves, "pipelined": pipelined, "stage_gain": stage_gain}


if __name__ == "__main__":  # pragma: no cover
    res = gpu_study()
    for key, fit in res["fits"].items():
        print(key, fit.params, "L bottleneck at",
              latency_bottleneck_granularities(fit.params, granularities(2**12, 2**26)))
    for kernel, by_n in res["pipelined"].items():
        for i, pt in enumerate(by_n[1]):
            row = [by_n[n][i].speedup for n in by_n]
            print(kernel, pt.g_bytes, " ".join(f"{s:.3g}" for s in row), PIPELINE_TABLES[kernel].get(pt.g_bytes))
    for g, pts in res["stage_gain"].items():
        print("stages", g, " ".join(f"{pt.speedup:.4g}" for pt in pts))
