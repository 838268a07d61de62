"""The energy roofline (001 ch. 3-4) measured on a simulated system, and its cross-check of one run.

The machine's costs are *measured on the simulated system* with two micro runs, never read from its
config (``measure_machine``), each on every core of the host (one thread per core, ``host.cores``):

* ``tau_flop`` (s/flop) and ``eps_flop`` (J/flop) from a compute-only run: its time and its dynamic
  energy over W;
* ``tau_mem`` (s/B) and ``eps_mem`` (J/B) from a zero-intensity read stream: its time and its
  non-constant energy over Q;
* ``pi_0`` (W) from the constant-power categories of the compute-only run (host static power, DRAM
  background and refresh) over its time.

``triad_scaling`` measures the STREAM triad on 1 .. N threads of the host, one per core: the DRAM bandwidth
the cores draw together, which saturates at what the channels sustain (``plot_triad_scaling``).

A run is then predicted from its work W (host flops) and its DRAM traffic Q (bytes read and written):
T = max(W tau_flop, Q tau_mem) and E = W eps_flop + Q eps_mem + pi_0 T (``roofline_crosscheck``).
The model assumes that compute and memory overlap perfectly and that every byte it counts crosses the
DRAM interface; cache-resident traffic, dependent accesses and an accelerator are outside it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from models.roofline import RooflinePlatform
from simulator.config.loader import LoadedConfig
from simulator.config.schema import dram_geometry, dram_timing, memories_without_currents
from simulator.memory.dram_params import peak_bandwidth_bytes_per_s
from simulator.results import Results
from simulator.runner import energy_split_j, load_system, simulate_trace
from simulator.units import format_exact
from simulator.studies.plots import save_figure
from workloads import micro

#: the read stream that measures tau_mem and eps_mem, B; the system's DRAM must hold it
STREAM_BYTES = 32 * 2**20
#: the columns of ``crosscheck.csv``
CROSSCHECK_COLUMNS = ("quantity", "simulated", "model", "unit", "error", "model_name")
MODEL_NAME = "energy roofline (001 ch. 3-4), costs measured on this system"


@dataclass(frozen=True)
class MeasuredMachine:
    """Roofline costs measured on the simulated system (s/flop, s/B, J/flop, J/B, W)."""

    tau_flop_s: float
    tau_mem_s_per_byte: float
    eps_flop_j: float
    eps_mem_j_per_byte: float
    pi0_w: float

    def platform(self, name: str = "simulated") -> RooflinePlatform:
        """The same costs as a :class:`models.roofline.RooflinePlatform`."""
        return RooflinePlatform(self.tau_flop_s, self.tau_mem_s_per_byte, self.eps_flop_j,
                                self.eps_mem_j_per_byte, self.pi0_w, name=name)


def calibration_problem(loaded: LoadedConfig, stream_bytes: int = STREAM_BYTES) -> str | None:
    """Why ``measure_machine`` cannot measure ``loaded``'s system (its DRAM is smaller than the read
    stream, or a memory's energy is not known: ``energy_problem``), or None."""
    capacity = dram_geometry(loaded.spec).capacity_bytes
    if capacity < stream_bytes:
        return (f"the roofline's costs are measured with a {format_exact(stream_bytes, 'B')} read stream, more "
                f"than the {format_exact(capacity, 'B')} of the system's DRAM ({loaded.source}: dram.geometry); "
                "expected a system that holds it")
    return energy_problem(loaded)


def energy_problem(loaded: LoadedConfig) -> str | None:
    """Why the roofline's energy costs cannot be measured on ``loaded``'s system (a memory that declares no
    currents, whose energy is not known), or None."""
    unknown = memories_without_currents(loaded.spec)
    if not unknown:
        return None
    key, standard = unknown[0]
    return (f"the roofline's energy costs are measured on the system, and its memory {key} ({standard}) declares "
            f"no currents, so its energy is not known ({loaded.source}: {key}.currents); expected memories with "
            "declared currents")


def crosscheck_problem(loaded: LoadedConfig, command_rows: int, workload: str) -> str | None:
    """Why the roofline cannot be set beside a run of ``workload`` (a label) on ``loaded``'s system, or None:
    the trace has ``command_rows`` accelerator commands (the roofline describes the host and its memory
    alone), or the system cannot be measured (``calibration_problem``)."""
    if command_rows:
        return (f"{workload} has {command_rows} accelerator command rows (offload, wait); expected a host-only "
                "workload, as the energy roofline describes the host and its memory alone (an fmm_ulist "
                "workload gets the U-list model; an offload's LogCA curve, without simulating: offsim models logca)")
    return calibration_problem(loaded)


def measure_machine(system: str | Path | LoadedConfig, flops: int = 10**8,
                    stream_bytes: int = STREAM_BYTES, elem_bytes: int = 8) -> MeasuredMachine:
    """Measure tau_flop, tau_mem, eps_flop, eps_mem and pi_0 with two micro runs (module docstring)."""
    if flops < 1 or stream_bytes < 1:
        raise ValueError(f"flops and stream_bytes must be >= 1, got {flops!r}, {stream_bytes!r}")
    loaded = load_system(system)
    cores = loaded.spec.host.cores
    comp = simulate_trace(loaded, micro.compute_only(flops, rows=4, threads=cores))
    t_c = comp.value("system", "simulated_time_s")
    e_c, const_c = energy_split_j(comp)
    pi0_w = const_c / t_c
    mem = simulate_trace(loaded, micro.intensity(0.0, stream_bytes, elem_bytes, threads=cores))
    t_m = mem.value("system", "simulated_time_s")
    e_m, _ = energy_split_j(mem)
    return MeasuredMachine(t_c / flops, t_m / stream_bytes, (e_c - pi0_w * t_c) / flops,
                           (e_m - pi0_w * t_m) / stream_bytes, pi0_w)


#: arrays of the triad a[i] = b[i] + s c[i]: STREAM counts 3 x array bytes moved per pass
TRIAD_ARRAYS = 3
TRIAD_ARRAY_BYTES = 16 * 2**20


@dataclass(frozen=True)
class TriadPoint:
    """The STREAM triad on ``threads`` threads: simulated time (s) and the bytes the DRAM moved (B), of
    which STREAM counts ``stream_bytes`` (three arrays; the write-allocate reads of a are the rest)."""

    threads: int
    time_s: float
    dram_bytes: float
    stream_bytes: int

    @property
    def dram_bytes_per_s(self) -> float:
        """Bytes the DRAM moved per second (reads and writes), B/s."""
        return self.dram_bytes / self.time_s

    @property
    def stream_bytes_per_s(self) -> float:
        """STREAM's figure: 3 arrays x array bytes per second, B/s."""
        return self.stream_bytes / self.time_s


def peak_dram_bytes_per_s(loaded: LoadedConfig) -> float:
    """Peak data-bus bandwidth of the system's DRAM, all channels: one line per burst each, B/s."""
    return peak_bandwidth_bytes_per_s(dram_timing(loaded.spec.dram), dram_geometry(loaded.spec))


def triad_scaling(system: str | Path | LoadedConfig, threads: list[int] | None = None,
                  array_bytes: int = TRIAD_ARRAY_BYTES) -> list[TriadPoint]:
    """The triad over three arrays of ``array_bytes`` on each thread count of ``threads`` (default 1 .. the
    host's cores), thread t on core t, each its slice of the arrays (``workloads.micro.stream``)."""
    loaded = load_system(system)
    counts = list(range(1, loaded.spec.host.cores + 1)) if threads is None else list(threads)
    if not counts or any(not 1 <= n <= loaded.spec.host.cores for n in counts):
        raise ValueError(f"threads must be between 1 and the host's {loaded.spec.host.cores} cores, got {counts!r}")
    points = []
    for n in counts:
        res = simulate_trace(loaded, micro.stream("triad", array_bytes, threads=n))
        q = res.value("dram", "bytes_read") + res.value("dram", "bytes_written")
        points.append(TriadPoint(n, res.value("system", "simulated_time_s"), q, TRIAD_ARRAYS * array_bytes))
    return points


def plot_triad_scaling(points: list[TriadPoint], peak_bytes_per_s: float, path: Path,
                       sustained_bytes_per_s: float | None = None, title: str = "") -> Path:
    """DRAM and STREAM bandwidth (GB/s) of the triad against threads, with the DRAM's peak and, if given, a
    published sustained bandwidth (a real machine's measured one)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    n = [p.threads for p in points]
    ax.plot(n, [p.dram_bytes_per_s / 1e9 for p in points], "o-", label="simulated, DRAM reads + writes")
    ax.plot(n, [p.stream_bytes_per_s / 1e9 for p in points], "s--", label="simulated, STREAM count (3 arrays)")
    ax.axhline(peak_bytes_per_s / 1e9, color="k", lw=1, label=f"DRAM peak {peak_bytes_per_s / 1e9:.1f} GB/s")
    if sustained_bytes_per_s is not None:
        ax.axhline(sustained_bytes_per_s / 1e9, color="tab:red", ls=":",
                   label=f"published sustained {sustained_bytes_per_s / 1e9:.1f} GB/s")
    ax.set_xlabel("threads (one per core)")
    ax.set_ylabel("bandwidth (GB/s)")
    ax.set_ylim(bottom=0)
    ax.set_xticks(n)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title or "STREAM triad against threads")
    return save_figure(fig, path)


@dataclass(frozen=True)
class CrosscheckRow:
    """One quantity of a run, simulated and predicted, in ``unit``; ``model`` None where the model only
    takes the value as input. ``tag``: the model's short name, as ``offsim run`` prints it;
    ``model_name``: its full name, as ``crosscheck.csv`` holds it."""

    quantity: str
    simulated: float
    model: float | None
    unit: str
    tag: str = "roofline"
    model_name: str = MODEL_NAME

    @property
    def error(self) -> float | None:
        """simulated / model - 1, or None without a prediction."""
        return None if self.model is None or self.model == 0 else self.simulated / self.model - 1.0


def roofline_prediction(machine: MeasuredMachine, w_flops: float, q_bytes: float) -> tuple[float, float]:
    """(T s, E J) of the energy roofline for work ``w_flops`` and DRAM traffic ``q_bytes`` (module docstring)."""
    plat = machine.platform()
    t_model = float(plat.time_s(w_flops, q_bytes))
    return t_model, float(plat.energy_j(w_flops, q_bytes, t_model))


def compared(machine: MeasuredMachine, w_flops: float, q_bytes: float, time_s: float,
             energy_j: float) -> tuple[CrosscheckRow, CrosscheckRow]:
    """A run's simulated time (s) and energy (J) beside the roofline's from its W and Q: the rows
    ``time`` and ``energy``, whose ``error`` is simulated / model - 1."""
    t_model, e_model = roofline_prediction(machine, w_flops, q_bytes)
    return CrosscheckRow("time", time_s, t_model, "s"), CrosscheckRow("energy", energy_j, e_model, "J")


def roofline_crosscheck(results: Results, machine: MeasuredMachine) -> list[CrosscheckRow]:
    """The run's time (s) and energy (J) beside the roofline's prediction from its W (flop) and DRAM
    traffic Q (B), after the inputs themselves and the machine's measured costs."""
    w = results.value("host", "flops")
    q = results.value("dram", "bytes_read") + results.value("dram", "bytes_written")
    e, _ = energy_split_j(results)
    inputs = [("work W", w, "flop"), ("DRAM traffic Q", q, "B"),
              ("intensity W/Q", w / q if q else float("inf"), "flop/B"),
              ("tau_flop", machine.tau_flop_s, "s/flop"), ("tau_mem", machine.tau_mem_s_per_byte, "s/B"),
              ("eps_flop", machine.eps_flop_j, "J/flop"), ("eps_mem", machine.eps_mem_j_per_byte, "J/B"),
              ("pi_0", machine.pi0_w, "W")]
    return ([CrosscheckRow(name, float(value), None, unit) for name, value, unit in inputs]
            + list(compared(machine, w, q, results.value("system", "simulated_time_s"), e)))


def crosscheck_csv(rows: list[CrosscheckRow]) -> str:
    """``rows`` as CSV text with the ``CROSSCHECK_COLUMNS`` header (full precision; empty cells where the
    model predicts nothing)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CROSSCHECK_COLUMNS)
    for r in rows:
        writer.writerow([r.quantity, repr(r.simulated), "" if r.model is None else repr(r.model), r.unit,
                         "" if r.error is None else repr(r.error), r.model_name if r.model is not None else ""])
    return out.getvalue()
