"""LogCA studies on the simulator: platform x kernel x granularity x units, calibration, figures.

For each platform row of 000 Table 4.3 there is a system ``configs/systems/
logca_<platform>.yaml``; the off-chip PCIe crypto card (``hifn_7955``), which
has no row there, gets its LogCA parameters from its own system config
(``card_logca``). A point runs the host software trace and the offload
trace of one kernel at granularity g on a fresh system and times the
``kernel`` stage (host cycles, from the end of the stage before it to the end
of the run): T0 and T1, speedup T0/T1. As 000 averages one hundred executions
over the same buffers (000:L481), each trace runs the kernel once untimed
(stage ``warmup``) and times the second execution, which finds input and
output in the caches as far as they hold them (``WARM_BUFFERS``). ``calibrate`` fits LogCA parameters
to a sweep with ``models.calibrate.fit_logca`` (latency supplied from the
system's interface, as the thesis measures L with micro-benchmarks);
``calibrate_overhead`` reads o as the thesis does, the g -> 0 limit of T1: it
fits o alone to the small granularities with L, C, beta and A held.
``check_overhead`` accounts for a fitted o that parts from the preset's: the
share due to the engine's cost being linear in blocks (the model's compute
term is C g^beta / A), and the cycles the unit's data path adds per request
(first read, last write; cold lines when the buffers are not warm).
``figures`` draws speedup curves (simulated points, LogCA curve of the
preset, g1 and g_A/2 marked), optimisation regions and interface evolution.

Threaded runs (000 Table 4.4 as n threads on n cores, a setup 000 does not describe): on a system with one crypto
unit per core (``crypto0``, ``crypto1``, ...; the study key ``threaded_system``),
n threads on n cores each hand their slice of the buffer to their own core's
unit (``workloads.aes.crypto_offload`` with ``threads``); T0 is the same
single-thread host software, T1 ends when the last thread has passed the
barrier ending the execution.

The study is a plug-in of the paper-study interface (``PLUGIN``; ``simulator.studies.plugin``): one point
per platform, buffer and unit or thread count (``CryptoPoint``), each stored under ``points/`` of the
output directory as it completes; its report (``crypto_report``) fits and draws from their records.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from models.accelerometer import cutoff_granularities, optimization_regions
from models.calibrate import LogCAFit, fit_logca, load_platform_entries
from models.logca import LogCAParams, g1, g_half, speedup, time_accelerated
from simulator.config.algorithms import SHA256_BLOCK_BYTES, SHA256_DIGEST_BYTES, aes_blocks, sha256_padded_bytes
from simulator.errors import ConfigError
from simulator.config.fields import param
from simulator.config.loader import PROJECT_ROOT, LoadedConfig, display_path, load_spec
from simulator.config.schema import SystemSpec, dram_geometry
from simulator.replay import replay
from simulator.system import build_system
from simulator.studies.logca import OUTPUT_PATTERNS as LOGCA_OUTPUT_PATTERNS
from simulator.studies.plots import save_figure
from simulator.studies.plugin import StudyPlugin, point_key
from simulator.studies.plugin_run import run_plugin
from simulator.studies.spec import list_problems
from simulator.units import format_exact
from workloads.aes import crypto_host, crypto_offload

TABLE_4_3 = PROJECT_ROOT / "configs" / "presets" / "platforms" / "logca_table_4_3.yaml"
CRYPTO_PLATFORMS = ("ultrasparc_t2", "sparc_t3", "sparc_t4_engine", "sparc_t4_instructions", "sandy_bridge_aesni")
PCIE_CARD = "hifn_7955"  # the off-chip crypto card (000:L454); not a row of 000 Table 4.3
# 000 Fig. 6.11 (000:L1461-1480): PCIe card -> T2 -> T3 -> T4 engine -> T4 instructions
EVOLUTION_PLATFORMS = (PCIE_CARD, "ultrasparc_t2", "sparc_t3", "sparc_t4_engine", "sparc_t4_instructions")
# Host software AES on the card's x86 host: C and beta of the Sandy Bridge row, the other x86 host running the same
# OpenSSL 0.98o (000 Table 3.2, 000:L492); C = 35 cycles/B from 000 Table 4.3 (000:L785), beta 1.01 from 000
# Table 4.2 (000:L750). An assumption: the thesis gives no C for the A8-3850.
PCIE_CARD_HOST_AES = (35.0, 1.01)
PS_PER_S = 1e12
# 000 reports the average of one hundred executions (000:L481): all but the first find the buffers where the
# previous execution left them, so a point times the second of two back-to-back executions (workloads.aes warmup).
WARM_BUFFERS = True


@dataclass(frozen=True)
class Platform:
    """One platform x kernel of the study: system config, the preset's LogCA parameters, host clock (Hz)."""

    name: str
    kernel: str
    system_path: Path
    logca: LogCAParams
    host_frequency_hz: float


@dataclass(frozen=True)
class SimulatedSpeedup:
    """One simulated granularity: T0, T1 in host cycles and their ratio."""

    g_bytes: int
    engines: int
    requests: int
    t0_cycles: float
    t1_cycles: float
    threads: int = 1

    @property
    def speedup(self) -> float:
        """T0 / T1, dimensionless."""
        return self.t0_cycles / self.t1_cycles


@functools.lru_cache(maxsize=None)
def _loaded(path: str) -> LoadedConfig:
    return load_spec(path, SystemSpec)


def card_logca(system_path: Path) -> LogCAParams:
    """LogCA parameters the PCIe card's system config implies for AES (host cycles; L per byte).

    L: copy in and out over the link, 2 f_host / bandwidth cycles/B; o: the interface's driver overhead;
    C, beta: ``PCIE_CARD_HOST_AES``; A: C g_ref^beta / engine time of g_ref (g_ref = 64 KiB, as the presets).
    """
    spec = _loaded(str(system_path)).spec
    f_hz = spec.host.frequency_hz
    acc = next(iter(spec.accelerators.values()))
    c, beta = PCIE_CARD_HOST_AES
    g_ref = 64 * 1024
    engine_cycles = (g_ref / 16) * acc.aes_cycles_per_block * f_hz / acc.frequency_hz
    return LogCAParams(latency=2 * f_hz / acc.interface.bandwidth_bytes_per_s,
                       overhead_cycles=acc.interface.offload_overhead_cycles, c_cycles_per_byte_beta=c,
                       acceleration=c * g_ref**beta / engine_cycles, beta=beta, latency_per_byte=True)


def load_platform(name: str, kernel: str) -> Platform:
    """The platform ``name`` (a ``logca_<name>.yaml`` system) running ``kernel`` (aes or sha)."""
    if name == PCIE_CARD:
        if kernel != "aes":
            raise ValueError(f"platform {PCIE_CARD!r} runs kernel 'aes' only (no SHA-256 engine), got {kernel!r}")
        path = PROJECT_ROOT / "configs" / "systems" / f"logca_{name}.yaml"
        return Platform(name, kernel, path, card_logca(path), _loaded(str(path)).spec.host.frequency_hz)
    entries = load_platform_entries(TABLE_4_3)
    key = f"{name}_{kernel}"
    if key not in entries:
        raise ValueError(f"platform/kernel must be a row of {TABLE_4_3.name}, got {key!r}")
    path = PROJECT_ROOT / "configs" / "systems" / f"logca_{name}.yaml"
    if not path.exists():
        raise ValueError(f"platform {name!r} has no system config {path.name}")
    entry = entries[key]
    return Platform(name, kernel, path, entry.params, _loaded(str(path)).spec.host.frequency_hz)


def _kernel_cycles(platform: Platform, trace) -> float:
    """Host cycles from the end of the stage before ``kernel`` (``warmup``, else ``init``), on whichever
    core ended it last, to the end of the run."""
    system = build_system(_loaded(str(platform.system_path)).spec)
    end_ps = replay(system, trace)
    before = "warmup" if any("warmup" in core.stages for core in system.cores) else "init"
    start_ps = max(core.stages[before].last_ps for core in system.cores if before in core.stages)
    return (end_ps - start_ps) * platform.host_frequency_hz / PS_PER_S


def simulate_point(platform: Platform, g_bytes: int, engines: int = 1, requests: int = 1,
                   warm: bool = WARM_BUFFERS) -> SimulatedSpeedup:
    """Simulate host and offloaded ``platform.kernel`` at ``g_bytes`` (engines per request, pipelined requests).

    ``warm``: time the second of two back-to-back executions over the same buffers (``WARM_BUFFERS``); else the
    first, which finds the output buffer cold."""
    p = platform.logca
    t0 = _kernel_cycles(platform, crypto_host(platform.kernel, g_bytes, p.c_cycles_per_byte_beta, p.beta,
                                              warmup=warm))
    t1 = _kernel_cycles(platform, crypto_offload(platform.kernel, g_bytes, engines=engines, requests=requests,
                                                 warmup=warm))
    return SimulatedSpeedup(g_bytes, engines, requests, t0, t1)


#: the units of a threaded system: thread t drives ``crypto<t>`` (``workloads.aes.crypto_offload``)
THREADED_UNIT_PREFIX = "crypto"


def threaded_platform(platform: Platform, system_path: Path) -> Platform:
    """``platform`` (its kernel and LogCA parameters) on the system ``system_path``, one crypto unit per core."""
    return replace(platform, system_path=Path(system_path),
                   host_frequency_hz=_loaded(str(system_path)).spec.host.frequency_hz)


def simulate_threaded_point(platform: Platform, g_bytes: int, threads: int,
                            warm: bool = WARM_BUFFERS) -> SimulatedSpeedup:
    """T0 (host software, one thread) and T1 with ``threads`` threads, thread t driving unit ``crypto<t>`` of
    ``platform``'s (threaded) system, each with its slice of the ``g_bytes`` buffer."""
    p = platform.logca
    t0 = _kernel_cycles(platform, crypto_host(platform.kernel, g_bytes, p.c_cycles_per_byte_beta, p.beta,
                                              warmup=warm))
    unit = THREADED_UNIT_PREFIX if threads > 1 else f"{THREADED_UNIT_PREFIX}0"
    t1 = _kernel_cycles(platform, crypto_offload(platform.kernel, g_bytes, unit=unit, warmup=warm,
                                                 threads=threads))
    return SimulatedSpeedup(g_bytes, 1, 1, t0, t1, threads)


#: the missing units a threaded system's message names before "..."
MISSING_UNITS_LISTED = 4


def threaded_system_problem(system_path: Path, threads: int) -> str | None:
    """Why ``system_path`` cannot run ``threads`` threads each on its own crypto unit, or None: it needs that
    many cores and units ``crypto0`` .. ``crypto<threads - 1>``."""
    spec = _loaded(str(system_path)).spec
    missing = []
    for t in range(threads):  # the first few missing units (a thread count may be far beyond the system)
        if f"{THREADED_UNIT_PREFIX}{t}" not in spec.accelerators:
            if len(missing) == MISSING_UNITS_LISTED:
                missing.append("...")
                break
            missing.append(f"{THREADED_UNIT_PREFIX}{t}")
    if spec.host.cores < threads or missing:
        return (f"{threads} threads need {threads} cores and units {THREADED_UNIT_PREFIX}0 .. "
                f"{THREADED_UNIT_PREFIX}{threads - 1}; the system has {spec.host.cores} cores"
                + (f" and lacks {', '.join(missing)}" if missing else ""))
    return None


def granularities(g_min_bytes: int = 16, g_max_bytes: int = 64 * 2**20) -> list[int]:
    """Powers of two from g_min to g_max bytes."""
    if not (1 <= g_min_bytes <= g_max_bytes):
        raise ValueError(f"need 1 <= g_min_bytes <= g_max_bytes, got {g_min_bytes!r}, {g_max_bytes!r}")
    return [2**k for k in range(int(math.log2(g_min_bytes)), int(math.log2(g_max_bytes)) + 1)]


def sweep(platform: Platform, g_list: list[int], engines: int = 1, requests: int = 1,
          warm: bool = WARM_BUFFERS) -> list[SimulatedSpeedup]:
    """``simulate_point`` over ``g_list``."""
    return [simulate_point(platform, g, engines, requests, warm) for g in g_list]


def interface_latency_cycles(platform: Platform) -> float:
    """L the interface implies, host cycles: completion latency plus two link latencies; for a copying (pcie)
    interface, per byte: the copy in and out over the link (cycles/B)."""
    acc = _loaded(str(platform.system_path)).spec.accelerators
    iface = next(iter(acc.values())).interface
    if platform.logca.latency_per_byte:
        return 2 * platform.host_frequency_hz / iface.bandwidth_bytes_per_s
    return (iface.completion_latency_s + 2 * iface.latency_s) * platform.host_frequency_hz


def calibrate(platform: Platform, points: list[SimulatedSpeedup], g_min_bytes: int = 1024) -> LogCAFit:
    """Fit LogCA to the simulated points with g >= g_min (L supplied from the interface)."""
    pts = [pt for pt in points if pt.g_bytes >= g_min_bytes]
    g = np.array([pt.g_bytes for pt in pts], dtype=float)
    t0 = np.array([pt.t0_cycles for pt in pts])
    t1 = np.array([pt.t1_cycles for pt in pts])
    return fit_logca(g, t0, t1, latency_per_byte=platform.logca.latency_per_byte,
                     latency=interface_latency_cycles(platform))


def calibrate_overhead(params: LogCAParams, points: list[SimulatedSpeedup], g_min_bytes: int = 16,
                       g_max_bytes: int = 1024) -> float:
    """o as the g -> 0 limit of T1 (000 section 4.3), host cycles.

    Holds L, C, beta and A of ``params`` (e.g. a ``calibrate`` fit) and fits o alone to the points with
    g_min <= g <= g_max: the relative-weighted least-squares mean of T1 - (L1(g) + C g^beta / A).
    """
    pts = [pt for pt in points if g_min_bytes <= pt.g_bytes <= g_max_bytes]
    if not pts:
        raise ValueError(f"no point with {g_min_bytes} <= g_bytes <= {g_max_bytes}; expected a sweep covering them")
    g = np.array([pt.g_bytes for pt in pts], dtype=float)
    t1 = np.array([pt.t1_cycles for pt in pts])
    rest = t1 - np.asarray(time_accelerated(replace(params, overhead_cycles=0.0), g))
    w2 = t1**-2.0
    return float(np.sum(w2 * rest) / np.sum(w2))


def engine_work_cycles(platform: Platform, g_bytes: int) -> float:
    """Host cycles one engine spends on ``g_bytes`` of ``platform.kernel``: pipeline latency plus blocks x cycles
    per block (AES: 16 B blocks; SHA-256: 64 B blocks of the padded message), converted to the host clock."""
    acc = next(iter(_loaded(str(platform.system_path)).spec.accelerators.values()))
    if platform.kernel == "aes":
        work = aes_blocks(g_bytes) * acc.aes_cycles_per_block
    else:
        work = sha256_padded_bytes(g_bytes) // SHA256_BLOCK_BYTES * acc.sha_cycles_per_block
    return (work + acc.pipeline_latency_cycles) * platform.host_frequency_hz / acc.frequency_hz


@dataclass(frozen=True)
class OverheadCheck:
    """Where a platform's fitted o parts from its preset's o: the round trip's per-request account, host cycles.

    ``o_fit_cycles``: o of the ``calibrate`` fit (g >= calibration_min); ``o_small_g_cycles``: ``calibrate_overhead``
    (the g -> 0 read); ``o_fit_engine_only_cycles``: the same fit when T1 is only o + L1(g) + ``engine_work_cycles``
    (no data path): what the shape of the engine's cost (linear in blocks, vs the model's C g^beta / A) alone does
    to the fitted o. At the smallest granularity ``g_small_bytes``: the simulated T1 (warm buffers and, for
    comparison, the first, cold execution), the engine's work, and ``data_path_cycles`` = T1 - o - L1 - engine work:
    what the unit's reads and writes (for a copying interface also the flushes and copies beyond L g) add per
    request; ``data_path_fit_min_cycles``: the same at the fit's smallest granularity ``g_fit_min_bytes``.
    """

    platform: str
    kernel: str
    o_preset_cycles: float
    o_fit_cycles: float
    o_small_g_cycles: float
    o_fit_engine_only_cycles: float
    g_small_bytes: int
    t1_small_cycles: float
    t1_small_cold_cycles: float
    engine_small_cycles: float
    data_path_cycles: float
    g_fit_min_bytes: int
    data_path_fit_min_cycles: float

    @property
    def cold_extra_cycles(self) -> float:
        """Cycles a request pays at g_small when its buffers are cold (first execution) rather than warm."""
        return self.t1_small_cold_cycles - self.t1_small_cycles

    def explanation(self) -> str:
        """One line: fitted / preset o and the per-request cycles that account for the difference."""
        o = self.o_preset_cycles
        shape = self.o_fit_engine_only_cycles - o
        return (f"{self.platform} {self.kernel.upper()}: o fit/preset {self.o_fit_cycles / o:.2f} (g >= 1 KiB fit), "
                f"{self.o_small_g_cycles / o:.2f} (small-g read); of o_fit - o = {self.o_fit_cycles - o:.0f} cycles, "
                f"{shape:.0f} come from the engine's cost being linear in blocks while the model's is C g^beta / A "
                f"(engine-only fit), the rest {self.o_fit_cycles - self.o_fit_engine_only_cycles:.0f} from the data "
                f"path, which adds {self.data_path_fit_min_cycles:.0f} cycles per request at {self.g_fit_min_bytes} B and "
                f"{self.data_path_cycles:.0f} at {self.g_small_bytes} B; a cold first execution pays "
                f"{self.cold_extra_cycles:.0f} more at {self.g_small_bytes} B (not timed: warm buffers, 000:L481)")


def check_overhead(platform: Platform, points: list[SimulatedSpeedup], fit: LogCAFit, g_min_bytes: int = 1024) -> OverheadCheck:
    """The per-request account of ``OverheadCheck`` for a warm sweep ``points`` and its ``calibrate`` fit."""
    pts = [pt for pt in points if pt.g_bytes >= g_min_bytes]
    if not pts:
        raise ValueError(f"no point with g_bytes >= {g_min_bytes}; expected a sweep covering the fit's range")
    p = platform.logca
    lat = interface_latency_cycles(platform)
    g = np.array([pt.g_bytes for pt in pts], dtype=float)
    l1 = lat * g if p.latency_per_byte else np.full_like(g, lat)
    t1_engine = p.overhead_cycles + l1 + np.array([engine_work_cycles(platform, pt.g_bytes) for pt in pts])
    engine_only = fit_logca(g, np.array([pt.t0_cycles for pt in pts]), t1_engine,
                            latency_per_byte=p.latency_per_byte, latency=lat)
    def data_path(pt: SimulatedSpeedup) -> float:
        l1_pt = lat * pt.g_bytes if p.latency_per_byte else lat
        return pt.t1_cycles - p.overhead_cycles - l1_pt - engine_work_cycles(platform, pt.g_bytes)

    small = min(points, key=lambda pt: pt.g_bytes)
    cold = simulate_point(platform, small.g_bytes, small.engines, small.requests, warm=False)
    return OverheadCheck(platform.name, platform.kernel, p.overhead_cycles, fit.params.overhead_cycles,
                         calibrate_overhead(fit.params, points), engine_only.params.overhead_cycles, small.g_bytes,
                         small.t1_cycles, cold.t1_cycles, engine_work_cycles(platform, small.g_bytes),
                         data_path(small), pts[0].g_bytes, data_path(pts[0]))


# --------------------------------------------------------------------------- figures


def plot_speedup(platform: Platform, points: list[SimulatedSpeedup], out_path: Path, extra: dict[int, list[SimulatedSpeedup]] | None = None,
                 reference: dict[int, float] | None = None) -> Path:
    """Speedup vs g: simulated points, LogCA with the platform preset's parameters (000 Table 4.3's where it
    has a row), g1 and g_A/2 marked; ``reference``: 000's measured n = 1 speedups {g: speedup}."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = platform.logca
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    g = np.array([pt.g_bytes for pt in points], dtype=float)
    grid = np.geomspace(g.min(), g.max(), 200)
    ax.loglog(grid, speedup(p, grid), "-", color="k", lw=1, label="LogCA (the platform's preset)")
    ax.loglog(g, [pt.speedup for pt in points], "o", label="simulated n=1")
    for n, pts in (extra or {}).items():
        ax.loglog([pt.g_bytes for pt in pts], [pt.speedup for pt in pts], "s--", ms=4, label=f"simulated n={n}")
    if reference:
        ax.loglog(list(reference), list(reference.values()), "x", color="r", label="measured n=1 (000 Table 4.4)")
    for value, name in ((g1(p), "g1"), (g_half(p), "g_A/2")):
        if grid[0] <= value <= grid[-1]:
            ax.axvline(value, ls=":", color="gray")
            ax.text(value, ax.get_ylim()[0] * 1.5, f" {name}", fontsize=8)
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.set_xlabel("granularity g (bytes)")
    ax.set_ylabel("speedup T0/T1")
    ax.set_title(f"{platform.name} {platform.kernel.upper()}")
    ax.legend(fontsize=7)
    return save_figure(fig, out_path)


def overhead_cutoff_bytes(params: LogCAParams, g_min_bytes: float = 16, g_max_bytes: float = 2**26) -> float:
    """Granularity above which o stops being a bottleneck (Accelerometer rule, 000 ch. 6), bytes; g_min if never."""
    stops = [c.g_bytes for c in cutoff_granularities(params, g_min_bytes, g_max_bytes) if c.parameter == "o" and not c.starts]
    return stops[-1] if stops else g_min_bytes


def plot_regions(fits: dict[str, LogCAParams], out_path: Path, g_list: list[int]) -> Path:
    """Optimisation regions of each platform (bars of bottleneck sets over g), from the fitted parameters."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 0.7 + 0.6 * len(fits)))
    labels = sorted({r.label for p in fits.values() for r in optimization_regions(p, g_list)})
    colours = {lab: plt.cm.tab10(i % 10) for i, lab in enumerate(labels)}
    in_legend: set[str] = set()
    for row, (name, p) in enumerate(fits.items()):
        for r in optimization_regions(p, g_list):
            width = math.log2(r.g_end_bytes * 2) - math.log2(r.g_start_bytes)
            ax.barh(row, width, left=math.log2(r.g_start_bytes), color=colours[r.label], edgecolor="k",
                    label=None if r.label in in_legend else (r.label or "-"))
            in_legend.add(r.label)
            if width >= 2:  # a narrower region's name would run into the next one's: the legend names it
                ax.text(math.log2(r.g_start_bytes) + 0.1, row, r.label or "-", va="center", fontsize=7)
    ax.set_yticks(range(len(fits)), list(fits))
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), title="limited by", title_fontsize=7)
    ax.set_xlabel("log2 granularity (bytes)")
    ax.set_title("optimisation regions (10x gain >= 20 %)", fontsize=9)
    return save_figure(fig, out_path)


def plot_evolution(curves: dict[str, list[SimulatedSpeedup]], out_path: Path, title: str) -> Path:
    """Simulated speedup vs g of several platforms on one plot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for name, pts in curves.items():
        ax.loglog([pt.g_bytes for pt in pts], [pt.speedup for pt in pts], "o-", ms=3, label=name)
    ax.axhline(1.0, color="gray", lw=0.5)
    ax.set_xlabel("granularity g (bytes)")
    ax.set_ylabel("simulated speedup")
    ax.set_title(title)
    ax.legend(fontsize=7)
    return save_figure(fig, out_path)


CRYPTO_STUDY = PROJECT_ROOT / "configs" / "studies" / "logca_crypto.yaml"


def _crypto_platform(name: str) -> str | None:
    """Config check: a platform with a ``configs/systems/logca_<name>.yaml`` system."""
    if name in (PCIE_CARD,) + CRYPTO_PLATFORMS:
        return None
    return f"{name!r}; expected one of: {', '.join((PCIE_CARD,) + CRYPTO_PLATFORMS)}"


@dataclass(frozen=True)
class CryptoStudySpec:
    """configs/studies/logca_crypto.yaml: the grid of the crypto study."""

    study: str = param(choices=("logca_crypto",), doc="study kind")
    platforms: tuple[str, ...] = param(check=_crypto_platform, doc="platforms, in interface-evolution order")
    kernel: str = param(choices=("aes", "sha"), doc="kernel of the sweeps")
    min_granularity_bytes: int = param(unit="size", positive=True, doc="smallest buffer")
    max_granularity_bytes: int = param(unit="size", positive=True, doc="largest buffer (powers of two between)")
    calibration_min_bytes: int = param(unit="size", positive=True, doc="smallest buffer the LogCA fit uses")
    multi_unit_platform: str = param(check=_crypto_platform, doc="platform also run with several units")
    multi_unit_engines: tuple[int, ...] = param(min=2, doc="unit counts of the multi-unit runs (AES only: a "
                                                "SHA-256 request cannot be split; [] for none)")
    multi_unit_max_bytes: int = param(unit="size", positive=True, doc="largest buffer of the multi-unit runs")
    threaded_system: str = param("", doc="system with one crypto unit per core (crypto0, crypto1, ...) on which "
                                 "multi_unit_platform's kernel also runs on n threads, one unit each; a path "
                                 "relative to the project root, '' for no threaded runs")
    threaded_counts: tuple[int, ...] = param((), min=1, doc="thread counts n of the threaded runs, up to "
                                             "multi_unit_max_bytes ([] for none)")

    def __post_init__(self) -> None:
        if self.min_granularity_bytes > self.max_granularity_bytes:
            raise ValueError("min_granularity_bytes: expected <= max_granularity_bytes")
        if self.min_granularity_bytes > self.multi_unit_max_bytes:
            raise ValueError("multi_unit_max_bytes: expected >= min_granularity_bytes")
        if self.multi_unit_platform not in self.platforms:
            raise ValueError(f"multi_unit_platform: {self.multi_unit_platform!r}; expected one of platforms")


def load_crypto_study(path: str | Path = CRYPTO_STUDY) -> CryptoStudySpec:
    """Read and validate the crypto study file (ConfigError naming file and key): its keys, its lists (no
    platform or unit count twice), each platform running the kernel, enough buffers for the LogCA fit, and
    buffers that fit each platform's memory (``crypto_study_problems``)."""
    source = str(path)
    study = load_spec(path, CryptoStudySpec).spec
    errors = list_problems(study, source, ("platforms", "multi_unit_engines"), may_be_empty=("multi_unit_engines",))
    errors += crypto_study_problems(study, source)
    if errors:
        raise ConfigError(errors)
    return study


def crypto_study_problems(study: CryptoStudySpec, source: str) -> list[str]:
    """What ``crypto_study`` needs beyond the keys' own bounds (``load_crypto_study``)."""
    errors = []
    if study.kernel != "aes" and study.multi_unit_engines:  # the crypto unit's rule (simulator.accel.crypto)
        errors.append(f"{source}: multi_unit_engines: {list(study.multi_unit_engines)}: kernel {study.kernel!r} "
                      "cannot use more than one engine per request (each SHA-256 block chains on the digest of the "
                      "one before); expected [] (no multi-unit runs), or kernel aes")
    g_list = granularities(study.min_granularity_bytes, study.max_granularity_bytes)
    fitted = [g for g in g_list if g >= study.calibration_min_bytes]
    if len(fitted) < 2:  # fit_logca takes at least two samples
        errors.append(f"{source}: calibration_min_bytes: {study.calibration_min_bytes} B leaves {len(fitted)} of the "
                      f"sweep's buffers ({g_list[0]} .. {g_list[-1]} B) to the LogCA fit; expected at least 2")
    platforms = []
    for i, name in enumerate(study.platforms):
        try:
            platforms.append(load_platform(name, study.kernel))
        except ValueError as exc:
            errors.append(f"{source}: platforms[{i}]: {exc}")
    errors += _memory_problems(platforms, source, "max_granularity_bytes", study.min_granularity_bytes,
                               study.max_granularity_bytes)
    multi = [p for p in platforms if p.name == study.multi_unit_platform]
    errors += _memory_problems(multi, source, "multi_unit_max_bytes", study.min_granularity_bytes,
                               study.multi_unit_max_bytes)
    errors += [f"{source}: multi_unit_engines: {problem}" for p in multi if study.multi_unit_engines
               for problem in [_engine_problem(p, max(study.multi_unit_engines))] if problem]
    return errors + _threaded_problems(study, source)


def _engine_problem(platform: Platform, engines: int) -> str | None:
    """Why the crypto unit of ``platform``'s system cannot take a request on ``engines`` engines, or None."""
    unit = _loaded(str(platform.system_path)).spec.accelerators.get("crypto")
    have = getattr(unit, "engines", 0)
    if engines <= have:
        return None
    return (f"{engines}; expected at most the {have} engines of unit 'crypto' of {platform.name}'s system "
            f"({display_path(platform.system_path)})")


def _threaded_problems(study: CryptoStudySpec, source: str) -> list[str]:
    """The threaded runs' keys: both or neither given, the system loads and has the cores and units."""
    if bool(study.threaded_system) != bool(study.threaded_counts):
        return [f"{source}: threaded_counts: {list(study.threaded_counts)} with threaded_system "
                f"{study.threaded_system!r}; expected both (threaded runs) or neither"]
    if not study.threaded_system:
        return []
    path = PROJECT_ROOT / study.threaded_system
    try:
        _loaded(str(path))
    except ConfigError as exc:
        return [f"{source}: threaded_system: {study.threaded_system}: {exc}"]
    except OSError as exc:
        return [f"{source}: threaded_system: {study.threaded_system}: {exc.strerror or exc}; expected a system file"]
    problem = threaded_system_problem(path, max(study.threaded_counts))
    return [] if problem is None else [f"{source}: threaded_system: {study.threaded_system}: {problem}"]


def dram_shortfall(name: str, system_path: str | Path, need_bytes: int) -> str | None:
    """"<name>: <need> in <capacity> (dram.geometry of <system file>)" if ``need_bytes`` (a sweep's largest
    buffer and its output) exceed the DRAM of the system at ``system_path``; None if they fit."""
    capacity = dram_geometry(_loaded(str(system_path)).spec).capacity_bytes
    if need_bytes <= capacity:
        return None
    return (f"{name}: {format_exact(need_bytes, 'B')} in {format_exact(capacity, 'B')} "
            f"(dram.geometry of {display_path(Path(system_path))})")


def _memory_problems(platforms: list[Platform], source: str, key: str, g_min_bytes: int,
                     g_max_bytes: int) -> list[str]:
    """One message if the largest buffer of the sweep ``g_min_bytes`` .. ``g_max_bytes`` (``granularities``)
    and its output (``workloads.aes``: g bytes for AES, a digest for SHA-256) do not fit the DRAM of one of
    ``platforms``: a trace beyond it cannot be replayed (the DRAM refuses addresses past its capacity)."""
    g_bytes = granularities(g_min_bytes, g_max_bytes)[-1]
    short = [gap for platform in platforms
             if (gap := dram_shortfall(platform.name, platform.system_path,
                                       g_bytes + (g_bytes if platform.kernel == "aes" else SHA256_DIGEST_BYTES)))]
    if not short:
        return []
    return [f"{source}: {key}: {format_exact(g_max_bytes, 'B')}: the sweep's largest buffer, "
            f"{format_exact(g_bytes, 'B')}, and its output do not fit ({'; '.join(short)}); expected a largest "
            "buffer whose input and output fit the DRAM of every platform"]


@dataclass(frozen=True)
class CryptoStudyResult:
    """What a crypto study produced: fits and sweeps by platform, multi-unit sweeps by n, figure paths, and by
    platform the per-request account of its fitted o (``OverheadCheck``)."""

    fits: dict[str, LogCAFit]
    curves: dict[str, list[SimulatedSpeedup]]
    multi_unit: dict[int, list[SimulatedSpeedup]]
    figures: tuple[Path, ...]
    overheads: dict[str, OverheadCheck] = field(default_factory=dict)
    threaded: dict[int, list[SimulatedSpeedup]] = field(default_factory=dict)


def platform_identity(platform: Platform) -> list[Any]:
    """What a simulated point of ``platform`` depends on, for its storage key: name, kernel, the system's
    resolved content, the LogCA parameters and the host clock."""
    return [platform.name, platform.kernel, _loaded(str(platform.system_path)).content_hash, asdict(platform.logca),
            platform.host_frequency_hz]


@dataclass(frozen=True)
class CryptoPoint:
    """One simulated granularity of the study: ``platform`` at ``g_bytes`` with ``engines`` units per request,
    or, with ``threads`` > 0, that many threads each driving its own unit (``simulate_threaded_point``)."""

    platform: Platform
    g_bytes: int
    engines: int = 1
    threads: int = 0

    def key(self) -> str:
        """Storage key: the platform (``platform_identity``) and the run's sizes."""
        return point_key("crypto", *platform_identity(self.platform), self.g_bytes, self.engines, self.threads)

    def cost(self) -> tuple[float]:
        """The host and engine both process every byte: work grows with the buffer."""
        return (float(self.g_bytes),)


def crypto_points(study: CryptoStudySpec, quick: bool = False) -> list[CryptoPoint]:
    """Every platform over the sweep's buffers; the multi-unit platform with each unit count, and the
    threaded runs, up to ``multi_unit_max_bytes``. (The study file has no reduced grid: ``quick`` changes nothing.)"""
    g_list = granularities(study.min_granularity_bytes, study.max_granularity_bytes)
    g_multi = granularities(study.min_granularity_bytes, study.multi_unit_max_bytes)
    points = []
    for name in study.platforms:
        platform = load_platform(name, study.kernel)
        points += [CryptoPoint(platform, g) for g in g_list]
        if name == study.multi_unit_platform:
            points += [CryptoPoint(platform, g, n) for n in study.multi_unit_engines for g in g_multi]
    if study.threaded_counts:
        platform = threaded_platform(load_platform(study.multi_unit_platform, study.kernel),
                                     PROJECT_ROOT / study.threaded_system)
        points += [CryptoPoint(platform, g, threads=n) for n in study.threaded_counts for g in g_multi]
    return points


def run_crypto_point(point: CryptoPoint) -> dict[str, Any]:
    """Simulate one point; its ``SimulatedSpeedup`` as a dict."""
    if point.threads:
        return asdict(simulate_threaded_point(point.platform, point.g_bytes, point.threads))
    return asdict(simulate_point(point.platform, point.g_bytes, point.engines))


def crypto_report(study: CryptoStudySpec, quick: bool, records: Mapping[CryptoPoint, dict], out_dir: Path,
                  reference: dict[int, float] | None = None) -> CryptoStudyResult:
    """Fit each platform's sweep and draw the figures (the interface-evolution plots in the order of 000
    Fig. 6.11) from the points' records. ``reference``: measured speedups {g: speedup} drawn on the
    multi-unit platform's plot."""
    def curve(platform: Platform, engines: int = 1, threads: int = 0) -> list[SimulatedSpeedup]:
        return [SimulatedSpeedup(**r) for p, r in records.items()
                if p.platform == platform and p.engines == engines and p.threads == threads]

    g_list = granularities(study.min_granularity_bytes, study.max_granularity_bytes)
    fits: dict[str, LogCAFit] = {}
    curves: dict[str, list[SimulatedSpeedup]] = {}
    multi_unit: dict[int, list[SimulatedSpeedup]] = {}
    overheads: dict[str, OverheadCheck] = {}
    figures = []
    for name in study.platforms:
        platform = load_platform(name, study.kernel)
        pts = curves[name] = curve(platform)
        fits[name] = calibrate(platform, pts, study.calibration_min_bytes)
        overheads[name] = check_overhead(platform, pts, fits[name], study.calibration_min_bytes)
        extra, ref = None, None
        if name == study.multi_unit_platform:
            multi_unit = {n: curve(platform, n) for n in study.multi_unit_engines}
            extra, ref = multi_unit, reference
        figures.append(plot_speedup(platform, pts, out_dir / f"speedup_{name}_{study.kernel}.png", extra, ref))
    threaded: dict[int, list[SimulatedSpeedup]] = {}
    if study.threaded_counts:
        platform = threaded_platform(load_platform(study.multi_unit_platform, study.kernel),
                                     PROJECT_ROOT / study.threaded_system)
        threaded = {n: curve(platform, threads=n) for n in study.threaded_counts}
        one = threaded.get(1, [])
        figures.append(plot_speedup(replace(platform, name=f"{platform.name} threads"), one or threaded[min(threaded)],
                                    out_dir / f"speedup_{platform.name}_threads_{study.kernel}.png",
                                    {n: pts for n, pts in threaded.items() if n > 1}, reference))
    figures.append(plot_evolution(curves, out_dir / "crypto_interface_evolution.png",
                                  f"{study.kernel.upper()}: crypto interface evolution"))
    figures.append(plot_regions({k: fits[k].params for k in study.platforms if k in EVOLUTION_PLATFORMS},
                                out_dir / "crypto_regions.png", g_list))
    return CryptoStudyResult(fits, curves, multi_unit, tuple(figures), overheads, threaded)


PLUGIN = StudyPlugin(title="the LogCA studies", load=load_crypto_study, points=crypto_points,
                     run_point=run_crypto_point, report=crypto_report, outputs=LOGCA_OUTPUT_PATTERNS)


def crypto_study(study: CryptoStudySpec | None = None, out_dir: Path = PROJECT_ROOT / "results" / "logca",
                 reference: dict[int, float] | None = None, **executor: Any) -> CryptoStudyResult:
    """Run the crypto study ``study`` (default: configs/studies/logca_crypto.yaml) on the sweep engine into
    ``out_dir`` (``plugin_run.run_plugin``; ``executor``: its workers / scheduler / dask_local options) and
    return its fits, sweeps and figures; ``reference`` as ``crypto_report``. RuntimeError if a point failed."""
    plugin = replace(PLUGIN, report=functools.partial(crypto_report, reference=reference))
    outcome = run_plugin(plugin, "logca_crypto", study or load_crypto_study(), out_dir, **executor)
    if outcome.failed:
        raise RuntimeError(f"{len(outcome.failed)} points of the crypto study failed: "
                           + "; ".join(f"{k}: {e}" for k, e in outcome.failed.items()))
    return outcome.result


def main(argv: list[str] | None = None, prog: str = "logca_study") -> int:
    """Command line: run the crypto study, write its figures and print the fits; ``prog`` names the program in
    messages."""
    from simulator.arguments import OptionParser
    from simulator.errors import InputError

    ap = OptionParser(prog=prog, description="LogCA crypto study: platform x granularity x units, LogCA fit and "
                                        "figures (000 ch. 4-6); `offsim reproduce logca-crypto` adds the report "
                                        "against 000's tables")
    ap.add_argument("--study", default=str(CRYPTO_STUDY), help="study file (default: configs/studies/logca_crypto.yaml)")
    ap.add_argument("--out", default=str(PROJECT_ROOT / "results" / "logca"), help="directory of the figures "
                                                                           "(default: results/logca)")
    args = ap.parse_args(argv)
    try:
        result = crypto_study(load_crypto_study(args.study), Path(args.out))
    except InputError as exc:
        return exc.report(prog)
    for key, fit in result.fits.items():
        print(key, fit.params)
    for check in result.overheads.values():
        print(check.explanation())
    return 0
