"""The U-list model (003 eqs. 2-12, and the extended model of :mod:`simulator.studies.fmm.crosscheck`) beside
one run of an ``fmm_ulist`` workload: what ``offsim run --crosscheck`` writes for the FMM.

The model's inputs are measured on the run's own system, ``--set`` overrides included, by the micro
runs the FMM study uses (``fmm_crosscheck.machine_parts``), never read from its config or fitted to
the run. The point is then priced as the study prices its points (``fmm_crosscheck.point_model``),
with the b the trace used and the LLC capacity of the system.

What the micro runs cost depends on the point (wall times of the q = 4 point on the default systems, with
the cross-check and without, on a 2-core machine): a CPU-only or DRAM / near-memory coupled point needs
the host's runs and a few on the LAP system (LAP-DRAM Orig: 2.8 s against 2.5 s); an LLC-coupled point
also needs the LLC residency curve (four GEMM heights; LAP-LLC Blocking: 9.2 s against 2.0 s). A
pipelined point also needs the contention of the host's traffic with the concurrent GEMMs (LAP-DRAM
Pipelining: 5.1 s against 2.4 s) and, on the LLC, the pipelined residency curves, whose runs give the
contention beside the LAP too (LAP-LLC Pipelining: 17.3 s against 2.1 s). The parts run in parallel over
the machine's cores.

Where the study's model differs: a study measures one residency curve, on its LLC-coupled system, and
prices every point with it; a single run on a DRAM or near-memory coupled system has no LLC-coupled
LAP to measure it on, so the model takes all of a block's B and C as resident up to the LLC's
capacity and none beyond (003's own rule). On the default study that moves the extended model of
the blocked DRAM and near-memory points by at most 0.7 % (time and energy), and no other point.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from models import ulist
from simulator.config.accel_lap import LapSpec
from simulator.config.loader import LoadedConfig
from simulator.config.schema import dram_geometry
from workloads.spec import WorkloadSpec, generator_params
from simulator.studies.executors import point_executor
from simulator.studies.fmm.crosscheck import (
    CLOCK_HZ,
    IRREGULAR_FOOTPRINT_BYTES,
    STREAM_BYTES,
    MachinePart,
    PointModel,
    assemble_machine,
    class_counts,
    host_alone,
    machine_parts,
    measure_llc_energy,
    measure_llc_exchange,
    point_model,
)
from simulator.results import Results
from simulator.studies.roofline import CrosscheckRow
from simulator.runner import energy_split_j
from simulator.units import format_exact
from workloads import fmm_ulist

GENERATOR = "fmm_ulist"
#: couplings the extended model describes (003 has no PCIe placement)
COUPLINGS = {"dram": "lap-dram", "llc": "lap-llc", "near_memory": "lap-near-memory"}
#: the largest micro run's footprint, B: the system's DRAM must hold it
MICRO_FOOTPRINT_BYTES = max(STREAM_BYTES, IRREGULAR_FOOTPRINT_BYTES)
PRINTED = "U-list model, printed (003 eqs. 2-12), inputs measured on this system"
EXTENDED = "U-list model, extended (simulator/studies/fmm/crosscheck.py), inputs measured on this system"


def placement_name(loaded: LoadedConfig, params: dict[str, Any]) -> str | None:
    """"cpu", or "lap-<coupling>" of the system's LAP for a LAP workload; None where the system has
    no LAP named "lap" or couples it some other way."""
    if params["placement"] == "cpu":
        return "cpu"
    lap = loaded.spec.accelerators.get("lap")
    if not isinstance(lap, LapSpec):
        return None
    return COUPLINGS.get(lap.interface.coupling)


def crosscheck_problem(loaded: LoadedConfig, workload: WorkloadSpec, label: str) -> str | None:
    """Why the U-list model cannot be set beside a run of ``workload`` (``label`` names it) on
    ``loaded``'s system, or None."""
    params = generator_params(workload)
    if params["placement"] not in ("cpu", "lap"):
        return (f"{label} offloads its GEMMs to placement {params['placement']!r}; expected 'cpu' or 'lap', the "
                "placements the U-list model describes (003's host and its LAP)")
    if params["placement"] == "lap" and "lap" not in loaded.spec.accelerators:
        return None  # the run itself refuses a trace whose unit the system lacks, and says so
    if placement_name(loaded, params) is None:
        lap = loaded.spec.accelerators.get("lap")
        found = (f"a unit 'lap' of kind {lap.kind!r}, not a LAP" if not isinstance(lap, LapSpec)
                 else f"its LAP coupled to {lap.interface.coupling!r}")
        return (f"{label} offloads its GEMMs to the LAP, and {loaded.source} has {found}; expected a LAP named "
                f"'lap' coupled to {', '.join(repr(c) for c in COUPLINGS)}, the placements the U-list model "
                "describes (003 has no PCIe placement)")
    capacity = dram_geometry(loaded.spec).capacity_bytes
    if capacity < MICRO_FOOTPRINT_BYTES:
        return (f"the U-list model's inputs are measured with micro runs over "
                f"{format_exact(MICRO_FOOTPRINT_BYTES, 'B')}, more than the {format_exact(capacity, 'B')} "
                f"of the system's DRAM ({loaded.source}: dram.geometry); expected a system that holds them")
    return None


def study_problem(loaded: LoadedConfig, workload: WorkloadSpec, label: str) -> str | None:
    """:func:`crosscheck_problem` for a sweep file's ``crosscheck: ulist``, which also needs an
    ``fmm_ulist`` workload (the same at every point, so said of the workload, not of ``label``)."""
    if workload.generator != GENERATOR:
        what = f"the generator {workload.generator!r}" if workload.generator else "a stored trace"
        return (f"ulist: the workload runs {what}; expected the {GENERATOR!r} generator, whose U-list the model "
                "describes")
    problem = crosscheck_problem(loaded, workload, label)
    return problem and f"ulist: {problem}"


def _host_llc(loaded: LoadedConfig) -> dict[str, float]:
    """The host's LLC costs of a system without a LAP, under the prefix "host"."""
    w_llc, evict = measure_llc_exchange(loaded)
    return {"host.w_llc_bytes_per_s": w_llc, "host.evict_cycles_per_line": evict,
            "host.eps_byte_llc_j": measure_llc_energy(loaded)}


@dataclass(frozen=True)
class Measurement:
    """One measurement to make: the system, the placement ("cpu" or "lap-<coupling>"), whether it
    includes what only pipelined LAP points read, and the layout of B and C."""

    loaded: LoadedConfig
    placement: str
    pipelined: bool
    bc_layout: str

    def parts(self) -> list[MachinePart]:
        """Its micro runs, as independent parts (``fmm_crosscheck.machine_parts``)."""
        if self.placement == "cpu":
            return ([MachinePart("cpu_llc", _host_llc, (self.loaded,))]
                    + machine_parts(host_alone(self.loaded), {}, self.bc_layout))
        return machine_parts(host_alone(self.loaded), {self.placement: self.loaded}, self.bc_layout,
                             pipelined=self.pipelined)

    def assemble(self, parts: list[MachinePart], results: list[Any]) -> Measured:
        """The inputs from the results of :meth:`parts`, in the same order."""
        if self.placement != "cpu":
            return Measured(assemble_machine(parts, results), self.placement)
        # the CPU-only equations read no LAP figure; the GEMM engine is the host itself
        machine = {**assemble_machine(parts[1:], results[1:]), **results[0]}
        machine.update({"host.f_l_flops_per_s": machine["f_c_flops_per_s"],
                        "host.w_l_bytes_per_s": machine["w_c_bytes_per_s"],
                        "host.eps_flop_lap_j": machine["eps_flop_cpu_j"]})
        return Measured(machine, "host")


def measure_all(measurements: list[Measurement], workers: int | None = None) -> list[Measured]:
    """Make ``measurements`` (module docstring), their parts all spread over ``workers`` processes
    (default: one per core, at most one per part; 1: in this process)."""
    plans = [(m, m.parts()) for m in measurements]
    every = [part for _, parts in plans for part in parts]
    n = min(len(every), workers or os.cpu_count() or 1)
    if n > 1:
        with point_executor(n) as pool:
            results = list(pool.map(MachinePart.run, every))
    else:
        results = [part.run() for part in every]
    measured, i = [], 0
    for m, parts in plans:
        measured.append(m.assemble(parts, results[i:i + len(parts)]))
        i += len(parts)
    return measured


#: the suffix of a machine key whose inputs hold what only pipelined points read (``UListPoint.machine_key``)
PIPELINED_KEY = "+pipelined"


@dataclass(frozen=True)
class Measured:
    """The model's inputs as measured (``fmm_crosscheck.measure_machine``'s dict) and the prefix of the
    GEMM engine's figures in it ("host" for a CPU-only point)."""

    machine: dict[str, Any]
    lap: str


@dataclass(frozen=True)
class UListPoint:
    """What the model needs of one run besides the measured inputs: its dimensions, placement
    ("cpu" or "lap-<coupling>"), variant, block count b as the trace cut it, LLC capacity (B) and
    the generator's parameters."""

    params: dict[str, Any]
    placement: str
    dims: ulist.UListDims
    class_counts: tuple[int, ...]
    blocks: int
    llc_bytes: float

    @property
    def variant(self) -> str:
        return self.params["variant"]

    @property
    def pipelined(self) -> bool:
        """Whether the point reads what only a pipelined LAP point does: the contention of the host's
        traffic with the concurrent GEMMs and, on the LLC, the pipelined residency curves."""
        return self.placement != "cpu" and self.variant == "pipelining"

    def machine_key(self, loaded: LoadedConfig, pipelined: bool | None = None) -> str:
        """Which measurement serves this point: the system, the placement, the layout of B and C, and
        whether it holds the pipelined parts (default: if the point needs them; a measurement with
        them serves the point either way)."""
        pipelined = self.pipelined if pipelined is None else pipelined
        return f"{loaded.content_hash}/{self.placement}/{self.params['bc_layout']}{PIPELINED_KEY if pipelined else ''}"


def ulist_point(loaded: LoadedConfig, workload: WorkloadSpec) -> UListPoint:
    """The model's view of a run of ``workload`` on ``loaded``'s system (after ``crosscheck_problem``)."""
    params = generator_params(workload)
    variant = params["variant"]
    problem = fmm_ulist.build_problem(params["q"], params["n_points"], params["density"], params["seed"],
                                      params["periodic"])
    blocks = fmm_ulist.variant_blocks(problem, variant, params["blocks"], int(params["llc_bytes"]),
                                      params["llc_share"], params["block_order"])
    return UListPoint(params, placement_name(loaded, params), problem.dims(), class_counts(problem), len(blocks),
                      float(loaded.spec.caches.levels[-1].size_bytes))


def measurement(loaded: LoadedConfig, point: UListPoint, pipelined: bool | None = None) -> Measurement:
    """What to measure for ``point``: with the pipelined parts if it needs them (or if ``pipelined``)."""
    return Measurement(loaded, point.placement, point.pipelined if pipelined is None else pipelined,
                       point.params["bc_layout"])


def measure_point(loaded: LoadedConfig, point: UListPoint, workers: int | None = None) -> Measured:
    """:func:`measure` for ``point``."""
    return measure_all([measurement(loaded, point)], workers)[0]


def priced(point: UListPoint, measured: Measured) -> PointModel:
    """Both models of ``point`` with the inputs ``measured``."""
    return point_model(measured.machine, measured.lap, point.dims, point.class_counts,
                       gemm=point.params["placement"], variant=point.variant, placement=point.placement,
                       blocks=point.blocks, llc_bytes=point.llc_bytes, block_order=point.params["block_order"])


def host_time_s(host_cycles: float, loaded: LoadedConfig) -> float:
    """The run's host time, s: the study compares host cycles, and the model counts its own at CLOCK_HZ."""
    return host_cycles / loaded.spec.host.frequency_hz


def compared(time_s: float, energy_j: float, model: PointModel) -> list[CrosscheckRow]:
    """A run's host time (s) and energy (J) beside both models: time and energy, printed then extended."""
    return [CrosscheckRow("time", time_s, model.cycles / CLOCK_HZ, "s", "ulist", PRINTED),
            CrosscheckRow("energy", energy_j, model.energy_j, "J", "ulist", PRINTED),
            CrosscheckRow("time", time_s, model.ext_cycles / CLOCK_HZ, "s", "ulist-ext", EXTENDED),
            CrosscheckRow("energy", energy_j, model.ext_energy_j, "J", "ulist-ext", EXTENDED)]


def ulist_crosscheck(results: Results, loaded: LoadedConfig, workload: WorkloadSpec,
                     workers: int | None = None) -> list[CrosscheckRow]:
    """The run's host time (s) and energy (J) beside both U-list models, after the point's dimensions
    and the measured inputs."""
    point = ulist_point(loaded, workload)
    measured = measure_point(loaded, point, workers)
    machine, lap, d = measured.machine, measured.lap, point.dims
    energy, _ = energy_split_j(results)
    inputs = [("N_q", d.n_q, "points"), ("N_oct", d.n_oct, "leaves"), ("N_U", d.n_u, "interactions"),
              ("blocks b", point.blocks, "blocks"), ("LLC", point.llc_bytes, "B"),
              ("w_C", machine["w_c_bytes_per_s"], "B/s"),
              ("w_C irregular", machine["w_c_irregular_bytes_per_s"], "B/s"),
              ("f_C", machine["f_c_flops_per_s"], "flop/s")]
    if lap != "host":
        inputs += [("f_L", machine[f"{lap}.f_l_flops_per_s"], "flop/s"),
                   ("w_L", machine[f"{lap}.w_l_bytes_per_s"], "B/s")]
    inputs += [("w_LLC", machine[f"{lap}.w_llc_bytes_per_s"], "B/s"), ("pi_0", machine["static_power_w"], "W")]
    return ([CrosscheckRow(name, float(value), None, unit) for name, value, unit in inputs]
            + compared(host_time_s(results.value("system", "host_cycles"), loaded), energy, priced(point, measured)))
