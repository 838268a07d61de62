"""LogCA GPU study on the simulator: discrete GPU -> APU -> HSA, kernels, pipelined offload.

Platforms (``GPU_PLATFORMS``): systems ``configs/systems/logca_gpu_<name>.yaml``
and beta of 000 Table 4.2. Host cost C and offload overhead o: GEMM and FFT
take the values calibrated to 000 Tables 4.5-4.6, radix sort its o calibrated
to Table 4.7 beside Table 4.3's printed C (``CALIBRATED``, made by
``simulator.studies.logca.gpu_calibration``, whose docstring says why Table 4.3's
GPU C and o cannot be used with a physical link); every platform runs the
same host software, so the APU and the HSA GPU take the discrete GPU's C; the
APU's o keeps Table 4.3's APU / discrete ratio, the HSA GPU's o is its
system's. Other kernels take C of 000 Table 4.3 and o of the system. The
device's acceleration A is its preset's: 000 Table 4.3's A for the shipped
GPUs, a fixed override of the roofline. A preset without one runs each request
at its roofline (the kernel's flops and memory bytes on the device's peak
flop/s and memory bandwidth, plus its launch: ``device_cycles``), and its LogCA
A is C g^beta over that time at ``A_REFERENCE_BYTES``, where the speedup
flattens (``device_acceleration``). ``roofline_acceleration`` gives what the
roofline would make of any device with a peak, override or not. A point
runs ``workloads.kernels`` host and offload traces on fresh systems (o set
to the platform's) and times the ``kernel`` stage in host cycles
(``logca_study`` conventions).

L: the thesis' GPU latencies are unreliable (with C / L < 1, AES on the discrete GPU would
never break even, against 000's own measurements), so L is
calibrated from the simulated link: ``link_latency_cycles_per_byte`` runs one
offload and divides the bytes the simulated link moved per input byte by its
bandwidth (host cycles per byte). Coherent shared memory (HSA) copies nothing:
L = 0, granularity-independent. ``calibrate`` fits C, beta, o and A to a sweep
with that L; ``figures`` draws speedup curves, the interface evolution, the
Accelerometer regions (fitted, and with Table 4.3's printed L for comparison)
and pipelined speedups beside 000 Tables 4.5-4.7.

``offload_breakdown`` splits T1, ``simulated_latency_gain`` applies the
Accelerometer rule to the simulation (10x link), ``latency_region_bandwidth``
gives the link bandwidth below which L would be a bottleneck.

Pipelined offload (``kernel_offload(stages=n)``): one offload, o paid once,
parts pipelined by the unit; ``pipelined_table_rows`` gives our speedups at
every granularity of Tables 4.5-4.7, ``table_4_3_pipelined_speedup`` what
LogCA predicts there with the printed Table 4.3 parameters.

The study is a plug-in of the paper-study interface (``PLUGIN``; ``simulator.studies.plugin``): one point
per platform, measure (``GPU_MEASURES``), buffer and stage count (``GpuPoint``), each stored under
``points/`` of the output directory as it completes; its report (``gpu_report``) fits, draws and writes
``gpu_figures.csv`` from their records.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from models.accelerometer import optimization_regions
from models.calibrate import LogCAFit, fit_logca, load_platform_entries
from models.logca import (LogCAParams, g1, g_half, pipelined_speedup, speedup, time_accelerated,
                          time_unaccelerated)
from simulator.errors import ConfigError, InputError
from simulator.config.fields import param
from simulator.config.loader import PROJECT_ROOT, load_spec
from simulator.studies.logca.crypto import (TABLE_4_3, Platform, SimulatedSpeedup, dram_shortfall, granularities,
                                            platform_identity, plot_regions)
from simulator.studies.logca import OUTPUT_PATTERNS as LOGCA_OUTPUT_PATTERNS
from simulator.replay import replay
from simulator.runner import load_system
from simulator.system import build_system
from simulator.studies.plots import save_figure
from simulator.studies.plugin import StudyPlugin, point_key
from simulator.studies.plugin_run import run_plugin
from simulator.studies.spec import list_problems
from workloads.kernels import (BETA, ELEM_BYTES, KERNELS, buffer_problem, device_work, host_cycles, kernel_host,
                               kernel_offload, output_bytes)
from workloads.trace import MAX_COMMAND_ITEMS

GPU_PLATFORMS = ("discrete", "apu", "hsa")
TABLE_ROW = {"discrete": "discrete_gpu", "apu": "apu", "hsa": "apu"}  # HSA: the APU's C (no Table 4.3 row)
CALIBRATED = PROJECT_ROOT / "configs" / "presets" / "platforms" / "gpu_host_cost_calibrated.yaml"
O_KEY = "accelerators.gpu.interface.offload_overhead_cycles"
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
# LogCA's A is read where the speedup flattens (000:L734): the device's A at the largest buffer of the tables
A_REFERENCE_BYTES = 2**26


@functools.lru_cache(maxsize=None)
def system_path(name: str) -> Path:
    """The system file of GPU platform ``name`` (one of GPU_PLATFORMS)."""
    if name not in GPU_PLATFORMS:
        raise ValueError(f"platform must be one of {GPU_PLATFORMS}, got {name!r}")
    return PROJECT_ROOT / "configs" / "systems" / f"logca_gpu_{name}.yaml"


def _kernel_cycles(path: Path, trace, overrides: tuple[str, ...] = ()) -> tuple[float, object]:
    cfg = load_system(str(path), overrides).spec
    system = build_system(cfg)
    end_ps = replay(system, trace)
    start_ps = system.host.stages["init"].last_ps
    return (end_ps - start_ps) * cfg.host.frequency_hz / PS_PER_S, system


@functools.lru_cache(maxsize=None)  # one simulated offload per platform and kernel
def link_latency_cycles_per_byte(name: str, kernel: str, g_ref_bytes: int = 2**20) -> float:
    """L from the simulated link: link bytes moved per input byte / link bandwidth, host cycles/B (0: no copies)."""
    path = system_path(name)
    cfg = load_system(str(path)).spec
    iface = cfg.accelerators["gpu"].interface
    if iface.coupling != "pcie":
        return 0.0
    _, system = _kernel_cycles(path, kernel_offload(kernel, g_ref_bytes, 1.0))
    moved = system.units["gpu"].interface.bytes_moved
    return moved / g_ref_bytes / iface.bandwidth_bytes_per_s * cfg.host.frequency_hz


def _device(name: str):
    """Platform ``name``'s system spec and its ``gpu`` accelerator spec."""
    cfg = load_system(str(system_path(name))).spec
    return cfg, cfg.accelerators["gpu"]


def roofline_cycles(name: str, kernel: str, g_bytes: float) -> float:
    """Host cycles of platform ``name``'s device on one request of ``kernel`` over ``g_bytes`` at its roofline
    (``workloads.kernels.device_work`` on ``KernelSpec.device_seconds``; launch excluded), whether or not its
    preset fixes the acceleration: what the datasheet figures would give."""
    cfg, acc = _device(name)
    if not acc.peak_flops_per_s > 0:
        raise ValueError(f"platform {name!r}: its device declares no peak_flops_per_s, so it has no roofline")
    return acc.device_seconds(*device_work(kernel, g_bytes)) * cfg.host.frequency_hz


def device_cycles(name: str, kernel: str, g_bytes: float, c_cycles_per_byte_beta: float) -> float:
    """Host cycles platform ``name``'s device spends on one request of ``kernel`` over ``g_bytes``: with a fixed
    acceleration LogCA's C g^beta / A (no launch, as in LogCA), else its roofline plus its launch."""
    cfg, acc = _device(name)
    if acc.acceleration:
        return host_cycles(kernel, g_bytes, c_cycles_per_byte_beta) / acc.acceleration
    return acc.launch_latency_s * cfg.host.frequency_hz + roofline_cycles(name, kernel, g_bytes)


def roofline_acceleration(name: str, kernel: str, g_bytes: float, c_cycles_per_byte_beta: float) -> float:
    """The acceleration platform ``name``'s device would have on ``kernel`` at ``g_bytes`` at its roofline: the
    host's cost C g^beta over ``roofline_cycles``."""
    return host_cycles(kernel, g_bytes, c_cycles_per_byte_beta) / roofline_cycles(name, kernel, g_bytes)


def device_acceleration(name: str, c_cycles_per_byte_beta: float, kernel: str) -> float:
    """LogCA's A of platform ``name``'s device on ``kernel``: the preset's fixed acceleration, else the roofline's
    at ``A_REFERENCE_BYTES`` (``roofline_acceleration``)."""
    _, acc = _device(name)
    return acc.acceleration or roofline_acceleration(name, kernel, A_REFERENCE_BYTES, c_cycles_per_byte_beta)


def load_gpu_platform(name: str, kernel: str) -> Platform:
    """Platform ``name`` running ``kernel``: C and o as the module docstring says, beta of 000 Table 4.2, L of the
    link, A of the device (``device_acceleration``)."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    path = system_path(name)
    calibrated = load_platform_entries(CALIBRATED)
    host = calibrated.get(f"discrete_gpu_{kernel}") or load_platform_entries(TABLE_4_3)[f"{TABLE_ROW[name]}_{kernel}"]
    cfg = load_system(str(path)).spec
    acc = cfg.accelerators["gpu"]
    overhead = calibrated.get(f"{TABLE_ROW[name]}_{kernel}") if name != "hsa" else None
    copies = acc.interface.coupling == "pcie"
    params = LogCAParams(latency=link_latency_cycles_per_byte(name, kernel), latency_per_byte=copies,
                         overhead_cycles=(overhead.params.overhead_cycles if overhead is not None
                                          else acc.interface.offload_overhead_cycles),
                         c_cycles_per_byte_beta=host.params.c_cycles_per_byte_beta,
                         acceleration=device_acceleration(name, host.params.c_cycles_per_byte_beta, kernel),
                         beta=BETA[kernel])
    return Platform(name, kernel, path, params, cfg.host.frequency_hz)


def implied_device_cycles(platform: Platform, g_bytes: int, measured_speedup: float) -> float:
    """Host cycles a measured speedup T0 / T1 at ``g_bytes`` leaves for the device on the platform's calibrated
    scale: T0 / S less o and the copies L(g) (<= 0: o and L(g) alone already exceed T0 / S)."""
    p = platform.logca
    t0 = float(time_unaccelerated(p, g_bytes))
    return t0 / measured_speedup - (float(time_accelerated(p, g_bytes)) - t0 / p.acceleration)


def _overhead(platform: Platform) -> tuple[str, ...]:
    """The system override that gives the simulated interface the platform's o."""
    return (f"{O_KEY}={platform.logca.overhead_cycles!r}",)


@functools.lru_cache(maxsize=None)
def _host_cycles(path: str, kernel: str, g_bytes: int, c_cycles_per_byte_beta: float) -> float:
    """T0 of one host run (host cycles); cached: it does not depend on the stage count."""
    return _kernel_cycles(Path(path), kernel_host(kernel, g_bytes, c_cycles_per_byte_beta))[0]


def simulate_point(platform: Platform, g_bytes: int, stages: int = 1) -> SimulatedSpeedup:
    """Host and offloaded ``platform.kernel`` at ``g_bytes``, the offload pipelined in ``stages`` parts."""
    c = platform.logca.c_cycles_per_byte_beta
    t0 = _host_cycles(str(platform.system_path), platform.kernel, g_bytes, c)
    t1, _ = _kernel_cycles(platform.system_path, kernel_offload(platform.kernel, g_bytes, c, stages=stages),
                           _overhead(platform))
    return SimulatedSpeedup(g_bytes, 1, stages, t0, t1)


@dataclass(frozen=True)
class OffloadBreakdown:
    """Where one simulated offload's time goes, host cycles: o, link copies, device compute, the rest."""

    g_bytes: int
    t1_cycles: float
    overhead_cycles: float
    copy_cycles: float
    compute_cycles: float

    @property
    def other_cycles(self) -> float:
        """T1 not in o, copies or compute: flushes, invalidations, launch, device memory, cycles."""
        return self.t1_cycles - self.overhead_cycles - self.copy_cycles - self.compute_cycles

    @property
    def copy_share(self) -> float:
        """Link copies / T1, dimensionless."""
        return self.copy_cycles / self.t1_cycles


def offload_breakdown(platform: Platform, g_bytes: int) -> OffloadBreakdown:
    """Run one unpipelined offload of ``platform.kernel`` at ``g_bytes`` and split its T1 (see OffloadBreakdown).

    Copy cycles are the bytes the link moved over its bandwidth; compute the unit's ``compute_s``.
    """
    cfg = load_system(str(platform.system_path)).spec
    f_hz = cfg.host.frequency_hz
    c = platform.logca.c_cycles_per_byte_beta
    t1, system = _kernel_cycles(platform.system_path, kernel_offload(platform.kernel, g_bytes, c), _overhead(platform))
    unit = system.units["gpu"]
    iface = cfg.accelerators["gpu"].interface
    copies = unit.interface.bytes_moved / iface.bandwidth_bytes_per_s * f_hz if iface.coupling == "pcie" else 0.0
    return OffloadBreakdown(g_bytes, t1, platform.logca.overhead_cycles, copies, unit.counts["compute_s"] * f_hz)


def simulated_latency_gain(platform: Platform, g_bytes: int, factor: float = 10.0,
                           bandwidth_bytes_per_s: float | None = None) -> float:
    """Accelerometer's L test on the simulation itself: T1 with the link's bandwidth (default: the system's,
    or ``bandwidth_bytes_per_s``) over T1 with ``factor`` x that bandwidth and 1/``factor`` of its latency,
    minus 1 (0.2 = a 20 % gain: L is a bottleneck at ``g_bytes``); 0.0 for a coupling without copies."""
    if not factor > 1:
        raise ValueError(f"factor must be > 1, got {factor!r}")
    iface = load_system(str(platform.system_path)).spec.accelerators["gpu"].interface
    if iface.coupling != "pcie":
        return 0.0
    bw = iface.bandwidth_bytes_per_s if bandwidth_bytes_per_s is None else bandwidth_bytes_per_s
    if not bw > 0:
        raise ValueError(f"bandwidth_bytes_per_s must be > 0 B/s, got {bandwidth_bytes_per_s!r}")
    c = platform.logca.c_cycles_per_byte_beta
    trace = kernel_offload(platform.kernel, g_bytes, c)
    key = "accelerators.gpu.interface"
    base = (f"{key}.bandwidth_bytes_per_s={bw!r} B/s", f"{key}.latency_s={iface.latency_s!r} s")
    better = (f"{key}.bandwidth_bytes_per_s={bw * factor!r} B/s", f"{key}.latency_s={iface.latency_s / factor!r} s")
    t1, _ = _kernel_cycles(platform.system_path, trace, base + _overhead(platform))
    t1_better, _ = _kernel_cycles(platform.system_path, trace, better + _overhead(platform))
    return t1 / t1_better - 1.0


def latency_region_bandwidth(params: LogCAParams, link_bytes_per_byte: float, frequency_hz: float,
                             g_list: list[int]) -> float:
    """Highest link bandwidth (bytes/s) at which L = link_bytes_per_byte x f / bandwidth is an Accelerometer
    bottleneck somewhere on ``g_list``, the other parameters as in ``params``; 0.0 if none above 1 B/s."""
    if not (link_bytes_per_byte > 0 and frequency_hz > 0):
        raise ValueError(f"link_bytes_per_byte and frequency_hz must be > 0, got {link_bytes_per_byte!r}, "
                         f"{frequency_hz!r}")

    def has_region(log_bw: float) -> bool:
        lat = link_bytes_per_byte * frequency_hz / 10.0 ** log_bw
        trial = dataclasses.replace(params, latency=lat, latency_per_byte=True)
        return bool(latency_bottleneck_granularities(trial, g_list))

    lo, hi = 0.0, 13.0  # 1 B/s .. 10 TB/s
    if not has_region(lo):
        return 0.0
    if has_region(hi):
        return 10.0 ** hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if has_region(mid) else (lo, mid)
    return 10.0 ** lo


def sweep(platform: Platform, g_list: list[int], stages: int = 1) -> list[SimulatedSpeedup]:
    """``simulate_point`` over ``g_list``."""
    return [simulate_point(platform, g, stages) for g in g_list]


def calibrate(platform: Platform, points: list[SimulatedSpeedup]) -> LogCAFit:
    """Fit C, beta, o and A to the simulated points with L supplied from the simulated link."""
    g = np.array([pt.g_bytes for pt in points], dtype=float)
    return fit_logca(g, [pt.t0_cycles for pt in points], [pt.t1_cycles for pt in points],
                     latency_per_byte=platform.logca.latency_per_byte, latency=platform.logca.latency)


@dataclass(frozen=True)
class RoundTripRow:
    """One quantity of the calibration round trip: what the platform's preset implies and what LogCA fitted to our
    simulated sweep gives, in ``unit``, with the reason where they part."""

    label: str
    preset: float
    fitted: float
    unit: str
    note: str = ""


ROUND_TRIP_NOTES = {
    "T0": "the simulated host also loads and stores the buffer, which C g^beta omits (they outweigh the calibrated "
          "C g^beta at small g), so the fit trades beta for C",
    "A": "at large g the device's memory accesses and the copies left in T1 lower the plateau",
}


def round_trip(name: str, kernel: str, g_list: list[int], points: list[SimulatedSpeedup] | None = None) -> list[RoundTripRow]:
    """Calibration round trip of platform ``name``: sweep ``kernel`` over ``g_list`` (or take ``points``), fit
    LogCA with L from the link (``calibrate``), and set the fitted o, A, beta, T0 at 1 MiB and the speedups at five
    granularities beside the preset's values and the simulated speedups. Each speedup row's note gives the two
    ratios that explain a gap: simulated T0 / the preset's C g^beta, and simulated T1 / the preset's LogCA T1."""
    platform = load_gpu_platform(name, kernel)
    pts = points if points is not None else sweep(platform, g_list)
    fit, q = calibrate(platform, pts), platform.logca
    f = fit.params
    spec = load_system(str(platform.system_path)).spec.accelerators["gpu"]
    launch = spec.launch_latency_s * platform.host_frequency_hz
    copies = " and the host's flushes and invalidations of the buffer" if q.latency_per_byte else ""
    ref_g = 2**20
    rows = [RoundTripRow("o", q.overhead_cycles, f.overhead_cycles, "cycles",
                         f"the fitted o also carries the device's launch latency ({launch:.0f} cycles){copies}"),
            RoundTripRow("A", q.acceleration, f.acceleration, "", ROUND_TRIP_NOTES["A"]),
            RoundTripRow("beta", q.beta, f.beta, "", ROUND_TRIP_NOTES["T0"]),
            RoundTripRow("T0 at 1 MiB (C g^beta)", q.c_cycles_per_byte_beta * ref_g ** q.beta,
                         f.c_cycles_per_byte_beta * ref_g ** f.beta, "cycles", ROUND_TRIP_NOTES["T0"])]
    by_g = {pt.g_bytes: pt for pt in pts}
    for g in sorted(by_g)[::max(1, len(by_g) // 4)]:
        pt = by_g[g]
        t0_ratio = pt.t0_cycles / float(time_unaccelerated(q, g))
        t1_ratio = pt.t1_cycles / float(time_accelerated(q, g))
        rows.append(RoundTripRow(f"speedup at {g} B", pt.speedup, float(speedup(f, g)), "",
                                 f"simulated T0 / C g^beta = {t0_ratio:.3f}; simulated T1 / LogCA T1 of the preset "
                                 f"= {t1_ratio:.3f}"))
    return rows


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


def _mark(ax, g_bytes: float, colour: str, label: str, y: float = 0.98) -> None:
    """A dotted vertical line at ``g_bytes`` labelled at height ``y`` (axes fraction)."""
    if np.isfinite(g_bytes) and g_bytes > 0:
        ax.axvline(g_bytes, color=colour, lw=0.7, ls=":")
        ax.text(g_bytes, y, f" {label}", color=colour, fontsize=7, va="top", transform=ax.get_xaxis_transform())


def plot_gpu_speedup(platform: Platform, points: list[SimulatedSpeedup], fit: LogCAFit, out_path: Path) -> Path:
    """Speedup vs g: simulated points, the platform's LogCA curve (L from the link), the fitted curve,
    and the fitted g1 and g_A/2 marked."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    g = np.array([pt.g_bytes for pt in points], dtype=float)
    grid = np.geomspace(g.min(), g.max(), 200)
    ax.loglog(grid, speedup(platform.logca, grid), "-", color="k", lw=1, label="LogCA: Table 4.3 C, o, A; L from link")
    ax.loglog(grid, speedup(fit.params, grid), "--", color="tab:orange", lw=1, label="LogCA fitted to simulation")
    ax.loglog(g, [pt.speedup for pt in points], "o", ms=4, label="simulated")
    ax.axhline(1.0, color="gray", lw=0.5)
    _mark(ax, g1(fit.params), "tab:red", "g1")
    _mark(ax, g_half(fit.params), "tab:green", "g_A/2")
    ax.set_xlabel("granularity g (bytes)")
    ax.set_ylabel("speedup T0/T1")
    ax.set_title(f"{platform.name} GPU: {platform.kernel}")
    ax.legend(fontsize=7, loc="lower right")
    return save_figure(fig, out_path)


def plot_case_study(curves: dict[str, list[SimulatedSpeedup]], fits: dict[str, LogCAFit], g_list: list[int],
                    kernel: str, out_path: Path) -> Path:
    """GPU memory-interface evolution (000 section 6.3.2): simulated speedups and fitted curves with g1
    marked (top), Accelerometer regions of the fitted parameters (bottom)."""
    import math

    plt = _plt()
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7.0, 6.4), gridspec_kw={"height_ratios": [3, 1.4]})
    grid = np.geomspace(min(g_list), max(g_list), 200)
    for i, (name, pts) in enumerate(curves.items()):
        colour = plt.cm.tab10(i)
        ax.loglog([pt.g_bytes for pt in pts], [pt.speedup for pt in pts], "o", ms=3, color=colour,
                  label=f"{name} simulated")
        ax.loglog(grid, speedup(fits[name].params, grid), "-", lw=0.8, color=colour, label=f"{name} fitted LogCA")
        _mark(ax, g1(fits[name].params), colour, f"g1 {name}", y=0.98 - 0.06 * i)
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.set_ylabel("speedup T0/T1")
    ax.set_title(f"{kernel.upper()}: discrete -> APU -> HSA (simulated, fitted LogCA)")
    ax.legend(fontsize=6, ncol=3, loc="lower right")
    labels = sorted({r.label for f in fits.values() for r in optimization_regions(f.params, g_list)})
    colours = {lab: plt.cm.Pastel1(i % 9) for i, lab in enumerate(labels)}
    for row, (name, fit) in enumerate(fits.items()):
        for r in optimization_regions(fit.params, g_list):
            bx.barh(row, math.log2(r.g_end_bytes * 2) - math.log2(r.g_start_bytes), left=math.log2(r.g_start_bytes),
                    color=colours[r.label], edgecolor="k")
            bx.text(math.log2(r.g_start_bytes) + 0.1, row, r.label or "-", va="center", fontsize=7)
    bx.set_yticks(range(len(fits)), list(fits))
    bx.set_xlabel("log2 granularity (bytes); regions: parameters whose 10x improvement gives >= 20 %")
    return save_figure(fig, out_path)


def plot_breakdown(breakdowns: dict[str, list[OffloadBreakdown]], out_path: Path, kernel: str) -> Path:
    """Shares of simulated T1 (o, link copies, device compute, other) vs g, one panel per platform."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(breakdowns), figsize=(4.0 * len(breakdowns), 3.6), squeeze=False)
    for ax, (name, rows) in zip(axes[0], breakdowns.items()):
        g = [b.g_bytes for b in rows]
        for attr, label in (("overhead_cycles", "o"), ("copy_cycles", "link copies"),
                            ("compute_cycles", "compute"), ("other_cycles", "other")):
            ax.semilogx(g, [max(getattr(b, attr), 0.0) / b.t1_cycles for b in rows], "o-", ms=3, label=label)
        ax.set_xlabel("granularity g (bytes)")
        ax.set_title(f"{name}: {kernel}", fontsize=9)
        ax.set_ylim(-0.02, 1.02)
    axes[0][0].set_ylabel("share of simulated T1")
    axes[0][0].legend(fontsize=7)
    return save_figure(fig, out_path)


def plot_pipelined(kernel: str, curves: dict[int, list[SimulatedSpeedup]], out_path: Path) -> Path:
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


def plot_stage_gain(kernel: str, by_g: dict[int, list[SimulatedSpeedup]], out_path: Path) -> Path:
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


GPU_STUDY = PROJECT_ROOT / "configs" / "studies" / "logca_gpu.yaml"


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
    pipelined_max_bytes: int = param(unit="size", positive=True, doc="largest buffer of the pipelined runs")
    pipelined_capped_kernels: tuple[str, ...] = param(choices=KERNELS, doc="pipelined kernels that stop at "
                                                      "max_granularity_bytes instead (slow host runs)")
    stages: tuple[int, ...] = param(min=1, doc="pipeline stage counts compared with 000 Tables 4.5-4.7")
    stage_gain_kernel: str = param(choices=KERNELS, doc="kernel of the speedup-vs-stages curves")
    stage_gain_granularities_bytes: tuple[int, ...] = param(unit="size", positive=True,
                                                            doc="buffers of the speedup-vs-stages curves")
    max_stages: int = param(min=1, doc="stages 1..max_stages of the speedup-vs-stages curves")

    def __post_init__(self) -> None:
        if self.min_granularity_bytes > self.max_granularity_bytes:
            raise ValueError("min_granularity_bytes: expected <= max_granularity_bytes")


GPU_STUDY_LISTS = ("platforms", "pipelined_kernels", "pipelined_capped_kernels", "stages",
                   "stage_gain_granularities_bytes")


def load_gpu_study(path: str | Path = GPU_STUDY) -> GpuStudySpec:
    """Read and validate the GPU study file (ConfigError naming file and key): its keys, its lists (none
    empty but ``pipelined_capped_kernels``, no value twice) and the pipelined runs' buffer range."""
    source = str(path)
    study = load_spec(path, GpuStudySpec).spec
    errors = list_problems(study, source, GPU_STUDY_LISTS, may_be_empty=("pipelined_capped_kernels",))
    if study.pipelined_min_bytes > study.pipelined_max_bytes:
        errors.append(f"{source}: pipelined_min_bytes: {study.pipelined_min_bytes} B; expected <= "
                      f"pipelined_max_bytes ({study.pipelined_max_bytes} B)")
    if study.pipelined_capped_kernels and study.pipelined_min_bytes > study.max_granularity_bytes:
        errors.append(f"{source}: pipelined_min_bytes: {study.pipelined_min_bytes} B; expected <= "
                      f"max_granularity_bytes ({study.max_granularity_bytes} B), where the capped kernels stop")
    if errors:
        raise ConfigError(errors)
    errors = _buffer_problems(study, source)
    if errors:
        raise ConfigError(errors)
    errors = _stage_problems(study, source) + _gpu_memory_problems(study, source)
    if errors:
        raise ConfigError(errors)
    return study


def _buffer_problems(study: GpuStudySpec, source: str) -> list[str]:
    """One message per key whose buffers include one a kernel it applies to cannot run (``buffer_problem``):
    the smallest of each power-of-two sweep (the larger ones are whole multiples of it) and every buffer of the
    speedup-vs-stages curves."""
    uses = [("min_granularity_bytes", study.kernel,
             granularities(study.min_granularity_bytes, study.max_granularity_bytes)[:1])]
    uses += [("pipelined_min_bytes", kernel, _pipelined_granularities(study, kernel)[:1])
             for kernel in study.pipelined_kernels]
    uses.append(("stage_gain_granularities_bytes", study.stage_gain_kernel, study.stage_gain_granularities_bytes))
    errors: dict[str, str] = {}
    for key, kernel, sizes in uses:
        problem = next(((g, p) for g in sizes if (p := buffer_problem(kernel, g))), None)
        if problem and key not in errors:
            errors[key] = (f"{source}: {key}: a buffer of {problem[0]:,} B for {kernel}; expected buffers {kernel} "
                           f"can run ({problem[1]})")
    return list(errors.values())


def _stage_problems(study: GpuStudySpec, source: str) -> list[str]:
    """One message per key whose stage count cannot split a buffer it applies to (``kernel_offload``: at most
    one stage per element of the smallest buffer, at most ``MAX_COMMAND_ITEMS``, one for binary_search), checked
    before the points are listed (``max_stages`` lists one point per stage count)."""
    uses = [("stages", max(study.stages), kernel, _pipelined_granularities(study, kernel)[0])
            for kernel in study.pipelined_kernels]
    uses.append(("max_stages", study.max_stages, study.stage_gain_kernel, min(study.stage_gain_granularities_bytes)))
    errors: dict[str, str] = {}
    for key, stages, kernel, g_bytes in uses:
        elements = g_bytes // ELEM_BYTES[kernel]
        most = 1 if kernel == "binary_search" else min(elements, MAX_COMMAND_ITEMS)
        why = ("one lookup cannot be split" if kernel == "binary_search" else
               f"one stage per {ELEM_BYTES[kernel]} B element at most" if most == elements else
               f"at most {MAX_COMMAND_ITEMS:,} parts in one offload")
        if stages > most and key not in errors:
            errors[key] = f"{source}: {key}: {stages}; expected at most {most:,} for {kernel} at {g_bytes:,} B ({why})"
    return list(errors.values())


def _gpu_memory_problems(study: GpuStudySpec, source: str) -> list[str]:
    """One message per key whose sweep's largest buffer and its output do not fit the host DRAM of a platform it
    runs on (a trace beyond it cannot be replayed): the interface-evolution sweep and the capped pipelined runs
    (max_granularity_bytes), the other pipelined runs (pipelined_max_bytes), the stage curves."""
    capped = [k for k in study.pipelined_kernels if k in study.pipelined_capped_kernels]
    sweeps = [("max_granularity_bytes", study.platforms, [study.kernel],
               granularities(study.min_granularity_bytes, study.max_granularity_bytes)[-1]),
              ("max_granularity_bytes", (study.pipelined_platform,), capped,
               granularities(study.pipelined_min_bytes, study.max_granularity_bytes)[-1] if capped else 0),
              ("pipelined_max_bytes", (study.pipelined_platform,), [k for k in study.pipelined_kernels
                                                                   if k not in capped],
               granularities(study.pipelined_min_bytes, study.pipelined_max_bytes)[-1]),
              ("stage_gain_granularities_bytes", (study.pipelined_platform,), [study.stage_gain_kernel],
               max(study.stage_gain_granularities_bytes))]
    short: dict[str, dict[str, str]] = {}
    for key, platforms, kernels, top_bytes in sweeps:
        if not kernels:
            continue
        need = top_bytes + max(output_bytes(kernel, top_bytes) for kernel in kernels)
        for name in platforms:
            gap = dram_shortfall(name, system_path(name), need)
            if gap:
                short.setdefault(key, {})[name] = gap
    return [f"{source}: {key}: the largest buffer and its output do not fit ({'; '.join(found.values())}); "
            "expected buffers whose input and output fit the DRAM of every platform" for key, found in short.items()]


def pipelined_table_rows(kernel: str, stages: tuple[int, ...] = (1, 2, 4, 8), max_g_bytes: int = 2**26,
                         platform: str = "discrete") -> list[tuple[int, int, float, float | None]]:
    """(g bytes, n, simulated speedup, 000's speedup or None) at every granularity of 000 Table 4.5/4.6/4.7
    for ``kernel`` up to ``max_g_bytes``: the comparison the reproduce report prints."""
    if kernel not in PIPELINE_TABLES:
        raise ValueError(f"kernel must be one of {tuple(PIPELINE_TABLES)}, got {kernel!r}")
    plat = load_gpu_platform(platform, kernel)
    rows = []
    for g, published in PIPELINE_TABLES[kernel].items():
        if g > max_g_bytes:
            continue
        for n in stages:
            ref = published[TABLE_STAGES.index(n)] if n in TABLE_STAGES else None
            rows.append((g, n, simulate_point(plat, g, n).speedup, ref))
    return rows


def table_4_3_pipelined_speedup(kernel: str, g_bytes: int, stages: int) -> float:
    """LogCA's pipelined speedup (000 eqs. 4.26/4.28, ``models.logca.pipelined_speedup``) of a g-byte buffer in
    ``stages`` equal parts with the discrete GPU's printed 000 Table 4.3 parameters (L = 3000 cycles/B):
    what the thesis' own parameters predict beside its Tables 4.5-4.7."""
    if isinstance(stages, bool) or not isinstance(stages, int) or stages < 1:
        raise ValueError(f"stages must be an integer >= 1, got {stages!r}")
    return float(pipelined_speedup(table_4_3_params("discrete", kernel), g_bytes / stages, stages))


def write_figures_csv(res: dict, path: Path) -> Path:
    """The study's numbers as one small CSV: fitted parameters, speedups, pipelined rows beside 000's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["figure", "platform", "kernel", "g_bytes", "stages", "quantity", "value", "unit", "source"])
        for name, fit in res["fits"].items():
            q = fit.params
            for key, val, unit in (("L", q.latency, "cycles/B" if q.latency_per_byte else "cycles"),
                                   ("o", q.overhead_cycles, "cycles"), ("C", q.c_cycles_per_byte_beta, "cycles/B^beta"),
                                   ("A", q.acceleration, ""), ("beta", q.beta, ""), ("g1", g1(q), "B"),
                                   ("g_A/2", g_half(q), "B"),
                                   ("latency_region_bandwidth", res["latency_region_bw"].get(name, 0.0), "B/s")):
                w.writerow(["fit", name, res["kernel"], "", 1, key, f"{val:.6g}", unit, "simulated, fitted"])
        for name, pts in res["curves"].items():
            for pt in pts:
                w.writerow(["speedup", name, res["kernel"], pt.g_bytes, 1, "speedup", f"{pt.speedup:.6g}", "",
                            "simulated"])
        for name, rows in res["breakdown"].items():
            for b, gain in zip(rows, res["latency_gain"][name]):
                w.writerow(["breakdown", name, res["kernel"], b.g_bytes, 1, "copy_share", f"{b.copy_share:.6g}",
                            "", "simulated"])
                w.writerow(["accelerometer", name, res["kernel"], b.g_bytes, 1, "speedup_gain_link_10x",
                            f"{gain:.6g}", "", "simulated"])
        for kernel, by_n in res["pipelined"].items():
            table = PIPELINE_TABLES.get(kernel, {})
            for n, pts in by_n.items():
                for pt in pts:
                    w.writerow(["pipelined", res["pipelined_platform"], kernel, pt.g_bytes, n, "speedup",
                                f"{pt.speedup:.6g}", "", "simulated"])
                    if n in TABLE_STAGES and pt.g_bytes in table:
                        w.writerow(["pipelined", res["pipelined_platform"], kernel, pt.g_bytes, n, "speedup",
                                    table[pt.g_bytes][TABLE_STAGES.index(n)], "",
                                    "000 Tables 4.5-4.7 (000:L1050-1094)"])
                        w.writerow(["pipelined", res["pipelined_platform"], kernel, pt.g_bytes, n, "speedup",
                                    f"{table_4_3_pipelined_speedup(kernel, pt.g_bytes, n):.6g}", "",
                                    "LogCA eq. 4.26/4.28 with 000 Table 4.3 parameters (000:L767-771)"])
    return path


#: what a GPU point measures: a speedup (T0, T1), an offload's time split, or the gain of a 10x better link
GPU_MEASURES = ("speedup", "breakdown", "latency_gain")


@dataclass(frozen=True)
class GpuPoint:
    """One simulated granularity: ``measure`` (``GPU_MEASURES``) of ``platform`` at ``g_bytes``, the offload
    pipelined in ``stages`` parts (speedups only)."""

    platform: Platform
    measure: str
    g_bytes: int
    stages: int = 1

    def key(self) -> str:
        """Storage key: the platform (``platform_identity``), what is measured and the run's sizes."""
        return point_key("gpu", *platform_identity(self.platform), self.measure, self.g_bytes, self.stages)

    def cost(self) -> tuple[float]:
        """Host and device work grow with the buffer."""
        return (float(self.g_bytes),)


def run_gpu_point(point: GpuPoint) -> dict[str, Any]:
    """Simulate one point: its ``SimulatedSpeedup`` or ``OffloadBreakdown`` as a dict, or ``{"gain": ...}``."""
    if point.measure == "speedup":
        return dataclasses.asdict(simulate_point(point.platform, point.g_bytes, point.stages))
    if point.measure == "breakdown":
        return dataclasses.asdict(offload_breakdown(point.platform, point.g_bytes))
    return {"gain": simulated_latency_gain(point.platform, point.g_bytes)}


def _pipelined_granularities(study: GpuStudySpec, kernel: str) -> list[int]:
    """The buffers of ``kernel``'s pipelined runs (capped kernels stop at max_granularity_bytes)."""
    top = study.max_granularity_bytes if kernel in study.pipelined_capped_kernels else study.pipelined_max_bytes
    return granularities(study.pipelined_min_bytes, top)


def gpu_points(study: GpuStudySpec, quick: bool = False) -> list[GpuPoint]:
    """Each platform's sweep, offload breakdowns and link test; the pipelined runs of each kernel at each stage
    count; the speedup-vs-stages curves. (The study file has no reduced grid: ``quick`` changes nothing.)"""
    g_list = granularities(study.min_granularity_bytes, study.max_granularity_bytes)
    points = []
    for name in study.platforms:
        platform = load_gpu_platform(name, study.kernel)
        points += [GpuPoint(platform, measure, g) for measure in GPU_MEASURES for g in g_list]
    for kernel in study.pipelined_kernels:
        platform = load_gpu_platform(study.pipelined_platform, kernel)
        points += [GpuPoint(platform, "speedup", g, n) for n in study.stages
                   for g in _pipelined_granularities(study, kernel)]
    base = load_gpu_platform(study.pipelined_platform, study.stage_gain_kernel)
    points += [GpuPoint(base, "speedup", g, n) for g in study.stage_gain_granularities_bytes
               for n in range(1, study.max_stages + 1)]
    return points


def gpu_report(study: GpuStudySpec, quick: bool, records: Mapping[GpuPoint, dict], out_dir: Path) -> dict:
    """Fit, draw the figures (``out_dir``/gpu_*.png) and write ``gpu_figures.csv`` from the points' records;
    return fits, sweeps, breakdowns and pipelined points."""
    def measured(platform: Platform, measure: str, g_list: list[int], stages: int = 1) -> list[dict]:
        return [records[GpuPoint(platform, measure, g, stages)] for g in g_list]

    def speedups(platform: Platform, g_list: list[int], stages: int = 1) -> list[SimulatedSpeedup]:
        return [SimulatedSpeedup(**r) for r in measured(platform, "speedup", g_list, stages)]

    g_list = granularities(study.min_granularity_bytes, study.max_granularity_bytes)
    grid = granularities(study.min_granularity_bytes, 2**26)
    fits: dict[str, LogCAFit] = {}
    curves: dict[str, list[SimulatedSpeedup]] = {}
    breakdown: dict[str, list[OffloadBreakdown]] = {}
    latency_bw: dict[str, float] = {}
    latency_gain: dict[str, list[float]] = {}
    for name in study.platforms:
        platform = load_gpu_platform(name, study.kernel)
        pts = curves[name] = speedups(platform, g_list)
        fits[name] = calibrate(platform, pts)
        breakdown[name] = [OffloadBreakdown(**r) for r in measured(platform, "breakdown", g_list)]
        if platform.logca.latency_per_byte and platform.logca.latency > 0:
            per_byte = platform.logca.latency / platform.host_frequency_hz * load_system(
                str(platform.system_path)).spec.accelerators["gpu"].interface.bandwidth_bytes_per_s
            latency_bw[name] = latency_region_bandwidth(fits[name].params, per_byte, platform.host_frequency_hz, grid)
        latency_gain[name] = [r["gain"] for r in measured(platform, "latency_gain", g_list)]
        plot_gpu_speedup(platform, pts, fits[name], out_dir / f"gpu_speedup_{name}_{study.kernel}.png")
    plot_case_study(curves, fits, g_list, study.kernel, out_dir / f"gpu_case_study_{study.kernel}.png")
    plot_breakdown(breakdown, out_dir / f"gpu_t1_breakdown_{study.kernel}.png", study.kernel)
    plot_regions({f"{k} (fitted)": f.params for k, f in fits.items()} |
                 {f"{k} (Table 4.3 L)": table_4_3_params(k, study.kernel) for k in study.platforms},
                 out_dir / f"gpu_regions_{study.kernel}.png", grid)
    pipelined: dict[str, dict[int, list[SimulatedSpeedup]]] = {}
    for kernel in study.pipelined_kernels:
        platform = load_gpu_platform(study.pipelined_platform, kernel)
        pipelined[kernel] = {n: speedups(platform, _pipelined_granularities(study, kernel), n) for n in study.stages}
        plot_pipelined(kernel, pipelined[kernel], out_dir / f"gpu_pipelined_{kernel}.png")
    base = load_gpu_platform(study.pipelined_platform, study.stage_gain_kernel)
    stage_gain = {g: [SimulatedSpeedup(**records[GpuPoint(base, "speedup", g, n)])
                      for n in range(1, study.max_stages + 1)] for g in study.stage_gain_granularities_bytes}
    plot_stage_gain(study.stage_gain_kernel, stage_gain,
                    out_dir / f"gpu_pipelined_{study.stage_gain_kernel}_stages.png")
    res = {"kernel": study.kernel, "pipelined_platform": study.pipelined_platform, "fits": fits, "curves": curves,
           "breakdown": breakdown, "latency_region_bw": latency_bw, "latency_gain": latency_gain, "pipelined": pipelined, "stage_gain": stage_gain}
    write_figures_csv(res, out_dir / "gpu_figures.csv")
    return res


PLUGIN = StudyPlugin(title="the LogCA studies", load=load_gpu_study, points=gpu_points, run_point=run_gpu_point,
                     report=gpu_report, outputs=LOGCA_OUTPUT_PATTERNS)


def gpu_study(study: GpuStudySpec | None = None, out_dir: Path = PROJECT_ROOT / "results" / "logca",
              **executor: Any) -> dict:
    """Run the GPU study ``study`` (default: configs/studies/logca_gpu.yaml) on the sweep engine into ``out_dir``
    (``plugin_run.run_plugin``; ``executor``: its workers / scheduler / dask_local options) and return what
    ``gpu_report`` returns. RuntimeError if a point failed."""
    outcome = run_plugin(PLUGIN, "logca_gpu", study or load_gpu_study(), out_dir, **executor)
    if outcome.failed:
        raise RuntimeError(f"{len(outcome.failed)} points of the GPU study failed: "
                           + "; ".join(f"{k}: {e}" for k, e in outcome.failed.items()))
    return outcome.result


def main(argv: list[str] | None = None, prog: str = "logca_gpu_study") -> int:
    """Command line: run the study and print its figures; ``prog`` names the program in messages."""
    from simulator.arguments import OptionParser

    ap = OptionParser(prog=prog, description="LogCA GPU study: discrete -> APU -> HSA, pipelined offload (000 ch. 4, 6)")
    ap.add_argument("--study", default=str(GPU_STUDY), help="study file (default: configs/studies/logca_gpu.yaml)")
    ap.add_argument("--out", default=str(PROJECT_ROOT / "results" / "logca"), help="directory of the figures and CSV")
    args = ap.parse_args(argv)
    try:
        res = gpu_study(load_gpu_study(args.study), Path(args.out))
    except InputError as exc:
        return exc.report(prog)
    grid = granularities(2**12, 2**26)
    for key, fit in res["fits"].items():
        q = fit.params
        print(f"{key}: L={q.latency:.4g} o={q.overhead_cycles:.4g} C={q.c_cycles_per_byte_beta:.4g} "
              f"A={q.acceleration:.4g} beta={q.beta:.3g} g1={g1(q):.4g} B g_A/2={g_half(q):.4g} B; "
              f"L bottleneck at {latency_bottleneck_granularities(q, grid)}; "
              f"L region needs link <= {res['latency_region_bw'].get(key, 0.0):.4g} B/s; "
              f"max copy share of T1 {max(b.copy_share for b in res['breakdown'][key]):.3g}; "
              f"simulated gain of a 10x link {max(res['latency_gain'][key]):.3g}")
    for key in res["fits"]:
        if key != "hsa":
            print(f"{key} (Table 4.3 L): L bottleneck at "
                  f"{latency_bottleneck_granularities(table_4_3_params(key, res['kernel']), grid)}")
    for kernel, by_n in res["pipelined"].items():
        print(f"{kernel}: g, simulated n={list(by_n)}, 000 n={list(TABLE_STAGES)}")
        for i, pt in enumerate(by_n[1]):
            row = [by_n[n][i].speedup for n in by_n]
            print(f"  {pt.g_bytes:>9} " + " ".join(f"{s:8.4g}" for s in row), PIPELINE_TABLES[kernel].get(pt.g_bytes))
    for g, pts in res["stage_gain"].items():
        print("stages", g, " ".join(f"{pt.speedup:.4g}" for pt in pts))
    return 0
