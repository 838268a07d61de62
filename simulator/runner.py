"""One run end to end: config + workload -> Results -> run directory.

``run(system, workload, overrides=(), **params)`` is the Python entry point (also exported
as ``simulator.run``); the CLI's ``offsim run`` calls the same functions. A
run directory is written atomically: files go to a hidden temporary folder
beside the target, which is renamed into place only when complete, so a
failed run leaves nothing behind. A run killed outright (SIGKILL, power loss)
can leave that folder; the next run written beside it removes it, unless a
live run holds its lock.
"""

from __future__ import annotations

import fcntl
import glob
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import yaml

from simulator.errors import ConfigError
from simulator.config.loader import LoadedConfig, content_hash, load_spec
from simulator.config.schema import SystemSpec
from workloads.spec import WorkloadSpec, build_workload, generate_trace, load_workload, run_hash
from simulator.energy import action_unit, energy_account
from simulator.memory.dram import AddressOutOfRange
from simulator.memory.cache import COUNTER_NAMES
from simulator.config.files import umask
from simulator.config.outputs import check_output_dir, check_path_name, check_writable_parent
from simulator.replay import check_trace, replay
from simulator.results import Results
from simulator.engine.limits import (SimulatedTimeLimit, add_work, host_time_message, host_time_problem,
                                     host_work_cycles, start_watchdog, trace_lines, trace_lines_message,
                                     trace_lines_problem, watchdog_message)
from simulator.system import System, build_system
from simulator.units import PS_PER_S, format_bytes, format_size
from workloads.trace import TraceError, address_end_bytes, row_end_bytes
from workloads.trace_stream import TraceStream


#: Energy categories that are paid per unit of time whatever the machine does (component, category).
#: With DRAM power-down their rate is not quite constant: the background draws IDD2P/IDD3P while a
#: rank sleeps and IDD2N/IDD3N while it serves, so an idle run measures its floor.
# The unit of each DRAM counter (DramSystem.counters): data bursts are lines, the row-buffer
# outcomes are requests, the rest are commands.
DRAM_COUNTER_UNITS = {"reads": "lines", "writes": "lines", "activates": "commands", "precharges": "commands",
                      "refreshes": "commands", "row_hits": "requests", "row_misses": "requests",
                      "row_conflicts": "requests", "bytes_read": "B", "bytes_written": "B"}
CONSTANT_CATEGORIES = (("host", "static"), ("dram", "background_active"),
                       ("dram", "background_precharge"), ("dram", "background_power_down"), ("dram", "refresh"))
#: the categories of a memory's energy spent whatever it serves (main memory's in CONSTANT_CATEGORIES; a near
#: memory's under its own name, ``energy/<name>``)
MEMORY_CONSTANT_CATEGORIES = tuple(q for c, q in CONSTANT_CATEGORIES if c == "dram")


def _memory_rows(res: Results, component: str, memory, seconds: float) -> None:
    """A memory's counters (DramSystem.counters) and its mean bandwidth over the run, B/s."""
    counters = memory.counters()
    for key, value in counters.items():
        res.add(component, key, value, DRAM_COUNTER_UNITS[key])
    traffic = counters["bytes_read"] + counters["bytes_written"]
    res.add(component, "bandwidth_bytes_per_s", traffic / seconds if seconds else 0.0, "B/s")


def collect(system: System, end_ps: int, meta: dict[str, Any]) -> Results:
    """Read every component's counters into a Results table."""
    res = Results(meta=dict(meta))
    seconds = end_ps / PS_PER_S
    res.add("system", "simulated_time_s", seconds, "s")
    res.add("system", "host_cycles", system.host_clock.ps_to_cycles(end_ps), "cycles")
    flops = system.host_flops()
    res.add("host", "flops", flops, "flop")
    res.add("host", "achieved_flops_per_s", flops / seconds if seconds else 0.0, "flop/s")
    names = [lv.name for lv in system.spec.caches.levels] + ["DRAM"]
    for name, b in zip(names, system.host_bytes_by_level()):
        res.add("host", f"bytes_served_by_{name}", float(b), "B")
    if len(system.cores) > 1:
        _collect_cores(res, system, names)
    counters = system.caches.counters()
    for level in system.spec.caches.levels:
        _add_cache_counters(res, f"cache/{level.name}", counters[level.name])
    _memory_rows(res, "dram", system.dram, seconds)
    for name, memory in system.near_memories.items():
        _memory_rows(res, f"near_memory/{name}", memory, seconds)
    account = energy_account(system, end_ps)
    res.meta["energy_model"] = account.model
    for component, cats in account.by_component().items():
        for cat, joules in cats.items():
            res.add(f"energy/{component}", cat, joules, "J")
    for component, per_requester in account.actions.items():
        for who, actions in per_requester.items():
            for action, value in actions.items():
                res.add(f"actions/{component}/{who}", action, value, action_unit(action))
    for component, per_requester in account.energy_j.items():
        for who, cats in per_requester.items():
            for cat, joules in cats.items():
                res.add(f"energy_by_requester/{component}/{who}", cat, joules, "J")
    for stage_name, st in system.host_stages().items():
        key = f"stage/host/{stage_name}"
        res.add(key, "busy_s", st.busy_ps / PS_PER_S, "s")
        res.add(key, "compute_s", st.compute_ps / PS_PER_S, "s")
        res.add(key, "stall_s", st.stall_ps / PS_PER_S, "s")
        res.add(key, "start_s", (st.first_ps or 0) / PS_PER_S, "s")
        res.add(key, "end_s", st.last_ps / PS_PER_S, "s")
        res.add(key, "flops", st.flops, "flop")
        res.add(key, "lines", st.lines, "lines")
        res.add(key, "bytes_touched", st.bytes_touched, "B")
    for name, unit in system.units.items():
        for component, quantity, value, u in unit.result_rows(end_ps):
            res.add(component, quantity, value, u)
    return res


def _add_cache_counters(res: Results, component: str, counters: dict[str, int]) -> None:
    """A cache level's counters (``COUNTER_NAMES``), its demand accesses and its write-backs, in lines (probes
    in lookups: ``energy.action_unit``)."""
    for key in COUNTER_NAMES:
        res.add(component, key, counters[key], action_unit(key))
    res.add(component, "accesses", counters["loads"] + counters["stores"], "lines")
    res.add(component, "writebacks", counters["writebacks_out"], "lines")


def _collect_cores(res: Results, system: System, names: list[str]) -> None:
    """Each core's own record of a multi-core host: its times, work, the bytes it found at each level,
    the counters of its private cache levels, and what coherence did to them (``snooped_*``: other
    cores' writes probing, invalidating and writing back its lines) (components ``core<k>``,
    ``cache/<level>/core<k>``)."""
    for k, core in enumerate(system.cores):
        busy = sum(st.busy_ps for st in core.stages.values())
        compute = sum(st.compute_ps for st in core.stages.values())
        res.add(core.name, "busy_s", busy / PS_PER_S, "s")
        res.add(core.name, "compute_s", compute / PS_PER_S, "s")
        res.add(core.name, "stall_s", sum(st.stall_ps for st in core.stages.values()) / PS_PER_S, "s")
        res.add(core.name, "sync_wait_s", core.sync_wait_ps / PS_PER_S, "s")
        res.add(core.name, "flops", core.flops, "flop")
        for name, b in zip(names, core.bytes_by_level):
            res.add(core.name, f"bytes_served_by_{name}", float(b), "B")
        snooped = system.caches.snoop_counters(k)
        for level, counters in system.caches.core_counters(k).items():
            _add_cache_counters(res, f"cache/{level}/{core.name}", counters)
            for key in ("probes", "invalidations", "writebacks_out"):  # other cores' writes to its lines
                res.add(f"cache/{level}/{core.name}", f"snooped_{key}", snooped[level][key], action_unit(key))


def memory_reach_problem(end_bytes: float, capacity_bytes: int, source: str, system_source: str,
                         rows: str = "") -> str | None:
    """Why a trace of workload ``source`` whose host accesses end at ``end_bytes`` (``address_end_bytes``)
    cannot run on a system (``system_source``) whose DRAM holds ``capacity_bytes``; or None if it fits. ``rows``:
    the trace's rows that go beyond, as ``rows_beyond`` names them ("" where not known)."""
    if end_bytes <= capacity_bytes:
        return None
    return (f"{source}: {rows and rows + ': '}the host's accesses reach {format_size(end_bytes)} of memory; "
            f"expected at most the {format_bytes(capacity_bytes)} of the system's DRAM ({system_source}: "
            "dram.geometry)")


def rows_beyond(trace: pa.Table, capacity_bytes: int, offset: int = 0) -> str:
    """The rows of ``trace`` whose host accesses go beyond ``capacity_bytes``, for a message: "row 7" (its number
    plus ``offset``) "(2 more rows like this)", or "" if none."""
    beyond = np.flatnonzero(row_end_bytes(trace) > capacity_bytes)
    more = f" ({beyond.size - 1} more rows like this)" if beyond.size > 1 else ""
    return f"row {int(beyond[0]) + offset}{more}" if beyond.size else ""


def _reach(trace: Any, capacity_bytes: int, offset: int = 0) -> tuple[float, str]:
    """Where ``trace``'s host accesses end, B, and the rows that go beyond ``capacity_bytes`` (``rows_beyond``,
    numbered from ``offset``): a cheap bound if within it, else exact (to report it); (0, "") for a table that is
    not a trace (replay names what is wrong with it)."""
    try:
        end = address_end_bytes(trace, exact=False) if isinstance(trace, pa.Table) else 0.0
        if end <= capacity_bytes:
            return end, ""
        return address_end_bytes(trace), rows_beyond(trace, capacity_bytes, offset)
    except (pa.ArrowException, KeyError):
        return 0.0, ""


def trace_size_problem(loaded: LoadedConfig, trace: pa.Table, source: str, capacity_bytes: int) -> str | None:
    """Why ``trace`` (of workload ``source``) is too large to run on ``loaded`` (whose DRAM holds
    ``capacity_bytes``), found without running it: beyond the memory, the simulated-time limit or the
    lines a run takes (``simulator.engine.limits``); or None. For ``offsim run`` and for a check of a
    system and a workload together."""
    end_bytes, rows = _reach(trace, capacity_bytes)
    return (memory_reach_problem(end_bytes, capacity_bytes, source, loaded.source, rows)
            or host_time_problem(loaded.spec, trace, source, loaded.source)
            or trace_lines_problem(loaded.spec, trace, source, loaded.source))


def _system_for(loaded: LoadedConfig, trace: pa.Table, source: str) -> System:
    """A fresh system of ``loaded`` that can run ``trace`` (``trace_size_problem``; else a ConfigError naming
    ``source``)."""
    system = build_system(loaded.spec)
    problem = trace_size_problem(loaded, trace, source, system.dram.capacity_bytes)
    if problem:
        raise ConfigError(problem)
    return system


def _checked_batches(loaded: LoadedConfig, stream: TraceStream, source: str, capacity_bytes: int) -> Iterator[pa.Table]:
    """``stream``'s batches, the checks of ``trace_size_problem`` made on the batches so far as each arrives
    (the memory reached is the largest batch's, the host's time and the lines add up); ConfigError naming
    ``source`` at the first batch that goes beyond a limit."""
    spec = loaded.spec
    end_bytes, work, lines, offset = 0.0, np.zeros(1), 0.0, 0
    for batch in stream:
        batch_end, rows = _reach(batch, capacity_bytes, offset)  # the batches before it were within the memory
        end_bytes, offset = max(end_bytes, batch_end), offset + len(batch)
        batch_work = host_work_cycles(spec, batch)
        work = work if batch_work is None else add_work(work, batch_work)
        lines += trace_lines(spec, batch) or 0.0
        problem = (memory_reach_problem(end_bytes, capacity_bytes, source, loaded.source, rows)
                   or host_time_message(spec, work, source, loaded.source)
                   or trace_lines_message(spec, lines, source, loaded.source))
        if problem:
            raise ConfigError(problem)
        yield batch


def _replay_on_fresh_system(loaded: LoadedConfig, trace: pa.Table | TraceStream, source: str,
                            meta: dict[str, Any]) -> Results:
    """Build the system, replay ``trace`` (a bad trace is a ConfigError naming ``source``) and collect Results.
    A stream is checked batch by batch as it runs (``_checked_batches``)."""
    if isinstance(trace, TraceStream):
        system = build_system(loaded.spec)
        trace = TraceStream(_checked_batches(loaded, trace, source, system.dram.capacity_bytes), trace.threaded)
    else:
        system = _system_for(loaded, trace, source)
    start_watchdog(system.env, loaded.spec)
    try:
        end_ps = replay(system, trace, source)
    except SimulatedTimeLimit as exc:
        raise ConfigError(watchdog_message(exc.args[0], source, loaded.source)) from None
    except TraceError as exc:
        raise ConfigError(str(exc)) from None
    except AddressOutOfRange as exc:  # an accelerator's or device memory's accesses
        raise ConfigError(f"{source}: the workload's accesses exceed a memory of {loaded.source}: {exc}") from None
    return collect(system, end_ps, meta)


def check_trace_on_system(loaded: LoadedConfig, trace: pa.Table, source: str) -> None:
    """What a run checks before replaying ``trace`` on ``loaded``'s system, without replaying it: the
    memory it reaches, its units, rows and commands (``replay.check_trace``); ConfigError naming ``source``."""
    system = _system_for(loaded, trace, source)
    try:
        check_trace(system, trace, source)
    except TraceError as exc:
        raise ConfigError(str(exc)) from None


def simulate(loaded: LoadedConfig, workload: WorkloadSpec, trace: pa.Table, source: str) -> Results:
    """Build the system, replay ``trace`` and collect Results with the run's hashes."""
    meta = {
        "system_name": loaded.spec.name,
        "workload_name": workload.name,
        "config_hash": loaded.content_hash,
        "workload_hash": content_hash(workload.identity()),
        "run_hash": run_hash(loaded.content_hash, workload),
    }
    return _replay_on_fresh_system(loaded, trace, source, meta)


def load_system(system: str | Path | LoadedConfig, overrides: Sequence[str] = ()) -> LoadedConfig:
    """A system config, loaded once (paths are loaded with ``overrides``)."""
    if isinstance(system, LoadedConfig):
        return system
    return load_spec(system, SystemSpec, list(overrides))


def simulate_trace(system: str | Path | LoadedConfig, trace: pa.Table | TraceStream) -> Results:
    """Build a fresh system, replay ``trace`` (a table, or a stream of batches replayed as they come) on it
    and collect its Results."""
    loaded = load_system(system)
    return _replay_on_fresh_system(loaded, trace, "<memory>", {"system_name": loaded.spec.name})


def energy_split_j(results: Results) -> tuple[float, float]:
    """(total energy, constant-power energy) of a run, J: the host's static energy, every memory's
    background and refresh energy (main memory's and each near memory's) and each accelerator's static
    energy (its static power while busy, its idle power otherwise) are constant."""
    near = {c[len("near_memory/"):] for c, _, _, _ in results.rows if c.startswith("near_memory/")}
    units = {c[len("accel/"):] for c, _, _, _ in results.rows if c.startswith("accel/")}
    total = constant = 0.0
    for c, q, v, _ in results.rows:
        if c.startswith("energy/"):
            total += v
            component = c[len("energy/"):]
            if (component, q) in CONSTANT_CATEGORIES or (component in near and q in MEMORY_CONSTANT_CATEGORIES) \
                    or (component in units and q == "static"):
                constant += v
    return total, constant


def run(system: str | Path | LoadedConfig, workload: str | Path | WorkloadSpec | dict,
        overrides: tuple[str, ...] | list[str] = (), **param_overrides: Any) -> Results:
    """Simulate ``workload`` on ``system`` and return Results.

    system: a system YAML path or a LoadedConfig. workload: a workload YAML path, a
    WorkloadSpec, or a mapping like {"generator": "stream", "params": {...}}.
    overrides: "--set"-style strings for the system; keyword arguments override
    workload parameters (``array_bytes="8 MiB"``).
    """
    loaded = system if isinstance(system, LoadedConfig) else load_spec(system, SystemSpec, overrides)
    if isinstance(workload, WorkloadSpec):
        wspec = workload
        source = wspec.name
    elif isinstance(workload, dict):
        raw = {**workload, "params": {**workload.get("params", {}), **param_overrides}}
        wspec, source = build_workload(raw, "<workload>", Path.cwd()), "<workload>"
    else:
        wspec = load_workload(workload, [f"{k}={v}" for k, v in param_overrides.items()])
        source = str(workload)
    if param_overrides and isinstance(workload, WorkloadSpec):
        raise ConfigError("workload overrides need a workload file or mapping, not a built WorkloadSpec")
    trace = generate_trace(wspec, source)
    return simulate(loaded, wspec, trace, wspec.trace_path or source)


RUN_DIR_FILES = ("config.resolved.yaml", "results.parquet", "summary.json")
#: what ``offsim run --crosscheck`` and ``--plot`` add to a run directory
OPTIONAL_RUN_FILES = ("crosscheck.csv", "run.png")


def check_run_dir_target(out_dir: str | Path, option: str = "--out") -> Path:
    """``out_dir`` as a Path if a run may be written there: a new path, an empty directory or a
    previous run directory (which the run replaces). Anything else raises InputError (a ConfigError for
    what the directory holds), naming ``option`` (``"--out"``, or the words for a default directory): a run
    never replaces a file or a directory holding other data."""
    out = check_path_name(out_dir, option)  # before any call that would fail on a name too long
    if out.name in ("", ".", ".."):
        raise ConfigError(f"{option} {out_dir}: expected a path naming a run directory, not {str(out_dir)!r}")
    check_output_dir(out, option)  # a symbolic link, an existing file
    check_writable_parent(out, option, out_dir)
    if out.exists():
        other = sorted(p.name for p in out.iterdir() if p.name not in RUN_DIR_FILES + OPTIONAL_RUN_FILES)
        if other:
            raise ConfigError(f"{option} {out_dir}: holds {', '.join(other[:3])}{' ...' if len(other) > 3 else ''}, "
                              f"which is not a run's; expected a new path, an empty directory or a previous run "
                              f"directory ({', '.join(RUN_DIR_FILES + OPTIONAL_RUN_FILES)})")
    return out


def write_run_dir(results: Results, out_dir: str | Path, loaded: LoadedConfig, workload: WorkloadSpec,
                  extra: dict[str, str | bytes] | None = None) -> Path:
    """Write config.resolved.yaml, results.parquet, summary.json and the ``extra`` files (name -> text or
    bytes, e.g. crosscheck.csv, run.png) into ``out_dir`` atomically; ``out_dir`` must pass
    :func:`check_run_dir_target`."""
    out = check_run_dir_target(out_dir)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(out)
        tmp, hold = new_held_temp(out, "tmp")
    except OSError as exc:
        raise ConfigError(f"--out {out_dir}: cannot be created ({exc.strerror}); expected a writable location") from None
    try:
        tmp.chmod(0o777 & ~umask())  # mkdtemp makes it private; the run directory is an ordinary one
        resolved = {"system": loaded.resolved, "workload": workload.as_dict(),
                    "hashes": {k: results.meta[k] for k in ("config_hash", "workload_hash", "run_hash")}}
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: same output, faster
        (tmp / "config.resolved.yaml").write_text(yaml.dump(resolved, Dumper=dumper, sort_keys=False))
        import pyarrow.parquet as pq  # here: only a run that writes its directory needs it

        pq.write_table(results.to_arrow(), tmp / "results.parquet")
        (tmp / "summary.json").write_text(results.summary_json() + "\n")
        for name, data in (extra or {}).items():
            (tmp / name).write_bytes(data if isinstance(data, bytes) else data.encode())
        if out.exists():
            trash, held = new_held_temp(out, "old")
            try:
                os.replace(out, trash / out.name)
                os.replace(tmp, out)
            finally:
                os.close(held)
            shutil.rmtree(trash)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(hold)
    return out


def new_held_temp(out: Path, kind: str) -> tuple[Path, int]:
    """A new hidden folder ``.<name>.<kind>-*`` beside ``out`` and a descriptor holding an exclusive lock
    on it while it is written, closed by the caller (or by the OS when the process dies), so that
    ``remove_stale_temps`` in another run leaves it alone."""
    while True:
        folder = Path(tempfile.mkdtemp(prefix=f".{out.name}.{kind}-", dir=out.parent))
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if folder.is_dir():  # not taken for a killed run's by another run before the lock was ours
            return folder, fd
        os.close(fd)


def remove_stale_temps(out: Path) -> None:
    """Remove the hidden temporary folders of run directory ``out`` (``.<name>.tmp-*``, ``.<name>.old-*``)
    that a killed run left beside it: those that no live process holds (``new_held_temp``)."""
    for kind in ("tmp", "old"):
        for folder in out.parent.glob(f".{glob.escape(out.name)}.{kind}-*"):
            if folder.is_symlink() or not folder.is_dir():
                continue
            try:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(folder, ignore_errors=True)  # under the lock: a writer waiting for it sees it gone
            except BlockingIOError:  # a run is writing it now
                pass
            finally:
                os.close(fd)
